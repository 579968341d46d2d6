/*
 * base.c - the clock, the CPU count, the growing array and the byte buffer
 * of base.h.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

double base_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int base_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

int base_grow(void **v, size_t *cap, size_t count, size_t size, size_t first, size_t max)
{
    if (count < *cap)
        return 0;
    size_t limit = max > 0 ? max : SIZE_MAX / size;
    if (count >= limit)
        return TSR_ETOOBIG;
    size_t n = *cap > 0 ? *cap : (first > 0 ? first : 16);
    while (n <= count)
        n = n > limit / 2 ? limit : n * 2;
    void *p = realloc(*v, n * size);
    if (p == NULL)
        return TSR_ENOMEM;
    *v = p;
    *cap = n;
    return 0;
}

int base_buf_add(base_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (n > SIZE_MAX - b->len)
        return TSR_ENOMEM;
    int rc = base_grow((void **)&b->data, &b->cap, b->len + n - 1, 1, 256, 0);
    if (rc != 0)
        return rc == TSR_ETOOBIG ? TSR_ENOMEM : rc;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int base_buf_printf(base_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return TSR_EINVAL;
    if ((size_t)n < sizeof small)
        return base_buf_add(b, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (big == NULL)
        return TSR_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = base_buf_add(b, big, (size_t)n);
    free(big);
    return rc;
}

void base_buf_free(base_buf *b)
{
    free(b->data);
    *b = (base_buf){0};
}
