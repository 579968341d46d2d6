/*
 * ref_lattice.c - the brute-force reference counter and random-puzzle
 * generator of ref_lattice.h, for the cubic, triangular and hexagonal
 * lattices.
 *
 * Why it exists: to judge the engine's counts on lattices it has just
 * learned, with nothing shared.  Everything here comes from issue 24's
 * definitions: the triangular turn (x, y, z) -> (-y-1, x+y+z, 1-z) and flip
 * (x, y, z) -> (-(x+y+z), y, z), the hexagonal turn (x, y) -> (-y, x+y) and
 * flip (x, y) -> (-x, x+y), and the neighbours listed there; the cubic
 * lattice's 48 signed permutations.
 *
 * How it counts (the model is tests/unit/test_diff.c's reference):
 *   - board cells are sorted in a search order that translations keep:
 *     lexicographic over the axes, the board's shortest extent scanned
 *     first (the triangle kind last);
 *   - each piece's orientations are its normalised images under the
 *     motions it may make; a placement is an orientation whose first cell
 *     in the search order lies on an anchor cell, so it covers nothing
 *     before the anchor;
 *   - the search takes the first undecided cell: an optional cell may be
 *     left empty (decided), or any placement anchored there with a copy
 *     left is tried; every cell decided and every count in its range is a
 *     tiling, found exactly once (copies of a piece are interchangeable
 *     because only its count goes down);
 *   - a tiling's key is, per board cell, its piece label and its region id
 *     by first appearance; a board symmetry maps a tiling region by region,
 *     relabelling a piece to itself when it may take the new shape, else
 *     to the twin of the same rank that may (test_diff.c's rule), and the
 *     image is the same solution when its key is a raw tiling;
 *   - classes are unions (union-find) over the symmetries of each mode.
 */
#include "ref_lattice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXOR 48
#define FIXLAB 0xFF   /* key label of fixed pieces */
#define EMPTY 0xFE    /* key of an empty optional cell */

/* ---- the lattices ---------------------------------------------------------------- */

static bool plane(enum ref_lattice L) { return L != REF_CUBIC; }

int ref_ntransforms(enum ref_lattice L) { return plane(L) ? 12 : 48; }

/* The 48 signed permutation matrices, the 24 of determinant +1 first,
 * identity first of all. */
typedef struct mat3 {
    int m[3][3];
} mat3;

static const mat3 *cubic_matrices(void)
{
    static mat3 out[48];
    static bool made;
    if (made)
        return out;
    static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    static const int parity[6] = {1, -1, -1, 1, 1, -1};
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int p = 0; p < 6; p++)
            for (int s = 0; s < 8; s++) {
                int sign = parity[p] * ((s & 1) ? -1 : 1) * ((s & 2) ? -1 : 1) * ((s & 4) ? -1 : 1);
                if ((sign > 0) != (pass == 0))
                    continue;
                mat3 t;
                memset(&t, 0, sizeof t);
                for (int r = 0; r < 3; r++)
                    t.m[r][perm[p][r]] = (s >> r) & 1 ? -1 : 1;
                out[n++] = t;
            }
    made = true;
    return out;
}

static ref_cell tri_turn(ref_cell c) { return (ref_cell){-c.y - 1, c.x + c.y + c.z, 1 - c.z}; }
static ref_cell tri_flip(ref_cell c) { return (ref_cell){-(c.x + c.y + c.z), c.y, c.z}; }
static ref_cell hex_turn(ref_cell c) { return (ref_cell){-c.y, c.x + c.y, 0}; }
static ref_cell hex_flip(ref_cell c) { return (ref_cell){-c.x, c.x + c.y, 0}; }

ref_cell ref_transform(enum ref_lattice L, int k, ref_cell c)
{
    if (L == REF_CUBIC) {
        const mat3 *t = &cubic_matrices()[k];
        return (ref_cell){t->m[0][0] * c.x + t->m[0][1] * c.y + t->m[0][2] * c.z,
                          t->m[1][0] * c.x + t->m[1][1] * c.y + t->m[1][2] * c.z,
                          t->m[2][0] * c.x + t->m[2][1] * c.y + t->m[2][2] * c.z};
    }
    bool tri = L == REF_TRIANGULAR;
    if (k >= 6)
        c = tri ? tri_flip(c) : hex_flip(c);
    for (int i = 0; i < k % 6; i++)
        c = tri ? tri_turn(c) : hex_turn(c);
    return c;
}

/* Cubic: the proper rotation k followed by x -> -x, as an index. */
static int cubic_mirrored(int k)
{
    const mat3 *all = cubic_matrices();
    mat3 t = all[k];
    for (int c = 0; c < 3; c++)
        t.m[0][c] = -t.m[0][c];
    for (int j = 0; j < 48; j++)
        if (memcmp(&all[j], &t, sizeof t) == 0)
            return j;
    abort();
}

int ref_motions(enum ref_lattice L, enum ref_motion m, bool mirror, int *out)
{
    int n = 0;
    if (plane(L)) {
        for (int k = 0; k < 12; k++) {
            bool turn = k < 6;
            bool base = m == REF_FREE || (m == REF_ONE_SIDED && turn) || k == 0;
            bool refl = mirror && !turn && (m != REF_NONE || k == 6);
            if (base || refl)
                out[n++] = k;
        }
        return n;
    }
    const mat3 *all = cubic_matrices();
    for (int k = 0; k < 24; k++) {
        bool ok = m == REF_FREE || (m == REF_ONE_SIDED && all[k].m[2][2] == 1) || k == 0;
        if (ok)
            out[n++] = k;
    }
    if (mirror)
        for (int i = 0, h = n; i < h; i++)
            out[n++] = cubic_mirrored(out[i]);
    return n;
}

int ref_neighbours(enum ref_lattice L, ref_cell c, ref_cell *out)
{
    switch (L) {
    case REF_CUBIC:
        out[0] = (ref_cell){c.x + 1, c.y, c.z};
        out[1] = (ref_cell){c.x - 1, c.y, c.z};
        out[2] = (ref_cell){c.x, c.y + 1, c.z};
        out[3] = (ref_cell){c.x, c.y - 1, c.z};
        out[4] = (ref_cell){c.x, c.y, c.z + 1};
        out[5] = (ref_cell){c.x, c.y, c.z - 1};
        return 6;
    case REF_TRIANGULAR:
        if (c.z == 0) {
            out[0] = (ref_cell){c.x, c.y, 1};
            out[1] = (ref_cell){c.x - 1, c.y, 1};
            out[2] = (ref_cell){c.x, c.y - 1, 1};
        } else {
            out[0] = (ref_cell){c.x, c.y, 0};
            out[1] = (ref_cell){c.x + 1, c.y, 0};
            out[2] = (ref_cell){c.x, c.y + 1, 0};
        }
        return 3;
    case REF_HEXAGONAL:
        out[0] = (ref_cell){c.x + 1, c.y, 0};
        out[1] = (ref_cell){c.x - 1, c.y, 0};
        out[2] = (ref_cell){c.x, c.y + 1, 0};
        out[3] = (ref_cell){c.x, c.y - 1, 0};
        out[4] = (ref_cell){c.x + 1, c.y - 1, 0};
        out[5] = (ref_cell){c.x - 1, c.y + 1, 0};
        return 6;
    }
    return 0;
}

static int cmp3(int a0, int a1, int a2, int b0, int b1, int b2)
{
    if (a0 != b0)
        return a0 < b0 ? -1 : 1;
    if (a1 != b1)
        return a1 < b1 ? -1 : 1;
    return (a2 > b2) - (a2 < b2);
}

int ref_cell_cmp(enum ref_lattice L, ref_cell a, ref_cell b)
{
    if (plane(L))
        return cmp3(a.y, a.x, a.z, b.y, b.x, b.z);
    return cmp3(a.z, a.y, a.x, b.z, b.y, b.x);
}

static bool same_cell(ref_cell a, ref_cell b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

static void sort_cells(enum ref_lattice L, ref_cell *c, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: shapes are small */
        for (int j = i; j > 0 && ref_cell_cmp(L, c[j - 1], c[j]) > 0; j--) {
            ref_cell t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
}

/* The translation taking cell `from` to cell `to`, or false when none does
 * (triangles of different kinds). */
static bool translation(enum ref_lattice L, ref_cell from, ref_cell to, ref_cell *d)
{
    if (plane(L) && from.z != to.z)
        return false;
    *d = (ref_cell){to.x - from.x, to.y - from.y, plane(L) ? 0 : to.z - from.z};
    return true;
}

static ref_cell shift(ref_cell c, ref_cell d) { return (ref_cell){c.x + d.x, c.y + d.y, c.z + d.z}; }

void ref_normalise(enum ref_lattice L, ref_cell *c, int n)
{
    sort_cells(L, c, n);
    ref_cell d = {-c[0].x, -c[0].y, plane(L) ? 0 : -c[0].z};
    for (int i = 0; i < n; i++)
        c[i] = shift(c[i], d);
}

static int shape_cmp(enum ref_lattice L, const ref_cell *a, const ref_cell *b, int n)
{
    for (int i = 0; i < n; i++) {
        int r = ref_cell_cmp(L, a[i], b[i]);
        if (r)
            return r;
    }
    return 0;
}

void ref_canonical(enum ref_lattice L, const int *xf, int nxf, const ref_cell *c, int n, ref_cell *out)
{
    for (int a = 0; a < nxf; a++) {
        ref_cell t[REF_MAXPC];
        for (int i = 0; i < n; i++)
            t[i] = ref_transform(L, xf[a], c[i]);
        ref_normalise(L, t, n);
        if (a == 0 || shape_cmp(L, t, out, n) < 0)
            memcpy(out, t, (size_t)n * sizeof *t);
    }
}

static int find_cell(const ref_cell *c, int n, ref_cell q)
{
    for (int i = 0; i < n; i++)
        if (same_cell(c[i], q))
            return i;
    return -1;
}

bool ref_connected(enum ref_lattice L, const ref_cell *c, int n)
{
    if (n == 0)
        return true;
    int seen[REF_MAXB] = {0}, stack[REF_MAXB], top = 0, nseen = 1;
    if (n > REF_MAXB)
        return false;
    seen[0] = 1;
    stack[top++] = 0;
    while (top) {
        ref_cell nb[6];
        int k = ref_neighbours(L, c[stack[--top]], nb);
        for (int j = 0; j < k; j++) {
            int i = find_cell(c, n, nb[j]);
            if (i >= 0 && !seen[i]) {
                seen[i] = 1;
                nseen++;
                stack[top++] = i;
            }
        }
    }
    return nseen == n;
}

/* ---- bit sets over the board ------------------------------------------------------ */

#define WORDS ((REF_MAXB + 63) / 64)

typedef struct bits {
    uint64_t w[WORDS];
} bits;

static bool bits_meet(const bits *a, const bits *b)
{
    for (int i = 0; i < WORDS; i++)
        if (a->w[i] & b->w[i])
            return true;
    return false;
}

static void bits_or(bits *a, const bits *b)
{
    for (int i = 0; i < WORDS; i++)
        a->w[i] |= b->w[i];
}

static void bits_xor(bits *a, const bits *b)
{
    for (int i = 0; i < WORDS; i++)
        a->w[i] ^= b->w[i];
}

static void bits_set(bits *a, int i) { a->w[i / 64] |= 1ull << (i % 64); }
static bool bits_has(const bits *a, int i) { return (a->w[i / 64] >> (i % 64)) & 1; }

/* First index not in a below n, or n. */
static int bits_first_clear(const bits *a, int n)
{
    for (int w = 0; w < WORDS; w++)
        if (~a->w[w]) {
            int i = w * 64 + __builtin_ctzll(~a->w[w]);
            return i < n ? i : n;
        }
    return n;
}

/* ---- the reference ------------------------------------------------------------------ */

typedef struct place {
    bits mask;
    short entry, orient;
} place;

struct ref_result {
    enum ref_lattice L;
    int axis[3];                   /* the search order's axes, major first */
    int n;                         /* board cells, sorted in that order */
    ref_cell cell[REF_MAXB];
    int sorted_of[REF_MAXB];       /* caller's board index -> sorted index */
    bits optional, fixedmask;
    int ne;                        /* entries = the caller's pieces */
    bool fixed[REF_MAXP];
    int lo[REF_MAXP], hi[REF_MAXP], size[REF_MAXP], norient[REF_MAXP];
    ref_cell orient[REF_MAXP][MAXOR][REF_MAXPC];
    int ncop;                      /* placements a tiling may hold */
    place *pl;
    int npl, *first;               /* placements by anchor: first[a] .. first[a+1] */
    int fixed_place[REF_MAXP];     /* a fixed entry's one placement */
    /* board symmetries: rotations group first (nsym[REF_ROTATIONS] of
     * them), then the rest up to nsym[REF_MIRROR] */
    int nsym[3];
    int cmap[48][REF_MAXB];
    signed char relab[48][REF_MAXP][MAXOR];
    /* tilings */
    long nt, cap, max_tilings;
    int *tpl;                      /* nt * ncop placement indices */
    int *tlen;
    uint8_t *keys;                 /* nt * 2n */
    long *ht;
    long htsize;
    long *cls[3];
    long long counts[3];
    long long nodes, max_nodes;
    bool overflow;
};

/* The search order: lexicographic over R->axis, so translations keep it
 * (the triangle kind comes last).  The scan runs along the board's
 * shortest extent, which keeps the first-empty-cell search narrow. */
static int coord(ref_cell c, int a) { return a == 0 ? c.x : a == 1 ? c.y : c.z; }

static int order_cmp(const ref_result *R, ref_cell a, ref_cell b)
{
    return cmp3(coord(a, R->axis[0]), coord(a, R->axis[1]), coord(a, R->axis[2]), coord(b, R->axis[0]),
                coord(b, R->axis[1]), coord(b, R->axis[2]));
}

static void choose_order(ref_result *R, const ref_cell *c, int n)
{
    int lo[3] = {c[0].x, c[0].y, c[0].z}, hi[3] = {c[0].x, c[0].y, c[0].z}, ext[3];
    for (int i = 1; i < n; i++)
        for (int a = 0; a < 3; a++) {
            int v = coord(c[i], a);
            lo[a] = v < lo[a] ? v : lo[a];
            hi[a] = v > hi[a] ? v : hi[a];
        }
    for (int a = 0; a < 3; a++)
        ext[a] = hi[a] - lo[a];
    if (plane(R->L)) {
        R->axis[0] = ext[0] > ext[1] ? 0 : 1;
        R->axis[1] = 1 - R->axis[0];
        R->axis[2] = 2;
        return;
    }
    int ax[3] = {2, 1, 0}; /* largest extent major; ties: z, y, x */
    for (int i = 1; i < 3; i++)
        for (int j = i; j > 0 && ext[ax[j]] > ext[ax[j - 1]]; j--) {
            int t = ax[j];
            ax[j] = ax[j - 1];
            ax[j - 1] = t;
        }
    memcpy(R->axis, ax, sizeof ax);
}

static void sort_order(const ref_result *R, ref_cell *c, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && order_cmp(R, c[j - 1], c[j]) > 0; j--) {
            ref_cell t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
}

static ref_cell order_min(const ref_result *R, const ref_cell *c, int n)
{
    ref_cell m = c[0];
    for (int i = 1; i < n; i++)
        if (order_cmp(R, c[i], m) < 0)
            m = c[i];
    return m;
}

static int board_index(const ref_result *R, ref_cell c)
{
    int lo = 0, hi = R->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, r = order_cmp(R, R->cell[mid], c);
        if (r == 0)
            return mid;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* The mask of cells, or false when one is off the board or repeated. */
static bool cells_mask(const ref_result *R, const ref_cell *c, int n, bits *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < n; i++) {
        int b = board_index(R, c[i]);
        if (b < 0 || bits_has(m, b))
            return false;
        bits_set(m, b);
    }
    return true;
}

/* Key of a tiling: np regions (labels, masks); lab FIXLAB for a fixed one. */
static void make_key(const ref_result *R, int np, const int *lab, const bits *mask, uint8_t *key)
{
    int reg[REF_MAXB], rid[REF_MAXB];
    for (int i = 0; i < R->n; i++)
        reg[i] = -1;
    for (int r = 0; r < np; r++) {
        rid[r] = -1;
        for (int i = 0; i < R->n; i++)
            if (bits_has(&mask[r], i))
                reg[i] = r;
    }
    int next = 0;
    for (int c = 0; c < R->n; c++) {
        int r = reg[c];
        if (r < 0) {
            key[2 * c] = key[2 * c + 1] = EMPTY;
            continue;
        }
        if (rid[r] < 0)
            rid[r] = next++;
        key[2 * c] = (uint8_t)(lab[r] == FIXLAB ? FIXLAB : lab[r] + 1);
        key[2 * c + 1] = (uint8_t)rid[r];
    }
}

static uint64_t key_hash(const uint8_t *k, int len)
{
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < len; i++)
        h = (h ^ k[i]) * 1099511628211ull;
    return h;
}

static long key_find(const ref_result *R, const uint8_t *key)
{
    if (R->htsize == 0) /* no tiling yet */
        return -1;
    int len = 2 * R->n;
    long mask = R->htsize - 1;
    for (long h = (long)(key_hash(key, len) & (uint64_t)mask);; h = (h + 1) & mask) {
        long t = R->ht[h];
        if (t < 0)
            return -1;
        if (memcmp(R->keys + (size_t)t * (size_t)len, key, (size_t)len) == 0)
            return t;
    }
}

static void ht_insert(ref_result *R, long t)
{
    int len = 2 * R->n;
    long mask = R->htsize - 1;
    long h = (long)(key_hash(R->keys + (size_t)t * (size_t)len, len) & (uint64_t)mask);
    while (R->ht[h] >= 0)
        h = (h + 1) & mask;
    R->ht[h] = t;
}

static bool grow(void **p, size_t elem, long n)
{
    void *q = realloc(*p, elem * (size_t)n);
    if (q == NULL)
        return false;
    *p = q;
    return true;
}

/* Room for one more tiling: the arrays double, the hash table stays at
 * most half full. */
static bool make_room(ref_result *R)
{
    if (R->nt == R->cap) {
        long want = R->cap ? 2 * R->cap : 1024;
        if (!grow((void **)&R->tpl, sizeof(int) * (size_t)R->ncop, want) ||
            !grow((void **)&R->tlen, sizeof(int), want) || !grow((void **)&R->keys, 2 * (size_t)R->n, want))
            return false;
        R->cap = want;
    }
    if (2 * (R->nt + 1) > R->htsize) {
        long size = R->htsize ? 2 * R->htsize : 4096;
        free(R->ht);
        R->ht = malloc(sizeof(long) * (size_t)size);
        if (R->ht == NULL)
            return false;
        R->htsize = size;
        for (long i = 0; i < size; i++)
            R->ht[i] = -1;
        for (long t = 0; t < R->nt; t++)
            ht_insert(R, t);
    }
    return true;
}

static void record(ref_result *R, const int *stack, int depth)
{
    if (R->nt >= R->max_tilings || !make_room(R)) {
        R->overflow = true;
        return;
    }
    long t = R->nt;
    int lab[REF_MAXB];
    bits mask[REF_MAXB];
    for (int i = 0; i < depth; i++) {
        const place *p = &R->pl[stack[i]];
        lab[i] = R->fixed[p->entry] ? FIXLAB : p->entry;
        mask[i] = p->mask;
        R->tpl[(size_t)t * (size_t)R->ncop + (size_t)i] = stack[i];
    }
    R->tlen[t] = depth;
    uint8_t *key = R->keys + (size_t)t * 2 * (size_t)R->n;
    make_key(R, depth, lab, mask, key);
    if (key_find(R, key) >= 0) { /* each tiling is found once: a bug */
        fprintf(stderr, "ref_lattice: a tiling found twice\n");
        abort();
    }
    R->nt++;
    ht_insert(R, t);
}

static void search(ref_result *R, bits occ, int *stack, int depth, int *left)
{
    if (R->overflow || ++R->nodes > R->max_nodes) {
        R->overflow = true;
        return;
    }
    int c = bits_first_clear(&occ, R->n);
    if (c == R->n) { /* every cell covered or decided empty */
        for (int e = 0; e < R->ne; e++)
            if (R->hi[e] - left[e] < R->lo[e])
                return;
        record(R, stack, depth);
        return;
    }
    if (bits_has(&R->optional, c)) { /* leave it empty */
        bits o = occ;
        bits_set(&o, c);
        search(R, o, stack, depth, left);
    }
    for (int i = R->first[c]; i < R->first[c + 1]; i++) {
        const place *p = &R->pl[i];
        if (left[p->entry] == 0 || bits_meet(&p->mask, &occ))
            continue;
        left[p->entry]--;
        stack[depth] = i;
        bits_or(&occ, &p->mask);
        search(R, occ, stack, depth + 1, left);
        bits_xor(&occ, &p->mask);
        left[p->entry]++;
    }
}

static bool has_shape(const ref_result *R, int b, const ref_cell *sh)
{
    for (int j = 0; j < R->norient[b]; j++)
        if (shape_cmp(R->L, R->orient[b][j], sh, R->size[b]) == 0)
            return true;
    return false;
}

/* How many entries before e are its twins: the same shape with the same
 * allowed orientations, listed apart. */
static int twin_rank(const ref_result *R, int e)
{
    int r = 0;
    for (int b = 0; b < e; b++)
        r += !R->fixed[b] && R->size[b] == R->size[e] && R->norient[b] == R->norient[e] &&
             has_shape(R, b, R->orient[e][0]);
    return r;
}

/* Board symmetry from transform k, into slot s; false when k does not map
 * the board (with its optional cells) onto itself. */
static bool try_symmetry(ref_result *R, int k, int s)
{
    ref_cell img[REF_MAXB] = {{0, 0, 0}};
    for (int i = 0; i < R->n; i++)
        img[i] = ref_transform(R->L, k, R->cell[i]);
    ref_cell lo = order_min(R, img, R->n);
    ref_cell d;
    if (!translation(R->L, lo, R->cell[0], &d))
        return false;
    for (int i = 0; i < R->n; i++) {
        int j = board_index(R, shift(img[i], d));
        if (j < 0 || bits_has(&R->optional, i) != bits_has(&R->optional, j))
            return false;
        R->cmap[s][i] = j;
    }
    for (int e = 0; e < R->ne; e++) {
        if (R->fixed[e])
            continue;
        int rank = twin_rank(R, e);
        for (int o = 0; o < R->norient[e]; o++) {
            ref_cell sh[REF_MAXPC];
            for (int i = 0; i < R->size[e]; i++)
                sh[i] = ref_transform(R->L, k, R->orient[e][o][i]);
            ref_normalise(R->L, sh, R->size[e]);
            int to = has_shape(R, e, sh) ? e : -1;
            for (int b = 0, r = rank; b < R->ne && to < 0; b++)
                if (!R->fixed[b] && R->size[b] == R->size[e] && has_shape(R, b, sh) && r-- == 0)
                    to = b;
            R->relab[s][e][o] = (signed char)to;
        }
    }
    return true;
}

static void symmetries(ref_result *R)
{
    int nt = ref_ntransforms(R->L), s = 0;
    /* rotations of space: all 12 plane transforms, the 24 proper cubic ones */
    int nrot = plane(R->L) ? 12 : 24;
    for (int k = 0; k < nrot; k++)
        s += try_symmetry(R, k, s);
    R->nsym[REF_RAW] = 1;
    R->nsym[REF_ROTATIONS] = s;
    for (int k = nrot; k < nt; k++)
        s += try_symmetry(R, k, s);
    R->nsym[REF_MIRROR] = s;
}

long ref_image(const ref_result *R, long t, int s)
{
    int lab[REF_MAXB], np = R->tlen[t];
    bits mask[REF_MAXB];
    uint8_t key[2 * REF_MAXB];
    const int *til = R->tpl + (size_t)t * (size_t)R->ncop;
    for (int i = 0; i < np; i++) {
        const place *p = &R->pl[til[i]];
        lab[i] = R->fixed[p->entry] ? FIXLAB : R->relab[s][p->entry][p->orient];
        if (lab[i] < 0)
            return -1;
        memset(&mask[i], 0, sizeof mask[i]);
        for (int c = 0; c < R->n; c++)
            if (bits_has(&p->mask, c))
                bits_set(&mask[i], R->cmap[s][c]);
    }
    make_key(R, np, lab, mask, key);
    return key_find(R, key);
}

static long uf_find(long *par, long i)
{
    while (par[i] != i)
        i = par[i] = par[par[i]];
    return i;
}

/* Classes: union over the rotations, then over the rest as well.  Each
 * class is named by its smallest tiling. */
static bool classes(ref_result *R)
{
    long *par = malloc(sizeof(long) * (size_t)(R->nt + 1));
    for (int m = 0; m < 3; m++)
        R->cls[m] = malloc(sizeof(long) * (size_t)(R->nt + 1));
    if (!par || !R->cls[0] || !R->cls[1] || !R->cls[2]) {
        free(par);
        return false;
    }
    for (long t = 0; t < R->nt; t++)
        par[t] = t;
    for (int m = REF_RAW; m <= REF_MIRROR; m++) {
        int from = m == REF_RAW ? 0 : R->nsym[m - 1];
        for (long t = 0; t < R->nt; t++)
            for (int s = from; s < R->nsym[m]; s++) {
                long u = ref_image(R, t, s);
                if (u >= 0) {
                    long a = uf_find(par, t), b = uf_find(par, u);
                    if (a < b)
                        par[b] = a;
                    else
                        par[a] = b;
                }
            }
        long long n = 0;
        for (long t = 0; t < R->nt; t++) {
            R->cls[m][t] = uf_find(par, t);
            n += R->cls[m][t] == t;
        }
        R->counts[m] = n;
    }
    free(par);
    return true;
}

void ref_free(ref_result *R)
{
    if (R == NULL)
        return;
    free(R->pl);
    free(R->first);
    free(R->tpl);
    free(R->tlen);
    free(R->keys);
    free(R->ht);
    for (int m = 0; m < 3; m++)
        free(R->cls[m]);
    free(R);
}

/* Orientations and placements of every piece; false on a malformed puzzle. */
static bool prepare(ref_result *R, const ref_puzzle *pz)
{
    int xf[48], nxf = ref_motions(pz->lattice, pz->motion, pz->mirror, xf);
    int maxpl = 1;
    for (int e = 0; e < R->ne; e++) {
        const ref_piece *pc = &pz->pieces[e];
        if (pc->ncells < 1 || pc->ncells > REF_MAXPC || pc->min < 0 || pc->max < pc->min || pc->max < 1)
            return false;
        R->fixed[e] = pc->fixed;
        R->lo[e] = pc->fixed ? 1 : pc->min;
        R->hi[e] = pc->fixed ? 1 : pc->max;
        R->size[e] = pc->ncells;
        R->ncop += R->hi[e];
        for (int a = 0; a < (pc->fixed ? 1 : nxf); a++) {
            ref_cell *o = R->orient[e][R->norient[e]];
            for (int i = 0; i < pc->ncells; i++)
                o[i] = pc->fixed ? pc->cells[i] : ref_transform(pz->lattice, xf[a], pc->cells[i]);
            if (pc->fixed)
                sort_cells(R->L, o, pc->ncells);
            else
                ref_normalise(pz->lattice, o, pc->ncells);
            bool dup = false;
            for (int j = 0; j < R->norient[e] && !dup; j++)
                dup = shape_cmp(R->L, R->orient[e][j], o, pc->ncells) == 0;
            if (!dup)
                R->norient[e]++;
        }
        maxpl += R->norient[e] * R->n;
    }
    if (R->ncop > REF_MAXB)
        R->ncop = REF_MAXB; /* a tiling has at most one placement per cell */
    R->pl = malloc(sizeof *R->pl * (size_t)maxpl);
    R->first = malloc(sizeof(int) * (size_t)(R->n + 1));
    if (!R->pl || !R->first)
        return false;
    for (int e = 0; e < R->ne; e++) {
        R->fixed_place[e] = -1;
        if (!R->fixed[e])
            continue;
        bits m;
        if (!cells_mask(R, R->orient[e][0], R->size[e], &m) || bits_meet(&m, &R->fixedmask) ||
            bits_meet(&m, &R->optional))
            return false;
        bits_or(&R->fixedmask, &m);
    }
    for (int e = 0; e < R->ne; e++) /* fixed placements first, outside the anchors */
        if (R->fixed[e]) {
            cells_mask(R, R->orient[e][0], R->size[e], &R->pl[R->npl].mask);
            R->pl[R->npl].entry = (short)e;
            R->pl[R->npl].orient = 0;
            R->fixed_place[e] = R->npl++;
        }
    for (int a = 0; a < R->n; a++) {
        R->first[a] = R->npl;
        if (bits_has(&R->fixedmask, a))
            continue;
        for (int e = 0; e < R->ne; e++)
            for (int o = 0; o < R->norient[e] && !R->fixed[e]; o++) {
                ref_cell c[REF_MAXPC], d;
                const ref_cell *oc = R->orient[e][o];
                if (!translation(R->L, order_min(R, oc, R->size[e]), R->cell[a], &d))
                    continue;
                for (int i = 0; i < R->size[e]; i++)
                    c[i] = shift(oc[i], d);
                bits m;
                if (cells_mask(R, c, R->size[e], &m) && !bits_meet(&m, &R->fixedmask))
                    R->pl[R->npl++] = (place){m, (short)e, (short)o};
            }
    }
    R->first[R->n] = R->npl;
    return true;
}

ref_result *ref_solve(const ref_puzzle *pz, long max_tilings, long long max_nodes)
{
    if (pz->nboard < 1 || pz->nboard > REF_MAXB || pz->npieces < 1 || pz->npieces > REF_MAXP ||
        pz->lattice < REF_CUBIC || pz->lattice > REF_HEXAGONAL)
        return NULL;
    ref_result *R = calloc(1, sizeof *R);
    if (R == NULL)
        return NULL;
    R->L = pz->lattice;
    R->n = pz->nboard;
    R->ne = pz->npieces;
    R->max_tilings = max_tilings;
    R->max_nodes = max_nodes;
    memcpy(R->cell, pz->board, sizeof *R->cell * (size_t)R->n);
    choose_order(R, R->cell, R->n);
    sort_order(R, R->cell, R->n);
    bool ok = true;
    for (int i = 0; i < R->n && ok; i++) {
        ref_cell c = pz->board[i];
        ok = (pz->lattice != REF_HEXAGONAL || c.z == 0) && (pz->lattice != REF_TRIANGULAR || c.z == 0 || c.z == 1) &&
             (i == 0 || !same_cell(R->cell[i], R->cell[i - 1]));
        if (ok)
            R->sorted_of[i] = board_index(R, c);
    }
    for (int i = 0; i < pz->noptional && ok; i++) {
        int b = board_index(R, pz->optional[i]);
        ok = b >= 0 && !bits_has(&R->optional, b);
        if (ok)
            bits_set(&R->optional, b);
    }
    if (!ok || !prepare(R, pz)) {
        ref_free(R);
        return NULL;
    }
    symmetries(R);
    int stack[REF_MAXB], left[REF_MAXP];
    for (int e = 0; e < R->ne; e++)
        left[e] = R->fixed[e] ? 0 : R->hi[e];
    int depth = 0;
    for (int e = 0; e < R->ne; e++)
        if (R->fixed[e])
            stack[depth++] = R->fixed_place[e];
    search(R, R->fixedmask, stack, depth, left);
    if (!R->overflow && !classes(R)) {
        ref_free(R);
        return NULL;
    }
    return R;
}

bool ref_complete(const ref_result *R) { return !R->overflow; }
long long ref_count(const ref_result *R, enum ref_mode mode) { return R->overflow ? -1 : R->counts[mode]; }
long long ref_nodes(const ref_result *R) { return R->nodes; }
long ref_ntilings(const ref_result *R) { return R->nt; }
int ref_nsymmetries(const ref_result *R, enum ref_mode mode) { return R->nsym[mode]; }

long ref_class(const ref_result *R, long t, enum ref_mode mode)
{
    return t < 0 || t >= R->nt || R->overflow ? -1 : R->cls[mode][t];
}

long ref_find(const ref_result *R, const int *owner, const int *piece_of)
{
    int lab[REF_MAXB], np = 0;
    bits mask[REF_MAXB];
    for (int i = 0; i < R->n; i++) {
        int k = owner[i];
        if (k < 0)
            continue;
        if (k >= REF_MAXB || piece_of[k] < 0 || piece_of[k] >= R->ne)
            return -1;
        while (np <= k) {
            lab[np] = -1;
            memset(&mask[np++], 0, sizeof mask[0]);
        }
        lab[k] = R->fixed[piece_of[k]] ? FIXLAB : piece_of[k];
        bits_set(&mask[k], R->sorted_of[i]);
    }
    uint8_t key[2 * REF_MAXB];
    make_key(R, np, lab, mask, key);
    return key_find(R, key);
}

int ref_tiling(const ref_result *R, long t, int *owner, int *piece_of)
{
    const int *til = R->tpl + (size_t)t * (size_t)R->ncop;
    for (int i = 0; i < R->n; i++) {
        owner[i] = -1;
        for (int k = 0; k < R->tlen[t]; k++)
            if (bits_has(&R->pl[til[k]].mask, R->sorted_of[i]))
                owner[i] = k;
    }
    for (int k = 0; k < R->tlen[t]; k++)
        piece_of[k] = R->pl[til[k]].entry;
    return R->tlen[t];
}

/* ---- random puzzles ------------------------------------------------------------------ */

typedef struct rng {
    uint64_t s;
} rng;

static void rng_seed(rng *r, uint64_t seed)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull; /* splitmix64 spreads small seeds */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    r->s = (z ^ (z >> 31)) | 1;
}

static int rnd(rng *r, int n) /* uniform in 0 .. n-1 (xorshift*) */
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (int)(((r->s * 2685821657736338717ull) >> 33) % (uint64_t)n);
}

static int between(rng *r, int lo, int hi) { return lo + rnd(r, hi - lo + 1); }

typedef struct cellset {
    int n;
    ref_cell c[REF_MAXB];
} cellset;

static bool add_cell(cellset *s, ref_cell c)
{
    if (find_cell(s->c, s->n, c) >= 0 || s->n == REF_MAXB)
        return false;
    s->c[s->n++] = c;
    return true;
}

/* Cells per translation cell: two triangles per rhombus. */
static int kinds(enum ref_lattice L) { return L == REF_TRIANGULAR ? 2 : 1; }

static void gen_parallelogram(enum ref_lattice L, rng *r, int lo, int hi, cellset *s)
{
    int w, h, d = 1, k = kinds(L);
    for (int tries = 0;; tries++) {
        w = between(r, 1, 8);
        h = between(r, 1, 6);
        d = L == REF_CUBIC && rnd(r, 3) == 0 ? between(r, 2, 3) : 1;
        int n = w * h * d * k;
        if ((n >= lo && n <= hi) || tries > 1000)
            break;
    }
    s->n = 0;
    for (int z = 0; z < d * k; z++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                add_cell(s, (ref_cell){x, y, z});
}

/* The regular hexagon of side m: hexagons as Polyform Puzzler lays them
 * out; triangles with their three corners in the hexagon of lattice points
 * |a|, |b|, |a+b| <= m.  The cubic lattice has none: a square instead. */
static void gen_hexagon(enum ref_lattice L, int m, cellset *s)
{
    s->n = 0;
    if (L == REF_HEXAGONAL) {
        for (int y = 0; y < 2 * m - 1; y++)
            for (int x = 0; x < 2 * m - 1; x++)
                if (x + y >= m - 1 && x + y <= 3 * m - 3)
                    add_cell(s, (ref_cell){x, y, 0});
    } else if (L == REF_TRIANGULAR) {
        for (int y = -m; y < m; y++)
            for (int x = -m; x < m; x++) {
                /* corners: up (x,y) (x+1,y) (x,y+1); down (x+1,y) (x+1,y+1) (x,y+1) */
                int up[3][2] = {{x, y}, {x + 1, y}, {x, y + 1}}, dn[3][2] = {{x + 1, y}, {x + 1, y + 1}, {x, y + 1}};
                for (int z = 0; z < 2; z++) {
                    bool in = true;
                    for (int j = 0; j < 3; j++) {
                        int a = z ? dn[j][0] : up[j][0], b = z ? dn[j][1] : up[j][1];
                        in &= abs(a) <= m && abs(b) <= m && abs(a + b) <= m;
                    }
                    if (in)
                        add_cell(s, (ref_cell){x, y, z});
                }
            }
    } else {
        for (int y = 0; y < m + 1; y++)
            for (int x = 0; x < m + 1; x++)
                add_cell(s, (ref_cell){x, y, 0});
    }
}

static void gen_blob(enum ref_lattice L, rng *r, int n, cellset *s)
{
    s->n = 0;
    add_cell(s, (ref_cell){0, 0, 0});
    bool flat = L == REF_CUBIC && rnd(r, 2);
    while (s->n < n) {
        ref_cell nb[6];
        int k = ref_neighbours(L, s->c[rnd(r, s->n)], nb);
        ref_cell q = nb[rnd(r, k)];
        if (!flat || q.z == 0)
            add_cell(s, q);
    }
}

/* Close a blob under the cyclic group of one transform: the board gets a
 * symmetry (rotational or a flip) that the counts must honour. */
static void gen_symmetric(enum ref_lattice L, rng *r, int lo, int hi, cellset *s)
{
    int nt = ref_ntransforms(L);
    for (int tries = 0;; tries++) {
        int k = 1 + rnd(r, nt - 1);
        if (L == REF_CUBIC && rnd(r, 2)) /* flat boards: a turn about z or a flip of the plane */
            k = rnd(r, 2) ? 3 : 1;
        gen_blob(L, r, between(r, 3, hi / 3 > 3 ? hi / 3 : 3), s);
        cellset t = *s;
        for (int step = 0; step < 6; step++) {
            int n = t.n;
            for (int i = 0; i < n; i++)
                add_cell(&t, ref_transform(L, k, t.c[i]));
        }
        if ((t.n >= lo && t.n <= hi && ref_connected(L, t.c, t.n)) || tries > 1000) {
            *s = t;
            return;
        }
    }
}

/* Cut the cells into connected pieces of min..max cells, grown by random
 * floods; owner[i] receives the piece of cell i.  Returns the pieces. */
static int gen_cut(enum ref_lattice L, rng *r, const cellset *s, int min, int max, int *owner)
{
    int np = 0, size[REF_MAXB];
    for (int i = 0; i < s->n; i++)
        owner[i] = -1;
    for (;;) {
        int free_cells[REF_MAXB], nf = 0;
        for (int i = 0; i < s->n; i++)
            if (owner[i] < 0)
                free_cells[nf++] = i;
        if (nf == 0)
            return np;
        int p = np++, target = between(r, min, max);
        owner[free_cells[rnd(r, nf)]] = p;
        size[p] = 1;
        while (size[p] < target) {
            int cand[REF_MAXB * 6], nc = 0;
            for (int i = 0; i < s->n; i++)
                if (owner[i] == p) {
                    ref_cell nb[6];
                    int k = ref_neighbours(L, s->c[i], nb);
                    for (int j = 0; j < k; j++) {
                        int q = find_cell(s->c, s->n, nb[j]);
                        if (q >= 0 && owner[q] < 0)
                            cand[nc++] = q;
                    }
                }
            if (nc == 0)
                break;
            owner[cand[rnd(r, nc)]] = p;
            size[p]++;
        }
        /* a piece stuck small usually joins a neighbour that has room */
        if (size[p] < min && rnd(r, 10) < 8)
            for (int i = 0; i < s->n; i++) {
                if (owner[i] != p)
                    continue;
                ref_cell nb[6];
                int k = ref_neighbours(L, s->c[i], nb), to = -1;
                for (int j = 0; j < k && to < 0; j++) {
                    int q = find_cell(s->c, s->n, nb[j]);
                    if (q >= 0 && owner[q] >= 0 && owner[q] != p && size[owner[q]] + size[p] <= REF_MAXPC)
                        to = owner[q];
                }
                if (to >= 0) {
                    for (int j = 0; j < s->n; j++)
                        if (owner[j] == p)
                            owner[j] = to;
                    size[to] += size[p];
                    np--;
                    break;
                }
            }
    }
}

/* Does transform k map the cells onto themselves, after the translation
 * *d? */
static bool board_symmetry(enum ref_lattice L, const ref_cell *c, int n, int k, ref_cell *d)
{
    ref_cell lo = c[0], tlo = ref_transform(L, k, c[0]);
    for (int i = 1; i < n; i++) {
        ref_cell t = ref_transform(L, k, c[i]);
        if (ref_cell_cmp(L, c[i], lo) < 0)
            lo = c[i];
        if (ref_cell_cmp(L, t, tlo) < 0)
            tlo = t;
    }
    if (!translation(L, tlo, lo, d))
        return false;
    for (int i = 0; i < n; i++)
        if (find_cell(c, n, shift(ref_transform(L, k, c[i]), *d)) < 0)
            return false;
    return true;
}

/* Double a cut region: add its image under a random involution (a flip,
 * or a half turn) moved beside it, with the cut carried over.  The board
 * gets that symmetry and every piece a mirror image or a turned copy: the
 * relabelling of twins and chiral pairs is what this tests. */
static void gen_double(enum ref_lattice L, rng *r, cellset *s, int *owner, int *np)
{
    int cand[48], nc = 0;
    bool flat = true;
    for (int i = 0; i < s->n; i++)
        flat &= s->c[i].z == 0;
    for (int k = 1; k < ref_ntransforms(L); k++) {
        ref_cell e = {1, 2, 3}, t = ref_transform(L, k, ref_transform(L, k, e));
        if (L == REF_CUBIC && !(t.x == e.x && t.y == e.y && t.z == e.z))
            continue; /* not an involution */
        if (L == REF_CUBIC && flat && ref_transform(L, k, (ref_cell){0, 0, 1}).z != 1)
            continue; /* leaves the plane */
        if (L != REF_CUBIC && k != 3 && k < 6)
            continue; /* plane lattices: the half turn and the flips */
        cand[nc++] = k;
    }
    int k = cand[rnd(r, nc)], best = -1;
    ref_cell d = {0, 0, 0}, img[REF_MAXB];
    for (int i = 0; i < s->n; i++)
        img[i] = ref_transform(L, k, s->c[i]);
    int span = 14, dz = L == REF_CUBIC && !flat ? 6 : 0;
    for (int x = -span; x <= span; x++)
        for (int y = -span; y <= span; y++)
            for (int z = -dz; z <= dz; z++) {
                ref_cell t = {x, y, z};
                bool ok = true;
                /* c -> T(c) + t must be an involution (so the doubled board
                 * is symmetric), and the image must miss the region */
                for (int i = 0; i < s->n && ok; i++) {
                    ref_cell back = shift(ref_transform(L, k, shift(img[i], t)), t);
                    ok = same_cell(back, s->c[i]) && find_cell(s->c, s->n, shift(img[i], t)) < 0;
                }
                if (ok && (best < 0 || abs(x) + abs(y) + abs(z) < best)) {
                    best = abs(x) + abs(y) + abs(z);
                    d = t;
                }
            }
    if (best < 0 || 2 * s->n > REF_MAXB)
        return; /* no room: the region stays as it is */
    for (int i = 0, n = s->n; i < n; i++) {
        owner[n + i] = owner[i] + *np;
        s->c[s->n++] = shift(img[i], d);
    }
    *np *= 2;
}

void ref_generate(uint64_t seed, const ref_gen_opts *o, ref_gen *g)
{
    rng r;
    rng_seed(&r, seed);
    memset(g, 0, sizeof *g);
    enum ref_lattice L = o->lattice;
    int lo = o->min_cells, hi = o->max_cells < REF_MAXB ? o->max_cells : REF_MAXB;
    cellset s;
    switch (o->board) {
    case REF_BOARD_PARALLELOGRAM:
        gen_parallelogram(L, &r, lo, hi, &s);
        break;
    case REF_BOARD_HEXAGON: {
        int m = 1;
        for (cellset t; gen_hexagon(L, m + 1, &t), t.n <= hi && m < 6;)
            m++;
        gen_hexagon(L, m, &s);
        break;
    }
    case REF_BOARD_BLOB:
        gen_blob(L, &r, between(&r, lo, hi), &s);
        break;
    case REF_BOARD_SYMMETRIC_BLOB:
        gen_symmetric(L, &r, lo, hi, &s);
        break;
    case REF_BOARD_DOUBLED:
    default:
        gen_blob(L, &r, between(&r, (lo + 1) / 2, hi / 2 > 1 ? hi / 2 : 1), &s);
        break;
    }
    for (int h = 0; h < o->holes && s.n > 4; h++) {
        int i = rnd(&r, s.n);
        s.c[i] = s.c[--s.n];
    }
    /* the cut, each piece's cells (shifted to the origin later) */
    int owner[REF_MAXB], np = gen_cut(L, &r, &s, o->min_piece, o->max_piece, owner);
    if (o->board == REF_BOARD_DOUBLED)
        gen_double(L, &r, &s, owner, &np);
    int psize[REF_MAXB] = {0};
    ref_cell pc[REF_MAXB][REF_MAXPC], canon[REF_MAXB][REF_MAXPC];
    for (int i = 0; i < s.n; i++)
        pc[owner[i]][psize[owner[i]]++] = s.c[i];
    int xf[48], nxf = ref_motions(L, o->motion, o->mirror, xf);
    for (int p = 0; p < np; p++)
        ref_canonical(L, xf, nxf, pc[p], psize[p], canon[p]);
    /* some cut pieces stay where they are, fixed */
    bool fixed[REF_MAXB] = {false};
    for (int f = 0; f < o->fixed && np > 1; f++)
        fixed[rnd(&r, np)] = true;
    /* pieces: equal shapes merged into one piece with a count, or apart */
    int npieces = 0, count[REF_MAXP], shape_of[REF_MAXP];
    for (int p = 0; p < np; p++) {
        int e = -1;
        for (int q = 0; q < npieces && o->merge && !fixed[p] && e < 0; q++)
            if (!fixed[shape_of[q]] && psize[shape_of[q]] == psize[p] &&
                shape_cmp(L, canon[shape_of[q]], canon[p], psize[p]) == 0)
                e = q;
        if (e < 0) {
            if (npieces == REF_MAXP) /* too many: a smaller cut next time */
                abort();
            e = npieces++;
            shape_of[e] = p;
            count[e] = 0;
        }
        count[e]++;
        g->cut_piece[p] = e;
    }
    for (int e = 0; e < npieces; e++) {
        /* each piece shown turned by a random allowed motion, moved */
        int p = shape_of[e], n = psize[p], k = xf[rnd(&r, nxf)];
        ref_cell d = {between(&r, -3, 3), between(&r, -3, 3), 0};
        for (int i = 0; i < n; i++)
            g->piece_cells[e][i] = fixed[p] ? pc[p][i] : shift(ref_transform(L, k, pc[p][i]), d);
        snprintf(g->names[e], sizeof g->names[e], "%s%d", fixed[p] ? "f" : "p", e);
        g->pieces[e] = (ref_piece){g->names[e], g->piece_cells[e], n, count[e], count[e], fixed[p]};
        if (o->ranges && !fixed[p] && rnd(&r, 2)) {
            g->pieces[e].min = rnd(&r, count[e] + 1);
            g->pieces[e].max = count[e] + rnd(&r, 2);
        }
    }
    if (o->ranges && rnd(&r, 2) && npieces < REF_MAXP) { /* an extra piece that may stay out */
        int e = npieces++;
        ref_cell nb[6];
        ref_neighbours(L, (ref_cell){0, 0, 0}, nb);
        g->piece_cells[e][0] = (ref_cell){0, 0, 0};
        g->piece_cells[e][1] = nb[0];
        snprintf(g->names[e], sizeof g->names[e], "extra");
        g->pieces[e] = (ref_piece){g->names[e], g->piece_cells[e], 2, 0, 1 + rnd(&r, 2), false};
    }
    g->ncut = np;
    memcpy(g->board, s.c, sizeof *s.c * (size_t)s.n);
    memcpy(g->cut_owner, owner, sizeof *owner * (size_t)s.n);
    /* optional cells, never under a fixed piece; maybe closed under the
     * board's symmetries, so that the symmetries survive them */
    int nopt = 0;
    for (int k = 0; k < o->optional && nopt < s.n; k++) {
        int i = rnd(&r, s.n);
        if (!fixed[owner[i]] && find_cell(g->optional, nopt, s.c[i]) < 0)
            g->optional[nopt++] = s.c[i];
    }
    for (int k = 1; k < ref_ntransforms(L) && o->optional_symmetric && nopt > 0; k++) {
        ref_cell d;
        if (!board_symmetry(L, s.c, s.n, k, &d))
            continue;
        for (int j = 0, m = nopt; j < m; j++) {
            ref_cell c = shift(ref_transform(L, k, g->optional[j]), d);
            int i = find_cell(s.c, s.n, c);
            if (i >= 0 && !fixed[owner[i]] && find_cell(g->optional, nopt, c) < 0)
                g->optional[nopt++] = c;
        }
    }
    g->pz = (ref_puzzle){L, o->motion, o->mirror, g->board, s.n, g->optional, nopt, g->pieces, npieces};
}
