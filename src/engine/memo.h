/*
 * memo.h - FILA's memo of small subtrees: what lies below a node with a
 * few pieces left, kept so that the same node met again soon is not
 * searched again.
 *
 * Near the bottom of a search the same remainder comes back many times:
 * the upper pieces can be arranged in many ways around the same open
 * cells.  On the 1-4 polyhex diamond ring 184 thousand nodes with four
 * pieces left are only 59 thousand distinct pairs of open cells and pieces
 * left, and most repeats follow closely.  The subtree below such a node
 * depends on nothing else (its lists, filters, heuristics and leaves are
 * functions of the two), so the memo keeps, per node seen, the solutions
 * below it (the images of its pieces, in the order the search found them)
 * and what the search counted there (attempts and fits per level).  A
 * node found in the memo reports those solutions in that order and adds
 * those counts: every count, every solution and their order are those of
 * a search without the memo, which only saves time.
 *
 * A node is remembered only when its whole subtree was searched: not when
 * the run stopped inside it, nor when work was given away during it.  The
 * memo belongs to one FILA context (one thread) and one build of its lists
 * (keys are local occupancies); a new build empties it.
 *
 * It is a cache, small enough to stay in the core's own cache (a memo
 * that held every node was slower on the ring than one that forgot: its
 * misses to memory cost more than the searches it saved):
 *  - records are written one after the other into a ring of 32-bit words,
 *    the oldest overwritten first; a record: the key (kw words), the
 *    number of solutions, their images (L global ids each, L = level;
 *    none when the memo is `counted`: the caller only counts its
 *    leaves), then the counts of levels 1 .. L (a word per level,
 *    attempts in the low 16 bits and fits in the high; or, flagged in the
 *    solutions' word when one does not fit, L words of attempts and L of
 *    fits);
 *  - a table of two-slot buckets points into the ring: a record's
 *    position (40 bits, counted from the ring's start, never wrapping) and
 *    24 bits of its key's hash.  A slot whose record has been overwritten
 *    is stale and is taken first; otherwise the older of the two goes.
 * It watches what it saves: when the nodes below the nodes it finds are,
 * on average, too few to pay for looking them up and writing them down,
 * it stops for the rest of the build.
 */
#ifndef TSR_MEMO_H
#define TSR_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEMO_MAX_LEVEL 6 /* a key's pieces: 6 shapes of 10 bits (fila's memo_node) */
/* A memo's size (each thread has one): well within the core's 512 KiB
 * second-level cache here.  On the polyhex diamond ring, 256 KiB searched
 * in 0.83 of the time without a memo where one holding every node took
 * 0.96, and 320 KiB in 0.97 of 256 (docs/engine.md). */
#define MEMO_BYTES ((size_t)320 << 10)
#define MEMO_WIDE 0x80000000u /* in a record's solutions word: 32-bit counts */
#define MEMO_KEY_WORDS 6

/* A node's key: its occupancy (2 or 4 words), its pieces left (1 or 2). */
typedef struct memo_key {
    uint32_t w[MEMO_KEY_WORDS];
} memo_key;

typedef struct memo {
    int level;          /* pieces left at the nodes remembered; 0: none */
    int on;             /* level while it pays, else 0 (fila compares p to it) */
    int kw;             /* words of a key, for the current build */
    uint64_t *slot;     /* 2^bits slots: position << 24 | hash tag; 0: empty */
    int bits;
    uint32_t *ring;     /* 2^rbits words */
    int rbits;
    uint64_t head;      /* position of the next word written (from 1) */
    uint64_t open;      /* position of the record being written, 0: none */
    bool failed;        /* that record no longer fits */
    bool counted;       /* records hold their leaves' number, not their images */
    uint32_t leaves;    /* counted: the open record's leaves so far */
    size_t max_bytes;
    /* what it saved: lookups and nodes below the nodes found, this window */
    uint64_t looks, saved;
} memo;

/* A memo for nodes with `level` pieces left (0: none, else 1 ..
 * MEMO_MAX_LEVEL) in about max_bytes.  It allocates nothing until a
 * search starts (memo_start). */
void memo_init(memo *m, int level, size_t max_bytes);
void memo_free(memo *m);
/* Forget every node and take keys of kw words from now on (a new build:
 * other cells, another width); turns it on again. */
void memo_clear(memo *m, int kw);
/* Before a search: the first one allocates the memo and turns it on
 * (TSR_ENOMEM leaves it off: the search runs without).  `counted`: the
 * search counts its leaves without reporting them, and so do the
 * records; a memo of the other kind is emptied first. */
int memo_start(memo *m, bool counted);

static inline uint64_t memo_hash(const memo_key *k, int kw)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < kw; i++)
        h = (h ^ k->w[i]) * 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

#define MEMO_POS(s) ((s) >> 24)
#define MEMO_TAG(h) ((h) >> 40) /* the top 24 bits: the low ones pick the bucket */

/* Is the record at position pos still whole? */
static inline bool memo_live(const memo *m, uint64_t pos)
{
    return pos != 0 && m->head - pos <= ((uint64_t)1 << m->rbits);
}

/* The position of the node's record, or 0. */
static inline uint64_t memo_find(memo *m, const memo_key *k)
{
    uint64_t h = memo_hash(k, m->kw);
    const uint64_t *b = m->slot + ((h << 1) & (((uint64_t)1 << m->bits) - 1));
    uint64_t rmask = ((uint64_t)1 << m->rbits) - 1;
    m->looks++;
    for (int i = 0; i < 2; i++) {
        uint64_t pos = MEMO_POS(b[i]);
        if ((b[i] & 0xffffff) != MEMO_TAG(h) || !memo_live(m, pos))
            continue;
        const uint32_t *r = m->ring + (pos & rmask);
        bool same = true;
        for (int j = 0; j < m->kw; j++)
            same &= r[j] == k->w[j];
        if (same)
            return pos;
    }
    return 0;
}

/* Start the record of a node not found (memo.open stays 0 when it
 * cannot). */
void memo_open(memo *m, const memo_key *k);

/* Append a solution's L images to the open record (a leaf, when the
 * memo is counted: images unused). */
void memo_wrap(memo *m, size_t more);
static inline void memo_add(memo *m, const int *images)
{
    if (m->counted) {
        m->leaves++;
        return;
    }
    int L = m->level;
    uint64_t rmask = ((uint64_t)1 << m->rbits) - 1;
    /* the record's end in the ring (head & rmask is 0 at the ring's end) */
    uint64_t end = (m->open & rmask) + (m->head - m->open);
    if (end + (uint64_t)L > rmask + 1)
        memo_wrap(m, (size_t)L);
    if (m->failed)
        return;
    uint32_t *w = m->ring + (m->open & rmask) + (m->head - m->open);
    for (int i = 0; i < L; i++)
        w[i] = (uint32_t)images[i];
    m->head += (uint64_t)L;
}

/* Close the open record: keep it, with the counts of its subtree
 * (attempts[q], fits[q] for q = 1 .. L), when `keep`, else drop it. */
void memo_close(memo *m, bool keep, const uint64_t *attempts, const uint64_t *fits);

/* A found record: add its counts to attempts/fits (q = 1 .. L), return its
 * solutions and set *images to the first's images (none when counted). */
uint32_t memo_take(memo *m, uint64_t pos, uint64_t *attempts, uint64_t *fits,
                   const uint32_t **images);

#endif
