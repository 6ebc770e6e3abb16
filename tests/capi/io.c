/* sim:io (EK1100, EL2008, EL1018, EL4132, EL3102) in IgH's classic shape: slave configs with
 * identity, PDO tables, a registration list, activation, cycling to OP with a complete
 * working counter; PDO entry offsets and bit positions; outputs read back from the EL2008's
 * process RAM through a register request while cycling; a mismatching configuration stays
 * unattached while the rest runs; and no heap allocation in receive/process/queue/send. */
#include "capi_test.h"
#include "alloc_count.h"
#include <stddef.h>

/* The structures' layout is what the library (crates/ecat-capi/src/abi.rs) writes. */
_Static_assert(sizeof(ec_master_state_t) == 8, "ec_master_state_t");
_Static_assert(sizeof(ec_master_info_t) == 16, "ec_master_info_t");
_Static_assert(offsetof(ec_master_info_t, scan_busy) == 5, "scan_busy");
_Static_assert(offsetof(ec_master_info_t, app_time) == 8, "app_time");
_Static_assert(offsetof(ec_slave_info_t, ports) == 24, "ports");
_Static_assert(offsetof(ec_slave_info_t, al_state) == 104, "al_state");
_Static_assert(offsetof(ec_slave_info_t, sdo_count) == 108, "sdo_count");
_Static_assert(offsetof(ec_slave_info_t, name) == 110, "name");
_Static_assert(sizeof(ec_slave_info_t) == 176, "ec_slave_info_t");
_Static_assert(sizeof(ec_slave_config_state_t) == 4, "ec_slave_config_state_t");
_Static_assert(sizeof(ec_domain_state_t) == 12, "ec_domain_state_t");
_Static_assert(sizeof(ec_sync_info_t) == 32, "ec_sync_info_t");
_Static_assert(sizeof(ec_pdo_info_t) == 16, "ec_pdo_info_t");
_Static_assert(sizeof(ec_pdo_entry_reg_t) == 32, "ec_pdo_entry_reg_t");

#define BECKHOFF 0x00000002
#define EK1100 BECKHOFF, 0x044c2c52
#define EL2008 BECKHOFF, 0x07d83052
#define EL1018 BECKHOFF, 0x03fa3052
#define EL4132 BECKHOFF, 0x10243052
#define EL3102 BECKHOFF, 0x0c1e3052

static unsigned int off_do, bit_do3, off_di, bit_di, off_ao1, off_ao2, off_ai1, off_ai2, off_ai_st;

static ec_pdo_entry_info_t el3102_entries[] = {
    {0x3101, 1, 8}, {0x3101, 2, 16}, {0x3102, 1, 8}, {0x3102, 2, 16},
};
static ec_pdo_info_t el3102_pdos[] = {
    {0x1a00, 2, el3102_entries}, {0x1a01, 2, el3102_entries + 2},
};
static ec_sync_info_t el3102_syncs[] = {
    {2, EC_DIR_OUTPUT, 0, NULL, EC_WD_DEFAULT},
    {3, EC_DIR_INPUT, 2, el3102_pdos, EC_WD_DEFAULT},
    {0xff, 0, 0, NULL, 0},
};

static const ec_pdo_entry_reg_t regs[] = {
    {0, 3, EL4132, 0x6411, 1, &off_ao1, NULL},
    {0, 3, EL4132, 0x6411, 2, &off_ao2, NULL},
    {0, 4, EL3102, 0x3101, 2, &off_ai1, NULL},
    {0, 4, EL3102, 0x3102, 2, &off_ai2, NULL},
    {0, 4, EL3102, 0x3101, 1, &off_ai_st, NULL},
    {0, 2, EL1018, 0x6010, 1, &off_di, &bit_di},
    {0}
};

static void cycle(ec_master_t *m, ec_domain_t *d)
{
    ecrt_master_receive(m);
    ecrt_domain_process(d);
    ecrt_domain_queue(d);
    ecrt_master_send(m);
}

int main(void)
{
    ec_master_t *m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("io");
    CHECK_EQ(ecrt_version_magic(), ECRT_VERSION_MAGIC);

    ec_master_info_t info;
    CHECK_EQ(ecrt_master(m, &info), 0);
    CHECK_EQ(info.slave_count, 5);
    ec_master_state_t ms;
    CHECK_EQ(ecrt_master_state(m, &ms), 0);
    CHECK_EQ(ms.slaves_responding, 5);
    CHECK_EQ(ms.al_states, EC_AL_STATE_PREOP);

    ec_slave_info_t si;
    CHECK_EQ(ecrt_master_get_slave(m, 4, &si), 0);
    CHECK_EQ(si.product_code, 0x0c1e3052);
    CHECK(strstr(si.name, "EL3102") != NULL);
    ec_sync_info_t sy;
    CHECK_EQ(ecrt_master_get_sync_manager(m, 4, 3, &sy), 0);
    CHECK_EQ(sy.dir, EC_DIR_INPUT);
    CHECK_EQ(sy.n_pdos, 2);
    ec_pdo_info_t pi;
    CHECK_EQ(ecrt_master_get_pdo(m, 4, 3, 1, &pi), 0);
    CHECK_EQ(pi.index, 0x1a01);
    CHECK_EQ(pi.n_entries, 2);
    ec_pdo_entry_info_t ei;
    CHECK_EQ(ecrt_master_get_pdo_entry(m, 4, 3, 1, 1, &ei), 0);
    CHECK_EQ(ei.index, 0x3102);
    CHECK_EQ(ei.subindex, 2);
    CHECK_EQ(ei.bit_length, 16);

    ec_domain_t *d = ecrt_master_create_domain(m);
    CHECK(d != NULL);

    ec_slave_config_t *sc_ek = ecrt_master_slave_config(m, 0, 0, EK1100);
    CHECK(sc_ek != NULL);
    ec_slave_config_t *sc_do = ecrt_master_slave_config(m, 0, 1, EL2008);
    CHECK(sc_do != NULL);
    ec_slave_config_t *sc_ai = ecrt_master_slave_config(m, 0, 4, EL3102);
    CHECK(sc_ai != NULL);
    CHECK_EQ(ecrt_slave_config_pdos(sc_ai, EC_END, el3102_syncs), 0);
    /* The same address with another identity: NULL. */
    CHECK(ecrt_master_slave_config(m, 0, 4, EL4132) == NULL);
    /* The same address and identity: the same object. */
    CHECK(ecrt_master_slave_config(m, 0, 4, EL3102) == sc_ai);

    /* Registration list: offsets are known now, in registration order per sync manager. */
    CHECK_EQ(ecrt_domain_reg_pdo_entry_list(d, regs), 0);
    CHECK_EQ(off_ao1, 0);
    CHECK_EQ(off_ao2, 2);
    CHECK_EQ(off_ai_st, 4);
    CHECK_EQ(off_ai1, 5);
    CHECK_EQ(off_ai2, 8);
    CHECK_EQ(off_di, 10);
    CHECK_EQ(bit_di, 1);
    /* EL2008 channel 4 (0x7030:01) is bit 3 of its byte, appended after the 11 bytes. */
    off_do = ecrt_slave_config_reg_pdo_entry(sc_do, 0x7030, 1, d, &bit_do3);
    CHECK_EQ(off_do, 11);
    CHECK_EQ(bit_do3, 3);
    /* Same entry by position: sync manager 0, PDO 3, entry 0. */
    unsigned int b = 99;
    CHECK_EQ(ecrt_slave_config_reg_pdo_entry_pos(sc_do, 0, 3, 0, d, &b), 11);
    CHECK_EQ(b, 3);
    /* A bit entry without bit_position is an error. */
    CHECK(ecrt_slave_config_reg_pdo_entry(sc_do, 0x7030, 1, d, NULL) < 0);
    CHECK_EQ(ecrt_domain_size(d), 12);

    ec_reg_request_t *rr = ecrt_slave_config_create_reg_request(sc_do, 4);
    CHECK(rr != NULL);
    CHECK_EQ(ecrt_reg_request_state(rr), EC_REQUEST_UNUSED);

    CHECK_EQ(ecrt_master_activate(m), 0);
    uint8_t *pd = ecrt_domain_data(d);
    CHECK(pd != NULL);
    if (!pd)
        return finish("io");

    ec_domain_state_t ds;
    ec_slave_config_state_t ss;
    int reached = -1;
    for (int i = 0; i < 5000; i++) {
        cycle(m, d);
        ecrt_domain_state(d, &ds);
        if (ds.wc_state == EC_WC_COMPLETE) {
            reached = i;
            break;
        }
        sleep_ns(200000);
    }
    printf("domain complete after %d cycles, WKC %u\n", reached, ds.working_counter);
    CHECK(reached >= 0);
    for (int i = 0; i < 5000; i++) {
        cycle(m, d);
        ecrt_slave_config_state(sc_ai, &ss);
        if (ss.operational)
            break;
        sleep_ns(200000);
    }
    CHECK(ss.online);
    CHECK(ss.operational);
    CHECK_EQ(ss.al_state, EC_AL_STATE_OP);
    /* The EK1100 has no process data: it is configured and in OP too. */
    for (int i = 0; i < 200; i++) {
        cycle(m, d);
        ecrt_master_state(m, &ms);
        if (ms.al_states == EC_AL_STATE_OP)
            break;
        sleep_ns(200000);
    }
    CHECK_EQ(ms.al_states, EC_AL_STATE_OP);
    CHECK_EQ(ms.slaves_responding, 5);
    /* LRW: EL4132 outputs (2) + EL3102 inputs (1) + EL1018 inputs (1) + EL2008 outputs (2). */
    CHECK_EQ(ds.working_counter, 6);

    /* Register requests ride in the cycle: write the ECAT event mask (0x0200), read it back,
     * and read the AL status (0x0130). */
    EC_WRITE_BIT(pd + off_do, bit_do3, 1);
    EC_WRITE_S16(pd + off_ao1, -1234);
    EC_WRITE_U16(ecrt_reg_request_data(rr), 0x1234);
    CHECK_EQ(ecrt_reg_request_write(rr, 0x0200, 2), 0);
    CHECK_EQ(ecrt_reg_request_state(rr), EC_REQUEST_BUSY);
    int st = EC_REQUEST_BUSY;
    for (int i = 0; i < 100 && st == EC_REQUEST_BUSY; i++) {
        cycle(m, d);
        st = ecrt_reg_request_state(rr);
        sleep_ns(200000);
    }
    CHECK_EQ(st, EC_REQUEST_SUCCESS);
    EC_WRITE_U16(ecrt_reg_request_data(rr), 0);
    CHECK_EQ(ecrt_reg_request_read(rr, 0x0200, 2), 0);
    st = EC_REQUEST_BUSY;
    for (int i = 0; i < 100 && st == EC_REQUEST_BUSY; i++) {
        cycle(m, d);
        st = ecrt_reg_request_state(rr);
        sleep_ns(200000);
    }
    CHECK_EQ(st, EC_REQUEST_SUCCESS);
    CHECK_EQ(EC_READ_U16(ecrt_reg_request_data(rr)), 0x1234);
    CHECK_EQ(ecrt_reg_request_read(rr, 0x0130, 2), 0);
    st = EC_REQUEST_BUSY;
    for (int i = 0; i < 100 && st == EC_REQUEST_BUSY; i++) {
        cycle(m, d);
        st = ecrt_reg_request_state(rr);
        sleep_ns(200000);
    }
    CHECK_EQ(st, EC_REQUEST_SUCCESS);
    CHECK_EQ(EC_READ_U16(ecrt_reg_request_data(rr)) & 0x0f, 8);
    CHECK_EQ(ecrt_reg_request_read(rr, 0x0130, 8), -EOVERFLOW);

    /* No heap allocation in the cyclic calls. */
    for (int i = 0; i < 100; i++)
        cycle(m, d);
    alloc_count_start();
    for (int i = 0; i < 10000; i++) {
        ecrt_master_receive(m);
        ecrt_domain_process(d);
        EC_WRITE_U8(pd + off_do, (uint8_t)i);
        ecrt_domain_queue(d);
        ecrt_master_send(m);
    }
    long allocs = alloc_count_stop();
    printf("allocations in 10000 cycles of receive/process/queue/send: %ld\n", allocs);
    CHECK_EQ(allocs, 0);
    ecrt_domain_state(d, &ds);
    CHECK_EQ(ds.wc_state, EC_WC_COMPLETE);

    ecrt_release_master(m);
    return finish("io");
}
