/* sim:mbx (ECAT-SERVO-402, EL3102, ECAT-SOE-DRIVE at 2): blocking IDN reads and writes
 * before and after activation, the drive's SoE error for a missing IDN (0x1001, -EIO),
 * startup IDNs in PREOP and SAFEOP read back in OP, and SoE requests while cycling. */
#include "capi_test.h"

#define SOE_DRIVE 0x00000eca, 0x00000403
#define S_0_0001 1              /* control unit cycle time, 2 bytes, writable in PREOP */
#define S_0_0030 30             /* manufacturer version (text) */
#define S_0_0103 103            /* modulo value, 4 bytes */
#define P_0_0150 (0x8000 | 150) /* current limit, 4 bytes */
#define MISSING 9               /* S-0-0009: not on the drive */

static ec_master_t *m;
static ec_domain_t *d;

static void cycle(void)
{
    cycle_domain(m, d);
}

/* Cycle until the request leaves BUSY; returns its state, cycles in *n. */
static ec_request_state_t run(ec_soe_request_t *r, int *n)
{
    ec_request_state_t st = EC_REQUEST_BUSY;
    for (*n = 0; *n < 5000 && st == EC_REQUEST_BUSY; (*n)++) {
        cycle();
        st = ecrt_soe_request_state(r);
    }
    return st;
}

int main(void)
{
    m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("soe");
    uint8_t buf[64];
    size_t rs = 0;
    uint16_t ec = 0x7777;

    /* Before activation: the idle bus in PREOP. */
    CHECK_EQ(ecrt_master_read_idn(m, 2, 0, S_0_0001, buf, sizeof buf, &rs, &ec), 0);
    CHECK_EQ(rs, 2);
    CHECK_EQ(EC_READ_U16(buf), 1000);
    EC_WRITE_U32(buf, 4096);
    CHECK_EQ(ecrt_master_write_idn(m, 2, 0, S_0_0103, buf, 4, &ec), 0);
    CHECK_EQ(ecrt_master_read_idn(m, 2, 0, S_0_0103, buf, sizeof buf, &rs, &ec), 0);
    CHECK_EQ(rs, 4);
    CHECK_EQ(EC_READ_U32(buf), 4096);
    CHECK_EQ(ecrt_master_read_idn(m, 2, 0, MISSING, buf, sizeof buf, &rs, &ec), -EIO);
    printf("missing IDN before activation: error code 0x%04x\n", ec);
    CHECK_EQ(ec, 0x1001);
    CHECK_EQ(ecrt_master_read_idn(m, 2, 0, S_0_0030, buf, 2, &rs, &ec), -EOVERFLOW);

    /* Configuration: startup IDNs in PREOP and SAFEOP, SoE requests. */
    d = ecrt_master_create_domain(m);
    ec_slave_config_t *sc = ecrt_master_slave_config(m, 0, 2, SOE_DRIVE);
    CHECK(d && sc);
    if (!(d && sc))
        return finish("soe");
    int off_sw = ecrt_slave_config_reg_pdo_entry(sc, 0x6041, 0, d, NULL);
    CHECK(off_sw >= 0);
    uint8_t cyc[2], cur[4];
    EC_WRITE_U16(cyc, 2000);
    EC_WRITE_U32(cur, 700);
    CHECK_EQ(ecrt_slave_config_idn(sc, 0, S_0_0001, EC_AL_STATE_PREOP, cyc, 2), 0);
    CHECK_EQ(ecrt_slave_config_idn(sc, 0, P_0_0150, EC_AL_STATE_SAFEOP, cur, 4), 0);
    ec_soe_request_t *req = ecrt_slave_config_create_soe_request(sc, 0, S_0_0103, 4);
    ec_soe_request_t *bad = ecrt_slave_config_create_soe_request(sc, 0, MISSING, 4);
    CHECK(req && bad);
    if (!(req && bad))
        return finish("soe");
    CHECK_EQ(ecrt_soe_request_data_size(req), 4);
    CHECK_EQ(ecrt_soe_request_state(req), EC_REQUEST_UNUSED);
    CHECK_EQ(ecrt_soe_request_timeout(req, 1000), 0);

    CHECK_EQ(ecrt_master_activate(m), 0);
    ec_slave_config_state_t ss = {0};
    int i;
    for (i = 0; i < 10000 && !ss.operational; i++) {
        cycle();
        ecrt_slave_config_state(sc, &ss);
    }
    printf("OP after %d cycles\n", i);
    CHECK(ss.operational);

    /* The startup IDNs were written (read back while cycling, from the cycling thread). */
    CHECK_EQ(ecrt_master_read_idn(m, 2, 0, S_0_0001, buf, sizeof buf, &rs, &ec), 0);
    CHECK_EQ(EC_READ_U16(buf), 2000);
    CHECK_EQ(ecrt_master_read_idn(m, 2, 0, P_0_0150, buf, sizeof buf, &rs, &ec), 0);
    CHECK_EQ(rs, 4);
    CHECK_EQ(EC_READ_U32(buf), 700);
    ec = 0;
    CHECK_EQ(ecrt_master_read_idn(m, 2, 0, MISSING, buf, sizeof buf, &rs, &ec), -EIO);
    CHECK_EQ(ec, 0x1001);
    EC_WRITE_U32(buf, 8192);
    CHECK_EQ(ecrt_master_write_idn(m, 2, 0, S_0_0103, buf, 4, &ec), -EIO);
    CHECK_EQ(ec, 0x7005); /* writable in PREOP only */
    EC_WRITE_U32(buf, 800);
    CHECK_EQ(ecrt_master_write_idn(m, 2, 0, P_0_0150, buf, 4, &ec), 0);

    /* SoE requests while cycling. */
    int n;
    CHECK_EQ(ecrt_soe_request_read(req), 0);
    CHECK_EQ(ecrt_soe_request_read(req), -EBUSY);
    CHECK_EQ(run(req, &n), EC_REQUEST_SUCCESS);
    printf("SoE request read in %d cycles\n", n);
    CHECK_EQ(ecrt_soe_request_data_size(req), 4);
    CHECK_EQ(EC_READ_U32(ecrt_soe_request_data(req)), 4096);
    CHECK_EQ(ecrt_soe_request_idn(req, 0, P_0_0150), 0);
    CHECK_EQ(ecrt_soe_request_read(req), 0);
    CHECK_EQ(run(req, &n), EC_REQUEST_SUCCESS);
    CHECK_EQ(EC_READ_U32(ecrt_soe_request_data(req)), 800);
    EC_WRITE_U32(ecrt_soe_request_data(req), 777);
    CHECK_EQ(ecrt_soe_request_write(req), 0);
    CHECK_EQ(run(req, &n), EC_REQUEST_SUCCESS);
    printf("SoE request write in %d cycles\n", n);
    CHECK_EQ(ecrt_master_read_idn(m, 2, 0, P_0_0150, buf, sizeof buf, &rs, &ec), 0);
    CHECK_EQ(EC_READ_U32(buf), 777);
    CHECK_EQ(ecrt_soe_request_idn(req, 0, S_0_0103), 0);
    CHECK_EQ(ecrt_soe_request_write(req), 0);
    CHECK_EQ(run(req, &n), EC_REQUEST_ERROR); /* write-protected in OP */
    CHECK_EQ(ecrt_soe_request_read(bad), 0);
    CHECK_EQ(run(bad, &n), EC_REQUEST_ERROR);

    /* The process data ran on meanwhile. */
    ec_domain_state_t ds;
    cycle();
    CHECK_EQ(ecrt_domain_state(d, &ds), 0);
    CHECK_EQ(ds.wc_state, EC_WC_COMPLETE);
    ecrt_release_master(m);
    return finish("soe");
}
