/*
 * worker.c - a worker's life (clu_serve): build the solver of each job rank
 * 0 sends (on a thread, heartbeating meanwhile), search each batch with the
 * work-stealing pool on this rank's threads, stream its solutions, report
 * progress every second (the heartbeat rank 0 watches), and end the batch
 * with one DONE: its statistics and, when rank 0 asked for the work back,
 * exactly the tasks left (the pool's park-and-report checkpoint).
 *
 * Every MPI call is on the thread that runs the loop; the pool's threads
 * only fill the solution buffer, under a mutex.  Rank 0 runs the same loop
 * on a thread of its own, over mailboxes (clu_serve_mailboxes).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "mpi/wire.h"

#define FLUSH_S 0.02              /* solutions wait at most about this long */
#define FLUSH_BYTES (256 * 1024)  /* ... or until this many bytes are buffered */
#define ORPHAN_TIMEOUTS 10        /* an idle worker leaves after this many timeouts
                                     without word from rank 0 */

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
    bool thread;              /* built on th (else in place) */
} build;

typedef struct wk {
    /* the current job's solver (rank 0 keeps every count of the traffic) */
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
    if (b->bytes.len > (size_t)INT_MAX)
        return TSR_ETOOBIG;
    if (w->outbox)
        return clu_mb_put(w->outbox, tag, b);
    MPI_Send(b->bytes.data, (int)b->bytes.len, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
    return 0;
}

/* Is a message from rank 0 waiting?  Sets *tag. */
static bool wk_poll(wk *w, int *tag)
{
    int from;
    return w->inbox ? clu_mb_peek(w->inbox, tag) : clu_poll_msg(0, &from, tag);
}

/* Receive the message wk_poll found into w->in. */
static int wk_recv(wk *w)
{
    int tag;
    if (w->inbox)
        return clu_mb_take(w->inbox, &tag, &w->in) < 0 ? TSR_ENOMEM : 0;
    return clu_recv_msg(0, &w->in, w->timeout_s);
}

static int wk_found(void *ctx, const int *images, int n, int count)
{
    wk *w = ctx;
    pthread_mutex_lock(&w->mu);
    clu_put_class(&w->sols, images, n, count);
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
    if (rc == 0 && out.bytes.len > 8)
        rc = wk_send(w, TAG_SOL, &out);
    out.bytes.len = 0;
    clu_put64(&out, w->batch); /* the header of the next SOL */
    w->spare = out;
    w->last_flush = base_now();
    return rc;
}

/* Read what rank 0 sent but JOB and WORK (which come only to an idle
 * worker, and are left for clu_serve); true when the batch must end. */
static bool wk_read(wk *w)
{
    int tag;
    while (!w->exit && wk_poll(w, &tag) && tag != TAG_JOB && tag != TAG_WORK) {
        if (wk_recv(w) != 0) {
            w->exit = w->stop = w->no_finalize = true; /* rank 0 is gone */
            break;
        }
        w->heard = base_now();
        reader r = clu_reader(&w->in);
        if (tag == TAG_EXIT) {
            w->exit = w->stop = true;
            w->no_finalize = clu_get64(&r) != 0;
        }
        else if (tag == TAG_PING)
            w->timeout_s = clu_get_double(&r);
        else if ((tag == TAG_STEAL || tag == TAG_STOP) && clu_get64(&r) == w->batch && !r.bad)
            *(tag == TAG_STEAL ? &w->steal : &w->stop) = true;
        /* else stale: a STEAL or STOP that crossed the DONE of its batch */
    }
    return w->steal || w->stop;
}

static int wk_checkpoint_wanted(void *ctx)
{
    wk *w = ctx;
    pthread_mutex_lock(&w->mu);
    size_t buffered = w->sols.bytes.len;
    pthread_mutex_unlock(&w->mu);
    if (buffered > 8 && (buffered >= FLUSH_BYTES || base_now() - w->last_flush >= FLUSH_S))
        wk_flush(w);
    return wk_read(w);
}

/* Every thread parked: tasks are exactly the batch's work left. */
static int wk_checkpoint(void *ctx, const tsr_task *tasks, int ntasks, const tsr_stats *st)
{
    (void)st;
    wk *w = ctx;
    if (w->steal && !w->stop) {
        w->back.bytes.len = 0;
        clu_put_tasks(&w->back, tasks, ntasks);
        if (w->back.oom)
            return TSR_ENOMEM; /* ends the batch with an error: rank 0 fails the search */
        w->gave_back = true;
    }
    return 1;
}

/* The batch's progress, which is also the worker's heartbeat. */
static int wk_progress(void *ctx, const tsr_stats *st)
{
    wk *w = ctx;
    w->out.bytes.len = 0;
    w->out.oom = false;
    clu_put64(&w->out, w->batch);
    clu_put_double(&w->out, clu_cpu_now());
    clu_put_stats(&w->out, st);
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
    if (rc == 0 && (tsr_solver_nimages(b->s) != b->nimages || clu_fingerprint(b->s) != b->fp))
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
    double beat = base_now();
    while (!build_done(w)) {
        wk_read(w);
        if (base_now() - beat >= PROG_S && w->batch >= 0) {
            beat = base_now();
            wk_progress(w, &(tsr_stats){0}); /* nothing searched yet, but alive */
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (w->b->thread)
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
    reader r = clu_reader(&w->in);
    clu_get64(&r); /* the job's key: rank 0 keeps track of who has which */
    int threads = (int)clu_get64(&r);
    w->timeout_s = clu_get_double(&r);
    int nimages = (int)clu_get64(&r);
    int64_t fp = clu_get64(&r);
    int64_t plen = clu_get64(&r), olen = clu_get64(&r);
    const char *ptext = plen >= 0 ? (const char *)clu_get_bytes(&r, (size_t)plen) : NULL;
    const char *otext = olen >= 0 ? (const char *)clu_get_bytes(&r, (size_t)olen) : NULL;
    tsr_solver_free(w->s);
    tsr_puzzle_free(w->pz);
    w->s = NULL;
    w->pz = NULL;
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
    b->thread = pthread_create(&b->th, NULL, build_thread, w) == 0;
    if (!b->thread) { /* build here, then */
        build_main(b);
        b->done = true;
    }
}

/* WORK: search a batch and answer DONE. */
static int wk_batch(wk *w)
{
    reader r = clu_reader(&w->in);
    w->batch = clu_get64(&r);
    tsr_task *tasks = NULL;
    int ntasks = 0;
    size_t cap = 0;
    int rc = clu_get_tasks(&r, &tasks, &ntasks, &cap);
    w->steal = w->stop = w->gave_back = false;
    w->sols.bytes.len = w->spare.bytes.len = 0;
    clu_put64(&w->sols, w->batch);
    clu_put64(&w->spare, w->batch);
    w->last_flush = base_now();
    tsr_stats st = {0};
    tsr_callbacks cb = {.ctx = w, .found = wk_found, .progress = wk_progress,
                        .progress_seconds = PROG_S};
    tsr_pool_hooks hk = {.ctx = w, .checkpoint_wanted = wk_checkpoint_wanted,
                         .checkpoint = wk_checkpoint};
    wk_build_wait(w);
    if (rc == 0)
        rc = w->s == NULL ? (w->job_err ? w->job_err : TSR_EINVAL) : 0;
    if (rc == 0 && (w->steal || w->stop)) /* asked to end before it began */
        rc = wk_checkpoint(w, tasks, ntasks, NULL) < 0 ? TSR_ENOMEM : 0;
    else if (rc == 0)
        rc = tsr_pool_search(w->s, w->threads, tasks, ntasks, &cb, &hk, &st);
    clu_free_tasks(tasks, ntasks);
    pthread_mutex_lock(&w->mu);
    if (rc == 0 && w->sols.oom)
        rc = TSR_ENOMEM;
    pthread_mutex_unlock(&w->mu);
    int frc = wk_flush(w);
    if (rc == 0)
        rc = frc;
    w->out.bytes.len = 0;
    w->out.oom = false;
    clu_put64(&w->out, w->batch);
    clu_put64(&w->out, rc);
    clu_put_double(&w->out, clu_cpu_now());
    clu_put_stats(&w->out, &st);
    if (rc == 0 && w->gave_back)
        clu_put_bytes(&w->out, w->back.bytes.data, w->back.bytes.len);
    else
        clu_put64(&w->out, 0); /* no tasks */
    /* a failed batch says why in a last field */
    const char *why = rc == 0 ? "" : w->s == NULL && w->job_msg[0] ? w->job_msg : tsr_strerror(rc);
    clu_put_bytes(&w->out, why, strlen(why));
    if (w->out.oom) { /* say at least that the batch failed */
        w->out.bytes.len = 0;
        w->out.oom = false;
        clu_put64(&w->out, w->batch);
        clu_put64(&w->out, TSR_ENOMEM);
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
    clu_put64(&w.out, getpid());
    clu_put_bytes(&w.out, host, strlen(host));
    int rc = w.out.oom ? TSR_ENOMEM : wk_send(&w, TAG_HELLO, &w.out);
    w.heard = base_now();
    long ns = 0;
    while (rc == 0 && !w.exit) {
        int tag;
        if (!wk_poll(&w, &tag)) {
            /* rank 0 pings idle workers every second, but may be busy
             * a while (committing a checkpoint): leave only when it has
             * surely gone */
            if (w.inbox == NULL && w.timeout_s > 0 &&
                base_now() - w.heard > ORPHAN_TIMEOUTS * w.timeout_s) {
                w.no_finalize = true; /* rank 0 is gone: MPI_Finalize would wait */
                rc = tsr_err_set(err, TSR_EIO, "rank 0 has been silent for %.0f s: leaving",
                                 base_now() - w.heard);
                break;
            }
            clu_nap(&ns);
            continue;
        }
        ns = 0;
        if (tag != TAG_JOB && tag != TAG_WORK) {
            wk_read(&w); /* PING, EXIT, or a STEAL/STOP that crossed a DONE */
            continue;
        }
        if ((rc = wk_recv(&w)) != 0) {
            tsr_err_set(err, rc, "rank 0 went quiet in the middle of a message: leaving");
            w.no_finalize = true;
            break;
        }
        w.heard = base_now();
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
    base_buf_free(&w.sols.bytes);
    base_buf_free(&w.spare.bytes);
    base_buf_free(&w.back.bytes);
    base_buf_free(&w.in.bytes);
    base_buf_free(&w.out.bytes);
    pthread_mutex_destroy(&w.mu);
    wp->no_finalize = w.no_finalize;
    return rc;
}

int clu_serve(tsr_err *err)
{
    wk w = {.batch = -1};
    int rc = serve(&w, err);
    if (!w.no_finalize)
        MPI_Finalize();
    return rc;
}

int clu_serve_mailboxes(mailbox *in, mailbox *out, tsr_err *err)
{
    wk w = {.batch = -1, .inbox = in, .outbox = out};
    return serve(&w, err);
}
