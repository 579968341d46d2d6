/*
 * wire.c - the messages of a cluster: growable byte strings of fixed-size
 * fields, what tasks, statistics and solutions look like in them, MPI
 * sends and receives that never block, and the mailboxes rank 0 uses with
 * its own worker (see wire.h for the protocol).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "mpi/wire.h"

#define NAP_MIN_NS 20000L         /* sleeps between empty polls grow from 20 us */
#define NAP_MAX_NS 4000000L       /* ... to 4 ms (each wake-up costs the search
                                     beside it: 1 ms cost 2% of a rank of one thread) */

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double clu_cpu_now(void)
{
    return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* Sleep after an empty poll, longer each time (*ns: 0 after a message). */
void clu_nap(long *ns)
{
    *ns = *ns < NAP_MIN_NS ? NAP_MIN_NS : *ns * 2 > NAP_MAX_NS ? NAP_MAX_NS : *ns * 2;
    struct timespec ts = {0, *ns};
    nanosleep(&ts, NULL);
}

/* ---- messages: byte strings of fixed-size fields ---- */


void clu_put_bytes(buf *b, const void *v, size_t k)
{
    if (!b->oom && base_buf_add(&b->bytes, v, k) != 0)
        b->oom = true;
}

void clu_put64(buf *b, int64_t v) { clu_put_bytes(b, &v, sizeof v); }
void clu_put32(buf *b, int32_t v) { clu_put_bytes(b, &v, sizeof v); }
void clu_put_double(buf *b, double d) { clu_put_bytes(b, &d, sizeof d); }


reader clu_reader(const buf *b)
{
    return (reader){(const unsigned char *)b->bytes.data, b->bytes.len, 0, false};
}

const unsigned char *clu_get_bytes(reader *r, size_t k)
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
    const unsigned char *p = clu_get_bytes(r, k);
    if (p)
        memcpy(out, p, k);
    else
        memset(out, 0, k);
}

int64_t clu_get64(reader *r)
{
    int64_t v;
    get_field(r, &v, sizeof v);
    return v;
}

int32_t clu_get32(reader *r)
{
    int32_t v;
    get_field(r, &v, sizeof v);
    return v;
}

double clu_get_double(reader *r)
{
    double d;
    get_field(r, &d, sizeof d);
    return d;
}

/* A count of items of at least `per` bytes each, checked against what is
 * left of the message. */
int clu_get_count(reader *r, size_t per, bool wide)
{
    int64_t v = wide ? clu_get64(r) : clu_get32(r);
    if (v < 0 || v > INT_MAX || (size_t)v > (r->n - r->pos) / (per ? per : 1)) {
        r->bad = true;
        return 0;
    }
    return (int)v;
}

/* ---- what messages carry ---- */

void clu_put_tasks(buf *b, const tsr_task *t, int n)
{
    clu_put64(b, n);
    for (int i = 0; i < n; i++) {
        clu_put64(b, t[i].n);
        clu_put_double(b, t[i].weight);
        for (int j = 0; j < t[i].n; j++)
            clu_put32(b, t[i].images[j]);
    }
}

void clu_free_tasks(tsr_task *t, int n)
{
    for (int i = 0; t && i < n; i++)
        free(t[i].images);
    free(t);
}

/* Append n tasks to *t (*n, *cap grown as needed), images copied. */
int clu_add_tasks(tsr_task **t, int *n, size_t *cap, const tsr_task *src, int k)
{
    if (k > 0 && base_grow((void **)t, cap, (size_t)*n + k - 1, sizeof **t, 64, INT_MAX) != 0)
        return TSR_ENOMEM;
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
int clu_get_tasks(reader *r, tsr_task **t, int *n, size_t *cap)
{
    int k = clu_get_count(r, 16, true);
    for (int i = 0; i < k && !r->bad; i++) {
        int m = clu_get_count(r, 4, true);
        double weight = clu_get_double(r);
        int *images = malloc((size_t)(m > 0 ? m : 1) * sizeof *images);
        if (images == NULL)
            return TSR_ENOMEM;
        for (int j = 0; j < m; j++)
            images[j] = clu_get32(r);
        tsr_task one = {m, images, weight};
        int rc = r->bad ? 0 : clu_add_tasks(t, n, cap, &one, 1);
        free(images);
        if (rc)
            return rc;
    }
    return r->bad ? TSR_EINVAL : 0;
}

void clu_put_stats(buf *b, const tsr_stats *st)
{
    int levels = st->attempts ? st->levels : 0;
    clu_put64(b, levels);
    for (int p = 0; p < levels; p++) {
        clu_put64(b, (int64_t)st->attempts[p]);
        clu_put64(b, (int64_t)st->fits[p]);
    }
    clu_put64(b, (int64_t)st->nodes);
    clu_put64(b, (int64_t)st->solutions);
    clu_put64(b, (int64_t)st->classes);
    clu_put_double(b, st->fraction);
}

/* Statistics read from r into *out (whose arrays have out->levels). */
void clu_get_stats(reader *r, tsr_stats *out)
{
    int levels = clu_get_count(r, 16, true);
    for (int p = 0; p < out->levels; p++)
        out->attempts[p] = out->fits[p] = 0;
    for (int p = 0; p < levels && !r->bad; p++) {
        uint64_t a = (uint64_t)clu_get64(r), f = (uint64_t)clu_get64(r);
        if (p < out->levels) {
            out->attempts[p] = a;
            out->fits[p] = f;
        }
    }
    out->nodes = (uint64_t)clu_get64(r);
    out->solutions = (uint64_t)clu_get64(r);
    out->classes = (uint64_t)clu_get64(r);
    out->fraction = clu_get_double(r);
}

/* acc += add (acc's arrays have acc->levels entries). */
void clu_add_stats(tsr_stats *acc, const tsr_stats *add)
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

int clu_alloc_stats(tsr_stats *st, int levels)
{
    *st = (tsr_stats){.levels = levels};
    st->attempts = calloc((size_t)levels + 1, sizeof *st->attempts);
    st->fits = calloc((size_t)levels + 1, sizeof *st->fits);
    return st->attempts && st->fits ? 0 : TSR_ENOMEM;
}

void clu_put_class(buf *b, const int *images, int n, int count)
{
    clu_put32(b, count);
    clu_put32(b, n);
    for (int i = 0; i < n; i++)
        clu_put32(b, images[i]);
}

/* A fingerprint of a solver's images: every rank must number them alike,
 * since tasks name subtrees by image ids. */
int64_t clu_fingerprint(const tsr_solver *s)
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
bool clu_poll_msg(int source, int *from, int *tag)
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
int clu_room(buf *b, int n)
{
    base_buf *bb = &b->bytes;
    bb->len = 0;
    return n > 0 ? base_grow((void **)&bb->data, &bb->cap, (size_t)n - 1, 1, (size_t)n, 0) : 0;
}

/* Start receiving the first message waiting from `from` (found by
 * MPI_Iprobe) into b; *req completes when it is all there.  Receives never
 * block: a rank that dies in the middle of a message must not hang the one
 * receiving it. */
int clu_start_recv(int from, int *tag, buf *b, MPI_Request *req)
{
    int flag = 0, nbytes = 0;
    MPI_Status ms;
    MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms);
    if (!flag)
        return 1;
    MPI_Get_count(&ms, MPI_BYTE, &nbytes);
    *tag = ms.MPI_TAG;
    if (clu_room(b, nbytes) != 0)
        return TSR_ENOMEM;
    MPI_Irecv(b->bytes.data, nbytes, MPI_BYTE, ms.MPI_SOURCE, ms.MPI_TAG, MPI_COMM_WORLD, req);
    b->bytes.len = (size_t)nbytes;
    return 0;
}

/* A worker receives the message poll_msg found, waiting at most
 * `patience` seconds (0: for ever) for the rest of it.  Returns 0, or
 * TSR_EIO when rank 0 went quiet mid-message (then b is not to be used
 * again while MPI may still write into it: it is detached). */
int clu_recv_msg(int from, buf *b, double patience)
{
    MPI_Request req;
    int got = 0;
    int rc = clu_start_recv(from, &got, b, &req);
    if (rc != 0)
        return rc > 0 ? TSR_EIO : rc;
    double until = base_now() + patience;
    long ns = 0;
    for (int done = 0;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return 0;
        if (patience > 0 && base_now() > until) {
            MPI_Cancel(&req);
            MPI_Request_free(&req);
            *b = (buf){0}; /* detached: MPI may still write into it */
            return TSR_EIO;
        }
        clu_nap(&ns);
    }
}

/* ---- rank 0's own worker: the same messages through mailboxes ---- */

/* A FIFO of messages between rank 0's coordinator and the worker thread it
 * runs itself, so that rank 0 searches too with exactly the code and
 * protocol of the other ranks (messages keep their order, as MPI's do). */

int clu_mb_put(mailbox *mb, int tag, const buf *b)
{
    size_t n = b->bytes.len;
    mbmsg *m = malloc(sizeof *m + n);
    if (m == NULL)
        return TSR_ENOMEM;
    *m = (mbmsg){NULL, tag, n};
    if (n > 0)
        memcpy(m->p, b->bytes.data, n);
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
bool clu_mb_peek(mailbox *mb, int *tag)
{
    pthread_mutex_lock(&mb->mu);
    bool any = mb->head != NULL;
    if (any)
        *tag = mb->head->tag;
    pthread_mutex_unlock(&mb->mu);
    return any;
}

/* Take the first message into b. */
int clu_mb_take(mailbox *mb, int *tag, buf *b)
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
    int rc = clu_room(b, (int)m->n);
    if (rc == 0 && m->n > 0)
        memcpy(b->bytes.data, m->p, m->n);
    b->bytes.len = rc == 0 ? m->n : 0;
    free(m);
    return rc;
}

void clu_mb_free(mailbox *mb)
{
    for (mbmsg *m = mb->head, *next; m != NULL; m = next) {
        next = m->next;
        free(m);
    }
    mb->head = mb->tail = NULL;
}
