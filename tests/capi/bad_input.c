/* Bad input never crashes: NULL pointers, an unknown master index, calls in the wrong phase,
 * an entry that is not mapped, and the protocols not built yet each give IgH's return code
 * and exactly one "ecat:" line on stderr (the runner counts the lines after each MARK; the
 * number in the MARK is how many are expected). */
#include "capi_test.h"

#define EL3102 0x00000002, 0x0c1e3052

int main(void)
{
    uint8_t buf[16];
    size_t rs;
    uint32_t abort_code;

    /* Master 7 has no link configured. */
    MARK("1 unknown master");
    CHECK(ecrt_request_master(7) == NULL);
    MARK("1 unknown master open");
    CHECK(ecrt_open_master(7) == NULL);

    /* NULL pointers. */
    MARK("1 null");
    CHECK_EQ(ecrt_master_activate(NULL), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_master_send(NULL), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_master_receive(NULL), -EINVAL);
    MARK("1 null");
    CHECK(ecrt_master_create_domain(NULL) == NULL);
    MARK("1 null");
    CHECK(ecrt_master_slave_config(NULL, 0, 0, EL3102) == NULL);
    MARK("1 null");
    CHECK_EQ(ecrt_master_state(NULL, NULL), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_domain_process(NULL), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_domain_queue(NULL), -EINVAL);
    MARK("1 null");
    CHECK(ecrt_domain_data(NULL) == NULL);
    MARK("1 null");
    CHECK_EQ(ecrt_domain_size(NULL), 0);
    MARK("1 null");
    CHECK_EQ(ecrt_domain_reg_pdo_entry_list(NULL, NULL), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_slave_config_pdos(NULL, 0, NULL), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_slave_config_reg_pdo_entry(NULL, 0x6000, 1, NULL, NULL), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_slave_config_sdo8(NULL, 0x6000, 1, 0), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_slave_config_state(NULL, NULL), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_master_sdo_upload(NULL, 0, 0x1018, 1, buf, sizeof buf, &rs, &abort_code), -EINVAL);
    MARK("1 null");
    CHECK(ecrt_sdo_request_data(NULL) == NULL);
    MARK("1 null");
    CHECK_EQ(ecrt_sdo_request_state(NULL), EC_REQUEST_ERROR);
    MARK("1 null");
    CHECK_EQ(ecrt_reg_request_read(NULL, 0x130, 2), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_master_application_time(NULL, 0), -EINVAL);
    MARK("1 null");
    CHECK_EQ(ecrt_master_sync_monitor_process(NULL), 0xffffffffu);
    MARK("1 null");
    ecrt_release_master(NULL);

    /* Open but not reserved: no configuration (IgH: -EPERM / NULL). */
    ec_master_t *o = ecrt_open_master(0);
    CHECK(o != NULL);
    if (o) {
        MARK("1 domain on an unreserved master");
        CHECK(ecrt_master_create_domain(o) == NULL);
        MARK("1 config on an unreserved master");
        CHECK(ecrt_master_slave_config(o, 0, 4, EL3102) == NULL);
        MARK("1 activate an unreserved master");
        CHECK_EQ(ecrt_master_activate(o), -EPERM);
        MARK("0 info on an unreserved master");
        ec_master_info_t mi;
        CHECK_EQ(ecrt_master(o, &mi), 0);
        CHECK_EQ(mi.slave_count, 5);
        ecrt_release_master(o);
    }

    ec_master_t *m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("bad_input");
    MARK("1 reserve twice");
    CHECK_EQ(ecrt_master_reserve(m), -EBUSY);
    MARK("1 request twice");
    CHECK(ecrt_request_master(0) == NULL);
    ec_domain_t *d = ecrt_master_create_domain(m);
    ec_slave_config_t *sc = ecrt_master_slave_config(m, 0, 4, EL3102);
    CHECK(d && sc);
    if (!(d && sc))
        return finish("bad_input");

    /* Wrong phase: domain and cyclic calls before activation. */
    MARK("1 data before activate");
    CHECK(ecrt_domain_data(d) == NULL);
    MARK("1 process before activate (said once)");
    CHECK_EQ(ecrt_domain_process(d), 0);
    MARK("0 process again");
    CHECK_EQ(ecrt_domain_process(d), 0);
    ec_domain_state_t ds;
    MARK("0 state before activate");
    CHECK_EQ(ecrt_domain_state(d, &ds), 0);
    CHECK_EQ(ds.wc_state, EC_WC_ZERO);
    MARK("1 send before activate");
    CHECK_EQ(ecrt_master_send(m), -EPERM);
    MARK("1 receive before activate");
    CHECK_EQ(ecrt_master_receive(m), -EPERM);
    MARK("1 deactivate idle");
    CHECK_EQ(ecrt_master_deactivate(m), -EINVAL);
    MARK("1 dc before activate");
    CHECK_EQ(ecrt_master_sync_reference_clock(m), -EPERM);

    /* Bad configuration input. */
    MARK("1 unmapped entry");
    CHECK_EQ(ecrt_slave_config_reg_pdo_entry(sc, 0x7777, 1, d, NULL), -ENOENT);
    MARK("1 unmapped entry by position");
    CHECK_EQ(ecrt_slave_config_reg_pdo_entry_pos(sc, 3, 5, 0, d, NULL), -ENOENT);
    MARK("1 sync manager 16");
    CHECK_EQ(ecrt_slave_config_sync_manager(sc, 16, EC_DIR_OUTPUT, EC_WD_DEFAULT), -ENOENT);
    MARK("1 bad direction");
    CHECK_EQ(ecrt_slave_config_sync_manager(sc, 2, EC_DIR_INVALID, EC_WD_DEFAULT), -EINVAL);
    MARK("1 mapping of an unassigned PDO");
    CHECK_EQ(ecrt_slave_config_pdo_mapping_add(sc, 0x1a77, 0x6000, 1, 8), -ENOENT);
    MARK("1 no slave 42");
    CHECK_EQ(ecrt_master_sdo_upload(m, 42, 0x1018, 1, buf, sizeof buf, &rs, &abort_code), -EINVAL);
    MARK("1 no slave 42 info");
    ec_slave_info_t si;
    CHECK_EQ(ecrt_master_get_slave(m, 42, &si), -ENOENT);
    MARK("1 link 1");
    ec_master_link_state_t ls;
    CHECK_EQ(ecrt_master_link_state(m, 1, &ls), -EINVAL);
    MARK("1 flag key NULL");
    CHECK_EQ(ecrt_slave_config_flag(sc, NULL, 1), -EINVAL);
    MARK("0 flag");
    CHECK_EQ(ecrt_slave_config_flag(sc, "WaitBeforeSAFEOPms", 10), 0);
    MARK("0 emergency empty");
    CHECK_EQ(ecrt_slave_config_emerg_size(sc, 4), 0);
    CHECK_EQ(ecrt_slave_config_emerg_pop(sc, buf), -ENOENT);
    CHECK_EQ(ecrt_slave_config_emerg_overruns(sc), 0);
    CHECK_EQ(ecrt_slave_config_emerg_clear(sc), 0);

    /* SoE and VoE: bad input, and a slave without SoE (the EK1100 at 0). */
    MARK("1 soe read on a slave without soe");
    uint16_t ec = 0x7777;
    CHECK_EQ(ecrt_master_read_idn(m, 0, 0, 1, buf, sizeof buf, &rs, &ec), -EIO);
    CHECK_EQ(ec, 0);
    MARK("1 soe read unknown slave");
    CHECK_EQ(ecrt_master_read_idn(m, 42, 0, 1, buf, sizeof buf, &rs, &ec), -EINVAL);
    MARK("1 soe read NULL target");
    CHECK_EQ(ecrt_master_read_idn(m, 0, 0, 1, NULL, sizeof buf, &rs, &ec), -EINVAL);
    MARK("1 soe write NULL data");
    CHECK_EQ(ecrt_master_write_idn(m, 0, 0, 1, NULL, 2, &ec), -EINVAL);
    MARK("1 soe write NULL master");
    CHECK_EQ(ecrt_master_write_idn(NULL, 0, 0, 1, buf, 2, &ec), -EINVAL);
    MARK("1 soe write drive 8");
    CHECK_EQ(ecrt_master_write_idn(m, 0, 8, 1, buf, 2, &ec), -EINVAL);
    MARK("1 soe request NULL sc");
    CHECK(ecrt_slave_config_create_soe_request(NULL, 0, 1, 8) == NULL);
    MARK("1 startup idn in OP");
    CHECK_EQ(ecrt_slave_config_idn(sc, 0, 1, EC_AL_STATE_OP, buf, 2), -EINVAL);
    MARK("1 startup idn NULL data");
    CHECK_EQ(ecrt_slave_config_idn(sc, 0, 1, EC_AL_STATE_PREOP, NULL, 2), -EINVAL);
    MARK("1 voe NULL sc");
    CHECK(ecrt_slave_config_create_voe_handler(NULL, 16) == NULL);
    MARK("1 voe received header NULL");
    ec_voe_handler_t *voe = ecrt_slave_config_create_voe_handler(sc, 4);
    CHECK(voe != NULL);
    CHECK_EQ(ecrt_voe_handler_received_header(voe, NULL, NULL), -EINVAL);
    MARK("1 voe write too long");
    CHECK_EQ(ecrt_voe_handler_write(voe, 5), -EOVERFLOW);
    MARK("1 voe read before activation");
    CHECK_EQ(ecrt_voe_handler_read(voe), -EPERM);
    MARK("1 soe request before activation");
    ec_soe_request_t *soe = ecrt_slave_config_create_soe_request(sc, 0, 1, 2);
    CHECK(soe != NULL);
    CHECK_EQ(ecrt_soe_request_read(soe), -EPERM);
    MARK("1 eoe NULL sc");
    struct in_addr ip = {0};
    CHECK_EQ(ecrt_slave_config_eoe_ip_address(NULL, ip), -EINVAL);
    MARK("1 eoe hostname NULL");
    CHECK_EQ(ecrt_slave_config_eoe_hostname(sc, NULL), -EINVAL);

    /* After activation, configuration calls are refused. */
    CHECK_EQ(ecrt_master_activate(m), 0);
    MARK("1 activate twice");
    CHECK_EQ(ecrt_master_activate(m), -EBUSY);
    MARK("1 domain after activate");
    CHECK(ecrt_master_create_domain(m) == NULL);
    MARK("1 config after activate");
    CHECK(ecrt_master_slave_config(m, 0, 1, 0x2, 0x07d83052) == NULL);
    MARK("1 register after activate");
    CHECK_EQ(ecrt_slave_config_reg_pdo_entry(sc, 0x3101, 2, d, NULL), -EPERM);
    MARK("0 deactivate");
    CHECK_EQ(ecrt_master_deactivate(m), 0);
    MARK("0 release");
    ecrt_release_master(m);
    MARK("0 end");
    return finish("bad_input");
}
