/* The application side of the `ecat` tool acceptance test (crates/ecat-capi/tests/control.rs):
 * IgH's classic 1 kHz I/O loop on a veth pair (ECAT_MASTER0=raw:<iface>) against `ecat sim`
 * in another process, while `ecat slaves`, `ecat upload` and `ecat data` talk to this master
 * (`-m 0`) through its control socket. After the bus reaches OP it runs CYCLES cycles at 1 ms
 * and counts every cycle whose domain working counter is not complete, however it came about.
 * For each it prints `incomplete-at <CLOCK_MONOTONIC ns of its receive> <ns the previous
 * cycle's receive..send took>`, so the test can tell whether the host stalled the simulator
 * (or this program) just then. Usage: control_veth [CYCLES] */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include "capi_test.h"

#define BECKHOFF 0x00000002
#define EL2008 BECKHOFF, 0x07d83052
#define EL1018 BECKHOFF, 0x03fa3052
#define EL4132 BECKHOFF, 0x10243052
#define EL3102 BECKHOFF, 0x0c1e3052
#define PERIOD_NS 1000000L

static unsigned int off_do, off_di, off_ao, off_ai;
static const ec_pdo_entry_reg_t regs[] = {
    {0, 1, EL2008, 0x7000, 1, &off_do, NULL},
    {0, 2, EL1018, 0x6000, 1, &off_di, NULL},
    {0, 3, EL4132, 0x6411, 1, &off_ao, NULL},
    {0, 4, EL3102, 0x3101, 2, &off_ai, NULL},
    {0}
};

int main(int argc, char **argv)
{
    long cycles = argc > 1 ? atol(argv[1]) : 10000;
    ec_master_t *m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m)
        return finish("control_veth");
    ec_domain_t *d = ecrt_master_create_domain(m);
    CHECK(ecrt_master_slave_config(m, 0, 0, BECKHOFF, 0x044c2c52) != NULL); /* EK1100 */
    CHECK_EQ(ecrt_domain_reg_pdo_entry_list(d, regs), 0);
    CHECK_EQ(ecrt_master_activate(m), 0);
    uint8_t *pd = ecrt_domain_data(d);
    if (!pd)
        return finish("control_veth");

    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    sched_setaffinity(0, sizeof set, &set);
    struct sched_param sp = {.sched_priority = 80};
    int fifo = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
    int locked = mlockall(MCL_CURRENT | MCL_FUTURE) == 0;

    struct timespec wake;
    clock_gettime(CLOCK_MONOTONIC, &wake);
    long op_at = -1, counted = 0, incomplete = 0, late = 0, worst = 0, first_bad = -1;
    long prev_late = 0, prev_work = 0;
    ec_domain_state_t ds;
    for (long c = 0; counted < cycles && c < cycles + 10000; c++) {
        wake.tv_nsec += PERIOD_NS;
        while (wake.tv_nsec >= 1000000000) {
            wake.tv_nsec -= 1000000000;
            wake.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long lateness = (now.tv_sec - wake.tv_sec) * 1000000000L + (now.tv_nsec - wake.tv_nsec);
        if (lateness > PERIOD_NS / 2)
            /* Overrun: the host held this program back by more than half a period. Start the
             * schedule again from now, so that the next receive still comes a whole period
             * after this send (with the absolute schedule it would follow at once and judge
             * frames that had microseconds to return). */
            wake = now;
        ecrt_master_receive(m);
        ecrt_domain_process(d);
        ecrt_domain_state(d, &ds);
        if (op_at < 0) {
            ec_master_state_t ms;
            ecrt_master_state(m, &ms);
            if (ds.wc_state == EC_WC_COMPLETE && ms.al_states == EC_AL_STATE_OP) {
                op_at = c;
                printf("OP\n");
                fflush(stdout);
            }
        } else {
            counted++;
            if (lateness > 500000)
                late++;
            if (lateness > worst)
                worst = lateness;
            if (ds.wc_state != EC_WC_COMPLETE) {
                incomplete++;
                if (first_bad < 0)
                    first_bad = counted;
                /* When, and how long the previous cycle's receive..send took. */
                if (incomplete <= 1000)
                    printf("incomplete-at %lld %ld (cycle %ld, woke %ld us late, the previous "
                           "one %ld us late)\n",
                           (long long)now.tv_sec * 1000000000LL + now.tv_nsec, prev_work, counted,
                           lateness / 1000, prev_late / 1000);
            }
        }
        EC_WRITE_U8(pd + off_do, (uint8_t)c);
        EC_WRITE_S16(pd + off_ao, (int16_t)c);
        ecrt_domain_queue(d);
        ecrt_master_send(m);
        struct timespec done;
        clock_gettime(CLOCK_MONOTONIC, &done);
        prev_work = (done.tv_sec - now.tv_sec) * 1000000000L + (done.tv_nsec - now.tv_nsec);
        prev_late = lateness;
    }
    printf("OP after %ld cycles; %ld cycles at 1 ms (SCHED_FIFO %s, memory %s): incomplete %ld "
           "(first at %ld); %ld woke more than 0.5 ms late, worst %ld us\n",
           op_at, counted, fifo ? "on" : "off", locked ? "locked" : "not locked", incomplete,
           first_bad, late, worst / 1000);
    CHECK(op_at >= 0);
    CHECK_EQ(counted, cycles);
    /* Zero incomplete cycles is judged by the test, which knows whether the host stalled. */
    /* Tell the test the cycling is over before releasing (release takes the bus to PREOP). */
    const char *done = getenv("CONTROL_VETH_DONE");
    if (done) {
        FILE *f = fopen(done, "w");
        if (f)
            fclose(f);
    }
    ecrt_release_master(m);
    return finish("control_veth");
}
