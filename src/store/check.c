/*
 * check.c - the offline check of a store (sto_check, tesserad --check):
 * every invariant of store.c's header it can see, SQLite's structure,
 * and a file too damaged to read reported as damage, never a crash.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/base.h"
#include "store/store_impl.h"
#include "tessera/job.h"

/* ---- checking a store ------------------------------------------------------------
 * sto_check reads the whole file in one read transaction (one snapshot: a
 * live daemon's commits never make two tables disagree) and reports every
 * breach of the invariants at the top of this file it can see:
 *   structure   SQLite's own check (quick_check, or integrity_check when
 *               full) and the tables the file's schema version must have;
 *   chunks      each chunk's check value and encoding (I5), and a job's
 *               chunks numbering 1..stored without gap or overlap (I1);
 *   jobs        stored = the solutions of its chunks (I1) <= found, and
 *               = what options.store keeps of the found ones (I6); its
 *               documents valid JSON;
 *   frontier    none for a final job (I3); for an unfinished one tasks
 *               0..n-1, well formed, weighing with the fraction done the
 *               whole tree (I2), or no task and nothing done yet;
 *   references  every chunk and task in a job, every job in a batch that
 *               exists (PRAGMA foreign_key_check);
 *   classes     no job holding the same class twice (I7).
 * A malformed page met anywhere (SQLITE_CORRUPT, SQLITE_NOTADB) is a
 * finding, not a failure to read: the file is damaged, and no row is read
 * after it.  Only what stops the check itself (memory, I/O, a file that
 * cannot be opened) is an error. */

/* |sum of an unfinished job's task weights + its fraction done - 1| may be
 * this much: weights are split and summed in doubles, tasks by the million
 * (and the fraction done over every task finished), so the sum is off by
 * ~1e-10 at most; a task lost or searched twice is off by its weight,
 * which is larger unless it is a millionth of the tree. */
#define CHECK_WEIGHT_TOLERANCE 1e-6
/* Memory for one job's class hashes (8 bytes a class); a job with more
 * classes is hashed in several passes, each keeping one share of them. */
#define CHECK_HASH_MEMORY ((size_t)128 << 20)
/* Equal hashes compared id by id, per job: the examples the report gives. */
#define CHECK_COMPARE_PAIRS 64

/* SQLite's structure check runs as one step of one statement, which the
 * progress handler never interrupts: on a big store read cold from a busy
 * disk it took a minute where its deadline said 3 s.  sqlite3_interrupt,
 * from a thread of its own at the deadline, does stop it. */
typedef struct watchdog {
    base_mutex mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool inited, started, done;  /* done under mu */
    double deadline;
    sqlite3 *db;
} watchdog;

static void *watchdog_main(void *arg)
{
    watchdog *w = arg;
    base_lock(&w->mu);
    while (!w->done && base_cond_wait(&w->cv, &w->mu, w->deadline) == 0)
        ;
    if (!w->done)
        sqlite3_interrupt(w->db); /* seen as the deadline (check_finish) */
    base_unlock(&w->mu);
    return NULL;
}

static void watchdog_start(watchdog *w, sqlite3 *db, double deadline)
{
    base_mutex_init(&w->mu);
    base_cond_init(&w->cv);
    w->db = db;
    w->deadline = deadline;
    w->done = false;
    w->inited = true;
    w->started = pthread_create(&w->thread, NULL, watchdog_main, w) == 0;
}

static void watchdog_stop(watchdog *w)
{
    if (!w->inited)
        return;
    if (w->started) {
        base_lock(&w->mu);
        w->done = true;
        pthread_cond_broadcast(&w->cv);
        base_unlock(&w->mu);
        pthread_join(w->thread, NULL);
        w->started = false;
    }
    pthread_cond_destroy(&w->cv);
    base_mutex_destroy(&w->mu);
    w->inited = false;
}

static int past_deadline(void *arg)
{
    double deadline = *(const double *)arg;
    return deadline > 0 && base_now() > deadline;
}

void sto_finding(checker *c, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* one line of text, whatever bytes of the damaged file it quotes: a
     * control byte or a byte outside well-formed UTF-8 becomes '?' */
    for (unsigned char *p = (unsigned char *)line; *p != '\0';) {
        int n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3
                : (*p & 0xf8) == 0xf0 ? 4 : 0;
        for (int k = 1; k < n; k++)
            if ((p[k] & 0xc0) != 0x80)
                n = 0;
        if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
    fprintf(c->f, "%s\n", line);
    c->problems++;
}

bool sto_is_damage(int rc)
{
    return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB;
}

/* A statement of the check that did not end in SQLITE_DONE (rc from its
 * prepare or its last step; call before finalizing it): out of time, a
 * finding (damage), or an error. */
static int check_failed(checker *c, int rc, const char *what)
{
    if ((rc & 0xff) == SQLITE_INTERRUPT) { /* the deadline's progress handler */
        c->late = true;
        return 0;
    }
    if (sto_is_damage(rc)) {
        sto_finding(c, "structure: %s (met while %s; the check could not go on)",
                sqlite3_errmsg(c->s->db), what);
        c->broken = true;
        return 0;
    }
    return sto_sql_err(c->s, rc, c->err, c->ctx, what);
}

/* Whether the check may read on. */
static bool check_going(const checker *c)
{
    return !c->broken && !c->late;
}

/* Prepare one of the check's statements: 0 with *st, or 0 with *st NULL
 * (a finding, or out of time), or an error. */
static int check_prepare(checker *c, const char *sql, sqlite3_stmt **st, const char *what)
{
    *st = NULL;
    if (!check_going(c))
        return 0;
    int rc = sqlite3_prepare_v2(c->s->db, sql, -1, st, NULL);
    if (rc == SQLITE_OK)
        return 0;
    *st = NULL;
    return check_failed(c, rc, what);
}

/* The end of a statement's rows: rc is its last step's code. */
static int check_finish(checker *c, sqlite3_stmt *st, int rc, int r, const char *what)
{
    if (r == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        r = check_failed(c, rc, what);
    sqlite3_finalize(st);
    return r;
}

/* Step on, unless the deadline passed between rows. */
static int check_step(checker *c, sqlite3_stmt *st)
{
    if (past_deadline(&c->deadline)) {
        c->late = true;
        return SQLITE_DONE;
    }
    return sqlite3_step(st);
}

/* The one header field SQLite reads without complaint yet obeys: a file
 * format write version (byte 18) above 2 makes it open the file read-only,
 * so the daemon would start and fail its first write.  (A read version
 * above 2, a bad page size, magic string or payload fractions make SQLite
 * refuse the file, which the first read reports.) */
void sto_check_header(checker *c, const char *path)
{
    unsigned char h[100];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? pread(fd, h, sizeof h, 0) : -1;
    if (fd >= 0)
        close(fd);
    if (n == (ssize_t)sizeof h && h[18] > 2)
        sto_finding(c, "structure: the file's header gives file format write version %d (byte "
                   "18; SQLite writes 1 and 2), so SQLite opens it read-only", h[18]);
}

/* SQLite's structure check: its lines are findings. */
int sto_check_structure(checker *c, bool full)
{
    const char *what = "checking the structure";
    sqlite3_stmt *st;
    int r = check_prepare(c, full ? "PRAGMA integrity_check(100)" : "PRAGMA quick_check(100)",
                          &st, what);
    if (r != 0 || st == NULL)
        return r;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        /* a row may hold several lines, headed "*** in database main ***":
         * each other line is a finding */
        const char *text = (const char *)sqlite3_column_text(st, 0);
        for (const char *line = text; line != NULL && *line != '\0';) {
            int n = (int)strcspn(line, "\n");
            if (strncmp(line, "ok", (size_t)n) != 0 && strncmp(line, "*** ", 4) != 0)
                sto_finding(c, "structure: %.*s", n, line);
            line += n + (line[n] == '\n');
        }
    }
    return check_finish(c, st, rc, 0, what);
}

/* The tables each schema version has (besides sqlite_sequence), and every
 * table any version has had. */
static const char *const version_tables[STO_SCHEMA_VERSION + 1] = {
    "", "jobs frontier solutions", "jobs frontier solutions_v1 chunks",
    "jobs frontier solutions_v1 chunks batches",
    "jobs frontier solutions_v1 chunks batches record_tasks"};
static const char *const all_tables[] = {"jobs", "frontier", "solutions", "solutions_v1",
                                         "chunks", "batches", "record_tasks"};

static bool word_in(const char *word, const char *list)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* The file's tables against its schema version: a version that lies (a
 * damaged header) would make tesserad upgrade, or read, the wrong tables. */
int sto_check_schema(checker *c, int version)
{
    const char *what = "reading the schema";
    char have[256] = "";
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT name FROM sqlite_master WHERE type = 'table'", &st, what);
    if (r != 0 || st == NULL)
        return r;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        for (size_t i = 0; name != NULL && i < sizeof all_tables / sizeof *all_tables; i++)
            if (strcmp(name, all_tables[i]) == 0 && strlen(have) + strlen(name) + 2 < sizeof have)
                strcat(strcat(have, " "), name);
    }
    if ((r = check_finish(c, st, rc, 0, what)) != 0 || !check_going(c))
        return r;
    c->tables = true;
    for (size_t i = 0; i < sizeof all_tables / sizeof *all_tables; i++) {
        bool want = word_in(all_tables[i], version_tables[version]);
        if (want != word_in(all_tables[i], have)) {
            sto_finding(c, "schema: the file says schema %d, which %s a table %s", version,
                    want ? "has" : "does not have", all_tables[i]);
            if (want)
                c->tables = false; /* the rows of the missing one cannot be read */
        }
    }
    return 0;
}

/* Every chunk: its check value and encoding, and each job's numbering
 * 1, 2, ... without gap or overlap (I1, I5). */
static int check_chunks(checker *c)
{
    const char *what = "reading chunks";
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT first, nsol, nclass, data, crc, job FROM chunks "
                             "ORDER BY job, first", &st, what);
    if (r != 0 || st == NULL)
        return r;
    int64_t job = -1, next = 1;
    long chunks = 0;
    int rc;
    while (r == 0 && (rc = check_step(c, st)) == SQLITE_ROW) {
        int64_t j = sqlite3_column_int64(st, 5), first = sqlite3_column_int64(st, 0);
        if (j != job) {
            job = j;
            next = 1;
        }
        if (first > next)
            sto_finding(c, "job %lld: solutions %lld to %lld are missing", (long long)job,
                    (long long)next, (long long)first - 1);
        else if (first < next)
            sto_finding(c, "job %lld: the chunk from solution %lld overlaps the one before, which "
                       "ends at solution %lld", (long long)job, (long long)first,
                    (long long)next - 1);
        next = first + sqlite3_column_int64(st, 1);
        sto_classes none = {0};
        int caps[4] = {0, 0, 1, 0}; /* start has its first element */
        tsr_err e = {{0}};
        /* a cursor past every solution keeps none: only the checks run */
        int d = sto_chunk_decode(st, job, INT64_MAX - 1, 0, &none, caps, c->scratch, c->ctx, &e);
        sto_classes_free(&none);
        if (d == TSR_EIO)
            sto_finding(c, "job %lld: the chunk from solution %lld is damaged", (long long)job,
                    (long long)first);
        else if (d != 0)
            r = tsr_err_set(c->err, d, "%s", e.msg);
        chunks++;
    }
    r = check_finish(c, st, rc, r, what);
    if (r == 0 && !c->broken)
        fprintf(c->notes, "chunks: %ld checked\n", chunks);
    return r;
}

/* A job's tasks, as check_frontier sums them. */
typedef struct task_sum {
    int64_t job, tasks, next; /* next: the number the next task should have */
    double weight, carry; /* compensated sum (Neumaier): weight + carry */
} task_sum;

/* Every task: numbered 0..n-1 in its job, its images whole int32s, its
 * weight in [0, 1]; each job's weights summed into *sums (by job). */
static int check_frontier(checker *c, task_sum **sums, int *nsums)
{
    const char *what = "reading the frontier";
    *sums = NULL;
    *nsums = 0;
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT job, seq, length(images), weight FROM frontier "
                             "ORDER BY job, seq", &st, what);
    if (r != 0 || st == NULL)
        return r;
    int cap = 0, rc;
    long tasks = 0;
    task_sum *t = NULL;
    while (r == 0 && (rc = check_step(c, st)) == SQLITE_ROW) {
        int64_t job = sqlite3_column_int64(st, 0), seq = sqlite3_column_int64(st, 1);
        int64_t bytes = sqlite3_column_int64(st, 2);
        double w = sqlite3_column_double(st, 3);
        if (*nsums == 0 || (*sums)[*nsums - 1].job != job) {
            if ((r = sto_grow((void **)sums, &cap, *nsums, sizeof **sums, c->ctx, c->err)) != 0)
                break;
            (*sums)[(*nsums)++] = (task_sum){job, 0, 0, 0, 0};
        }
        t = &(*sums)[*nsums - 1];
        if (seq != t->next) /* tasks are numbered 0..n-1 (a gap: one lost) */
            sto_finding(c, "job %lld: frontier task %lld where task %lld should be", (long long)job,
                    (long long)seq, (long long)t->next);
        t->next = seq + 1;
        if (bytes % 4 != 0 || bytes / 4 > STO_MAX_TASK_IMAGES)
            sto_finding(c, "job %lld: frontier task %lld is malformed (%lld bytes of images)",
                    (long long)job, (long long)seq, (long long)bytes);
        if (!isfinite(w) || w < 0 || w > 1) {
            sto_finding(c, "job %lld: frontier task %lld weighs %g, not a fraction in [0, 1]",
                    (long long)job, (long long)seq, w);
            w = 0;
        }
        double sum = t->weight + w; /* Neumaier's compensated sum */
        t->carry += fabs(t->weight) >= fabs(w) ? (t->weight - sum) + w : (w - sum) + t->weight;
        t->weight = sum;
        t->tasks++;
        tasks++;
    }
    r = check_finish(c, st, rc, r, what);
    if (r == 0 && !c->broken)
        fprintf(c->notes, "frontier: %ld tasks checked\n", tasks);
    return r;
}

/* One job's counts, documents and frontier (I1, I2, I3, I6); its tasks
 * summed in *t (NULL: it has none).  The row is check_jobs's. */
static void check_job(checker *c, sqlite3_stmt *st, const task_sum *t)
{
    long long id = sqlite3_column_int64(st, 0);
    const char *state_text = (const char *)sqlite3_column_text(st, 1);
    int64_t found = sqlite3_column_int64(st, 2), stored = sqlite3_column_int64(st, 3);
    double fraction = sqlite3_column_double(st, 4);
    bool legacy = sqlite3_column_int(st, 5) != 0;
    const char *error = (const char *)sqlite3_column_text(st, 6);
    int64_t in_chunks = sqlite3_column_int64(st, 7);
    bool options_ok = sqlite3_column_int(st, 8) != 0;
    enum sto_state state;
    if (sto_state_parse(state_text, &state) != 0) {
        sto_finding(c, "job %lld: its state \"%.40s\" is not a job's", id,
                state_text != NULL ? state_text : "(null)");
        return;
    }
    if (!options_ok)
        sto_finding(c, "job %lld: its options document is not a JSON object", id);
    if (sqlite3_column_int(st, 9) == 0)
        sto_finding(c, "job %lld: its statistics document is not JSON", id);
    if (!legacy && (stored != in_chunks || stored > found))
        sto_finding(c, "job %lld: %lld solutions stored by its count, %lld in its chunks, %lld found",
                id, (long long)stored, (long long)in_chunks, (long long)found);
    /* I6: what options.store keeps: "all" (or nothing said), "none", or
     * the first N; a final job --repair cut keeps less, and says so */
    int type = sqlite3_column_type(st, 10);
    const char *keep_text = (const char *)sqlite3_column_text(st, 10);
    int64_t keep = -1, n = sqlite3_column_int64(st, 10);
    if (type == SQLITE_NULL || (type == SQLITE_TEXT && strcmp(keep_text, "all") == 0))
        keep = found;
    else if (type == SQLITE_TEXT && strcmp(keep_text, "none") == 0)
        keep = 0;
    else if (type == SQLITE_INTEGER && n >= 0)
        keep = n < found ? n : found;
    else
        sto_finding(c, "job %lld: options.store is %.40s, not \"all\", \"none\" or a count", id,
                keep_text != NULL ? keep_text : "(null)");
    bool cut = sto_state_final(state) && error != NULL &&
               strncmp(error, REPAIR_NOTE, strlen(REPAIR_NOTE)) == 0;
    if (c->json && options_ok && !legacy && keep >= 0 && stored != keep && !cut)
        sto_finding(c, "job %lld: %lld of its %lld solutions stored, where its options.store keeps "
                   "%lld", id, (long long)stored, (long long)found, (long long)keep);
    /* I2, I3: the frontier and the part of the tree done make the whole */
    double weight = t != NULL ? t->weight + t->carry : 0;
    if (!isfinite(fraction) || fraction < 0 || fraction > 1)
        sto_finding(c, "job %lld: its fraction done, %g, is not in [0, 1]", id, fraction);
    else if (sto_state_final(state) && t != NULL)
        sto_finding(c, "job %lld: %s, yet it has a frontier of %lld task%s", id, state_text,
                (long long)t->tasks, t->tasks == 1 ? "" : "s");
    else if (!sto_state_final(state) && t == NULL && (fraction != 0 || found != 0))
        sto_finding(c, "job %lld: %s with no frontier, yet %.9g of its tree is done and %lld "
                   "solutions found: resumed, it would search the whole tree again and count "
                   "them twice", id, state_text, fraction, (long long)found);
    else if (!sto_state_final(state) && t != NULL &&
             !(fabs(weight + fraction - 1) <= CHECK_WEIGHT_TOLERANCE))
        sto_finding(c, "job %lld: its frontier weighs %.9g and %.9g of its tree is done: %.9g in "
                   "all, not 1 (resumed, it would search part of the tree twice or never)", id,
                weight, fraction, weight + fraction);
}

/* Every job against its chunks and its frontier. */
static int check_jobs(checker *c)
{
    task_sum *sums = NULL;
    int nsums = 0;
    int r = check_frontier(c, &sums, &nsums);
    /* the documents' and options.store's columns, when SQLite has JSON */
    /* the puzzle may be polycube text, not JSON: it is not checked */
    static const char with_json[] = /* CASE, not AND: json_type raises on bad JSON */
        "CASE WHEN json_valid(options) THEN json_type(options) = 'object' ELSE 0 END,"
        " stats IS NULL OR json_valid(stats),"
        " CASE WHEN json_valid(options) THEN CASE WHEN json_type(options) = 'object'"
        " THEN json_extract(options, '$.store') END END";
    static const char without[] = "1, 1, NULL";
    char sql[600];
    snprintf(sql, sizeof sql, "SELECT id, state, solutions, stored, fraction, legacy, error,"
             " (SELECT coalesce(sum(nsol), 0) FROM chunks WHERE job = jobs.id), %s"
             " FROM jobs ORDER BY id", c->json ? with_json : without);
    const char *what = "reading jobs";
    sqlite3_stmt *st = NULL;
    if (r == 0)
        r = check_prepare(c, sql, &st, what);
    if (r != 0 || st == NULL) {
        free(sums);
        return r;
    }
    int rc, k = 0;
    long jobs = 0;
    while ((rc = check_step(c, st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        while (k < nsums && sums[k].job < id)
            k++; /* tasks of no job: the references' check says so */
        check_job(c, st, k < nsums && sums[k].job == id ? &sums[k] : NULL);
        jobs++;
    }
    r = check_finish(c, st, rc, 0, what);
    free(sums);
    if (r == 0 && !c->broken)
        fprintf(c->notes, "jobs: %ld checked\n", jobs);
    return r;
}

/* Rows that name a job (or a batch) that does not exist. */
static int check_references(checker *c)
{
    const char *what = "checking references";
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT \"table\", parent, count(*) FROM pragma_foreign_key_check"
                             " GROUP BY 1, 2", &st, what);
    if (r != 0 || st == NULL)
        return r;
    int rc;
    while ((rc = check_step(c, st)) == SQLITE_ROW)
        sto_finding(c, "%s: %lld rows belong to no row of %s", sqlite3_column_text(st, 0),
                (long long)sqlite3_column_int64(st, 2), sqlite3_column_text(st, 1));
    return check_finish(c, st, rc, 0, what);
}

/* ---- a class stored twice (I7) ----
 * Each class of a job is hashed (64 bits of its sorted ids), the hashes
 * sorted, and equal neighbours are classes stored twice, unless the ids
 * differ (a collision: about one chance in 10^7 for the flood's 1.6 million
 * classes); the first CHECK_COMPARE_PAIRS are compared id by id, and those
 * make the examples the report gives.  8 bytes a class: a job with more
 * classes than CHECK_HASH_MEMORY holds is hashed in several passes over
 * its chunks, each keeping the hashes of one share (hash % passes). */

/* splitmix64's finalizer: every bit of x moves about half of the result. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* The record at data[*pos..len) without decoding its ids: its size and
 * count, and where the bytes of its ids start (*ids_at; they end at *pos
 * after).  Those bytes (each id minus the one before, LEB128, as
 * put_varint writes them) are a canonical form of the ids: two classes
 * with the same ids have the same bytes.  False when it is cut short. */
static bool skip_record(const unsigned char *data, size_t len, size_t *pos, int *n, int *count,
                        size_t *ids_at)
{
    uint64_t vn, vc;
    if (!sto_get_varint(data, len, pos, &vn) || !sto_get_varint(data, len, pos, &vc) ||
        vn > STO_MAX_TASK_IMAGES || vc < 1 || vc > INT_MAX)
        return false;
    *ids_at = *pos;
    for (uint64_t i = 0; i < vn; i++, (*pos)++) /* a varint ends at a byte below 0x80 */
        while (*pos < len && data[*pos] >= 0x80)
            (*pos)++;
    if (*pos > len)
        return false;
    *n = (int)vn;
    *count = (int)vc;
    return true;
}

/* A class's hash: its size and the bytes of its ids, 8 at a time. */
static uint64_t class_hash(int n, const unsigned char *p, size_t len)
{
    uint64_t h = mix64((uint64_t)n + 0x9e3779b97f4a7c15u);
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix64(h ^ w);
    }
    uint64_t w = len; /* the tail, and its length */
    memcpy(&w, p, len);
    return mix64(h ^ w ^ ((uint64_t)len << 56));
}

static int hash_order(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sort hashes in place, by their bytes from the top (`shift` 56, 48, ...):
 * a 256-way partition (American flag sort) on each, down to parts small
 * enough for insertion sort.  No memory but the stack. */
static void sort_hashes(uint64_t *v, size_t n, int shift)
{
    if (n < 32 || shift < 0) {
        for (size_t i = 1; i < n; i++) {
            uint64_t x = v[i];
            size_t j = i;
            for (; j > 0 && v[j - 1] > x; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    size_t start[257] = {0}, next[256];
    for (size_t i = 0; i < n; i++)
        start[((v[i] >> shift) & 0xff) + 1]++;
    for (int b = 0; b < 256; b++) {
        start[b + 1] += start[b];
        next[b] = start[b];
    }
    for (int b = 0; b < 256; b++)
        while (next[b] < start[b + 1]) {
            uint64_t x = v[next[b]];
            for (int d = (int)((x >> shift) & 0xff); d != b; d = (int)((x >> shift) & 0xff)) {
                uint64_t y = v[next[d]];
                v[next[d]++] = x;
                x = y;
            }
            v[next[b]++] = x;
        }
    for (int b = 0; b < 256; b++)
        sort_hashes(v + start[b], start[b + 1] - start[b], shift - 8);
}

/* The ids of job `job`'s class whose first solution is number `at`, into
 * ids (*n of them); *n = -1 when no sound chunk holds such a class. */
static int class_ids(checker *c, int64_t job, int64_t at, int *ids, int *n)
{
    const char *what = "reading a class";
    *n = -1;
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT first, nsol, nclass, data, crc FROM chunks WHERE job = ?1"
                             " AND first <= ?2 ORDER BY first DESC LIMIT 1", &st, what);
    if (r != 0 || st == NULL)
        return r;
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int64(st, 2, at);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        int64_t pos_at = sqlite3_column_int64(st, 0);
        int nclass = sqlite3_column_int(st, 2);
        const unsigned char *data = sqlite3_column_blob(st, 3);
        size_t len = (size_t)sqlite3_column_bytes(st, 3), pos = 0;
        if (sto_chunk_crc(job, pos_at, data, len) == (uint32_t)sqlite3_column_int64(st, 4)) {
            for (int k = 0; k < nclass && pos_at <= at; k++) {
                int m, count;
                if (!sto_record_read(data, len, &pos, &m, &count, ids))
                    break;
                if (pos_at == at)
                    *n = m;
                pos_at += count;
            }
        }
        rc = SQLITE_DONE;
    }
    return check_finish(c, st, rc, 0, what);
}

/* A class seen twice by its hash: the numbers of its first two copies. */
typedef struct class_pair {
    uint64_t hash;
    int64_t a, b; /* 0: not seen yet */
} class_pair;

/* One pass over a job's chunks.  With `pairs` NULL, the hashes of the
 * share `pass` of `passes` go into *hashes (*nhashes, room for *cap);
 * else each class whose hash is one of pairs[0..npairs) (sorted) gives
 * that pair its first two solution numbers.  Damaged chunks are read as
 * they are: a pair from one is compared id by id from sound chunks only. */
static int hash_pass(checker *c, int64_t job, uint64_t pass, uint64_t passes, uint64_t **hashes,
                     size_t *nhashes, size_t *cap, class_pair *pairs, int npairs)
{
    const char *what = "hashing classes";
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT first, nclass, data FROM chunks WHERE job = ?1", &st, what);
    if (r != 0 || st == NULL)
        return r;
    sqlite3_bind_int64(st, 1, job);
    int rc;
    while (r == 0 && (rc = check_step(c, st)) == SQLITE_ROW) {
        int64_t at = sqlite3_column_int64(st, 0);
        int nclass = sqlite3_column_int(st, 1);
        const unsigned char *data = sqlite3_column_blob(st, 2);
        size_t len = (size_t)sqlite3_column_bytes(st, 2), pos = 0;
        for (int k = 0; r == 0 && k < nclass; k++) {
            int n, count;
            size_t ids_at;
            if (!skip_record(data, len, &pos, &n, &count, &ids_at))
                break; /* malformed: check_chunks said so */
            uint64_t h = class_hash(n, data + ids_at, pos - ids_at);
            if (pairs != NULL) {
                class_pair key = {h, 0, 0}, *p = bsearch(&key, pairs, (size_t)npairs,
                                                          sizeof *pairs, hash_order);
                if (p != NULL && p->a == 0)
                    p->a = at;
                else if (p != NULL && p->b == 0)
                    p->b = at;
            } else if (h % passes == pass) {
                if (*nhashes == *cap) {
                    size_t more = *cap / 2 + 1024;
                    uint64_t *v = realloc(*hashes, (*cap + more) * sizeof *v);
                    if (v == NULL) {
                        r = tsr_err_set(c->err, TSR_ENOMEM, "store: %s: out of memory", c->ctx);
                        break;
                    }
                    *hashes = v;
                    *cap += more;
                }
                (*hashes)[(*nhashes)++] = h;
            }
            at += count;
        }
    }
    return check_finish(c, st, rc, r, what);
}

/* A job's classes, hashed and sorted: a class stored twice is a finding.
 * *passes_used: how many passes its hashes took; *hashes (room for *cap)
 * is reused from job to job. */
static int check_job_classes(checker *c, int64_t job, int64_t nclass, uint64_t **hashes,
                             size_t *cap, int *passes_used)
{
    uint64_t per_pass = CHECK_HASH_MEMORY / sizeof **hashes;
    uint64_t passes = nclass > 0 ? ((uint64_t)nclass + per_pass - 1) / per_pass : 1;
    *passes_used = (int)passes;
    /* room for one share and a little: a share is a binomial draw */
    size_t want = (size_t)((uint64_t)nclass / passes + (uint64_t)nclass / passes / 32 + 1024);
    if (*cap < want) {
        free(*hashes);
        *cap = 0;
        if ((*hashes = malloc(want * sizeof **hashes)) == NULL)
            return tsr_err_set(c->err, TSR_ENOMEM, "store: %s: out of memory", c->ctx);
        *cap = want;
    }
    class_pair pairs[CHECK_COMPARE_PAIRS];
    int npairs = 0, r = 0;
    int64_t twice = 0;
    for (uint64_t p = 0; r == 0 && p < passes && check_going(c); p++) {
        size_t n = 0;
        if ((r = hash_pass(c, job, p, passes, hashes, &n, cap, NULL, 0)) != 0 || !check_going(c))
            break;
        sort_hashes(*hashes, n, 56);
        for (size_t i = 1; i < n; i++)
            if ((*hashes)[i] == (*hashes)[i - 1]) {
                twice++;
                if (npairs < CHECK_COMPARE_PAIRS &&
                    (npairs == 0 || (*hashes)[i] != pairs[npairs - 1].hash))
                    pairs[npairs++] = (class_pair){(*hashes)[i], 0, 0};
            }
    }
    if (r != 0 || twice == 0 || !check_going(c))
        return r;
    /* the pairs' solution numbers, then their ids compared */
    qsort(pairs, (size_t)npairs, sizeof *pairs, hash_order);
    if ((r = hash_pass(c, job, 0, 1, NULL, NULL, NULL, pairs, npairs)) != 0 || !check_going(c))
        return r;
    int same = 0;
    int64_t ex_a = 0, ex_b = 0;
    for (int i = 0; r == 0 && i < npairs && check_going(c); i++) {
        int na, nb;
        if ((r = class_ids(c, job, pairs[i].a, c->scratch, &na)) != 0 ||
            (r = class_ids(c, job, pairs[i].b, c->scratch2, &nb)) != 0)
            break;
        if (na >= 0 && na == nb &&
            (na == 0 || memcmp(c->scratch, c->scratch2, (size_t)na * sizeof(int)) == 0) &&
            same++ == 0) {
            ex_a = pairs[i].a < pairs[i].b ? pairs[i].a : pairs[i].b;
            ex_b = pairs[i].a < pairs[i].b ? pairs[i].b : pairs[i].a;
        }
    }
    if (r != 0 || !check_going(c))
        return r;
    if (same > 0)
        sto_finding(c, "job %lld: %lld classes are stored more than once (by their 64-bit hashes; "
                   "%d of %d compared id by id are the same), e.g. solutions %lld and %lld: its "
                   "solutions are counted twice, as when two daemons run it on one file",
                (long long)job, (long long)twice, same, npairs, (long long)ex_a,
                (long long)ex_b);
    else
        fprintf(c->notes, "job %lld: %lld classes share a 64-bit hash with another, and the %d "
                      "compared id by id differ: no class stored twice\n", (long long)job,
                (long long)twice, npairs);
    return 0;
}

static int check_classes(checker *c)
{
    const char *what = "counting classes";
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT job, sum(nclass) FROM chunks WHERE job IN"
                             " (SELECT id FROM jobs WHERE legacy = 0) GROUP BY job", &st, what);
    if (r != 0 || st == NULL)
        return r;
    /* the jobs first: hashing reads chunks with statements of its own */
    struct { int64_t job, nclass; } *list = NULL;
    int n = 0, cap = 0, rc;
    while (r == 0 && (rc = check_step(c, st)) == SQLITE_ROW)
        if ((r = sto_grow((void **)&list, &cap, n, sizeof *list, c->ctx, c->err)) == 0) {
            list[n].job = sqlite3_column_int64(st, 0);
            list[n++].nclass = sqlite3_column_int64(st, 1);
        }
    r = check_finish(c, st, rc, r, what);
    uint64_t *hashes = NULL;
    size_t hcap = 0;
    int most = 1;
    int64_t classes = 0;
    for (int i = 0; r == 0 && i < n && check_going(c); i++) {
        int passes;
        r = check_job_classes(c, list[i].job, list[i].nclass, &hashes, &hcap, &passes);
        most = passes > most ? passes : most;
        classes += list[i].nclass;
    }
    if (r == 0 && check_going(c))
        fprintf(c->notes, "classes: %lld in %d jobs hashed (%d pass%s at most, %.1f MB)\n",
                (long long)classes, n, most, most == 1 ? "" : "es",
                (double)hcap * sizeof *hashes / 1e6);
    free(hashes);
    free(list);
    return r;
}

/* ---- opening a store offline ---- */

/* "file:" and the path, every byte outside a safe set %-escaped (a path
 * with '?', '#' or '%' in it names the same file), then `query`. */
static int file_uri(const char *path, const char *query, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const char *p = "file:"; *p; p++)
        out[n++] = *p;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (n + 4 >= cap)
            return -1;
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/._-~", *p) != NULL) {
            out[n++] = (char)*p;
        } else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    return snprintf(out + n, cap - n, "%s", query) < (int)(cap - n) ? 0 : -1;
}

/* The first read of an opened file (its schema version): SQLite's code. */
static int first_read(sto_db *s)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = SQLITE_OK;
    sqlite3_finalize(st);
    return rc;
}

/* Open an existing store for --check (read-only) or --repair (no CREATE:
 * a missing or empty file is an error, not a new store), identify it and
 * read its schema version.  *out is set even on failure, for sto_close;
 * *read_rc is SQLite's code for the first read (SQLITE_OK when it worked),
 * so that a caller can tell a damaged file from one it cannot open.
 *
 * A read-only open of a file in WAL mode needs the -shm index beside it,
 * and creates one when it is missing; on a read-only file system or in a
 * read-only directory that fails ("unable to open").  Then, with no
 * write-ahead log holding commits (none, or an empty one) and no -shm, the
 * file alone is the whole store: it is opened immutable (SQLite's
 * immutable=1: no index, no locks) and *immutable says so.  With commits in
 * a log that cannot be indexed here, the store cannot be read consistently,
 * and the error says what to do. */
int sto_open_offline(const char *path, bool write, sto_db **out, int *version,
                        bool *immutable, int *read_rc, const char *ctx, tsr_err *err)
{
    *out = NULL;
    *version = 0;
    *read_rc = SQLITE_OK;
    if (immutable != NULL)
        *immutable = false;
    if (access(path, F_OK) != 0)
        return tsr_err_set(err, TSR_EIO, "store: %s: %s", ctx, strerror(errno));
    int r = sto_not_empty(path, ctx, err);
    if (r != 0)
        return r;
    sto_db *s = *out = calloc(1, sizeof *s);
    if (s == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    char uri[PATH_MAX * 3 + 64];
    if (!write && file_uri(path, "?mode=ro", uri, sizeof uri) != 0)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: path too long", ctx);
    int flags = (write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY | SQLITE_OPEN_URI) |
                SQLITE_OPEN_NOMUTEX;
    int rc = sqlite3_open_v2(write ? path : uri, &s->db, flags, NULL);
    if (rc != SQLITE_OK)
        return sto_sql_err(s, rc, err, ctx, "open");
    sqlite3_extended_result_codes(s->db, 1);
    if (write && sqlite3_db_readonly(s->db, "main") == 1)
        return tsr_err_set(err, TSR_EIO, "store: %s: the file is read-only", ctx);
    if (write)
        sqlite3_busy_timeout(s->db, STO_BUSY_TIMEOUT_MS);
    rc = first_read(s);
    if (rc != SQLITE_OK && !write && (rc & 0xff) == SQLITE_CANTOPEN) {
        /* read-only, and SQLite could not open or create the -shm index */
        char side[PATH_MAX + 8];
        struct stat wal, shm;
        snprintf(side, sizeof side, "%s-wal", path);
        bool has_wal = stat(side, &wal) == 0 && wal.st_size > 0;
        snprintf(side, sizeof side, "%s-shm", path);
        bool has_shm = stat(side, &shm) == 0;
        if (has_wal)
            return tsr_err_set(err, TSR_EIO, "store: %s: its write-ahead log %s-wal holds "
                               "commits (%lld bytes) that SQLite reads only through an index "
                               "in %s-shm, which it cannot %s here (a read-only file system "
                               "or directory): copy the files to writable storage and check "
                               "the copy", ctx, path, (long long)wal.st_size, path,
                               has_shm ? "open" : "create");
        if (!has_shm) {
            sqlite3_close(s->db);
            s->db = NULL;
            if (file_uri(path, "?mode=ro&immutable=1", uri, sizeof uri) != 0)
                return tsr_err_set(err, TSR_ETOOBIG, "store: %s: path too long", ctx);
            if ((rc = sqlite3_open_v2(uri, &s->db, flags, NULL)) != SQLITE_OK)
                return sto_sql_err(s, rc, err, ctx, "open");
            sqlite3_extended_result_codes(s->db, 1);
            *immutable = true;
            rc = first_read(s);
        }
    }
    *read_rc = rc;
    if (rc != SQLITE_OK)
        return sto_sql_err(s, rc, err, ctx, "read the file's header");
    return sto_identify(s, version, ctx, err);
}

int sto_check(const char *path, bool full, double max_seconds, char **report, tsr_err *err)
{
    watchdog wd = {0}; /* before any goto out */
    *report = NULL;
    char ctx[320];
    snprintf(ctx, sizeof ctx, "check %s", path);
    tsr_err local = {{0}};
    if (err == NULL)
        err = &local;
    checker c = {.ctx = ctx, .err = err,
                 .deadline = max_seconds > 0 ? base_now() + max_seconds : 0};
    int version = 0;
    bool immutable = false;
    char *found = NULL, *notes = NULL, *text = NULL;
    size_t flen = 0, nlen = 0;
    tsr_err oe = {{0}};
    int read_rc;
    int r = sto_open_offline(path, false, &c.s, &version, &immutable, &read_rc, ctx, &oe);
    if (c.s == NULL) {
        *err = oe;
        return r;
    }
    c.f = open_memstream(&found, &flen);
    c.notes = open_memstream(&notes, &nlen);
    c.scratch = malloc(STO_MAX_TASK_IMAGES * sizeof *c.scratch);
    c.scratch2 = malloc(STO_MAX_TASK_IMAGES * sizeof *c.scratch2);
    if (c.f == NULL || c.notes == NULL || c.scratch == NULL || c.scratch2 == NULL) {
        r = tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
        goto out;
    }
    if (r != 0 && sto_is_damage(read_rc)) {
        /* the first read already met damage: a header or schema SQLite
         * cannot read is a finding, the file is not unreadable */
        sto_finding(&c, "structure: %s", sqlite3_errstr(read_rc));
        c.broken = true;
        r = 0;
    } else if (r != 0) {
        *err = oe;
        goto out;
    }
    if (c.deadline > 0) {
        sqlite3_progress_handler(c.s->db, 10000, past_deadline, &c.deadline);
        watchdog_start(&wd, c.s->db, c.deadline);
    }
    /* one read transaction: every statement below sees the same commit */
    if (!c.broken && (r = sto_tx_begin(c.s, false, ctx, err)) != 0)
        goto out;
    if (r == 0 && !c.broken)
        sto_check_header(&c, path);
    if (r == 0)
        r = sto_check_structure(&c, full);
    if (r == 0 && check_going(&c)) { /* without JSON functions, documents go unchecked */
        sqlite3_stmt *probe = NULL;
        c.json = sqlite3_prepare_v2(c.s->db, "SELECT json_valid('{}')", -1, &probe, NULL) ==
                 SQLITE_OK;
        sqlite3_finalize(probe);
    }
    if (r == 0 && version > 0)
        r = sto_check_schema(&c, version);
    if (r == 0 && version == STO_SCHEMA_VERSION && c.tables) {
        if (!c.json)
            fprintf(c.notes, "documents: not checked (this SQLite has no JSON functions)\n");
        if (r == 0)
            r = check_chunks(&c);
        if (r == 0)
            r = check_jobs(&c);
        if (r == 0)
            r = check_references(&c);
        if (r == 0)
            r = check_classes(&c);
    } else if (r == 0 && check_going(&c) && version > 0 && c.tables) {
        fprintf(c.notes, "solutions: schema %d is upgraded when tesserad opens the store\n", version);
    }
    watchdog_stop(&wd); /* before the rollback, which must not be interrupted */
    sto_tx_rollback(c.s); /* it only read */
    if (r == 0 && c.broken)
        fprintf(c.notes, "the rest: not checked (the file's structure is broken)\n");
    if (r == 0 && c.late)
        fprintf(c.notes, "not finished in time: the rest is unchecked, not damaged\n");
out:
    watchdog_stop(&wd);
    if (c.s != NULL && c.s->db != NULL)
        sqlite3_progress_handler(c.s->db, 0, NULL, NULL);
    if (c.f != NULL)
        fclose(c.f);
    if (c.notes != NULL)
        fclose(c.notes);
    free(c.scratch);
    free(c.scratch2);
    sto_close(c.s);
    /* the report: the file, the findings first (a caller may show only
     * the start), what was checked, the verdict */
    size_t len = 0;
    FILE *f = r == 0 ? open_memstream(&text, &len) : NULL;
    if (r == 0 && f == NULL)
        r = tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    if (f != NULL) {
        fprintf(f, "%s: schema %d%s\n%s%s%s\n", path, version,
                immutable ? " (read as immutable: SQLite cannot create its index on this file "
                            "system, and no write-ahead log holds commits)" : "",
                found != NULL ? found : "", notes != NULL ? notes : "",
                c.problems ? "damaged" : "ok");
        fclose(f);
    }
    free(found);
    free(notes);
    if (r != 0) {
        free(text);
        return r;
    }
    err->msg[0] = '\0';
    *report = text;
    return c.problems ? TSR_EIO : 0;
}

