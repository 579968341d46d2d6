/*
 * estimate_raw.c - the estimator alone, before the timing run corrects it.
 *
 * Usage: estimate_raw PUZZLE SEED [PROBES [SECONDS]]
 *
 * `tessera estimate` merges its estimate with a 0.5 s timing run, which on
 * every small puzzle finishes the search and prints the exact counts: the
 * estimator's own ranges are never seen.  This prints them, one line:
 * nodes, nodes_low, nodes_high, solutions, solutions_low, solutions_high,
 * samples, hits, seconds.  Defaults are the CLI's (1000000 probes, 2 s).
 * bench/estimate_coverage.py runs it; only the public API is used.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tessera/tessera.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: estimate_raw PUZZLE SEED [PROBES [SECONDS]]\n");
        return 2;
    }
    long probes = argc > 3 ? atol(argv[3]) : 1000000;
    double seconds = argc > 4 ? atof(argv[4]) : 2.0;
    tsr_puzzle *pz = NULL;
    tsr_solver *s = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    if (tsr_puzzle_load_file(argv[1], &pz, &opt, &err) != 0 ||
        tsr_solver_new(pz, &opt, &s, &err) != 0) {
        fprintf(stderr, "estimate_raw: %s: %s\n", argv[1], err.msg);
        return 1;
    }
    tsr_estimate e;
    int rc = tsr_solver_estimate(s, probes, seconds, strtoull(argv[2], NULL, 10), &e);
    if (rc == 0)
        printf("%.6g %.6g %.6g %.6g %.6g %.6g %ld %ld %.2f\n", e.nodes, e.nodes_low,
               e.nodes_high, e.solutions, e.solutions_low, e.solutions_high, e.samples, e.hits,
               e.seconds);
    else
        fprintf(stderr, "estimate_raw: %s: %s\n", argv[1], tsr_strerror(rc));
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
    return rc == 0 ? 0 : 1;
}
