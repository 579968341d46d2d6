/*
 * fuzz_common.h - what the two libFuzzer harnesses share: everything that
 * runs downstream of a successful parse.
 *
 * A harness parses its input with one reader, checks the reader's contract
 * (fuzz_check_read), and when the parse succeeded hands the puzzle to
 * fuzz_downstream, which
 *   1. writes it with every writer (to /dev/null or to a memory stream),
 *   2. round-trips it: tsr_write_puzzle_json -> tsr_puzzle_read_json must
 *      give back an identical puzzle, and tsr_write_polycube ->
 *      tsr_puzzle_read_polycube must give back the same free volume, piece
 *      volume and number of mobile copies; tsr_write_xmpuzzle ->
 *      tsr_puzzle_read_xmpuzzle must give back the same free and optional
 *      cells and the same mobile pieces, in order, with their counts,
 *      ranges and colours, and the same colour pairs (fixed pieces carved
 *      out of the board),
 *   3. prepares a solver (tsr_solver_new) and, for small puzzles, runs a
 *      bounded search (limit 1, stopped by the progress callback after
 *      ~10 ms); every solution the engine reports is checked (it must cover
 *      the board exactly: the text writer refuses overlaps and cells off the
 *      board) and written with the three solution writers.
 * Everything is freed before returning, so LeakSanitizer sees real leaks.
 *
 * A broken invariant prints "FUZZ INVARIANT: ..." and aborts, so libFuzzer
 * saves the input as a crash.
 */
#ifndef TESSERA_FUZZ_COMMON_H
#define TESSERA_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tessera/engine.h"
#include "tessera/puzzle.h"

/* Prepare a solver only for puzzles with at most this many free cells
 * (the image compiler is O(free cells * piece cells * orientations)). */
#ifndef FUZZ_SOLVER_MAX_FREE
#define FUZZ_SOLVER_MAX_FREE 4096
#endif
/* ... and run a search only when the puzzle has at most this many. */
#ifndef FUZZ_RUN_MAX_FREE
#define FUZZ_RUN_MAX_FREE 64
#endif
/* tsr_solver_group_order must count at least the identity.  The engine
 * returns 0 when a piece has no placement at all (see README.md, finding 1);
 * build with -DFUZZ_MIN_GROUP_ORDER=0 to fuzz past that known bug. */
#ifndef FUZZ_MIN_GROUP_ORDER
#define FUZZ_MIN_GROUP_ORDER 1
#endif
/* The root fit filter is used only for puzzles with at most this many free
 * cells (it runs inside tsr_solver_new, where nothing can stop it). */
#ifndef FUZZ_FIT_MAX_FREE
#define FUZZ_FIT_MAX_FREE 30
#endif
/* The progress callback stops the search after this long. */
#ifndef FUZZ_RUN_SECONDS
#define FUZZ_RUN_SECONDS 0.01
#endif

static FILE *fuzz_devnull;

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
static void fuzz_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("FUZZ INVARIANT: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static void fuzz_init(void)
{
    if (!fuzz_devnull) {
        fuzz_devnull = fopen("/dev/null", "w");
        if (!fuzz_devnull)
            fuzz_die("cannot open /dev/null");
    }
}

/* The reader contract of puzzle.h: 0 and a puzzle, or a negative code, no
 * puzzle and a one-line message. */
static void fuzz_check_read(const char *who, int rc, const tsr_puzzle *pz, const tsr_err *err)
{
    if (rc == 0) {
        if (!pz)
            fuzz_die("%s returned 0 without a puzzle", who);
        return;
    }
    if (pz)
        fuzz_die("%s returned %d but set *out", who, rc);
    if (rc != TSR_EINVAL && rc != TSR_ETOOBIG && rc != TSR_ENOMEM)
        fuzz_die("%s returned unexpected code %d (%s)", who, rc, tsr_strerror(rc));
    size_t n = strnlen(err->msg, sizeof err->msg);
    if (n == 0 || n == sizeof err->msg)
        fuzz_die("%s returned %d with an empty or unterminated message", who, rc);
}

/* ---- writers and round trips ---------------------------------------------- */

/* Two colour arrays of n cells: both absent, or the same colours. */
static bool fuzz_same_colors(const unsigned char *a, const unsigned char *b, int n)
{
    if (a == NULL || b == NULL)
        return a == b;
    return memcmp(a, b, (size_t)n) == 0;
}

static bool fuzz_same_puzzle(const tsr_puzzle *a, const tsr_puzzle *b)
{
    if (a->lattice != b->lattice || a->ncells != b->ncells || a->npieces != b->npieces ||
        a->rotations != b->rotations || a->mirror != b->mirror)
        return false;
    if ((a->name == NULL) != (b->name == NULL) || (a->name && strcmp(a->name, b->name) != 0))
        return false;
    if ((a->description == NULL) != (b->description == NULL) ||
        (a->description && strcmp(a->description, b->description) != 0))
        return false;
    for (int i = 0; i < 3; i++)
        if (a->expected[i] != b->expected[i])
            return false;
    if (memcmp(a->cells, b->cells, (size_t)a->ncells * sizeof *a->cells) != 0 ||
        !fuzz_same_colors(a->colors, b->colors, a->ncells))
        return false;
    for (int k = 0; k < a->npieces; k++) {
        const tsr_piece *p = &a->pieces[k], *q = &b->pieces[k];
        if (strcmp(p->name, q->name) != 0 || p->ncells != q->ncells || p->count != q->count ||
            p->fixed != q->fixed ||
            memcmp(p->cells, q->cells, (size_t)p->ncells * sizeof *p->cells) != 0 ||
            !fuzz_same_colors(p->colors, q->colors, p->ncells))
            return false;
    }
    /* the colour rules: the same pairs in the same order, the same palette */
    if (a->nallowed != b->nallowed || a->npalette != b->npalette ||
        (a->nallowed > 0 && memcmp(a->allowed, b->allowed, (size_t)a->nallowed * sizeof *a->allowed)) ||
        (a->npalette > 0 && memcmp(a->palette, b->palette, (size_t)a->npalette * sizeof *a->palette)))
        return false;
    return true;
}

static long fuzz_mobile_copies(const tsr_puzzle *pz)
{
    long n = 0;
    for (int k = 0; k < pz->npieces; k++)
        if (!pz->pieces[k].fixed)
            n += pz->pieces[k].count;
    return n;
}

static void fuzz_roundtrip_json(const tsr_puzzle *pz)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    int rc = tsr_write_puzzle_json(m, pz);
    fclose(m);
    if (rc == 0) {
        tsr_puzzle *back = NULL;
        tsr_err err = {{0}};
        int rc2 = tsr_puzzle_read_json(buf, len, "roundtrip", &back, NULL, &err);
        fuzz_check_read("tsr_puzzle_read_json(roundtrip)", rc2, back, &err);
        if (rc2 != 0)
            fuzz_die("tsr_write_puzzle_json output does not read back: %s\n--- output ---\n%.4000s",
                     err.msg, buf);
        if (!fuzz_same_puzzle(pz, back))
            fuzz_die("tsr_write_puzzle_json output reads back as a different puzzle\n"
                     "--- output ---\n%.4000s", buf);
        tsr_puzzle_free(back);
    } else if (rc != TSR_EUNSUPP) {
        /* invalid UTF-8 in a name is the only thing JSON cannot carry */
        fuzz_die("tsr_write_puzzle_json failed on a valid puzzle: %d (%s)", rc,
                 tsr_strerror(rc));
    }
    free(buf);
}

static void fuzz_roundtrip_polycube(const tsr_puzzle *pz)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    int rc = tsr_write_polycube(m, pz, NULL);
    fclose(m);
    if (rc == 0) {
        tsr_puzzle *back = NULL;
        tsr_err err = {{0}};
        int rc2 = tsr_puzzle_read_polycube(buf, len, "roundtrip", &back, &err);
        fuzz_check_read("tsr_puzzle_read_polycube(roundtrip)", rc2, back, &err);
        /* TSR_ETOOBIG is tolerated: the "*" piece filling a sparse board's
         * bounding box may exceed TSR_MAX_PIECE_CELLS (see README.md). */
        if (rc2 != 0 && rc2 != TSR_ETOOBIG)
            fuzz_die("tsr_write_polycube output does not read back: %s\n--- output ---\n%.4000s",
                     err.msg, buf);
        if (rc2 == 0) {
            if (tsr_puzzle_free_volume(pz) != tsr_puzzle_free_volume(back) ||
                tsr_puzzle_piece_volume(pz) != tsr_puzzle_piece_volume(back) ||
                fuzz_mobile_copies(pz) != fuzz_mobile_copies(back))
                fuzz_die("tsr_write_polycube output reads back as a different puzzle "
                         "(free %ld/%ld, volume %ld/%ld, copies %ld/%ld)\n--- output ---\n%.4000s",
                         tsr_puzzle_free_volume(pz), tsr_puzzle_free_volume(back),
                         tsr_puzzle_piece_volume(pz), tsr_puzzle_piece_volume(back),
                         fuzz_mobile_copies(pz), fuzz_mobile_copies(back), buf);
            bool one_sided = pz->rotations == TSR_ROT_ONE_SIDED && !pz->mirror;
            if ((back->rotations == TSR_ROT_ONE_SIDED) != one_sided)
                fuzz_die("tsr_write_polycube lost or invented oneSide");
        }
        tsr_puzzle_free(back);
    } else if (rc != TSR_EUNSUPP && rc != TSR_ETOOBIG) {
        fuzz_die("tsr_write_polycube failed on a valid puzzle: %d (%s)", rc, tsr_strerror(rc));
    }
    free(buf);
}

/* How many of the n colours (NULL: all neutral) are each colour. */
static void fuzz_color_tally(const unsigned char *col, int n, int tally[TSR_MAX_COLORS + 1])
{
    memset(tally, 0, (TSR_MAX_COLORS + 1) * sizeof *tally);
    for (int i = 0; i < n; i++)
        tally[col ? col[i] : 0]++;
}

/* The same colours, counted (a BurrTools file moves shapes to the origin). */
static bool fuzz_same_tally(const unsigned char *a, const unsigned char *b, int n)
{
    int ta[TSR_MAX_COLORS + 1], tb[TSR_MAX_COLORS + 1];
    fuzz_color_tally(a, n, ta);
    fuzz_color_tally(b, n, tb);
    return memcmp(ta, tb, sizeof ta) == 0;
}

/* What a BurrTools file keeps: the mobile pieces in order, their sizes,
 * counts, ranges and colours, the free and optional cells (fixed pieces
 * become holes), the board's colours when no fixed piece carves it, and
 * the allowed colour pairs. */
static bool fuzz_same_burrtools(const tsr_puzzle *a, const tsr_puzzle *b)
{
    if (tsr_puzzle_free_volume(a) != tsr_puzzle_free_volume(b) || a->noptional != b->noptional ||
        b->rotations != TSR_ROT_ALL || b->mirror)
        return false;
    int k = 0;
    for (int i = 0; i < a->npieces; i++) {
        const tsr_piece *p = &a->pieces[i];
        if (p->fixed)
            continue;
        if (k >= b->npieces)
            return false;
        const tsr_piece *q = &b->pieces[k++];
        if (strcmp(p->name, q->name) != 0 || p->ncells != q->ncells || p->count != q->count ||
            p->count_min != q->count_min || q->fixed ||
            !fuzz_same_tally(p->colors, q->colors, p->ncells))
            return false;
    }
    if (k != b->npieces || a->nallowed != b->nallowed ||
        (a->nallowed > 0 &&
         memcmp(a->allowed, b->allowed, (size_t)a->nallowed * sizeof *a->allowed) != 0))
        return false;
    bool carved = k != a->npieces; /* fixed pieces: the board loses cells */
    return carved || (a->ncells == b->ncells && fuzz_same_tally(a->colors, b->colors, a->ncells));
}

static void fuzz_roundtrip_xmpuzzle(const tsr_puzzle *pz)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    tsr_err err = {{0}};
    int rc = tsr_write_xmpuzzle(m, pz, pz->ncells % 2 == 0, &err); /* both kinds */
    fclose(m);
    if (rc == 0) {
        tsr_puzzle *back = NULL;
        tsr_err err2 = {{0}};
        int rc2 = tsr_puzzle_read_xmpuzzle(buf, len, "roundtrip", NULL, &back, &err2);
        fuzz_check_read("tsr_puzzle_read_xmpuzzle(roundtrip)", rc2, back, &err2);
        if (rc2 != 0)
            fuzz_die("tsr_write_xmpuzzle output does not read back: %s", err2.msg);
        if (!fuzz_same_burrtools(pz, back))
            fuzz_die("tsr_write_xmpuzzle output reads back as a different puzzle");
        tsr_puzzle_free(back);
    } else if (rc != TSR_EUNSUPP && rc != TSR_ETOOBIG) {
        fuzz_die("tsr_write_xmpuzzle failed on a valid puzzle: %d (%s)", rc, err.msg);
    } else if (len != 0 || strnlen(err.msg, sizeof err.msg) == 0) {
        fuzz_die("tsr_write_xmpuzzle refused (%d) without a message or after writing", rc);
    }
    free(buf);
}

static void fuzz_writers(const tsr_puzzle *pz)
{
    int rc = tsr_write_solution_text(fuzz_devnull, pz, NULL);
    if (rc != 0 && rc != TSR_ETOOBIG)
        fuzz_die("tsr_write_solution_text(no placements) failed: %d (%s)", rc, tsr_strerror(rc));
    rc = tsr_write_solution_json(fuzz_devnull, pz, NULL);
    if (rc != 0)
        fuzz_die("tsr_write_solution_json(no placements) failed: %d (%s)", rc, tsr_strerror(rc));
    fuzz_roundtrip_json(pz);
    fuzz_roundtrip_polycube(pz);
    fuzz_roundtrip_xmpuzzle(pz);
}

/* ---- the engine --------------------------------------------------------------- */

struct fuzz_run {
    const tsr_puzzle *pz;
    bool partial; /* goal > 0: partial assemblies are reported */
    long solutions;
    long traced;
};

/* A partial assembly written as a polycube sub-puzzle must read back as a
 * puzzle whose free cells are exactly the ones the assembly left. */
static void fuzz_partial_polycube(const tsr_puzzle *pz, const tsr_solution *s, long covered)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    int rc = tsr_write_polycube(m, pz, s);
    fclose(m);
    if (rc != 0 && rc != TSR_EUNSUPP && rc != TSR_ETOOBIG)
        fuzz_die("tsr_write_polycube refused an engine partial assembly: %d (%s)", rc,
                 tsr_strerror(rc));
    if (rc == 0) {
        tsr_puzzle *back = NULL;
        tsr_err err = {{0}};
        int rc2 = tsr_puzzle_read_polycube(buf, len, "partial", &back, &err);
        fuzz_check_read("tsr_puzzle_read_polycube(partial)", rc2, back, &err);
        if (rc2 != 0 && rc2 != TSR_ETOOBIG)
            fuzz_die("a partial assembly written by tsr_write_polycube does not read back: "
                     "%s\n--- output ---\n%.4000s", err.msg, buf);
        if (rc2 == 0 && tsr_puzzle_free_volume(back) != pz->ncells - covered)
            fuzz_die("partial assembly sub-puzzle has %ld free cells, expected %ld",
                     tsr_puzzle_free_volume(back), pz->ncells - covered);
        tsr_puzzle_free(back);
    }
    free(buf);
}

static int fuzz_on_solution(void *ctx, const tsr_solution *s)
{
    struct fuzz_run *fr = ctx;
    const tsr_puzzle *pz = fr->pz;
    fr->solutions++;
    long covered = 0;
    for (int i = 0; i < s->nplacements; i++)
        covered += s->placements[i].ncells;
    /* a solution covers every required cell and may leave optional ones */
    long required = pz->ncells - pz->noptional;
    if (fr->partial ? covered > pz->ncells : covered < required || covered > pz->ncells)
        fuzz_die("engine %s covers %ld cells of a %d-cell board (%d optional)",
                 fr->partial ? "partial assembly" : "solution", covered, pz->ncells,
                 pz->noptional);
    /* The text writer refuses unknown pieces, cells off the board and
     * overlaps with TSR_EINVAL: with the count above, a solution the text
     * writer accepts tiles the board exactly. */
    int rc = tsr_write_solution_text(fuzz_devnull, pz, s);
    if (rc != 0 && rc != TSR_ETOOBIG)
        fuzz_die("tsr_write_solution_text refused an engine solution: %d (%s)", rc,
                 tsr_strerror(rc));
    rc = tsr_write_solution_json(fuzz_devnull, pz, s);
    if (rc != 0 && rc != TSR_EUNSUPP)
        fuzz_die("tsr_write_solution_json refused an engine solution: %d (%s)", rc,
                 tsr_strerror(rc));
    if (fr->partial && covered < pz->ncells) {
        fuzz_partial_polycube(pz, s, covered);
    } else {
        rc = tsr_write_polycube(fuzz_devnull, pz, s);
        if (rc != 0 && rc != TSR_EUNSUPP && rc != TSR_ETOOBIG)
            fuzz_die("tsr_write_polycube refused an engine solution: %d (%s)", rc,
                     tsr_strerror(rc));
    }
    return 1;
}

static int fuzz_on_progress(void *ctx, const tsr_stats *st)
{
    (void)ctx;
    (void)st;
    return 1; /* first call comes after progress_seconds: stop there */
}

static void fuzz_on_trace(void *ctx, int depth, const tsr_placement *pl)
{
    struct fuzz_run *fr = ctx;
    if (depth < 0 || pl->piece < 0 || pl->piece >= fr->pz->npieces || pl->ncells < 1)
        fuzz_die("bad trace placement (depth %d, piece %d, %d cells)", depth, pl->piece,
                 pl->ncells);
    fr->traced++;
}

static void fuzz_check_stats(const tsr_stats *st, int ncopies)
{
    if (st->levels != ncopies + 1 || !st->attempts || !st->fits)
        fuzz_die("bad run statistics: %d levels for %d copies", st->levels, ncopies);
    for (int p = 0; p < st->levels; p++)
        if (st->fits[p] > st->attempts[p])
            fuzz_die("run statistics: %llu fits > %llu attempts with %d pieces left",
                     (unsigned long long)st->fits[p], (unsigned long long)st->attempts[p], p);
}

/* tsr_solver_image: ids outside 0..nimages-1 are refused; a few images in
 * range must be placements of a mobile piece with its cell count, on board
 * cells (checked by the text writer, which refuses cells off the board and
 * repeated cells with TSR_EINVAL). */
static void fuzz_check_images(const tsr_puzzle *pz, const tsr_solver *s, int nimages)
{
    static tsr_cell cells[TSR_MAX_PIECE_CELLS];
    tsr_placement pl;
    if (tsr_solver_image(s, -1, &pl, cells) != TSR_EINVAL ||
        tsr_solver_image(s, nimages, &pl, cells) != TSR_EINVAL)
        fuzz_die("tsr_solver_image accepted an id outside 0..%d", nimages - 1);
    int ids[3] = {0, nimages / 2, nimages - 1};
    for (int k = 0; k < 3 && nimages > 0; k++) {
        if (tsr_solver_image(s, ids[k], &pl, cells) != 0)
            fuzz_die("tsr_solver_image(%d) failed with %d images", ids[k], nimages);
        if (pl.piece < 0 || pl.piece >= pz->npieces || pz->pieces[pl.piece].fixed ||
            pl.ncells != pz->pieces[pl.piece].ncells || pl.cells != cells)
            fuzz_die("tsr_solver_image(%d): bad placement (piece %d, %d cells)", ids[k],
                     pl.piece, pl.ncells);
        tsr_solution one = {1, &pl};
        int rc = tsr_write_solution_text(fuzz_devnull, pz, &one);
        if (rc != 0 && rc != TSR_ETOOBIG)
            fuzz_die("tsr_solver_image(%d): piece '%s' placed off the board or on itself (%d)",
                     ids[k], pz->pieces[pl.piece].name, rc);
    }
}

/* How the engine is driven: the options (limit is forced to 1) and, when
 * sample_trials > 0, a Monte Carlo run (tsr_solver_sample) after the search. */
struct fuzz_engine_cfg {
    tsr_options opt;
    long sample_trials;
    int sample_r; /* 1 .. pieces; larger values are clamped */
    uint64_t seed;
};

static void fuzz_engine(const tsr_puzzle *pz, const struct fuzz_engine_cfg *cfg)
{
    long free_cells = tsr_puzzle_free_volume(pz);
    if (free_cells > FUZZ_SOLVER_MAX_FREE)
        return;
    tsr_options opt = cfg->opt;
    opt.limit = 1;

    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    int rc = tsr_solver_new(pz, &opt, &s, &err);
    if (rc != 0) {
        if (s)
            fuzz_die("tsr_solver_new returned %d but set *out", rc);
        return;
    }
    if (!s)
        fuzz_die("tsr_solver_new returned 0 without a solver");
    const char *config = tsr_solver_config(s);
    if (!config || strnlen(config, 1024) >= 1024)
        fuzz_die("bad solver config string");
    int ncopies = tsr_solver_ncopies(s), nimages = tsr_solver_nimages(s);
    if (nimages < 0 || ncopies != fuzz_mobile_copies(pz) ||
        tsr_solver_group_order(s) < FUZZ_MIN_GROUP_ORDER)
        fuzz_die("bad solver counts: images %d copies %d (puzzle: %ld) group %d", nimages,
                 ncopies, fuzz_mobile_copies(pz), tsr_solver_group_order(s));
    fuzz_check_images(pz, s, nimages);
    if (free_cells <= FUZZ_RUN_MAX_FREE) {
        struct fuzz_run fr = {pz, opt.goal > 0, 0, 0};
        tsr_callbacks cb = {
            .ctx = &fr,
            .solution = fuzz_on_solution,
            .progress = fuzz_on_progress,
            .progress_seconds = FUZZ_RUN_SECONDS,
            .trace = fuzz_on_trace,
        };
        tsr_stats st;
        memset(&st, 0, sizeof st);
        rc = tsr_solver_run(s, NULL, 0, &cb, &st);
        if (rc != 0 && rc != TSR_ECANCELED && rc != TSR_ENOMEM)
            fuzz_die("tsr_solver_run returned %d (%s)", rc, tsr_strerror(rc));
        if (rc == 0)
            fuzz_check_stats(&st, ncopies);
        if (fr.solutions > 1)
            fuzz_die("tsr_solver_run reported %ld solutions with limit 1", fr.solutions);
        tsr_stats_free(&st);

        if (cfg->sample_trials > 0 && ncopies > 0) {
            int r = cfg->sample_r < 1 ? 1 : cfg->sample_r > ncopies ? ncopies : cfg->sample_r;
            memset(&fr, 0, sizeof fr);
            fr.pz = pz;
            fr.partial = opt.goal > 0;
            memset(&st, 0, sizeof st);
            rc = tsr_solver_sample(s, cfg->sample_trials, r, cfg->seed, &cb, &st);
            if (rc != 0 && rc != TSR_ECANCELED && rc != TSR_ENOMEM)
                fuzz_die("tsr_solver_sample returned %d (%s)", rc, tsr_strerror(rc));
            if (rc == 0)
                fuzz_check_stats(&st, ncopies);
            tsr_stats_free(&st);
        }
    }
    tsr_solver_free(s);
}

static void fuzz_downstream(const tsr_puzzle *pz, const struct fuzz_engine_cfg *cfg)
{
    fuzz_writers(pz);
    fuzz_engine(pz, cfg);
}

#endif
