/* The remaining calls, each in a meaningful place, on sim:servo6: PDO assignment and mapping
 * call by call, raw and complete-access startup SDOs, watchdog, flags, state timeouts, scan
 * progress, send interval, complete-access blocking download, link state, reset, the
 * real/lreal helpers and the byte-order macros; and the SoE/VoE calls that have no object to
 * act on yet (their constructors return NULL) with NULL, which they refuse cleanly. */
#include "capi_test.h"

#define DRIVE 0x00000eca, 0x00000402

int main(void)
{
    /* Helpers first (no master needed). */
    uint8_t b[8];
    ecrt_write_real(b, 1.5f);
    CHECK(ecrt_read_real(b) == 1.5f);
    CHECK_EQ(EC_READ_U32(b), 0x3fc00000);
    EC_WRITE_REAL(b, -2.25f);
    CHECK(EC_READ_REAL(b) == -2.25f);
    ecrt_write_lreal(b, 3.0);
    CHECK(ecrt_read_lreal(b) == 3.0);
    CHECK_EQ(EC_READ_U64(b), 0x4008000000000000ULL);
    EC_WRITE_LREAL(b, 0.5);
    CHECK(EC_READ_LREAL(b) == 0.5);
    EC_WRITE_S16(b, -2);
    CHECK_EQ(b[0], 0xfe);
    CHECK_EQ(b[1], 0xff);
    CHECK_EQ(EC_READ_S16(b), -2);
    EC_WRITE_U32(b, 0x11223344);
    CHECK_EQ(b[0], 0x44);
    CHECK_EQ(le32_to_cpup(b), 0x11223344);
    CHECK_EQ(cpu_to_le16(0x1234), 0x1234);
    EC_WRITE_S64(b, -3);
    CHECK_EQ(EC_READ_S64(b), -3);
    EC_WRITE_S8(b, -1);
    CHECK_EQ(EC_READ_S8(b), -1);
    CHECK_EQ(EC_READ_U8(b), 0xff);
    EC_WRITE_BIT(b, 3, 0);
    CHECK_EQ(EC_READ_BIT(b, 3), 0);
    CHECK_EQ(b[0], 0xf7);
    struct timeval tv = {946684800 + 2, 5};
    CHECK_EQ(EC_TIMEVAL2NANO(tv), 2000005000ULL);
    CHECK_EQ(ECRT_VERSION(1, 6), 0x106);

    /* SoE / VoE calls refuse a NULL object (soe.c and voe.c use real ones). */
    CHECK_EQ(ecrt_soe_request_idn(NULL, 0, 1), -EINVAL);
    CHECK_EQ(ecrt_soe_request_timeout(NULL, 1), -EINVAL);
    CHECK(ecrt_soe_request_data(NULL) == NULL);
    CHECK_EQ(ecrt_soe_request_data_size(NULL), 0);
    CHECK_EQ(ecrt_soe_request_state(NULL), EC_REQUEST_ERROR);
    CHECK_EQ(ecrt_soe_request_write(NULL), -EINVAL);
    CHECK_EQ(ecrt_soe_request_read(NULL), -EINVAL);
    uint32_t vid;
    uint16_t vtype;
    CHECK_EQ(ecrt_voe_handler_send_header(NULL, 1, 2), -EINVAL);
    CHECK_EQ(ecrt_voe_handler_received_header(NULL, &vid, &vtype), -EINVAL);
    CHECK(ecrt_voe_handler_data(NULL) == NULL);
    CHECK_EQ(ecrt_voe_handler_data_size(NULL), 0);
    CHECK_EQ(ecrt_voe_handler_write(NULL, 1), -EINVAL);
    CHECK_EQ(ecrt_voe_handler_read(NULL), -EINVAL);
    CHECK_EQ(ecrt_voe_handler_read_nosync(NULL), -EINVAL);
    CHECK_EQ(ecrt_voe_handler_execute(NULL), EC_REQUEST_ERROR);

    ec_master_t *m = ecrt_open_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("coverage");
    CHECK_EQ(ecrt_master_reserve(m), 0);
    ec_master_scan_progress_t sp;
    CHECK_EQ(ecrt_master_scan_progress(m, &sp), 0);
    CHECK_EQ(sp.slave_count, 6);
    CHECK_EQ(sp.scan_index, 6);
    CHECK_EQ(ecrt_master_set_send_interval(m, 1000), 0);
    ec_master_link_state_t ls;
    CHECK_EQ(ecrt_master_link_state(m, 0, &ls), 0);
    CHECK(ls.link_up);
    CHECK_EQ(ls.slaves_responding, 6);

    /* Complete access: 0x1C12 (RxPDO assignment) of drive 5: one PDO, 0x1600. */
    uint8_t ca[4] = {1, 0, 0x00, 0x16};
    uint32_t abort_code = 0;
    CHECK_EQ(ecrt_master_sdo_download_complete(m, 5, 0x1c12, ca, sizeof ca, &abort_code), 0);

    ec_domain_t *d = ecrt_master_create_domain(m);
    ec_slave_config_t *sc = ecrt_master_slave_config(m, 0, 0, DRIVE);
    CHECK(d && sc);
    if (!(d && sc))
        return finish("coverage");
    /* CSP mapping call by call: outputs controlword + target position, inputs statusword +
     * position actual value. */
    CHECK_EQ(ecrt_slave_config_sync_manager(sc, 2, EC_DIR_OUTPUT, EC_WD_ENABLE), 0);
    CHECK_EQ(ecrt_slave_config_pdo_assign_clear(sc, 2), 0);
    CHECK_EQ(ecrt_slave_config_pdo_assign_add(sc, 2, 0x1600), 0);
    CHECK_EQ(ecrt_slave_config_pdo_mapping_clear(sc, 0x1600), 0);
    CHECK_EQ(ecrt_slave_config_pdo_mapping_add(sc, 0x1600, 0x6040, 0, 16), 0);
    CHECK_EQ(ecrt_slave_config_pdo_mapping_add(sc, 0x1600, 0x607a, 0, 32), 0);
    CHECK_EQ(ecrt_slave_config_pdo_assign_clear(sc, 3), 0);
    CHECK_EQ(ecrt_slave_config_pdo_assign_add(sc, 3, 0x1a00), 0);
    CHECK_EQ(ecrt_slave_config_pdo_mapping_clear(sc, 0x1a00), 0);
    CHECK_EQ(ecrt_slave_config_pdo_mapping_add(sc, 0x1a00, 0x6041, 0, 16), 0);
    CHECK_EQ(ecrt_slave_config_pdo_mapping_add(sc, 0x1a00, 0x6064, 0, 32), 0);
    int o_cw = ecrt_slave_config_reg_pdo_entry(sc, 0x6040, 0, d, NULL);
    int o_tp = ecrt_slave_config_reg_pdo_entry(sc, 0x607a, 0, d, NULL);
    int o_sw = ecrt_slave_config_reg_pdo_entry(sc, 0x6041, 0, d, NULL);
    int o_pa = ecrt_slave_config_reg_pdo_entry(sc, 0x6064, 0, d, NULL);
    CHECK_EQ(o_cw, 0);
    CHECK_EQ(o_tp, 2);
    CHECK_EQ(o_sw, 6);
    CHECK_EQ(o_pa, 8);
    uint8_t mode = 8;
    CHECK_EQ(ecrt_slave_config_sdo(sc, 0x6060, 0, &mode, 1), 0);
    uint8_t fe[4] = {0x10, 0x27, 0, 0}; /* 0x6065 following error window 10000 */
    CHECK_EQ(ecrt_slave_config_sdo(sc, 0x6065, 0, fe, sizeof fe), 0);
    CHECK_EQ(ecrt_slave_config_complete_sdo(sc, 0x1c13, (const uint8_t[]){1, 0, 0x00, 0x1a}, 4), 0);
    CHECK_EQ(ecrt_slave_config_watchdog(sc, 0, 0), 0);
    CHECK_EQ(ecrt_slave_config_flag(sc, "AssignToPdi", 0), 0);
    CHECK_EQ(ecrt_slave_config_state_timeout(sc, EC_AL_STATE_PREOP, EC_AL_STATE_SAFEOP, 0), 0);
    ec_sdo_request_t *display = ecrt_slave_config_create_sdo_request(sc, 0x6061, 0, 1);
    CHECK(display != NULL);

    CHECK_EQ(ecrt_master_activate(m), 0);
    uint8_t *pd = ecrt_domain_data(d);
    ec_slave_config_state_t ss = {0};
    for (int i = 0; i < 5000 && !ss.operational; i++) {
        ecrt_master_receive(m);
        ecrt_domain_process(d);
        ecrt_domain_queue(d);
        ecrt_master_send(m);
        ecrt_slave_config_state(sc, &ss);
        sleep_ns(200000);
    }
    CHECK(ss.operational);
    CHECK_EQ(ecrt_master_reset(m), 0);
    ec_domain_state_t ds = {0};
    for (int i = 0; i < 200; i++) {
        ecrt_master_receive(m);
        ecrt_domain_process(d);
        ecrt_domain_queue(d);
        ecrt_master_send(m);
        sleep_ns(200000);
    }
    ecrt_domain_state(d, &ds);
    CHECK_EQ(ds.wc_state, EC_WC_COMPLETE);
    /* The drive reports CSP (0x6061) and its mapping as configured. */
    MARK("1 request after activation");
    ec_sdo_request_t *disp = ecrt_slave_config_create_sdo_request(sc, 0x6061, 0, 1);
    MARK("0 end");
    CHECK(disp == NULL); /* requests are created before activation */
    ecrt_slave_config_state(sc, &ss);
    CHECK(ss.operational);
    (void)pd;
    CHECK_EQ(ecrt_master_get_pdo_entry(m, 0, 2, 0, 1, &(ec_pdo_entry_info_t){0}), 0);
    ec_pdo_entry_info_t e;
    CHECK_EQ(ecrt_master_get_pdo_entry(m, 0, 2, 0, 1, &e), 0);
    CHECK_EQ(e.index, 0x607a);
    if (display) {
        CHECK_EQ(ecrt_sdo_request_read(display), 0);
        int st = EC_REQUEST_BUSY;
        for (int i = 0; i < 2000 && st == EC_REQUEST_BUSY; i++) {
            ecrt_master_receive(m);
            ecrt_domain_process(d);
            ecrt_domain_queue(d);
            ecrt_master_send(m);
            st = ecrt_sdo_request_state(display);
            sleep_ns(200000);
        }
        CHECK_EQ(st, EC_REQUEST_SUCCESS);
        CHECK_EQ(EC_READ_S8(ecrt_sdo_request_data(display)), 8);
    }
    ecrt_release_master(m);

    return finish("coverage");
}
