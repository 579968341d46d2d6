/*
 * tessera/eta.h - the time left in a search, as an honest range, and
 * durations in words.
 *
 * A search's fraction done (tsr_stats.fraction) is Knuth's estimate: it
 * assumes that siblings have subtrees of equal size, so its rate is not
 * constant, and no single extrapolation of it can be trusted.  The range
 * combines the extrapolations that disagree most in practice: the rate over
 * the whole search so far and the rate over its recent part (the last
 * quarter of the elapsed time, at least 10 s), and, when a tree size was
 * estimated beforehand (Monte Carlo probes), the nodes left at the node
 * rate.  The estimate is the middle of the range (its geometric mean).
 * The CLI, the daemon's API and the dashboard all show these figures.
 */
#ifndef TESSERA_ETA_H
#define TESSERA_ETA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TSR_ETA_SAMPLES 64

/* A century, in seconds: past it, durations are given in words. */
#define TSR_CENTURY_S (100 * 365.25 * 86400.0)

typedef struct tsr_eta {
    /* samples (seconds, fraction), oldest first, at least `spacing` apart;
     * the latest progress separately */
    double t[TSR_ETA_SAMPLES], f[TSR_ETA_SAMPLES];
    int n;
    double spacing, now_t, now_f;
    double nodes_low, nodes_high; /* a tree size estimated beforehand, or 0 */
} tsr_eta;

void tsr_eta_init(tsr_eta *e);

/* A tree size estimated beforehand (nodes, as tsr_stats.nodes counts them):
 * low and high ends of its range. */
void tsr_eta_set_tree(tsr_eta *e, double nodes_low, double nodes_high);

/* Record the search's progress: its seconds of search so far (across
 * restarts) and its fraction done.  Calls may come as often as wanted; the
 * samples kept are spread over the whole run. */
void tsr_eta_add(tsr_eta *e, double seconds, double fraction);

/* The seconds left, low and high ends (high may be infinite); `nodes` and
 * `rate` (nodes/s now) are used with a tree-size estimate.  Returns false
 * when there is no estimate yet (no progress, or too little time). */
bool tsr_eta_range(const tsr_eta *e, uint64_t nodes, double rate, double *low, double *high);

/* The estimate a range stands for: its geometric middle (the ends are
 * ratios apart, not seconds), or infinity past a century. */
double tsr_eta_middle(double low, double high);

/* A duration in one format everywhere: "0s", "under 0.1s", "42.3s", "35m28s",
 * "3h05m", "2.4 days", "3.1 years", "more than a century"; "unknown" for
 * infinity or NaN.  Returns buf. */
const char *tsr_duration_text(double seconds, char *buf, size_t size);

/* A fraction done in one format everywhere (the dashboard's fmtPercent in
 * www/js/format.js too): "42.1%", "99.9%" until it is 1; below a tenth of
 * a percent four digits, "0.00001070%", so that a deep search is seen to
 * move.  Returns buf. */
const char *tsr_fraction_text(double fraction, char *buf, size_t size);

/* An estimate with its range: "3h05m (2h10m to 4h20m)", just "3h05m" when
 * the ends read the same, "5.2 years to more than a century", "more than
 * a century"; "unknown" when low is negative.  Returns buf. */
const char *tsr_duration_range(double estimate, double low, double high, char *buf,
                               size_t size);

#endif
