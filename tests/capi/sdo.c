/* sim:servo6: blocking SDO calls before activation (read, write, abort code), a startup SDO
 * replayed at configuration, SDO requests while cycling, a blocking SDO from a second thread
 * while the application cycles, then deactivate, configure again, re-activate and release. */
#include <pthread.h>
#include "capi_test.h"

#define DRIVE 0x00000eca, 0x00000402

static ec_master_t *m;
static volatile int stop;

struct setup {
    ec_domain_t *d;
    ec_slave_config_t *sc[6];
    unsigned int off_cw[6], off_sw[6];
};

static void configure(struct setup *s)
{
    s->d = ecrt_master_create_domain(m);
    CHECK(s->d != NULL);
    for (int i = 0; i < 6; i++) {
        s->sc[i] = ecrt_master_slave_config(m, 0, i, DRIVE);
        CHECK(s->sc[i] != NULL);
        int o = ecrt_slave_config_reg_pdo_entry(s->sc[i], 0x6040, 0, s->d, NULL);
        CHECK(o >= 0);
        s->off_cw[i] = o;
        o = ecrt_slave_config_reg_pdo_entry(s->sc[i], 0x6041, 0, s->d, NULL);
        CHECK(o >= 0);
        s->off_sw[i] = o;
    }
}

static void cycle(ec_domain_t *d)
{
    ecrt_master_receive(m);
    ecrt_domain_process(d);
    ecrt_domain_queue(d);
    ecrt_master_send(m);
}

static int run_to_op(struct setup *s)
{
    ec_slave_config_state_t ss;
    for (int i = 0; i < 10000; i++) {
        cycle(s->d);
        int all = 1;
        for (int k = 0; k < 6; k++) {
            ecrt_slave_config_state(s->sc[k], &ss);
            all &= ss.operational;
        }
        if (all)
            return i;
        sleep_ns(200000);
    }
    return -1;
}

static void *blocking_reader(void *arg)
{
    uint8_t buf[4];
    size_t n = 0;
    uint32_t abort_code = 0;
    int *result = arg;
    *result = ecrt_master_sdo_upload(m, 5, 0x1018, 1, buf, sizeof buf, &n, &abort_code);
    if (*result == 0 && !(n == 4 && EC_READ_U32(buf) == 0xeca))
        *result = -1000;
    stop = 1;
    return NULL;
}

int main(void)
{
    m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("sdo");
    uint8_t buf[32];
    size_t n = 0;
    uint32_t abort_code = 0;

    /* Blocking SDO before activation. */
    CHECK_EQ(ecrt_master_sdo_upload(m, 2, 0x1018, 1, buf, sizeof buf, &n, &abort_code), 0);
    CHECK_EQ(n, 4);
    CHECK_EQ(EC_READ_U32(buf), 0xeca);
    CHECK_EQ(ecrt_master_sdo_upload(m, 2, 0x5555, 0, buf, sizeof buf, &n, &abort_code), -EIO);
    CHECK_EQ(abort_code, 0x06020000);
    uint8_t mode = 9;
    CHECK_EQ(ecrt_master_sdo_download(m, 2, 0x6060, 0, &mode, 1, &abort_code), 0);
    CHECK_EQ(ecrt_master_sdo_upload(m, 2, 0x6060, 0, buf, sizeof buf, &n, &abort_code), 0);
    CHECK_EQ(EC_READ_S8(buf), 9);
    /* Too small a target. */
    CHECK_EQ(ecrt_master_sdo_upload(m, 2, 0x1018, 1, buf, 2, &n, &abort_code), -EOVERFLOW);

    struct setup s;
    configure(&s);
    /* Startup SDO: CSP (8) on drive 1, replayed at every configuration. */
    CHECK_EQ(ecrt_slave_config_sdo8(s.sc[1], 0x6060, 0, 8), 0);
    ec_sdo_request_t *rq = ecrt_slave_config_create_sdo_request(s.sc[3], 0x1018, 2, 4);
    ec_sdo_request_t *wq = ecrt_slave_config_create_sdo_request(s.sc[3], 0x6060, 0, 1);
    CHECK(rq && wq);
    if (!(rq && wq))
        return finish("sdo");
    CHECK_EQ(ecrt_sdo_request_timeout(rq, 2000), 0);
    CHECK_EQ(ecrt_sdo_request_state(rq), EC_REQUEST_UNUSED);
    CHECK_EQ(ecrt_sdo_request_data_size(wq), 1);

    CHECK_EQ(ecrt_master_activate(m), 0);
    int op = run_to_op(&s);
    printf("six drives operational after %d cycles\n", op);
    CHECK(op >= 0);

    /* SDO requests while cycling. */
    CHECK_EQ(ecrt_sdo_request_read(rq), 0);
    int st = EC_REQUEST_BUSY, cycles = 0;
    while (st == EC_REQUEST_BUSY && cycles < 2000) {
        cycle(s.d);
        st = ecrt_sdo_request_state(rq);
        cycles++;
        sleep_ns(200000);
    }
    printf("SDO request read 0x1018:02 in %d cycles\n", cycles);
    CHECK_EQ(st, EC_REQUEST_SUCCESS);
    CHECK_EQ(ecrt_sdo_request_data_size(rq), 4);
    CHECK_EQ(EC_READ_U32(ecrt_sdo_request_data(rq)), 0x402);
    /* Read 0x6060 of drive 1: the startup SDO made it 8. */
    CHECK_EQ(ecrt_sdo_request_index(rq, 0x6060, 0), 0);
    EC_WRITE_U8(ecrt_sdo_request_data(wq), 3);
    CHECK_EQ(ecrt_sdo_request_write(wq), 0);
    st = EC_REQUEST_BUSY;
    cycles = 0;
    while (st == EC_REQUEST_BUSY && cycles < 2000) {
        cycle(s.d);
        st = ecrt_sdo_request_state(wq);
        cycles++;
        sleep_ns(200000);
    }
    CHECK_EQ(st, EC_REQUEST_SUCCESS);
    /* Abort: a read of an object that does not exist ends in ERROR. */
    CHECK_EQ(ecrt_sdo_request_index(rq, 0x5555, 0), 0);
    CHECK_EQ(ecrt_sdo_request_read(rq), 0);
    st = EC_REQUEST_BUSY;
    cycles = 0;
    while (st == EC_REQUEST_BUSY && cycles < 2000) {
        cycle(s.d);
        st = ecrt_sdo_request_state(rq);
        cycles++;
        sleep_ns(200000);
    }
    CHECK_EQ(st, EC_REQUEST_ERROR);

    /* A blocking SDO from another thread while this one cycles. */
    pthread_t t;
    int result = -9999;
    stop = 0;
    pthread_create(&t, NULL, blocking_reader, &result);
    for (int i = 0; i < 20000 && !stop; i++) {
        cycle(s.d);
        sleep_ns(200000);
    }
    pthread_join(t, NULL);
    CHECK_EQ(result, 0);

    /* A blocking SDO from the cycling thread itself, between two cycles. */
    uint64_t t_start = now_ns();
    CHECK_EQ(ecrt_master_sdo_upload(m, 4, 0x1018, 1, buf, sizeof buf, &n, &abort_code), 0);
    CHECK_EQ(EC_READ_U32(buf), 0xeca);
    printf("blocking SDO from the cycling thread: %.1f ms\n", (now_ns() - t_start) / 1e6);
    cycle(s.d);
    cycle(s.d);

    ec_domain_state_t ds;
    ecrt_domain_state(s.d, &ds);
    CHECK_EQ(ds.wc_state, EC_WC_COMPLETE);

    /* Deactivate: the configuration is dropped; configure again and re-activate. */
    CHECK_EQ(ecrt_master_deactivate(m), 0);
    ec_master_state_t ms;
    CHECK_EQ(ecrt_master_state(m, &ms), 0);
    CHECK_EQ(ms.slaves_responding, 6);
    CHECK_EQ(ms.al_states, EC_AL_STATE_PREOP);
    /* Idle again: blocking SDO works directly; drive 1 kept the mode its startup SDO set. */
    CHECK_EQ(ecrt_master_sdo_upload(m, 1, 0x6060, 0, buf, sizeof buf, &n, &abort_code), 0);
    CHECK_EQ(EC_READ_S8(buf), 8);
    configure(&s);
    CHECK_EQ(ecrt_master_activate(m), 0);
    op = run_to_op(&s);
    printf("operational again after %d cycles\n", op);
    CHECK(op >= 0);
    for (int i = 0; i < 20; i++)
        cycle(s.d);
    ecrt_domain_state(s.d, &ds);
    CHECK_EQ(ds.wc_state, EC_WC_COMPLETE);
    /* Statusword of a drive in OP reads something (the drive model answers). */
    uint8_t *pd = ecrt_domain_data(s.d);
    CHECK(pd != NULL);

    ecrt_release_master(m);
    return finish("sdo");
}
