/* IgH's PDO configuration rules through the C API, on the terminals of IgH's own example
 * (testdata/networks/igh-example.toml: EK1100, EL1004, EL2032, EL3102, EL4102).
 *
 * Mode "fixed" (argv[1]): the EL3102 and EL4102 are configured the way `ethercat cstruct` and
 * IgH's example do it (the mailbox sync managers listed, entries of an older revision with the
 * same sizes): both reach OP, every entry is registered, the domain is complete.
 * Mode "size": the EL4102's first PDO asks for 32 bits where the terminal has 16: the
 * terminal refuses SAFEOP, the library says so with the AL status code and the PDOs that
 * differ, and the rest of the bus runs. */
#include "capi_test.h"

#define BECKHOFF 0x00000002
#define EL3102 BECKHOFF, 0x0c1e3052
#define EL4102 BECKHOFF, 0x10063052

static ec_pdo_entry_info_t el3102_entries[] = {
    {0x3101, 1, 8}, {0x3101, 2, 16}, {0x3102, 1, 8}, {0x3102, 2, 16},
};
static ec_pdo_info_t el3102_pdos[] = {{0x1a00, 2, el3102_entries}, {0x1a01, 2, el3102_entries + 2}};
static ec_sync_info_t el3102_syncs[] = {
    {0, EC_DIR_OUTPUT, 0, NULL, EC_WD_DISABLE},
    {1, EC_DIR_INPUT, 0, NULL, EC_WD_DISABLE},
    {2, EC_DIR_OUTPUT, 0, NULL, EC_WD_DISABLE},
    {3, EC_DIR_INPUT, 2, el3102_pdos, EC_WD_DISABLE},
    {0xff, 0, 0, NULL, 0},
};

static ec_pdo_entry_info_t el4102_entries[] = {{0x3001, 1, 16}, {0x3002, 1, 16}};
static ec_pdo_entry_info_t el4102_wide[] = {{0x3001, 1, 32}, {0x3002, 1, 16}};
static ec_pdo_info_t el4102_pdos[] = {{0x1600, 1, el4102_entries}, {0x1601, 1, el4102_entries + 1}};
static ec_pdo_info_t el4102_wide_pdos[] = {{0x1600, 1, el4102_wide}, {0x1601, 1, el4102_wide + 1}};
static ec_sync_info_t el4102_syncs[] = {
    {0, EC_DIR_OUTPUT, 0, NULL, EC_WD_DISABLE},
    {1, EC_DIR_INPUT, 0, NULL, EC_WD_DISABLE},
    {2, EC_DIR_OUTPUT, 2, el4102_pdos, EC_WD_ENABLE},
    {3, EC_DIR_INPUT, 0, NULL, EC_WD_DISABLE},
    {0xff, 0, 0, NULL, 0},
};
static ec_sync_info_t el4102_wide_syncs[] = {
    {0, EC_DIR_OUTPUT, 0, NULL, EC_WD_DISABLE},
    {1, EC_DIR_INPUT, 0, NULL, EC_WD_DISABLE},
    {2, EC_DIR_OUTPUT, 2, el4102_wide_pdos, EC_WD_ENABLE},
    {3, EC_DIR_INPUT, 0, NULL, EC_WD_DISABLE},
    {0xff, 0, 0, NULL, 0},
};

int main(int argc, char **argv)
{
    int size = argc > 1 && strcmp(argv[1], "size") == 0;
    const char *name = size ? "pdo_rules size" : "pdo_rules fixed";
    ec_master_t *m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish(name);
    ec_domain_t *d = ecrt_master_create_domain(m);
    ec_slave_config_t *ai = ecrt_master_slave_config(m, 0, 3, EL3102);
    ec_slave_config_t *ao = ecrt_master_slave_config(m, 0, 4, EL4102);
    CHECK(d && ai && ao);
    if (!(d && ai && ao))
        return finish(name);
    CHECK_EQ(ecrt_slave_config_pdos(ai, EC_END, el3102_syncs), 0);
    CHECK_EQ(ecrt_slave_config_pdos(ao, EC_END, size ? el4102_wide_syncs : el4102_syncs), 0);
    /* Every entry of both, as a program built from cstruct output registers them. */
    int off[6];
    off[0] = ecrt_slave_config_reg_pdo_entry(ai, 0x3101, 1, d, NULL);
    off[1] = ecrt_slave_config_reg_pdo_entry(ai, 0x3101, 2, d, NULL);
    off[2] = ecrt_slave_config_reg_pdo_entry(ai, 0x3102, 1, d, NULL);
    off[3] = ecrt_slave_config_reg_pdo_entry(ai, 0x3102, 2, d, NULL);
    off[4] = ecrt_slave_config_reg_pdo_entry(ao, 0x3001, 1, d, NULL);
    off[5] = ecrt_slave_config_reg_pdo_entry(ao, 0x3002, 1, d, NULL);
    for (int i = 0; i < 6; i++)
        CHECK(off[i] >= 0);
    CHECK_EQ(ecrt_master_activate(m), 0);
    uint8_t *pd = ecrt_domain_data(d);
    CHECK(pd != NULL);

    ec_slave_config_state_t s_ai, s_ao;
    ec_domain_state_t ds = {0};
    int cycles = size ? 6000 : 15000;
    for (int i = 0; i < cycles; i++) {
        ecrt_master_receive(m);
        ecrt_domain_process(d);
        ecrt_domain_state(d, &ds);
        ecrt_slave_config_state(ai, &s_ai);
        ecrt_slave_config_state(ao, &s_ao);
        if (pd)
            EC_WRITE_S16(pd + off[5], 1000);
        ecrt_domain_queue(d);
        ecrt_master_send(m);
        if (!size && s_ai.operational && s_ao.operational && ds.wc_state == EC_WC_COMPLETE)
            break;
        sleep_ns(200000);
    }
    printf("EL3102: operational %u al_state %u; EL4102: operational %u al_state %u; domain wc %u state %d\n",
           s_ai.operational, s_ai.al_state, s_ao.operational, s_ao.al_state, ds.working_counter,
           ds.wc_state);
    CHECK(s_ai.operational);
    if (size) {
        CHECK(!s_ao.operational);
        CHECK(s_ao.al_state != EC_AL_STATE_OP);
        CHECK(ds.wc_state != EC_WC_COMPLETE);
    } else {
        CHECK(s_ao.operational);
        CHECK_EQ(ds.wc_state, EC_WC_COMPLETE);
    }
    ecrt_release_master(m);
    return finish(name);
}
