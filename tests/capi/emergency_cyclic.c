/* sim:servo (one CiA 402 drive): an emergency reaches the slave configuration's ring while
 * the application only cycles, with no mailbox traffic of its own (the cyclic frames carry
 * the drive's SM1 "mailbox full" bit and the runtime fetches the message). The CSP target is
 * set far away by a startup SDO, so enabling the drive over the process data makes it fault
 * with a following error (0x8611). */
#include "capi_test.h"

#define DRIVE 0x00000eca, 0x00000402

static ec_master_t *m;
static ec_domain_t *d;

static void cycle(void)
{
    ecrt_master_receive(m);
    ecrt_domain_process(d);
    ecrt_domain_queue(d);
    ecrt_master_send(m);
    sleep_ns(200000);
}

static uint16_t next_controlword(uint16_t sw)
{
    if ((sw & 0x4f) == 0x40)
        return 0x06;
    if ((sw & 0x6f) == 0x21)
        return 0x07;
    return 0x0f;
}

int main(void)
{
    m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("emergency_cyclic");
    d = ecrt_master_create_domain(m);
    ec_slave_config_t *sc = ecrt_master_slave_config(m, 0, 0, DRIVE);
    CHECK(sc != NULL);
    if (!sc)
        return finish("emergency_cyclic");
    int off_cw = ecrt_slave_config_reg_pdo_entry(sc, 0x6040, 0, d, NULL);
    int off_sw = ecrt_slave_config_reg_pdo_entry(sc, 0x6041, 0, d, NULL);
    CHECK(off_cw >= 0 && off_sw >= 0);
    CHECK_EQ(ecrt_slave_config_sdo8(sc, 0x6060, 0, 8), 0);           /* CSP */
    CHECK_EQ(ecrt_slave_config_sdo32(sc, 0x6065, 0, 1000), 0);       /* following error window */
    CHECK_EQ(ecrt_slave_config_sdo16(sc, 0x6066, 0, 10), 0);         /* ... for 10 ms */
    CHECK_EQ(ecrt_slave_config_sdo32(sc, 0x607a, 0, 50000000), 0);   /* target far away */
    CHECK_EQ(ecrt_slave_config_emerg_size(sc, 4), 0);
    CHECK_EQ(ecrt_master_activate(m), 0);
    uint8_t *pd = ecrt_domain_data(d);

    uint8_t rec[EC_COE_EMERGENCY_MSG_SIZE];
    int got = -1, at = -1, fault = 0;
    for (int i = 0; i < 5000 && got != 0; i++) {
        uint16_t sw = EC_READ_U16(pd + off_sw);
        fault |= (sw & 0x08) != 0; /* statusword: fault */
        EC_WRITE_U16(pd + off_cw, fault ? 0x00 : next_controlword(sw));
        cycle();
        got = ecrt_slave_config_emerg_pop(sc, rec);
        at = i;
    }
    printf("emergency after %d cycles (fault seen before: %d)\n", at, fault);
    CHECK_EQ(got, 0);
    CHECK_EQ(EC_READ_U16(rec), 0x8611);
    CHECK_EQ(rec[2], 0x21);
    CHECK_EQ(ecrt_slave_config_emerg_pop(sc, rec), -ENOENT);
    CHECK_EQ(ecrt_slave_config_emerg_overruns(sc), 0);
    ec_domain_state_t ds;
    CHECK_EQ(ecrt_domain_state(d, &ds), 0);
    CHECK_EQ(ds.wc_state, EC_WC_COMPLETE);
    ecrt_release_master(m);
    return finish("emergency_cyclic");
}
