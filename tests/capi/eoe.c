/* sim:mbx (ECAT-SERVO-402, EL3102, ECAT-SOE-DRIVE with EoE at 2): EoE parameters set on the
 * drive's configuration go out as one set-IP-parameter request in PREOP and the drive reaches
 * OP; the same on the EL3102 (no EoE) is reported once at configuration and the EL3102 goes on
 * to OP without it (IgH); a startup SDO the servo refuses keeps the servo out of OP and is
 * logged once, not at each retry (the runner counts the lines); bad input gets -EINVAL and
 * one log line. (What the drive received is checked in Rust: crates/ecat-capi/tests/eoe.rs.) */
#include "capi_test.h"
#include <arpa/inet.h>

#define SOE_DRIVE 0x00000eca, 0x00000403
#define EL3102 0x00000002, 0x0c1e3052
#define SERVO 0x00000eca, 0x00000402

static struct in_addr addr(const char *s)
{
    struct in_addr a = {0};
    inet_pton(AF_INET, s, &a);
    return a;
}

int main(void)
{
    ec_master_t *m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("eoe");
    ec_domain_t *d = ecrt_master_create_domain(m);
    ec_slave_config_t *sc = ecrt_master_slave_config(m, 0, 2, SOE_DRIVE);
    ec_slave_config_t *ai = ecrt_master_slave_config(m, 0, 1, EL3102);
    ec_slave_config_t *servo = ecrt_master_slave_config(m, 0, 0, SERVO);
    CHECK(d && sc && ai && servo);
    if (!(d && sc && ai && servo))
        return finish("eoe");
    /* An object the servo does not have: every configuration of it fails there. */
    CHECK_EQ(ecrt_slave_config_sdo8(servo, 0x2fff, 0, 1), 0);
    CHECK(ecrt_slave_config_reg_pdo_entry(sc, 0x6041, 0, d, NULL) >= 0);

    const unsigned char mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x42};
    CHECK_EQ(ecrt_slave_config_eoe_mac_address(sc, mac), 0);
    CHECK_EQ(ecrt_slave_config_eoe_ip_address(sc, addr("192.168.77.2")), 0);
    CHECK_EQ(ecrt_slave_config_eoe_subnet_mask(sc, addr("255.255.255.0")), 0);
    CHECK_EQ(ecrt_slave_config_eoe_default_gateway(sc, addr("192.168.77.1")), 0);
    CHECK_EQ(ecrt_slave_config_eoe_dns_address(sc, addr("192.168.77.53")), 0);
    CHECK_EQ(ecrt_slave_config_eoe_hostname(sc, "drive-2"), 0);
    /* A slave without EoE: accepted now, reported at configuration (IgH). */
    CHECK_EQ(ecrt_slave_config_eoe_ip_address(ai, addr("192.168.77.3")), 0);

    MARK("1 eoe NULL sc");
    CHECK_EQ(ecrt_slave_config_eoe_ip_address(NULL, addr("1.2.3.4")), -EINVAL);
    MARK("1 eoe NULL mac");
    CHECK_EQ(ecrt_slave_config_eoe_mac_address(sc, NULL), -EINVAL);
    MARK("1 eoe hostname too long");
    CHECK_EQ(ecrt_slave_config_eoe_hostname(sc, "a-host-name-of-32-characters-xyz"), -EINVAL);
    MARK("1 eoe NULL hostname");
    CHECK_EQ(ecrt_slave_config_eoe_hostname(sc, NULL), -EINVAL);
    MARK("0 eoe hostname of 31 characters");
    CHECK_EQ(ecrt_slave_config_eoe_hostname(sc, "a-host-name-of-31-characters-xy"), 0);
    CHECK_EQ(ecrt_slave_config_eoe_hostname(sc, "drive-2"), 0);

    MARK("activate");
    CHECK_EQ(ecrt_master_activate(m), 0);
    ec_slave_config_state_t ss = {0}, as = {0}, vs = {0};
    int i;
    for (i = 0; i < 10000 && !(ss.operational && as.operational); i++) {
        cycle_domain(m, d);
        ecrt_slave_config_state(sc, &ss);
        ecrt_slave_config_state(ai, &as);
    }
    printf("drive and EL3102 in OP after %d cycles\n", i);
    CHECK(ss.operational);
    CHECK_EQ(ss.al_state, EC_AL_STATE_OP);
    CHECK(as.online);
    CHECK(as.operational);
    /* 3.5 s more: the servo is configured again about every second and fails each time. */
    uint64_t until = now_ns() + 3500000000ULL;
    while (now_ns() < until)
        cycle_domain(m, d);
    ecrt_slave_config_state(servo, &vs);
    CHECK(vs.online);
    CHECK(!vs.operational);
    ec_domain_state_t ds;
    cycle_domain(m, d);
    CHECK_EQ(ecrt_domain_state(d, &ds), 0);
    CHECK_EQ(ds.wc_state, EC_WC_COMPLETE);

    MARK("1 eoe after activation");
    CHECK_EQ(ecrt_slave_config_eoe_dns_address(sc, addr("1.1.1.1")), -EPERM);
    MARK("release");
    ecrt_release_master(m);
    return finish("eoe");
}
