/*
 * test_store.c - the SQLite job store (src/store) on real files.
 *
 * Every test makes its own directory with mkdtemp (under $TMPDIR or /tmp)
 * and removes it at the end; nothing uses :memory:.  The tests cover the job
 * calls and their rules (paging, the state filter, final states, what may be
 * deleted), reopening, the schema version and identity checks, the caps,
 * checkpoint atomicity (a checkpoint that fails half way leaves the previous
 * one intact), class records and their chunks (paging across chunks, CRC-32
 * check values that catch a changed byte or a chunk in the wrong place),
 * exact frontier round trips and the in-place upgrade of a schema 1 file,
 * and sto_check: on damaged files (every page zeroed in turn, a header
 * field out of range, a garbled header: each found as damage, never a
 * crash nor an unreadable file), and on each invariant broken the way it
 * happens (two writers checkpointing one job, a frontier that lost a
 * task, ...) beside sound jobs of every shape, which it must not name.
 *
 * Two tests exercise what the daemon depends on most:
 *   crash safety - a child process writes checkpoints in a loop, each one a
 *     numbered "generation" g: a frontier of TASKS(g) tasks whose first image
 *     is g, SOLS(g) new classes (g, j) of j + 1 solutions each, and progress
 *     nodes = g.  The parent kills it with SIGKILL at random moments
 *     (30 times; sometimes while it is still opening the file, mostly a few
 *     milliseconds into its checkpoints), then checks PRAGMA integrity_check
 *     and that what is stored is exactly generation g for one g: the
 *     frontier, the solution set, the solution count and the progress agree,
 *     and g is the last generation the child reported committed, or the one
 *     after it (committed, killed before reporting).
 *   two connections - a writer thread checkpoints generations while the main
 *     thread reads through its own connection; every read sees one whole
 *     generation and generations never go backwards.
 *
 * Each test case runs in its own process (check's default) under a timeout.
 * The random seed is printed in failure messages; TSR_STORE_SEED=S repeats a
 * run.  A failing test leaves its directory behind for inspection.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store_impl.h" /* sto_chunk_crc */
#include "tessera/error.h"

#define ENGINE 3 /* the engine version the tests claim */

/* ---- temporary directories ------------------------------------------------- */
typedef struct tmp {
    char dir[512];
    char path[600]; /* dir/store.db */
} tmp;

static void tmp_make(tmp *t)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    snprintf(t->dir, sizeof t->dir, "%s/tsr-store-XXXXXX", base);
    ck_assert_msg(mkdtemp(t->dir) != NULL, "mkdtemp %s: %s", t->dir, strerror(errno));
    snprintf(t->path, sizeof t->path, "%s/store.db", t->dir);
}

static void tmp_remove(tmp *t)
{
    DIR *d = opendir(t->dir);
    if (d == NULL)
        return;
    struct dirent *e;
    char p[1200];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", t->dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(t->dir);
}

static sto_db *open_ok(const char *path)
{
    sto_db *db = NULL;
    tsr_err err = {""};
    int r = sto_open(path, ENGINE, &db, &err);
    ck_assert_msg(r == 0, "sto_open: %d %s", r, err.msg);
    return db;
}

/* Run SQL on a raw connection (no store code), returning the first column of
 * the first row as an integer (or the text into `text` when given). */
static long long raw_query(const char *path, const char *sql, char *text, size_t tlen)
{
    sqlite3 *db;
    ck_assert(sqlite3_open(path, &db) == SQLITE_OK);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    long long v = -1;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
        if (text != NULL) {
            const char *t = (const char *)sqlite3_column_text(st, 0);
            snprintf(text, tlen, "%s", t != NULL ? t : "(null)");
        }
    } else {
        ck_assert_msg(rc == SQLITE_DONE, "%s: %s", sql, sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    ck_assert(sqlite3_open(path, &db) == SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, msg != NULL ? msg : "?");
    sqlite3_close(db);
}

static int64_t create_ok(sto_db *db, const char *puzzle, int priority)
{
    int64_t id = 0;
    tsr_err err = {""};
    int r = sto_job_create(db, puzzle, "{\"unique\":\"raw\"}", priority, &id, NULL, &err);
    ck_assert_msg(r == 0, "create: %s", err.msg);
    return id;
}

static void set_state_ok(sto_db *db, int64_t id, enum sto_state st, const char *error)
{
    tsr_err err = {""};
    int r = sto_job_set_state(db, id, st, error, &err);
    ck_assert_msg(r == 0, "set_state: %s", err.msg);
}

/* ---- generations: the checkpoints the crash and concurrency tests write ----- */
#define GEN_TASKS(g) (20 + (int)((g) % 37))
#define GEN_IMAGES 48
#define GEN_SOLS(g) ((int)((g) % 5))

/* Generation g stores GEN_SOLS(g) classes: class (g, j) has ids {j, 100 + g}
 * and stands for j + 1 solutions. */
static int64_t gen_expected(int64_t g)
{
    int64_t n = 0;
    for (int64_t h = 1; h <= g; h++)
        for (int j = 0; j < GEN_SOLS(h); j++)
            n += j + 1;
    return n;
}

typedef struct gen_buf {
    sto_task tasks[20 + 37];
    int images[(20 + 37) * GEN_IMAGES];
} gen_buf;

/* Write generation g as one checkpoint. */
static int gen_write(sto_db *db, int64_t job, int64_t g, gen_buf *b, tsr_err *err)
{
    int nt = GEN_TASKS(g);
    for (int t = 0; t < nt; t++) {
        int *im = &b->images[t * GEN_IMAGES];
        im[0] = (int)g;
        im[1] = t;
        for (int k = 2; k < GEN_IMAGES; k++)
            im[k] = (int)(g * 7919 + t * 31 + k);
        b->tasks[t] = (sto_task){GEN_IMAGES, im, 1.0 / nt};
    }
    sto_found batch = {0};
    for (int j = 0; j < GEN_SOLS(g); j++) {
        int ids[2] = {j, 100 + (int)g};
        ck_assert_int_eq(sto_found_add(&batch, ids, 2, j + 1, j + 1), 0);
    }
    sto_progress p = {(uint64_t)g, (double)g / 1e6, (double)g * 0.5, "{\"gen\":1}", NULL, 0};
    int r = sto_checkpoint(db, job, b->tasks, nt, &batch, &p, NULL, err);
    sto_found_free(&batch);
    return r;
}

/* The generation of a loaded frontier, or -1 when it is not one whole
 * generation. */
static int64_t frontier_generation(const sto_task *t, int n)
{
    if (n < 1)
        return -1;
    int64_t g = t[0].nimages > 0 ? t[0].images[0] : -1;
    if (g < 0 || n != GEN_TASKS(g))
        return -1;
    for (int i = 0; i < n; i++) {
        if (t[i].nimages != GEN_IMAGES || t[i].images[0] != g || t[i].images[1] != i ||
            t[i].weight != 1.0 / n)
            return -1;
        for (int k = 2; k < GEN_IMAGES; k++)
            if (t[i].images[k] != (int)(g * 7919 + i * 31 + k))
                return -1;
    }
    return g;
}

/* Check that the stored classes are exactly those of generations 1..g, in
 * order, numbering solutions 1..gen_expected(g) without gap, read in pages
 * of 7 solutions (so classes straddle pages). */
static void check_solutions_of(sto_db *db, int64_t job, int64_t g, const char *what)
{
    tsr_err err = {""};
    int64_t h = 1, want_first = 1, after = 0;
    int j = 0;
    while (h <= g && GEN_SOLS(h) == 0)
        h++;
    for (;;) {
        sto_classes c;
        int r = sto_classes_read(db, job, after, 7, &c, &err);
        ck_assert_msg(r == 0, "%s: read: %s", what, err.msg);
        if (c.n == 0) {
            sto_classes_free(&c);
            break;
        }
        for (int i = 0; i < c.n; i++) {
            if (c.first[i] < want_first) /* the straddling class seen before */
                continue;
            ck_assert_msg(h <= g, "%s: a class past generation %lld", what, (long long)g);
            ck_assert_msg(c.first[i] == want_first && c.count[i] == j + 1 &&
                              c.start[i + 1] - c.start[i] == 2 && c.ids[c.start[i]] == j &&
                              c.ids[c.start[i] + 1] == 100 + h,
                          "%s: class at %lld is not (%lld, %d)", what, (long long)c.first[i],
                          (long long)h, j);
            want_first += j + 1;
            if (++j == GEN_SOLS(h)) {
                j = 0;
                do
                    h++;
                while (h <= g && GEN_SOLS(h) == 0);
            }
        }
        after += 7;
        sto_classes_free(&c);
    }
    ck_assert_msg(h > g && want_first - 1 == gen_expected(g),
                  "%s: %lld solutions stored, generation %lld implies %lld", what,
                  (long long)(want_first - 1), (long long)g, (long long)gen_expected(g));
    sto_job jb = {0};
    ck_assert(sto_job_get(db, job, &jb, &err) == 0);
    ck_assert_int_eq(jb.stored, gen_expected(g));
    ck_assert_int_eq(jb.solutions, gen_expected(g));
    sto_job_clear(&jb);
}

/* A batch of n classes: ids {base + i, base + i + 1000}, count i % 3 + 1. */
static void batch_of(sto_found *b, int n, int base)
{
    *b = (sto_found){0};
    for (int i = 0; i < n; i++) {
        int ids[2] = {base + i, base + i + 1000};
        ck_assert_int_eq(sto_found_add(b, ids, 2, i % 3 + 1, i % 3 + 1), 0);
    }
}

/* ---- random numbers ------------------------------------------------------------ */
static uint64_t rng_state;

static void rng_seed(void)
{
    const char *e = getenv("TSR_STORE_SEED");
    rng_state = e != NULL ? strtoull(e, NULL, 10)
                          : ((uint64_t)time(NULL) * 2654435761u) ^ (uint64_t)getpid();
    if (rng_state == 0)
        rng_state = 1;
}

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- states ------------------------------------------------------------------------ */
START_TEST(state_names)
{
    for (int i = STO_QUEUED; i <= STO_FAILED; i++) {
        enum sto_state st;
        ck_assert_int_eq(sto_state_parse(sto_state_name((enum sto_state)i), &st), 0);
        ck_assert_int_eq((int)st, i);
    }
    enum sto_state st;
    ck_assert_int_eq(sto_state_parse("Running", &st), TSR_EINVAL);
    ck_assert_int_eq(sto_state_parse(NULL, &st), TSR_EINVAL);
    ck_assert_str_eq(sto_state_name((enum sto_state)42), "unknown");
    ck_assert(!sto_state_final(STO_PAUSED) && sto_state_final(STO_CANCELLED));
}
END_TEST

/* ---- jobs ---------------------------------------------------------------------------- */
START_TEST(job_create_get_list)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t ids[7];
    char doc[64];
    for (int i = 0; i < 7; i++) {
        snprintf(doc, sizeof doc, "{\"name\":\"p%d\"}", i);
        ids[i] = create_ok(db, doc, i % 3);
        ck_assert(i == 0 || ids[i] > ids[i - 1]);
    }
    int64_t id0 = 0, created0 = 0;
    ck_assert_int_eq(sto_job_create(db, "{}", NULL, -5, &id0, &created0, &err), 0);
    { /* the creation time handed back is the one stored (a restart reads it) */
        sto_job k;
        ck_assert_int_eq(sto_job_get(db, id0, &k, &err), 0);
        ck_assert(created0 > 1600000000 && k.created == created0);
        sto_job_clear(&k);
    }

    sto_job j;
    ck_assert_int_eq(sto_job_get(db, ids[4], &j, &err), 0);
    ck_assert(j.id == ids[4] && j.state == STO_QUEUED && j.priority == 1);
    ck_assert_int_eq(j.engine_version, ENGINE);
    ck_assert_str_eq(j.puzzle, "{\"name\":\"p4\"}");
    ck_assert_str_eq(j.options, "{\"unique\":\"raw\"}");
    ck_assert(j.error == NULL && j.stats == NULL);
    ck_assert(j.solutions == 0 && j.nodes == 0 && j.fraction == 0 && j.seconds == 0);
    ck_assert(j.created > 1600000000 && j.updated == j.created);
    sto_job_clear(&j);
    ck_assert(j.puzzle == NULL);
    sto_job_clear(&j); /* clearing twice is fine */
    ck_assert_int_eq(sto_job_get(db, id0, &j, &err), 0);
    ck_assert_str_eq(j.options, "{}");
    ck_assert_int_eq(j.priority, -5);
    sto_job_clear(&j);

    ck_assert_int_eq(sto_job_get(db, 999, &j, &err), TSR_EINVAL);
    ck_assert_str_eq(err.msg, "store: no job 999");

    /* Paging: 3 + 3 + 2, in id order, without the documents. */
    sto_job *page;
    int n, total = 0;
    int64_t after = 0;
    for (int p = 0; p < 4; p++) {
        ck_assert_int_eq(sto_job_list(db, NULL, after, 3, &page, &n, &err), 0);
        ck_assert_int_eq(n, p < 2 ? 3 : p == 2 ? 2 : 0);
        for (int i = 0; i < n; i++) {
            ck_assert(page[i].id > after);
            ck_assert(page[i].puzzle == NULL && page[i].options == NULL);
            after = page[i].id;
            total++;
        }
        sto_jobs_free(page, n);
    }
    ck_assert_int_eq(total, 8);

    /* The state filter. */
    set_state_ok(db, ids[1], STO_RUNNING, NULL);
    set_state_ok(db, ids[5], STO_RUNNING, NULL);
    set_state_ok(db, ids[6], STO_FAILED, "out of memory in worker 3");
    enum sto_state f = STO_RUNNING;
    ck_assert_int_eq(sto_job_list(db, &f, 0, 10, &page, &n, &err), 0);
    ck_assert_int_eq(n, 2);
    ck_assert(page[0].id == ids[1] && page[1].id == ids[5] && page[1].state == STO_RUNNING);
    sto_jobs_free(page, n);
    ck_assert_int_eq(sto_job_list(db, &f, ids[1], 10, &page, &n, &err), 0);
    ck_assert(n == 1 && page[0].id == ids[5]);
    sto_jobs_free(page, n);
    f = STO_FAILED;
    ck_assert_int_eq(sto_job_list(db, &f, 0, 10, &page, &n, &err), 0);
    ck_assert(n == 1 && page[0].id == ids[6]);
    ck_assert_str_eq(page[0].error, "out of memory in worker 3");
    sto_jobs_free(page, n);
    f = STO_PAUSED;
    ck_assert_int_eq(sto_job_list(db, &f, 0, 10, &page, &n, &err), 0);
    ck_assert(n == 0 && page == NULL);

    /* Bad pages and filters. */
    ck_assert_int_eq(sto_job_list(db, NULL, 0, 0, &page, &n, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_job_list(db, NULL, 0, STO_MAX_PAGE + 1, &page, &n, &err), TSR_EINVAL);
    ck_assert(strstr(err.msg, "page size") != NULL);
    f = (enum sto_state)17;
    ck_assert_int_eq(sto_job_list(db, &f, 0, 10, &page, &n, &err), TSR_EINVAL);

    /* Unfinished: queued, running, paused; priority first, then age. */
    set_state_ok(db, ids[2], STO_PAUSED, NULL);
    set_state_ok(db, ids[3], STO_COMPLETED, NULL);
    int64_t *un;
    ck_assert_int_eq(sto_jobs_unfinished(db, &un, &n, &err), 0);
    /* priorities: ids[0]=0 [1]=1 [2]=2 [4]=1 [5]=2, id0=-5; [3] done, [6] failed */
    int64_t want[] = {ids[2], ids[5], ids[1], ids[4], ids[0], id0};
    ck_assert_int_eq(n, 6);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(un[i] == want[i], "unfinished[%d] = %lld", i, (long long)un[i]);
    free(un);

    sto_close(db);
    tmp_remove(&t);
}
END_TEST

START_TEST(job_state_rules)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t a = create_ok(db, "{}", 0), b = create_ok(db, "{}", 0);
    /* options can be replaced while the job is live */
    ck_assert_int_eq(sto_job_set_options(db, b, "{\"unique\":\"raw\"}", &err), 0);
    sto_job jb;
    ck_assert_int_eq(sto_job_get(db, b, &jb, &err), 0);
    ck_assert_str_eq(jb.options, "{\"unique\":\"raw\"}");
    sto_job_clear(&jb);
    ck_assert_int_eq(sto_job_set_options(db, 999, "{}", &err), TSR_EINVAL);
    set_state_ok(db, a, STO_RUNNING, NULL);
    set_state_ok(db, a, STO_PAUSED, "paused by operator");
    set_state_ok(db, a, STO_RUNNING, NULL);
    sto_job j;
    ck_assert_int_eq(sto_job_get(db, a, &j, &err), 0);
    ck_assert(j.state == STO_RUNNING && j.error == NULL); /* NULL clears the text */
    sto_job_clear(&j);

    /* A frontier is dropped when the job reaches a final state. */
    int im[2] = {1, 2};
    sto_task task = {2, im, 0.5};
    ck_assert_int_eq(sto_checkpoint(db, a, &task, 1, NULL, NULL, NULL, &err), 0);
    set_state_ok(db, a, STO_COMPLETED, NULL);
    sto_task *tasks;
    int n;
    ck_assert_int_eq(sto_frontier_load(db, a, &tasks, &n, &err), 0);
    ck_assert(n == 0 && tasks == NULL);

    /* Final states are final; repeating one is a no-op. */
    ck_assert_int_eq(sto_job_set_state(db, a, STO_RUNNING, NULL, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "completed, which is final") != NULL, "%s", err.msg);
    ck_assert_int_eq(sto_job_set_state(db, a, STO_COMPLETED, NULL, &err), 0);
    ck_assert_int_eq(sto_job_set_state(db, a, STO_FAILED, "x", &err), TSR_EINVAL);
    ck_assert_int_eq(sto_job_set_state(db, 12345, STO_RUNNING, NULL, &err), TSR_EINVAL);
    ck_assert_str_eq(err.msg, "store: set state of job 12345: no job 12345");
    ck_assert_int_eq(sto_job_set_state(db, b, (enum sto_state)-1, NULL, &err), TSR_EINVAL);

    /* A final job takes no checkpoint; one of another engine version neither. */
    ck_assert_int_eq(sto_checkpoint(db, a, &task, 1, NULL, NULL, NULL, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "takes no more checkpoints") != NULL, "%s", err.msg);
    sto_db *other;
    ck_assert_int_eq(sto_open(t.path, ENGINE + 1, &other, &err), 0);
    ck_assert_int_eq(sto_checkpoint(other, b, &task, 1, NULL, NULL, NULL, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "engine version 3, this is version 4") != NULL, "%s", err.msg);
    sto_close(other);
    /* A final state and a frontier together are a contradiction. */
    enum sto_state done = STO_COMPLETED;
    ck_assert_int_eq(sto_checkpoint(db, b, &task, 1, NULL, NULL, &done, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_checkpoint(db, b, NULL, 0, NULL, NULL, &done, &err), 0);
    ck_assert_int_eq(sto_job_get(db, b, &j, &err), 0);
    ck_assert(j.state == STO_COMPLETED);
    sto_job_clear(&j);
    sto_close(db);
    tmp_remove(&t);
}
END_TEST

START_TEST(job_delete_rules)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t ids[4];
    for (int i = 0; i < 4; i++)
        ids[i] = create_ok(db, "{}", 0);
    int im[3] = {7, 8, 9};
    sto_task task = {3, im, 1};
    sto_found sol;
    batch_of(&sol, 2, 0);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(sto_checkpoint(db, ids[i], &task, 1, &sol, NULL, NULL, &err), 0);
    sto_found_free(&sol);

    ck_assert_int_eq(sto_job_delete(db, ids[0], &err), TSR_EINVAL); /* queued */
    ck_assert_msg(strstr(err.msg, "the job is queued; only completed") != NULL, "%s", err.msg);
    set_state_ok(db, ids[0], STO_RUNNING, NULL);
    ck_assert_int_eq(sto_job_delete(db, ids[0], &err), TSR_EINVAL);
    set_state_ok(db, ids[0], STO_PAUSED, NULL);
    ck_assert_int_eq(sto_job_delete(db, ids[0], &err), TSR_EINVAL);
    ck_assert_int_eq(sto_job_delete(db, 777, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "no job 777") != NULL, "%s", err.msg);

    set_state_ok(db, ids[1], STO_COMPLETED, NULL);
    set_state_ok(db, ids[2], STO_CANCELLED, NULL);
    set_state_ok(db, ids[3], STO_FAILED, "boom");
    for (int i = 1; i < 4; i++)
        ck_assert_int_eq(sto_job_delete(db, ids[i], &err), 0);
    sto_job j;
    ck_assert_int_eq(sto_job_get(db, ids[2], &j, &err), TSR_EINVAL);
    sto_classes cl;
    ck_assert_int_eq(sto_classes_read(db, ids[1], 0, 10, &cl, &err), TSR_EINVAL);
    ck_assert_int_eq(raw_query(t.path, "SELECT count(*) FROM chunks", NULL, 0), 1);
    ck_assert_int_eq(raw_query(t.path, "SELECT count(*) FROM frontier", NULL, 0), 1);
    ck_assert_int_eq(raw_query(t.path, "SELECT count(*) FROM jobs", NULL, 0), 1);

    /* Ids are not reused. */
    int64_t fresh = create_ok(db, "{}", 0);
    ck_assert(fresh > ids[3]);
    sto_close(db);
    tmp_remove(&t);
}
END_TEST

/* ---- files ------------------------------------------------------------------------------- */
START_TEST(reopen_keeps_everything)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t a = create_ok(db, "{\"board\":[6,10]}", 4);
    int64_t b = create_ok(db, "{\"board\":[3,20]}", 1);
    set_state_ok(db, a, STO_RUNNING, NULL);
    int im1[] = {3, 1, 4, 1, 5}, im2[] = {9, 2, 6};
    sto_task tasks[] = {{5, im1, 0.25}, {3, im2, 0.125}, {0, NULL, 0.5}};
    sto_found sols = {0};
    int c1[] = {1, 5}, c2[] = {2, 7, 9};
    ck_assert_int_eq(sto_found_add(&sols, c1, 2, 1, 1), 0);
    ck_assert_int_eq(sto_found_add(&sols, c2, 3, 1, 1), 0);
    sto_progress p = {UINT64_MAX - 5, 0.375, 12.5, "{\"fits\":[1,2,3]}", NULL, 0};
    enum sto_state paused = STO_PAUSED;
    ck_assert_int_eq(sto_checkpoint(db, a, tasks, 3, &sols, &p, &paused, &err), 0);
    sto_found_free(&sols);
    sto_close(db);

    db = open_ok(t.path);
    sto_job j;
    ck_assert_int_eq(sto_job_get(db, a, &j, &err), 0);
    ck_assert(j.state == STO_PAUSED && j.priority == 4 && j.solutions == 2);
    ck_assert(j.nodes == UINT64_MAX - 5 && j.fraction == 0.375 && j.seconds == 12.5);
    ck_assert_str_eq(j.stats, "{\"fits\":[1,2,3]}");
    ck_assert_str_eq(j.puzzle, "{\"board\":[6,10]}");
    sto_job_clear(&j);
    /* A checkpoint without progress keeps the progress and stats. */
    ck_assert_int_eq(sto_checkpoint(db, a, tasks, 1, NULL, NULL, NULL, &err), 0);
    ck_assert_int_eq(sto_job_get(db, a, &j, &err), 0);
    ck_assert(j.nodes == UINT64_MAX - 5 && j.stats != NULL && j.state == STO_PAUSED);
    sto_job_clear(&j);
    ck_assert_int_eq(sto_job_get(db, b, &j, &err), 0);
    ck_assert(j.state == STO_QUEUED && j.priority == 1);
    sto_job_clear(&j);
    sto_task *lt;
    int n;
    ck_assert_int_eq(sto_frontier_load(db, a, &lt, &n, &err), 0);
    ck_assert(n == 1 && lt[0].nimages == 5 && lt[0].images[4] == 5);
    sto_tasks_free(lt, n);
    sto_classes cl;
    ck_assert_int_eq(sto_classes_read(db, a, 0, 10, &cl, &err), 0);
    ck_assert(cl.n == 2 && cl.first[1] == 2 && cl.start[2] == 5 && cl.ids[4] == 9);
    sto_classes_free(&cl);
    ck_assert_int_eq(sto_wal_checkpoint(db, false, &err), 0);
    ck_assert_int_eq(sto_wal_checkpoint(db, true, &err), 0);
    sto_close(db);

    /* The file says what it is. */
    char mode[32];
    raw_query(t.path, "PRAGMA journal_mode", mode, sizeof mode);
    ck_assert_str_eq(mode, "wal");
    ck_assert_int_eq(raw_query(t.path, "PRAGMA user_version", NULL, 0), STO_SCHEMA_VERSION);
    ck_assert_int_eq(raw_query(t.path, "PRAGMA application_id", NULL, 0), STO_APPLICATION_ID);
    tmp_remove(&t);
}
END_TEST

/* The claim: one holder at a time (flock works per open file, so a second
 * claim in this process conflicts like another process's), named by pid,
 * free again once released. */
START_TEST(claim_is_exclusive)
{
    tmp t;
    tmp_make(&t);
    sto_claim *a = NULL, *b = NULL;
    tsr_err err = {{0}};
    ck_assert_int_eq(sto_claim_take(t.path, &a, &err), 0);
    ck_assert_int_eq(sto_claim_take(t.path, &b, &err), TSR_EBUSY);
    char pid[64];
    snprintf(pid, sizeof pid, "(pid %ld)", (long)getpid());
    ck_assert_msg(strstr(err.msg, pid) != NULL && strstr(err.msg, t.path) != NULL, "%s", err.msg);
    ck_assert(b == NULL);
    sto_claim_release(a);
    ck_assert_int_eq(sto_claim_take(t.path, &b, &err), 0);
    sto_claim_release(b);
    tmp_remove(&t);
}
END_TEST

/* The claim is on the file, not the name: a symbolic or a hard link to a
 * claimed file is refused; a claimed connection writes only while the
 * name leads to the file, and a detached one reads its copy. */
START_TEST(claim_follows_the_file)
{
    tmp t;
    tmp_make(&t);
    tsr_err err = {{0}};
    sto_claim *a = NULL, *b = NULL;
    ck_assert_int_eq(sto_claim_take(t.path, &a, &err), 0); /* creates the store */
    char sym[700], hard[700], moved[700], copy[700];
    snprintf(sym, sizeof sym, "%s/sym.db", t.dir);
    snprintf(hard, sizeof hard, "%s/hard.db", t.dir);
    snprintf(moved, sizeof moved, "%s/moved.db", t.dir);
    snprintf(copy, sizeof copy, "%s/copy.db", t.dir);
    ck_assert_int_eq(symlink(t.path, sym), 0);
    ck_assert_int_eq(link(t.path, hard), 0);
    ck_assert_int_eq(sto_claim_take(sym, &b, &err), TSR_EBUSY);
    ck_assert_int_eq(sto_claim_take(hard, &b, &err), TSR_EBUSY);
    ck_assert_msg(strstr(err.msg, "in use by another tesserad") != NULL, "%s", err.msg);
    unlink(hard);

    sto_db *w = NULL, *rd = NULL;
    ck_assert_int_eq(sto_open_claimed(a, ENGINE, &w, &err), 0);
    ck_assert_int_eq(sto_open_claimed(a, ENGINE, &rd, &err), 0);
    int64_t id;
    ck_assert_int_eq(sto_job_create(w, "{}", NULL, 0, &id, NULL, &err), 0);
    ck_assert_int_eq(sto_claim_check(a, &err), 0);

    /* the name now leads elsewhere: writes refused, reads go on */
    ck_assert_int_eq(rename(t.path, moved), 0);
    ck_assert_int_eq(sto_claim_check(a, &err), TSR_ESTALE);
    ck_assert_msg(strstr(err.msg, "deleted or moved away") != NULL, "%s", err.msg);
    ck_assert_int_eq(sto_job_create(w, "{}", NULL, 0, &id, NULL, &err), TSR_ESTALE);
    ck_assert_int_eq(sto_job_set_state(w, 1, STO_PAUSED, NULL, &err), TSR_ESTALE);
    sto_job j = {0};
    ck_assert_int_eq(sto_job_get(rd, 1, &j, &err), 0);
    sto_job_clear(&j);
    /* another file with the name: "replaced" */
    FILE *f = fopen(t.path, "w");
    fputs("x", f);
    fclose(f);
    ck_assert_int_eq(sto_claim_check(a, &err), TSR_ESTALE);
    ck_assert_msg(strstr(err.msg, "replaced by another file") != NULL, "%s", err.msg);

    /* the copy holds what was committed; a detached reader reads it */
    ck_assert_int_eq(sto_backup(w, copy, &err), 0);
    ck_assert_int_eq(sto_backup(w, copy, &err), TSR_EIO); /* never over a file */
    ck_assert_int_eq(sto_detach(w, NULL, &err), 0);
    ck_assert_int_eq(sto_detach(rd, copy, &err), 0);
    ck_assert_int_eq(sto_job_create(w, "{}", NULL, 0, &id, NULL, &err), TSR_ESTALE);
    ck_assert_int_eq(sto_job_get(rd, 1, &j, &err), 0);
    ck_assert_int_eq(j.state, STO_QUEUED);
    sto_job_clear(&j);
    ck_assert_int_eq(sto_job_create(rd, "{}", NULL, 0, &id, NULL, &err) != 0, 1); /* read-only */
    sto_close(w);
    sto_close(rd);
    sto_claim_release(a);
    ck_assert_int_eq(raw_query(copy, "SELECT count(*) FROM jobs", NULL, 0), 1);
    unlink(sym);
    tmp_remove(&t);
}
END_TEST

START_TEST(schema_checks)
{
    tmp t;
    tmp_make(&t);
    tsr_err err = {""};
    sto_db *db = open_ok(t.path);
    sto_close(db);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", STO_SCHEMA_VERSION + 1);
    raw_exec(t.path, sql);
    db = (sto_db *)1;
    ck_assert_int_eq(sto_open(t.path, ENGINE, &db, &err), TSR_EUNSUPP);
    ck_assert(db == NULL);
    char newer[96];
    snprintf(newer, sizeof newer, "schema version %d is newer than this build understands (%d)",
             STO_SCHEMA_VERSION + 1, STO_SCHEMA_VERSION);
    ck_assert_msg(strstr(err.msg, newer) != NULL && strstr(err.msg, t.path) != NULL, "%s",
                  err.msg);

    /* Another application's database. */
    char other[700];
    snprintf(other, sizeof other, "%s/other.db", t.dir);
    raw_exec(other, "CREATE TABLE notes (x TEXT)");
    ck_assert_int_eq(sto_open(other, ENGINE, &db, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "not a Tessera store") != NULL, "%s", err.msg);
    raw_exec(other, "PRAGMA user_version = 2");
    ck_assert_int_eq(sto_open(other, ENGINE, &db, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "not a Tessera store") != NULL, "%s", err.msg);
    char mode[32]; /* refused files are left as they were */
    raw_query(other, "PRAGMA journal_mode", mode, sizeof mode);
    ck_assert_str_eq(mode, "delete");

    /* Not a database at all. */
    char junk[700];
    snprintf(junk, sizeof junk, "%s/junk.db", t.dir);
    FILE *f = fopen(junk, "w");
    ck_assert(f != NULL);
    for (int i = 0; i < 200; i++)
        fputs("this is not a database file. ", f);
    fclose(f);
    ck_assert_int_eq(sto_open(junk, ENGINE, &db, &err), TSR_EIO);
    ck_assert_msg(strstr(err.msg, "not a database") != NULL && strstr(err.msg, junk) != NULL, "%s",
                  err.msg);

    /* No file, no directory, no :memory:. */
    char missing[700];
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.db", t.dir);
    ck_assert_int_eq(sto_open(missing, ENGINE, &db, &err), TSR_EIO);
    ck_assert_msg(strstr(err.msg, "there is no directory") != NULL, "%s", err.msg);
    /* the claim says so too, before it tries the lock file there */
    sto_claim *claim = NULL;
    ck_assert_int_eq(sto_claim_take(missing, &claim, &err), TSR_EIO);
    ck_assert_msg(strstr(err.msg, "there is no directory") != NULL, "%s", err.msg);

    /* An existing empty file is not a new store: refused, left as it was. */
    char empty[700];
    snprintf(empty, sizeof empty, "%s/empty.db", t.dir);
    fclose(fopen(empty, "w"));
    ck_assert_int_eq(sto_open(empty, ENGINE, &db, &err), TSR_EIO);
    ck_assert_msg(strstr(err.msg, "empty (0 bytes)") != NULL, "%s", err.msg);
    struct stat sb;
    ck_assert(stat(empty, &sb) == 0 && sb.st_size == 0);
    ck_assert_int_eq(sto_open(":memory:", ENGINE, &db, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_open(NULL, ENGINE, &db, &err), TSR_EINVAL);
    tmp_remove(&t);
}
END_TEST

/* ---- checkpoints --------------------------------------------------------------------------- */
/* The state checkpoint_atomic's first checkpoint left: a queued job with
 * progress 100 / 0.25 and stats v1, three solutions in one chunk, the two
 * tasks of `good`. */
static void unchanged(sto_db *db, int64_t job, const char *path, const char *what)
{
    tsr_err err = {""};
    sto_job j;
    ck_assert_int_eq(sto_job_get(db, job, &j, &err), 0);
    ck_assert_msg(j.state == STO_QUEUED && j.solutions == 3 && j.stored == 3 && j.nodes == 100 &&
                      j.fraction == 0.25 && j.stats != NULL && strcmp(j.stats, "{\"v\":1}") == 0,
                  "%s: the job row changed", what);
    sto_job_clear(&j);
    sto_task *lt;
    int n;
    ck_assert_int_eq(sto_frontier_load(db, job, &lt, &n, &err), 0);
    ck_assert_msg(n == 2 && lt[0].nimages == 3 && lt[0].images[2] == 30 && lt[0].weight == 0.5 &&
                      lt[1].nimages == 1 && lt[1].weight == 0.25,
                  "%s: the frontier changed", what);
    sto_tasks_free(lt, n);
    ck_assert_msg(raw_query(path, "SELECT count(*) FROM chunks", NULL, 0) == 1 &&
                      raw_query(path, "SELECT count(*) FROM frontier", NULL, 0) == 2,
                  "%s: rows changed", what);
}

START_TEST(checkpoint_atomic)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t job = create_ok(db, "{}", 0);
    int im[3] = {10, 20, 30};
    sto_task good[2] = {{3, im, 0.5}, {1, im, 0.25}};
    sto_found sols, more;
    batch_of(&sols, 2, 0); /* 1 + 2 solutions */
    batch_of(&more, 1, 5); /* 1 solution */
    sto_progress p = {100, 0.25, 1.5, "{\"v\":1}", NULL, 0};
    ck_assert_int_eq(sto_checkpoint(db, job, good, 2, &sols, &p, NULL, &err), 0);

    /* A checkpoint whose fourth task is too big: the first three tasks and
     * the frontier deletion were already written when it failed. */
    int *big = calloc(STO_MAX_TASK_IMAGES + 1, sizeof *big);
    ck_assert(big != NULL);
    sto_task bad[4] = {{1, im, 0.1}, {2, im, 0.1}, {3, im, 0.1}, {STO_MAX_TASK_IMAGES + 1, big, 0.1}};
    sto_progress p2 = {200, 0.5, 3, "{\"v\":2}", NULL, 0};
    enum sto_state paused = STO_PAUSED;
    ck_assert_int_eq(sto_checkpoint(db, job, bad, 4, &more, &p2, &paused, &err), TSR_ETOOBIG);
    ck_assert_msg(strstr(err.msg, "task 3 has 100001 images (at most 100000)") != NULL, "%s",
                  err.msg);
    unchanged(db, job, t.path, "too many images");

    /* Failing on the batch, after every task and a whole chunk: a batch
     * whose last record is cut short. */
    sto_found broken;
    batch_of(&broken, STO_CHUNK_CLASSES + 3, 0);
    broken.records.len--;
    ck_assert_int_eq(sto_checkpoint(db, job, bad, 3, &broken, &p2, &paused, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "is malformed") != NULL, "%s", err.msg);
    unchanged(db, job, t.path, "a malformed batch");
    broken.records.len++;
    broken.classes++; /* totals that do not match the records */
    ck_assert_int_eq(sto_checkpoint(db, job, bad, 3, &broken, &p2, &paused, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "the batch holds") != NULL, "%s", err.msg);
    unchanged(db, job, t.path, "a batch with wrong totals");
    sto_found_free(&broken);

    /* A bad weight, a NaN fraction, too many tasks, an oversized document. */
    sto_task nan_w = {1, im, NAN};
    ck_assert_int_eq(sto_checkpoint(db, job, &nan_w, 1, NULL, NULL, NULL, &err), TSR_EINVAL);
    sto_task heavy = {1, im, 1.5};
    ck_assert_int_eq(sto_checkpoint(db, job, &heavy, 1, NULL, NULL, NULL, &err), TSR_EINVAL);
    sto_progress pn = {1, NAN, 0, NULL, NULL, 0};
    ck_assert_int_eq(sto_checkpoint(db, job, good, 1, NULL, &pn, NULL, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_checkpoint(db, job, good, STO_MAX_TASKS + 1, NULL, NULL, NULL, &err),
                     TSR_ETOOBIG);
    ck_assert_int_eq(sto_checkpoint(db, job, good, -1, NULL, NULL, NULL, &err), TSR_EINVAL);
    char *huge = malloc(STO_MAX_DOC + 2);
    ck_assert(huge != NULL);
    memset(huge, 'x', STO_MAX_DOC + 1);
    huge[STO_MAX_DOC + 1] = '\0';
    sto_progress ph = {1, 0, 0, huge, NULL, 0};
    ck_assert_int_eq(sto_checkpoint(db, job, good, 1, NULL, &ph, NULL, &err), TSR_ETOOBIG);
    ck_assert_msg(strstr(err.msg, "statistics document is larger than 16777216 bytes") != NULL,
                  "%s", err.msg);
    sto_found hs = {{huge, (size_t)STO_MAX_FOUND + 1, 0}, 1, 1, 1};
    ck_assert_int_eq(sto_checkpoint(db, job, bad, 2, &hs, &p2, NULL, &err), TSR_ETOOBIG);
    unchanged(db, job, t.path, "huge batch");
    int64_t id;
    ck_assert_int_eq(sto_job_create(db, huge, NULL, 0, &id, NULL, &err), TSR_ETOOBIG);
    ck_assert_msg(strstr(err.msg, "puzzle document is larger") != NULL, "%s", err.msg);
    ck_assert_int_eq(sto_job_set_state(db, job, STO_RUNNING, huge, &err), TSR_ETOOBIG);
    huge[STO_MAX_DOC] = '\0'; /* exactly the cap is accepted */
    ck_assert_int_eq(sto_job_create(db, huge, NULL, 0, &id, NULL, &err), 0);
    free(huge);

    unchanged(db, job, t.path, "after every failure");

    /* The connection is usable afterwards: no transaction was left open. */
    sto_job j;
    sto_task *lt;
    int n;
    sto_task capped = {STO_MAX_TASK_IMAGES, big, 1};
    ck_assert_int_eq(sto_checkpoint(db, job, &capped, 1, &more, &p2, &paused, &err), 0);
    ck_assert_int_eq(sto_frontier_load(db, job, &lt, &n, &err), 0);
    ck_assert(n == 1 && lt[0].nimages == STO_MAX_TASK_IMAGES);
    sto_tasks_free(lt, n);
    ck_assert_int_eq(sto_job_get(db, job, &j, &err), 0);
    ck_assert(j.state == STO_PAUSED && j.solutions == 4 && j.stored == 4 && j.nodes == 200);
    sto_job_clear(&j);
    sto_found_free(&sols);
    sto_found_free(&more);
    free(big);
    sto_close(db);
    tmp_remove(&t);
}
END_TEST

/* Records: strictly increasing ids only; ids of any size, empty classes,
 * and keep < count (stored and found apart). */
START_TEST(batch_records)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t job = create_ok(db, "{}", 0);
    sto_found b = {0};
    int unsorted[] = {3, 2}, dup[] = {4, 4}, neg[] = {-1, 2};
    ck_assert_int_eq(sto_found_add(&b, unsorted, 2, 1, 1), TSR_EINVAL);
    ck_assert_int_eq(sto_found_add(&b, dup, 2, 1, 1), TSR_EINVAL);
    ck_assert_int_eq(sto_found_add(&b, neg, 2, 1, 1), TSR_EINVAL);
    ck_assert_int_eq(sto_found_add(&b, dup, 1, 0, 0), TSR_EINVAL);  /* count 0 */
    ck_assert_int_eq(sto_found_add(&b, dup, 1, 2, 3), TSR_EINVAL);  /* keep > count */
    ck_assert(b.records.len == 0 && b.found == 0);
    int wide[] = {0, 127, 128, 16384, INT_MAX - 1, INT_MAX};
    ck_assert_int_eq(sto_found_add(&b, wide, 6, 48, 48), 0);
    ck_assert_int_eq(sto_found_add(&b, NULL, 0, 1, 1), 0);          /* an empty assembly */
    ck_assert_int_eq(sto_found_add(&b, wide, 2, 8, 3), 0);          /* 3 of 8 kept */
    ck_assert_int_eq(sto_found_add(&b, wide + 1, 2, 5, 0), 0);      /* counted only */
    ck_assert(b.classes == 3 && b.stored == 52 && b.found == 62);
    ck_assert_int_eq(sto_checkpoint(db, job, NULL, 0, &b, NULL, NULL, &err), 0);
    sto_job j;
    ck_assert_int_eq(sto_job_get(db, job, &j, &err), 0);
    ck_assert(j.solutions == 62 && j.stored == 52);
    sto_job_clear(&j);
    sto_classes c;
    ck_assert_int_eq(sto_classes_read(db, job, 0, 100, &c, &err), 0);
    ck_assert_int_eq(c.n, 3);
    ck_assert(c.first[0] == 1 && c.count[0] == 48 && c.first[1] == 49 && c.count[1] == 1 &&
              c.first[2] == 50 && c.count[2] == 3);
    ck_assert(c.start[1] == 6 && c.start[2] == 6 && c.start[3] == 8);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(c.ids[i], wide[i]);
    sto_classes_free(&c);
    /* solution 49 alone: the empty class */
    ck_assert_int_eq(sto_classes_read(db, job, 48, 1, &c, &err), 0);
    ck_assert(c.n == 1 && c.first[0] == 49);
    sto_classes_free(&c);
    ck_assert_int_eq(sto_classes_read(db, job, 52, 10, &c, &err), 0); /* past the end */
    ck_assert_int_eq(c.n, 0);
    sto_classes_free(&c);
    ck_assert_int_eq(sto_classes_read(db, job, 0, 0, &c, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_classes_read(db, job, -1, 5, &c, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_classes_read(db, 99, 0, 5, &c, &err), TSR_EINVAL);
    /* n and count, then one byte per small step: 0, 127, +1, +16256 (2 bytes),
     * +2147467262 (5 bytes), +1; the empty class; 0 and 127 */
    ck_assert_int_eq(raw_query(t.path, "SELECT sum(length(data)) FROM chunks", NULL, 0),
                     (2 + 11) + 2 + (2 + 2));
    sto_found_free(&b);
    sto_close(db);
    tmp_remove(&t);
}
END_TEST

/* A damaged chunk is an error naming the job and the position, never data:
 * a changed byte, and a whole chunk copied over another's place. */
START_TEST(check_values)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t a = create_ok(db, "{}", 0), b = create_ok(db, "{}", 0);
    sto_found x;
    batch_of(&x, 2 * STO_CHUNK_CLASSES + 10, 0);
    ck_assert_int_eq(sto_checkpoint(db, a, NULL, 0, &x, NULL, NULL, &err), 0);
    ck_assert_int_eq(sto_checkpoint(db, b, NULL, 0, &x, NULL, NULL, &err), 0);
    char sql[400];
    snprintf(sql, sizeof sql, "SELECT first FROM chunks WHERE job = %lld ORDER BY first LIMIT 1 "
                              "OFFSET 1", (long long)a);
    int64_t second = raw_query(t.path, sql, NULL, 0);
    ck_assert(second > 1);
    sto_classes c;
    ck_assert_int_eq(sto_classes_read(db, a, second - 1, 5, &c, &err), 0);
    ck_assert(c.n > 0 && c.first[0] == second);
    sto_classes_free(&c);
    /* one byte of job a's second chunk changed */
    snprintf(sql, sizeof sql, "UPDATE chunks SET data = CAST(substr(data, 1, 10) || x'7f' || "
                              "substr(data, 12) AS BLOB) WHERE job = %lld AND first = %lld",
             (long long)a, (long long)second);
    raw_exec(t.path, sql);
    ck_assert_int_eq(sto_classes_read(db, a, second - 1, 5, &c, &err), TSR_EIO);
    char want[128];
    snprintf(want, sizeof want, "the chunk of job %lld from solution %lld is damaged",
             (long long)a, (long long)second);
    ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
    ck_assert_int_eq(sto_classes_read(db, a, 0, 5, &c, &err), 0); /* the first still reads */
    sto_classes_free(&c);
    /* job b's first chunk, check value and all, in job a's first place: the
     * bytes are the same, the place is not */
    snprintf(sql, sizeof sql, "UPDATE chunks SET crc = (SELECT crc FROM chunks WHERE job = %lld "
                              "AND first = 1) WHERE job = %lld AND first = 1",
             (long long)b, (long long)a);
    raw_exec(t.path, sql);
    ck_assert_int_eq(sto_classes_read(db, a, 0, 5, &c, &err), TSR_EIO);
    ck_assert_int_eq(sto_classes_read(db, b, 0, 5, &c, &err), 0);
    sto_classes_free(&c);
    /* I1 in the file: stored equals the chunks' solutions */
    ck_assert_int_eq(raw_query(t.path,
                               "SELECT count(*) FROM jobs WHERE stored !="
                               " (SELECT coalesce(sum(nsol), 0) FROM chunks WHERE job = jobs.id)",
                               NULL, 0),
                     0);
    sto_found_free(&x);
    sto_close(db);
    tmp_remove(&t);
}
END_TEST

/* tesserad --repair's caps of an unfinished job's options: one that
 * refuses (the whole repair must then change nothing), one that works. */
static int cap_refuses(const char *options, int64_t stored, char **out, tsr_err *err)
{
    *out = NULL;
    return tsr_err_set(err, TSR_EINVAL, "refused for the test");
}

static int cap_ok(const char *options, int64_t stored, char **out, tsr_err *err)
{
    *out = malloc(64);
    ck_assert(*out != NULL);
    snprintf(*out, 64, "{\"store\":%lld}", (long long)stored);
    return 0;
}

/* The first of a job's chunks after `skip` others. */
static int64_t chunk_first(const char *path, int64_t job, int skip)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT first FROM chunks WHERE job = %lld ORDER BY first LIMIT 1 "
                              "OFFSET %d", (long long)job, skip);
    return raw_query(path, sql, NULL, 0);
}

static long long job_column(const char *path, int64_t job, const char *col, char *text,
                            size_t tlen)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT %s FROM jobs WHERE id = %lld", col, (long long)job);
    return raw_query(path, sql, text, tlen);
}

/* ---- sto_check: damage and broken invariants ----------------------------------- */

static unsigned char *file_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    ck_assert(fseek(f, 0, SEEK_END) == 0);
    long n = ftell(f);
    ck_assert(n > 0 && fseek(f, 0, SEEK_SET) == 0);
    unsigned char *b = malloc((size_t)n);
    ck_assert(b != NULL && fread(b, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Write the bytes as the whole store, with no -wal or -shm beside it. */
static void store_write(const tmp *t, const unsigned char *b, size_t len)
{
    char side[700];
    snprintf(side, sizeof side, "%s-wal", t->path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", t->path);
    unlink(side);
    FILE *f = fopen(t->path, "wb");
    ck_assert(f != NULL && fwrite(b, 1, len, f) == len && fclose(f) == 0);
}

/* sto_check on a damaged file: never an error, never a crash; `damaged`
 * when the damage must be found.  Returns whether it was. */
static bool check_copes(const tmp *t, bool full, bool damaged, const char *what)
{
    char *report = NULL;
    tsr_err err = {""};
    int r = sto_check(t->path, full, 0, &report, &err);
    ck_assert_msg((r == 0 || r == TSR_EIO) && report != NULL && err.msg[0] == '\0',
                  "%s: sto_check answered %d (%s), not sound or damaged", what, r, err.msg);
    ck_assert_msg(!damaged || (r == TSR_EIO && strstr(report, "structure: ") != NULL),
                  "%s: the damage is not found:\n%s", what, report);
    ck_assert_msg(strcmp(report + strlen(report) - (r ? 8 : 3), r ? "damaged\n" : "ok\n") == 0,
                  "%s: the report ends otherwise:\n%s", what, report);
    free(report);
    return r == TSR_EIO;
}

/* A store whose chunks run over overflow pages, damaged on disk where
 * SQLite meets it only while reading rows (tesserad --check once
 * finalized a statement twice there and died of SIGBUS): every page
 * zeroed in turn, the header's reserved bytes per page (byte 20) at 255,
 * its write version (byte 18) at 23, which SQLite obeys by opening the
 * file read-only, its first bytes garbled.  Each is found as damage
 * (TSR_EIO with a report, not an error: a store SQLite says is malformed
 * is damaged, not unreadable) or, for a page no table uses, sound. */
START_TEST(check_damaged_file)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    for (int j = 0; j < 3; j++) {
        int64_t id = create_ok(db, "{}", 0);
        sto_found b = {0};
        for (int i = 0; i < 3000; i++) { /* 40 ids a class: chunks of ~40 KB */
            int ids[40];
            for (int k = 0; k < 40; k++)
                ids[k] = i * 50 + k * 3;
            ck_assert_int_eq(sto_found_add(&b, ids, 40, 1, 1), 0);
        }
        ck_assert_int_eq(sto_checkpoint(db, id, NULL, 0, &b, NULL, NULL, &err), 0);
        set_state_ok(db, id, STO_COMPLETED, NULL);
        sto_found_free(&b);
    }
    sto_close(db); /* the last connection: the log is folded into the file */
    size_t len;
    unsigned char *orig = file_bytes(t.path, &len), *v = malloc(len);
    ck_assert(v != NULL && len % 4096 == 0 && len / 4096 > 40);
    memcpy(v, orig, len);
    store_write(&t, v, len);
    ck_assert(!check_copes(&t, true, false, "the sound file"));
    memcpy(v, orig, len);
    v[20] = 0xff;
    store_write(&t, v, len);
    check_copes(&t, true, true, "byte 20 at 255");
    /* each of SQLite's lines a finding of its own, its header not one */
    char *report = NULL;
    store_write(&t, v, len);
    ck_assert_int_eq(sto_check(t.path, true, 0, &report, &err), TSR_EIO);
    int lines = 0;
    for (const char *p = report; (p = strstr(p, "\nstructure: ")) != NULL; p++)
        lines++;
    ck_assert_msg(lines >= 2 && strstr(report, "***") == NULL, "%s", report);
    free(report);
    store_write(&t, v, len);
    check_copes(&t, false, true, "byte 20 at 255, the quick check");
    int found = 0;
    for (size_t p = 0; p < len / 4096; p++) {
        memcpy(v, orig, len);
        memset(v + p * 4096, 0, 4096);
        char what[64];
        snprintf(what, sizeof what, "page %zu zeroed", p + 1);
        store_write(&t, v, len);
        found += check_copes(&t, true, false, what);
        store_write(&t, v, len);
        check_copes(&t, false, false, what);
    }
    /* every page holds rows or the schema: all but a free one are found */
    ck_assert_msg(found >= (int)(len / 4096) - 1, "%d of %zu zeroed pages found", found,
                  len / 4096);
    /* a write version SQLite does not write: it opens the file read-only */
    memcpy(v, orig, len);
    v[18] = 23;
    store_write(&t, v, len);
    check_copes(&t, false, true, "byte 18 at 23");
    memcpy(v, orig, len);
    memset(v, 0x5a, 16);
    store_write(&t, v, len);
    check_copes(&t, true, true, "the header's magic string garbled");
    free(v);
    free(orig);
    tmp_remove(&t);
}
END_TEST

/* A chunk's check value as the store computes it (store.c, chunk_crc):
 * CRC-32 (the zlib one) of its job and first number, 8 bytes each, little
 * endian, then its bytes. */
static uint32_t chunk_crc_of(int64_t job, int64_t first, const void *data, size_t len)
{
    unsigned char head[16];
    for (int i = 0; i < 8; i++) {
        head[i] = (unsigned char)((uint64_t)job >> (8 * i));
        head[8 + i] = (unsigned char)((uint64_t)first >> (8 * i));
    }
    uint32_t crc = 0xffffffffu;
    for (int part = 0; part < 2; part++) {
        const unsigned char *p = part == 0 ? head : data;
        for (size_t i = 0, n = part == 0 ? sizeof head : len; i < n; i++) {
            crc ^= p[i];
            for (int k = 0; k < 8; k++)
                crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
        }
    }
    return ~crc;
}

/* The store's CRC (eight bytes a step) equals the bitwise one above at
 * every length and alignment: chunks written before it still check. */
START_TEST(chunk_crc_matches_bitwise)
{
    unsigned char buf[300];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; off + len <= sizeof buf; len += len < 40 ? 1 : 37) {
            int64_t job = (int64_t)(off * 7 + 1), first = (int64_t)len * 1000003;
            ck_assert_msg(sto_chunk_crc(job, first, buf + off, len) ==
                              chunk_crc_of(job, first, buf + off, len),
                          "crc differs at offset %zu, length %zu", off, len);
        }
}
END_TEST

/* The lines of a report that name job `job`. */
static bool report_names(const char *report, int64_t job, const char *needle)
{
    char head[48];
    snprintf(head, sizeof head, "job %lld: ", (long long)job);
    for (const char *p = report; (p = strstr(p, head)) != NULL; p++) {
        const char *end = strchr(p, '\n');
        if ((p == report || p[-1] == '\n') &&
            (needle == NULL || (strstr(p, needle) != NULL && strstr(p, needle) < end)))
            return true;
    }
    return false;
}

/* What sto_check verifies beyond check values: each invariant broken in
 * one job, the way it happens (two writers checkpointing one job, a count
 * moved by hand, a frontier that lost a task...), beside sound jobs of
 * every shape the daemon leaves, which must not be named. */
START_TEST(check_invariants)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    char *report = NULL;
    sto_found x;
    batch_of(&x, STO_CHUNK_CLASSES + 10, 0); /* two chunks */
    sto_task half = {0, NULL, 0.5}, quarters[2] = {{0, NULL, 0.25}, {0, NULL, 0.25}};
    sto_progress p = {100, 0.5, 1.0, NULL, NULL, 0};
    enum sto_state paused = STO_PAUSED, done = STO_COMPLETED;
    /* sound: unfinished; completed; store none; store 4 kept of 6 */
    int64_t sound = create_ok(db, "{}", 0), complete = create_ok(db, "{}", 0);
    ck_assert_int_eq(sto_checkpoint(db, sound, &half, 1, &x, &p, &paused, &err), 0);
    ck_assert_int_eq(sto_checkpoint(db, complete, &half, 1, &x, &p, NULL, &err), 0);
    sto_progress all = {200, 1.0, 2.0, NULL, NULL, 0};
    sto_found rest;
    batch_of(&rest, 10, 7000); /* the other half's classes */
    ck_assert_int_eq(sto_checkpoint(db, complete, NULL, 0, &rest, &all, &done, &err), 0);
    sto_found_free(&rest);
    int64_t none = 0, four = 0;
    ck_assert_int_eq(sto_job_create(db, "{}", "{\"store\":\"none\"}", 0, &none, NULL, &err), 0);
    ck_assert_int_eq(sto_job_create(db, "{}", "{\"store\":4}", 0, &four, NULL, &err), 0);
    sto_found kept = {0};
    int ids[2] = {1, 2}, more[2] = {3, 4};
    ck_assert_int_eq(sto_found_add(&kept, ids, 2, 3, 0), 0);
    ck_assert_int_eq(sto_checkpoint(db, none, &half, 1, &kept, &p, NULL, &err), 0);
    sto_found_free(&kept);
    ck_assert_int_eq(sto_found_add(&kept, ids, 2, 3, 3), 0);
    ck_assert_int_eq(sto_found_add(&kept, more, 2, 3, 1), 0); /* a class straddling 4 */
    ck_assert_int_eq(sto_checkpoint(db, four, &half, 1, &kept, &p, NULL, &err), 0);
    sto_found_free(&kept);
    int r = sto_check(t.path, true, 0, &report, &err);
    ck_assert_msg(r == 0 && strstr(report, "classes: ") != NULL, "%d %s %s", r, err.msg, report);
    free(report);

    /* twice: two writers checkpoint the same work, as two daemons on one
     * file do; every number fits, only the classes repeat */
    int64_t twice = create_ok(db, "{}", 0);
    sto_db *other = open_ok(t.path);
    ck_assert_int_eq(sto_checkpoint(db, twice, &half, 1, &x, &p, NULL, &err), 0);
    ck_assert_int_eq(sto_checkpoint(other, twice, &half, 1, &x, &p, NULL, &err), 0);
    sto_close(other);
    /* overlap: a chunk numbered from 5 solutions before the job's end, its
     * check value right and the counts moved with it (sto_checkpoint
     * cannot be made to write it: a debug build checks I1 as it commits) */
    int64_t overlap = create_ok(db, "{}", 0);
    ck_assert_int_eq(sto_checkpoint(db, overlap, &half, 1, &x, &p, NULL, &err), 0);
    sto_found y;
    batch_of(&y, 10, 5000);
    int64_t at = x.stored - 4;
    char sql[600];
    int len = snprintf(sql, sizeof sql, "INSERT INTO chunks VALUES (%lld, %lld, %lld, %lld, x'",
                       (long long)overlap, (long long)at, (long long)y.stored,
                       (long long)y.classes);
    for (size_t i = 0; i < y.records.len; i++)
        len += snprintf(sql + len, sizeof sql - (size_t)len, "%02x",
                        ((unsigned char *)y.records.data)[i]);
    snprintf(sql + len, sizeof sql - (size_t)len, "', %u); UPDATE jobs SET stored = stored + "
             "%lld, solutions = solutions + %lld WHERE id = %lld",
             chunk_crc_of(overlap, at, y.records.data, y.records.len), (long long)y.stored,
             (long long)y.found, (long long)overlap);
    raw_exec(t.path, sql);
    sto_found_free(&y);
    /* weights: a quarter of the tree lost from the frontier */
    int64_t weights = create_ok(db, "{}", 0);
    sto_progress q = {100, 0.25, 1.0, NULL, NULL, 0};
    ck_assert_int_eq(sto_checkpoint(db, weights, quarters, 2, &x, &q, NULL, &err), 0);
    /* a completed job with a task */
    int64_t final = create_ok(db, "{}", 0);
    ck_assert_int_eq(sto_checkpoint(db, final, NULL, 0, &x, &all, &done, &err), 0);
    snprintf(sql, sizeof sql, "INSERT INTO frontier VALUES (%lld, 0, x'', 0.5)",
             (long long)final);
    raw_exec(t.path, sql);
    /* an unfinished job with solutions and no frontier */
    int64_t bare = create_ok(db, "{}", 0);
    ck_assert_int_eq(sto_checkpoint(db, bare, NULL, 0, &x, &p, NULL, &err), 0);
    /* store 5, all stored */
    int64_t five = 0;
    ck_assert_int_eq(sto_job_create(db, "{}", "{\"store\":5}", 0, &five, NULL, &err), 0);
    ck_assert_int_eq(sto_checkpoint(db, five, &half, 1, &x, &p, NULL, &err), 0);
    /* options that are not JSON, statistics that are not JSON */
    int64_t docs = create_ok(db, "{}", 0);
    snprintf(sql, sizeof sql, "UPDATE jobs SET options = '{\"store\":', stats = '[1,' "
                              "WHERE id = %lld", (long long)docs);
    raw_exec(t.path, sql);
    /* chunks of a job that does not exist (copied, check values and all) */
    snprintf(sql, sizeof sql, "INSERT INTO chunks SELECT 999, first, nsol, nclass, data, crc "
                              "FROM chunks WHERE job = %lld", (long long)sound);
    raw_exec(t.path, sql);
    sto_close(db);

    ck_assert_int_eq(sto_check(t.path, true, 0, &report, &err), TSR_EIO);
    ck_assert_msg(err.msg[0] == '\0', "%s", err.msg);
    const struct { int64_t job; const char *needle; } want[] = {
        {twice, "classes are stored more than once"},
        {overlap, "overlaps the one before"},
        {weights, "its frontier weighs 0.5 and 0.25 of its tree is done: 0.75 in all, not 1"},
        {final, "completed, yet it has a frontier of 1 task"},
        {bare, "with no frontier, yet 0.5 of its tree is done"},
        {five, "where its options.store keeps 5"},
        {docs, "options document is not a JSON object"},
        {docs, "statistics document is not JSON"},
        {999, "is damaged"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(report_names(report, want[i].job, want[i].needle), "job %lld: no \"%s\":\n%s",
                      (long long)want[i].job, want[i].needle, report);
    ck_assert_msg(strstr(report, "chunks: 2 rows belong to no row of jobs") != NULL, "%s",
                  report);
    int64_t sound_jobs[] = {sound, complete, none, four};
    for (size_t i = 0; i < sizeof sound_jobs / sizeof *sound_jobs; i++)
        ck_assert_msg(!report_names(report, sound_jobs[i], NULL), "sound job %lld named:\n%s",
                      (long long)sound_jobs[i], report);
    free(report);

    /* a schema version that does not match the tables */
    raw_exec(t.path, "PRAGMA user_version = 2");
    ck_assert_int_eq(sto_check(t.path, true, 0, &report, &err), TSR_EIO);
    ck_assert_msg(strstr(report, "schema: the file says schema 2, which does not have a table "
                                 "batches") != NULL, "%s", report);
    free(report);
    /* --repair refuses it as damage, not as an older store to upgrade */
    ck_assert_int_eq(sto_repair(t.path, cap_ok, &report, &err), TSR_EIO);
    ck_assert_msg(report != NULL && strstr(report, "schema: the file says schema 2") != NULL &&
                      strstr(report, "beyond what --repair mends") != NULL,
                  "%s", report != NULL ? report : err.msg);
    free(report);
    sto_found_free(&x);
    tmp_remove(&t);
}
END_TEST

/* Each kind of chunk damage is mended to the job's sound start, in one
 * transaction: a refused cap leaves the file as it was. */
START_TEST(repair_cases)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    /* a: damaged 2nd chunk, completed; b: 2nd chunk missing; c: last chunk
     * missing; d: sound; e: damaged 1st chunk, unfinished */
    int64_t a = create_ok(db, "{}", 0), b = create_ok(db, "{}", 0), c = create_ok(db, "{}", 0);
    int64_t d = create_ok(db, "{}", 0), e = create_ok(db, "{}", 0);
    sto_found x;
    batch_of(&x, 2 * STO_CHUNK_CLASSES + 10, 0); /* three chunks */
    /* half the tree searched, half in the frontier: as the daemon leaves
     * them (sto_check finds a job with solutions and no frontier damaged) */
    sto_task half = {0, NULL, 0.5};
    sto_progress p = {100, 0.5, 1.0, NULL, NULL, 0};
    for (int64_t j = a; j <= e; j++)
        ck_assert_int_eq(sto_checkpoint(db, j, &half, 1, &x, &p, NULL, &err), 0);
    set_state_ok(db, a, STO_COMPLETED, NULL);
    int64_t total = job_column(t.path, a, "stored", NULL, 0);
    sto_close(db);
    int64_t a2 = chunk_first(t.path, a, 1), b2 = chunk_first(t.path, b, 1);
    int64_t c3 = chunk_first(t.path, c, 2);
    char sql[400];
    snprintf(sql, sizeof sql,
             "UPDATE chunks SET data = CAST(substr(data, 1, 10) || x'7f' || substr(data, 12) AS "
             "BLOB) WHERE (job = %lld AND first = %lld) OR (job = %lld AND first = 1);"
             "DELETE FROM chunks WHERE (job = %lld AND first = %lld) OR (job = %lld AND first = "
             "%lld);"
             "INSERT INTO chunks SELECT 999, first, nsol, nclass, data, crc FROM chunks "
             "WHERE job = %lld",
             (long long)a, (long long)a2, (long long)e, (long long)b, (long long)b2,
             (long long)c, (long long)c3, (long long)d);
    raw_exec(t.path, sql);
    long long chunks = raw_query(t.path, "SELECT count(*) FROM chunks", NULL, 0);
    char *report = NULL;
    ck_assert_int_eq(sto_check(t.path, true, 0, &report, &err), TSR_EIO);
    free(report);

    /* the cap of job e fails after job a was mended: nothing is kept */
    ck_assert_int_ne(sto_repair(t.path, cap_refuses, &report, &err), 0);
    ck_assert_msg(strstr(err.msg, "refused for the test") != NULL, "%s", err.msg);
    free(report);
    ck_assert_int_eq(raw_query(t.path, "SELECT count(*) FROM chunks", NULL, 0), chunks);
    ck_assert_int_eq(job_column(t.path, a, "stored", NULL, 0), total);
    ck_assert_int_eq(job_column(t.path, a, "error IS NULL", NULL, 0), 1);

    ck_assert_int_eq(sto_repair(t.path, cap_ok, &report, &err), 0);
    ck_assert_msg(strstr(report, "repaired: 4 jobs, 6 chunks removed") != NULL,
                  "%s", report);
    free(report);
    char text[1024];
    int64_t want[5] = {a2 - 1, b2 - 1, c3 - 1, total, 0};
    for (int k = 0; k < 5; k++) {
        ck_assert_int_eq(job_column(t.path, a + k, "stored", NULL, 0), want[k]);
        ck_assert_int_eq(job_column(t.path, a + k, "solutions", NULL, 0), total);
        job_column(t.path, a + k, "coalesce(error, '')", text, sizeof text);
        ck_assert_msg((strstr(text, "removed stored solutions") != NULL) == (k != 3), "%d: %s", k,
                      text);
    }
    job_column(t.path, e, "options", text, sizeof text);
    ck_assert_str_eq(text, "{\"store\":0}");
    job_column(t.path, a, "options", text, sizeof text);
    ck_assert_str_eq(text, "{\"unique\":\"raw\"}"); /* a final job's options stay */
    ck_assert_int_eq(raw_query(t.path, "SELECT count(*) FROM chunks WHERE job = 999", NULL, 0), 0);
    ck_assert_int_eq(sto_check(t.path, true, 0, &report, &err), 0);
    free(report);
    /* what is kept reads as before; a second repair finds nothing to do */
    db = open_ok(t.path);
    sto_classes cl;
    ck_assert_int_eq(sto_classes_read(db, a, 0, 1000, &cl, &err), 0);
    ck_assert(cl.n > 0 && cl.first[0] == 1);
    sto_classes_free(&cl);
    sto_close(db);
    ck_assert_int_eq(sto_repair(t.path, cap_ok, &report, &err), 0);
    ck_assert_msg(strstr(report, "repaired: 0 jobs") != NULL, "%s", report);
    free(report);
    sto_found_free(&x);
    tmp_remove(&t);
}
END_TEST

START_TEST(frontier_round_trip)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t job = create_ok(db, "{}", 0);
    int a[] = {0, 1, -1, INT_MAX, INT_MIN, 65536, 255, 256, -256};
    int b[1000];
    for (int i = 0; i < 1000; i++)
        b[i] = (int)((unsigned)i * 2654435761u ^ ((unsigned)i << 7));
    double ws[] = {1.0 / 3, 5e-324, 1.0, 0.0, 0.1 + 0.2, nextafter(1.0, 0.0)};
    sto_task tasks[6] = {
        {9, a, ws[0]}, {1000, b, ws[1]}, {0, NULL, ws[2]},
        {0, a, ws[3]}, {1, a + 4, ws[4]}, {5, a + 2, ws[5]},
    };
    ck_assert_int_eq(sto_checkpoint(db, job, tasks, 6, NULL, NULL, NULL, &err), 0);
    sto_close(db);
    db = open_ok(t.path);
    sto_task *lt;
    int n;
    ck_assert_int_eq(sto_frontier_load(db, job, &lt, &n, &err), 0);
    ck_assert_int_eq(n, 6);
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(lt[i].nimages, tasks[i].nimages);
        ck_assert(memcmp(&lt[i].weight, &tasks[i].weight, sizeof(double)) == 0);
        for (int k = 0; k < lt[i].nimages; k++)
            ck_assert_int_eq(lt[i].images[k], tasks[i].images[k]);
        ck_assert(lt[i].nimages > 0 || lt[i].images == NULL);
    }
    sto_tasks_free(lt, n);
    /* The blob is little-endian int32: task 0 starts 00 00 00 00 01 00 00 00 ff ff ff ff. */
    char hex[64];
    raw_query(t.path, "SELECT hex(substr(images, 1, 12)) FROM frontier WHERE seq = 0", hex,
              sizeof hex);
    ck_assert_str_eq(hex, "0000000001000000FFFFFFFF");
    /* An empty checkpoint empties the frontier. */
    ck_assert_int_eq(sto_checkpoint(db, job, NULL, 0, NULL, NULL, NULL, &err), 0);
    ck_assert_int_eq(sto_frontier_load(db, job, &lt, &n, &err), 0);
    ck_assert(n == 0 && lt == NULL);
    ck_assert_int_eq(sto_frontier_load(db, job + 1, &lt, &n, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "no job") != NULL, "%s", err.msg);
    sto_close(db);
    tmp_remove(&t);
}
END_TEST

/* Solutions numbered 1..N in storage order across checkpoints and chunks,
 * two jobs interleaved; every page (a few sizes, a class straddling page
 * ends) finds the classes that hold exactly its solutions. */
START_TEST(solutions_paging)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t a = create_ok(db, "{}", 0), b = create_ok(db, "{}", 0);
    enum { BATCHES = 5, PER = 700 };
    int64_t firsts[BATCHES * PER + 1];
    int ids0[BATCHES * PER];
    int64_t total = 0;
    for (int k = 0; k < BATCHES; k++) {
        sto_found x;
        batch_of(&x, PER, k * 10000);
        ck_assert_int_eq(sto_checkpoint(db, a, NULL, 0, &x, NULL, NULL, &err), 0);
        ck_assert_int_eq(sto_checkpoint(db, b, NULL, 0, &x, NULL, NULL, &err), 0);
        sto_found_free(&x);
        for (int i = 0; i < PER; i++) {
            firsts[k * PER + i] = total + 1;
            ids0[k * PER + i] = k * 10000 + i;
            total += i % 3 + 1;
        }
    }
    firsts[BATCHES * PER] = total + 1;
    static const int sizes[] = {1, 7, 1000, STO_MAX_PAGE};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        int64_t after = 0;
        int cls = 0;
        for (;;) {
            sto_classes c;
            ck_assert_int_eq(sto_classes_read(db, a, after, sizes[z], &c, &err), 0);
            if (c.n == 0) {
                sto_classes_free(&c);
                break;
            }
            while (firsts[cls + 1] <= after + 1) /* the class holding after + 1 */
                cls++;
            for (int i = 0; i < c.n; i++, cls++) {
                ck_assert_int_eq(c.first[i], firsts[cls]);
                ck_assert_int_eq(c.count[i], firsts[cls + 1] - firsts[cls]);
                ck_assert_int_eq(c.ids[c.start[i]], ids0[cls]);
            }
            cls--; /* the last class may go on into the next page */
            ck_assert(c.first[c.n - 1] <= after + sizes[z]);
            after += sizes[z];
            sto_classes_free(&c);
        }
        ck_assert_msg(after >= total && after - sizes[z] < total, "size %d: ended at %lld of %lld",
                      sizes[z], (long long)after, (long long)total);
    }
    /* near the end, by index */
    sto_classes c;
    ck_assert_int_eq(sto_classes_read(db, b, total - 1, 10, &c, &err), 0);
    ck_assert(c.n == 1 && c.first[0] + c.count[0] - 1 == total);
    sto_classes_free(&c);
    sto_close(db);
    tmp_remove(&t);
}
END_TEST

/* ---- schema 1 ------------------------------------------------------------------------------------ */

/* A real schema 1 file, made with schema 1's SQL: a completed job with
 * text solutions, a running one with solutions and a frontier, a queued
 * one with only a frontier.  Opening upgrades it in place: the completed
 * job serves its bodies read-only, the running one fails with a reason
 * (its new solutions could not join the old ones), the queued one goes on
 * in the new encoding. */
START_TEST(schema_1_upgrade)
{
    tmp t;
    tmp_make(&t);
    raw_exec(t.path,
             "PRAGMA journal_mode = WAL;"
             "CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, state TEXT NOT NULL CHECK "
             "(state IN ('queued','running','paused','completed','cancelled','failed')), priority "
             "INTEGER NOT NULL, engine_version INTEGER NOT NULL, puzzle TEXT NOT NULL, options "
             "TEXT NOT NULL, error TEXT, created INTEGER NOT NULL, updated INTEGER NOT NULL, "
             "solutions INTEGER NOT NULL DEFAULT 0 CHECK (solutions >= 0), nodes INTEGER NOT NULL "
             "DEFAULT 0, fraction REAL NOT NULL DEFAULT 0, seconds REAL NOT NULL DEFAULT 0, stats "
             "TEXT) STRICT;"
             "CREATE INDEX jobs_state ON jobs (state, id);"
             "CREATE TABLE frontier (job INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE, "
             "seq INTEGER NOT NULL, images BLOB NOT NULL, weight REAL NOT NULL, PRIMARY KEY (job, "
             "seq)) STRICT;"
             "CREATE TABLE solutions (seq INTEGER PRIMARY KEY AUTOINCREMENT, job INTEGER NOT NULL "
             "REFERENCES jobs (id) ON DELETE CASCADE, key TEXT NOT NULL, body TEXT NOT NULL, "
             "UNIQUE (job, key)) STRICT;"
             "CREATE INDEX solutions_page ON solutions (job, seq);"
             "PRAGMA user_version = 1; PRAGMA application_id = 1414746962;"
             "INSERT INTO jobs (state, priority, engine_version, puzzle, options, created, "
             "updated, solutions) VALUES ('completed', 0, 3, '{}', '{}', 1, 1, 2),"
             " ('running', 0, 3, '{}', '{}', 1, 1, 1), ('queued', 0, 3, '{}', '{}', 1, 1, 0);"
             "INSERT INTO solutions (job, key, body) VALUES (1, 'a', '{\"s\":1}'),"
             " (2, 'x', '{\"s\":9}'), (1, 'b', '{\"s\":2}');"
             "INSERT INTO frontier VALUES (2, 0, x'01000000', 0.5), (3, 0, x'02000000', 1.0);");
    tsr_err err = {""};
    sto_db *db = open_ok(t.path);
    ck_assert_int_eq(raw_query(t.path, "PRAGMA user_version", NULL, 0), STO_SCHEMA_VERSION);
    sto_job j;
    ck_assert_int_eq(sto_job_get(db, 1, &j, &err), 0);
    ck_assert(j.state == STO_COMPLETED && j.legacy && j.solutions == 2 && j.stored == 2);
    sto_job_clear(&j);
    char **bodies;
    int64_t *seqs;
    int n;
    ck_assert_int_eq(sto_solutions_page(db, 1, 0, 10, &bodies, &seqs, &n, &err), 0);
    ck_assert(n == 2 && seqs[0] == 1 && seqs[1] == 3);
    ck_assert_str_eq(bodies[0], "{\"s\":1}");
    ck_assert_str_eq(bodies[1], "{\"s\":2}");
    sto_solutions_free(bodies, seqs, n);
    ck_assert_int_eq(sto_job_get(db, 2, &j, &err), 0);
    ck_assert(j.state == STO_FAILED && j.legacy && j.error != NULL &&
              strstr(j.error, "resubmit the job") != NULL);
    sto_job_clear(&j);
    sto_task *lt;
    ck_assert_int_eq(sto_frontier_load(db, 2, &lt, &n, &err), 0);
    ck_assert_int_eq(n, 0); /* I3: a failed job keeps no frontier */
    ck_assert_int_eq(sto_job_get(db, 3, &j, &err), 0);
    ck_assert(j.state == STO_QUEUED && !j.legacy && j.stored == 0);
    sto_job_clear(&j);
    ck_assert_int_eq(sto_frontier_load(db, 3, &lt, &n, &err), 0);
    ck_assert(n == 1 && lt[0].images[0] == 2);
    sto_tasks_free(lt, n);
    /* the queued job goes on in the new encoding */
    sto_found x;
    batch_of(&x, 3, 0);
    ck_assert_int_eq(sto_checkpoint(db, 3, NULL, 0, &x, NULL, NULL, &err), 0);
    sto_found_free(&x);
    sto_classes c;
    ck_assert_int_eq(sto_classes_read(db, 3, 0, 10, &c, &err), 0);
    ck_assert(c.n == 3 && c.first[0] == 1);
    sto_classes_free(&c);
    ck_assert_int_eq(sto_job_delete(db, 1, &err), 0);
    ck_assert_int_eq(raw_query(t.path, "SELECT count(*) FROM solutions_v1", NULL, 0), 1);
    sto_close(db);
    /* opening again changes nothing */
    db = open_ok(t.path);
    ck_assert_int_eq(sto_job_get(db, 2, &j, &err), 0);
    ck_assert(j.state == STO_FAILED);
    sto_job_clear(&j);
    sto_close(db);
    tmp_remove(&t);
}
END_TEST

/* ---- crash safety ------------------------------------------------------------------------------ */

/* The child: open, then write generations g0+1, g0+2, ... until killed,
 * reporting each committed one on `fd`. */
static void crash_child(const char *path, int64_t job, int64_t g0, int fd)
{
    sto_db *db;
    tsr_err err;
    if (sto_open(path, ENGINE, &db, &err) != 0)
        _exit(3);
    gen_buf *b = malloc(sizeof *b);
    if (b == NULL)
        _exit(5);
    for (int64_t g = g0 + 1;; g++) {
        if (gen_write(db, job, g, b, &err) != 0) {
            fprintf(stderr, "crash child: %s\n", err.msg);
            _exit(4);
        }
        if (write(fd, &g, sizeof g) != (ssize_t)sizeof g)
            _exit(6);
    }
}

/* Reopen after a kill and return the generation stored, checking that it is
 * whole. */
static int64_t crash_verify(const char *path, int64_t job, const char *what)
{
    char ok[64];
    raw_query(path, "PRAGMA integrity_check", ok, sizeof ok);
    ck_assert_msg(strcmp(ok, "ok") == 0, "%s: integrity_check: %s", what, ok);
    sto_db *db = open_ok(path);
    tsr_err err = {""};
    sto_job j;
    ck_assert_int_eq(sto_job_get(db, job, &j, &err), 0);
    int64_t g = (int64_t)j.nodes;
    ck_assert_msg(j.solutions == gen_expected(g), "%s: job says %lld solutions at generation %lld",
                  what, (long long)j.solutions, (long long)g);
    ck_assert(g == 0 || (j.fraction == (double)g / 1e6 && j.seconds == (double)g * 0.5));
    sto_job_clear(&j);
    sto_task *tasks;
    int n;
    ck_assert_int_eq(sto_frontier_load(db, job, &tasks, &n, &err), 0);
    int64_t fg = frontier_generation(tasks, n);
    ck_assert_msg(fg == g, "%s: frontier generation %lld, progress generation %lld", what,
                  (long long)fg, (long long)g);
    sto_tasks_free(tasks, n);
    check_solutions_of(db, job, g, what);
    sto_close(db);
    return g;
}

START_TEST(crash_safety)
{
    rng_seed();
    uint64_t seed = rng_state;
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    int64_t job = create_ok(db, "{}", 0);
    gen_buf *b = malloc(sizeof *b);
    ck_assert(b != NULL);
    tsr_err err = {""};
    ck_assert_int_eq(gen_write(db, job, 0, b, &err), 0); /* generation 0: a frontier, no solutions */
    free(b);
    sto_close(db);

    int64_t g = 0;
    int mid_run = 0;
    for (int iter = 0; iter < 30; iter++) {
        char what[96];
        snprintf(what, sizeof what, "seed %llu, kill %d", (unsigned long long)seed, iter);
        int fds[2];
        ck_assert(pipe(fds) == 0);
        pid_t pid = fork();
        ck_assert(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            crash_child(t.path, job, g, fds[1]);
        }
        close(fds[1]);
        int64_t last = g, v;
        if (rng() % 4 == 0) {
            sleep_us((long)(rng() % 3000)); /* may land while the child opens the file */
        } else {
            /* Wait for the first commit, then kill somewhere in the next ones. */
            if (read(fds[0], &v, sizeof v) == (ssize_t)sizeof v)
                last = v;
            sleep_us((long)(rng() % 15000));
            mid_run++;
        }
        kill(pid, SIGKILL);
        int status;
        ck_assert(waitpid(pid, &status, 0) == pid);
        ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                      "%s: the child stopped by itself (status %#x)", what, status);
        while (read(fds[0], &v, sizeof v) == (ssize_t)sizeof v)
            last = v;
        close(fds[0]);
        int64_t stored = crash_verify(t.path, job, what);
        /* A commit the child saw is durable; at most one more got in before
         * the kill (committed, not yet reported). */
        ck_assert_msg(stored == last || stored == last + 1,
                      "%s: stored generation %lld, last reported %lld", what, (long long)stored,
                      (long long)last);
        g = stored;
    }
    ck_assert_msg(g >= mid_run, "seed %llu: only %lld generations in %d runs",
                  (unsigned long long)seed, (long long)g, mid_run);
    tmp_remove(&t);
}
END_TEST

/* ---- a reader beside the writer ---------------------------------------------------------------- */
#define RW_GENERATIONS 150

typedef struct rw_ctx {
    const char *path;
    int64_t job;
    atomic_int done;
    int failed;
    char msg[TSR_ERR_MAX + 64];
} rw_ctx;

static void *rw_writer(void *arg)
{
    rw_ctx *c = arg;
    sto_db *db;
    tsr_err err = {""};
    gen_buf *b = malloc(sizeof *b);
    if (b == NULL || sto_open(c->path, ENGINE, &db, &err) != 0) {
        c->failed = 1;
        snprintf(c->msg, sizeof c->msg, "writer open: %s", err.msg);
        free(b);
        atomic_store(&c->done, 1);
        return NULL;
    }
    for (int64_t g = 1; g <= RW_GENERATIONS; g++) {
        if (gen_write(db, c->job, g, b, &err) != 0) {
            c->failed = 1;
            snprintf(c->msg, sizeof c->msg, "writer gen %lld: %s", (long long)g, err.msg);
            break;
        }
        if (g % 10 == 0)
            sto_wal_checkpoint(db, false, NULL);
        sleep_us(500);
    }
    sto_close(db);
    free(b);
    atomic_store(&c->done, 1);
    return NULL;
}

START_TEST(reader_beside_writer)
{
    tmp t;
    tmp_make(&t);
    sto_db *w = open_ok(t.path);
    rw_ctx c = {.path = t.path};
    c.job = create_ok(w, "{}", 0);
    gen_buf *b = malloc(sizeof *b);
    ck_assert(b != NULL);
    tsr_err err = {""};
    ck_assert_int_eq(gen_write(w, c.job, 0, b, &err), 0);
    free(b);
    sto_close(w);

    sto_db *r = open_ok(t.path);
    pthread_t th;
    ck_assert(pthread_create(&th, NULL, rw_writer, &c) == 0);
    int64_t last_job = 0, last_front = 0, last_count = 0;
    int reads = 0, generations_seen = 0;
    while (!atomic_load(&c.done) || reads < 3) {
        sto_job j;
        int rc = sto_job_get(r, c.job, &j, &err);
        ck_assert_msg(rc == 0, "reader: %s", err.msg);
        int64_t g = (int64_t)j.nodes;
        ck_assert_msg(j.solutions == gen_expected(g), "job row of generation %lld says %lld",
                      (long long)g, (long long)j.solutions);
        ck_assert(g >= last_job);
        generations_seen += g != last_job;
        last_job = g;
        sto_job_clear(&j);

        sto_task *tasks;
        int n;
        rc = sto_frontier_load(r, c.job, &tasks, &n, &err);
        ck_assert_msg(rc == 0, "reader: %s", err.msg);
        int64_t fg = frontier_generation(tasks, n);
        ck_assert_msg(fg >= last_front, "frontier generation %lld after %lld", (long long)fg,
                      (long long)last_front);
        last_front = fg;
        sto_tasks_free(tasks, n);

        sto_classes cl; /* the solutions stored, counted from the chunks */
        rc = sto_classes_read(r, c.job, 0, STO_MAX_PAGE, &cl, &err);
        ck_assert_msg(rc == 0, "reader: %s", err.msg);
        n = 0;
        for (int i = 0; i < cl.n; i++)
            n += cl.count[i];
        sto_classes_free(&cl);
        int64_t h = 0;
        while (gen_expected(h) < n)
            h++;
        ck_assert_msg(gen_expected(h) == n, "%d solutions is no generation's count", n);
        ck_assert(n >= last_count);
        last_count = n;
        reads++;
    }
    pthread_join(th, NULL);
    ck_assert_msg(!c.failed, "%s", c.msg);
    ck_assert_int_eq(crash_verify(t.path, c.job, "after the writer"), RW_GENERATIONS);
    ck_assert_msg(generations_seen >= 2, "the reader saw %d generations in %d reads",
                  generations_seen, reads);
    sto_close(r);
    tmp_remove(&t);
}
END_TEST

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("jobs");
    tcase_add_test(tc, state_names);
    tcase_add_test(tc, job_create_get_list);
    tcase_add_test(tc, job_state_rules);
    tcase_add_test(tc, job_delete_rules);
    tcase_add_test(tc, reopen_keeps_everything);
    tcase_add_test(tc, schema_checks);
    tcase_add_test(tc, claim_is_exclusive);
    tcase_add_test(tc, claim_follows_the_file);
    tcase_add_test(tc, checkpoint_atomic);
    tcase_add_test(tc, batch_records);
    tcase_add_test(tc, check_values);
    tcase_add_test(tc, repair_cases);
    tcase_add_test(tc, check_damaged_file);
    tcase_add_test(tc, check_invariants);
    tcase_add_test(tc, schema_1_upgrade);
    tcase_add_test(tc, frontier_round_trip);
    tcase_add_test(tc, solutions_paging);
    tcase_add_test(tc, chunk_crc_matches_bitwise);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    TCase *tc_crash = tcase_create("crash");
    tcase_add_test(tc_crash, crash_safety);
    tcase_add_test(tc_crash, reader_beside_writer);
    tcase_set_timeout(tc_crash, 60);
    suite_add_tcase(s, tc_crash);
    return s;
}
