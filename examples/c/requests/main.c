/* SDO requests and register requests while cycling, on ecat's simulated network sim:io.
 *
 *   cc main.c $(pkg-config --cflags --libs libethercat) -o requests
 *   ECAT_MASTER0=sim:io ./requests [seconds]
 *
 * The EL3102 (position 4) has a CoE mailbox: an SDO request reads its identity object's
 * product code (0x1018:02) again and again, and a second one its serial number; a register
 * request reads the EL2008's (position 1) AL status (0x0130) and another the EL3102's DC
 * system time (0x0910). All of them ride in the cyclic frames' acyclic part: the process data
 * keeps its working counter. Exit status 0 when every request kinds succeeded. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ecrt.h>

#define PERIOD_NS 1000000L
#define EL2008 0x00000002, 0x07d83052
#define EL3102 0x00000002, 0x0c1e3052

int main(int argc, char **argv)
{
    long seconds = argc > 1 ? atol(argv[1]) : 5;
    ec_master_t *master = ecrt_request_master(0);
    if (!master)
        return 1;
    ec_domain_t *domain = ecrt_master_create_domain(master);
    ec_slave_config_t *sc_do = ecrt_master_slave_config(master, 0, 1, EL2008);
    ec_slave_config_t *sc_ai = ecrt_master_slave_config(master, 0, 4, EL3102);
    if (!sc_do || !sc_ai)
        return 1;
    unsigned int bit;
    int off_do = ecrt_slave_config_reg_pdo_entry(sc_do, 0x7000, 1, domain, &bit);
    if (off_do < 0 || ecrt_slave_config_reg_pdo_entry(sc_ai, 0x3101, 2, domain, NULL) < 0)
        return 1;

    ec_sdo_request_t *product = ecrt_slave_config_create_sdo_request(sc_ai, 0x1018, 2, 4);
    ec_sdo_request_t *serial = ecrt_slave_config_create_sdo_request(sc_ai, 0x1018, 4, 4);
    ec_reg_request_t *al = ecrt_slave_config_create_reg_request(sc_do, 2);
    ec_reg_request_t *systime = ecrt_slave_config_create_reg_request(sc_ai, 8);
    if (!product || !serial || !al || !systime)
        return 1;
    ecrt_sdo_request_timeout(product, 500);
    ecrt_sdo_request_timeout(serial, 500);

    if (ecrt_master_activate(master))
        return 1;
    uint8_t *pd = ecrt_domain_data(domain);
    if (!pd)
        return 1;

    unsigned sdo_ok = 0, reg_ok = 0, errors = 0, incomplete = 0;
    struct timespec wake;
    clock_gettime(CLOCK_MONOTONIC, &wake);
    for (long c = 1; c <= seconds * 1000; c++) {
        wake.tv_nsec += PERIOD_NS;
        while (wake.tv_nsec >= 1000000000) {
            wake.tv_nsec -= 1000000000;
            wake.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL);
        ecrt_master_receive(master);
        ecrt_domain_process(domain);
        ec_domain_state_t ds;
        ecrt_domain_state(domain, &ds);
        if (c > 500 && ds.wc_state != EC_WC_COMPLETE)
            incomplete++;

        ec_sdo_request_t *sdos[2] = {product, serial};
        for (int i = 0; i < 2; i++) {
            switch (ecrt_sdo_request_state(sdos[i])) {
            case EC_REQUEST_UNUSED:
                ecrt_sdo_request_read(sdos[i]);
                break;
            case EC_REQUEST_SUCCESS:
                if (sdo_ok++ % 200 == 0)
                    printf("SDO 0x1018:%02x = 0x%08x\n", i ? 4 : 2, EC_READ_U32(ecrt_sdo_request_data(sdos[i])));
                ecrt_sdo_request_read(sdos[i]);
                break;
            case EC_REQUEST_ERROR:
                errors++;
                ecrt_sdo_request_read(sdos[i]);
                break;
            default:
                break;
            }
        }
        ec_reg_request_t *regs[2] = {al, systime};
        for (int i = 0; i < 2; i++) {
            switch (ecrt_reg_request_state(regs[i])) {
            case EC_REQUEST_UNUSED:
                break;
            case EC_REQUEST_SUCCESS:
                if (reg_ok++ % 1000 < 2) {
                    if (i == 0)
                        printf("EL2008 AL status 0x%04x\n", EC_READ_U16(ecrt_reg_request_data(al)));
                    else
                        printf("EL3102 system time %llu ns\n", (unsigned long long)EC_READ_U64(ecrt_reg_request_data(systime)));
                }
                break;
            case EC_REQUEST_ERROR:
                errors++;
                break;
            default:
                continue; /* busy */
            }
            if (i == 0)
                ecrt_reg_request_read(al, 0x0130, 2);
            else
                ecrt_reg_request_read(systime, 0x0910, 8);
        }

        EC_WRITE_BIT(pd + off_do, bit, (c / 500) & 1);
        ecrt_domain_queue(domain);
        ecrt_master_send(master);
    }
    printf("%u SDO transfers, %u register transfers, %u errors, %u cycles with incomplete WKC\n",
           sdo_ok, reg_ok, errors, incomplete);
    ecrt_release_master(master);
    return sdo_ok > 0 && reg_ok > 0 && errors == 0 ? 0 : 1;
}
