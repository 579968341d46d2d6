/*
 * eta.c - the time left in a search as a range, and durations in words
 * (tessera/eta.h).
 *
 * Samples of (seconds, fraction) are kept spread over the whole run: at
 * most TSR_ETA_SAMPLES, at least `spacing` seconds apart, every other one
 * dropped and the spacing doubled when the array fills.  So the recent rate
 * can be read over a window that grows with the run, in constant memory.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tessera/eta.h"

/* The recent rate is read over the last quarter of the run, and never
 * over less than this: a shorter window follows the noise of single
 * subtrees. */
#define RECENT_MIN_S 10.0

void tsr_eta_init(tsr_eta *e)
{
    *e = (tsr_eta){.spacing = 0.5};
}

void tsr_eta_set_tree(tsr_eta *e, double nodes_low, double nodes_high)
{
    e->nodes_low = nodes_low;
    e->nodes_high = nodes_high;
}

void tsr_eta_add(tsr_eta *e, double seconds, double fraction)
{
    e->now_t = seconds;
    e->now_f = fraction;
    if (e->n > 0 && seconds - e->t[e->n - 1] < e->spacing)
        return;
    if (e->n == TSR_ETA_SAMPLES) {
        for (int i = 0; i < TSR_ETA_SAMPLES / 2; i++) {
            e->t[i] = e->t[2 * i];
            e->f[i] = e->f[2 * i];
        }
        e->n = TSR_ETA_SAMPLES / 2;
        e->spacing *= 2;
    }
    e->t[e->n] = seconds;
    e->f[e->n] = fraction;
    e->n++;
}

/* Seconds left at a rate of `rate` fraction per second. */
static double left_at(double f, double rate)
{
    return rate > 0 ? (1 - f) / rate : INFINITY;
}

bool tsr_eta_range(const tsr_eta *e, uint64_t nodes, double rate, double *low, double *high)
{
    double t = e->now_t, f = e->now_f;
    if (e->n == 0 || t < 1 || !(f > 0))
        return false;
    if (f >= 1) {
        *low = *high = 0;
        return true;
    }
    double avg = left_at(f, f / t);
    /* the newest sample at least a window before now (else the oldest) */
    double window = fmax(RECENT_MIN_S, t / 4);
    int i = 0;
    while (i + 1 < e->n && e->t[i + 1] <= t - window)
        i++;
    double recent = t > e->t[i] ? left_at(f, (f - e->f[i]) / (t - e->t[i])) : avg;
    *low = fmin(avg, recent);
    *high = fmax(avg, recent);
    if (e->nodes_high > 0 && rate > 0) {
        *low = fmin(*low, fmax(0, e->nodes_low - (double)nodes) / rate);
        *high = fmax(*high, fmax(0, e->nodes_high - (double)nodes) / rate);
    }
    return true;
}

double tsr_eta_middle(double low, double high)
{
    if (high >= TSR_CENTURY_S)
        return INFINITY;
    return high - low < 1 ? high : sqrt(fmax(low, 1) * high);
}

const char *tsr_duration_text(double seconds, char *buf, size_t size)
{
    const double day = 86400, year = 365.25 * day;
    if (!(seconds >= 0) || isinf(seconds))
        snprintf(buf, size, "unknown");
    else if (seconds >= TSR_CENTURY_S)
        snprintf(buf, size, "more than a century");
    else if (seconds >= 2 * year)
        snprintf(buf, size, "%.1f years", seconds / year);
    else if (seconds >= 2 * day)
        snprintf(buf, size, "%.1f days", seconds / day);
    else if (seconds >= 3600) {
        long m = lround(seconds / 60);
        snprintf(buf, size, "%ldh%02ldm", m / 60, m % 60);
    } else if (seconds >= 60) {
        long t = lround(seconds);
        snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    } else if (seconds >= 0.1)
        snprintf(buf, size, "%.1fs", seconds);
    else if (seconds == 0)
        snprintf(buf, size, "0s"); /* nothing yet, not "a little" */
    else
        snprintf(buf, size, "under 0.1s");
    return buf;
}

const char *tsr_fraction_text(double f, char *buf, size_t size)
{
    double p = 100 * (f > 0 ? (f < 1 ? f : 1) : 0);
    if (p > 0 && p < 0.1) { /* four significant digits, as JavaScript's toPrecision(4) */
        int e = (int)floor(log10(p));
        if (e >= -6)
            snprintf(buf, size, "%.*f%%", 3 - e, p);
        else
            snprintf(buf, size, "%.3fe%d%%", p / pow(10, e), e);
    } else
        snprintf(buf, size, "%.1f%%", p >= 99.95 && f < 1 ? 99.9 : p);
    return buf;
}

const char *tsr_duration_range(double estimate, double low, double high, char *buf, size_t size)
{
    char e[32], a[32], b[32];
    tsr_duration_text(estimate, e, sizeof e);
    tsr_duration_text(low, a, sizeof a);
    tsr_duration_text(high, b, sizeof b);
    if (!(low >= 0))
        snprintf(buf, size, "unknown");
    else if (low >= TSR_CENTURY_S)
        snprintf(buf, size, "more than a century");
    else if (high >= TSR_CENTURY_S)
        snprintf(buf, size, "%s to more than a century", a);
    else if (strcmp(a, b) == 0)
        snprintf(buf, size, "%s", e);
    else
        snprintf(buf, size, "%s (%s to %s)", e, a, b);
    return buf;
}
