/* The C API cannot be crashed by its caller: every exported function is called with NULL for
 * each pointer argument, in the wrong phase (configuration after activation, cyclic calls
 * before it, a second activate / deactivate / release, a master used after its release), with
 * configurations and domains freed by deactivation, and with absurd counts, sizes and
 * indices. Each call must return IgH's code and write exactly one "ecat:" line (the runner
 * counts the lines after each MARK; BAD expects one line, OK none), and the process must
 * survive. The runner also runs this program under valgrind when it is installed: no invalid
 * access and no leak. Network: sim:io (EK1100, EL2008, EL1018, EL4132, EL3102). */
#include "capi_test.h"
#include <limits.h>
#include <stdint.h>

#define BECKHOFF 0x00000002
#define EL2008 BECKHOFF, 0x07d83052
#define EL4132 BECKHOFF, 0x10243052
#define EL3102 BECKHOFF, 0x0c1e3052

/* A call that must return `want` with one log line. */
#define BAD(call, want)                                                     \
    do {                                                                    \
        MARK("1 " #call);                                                   \
        CHECK_EQ((call), (want));                                           \
    } while (0)
/* A constructor or pointer getter that must return NULL with one log line. */
#define BAD_NULL(call)                                                      \
    do {                                                                    \
        MARK("1 " #call);                                                   \
        CHECK((call) == NULL);                                              \
    } while (0)
/* A void call that must log one line (and do nothing). */
#define BAD_VOID(call)                                                      \
    do {                                                                    \
        MARK("1 " #call);                                                   \
        call;                                                               \
    } while (0)
/* A call that must succeed silently (`want` is its result). */
#define OK(call, want)                                                      \
    do {                                                                    \
        MARK("0 " #call);                                                   \
        CHECK_EQ((call), (want));                                           \
    } while (0)

static uint8_t buf[64];
static size_t rs;
static uint32_t abort_code;
static uint16_t error_code;
static unsigned int bitpos, offset;
static const struct in_addr any_addr = {0};

/* Every function with NULL for its object (the other arguments valid). */
static void null_objects(void)
{
    ec_master_state_t ms;
    ec_master_link_state_t ls;
    ec_master_info_t mi;
    ec_master_scan_progress_t sp;
    ec_slave_info_t si;
    ec_sync_info_t sy;
    ec_pdo_info_t pi;
    ec_pdo_entry_info_t pe;
    ec_domain_state_t ds;
    ec_slave_config_state_t ss;
    uint32_t t32, vid;
    uint16_t vtype;

    BAD_VOID(ecrt_release_master(NULL));
    BAD(ecrt_master_reserve(NULL), -EINVAL);
    BAD_NULL(ecrt_master_create_domain(NULL));
    BAD_NULL(ecrt_master_slave_config(NULL, 0, 4, EL3102));
    BAD(ecrt_master_select_reference_clock(NULL, NULL), -EINVAL);
    BAD(ecrt_master(NULL, &mi), -EINVAL);
    BAD(ecrt_master_scan_progress(NULL, &sp), -EINVAL);
    BAD(ecrt_master_get_slave(NULL, 0, &si), -EINVAL);
    BAD(ecrt_master_get_sync_manager(NULL, 0, 2, &sy), -EINVAL);
    BAD(ecrt_master_get_pdo(NULL, 0, 2, 0, &pi), -EINVAL);
    BAD(ecrt_master_get_pdo_entry(NULL, 0, 2, 0, 0, &pe), -EINVAL);
    BAD(ecrt_master_sdo_download(NULL, 0, 0x1000, 0, buf, 1, &abort_code), -EINVAL);
    BAD(ecrt_master_sdo_download_complete(NULL, 0, 0x1000, buf, 1, &abort_code), -EINVAL);
    BAD(ecrt_master_sdo_upload(NULL, 0, 0x1000, 0, buf, sizeof buf, &rs, &abort_code), -EINVAL);
    BAD(ecrt_master_write_idn(NULL, 0, 0, 1, buf, 2, &error_code), -EINVAL);
    BAD(ecrt_master_read_idn(NULL, 0, 0, 1, buf, sizeof buf, &rs, &error_code), -EINVAL);
    BAD(ecrt_master_activate(NULL), -EINVAL);
    BAD(ecrt_master_deactivate(NULL), -EINVAL);
    BAD(ecrt_master_set_send_interval(NULL, 1000), -EINVAL);
    BAD(ecrt_master_send(NULL), -EINVAL);
    BAD(ecrt_master_receive(NULL), -EINVAL);
    BAD(ecrt_master_state(NULL, &ms), -EINVAL);
    BAD(ecrt_master_link_state(NULL, 0, &ls), -EINVAL);
    BAD(ecrt_master_reset(NULL), -EINVAL);
    BAD(ecrt_master_application_time(NULL, 1), -EINVAL);
    BAD(ecrt_master_sync_reference_clock(NULL), -EINVAL);
    BAD(ecrt_master_sync_reference_clock_to(NULL, 1), -EINVAL);
    BAD(ecrt_master_sync_slave_clocks(NULL), -EINVAL);
    BAD(ecrt_master_reference_clock_time(NULL, &t32), -EINVAL);
    BAD(ecrt_master_sync_monitor_queue(NULL), -EINVAL);
    BAD(ecrt_master_sync_monitor_process(NULL), 0xffffffffu);

    BAD(ecrt_slave_config_dc(NULL, 0x0300, 1000000, 0, 0, 0), -EINVAL);
    BAD(ecrt_slave_config_sync_manager(NULL, 2, EC_DIR_OUTPUT, EC_WD_DEFAULT), -EINVAL);
    BAD(ecrt_slave_config_watchdog(NULL, 0, 0), -EINVAL);
    BAD(ecrt_slave_config_pdo_assign_add(NULL, 2, 0x1600), -EINVAL);
    BAD(ecrt_slave_config_pdo_assign_clear(NULL, 2), -EINVAL);
    BAD(ecrt_slave_config_pdo_mapping_add(NULL, 0x1600, 0x7000, 1, 8), -EINVAL);
    BAD(ecrt_slave_config_pdo_mapping_clear(NULL, 0x1600), -EINVAL);
    BAD(ecrt_slave_config_pdos(NULL, EC_END, NULL), -EINVAL);
    BAD(ecrt_slave_config_reg_pdo_entry(NULL, 0x3101, 1, NULL, &bitpos), -EINVAL);
    BAD(ecrt_slave_config_reg_pdo_entry_pos(NULL, 3, 0, 0, NULL, &bitpos), -EINVAL);
    BAD(ecrt_slave_config_sdo(NULL, 0x8000, 1, buf, 1), -EINVAL);
    BAD(ecrt_slave_config_sdo8(NULL, 0x8000, 1, 0), -EINVAL);
    BAD(ecrt_slave_config_sdo16(NULL, 0x8000, 1, 0), -EINVAL);
    BAD(ecrt_slave_config_sdo32(NULL, 0x8000, 1, 0), -EINVAL);
    BAD(ecrt_slave_config_complete_sdo(NULL, 0x8000, buf, 2), -EINVAL);
    BAD(ecrt_slave_config_emerg_size(NULL, 4), -EINVAL);
    BAD(ecrt_slave_config_emerg_pop(NULL, buf), -EINVAL);
    BAD(ecrt_slave_config_emerg_clear(NULL), -EINVAL);
    BAD(ecrt_slave_config_emerg_overruns(NULL), -EINVAL);
    BAD_NULL(ecrt_slave_config_create_sdo_request(NULL, 0x1000, 0, 4));
    BAD_NULL(ecrt_slave_config_create_soe_request(NULL, 0, 1, 4));
    BAD_NULL(ecrt_slave_config_create_voe_handler(NULL, 4));
    BAD_NULL(ecrt_slave_config_create_reg_request(NULL, 4));
    BAD(ecrt_slave_config_state(NULL, &ss), -EINVAL);
    BAD(ecrt_slave_config_idn(NULL, 0, 1, EC_AL_STATE_PREOP, buf, 2), -EINVAL);
    BAD(ecrt_slave_config_flag(NULL, "AssignToPdi", 1), -EINVAL);
    BAD(ecrt_slave_config_eoe_mac_address(NULL, buf), -EINVAL);
    BAD(ecrt_slave_config_eoe_ip_address(NULL, any_addr), -EINVAL);
    BAD(ecrt_slave_config_eoe_subnet_mask(NULL, any_addr), -EINVAL);
    BAD(ecrt_slave_config_eoe_default_gateway(NULL, any_addr), -EINVAL);
    BAD(ecrt_slave_config_eoe_dns_address(NULL, any_addr), -EINVAL);
    BAD(ecrt_slave_config_eoe_hostname(NULL, "drive"), -EINVAL);
    BAD(ecrt_slave_config_state_timeout(NULL, EC_AL_STATE_PREOP, EC_AL_STATE_SAFEOP, 0), -EINVAL);

    BAD(ecrt_domain_reg_pdo_entry_list(NULL, NULL), -EINVAL);
    BAD(ecrt_domain_size(NULL), 0);
    BAD_NULL(ecrt_domain_data(NULL));
    BAD(ecrt_domain_process(NULL), -EINVAL);
    BAD(ecrt_domain_queue(NULL), -EINVAL);
    BAD(ecrt_domain_state(NULL, &ds), -EINVAL);

    BAD(ecrt_sdo_request_index(NULL, 0x1000, 0), -EINVAL);
    BAD(ecrt_sdo_request_timeout(NULL, 10), -EINVAL);
    BAD_NULL(ecrt_sdo_request_data(NULL));
    BAD(ecrt_sdo_request_data_size(NULL), 0);
    BAD(ecrt_sdo_request_state(NULL), EC_REQUEST_ERROR);
    BAD(ecrt_sdo_request_write(NULL), -EINVAL);
    BAD(ecrt_sdo_request_read(NULL), -EINVAL);
    BAD(ecrt_soe_request_idn(NULL, 0, 1), -EINVAL);
    BAD(ecrt_soe_request_timeout(NULL, 10), -EINVAL);
    BAD_NULL(ecrt_soe_request_data(NULL));
    BAD(ecrt_soe_request_data_size(NULL), 0);
    BAD(ecrt_soe_request_state(NULL), EC_REQUEST_ERROR);
    BAD(ecrt_soe_request_write(NULL), -EINVAL);
    BAD(ecrt_soe_request_read(NULL), -EINVAL);
    BAD(ecrt_voe_handler_send_header(NULL, 1, 2), -EINVAL);
    BAD(ecrt_voe_handler_received_header(NULL, &vid, &vtype), -EINVAL);
    BAD_NULL(ecrt_voe_handler_data(NULL));
    BAD(ecrt_voe_handler_data_size(NULL), 0);
    BAD(ecrt_voe_handler_write(NULL, 1), -EINVAL);
    BAD(ecrt_voe_handler_read(NULL), -EINVAL);
    BAD(ecrt_voe_handler_read_nosync(NULL), -EINVAL);
    BAD(ecrt_voe_handler_execute(NULL), EC_REQUEST_ERROR);
    BAD_NULL(ecrt_reg_request_data(NULL));
    BAD(ecrt_reg_request_state(NULL), EC_REQUEST_ERROR);
    BAD(ecrt_reg_request_write(NULL, 0x130, 2), -EINVAL);
    BAD(ecrt_reg_request_read(NULL, 0x130, 2), -EINVAL);

    /* The float helpers read 0 from NULL and write nothing. */
    MARK("1 ecrt_read_real(NULL)");
    CHECK(ecrt_read_real(NULL) == 0.0f);
    MARK("1 ecrt_read_lreal(NULL)");
    CHECK(ecrt_read_lreal(NULL) == 0.0);
    BAD_VOID(ecrt_write_real(NULL, 1.5f));
    BAD_VOID(ecrt_write_lreal(NULL, 1.5));
    OK(ecrt_version_magic(), ECRT_VERSION_MAGIC);
}

/* NULL for every other pointer argument, with live objects. */
static void null_arguments(ec_master_t *m, ec_domain_t *d, ec_slave_config_t *sc)
{
    BAD(ecrt_master(m, NULL), -EINVAL);
    BAD(ecrt_master_scan_progress(m, NULL), -EINVAL);
    BAD(ecrt_master_state(m, NULL), -EINVAL);
    BAD(ecrt_master_link_state(m, 0, NULL), -EINVAL);
    BAD(ecrt_master_get_slave(m, 0, NULL), -EINVAL);
    BAD(ecrt_master_get_sync_manager(m, 4, 2, NULL), -EINVAL);
    BAD(ecrt_master_get_pdo(m, 4, 3, 0, NULL), -EINVAL);
    BAD(ecrt_master_get_pdo_entry(m, 4, 3, 0, 0, NULL), -EINVAL);
    BAD(ecrt_master_sdo_download(m, 4, 0x8000, 1, NULL, 2, &abort_code), -EINVAL);
    BAD(ecrt_master_sdo_download_complete(m, 4, 0x8000, NULL, 2, &abort_code), -EINVAL);
    BAD(ecrt_master_sdo_upload(m, 4, 0x1018, 1, NULL, sizeof buf, &rs, &abort_code), -EINVAL);
    BAD(ecrt_master_sdo_upload(m, 4, 0x1018, 1, buf, sizeof buf, NULL, &abort_code), -EINVAL);
    BAD(ecrt_master_write_idn(m, 4, 0, 1, NULL, 2, &error_code), -EINVAL);
    BAD(ecrt_master_read_idn(m, 4, 0, 1, NULL, sizeof buf, &rs, &error_code), -EINVAL);
    BAD(ecrt_master_read_idn(m, 4, 0, 1, buf, sizeof buf, NULL, &error_code), -EINVAL);
    BAD(ecrt_master_reference_clock_time(m, NULL), -EINVAL);
    /* abort_code and error_code may be NULL: the call runs (an SDO read of the identity). */
    OK(ecrt_master_sdo_upload(m, 4, 0x1018, 1, buf, sizeof buf, &rs, NULL), 0);
    CHECK_EQ(rs, 4);

    BAD(ecrt_slave_config_reg_pdo_entry(sc, 0x3101, 1, NULL, &bitpos), -EINVAL);
    BAD(ecrt_slave_config_reg_pdo_entry_pos(sc, 3, 0, 0, NULL, &bitpos), -EINVAL);
    BAD(ecrt_slave_config_sdo(sc, 0x8000, 1, NULL, 2), -EINVAL);
    BAD(ecrt_slave_config_complete_sdo(sc, 0x8000, NULL, 2), -EINVAL);
    BAD(ecrt_slave_config_emerg_pop(sc, NULL), -EINVAL);
    BAD(ecrt_slave_config_state(sc, NULL), -EINVAL);
    BAD(ecrt_slave_config_idn(sc, 0, 1, EC_AL_STATE_PREOP, NULL, 2), -EINVAL);
    BAD(ecrt_slave_config_flag(sc, NULL, 1), -EINVAL);
    BAD(ecrt_slave_config_eoe_mac_address(sc, NULL), -EINVAL);
    BAD(ecrt_slave_config_eoe_hostname(sc, NULL), -EINVAL);
    BAD(ecrt_domain_reg_pdo_entry_list(d, NULL), -EINVAL);
    BAD(ecrt_domain_state(d, NULL), -EINVAL);
    /* A record without its offset pointer registers nothing. */
    const ec_pdo_entry_reg_t no_offset[] = {{0, 4, EL3102, 0x3101, 1, NULL, NULL}, {0}};
    BAD(ecrt_domain_reg_pdo_entry_list(d, no_offset), -EINVAL);
    /* IgH: NULL syncs configure nothing and succeed; NULL PDOs or entries with any count
     * keep the defaults. */
    OK(ecrt_slave_config_pdos(sc, 5, NULL), 0);
    const ec_sync_info_t nulls[] = {
        {3, EC_DIR_INPUT, UINT_MAX, NULL, EC_WD_DEFAULT},
        {0xff, 0, 0, NULL, 0},
    };
    OK(ecrt_slave_config_pdos(sc, EC_END, nulls), 0);
    const ec_pdo_info_t no_entries[] = {{0x1a00, UINT_MAX, NULL}, {0x1a01, 0, NULL}};
    const ec_sync_info_t defaults[] = {
        {0, EC_DIR_INVALID, 0, NULL, EC_WD_DEFAULT}, /* direction left as it is (IgH) */
        {3, EC_DIR_INPUT, 2, no_entries, EC_WD_DEFAULT},
    };
    OK(ecrt_slave_config_pdos(sc, 2, defaults), 0);
}

/* Absurd counts, sizes and indices. */
static void absurd(ec_master_t *m, ec_domain_t *d, ec_slave_config_t *sc)
{
    ec_slave_info_t si;
    ec_sync_info_t sy;
    ec_pdo_info_t pi;
    ec_pdo_entry_info_t pe;
    ec_master_link_state_t ls;

    BAD(ecrt_master_get_slave(m, 65535, &si), -ENOENT);
    BAD(ecrt_master_get_sync_manager(m, 65535, 2, &sy), -EINVAL);
    BAD(ecrt_master_get_sync_manager(m, 4, 255, &sy), -ENOENT);
    BAD(ecrt_master_get_pdo(m, 4, 3, 65535, &pi), -ENOENT);
    BAD(ecrt_master_get_pdo(m, 4, 200, 0, &pi), -ENOENT);
    BAD(ecrt_master_get_pdo_entry(m, 4, 3, 0, 65535, &pe), -ENOENT);
    BAD(ecrt_master_get_pdo_entry(m, 4, 3, 65535, 0, &pe), -ENOENT);
    BAD(ecrt_master_link_state(m, UINT_MAX, &ls), -EINVAL);
    BAD(ecrt_master_sdo_upload(m, 65535, 0x1018, 1, buf, sizeof buf, &rs, &abort_code), -EINVAL);
    BAD(ecrt_master_sdo_upload(m, 4, 0x1018, 1, buf, 0, &rs, &abort_code), -EOVERFLOW);
    BAD(ecrt_master_sdo_download(m, 4, 0x8000, 1, buf, 0, &abort_code), -EINVAL);
    BAD(ecrt_master_sdo_download(m, 4, 0x8000, 1, buf, SIZE_MAX, &abort_code), -ENOMEM);
    BAD(ecrt_master_sdo_download_complete(m, 4, 0x8000, buf, SIZE_MAX / 2, &abort_code), -ENOMEM);
    BAD(ecrt_master_write_idn(m, 4, 0, 1, buf, SIZE_MAX, &error_code), -ENOMEM);
    BAD(ecrt_master_write_idn(m, 4, 0, 1, buf, 0, &error_code), -EINVAL);
    BAD(ecrt_master_read_idn(m, 4, 200, 1, buf, sizeof buf, &rs, &error_code), -EINVAL);

    BAD(ecrt_slave_config_sync_manager(sc, 16, EC_DIR_OUTPUT, EC_WD_DEFAULT), -ENOENT);
    BAD(ecrt_slave_config_sync_manager(sc, 255, EC_DIR_INPUT, EC_WD_DEFAULT), -ENOENT);
    BAD(ecrt_slave_config_sync_manager(sc, 2, (ec_direction_t)77, EC_WD_DEFAULT), -EINVAL);
    BAD(ecrt_slave_config_pdo_assign_add(sc, 16, 0x1600), -EINVAL);
    BAD(ecrt_slave_config_pdo_assign_clear(sc, 255), -EINVAL);
    BAD(ecrt_slave_config_pdo_mapping_add(sc, 0xffff, 0x7000, 1, 8), -ENOENT);
    BAD(ecrt_slave_config_pdo_mapping_clear(sc, 0xffff), -ENOENT);
    const ec_sync_info_t sm16[] = {{16, EC_DIR_OUTPUT, 0, NULL, EC_WD_DEFAULT}};
    BAD(ecrt_slave_config_pdos(sc, 1, sm16), -ENOENT);
    const ec_sync_info_t sm255[] = {{200, EC_DIR_OUTPUT, 0, NULL, EC_WD_DEFAULT}, {0xff, 0, 0, NULL, 0}};
    BAD(ecrt_slave_config_pdos(sc, EC_END, sm255), -ENOENT);
    BAD(ecrt_slave_config_reg_pdo_entry_pos(sc, 16, 0, 0, d, &bitpos), -EINVAL);
    BAD(ecrt_slave_config_reg_pdo_entry_pos(sc, 3, UINT_MAX, 0, d, &bitpos), -ENOENT);
    BAD(ecrt_slave_config_reg_pdo_entry_pos(sc, 3, 0, UINT_MAX, d, &bitpos), -ENOENT);
    BAD(ecrt_slave_config_reg_pdo_entry(sc, 0xffff, 0xff, d, &bitpos), -ENOENT);
    BAD(ecrt_slave_config_sdo(sc, 0x8000, 1, buf, SIZE_MAX), -ENOMEM);
    BAD(ecrt_slave_config_complete_sdo(sc, 0x8000, buf, 0), -EINVAL);
    BAD(ecrt_slave_config_emerg_size(sc, SIZE_MAX), -ENOMEM);
    BAD(ecrt_slave_config_emerg_size(sc, SIZE_MAX / 8), -ENOMEM);
    OK(ecrt_slave_config_emerg_size(sc, 0), 0);
    OK(ecrt_slave_config_emerg_pop(sc, buf), -ENOENT);
    BAD_NULL(ecrt_slave_config_create_sdo_request(sc, 0x1000, 0, SIZE_MAX));
    BAD_NULL(ecrt_slave_config_create_sdo_request(sc, 0x1000, 0, (size_t)1 << 40));
    BAD_NULL(ecrt_slave_config_create_soe_request(sc, 0, 1, SIZE_MAX));
    BAD_NULL(ecrt_slave_config_create_voe_handler(sc, SIZE_MAX));
    BAD_NULL(ecrt_slave_config_create_reg_request(sc, SIZE_MAX));
    BAD(ecrt_slave_config_idn(sc, 0, 1, (ec_al_state_t)8, buf, 2), -EINVAL);
    BAD(ecrt_slave_config_idn(sc, 8, 1, EC_AL_STATE_PREOP, buf, 2), -EINVAL);
    BAD(ecrt_slave_config_idn(sc, 0, 1, EC_AL_STATE_PREOP, buf, 0), -EINVAL);
    BAD(ecrt_slave_config_idn(sc, 0, 1, EC_AL_STATE_PREOP, buf, SIZE_MAX), -ENOMEM);
    BAD(ecrt_slave_config_flag(sc, "", 1), -EINVAL);
    BAD(ecrt_slave_config_state_timeout(sc, 3, EC_AL_STATE_OP, 10), -EINVAL);
    BAD(ecrt_slave_config_eoe_hostname(sc, "a-host-name-of-more-than-thirty-one-bytes"), -EINVAL);

    /* Requests of size 0 exist (IgH allocates nothing for them); a register read or a VoE
     * write longer than the buffer is refused. */
    ec_sdo_request_t *sdo0 = ecrt_slave_config_create_sdo_request(sc, 0x1018, 1, 0);
    CHECK(sdo0 != NULL);
    OK(ecrt_sdo_request_data_size(sdo0), 0);
    ec_reg_request_t *reg0 = ecrt_slave_config_create_reg_request(sc, 0);
    CHECK(reg0 != NULL);
    BAD(ecrt_reg_request_read(reg0, 0x130, 2), -EOVERFLOW);
    BAD(ecrt_reg_request_write(reg0, 0x130, SIZE_MAX), -EOVERFLOW);
    ec_voe_handler_t *voe0 = ecrt_slave_config_create_voe_handler(sc, 0);
    CHECK(voe0 != NULL);
    BAD(ecrt_voe_handler_write(voe0, 1), -EOVERFLOW);
    ec_soe_request_t *soe0 = ecrt_slave_config_create_soe_request(sc, 0, 1, 0);
    CHECK(soe0 != NULL);
    OK(ecrt_soe_request_data_size(soe0), 0);

    /* A mapping holds at most 255 entries and an assignment 255 PDOs (their CoE objects count
     * them in one byte); an entry mapped beyond the 65535 bytes a sync manager holds gets no
     * offset outside the image. On a configuration of a slave that is not there (it stays
     * out of the bus). */
    MARK("1 a configuration of no slave stays unattached");
    ec_slave_config_t *far = ecrt_master_slave_config(m, 0, 100, BECKHOFF, 0x1234);
    CHECK(far != NULL);
    MARK("0 nine PDOs of 255 entries of 255 bits, 255 PDOs in SM3");
    int added = 0;
    for (int p = 0; p < 9; p++) {
        added += ecrt_slave_config_pdo_assign_add(far, 2, 0x1600 + p) == 0;
        for (int i = 0; i < 255; i++)
            added += ecrt_slave_config_pdo_mapping_add(far, 0x1600 + p, 0x7000 + p, (uint8_t)i, 255) == 0;
    }
    CHECK_EQ(added, 9 * 256);
    for (int p = 0; p < 255; p++)
        added += ecrt_slave_config_pdo_assign_add(far, 3, 0x1a00 + p) == 0;
    CHECK_EQ(added, 9 * 256 + 255);
    BAD(ecrt_slave_config_pdo_mapping_add(far, 0x1600, 0x7000, 0, 8), -ENOBUFS);
    BAD(ecrt_slave_config_pdo_assign_add(far, 3, 0x1bff), -ENOBUFS);
    BAD(ecrt_slave_config_reg_pdo_entry_pos(far, 2, 8, 254, d, &bitpos), -EINVAL);
}

/* Calls that belong after activation, made before it. */
static void before_activation(ec_master_t *m, ec_domain_t *d, ec_slave_config_t *sc)
{
    uint32_t t32;
    ec_sdo_request_t *sdo = ecrt_slave_config_create_sdo_request(sc, 0x1018, 1, 4);
    ec_soe_request_t *soe = ecrt_slave_config_create_soe_request(sc, 0, 1, 4);
    ec_voe_handler_t *voe = ecrt_slave_config_create_voe_handler(sc, 4);
    CHECK(sdo && soe && voe);

    BAD(ecrt_master_send(m), -EPERM);
    BAD(ecrt_master_receive(m), -EPERM);
    BAD(ecrt_master_deactivate(m), -EINVAL);
    BAD(ecrt_master_sync_reference_clock(m), -EPERM);
    BAD(ecrt_master_sync_reference_clock_to(m, 1), -EPERM);
    BAD(ecrt_master_sync_slave_clocks(m), -EPERM);
    BAD(ecrt_master_sync_monitor_queue(m), -EPERM);
    BAD(ecrt_master_sync_monitor_process(m), 0xffffffffu);
    BAD(ecrt_master_reference_clock_time(m, &t32), -EPERM);
    BAD_NULL(ecrt_domain_data(d));
    BAD(ecrt_domain_process(d), 0); /* said once per domain */
    OK(ecrt_domain_queue(d), 0);
    BAD(ecrt_sdo_request_read(sdo), -EPERM);
    BAD(ecrt_sdo_request_write(sdo), -EPERM);
    BAD(ecrt_soe_request_read(soe), -EPERM);
    BAD(ecrt_soe_request_write(soe), -EPERM);
    BAD(ecrt_voe_handler_read(voe), -EPERM);
    BAD(ecrt_voe_handler_read_nosync(voe), -EPERM);
    BAD(ecrt_voe_handler_write(voe, 2), -EPERM);
    OK(ecrt_sdo_request_state(sdo), EC_REQUEST_UNUSED);
    OK(ecrt_master_reset(m), 0);
}

/* Configuration calls after activation: refused, nothing changes. */
static void after_activation(ec_master_t *m, ec_domain_t *d, ec_slave_config_t *sc)
{
    const ec_pdo_entry_reg_t regs[] = {{0, 4, EL3102, 0x3101, 1, &offset, NULL}, {0}};
    const ec_sync_info_t syncs[] = {{3, EC_DIR_INPUT, 0, NULL, EC_WD_DEFAULT}};

    BAD(ecrt_master_activate(m), -EBUSY);
    BAD_NULL(ecrt_master_create_domain(m));
    BAD_NULL(ecrt_master_slave_config(m, 0, 1, EL2008));
    BAD(ecrt_master_select_reference_clock(m, NULL), -EPERM);
    BAD(ecrt_domain_reg_pdo_entry_list(d, regs), -ENOENT);
    BAD(ecrt_slave_config_reg_pdo_entry(sc, 0x3101, 1, d, &bitpos), -EPERM);
    BAD(ecrt_slave_config_reg_pdo_entry_pos(sc, 3, 0, 0, d, &bitpos), -EPERM);
    BAD(ecrt_slave_config_pdos(sc, 1, syncs), -EPERM);
    BAD(ecrt_slave_config_sync_manager(sc, 3, EC_DIR_INPUT, EC_WD_DEFAULT), -EPERM);
    BAD(ecrt_slave_config_pdo_assign_add(sc, 3, 0x1a00), -EPERM);
    BAD(ecrt_slave_config_pdo_assign_clear(sc, 3), -EPERM);
    BAD(ecrt_slave_config_pdo_mapping_add(sc, 0x1a00, 0x3101, 1, 8), -EPERM);
    BAD(ecrt_slave_config_pdo_mapping_clear(sc, 0x1a00), -EPERM);
    BAD(ecrt_slave_config_sdo(sc, 0x8000, 1, buf, 1), -EPERM);
    BAD(ecrt_slave_config_sdo8(sc, 0x8000, 1, 0), -EPERM);
    BAD(ecrt_slave_config_sdo16(sc, 0x8000, 1, 0), -EPERM);
    BAD(ecrt_slave_config_sdo32(sc, 0x8000, 1, 0), -EPERM);
    BAD(ecrt_slave_config_complete_sdo(sc, 0x8000, buf, 2), -EPERM);
    BAD(ecrt_slave_config_watchdog(sc, 100, 100), -EPERM);
    BAD(ecrt_slave_config_dc(sc, 0x0300, 1000000, 0, 0, 0), -EPERM);
    BAD(ecrt_slave_config_flag(sc, "AssignToPdi", 1), -EPERM);
    BAD(ecrt_slave_config_state_timeout(sc, EC_AL_STATE_PREOP, EC_AL_STATE_SAFEOP, 0), -EPERM);
    BAD(ecrt_slave_config_emerg_size(sc, 4), -EPERM);
    BAD(ecrt_slave_config_idn(sc, 0, 1, EC_AL_STATE_PREOP, buf, 2), -EPERM);
    BAD(ecrt_slave_config_eoe_ip_address(sc, any_addr), -EPERM);
    BAD_NULL(ecrt_slave_config_create_sdo_request(sc, 0x1018, 1, 4));
    BAD_NULL(ecrt_slave_config_create_soe_request(sc, 0, 1, 4));
    BAD_NULL(ecrt_slave_config_create_voe_handler(sc, 4));
    BAD_NULL(ecrt_slave_config_create_reg_request(sc, 4));
    /* sim:io has no DC configured: IgH's -ENXIO, silently (it is called every cycle). */
    OK(ecrt_master_sync_slave_clocks(m), -ENXIO);
    OK(ecrt_master_sync_monitor_process(m), 0xffffffffu);
}

/* Configurations and domains freed by ecrt_master_deactivate, and objects of the wrong kind:
 * refused without touching them. */
static void stale_objects(ec_master_t *master_of_stale, ec_domain_t *d, ec_slave_config_t *sc)
{
    ec_slave_config_state_t ss;
    const ec_pdo_entry_reg_t regs[] = {{0, 4, EL3102, 0x3101, 1, &offset, NULL}, {0}};

    BAD(ecrt_slave_config_sdo8(sc, 0x8000, 1, 0), -EINVAL);
    BAD(ecrt_slave_config_state(sc, &ss), -EINVAL);
    BAD(ecrt_slave_config_pdo_assign_clear(sc, 3), -EINVAL);
    BAD(ecrt_slave_config_pdos(sc, EC_END, NULL), -EINVAL);
    BAD(ecrt_slave_config_emerg_pop(sc, buf), -EINVAL);
    BAD(ecrt_slave_config_emerg_overruns(sc), -EINVAL);
    BAD_NULL(ecrt_slave_config_create_sdo_request(sc, 0x1018, 1, 4));
    BAD(ecrt_slave_config_reg_pdo_entry(sc, 0x3101, 1, d, &bitpos), -EINVAL);
    BAD(ecrt_domain_reg_pdo_entry_list(d, regs), -EINVAL);
    BAD(ecrt_slave_config_sdo8((ec_slave_config_t *)buf, 0x8000, 1, 0), -EINVAL);
    BAD(ecrt_domain_reg_pdo_entry_list((ec_domain_t *)buf, regs), -EINVAL);
    BAD(ecrt_domain_size(d), 0);
    BAD(ecrt_master_select_reference_clock(master_of_stale, sc), -EINVAL);
}

/* A master used after its release, and things that are no master at all. */
static void released(ec_master_t *m)
{
    ec_master_state_t ms;
    ec_master_info_t mi;
    ec_slave_info_t si;
    int not_a_master;
    ec_master_t *fake = (ec_master_t *)&not_a_master;

    BAD_VOID(ecrt_release_master(m));
    BAD_VOID(ecrt_release_master(fake));
    BAD(ecrt_master_state(m, &ms), -EINVAL);
    BAD(ecrt_master(m, &mi), -EINVAL);
    BAD(ecrt_master_get_slave(m, 0, &si), -EINVAL);
    BAD(ecrt_master_reserve(m), -EINVAL);
    BAD_NULL(ecrt_master_create_domain(m));
    BAD_NULL(ecrt_master_slave_config(m, 0, 4, EL3102));
    BAD(ecrt_master_activate(m), -EINVAL);
    BAD(ecrt_master_deactivate(m), -EINVAL);
    BAD(ecrt_master_send(m), -EINVAL);
    BAD(ecrt_master_receive(m), -EINVAL);
    BAD(ecrt_master_application_time(m, 1), -EINVAL);
    BAD(ecrt_master_sync_slave_clocks(m), -EINVAL);
    BAD(ecrt_master_sdo_upload(m, 4, 0x1018, 1, buf, sizeof buf, &rs, &abort_code), -EINVAL);
    BAD(ecrt_master_read_idn(m, 4, 0, 1, buf, sizeof buf, &rs, &error_code), -EINVAL);
    BAD(ecrt_master_state(fake, &ms), -EINVAL);
    BAD(ecrt_master_send(fake), -EINVAL);
}

int main(void)
{
    null_objects();

    /* Open without reserving: configuration is refused (IgH: NULL / -EPERM). */
    ec_master_t *o = ecrt_open_master(0);
    CHECK(o != NULL);
    if (o) {
        BAD_NULL(ecrt_master_create_domain(o));
        BAD(ecrt_master_activate(o), -EPERM);
        OK(ecrt_master_reserve(o), 0);
        BAD(ecrt_master_reserve(o), -EBUSY);
        BAD_NULL(ecrt_request_master(0)); /* master 0 is open */
        OK((ecrt_release_master(o), 0), 0);
    }

    ec_master_t *m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("abuse");
    ec_domain_t *d = ecrt_master_create_domain(m);
    ec_slave_config_t *sc = ecrt_master_slave_config(m, 0, 4, EL3102);
    ec_slave_config_t *out = ecrt_master_slave_config(m, 0, 3, EL4132);
    CHECK(d && sc && out);
    if (!(d && sc && out))
        return finish("abuse");
    /* Another address for a configured slave, and another identity for a configured address. */
    BAD_NULL(ecrt_master_slave_config(m, 0, 4, EL2008));
    null_arguments(m, d, sc);
    absurd(m, d, sc);
    before_activation(m, d, sc);

    /* A working configuration: the EL3102's inputs and the EL4132's outputs. */
    MARK("0 configure");
    const ec_pdo_entry_reg_t regs[] = {
        {0, 4, EL3102, 0x3101, 2, &offset, NULL},
        {0, 3, EL4132, 0x6411, 1, &offset, &bitpos},
        {0},
    };
    CHECK_EQ(ecrt_domain_reg_pdo_entry_list(d, regs), 0);
    OK(ecrt_master_activate(m), 0);
    uint8_t *pd = ecrt_domain_data(d);
    size_t size = ecrt_domain_size(d);
    CHECK(pd != NULL && size > 0);
    ec_domain_state_t ds = {0};
    for (int i = 0; i < 3000 && ds.wc_state != EC_WC_COMPLETE; i++) {
        cycle_domain(m, d);
        ecrt_domain_state(d, &ds);
    }
    CHECK_EQ(ds.wc_state, EC_WC_COMPLETE);
    after_activation(m, d, sc);
    for (int i = 0; i < 10; i++)
        cycle_domain(m, d);

    OK(ecrt_master_deactivate(m), 0);
    BAD(ecrt_master_deactivate(m), -EINVAL);
    stale_objects(m, d, sc);
    /* Configure again after deactivation (the old objects are gone, as in IgH). */
    MARK("0 configure again");
    d = ecrt_master_create_domain(m);
    sc = ecrt_master_slave_config(m, 0, 4, EL3102);
    CHECK(d && sc);
    CHECK(ecrt_slave_config_reg_pdo_entry(sc, 0x3101, 2, d, NULL) >= 0);
    OK(ecrt_master_activate(m), 0);
    for (int i = 0; i < 10; i++)
        cycle_domain(m, d);

    /* Release while active, then every use of the released master is refused. */
    OK((ecrt_release_master(m), 0), 0);
    released(m);

    /* The index is free again. */
    MARK("0 request again");
    m = ecrt_request_master(0);
    CHECK(m != NULL);
    ecrt_release_master(m);
    MARK("0 end");
    return finish("abuse");
}
