/*
 * memo.c - the ring and table of FILA's memo (memo.h).
 *
 * Both are allocated once, when the first search starts (memo_start:
 * preparation's estimates build lists but never search), and never grow:
 * four fifths of the size for the ring, a fifth for the table (on the
 * polyhex ring 256 + 64 KiB searched in 0.97 of the time of 128 + 128,
 * 393M instructions against 405M: records ran short before slots).  A
 * record never wraps around the ring's end: one that would is moved, as
 * far as it is written, to the ring's start (records are at most an
 * eighth of the ring, longer ones are dropped).  Positions count words
 * written since the ring's start; before they pass 40 bits (years of
 * searching) the memo is emptied and they start again.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "engine/memo.h"

/* The nodes saved per lookup below which the memo costs more than it
 * saves, and how many lookups it takes to judge (docs/engine.md). */
#define MEMO_PAYS 2
#define MEMO_WINDOW 4096

void memo_init(memo *m, int level, size_t max_bytes)
{
    memset(m, 0, sizeof *m);
    if (level >= 1 && level <= MEMO_MAX_LEVEL)
        m->level = level;
    m->max_bytes = max_bytes;
}

void memo_free(memo *m)
{
    free(m->slot);
    free(m->ring);
    memset(m, 0, sizeof *m);
}

void memo_clear(memo *m, int kw)
{
    m->kw = kw;
    m->on = 0;
    if (m->ring == NULL)
        return; /* memo_start allocates it */
    memset(m->slot, 0, ((size_t)1 << m->bits) * sizeof *m->slot);
    m->head = 1;
    m->open = 0;
    m->failed = false;
    m->looks = m->saved = 0;
    m->on = m->level;
}

int memo_start(memo *m, bool counted)
{
    if (m->counted != counted) { /* its records are of the other kind */
        m->counted = counted;
        memo_clear(m, m->kw);
    }
    if (m->level == 0 || m->ring != NULL)
        return 0;
    int bits = 4, rbits = 8;
    while (((size_t)8 << (bits + 1)) <= m->max_bytes / 5) /* a fifth for the table */
        bits++;
    while (((size_t)4 << (rbits + 1)) <= m->max_bytes / 5 * 4) /* the rest for the ring */
        rbits++;
    m->slot = malloc(((size_t)1 << bits) * sizeof *m->slot);
    m->ring = malloc(((size_t)1 << rbits) * sizeof *m->ring);
    if (m->slot == NULL || m->ring == NULL) {
        free(m->slot);
        free(m->ring);
        m->slot = NULL;
        m->ring = NULL;
        return TSR_ENOMEM;
    }
    m->bits = bits;
    m->rbits = rbits;
    memo_clear(m, m->kw);
    return 0;
}

/* The open record, written up to head, no longer fits before the ring's
 * end with `more` words: move it to the start. */
void memo_wrap(memo *m, size_t more)
{
    uint64_t size = (uint64_t)1 << m->rbits;
    uint64_t len = m->head - m->open;
    if (m->failed || m->open == 0 || len + more > size / 8) {
        m->failed = true;
        return;
    }
    uint64_t to = (m->open | (size - 1)) + 1; /* the lap after the record's */
    memmove(m->ring, m->ring + (m->open & (size - 1)), len * sizeof *m->ring);
    m->open = to;
    m->head = to + len;
}

void memo_open(memo *m, const memo_key *k)
{
    uint64_t size = (uint64_t)1 << m->rbits;
    m->failed = false;
    if (m->looks >= MEMO_WINDOW) { /* judge the last window */
        if (m->saved < MEMO_PAYS * m->looks) {
            m->on = 0;
            return;
        }
        m->looks = m->saved = 0;
    }
    if (m->head >= ((uint64_t)1 << 40) - 2 * size)
        memo_clear(m, m->kw); /* positions start again */
    size_t need = (size_t)m->kw + 1;
    if ((m->head & (size - 1)) + need > size)
        m->head = (m->head | (size - 1)) + 1;
    m->open = m->head;
    m->leaves = 0;
    memcpy(m->ring + (m->head & (size - 1)), k->w, (size_t)m->kw * sizeof *k->w);
    m->head += need; /* the solutions' word is written at close */
}

void memo_close(memo *m, bool keep, const uint64_t *attempts, const uint64_t *fits)
{
    uint64_t at = m->open, size = (uint64_t)1 << m->rbits;
    int L = m->level;
    m->open = 0;
    if (at == 0)
        return;
    bool wide = false;
    for (int q = 1; q <= L; q++)
        wide |= attempts[q] > 0xffff || fits[q] > 0xffff;
    for (int q = 1; keep && wide && q <= L; q++)
        keep = attempts[q] <= UINT32_MAX && fits[q] <= UINT32_MAX;
    size_t nc = wide ? 2 * (size_t)L : (size_t)L;
    uint64_t ns = m->counted ? m->leaves : (m->head - at - (uint64_t)m->kw - 1) / (uint64_t)L;
    keep = keep && ns < MEMO_WIDE;
    if (keep && !m->failed && (at & (size - 1)) + (m->head - at) + nc > size) {
        m->open = at;
        memo_wrap(m, nc);
        at = m->open;
        m->open = 0;
    }
    if (!keep || m->failed) {
        /* dropped: what it wrote stays written over (head does not go
         * back, or records it overwrote would look whole again) */
        m->failed = false;
        return;
    }
    uint32_t *r = m->ring + (at & (size - 1));
    r[m->kw] = (uint32_t)ns | (wide ? MEMO_WIDE : 0);
    uint32_t *c = r + (m->head - at);
    for (int q = 1; q <= L; q++) {
        if (wide) {
            c[q - 1] = (uint32_t)attempts[q];
            c[L + q - 1] = (uint32_t)fits[q];
        } else {
            c[q - 1] = (uint32_t)attempts[q] | (uint32_t)fits[q] << 16;
        }
    }
    m->head += nc;
    /* the bucket: a stale or empty slot, else the older record's */
    memo_key k;
    memcpy(k.w, r, (size_t)m->kw * sizeof *k.w);
    uint64_t h = memo_hash(&k, m->kw);
    uint64_t *b = m->slot + ((h << 1) & (((uint64_t)1 << m->bits) - 1));
    int i = !memo_live(m, MEMO_POS(b[0])) ? 0
            : !memo_live(m, MEMO_POS(b[1])) ? 1
            : MEMO_POS(b[1]) < MEMO_POS(b[0]);
    b[i] = at << 24 | MEMO_TAG(h);
}

uint32_t memo_take(memo *m, uint64_t pos, uint64_t *attempts, uint64_t *fits,
                   const uint32_t **images)
{
    const uint32_t *r = m->ring + (pos & (((uint64_t)1 << m->rbits) - 1)) + m->kw;
    int L = m->level;
    uint32_t ns = r[0] & ~MEMO_WIDE;
    const uint32_t *c = r + 1 + (m->counted ? 0 : (size_t)ns * (size_t)L);
    uint64_t nodes = 0;
    if (r[0] & MEMO_WIDE) {
        for (int q = 1; q <= L; q++) {
            attempts[q] += c[q - 1];
            fits[q] += c[L + q - 1];
            nodes += c[L + q - 1];
        }
    } else {
        for (int q = 1; q <= L; q++) {
            attempts[q] += c[q - 1] & 0xffff;
            fits[q] += c[q - 1] >> 16;
            nodes += c[q - 1] >> 16;
        }
    }
    *images = r + 1;
    m->saved += nodes;
    return ns;
}
