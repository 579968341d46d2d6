/*
 * test_oracle.c - every published count in puzzles/ (the table "Published
 * counts" of puzzles/README.md names the source of each), in every mode
 * the file gives, under every engine configuration.  A puzzle file with
 * published counts that no configuration ran fails, unless it is one of
 * the long ones left to TSR_LONG; and the library must hold at least
 * PUBLISHED_FILES such files, so that losing them cannot pass silently.
 *
 * Each puzzle file carries its expected counts.  Quick puzzles run in all
 * configurations; the Tetris and Bedlam cubes, the 8x8 dominoes (13
 * million solutions) and the polyhexes' 10x4 (7 million) run with the
 * defaults only,
 * and the minutes-long ones only when TSR_LONG=1 (make check-long), which
 * also runs every configuration everywhere.  TSR_QUICK=1 (the sanitizer
 * builds) leaves the cubes out.  Loose puzzles (count ranges, optional
 * cells) run in the configurations the engine accepts for them: those that
 * ask for no filter it turns off.
 */
#include <check.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tessera.h"

#ifndef TSR_SRCDIR
#define TSR_SRCDIR "."
#endif

#define MAX_FILES 256
#define PUBLISHED_FILES 18 /* files with "expected" counts (puzzles/README.md) */

static char *files[MAX_FILES];
static int nfiles;

typedef struct config {
    const char *name;
    int fila;         /* -1 = default, -2 = all pieces (FILA from the root) */
    const char *order;
    int nof, volume, parity, fit;
    const char *redundancy;
    bool loose;       /* accepted for loose puzzles */
    int pieces;       /* E's pieces: -1 automatic, 0 off, 1 on */
    int memo;         /* FILA's memo: -1 automatic, 0 off, else its level */
} config;

static const config configs[] = {
    {"default", -1, "", -1, -1, -1, -1, "", true, -1, -1},
    {"dlx-only", 0, "", -1, -1, -1, -1, "", true, -1, -1},
    {"dlx-first-cell", 0, "f", -1, -1, -1, -1, "", true, -1, -1},
    {"fila-f", -1, "s:f=99", -1, -1, -1, -1, "", true, -1, -1},
    {"fila-e", -1, "s:e=99", -1, -1, -1, -1, "", true, -1, -1},
    {"fila-s", -1, "s:s=99", -1, -1, -1, -1, "", true, -1, -1},
    {"fila-e-nof-off", -1, "s:e=99", 0, -1, -1, -1, "", true, -1, -1},
    {"fila-f-nof-off", -1, "s:f=99", 0, -1, -1, -1, "", true, -1, -1},
    {"no-redundancy", -1, "", -1, -1, -1, -1, "off", true, -1, -1},
    {"volume-every-level", -1, "", -1, 6, -1, -1, "", false, -1, -1},
    {"volume-off", -1, "", -1, 0, -1, -1, "", true, -1, -1},
    {"parity-trigger", -1, "", -1, -1, 1, -1, "", false, -1, -1},
    {"fit-filter", -1, "", -1, -1, -1, 1, "", false, -1, -1},
    {"fila-e-pieces", -1, "s:e=99", -1, -1, -1, -1, "", false, 1, -1},
    {"no-pieces", -1, "", -1, -1, -1, -1, "", true, 0, -1},
    {"fila-f-memo-3", -1, "s:f=99", -1, -1, -1, -1, "", false, -1, 3},
    {"no-memo", -1, "", -1, -1, -1, -1, "", true, -1, 0},
};
#define NCONFIGS (int)(sizeof configs / sizeof configs[0])

static bool long_run(void) { return getenv("TSR_LONG") != NULL; }

/* Which configurations a puzzle gets outside long runs. */
static bool wanted(const char *file, int cfg, int mode)
{
    if (long_run())
        return true;
    if (strstr(file, "5x18") != NULL)
        return false;
    if (strstr(file, "tetris") != NULL || strstr(file, "bedlam") != NULL ||
        strstr(file, "dominoes-8x8") != NULL || /* 13 million solutions */
        strstr(file, "polyhexes-1234-10x4") != NULL) /* 7 million */
        return cfg == 0 && (mode == TSR_UNIQUE_ROTATIONS || strstr(file, "dominoes")) &&
               getenv("TSR_QUICK") == NULL;
    return true;
}

static int count(void *ctx, const tsr_solution *s)
{
    (void)s;
    ++*(long *)ctx;
    return 0;
}

START_TEST(published_counts)
{
    const char *file = files[_i];
    char path[1024];
    snprintf(path, sizeof path, "%s/puzzles/%s", TSR_SRCDIR, file);
    tsr_puzzle *pz = NULL;
    tsr_options base;
    tsr_err err = {{0}};
    ck_assert_msg(tsr_puzzle_load_file(path, &pz, &base, &err) == 0, "%s", err.msg);
    static const char *mode_names[] = {"raw", "rotations", "mirror"};
    int checked = 0;
    for (int mode = 0; mode < 3; mode++) {
        if (pz->expected[mode] < 0)
            continue;
        for (int c = 0; c < NCONFIGS; c++) {
            if (!wanted(file, c, mode) || (!tsr_puzzle_is_exact(pz) && !configs[c].loose))
                continue;
            const config *cf = &configs[c];
            tsr_options opt;
            tsr_options_init(&opt);
            opt.unique = (enum tsr_unique)mode;
            opt.fila = cf->fila == -2 ? 1000000 : cf->fila;
            snprintf(opt.order, sizeof opt.order, "%s", cf->order);
            opt.nof = cf->nof;
            opt.volume = cf->volume;
            opt.parity = cf->parity;
            opt.fit = cf->fit;
            opt.pieces = cf->pieces;
            opt.memo = cf->memo;
            snprintf(opt.redundancy, sizeof opt.redundancy, "%s", cf->redundancy);
            tsr_solver *s = NULL;
            int rc = tsr_solver_new(pz, &opt, &s, &err);
            ck_assert_msg(rc == 0, "%s %s: %s", file, cf->name, err.msg);
            long n = 0;
            tsr_callbacks cb = {.ctx = &n, .solution = count};
            tsr_stats st;
            ck_assert_int_eq(tsr_solver_run(s, NULL, 0, &cb, &st), 0);
            ck_assert_msg(n == pz->expected[mode] && st.solutions == (uint64_t)n,
                          "%s, %s mode, %s (%s): %ld solutions, published %lld", file,
                          mode_names[mode], cf->name, tsr_solver_config(s), n,
                          pz->expected[mode]);
            tsr_stats_free(&st);
            tsr_solver_free(s);
            checked++;
        }
    }
    bool published = false, left = false; /* left to long runs or sanitizer builds */
    for (int mode = 0; mode < 3; mode++)
        if (pz->expected[mode] >= 0) {
            published = true;
            left = left || !wanted(file, 0, mode);
        }
    tsr_puzzle_free(pz);
    ck_assert_msg(!published || checked > 0 || left,
                  "%s has published counts but no configuration checked them", file);
    if (checked > 0)
        fprintf(stderr, "%s: %d runs match the published counts\n", file, checked);
}
END_TEST

/* The library still holds the published puzzles. */
START_TEST(published_files)
{
    int n = 0;
    for (int i = 0; i < nfiles; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/puzzles/%s", TSR_SRCDIR, files[i]);
        tsr_puzzle *pz = NULL;
        tsr_err err = {{0}};
        ck_assert_msg(tsr_puzzle_load_file(path, &pz, NULL, &err) == 0, "%s", err.msg);
        n += pz->expected[0] >= 0 || pz->expected[1] >= 0 || pz->expected[2] >= 0;
        tsr_puzzle_free(pz);
    }
    ck_assert_msg(n >= PUBLISHED_FILES, "%d puzzle files carry published counts; want %d", n,
                  PUBLISHED_FILES);
}
END_TEST

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    if (getenv("TSR_SKIP_ORACLE") != NULL) { /* tests/sanitize.sh, under ThreadSanitizer */
        puts("test_oracle: skipped (TSR_SKIP_ORACLE: single-threaded, nothing for TSan)");
        return NULL;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/puzzles", TSR_SRCDIR);
    DIR *d = opendir(dir);
    if (d == NULL) {
        perror(dir);
        exit(EXIT_FAILURE);
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && nfiles < MAX_FILES) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0)
            files[nfiles++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(files, (size_t)nfiles, sizeof *files, by_name);
    Suite *s = suite_create("oracle");
    TCase *tc = tcase_create("oracle");
    tcase_set_timeout(tc, long_run() ? 36000 : 600);
    tcase_add_test(tc, published_files);
    tcase_add_loop_test(tc, published_counts, 0, nfiles);
    suite_add_tcase(s, tc);
    return s;
}
