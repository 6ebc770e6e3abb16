/* 1 kHz digital and analog I/O in the classic shape of IgH's user-space example, on the
 * terminals of ecat's simulated network sim:io: EK1100 coupler (0), EL2008 8 digital outputs
 * (1), EL1018 8 digital inputs (2), EL4132 2 analog outputs (3), EL3102 2 analog inputs (4).
 *
 *   cc main.c $(pkg-config --cflags --libs libethercat) -o io
 *   ECAT_MASTER0=sim:io ./io [seconds]      (ECAT_MASTER0=eth0 for real terminals)
 *
 * Once a second it prints changes of the master, domain and slave configuration states, the
 * analog inputs, and moves a running light over the digital outputs. Exit status 0 when the
 * domain's working counter was complete. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <time.h>
#include <ecrt.h>

#define FREQUENCY 1000
#define PERIOD_NS (1000000000L / FREQUENCY)

#define BECKHOFF 0x00000002
#define EK1100 BECKHOFF, 0x044c2c52
#define EL2008 BECKHOFF, 0x07d83052
#define EL1018 BECKHOFF, 0x03fa3052
#define EL4132 BECKHOFF, 0x10243052
#define EL3102 BECKHOFF, 0x0c1e3052

static ec_master_t *master;
static ec_master_state_t master_state;
static ec_domain_t *domain;
static ec_domain_state_t domain_state;
static ec_slave_config_t *sc_ana_in;
static ec_slave_config_state_t sc_ana_in_state;
static uint8_t *pd;
static volatile sig_atomic_t stop;

static unsigned int off_dig_out, off_dig_in, off_ana_out, off_ana_in_status, off_ana_in_value;

static const ec_pdo_entry_reg_t domain_regs[] = {
    {0, 1, EL2008, 0x7000, 1, &off_dig_out, NULL},
    {0, 2, EL1018, 0x6000, 1, &off_dig_in, NULL},
    {0, 3, EL4132, 0x6411, 1, &off_ana_out, NULL},
    {0, 4, EL3102, 0x3101, 1, &off_ana_in_status, NULL},
    {0, 4, EL3102, 0x3101, 2, &off_ana_in_value, NULL},
    {0}
};

/* EL3102: two TxPDOs on SM3, each status (8 bit) and value (16 bit). */
static ec_pdo_entry_info_t el3102_pdo_entries[] = {
    {0x3101, 1, 8}, {0x3101, 2, 16}, {0x3102, 1, 8}, {0x3102, 2, 16},
};
static ec_pdo_info_t el3102_pdos[] = {
    {0x1a00, 2, el3102_pdo_entries}, {0x1a01, 2, el3102_pdo_entries + 2},
};
static ec_sync_info_t el3102_syncs[] = {
    {2, EC_DIR_OUTPUT, 0, NULL, EC_WD_DEFAULT},
    {3, EC_DIR_INPUT, 2, el3102_pdos, EC_WD_DEFAULT},
    {0xff, EC_DIR_INVALID, 0, NULL, EC_WD_DEFAULT}
};

static void check_domain_state(void)
{
    ec_domain_state_t ds;
    ecrt_domain_state(domain, &ds);
    if (ds.working_counter != domain_state.working_counter)
        printf("Domain: WC %u.\n", ds.working_counter);
    if (ds.wc_state != domain_state.wc_state)
        printf("Domain: State %u.\n", ds.wc_state);
    domain_state = ds;
}

static void check_master_state(void)
{
    ec_master_state_t ms;
    ecrt_master_state(master, &ms);
    if (ms.slaves_responding != master_state.slaves_responding)
        printf("%u slave(s).\n", ms.slaves_responding);
    if (ms.al_states != master_state.al_states)
        printf("AL states: 0x%02X.\n", ms.al_states);
    if (ms.link_up != master_state.link_up)
        printf("Link is %s.\n", ms.link_up ? "up" : "down");
    master_state = ms;
}

static void check_slave_config_states(void)
{
    ec_slave_config_state_t s;
    ecrt_slave_config_state(sc_ana_in, &s);
    if (s.al_state != sc_ana_in_state.al_state)
        printf("AnaIn: State 0x%02X.\n", s.al_state);
    if (s.online != sc_ana_in_state.online)
        printf("AnaIn: %s.\n", s.online ? "online" : "offline");
    if (s.operational != sc_ana_in_state.operational)
        printf("AnaIn: %soperational.\n", s.operational ? "" : "Not ");
    sc_ana_in_state = s;
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    long seconds = argc > 1 ? atol(argv[1]) : 0;
    int complete_seen = 0;

    master = ecrt_request_master(0);
    if (!master)
        return 1;
    domain = ecrt_master_create_domain(master);
    if (!domain)
        return 1;

    if (!ecrt_master_slave_config(master, 0, 0, EK1100))
        return 1;
    sc_ana_in = ecrt_master_slave_config(master, 0, 4, EL3102);
    if (!sc_ana_in) {
        fprintf(stderr, "Failed to get slave configuration.\n");
        return 1;
    }
    if (ecrt_slave_config_pdos(sc_ana_in, EC_END, el3102_syncs)) {
        fprintf(stderr, "Failed to configure PDOs.\n");
        return 1;
    }
    if (ecrt_domain_reg_pdo_entry_list(domain, domain_regs)) {
        fprintf(stderr, "PDO entry registration failed!\n");
        return 1;
    }

    printf("Activating master...\n");
    if (ecrt_master_activate(master))
        return 1;
    if (!(pd = ecrt_domain_data(domain)))
        return 1;

    if (mlockall(MCL_CURRENT | MCL_FUTURE) == -1)
        printf("mlockall failed (%s); running without locked memory.\n", strerror(errno));
    struct sched_param param = {.sched_priority = 80};
    if (sched_setscheduler(0, SCHED_FIFO, &param) == -1)
        printf("No SCHED_FIFO (%s); running with normal priority.\n", strerror(errno));
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    struct timespec wakeup;
    clock_gettime(CLOCK_MONOTONIC, &wakeup);
    unsigned int counter = 0, blink = 0;
    long cycles = 0;
    printf("Started.\n");
    while (!stop && (seconds == 0 || cycles < seconds * FREQUENCY)) {
        wakeup.tv_nsec += PERIOD_NS;
        while (wakeup.tv_nsec >= 1000000000) {
            wakeup.tv_nsec -= 1000000000;
            wakeup.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wakeup, NULL);
        cycles++;

        ecrt_master_receive(master);
        ecrt_domain_process(domain);
        check_domain_state();
        if (domain_state.wc_state == EC_WC_COMPLETE)
            complete_seen = 1;

        if (++counter >= FREQUENCY) {
            counter = 0;
            check_master_state();
            check_slave_config_states();
            blink = (blink + 1) % 8;
            printf("AnaIn: status 0x%02x value %d; DigIn 0x%02x\n",
                   EC_READ_U8(pd + off_ana_in_status), EC_READ_S16(pd + off_ana_in_value),
                   EC_READ_U8(pd + off_dig_in));
        }
        EC_WRITE_U8(pd + off_dig_out, 1u << blink);
        EC_WRITE_S16(pd + off_ana_out, (int16_t)(counter * 32));

        ecrt_domain_queue(domain);
        ecrt_master_send(master);
    }
    printf("Stopped after %ld cycles.\n", cycles);
    ecrt_release_master(master);
    return complete_seen ? 0 : 1;
}
