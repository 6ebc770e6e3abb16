/* Two domains on sim:io, IgH-style: outputs in one (queued every cycle), inputs in the other
 * (processed every 4th cycle), an empty third one. Each domain has its own offsets from 0, its
 * own working counter and state; the EL3102's unregistered sync manager is still configured
 * (the slave reaches OP) though it is in no domain. */
#include "capi_test.h"

#define BECKHOFF 0x00000002
#define EK1100 BECKHOFF, 0x044c2c52
#define EL2008 BECKHOFF, 0x07d83052
#define EL1018 BECKHOFF, 0x03fa3052
#define EL4132 BECKHOFF, 0x10243052
#define EL3102 BECKHOFF, 0x0c1e3052

int main(void)
{
    ec_master_t *m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("domains");
    ec_domain_t *out = ecrt_master_create_domain(m);
    ec_domain_t *in = ecrt_master_create_domain(m);
    ec_domain_t *empty = ecrt_master_create_domain(m);
    CHECK(out && in && empty);
    if (!(out && in && empty))
        return finish("domains");
    ecrt_master_slave_config(m, 0, 0, EK1100);
    ec_slave_config_t *sc_do = ecrt_master_slave_config(m, 0, 1, EL2008);
    ec_slave_config_t *sc_di = ecrt_master_slave_config(m, 0, 2, EL1018);
    ec_slave_config_t *sc_ao = ecrt_master_slave_config(m, 0, 3, EL4132);
    ec_slave_config_t *sc_ai = ecrt_master_slave_config(m, 0, 4, EL3102);
    unsigned int bit;
    CHECK_EQ(ecrt_slave_config_reg_pdo_entry(sc_ao, 0x6411, 2, out, NULL), 2);
    CHECK_EQ(ecrt_slave_config_reg_pdo_entry(sc_do, 0x7070, 1, out, &bit), 4);
    CHECK_EQ(bit, 7);
    CHECK_EQ(ecrt_slave_config_reg_pdo_entry(sc_di, 0x6000, 1, in, &bit), 0);
    CHECK_EQ(bit, 0);
    CHECK_EQ(ecrt_domain_size(out), 5);
    CHECK_EQ(ecrt_domain_size(in), 1);
    CHECK_EQ(ecrt_domain_size(empty), 0);

    CHECK_EQ(ecrt_master_activate(m), 0);
    CHECK(ecrt_domain_data(out) != NULL);
    CHECK(ecrt_domain_data(in) != NULL);
    CHECK(ecrt_domain_data(empty) == NULL);

    ec_domain_state_t so = {0}, si = {0}, se = {0};
    ec_slave_config_state_t ss = {0};
    for (int c = 0; c < 5000; c++) {
        ecrt_master_receive(m);
        ecrt_domain_process(out);
        if (c % 4 == 0)
            ecrt_domain_process(in);
        ecrt_domain_process(empty);
        ecrt_domain_queue(out);
        if (c % 4 == 0)
            ecrt_domain_queue(in);
        ecrt_master_send(m);
        ecrt_domain_state(out, &so);
        ecrt_domain_state(in, &si);
        ecrt_slave_config_state(sc_ai, &ss);
        if (c > 100 && ss.operational && so.wc_state == EC_WC_COMPLETE && si.wc_state == EC_WC_COMPLETE)
            break;
        sleep_ns(200000);
    }
    ecrt_domain_state(empty, &se);
    printf("out: WKC %u state %u; in: WKC %u state %u; EL3102 operational %u\n",
           so.working_counter, so.wc_state, si.working_counter, si.wc_state, ss.operational);
    CHECK_EQ(so.wc_state, EC_WC_COMPLETE);
    CHECK_EQ(so.working_counter, 4); /* two output slaves, LRW: 2 each */
    CHECK_EQ(si.wc_state, EC_WC_COMPLETE);
    CHECK_EQ(si.working_counter, 1);
    CHECK_EQ(se.working_counter, 0);
    CHECK(ss.operational); /* configured, though nothing of it is registered */
    ecrt_release_master(m);
    return finish("domains");
}
