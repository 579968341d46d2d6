/*
 * pairs.h - the two-piece table: which sets of cells the last two pieces
 * of a search can fill.
 *
 * At the bottom of a search most nodes with two pieces left are dead: on
 * the 1-4 polyhex diamond ring 2.47 million such nodes yield 84 thousand
 * solutions.  FILA finds that out by gathering the first hole's images and
 * each fit's child; this table answers it with one probe.  For every pair
 * of types (a type with itself when it has two copies) and every pair of
 * disjoint images of them, a bit is set at a hash of the union of their
 * cells and of the two types.  A node whose open cells and two pieces left
 * hash to a clear bit has no solution below it; a set bit says nothing
 * (another union may share it), and the search goes on as without the
 * table.  So the table only removes dead subtrees: solutions, their order
 * and every count but the nodes below those subtrees are those of a
 * search without it.
 *
 * Cells are named by their position in one numbering of the whole board,
 * the plan's (`gpos`: the box index with box numbering, else the cell's
 * rank among all cells, as FILA numbers the open ones), so one table
 * serves every FILA build of a solver and every thread: a build's open
 * cells are a subset, numbered in the same order, and a parallel bit
 * deposit turns its occupancy into board positions.  Boards of more than
 * 128 cells get no table.
 */
#ifndef TSR_PAIRS_H
#define TSR_PAIRS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/images.h"

#define PAIRS_MAX_CELLS 128
#define PAIRS_MAX_BITS 21 /* the bitmap: at most 2^21 bits, 256 KiB */

typedef struct pairs_table {
    uint64_t *bits;  /* 2^(64 - shift) bits */
    int shift;
    uint64_t *salt;  /* per type: its part of a pair's hash */
} pairs_table;

/* The pairs of images a build tests (each a few nanoseconds), and the
 * estimated nodes a search should have for the table to be worth them
 * (prepare.c's automatic choice; docs/engine.md has the figures). */
double pairs_tests(const img_problem *ip, const unsigned char *alive);
#define PAIRS_NODES_PER_TEST 2.0

/* Build the table over the images with alive[i] set, cells at positions
 * gpos[c] (< PAIRS_MAX_CELLS).  Polls `stop` (may be NULL): TSR_ECANCELED
 * when it asks to stop; TSR_ENOMEM.  *out is NULL on failure. */
int pairs_build(const img_problem *ip, const unsigned char *alive, const int *gpos,
                const tsr_stop *stop, pairs_table **out);
void pairs_free(pairs_table *t);

/* The hash of a set of board positions (lo: 0-63, hi: 64-127) filled by
 * two pieces whose salts add up to `salt`.  Its top bits pick a word of
 * the bitmap (2^(64 - shift) bits), the next twelve two bits of that word:
 * a union sets both, and a probe asks for both, so that a dead node's
 * union passes only when two bits were set by others, at the cost of the
 * same one cache line (on the polyhex diamond ring the nodes with two
 * pieces left that the search enters fell from 121K to 84K, at most 57K
 * of them alive; with one bit a union). */
static inline uint64_t pairs_hash(uint64_t lo, uint64_t hi, uint64_t salt)
{
    uint64_t x = (lo ^ salt) + hi * 0x9E3779B97F4A7C15ull;
    return x * 0xBF58476D1CE4E5B9ull;
}

static inline uint64_t pairs_word(uint64_t h, int shift) { return h >> (shift + 6); }

static inline uint64_t pairs_bits(uint64_t h, int shift)
{
    return 1ull << (h >> shift & 63) | 1ull << (h >> (shift - 6) & 63);
}

/* May the two pieces of `salt` fill exactly the positions lo/hi?  False
 * means no. */
static inline bool pairs_may(const pairs_table *t, uint64_t lo, uint64_t hi, uint64_t salt)
{
    uint64_t h = pairs_hash(lo, hi, salt), b = pairs_bits(h, t->shift);
    return (t->bits[pairs_word(h, t->shift)] & b) == b;
}

#endif
