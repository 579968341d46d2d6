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
 *      volume and number of mobile copies,
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

static bool fuzz_same_puzzle(const tsr_puzzle *a, const tsr_puzzle *b)
{
    if (a->ncells != b->ncells || a->npieces != b->npieces || a->rotations != b->rotations ||
        a->mirror != b->mirror)
        return false;
    if ((a->name == NULL) != (b->name == NULL) || (a->name && strcmp(a->name, b->name) != 0))
        return false;
    if ((a->description == NULL) != (b->description == NULL) ||
        (a->description && strcmp(a->description, b->description) != 0))
        return false;
    for (int i = 0; i < 3; i++)
        if (a->expected[i] != b->expected[i])
            return false;
    if (memcmp(a->cells, b->cells, (size_t)a->ncells * sizeof *a->cells) != 0)
        return false;
    for (int k = 0; k < a->npieces; k++) {
        const tsr_piece *p = &a->pieces[k], *q = &b->pieces[k];
        if (strcmp(p->name, q->name) != 0 || p->ncells != q->ncells || p->count != q->count ||
            p->fixed != q->fixed ||
            memcmp(p->cells, q->cells, (size_t)p->ncells * sizeof *p->cells) != 0)
            return false;
    }
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
}

/* ---- the engine --------------------------------------------------------------- */

struct fuzz_run {
    const tsr_puzzle *pz;
    long solutions;
    long traced;
};

static int fuzz_on_solution(void *ctx, const tsr_solution *s)
{
    struct fuzz_run *fr = ctx;
    const tsr_puzzle *pz = fr->pz;
    fr->solutions++;
    long covered = 0;
    for (int i = 0; i < s->nplacements; i++)
        covered += s->placements[i].ncells;
    if (covered != pz->ncells)
        fuzz_die("engine solution covers %ld cells of a %d-cell board", covered, pz->ncells);
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
    rc = tsr_write_polycube(fuzz_devnull, pz, s);
    if (rc != 0 && rc != TSR_EUNSUPP && rc != TSR_ETOOBIG)
        fuzz_die("tsr_write_polycube refused an engine solution: %d (%s)", rc, tsr_strerror(rc));
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

static void fuzz_engine(const tsr_puzzle *pz, const tsr_options *parsed)
{
    long free_cells = tsr_puzzle_free_volume(pz);
    if (free_cells > FUZZ_SOLVER_MAX_FREE)
        return;
    tsr_options opt;
    if (parsed)
        opt = *parsed;
    else
        tsr_options_init(&opt);
    opt.limit = 1;
    opt.threads = 1;

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
    const char *cfg = tsr_solver_config(s);
    if (!cfg || strnlen(cfg, 1024) >= 1024)
        fuzz_die("bad solver config string");
    if (tsr_solver_nimages(s) < 0 || tsr_solver_ncopies(s) < 0 || tsr_solver_group_order(s) < 1)
        fuzz_die("bad solver counts: images %d copies %d group %d", tsr_solver_nimages(s),
                 tsr_solver_ncopies(s), tsr_solver_group_order(s));
    if (free_cells <= FUZZ_RUN_MAX_FREE) {
        struct fuzz_run fr = {pz, 0, 0};
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
        if (fr.solutions > 1)
            fuzz_die("tsr_solver_run reported %ld solutions with limit 1", fr.solutions);
        tsr_stats_free(&st);
    }
    tsr_solver_free(s);
}

static void fuzz_downstream(const tsr_puzzle *pz, const tsr_options *opt)
{
    fuzz_writers(pz);
    fuzz_engine(pz, opt);
}

#endif
