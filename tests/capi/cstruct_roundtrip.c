/* The `ecat cstruct` round trip (crates/ecat-capi/tests/cstruct_roundtrip.rs): one simulated
 * network, its slaves configured with the C arrays `ecat cstruct` printed for them.
 *
 * Compiled with -DBUS_FILE='"path"': a generated file holding the cstruct output verbatim and
 * a table `bus[]` of every slave (position, vendor id, product code, DC assign-activate word
 * or 0, its cstruct sync array or NULL for a slave without sync managers, its type name).
 *
 * As an IgH application built from cstruct output does it: ecrt_slave_config_pdos() with the
 * arrays, every PDO entry registered into one domain (gaps of index 0 skipped, a bit position
 * pointer for bit-aligned entries), SYNC0 every 1 ms where a DC word is given, activate, then
 * IgH's loop at 1 ms (receive, domain_process, DC clock sync, domain_queue, send) until every
 * slave config is operational and the domain complete, then 200 cycles more.
 *
 * Output, one line each, for the test to parse:
 *   slave POS operational O al_state 0xSS al_status 0xCCCC error TEXT type TYPE
 *   domain wc W state S entries E cycles C
 * al_status is register 0x0134 read with a register request (0xffff when it could not be
 * read); error names a failed configuration call, "-" if none. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ecrt.h>

struct bus_slave {
    uint16_t position;
    uint32_t vendor, product;
    uint16_t dc;
    ec_sync_info_t *syncs;
    const char *type;
};

#include BUS_FILE

#define N_SLAVES (sizeof bus / sizeof bus[0])
#define PERIOD_NS 1000000L
#define TIMEOUT_CYCLES 10000
#define SETTLE_CYCLES 200

static uint64_t app_time_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void next_period(struct timespec *wake)
{
    wake->tv_nsec += PERIOD_NS;
    while (wake->tv_nsec >= 1000000000L) {
        wake->tv_nsec -= 1000000000L;
        wake->tv_sec++;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, wake, NULL);
}

static ec_master_t *master;
static ec_domain_t *domain;
static int with_dc;

/* One cycle in IgH's shape. */
static void cycle(struct timespec *wake)
{
    next_period(wake);
    ecrt_master_receive(master);
    ecrt_domain_process(domain);
    if (with_dc) {
        ecrt_master_application_time(master, app_time_ns());
        ecrt_master_sync_reference_clock(master);
        ecrt_master_sync_slave_clocks(master);
    }
    ecrt_domain_queue(domain);
    ecrt_master_send(master);
}

/* Register every entry of the slave's sync array; the first failure's text in err. */
static unsigned register_entries(ec_slave_config_t *sc, const ec_sync_info_t *syncs, char *err,
                                 size_t len)
{
    unsigned n = 0;
    for (const ec_sync_info_t *s = syncs; s && s->index != 0xff; s++)
        for (unsigned p = 0; p < s->n_pdos; p++)
            for (unsigned e = 0; e < s->pdos[p].n_entries; e++) {
                const ec_pdo_entry_info_t *en = &s->pdos[p].entries[e];
                if (en->index == 0)
                    continue;
                unsigned int bit = 0;
                int off = ecrt_slave_config_reg_pdo_entry(sc, en->index, en->subindex, domain, &bit);
                if (off < 0 && !err[0])
                    snprintf(err, len, "reg_pdo_entry(0x%04x:%02x)=%d", en->index, en->subindex, off);
                if (off >= 0)
                    n++;
            }
    return n;
}

int main(void)
{
    static ec_slave_config_t *sc[N_SLAVES];
    static ec_reg_request_t *rq[N_SLAVES];
    static char err[N_SLAVES][96];
    master = ecrt_request_master(0);
    if (!master) {
        printf("no master\n");
        return 2;
    }
    domain = ecrt_master_create_domain(master);
    if (!domain) {
        printf("no domain\n");
        return 2;
    }
    unsigned entries = 0;
    for (unsigned i = 0; i < N_SLAVES; i++) {
        const struct bus_slave *b = &bus[i];
        sc[i] = ecrt_master_slave_config(master, 0, b->position, b->vendor, b->product);
        if (!sc[i]) {
            snprintf(err[i], sizeof err[i], "slave_config=NULL");
            continue;
        }
        int r;
        if (b->syncs && (r = ecrt_slave_config_pdos(sc[i], EC_END, b->syncs)) != 0)
            snprintf(err[i], sizeof err[i], "config_pdos=%d", r);
        if (b->dc) {
            with_dc = 1;
            if ((r = ecrt_slave_config_dc(sc[i], b->dc, PERIOD_NS, 0, 0, 0)) != 0 && !err[i][0])
                snprintf(err[i], sizeof err[i], "config_dc=%d", r);
        }
        entries += register_entries(sc[i], b->syncs, err[i], sizeof err[i]);
        rq[i] = ecrt_slave_config_create_reg_request(sc[i], 2);
    }
    ecrt_master_application_time(master, app_time_ns());
    if (ecrt_master_activate(master)) {
        printf("activate failed\n");
        return 2;
    }

    struct timespec wake;
    clock_gettime(CLOCK_MONOTONIC, &wake);
    ec_domain_state_t ds = {0};
    ec_slave_config_state_t st[N_SLAVES];
    memset(st, 0, sizeof st);
    int c = 0, settled = -1;
    for (; c < TIMEOUT_CYCLES && (settled < 0 || c < settled + SETTLE_CYCLES); c++) {
        cycle(&wake);
        ecrt_domain_state(domain, &ds);
        int all = ds.wc_state == EC_WC_COMPLETE;
        for (unsigned i = 0; i < N_SLAVES; i++) {
            if (sc[i])
                ecrt_slave_config_state(sc[i], &st[i]);
            all = all && sc[i] && st[i].operational;
        }
        if (all && settled < 0)
            settled = c;
    }

    /* The AL status code of every slave, as register requests read it. */
    for (unsigned i = 0; i < N_SLAVES; i++)
        if (rq[i])
            ecrt_reg_request_read(rq[i], 0x0134, 2);
    for (int k = 0; k < 1000; k++) {
        int busy = 0;
        for (unsigned i = 0; i < N_SLAVES; i++)
            busy |= rq[i] && ecrt_reg_request_state(rq[i]) == EC_REQUEST_BUSY;
        if (!busy)
            break;
        cycle(&wake);
    }
    for (unsigned i = 0; i < N_SLAVES; i++) {
        unsigned status = 0xffff;
        if (rq[i] && ecrt_reg_request_state(rq[i]) == EC_REQUEST_SUCCESS)
            status = EC_READ_U16(ecrt_reg_request_data(rq[i]));
        printf("slave %u operational %u al_state 0x%02x al_status 0x%04x error %s type %s\n",
               bus[i].position, st[i].operational, st[i].al_state, status,
               err[i][0] ? err[i] : "-", bus[i].type);
    }
    printf("domain wc %u state %d entries %u cycles %d\n", ds.working_counter, ds.wc_state,
           entries, c);
    ecrt_release_master(master);
    return 0;
}
