/*
 * cluster.c - searches over the ranks of an MPI job (see cluster.h and
 * docs/cluster.md).
 *
 * The coordinator: rank 0's side of the protocol of wire.h.
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
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "mpi/wire.h"

#define HOLD_S 0.02               /* a batch this young is not taken back (no ping-pong) */
#define PENDING_MAX (32u << 20)   /* a batch's unreported solution bytes that make rank 0
                                     end it, so they are reported and memory stays bounded */
#define BATCH_MAX_S 10.0          /* an older batch is asked back: its solutions are
                                     reported, and a rank lost costs less */
#define DEAF_S 0.25               /* a longer gap between rank 0's drains is not
                                     the workers' silence */
#define PING_S 1.0                /* rank 0's heartbeat to idle workers */
#define WANTED_S 0.02             /* how often rank 0 polls hk->checkpoint_wanted */
#define DEFAULT_TIMEOUT_S 30.0

/* ---- rank 0, the coordinator ---- */

enum peer_state { PEER_IDLE, PEER_BUSY, PEER_LOST };

typedef struct peer {
    enum peer_state state;
    int64_t job;        /* key of the job whose solver it has (-1: none) */
    int64_t batch;      /* the batch out */
    bool asked, stopped;
    double since, heard;
    tsr_task *tasks;    /* a copy of the batch out, requeued if the rank is lost */
    int ntasks;
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
    double timeout_s, opened, last_ping;
    double last_listen;    /* when rank 0 last drained its messages */
    peer *peers;           /* [nranks]; [0] is rank 0's own worker, never lost, so
                              there is always a rank to search */
    clu_rank_stats *rs;    /* [nranks] */
    uint64_t steals;       /* requests for work back (for an idle rank) */
    /* rank 0's own worker, a thread that talks through mailboxes */
    pthread_t local;
    mailbox to_local, from_local;
    outmsg *outs;
    int nouts;
    size_t capouts;
    char **grave; /* buffers of receives cut short by a lost rank */
    int ngrave;
    size_t capgrave;
    int64_t next_batch;
    buf in, out;
    /* what one search needs (clu_search's locals, shared with helpers) */
    const tsr_solver *s;
    const clu_job *job;
    const tsr_callbacks *cb;
    int levels;
    tsr_task *q;           /* the queue, heaviest first */
    int qn;
    size_t qcap;
    tsr_stats total;       /* of batches done in this search */
    uint64_t reported;     /* solutions passed to cb */
    long long limit;
    bool stopping;
    int err, err_rank;
    char err_msg[TSR_ERR_MAX];
    buf jobmsg;            /* the JOB message of this search */
    int *ids, *members;    /* a decoded class and its solutions */
    tsr_placement *pl;
    tsr_cell *cells;
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
    size_t n = b->bytes.len;
    if (n > (size_t)INT_MAX)
        return TSR_ETOOBIG;
    if (k == 0)
        return clu_mb_put(&c->to_local, tag, b);
    if (base_grow((void **)&c->outs, &c->capouts, (size_t)c->nouts, sizeof *c->outs, 16, 0) != 0)
        return TSR_ENOMEM;
    unsigned char *p = malloc(n ? n : 1);
    if (p == NULL)
        return TSR_ENOMEM;
    if (n > 0)
        memcpy(p, b->bytes.data, n);
    outmsg *o = &c->outs[c->nouts++];
    o->p = p;
    MPI_Isend(p, (int)n, MPI_BYTE, k, tag, MPI_COMM_WORLD, &o->req);
    pthread_mutex_lock(&c->st_mu);
    c->rs[0].msgs_sent++;
    c->rs[0].bytes_sent += n;
    c->rs[k].msgs_recv++;
    c->rs[k].bytes_recv += n;
    pthread_mutex_unlock(&c->st_mu);
    return 0;
}

/* A message of one 64-bit word (STEAL, STOP) or a double (PING). */
static int send_word(clu_cluster *c, int k, int tag, int64_t v)
{
    c->out.bytes.len = 0;
    c->out.oom = false;
    clu_put64(&c->out, v);
    return send_to(c, k, tag, &c->out);
}

static int send_ping(clu_cluster *c, int k)
{
    c->out.bytes.len = 0;
    c->out.oom = false;
    clu_put_double(&c->out, c->timeout_s);
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
    c->rs[k].busy_s += base_now() - p->since;
    pthread_mutex_unlock(&c->st_mu);
    clu_free_tasks(p->tasks, p->ntasks);
    p->tasks = NULL;
    p->ntasks = 0;
    p->sols.bytes.len = 0;
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
    int rc = clu_add_tasks(&c->q, &c->qn, &c->qcap, t, n);
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
        if (base_grow((void **)&c->grave, &c->capgrave, (size_t)c->ngrave, sizeof *c->grave, 8,
                      0) == 0)
            c->grave[c->ngrave++] = p->rx.bytes.data;
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
    c->out.bytes.len = 0;
    c->out.oom = false;
    clu_put64(&c->out, id);
    clu_put_tasks(&c->out, c->q, n);
    if ((rc = send_to(c, k, TAG_WORK, &c->out)) != 0)
        return rc;
    /* the queue's first n tasks become the batch's copy */
    clu_free_tasks(p->tasks, p->ntasks);
    p->tasks = malloc((size_t)n * sizeof *p->tasks);
    if (p->tasks == NULL)
        return TSR_ENOMEM;
    memcpy(p->tasks, c->q, (size_t)n * sizeof *p->tasks);
    p->ntasks = n;
    memmove(c->q, c->q + n, (size_t)(c->qn - n) * sizeof *c->q);
    c->qn -= n;
    p->batch = id;
    pthread_mutex_lock(&c->st_mu); /* clu_ranks reads since */
    p->since = p->heard = base_now();
    pthread_mutex_unlock(&c->st_mu);
    p->asked = p->stopped = false;
    p->sols.bytes.len = 0;
    p->prog.nodes = 0;
    p->prog.fraction = 0;
    set_peer_state(c, k, PEER_BUSY);
    pthread_mutex_lock(&c->st_mu);
    c->rs[k].batches++;
    c->rs[k].tasks += (uint64_t)n;
    pthread_mutex_unlock(&c->st_mu);
    return 0;
}

/* Report a done batch's classes through cb (found, or expanded into
 * solution calls), up to the limit; returns how many solutions it held
 * (reported or not). */
static uint64_t report_solutions(clu_cluster *c, const buf *sols, bool *bad)
{
    reader r = clu_reader(sols);
    uint64_t count = 0;
    int ncopies = tsr_solver_ncopies(c->s);
    if (c->ids == NULL) { /* room for one class and its solutions, once */
        int np;
        long nc;
        tsr_solver_solution_room(c->s, &np, &nc);
        c->ids = malloc((size_t)(ncopies + 1) * sizeof *c->ids);
        c->members = malloc((size_t)tsr_solver_max_members(c->s) * (size_t)(ncopies + 1) *
                            sizeof *c->members);
        c->pl = malloc((size_t)np * sizeof *c->pl);
        c->cells = malloc((size_t)nc * sizeof *c->cells);
        if (!c->ids || !c->members || !c->pl || !c->cells) {
            fail(c, TSR_ENOMEM, 0, NULL);
            return count;
        }
    }
    while (r.pos < r.n && !r.bad) {
        int n_sol = (int)clu_get32(&r);
        int n = clu_get_count(&r, 4, false);
        if (n_sol < 1 || n > ncopies)
            r.bad = true;
        for (int i = 0; i < n && !r.bad; i++)
            c->ids[i] = (int)clu_get32(&r);
        if (r.bad)
            break;
        count += (uint64_t)n_sol;
        if (c->stopping)
            continue; /* the search is over: count only */
        if (c->limit > 0 && c->reported + (uint64_t)n_sol > (uint64_t)c->limit)
            n_sol = (int)((uint64_t)c->limit - c->reported);
        c->reported += (uint64_t)n_sol;
        int stop = 0;
        if (c->cb && c->cb->found) {
            stop = c->cb->found(c->cb->ctx, c->ids, n, n_sol);
        } else if (c->cb && c->cb->solution) {
            int m = tsr_solver_members(c->s, c->ids, n, c->members);
            for (int k = 0; k < n_sol && k < m && !stop; k++) {
                tsr_solution sol;
                if (tsr_solver_solution(c->s, c->members + (size_t)k * n, n, c->pl, c->cells,
                                        &sol) == 0)
                    stop = c->cb->solution(c->cb->ctx, &sol);
            }
        }
        if (stop || (c->limit > 0 && c->reported >= (uint64_t)c->limit))
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
    int rc = (int)clu_get64(r);
    double cpu = clu_get_double(r);
    tsr_stats st;
    if (clu_alloc_stats(&st, c->levels) != 0) {
        fail(c, TSR_ENOMEM, 0, NULL);
        return;
    }
    clu_get_stats(r, &st);
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
    int trc = r->bad ? 0 : clu_get_tasks(r, &c->q, &c->qn, &c->qcap);
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
        clu_add_stats(&c->total, &st);
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
    count_recv(c, from, in->bytes.len);
    peer *p = &c->peers[from];
    reader r = clu_reader(in);
    if (tag == TAG_HELLO) {
        int pid = (int)clu_get64(&r);
        size_t n = r.n - r.pos < 63 ? r.n - r.pos : 63;
        pthread_mutex_lock(&c->st_mu);
        c->rs[from].pid = pid;
        memcpy(c->rs[from].host, r.p + r.pos, n);
        c->rs[from].host[n] = '\0';
        pthread_mutex_unlock(&c->st_mu);
        return;
    }
    if (p->state != PEER_BUSY || clu_get64(&r) != p->batch || r.bad)
        return; /* not about a batch out: stale */
    p->heard = base_now();
    if (tag == TAG_SOL) {
        clu_put_bytes(&p->sols, r.p + r.pos, r.n - r.pos);
        if (p->sols.oom)
            fail(c, TSR_ENOMEM, 0, "out of memory holding a batch's solutions");
    } else if (tag == TAG_PROG) {
        double cpu = clu_get_double(&r);
        clu_get_stats(&r, &p->prog);
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
    snap->seconds = base_now() - t0;
    snap->nworkers = c->nranks;
    snap->workers = c->ws;
    /* the arrays are shared with total: add the batches out to a copy */
    for (int k = 0; k < c->nranks; k++) {
        peer *p = &c->peers[k];
        c->ws[k] = (tsr_worker_stats){
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

/* ---- the coordinator's loop ---- */

static int build_job_message(clu_cluster *c)
{
    const clu_job *job = c->job;
    buf *b = &c->jobmsg;
    b->bytes.len = 0;
    b->oom = false;
    size_t olen = strlen(job->options);
    clu_put64(b, job->key);
    clu_put64(b, c->threads);
    clu_put_double(b, c->timeout_s);
    clu_put64(b, tsr_solver_nimages(c->s));
    clu_put64(b, clu_fingerprint(c->s));
    clu_put64(b, (int64_t)job->puzzle_len);
    clu_put64(b, (int64_t)olen);
    clu_put_bytes(b, job->puzzle, job->puzzle_len);
    clu_put_bytes(b, job->options, olen);
    return b->oom ? TSR_ENOMEM : 0;
}

/* Test the sends in flight and take in what arrived, each worker's
 * messages in order; true when anything came. */
static bool drain(clu_cluster *c)
{
    c->last_listen = base_now();
    pump(c);
    bool got = false;
    for (int tag; clu_mb_take(&c->from_local, &tag, &c->in) == 0; got = true)
        on_message(c, 0, tag, &c->in);
    for (int k = 0; k < c->nranks; k++) {
        peer *p = &c->peers[k];
        for (int rc = 0; rc == 0 && p->state != PEER_LOST;) {
            if (!p->rx_active) {
                if ((rc = clu_start_recv(k, &p->rx_tag, &p->rx, &p->rx_req)) != 0) {
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
        for (int k = 0; k < c->nranks; k++)
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
        clu_nap(ns);
}

/* Idle live workers hear from rank 0 every PING_S. */
static void ping_idle(clu_cluster *c)
{
    if (base_now() - c->last_ping < PING_S)
        return;
    c->last_ping = base_now();
    for (int k = 0; k < c->nranks; k++)
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
        double t = base_now();
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
        for (int k = 0; k < c->nranks; k++) {
            peer *p = &c->peers[k];
            if (p->state == PEER_BUSY && silent(c, p, t))
                lose(c, k);
            nlive += p->state != PEER_LOST;
        }
        /* hand out, ask back, stop */
        for (int k = 0; k < c->nranks; k++) {
            peer *p = &c->peers[k];
            if (p->state == PEER_IDLE && c->qn > 0 && !ckpt && !c->stopping &&
                (rc = hand_out(c, k, nlive)) != 0)
                fail(c, rc, 0, NULL);
            if (p->state == PEER_BUSY && c->stopping && !p->stopped) {
                send_word(c, k, TAG_STOP, p->batch);
                p->stopped = true;
            } else if (p->state == PEER_BUSY && !p->asked &&
                       (ckpt || p->sols.bytes.len >= PENDING_MAX || t - p->since >= BATCH_MAX_S)) {
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
                next_ckpt = hk->checkpoint_seconds > 0 ? base_now() + hk->checkpoint_seconds : 0;
                if (hk->checkpoint(hk->ctx, c->q, c->qn, &snap) != 0) {
                    c->stopping = true;
                    break;
                }
                continue;
            }
            if (c->qn == 0)
                break; /* complete */
        }
        /* an idle worker and nothing queued: take back the oldest batch */
        bool asking = false;
        for (int k = 0; k < c->nranks; k++)
            asking |= c->peers[k].asked;
        if (!ckpt && !c->stopping && c->qn == 0 && nidle > 0 && !asking) {
            int victim = -1;
            for (int k = 0; k < c->nranks; k++)
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
            next_progress = base_now() + every;
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
    double t0 = base_now();
    c->last_listen = t0;
    c->s = s;
    free(c->ids); /* sized for another solver: report_solutions makes new ones */
    free(c->members);
    free(c->pl);
    free(c->cells);
    c->ids = c->members = NULL;
    c->pl = NULL;
    c->cells = NULL;
    c->job = job;
    c->cb = cb;
    c->levels = tsr_solver_ncopies(s) + 1;
    c->limit = tsr_solver_options(s)->limit;
    c->stopping = false;
    c->err = c->err_rank = 0;
    c->err_msg[0] = '\0';
    c->reported = 0;
    c->qn = 0;
    int rc = clu_alloc_stats(&c->total, c->levels);
    for (int k = 0; k < c->nranks && rc == 0; k++) {
        tsr_stats_free(&c->peers[k].prog);
        rc = clu_alloc_stats(&c->peers[k].prog, c->levels);
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
        for (int k = 0; k < c->nranks; k++) {
            peer *p = &c->peers[k];
            if (p->state == PEER_BUSY && silent(c, p, base_now()))
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
    st->seconds = base_now() - t0;
    st->stopped = c->stopping;
    if (!c->stopping && rc == 0)
        st->fraction = 1; /* exactly, whatever the rounding */
    else if (st->fraction > 1)
        st->fraction = 1;
    clu_free_tasks(c->q, c->qn);
    c->q = NULL;
    c->qn = 0;
    c->qcap = 0;
    pthread_mutex_lock(&c->st_mu);
    c->rs[0].cpu_s = clu_cpu_now();
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
    tsr_err err = {{0}};
    clu_serve_mailboxes(&c->to_local, &c->from_local, &err);
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
    c->opened = base_now();
    for (int k = 0; k < size; k++)
        c->peers[k].job = -1;
    c->rs[0].pid = getpid();
    gethostname(c->rs[0].host, sizeof c->rs[0].host - 1);
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->st_mu, NULL);
    pthread_mutex_init(&c->to_local.mu, NULL);
    pthread_mutex_init(&c->from_local.mu, NULL);
    /* rank 0 searches too, through a worker of its own */
    if (pthread_create(&c->local, NULL, local_main, c) != 0) {
        pthread_mutex_destroy(&c->mu);
        pthread_mutex_destroy(&c->st_mu);
        pthread_mutex_destroy(&c->to_local.mu);
        pthread_mutex_destroy(&c->from_local.mu);
        free(c->peers);
        free(c->rs);
        free(c->ws);
        free(c);
        return tsr_err_set(err, TSR_ENOMEM, "cannot start rank 0's search thread");
    }
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
    double t = base_now();
    pthread_mutex_lock(&c->st_mu);
    for (int k = 0; k < c->nranks; k++) {
        out[k] = c->rs[k];
        /* busy: up to now; idle: the rest since the cluster opened */
        if (out[k].busy)
            out[k].busy_s += t - c->peers[k].since;
        out[k].idle_s = t - c->opened - out[k].busy_s;
        if (out[k].idle_s < 0)
            out[k].idle_s = 0;
    }
    out[0].cpu_s = clu_cpu_now();
    pthread_mutex_unlock(&c->st_mu);
}

json_t *clu_report_json(clu_cluster *c)
{
    int n = c->nranks;
    clu_rank_stats *r = calloc((size_t)n, sizeof *r);
    json_t *o = json_object(), *a = json_array();
    json_object_set_new(o, "ranks", json_integer(n));
    json_object_set_new(o, "threads_per_rank", json_integer(c->threads));
    json_object_set_new(o, "steals", json_integer((json_int_t)clu_steals(c)));
    if (r != NULL)
        clu_ranks(c, r);
    for (int k = 0; r != NULL && k < n; k++)
        json_array_append_new(
            a, json_pack("{s:i,s:s,s:s,s:i,s:b,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:f}",
                         "rank", k, "role", n == 1 ? "solo" : k == 0 ? "coordinator" : "worker",
                         "host", r[k].host, "pid", r[k].pid, "busy", r[k].busy, "lost",
                         r[k].lost, "messages_sent", (json_int_t)r[k].msgs_sent, "bytes_sent",
                         (json_int_t)r[k].bytes_sent, "messages_received",
                         (json_int_t)r[k].msgs_recv, "bytes_received",
                         (json_int_t)r[k].bytes_recv, "batches", (json_int_t)r[k].batches,
                         "tasks", (json_int_t)r[k].tasks, "given_back",
                         (json_int_t)r[k].given_back, "busy_seconds", r[k].busy_s,
                         "idle_seconds", r[k].idle_s, "cpu_seconds", r[k].cpu_s));
    json_object_set_new(o, "per_rank", a);
    free(r);
    return o;
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
    for (int k = 0; k < c->nranks; k++)
        lost |= c->peers[k].state == PEER_LOST;
    for (int k = 0; k < c->nranks; k++)
        if (c->peers[k].state != PEER_LOST)
            send_word(c, k, TAG_EXIT, lost);
    /* let the sends to live ranks finish; a lost rank's may never */
    double until = base_now() + 2;
    long ns = 0;
    while (c->nouts > 0 && base_now() < until)
        exchange(c, &ns);
    pthread_join(c->local, NULL); /* it had its EXIT */
    clu_mb_free(&c->to_local);
    clu_mb_free(&c->from_local);
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
        clu_free_tasks(c->peers[k].tasks, c->peers[k].ntasks);
        base_buf_free(&c->peers[k].sols.bytes);
        base_buf_free(&c->peers[k].rx.bytes);
        tsr_stats_free(&c->peers[k].prog);
    }
    free(c->peers);
    free(c->rs);
    free(c->ws);
    base_buf_free(&c->in.bytes);
    base_buf_free(&c->out.bytes);
    base_buf_free(&c->jobmsg.bytes);
    free(c->ids);
    free(c->members);
    free(c->pl);
    free(c->cells);
    pthread_mutex_unlock(&c->mu);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->st_mu);
    free(c);
}
