/* Tiny test helpers for the C API tests: CHECK counts failures and prints the failing
 * expression; cycle() runs one IgH-style cycle; MARK prints a marker to stderr so the runner
 * can count the library's "ecat:" lines per call. */
#ifndef CAPI_TEST_H
#define CAPI_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include "ecrt.h"

static int failures;
static int checks;

#define CHECK(cond)                                                         \
    do {                                                                    \
        checks++;                                                           \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);          \
        }                                                                   \
    } while (0)

#define CHECK_EQ(a, b)                                                      \
    do {                                                                    \
        long long _a = (long long)(a), _b = (long long)(b);                 \
        checks++;                                                           \
        if (_a != _b) {                                                     \
            failures++;                                                     \
            printf("FAIL %s:%d: %s == %lld, expected %s == %lld\n",         \
                   __FILE__, __LINE__, #a, _a, #b, _b);                     \
        }                                                                   \
    } while (0)

#define MARK(what) fprintf(stderr, "MARK %s\n", what)

static inline void sleep_ns(long ns)
{
    struct timespec t = {ns / 1000000000L, ns % 1000000000L};
    nanosleep(&t, NULL);
}

static inline uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* One IgH-style cycle of master m with domain d (receive, process, queue, send), then
 * 200 us of sleep. */
static inline void cycle_domain(ec_master_t *m, ec_domain_t *d)
{
    ecrt_master_receive(m);
    ecrt_domain_process(d);
    ecrt_domain_queue(d);
    ecrt_master_send(m);
    sleep_ns(200000);
}

/* The CiA 402 controlword that takes a drive with statusword sw on towards "operation
 * enabled". */
static inline uint16_t cia402_enable_step(uint16_t sw)
{
    if ((sw & 0x4f) == 0x40)
        return 0x06;
    if ((sw & 0x6f) == 0x21)
        return 0x07;
    return 0x0f;
}

static inline int finish(const char *name)
{
    printf("%s: %d checks, %d failures\n", name, checks, failures);
    return failures ? 1 : 0;
}

#endif
