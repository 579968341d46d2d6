/*
 * tessera/engine.h - the search engine.
 *
 * A solver is prepared once from a validated puzzle and options: it compiles
 * the images, finds the puzzle's symmetry group, applies the root filters
 * and resolves every automatic choice.  After tsr_solver_new the solver is
 * immutable, so several threads may run searches on it at once, each with
 * its own tsr_run_stats.  A run searches the subtree below a partial
 * assembly (a set of image ids; none for the whole puzzle) and reports
 * through callbacks; it never prints and keeps no global state.
 */
#ifndef TESSERA_ENGINE_H
#define TESSERA_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "puzzle.h"

typedef struct tsr_solver tsr_solver;

/* What one worker of the pool is doing (tessera/pool.h). */
enum tsr_worker_state { TSR_WORKER_IDLE, TSR_WORKER_SEARCHING, TSR_WORKER_PARKED };
typedef struct tsr_worker_stats {
    enum tsr_worker_state state;
    int depth;           /* pieces placed above the task it searches */
    uint64_t nodes;      /* nodes of that task so far */
    uint64_t tasks;      /* tasks it has finished */
} tsr_worker_stats;

typedef struct tsr_stats {
    int levels;          /* entries in attempts/fits: pieces left 0 .. levels-1 */
    uint64_t *attempts;  /* [p]: placements tried with p pieces left */
    uint64_t *fits;      /* [p]: placements that fit with p pieces left */
    uint64_t nodes;      /* all fits */
    uint64_t solutions;  /* solutions reported in the chosen mode */
    uint64_t classes;    /* classes under the full symmetry group accepted */
    uint64_t digest;     /* of the classes reported: a sum of a hash of each
                            one's image ids and count, so the same for any
                            split into tasks, thread count and order */
    double fraction;     /* estimated part of the tree searched, 0..1 */
    double seconds;      /* wall time of the run */
    bool stopped;        /* a callback or the limit ended the run early */
    int nworkers;        /* progress reports of the pool: each worker's */
    const tsr_worker_stats *workers; /* doings (NULL otherwise) */
} tsr_stats;

/* What split_wanted answers. */
enum { TSR_SPLIT_NONE = 0, TSR_SPLIT_ONE = 1, TSR_SPLIT_ALL = 2 };

typedef struct tsr_callbacks {
    void *ctx;
    /* A reported solution (placements of fixed pieces included); return
     * nonzero to stop. */
    int (*solution)(void *ctx, const tsr_solution *s);
    /* When set, used instead of `solution`: one call per symmetry class
     * found, with no solution built.  `images` are the class
     * representative's n mobile image ids, sorted (a partial assembly's,
     * when the goal is one; in any order with found_any_order); `count` is how many solutions of the counting
     * mode it stands for (1 for a partial assembly), cut short where the
     * solver's limit ends the run.  tsr_solver_members and
     * tsr_solver_solution turn a class back into those solutions later.
     * Return nonzero to stop. */
    int (*found)(void *ctx, const int *images, int n, int count);
    /* Set when found may run on several pool workers at once.  The pool
     * calls found one worker at a time, to cut the counts at the limit;
     * with no limit and this set, it calls it from each worker as it
     * comes, without a lock (a million classes a second per worker on a
     * flood, where that lock made the workers wait on each other). */
    bool found_concurrent;
    /* Set when found reads no image id (it counts): the images of a class
     * may then come in any order, which spares a leaf its sort. */
    bool found_any_order;
    /* Set when the caller wants the counts only (tsr_stats: solutions,
     * classes, nodes, attempts and fits), no class and no solution:
     * neither found nor solution is called, and the digest is left 0.
     * Where every leaf counts alike without a look at it (each holds an
     * image that settles its class), FILA then counts its leaves where it
     * finds them, and its memo keeps their number instead of their
     * images: a tenth off the polyhex diamond ring. */
    bool counts_only;
    /* Called about every progress_seconds with the run's statistics so
     * far; return nonzero to stop. */
    int (*progress)(void *ctx, const tsr_stats *st);
    double progress_seconds; /* default 1 */
    /* When set, called for each placement made by the DLX part of the search
     * (depth = pieces placed before it). */
    void (*trace)(void *ctx, int depth, const tsr_placement *pl);
    /* Work sharing (both or neither).  Every few thousand placements the run
     * asks split_wanted.  TSR_SPLIT_ONE: the run gives away the untried
     * siblings of its shallowest level that has any; TSR_SPLIT_ALL: the
     * untried siblings of every level, so that the run ends as soon as the
     * subtree it is in is done and everything else it had left is in
     * donated tasks (how the pool parks its workers for a checkpoint).
     * Each task goes to donate: the image ids of the placements leading to
     * it and its weight, the fraction of the whole tree it stands for.  A
     * task run with tsr_solver_run searches exactly that subtree, with the
     * same choices, statistics and solutions as the run that gave it away. */
    int (*split_wanted)(void *ctx);
    void (*donate)(void *ctx, const int *images, int n, double weight);
} tsr_callbacks;

/* Prepare a solver.  The puzzle must outlive the solver. */
int tsr_solver_new(const tsr_puzzle *pz, const tsr_options *opt, tsr_solver **out, tsr_err *err);

/* A way to give up a long preparation: a puzzle of huge pieces on a huge
 * board (millions of image cells) takes seconds to prepare, and a daemon
 * must be able to pause, cancel or stop meanwhile.  Every phase asks
 * `stop` by the work it has done, 0.1 to 10 ms of work apart, from
 * several threads at once while the constrained piece's candidates are
 * estimated (on opt->threads threads, 0: one per CPU), so it must be
 * thread-safe and cheap (a mutex is fine); when it answers nonzero,
 * preparation frees what it built and ends with TSR_ECANCELED, asking no
 * more (on one thread). */
typedef struct tsr_stop {
    int (*stop)(void *ctx);
    void *ctx;
} tsr_stop;

/* tsr_solver_new that polls `stop` (NULL: never stops). */
int tsr_solver_prepare(const tsr_puzzle *pz, const tsr_options *opt, const tsr_stop *stop,
                       tsr_solver **out, tsr_err *err);

/* What preparing and searching a puzzle would cost, bounded from above
 * without building anything (linear in the board and the pieces). */
typedef struct tsr_cost {
    double images;      /* piece placements, at most */
    double image_cells; /* their cells in all */
    double bytes;       /* memory of the solver searching on `threads` threads,
                           with a tree-size estimate beside it */
} tsr_cost;

/* The checks of tsr_solver_prepare that need no preparation (piece
 * copies, goal, order, the board's bounding box), then *cost.  Returns 0,
 * or TSR_EINVAL / TSR_ETOOBIG with the reason, as preparation would. */
int tsr_solver_check(const tsr_puzzle *pz, const tsr_options *opt, int threads, tsr_cost *cost,
                     tsr_err *err);
void tsr_solver_free(tsr_solver *s);

/* The configuration actually used, as one line of text (for example
 * "fila=11 order=s=12:f=11 nof=on volume=once vtrigger=0 parity=0 pfilter=0
 * fit=off redundancy=X group=4 images=1907/2056"; " pairs=on" follows
 * fit=... when the two-piece table is used). */
const char *tsr_solver_config(const tsr_solver *s);

/* The options in force, automatic choices resolved. */
const tsr_options *tsr_solver_options(const tsr_solver *s);

/* Number of images (piece placements) the search considers, and the number of
 * mobile piece copies (pieces in a solution). */
int tsr_solver_nimages(const tsr_solver *s);
int tsr_solver_ncopies(const tsr_solver *s);
/* Image `id` as a placement; `cells` must hold the piece's cell count (NULL:
 * only the piece and the count are set).  Image ids are stable for a given
 * puzzle and engine version. */
int tsr_solver_image(const tsr_solver *s, int id, tsr_placement *out, tsr_cell *cells);

/* Classes back into solutions (what tsr_callbacks.found reported).  The
 * most members a class can have: `out` of tsr_solver_members holds this
 * many times n ints. */
int tsr_solver_max_members(const tsr_solver *s);
/* The solutions of the counting mode that the class of `images` (n sorted
 * mobile image ids, as found reported them) stands for, each as n sorted
 * ids, into out; returns how many (the count found reported, unless the
 * limit cut it), in the order the search reports them, or TSR_EINVAL for
 * ids that are not a solution's of this solver, TSR_ENOMEM. */
int tsr_solver_members(const tsr_solver *s, const int *images, int n, int *out);
/* The room tsr_solver_solution needs: placements and cells. */
void tsr_solver_solution_room(const tsr_solver *s, int *placements, long *cells);
/* The solution made of n mobile image ids plus the fixed pieces, as the
 * solution callback gets it, built in pl and cells (tsr_solver_solution_room
 * says how many).
 * TSR_EINVAL for an id out of range or more ids than pieces. */
int tsr_solver_solution(const tsr_solver *s, const int *images, int n, tsr_placement *pl,
                        tsr_cell *cells, tsr_solution *out);

/* Where each piece fits (src/engine/fits.c): for every piece of the puzzle,
 * in puzzle order, its placements on the free cells in all allowed
 * orientations and, from a prepared solver, how many of them the root
 * filters left to the search (the constrained piece's are also reduced to
 * one per symmetry class); fixed pieces get 0.  Returns 0, or TSR_EINVAL
 * with a message naming the trouble when the puzzle can have no solution:
 * a required piece (count_min > 0) that fits nowhere or whose every
 * placement the root filters removed, or required cells no piece covers
 * (not with a goal: a partial assembly needs neither); out is filled
 * either way.  A piece that may stay out and fits nowhere is no error:
 * callers warn about it. */
typedef struct tsr_fit {
    long placements; /* on the board, every allowed orientation */
    long usable;     /* left by the root filters; -1 when not known */
} tsr_fit;
int tsr_solver_fits(const tsr_solver *s, tsr_fit *out, tsr_err *err);
/* The same without a solver: compiles the placements only (up to
 * max_images, else TSR_ETOOBIG; 0: no bound), polling `stop` (NULL: never
 * stops; TSR_ECANCELED when it asks), so a door can afford it; usable is
 * -1.  The puzzle is validated first. */
int tsr_puzzle_fits(const tsr_puzzle *pz, const tsr_options *opt, long max_images,
                    const tsr_stop *stop, tsr_fit *out, tsr_err *err);
/* The warning for piece p when it may stay out and fits nowhere (or the
 * root filters left none of its placements), into buf; false otherwise. */
bool tsr_fit_warning(const tsr_puzzle *pz, const tsr_fit *fits, int p, char *buf, size_t size);
/* {"pieces": [{"piece", "fixed", "copies": [min, max], "placements",
 * "usable" (when known)}, ...], "warnings": [...]} as JSON text (free it),
 * or NULL when out of memory. */
char *tsr_fits_json(const tsr_puzzle *pz, const tsr_fit *fits);

/* The order of the puzzle's symmetry group: board symmetries that map every
 * placement of every piece to a placement of a piece. */
int tsr_solver_group_order(const tsr_solver *s);

/* Search below a partial assembly of `nstart` image ids (0 for the whole
 * puzzle), in any order.  When the images are a node of this solver's
 * search tree (a donated task), the path to it is replayed and st->fraction
 * ends at the node's share of the tree; otherwise they are placed as given.
 * Statistics are written to *st (its arrays are allocated; free with
 * tsr_stats_free).  Returns 0, TSR_EINVAL when the start images are invalid
 * or overlap, or TSR_ENOMEM. */
int tsr_solver_run(const tsr_solver *s, const int *start, int nstart, const tsr_callbacks *cb,
                   tsr_stats *st);

/* The nodes of the search tree at `depth` pieces placed, each given to
 * cb->donate (images in the order the search places them, and weight)
 * instead of being searched: a fixed split of the tree into tasks that
 * tsr_solver_run and the pool search exactly, whatever the thread count.
 * st counts the placements above them, as a run of the whole tree counts
 * them, so st->nodes plus the tasks' nodes is the whole run's; st->fraction
 * is the weight pruned above them.  Only an exact puzzle's tree is split
 * this way: TSR_EINVAL for a loose puzzle, or a depth that reaches a
 * leaf (depth + goal >= pieces). */
int tsr_solver_split(const tsr_solver *s, int depth, const tsr_callbacks *cb, tsr_stats *st);
/* Many runs on one thread, one after another (a pool worker's tasks): a
 * runner keeps what tsr_solver_run would build and free for each run (the
 * matrix, FILA's lists, the buffers), and a run whose FILA starts from the
 * state the last one's started from (a task given away below the handoff,
 * replayed from the root) does not build FILA's lists again.
 * tsr_runner_run is tsr_solver_run on the runner; a runner serves one run
 * at a time.  tsr_runner_new returns 0 or TSR_ENOMEM. */
typedef struct tsr_runner tsr_runner;
int tsr_runner_new(const tsr_solver *s, tsr_runner **out);
int tsr_runner_run(tsr_runner *rn, const int *start, int nstart, const tsr_callbacks *cb,
                   tsr_stats *st);
void tsr_runner_free(tsr_runner *rn);

/* Monte Carlo sampling: `trials` random descents with shuffled option
 * order, each ending the first time a backtrack leaves `r` pieces to place.
 * Solutions found are reported (they may repeat across trials). */
int tsr_solver_sample(const tsr_solver *s, long trials, int r, uint64_t seed,
                      const tsr_callbacks *cb, tsr_stats *st);

void tsr_stats_free(tsr_stats *st);

/* Knuth's estimate of a whole search before running it (docs/engine.md):
 * random root-to-leaf descents making exactly the search's choices, each
 * taking one child uniformly at every node.  `nodes` estimates the run's
 * `nodes` (fits), `solutions` the solutions it reports in the solver's
 * mode; low/high are a 95% range, the solutions' high end widened where
 * the samples are heavy-tailed (solutions_high < 0: fewer than 3 samples met
 * a solution, so nothing bounds the count).  Stops after `probes` descents or
 * `max_seconds`, whichever comes first (a sample still running at twice
 * `max_seconds` is cut short and left out); the same seed and a bound
 * reached by probes give the same estimate. */
typedef struct tsr_estimate {
    double nodes, nodes_low, nodes_high;
    double solutions, solutions_low, solutions_high;
    long probes;      /* descents made */
    long samples;     /* independent estimates averaged (descents sharing a
                         path down to FILA make one) */
    long hits;        /* descents that reached a leaf reporting solutions */
    double seconds;
} tsr_estimate;

/* Returns 0, TSR_EINVAL (probes < 1 or max_seconds not positive) or
 * TSR_ENOMEM. */
int tsr_solver_estimate(const tsr_solver *s, long probes, double max_seconds, uint64_t seed,
                        tsr_estimate *out);

/* The same, asking stop(ctx) before each descent and every few thousand
 * nodes of an exhaustive tail: nonzero ends it at once with TSR_ECANCELED
 * (a caller that must not wait, such as a job being paused). */
int tsr_solver_estimate_until(const tsr_solver *s, long probes, double max_seconds, uint64_t seed,
                              int (*stop)(void *ctx), void *ctx, tsr_estimate *out);

/* This machine's speed on the search: tsr_solver_run on one thread,
 * stopped after max_seconds.  When the search ends first, complete is set
 * and nodes, solutions and seconds are the exact figures. */
typedef struct tsr_rate {
    double nodes_per_second;
    uint64_t nodes, solutions;
    double seconds;
    bool complete;
} tsr_rate;
int tsr_solver_rate(const tsr_solver *s, double max_seconds, tsr_rate *out);

/* The timing run's counts are certain: raise the estimate's low ends (and
 * the estimates) to them, or, when it finished the search, make all of
 * them the exact counts.  Call before tsr_forecast and tsr_estimate_json. */
void tsr_estimate_merge(tsr_estimate *e, const tsr_rate *r);

/* The search's time on `threads` threads, assuming they scale linearly:
 * estimated nodes over the measured rate, the range from the node range
 * (its low end at least the nodes the timing run visited, after
 * tsr_estimate_merge); the exact time over threads when the timing run
 * finished the search.  text is one
 * human line, e.g. "3h05m (2h40m to 3h30m)". */
typedef struct tsr_duration {
    double estimate, low, high; /* seconds; infinite when the rate is 0 */
    char text[112];
} tsr_duration;
void tsr_forecast(const tsr_estimate *e, const tsr_rate *r, int threads, tsr_duration *out);

/* The report as compact JSON (malloc'd, NULL when out of memory): nodes
 * and solutions {estimate, low, high}, rate, seconds per thread count (1
 * and `threads`), probes, samples, elapsed_s, exact (the timing run's
 * figures when it finished the search, else null), config.  docs/api.md
 * (POST /api/v1/estimate) documents it. */
char *tsr_estimate_json(const tsr_estimate *e, const tsr_rate *r, int threads, const char *config);

#endif
