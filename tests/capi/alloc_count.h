/* Counts heap allocations of the whole process (this program and libethercat) by
 * interposing malloc and friends on glibc's own entry points. */
#ifndef ALLOC_COUNT_H
#define ALLOC_COUNT_H

#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static volatile long alloc_counting, alloc_counted;

void *malloc(size_t n)
{
    if (alloc_counting)
        alloc_counted++;
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    if (alloc_counting)
        alloc_counted++;
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    if (alloc_counting)
        alloc_counted++;
    return __libc_realloc(p, n);
}
void free(void *p) { __libc_free(p); }
int posix_memalign(void **out, size_t align, size_t n)
{
    if (alloc_counting)
        alloc_counted++;
    *out = __libc_memalign(align, n);
    return *out ? 0 : 12;
}
void *aligned_alloc(size_t align, size_t n)
{
    if (alloc_counting)
        alloc_counted++;
    return __libc_memalign(align, n);
}
void *memalign(size_t align, size_t n)
{
    if (alloc_counting)
        alloc_counted++;
    return __libc_memalign(align, n);
}

static inline void alloc_count_start(void)
{
    alloc_counted = 0;
    alloc_counting = 1;
}
static inline void alloc_count_pause(void) { alloc_counting = 0; }
static inline void alloc_count_resume(void) { alloc_counting = 1; }
static inline long alloc_count_stop(void)
{
    alloc_counting = 0;
    return alloc_counted;
}

#endif
