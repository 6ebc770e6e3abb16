/* sim:dc8: ecrt_slave_config_dc with SYNC1 (AssignActivate 0x0700, SYNC1 cycle 250 us) and
 * ecrt_slave_config_watchdog are written to the SubDevices, not only stored: after OP,
 * register requests read back 0x0981 (activation: cyclic unit + SYNC0 + SYNC1), 0x09A0/0x09A4
 * (SYNC0 and SYNC1 cycle times), 0x0400 (watchdog divider) and 0x0420 (process data
 * watchdog); a configuration with AssignActivate 0x0300 gets SYNC0 only (0x0981 = 0x03). */
#include "capi_test.h"

#define BECKHOFF 0x00000002
#define EL3102 BECKHOFF, 0x0c1e3052
#define EL4132 BECKHOFF, 0x10243052
#define PERIOD_NS 1000000

static void cycle(ec_master_t *m, ec_domain_t *d)
{
    ecrt_master_receive(m);
    ecrt_domain_process(d);
    ecrt_domain_queue(d);
    ecrt_master_send(m);
}

/* Read `size` bytes at `address` through `rr`, cycling; returns 0 on success. */
static int read_reg(ec_master_t *m, ec_domain_t *d, ec_reg_request_t *rr, uint16_t address,
                    size_t size)
{
    if (ecrt_reg_request_read(rr, address, size))
        return -1;
    int st = EC_REQUEST_BUSY;
    for (int i = 0; i < 200 && st == EC_REQUEST_BUSY; i++) {
        sleep_ns(PERIOD_NS);
        cycle(m, d);
        st = ecrt_reg_request_state(rr);
    }
    return st == EC_REQUEST_SUCCESS ? 0 : -1;
}

int main(void)
{
    ec_master_t *m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("sync1_watchdog");
    ec_domain_t *d = ecrt_master_create_domain(m);
    ec_slave_config_t *s1 = ecrt_master_slave_config(m, 0, 1, EL3102);
    ec_slave_config_t *s2 = ecrt_master_slave_config(m, 0, 2, EL4132);
    CHECK(s1 && s2);
    CHECK_EQ(ecrt_slave_config_dc(s1, 0x0700, PERIOD_NS, 0, 250000, 0), 0);
    CHECK_EQ(ecrt_slave_config_dc(s2, 0x0300, PERIOD_NS, 0, 0, 0), 0);
    CHECK_EQ(ecrt_slave_config_watchdog(s2, 4998, 500), 0);
    CHECK(ecrt_slave_config_reg_pdo_entry(s1, 0x3101, 2, d, NULL) >= 0);
    ec_reg_request_t *r1 = ecrt_slave_config_create_reg_request(s1, 8);
    ec_reg_request_t *r2 = ecrt_slave_config_create_reg_request(s2, 8);
    CHECK(r1 && r2);
    CHECK_EQ(ecrt_master_activate(m), 0);
    ec_slave_config_state_t a, b;
    for (int i = 0; i < 5000; i++) {
        sleep_ns(PERIOD_NS);
        cycle(m, d);
        ecrt_slave_config_state(s1, &a);
        ecrt_slave_config_state(s2, &b);
        if (a.operational && b.operational)
            break;
    }
    CHECK(a.operational);
    CHECK(b.operational);
    uint8_t *p1 = ecrt_reg_request_data(r1), *p2 = ecrt_reg_request_data(r2);
    CHECK_EQ(read_reg(m, d, r1, 0x0981, 1), 0);
    CHECK_EQ(EC_READ_U8(p1), 0x07);
    CHECK_EQ(read_reg(m, d, r1, 0x09A0, 8), 0);
    CHECK_EQ(EC_READ_U32(p1), PERIOD_NS);
    CHECK_EQ(EC_READ_U32(p1 + 4), 250000);
    CHECK_EQ(read_reg(m, d, r2, 0x0981, 1), 0);
    CHECK_EQ(EC_READ_U8(p2), 0x03);
    CHECK_EQ(read_reg(m, d, r2, 0x0400, 2), 0);
    CHECK_EQ(EC_READ_U16(p2), 4998);
    CHECK_EQ(read_reg(m, d, r2, 0x0420, 2), 0);
    CHECK_EQ(EC_READ_U16(p2), 500);
    printf("slave 1: 0x0981 = 0x07, SYNC1 cycle %u ns; slave 2: watchdog divider %u, PD watchdog %u\n",
           EC_READ_U32(p1 + 4), 4998, 500);
    ecrt_release_master(m);
    return finish("sync1_watchdog");
}
