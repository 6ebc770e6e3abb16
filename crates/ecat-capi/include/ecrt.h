/*
 * ecrt.h: the application interface of ecat's libethercat.so.1.
 *
 * Source compatible with the IgH EtherCAT master's realtime interface, API 1.6
 * (ECRT_VER_MAJOR 1, ECRT_VER_MINOR 6): the same type names, enum values,
 * structure layouts, macros and function prototypes, so programs written for
 * IgH's header compile unchanged. This file was written for ecat from a
 * description of that interface; it is not IgH's header.
 *
 * In ecat the master runs in the calling process (user space, any network
 * interface, or a simulated network "sim:..."), not in a kernel module.
 * Master N takes its link from the environment variable ECAT_MASTER<N>, then
 * ECAT_INTERFACE, then MASTER<N>_DEVICE in /etc/ecat.conf.
 *
 * License: MIT OR Apache-2.0 (as the rest of ecat).
 */

#ifndef ECAT_ECRT_H
#define ECAT_ECRT_H

#include <stdlib.h>
#include <stdint.h>
#include <sys/time.h>
#include <netinet/in.h>

/* ---- Versions -------------------------------------------------------- */

/** API major version. */
#define ECRT_VER_MAJOR 1
/** API minor version. */
#define ECRT_VER_MINOR 6
/** Combines a major and a minor version into one number. */
#define ECRT_VERSION(a, b) (((a) << 8) + (b))
/** The API version this header describes. */
#define ECRT_VERSION_MAGIC ECRT_VERSION(ECRT_VER_MAJOR, ECRT_VER_MINOR)

/* ---- Export control -------------------------------------------------- */

#ifndef EC_PUBLIC_API
#if defined(ethercat_EXPORTS)
#define EC_PUBLIC_API __attribute__((visibility("default")))
#else
#define EC_PUBLIC_API
#endif
#endif

/* ---- Features --------------------------------------------------------- */

#define EC_HAVE_REDUNDANCY
#define EC_HAVE_EMERGENCY
#define EC_HAVE_REG_ACCESS
#define EC_HAVE_SELECT_REF_CLOCK
#define EC_HAVE_REF_CLOCK_TIME
#define EC_HAVE_REG_BY_POS
#define EC_HAVE_SYNC_TO
#define EC_HAVE_FLAGS
#define EC_HAVE_SOE_REQUESTS
#define EC_HAVE_SCAN_PROGRESS
#define EC_HAVE_SET_IP
#define EC_HAVE_STATE_TIMEOUT

/* ---- Constants -------------------------------------------------------- */

/** Terminates lists whose length is given as EC_END. */
#define EC_END ~0U
/** Sync managers per slave. */
#define EC_MAX_SYNC_MANAGERS 16
/** Longest string in info structures (with the terminating zero). */
#define EC_MAX_STRING_LENGTH 64
/** Ports per slave. */
#define EC_MAX_PORTS 4
/** Size of one CoE emergency record. */
#define EC_COE_EMERGENCY_MSG_SIZE 8

/** Converts a struct timeval (since 1970) to nanoseconds since 2000-01-01. */
#define EC_TIMEVAL2NANO(TV) \
    (((TV).tv_sec - 946684800ULL) * 1000000000ULL + (TV).tv_usec * 1000ULL)

/* ---- Opaque objects --------------------------------------------------- */

struct ec_master;
/** A master (one link, its slaves, domains and configurations). */
typedef struct ec_master ec_master_t;

struct ec_slave_config;
/** The application's configuration of one slave. */
typedef struct ec_slave_config ec_slave_config_t;

struct ec_domain;
/** A process data image exchanged every cycle. */
typedef struct ec_domain ec_domain_t;

struct ec_sdo_request;
/** An asynchronous CoE SDO transfer. */
typedef struct ec_sdo_request ec_sdo_request_t;

struct ec_soe_request;
/** An asynchronous SoE IDN transfer. */
typedef struct ec_soe_request ec_soe_request_t;

struct ec_voe_handler;
/** A vendor-specific mailbox (VoE) handler. */
typedef struct ec_voe_handler ec_voe_handler_t;

struct ec_reg_request;
/** An asynchronous ESC register access. */
typedef struct ec_reg_request ec_reg_request_t;

/* ---- States and information ------------------------------------------ */

/** Master state. al_states ORs the slaves' AL states (INIT 1, PREOP 2, SAFEOP 4, OP 8). */
typedef struct {
    unsigned int slaves_responding; /**< Slaves answering on the link(s). */
    unsigned int al_states : 4;     /**< OR of the slaves' application-layer states. */
    unsigned int link_up : 1;       /**< At least one link is up. */
} ec_master_state_t;

/** State of one of the master's links. */
typedef struct {
    unsigned int slaves_responding; /**< Slaves answering on this link. */
    unsigned int al_states : 4;     /**< OR of their AL states. */
    unsigned int link_up : 1;       /**< The link is up. */
} ec_master_link_state_t;

/** State of a slave configuration. */
typedef struct {
    unsigned int online : 1;      /**< The attached slave answers. */
    unsigned int operational : 1; /**< The slave was brought to OP and is there. */
    unsigned int al_state : 4;    /**< The slave's AL state (1, 2, 4, 8). */
} ec_slave_config_state_t;

/** Master information (ecrt_master()). */
typedef struct {
    unsigned int slave_count; /**< Slaves found by the last scan. */
    unsigned int link_up : 1; /**< The link is up. */
    uint8_t scan_busy;        /**< A scan is in progress. */
    uint64_t app_time;        /**< Last application time given. */
} ec_master_info_t;

/** Scan progress (ecrt_master_scan_progress()). */
typedef struct {
    unsigned int slave_count; /**< Slaves to scan. */
    unsigned int scan_index;  /**< Slaves scanned so far. */
} ec_master_scan_progress_t;

/** What is behind a slave's port. */
typedef enum {
    EC_PORT_NOT_IMPLEMENTED, /**< The port does not exist. */
    EC_PORT_NOT_CONFIGURED,  /**< The port is not configured. */
    EC_PORT_EBUS,            /**< E-Bus. */
    EC_PORT_MII              /**< MII (Ethernet PHY). */
} ec_slave_port_desc_t;

/** Link status of a slave's port. */
typedef struct {
    uint8_t link_up;         /**< Link detected. */
    uint8_t loop_closed;     /**< The port's loop is closed. */
    uint8_t signal_detected; /**< A signal is detected on the RX side. */
} ec_slave_port_link_t;

/** Slave information (ecrt_master_get_slave()). */
typedef struct {
    uint16_t position;        /**< Ring position. */
    uint32_t vendor_id;       /**< Vendor id. */
    uint32_t product_code;    /**< Product code. */
    uint32_t revision_number; /**< Revision number. */
    uint32_t serial_number;   /**< Serial number. */
    uint16_t alias;           /**< Station alias. */
    int16_t current_on_ebus;  /**< E-Bus current (mA; negative = supplies). */
    struct {
        ec_slave_port_desc_t desc;  /**< Port type. */
        ec_slave_port_link_t link;  /**< Port link status. */
        uint32_t receive_time;      /**< DC receive time (ns). */
        uint16_t next_slave;        /**< Ring position of the slave behind the port. */
        uint32_t delay_to_next_dc;  /**< Delay to the next DC slave (ns). */
    } ports[EC_MAX_PORTS];            /**< Ports. */
    uint8_t al_state;                 /**< Current AL state. */
    uint8_t error_flag;               /**< The slave reports an error. */
    uint8_t sync_count;               /**< Sync managers. */
    uint16_t sdo_count;               /**< SDOs in the dictionary. */
    char name[EC_MAX_STRING_LENGTH];  /**< Name from the SII. */
} ec_slave_info_t;

/** Working counter evaluation of a domain. */
typedef enum {
    EC_WC_ZERO = 0,   /**< No process data was exchanged. */
    EC_WC_INCOMPLETE, /**< Some, but not all, registered slaves exchanged data. */
    EC_WC_COMPLETE    /**< Every registered slave exchanged data. */
} ec_wc_state_t;

/** Domain state (ecrt_domain_state()). */
typedef struct {
    unsigned int working_counter;    /**< Sum of the last cycle's working counters. */
    ec_wc_state_t wc_state;          /**< Its evaluation. */
    unsigned int redundancy_active;  /**< Redundant link in use. */
} ec_domain_state_t;

/** Direction of a sync manager / PDO. */
typedef enum {
    EC_DIR_INVALID, /**< Not set. */
    EC_DIR_OUTPUT,  /**< Master to slave (RxPDOs). */
    EC_DIR_INPUT,   /**< Slave to master (TxPDOs). */
    EC_DIR_COUNT    /**< Number of directions. */
} ec_direction_t;

/** Sync manager watchdog mode. */
typedef enum {
    EC_WD_DEFAULT, /**< As the slave's default. */
    EC_WD_ENABLE,  /**< Enabled. */
    EC_WD_DISABLE  /**< Disabled. */
} ec_watchdog_mode_t;

/* ---- PDO configuration lists ----------------------------------------- */

/** One mapped object. */
typedef struct {
    uint16_t index;     /**< Object index (0 = gap). */
    uint8_t subindex;   /**< Subindex. */
    uint8_t bit_length; /**< Length in bits. */
} ec_pdo_entry_info_t;

/** A PDO and its mapping. */
typedef struct {
    uint16_t index;                     /**< PDO index. */
    unsigned int n_entries;             /**< Entries; 0 keeps the default mapping. */
    const ec_pdo_entry_info_t *entries; /**< The entries. */
} ec_pdo_info_t;

/** A sync manager and its PDO assignment. */
typedef struct {
    uint8_t index;                     /**< Sync manager index; 0xff ends a list. */
    ec_direction_t dir;                /**< Direction. */
    unsigned int n_pdos;               /**< PDOs. */
    const ec_pdo_info_t *pdos;         /**< The PDOs. */
    ec_watchdog_mode_t watchdog_mode;  /**< Watchdog mode. */
} ec_sync_info_t;

/** One record of a PDO entry registration list (ecrt_domain_reg_pdo_entry_list()). */
typedef struct {
    uint16_t alias;             /**< Slave alias. */
    uint16_t position;          /**< Slave position (after the alias). */
    uint32_t vendor_id;         /**< Expected vendor id. */
    uint32_t product_code;      /**< Expected product code. */
    uint16_t index;             /**< Entry index; 0 ends the list. */
    uint8_t subindex;           /**< Entry subindex. */
    unsigned int *offset;       /**< Receives the byte offset in the domain. */
    unsigned int *bit_position; /**< Receives the bit position (may be NULL). */
} ec_pdo_entry_reg_t;

/** State of an asynchronous request. */
typedef enum {
    EC_REQUEST_UNUSED,  /**< Not started yet. */
    EC_REQUEST_BUSY,    /**< In progress. */
    EC_REQUEST_SUCCESS, /**< Done. */
    EC_REQUEST_ERROR    /**< Failed. */
} ec_request_state_t;

/** Application-layer states. */
typedef enum {
    EC_AL_STATE_INIT = 1,   /**< INIT. */
    EC_AL_STATE_PREOP = 2,  /**< PREOP. */
    EC_AL_STATE_SAFEOP = 4, /**< SAFEOP. */
    EC_AL_STATE_OP = 8      /**< OP. */
} ec_al_state_t;

/* ---- Functions -------------------------------------------------------- */

#ifdef __cplusplus
extern "C" {
#endif

/* Global */
EC_PUBLIC_API unsigned int ecrt_version_magic(void);
EC_PUBLIC_API ec_master_t *ecrt_request_master(unsigned int master_index);
EC_PUBLIC_API ec_master_t *ecrt_open_master(unsigned int master_index);
EC_PUBLIC_API void ecrt_release_master(ec_master_t *master);

/* Master */
EC_PUBLIC_API int ecrt_master_reserve(ec_master_t *master);
#ifdef __KERNEL__
void ecrt_master_callbacks(ec_master_t *master, void (*send_cb)(void *),
        void (*receive_cb)(void *), void *cb_data);
#endif
EC_PUBLIC_API ec_domain_t *ecrt_master_create_domain(ec_master_t *master);
EC_PUBLIC_API ec_slave_config_t *ecrt_master_slave_config(ec_master_t *master,
        uint16_t alias, uint16_t position, uint32_t vendor_id,
        uint32_t product_code);
EC_PUBLIC_API int ecrt_master_select_reference_clock(ec_master_t *master,
        ec_slave_config_t *sc);
EC_PUBLIC_API int ecrt_master(ec_master_t *master, ec_master_info_t *master_info);
EC_PUBLIC_API int ecrt_master_scan_progress(ec_master_t *master,
        ec_master_scan_progress_t *progress);
EC_PUBLIC_API int ecrt_master_get_slave(ec_master_t *master,
        uint16_t slave_position, ec_slave_info_t *slave_info);
EC_PUBLIC_API int ecrt_master_get_sync_manager(ec_master_t *master,
        uint16_t slave_position, uint8_t sync_index, ec_sync_info_t *sync);
EC_PUBLIC_API int ecrt_master_get_pdo(ec_master_t *master,
        uint16_t slave_position, uint8_t sync_index, uint16_t pos,
        ec_pdo_info_t *pdo);
EC_PUBLIC_API int ecrt_master_get_pdo_entry(ec_master_t *master,
        uint16_t slave_position, uint8_t sync_index, uint16_t pdo_pos,
        uint16_t entry_pos, ec_pdo_entry_info_t *entry);
EC_PUBLIC_API int ecrt_master_sdo_download(ec_master_t *master,
        uint16_t slave_position, uint16_t index, uint8_t subindex,
        const uint8_t *data, size_t data_size, uint32_t *abort_code);
EC_PUBLIC_API int ecrt_master_sdo_download_complete(ec_master_t *master,
        uint16_t slave_position, uint16_t index, const uint8_t *data,
        size_t data_size, uint32_t *abort_code);
EC_PUBLIC_API int ecrt_master_sdo_upload(ec_master_t *master,
        uint16_t slave_position, uint16_t index, uint8_t subindex,
        uint8_t *target, size_t target_size, size_t *result_size,
        uint32_t *abort_code);
EC_PUBLIC_API int ecrt_master_write_idn(ec_master_t *master,
        uint16_t slave_position, uint8_t drive_no, uint16_t idn,
        const uint8_t *data, size_t data_size, uint16_t *error_code);
EC_PUBLIC_API int ecrt_master_read_idn(ec_master_t *master,
        uint16_t slave_position, uint8_t drive_no, uint16_t idn,
        uint8_t *target, size_t target_size, size_t *result_size,
        uint16_t *error_code);
EC_PUBLIC_API int ecrt_master_activate(ec_master_t *master);
EC_PUBLIC_API int ecrt_master_deactivate(ec_master_t *master);
EC_PUBLIC_API int ecrt_master_set_send_interval(ec_master_t *master,
        size_t send_interval);
EC_PUBLIC_API int ecrt_master_send(ec_master_t *master);
EC_PUBLIC_API int ecrt_master_receive(ec_master_t *master);
#ifdef __KERNEL__
int ecrt_master_send_ext(ec_master_t *master);
#endif
EC_PUBLIC_API int ecrt_master_state(const ec_master_t *master,
        ec_master_state_t *state);
EC_PUBLIC_API int ecrt_master_link_state(const ec_master_t *master,
        unsigned int dev_idx, ec_master_link_state_t *state);
EC_PUBLIC_API int ecrt_master_reset(ec_master_t *master);

/* Distributed clocks */
EC_PUBLIC_API int ecrt_master_application_time(ec_master_t *master,
        uint64_t app_time);
EC_PUBLIC_API int ecrt_master_sync_reference_clock(ec_master_t *master);
EC_PUBLIC_API int ecrt_master_sync_reference_clock_to(ec_master_t *master,
        uint64_t sync_time);
EC_PUBLIC_API int ecrt_master_sync_slave_clocks(ec_master_t *master);
EC_PUBLIC_API int ecrt_master_reference_clock_time(const ec_master_t *master,
        uint32_t *time);
EC_PUBLIC_API int ecrt_master_sync_monitor_queue(ec_master_t *master);
EC_PUBLIC_API uint32_t ecrt_master_sync_monitor_process(
        const ec_master_t *master);
EC_PUBLIC_API int ecrt_slave_config_dc(ec_slave_config_t *sc,
        uint16_t assign_activate, uint32_t sync0_cycle, int32_t sync0_shift,
        uint32_t sync1_cycle, int32_t sync1_shift);

/* Slave configuration */
EC_PUBLIC_API int ecrt_slave_config_sync_manager(ec_slave_config_t *sc,
        uint8_t sync_index, ec_direction_t direction,
        ec_watchdog_mode_t watchdog_mode);
EC_PUBLIC_API int ecrt_slave_config_watchdog(ec_slave_config_t *sc,
        uint16_t watchdog_divider, uint16_t watchdog_intervals);
EC_PUBLIC_API int ecrt_slave_config_pdo_assign_add(ec_slave_config_t *sc,
        uint8_t sync_index, uint16_t index);
EC_PUBLIC_API int ecrt_slave_config_pdo_assign_clear(ec_slave_config_t *sc,
        uint8_t sync_index);
EC_PUBLIC_API int ecrt_slave_config_pdo_mapping_add(ec_slave_config_t *sc,
        uint16_t pdo_index, uint16_t entry_index, uint8_t entry_subindex,
        uint8_t entry_bit_length);
EC_PUBLIC_API int ecrt_slave_config_pdo_mapping_clear(ec_slave_config_t *sc,
        uint16_t pdo_index);
EC_PUBLIC_API int ecrt_slave_config_pdos(ec_slave_config_t *sc,
        unsigned int n_syncs, const ec_sync_info_t syncs[]);
EC_PUBLIC_API int ecrt_slave_config_reg_pdo_entry(ec_slave_config_t *sc,
        uint16_t entry_index, uint8_t entry_subindex, ec_domain_t *domain,
        unsigned int *bit_position);
EC_PUBLIC_API int ecrt_slave_config_reg_pdo_entry_pos(ec_slave_config_t *sc,
        uint8_t sync_index, unsigned int pdo_pos, unsigned int entry_pos,
        ec_domain_t *domain, unsigned int *bit_position);
EC_PUBLIC_API int ecrt_slave_config_sdo(ec_slave_config_t *sc, uint16_t index,
        uint8_t subindex, const uint8_t *data, size_t size);
EC_PUBLIC_API int ecrt_slave_config_sdo8(ec_slave_config_t *sc,
        uint16_t sdo_index, uint8_t sdo_subindex, uint8_t value);
EC_PUBLIC_API int ecrt_slave_config_sdo16(ec_slave_config_t *sc,
        uint16_t sdo_index, uint8_t sdo_subindex, uint16_t value);
EC_PUBLIC_API int ecrt_slave_config_sdo32(ec_slave_config_t *sc,
        uint16_t sdo_index, uint8_t sdo_subindex, uint32_t value);
EC_PUBLIC_API int ecrt_slave_config_complete_sdo(ec_slave_config_t *sc,
        uint16_t index, const uint8_t *data, size_t size);
EC_PUBLIC_API int ecrt_slave_config_emerg_size(ec_slave_config_t *sc,
        size_t elements);
EC_PUBLIC_API int ecrt_slave_config_emerg_pop(ec_slave_config_t *sc,
        uint8_t *target);
EC_PUBLIC_API int ecrt_slave_config_emerg_clear(ec_slave_config_t *sc);
EC_PUBLIC_API int ecrt_slave_config_emerg_overruns(
        const ec_slave_config_t *sc);
EC_PUBLIC_API ec_sdo_request_t *ecrt_slave_config_create_sdo_request(
        ec_slave_config_t *sc, uint16_t index, uint8_t subindex, size_t size);
EC_PUBLIC_API ec_soe_request_t *ecrt_slave_config_create_soe_request(
        ec_slave_config_t *sc, uint8_t drive_no, uint16_t idn, size_t size);
EC_PUBLIC_API ec_voe_handler_t *ecrt_slave_config_create_voe_handler(
        ec_slave_config_t *sc, size_t size);
EC_PUBLIC_API ec_reg_request_t *ecrt_slave_config_create_reg_request(
        ec_slave_config_t *sc, size_t size);
EC_PUBLIC_API int ecrt_slave_config_state(const ec_slave_config_t *sc,
        ec_slave_config_state_t *state);
EC_PUBLIC_API int ecrt_slave_config_idn(ec_slave_config_t *sc,
        uint8_t drive_no, uint16_t idn, ec_al_state_t state,
        const uint8_t *data, size_t size);
EC_PUBLIC_API int ecrt_slave_config_flag(ec_slave_config_t *sc,
        const char *key, int32_t value);
EC_PUBLIC_API int ecrt_slave_config_eoe_mac_address(ec_slave_config_t *sc,
        const unsigned char *mac_address);
EC_PUBLIC_API int ecrt_slave_config_eoe_ip_address(ec_slave_config_t *sc,
        struct in_addr ip_address);
EC_PUBLIC_API int ecrt_slave_config_eoe_subnet_mask(ec_slave_config_t *sc,
        struct in_addr subnet_mask);
EC_PUBLIC_API int ecrt_slave_config_eoe_default_gateway(
        ec_slave_config_t *sc, struct in_addr gateway_address);
EC_PUBLIC_API int ecrt_slave_config_eoe_dns_address(ec_slave_config_t *sc,
        struct in_addr dns_address);
EC_PUBLIC_API int ecrt_slave_config_eoe_hostname(ec_slave_config_t *sc,
        const char *name);
EC_PUBLIC_API int ecrt_slave_config_state_timeout(ec_slave_config_t *sc,
        ec_al_state_t from_state, ec_al_state_t to_state,
        unsigned int timeout_ms);

/* Domain */
EC_PUBLIC_API int ecrt_domain_reg_pdo_entry_list(ec_domain_t *domain,
        const ec_pdo_entry_reg_t *pdo_entry_regs);
EC_PUBLIC_API size_t ecrt_domain_size(const ec_domain_t *domain);
#ifdef __KERNEL__
void ecrt_domain_external_memory(ec_domain_t *domain, uint8_t *memory);
#endif
EC_PUBLIC_API uint8_t *ecrt_domain_data(const ec_domain_t *domain);
EC_PUBLIC_API int ecrt_domain_process(ec_domain_t *domain);
EC_PUBLIC_API int ecrt_domain_queue(ec_domain_t *domain);
EC_PUBLIC_API int ecrt_domain_state(const ec_domain_t *domain,
        ec_domain_state_t *state);

/* SDO request */
EC_PUBLIC_API int ecrt_sdo_request_index(ec_sdo_request_t *req,
        uint16_t index, uint8_t subindex);
EC_PUBLIC_API int ecrt_sdo_request_timeout(ec_sdo_request_t *req,
        uint32_t timeout);
EC_PUBLIC_API uint8_t *ecrt_sdo_request_data(const ec_sdo_request_t *req);
EC_PUBLIC_API size_t ecrt_sdo_request_data_size(const ec_sdo_request_t *req);
EC_PUBLIC_API ec_request_state_t ecrt_sdo_request_state(ec_sdo_request_t *req);
EC_PUBLIC_API int ecrt_sdo_request_write(ec_sdo_request_t *req);
EC_PUBLIC_API int ecrt_sdo_request_read(ec_sdo_request_t *req);

/* SoE request */
EC_PUBLIC_API int ecrt_soe_request_idn(ec_soe_request_t *req,
        uint8_t drive_no, uint16_t idn);
EC_PUBLIC_API int ecrt_soe_request_timeout(ec_soe_request_t *req,
        uint32_t timeout);
EC_PUBLIC_API uint8_t *ecrt_soe_request_data(const ec_soe_request_t *req);
EC_PUBLIC_API size_t ecrt_soe_request_data_size(const ec_soe_request_t *req);
EC_PUBLIC_API ec_request_state_t ecrt_soe_request_state(ec_soe_request_t *req);
EC_PUBLIC_API int ecrt_soe_request_write(ec_soe_request_t *req);
EC_PUBLIC_API int ecrt_soe_request_read(ec_soe_request_t *req);

/* VoE handler */
EC_PUBLIC_API int ecrt_voe_handler_send_header(ec_voe_handler_t *voe,
        uint32_t vendor_id, uint16_t vendor_type);
EC_PUBLIC_API int ecrt_voe_handler_received_header(
        const ec_voe_handler_t *voe, uint32_t *vendor_id,
        uint16_t *vendor_type);
EC_PUBLIC_API uint8_t *ecrt_voe_handler_data(const ec_voe_handler_t *voe);
EC_PUBLIC_API size_t ecrt_voe_handler_data_size(const ec_voe_handler_t *voe);
EC_PUBLIC_API int ecrt_voe_handler_write(ec_voe_handler_t *voe, size_t size);
EC_PUBLIC_API int ecrt_voe_handler_read(ec_voe_handler_t *voe);
EC_PUBLIC_API int ecrt_voe_handler_read_nosync(ec_voe_handler_t *voe);
EC_PUBLIC_API ec_request_state_t ecrt_voe_handler_execute(
        ec_voe_handler_t *voe);

/* Register request */
EC_PUBLIC_API uint8_t *ecrt_reg_request_data(const ec_reg_request_t *req);
EC_PUBLIC_API ec_request_state_t ecrt_reg_request_state(
        const ec_reg_request_t *req);
EC_PUBLIC_API int ecrt_reg_request_write(ec_reg_request_t *req,
        uint16_t address, size_t size);
EC_PUBLIC_API int ecrt_reg_request_read(ec_reg_request_t *req,
        uint16_t address, size_t size);

/* Floating point helpers (little-endian IEEE 754 in process data) */
EC_PUBLIC_API float ecrt_read_real(const void *data);
EC_PUBLIC_API double ecrt_read_lreal(const void *data);
EC_PUBLIC_API void ecrt_write_real(void *data, float value);
EC_PUBLIC_API void ecrt_write_lreal(void *data, double value);

#ifdef __cplusplus
}
#endif

/* ---- Byte order helpers ---------------------------------------------- */
/* Process data is little-endian. These names are part of what applications
 * written for IgH's user-space header use, so they are provided here. */

#include <endian.h>

#if __BYTE_ORDER == __BIG_ENDIAN
#define swap16(x) \
    ((uint16_t)((((uint16_t)(x) & 0x00ffU) << 8) | (((uint16_t)(x) & 0xff00U) >> 8)))
#define swap32(x) \
    ((uint32_t)((((uint32_t)(x) & 0x000000ffUL) << 24) | \
                (((uint32_t)(x) & 0x0000ff00UL) << 8) | \
                (((uint32_t)(x) & 0x00ff0000UL) >> 8) | \
                (((uint32_t)(x) & 0xff000000UL) >> 24)))
#define swap64(x) \
    ((uint64_t)((((uint64_t)swap32((uint32_t)(x))) << 32) | \
                swap32((uint32_t)((uint64_t)(x) >> 32))))
#define le16_to_cpu(x) swap16(x)
#define le32_to_cpu(x) swap32(x)
#define le64_to_cpu(x) swap64(x)
#define cpu_to_le16(x) swap16(x)
#define cpu_to_le32(x) swap32(x)
#define cpu_to_le64(x) swap64(x)
#else
#define le16_to_cpu(x) (x)
#define le32_to_cpu(x) (x)
#define le64_to_cpu(x) (x)
#define cpu_to_le16(x) (x)
#define cpu_to_le32(x) (x)
#define cpu_to_le64(x) (x)
#endif

#define le16_to_cpup(x) le16_to_cpu(*((const uint16_t *)(const void *)(x)))
#define le32_to_cpup(x) le32_to_cpu(*((const uint32_t *)(const void *)(x)))
#define le64_to_cpup(x) le64_to_cpu(*((const uint64_t *)(const void *)(x)))

/* ---- Process data access --------------------------------------------- */

/** Reads bit POS (0..7) of the byte at DATA. */
#define EC_READ_BIT(DATA, POS) ((*((const uint8_t *)(DATA)) >> (POS)) & 0x01)

/** Sets bit POS (0..7) of the byte at DATA to VAL (0 or not 0). */
#define EC_WRITE_BIT(DATA, POS, VAL) \
    do { \
        if (VAL) \
            *((uint8_t *)(DATA)) |= (uint8_t)(1U << (POS)); \
        else \
            *((uint8_t *)(DATA)) &= (uint8_t)~(1U << (POS)); \
    } while (0)

#define EC_READ_U8(DATA) ((uint8_t) *((const uint8_t *)(DATA)))
#define EC_READ_S8(DATA) ((int8_t) *((const uint8_t *)(DATA)))
#define EC_READ_U16(DATA) ((uint16_t)le16_to_cpup((const void *)(DATA)))
#define EC_READ_S16(DATA) ((int16_t)le16_to_cpup((const void *)(DATA)))
#define EC_READ_U32(DATA) ((uint32_t)le32_to_cpup((const void *)(DATA)))
#define EC_READ_S32(DATA) ((int32_t)le32_to_cpup((const void *)(DATA)))
#define EC_READ_U64(DATA) ((uint64_t)le64_to_cpup((const void *)(DATA)))
#define EC_READ_S64(DATA) ((int64_t)le64_to_cpup((const void *)(DATA)))
#define EC_READ_REAL(DATA) ecrt_read_real(DATA)
#define EC_READ_LREAL(DATA) ecrt_read_lreal(DATA)

#define EC_WRITE_U8(DATA, VAL) \
    do { *((uint8_t *)(DATA)) = ((uint8_t)(VAL)); } while (0)
#define EC_WRITE_S8(DATA, VAL) EC_WRITE_U8(DATA, VAL)
#define EC_WRITE_U16(DATA, VAL) \
    do { *((uint16_t *)(void *)(DATA)) = cpu_to_le16((uint16_t)(VAL)); } while (0)
#define EC_WRITE_S16(DATA, VAL) EC_WRITE_U16(DATA, VAL)
#define EC_WRITE_U32(DATA, VAL) \
    do { *((uint32_t *)(void *)(DATA)) = cpu_to_le32((uint32_t)(VAL)); } while (0)
#define EC_WRITE_S32(DATA, VAL) EC_WRITE_U32(DATA, VAL)
#define EC_WRITE_U64(DATA, VAL) \
    do { *((uint64_t *)(void *)(DATA)) = cpu_to_le64((uint64_t)(VAL)); } while (0)
#define EC_WRITE_S64(DATA, VAL) EC_WRITE_U64(DATA, VAL)
#define EC_WRITE_REAL(DATA, VAL) ecrt_write_real(DATA, VAL)
#define EC_WRITE_LREAL(DATA, VAL) ecrt_write_lreal(DATA, VAL)

#endif /* ECAT_ECRT_H */
