/* Seed 000's machine in C: six CiA 402 servo drives in cyclic synchronous position mode
 * (CSP) at 1 kHz with distributed clocks, on ecat's simulated network sim:servo6.
 *
 *   cc main.c $(pkg-config --cflags --libs libethercat) -lm -o servo_csp
 *   ECAT_MASTER0=sim:servo6 ./servo_csp [seconds]
 *
 * Each drive gets its PDO mapping (controlword + target position out, statusword + position
 * actual in) and mode 8 (CSP) as startup SDOs, SYNC0 every 1 ms, and is walked through the
 * CiA 402 state machine (shutdown, switch on, enable operation). Once enabled, every drive
 * follows a smooth back-and-forth position profile; at the end the program prints each
 * drive's position and largest following error. Exit status 0 when all six were enabled. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ecrt.h>

#define DRIVES 6
#define PERIOD_NS 1000000L
#define DRIVE_ID 0x00000eca, 0x00000402

static ec_pdo_entry_info_t rx_entries[] = {{0x6040, 0, 16}, {0x607a, 0, 32}};
static ec_pdo_entry_info_t tx_entries[] = {{0x6041, 0, 16}, {0x6064, 0, 32}};
static ec_pdo_info_t rx_pdos[] = {{0x1600, 2, rx_entries}};
static ec_pdo_info_t tx_pdos[] = {{0x1a00, 2, tx_entries}};
static ec_sync_info_t syncs[] = {
    {2, EC_DIR_OUTPUT, 1, rx_pdos, EC_WD_ENABLE},
    {3, EC_DIR_INPUT, 1, tx_pdos, EC_WD_DEFAULT},
    {0xff, EC_DIR_INVALID, 0, NULL, EC_WD_DEFAULT},
};

static volatile sig_atomic_t stop;
static void on_signal(int s) { (void)s; stop = 1; }

/* Next controlword for a statusword (CiA 402 power state machine). */
static uint16_t next_controlword(uint16_t sw)
{
    if ((sw & 0x4f) == 0x08)        /* fault */
        return 0x80;                /* fault reset */
    if ((sw & 0x4f) == 0x40)        /* switch on disabled */
        return 0x06;                /* shutdown */
    if ((sw & 0x6f) == 0x21)        /* ready to switch on */
        return 0x07;                /* switch on */
    if ((sw & 0x6f) == 0x23)        /* switched on */
        return 0x0f;                /* enable operation */
    return 0x0f;
}

int main(int argc, char **argv)
{
    long seconds = argc > 1 ? atol(argv[1]) : 10;
    ec_master_t *master = ecrt_request_master(0);
    if (!master)
        return 1;
    ec_domain_t *domain = ecrt_master_create_domain(master);
    ec_slave_config_t *sc[DRIVES];
    unsigned int off_cw[DRIVES], off_target[DRIVES], off_sw[DRIVES], off_actual[DRIVES];
    for (int i = 0; i < DRIVES; i++) {
        sc[i] = ecrt_master_slave_config(master, 0, i, DRIVE_ID);
        if (!sc[i] || ecrt_slave_config_pdos(sc[i], EC_END, syncs))
            return 1;
        ecrt_slave_config_sdo8(sc[i], 0x6060, 0, 8); /* modes of operation: CSP */
        ecrt_slave_config_dc(sc[i], 0x0300, PERIOD_NS, 0, 0, 0);
        int o[4] = {
            ecrt_slave_config_reg_pdo_entry(sc[i], 0x6040, 0, domain, NULL),
            ecrt_slave_config_reg_pdo_entry(sc[i], 0x607a, 0, domain, NULL),
            ecrt_slave_config_reg_pdo_entry(sc[i], 0x6041, 0, domain, NULL),
            ecrt_slave_config_reg_pdo_entry(sc[i], 0x6064, 0, domain, NULL),
        };
        for (int k = 0; k < 4; k++)
            if (o[k] < 0)
                return 1;
        off_cw[i] = o[0];
        off_target[i] = o[1];
        off_sw[i] = o[2];
        off_actual[i] = o[3];
    }
    if (ecrt_master_activate(master))
        return 1;
    uint8_t *pd = ecrt_domain_data(domain);
    if (!pd)
        return 1;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    int32_t base[DRIVES] = {0};
    long enabled_at[DRIVES];
    int32_t worst_error[DRIVES] = {0};
    for (int i = 0; i < DRIVES; i++)
        enabled_at[i] = -1;
    struct timespec wake;
    clock_gettime(CLOCK_MONOTONIC, &wake);
    long cycles = 0;
    while (!stop && cycles < seconds * 1000) {
        wake.tv_nsec += PERIOD_NS;
        while (wake.tv_nsec >= 1000000000) {
            wake.tv_nsec -= 1000000000;
            wake.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL);
        cycles++;
        ecrt_master_receive(master);
        ecrt_domain_process(domain);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        ecrt_master_application_time(master, EC_TIMEVAL2NANO(((struct timeval){now.tv_sec, now.tv_nsec / 1000})));

        for (int i = 0; i < DRIVES; i++) {
            uint16_t sw = EC_READ_U16(pd + off_sw[i]);
            int32_t actual = EC_READ_S32(pd + off_actual[i]);
            if ((sw & 0x6f) == 0x27) { /* operation enabled */
                if (enabled_at[i] < 0) {
                    enabled_at[i] = cycles;
                    base[i] = actual;
                    printf("drive %d: operation enabled at cycle %ld, position %d\n", i, cycles, actual);
                }
                double t = (cycles - enabled_at[i]) / 1000.0;
                /* 20000 increments of travel, 4 s period, smooth start. */
                int32_t target = base[i] + (int32_t)(10000.0 * (1.0 - cos(2.0 * M_PI * t / 4.0)));
                int32_t err = target - actual;
                if (t > 0.1 && abs(err) > worst_error[i])
                    worst_error[i] = abs(err);
                EC_WRITE_S32(pd + off_target[i], target);
                EC_WRITE_U16(pd + off_cw[i], 0x0f);
            } else {
                EC_WRITE_S32(pd + off_target[i], actual); /* hold where it is */
                EC_WRITE_U16(pd + off_cw[i], next_controlword(sw));
            }
        }
        ecrt_master_sync_reference_clock(master);
        ecrt_master_sync_slave_clocks(master);
        ecrt_domain_queue(domain);
        ecrt_master_send(master);
    }
    int all = 1;
    for (int i = 0; i < DRIVES; i++) {
        printf("drive %d: position %d, largest following error %d increments\n", i,
               EC_READ_S32(pd + off_actual[i]), worst_error[i]);
        all &= enabled_at[i] >= 0;
    }
    ec_domain_state_t ds;
    ecrt_domain_state(domain, &ds);
    printf("%ld cycles; domain WKC %u (%s)\n", cycles, ds.working_counter,
           ds.wc_state == EC_WC_COMPLETE ? "complete" : "not complete");
    ecrt_release_master(master);
    return all ? 0 : 1;
}
