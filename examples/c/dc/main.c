/* Distributed clocks in IgH's shape on ecat's simulated network sim:dc8: EK1100, EL3102,
 * EL4132, EL3102, EL4132, EK1122 and two CiA 402 drives behind the EK1122's second port.
 *
 *   cc main.c $(pkg-config --cflags --libs libethercat) -o dc
 *   ECAT_MASTER0=sim:dc8 ./dc [seconds]
 *
 * Every DC slave gets SYNC0 every 1 ms (ecrt_slave_config_dc); every cycle the application
 * gives its time, syncs the reference and slave clocks and reads the sync monitor; once a
 * second it prints the reference clock's time and the largest system time difference.
 * Exit status 0 when, in the last second, the clocks were within 1 us of each other in at
 * least 90 % of the cycles (a cycle that wakes late on a loaded host delays the FRMW too). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ecrt.h>

#define PERIOD_NS 1000000L
#define BECKHOFF 0x00000002

struct slave { uint16_t position; uint32_t vendor, product; int dc; };
static const struct slave bus[] = {
    {0, BECKHOFF, 0x044c2c52, 0}, /* EK1100 */
    {1, BECKHOFF, 0x0c1e3052, 1}, /* EL3102 */
    {2, BECKHOFF, 0x10243052, 1}, /* EL4132 */
    {3, BECKHOFF, 0x0c1e3052, 1}, /* EL3102 */
    {4, BECKHOFF, 0x10243052, 1}, /* EL4132 */
    {5, BECKHOFF, 0x04622c52, 0}, /* EK1122 */
    {6, 0x00000eca, 0x00000402, 1}, /* drive */
    {7, 0x00000eca, 0x00000402, 1}, /* drive */
};

static uint64_t app_time_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return EC_TIMEVAL2NANO(((struct timeval){t.tv_sec, t.tv_nsec / 1000}));
}

int main(int argc, char **argv)
{
    long seconds = argc > 1 ? atol(argv[1]) : 10;
    ec_master_t *master = ecrt_request_master(0);
    if (!master)
        return 1;
    ec_domain_t *domain = ecrt_master_create_domain(master);
    unsigned int off_in[2];
    for (unsigned i = 0; i < sizeof bus / sizeof bus[0]; i++) {
        ec_slave_config_t *sc = ecrt_master_slave_config(master, 0, bus[i].position, bus[i].vendor, bus[i].product);
        if (!sc)
            return 1;
        if (bus[i].dc)
            ecrt_slave_config_dc(sc, 0x0300, PERIOD_NS, 4400000 % PERIOD_NS, 0, 0);
        if (bus[i].position == 1 || bus[i].position == 3) {
            int o = ecrt_slave_config_reg_pdo_entry(sc, 0x3101, 2, domain, NULL);
            if (o < 0)
                return 1;
            off_in[bus[i].position / 2] = o;
        }
    }
    ecrt_master_application_time(master, app_time_ns());
    if (ecrt_master_activate(master))
        return 1;
    uint8_t *pd = ecrt_domain_data(domain);
    if (!pd)
        return 1;

    struct timespec wake;
    clock_gettime(CLOCK_MONOTONIC, &wake);
    uint32_t worst = 0;
    int within = 0, within_last_second = 0;
    for (long c = 1; c <= seconds * 1000; c++) {
        wake.tv_nsec += PERIOD_NS;
        while (wake.tv_nsec >= 1000000000) {
            wake.tv_nsec -= 1000000000;
            wake.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL);
        ecrt_master_receive(master);
        ecrt_domain_process(domain);
        uint32_t diff = ecrt_master_sync_monitor_process(master);
        if (diff != 0xffffffff && diff > worst)
            worst = diff;
        if (diff < 1000)
            within++;
        if (c % 1000 == 0) {
            uint32_t ref = 0;
            ecrt_master_reference_clock_time(master, &ref);
            ec_domain_state_t ds;
            ecrt_domain_state(domain, &ds);
            printf("t=%lds reference clock %u ns (low 32 bits), max |system time difference| %u ns, "
                   "WKC %u, EL3102 inputs %d %d\n", c / 1000, ref, worst, ds.working_counter,
                   EC_READ_S16(pd + off_in[0]), EC_READ_S16(pd + off_in[1]));
            within_last_second = within;
            within = 0;
            worst = 0;
        }
        ecrt_master_application_time(master, app_time_ns());
        ecrt_master_sync_reference_clock(master);
        ecrt_master_sync_slave_clocks(master);
        ecrt_master_sync_monitor_queue(master);
        ecrt_domain_queue(domain);
        ecrt_master_send(master);
    }
    ecrt_release_master(master);
    return within_last_second >= 900 ? 0 : 1;
}
