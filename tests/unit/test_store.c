/*
 * test_store.c - the SQLite job store (src/store) on real files.
 *
 * Every test makes its own directory with mkdtemp (under $TMPDIR or /tmp)
 * and removes it at the end; nothing uses :memory:.  The tests cover the job
 * calls and their rules (paging, the state filter, final states, what may be
 * deleted), reopening, the schema version and identity checks, the caps,
 * checkpoint atomicity (a checkpoint that fails half way leaves the previous
 * one intact), duplicate solution keys, exact frontier round trips and
 * solution paging.
 *
 * Two tests exercise what the daemon depends on most:
 *   crash safety - a child process writes checkpoints in a loop, each one a
 *     numbered "generation" g: a frontier of TASKS(g) tasks whose first image
 *     is g, SOLS(g) new solutions keyed "g:j", one repeated key of g - 1, and
 *     progress nodes = g.  The parent kills it with SIGKILL at random moments
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store.h"
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
    int r = sto_job_create(db, puzzle, "{\"unique\":\"raw\"}", priority, &id, &err);
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

/* Solutions stored after generation g. */
static int64_t gen_expected(int64_t g)
{
    int64_t n = 0;
    for (int64_t h = 1; h <= g; h++)
        n += GEN_SOLS(h);
    return n;
}

typedef struct gen_buf {
    sto_task tasks[20 + 37];
    int images[(20 + 37) * GEN_IMAGES];
    sto_solution sols[8];
    char keys[8][32], bodies[8][48];
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
    int ns = 0;
    for (int j = 0; j < GEN_SOLS(g); j++, ns++) {
        snprintf(b->keys[ns], sizeof b->keys[ns], "%lld:%d", (long long)g, j);
        snprintf(b->bodies[ns], sizeof b->bodies[ns], "sol %lld %d", (long long)g, j);
    }
    if (g > 1 && GEN_SOLS(g - 1) > 0) { /* a repeat: must be ignored */
        snprintf(b->keys[ns], sizeof b->keys[ns], "%lld:0", (long long)(g - 1));
        snprintf(b->bodies[ns], sizeof b->bodies[ns], "repeat %lld", (long long)g);
        ns++;
    }
    for (int j = 0; j < ns; j++)
        b->sols[j] = (sto_solution){b->keys[j], b->bodies[j]};
    sto_progress p = {(uint64_t)g, (double)g / 1e6, (double)g * 0.5, "{\"gen\":1}"};
    return sto_checkpoint(db, job, b->tasks, nt, b->sols, ns, &p, NULL, err);
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

/* Check that the solutions are exactly those of generations 1..g: each body
 * names a (generation <= g, index < SOLS) pair, keys are unique (so the
 * pairs are distinct), and there are gen_expected(g) of them. */
static void check_solutions_of(sto_db *db, int64_t job, int64_t g, const char *what)
{
    char **bodies;
    int64_t *seqs;
    int n;
    tsr_err err = {""};
    int r = sto_solutions_page(db, job, 0, STO_MAX_PAGE, &bodies, &seqs, &n, &err);
    ck_assert_msg(r == 0, "%s: page: %s", what, err.msg);
    ck_assert_msg(n == gen_expected(g), "%s: %d solutions stored, generation %lld implies %lld",
                  what, n, (long long)g, (long long)gen_expected(g));
    for (int i = 0; i < n; i++) {
        long long h;
        int j;
        ck_assert_msg(sscanf(bodies[i], "sol %lld %d", &h, &j) == 2, "%s: body '%s'", what,
                      bodies[i]);
        ck_assert_msg(h >= 1 && h <= g && j >= 0 && j < GEN_SOLS(h), "%s: body '%s' at gen %lld",
                      what, bodies[i], (long long)g);
        ck_assert(i == 0 || seqs[i] > seqs[i - 1]);
    }
    sto_solutions_free(bodies, seqs, n);
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
    int64_t id0 = 0;
    ck_assert_int_eq(sto_job_create(db, "{}", NULL, -5, &id0, &err), 0);

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
    ck_assert_int_eq(sto_checkpoint(db, a, &task, 1, NULL, 0, NULL, NULL, &err), 0);
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
    ck_assert_int_eq(sto_checkpoint(db, a, &task, 1, NULL, 0, NULL, NULL, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "takes no more checkpoints") != NULL, "%s", err.msg);
    sto_db *other;
    ck_assert_int_eq(sto_open(t.path, ENGINE + 1, &other, &err), 0);
    ck_assert_int_eq(sto_checkpoint(other, b, &task, 1, NULL, 0, NULL, NULL, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "engine version 3, this is version 4") != NULL, "%s", err.msg);
    sto_close(other);
    /* A final state and a frontier together are a contradiction. */
    enum sto_state done = STO_COMPLETED;
    ck_assert_int_eq(sto_checkpoint(db, b, &task, 1, NULL, 0, NULL, &done, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_checkpoint(db, b, NULL, 0, NULL, 0, NULL, &done, &err), 0);
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
    sto_solution sol[2] = {{"k1", "b1"}, {"k2", "b2"}};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(sto_checkpoint(db, ids[i], &task, 1, sol, 2, NULL, NULL, &err), 0);

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
    char **bodies;
    int64_t *seqs;
    int n;
    ck_assert_int_eq(sto_solutions_page(db, ids[1], 0, 10, &bodies, &seqs, &n, &err), TSR_EINVAL);
    ck_assert_int_eq(raw_query(t.path, "SELECT count(*) FROM solutions", NULL, 0), 2);
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
    sto_solution sols[] = {{"a", "{\"s\":1}"}, {"b", "{\"s\":2}"}};
    sto_progress p = {UINT64_MAX - 5, 0.375, 12.5, "{\"fits\":[1,2,3]}"};
    enum sto_state paused = STO_PAUSED;
    ck_assert_int_eq(sto_checkpoint(db, a, tasks, 3, sols, 2, &p, &paused, &err), 0);
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
    ck_assert_int_eq(sto_checkpoint(db, a, tasks, 1, NULL, 0, NULL, NULL, &err), 0);
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
    char **bodies;
    int64_t *seqs;
    ck_assert_int_eq(sto_solutions_page(db, a, 0, 10, &bodies, &seqs, &n, &err), 0);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(bodies[0], "{\"s\":1}");
    ck_assert_str_eq(bodies[1], "{\"s\":2}");
    sto_solutions_free(bodies, seqs, n);
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
    ck_assert_msg(strstr(err.msg, "schema version 2 is newer than this build understands (1)") !=
                          NULL &&
                      strstr(err.msg, t.path) != NULL,
                  "%s", err.msg);

    /* Another application's database. */
    char other[700];
    snprintf(other, sizeof other, "%s/other.db", t.dir);
    raw_exec(other, "CREATE TABLE notes (x TEXT)");
    ck_assert_int_eq(sto_open(other, ENGINE, &db, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "not a Tessera store") != NULL, "%s", err.msg);
    raw_exec(other, "PRAGMA user_version = 1");
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
    ck_assert_msg(strstr(err.msg, "unable to open") != NULL, "%s", err.msg);
    ck_assert_int_eq(sto_open(":memory:", ENGINE, &db, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_open(NULL, ENGINE, &db, &err), TSR_EINVAL);
    tmp_remove(&t);
}
END_TEST

/* ---- checkpoints --------------------------------------------------------------------------- */
/* The state checkpoint_atomic's first checkpoint left: a queued job with
 * progress 100 / 0.25 and stats v1, two solutions, the two tasks of `good`. */
static void unchanged(sto_db *db, int64_t job, const char *path, const char *what)
{
    tsr_err err = {""};
    sto_job j;
    ck_assert_int_eq(sto_job_get(db, job, &j, &err), 0);
    ck_assert_msg(j.state == STO_QUEUED && j.solutions == 2 && j.nodes == 100 &&
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
    ck_assert_msg(raw_query(path, "SELECT count(*) FROM solutions", NULL, 0) == 2 &&
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
    sto_solution sols[2] = {{"k1", "s1"}, {"k2", "s2"}};
    sto_progress p = {100, 0.25, 1.5, "{\"v\":1}"};
    ck_assert_int_eq(sto_checkpoint(db, job, good, 2, sols, 2, &p, NULL, &err), 0);

    /* A checkpoint whose fourth task is too big: the first three tasks and
     * the frontier deletion were already written when it failed. */
    int *big = calloc(STO_MAX_TASK_IMAGES + 1, sizeof *big);
    ck_assert(big != NULL);
    sto_task bad[4] = {{1, im, 0.1}, {2, im, 0.1}, {3, im, 0.1}, {STO_MAX_TASK_IMAGES + 1, big, 0.1}};
    sto_solution more[2] = {{"k3", "s3"}, {"k4", "s4"}};
    sto_progress p2 = {200, 0.5, 3, "{\"v\":2}"};
    enum sto_state paused = STO_PAUSED;
    ck_assert_int_eq(sto_checkpoint(db, job, bad, 4, more, 2, &p2, &paused, &err), TSR_ETOOBIG);
    ck_assert_msg(strstr(err.msg, "task 3 has 100001 images (at most 100000)") != NULL, "%s",
                  err.msg);
    unchanged(db, job, t.path, "too many images");

    /* Failing on the last solution, after every task and some solutions. */
    sto_solution broken[3] = {{"k5", "s5"}, {"k6", "s6"}, {"k7", NULL}};
    ck_assert_int_eq(sto_checkpoint(db, job, bad, 3, broken, 3, &p2, &paused, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "solution 2 has no key or no body") != NULL, "%s", err.msg);
    unchanged(db, job, t.path, "no body");

    /* A bad weight, a NaN fraction, too many tasks, an oversized document. */
    sto_task nan_w = {1, im, NAN};
    ck_assert_int_eq(sto_checkpoint(db, job, &nan_w, 1, NULL, 0, NULL, NULL, &err), TSR_EINVAL);
    sto_task heavy = {1, im, 1.5};
    ck_assert_int_eq(sto_checkpoint(db, job, &heavy, 1, NULL, 0, NULL, NULL, &err), TSR_EINVAL);
    sto_progress pn = {1, NAN, 0, NULL};
    ck_assert_int_eq(sto_checkpoint(db, job, good, 1, NULL, 0, &pn, NULL, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_checkpoint(db, job, good, STO_MAX_TASKS + 1, NULL, 0, NULL, NULL, &err),
                     TSR_ETOOBIG);
    ck_assert_int_eq(sto_checkpoint(db, job, good, -1, NULL, 0, NULL, NULL, &err), TSR_EINVAL);
    char *huge = malloc(STO_MAX_DOC + 2);
    ck_assert(huge != NULL);
    memset(huge, 'x', STO_MAX_DOC + 1);
    huge[STO_MAX_DOC + 1] = '\0';
    sto_progress ph = {1, 0, 0, huge};
    ck_assert_int_eq(sto_checkpoint(db, job, good, 1, NULL, 0, &ph, NULL, &err), TSR_ETOOBIG);
    ck_assert_msg(strstr(err.msg, "statistics document is larger than 16777216 bytes") != NULL,
                  "%s", err.msg);
    sto_solution hs[2] = {{"k8", "s8"}, {"big", huge}};
    ck_assert_int_eq(sto_checkpoint(db, job, bad, 2, hs, 2, &p2, NULL, &err), TSR_ETOOBIG);
    unchanged(db, job, t.path, "huge body");
    int64_t id;
    ck_assert_int_eq(sto_job_create(db, huge, NULL, 0, &id, &err), TSR_ETOOBIG);
    ck_assert_msg(strstr(err.msg, "puzzle document is larger") != NULL, "%s", err.msg);
    ck_assert_int_eq(sto_job_set_state(db, job, STO_RUNNING, huge, &err), TSR_ETOOBIG);
    huge[STO_MAX_DOC] = '\0'; /* exactly the cap is accepted */
    ck_assert_int_eq(sto_job_create(db, huge, NULL, 0, &id, &err), 0);
    free(huge);

    unchanged(db, job, t.path, "after every failure");

    /* The connection is usable afterwards: no transaction was left open. */
    sto_job j;
    sto_task *lt;
    int n;
    sto_task capped = {STO_MAX_TASK_IMAGES, big, 1};
    ck_assert_int_eq(sto_checkpoint(db, job, &capped, 1, more, 2, &p2, &paused, &err), 0);
    ck_assert_int_eq(sto_frontier_load(db, job, &lt, &n, &err), 0);
    ck_assert(n == 1 && lt[0].nimages == STO_MAX_TASK_IMAGES);
    sto_tasks_free(lt, n);
    ck_assert_int_eq(sto_job_get(db, job, &j, &err), 0);
    ck_assert(j.state == STO_PAUSED && j.solutions == 4 && j.nodes == 200);
    sto_job_clear(&j);
    free(big);
    sto_close(db);
    tmp_remove(&t);
}
END_TEST

START_TEST(duplicate_keys_ignored)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t a = create_ok(db, "{}", 0), b = create_ok(db, "{}", 0);
    sto_solution s1[] = {{"x", "first x"}, {"y", "first y"}, {"x", "second x"}};
    ck_assert_int_eq(sto_checkpoint(db, a, NULL, 0, s1, 3, NULL, NULL, &err), 0);
    sto_solution s2[] = {{"y", "again y"}, {"z", "first z"}};
    ck_assert_int_eq(sto_checkpoint(db, a, NULL, 0, s2, 2, NULL, NULL, &err), 0);
    /* The same key in another job is another solution. */
    ck_assert_int_eq(sto_checkpoint(db, b, NULL, 0, s2, 2, NULL, NULL, &err), 0);
    sto_job j;
    ck_assert_int_eq(sto_job_get(db, a, &j, &err), 0);
    ck_assert_int_eq(j.solutions, 3);
    sto_job_clear(&j);
    ck_assert_int_eq(sto_job_get(db, b, &j, &err), 0);
    ck_assert_int_eq(j.solutions, 2);
    sto_job_clear(&j);
    char **bodies;
    int64_t *seqs;
    int n;
    ck_assert_int_eq(sto_solutions_page(db, a, 0, 10, &bodies, &seqs, &n, &err), 0);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(bodies[0], "first x"); /* the first body stays */
    ck_assert_str_eq(bodies[1], "first y");
    ck_assert_str_eq(bodies[2], "first z");
    sto_solutions_free(bodies, seqs, n);
    /* I1 in the file: the counts equal the rows. */
    ck_assert_int_eq(raw_query(t.path,
                               "SELECT count(*) FROM jobs WHERE solutions !="
                               " (SELECT count(*) FROM solutions WHERE job = jobs.id)",
                               NULL, 0),
                     0);
    sto_close(db);
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
    ck_assert_int_eq(sto_checkpoint(db, job, tasks, 6, NULL, 0, NULL, NULL, &err), 0);
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
    ck_assert_int_eq(sto_checkpoint(db, job, NULL, 0, NULL, 0, NULL, NULL, &err), 0);
    ck_assert_int_eq(sto_frontier_load(db, job, &lt, &n, &err), 0);
    ck_assert(n == 0 && lt == NULL);
    ck_assert_int_eq(sto_frontier_load(db, job + 1, &lt, &n, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "no job") != NULL, "%s", err.msg);
    sto_close(db);
    tmp_remove(&t);
}
END_TEST

START_TEST(solutions_paging)
{
    tmp t;
    tmp_make(&t);
    sto_db *db = open_ok(t.path);
    tsr_err err = {""};
    int64_t a = create_ok(db, "{}", 0), b = create_ok(db, "{}", 0);
    char keys[30][16], bodies_in[30][24];
    sto_solution s[30];
    for (int i = 0; i < 30; i++) {
        snprintf(keys[i], sizeof keys[i], "k%02d", 29 - i); /* storage order is not key order */
        snprintf(bodies_in[i], sizeof bodies_in[i], "body %d", i);
        s[i] = (sto_solution){keys[i], bodies_in[i]};
    }
    /* Interleave two jobs so that a job's sequence numbers have gaps. */
    for (int c = 0; c < 30; c += 6) {
        ck_assert_int_eq(sto_checkpoint(db, a, NULL, 0, s + c, 6, NULL, NULL, &err), 0);
        ck_assert_int_eq(sto_checkpoint(db, b, NULL, 0, s + c, 3, NULL, NULL, &err), 0);
    }
    char **bodies;
    int64_t *seqs;
    int n, seen = 0;
    int64_t after = 0;
    for (;;) {
        ck_assert_int_eq(sto_solutions_page(db, a, after, 7, &bodies, &seqs, &n, &err), 0);
        ck_assert(n <= 7);
        for (int i = 0; i < n; i++) {
            char want[16];
            snprintf(want, sizeof want, "body %d", seen++);
            ck_assert_str_eq(bodies[i], want);
            ck_assert(seqs[i] > after);
            after = seqs[i];
        }
        sto_solutions_free(bodies, seqs, n);
        if (n < 7)
            break;
    }
    ck_assert_int_eq(seen, 30);
    ck_assert_int_eq(sto_solutions_page(db, a, after, 7, &bodies, &seqs, &n, &err), 0);
    ck_assert(n == 0 && bodies == NULL && seqs == NULL);
    ck_assert_int_eq(sto_solutions_page(db, b, 0, 100, &bodies, &seqs, &n, &err), 0);
    ck_assert_int_eq(n, 15);
    sto_solutions_free(bodies, seqs, n);
    ck_assert_int_eq(sto_solutions_page(db, a, 0, 0, &bodies, &seqs, &n, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_solutions_page(db, a, -1, 5, &bodies, &seqs, &n, &err), TSR_EINVAL);
    ck_assert_int_eq(sto_solutions_page(db, 99, 0, 5, &bodies, &seqs, &n, &err), TSR_EINVAL);
    ck_assert_str_eq(err.msg, "store: page solutions of job 99: no job 99");
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

        char **bodies;
        int64_t *seqs;
        rc = sto_solutions_page(r, c.job, 0, STO_MAX_PAGE, &bodies, &seqs, &n, &err);
        ck_assert_msg(rc == 0, "reader: %s", err.msg);
        sto_solutions_free(bodies, seqs, n);
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

int main(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("jobs");
    tcase_add_test(tc, state_names);
    tcase_add_test(tc, job_create_get_list);
    tcase_add_test(tc, job_state_rules);
    tcase_add_test(tc, job_delete_rules);
    tcase_add_test(tc, reopen_keeps_everything);
    tcase_add_test(tc, schema_checks);
    tcase_add_test(tc, checkpoint_atomic);
    tcase_add_test(tc, duplicate_keys_ignored);
    tcase_add_test(tc, frontier_round_trip);
    tcase_add_test(tc, solutions_paging);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    TCase *tc_crash = tcase_create("crash");
    tcase_add_test(tc_crash, crash_safety);
    tcase_add_test(tc_crash, reader_beside_writer);
    tcase_set_timeout(tc_crash, 60);
    suite_add_tcase(s, tc_crash);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
