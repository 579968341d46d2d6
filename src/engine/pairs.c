/*
 * pairs.c - building the two-piece table (pairs.h).
 *
 * Every pair of alive images of two types (or of one type with two
 * copies) that do not overlap sets one bit.  The bitmap has about four
 * bits for each pair tested, at most 2^PAIRS_MAX_BITS, so that it stays
 * within the second-level cache and a dead node's probe finds a bit set
 * by chance about one time in eight on the polyhex boards (270 thousand
 * unions in 2^21 bits on the 3+4 hexagon).  Building costs a few
 * nanoseconds a pair of images tested, most of it the bitmap's cache
 * misses: 0.4 million pairs and under 2 ms on the hexagon, 1.6 million and
 * 6 ms on the pentominoes' 6x10, which is why preparation weighs it
 * against the search's estimated size.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "engine/pairs.h"

/* The positions of an image's cells, as two 64-bit halves. */
static void image_mask(const img_problem *ip, const int *gpos, int i, uint64_t m[2])
{
    m[0] = m[1] = 0;
    const int *c = img_cells_of(ip, i);
    for (int k = 0; k < img_size(ip, i); k++)
        m[gpos[c[k]] >> 6] |= 1ull << (gpos[c[k]] & 63);
}

/* A type's salt: splitmix64 of its index, so that the hash of a pair of
 * types is the sum of theirs whichever comes first. */
static uint64_t type_salt(int t)
{
    uint64_t x = (uint64_t)(t + 1) * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

double pairs_tests(const img_problem *ip, const unsigned char *alive)
{
    double tests = 0, *n = calloc((size_t)(ip->ntypes ? ip->ntypes : 1), sizeof *n);
    if (n == NULL)
        return 0;
    for (int i = 0; i < ip->nimages; i++)
        n[ip->img_type[i]] += alive[i] != 0;
    for (int u = 0; u < ip->ntypes; u++)
        for (int v = u; v < ip->ntypes; v++)
            if (u != v || ip->types[u].count >= 2)
                tests += u == v ? n[u] * (n[u] - 1) / 2 : n[u] * n[v];
    free(n);
    return tests;
}

int pairs_build(const img_problem *ip, const unsigned char *alive, const int *gpos,
                const tsr_stop *stop, pairs_table **out)
{
    *out = NULL;
    int T = ip->ntypes;
    pairs_table *t = calloc(1, sizeof *t);
    /* each type's alive images' masks, type by type; first[u] .. first[u + 1] */
    int *first = malloc(((size_t)T + 1) * sizeof *first);
    uint64_t(*m)[2] = malloc((size_t)(ip->nimages ? ip->nimages : 1) * sizeof *m);
    int rc = t == NULL || first == NULL || m == NULL ? TSR_ENOMEM : 0;
    if (rc == 0)
        t->salt = malloc((size_t)(T ? T : 1) * sizeof *t->salt);
    if (rc == 0 && t->salt == NULL)
        rc = TSR_ENOMEM;
    int n = 0;
    for (int u = 0; u < T && rc == 0; u++) {
        t->salt[u] = type_salt(u);
        first[u] = n;
        for (int i = ip->types[u].first; i < ip->types[u].first + ip->types[u].nimages; i++)
            if (alive[i])
                image_mask(ip, gpos, i, m[n++]);
    }
    if (rc == 0)
        first[T] = n;
    /* about four bits a pair tested, as long as the bitmap stays small */
    double tests = rc == 0 ? pairs_tests(ip, alive) : 0;
    int B = 12;
    while (B < PAIRS_MAX_BITS && (double)(1ul << B) < 4 * tests)
        B++;
    if (rc == 0) {
        t->shift = 64 - B;
        t->bits = calloc((size_t)1 << (B - 6), sizeof *t->bits);
        if (t->bits == NULL)
            rc = TSR_ENOMEM;
    }
    unsigned long work = 0;
    for (int u = 0; u < T && rc == 0; u++)
        for (int v = u; v < T && rc == 0; v++) {
            if (u == v && ip->types[u].count < 2)
                continue;
            uint64_t salt = t->salt[u] + t->salt[v];
            for (int a = first[u]; a < first[u + 1]; a++) {
                /* whether two images overlap is a coin toss: no branch */
                const uint64_t a0 = m[a][0], a1 = m[a][1];
                uint64_t *bits = t->bits;
                const int shift = t->shift;
                for (int b = u == v ? a + 1 : first[v], e = first[v + 1]; b < e; b++) {
                    uint64_t apart = ((a0 & m[b][0]) | (a1 & m[b][1])) == 0;
                    uint64_t h = pairs_hash(a0 | m[b][0], a1 | m[b][1], salt);
                    bits[pairs_word(h, shift)] |= pairs_bits(h, shift) & -apart;
                }
                if (img_stopped(stop, &work, (unsigned long)(first[v + 1] - first[v]))) {
                    rc = TSR_ECANCELED;
                    break;
                }
            }
        }
    free(first);
    free(m);
    if (rc) {
        pairs_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void pairs_free(pairs_table *t)
{
    if (t == NULL)
        return;
    free(t->bits);
    free(t->salt);
    free(t);
}
