/* sim:mbx (ECAT-SERVO-402, EL3102, ECAT-SOE-DRIVE at 2, which echoes VoE messages): a VoE
 * handler's write and read round trip while cycling (vendor id and type preserved), a read
 * with nothing to come (error after IgH's 500 ms), read_nosync of a message already there and
 * of none, and a handler on a slave without VoE. */
#include "capi_test.h"

#define SOE_DRIVE 0x00000eca, 0x00000403
#define EL3102 0x00000002, 0x0c1e3052

static ec_master_t *m;
static ec_domain_t *d;

static void cycle(void)
{
    cycle_domain(m, d);
}

/* Cycle and execute until the handler leaves BUSY; returns its state, cycles in *n. */
static ec_request_state_t run(ec_voe_handler_t *v, int *n)
{
    ec_request_state_t st = EC_REQUEST_BUSY;
    for (*n = 0; *n < 10000 && st == EC_REQUEST_BUSY; (*n)++) {
        cycle();
        st = ecrt_voe_handler_execute(v);
    }
    return st;
}

int main(void)
{
    m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("voe");
    d = ecrt_master_create_domain(m);
    ec_slave_config_t *sc = ecrt_master_slave_config(m, 0, 2, SOE_DRIVE);
    ec_slave_config_t *ain = ecrt_master_slave_config(m, 0, 1, EL3102);
    CHECK(d && sc && ain);
    if (!(d && sc && ain))
        return finish("voe");
    CHECK(ecrt_slave_config_reg_pdo_entry(sc, 0x6041, 0, d, NULL) >= 0);
    ec_voe_handler_t *v = ecrt_slave_config_create_voe_handler(sc, 64);
    ec_voe_handler_t *none = ecrt_slave_config_create_voe_handler(ain, 8);
    CHECK(v && none);
    if (!(v && none))
        return finish("voe");
    CHECK(ecrt_voe_handler_data(v) != NULL);
    CHECK_EQ(ecrt_voe_handler_data_size(v), 0);
    CHECK_EQ(ecrt_voe_handler_execute(v), EC_REQUEST_UNUSED);
    CHECK_EQ(ecrt_master_activate(m), 0);
    ec_slave_config_state_t ss = {0};
    int i, n;
    for (i = 0; i < 10000 && !ss.operational; i++) {
        cycle();
        ecrt_slave_config_state(sc, &ss);
    }
    CHECK(ss.operational);

    /* Round trip through the echo. */
    CHECK_EQ(ecrt_voe_handler_send_header(v, 0x12345678, 0x0042), 0);
    memcpy(ecrt_voe_handler_data(v), "hello voe", 9);
    CHECK_EQ(ecrt_voe_handler_write(v, 9), 0);
    CHECK_EQ(ecrt_voe_handler_read(v), -EBUSY);
    CHECK_EQ(run(v, &n), EC_REQUEST_SUCCESS);
    printf("VoE write in %d cycles\n", n);
    memset(ecrt_voe_handler_data(v), 0, 64);
    CHECK_EQ(ecrt_voe_handler_read(v), 0);
    CHECK_EQ(run(v, &n), EC_REQUEST_SUCCESS);
    printf("VoE read in %d cycles\n", n);
    uint32_t vid = 0;
    uint16_t vtype = 0;
    CHECK_EQ(ecrt_voe_handler_received_header(v, &vid, &vtype), 0);
    CHECK_EQ(vid, 0x12345678);
    CHECK_EQ(vtype, 0x0042);
    CHECK_EQ(ecrt_voe_handler_data_size(v), 9);
    CHECK(memcmp(ecrt_voe_handler_data(v), "hello voe", 9) == 0);

    /* Nothing more comes: read fails after 500 ms, read_nosync at once. */
    uint64_t t0 = now_ns();
    CHECK_EQ(ecrt_voe_handler_read(v), 0);
    CHECK_EQ(run(v, &n), EC_REQUEST_ERROR);
    uint64_t waited_ms = (now_ns() - t0) / 1000000;
    printf("VoE read with nothing to come: error after %llu ms\n", (unsigned long long)waited_ms);
    CHECK(waited_ms >= 500);
    CHECK_EQ(ecrt_voe_handler_read_nosync(v), 0);
    CHECK_EQ(run(v, &n), EC_REQUEST_ERROR);
    CHECK(n < 10);

    /* A message already there: read_nosync takes it. */
    CHECK_EQ(ecrt_voe_handler_send_header(v, 0xcafe, 7), 0);
    memcpy(ecrt_voe_handler_data(v), "abc", 3);
    CHECK_EQ(ecrt_voe_handler_write(v, 3), 0);
    CHECK_EQ(run(v, &n), EC_REQUEST_SUCCESS);
    for (i = 0; i < 20; i++)
        cycle();
    CHECK_EQ(ecrt_voe_handler_read_nosync(v), 0);
    CHECK_EQ(run(v, &n), EC_REQUEST_SUCCESS);
    CHECK_EQ(ecrt_voe_handler_received_header(v, &vid, &vtype), 0);
    CHECK_EQ(vid, 0xcafe);
    CHECK_EQ(vtype, 7);
    CHECK_EQ(ecrt_voe_handler_data_size(v), 3);

    /* The EL3102 has no VoE: the handler fails. */
    CHECK_EQ(ecrt_voe_handler_write(none, 1), 0);
    CHECK_EQ(run(none, &n), EC_REQUEST_ERROR);
    CHECK_EQ(ecrt_voe_handler_read(none), 0);
    CHECK_EQ(run(none, &n), EC_REQUEST_ERROR);

    ec_domain_state_t ds;
    cycle();
    CHECK_EQ(ecrt_domain_state(d, &ds), 0);
    CHECK_EQ(ds.wc_state, EC_WC_COMPLETE);
    ecrt_release_master(m);
    return finish("voe");
}
