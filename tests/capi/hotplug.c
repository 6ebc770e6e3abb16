/* Alias addressing and a slave that disappears and returns (tests/capi/hotplug.toml): the
 * EL2008 has alias 7, so 7:0 is the EL2008 and 7:1 the EL1018 behind it. The EL3102 is
 * unplugged while the application cycles: its configuration goes offline, the domain reports
 * incomplete, the master counts one slave less; when it returns (power-cycled) it is
 * configured again and operational, and the domain is complete again. */
#include "capi_test.h"

#define BECKHOFF 0x00000002
#define EL2008 BECKHOFF, 0x07d83052
#define EL1018 BECKHOFF, 0x03fa3052
#define EL3102 BECKHOFF, 0x0c1e3052

int main(void)
{
    ec_master_t *m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("hotplug");
    ec_slave_info_t si;
    CHECK_EQ(ecrt_master_get_slave(m, 1, &si), 0);
    CHECK_EQ(si.alias, 7);
    ec_domain_t *d = ecrt_master_create_domain(m);
    ec_slave_config_t *sc_do = ecrt_master_slave_config(m, 7, 0, EL2008);
    ec_slave_config_t *sc_di = ecrt_master_slave_config(m, 7, 1, EL1018);
    ec_slave_config_t *sc_ai = ecrt_master_slave_config(m, 0, 3, EL3102);
    CHECK(sc_do && sc_di && sc_ai);
    if (!(sc_do && sc_di && sc_ai))
        return finish("hotplug");
    /* 7:1 really is the EL1018: its input entry exists. */
    unsigned int bit;
    CHECK(ecrt_slave_config_reg_pdo_entry(sc_do, 0x7000, 1, d, &bit) >= 0);
    CHECK(ecrt_slave_config_reg_pdo_entry(sc_di, 0x6000, 1, d, &bit) >= 0);
    CHECK(ecrt_slave_config_reg_pdo_entry(sc_ai, 0x3101, 2, d, NULL) >= 0);
    CHECK_EQ(ecrt_master_activate(m), 0);

    int phase = 0; /* 0: to OP, 1: waiting for the loss, 2: waiting for the return, 3: done */
    int lost_seen_responding = -1;
    ec_slave_config_state_t ss;
    ec_domain_state_t ds;
    ec_master_state_t ms;
    uint64_t t0 = now_ns();
    while (phase < 3 && now_ns() - t0 < 8000000000ULL) {
        ecrt_master_receive(m);
        ecrt_domain_process(d);
        ecrt_domain_queue(d);
        ecrt_master_send(m);
        sleep_ns(1000000);
        ecrt_slave_config_state(sc_ai, &ss);
        ecrt_domain_state(d, &ds);
        ecrt_master_state(m, &ms);
        switch (phase) {
        case 0:
            if (ss.operational && ds.wc_state == EC_WC_COMPLETE) {
                printf("OP and complete at %.0f ms\n", (now_ns() - t0) / 1e6);
                phase = 1;
            }
            break;
        case 1:
            if (!ss.online) {
                lost_seen_responding = ms.slaves_responding;
                printf("EL3102 offline at %.0f ms: domain %s, %u slaves responding\n",
                       (now_ns() - t0) / 1e6,
                       ds.wc_state == EC_WC_INCOMPLETE ? "incomplete" : "not incomplete",
                       ms.slaves_responding);
                CHECK_EQ(ds.wc_state, EC_WC_INCOMPLETE);
                phase = 2;
            }
            break;
        case 2:
            if (ss.online && ss.operational && ds.wc_state == EC_WC_COMPLETE) {
                printf("EL3102 back and operational at %.0f ms, %u slaves responding\n",
                       (now_ns() - t0) / 1e6, ms.slaves_responding);
                CHECK_EQ(ms.slaves_responding, 4);
                phase = 3;
            }
            break;
        }
    }
    CHECK_EQ(phase, 3);
    CHECK_EQ(lost_seen_responding, 3);
    ecrt_slave_config_state(sc_do, &ss);
    printf("EL2008: online %u operational %u al_state 0x%x\n", ss.online, ss.operational, ss.al_state);
    ecrt_master_get_slave(m, 1, &si);
    printf("EL2008 slave info: al_state 0x%x error_flag %u\n", si.al_state, si.error_flag);
    CHECK(ss.operational);
    ecrt_release_master(m);
    return finish("hotplug");
}
