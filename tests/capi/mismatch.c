/* sim:io with one configuration that does not match its slave (an EL4102 expected where the
 * EL4132 sits) and one for a position that does not exist: both stay unattached and report
 * themselves offline, the mismatched slave stays in PREOP, and the rest of the bus reaches OP
 * while the domain, which has the unattached entries registered, reports incomplete. */
#include "capi_test.h"

#define BECKHOFF 0x00000002
#define EL2008 BECKHOFF, 0x07d83052
#define EL4102 BECKHOFF, 0x10063052
#define EL3102 BECKHOFF, 0x0c1e3052

static ec_pdo_entry_info_t el4102_entries[] = {{0x3001, 1, 16}, {0x3002, 1, 16}};
static ec_pdo_info_t el4102_pdos[] = {{0x1600, 1, el4102_entries}, {0x1601, 1, el4102_entries + 1}};
static ec_sync_info_t el4102_syncs[] = {
    {2, EC_DIR_OUTPUT, 2, el4102_pdos, EC_WD_DEFAULT},
    {3, EC_DIR_INPUT, 0, NULL, EC_WD_DEFAULT},
    {0xff, 0, 0, NULL, 0},
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
        return finish("mismatch");
    ec_domain_t *d = ecrt_master_create_domain(m);
    ec_slave_config_t *sc_do = ecrt_master_slave_config(m, 0, 1, EL2008);
    ec_slave_config_t *sc_ai = ecrt_master_slave_config(m, 0, 4, EL3102);
    MARK("1 mismatch");
    ec_slave_config_t *sc_bad = ecrt_master_slave_config(m, 0, 3, EL4102);
    MARK("1 absent");
    ec_slave_config_t *sc_gone = ecrt_master_slave_config(m, 0, 9, EL3102);
    MARK("0 end");
    CHECK(sc_do && sc_ai && sc_bad && sc_gone);
    if (!(sc_do && sc_ai && sc_bad && sc_gone))
        return finish("mismatch");
    CHECK_EQ(ecrt_slave_config_pdos(sc_bad, EC_END, el4102_syncs), 0);

    unsigned int bit;
    int o_do = ecrt_slave_config_reg_pdo_entry(sc_do, 0x7000, 1, d, &bit);
    int o_ai = ecrt_slave_config_reg_pdo_entry(sc_ai, 0x3101, 2, d, NULL);
    int o_bad = ecrt_slave_config_reg_pdo_entry(sc_bad, 0x3002, 1, d, NULL);
    CHECK_EQ(o_do, 0);
    CHECK_EQ(o_ai, 2);
    CHECK_EQ(o_bad, 9);
    /* The unattached config for a missing slave has no PDOs to register. */
    MARK("1 unmapped");
    CHECK_EQ(ecrt_slave_config_reg_pdo_entry(sc_gone, 0x3101, 2, d, NULL), -ENOENT);
    MARK("0 end");

    CHECK_EQ(ecrt_master_activate(m), 0);
    ec_slave_config_state_t ss;
    ec_slave_config_state_t ss2;
    for (int i = 0; i < 5000; i++) {
        cycle(m, d);
        ecrt_slave_config_state(sc_ai, &ss);
        ecrt_slave_config_state(sc_do, &ss2);
        if (ss.operational && ss2.operational)
            break;
        sleep_ns(200000);
    }
    printf("EL2008 config: online %u operational %u al_state %u\n", ss2.online, ss2.operational, ss2.al_state);
    printf("EL3102 config: online %u operational %u al_state %u\n", ss.online, ss.operational, ss.al_state);
    CHECK(ss.operational);
    ecrt_slave_config_state(sc_do, &ss);
    CHECK(ss.operational);
    ecrt_slave_config_state(sc_bad, &ss);
    CHECK(!ss.online);
    CHECK(!ss.operational);
    CHECK_EQ(ss.al_state, 0);
    ecrt_slave_config_state(sc_gone, &ss);
    CHECK(!ss.online);

    for (int i = 0; i < 50; i++) {
        cycle(m, d);
        sleep_ns(200000);
    }
    ec_slave_info_t si;
    CHECK_EQ(ecrt_master_get_slave(m, 3, &si), 0);
    CHECK_EQ(si.al_state, EC_AL_STATE_PREOP);
    /* The EK1100 has no configuration: IgH keeps it in PREOP. */
    CHECK_EQ(ecrt_master_get_slave(m, 0, &si), 0);
    CHECK_EQ(si.al_state, EC_AL_STATE_PREOP);
    CHECK_EQ(ecrt_master_get_slave(m, 1, &si), 0);
    CHECK_EQ(si.al_state, EC_AL_STATE_OP);
    ec_master_state_t ms;
    ecrt_master_state(m, &ms);
    CHECK_EQ(ms.slaves_responding, 5);
    CHECK_EQ(ms.al_states, EC_AL_STATE_PREOP | EC_AL_STATE_OP);

    ec_domain_state_t ds;
    ecrt_domain_state(d, &ds);
    /* EL2008 (LRW outputs: 2) + EL3102 (inputs: 1); the EL4102 would add 2. */
    CHECK_EQ(ds.working_counter, 3);
    CHECK_EQ(ds.wc_state, EC_WC_INCOMPLETE);

    ecrt_release_master(m);
    return finish("mismatch");
}
