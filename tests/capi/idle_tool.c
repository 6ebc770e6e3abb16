/* The `ecat` tool before and after activation (crates/ecat-capi/tests/control.rs,
 * ecat_tool_before_activation): the program requests master 0 and configures the io network,
 * then stays in IgH's configuration phase, making a blocking SDO upload every 10 ms (so its
 * own calls and the tool's requests share the MainDevice), until the file "go" appears in
 * $IDLE_TOOL_DIR. Then it activates, cycles at 1 ms, prints "OP" once the bus is in OP with a
 * complete working counter, and cycles on until the file "end" appears. Every cycle after OP
 * must have a complete working counter. Usage: IDLE_TOOL_DIR=dir idle_tool */
#include <unistd.h>
#include "capi_test.h"

#define BECKHOFF 0x00000002
#define EL2008 BECKHOFF, 0x07d83052
#define EL1018 BECKHOFF, 0x03fa3052
#define EL4132 BECKHOFF, 0x10243052
#define EL3102 BECKHOFF, 0x0c1e3052

static unsigned int off_do, off_di, off_ao, off_ai;
static const ec_pdo_entry_reg_t regs[] = {
    {0, 1, EL2008, 0x7000, 1, &off_do, NULL},
    {0, 2, EL1018, 0x6000, 1, &off_di, NULL},
    {0, 3, EL4132, 0x6411, 1, &off_ao, NULL},
    {0, 4, EL3102, 0x3101, 2, &off_ai, NULL},
    {0}
};

static int exists(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

int main(void)
{
    const char *dir = getenv("IDLE_TOOL_DIR");
    CHECK(dir != NULL);
    ec_master_t *m = ecrt_request_master(0);
    CHECK(m != NULL);
    if (!m || !dir)
        return finish("idle_tool");
    ec_domain_t *d = ecrt_master_create_domain(m);
    CHECK(ecrt_master_slave_config(m, 0, 0, BECKHOFF, 0x044c2c52) != NULL); /* EK1100 */
    CHECK_EQ(ecrt_domain_reg_pdo_entry_list(d, regs), 0);
    printf("idle\n");
    fflush(stdout);

    /* Configuration phase: blocking SDO calls beside the tool's requests. */
    long uploads = 0, bad_uploads = 0;
    uint64_t until = now_ns() + 60000000000ULL;
    while (!exists(dir, "go") && now_ns() < until) {
        uint8_t v[4] = {0};
        size_t n = 0;
        uint32_t abort_code = 0;
        int r = ecrt_master_sdo_upload(m, 3, 0x1018, 1, v, sizeof v, &n, &abort_code);
        uploads++;
        if (r != 0 || n != 4 || EC_READ_U32(v) != 2)
            bad_uploads++;
        sleep_ns(10000000);
    }
    printf("%ld blocking SDO uploads in the configuration phase, %ld failed\n", uploads,
           bad_uploads);
    CHECK(exists(dir, "go"));
    CHECK(uploads > 0);
    CHECK_EQ(bad_uploads, 0);

    CHECK_EQ(ecrt_master_activate(m), 0);
    uint8_t *pd = ecrt_domain_data(d);
    CHECK(pd != NULL);
    if (!pd)
        return finish("idle_tool");
    long op_at = -1, after_op = 0, incomplete = 0;
    ec_domain_state_t ds;
    until = now_ns() + 60000000000ULL;
    for (long c = 0; now_ns() < until; c++) {
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
            after_op++;
            incomplete += ds.wc_state != EC_WC_COMPLETE;
            if (exists(dir, "end"))
                break;
        }
        EC_WRITE_U8(pd + off_do, (uint8_t)c);
        ecrt_domain_queue(d);
        ecrt_master_send(m);
        sleep_ns(1000000);
    }
    printf("OP after %ld cycles, then %ld cycles, %ld with an incomplete working counter\n", op_at,
           after_op, incomplete);
    CHECK(op_at >= 0);
    CHECK(exists(dir, "end"));
    CHECK_EQ(incomplete, 0);
    ecrt_release_master(m);
    return finish("idle_tool");
}
