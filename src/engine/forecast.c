/*
 * forecast.c - from an estimate of the search to an estimate of its time.
 *
 * tsr_solver_estimate (estimate.c) says how many nodes the search visits;
 * this file measures how many nodes per second this machine visits on the
 * same search (a short real run, stopped by its progress callback), turns
 * the two into durations for a number of threads, and writes the report
 * that `tessera estimate --json` prints and POST /api/v1/estimate answers.
 * Only the public engine API is used.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/engine.h"
#include "tessera/eta.h"

typedef struct rate_ctx {
    double max_seconds;
} rate_ctx;

static int rate_progress(void *ctx, const tsr_stats *st)
{
    const rate_ctx *rc = ctx;
    return st->seconds >= rc->max_seconds;
}

int tsr_solver_rate(const tsr_solver *s, double max_seconds, tsr_rate *out)
{
    memset(out, 0, sizeof *out);
    if (!(max_seconds > 0))
        return TSR_EINVAL;
    rate_ctx ctx = {max_seconds};
    /* the callback runs every few thousand placements; asking every 10 ms
     * keeps the overshoot small and the run undisturbed */
    tsr_callbacks cb = {.ctx = &ctx, .progress = rate_progress,
                        .progress_seconds = max_seconds < 0.4 ? max_seconds / 4 : 0.01};
    tsr_stats st;
    int rc = tsr_solver_run(s, NULL, 0, &cb, &st);
    if (rc == 0) {
        out->nodes = st.nodes;
        out->solutions = st.solutions;
        out->seconds = st.seconds;
        out->complete = !st.stopped;
        out->nodes_per_second = st.seconds > 0 ? st.nodes / st.seconds : 0;
    }
    tsr_stats_free(&st);
    return rc;
}

static void raise_to(double *est, double *low, double *high, double known, bool exact)
{
    if (exact) {
        *est = *low = *high = known;
        return;
    }
    if (*low < known)
        *low = known;
    if (*est < known)
        *est = known;
    if (*high >= 0 && *high < known)
        *high = known;
}

void tsr_estimate_merge(tsr_estimate *e, const tsr_rate *r)
{
    raise_to(&e->nodes, &e->nodes_low, &e->nodes_high, (double)r->nodes, r->complete);
    raise_to(&e->solutions, &e->solutions_low, &e->solutions_high, (double)r->solutions,
             r->complete);
}

void tsr_forecast(const tsr_estimate *e, const tsr_rate *r, int threads, tsr_duration *out)
{
    double rate = r->nodes_per_second * (threads > 0 ? threads : 1);
    if (r->complete) { /* the timing run was the whole search */
        out->estimate = out->low = out->high = r->seconds / (threads > 0 ? threads : 1);
    } else if (rate > 0) {
        out->estimate = e->nodes / rate;
        out->low = e->nodes_low / rate;
        out->high = e->nodes_high / rate;
    } else {
        out->estimate = out->low = out->high = INFINITY;
    }
    tsr_duration_range(out->estimate, r->complete ? out->estimate : out->low,
                       r->complete ? out->estimate : out->high, out->text, sizeof out->text);
}

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *range(double est, double low, double high)
{
    return json_pack("{s:o, s:o, s:o}", "estimate", num(est), "low", num(low), "high",
                     high >= 0 ? num(high) : json_null());
}

char *tsr_estimate_json(const tsr_estimate *e, const tsr_rate *r, int threads, const char *config)
{
    json_t *o = json_object(), *secs = json_object();
    int counts[2] = {1, threads};
    for (int i = 0; i < (threads > 1 ? 2 : 1); i++) {
        tsr_duration d;
        tsr_forecast(e, r, counts[i], &d);
        char key[16];
        snprintf(key, sizeof key, "%d", counts[i]);
        json_object_set_new(secs, key, json_pack("{s:o, s:o, s:o, s:s}", "estimate",
                                                 num(d.estimate), "low", num(d.low), "high",
                                                 num(d.high), "text", d.text));
    }
    json_object_set_new(o, "nodes", range(e->nodes, e->nodes_low, e->nodes_high));
    json_object_set_new(o, "solutions", range(e->solutions, e->solutions_low, e->solutions_high));
    json_object_set_new(o, "rate", json_real(r->nodes_per_second));
    json_object_set_new(o, "seconds", secs);
    json_object_set_new(o, "probes", json_integer(e->probes));
    json_object_set_new(o, "samples", json_integer(e->samples));
    json_object_set_new(o, "elapsed_s", json_real(e->seconds + r->seconds));
    char took[32];
    json_object_set_new(o, "exact", r->complete ? json_pack("{s:I, s:I, s:f, s:s}", "nodes",
                                                            (json_int_t)r->nodes, "solutions",
                                                            (json_int_t)r->solutions, "seconds",
                                                            r->seconds, "text",
                                                            tsr_duration_text(r->seconds, took,
                                                                              sizeof took))
                                                : json_null());
    json_object_set_new(o, "config", json_string(config ? config : ""));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}
