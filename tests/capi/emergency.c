/* sim:servo (one CiA 402 drive): the drive is enabled in CSP with its target position
 * written over SDO far away from where it is; it faults with a following error (0x8611) and
 * sends a CoE emergency, which reaches the slave configuration's emergency ring (read while
 * SDO requests poll its mailbox); then a fault reset and a second fault while the application
 * only cycles (the runtime fetches them through the SM1 bit in the cyclic frames). Ring size,
 * pop, overruns and clear. */
#include "capi_test.h"

#define DRIVE 0x00000eca, 0x00000402

static ec_master_t *m;
static ec_domain_t *d;

static void cycle(void)
{
    cycle_domain(m, d);
}

int main(void)
{
    m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("emergency");
    d = ecrt_master_create_domain(m);
    ec_slave_config_t *sc = ecrt_master_slave_config(m, 0, 0, DRIVE);
    CHECK(sc != NULL);
    if (!sc)
        return finish("emergency");
    int off_cw = ecrt_slave_config_reg_pdo_entry(sc, 0x6040, 0, d, NULL);
    int off_sw = ecrt_slave_config_reg_pdo_entry(sc, 0x6041, 0, d, NULL);
    CHECK(off_cw >= 0 && off_sw >= 0);
    CHECK_EQ(ecrt_slave_config_sdo8(sc, 0x6060, 0, 8), 0);      /* CSP */
    CHECK_EQ(ecrt_slave_config_sdo32(sc, 0x6065, 0, 1000), 0);  /* following error window */
    CHECK_EQ(ecrt_slave_config_sdo16(sc, 0x6066, 0, 10), 0);    /* ... for 10 ms */
    CHECK_EQ(ecrt_slave_config_emerg_size(sc, 2), 0);
    ec_sdo_request_t *target = ecrt_slave_config_create_sdo_request(sc, 0x607a, 0, 4);
    ec_sdo_request_t *poll = ecrt_slave_config_create_sdo_request(sc, 0x603f, 0, 2);
    CHECK(target && poll);
    if (!(target && poll))
        return finish("emergency");
    CHECK_EQ(ecrt_master_activate(m), 0);
    uint8_t *pd = ecrt_domain_data(d);

    int enabled = -1;
    for (int i = 0; i < 5000 && enabled < 0; i++) {
        uint16_t sw = EC_READ_U16(pd + off_sw);
        if ((sw & 0x6f) == 0x27)
            enabled = i;
        EC_WRITE_U16(pd + off_cw, cia402_enable_step(sw));
        cycle();
    }
    printf("drive enabled after %d cycles\n", enabled);
    CHECK(enabled >= 0);

    /* Jump the target far away: a following error fault. */
    EC_WRITE_S32(ecrt_sdo_request_data(target), 50000000);
    CHECK_EQ(ecrt_sdo_request_write(target), 0);
    uint8_t rec[EC_COE_EMERGENCY_MSG_SIZE];
    int got = -1, fault = 0;
    for (int i = 0; i < 5000 && got != 0; i++) {
        cycle();
        ecrt_sdo_request_state(target);
        int st = ecrt_sdo_request_state(poll);
        if (st != EC_REQUEST_BUSY)
            ecrt_sdo_request_read(poll); /* mailbox traffic brings the emergency in */
        got = ecrt_slave_config_emerg_pop(sc, rec);
    }
    for (int i = 0; i < 20; i++) {
        cycle();
        fault |= (EC_READ_U16(pd + off_sw) & 0x08) != 0; /* statusword: fault */
    }
    CHECK(fault);
    CHECK_EQ(got, 0);
    printf("emergency: code 0x%04x register 0x%02x\n", EC_READ_U16(rec), rec[2]);
    CHECK_EQ(EC_READ_U16(rec), 0x8611);
    CHECK_EQ(rec[2], 0x21);
    CHECK_EQ(ecrt_slave_config_emerg_pop(sc, rec), -ENOENT);

    /* Emergencies also come while the application only cycles: the cyclic frames carry the
     * drive's SM1 "mailbox full" bit. Let the requests end, then reset the fault (the drive
     * sends the "error reset" emergency 0x0000) and enable it again (the target is still far
     * away: another following error). */
    for (int i = 0; i < 5000 && (ecrt_sdo_request_state(target) == EC_REQUEST_BUSY ||
                                 ecrt_sdo_request_state(poll) == EC_REQUEST_BUSY); i++)
        cycle();
    uint16_t codes[2] = {0xffff, 0xffff};
    int n = 0, at = -1;
    for (int i = 0; i < 5000 && n < 2; i++) {
        uint16_t sw = EC_READ_U16(pd + off_sw);
        /* Fault reset on a rising edge of bit 7 (again until the fault reaction is over). */
        uint16_t reset = (i & 1) ? 0x80 : 0x00;
        EC_WRITE_U16(pd + off_cw, (sw & 0x08) && n == 0 ? reset : cia402_enable_step(sw));
        cycle();
        if (ecrt_slave_config_emerg_pop(sc, rec) == 0) {
            codes[n++] = EC_READ_U16(rec);
            at = i;
        }
    }
    printf("while only cycling: emergencies 0x%04x, 0x%04x (the last after %d cycles)\n",
           codes[0], codes[1], at);
    CHECK_EQ(codes[0], 0x0000);
    CHECK_EQ(codes[1], 0x8611);
    CHECK_EQ(ecrt_slave_config_emerg_overruns(sc), 0);
    CHECK_EQ(ecrt_slave_config_emerg_clear(sc), 0);
    ecrt_release_master(m);
    return finish("emergency");
}
