/*
 * cluster.c - searches over the ranks of an MPI job (see cluster.h and
 * docs/cluster.md).
 *
 * Protocol, point-to-point on MPI_COMM_WORLD, every message a byte string
 * of little fields (64-bit words, 32-bit for images and solution cells):
 *
 *   k -> 0  HELLO  pid and host name, once at start
 *   0 -> k  JOB    job key, threads, timeout, image count and fingerprint,
 *                  puzzle text, options JSON: build this job's solver
 *   0 -> k  WORK   batch id, tasks (per task: n, weight, images)
 *   0 -> k  STEAL  batch id: end that batch now, give back what is left
 *   0 -> k  STOP   batch id: end that batch now, drop what is left
 *   0 -> k  PING   the timeout: rank 0 lives (idle workers, every second)
 *   0 -> k  EXIT   leave (and whether to skip MPI_Finalize: a rank was lost)
 *   k -> 0  SOL    batch id, solutions (per solution nplacements, then per
 *                  placement piece, ncells, x y z per cell)
 *   k -> 0  PROG   batch id, CPU time, the batch's statistics so far
 *   k -> 0  DONE   batch id, return code, CPU time, the batch's statistics
 *                  and, when STEAL ended it, the tasks left
 *
 * Invariants rank 0 keeps:
 *  - The work outstanding is exactly its queue plus the batches out; it
 *    keeps a copy of each batch out.  A worker sends one DONE per WORK,
 *    after all of that batch's SOL (messages from one sender arrive in
 *    order), and a STEAL's tasks are exactly the batch's work left (the
 *    pool's park-and-report checkpoint), so nothing is searched twice or
 *    lost.
 *  - A batch's solutions are reported (cb->solution) only when its DONE
 *    arrives, and the DONE's count must match them.  A worker silent for
 *    the timeout is given up for good: its batch is requeued whole and its
 *    unreported solutions dropped, so a lost rank costs time, not counts.
 *    Messages naming a batch that is not out (a given-up rank that comes
 *    back, a STEAL that crossed a DONE) are ignored.
 *  - A checkpoint asks every busy worker to give its work back and hands
 *    out nothing until every batch is back: then the queue is the whole
 *    frontier and the totals are those of the work done.
 *
 * Rank 0 searches too: it runs the worker loop on a thread of its own (its
 * "local" worker, peer 0), which exchanges the same messages with the
 * coordinator through two mailboxes instead of MPI.
 *
 * Rank 0 and idle workers poll (MPI_Iprobe, then a sleep growing to 4 ms)
 * rather than block, since Open MPI's blocking calls spin; rank 0 sends
 * with MPI_Isend and receives with MPI_Irecv so that a worker that dies,
 * even mid-message, can never block it.  Busy workers poll from the pool's
 * checkpoint_wanted, every 20 ms or so, on the thread that runs the worker
 * loop.
 */
#define _GNU_SOURCE /* SCHED_BATCH */
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi/cluster.h"

enum { TAG_HELLO = 1, TAG_JOB, TAG_WORK, TAG_STEAL, TAG_STOP, TAG_PING, TAG_EXIT,
       TAG_SOL, TAG_PROG, TAG_DONE };

#define HOLD_S 0.02               /* a batch this young is not taken back (no ping-pong) */
#define FLUSH_S 0.02              /* solutions wait at most about this long on a worker */
#define FLUSH_BYTES (256 * 1024)  /* ... or until this many bytes are buffered */
#define PENDING_MAX (32u << 20)   /* a batch's unreported solution bytes that make rank 0
                                     end it, so they are reported and memory stays bounded */
#define BATCH_MAX_S 10.0          /* an older batch is asked back: its solutions are
                                     reported, and a rank lost costs less */
#define ORPHAN_TIMEOUTS 10         /* an idle worker leaves after this many timeouts
                                     without word from rank 0 */
#define DEAF_S 0.25               /* a longer gap between rank 0's drains is not
                                     the workers' silence */
#define PROG_S 1.0                /* a busy worker's progress (and heartbeat) interval */
#define PING_S 1.0                /* rank 0's heartbeat to idle workers */
#define WANTED_S 0.02             /* how often rank 0 polls hk->checkpoint_wanted */
#define DEFAULT_TIMEOUT_S 30.0
#define NAP_MIN_NS 20000L         /* sleeps between empty polls grow from 20 us */
#define NAP_MAX_NS 4000000L       /* ... to 4 ms (each wake-up costs the search
                                     beside it: 1 ms cost 2% of a rank of one thread) */

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

static double cpu_now(void)
{
    return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* Sleep after an empty poll, longer each time (*ns: 0 after a message). */
static void nap(long *ns)
{
    *ns = *ns < NAP_MIN_NS ? NAP_MIN_NS : *ns * 2 > NAP_MAX_NS ? NAP_MAX_NS : *ns * 2;
    struct timespec ts = {0, *ns};
    nanosleep(&ts, NULL);
}

/* ---- messages: byte strings of fixed-size fields ---- */

/* A growable message; a failed allocation is sticky (oom), checked once. */
typedef struct buf {
    unsigned char *p;
    size_t n, cap;
    bool oom;
} buf;

static void put_bytes(buf *b, const void *v, size_t k)
{
    if (b->oom || k == 0)
        return;
    if (b->n + k > b->cap) {
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap < b->n + k)
            ncap *= 2;
        unsigned char *np = realloc(b->p, ncap);
        if (np == NULL) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
    memcpy(b->p + b->n, v, k);
    b->n += k;
}

static void put64(buf *b, int64_t v) { put_bytes(b, &v, sizeof v); }
static void put32(buf *b, int32_t v) { put_bytes(b, &v, sizeof v); }
static void put_double(buf *b, double d) { put_bytes(b, &d, sizeof d); }

/* A reader over a received message; any read past the end marks it bad. */
typedef struct reader {
    const unsigned char *p;
    size_t n, pos;
    bool bad;
} reader;

static const unsigned char *get_bytes(reader *r, size_t k)
{
    if (r->bad || k > r->n - r->pos) {
        r->bad = true;
        return NULL;
    }
    r->pos += k;
    return r->p + r->pos - k;
}

/* The next field of k bytes into out (zeros past the end). */
static void get_field(reader *r, void *out, size_t k)
{
    const unsigned char *p = get_bytes(r, k);
    if (p)
        memcpy(out, p, k);
    else
        memset(out, 0, k);
}

static int64_t get64(reader *r)
{
    int64_t v;
    get_field(r, &v, sizeof v);
    return v;
}

static int32_t get32(reader *r)
{
    int32_t v;
    get_field(r, &v, sizeof v);
    return v;
}

static double get_double(reader *r)
{
    double d;
    get_field(r, &d, sizeof d);
    return d;
}

/* A count of items of at least `per` bytes each, checked against what is
 * left of the message. */
static int get_count(reader *r, size_t per, bool wide)
{
    int64_t v = wide ? get64(r) : get32(r);
    if (v < 0 || v > INT_MAX || (size_t)v > (r->n - r->pos) / (per ? per : 1)) {
        r->bad = true;
        return 0;
    }
    return (int)v;
}

/* ---- what messages carry ---- */

static void put_tasks(buf *b, const tsr_task *t, int n)
{
    put64(b, n);
    for (int i = 0; i < n; i++) {
        put64(b, t[i].n);
        put_double(b, t[i].weight);
        for (int j = 0; j < t[i].n; j++)
            put32(b, t[i].images[j]);
    }
}

static void free_tasks(tsr_task *t, int n)
{
    for (int i = 0; t && i < n; i++)
        free(t[i].images);
    free(t);
}

/* Append n tasks to *t (*n, *cap grown as needed), images copied. */
static int add_tasks(tsr_task **t, int *n, int *cap, const tsr_task *src, int k)
{
    if (*n + k > *cap) {
        int ncap = *cap ? *cap : 64;
        while (ncap < *n + k)
            ncap *= 2;
        tsr_task *nt = realloc(*t, (size_t)ncap * sizeof *nt);
        if (nt == NULL)
            return TSR_ENOMEM;
        *t = nt;
        *cap = ncap;
    }
    for (int i = 0; i < k; i++) {
        int *images = malloc((size_t)(src[i].n > 0 ? src[i].n : 1) * sizeof *images);
        if (images == NULL)
            return TSR_ENOMEM;
        if (src[i].n > 0)
            memcpy(images, src[i].images, (size_t)src[i].n * sizeof *images);
        (*t)[(*n)++] = (tsr_task){src[i].n, images, src[i].weight};
    }
    return 0;
}

/* Tasks read from r, appended to *t. */
static int get_tasks(reader *r, tsr_task **t, int *n, int *cap)
{
    int k = get_count(r, 16, true);
    for (int i = 0; i < k && !r->bad; i++) {
        int m = get_count(r, 4, true);
        double weight = get_double(r);
        int *images = malloc((size_t)(m > 0 ? m : 1) * sizeof *images);
        if (images == NULL)
            return TSR_ENOMEM;
        for (int j = 0; j < m; j++)
            images[j] = get32(r);
        tsr_task one = {m, images, weight};
        int rc = r->bad ? 0 : add_tasks(t, n, cap, &one, 1);
        free(images);
        if (rc)
            return rc;
    }
    return r->bad ? TSR_EINVAL : 0;
}

static void put_stats(buf *b, const tsr_stats *st)
{
    int levels = st->attempts ? st->levels : 0;
    put64(b, levels);
    for (int p = 0; p < levels; p++) {
        put64(b, (int64_t)st->attempts[p]);
        put64(b, (int64_t)st->fits[p]);
    }
    put64(b, (int64_t)st->nodes);
    put64(b, (int64_t)st->solutions);
    put64(b, (int64_t)st->classes);
    put_double(b, st->fraction);
}

/* Statistics read from r into *out (whose arrays have out->levels). */
static void get_stats(reader *r, tsr_stats *out)
{
    int levels = get_count(r, 16, true);
    for (int p = 0; p < out->levels; p++)
        out->attempts[p] = out->fits[p] = 0;
    for (int p = 0; p < levels && !r->bad; p++) {
        uint64_t a = (uint64_t)get64(r), f = (uint64_t)get64(r);
        if (p < out->levels) {
            out->attempts[p] = a;
            out->fits[p] = f;
        }
    }
    out->nodes = (uint64_t)get64(r);
    out->solutions = (uint64_t)get64(r);
    out->classes = (uint64_t)get64(r);
    out->fraction = get_double(r);
}

/* acc += add (acc's arrays have acc->levels entries). */
static void add_stats(tsr_stats *acc, const tsr_stats *add)
{
    for (int p = 0; p < acc->levels && p < add->levels && add->attempts; p++) {
        acc->attempts[p] += add->attempts[p];
        acc->fits[p] += add->fits[p];
    }
    acc->nodes += add->nodes;
    acc->solutions += add->solutions;
    acc->classes += add->classes;
    acc->fraction += add->fraction;
}

static int alloc_stats(tsr_stats *st, int levels)
{
    *st = (tsr_stats){.levels = levels};
    st->attempts = calloc((size_t)levels + 1, sizeof *st->attempts);
    st->fits = calloc((size_t)levels + 1, sizeof *st->fits);
    return st->attempts && st->fits ? 0 : TSR_ENOMEM;
}

static void put_solution(buf *b, const tsr_solution *sol)
{
    put32(b, sol->nplacements);
    for (int i = 0; i < sol->nplacements; i++) {
        const tsr_placement *p = &sol->placements[i];
        put32(b, p->piece);
        put32(b, p->ncells);
        for (int j = 0; j < p->ncells; j++) {
            put32(b, p->cells[j].x);
            put32(b, p->cells[j].y);
            put32(b, p->cells[j].z);
        }
    }
}

/* A fingerprint of a solver's images: every rank must number them alike,
 * since tasks name subtrees by image ids. */
static int64_t fingerprint(const tsr_solver *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a over piece and cells */
    int n = tsr_solver_nimages(s), cap = 0;
    tsr_cell *cells = NULL;
    for (int id = 0; id < n; id++) {
        tsr_placement pl;
        if (tsr_solver_image(s, id, &pl, NULL) == 0 && pl.ncells > cap) { /* the count */
            free(cells);
            cap = pl.ncells;
            cells = malloc((size_t)cap * sizeof *cells);
            if (cells == NULL)
                return 0;
        }
        if (tsr_solver_image(s, id, &pl, cells) != 0)
            continue;
        int32_t v[3] = {pl.piece, pl.ncells, id};
        for (int j = 0; j <= pl.ncells; j++) {
            for (int k = 0; k < 3; k++)
                for (int byte = 0; byte < 4; byte++)
                    h = (h ^ ((uint32_t)v[k] >> (8 * byte) & 0xff)) * 1099511628211ull;
            if (j < pl.ncells)
                v[0] = cells[j].x, v[1] = cells[j].y, v[2] = cells[j].z;
        }
    }
    free(cells);
    return (int64_t)h;
}

/* ---- sending and receiving ---- */

/* Is a message from `source` (or MPI_ANY_SOURCE) waiting?  Sets *from, *tag. */
static bool poll_msg(int source, int *from, int *tag)
{
    int flag = 0;
    MPI_Status ms;
    MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms);
    if (flag) {
        *from = ms.MPI_SOURCE;
        *tag = ms.MPI_TAG;
    }
    return flag != 0;
}

/* Make room for an n-byte message in b (contents dropped). */
static int room(buf *b, int n)
{
    b->n = 0;
    if ((size_t)n > b->cap) {
        unsigned char *np = realloc(b->p, (size_t)n);
        if (np == NULL)
            return TSR_ENOMEM;
        b->p = np;
        b->cap = (size_t)n;
    }
    return 0;
}

/* Start receiving the first message waiting from `from` (found by
 * MPI_Iprobe) into b; *req completes when it is all there.  Receives never
 * block: a rank that dies in the middle of a message must not hang the one
 * receiving it. */
static int start_recv(int from, int *tag, buf *b, MPI_Request *req)
{
    int flag = 0, nbytes = 0;
    MPI_Status ms;
    MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms);
    if (!flag)
        return 1;
    MPI_Get_count(&ms, MPI_BYTE, &nbytes);
    *tag = ms.MPI_TAG;
    if (room(b, nbytes) != 0)
        return TSR_ENOMEM;
    MPI_Irecv(b->p, nbytes, MPI_BYTE, ms.MPI_SOURCE, ms.MPI_TAG, MPI_COMM_WORLD, req);
    b->n = (size_t)nbytes;
    return 0;
}

/* A worker receives the message poll_msg found, waiting at most
 * `patience` seconds (0: for ever) for the rest of it.  Returns 0, or
 * TSR_EIO when rank 0 went quiet mid-message (then b is not to be used
 * again while MPI may still write into it: it is detached). */
static int recv_msg(int from, int tag, buf *b, double patience)
{
    MPI_Request req;
    int got = 0;
    int rc = start_recv(from, &got, b, &req);
    if (rc != 0)
        return rc > 0 ? TSR_EIO : rc;
    (void)tag;
    double until = now() + patience;
    long ns = 0;
    for (int done = 0;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return 0;
        if (patience > 0 && now() > until) {
            MPI_Cancel(&req);
            MPI_Request_free(&req);
            *b = (buf){0}; /* detached: MPI may still write into it */
            return TSR_EIO;
        }
        nap(&ns);
    }
}

/* ---- rank 0's own worker: the same messages through mailboxes ---- */

/* A FIFO of messages between rank 0's coordinator and the worker thread it
 * runs itself, so that rank 0 searches too with exactly the code and
 * protocol of the other ranks (messages keep their order, as MPI's do). */
typedef struct mbmsg {
    struct mbmsg *next;
    int tag;
    size_t n;
    unsigned char p[];
} mbmsg;

typedef struct mailbox {
    pthread_mutex_t mu;
    mbmsg *head, *tail;
} mailbox;

static int mb_put(mailbox *mb, int tag, const buf *b)
{
    mbmsg *m = malloc(sizeof *m + b->n);
    if (m == NULL)
        return TSR_ENOMEM;
    *m = (mbmsg){NULL, tag, b->n};
    if (b->n > 0)
        memcpy(m->p, b->p, b->n);
    pthread_mutex_lock(&mb->mu);
    if (mb->tail)
        mb->tail->next = m;
    else
        mb->head = m;
    mb->tail = m;
    pthread_mutex_unlock(&mb->mu);
    return 0;
}

/* The tag of the first message, if any. */
static bool mb_peek(mailbox *mb, int *tag)
{
    pthread_mutex_lock(&mb->mu);
    bool any = mb->head != NULL;
    if (any)
        *tag = mb->head->tag;
    pthread_mutex_unlock(&mb->mu);
    return any;
}

/* Take the first message into b. */
static int mb_take(mailbox *mb, int *tag, buf *b)
{
    pthread_mutex_lock(&mb->mu);
    mbmsg *m = mb->head;
    if (m != NULL) {
        mb->head = m->next;
        if (mb->head == NULL)
            mb->tail = NULL;
    }
    pthread_mutex_unlock(&mb->mu);
    if (m == NULL)
        return 1;
    *tag = m->tag;
    int rc = room(b, (int)m->n);
    if (rc == 0 && m->n > 0)
        memcpy(b->p, m->p, m->n);
    b->n = rc == 0 ? m->n : 0;
    free(m);
    return rc;
}

static void mb_free(mailbox *mb)
{
    for (mbmsg *m = mb->head, *next; m != NULL; m = next) {
        next = m->next;
        free(m);
    }
    mb->head = mb->tail = NULL;
}

/* ---- worker ranks ---- */

/* A job's solver, built on a thread of its own: preparing a big puzzle can
 * take longer than rank 0's timeout, and meanwhile the worker must go on
 * answering (heartbeats, STEAL, STOP). */
typedef struct build {
    pthread_t th;
    char *ptext, *otext;      /* the JOB's texts (copies) */
    size_t plen, olen;
    int nimages;              /* rank 0's image count and fingerprint */
    int64_t fp;
    tsr_puzzle *pz;           /* the results */
    tsr_solver *s;
    int rc;
    char why[TSR_ERR_MAX];
    bool done;                /* under wk.mu */
} build;

typedef struct wk {
    clu_rank_stats rs;
    /* the current job's solver */
    int64_t job;
    tsr_puzzle *pz;
    tsr_solver *s;
    int threads;
    int job_err;
    char job_msg[TSR_ERR_MAX];
    build *b;                 /* a build in progress, or NULL */
    double timeout_s, heard;
    /* the batch being searched */
    int64_t batch;
    bool steal, stop, exit;
    bool no_finalize;         /* EXIT said a rank was lost (see clu_close) */
    mailbox *inbox, *outbox;  /* rank 0's own worker: no MPI, these instead */
    buf back; /* the tasks a STEAL gave back */
    bool gave_back;
    /* solutions found by the pool's threads, sent by the MPI thread */
    pthread_mutex_t mu;
    buf sols, spare;
    double last_flush;
    buf in, out;
} wk;

static int wk_send(wk *w, int tag, const buf *b)
{
    if (b->n > (size_t)INT_MAX)
        return TSR_ETOOBIG;
    if (w->outbox)
        return mb_put(w->outbox, tag, b);
    MPI_Send(b->p, (int)b->n, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
    w->rs.msgs_sent++;
    w->rs.bytes_sent += b->n;
    return 0;
}

/* Is a message from rank 0 waiting?  Sets *tag. */
static bool wk_poll(wk *w, int *tag)
{
    int from;
    return w->inbox ? mb_peek(w->inbox, tag) : poll_msg(0, &from, tag);
}

/* Receive the message wk_poll found into w->in. */
static int wk_recv(wk *w, int tag)
{
    int got;
    if (w->inbox)
        return mb_take(w->inbox, &got, &w->in) < 0 ? TSR_ENOMEM : 0;
    return recv_msg(0, tag, &w->in, w->timeout_s);
}

static int wk_solution(void *ctx, const tsr_solution *sol)
{
    wk *w = ctx;
    pthread_mutex_lock(&w->mu);
    put_solution(&w->sols, sol);
    int stop = w->sols.oom;
    pthread_mutex_unlock(&w->mu);
    return stop;
}

/* Send the buffered solutions (on the MPI thread).  SOL: the batch id as
 * two 32-bit words, then the solutions. */
static int wk_flush(wk *w)
{
    pthread_mutex_lock(&w->mu);
    buf out = w->sols;
    w->sols = w->spare; /* holds the header already */
    pthread_mutex_unlock(&w->mu);
    int rc = out.oom ? TSR_ENOMEM : 0;
    if (rc == 0 && out.n > 8)
        rc = wk_send(w, TAG_SOL, &out);
    out.n = 0;
    put64(&out, w->batch); /* the header of the next SOL */
    w->spare = out;
    w->last_flush = now();
    return rc;
}

/* Read what rank 0 sent but JOB and WORK (which come only to an idle
 * worker, and are left for clu_serve); true when the batch must end. */
static bool wk_read(wk *w)
{
    int tag;
    while (!w->exit && wk_poll(w, &tag) && tag != TAG_JOB && tag != TAG_WORK) {
        if (wk_recv(w, tag) != 0) {
            w->exit = w->stop = w->no_finalize = true; /* rank 0 is gone */
            break;
        }
        w->rs.msgs_recv++;
        w->rs.bytes_recv += w->in.n;
        w->heard = now();
        reader r = {w->in.p, w->in.n, 0, false};
        if (tag == TAG_EXIT) {
            w->exit = w->stop = true;
            w->no_finalize = get64(&r) != 0;
        }
        else if (tag == TAG_PING)
            w->timeout_s = get_double(&r);
        else if ((tag == TAG_STEAL || tag == TAG_STOP) && get64(&r) == w->batch && !r.bad)
            *(tag == TAG_STEAL ? &w->steal : &w->stop) = true;
        /* else stale: a STEAL or STOP that crossed the DONE of its batch */
    }
    return w->steal || w->stop;
}

static int wk_checkpoint_wanted(void *ctx)
{
    wk *w = ctx;
    pthread_mutex_lock(&w->mu);
    size_t buffered = w->sols.n;
    pthread_mutex_unlock(&w->mu);
    if (buffered > 8 && (buffered >= FLUSH_BYTES || now() - w->last_flush >= FLUSH_S))
        wk_flush(w);
    return wk_read(w);
}

/* Every thread parked: tasks are exactly the batch's work left. */
static int wk_checkpoint(void *ctx, const tsr_task *tasks, int ntasks, const tsr_stats *st)
{
    (void)st;
    wk *w = ctx;
    if (w->steal && !w->stop) {
        w->back.n = 0;
        put_tasks(&w->back, tasks, ntasks);
        if (w->back.oom)
            return TSR_ENOMEM; /* ends the batch with an error: rank 0 fails the search */
        w->gave_back = true;
        w->rs.given_back++;
    }
    return 1;
}

/* The batch's progress, which is also the worker's heartbeat. */
static int wk_progress(void *ctx, const tsr_stats *st)
{
    wk *w = ctx;
    w->out.n = 0;
    w->out.oom = false;
    put64(&w->out, w->batch);
    put_double(&w->out, cpu_now());
    put_stats(&w->out, st);
    if (!w->out.oom)
        wk_send(w, TAG_PROG, &w->out);
    return 0;
}

static void *build_main(void *arg)
{
    build *b = arg;
    tsr_err err = {{0}};
    tsr_options opt;
    int rc = tsr_puzzle_read(b->ptext, b->plen, "rank 0's puzzle", &b->pz, NULL, &err);
    if (rc == 0)
        rc = tsr_options_read_json(b->otext, b->olen, "rank 0's options", b->pz, &opt, &err);
    if (rc == 0)
        rc = tsr_solver_new(b->pz, &opt, &b->s, &err);
    if (rc == 0 && (tsr_solver_nimages(b->s) != b->nimages || fingerprint(b->s) != b->fp))
        rc = tsr_err_set(&err, TSR_EINVAL,
                         "built a different solver (%d images) from rank 0's (%d images)",
                         tsr_solver_nimages(b->s), b->nimages);
    b->rc = rc;
    snprintf(b->why, sizeof b->why, "%s", rc ? err.msg : "");
    return NULL;
}

static void *build_thread(void *arg)
{
    wk *w = arg;
    build_main(w->b);
    pthread_mutex_lock(&w->mu);
    w->b->done = true;
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void free_build(build *b)
{
    if (b == NULL)
        return;
    tsr_solver_free(b->s);
    tsr_puzzle_free(b->pz);
    free(b->ptext);
    free(b->otext);
    free(b);
}

static bool build_done(wk *w)
{
    pthread_mutex_lock(&w->mu);
    bool done = w->b->done;
    pthread_mutex_unlock(&w->mu);
    return done;
}

/* Wait for the build in progress, heartbeating and reading rank 0's
 * requests; then the solver is the worker's. */
static void wk_build_wait(wk *w)
{
    if (w->b == NULL)
        return;
    double beat = now();
    while (!build_done(w)) {
        wk_read(w);
        if (now() - beat >= PROG_S && w->batch >= 0) {
            beat = now();
            w->out.n = 0;
            w->out.oom = false;
            put64(&w->out, w->batch);
            put_double(&w->out, cpu_now());
            put_stats(&w->out, &(tsr_stats){0});
            if (!w->out.oom)
                wk_send(w, TAG_PROG, &w->out);
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    pthread_join(w->b->th, NULL);
    w->pz = w->b->pz;
    w->s = w->b->s;
    w->b->pz = NULL;
    w->b->s = NULL;
    w->job_err = w->b->rc;
    snprintf(w->job_msg, sizeof w->job_msg, "%s", w->b->why);
    free_build(w->b);
    w->b = NULL;
}

/* JOB: start building the job's solver; a failure is reported by the DONE
 * of the next batch. */
static void wk_job(wk *w)
{
    w->batch = -1; /* no batch: no heartbeat while an old build ends */
    wk_build_wait(w);
    reader r = {w->in.p, w->in.n, 0, false};
    int64_t key = get64(&r);
    int threads = (int)get64(&r);
    w->timeout_s = get_double(&r);
    int nimages = (int)get64(&r);
    int64_t fp = get64(&r);
    int64_t plen = get64(&r), olen = get64(&r);
    const char *ptext = plen >= 0 ? (const char *)get_bytes(&r, (size_t)plen) : NULL;
    const char *otext = olen >= 0 ? (const char *)get_bytes(&r, (size_t)olen) : NULL;
    tsr_solver_free(w->s);
    tsr_puzzle_free(w->pz);
    w->s = NULL;
    w->pz = NULL;
    w->job = key;
    w->threads = threads > 0 ? threads : tsr_cpu_count();
    build *b = calloc(1, sizeof *b);
    if (b != NULL && !r.bad && ptext != NULL && otext != NULL) {
        b->ptext = malloc((size_t)plen + 1);
        b->otext = malloc((size_t)olen + 1);
    }
    if (b == NULL || b->ptext == NULL || b->otext == NULL) {
        free_build(b);
        w->job_err = r.bad || ptext == NULL || otext == NULL ? TSR_EINVAL : TSR_ENOMEM;
        snprintf(w->job_msg, sizeof w->job_msg, "%s",
                 w->job_err == TSR_EINVAL ? "a malformed JOB message" : "out of memory");
        return;
    }
    memcpy(b->ptext, ptext, (size_t)plen);
    memcpy(b->otext, otext, (size_t)olen);
    b->ptext[plen] = b->otext[olen] = '\0';
    b->plen = (size_t)plen;
    b->olen = (size_t)olen;
    b->nimages = nimages;
    b->fp = fp;
    w->b = b;
    if (pthread_create(&b->th, NULL, build_thread, w) != 0) { /* build here, then */
        build_main(b);
        b->done = true;
        b->th = pthread_self();
        w->b = NULL;
        w->pz = b->pz;
        w->s = b->s;
        b->pz = NULL;
        b->s = NULL;
        w->job_err = b->rc;
        snprintf(w->job_msg, sizeof w->job_msg, "%s", b->why);
        free_build(b);
    }
}

/* WORK: search a batch and answer DONE. */
static int wk_batch(wk *w)
{
    reader r = {w->in.p, w->in.n, 0, false};
    w->batch = get64(&r);
    tsr_task *tasks = NULL;
    int ntasks = 0, cap = 0;
    int rc = get_tasks(&r, &tasks, &ntasks, &cap);
    w->rs.batches++;
    w->rs.tasks += (uint64_t)ntasks;
    w->steal = w->stop = w->gave_back = false;
    w->sols.n = w->spare.n = 0;
    put64(&w->sols, w->batch);
    put64(&w->spare, w->batch);
    w->last_flush = now();
    tsr_stats st = {0};
    tsr_callbacks cb = {.ctx = w, .solution = wk_solution, .progress = wk_progress,
                        .progress_seconds = PROG_S};
    tsr_pool_hooks hk = {.ctx = w, .checkpoint_wanted = wk_checkpoint_wanted,
                         .checkpoint = wk_checkpoint};
    double t0 = now();
    wk_build_wait(w);
    if (rc == 0)
        rc = w->s == NULL ? (w->job_err ? w->job_err : TSR_EINVAL) : 0;
    if (rc == 0 && w->steal && !w->stop) { /* asked back before it began */
        w->back.n = 0;
        put_tasks(&w->back, tasks, ntasks);
        rc = w->back.oom ? TSR_ENOMEM : 0;
        w->gave_back = true;
        w->rs.given_back++;
    } else if (rc == 0 && !w->stop) {
        rc = tsr_pool_search(w->s, w->threads, tasks, ntasks, &cb, &hk, &st);
    }
    w->rs.busy_s += now() - t0;
    free_tasks(tasks, ntasks);
    pthread_mutex_lock(&w->mu);
    if (rc == 0 && w->sols.oom)
        rc = TSR_ENOMEM;
    pthread_mutex_unlock(&w->mu);
    int frc = wk_flush(w);
    if (rc == 0)
        rc = frc;
    w->out.n = 0;
    w->out.oom = false;
    put64(&w->out, w->batch);
    put64(&w->out, rc);
    put_double(&w->out, cpu_now());
    put_stats(&w->out, &st);
    if (rc == 0 && w->gave_back)
        put_bytes(&w->out, w->back.p, w->back.n);
    else
        put64(&w->out, 0); /* no tasks */
    /* a failed batch says why in a last field */
    const char *why = rc == 0 ? "" : w->s == NULL && w->job_msg[0] ? w->job_msg : tsr_strerror(rc);
    put_bytes(&w->out, why, strlen(why));
    if (w->out.oom) { /* say at least that the batch failed */
        w->out = (buf){w->out.p, 0, w->out.cap, false};
        put64(&w->out, w->batch);
        put64(&w->out, TSR_ENOMEM);
    }
    int src = wk_send(w, TAG_DONE, &w->out);
    tsr_stats_free(&st);
    return src;
}

/* A worker's loop, over MPI or (rank 0's own) over mailboxes. */
static int serve(wk *wp, tsr_err *err)
{
    wk w = *wp;
    pthread_mutex_init(&w.mu, NULL);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    put64(&w.out, getpid());
    put_bytes(&w.out, host, strlen(host));
    int rc = w.out.oom ? TSR_ENOMEM : wk_send(&w, TAG_HELLO, &w.out);
    w.heard = now();
    long ns = 0;
    while (rc == 0 && !w.exit) {
        int tag;
        if (!wk_poll(&w, &tag)) {
            /* rank 0 pings idle workers every second, but may be busy
             * a while (committing a checkpoint): leave only when it has
             * surely gone */
            if (w.inbox == NULL && w.timeout_s > 0 &&
                now() - w.heard > ORPHAN_TIMEOUTS * w.timeout_s) {
                w.no_finalize = true; /* rank 0 is gone: MPI_Finalize would wait */
                rc = tsr_err_set(err, TSR_EIO, "rank 0 has been silent for %.0f s: leaving",
                                 now() - w.heard);
                break;
            }
            nap(&ns);
            continue;
        }
        ns = 0;
        if (tag != TAG_JOB && tag != TAG_WORK) {
            wk_read(&w); /* PING, EXIT, or a STEAL/STOP that crossed a DONE */
            continue;
        }
        if ((rc = wk_recv(&w, tag)) != 0) {
            tsr_err_set(err, rc, "rank 0 went quiet in the middle of a message: leaving");
            w.no_finalize = true;
            break;
        }
        w.rs.msgs_recv++;
        w.rs.bytes_recv += w.in.n;
        w.heard = now();
        if (tag == TAG_JOB)
            wk_job(&w);
        else
            rc = wk_batch(&w);
    }
    if (rc != 0 && err != NULL && err->msg[0] == '\0')
        tsr_err_set(err, rc, "%s", tsr_strerror(rc));
    w.batch = -1;
    wk_build_wait(&w);
    tsr_solver_free(w.s);
    tsr_puzzle_free(w.pz);
    free(w.sols.p);
    free(w.spare.p);
    free(w.back.p);
    free(w.in.p);
    free(w.out.p);
    pthread_mutex_destroy(&w.mu);
    wp->no_finalize = w.no_finalize;
    return rc;
}

int clu_serve(tsr_err *err)
{
    wk w = {.job = -1, .batch = -1};
    int rc = serve(&w, err);
    if (!w.no_finalize)
        MPI_Finalize();
    return rc;
}

/* ---- rank 0, the coordinator ---- */

enum peer_state { PEER_IDLE, PEER_BUSY, PEER_LOST };

typedef struct peer {
    enum peer_state state;
    int64_t job;        /* key of the job whose solver it has (-1: none) */
    int64_t batch;      /* the batch out */
    bool asked, stopped;
    double since, heard;
    tsr_task *tasks;    /* a copy of the batch out, requeued if the rank is lost */
    int ntasks, captasks;
    buf sols;           /* its solutions, reported when the batch is done */
    tsr_stats prog;     /* the batch's progress so far */
    buf rx;             /* the message being received from it */
    MPI_Request rx_req;
    int rx_tag;
    bool rx_active;
} peer;

/* A send in flight; its buffer lives until MPI is done with it. */
typedef struct outmsg {
    MPI_Request req;
    unsigned char *p;
} outmsg;

struct clu_cluster {
    pthread_mutex_t mu;    /* held by whoever uses MPI (search or tick) */
    pthread_mutex_t st_mu; /* rs and the peers' state, read by clu_ranks */
    int nranks, threads;
    int first;             /* the first rank that searches: 0, or 1 when rank
                              0's own worker could not start */
    double timeout_s, opened, last_ping;
    double last_listen;    /* when rank 0 last drained its messages */
    peer *peers;           /* [nranks]; [0] is rank 0's own worker */
    clu_rank_stats *rs;    /* [nranks] */
    uint64_t steals;       /* requests for work back (for an idle rank) */
    /* rank 0's own worker, a thread that talks through mailboxes */
    pthread_t local;
    mailbox to_local, from_local;
    outmsg *outs;
    int nouts, capouts;
    unsigned char **grave; /* buffers of receives cut short by a lost rank */
    int ngrave;
    int64_t next_batch;
    buf in, out;
    /* what one search needs (clu_search's locals, shared with helpers) */
    const tsr_solver *s;
    const clu_job *job;
    const tsr_callbacks *cb;
    int levels;
    tsr_task *q;           /* the queue, heaviest first */
    int qn, qcap;
    tsr_stats total;       /* of batches done in this search */
    uint64_t reported;     /* solutions passed to cb */
    long long limit;
    bool stopping;
    int err, err_rank;
    char err_msg[TSR_ERR_MAX];
    buf jobmsg;            /* the JOB message of this search */
    tsr_placement *pl;     /* a decoded solution */
    tsr_cell *cells;
    int plcap, cellcap;
    tsr_worker_stats *ws;  /* per-rank doings for progress reports */
};

/* Rank 0's messages with its own worker are not MPI traffic: not counted. */
static void count_recv(clu_cluster *c, int from, size_t n)
{
    if (from == 0)
        return;
    pthread_mutex_lock(&c->st_mu);
    c->rs[0].msgs_recv++;
    c->rs[0].bytes_recv += n;
    c->rs[from].msgs_sent++;
    c->rs[from].bytes_sent += n;
    pthread_mutex_unlock(&c->st_mu);
}

/* Test the sends in flight; free those done. */
static void pump(clu_cluster *c)
{
    for (int i = 0; i < c->nouts;) {
        int done = 0;
        MPI_Test(&c->outs[i].req, &done, MPI_STATUS_IGNORE);
        if (done) {
            free(c->outs[i].p);
            c->outs[i] = c->outs[--c->nouts];
        } else {
            i++;
        }
    }
}

/* Send b to rank k without waiting (a copy travels). */
static int send_to(clu_cluster *c, int k, int tag, const buf *b)
{
    if (b->oom)
        return TSR_ENOMEM;
    if (b->n > (size_t)INT_MAX)
        return TSR_ETOOBIG;
    if (k == 0)
        return mb_put(&c->to_local, tag, b);
    if (c->nouts == c->capouts) {
        int ncap = c->capouts ? 2 * c->capouts : 16;
        outmsg *no = realloc(c->outs, (size_t)ncap * sizeof *no);
        if (no == NULL)
            return TSR_ENOMEM;
        c->outs = no;
        c->capouts = ncap;
    }
    unsigned char *p = malloc(b->n ? b->n : 1);
    if (p == NULL)
        return TSR_ENOMEM;
    if (b->n > 0)
        memcpy(p, b->p, b->n);
    outmsg *o = &c->outs[c->nouts++];
    o->p = p;
    MPI_Isend(p, (int)b->n, MPI_BYTE, k, tag, MPI_COMM_WORLD, &o->req);
    pthread_mutex_lock(&c->st_mu);
    c->rs[0].msgs_sent++;
    c->rs[0].bytes_sent += b->n;
    c->rs[k].msgs_recv++;
    c->rs[k].bytes_recv += b->n;
    pthread_mutex_unlock(&c->st_mu);
    return 0;
}

/* A message of one 64-bit word (STEAL, STOP) or a double (PING). */
static int send_word(clu_cluster *c, int k, int tag, int64_t v)
{
    c->out.n = 0;
    c->out.oom = false;
    put64(&c->out, v);
    return send_to(c, k, tag, &c->out);
}

static int send_ping(clu_cluster *c, int k)
{
    c->out.n = 0;
    c->out.oom = false;
    put_double(&c->out, c->timeout_s);
    return send_to(c, k, TAG_PING, &c->out);
}

static void fail(clu_cluster *c, int rc, int rank, const char *msg)
{
    if (c->err == 0) {
        c->err = rc;
        c->err_rank = rank;
        snprintf(c->err_msg, sizeof c->err_msg, "%s", msg && msg[0] ? msg : tsr_strerror(rc));
    }
    c->stopping = true;
}

static void set_peer_state(clu_cluster *c, int k, enum peer_state s)
{
    pthread_mutex_lock(&c->st_mu);
    c->peers[k].state = s;
    c->rs[k].busy = s == PEER_BUSY;
    c->rs[k].lost = s == PEER_LOST;
    pthread_mutex_unlock(&c->st_mu);
}

/* The batch of peer k is over (done, or the rank lost): account its time. */
static void batch_over(clu_cluster *c, int k, enum peer_state next)
{
    peer *p = &c->peers[k];
    pthread_mutex_lock(&c->st_mu);
    c->rs[k].busy_s += now() - p->since;
    pthread_mutex_unlock(&c->st_mu);
    free_tasks(p->tasks, p->ntasks);
    p->tasks = NULL;
    p->ntasks = p->captasks = 0;
    p->sols.n = 0;
    p->asked = p->stopped = false;
    p->prog.nodes = 0;
    p->prog.fraction = 0;
    set_peer_state(c, k, next);
}

static int by_weight_desc(const void *a, const void *b)
{
    double x = ((const tsr_task *)a)->weight, y = ((const tsr_task *)b)->weight;
    return x > y ? -1 : x < y;
}

/* Queue tasks, heaviest first. */
static int requeue(clu_cluster *c, const tsr_task *t, int n)
{
    int rc = add_tasks(&c->q, &c->qn, &c->qcap, t, n);
    if (rc == 0 && n > 0)
        qsort(c->q, (size_t)c->qn, sizeof *c->q, by_weight_desc);
    return rc;
}

/* Give up rank k: it has been silent too long.  Its batch goes back whole;
 * what it sent of it is dropped. */
static void lose(clu_cluster *c, int k)
{
    peer *p = &c->peers[k];
    if (k == 0)
        return; /* rank 0's own worker: it lives as long as rank 0 */
    if (p->rx_active) { /* it died mid-message: never to complete */
        MPI_Cancel(&p->rx_req);
        MPI_Request_free(&p->rx_req);
        p->rx_active = false;
        /* MPI may still write into its buffer: freed only at clu_close */
        unsigned char **g = realloc(c->grave, (size_t)(c->ngrave + 1) * sizeof *g);
        if (g != NULL) {
            c->grave = g;
            c->grave[c->ngrave++] = p->rx.p;
        }
        p->rx = (buf){0};
    }
    if (p->state == PEER_BUSY) {
        int rc = requeue(c, p->tasks, p->ntasks);
        if (rc)
            fail(c, rc, 0, "out of memory requeueing a lost rank's batch");
        batch_over(c, k, PEER_LOST);
    } else {
        set_peer_state(c, k, PEER_LOST);
    }
    send_word(c, k, TAG_EXIT, 1); /* should it come back: leave */
}

/* A batch for worker k: the heaviest tasks up to a fair share of the queued
 * weight, at least one.  The job's solver goes first if k lacks it. */
static int hand_out(clu_cluster *c, int k, int nworkers)
{
    peer *p = &c->peers[k];
    int rc = 0;
    if (p->job != c->job->key) {
        if ((rc = send_to(c, k, TAG_JOB, &c->jobmsg)) != 0)
            return rc;
        p->job = c->job->key;
    }
    double w = 0, share = 0;
    for (int i = 0; i < c->qn; i++)
        share += c->q[i].weight;
    share /= nworkers;
    int n = 0;
    while (n < c->qn && (n == 0 || w + c->q[n].weight <= share))
        w += c->q[n++].weight;
    int64_t id = ++c->next_batch;
    c->out.n = 0;
    c->out.oom = false;
    put64(&c->out, id);
    put_tasks(&c->out, c->q, n);
    if ((rc = send_to(c, k, TAG_WORK, &c->out)) != 0)
        return rc;
    /* the queue's first n tasks become the batch's copy */
    free_tasks(p->tasks, p->ntasks);
    p->tasks = malloc((size_t)n * sizeof *p->tasks);
    if (p->tasks == NULL)
        return TSR_ENOMEM;
    memcpy(p->tasks, c->q, (size_t)n * sizeof *p->tasks);
    p->ntasks = p->captasks = n;
    memmove(c->q, c->q + n, (size_t)(c->qn - n) * sizeof *c->q);
    c->qn -= n;
    p->batch = id;
    pthread_mutex_lock(&c->st_mu); /* clu_ranks reads since */
    p->since = p->heard = now();
    pthread_mutex_unlock(&c->st_mu);
    p->asked = p->stopped = false;
    p->sols.n = 0;
    p->prog.nodes = 0;
    p->prog.fraction = 0;
    set_peer_state(c, k, PEER_BUSY);
    pthread_mutex_lock(&c->st_mu);
    c->rs[k].batches++;
    c->rs[k].tasks += (uint64_t)n;
    pthread_mutex_unlock(&c->st_mu);
    return 0;
}

/* Report a done batch's solutions through cb, up to the limit; returns
 * how many it held (reported or not). */
static uint64_t report_solutions(clu_cluster *c, const buf *sols, bool *bad)
{
    reader r = {sols->p, sols->n, 0, false};
    uint64_t count = 0;
    while (r.pos < r.n && !r.bad) {
        int np = get_count(&r, 8, false);
        if (np > c->plcap) {
            tsr_placement *pl = realloc(c->pl, (size_t)np * sizeof *pl);
            if (pl == NULL) {
                fail(c, TSR_ENOMEM, 0, NULL);
                return count;
            }
            c->pl = pl;
            c->plcap = np;
        }
        int ncells = 0; /* cells first (their array may move), then point at them */
        for (int i = 0; i < np && !r.bad; i++) {
            c->pl[i].piece = get32(&r);
            c->pl[i].ncells = get_count(&r, 12, false);
            if (ncells + c->pl[i].ncells > c->cellcap) {
                int ncap = 2 * (ncells + c->pl[i].ncells);
                tsr_cell *nc = realloc(c->cells, (size_t)ncap * sizeof *nc);
                if (nc == NULL) {
                    fail(c, TSR_ENOMEM, 0, NULL);
                    return count;
                }
                c->cells = nc;
                c->cellcap = ncap;
            }
            for (int j = 0; j < c->pl[i].ncells; j++, ncells++) {
                c->cells[ncells].x = get32(&r);
                c->cells[ncells].y = get32(&r);
                c->cells[ncells].z = get32(&r);
            }
        }
        if (r.bad)
            break;
        for (int i = 0, at = 0; i < np; at += c->pl[i++].ncells)
            c->pl[i].cells = c->cells + at;
        count++;
        if (c->stopping)
            continue; /* the search is over: count only */
        tsr_solution sol = {np, c->pl};
        c->reported++;
        if ((c->cb && c->cb->solution && c->cb->solution(c->cb->ctx, &sol)) ||
            (c->limit > 0 && c->reported >= (uint64_t)c->limit))
            c->stopping = true;
    }
    *bad = r.bad;
    return count;
}

/* DONE from k: its solutions are reported, its statistics counted and the
 * tasks it gave back queued. */
static void on_done(clu_cluster *c, int k, reader *r)
{
    peer *p = &c->peers[k];
    int rc = (int)get64(r);
    double cpu = get_double(r);
    tsr_stats st;
    if (alloc_stats(&st, c->levels) != 0) {
        fail(c, TSR_ENOMEM, 0, NULL);
        return;
    }
    get_stats(r, &st);
    pthread_mutex_lock(&c->st_mu);
    c->rs[k].cpu_s = cpu;
    pthread_mutex_unlock(&c->st_mu);
    if (rc == 0 && !r->bad) {
        bool bad = false;
        uint64_t held = report_solutions(c, &p->sols, &bad);
        if (bad || held != st.solutions) /* cannot happen: messages arrive in order */
            rc = TSR_EINVAL;
    }
    int before = c->qn; /* a failed batch has no tasks: its reason follows */
    int trc = r->bad ? 0 : get_tasks(r, &c->q, &c->qn, &c->qcap);
    if (c->qn > before)
        qsort(c->q, (size_t)c->qn, sizeof *c->q, by_weight_desc);
    if (r->bad && rc == 0)
        rc = TSR_EINVAL;
    if (rc == 0)
        rc = trc;
    if (rc != 0) {
        char why[TSR_ERR_MAX];
        size_t left = r->bad ? 0 : r->n - r->pos;
        if (left >= sizeof why)
            left = sizeof why - 1;
        if (left > 0)
            memcpy(why, r->p + r->pos, left);
        why[left] = '\0';
        fail(c, rc, k, why);
    } else {
        st.solutions = 0; /* counted as reported */
        add_stats(&c->total, &st);
        if (p->asked && c->qn > before) {
            pthread_mutex_lock(&c->st_mu);
            c->rs[k].given_back++;
            pthread_mutex_unlock(&c->st_mu);
        }
    }
    tsr_stats_free(&st);
    batch_over(c, k, PEER_IDLE);
}

/* One message from `from`. */
static void on_message(clu_cluster *c, int from, int tag, const buf *in)
{
    count_recv(c, from, in->n);
    peer *p = &c->peers[from];
    reader r = {in->p, in->n, 0, false};
    if (tag == TAG_HELLO) {
        int pid = (int)get64(&r);
        size_t n = r.n - r.pos < 63 ? r.n - r.pos : 63;
        pthread_mutex_lock(&c->st_mu);
        c->rs[from].pid = pid;
        memcpy(c->rs[from].host, r.p + r.pos, n);
        c->rs[from].host[n] = '\0';
        pthread_mutex_unlock(&c->st_mu);
        return;
    }
    if (p->state != PEER_BUSY || get64(&r) != p->batch || r.bad)
        return; /* not about a batch out: stale */
    p->heard = now();
    if (tag == TAG_SOL) {
        put_bytes(&p->sols, r.p + r.pos, r.n - r.pos);
        if (p->sols.oom)
            fail(c, TSR_ENOMEM, 0, "out of memory holding a batch's solutions");
    } else if (tag == TAG_PROG) {
        double cpu = get_double(&r);
        get_stats(&r, &p->prog);
        pthread_mutex_lock(&c->st_mu);
        c->rs[from].cpu_s = cpu;
        pthread_mutex_unlock(&c->st_mu);
    } else if (tag == TAG_DONE) {
        on_done(c, from, &r);
    }
}

/* Progress of the search so far: batches done plus those out. */
static void snapshot(clu_cluster *c, tsr_stats *snap, double t0)
{
    *snap = c->total;
    snap->solutions = c->reported;
    snap->seconds = now() - t0;
    snap->nworkers = c->nranks - c->first;
    snap->workers = c->ws;
    /* the arrays are shared with total: add the batches out to a copy */
    for (int k = c->first; k < c->nranks; k++) {
        peer *p = &c->peers[k];
        c->ws[k - c->first] = (tsr_worker_stats){
            .state = p->state == PEER_BUSY ? TSR_WORKER_SEARCHING
                     : p->state == PEER_LOST ? TSR_WORKER_PARKED : TSR_WORKER_IDLE,
            .nodes = p->state == PEER_BUSY ? p->prog.nodes : 0,
            .tasks = c->rs[k].batches};
        if (p->state == PEER_BUSY) {
            snap->nodes += p->prog.nodes;
            snap->fraction += p->prog.fraction;
        }
    }
    if (snap->fraction > 1)
        snap->fraction = 1;
}

/* ---- rank 0 searching alone (one rank, or every worker lost) ---- */

typedef struct solo {
    clu_cluster *c;
    const tsr_pool_hooks *hk;
    tsr_stats sum; /* total + the pool's statistics, for the caller's hooks */
    uint64_t reported0; /* solutions reported before */
} solo;

static void solo_sum(solo *so, const tsr_stats *st)
{
    for (int p = 0; p < so->sum.levels; p++) {
        so->sum.attempts[p] = so->c->total.attempts[p] + (p < st->levels ? st->attempts[p] : 0);
        so->sum.fits[p] = so->c->total.fits[p] + (p < st->levels ? st->fits[p] : 0);
    }
    so->sum.nodes = so->c->total.nodes + st->nodes;
    so->sum.classes = so->c->total.classes + st->classes;
    so->sum.fraction = so->c->total.fraction + st->fraction;
    so->sum.solutions = so->reported0 + st->solutions; /* c->reported is the workers' */
    so->sum.seconds = st->seconds;
    so->sum.nworkers = st->nworkers;
    so->sum.workers = st->workers;
}

static int solo_solution(void *ctx, const tsr_solution *sol)
{
    solo *so = ctx;
    clu_cluster *c = so->c;
    c->reported++;
    int stop = c->cb && c->cb->solution && c->cb->solution(c->cb->ctx, sol);
    return stop || (c->limit > 0 && c->reported >= (uint64_t)c->limit);
}

static int solo_progress(void *ctx, const tsr_stats *st)
{
    solo *so = ctx;
    solo_sum(so, st);
    const tsr_callbacks *cb = so->c->cb;
    return cb && cb->progress ? cb->progress(cb->ctx, &so->sum) : 0;
}

static int solo_wanted(void *ctx)
{
    solo *so = ctx;
    return so->hk->checkpoint_wanted ? so->hk->checkpoint_wanted(so->hk->ctx) : 0;
}

static int solo_checkpoint(void *ctx, const tsr_task *tasks, int ntasks, const tsr_stats *st)
{
    solo *so = ctx;
    solo_sum(so, st);
    return so->hk->checkpoint(so->hk->ctx, tasks, ntasks, &so->sum);
}

/* Search the queue on rank 0's own threads; statistics join the totals. */
static int search_alone(clu_cluster *c, const tsr_pool_hooks *hk, double t0)
{
    solo so = {.c = c, .hk = hk, .reported0 = c->reported};
    int rc = alloc_stats(&so.sum, c->levels);
    tsr_callbacks cb = {.ctx = &so, .solution = solo_solution, .progress = solo_progress,
                        .progress_seconds = c->cb ? c->cb->progress_seconds : 1};
    tsr_pool_hooks h = {.ctx = &so, .checkpoint_seconds = hk ? hk->checkpoint_seconds : 0,
                        .checkpoint_wanted = solo_wanted, .checkpoint = solo_checkpoint};
    tsr_stats st = {0};
    if (rc == 0)
        rc = tsr_pool_search(c->s, c->threads > 0 ? c->threads : tsr_cpu_count(), c->q, c->qn,
                             &cb, hk ? &h : NULL, &st);
    if (rc == 0) {
        st.solutions = 0;
        add_stats(&c->total, &st);
        c->stopping = c->stopping || st.stopped;
        free_tasks(c->q, c->qn);
        c->q = NULL;
        c->qn = c->qcap = 0;
    } else {
        fail(c, rc, 0, NULL);
    }
    (void)t0;
    tsr_stats_free(&st);
    tsr_stats_free(&so.sum);
    return rc;
}

/* ---- the coordinator's loop ---- */

static int build_job_message(clu_cluster *c)
{
    const clu_job *job = c->job;
    buf *b = &c->jobmsg;
    b->n = 0;
    b->oom = false;
    size_t olen = strlen(job->options);
    put64(b, job->key);
    put64(b, c->threads);
    put_double(b, c->timeout_s);
    put64(b, tsr_solver_nimages(c->s));
    put64(b, fingerprint(c->s));
    put64(b, (int64_t)job->puzzle_len);
    put64(b, (int64_t)olen);
    put_bytes(b, job->puzzle, job->puzzle_len);
    put_bytes(b, job->options, olen);
    return b->oom ? TSR_ENOMEM : 0;
}

/* Test the sends in flight and take in what arrived, each worker's
 * messages in order; true when anything came. */
static bool drain(clu_cluster *c)
{
    c->last_listen = now();
    pump(c);
    bool got = false;
    for (int tag; c->first == 0 && mb_take(&c->from_local, &tag, &c->in) == 0; got = true)
        on_message(c, 0, tag, &c->in);
    for (int k = c->first; k < c->nranks; k++) {
        peer *p = &c->peers[k];
        for (int rc = 0; rc == 0 && p->state != PEER_LOST;) {
            if (!p->rx_active) {
                if ((rc = start_recv(k, &p->rx_tag, &p->rx, &p->rx_req)) != 0) {
                    if (rc < 0)
                        fail(c, rc, 0, "out of memory receiving a message");
                    break;
                }
                p->rx_active = true;
            }
            int done = 0;
            MPI_Test(&p->rx_req, &done, MPI_STATUS_IGNORE);
            if (!done)
                break; /* the rest comes later, or the rank is given up */
            p->rx_active = false;
            got = true;
            on_message(c, k, p->rx_tag, &p->rx);
        }
    }
    return got;
}

/* Has busy worker p been silent too long?  Only the time rank 0 listened
 * counts: while it was deaf (in a callback, say, committing a checkpoint),
 * the workers' messages wait unread, and that is not their silence. */
static bool silent(clu_cluster *c, peer *p, double t)
{
    double deaf = t - c->last_listen;
    if (c->last_listen > 0 && deaf > DEAF_S) {
        for (int k = c->first; k < c->nranks; k++)
            c->peers[k].heard += deaf;
        c->last_listen = t;
    }
    return t - p->heard > c->timeout_s;
}

/* drain(), and wait a little when nothing came. */
static void exchange(clu_cluster *c, long *ns)
{
    if (drain(c))
        *ns = 0;
    else
        nap(ns);
}

/* Idle live workers hear from rank 0 every PING_S. */
static void ping_idle(clu_cluster *c)
{
    if (now() - c->last_ping < PING_S)
        return;
    c->last_ping = now();
    for (int k = c->first; k < c->nranks; k++)
        if (c->peers[k].state == PEER_IDLE)
            send_ping(c, k);
}

static int search(clu_cluster *c, const tsr_task *tasks, int ntasks, const tsr_pool_hooks *hk,
                  double t0)
{
    int rc = requeue(c, tasks, ntasks);
    if (rc)
        return fail(c, rc, 0, NULL), rc;
    const tsr_callbacks *cb = c->cb;
    double every = cb && cb->progress_seconds > 0 ? cb->progress_seconds : 1;
    double next_progress = t0 + every, last_wanted = 0;
    double next_ckpt = hk && hk->checkpoint_seconds > 0 ? t0 + hk->checkpoint_seconds : 0;
    bool ckpt = false; /* parking the cluster for a checkpoint */
    long ns = 0;
    for (;;) {
        double t = now();
        /* the caller's checkpoints */
        if (hk && !ckpt && !c->stopping) {
            if (next_ckpt > 0 && t >= next_ckpt)
                ckpt = true;
            else if (hk->checkpoint_wanted && t - last_wanted >= WANTED_S) {
                last_wanted = t;
                ckpt = hk->checkpoint_wanted(hk->ctx) != 0;
            }
        }
        /* give up the silent */
        int nlive = 0, nbusy = 0, nidle = 0;
        for (int k = c->first; k < c->nranks; k++) {
            peer *p = &c->peers[k];
            if (p->state == PEER_BUSY && silent(c, p, t))
                lose(c, k);
            nlive += p->state != PEER_LOST;
        }
        /* hand out, ask back, stop */
        for (int k = c->first; k < c->nranks; k++) {
            peer *p = &c->peers[k];
            if (p->state == PEER_IDLE && c->qn > 0 && !ckpt && !c->stopping &&
                (rc = hand_out(c, k, nlive)) != 0)
                fail(c, rc, 0, NULL);
            if (p->state == PEER_BUSY && c->stopping && !p->stopped) {
                send_word(c, k, TAG_STOP, p->batch);
                p->stopped = true;
            } else if (p->state == PEER_BUSY && !p->asked &&
                       (ckpt || p->sols.n >= PENDING_MAX || t - p->since >= BATCH_MAX_S)) {
                send_word(c, k, TAG_STEAL, p->batch);
                p->asked = true;
            }
            nbusy += p->state == PEER_BUSY;
            nidle += p->state == PEER_IDLE;
        }
        if (nbusy == 0) {
            if (c->stopping)
                break;
            if (ckpt) { /* every batch is back: the queue is the frontier */
                tsr_stats snap;
                snapshot(c, &snap, t0);
                ckpt = false;
                next_ckpt = hk->checkpoint_seconds > 0 ? now() + hk->checkpoint_seconds : 0;
                if (hk->checkpoint(hk->ctx, c->q, c->qn, &snap) != 0) {
                    c->stopping = true;
                    break;
                }
                continue;
            }
            if (c->qn == 0)
                break; /* complete */
            if (nlive == 0) { /* nobody left to search: rank 0 does */
                search_alone(c, hk, t0);
                break;
            }
        }
        /* an idle worker and nothing queued: take back the oldest batch */
        bool asking = false;
        for (int k = c->first; k < c->nranks; k++)
            asking |= c->peers[k].asked;
        if (!ckpt && !c->stopping && c->qn == 0 && nidle > 0 && !asking) {
            int victim = -1;
            for (int k = c->first; k < c->nranks; k++)
                if (c->peers[k].state == PEER_BUSY &&
                    (victim < 0 || c->peers[k].since < c->peers[victim].since))
                    victim = k;
            if (victim >= 0 && t - c->peers[victim].since >= HOLD_S) {
                send_word(c, victim, TAG_STEAL, c->peers[victim].batch);
                c->peers[victim].asked = true;
                pthread_mutex_lock(&c->st_mu);
                c->steals++;
                pthread_mutex_unlock(&c->st_mu);
            }
        }
        if (cb && cb->progress && t >= next_progress) {
            tsr_stats snap;
            snapshot(c, &snap, t0);
            if (cb->progress(cb->ctx, &snap))
                c->stopping = true;
            next_progress = now() + every;
        }
        ping_idle(c);
        exchange(c, &ns);
    }
    return c->err;
}

int clu_search(clu_cluster *c, const clu_job *job, const tsr_solver *s, const tsr_task *tasks,
               int ntasks, const tsr_callbacks *cb, const tsr_pool_hooks *hk, tsr_stats *st,
               tsr_err *err)
{
    memset(st, 0, sizeof *st);
    pthread_mutex_lock(&c->mu);
    double t0 = now();
    c->last_listen = t0;
    c->s = s;
    c->job = job;
    c->cb = cb;
    c->levels = tsr_solver_ncopies(s) + 1;
    c->limit = tsr_solver_options(s)->limit;
    c->stopping = false;
    c->err = c->err_rank = 0;
    c->err_msg[0] = '\0';
    c->reported = 0;
    c->qn = 0;
    int rc = alloc_stats(&c->total, c->levels);
    for (int k = c->first; k < c->nranks && rc == 0; k++) {
        tsr_stats_free(&c->peers[k].prog);
        rc = alloc_stats(&c->peers[k].prog, c->levels);
    }
    if (rc == 0)
        rc = build_job_message(c);
    if (rc == 0)
        rc = search(c, tasks, ntasks, hk, t0);
    else
        fail(c, rc, 0, NULL);
    /* whatever ended the search, no batch is out: wait for stopped ones */
    long ns = 0;
    for (bool out = true; out;) {
        out = false;
        for (int k = c->first; k < c->nranks; k++) {
            peer *p = &c->peers[k];
            if (p->state == PEER_BUSY && silent(c, p, now()))
                lose(c, k);
            else if (p->state == PEER_BUSY && !p->stopped) {
                send_word(c, k, TAG_STOP, p->batch);
                p->stopped = true;
            }
            out |= p->state == PEER_BUSY;
        }
        if (out) {
            c->stopping = true;
            exchange(c, &ns);
        }
    }
    rc = c->err;
    if (rc != 0 && c->err_rank > 0)
        tsr_err_set(err, rc, "rank %d: %s", c->err_rank, c->err_msg);
    else if (rc != 0)
        tsr_err_set(err, rc, "%s", c->err_msg);
    *st = c->total;
    c->total = (tsr_stats){0};
    st->solutions = c->reported;
    st->seconds = now() - t0;
    st->stopped = c->stopping;
    if (!c->stopping && rc == 0)
        st->fraction = 1; /* exactly, whatever the rounding */
    else if (st->fraction > 1)
        st->fraction = 1;
    free_tasks(c->q, c->qn);
    c->q = NULL;
    c->qn = c->qcap = 0;
    pthread_mutex_lock(&c->st_mu);
    c->rs[0].cpu_s = cpu_now();
    pthread_mutex_unlock(&c->st_mu);
    c->s = NULL;
    c->job = NULL;
    c->cb = NULL;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void clu_tick(clu_cluster *c)
{
    if (pthread_mutex_trylock(&c->mu) != 0)
        return; /* a search holds the cluster and does all this itself */
    drain(c); /* HELLOs; anything else is stale */
    ping_idle(c);
    pthread_mutex_unlock(&c->mu);
}

/* ---- setup and teardown ---- */

int clu_init(int *argc, char ***argv, int *rank, int *size, tsr_err *err)
{
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    /* a failed peer must not end rank 0: errors come back as codes */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_SERIALIZED)
        return tsr_err_set(err, TSR_EUNSUPP,
                           "this MPI does not support threads (MPI_THREAD_SERIALIZED)");
    return 0;
}

void clu_finalize(void)
{
    MPI_Finalize();
}

/* Rank 0's own worker: the worker loop, over mailboxes. */
static void *local_main(void *arg)
{
    clu_cluster *c = arg;
    /* searching is batch work: let the daemon's HTTP threads run first */
    struct sched_param sp = {.sched_priority = 0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    wk w = {.job = -1, .batch = -1, .inbox = &c->to_local, .outbox = &c->from_local};
    tsr_err err = {{0}};
    serve(&w, &err);
    return NULL;
}

int clu_open(int threads, double timeout_s, clu_cluster **out, tsr_err *err)
{
    *out = NULL;
    clu_cluster *c = calloc(1, sizeof *c);
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (c != NULL) {
        c->peers = calloc((size_t)size, sizeof *c->peers);
        c->rs = calloc((size_t)size, sizeof *c->rs);
        c->ws = calloc((size_t)size, sizeof *c->ws);
    }
    if (c == NULL || c->peers == NULL || c->rs == NULL || c->ws == NULL) {
        if (c) {
            free(c->peers);
            free(c->rs);
            free(c->ws);
        }
        free(c);
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    }
    c->nranks = size;
    c->threads = threads;
    c->timeout_s = timeout_s > 0 ? timeout_s : DEFAULT_TIMEOUT_S;
    c->opened = now();
    for (int k = 0; k < size; k++)
        c->peers[k].job = -1;
    c->rs[0].pid = getpid();
    gethostname(c->rs[0].host, sizeof c->rs[0].host - 1);
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->st_mu, NULL);
    pthread_mutex_init(&c->to_local.mu, NULL);
    pthread_mutex_init(&c->from_local.mu, NULL);
    /* rank 0 searches too, through a worker of its own; without it (no
     * thread to be had) rank 0 only coordinates */
    c->first = pthread_create(&c->local, NULL, local_main, c) == 0 ? 0 : 1;
    *out = c;
    return 0;
}

int clu_size(const clu_cluster *c)
{
    return c->nranks;
}

int clu_threads(const clu_cluster *c)
{
    return c->threads;
}

uint64_t clu_steals(clu_cluster *c)
{
    pthread_mutex_lock(&c->st_mu);
    uint64_t n = c->steals;
    pthread_mutex_unlock(&c->st_mu);
    return n;
}

void clu_ranks(clu_cluster *c, clu_rank_stats *out)
{
    double t = now();
    pthread_mutex_lock(&c->st_mu);
    for (int k = 0; k < c->nranks; k++) {
        out[k] = c->rs[k];
        if (k >= c->first) { /* busy: up to now; idle: the rest since the cluster opened */
            if (out[k].busy)
                out[k].busy_s += t - c->peers[k].since;
            out[k].idle_s = t - c->opened - out[k].busy_s;
            if (out[k].idle_s < 0)
                out[k].idle_s = 0;
        }
    }
    out[0].cpu_s = cpu_now();
    pthread_mutex_unlock(&c->st_mu);
}

void clu_close(clu_cluster *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    /* MPI_Finalize waits for every rank, and with one dead it may wait for
     * ever: after a loss, every rank leaves without it (mpirun may then
     * say so) */
    bool lost = false;
    for (int k = c->first; k < c->nranks; k++)
        lost |= c->peers[k].state == PEER_LOST;
    for (int k = c->first; k < c->nranks; k++)
        if (c->peers[k].state != PEER_LOST)
            send_word(c, k, TAG_EXIT, lost);
    /* let the sends to live ranks finish; a lost rank's may never */
    double until = now() + 2;
    long ns = 0;
    while (c->nouts > 0 && now() < until)
        exchange(c, &ns);
    if (c->first == 0) /* it had its EXIT */
        pthread_join(c->local, NULL);
    mb_free(&c->to_local);
    mb_free(&c->from_local);
    pthread_mutex_destroy(&c->to_local.mu);
    pthread_mutex_destroy(&c->from_local.mu);
    if (!lost && c->nouts == 0)
        MPI_Finalize();
    for (int i = 0; i < c->nouts; i++)
        free(c->outs[i].p);
    for (int i = 0; i < c->ngrave; i++)
        free(c->grave[i]);
    free(c->grave);
    free(c->outs);
    for (int k = 0; k < c->nranks; k++) {
        free_tasks(c->peers[k].tasks, c->peers[k].ntasks);
        free(c->peers[k].sols.p);
        free(c->peers[k].rx.p);
        tsr_stats_free(&c->peers[k].prog);
    }
    free(c->peers);
    free(c->rs);
    free(c->ws);
    free(c->in.p);
    free(c->out.p);
    free(c->jobmsg.p);
    free(c->pl);
    free(c->cells);
    pthread_mutex_unlock(&c->mu);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->st_mu);
    free(c);
}
