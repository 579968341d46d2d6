/*
 * wire.h - what the ranks of a cluster say to each other, and the helpers
 * that write, read, send and receive it (internal to src/mpi/; cluster.h is
 * the module's face).
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
 *   k -> 0  SOL    batch id, solution classes (per class its count, n, then
 *                  n image ids: tsr_callbacks.found)
 *   k -> 0  PROG   batch id, CPU time, the batch's statistics so far
 *   k -> 0  DONE   batch id, return code, CPU time, the batch's statistics
 *                  and, when STEAL ended it, the tasks left
 *
 * Rank 0 also talks to a worker of its own (a thread, cluster.c), with the
 * same messages through two mailboxes instead of MPI.  Every name this
 * header exports has the module's prefix clu_; its types are internal.
 */
#ifndef TESSERA_MPI_WIRE_H
#define TESSERA_MPI_WIRE_H

#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "mpi/cluster.h"

enum { TAG_HELLO = 1, TAG_JOB, TAG_WORK, TAG_STEAL, TAG_STOP, TAG_PING, TAG_EXIT,
       TAG_SOL, TAG_PROG, TAG_DONE };

#define PROG_S 1.0 /* a busy worker's progress (and heartbeat) interval */

/* A message: its bytes, and whether writing them ran out of memory
 * (sticky, so a writer checks once, before sending). */
typedef struct buf {
    base_buf bytes;
    bool oom;
} buf;

void clu_put_bytes(buf *b, const void *v, size_t k);
void clu_put64(buf *b, int64_t v);
void clu_put32(buf *b, int32_t v);
void clu_put_double(buf *b, double d);

/* A reader over a received message; any read past the end marks it bad. */
typedef struct reader {
    const unsigned char *p;
    size_t n, pos;
    bool bad;
} reader;

const unsigned char *clu_get_bytes(reader *r, size_t k);
int64_t clu_get64(reader *r);
int32_t clu_get32(reader *r);
double clu_get_double(reader *r);
/* A reader over the message in b. */
reader clu_reader(const buf *b);
/* A count of items of at least `per` bytes each (64-bit when wide), checked
 * against what is left of the message. */
int clu_get_count(reader *r, size_t per, bool wide);

/* Tasks: count, then per task n, weight, images (32-bit). */
void clu_put_tasks(buf *b, const tsr_task *t, int n);
/* Append copies of k tasks to *t (*n, *cap grown as needed). */
int clu_add_tasks(tsr_task **t, int *n, size_t *cap, const tsr_task *src, int k);
/* Tasks read from r, appended to *t. */
int clu_get_tasks(reader *r, tsr_task **t, int *n, size_t *cap);
void clu_free_tasks(tsr_task *t, int n);

/* Statistics: levels, attempts and fits per level, nodes, solutions,
 * classes, fraction.  get reads into out, whose arrays have out->levels. */
void clu_put_stats(buf *b, const tsr_stats *st);
void clu_get_stats(reader *r, tsr_stats *out);
void clu_add_stats(tsr_stats *acc, const tsr_stats *add);
int clu_alloc_stats(tsr_stats *st, int levels);

/* A class as tsr_callbacks.found reports it: count, n, the n image ids. */
void clu_put_class(buf *b, const int *images, int n, int count);

/* A fingerprint of a solver's images: every rank must number them alike. */
int64_t clu_fingerprint(const tsr_solver *s);

/* Is a message from `source` waiting?  Sets *from and *tag. */
bool clu_poll_msg(int source, int *from, int *tag);
/* Room for an n-byte message in b (its contents dropped). */
int clu_room(buf *b, int n);
/* Start receiving the first message waiting from `from` into b: 0 (then
 * *req completes when it is all there), 1 when none waits, or TSR_ENOMEM.
 * Receives never block: a rank that dies mid-message must hang nobody. */
int clu_start_recv(int from, int *tag, buf *b, MPI_Request *req);
/* Receive the message clu_poll_msg found, waiting at most `patience`
 * seconds (0: for ever) for the rest of it; TSR_EIO when the sender went
 * quiet (b is then detached, since MPI may still write into it). */
int clu_recv_msg(int from, buf *b, double patience);

/* A FIFO of messages between rank 0's coordinator and its own worker, in
 * order as MPI's are. */
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

int clu_mb_put(mailbox *mb, int tag, const buf *b);
bool clu_mb_peek(mailbox *mb, int *tag);   /* the first message's tag, if any */
int clu_mb_take(mailbox *mb, int *tag, buf *b); /* 0, 1 when empty, or TSR_ENOMEM */
void clu_mb_free(mailbox *mb);

/* Process CPU seconds (durations: base_now); a sleep after an empty poll, longer
 * each time (*ns: 0 after a message). */
double clu_cpu_now(void);
void clu_nap(long *ns);

/* worker.c: rank 0's own worker, the worker loop over mailboxes. */
int clu_serve_mailboxes(mailbox *in, mailbox *out, tsr_err *err);

#endif
