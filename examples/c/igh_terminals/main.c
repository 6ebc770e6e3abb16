/* IgH's own user-space example, in its shape and on its terminals: EK1100 coupler (0), a
 * digital input terminal (1), EL2032 digital outputs (2), EL3102 analog inputs (3) and
 * EL4102 analog outputs (4), with explicit PDO tables for each, SCHED_FIFO, locked memory and
 * a 1 ms clock_nanosleep loop that prints state changes once a second. The simulated network
 * testdata/networks/igh-example.toml has these terminals (SII images built from Beckhoff's
 * ESI):
 *
 *   cc main.c $(pkg-config --cflags --libs libethercat) -o igh_terminals
 *   ECAT_MASTER0=sim:testdata/networks/igh-example.toml ./igh_terminals [seconds]
 *
 * Exit status 0 when the domain's working counter was complete. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <ecrt.h>

#define FREQUENCY 1000
#define PERIOD_NS (1000000000L / FREQUENCY)

#define BusCouplerPos 0, 0
#define DigInPos 0, 1
#define DigOutSlavePos 0, 2
#define AnaInSlavePos 0, 3
#define AnaOutSlavePos 0, 4

#define Beckhoff_EK1100 0x00000002, 0x044c2c52
#define Beckhoff_EL1004 0x00000002, 0x03ec3052
#define Beckhoff_EL2032 0x00000002, 0x07f03052
#define Beckhoff_EL3102 0x00000002, 0x0c1e3052
#define Beckhoff_EL4102 0x00000002, 0x10063052

static ec_master_t *master;
static ec_master_state_t master_state;
static ec_domain_t *domain1;
static ec_domain_state_t domain1_state;
static ec_slave_config_t *sc_ana_in;
static ec_slave_config_state_t sc_ana_in_state;
static uint8_t *domain1_pd;
static volatile sig_atomic_t stop;

static unsigned int off_dig_in, bp_dig_in, off_dig_out, bp_dig_out;
static unsigned int off_ana_in_status, off_ana_in_value, off_ana_out;

static const ec_pdo_entry_reg_t domain1_regs[] = {
    {DigInPos, Beckhoff_EL1004, 0x6000, 1, &off_dig_in, &bp_dig_in},
    {AnaInSlavePos, Beckhoff_EL3102, 0x3101, 1, &off_ana_in_status, NULL},
    {AnaInSlavePos, Beckhoff_EL3102, 0x3101, 2, &off_ana_in_value, NULL},
    {AnaOutSlavePos, Beckhoff_EL4102, 0x6411, 1, &off_ana_out, NULL},
    {DigOutSlavePos, Beckhoff_EL2032, 0x7000, 1, &off_dig_out, &bp_dig_out},
    {0}
};

/* Analog in: two channels, status and value each. */
static ec_pdo_entry_info_t el3102_pdo_entries[] = {
    {0x3101, 1, 8}, {0x3101, 2, 16}, {0x3102, 1, 8}, {0x3102, 2, 16},
};
static ec_pdo_info_t el3102_pdos[] = {
    {0x1a00, 2, el3102_pdo_entries}, {0x1a01, 2, el3102_pdo_entries + 2},
};
static ec_sync_info_t el3102_syncs[] = {
    {2, EC_DIR_OUTPUT, 0, NULL, EC_WD_DEFAULT},
    {3, EC_DIR_INPUT, 2, el3102_pdos, EC_WD_DEFAULT},
    {0xff, EC_DIR_INVALID, 0, NULL, EC_WD_DEFAULT},
};

/* Analog out: two channels. */
static ec_pdo_entry_info_t el4102_pdo_entries[] = {{0x6411, 1, 16}, {0x6411, 2, 16}};
static ec_pdo_info_t el4102_pdos[] = {
    {0x1600, 1, el4102_pdo_entries}, {0x1601, 1, el4102_pdo_entries + 1},
};
static ec_sync_info_t el4102_syncs[] = {
    {2, EC_DIR_OUTPUT, 2, el4102_pdos, EC_WD_DEFAULT},
    {3, EC_DIR_INPUT, 0, NULL, EC_WD_DEFAULT},
    {0xff, EC_DIR_INVALID, 0, NULL, EC_WD_DEFAULT},
};

/* Digital out: one bit per channel, and the diagnostic inputs. */
static ec_pdo_entry_info_t el2032_pdo_entries[] = {
    {0x7000, 1, 1}, {0x7010, 1, 1}, {0x6000, 1, 1}, {0x6010, 1, 1},
};
static ec_pdo_info_t el2032_pdos[] = {
    {0x1600, 1, el2032_pdo_entries}, {0x1601, 1, el2032_pdo_entries + 1},
    {0x1a00, 1, el2032_pdo_entries + 2}, {0x1a01, 1, el2032_pdo_entries + 3},
};
static ec_sync_info_t el2032_syncs[] = {
    {0, EC_DIR_OUTPUT, 2, el2032_pdos, EC_WD_DEFAULT},
    {1, EC_DIR_INPUT, 2, el2032_pdos + 2, EC_WD_DEFAULT},
    {0xff, EC_DIR_INVALID, 0, NULL, EC_WD_DEFAULT},
};

static void check_domain1_state(void)
{
    ec_domain_state_t ds;
    ecrt_domain_state(domain1, &ds);
    if (ds.working_counter != domain1_state.working_counter)
        printf("Domain1: WC %u.\n", ds.working_counter);
    if (ds.wc_state != domain1_state.wc_state)
        printf("Domain1: State %u.\n", ds.wc_state);
    domain1_state = ds;
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
    int complete = 0;
    ec_slave_config_t *sc;

    master = ecrt_request_master(0);
    if (!master)
        return -1;
    domain1 = ecrt_master_create_domain(master);
    if (!domain1)
        return -1;

    if (!(sc_ana_in = ecrt_master_slave_config(master, AnaInSlavePos, Beckhoff_EL3102))) {
        fprintf(stderr, "Failed to get slave configuration.\n");
        return -1;
    }
    printf("Configuring PDOs...\n");
    if (ecrt_slave_config_pdos(sc_ana_in, EC_END, el3102_syncs)) {
        fprintf(stderr, "Failed to configure PDOs.\n");
        return -1;
    }
    if (!(sc = ecrt_master_slave_config(master, AnaOutSlavePos, Beckhoff_EL4102)))
        return -1;
    if (ecrt_slave_config_pdos(sc, EC_END, el4102_syncs))
        return -1;
    if (!(sc = ecrt_master_slave_config(master, DigOutSlavePos, Beckhoff_EL2032)))
        return -1;
    if (ecrt_slave_config_pdos(sc, EC_END, el2032_syncs))
        return -1;
    /* Create configuration for bus coupler. */
    if (!ecrt_master_slave_config(master, BusCouplerPos, Beckhoff_EK1100))
        return -1;
    if (ecrt_domain_reg_pdo_entry_list(domain1, domain1_regs)) {
        fprintf(stderr, "PDO entry registration failed!\n");
        return -1;
    }

    printf("Activating master...\n");
    if (ecrt_master_activate(master))
        return -1;
    if (!(domain1_pd = ecrt_domain_data(domain1)))
        return -1;

    if (mlockall(MCL_CURRENT | MCL_FUTURE) == -1)
        printf("mlockall failed: %s\n", strerror(errno));
    struct sched_param param = {.sched_priority = 80};
    if (sched_setscheduler(0, SCHED_FIFO, &param) == -1)
        printf("Warning: no SCHED_FIFO: %s\n", strerror(errno));
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    printf("Starting RT task with dt=%ld ns.\n", PERIOD_NS);
    struct timespec wakeup_time;
    clock_gettime(CLOCK_MONOTONIC, &wakeup_time);
    unsigned int counter = 0, blink = 0;
    long cycles = 0;
    while (!stop && (seconds == 0 || cycles < seconds * FREQUENCY)) {
        wakeup_time.tv_nsec += PERIOD_NS;
        while (wakeup_time.tv_nsec >= 1000000000) {
            wakeup_time.tv_nsec -= 1000000000;
            wakeup_time.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wakeup_time, NULL);
        cycles++;

        ecrt_master_receive(master);
        ecrt_domain_process(domain1);
        check_domain1_state();
        complete |= domain1_state.wc_state == EC_WC_COMPLETE;

        if (counter) {
            counter--;
        } else {
            counter = FREQUENCY;
            check_master_state();
            check_slave_config_states();
            blink = !blink;
            printf("AnaIn: state %u value %d; DigIn %u\n", EC_READ_U8(domain1_pd + off_ana_in_status),
                   EC_READ_S16(domain1_pd + off_ana_in_value),
                   EC_READ_BIT(domain1_pd + off_dig_in, bp_dig_in));
        }
        EC_WRITE_BIT(domain1_pd + off_dig_out, bp_dig_out, blink);
        EC_WRITE_S16(domain1_pd + off_ana_out, blink ? 0x3fff : 0);

        ecrt_domain_queue(domain1);
        ecrt_master_send(master);
    }
    ecrt_release_master(master);
    return complete ? 0 : 1;
}
