/*
 * idle_tail.c - how long the pool's workers sit idle at the end of a run.
 *
 * Usage: idle_tail PUZZLE THREADS [RUNS]
 *
 * Runs the whole search on the pool, sampling every worker's state from the
 * progress callback every millisecond, and prints per run the wall time and
 * each worker's idle seconds in the last 10% of it: the tail where a search
 * that cannot give its work away leaves cores with nothing to do.  Built by
 * `make bench` (not installed); it uses only the public API, so the same
 * source measures any version of the library.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tessera/tessera.h"

#define MAX_SAMPLES 2000000
#define MAX_WORKERS 256

typedef struct sampler {
    long n;
    double *t;            /* sample times */
    unsigned char *idle;  /* [sample * nworkers + worker] */
    int nworkers;
} sampler;

static int sample(void *ctx, const tsr_stats *st)
{
    sampler *s = ctx;
    if (s->n >= MAX_SAMPLES || st->nworkers <= 0 || st->nworkers > MAX_WORKERS)
        return 0;
    s->nworkers = st->nworkers;
    s->t[s->n] = st->seconds;
    for (int w = 0; w < st->nworkers; w++)
        s->idle[s->n * MAX_WORKERS + w] = st->workers[w].state != TSR_WORKER_SEARCHING;
    s->n++;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: idle_tail PUZZLE THREADS [RUNS]\n");
        return 2;
    }
    int threads = atoi(argv[2]), runs = argc > 3 ? atoi(argv[3]) : 1;
    tsr_puzzle *pz = NULL;
    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    if (tsr_puzzle_load_file(argv[1], &pz, NULL, &err) != 0 ||
        tsr_solver_new(pz, NULL, &s, &err) != 0) {
        fprintf(stderr, "idle_tail: %s\n", err.msg);
        return 2;
    }
    sampler sm = {0};
    sm.t = malloc(MAX_SAMPLES * sizeof *sm.t);
    sm.idle = malloc((size_t)MAX_SAMPLES * MAX_WORKERS);
    if (sm.t == NULL || sm.idle == NULL)
        return 1;
    printf("%-28s %7s %9s  %s\n", "puzzle", "threads", "wall s", "idle s per worker, last 10%");
    for (int r = 0; r < runs; r++) {
        sm.n = 0;
        tsr_callbacks cb = {.ctx = &sm, .progress = sample, .progress_seconds = 0.001};
        tsr_stats st;
        if (tsr_pool_run(s, threads, NULL, 0, &cb, &st) != 0)
            return 1;
        double T = st.seconds, from = 0.9 * T;
        printf("%-28s %7d %9.3f ", pz->name ? pz->name : argv[1], threads, T);
        for (int w = 0; w < sm.nworkers; w++) {
            double idle = 0;
            for (long i = 0; i < sm.n; i++) {
                double t0 = i > 0 ? sm.t[i - 1] : 0, t1 = sm.t[i];
                if (t1 > from && sm.idle[i * MAX_WORKERS + w])
                    idle += t1 - (t0 > from ? t0 : from);
            }
            printf(" %.3f", idle);
        }
        printf("\n");
        tsr_stats_free(&st);
    }
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
    free(sm.t);
    free(sm.idle);
    return 0;
}
