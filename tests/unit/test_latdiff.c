/*
 * test_latdiff.c - differential tests of the engine on the triangular and
 * hexagonal lattices against the independent reference in ref_lattice.c.
 *
 * Puzzles: ref_generate draws them (a board cut into random connected
 * pieces, so the cut is a solution) from fixed seeds, over every board
 * kind it has (parallelograms, regular hexagons, blobs, blobs closed under
 * a symmetry, cut halves doubled by a flip or a half turn), free, one-sided
 * and translation-only pieces, identical pieces merged into counts or
 * listed apart, count ranges, optional cells (some closed under the
 * board's symmetries), holes and fixed pieces.  A draw is redrawn when the
 * reference would pass its caps.  The cubic lattice runs a few as a
 * control (test_diff covers it).
 *
 * Engine: each puzzle in each counting mode under test_diff's list of
 * configurations (engine_configs.h: default, DLX only, FILA from the root
 * and one level below with orders e/s/f, NOF off, redundancy off and on a
 * named piece, the volume filter off / once / per level, parity trigger
 * and filter, volume trigger, fit filter, ranked and mixed orders), and
 * in the default configuration counted by classes too (classcount.h).
 * Every reported solution
 * must be a raw tiling of the reference (ref_find) and the first of its
 * class in the mode (ref_class); the number reported must be the
 * reference's count.  Loose puzzles (ranges, optional cells) skip the
 * configurations the engine refuses for them, which must refuse with an
 * error.  A mismatch prints the puzzle as C-like cell lists and the
 * configuration.  Environment: TSR_LATDIFF_COUNT=n puzzles per lattice
 * and board kind (default 36), TSR_LATDIFF_SEED to draw others.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classcount.h"
#include "engine_configs.h"
#include "ref_lattice.h"
#include "tessera/engine.h"
#include "tessera/puzzle.h"

static const char *const lattice_names[] = {"cubic", "triangular", "hexagonal"};

/* The engine's puzzle for a reference puzzle: cells copy over, pieces in
 * the same order (so a placement's piece index is the reference's). */
static tsr_puzzle *to_tessera(const ref_puzzle *rp)
{
    tsr_puzzle *pz = tsr_puzzle_new();
    ck_assert_ptr_nonnull(pz);
    pz->lattice = (enum tsr_lattice)rp->lattice; /* the enums agree: cubic, triangular, hexagonal */
    pz->rotations = rp->motion == REF_FREE        ? TSR_ROT_ALL
                    : rp->motion == REF_ONE_SIDED ? TSR_ROT_ONE_SIDED
                                                  : TSR_ROT_NONE;
    pz->mirror = rp->mirror;
    for (int i = 0; i < rp->nboard; i++)
        ck_assert_int_eq(tsr_puzzle_add_board_cell(pz, (tsr_cell){rp->board[i].x, rp->board[i].y,
                                                                   rp->board[i].z}), 0);
    for (int i = 0; i < rp->noptional; i++)
        ck_assert_int_eq(tsr_puzzle_add_optional_cell(pz, (tsr_cell){rp->optional[i].x,
                                                                      rp->optional[i].y,
                                                                      rp->optional[i].z}), 0);
    for (int p = 0; p < rp->npieces; p++) {
        const ref_piece *q = &rp->pieces[p];
        tsr_cell c[REF_MAXPC];
        for (int i = 0; i < q->ncells; i++)
            c[i] = (tsr_cell){q->cells[i].x, q->cells[i].y, q->cells[i].z};
        char name[16];
        snprintf(name, sizeof name, "P%d", p);
        int idx = tsr_puzzle_add_piece(pz, name, c, q->ncells, q->fixed ? 1 : q->max, q->fixed);
        ck_assert_int_eq(idx, p);
        if (!q->fixed)
            pz->pieces[p].count_min = q->min;
    }
    return pz;
}

static void print_puzzle(const ref_puzzle *rp)
{
    fprintf(stderr, "lattice %s, motion %d, mirror %d\nboard:", lattice_names[rp->lattice],
            (int)rp->motion, rp->mirror);
    for (int i = 0; i < rp->nboard; i++)
        fprintf(stderr, " [%d,%d,%d]", rp->board[i].x, rp->board[i].y, rp->board[i].z);
    fprintf(stderr, "\noptional:");
    for (int i = 0; i < rp->noptional; i++)
        fprintf(stderr, " [%d,%d,%d]", rp->optional[i].x, rp->optional[i].y, rp->optional[i].z);
    fprintf(stderr, "\n");
    for (int p = 0; p < rp->npieces; p++) {
        const ref_piece *q = &rp->pieces[p];
        fprintf(stderr, "piece P%d %s[%d,%d]:", p, q->fixed ? "fixed " : "", q->min, q->max);
        for (int i = 0; i < q->ncells; i++)
            fprintf(stderr, " [%d,%d,%d]", q->cells[i].x, q->cells[i].y, q->cells[i].z);
        fprintf(stderr, "\n");
    }
}

typedef struct check_ctx {
    const ref_puzzle *rp;
    const ref_result *R;
    enum ref_mode mode;
    unsigned char *seen; /* per tiling: its class was reported */
    long long n;
    char err[256];
} check_ctx;

static int on_solution(void *ctx, const tsr_solution *s)
{
    check_ctx *c = ctx;
    const ref_puzzle *rp = c->rp;
    int owner[REF_MAXB], piece_of[REF_MAXB];
    for (int i = 0; i < rp->nboard; i++)
        owner[i] = -1;
    if (s->nplacements > REF_MAXB) {
        snprintf(c->err, sizeof c->err, "%d placements", s->nplacements);
        return 1;
    }
    for (int k = 0; k < s->nplacements; k++) {
        const tsr_placement *pl = &s->placements[k];
        piece_of[k] = pl->piece;
        for (int j = 0; j < pl->ncells; j++) {
            int i = 0;
            while (i < rp->nboard &&
                   (rp->board[i].x != pl->cells[j].x || rp->board[i].y != pl->cells[j].y ||
                    rp->board[i].z != pl->cells[j].z))
                i++;
            if (i == rp->nboard || owner[i] >= 0) {
                snprintf(c->err, sizeof c->err, "solution %lld: a cell off the board or covered twice",
                         c->n + 1);
                return 1;
            }
            owner[i] = k;
        }
    }
    long t = ref_find(c->R, owner, piece_of);
    if (t < 0) {
        snprintf(c->err, sizeof c->err, "solution %lld is no tiling of the reference", c->n + 1);
        return 1;
    }
    long cls = ref_class(c->R, t, c->mode);
    if (c->seen[cls]) {
        snprintf(c->err, sizeof c->err, "solution %lld: its class (tiling %ld) was reported before",
                 c->n + 1, cls);
        return 1;
    }
    c->seen[cls] = 1;
    c->n++;
    return 0;
}

/* Options for configuration k in mode m (engine_configs.h); false when it
 * does not apply (FILA below the first piece with one copy, a named
 * redundancy filter with no piece of one copy).  RED_FIRST and RED_LAST
 * name the first and the last mobile piece of one copy. */
static bool make_options(int k, tsr_puzzle *pz, int m, tsr_options *o, char *desc, size_t size)
{
    const cfg *c = &configs[k];
    int copies = 0, first = -1, last = -1;
    for (int p = 0; p < pz->npieces; p++) {
        if (pz->pieces[p].fixed)
            continue;
        copies += pz->pieces[p].count;
        if (pz->pieces[p].count == 1) {
            first = first < 0 ? p : first;
            last = p;
        }
    }
    if (c->fila == FILA_P1 && copies < 1)
        return false;
    const char *piece = NULL;
    if (c->red == RED_FIRST || c->red == RED_LAST) {
        if (first < 0)
            return false;
        piece = pz->pieces[c->red == RED_FIRST ? first : last].name;
    }
    cfg_options(c, copies, (enum tsr_unique)m, piece, o, desc, size);
    return true;
}

/* The nodes of configuration TABLE_ON (FILA from the root in the first
 * hole's order, the two-piece table forced on) and of TABLE_OFF (the same
 * without it) over a lattice's puzzles: the table must have removed some,
 * or it was never exercised. */
static unsigned long long table_nodes[2];

static bool is_table_cfg(const cfg *c, int pairs)
{
    return c->fila == FILA_P && c->order && strcmp(c->order, "f") == 0 && c->nof == KEEP &&
           c->volume == KEEP && c->parity == KEEP && c->vtrigger == KEEP && c->pfilter == KEEP &&
           c->fit == KEEP && c->red == RED_AUTO && c->pairs == pairs && c->pieces == KEEP &&
           c->memo == KEEP;
}

/* Run every configuration in every mode; returns the number of failures. */
static int check_puzzle(const ref_puzzle *rp, const ref_result *R, const char *what)
{
    tsr_puzzle *pz = to_tessera(rp);
    tsr_err err = {""};
    ck_assert_msg(tsr_puzzle_validate(pz, what, &err) == 0, "%s", err.msg);
    bool loose = !tsr_puzzle_is_exact(pz);
    long nt = ref_ntilings(R);
    unsigned char *seen = malloc((size_t)nt + 1);
    ck_assert_ptr_nonnull(seen);
    int fails = 0;
    for (int m = 0; m < 3; m++)
        for (int k = 0; k < NCONFIG; k++) {
            tsr_options o;
            char desc[256], msg[512] = "";
            if (!make_options(k, pz, m, &o, desc, sizeof desc))
                continue;
            tsr_solver *sv = NULL;
            int rc = tsr_solver_new(pz, &o, &sv, &err);
            if (loose && !cfg_loose_ok(&o)) {
                if (rc == 0) /* the engine may run it after all: then it must count right */
                    goto run;
                tsr_solver_free(sv);
                continue;
            }
            if (rc != 0) {
                snprintf(msg, sizeof msg, "tsr_solver_new failed (%d): %s", rc, err.msg);
                goto report;
            }
        run:
            memset(seen, 0, (size_t)nt + 1);
            check_ctx cc = {rp, R, (enum ref_mode)m, seen, 0, ""};
            tsr_callbacks cb = {0};
            cb.ctx = &cc;
            cb.solution = on_solution;
            tsr_stats st;
            rc = tsr_solver_run(sv, NULL, 0, &cb, &st);
            if (rc != 0)
                snprintf(msg, sizeof msg, "tsr_solver_run returned %d", rc);
            else if (cc.err[0])
                snprintf(msg, sizeof msg, "%s", cc.err);
            else if (cc.n != ref_count(R, (enum ref_mode)m))
                snprintf(msg, sizeof msg, "expected %lld solutions, got %lld",
                         ref_count(R, (enum ref_mode)m), cc.n);
            else if (st.solutions != (uint64_t)cc.n)
                snprintf(msg, sizeof msg, "stats.solutions %llu, callbacks %lld",
                         (unsigned long long)st.solutions, cc.n);
            for (int on = 0; on < 2; on++)
                if (is_table_cfg(&configs[k], on ? 1 : KEEP) && !loose)
                    table_nodes[on] += st.nodes;
            unsigned long long classes = 0;
            long long byclass = k == 0 && !msg[0] ? classcount_run(sv, &classes) : cc.n;
            if (byclass != cc.n)
                snprintf(msg, sizeof msg, "counted by classes: %lld solutions, listed: %lld",
                         byclass, cc.n);
            if (msg[0])
                snprintf(desc + strlen(desc), sizeof desc - strlen(desc), " [%s]",
                         tsr_solver_config(sv));
            tsr_stats_free(&st);
            tsr_solver_free(sv);
        report:
            if (msg[0]) {
                if (fails == 0) {
                    fprintf(stderr, "\n=== MISMATCH on %s, raw/rotations/mirror %lld/%lld/%lld:\n",
                            what, ref_count(R, REF_RAW), ref_count(R, REF_ROTATIONS),
                            ref_count(R, REF_MIRROR));
                    print_puzzle(rp);
                }
                if (fails < 6)
                    fprintf(stderr, "  %s: %s\n", desc, msg);
                fails++;
            }
        }
    free(seen);
    tsr_puzzle_free(pz);
    return fails;
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

/* One lattice (the loop index), every board kind. */
START_TEST(lattice)
{
    static const enum ref_lattice lat[] = {REF_TRIANGULAR, REF_HEXAGONAL, REF_CUBIC};
    enum ref_lattice L = lat[_i];
    int per_kind = (int)env_long("TSR_LATDIFF_COUNT", L == REF_CUBIC ? 6 : 36);
    uint64_t seed0 = (uint64_t)env_long("TSR_LATDIFF_SEED", 0);
    table_nodes[0] = table_nodes[1] = 0;
    int done = 0, failed = 0, bad = 0, sym = 0, loose = 0, fixed = 0;
    long long total[3] = {0, 0, 0};
    for (int kind = 0; kind < REF_BOARD_KINDS; kind++)
        for (int k = 0, made = 0; made < per_kind && k < 40 * per_kind; k++) {
            uint64_t seed = seed0 * 1000003u + (uint64_t)L * 100000u + (uint64_t)kind * 10000u +
                            (uint64_t)k;
            ref_gen_opts o = {
                .lattice = L,
                .board = (enum ref_board_kind)kind,
                .min_cells = 6,
                .max_cells = kind == REF_BOARD_HEXAGON ? 24 : 20 + k % 8,
                .min_piece = 2 + k % 3,
                .max_piece = 4 + k % 3,
                .motion = (enum ref_motion)(k % 5 == 4 ? REF_NONE : k % 5 >= 2 ? REF_ONE_SIDED
                                                                                : REF_FREE),
                .mirror = k % 7 == 3,
                .holes = k % 6 == 1 ? 2 : 0,
                .merge = k % 3 != 0,
                .ranges = k % 6 == 5,
                .optional = k % 8 == 2 || k % 8 == 5 ? 2 : 0,
                .optional_symmetric = k % 8 == 5,
                .fixed = k % 9 == 4 ? 1 + k % 2 : 0,
            };
            static ref_gen g;
            ref_generate(seed, &o, &g);
            int mobile = 0;
            for (int p = 0; p < g.pz.npieces; p++)
                mobile += !g.pz.pieces[p].fixed;
            if (mobile == 0)
                continue; /* Tessera wants a piece to place */
            ref_result *R = ref_solve(&g.pz, 3000, 300000LL);
            if (R == NULL || !ref_complete(R)) {
                ref_free(R);
                continue;
            }
            char what[128];
            snprintf(what, sizeof what, "%s kind %d #%d (seed %llu)", lattice_names[L], kind, k,
                     (unsigned long long)seed);
            int f = check_puzzle(&g.pz, R, what);
            bad += f;
            failed += f > 0;
            for (int m = 0; m < 3; m++)
                total[m] += ref_count(R, (enum ref_mode)m);
            sym += ref_count(R, REF_MIRROR) < ref_count(R, REF_RAW);
            loose += g.pz.noptional > 0 || o.ranges;
            for (int p = 0; p < g.pz.npieces; p++)
                if (g.pz.pieces[p].fixed) {
                    fixed++;
                    break;
                }
            ref_free(R);
            done++;
            made++;
        }
    fprintf(stderr,
            "%s: %d puzzles (%d with classes joined by symmetry, %d loose, %d with fixed pieces), "
            "%lld/%lld/%lld raw/rotations/mirror solutions, %d failing\n",
            lattice_names[L], done, sym, loose, fixed, total[0], total[1], total[2], failed);
    fprintf(stderr, "%s: FILA in order from the root: %llu nodes, %llu with the two-piece table\n",
            lattice_names[L], table_nodes[0], table_nodes[1]);
    ck_assert_msg(bad == 0, "%s: %d mismatches on %d puzzles (see stderr)", lattice_names[L], bad,
                  failed);
    ck_assert_msg(table_nodes[1] > 0 && table_nodes[1] < table_nodes[0],
                  "%s: the two-piece table removed no node (%llu against %llu)", lattice_names[L],
                  table_nodes[1], table_nodes[0]);
    ck_assert_int_ge(done, per_kind * REF_BOARD_KINDS * 3 / 4);
}
END_TEST

Suite *test_suite(void);

Suite *test_suite(void)
{
    Suite *s = suite_create("latdiff");
    TCase *tc = tcase_create("random");
    tcase_set_timeout(tc, 900);
    tcase_add_loop_test(tc, lattice, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}
