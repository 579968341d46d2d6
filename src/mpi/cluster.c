/*
 * cluster.c - one search over the ranks of an MPI job (see cluster.h and
 * docs/cluster.md).
 *
 * Protocol, all point-to-point on MPI_COMM_WORLD, every message an array of
 * 64-bit words sent as bytes (SOL: 32-bit words):
 *
 *   0 -> k  WORK   a batch of tasks: ntasks, then per task n, weight, images
 *   0 -> k  STEAL  give back what is left of the batch now
 *   0 -> k  STOP   end (mid-batch: end the batch, report it, leave)
 *   k -> 0  SOL    solutions: per solution nplacements, then per placement
 *                  piece, ncells, x y z per cell
 *   k -> 0  DONE   the batch is over: its return code, its statistics and,
 *                  when it was ended by STEAL or STOP, the tasks left
 *
 * A worker sends exactly one DONE per WORK, after all of that batch's SOL
 * (messages from one sender arrive in order), so rank 0 knows the work
 * outstanding exactly: its queue plus the batches out.  A STEAL can cross a
 * DONE; it then reaches the worker before its next WORK (again in order),
 * while it is idle, where it is ignored, so a STEAL never touches a batch it
 * was not meant for.
 *
 * Taking work back uses the pool's checkpoint: the worker's
 * checkpoint_wanted says yes, the pool parks its threads, and the hook is
 * shown exactly the work left.  Those tasks go back to rank 0 in DONE with
 * the statistics of the work done, so nothing is searched twice or lost.
 *
 * Rank 0 and idle workers poll (MPI_Iprobe, then a sleep growing to 1 ms)
 * rather than block, since Open MPI's blocking calls spin: the coordinator
 * costs next to no CPU beside the workers on the same node.  Busy workers
 * poll from checkpoint_wanted, every 20 ms or so, on the thread that called
 * tsr_pool_search, which is the thread that initialised MPI.
 */
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi/cluster.h"

enum { TAG_WORK = 1, TAG_STEAL, TAG_STOP, TAG_SOL, TAG_DONE, TAG_FINAL };

#define HOLD_S 0.02             /* a batch this young is not taken back (no ping-pong) */
#define FLUSH_S 0.02            /* solutions wait at most about this long */
#define FLUSH_WORDS (64 * 1024) /* ... or until this many words are buffered */
#define NAP_MIN_NS 20000L       /* sleeps between empty polls grow from 20 us */
#define NAP_MAX_NS 1000000L     /* ... to 1 ms (latency next to the workers' 20 ms polls) */

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

/* Sleep after an empty poll, longer each time (*ns: 0 after a message). */
static void nap(long *ns)
{
    *ns = *ns < NAP_MIN_NS ? NAP_MIN_NS : *ns * 2 > NAP_MAX_NS ? NAP_MAX_NS : *ns * 2;
    struct timespec ts = {0, *ns};
    nanosleep(&ts, NULL);
}

/* ---- messages: growable arrays of 64-bit words ---- */

typedef struct words {
    int64_t *w;
    size_t n, cap;
    size_t nbytes; /* of a received message (SOL's are 32-bit words) */
} words;

/* Solutions are the bulk of the traffic: 32-bit words suffice for them. */
typedef struct ints {
    int32_t *v;
    size_t n, cap;
} ints;

static int put32(ints *b, int32_t v)
{
    if (b->n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 1024;
        int32_t *nv = realloc(b->v, ncap * sizeof *nv);
        if (nv == NULL)
            return TSR_ENOMEM;
        b->v = nv;
        b->cap = ncap;
    }
    b->v[b->n++] = v;
    return 0;
}

static int put(words *b, int64_t v)
{
    if (b->n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 256;
        int64_t *nw = realloc(b->w, ncap * sizeof *nw);
        if (nw == NULL)
            return TSR_ENOMEM;
        b->w = nw;
        b->cap = ncap;
    }
    b->w[b->n++] = v;
    return 0;
}

static int put_double(words *b, double d)
{
    int64_t v;
    memcpy(&v, &d, sizeof v);
    return put(b, v);
}

/* A reader over a received message; any read past the end marks it bad. */
typedef struct reader {
    const int64_t *w;
    size_t n, pos;
    bool bad;
} reader;

static int64_t get(reader *r)
{
    if (r->pos >= r->n) {
        r->bad = true;
        return 0;
    }
    return r->w[r->pos++];
}

static double get_double(reader *r)
{
    int64_t v = get(r);
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

/* A count read from a message, checked against what is left of it. */
static int get_count(reader *r, int64_t most)
{
    int64_t v = get(r);
    if (v < 0 || v > most || v > INT_MAX) {
        r->bad = true;
        return 0;
    }
    return (int)v;
}

/* ---- counted point-to-point traffic ---- */

static int send_bytes(clu_rank_stats *rs, const void *p, size_t nbytes, int dest, int tag)
{
    if (nbytes > (size_t)INT_MAX)
        return TSR_ETOOBIG;
    MPI_Send(p, (int)nbytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    rs->msgs_sent++;
    rs->bytes_sent += nbytes;
    return 0;
}

static int send_words(clu_rank_stats *rs, const int64_t *w, size_t n, int dest, int tag)
{
    return send_bytes(rs, w, n * sizeof *w, dest, tag);
}

/* Is a message from `source` (or MPI_ANY_SOURCE) waiting?  Sets *from and *tag. */
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

/* Receive the message poll_msg found into b (replacing its contents). */
static int recv_words(clu_rank_stats *rs, int from, int tag, words *b)
{
    MPI_Status ms;
    int nbytes = 0;
    MPI_Probe(from, tag, MPI_COMM_WORLD, &ms);
    MPI_Get_count(&ms, MPI_BYTE, &nbytes);
    size_t n = ((size_t)nbytes + sizeof *b->w - 1) / sizeof *b->w;
    if (n > b->cap) {
        int64_t *nw = realloc(b->w, n * sizeof *nw);
        if (nw == NULL)
            return TSR_ENOMEM;
        b->w = nw;
        b->cap = n;
    }
    MPI_Recv(b->w, nbytes, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    b->n = (size_t)nbytes / sizeof *b->w;
    b->nbytes = (size_t)nbytes;
    rs->msgs_recv++;
    rs->bytes_recv += (uint64_t)nbytes;
    return 0;
}

/* ---- what messages carry ---- */

static int put_tasks(words *b, const tsr_task *t, int n)
{
    int rc = put(b, n);
    for (int i = 0; i < n && rc == 0; i++) {
        rc = put(b, t[i].n) || put_double(b, t[i].weight) ? TSR_ENOMEM : 0;
        for (int j = 0; j < t[i].n && rc == 0; j++)
            rc = put(b, t[i].images[j]);
    }
    return rc;
}

static void free_tasks(tsr_task *t, int n)
{
    for (int i = 0; i < n; i++)
        free(t[i].images);
    free(t);
}

/* Tasks read from r, appended to *t (n, cap grown as needed). */
static int get_tasks(reader *r, tsr_task **t, int *n, int *cap)
{
    int k = get_count(r, (int64_t)(r->n - r->pos));
    for (int i = 0; i < k && !r->bad; i++) {
        int m = get_count(r, (int64_t)(r->n - r->pos));
        double weight = get_double(r);
        int *images = malloc((size_t)(m > 0 ? m : 1) * sizeof *images);
        if (images == NULL)
            return TSR_ENOMEM;
        for (int j = 0; j < m; j++)
            images[j] = (int)get(r);
        if (*n == *cap) {
            int ncap = *cap ? *cap * 2 : 64;
            tsr_task *nt = realloc(*t, (size_t)ncap * sizeof *nt);
            if (nt == NULL) {
                free(images);
                return TSR_ENOMEM;
            }
            *t = nt;
            *cap = ncap;
        }
        (*t)[(*n)++] = (tsr_task){m, images, weight};
    }
    return r->bad ? TSR_EINVAL : 0;
}

static int put_stats(words *b, const tsr_stats *st)
{
    int levels = st->attempts ? st->levels : 0, rc = put(b, levels);
    for (int p = 0; p < levels && rc == 0; p++)
        rc = put(b, (int64_t)st->attempts[p]) || put(b, (int64_t)st->fits[p]) ? TSR_ENOMEM : 0;
    if (rc == 0)
        rc = put(b, (int64_t)st->nodes) || put(b, (int64_t)st->solutions) ||
                     put(b, (int64_t)st->classes) || put_double(b, st->fraction)
                 ? TSR_ENOMEM
                 : 0;
    return rc;
}

/* Adds the statistics read from r to *acc (whose arrays have acc->levels). */
static void get_stats(reader *r, tsr_stats *acc)
{
    int levels = get_count(r, (int64_t)(r->n - r->pos) / 2);
    for (int p = 0; p < levels && !r->bad; p++) {
        uint64_t a = (uint64_t)get(r), f = (uint64_t)get(r);
        if (p < acc->levels) {
            acc->attempts[p] += a;
            acc->fits[p] += f;
        }
    }
    acc->nodes += (uint64_t)get(r);
    acc->solutions += (uint64_t)get(r);
    acc->classes += (uint64_t)get(r);
    acc->fraction += get_double(r);
}

static int put_solution(ints *b, const tsr_solution *sol)
{
    int rc = put32(b, sol->nplacements);
    for (int i = 0; i < sol->nplacements && rc == 0; i++) {
        const tsr_placement *p = &sol->placements[i];
        rc = put32(b, p->piece) || put32(b, p->ncells) ? TSR_ENOMEM : 0;
        for (int j = 0; j < p->ncells && rc == 0; j++)
            rc = put32(b, p->cells[j].x) || put32(b, p->cells[j].y) || put32(b, p->cells[j].z)
                     ? TSR_ENOMEM
                     : 0;
    }
    return rc;
}

/* A reader over a received SOL message (32-bit words, copied out to stay
 * clear of aliasing rules). */
typedef struct reader32 {
    const unsigned char *p;
    size_t n, pos;
    bool bad;
} reader32;

static int32_t get32(reader32 *r)
{
    int32_t v = 0;
    if (r->pos >= r->n)
        r->bad = true;
    else
        memcpy(&v, r->p + 4 * r->pos++, sizeof v);
    return v;
}

static int get32_count(reader32 *r, size_t per)
{
    int32_t v = get32(r);
    if (v < 0 || (size_t)v > (r->n - r->pos) / per) {
        r->bad = true;
        return 0;
    }
    return (int)v;
}

/* ---- worker ranks ---- */

typedef struct wk {
    const tsr_solver *s;
    clu_rank_stats *rs;
    /* solutions found by the pool's threads, sent by the MPI thread */
    pthread_mutex_t mu;
    ints sols, spare;
    int sol_err;
    double last_flush;
    /* what rank 0 asked during the batch, and the tasks given back */
    bool steal, stop;
    words back;
    bool gave_back;
    words in; /* the message being read */
} wk;

static int wk_solution(void *ctx, const tsr_solution *sol)
{
    wk *w = ctx;
    pthread_mutex_lock(&w->mu);
    int rc = put_solution(&w->sols, sol);
    if (rc && w->sol_err == 0)
        w->sol_err = rc;
    pthread_mutex_unlock(&w->mu);
    return rc != 0;
}

/* Send the buffered solutions (on the MPI thread). */
static int wk_flush(wk *w)
{
    pthread_mutex_lock(&w->mu);
    ints out = w->sols;
    w->sols = w->spare;
    w->sols.n = 0;
    pthread_mutex_unlock(&w->mu);
    int rc = out.n > 0 ? send_bytes(w->rs, out.v, out.n * sizeof *out.v, 0, TAG_SOL) : 0;
    out.n = 0;
    w->spare = out;
    w->last_flush = now();
    return rc;
}

/* Polled by the pool's calling thread: send solutions, read rank 0's
 * requests; yes when rank 0 wants the batch ended. */
static int wk_checkpoint_wanted(void *ctx)
{
    wk *w = ctx;
    pthread_mutex_lock(&w->mu);
    size_t buffered = w->sols.n;
    pthread_mutex_unlock(&w->mu);
    if (buffered > 0 && (buffered >= FLUSH_WORDS || now() - w->last_flush >= FLUSH_S))
        wk_flush(w);
    int from, tag;
    while (!w->steal && !w->stop && poll_msg(0, &from, &tag)) {
        if (recv_words(w->rs, 0, tag, &w->in) != 0)
            continue;
        if (tag == TAG_STEAL)
            w->steal = true;
        else if (tag == TAG_STOP)
            w->stop = true;
    }
    return w->steal || w->stop;
}

/* Every thread parked: tasks are exactly the batch's work left. */
static int wk_checkpoint(void *ctx, const tsr_task *tasks, int ntasks, const tsr_stats *st)
{
    wk *w = ctx;
    if (!w->stop) {
        w->back.n = 0;
        if (put_tasks(&w->back, tasks, ntasks) != 0)
            return TSR_ENOMEM; /* ends the batch with an error: rank 0 stops */
        w->gave_back = true;
        w->rs->given_back++;
    }
    return 1;
}

static int worker(const tsr_solver *s, int threads, clu_rank_stats *rs)
{
    wk w = {.s = s, .rs = rs, .last_flush = now()};
    pthread_mutex_init(&w.mu, NULL);
    tsr_callbacks cb = {.ctx = &w, .solution = wk_solution};
    tsr_pool_hooks hk = {.ctx = &w, .checkpoint_wanted = wk_checkpoint_wanted,
                         .checkpoint = wk_checkpoint};
    int rc = 0;
    while (!w.stop) {
        int from, tag;
        double t0 = now();
        long ns = 0;
        while (!poll_msg(0, &from, &tag))
            nap(&ns);
        rs->idle_s += now() - t0;
        if ((rc = recv_words(rs, 0, tag, &w.in)) != 0)
            break;
        if (tag == TAG_STOP)
            break;
        if (tag != TAG_WORK)
            continue; /* a STEAL that crossed our last DONE */
        reader r = {w.in.w, w.in.n, 0, false};
        tsr_task *tasks = NULL;
        int ntasks = 0, cap = 0;
        int brc = get_tasks(&r, &tasks, &ntasks, &cap);
        rs->batches++;
        rs->tasks += (uint64_t)ntasks;
        w.steal = w.gave_back = false;
        tsr_stats st = {0};
        t0 = now();
        if (brc == 0)
            brc = tsr_pool_search(s, threads, tasks, ntasks, &cb, &hk, &st);
        rs->busy_s += now() - t0;
        free_tasks(tasks, ntasks);
        if (brc == 0)
            brc = w.sol_err;
        int frc = wk_flush(&w);
        if (brc == 0)
            brc = frc;
        words done = {0};
        int prc = put(&done, brc) || put_stats(&done, &st) ? TSR_ENOMEM : 0;
        for (size_t i = 0; prc == 0 && w.gave_back && i < w.back.n; i++)
            prc = put(&done, w.back.w[i]);
        if (prc == 0 && !w.gave_back)
            prc = put(&done, 0); /* no tasks */
        if (prc != 0) { /* say at least that the batch failed */
            int64_t fail[2] = {TSR_ENOMEM, 0};
            send_words(rs, fail, 2, 0, TAG_DONE);
        } else {
            send_words(rs, done.w, done.n, 0, TAG_DONE);
        }
        free(done.w);
        tsr_stats_free(&st);
    }
    free(w.sols.v);
    free(w.spare.v);
    free(w.back.w);
    free(w.in.w);
    pthread_mutex_destroy(&w.mu);
    return rc;
}

/* ---- rank 0, the coordinator ---- */

typedef struct peer {
    bool busy;      /* a batch is out */
    bool asked;     /* a STEAL is out for that batch */
    bool stopped;   /* STOP sent */
    double since;   /* when the batch went out */
} peer;

typedef struct coord {
    const tsr_solver *s;
    const tsr_callbacks *cb;
    clu_rank_stats *rs;
    int nranks;
    peer *peers;
    tsr_task *q; /* the queue, heaviest first */
    int qn, qcap;
    tsr_stats total;       /* of finished batches; solutions: reported to cb */
    uint64_t counted;      /* solutions the workers counted */
    long long limit;
    bool stopping;         /* limit, callback or error: no more work out */
    int err, err_rank;
    words in, out;
    tsr_placement *pl;     /* a received solution */
    tsr_cell *cells;
    int plcap, cellcap;
} coord;

static int by_weight_desc(const void *a, const void *b)
{
    double x = ((const tsr_task *)a)->weight, y = ((const tsr_task *)b)->weight;
    return x > y ? -1 : x < y;
}

/* A batch for worker k: the heaviest tasks up to a fair share of the queued
 * weight, at least one. */
static int hand_out(coord *c, int k)
{
    double w = 0, share = 0;
    for (int i = 0; i < c->qn; i++)
        share += c->q[i].weight;
    share /= c->nranks - 1;
    int n = 0;
    while (n < c->qn && (n == 0 || w + c->q[n].weight <= share))
        w += c->q[n++].weight;
    c->out.n = 0;
    int rc = put_tasks(&c->out, c->q, n);
    if (rc == 0)
        rc = send_words(c->rs, c->out.w, c->out.n, k, TAG_WORK);
    if (rc != 0)
        return rc;
    for (int i = 0; i < n; i++)
        free(c->q[i].images);
    memmove(c->q, c->q + n, (size_t)(c->qn - n) * sizeof *c->q);
    c->qn -= n;
    c->peers[k] = (peer){.busy = true, .since = now()};
    c->rs->batches++;
    c->rs->tasks += (uint64_t)n;
    return 0;
}

static void fail(coord *c, int rc, int rank)
{
    if (c->err == 0) {
        c->err = rc;
        c->err_rank = rank;
    }
    c->stopping = true;
}

/* Report the solutions of a SOL message through cb, up to the limit. */
static void on_sol(coord *c)
{
    reader32 r = {(const unsigned char *)c->in.w, c->in.nbytes / 4, 0, false};
    while (r.pos < r.n && !r.bad) {
        int np = get32_count(&r, 2);
        if (np > c->plcap) {
            tsr_placement *p = realloc(c->pl, (size_t)np * sizeof *p);
            if (p == NULL) {
                fail(c, TSR_ENOMEM, 0);
                return;
            }
            c->pl = p;
            c->plcap = np;
        }
        /* cells first (their array may move as it grows), then point at them */
        int ncells = 0;
        for (int i = 0; i < np && !r.bad; i++) {
            c->pl[i].piece = get32(&r);
            c->pl[i].ncells = get32_count(&r, 3);
            if (ncells + c->pl[i].ncells > c->cellcap) {
                int ncap = 2 * (ncells + c->pl[i].ncells);
                tsr_cell *nc = realloc(c->cells, (size_t)ncap * sizeof *nc);
                if (nc == NULL) {
                    fail(c, TSR_ENOMEM, 0);
                    return;
                }
                c->cells = nc;
                c->cellcap = ncap;
            }
            for (int j = 0; j < c->pl[i].ncells; j++) {
                c->cells[ncells].x = get32(&r);
                c->cells[ncells].y = get32(&r);
                c->cells[ncells++].z = get32(&r);
            }
        }
        if (r.bad)
            break;
        for (int i = 0, at = 0; i < np; at += c->pl[i++].ncells)
            c->pl[i].cells = c->cells + at;
        if (c->stopping)
            continue; /* the run is over: drain only */
        tsr_solution sol = {np, c->pl};
        c->total.solutions++;
        if ((c->cb && c->cb->solution && c->cb->solution(c->cb->ctx, &sol)) ||
            (c->limit > 0 && c->total.solutions >= (uint64_t)c->limit))
            c->stopping = true;
    }
    if (r.bad)
        fail(c, TSR_EINVAL, 0);
}

/* A batch is over: its statistics, and the tasks it gave back. */
static void on_done(coord *c, int k)
{
    reader r = {c->in.w, c->in.n, 0, false};
    int rc = (int)get(&r);
    /* the batch's counts go straight into the totals; solutions are
     * counted apart (total.solutions counts those reported) */
    uint64_t reported = c->total.solutions;
    c->total.solutions = 0;
    get_stats(&r, &c->total);
    c->counted += c->total.solutions;
    c->total.solutions = reported;
    c->peers[k].busy = c->peers[k].asked = false;
    if (r.bad || rc != 0) {
        fail(c, rc != 0 ? rc : TSR_EINVAL, k);
        return;
    }
    int before = c->qn;
    rc = get_tasks(&r, &c->q, &c->qn, &c->qcap);
    if (rc != 0) {
        fail(c, rc, k);
        return;
    }
    if (c->qn > before)
        qsort(c->q, (size_t)c->qn, sizeof *c->q, by_weight_desc);
}

static int coordinator(const tsr_solver *s, const tsr_callbacks *cb, int nranks,
                       clu_rank_stats *rs, tsr_stats *st, tsr_err *err)
{
    coord c = {.s = s, .cb = cb, .rs = rs, .nranks = nranks,
               .limit = tsr_solver_options(s)->limit};
    c.total.levels = tsr_solver_ncopies(s) + 1;
    c.total.attempts = calloc((size_t)c.total.levels, sizeof *c.total.attempts);
    c.total.fits = calloc((size_t)c.total.levels, sizeof *c.total.fits);
    c.peers = calloc((size_t)nranks, sizeof *c.peers);
    c.q = malloc(sizeof *c.q);
    if (c.total.attempts == NULL || c.total.fits == NULL || c.peers == NULL || c.q == NULL) {
        for (int k = 1; k < nranks; k++) /* the workers wait for a word */
            send_words(rs, NULL, 0, k, TAG_STOP);
        tsr_stats_free(&c.total);
        free(c.peers);
        free(c.q);
        return tsr_err_set(err, TSR_ENOMEM, "rank 0: out of memory");
    }
    c.q[0] = (tsr_task){0, NULL, 1.0}; /* the root */
    c.qn = c.qcap = 1;
    double t0 = now();
    double every = cb && cb->progress_seconds > 0 ? cb->progress_seconds : 1;
    double next = t0 + every;
    long ns = 0;
    for (;;) {
        int nbusy = 0, nidle = 0;
        for (int k = 1; k < nranks; k++) {
            if (!c.stopping && !c.peers[k].busy && c.qn > 0) {
                int rc = hand_out(&c, k);
                if (rc != 0)
                    fail(&c, rc, 0);
            }
            if (c.peers[k].busy)
                nbusy++;
            else
                nidle++;
        }
        if (c.stopping) /* the busy end their batches and report them */
            for (int k = 1; k < nranks; k++)
                if (c.peers[k].busy && !c.peers[k].stopped) {
                    send_words(rs, NULL, 0, k, TAG_STOP);
                    c.peers[k].stopped = true;
                }
        if (nbusy == 0 && (c.qn == 0 || c.stopping))
            break;
        /* an idle worker and nothing queued: take back the oldest batch */
        bool asking = false;
        for (int k = 1; k < nranks; k++)
            asking |= c.peers[k].asked;
        if (!c.stopping && c.qn == 0 && nidle > 0 && !asking) {
            int victim = 0;
            for (int k = 1; k < nranks; k++)
                if (c.peers[k].busy && (victim == 0 || c.peers[k].since < c.peers[victim].since))
                    victim = k;
            if (victim > 0 && now() - c.peers[victim].since >= HOLD_S) {
                send_words(rs, NULL, 0, victim, TAG_STEAL);
                c.peers[victim].asked = true;
                rs->given_back++;
            }
        }
        if (cb && cb->progress && now() >= next) {
            tsr_stats snap = c.total;
            snap.seconds = now() - t0;
            if (snap.fraction > 1)
                snap.fraction = 1;
            if (cb->progress(cb->ctx, &snap))
                c.stopping = true;
            next = now() + every;
        }
        int from, tag;
        if (!poll_msg(MPI_ANY_SOURCE, &from, &tag)) {
            nap(&ns);
            continue;
        }
        ns = 0;
        int rc = recv_words(rs, from, tag, &c.in);
        if (rc != 0)
            fail(&c, rc, 0);
        else if (tag == TAG_SOL)
            on_sol(&c);
        else if (tag == TAG_DONE)
            on_done(&c, from);
    }
    /* every batch is back: release the workers */
    for (int k = 1; k < nranks; k++)
        if (!c.peers[k].stopped)
            send_words(rs, NULL, 0, k, TAG_STOP);
    rs->busy_s = now() - t0;
    bool complete = !c.stopping && c.err == 0;
    if (complete && c.counted != c.total.solutions) /* a lost SOL message: cannot happen */
        tsr_err_set(err, c.err = TSR_EINVAL, "the workers counted %llu solutions, %llu arrived",
                    (unsigned long long)c.counted, (unsigned long long)c.total.solutions);
    else if (c.err != 0 && c.err_rank > 0)
        tsr_err_set(err, c.err, "rank %d: %s", c.err_rank, tsr_strerror(c.err));
    else if (c.err != 0)
        tsr_err_set(err, c.err, "%s", tsr_strerror(c.err));
    *st = c.total;
    st->seconds = now() - t0;
    st->stopped = c.stopping;
    if (complete)
        st->fraction = 1; /* exactly, whatever the rounding */
    else if (st->fraction > 1)
        st->fraction = 1;
    free_tasks(c.q, c.qn);
    free(c.peers);
    free(c.in.w);
    free(c.out.w);
    free(c.pl);
    free(c.cells);
    return c.err;
}

/* ---- entry points ---- */

int clu_init(int *argc, char ***argv, int *rank, int *size, tsr_err *err)
{
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    if (provided < MPI_THREAD_FUNNELED)
        return tsr_err_set(err, TSR_EUNSUPP,
                           "this MPI does not support threads (MPI_THREAD_FUNNELED)");
    return 0;
}

void clu_finalize(void)
{
    MPI_Finalize();
}

void clu_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
}

int clu_bcast_bytes(char **buf, size_t *len)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long long n = rank == 0 ? (long long)*len : 0;
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (n < 0 || n > INT_MAX) /* the puzzle caps keep texts far below */
        return TSR_ETOOBIG;
    if (rank != 0) {
        *buf = malloc((size_t)n + 1);
        int ok = *buf != NULL;
        /* every rank must take part in the next broadcast, or none */
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!ok)
            return TSR_ENOMEM;
        (*buf)[n] = '\0';
        *len = (size_t)n;
    } else {
        int ok = 1;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!ok)
            return TSR_ENOMEM;
    }
    MPI_Bcast(*buf, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
    return 0;
}

int clu_agree(int rc)
{
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return rc;
}

/* The fields of clu_rank_stats as doubles, for the final report to rank 0. */
enum { NFIELDS = 11 };

static void rank_to_doubles(const clu_rank_stats *r, double *d)
{
    d[0] = (double)r->msgs_sent;
    d[1] = (double)r->bytes_sent;
    d[2] = (double)r->msgs_recv;
    d[3] = (double)r->bytes_recv;
    d[4] = (double)r->batches;
    d[5] = (double)r->tasks;
    d[6] = (double)r->given_back;
    d[7] = r->busy_s;
    d[8] = r->idle_s;
    d[9] = r->cpu_s;
    d[10] = 0;
}

static void doubles_to_rank(const double *d, clu_rank_stats *r)
{
    *r = (clu_rank_stats){(uint64_t)d[0], (uint64_t)d[1], (uint64_t)d[2], (uint64_t)d[3],
                          (uint64_t)d[4], (uint64_t)d[5], (uint64_t)d[6], d[7], d[8], d[9]};
}

int clu_solve(const tsr_solver *s, int threads, const tsr_callbacks *cb, tsr_stats *st,
              clu_stats *cs, tsr_err *err)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(st, 0, sizeof *st);
    memset(cs, 0, sizeof *cs);
    if (err)
        err->msg[0] = '\0';
    clu_rank_stats mine = {0};
    double cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    int rc;
    if (size == 1) {
        rc = tsr_pool_run(s, threads, NULL, 0, cb, st);
        mine.busy_s = st->seconds;
        mine.batches = 1;
        mine.tasks = 1;
    } else if (rank == 0) {
        rc = coordinator(s, cb, size, &mine, st, err);
    } else {
        rc = worker(s, threads, &mine);
    }
    mine.cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    /* every rank ends with the same verdict, and rank 0 collects the counts */
    int worst = clu_agree(rc);
    double d[NFIELDS];
    if (rank != 0) {
        rank_to_doubles(&mine, d);
        MPI_Send(d, NFIELDS, MPI_DOUBLE, 0, TAG_FINAL, MPI_COMM_WORLD);
    } else {
        cs->ranks = calloc((size_t)size, sizeof *cs->ranks);
        cs->nranks = cs->ranks ? size : 0;
        if (cs->ranks)
            cs->ranks[0] = mine;
        for (int k = 1; k < size; k++) {
            MPI_Recv(d, NFIELDS, MPI_DOUBLE, k, TAG_FINAL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (cs->ranks)
                doubles_to_rank(d, &cs->ranks[k]);
        }
    }
    if (rc != 0 && (err == NULL || err->msg[0] == '\0'))
        tsr_err_set(err, rc, "%s", tsr_strerror(rc));
    else if (rc == 0 && worst != 0)
        tsr_err_set(err, worst, "another rank failed: %s", tsr_strerror(worst));
    return rc != 0 ? rc : worst;
}

void clu_stats_free(clu_stats *cs)
{
    if (cs == NULL)
        return;
    free(cs->ranks);
    cs->ranks = NULL;
    cs->nranks = 0;
}
