/*
 * test_diff.c - differential tests of the engine against a brute-force
 * reference on a few hundred random small puzzles.
 *
 * Puzzles.  Each family (2D rectangles, rectangles with holes, random
 * polyomino regions, 3D boxes, random polycube blobs, boards tiled by copies
 * of one shape, fixed pieces (random, or placed symmetrically so that a
 * symmetry may swap them), symmetric cuts (a random half cut into pieces,
 * then mirrored or given a half turn beside itself, so that pieces come in
 * mirror-image or congruent pairs), larger boards, loose puzzles, mirror
 * twins, coloured puzzles and twins listed unevenly, described below)
 * draws its puzzles from a fixed seed with its own xorshift generator, so
 * every run tests the same ~1080 puzzles.  A board is cut into random connected pieces by growing
 * each piece by a random flood from an unassigned cell, so the cut itself is
 * a solution (checked).  Mobile pieces are then turned by a random allowed
 * orientation and moved; pieces of equal shape are usually merged into one
 * entry with a count, sometimes kept as separate entries or split in two;
 * some pieces are made fixed; the rotation mode, mirror flag and the
 * board's position are random.  A draw is redrawn when the reference would
 * exceed REF_CAP tilings or REF_NODES nodes (which keeps every engine run
 * well under a second).
 *
 * Reference.  Independent of the engine: a first-undecided-cell
 * backtracking over (entry, orientation, anchor) with per-entry counts
 * enumerates every raw tiling once (copies of one entry are interchangeable
 * because only the count is decremented).  Loose puzzles: an optional cell
 * that comes first is either left empty (decided, never covered after) or
 * covered by a placement anchored there; a tiling is recorded when every
 * cell is decided and each entry's copies lie in its count range.  A tiling's key is, per board cell in z-y-x order,
 * its entry label and its region id by first appearance.  The rotations and
 * mirror counts are the numbers of classes under the board symmetries
 * (proper ones, or all 48 lattice transforms, that map the board onto
 * itself): a transform maps a tiling region by region, relabelling a
 * region of entry A to A when A allows the new shape, else to the other
 * entry that does and has the rank among those that A has among its twins
 * (entries of A's shape and orientations listed before A: A1, A2 go to
 * B1, B2), whatever their count ranges; the image is equivalent when
 * its key is a raw tiling.  Symmetries of a loose board must map optional
 * cells to optional cells.
 *
 * Uneven family: a quarter (2x4, or 2x2x2) cut into tetrominoes, turned
 * half round beside itself and the whole mirrored beside itself, so that
 * every shape comes twice and its mirror image twice; each shape's two
 * copies become one entry or two at random, and only draws where a chiral
 * shape and its mirror image are listed in different numbers of entries
 * are kept (A x2 against B1, B2; a half are loosened as below).  There a
 * mode whose symmetries mirror the pieces relabels (symmetry.h): the
 * reference unions a tiling with every labelling of its mirrored image in
 * which a region of such a shape takes any entry of its new shape.
 *
 * Loose family: a random board is cut as above, then some cells off the
 * fixed pieces become optional, a few entries get count
 * ranges around their count (min may be 0), and sometimes an extra entry
 * with a range from 0 is added; the cut stays a solution.  Half the
 * optional sets are closed under the board's symmetries, so that the
 * redundancy filter (on for loose puzzles, automatic or on a named piece
 * of at most one copy) has symmetries to break.  Configurations
 * the engine refuses for loose puzzles (FILA, filters, triggers) must be
 * refused with an error.  Classes are counted with union-find.
 *
 * Colours family: a blob, a box or a half doubled by a reflection or a
 * half turn is cut, then coloured (1 to 3 colours): the board at random or
 * (half the boxes) by orbits of its symmetries, the doubled halves with
 * their mirror images' colours, so that symmetries survive; the pieces'
 * cells through a random map of the board's colours, at random, or mostly
 * neutral.  The pairs the cut uses are allowed, so the cut stays a
 * solution, and a few random ones beside them; a quarter of the puzzles
 * are loosened as above.  The reference's own colour handling: a
 * placement fits when each cell's colour (its orientation's, turned with
 * the cells) is neutral, sits on a neutral cell or makes a listed pair; an
 * orientation is a coloured shape; a symmetry must map each free cell to
 * one of its colour and relabels by coloured shape; a tiling's key holds
 * each cell's piece colour.  The summary says in how many puzzles colours
 * removed placements, told two orientations on the same cells apart, and
 * left a symmetry.
 *
 * Engine.  Every puzzle is solved in each mode under many configurations
 * (default, DLX only, FILA from the root and from one level below with
 * orders e/s/f, NOF off, redundancy off or on a named piece, volume off /
 * once / per level, parity trigger, volume trigger, parity filter, fit
 * filter, other orders).  Each reported solution must be a valid tiling
 * (exact cover of the board, allowed orientations, counts, fixed pieces in
 * place), a raw tiling of the reference, and not in a class already
 * reported; the callback count, tsr_stats.solutions and the reference count
 * must agree, and tsr_stats.classes must be the mirror count.
 *
 * A few hand-reduced puzzles that the random tests once failed on run as
 * regressions, with hand-checked counts.
 *
 * On a mismatch the puzzle (expected counts filled in) goes to stderr as
 * JSON with the configuration as tessera CLI flags, and to
 * /tmp/tessera-diff-fail-N.json.  Environment: TSR_DIFF_QUICK=1 runs a few
 * puzzles per family; TSR_DIFF_COUNT=N sets puzzles per family,
 * TSR_DIFF_SEED=S varies the seeds and TSR_DIFF_FAMILY=NAME runs one
 * family (for hunting).
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classcount.h"
#include "engine_configs.h"
#include "tessera/engine.h"
#include "tessera/puzzle.h"

#define MAXB 60        /* board cells (one bit each) */
#define MAXE 40        /* mobile piece entries */
#define MAXFIX 4       /* fixed pieces */
#define MAXPC 8        /* cells of a piece */
#define MAXOR 48       /* orientations of a piece */
#define REF_CAP 6000   /* raw tilings a puzzle may have */
#define REF_NODES 300000L
#define FIXLAB 0xFF    /* key label of fixed pieces */
#define KEYW 3         /* key bytes per board cell: label, region, colour */
#define NCOL 64        /* colour numbers 0..63 */

/* ---- random numbers --------------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static void rng_seed(rng *r, uint64_t seed)
{
    /* splitmix64 to spread small seeds */
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    r->s = (z ^ (z >> 31)) | 1;
}

static uint64_t rng_next(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}

/* Uniform in 0 .. n-1. */
static int rnd(rng *r, int n) { return (int)((rng_next(r) >> 33) % (uint64_t)n); }

/* ---- lattice transforms ----------------------------------------------------- */

typedef struct xform {
    int m[3][3];
    int det;
} xform;

/* All 48 signed permutation matrices: the 24 proper ones first, identity
 * first of all. */
static void make_xforms(xform out[48])
{
    static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    xform all[48];
    int n = 0;
    for (int p = 0; p < 6; p++)
        for (int s = 0; s < 8; s++) {
            xform t;
            memset(&t, 0, sizeof t);
            for (int r = 0; r < 3; r++)
                t.m[r][perm[p][r]] = (s >> r) & 1 ? -1 : 1;
            int (*m)[3] = t.m;
            t.det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                    m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                    m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
            all[n++] = t;
        }
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 48; i++)
            if ((all[i].det > 0) == (pass == 0))
                out[k++] = all[i];
}

static tsr_cell xf_apply(const xform *t, tsr_cell c)
{
    return (tsr_cell){t->m[0][0] * c.x + t->m[0][1] * c.y + t->m[0][2] * c.z,
                      t->m[1][0] * c.x + t->m[1][1] * c.y + t->m[1][2] * c.z,
                      t->m[2][0] * c.x + t->m[2][1] * c.y + t->m[2][2] * c.z};
}

/* The transforms a rotation mode lets a piece use: the proper rotations
 * (all 24, the 4 about z, or the identity), and with mirror each of those
 * after x -> -x. */
static int allowed_xforms(enum tsr_rotations rot, bool mirror, xform *out)
{
    xform all[48];
    make_xforms(all);
    int n = 0;
    for (int i = 0; i < 24; i++) {
        const xform *t = &all[i];
        bool ok = rot == TSR_ROT_ALL || (rot == TSR_ROT_ONE_SIDED && t->m[2][2] == 1) || i == 0;
        if (ok)
            out[n++] = *t;
    }
    if (mirror)
        for (int i = 0, h = n; i < h; i++) {
            out[n] = out[i];
            for (int c = 0; c < 3; c++)
                out[n].m[0][c] = -out[n].m[0][c];
            out[n].det = -out[i].det;
            n++;
        }
    return n;
}

static int cell_cmp(const void *a, const void *b)
{
    const tsr_cell *p = a, *q = b;
    if (p->z != q->z)
        return p->z < q->z ? -1 : 1;
    if (p->y != q->y)
        return p->y < q->y ? -1 : 1;
    return (p->x > q->x) - (p->x < q->x);
}

static tsr_cell min_corner(const tsr_cell *c, int n)
{
    tsr_cell lo = c[0];
    for (int i = 1; i < n; i++) {
        lo.x = c[i].x < lo.x ? c[i].x : lo.x;
        lo.y = c[i].y < lo.y ? c[i].y : lo.y;
        lo.z = c[i].z < lo.z ? c[i].z : lo.z;
    }
    return lo;
}

static bool same_cells(const tsr_cell *a, const tsr_cell *b, int n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* Translate to the origin corner and sort, each colour (col may be NULL)
 * staying with its cell: insertion sort on both arrays. */
static void normalise_col(tsr_cell *c, uint8_t *col, int n)
{
    tsr_cell lo = min_corner(c, n);
    for (int i = 0; i < n; i++)
        c[i] = (tsr_cell){c[i].x - lo.x, c[i].y - lo.y, c[i].z - lo.z};
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && cell_cmp(&c[j - 1], &c[j]) > 0; j--) {
            tsr_cell t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
            if (col) {
                uint8_t u = col[j];
                col[j] = col[j - 1];
                col[j - 1] = u;
            }
        }
}

/* ---- the reference solver ----------------------------------------------------- */

typedef struct rplace {
    uint64_t mask;
    short entry, orient;
} rplace;

typedef struct ref {
    const tsr_puzzle *pz;
    int n;                      /* board cells, sorted z-y-x */
    tsr_cell cell[MAXB];
    uint64_t full, fixedmask;
    int nfix;
    uint64_t fixmask[MAXFIX];
    int ne;                     /* mobile entries, in piece order */
    int piece_of[MAXE];
    int entry_of[MAXE + MAXFIX]; /* piece -> entry, or -1 - fixed index */
    int count[MAXE], lo[MAXE], size[MAXE], norient[MAXE];
    uint64_t optmask;           /* optional cells */
    bool loose;
    tsr_cell orient[MAXE][MAXOR][MAXPC];
    uint8_t ocol[MAXE][MAXOR][MAXPC]; /* each orientation's cell colours (0 neutral) */
    uint8_t bcol[MAXB];         /* board colours */
    uint8_t fixcol[MAXB];       /* the fixed pieces' colours on their board cells */
    bool allow[NCOL][NCOL];     /* piece colour may sit on board colour */
    int ncop;                   /* mobile copies at most = placements per tiling */
    rplace *pl;                 /* placements sorted by anchor cell */
    int npl, first[MAXB + 1];
    /* board symmetries: cell map and relabelling per (entry, orientation) */
    int nsym, nproper;
    int cmap[48][MAXB];
    signed char relab[48][MAXE][MAXOR];
    signed char relab0[48][MAXE][MAXOR]; /* the first entry with the new shape */
    int head[MAXE];             /* first twin of each entry */
    bool uneven[MAXE];          /* twins listed unevenly against the mirror side */
    bool any_uneven;
    bool relabel_on[2];         /* rotations, mirror: a symmetry of the mode turns them */
    bool mixed[2];              /* ... but not all chiral shapes alike: the rank rule */
    /* raw tilings */
    int nt, cap;
    rplace *til;                /* nt * ncop */
    int *tlen;                  /* nt: placements of each tiling */
    uint8_t *keys;              /* nt * 2n */
    int *ht;
    int htsize;
    int *cls[2];                /* class representative: rotations, mirror */
    long long counts[3];
    long long paired;           /* mirror classes by the rank rule alone */
    long nodes, maxnodes;
    bool overflow;
    int color_cut;              /* placements the colours removed */
    bool color_twins;           /* an entry has two orientations on the same cells */
} ref;

static int board_index(const ref *R, tsr_cell c)
{
    const tsr_cell *p = bsearch(&c, R->cell, (size_t)R->n, sizeof c, cell_cmp);
    return p ? (int)(p - R->cell) : -1;
}

/* Mask of cells on the board, or 0 when one is off the board or repeated. */
static uint64_t cells_mask(const ref *R, const tsr_cell *c, int n)
{
    uint64_t m = 0;
    for (int i = 0; i < n; i++) {
        int b = board_index(R, c[i]);
        if (b < 0 || (m >> b) & 1)
            return 0;
        m |= 1ull << b;
    }
    return m;
}

static uint64_t map_mask(const ref *R, int s, uint64_t m)
{
    uint64_t out = 0;
    for (; m; m &= m - 1)
        out |= 1ull << R->cmap[s][__builtin_ctzll(m)];
    return out;
}

/* Key of a tiling: np mobile regions (labels, masks) plus fixed masks,
 * and the colour of the piece on each board cell (col, per board cell). */
static void make_key(const ref *R, int np, const int *lab, const uint64_t *mask,
                     const uint64_t *fixm, const uint8_t *col, uint8_t *key)
{
    int reg[MAXB], rid[MAXB + MAXFIX];
    for (int i = 0; i < R->n; i++)
        reg[i] = -1;
    for (int i = 0; i < np; i++)
        for (uint64_t m = mask[i]; m; m &= m - 1)
            reg[__builtin_ctzll(m)] = i;
    for (int f = 0; f < R->nfix; f++)
        for (uint64_t m = fixm[f]; m; m &= m - 1)
            reg[__builtin_ctzll(m)] = np + f;
    for (int i = 0; i < np + R->nfix; i++)
        rid[i] = -1;
    int next = 0;
    for (int c = 0; c < R->n; c++) {
        int r = reg[c];
        if (r < 0) { /* uncovered: an optional cell left empty */
            key[KEYW * c] = key[KEYW * c + 1] = key[KEYW * c + 2] = 0xFE;
            continue;
        }
        if (rid[r] < 0)
            rid[r] = next++;
        key[KEYW * c] = (uint8_t)(r < np ? lab[r] + 1 : FIXLAB);
        key[KEYW * c + 1] = (uint8_t)rid[r];
        key[KEYW * c + 2] = col[c];
    }
}

static uint32_t key_hash(const uint8_t *k, int len)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < len; i++)
        h = (h ^ k[i]) * 16777619u;
    return h;
}

/* Index of the raw tiling with this key, or -1. */
static int ref_find(const ref *R, const uint8_t *key)
{
    int len = KEYW * R->n;
    for (uint32_t h = key_hash(key, len) & (uint32_t)(R->htsize - 1);; h = (h + 1) & (uint32_t)(R->htsize - 1)) {
        int t = R->ht[h];
        if (t < 0)
            return -1;
        if (memcmp(R->keys + (size_t)t * len, key, (size_t)len) == 0)
            return t;
    }
}

/* The colour on each board cell of a tiling's placements and the fixed
 * pieces: a placement's k-th cell in z-y-x order is its orientation's k-th
 * cell, and the board's cell ids are in that order too. */
static void tiling_colors(const ref *R, const rplace *pl, int n, uint8_t *col)
{
    memcpy(col, R->fixcol, (size_t)R->n);
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (uint64_t m = pl[i].mask; m; m &= m - 1)
            col[__builtin_ctzll(m)] = R->ocol[pl[i].entry][pl[i].orient][k++];
    }
}

static void ref_record(ref *R, const rplace *stack, int depth)
{
    if (R->nt == R->cap) {
        R->overflow = true;
        return;
    }
    int t = R->nt++, len = KEYW * R->n, lab[MAXB];
    uint64_t mask[MAXB];
    uint8_t col[MAXB];
    memcpy(R->til + (size_t)t * R->ncop, stack, (size_t)depth * sizeof *stack);
    R->tlen[t] = depth;
    for (int i = 0; i < depth; i++) {
        lab[i] = stack[i].entry;
        mask[i] = stack[i].mask;
    }
    tiling_colors(R, stack, depth, col);
    uint8_t *key = R->keys + (size_t)t * len;
    make_key(R, depth, lab, mask, R->fixmask, col, key);
    ck_assert_int_eq(ref_find(R, key), -1); /* each tiling is enumerated once */
    uint32_t h = key_hash(key, len) & (uint32_t)(R->htsize - 1);
    while (R->ht[h] >= 0)
        h = (h + 1) & (uint32_t)(R->htsize - 1);
    R->ht[h] = t;
}

static void ref_rec(ref *R, uint64_t occ, rplace *stack, int depth, int *left)
{
    if (R->overflow || ++R->nodes > R->maxnodes) {
        R->overflow = true;
        return;
    }
    if (occ == R->full) { /* occ: covered or decided empty */
        for (int e = 0; e < R->ne; e++)
            if (R->count[e] - left[e] < R->lo[e])
                return;
        ref_record(R, stack, depth);
        return;
    }
    int c = __builtin_ctzll(~occ & R->full);
    if ((R->optmask >> c) & 1) /* leave it empty */
        ref_rec(R, occ | 1ull << c, stack, depth, left);
    for (int i = R->first[c]; i < R->first[c + 1]; i++) {
        const rplace *p = &R->pl[i];
        if (left[p->entry] == 0 || (p->mask & occ))
            continue;
        left[p->entry]--;
        stack[depth] = *p;
        ref_rec(R, occ | p->mask, stack, depth + 1, left);
        left[p->entry]++;
    }
}

static int uf_find(int *par, int i)
{
    while (par[i] != i)
        i = par[i] = par[par[i]];
    return i;
}

/* Index of the image of tiling t under symmetry s, or -1. */
static int ref_image(const ref *R, int t, int s)
{
    int lab[MAXB];
    uint64_t mask[MAXB], fixm[MAXFIX];
    uint8_t key[KEYW * MAXB], col[MAXB], tcol[MAXB];
    const rplace *til = R->til + (size_t)t * R->ncop;
    for (int i = 0; i < R->tlen[t]; i++) {
        lab[i] = R->relab[s][til[i].entry][til[i].orient];
        if (lab[i] < 0)
            return -1;
        mask[i] = map_mask(R, s, til[i].mask);
    }
    for (int f = 0; f < R->nfix; f++)
        fixm[f] = map_mask(R, s, R->fixmask[f]);
    /* colours move with their cells */
    tiling_colors(R, til, R->tlen[t], col);
    for (int c = 0; c < R->n; c++)
        tcol[R->cmap[s][c]] = col[c];
    make_key(R, R->tlen[t], lab, mask, fixm, tcol, key);
    return ref_find(R, key);
}

static void ref_free(ref *R)
{
    if (R == NULL)
        return;
    free(R->pl);
    free(R->til);
    free(R->tlen);
    free(R->keys);
    free(R->ht);
    free(R->cls[0]);
    free(R->cls[1]);
    free(R);
}

/* Does entry b allow the normalised shape sh with the colours shc (of
 * b's size)? */
static bool has_shape(const ref *R, int b, const tsr_cell *sh, const uint8_t *shc)
{
    for (int j = 0; j < R->norient[b]; j++)
        if (same_cells(R->orient[b][j], sh, R->size[b]) &&
            memcmp(R->ocol[b][j], shc, (size_t)R->size[b]) == 0)
            return true;
    return false;
}

/* How many entries before e are its twins: the same coloured shape with
 * the same allowed orientations, listed apart (A1 and A2). */
static int twin_rank(const ref *R, int e)
{
    int r = 0;
    for (int b = 0; b < e; b++)
        r += R->size[b] == R->size[e] && R->norient[b] == R->norient[e] &&
             has_shape(R, b, R->orient[e][0], R->ocol[e][0]);
    return r;
}

/* Board symmetries and the relabelling each one implies.  A symmetry maps
 * optional cells to optional ones and each free cell to one of its colour
 * (a placement's colours then still sit where they land); the fixed
 * pieces' cells and colours must map onto theirs, which the keys see. */
static void ref_symmetries(ref *R, const xform all[48])
{
    tsr_cell lo = min_corner(R->cell, R->n), img[MAXB];
    R->nsym = R->nproper = 0;
    for (int k = 0; k < 48; k++) {
        for (int i = 0; i < R->n; i++)
            img[i] = xf_apply(&all[k], R->cell[i]);
        tsr_cell tlo = min_corner(img, R->n);
        int s = R->nsym;
        bool ok = true;
        for (int i = 0; i < R->n && ok; i++) {
            tsr_cell q = {img[i].x - tlo.x + lo.x, img[i].y - tlo.y + lo.y, img[i].z - tlo.z + lo.z};
            ok = (R->cmap[s][i] = board_index(R, q)) >= 0 &&
                 ((R->optmask >> i) & 1) == ((R->optmask >> R->cmap[s][i]) & 1) &&
                 (((R->fixedmask >> i) & 1) || R->bcol[i] == R->bcol[R->cmap[s][i]]);
        }
        if (!ok)
            continue;
        for (int e = 0; e < R->ne; e++)
            for (int o = 0; o < R->norient[e]; o++) {
                tsr_cell sh[MAXPC];
                uint8_t shc[MAXPC];
                for (int i = 0; i < R->size[e]; i++) {
                    sh[i] = xf_apply(&all[k], R->orient[e][o][i]);
                    shc[i] = R->ocol[e][o][i];
                }
                normalise_col(sh, shc, R->size[e]);
                /* e itself when it allows the shape, else the entry of the
                 * same rank among the others that do as e among its twins,
                 * whatever the count ranges (an image out of range is no
                 * raw tiling, so it joins no class) */
                int to = has_shape(R, e, sh, shc) ? e : -1, to0 = to;
                for (int b = 0, r = twin_rank(R, e); b < R->ne && to < 0; b++)
                    if (R->size[b] == R->size[e] && has_shape(R, b, sh, shc) && r-- == 0)
                        to = b;
                for (int b = 0; b < R->ne && to0 < 0; b++)
                    if (R->size[b] == R->size[e] && has_shape(R, b, sh, shc))
                        to0 = b;
                R->relab[s][e][o] = (signed char)to;
                R->relab0[s][e][o] = (signed char)to0;
            }
        if (k < 24)
            R->nproper++;
        R->nsym++;
    }
}

/* Twins listed unevenly: an entry's shape whose entries (it and its
 * twins) are more or fewer than the entries of the shape a board
 * symmetry turns it into (A x2 against B1 and B2).  A mode whose
 * symmetries include one that turns pieces into their mirror images then
 * lets such a region take any entry of its new shape (the engine's rule,
 * in symmetry.h, which this reaches by a different road: every labelling
 * of the turned tiling joins its class).  When a symmetry of the mode
 * turns some chiral shapes but not others, the rank rule stays. */
static void ref_uneven(ref *R)
{
    int size[MAXE] = {0};
    bool chiral[MAXE] = {false};
    for (int e = 0; e < R->ne; e++) {
        R->head[e] = e;
        for (int b = 0; b < e && R->head[e] == e; b++)
            if (R->size[b] == R->size[e] && R->norient[b] == R->norient[e] &&
                has_shape(R, b, R->orient[e][0], R->ocol[e][0]))
                R->head[e] = b;
        size[R->head[e]]++;
    }
    for (int s = 1; s < R->nsym; s++)
        for (int e = 0; e < R->ne; e++) {
            int to = R->relab0[s][e][0], h = R->head[e];
            if (to >= 0 && R->head[to] == h)
                continue;
            chiral[h] = true;
            if (to >= 0 && size[R->head[to]] != size[h])
                for (int b = 0; b < R->ne; b++)
                    if (R->head[b] == h || R->head[b] == R->head[to])
                        R->uneven[b] = R->any_uneven = true;
        }
    for (int s = 1; s < R->nsym && R->any_uneven; s++) {
        int changed = 0, nchiral = 0;
        for (int e = 0; e < R->ne; e++) {
            if (R->head[e] != e || !chiral[e])
                continue;
            int to = R->relab0[s][e][0];
            nchiral++;
            changed += to < 0 || R->head[to] != e;
        }
        for (int m = s < R->nproper ? 0 : 1; m < 2 && changed > 0; m++)
            R->relabel_on[m] = true;
        for (int m = s < R->nproper ? 0 : 1; m < 2 && changed > 0 && changed < nchiral; m++)
            R->mixed[m] = true;
    }
    for (int m = 0; m < 2; m++)
        R->relabel_on[m] &= !R->mixed[m];
}

/* Union tiling t with every labelling of its image under symmetry s in
 * which a region of an unevenly listed entry turned into the other shape
 * takes any entry of that shape, and the others the rank rule's. */
static void ref_union_relabelled(const ref *R, int *par, int t, int s)
{
    int lab[MAXB], choice[MAXB], nchoice[MAXB], alt[MAXB][MAXE];
    uint64_t mask[MAXB], fixm[MAXFIX];
    uint8_t key[KEYW * MAXB], col[MAXB], tcol[MAXB];
    const rplace *til = R->til + (size_t)t * R->ncop;
    int np = R->tlen[t];
    for (int i = 0; i < np; i++) {
        int e = til[i].entry, o = til[i].orient;
        nchoice[i] = 0;
        choice[i] = 0;
        int to = R->relab0[s][e][o];
        if (R->uneven[e] && to >= 0 && R->head[to] != R->head[e]) { /* turned over */
            for (int b = 0; b < R->ne; b++)
                if (R->head[b] == R->head[to])
                    alt[i][nchoice[i]++] = b;
        } else if (R->relab[s][e][o] >= 0) {
            alt[i][nchoice[i]++] = R->relab[s][e][o];
        }
        if (nchoice[i] == 0)
            return;
        mask[i] = map_mask(R, s, til[i].mask);
    }
    for (int f = 0; f < R->nfix; f++)
        fixm[f] = map_mask(R, s, R->fixmask[f]);
    tiling_colors(R, til, np, col);
    for (int c = 0; c < R->n; c++)
        tcol[R->cmap[s][c]] = col[c];
    for (;;) {
        for (int i = 0; i < np; i++)
            lab[i] = alt[i][choice[i]];
        make_key(R, np, lab, mask, fixm, tcol, key);
        int u = ref_find(R, key);
        if (u >= 0)
            par[uf_find(par, t)] = uf_find(par, u);
        int i = 0;
        while (i < np && ++choice[i] == nchoice[i])
            choice[i++] = 0;
        if (i == np)
            return;
    }
}

/* Classes of the raw tilings under the symmetries 0..end-1, relabelled
 * or by the rank rule, into cls (a representative per tiling); returns
 * how many. */
static long long ref_classes(const ref *R, int end, bool relabel, int *cls)
{
    int *par = malloc((size_t)(R->nt + 1) * sizeof *par);
    ck_assert_ptr_nonnull(par);
    for (int t = 0; t < R->nt; t++)
        par[t] = t;
    for (int t = 0; t < R->nt; t++)
        for (int s = 1; s < end; s++) {
            if (relabel) {
                ref_union_relabelled(R, par, t, s);
                continue;
            }
            int u = ref_image(R, t, s);
            if (u >= 0)
                par[uf_find(par, t)] = uf_find(par, u);
        }
    long long nc = 0;
    for (int t = 0; t < R->nt; t++) {
        cls[t] = uf_find(par, t);
        nc += cls[t] == t;
    }
    free(par);
    return nc;
}

/* Enumerate the puzzle's raw tilings and count the classes.  Returns NULL
 * when the puzzle is beyond the reference's limits. */
static ref *ref_solve(const tsr_puzzle *pz, int cap, long maxnodes)
{
    if (pz->ncells > MAXB || pz->npieces > MAXE)
        return NULL;
    ref *R = calloc(1, sizeof *R);
    ck_assert_ptr_nonnull(R);
    R->pz = pz;
    R->cap = cap;
    R->maxnodes = maxnodes;
    R->n = pz->ncells;
    memcpy(R->cell, pz->cells, (size_t)R->n * sizeof *R->cell);
    qsort(R->cell, (size_t)R->n, sizeof *R->cell, cell_cmp);
    R->full = R->n == 64 ? ~0ull : (1ull << R->n) - 1;
    R->optmask = cells_mask(R, pz->optional, pz->noptional);
    R->loose = pz->noptional > 0;
    /* colours: the board's by cell, the rule from the listed pairs (a
     * neutral side goes with anything) */
    for (int i = 0; pz->colors != NULL && i < pz->ncells; i++)
        R->bcol[board_index(R, pz->cells[i])] = pz->colors[i];
    for (int p = 0; p < NCOL; p++)
        for (int b = 0; b < NCOL; b++)
            R->allow[p][b] = p == 0 || b == 0;
    for (int i = 0; i < pz->nallowed; i++)
        R->allow[pz->allowed[i].piece][pz->allowed[i].board] = true;
    xform all[48], allowed[48];
    make_xforms(all);
    int nallowed = allowed_xforms(pz->rotations, pz->mirror, allowed);
    for (int p = 0; p < pz->npieces; p++) {
        const tsr_piece *pc = &pz->pieces[p];
        if (pc->ncells > MAXPC) {
            ref_free(R);
            return NULL;
        }
        if (pc->fixed) {
            ck_assert_int_lt(R->nfix, MAXFIX);
            R->fixmask[R->nfix] = cells_mask(R, pc->cells, pc->ncells);
            R->fixedmask |= R->fixmask[R->nfix];
            for (int i = 0; pc->colors != NULL && i < pc->ncells; i++)
                R->fixcol[board_index(R, pc->cells[i])] = pc->colors[i];
            R->entry_of[p] = -1 - R->nfix++;
            continue;
        }
        int e = R->ne++;
        R->piece_of[e] = p;
        R->entry_of[p] = e;
        R->count[e] = pc->count;
        R->lo[e] = pc->count_min;
        R->loose |= pc->count_min != pc->count;
        R->size[e] = pc->ncells;
        R->ncop += pc->count;
        for (int a = 0; a < nallowed; a++) {
            tsr_cell *o = R->orient[e][R->norient[e]];
            uint8_t *oc = R->ocol[e][R->norient[e]];
            for (int i = 0; i < pc->ncells; i++) {
                o[i] = xf_apply(&allowed[a], pc->cells[i]);
                oc[i] = pc->colors ? pc->colors[i] : 0;
            }
            normalise_col(o, oc, pc->ncells);
            bool dup = false;
            for (int j = 0; j < R->norient[e] && !dup; j++)
                dup = same_cells(R->orient[e][j], o, pc->ncells) &&
                      memcmp(R->ocol[e][j], oc, (size_t)pc->ncells) == 0;
            for (int j = 0; j < R->norient[e] && !dup; j++)
                R->color_twins |= same_cells(R->orient[e][j], o, pc->ncells);
            if (!dup)
                R->norient[e]++;
        }
    }
    /* placements: orientation's first cell on each free anchor cell */
    int maxpl = 0;
    for (int e = 0; e < R->ne; e++)
        maxpl += R->norient[e] * R->n;
    R->pl = malloc((size_t)(maxpl + 1) * sizeof *R->pl);
    ck_assert_ptr_nonnull(R->pl);
    for (int a = 0; a < R->n; a++) {
        R->first[a] = R->npl;
        if ((R->fixedmask >> a) & 1)
            continue;
        for (int e = 0; e < R->ne; e++)
            for (int o = 0; o < R->norient[e]; o++) {
                const tsr_cell *oc = R->orient[e][o];
                tsr_cell c[MAXPC];
                for (int i = 0; i < R->size[e]; i++)
                    c[i] = (tsr_cell){oc[i].x - oc[0].x + R->cell[a].x, oc[i].y - oc[0].y + R->cell[a].y,
                                      oc[i].z - oc[0].z + R->cell[a].z};
                uint64_t m = cells_mask(R, c, R->size[e]);
                bool fits = m && !(m & R->fixedmask);
                for (int i = 0; fits && i < R->size[e]; i++)
                    fits = R->allow[R->ocol[e][o][i]][R->bcol[board_index(R, c[i])]];
                R->color_cut += m && !(m & R->fixedmask) && !fits;
                if (fits)
                    R->pl[R->npl++] = (rplace){m, (short)e, (short)o};
            }
    }
    R->first[R->n] = R->npl;
    ref_symmetries(R, all);
    ref_uneven(R);
    /* enumerate */
    R->til = malloc((size_t)cap * (size_t)(R->ncop + 1) * sizeof *R->til);
    R->tlen = malloc((size_t)cap * sizeof *R->tlen);
    R->keys = malloc((size_t)cap * KEYW * (size_t)R->n);
    for (R->htsize = 16; R->htsize < 2 * cap;)
        R->htsize *= 2;
    R->ht = malloc((size_t)R->htsize * sizeof *R->ht);
    ck_assert(R->til && R->tlen && R->keys && R->ht);
    for (int i = 0; i < R->htsize; i++)
        R->ht[i] = -1;
    rplace stack[MAXB];
    int left[MAXE];
    memcpy(left, R->count, sizeof left);
    ck_assert_int_le(R->ncop, MAXB);
    ref_rec(R, R->fixedmask, stack, 0, left);
    if (R->overflow)
        return R;
    /* classes: under the proper symmetries, then under all of them (by
     * the rank rule too: the classes the engine reports in other modes) */
    R->cls[0] = malloc((size_t)(R->nt + 1) * sizeof(int));
    R->cls[1] = malloc((size_t)(R->nt + 1) * sizeof(int));
    ck_assert(R->cls[0] && R->cls[1]);
    R->counts[TSR_UNIQUE_RAW] = R->nt;
    R->counts[TSR_UNIQUE_ROTATIONS] = ref_classes(R, R->nproper, R->relabel_on[0], R->cls[0]);
    R->paired = ref_classes(R, R->nsym, false, R->cls[1]);
    R->counts[TSR_UNIQUE_MIRROR] =
        R->relabel_on[1] ? ref_classes(R, R->nsym, true, R->cls[1]) : R->paired;
    return R;
}

/* The classes a run in `mode` reports (tsr_stats.classes): the mirror
 * classes by the rank rule, or the mode's own where it relabels. */
static long long ref_reported_classes(const ref *R, int mode)
{
    if (mode == TSR_UNIQUE_MIRROR)
        return R->counts[TSR_UNIQUE_MIRROR];
    if (mode == TSR_UNIQUE_ROTATIONS && R->relabel_on[0])
        return R->counts[TSR_UNIQUE_ROTATIONS];
    return R->paired;
}

/* ---- puzzle generation ----------------------------------------------------------- */

typedef struct gen {
    int n;
    tsr_cell cell[MAXB];
    int assign[MAXB];   /* cut piece of each cell, -1 before the cut */
    int np;             /* pieces; the first nfixed are fixed */
    int nfixed;
    bool dims3;
    bool colored;       /* bcol and pcol hold colours */
    uint8_t bcol[MAXB]; /* the board's colour of each cell */
    uint8_t pcol[MAXB]; /* the colour of the cut piece's cell there */
} gen;

static int gen_find(const gen *g, tsr_cell c)
{
    for (int i = 0; i < g->n; i++)
        if (g->cell[i].x == c.x && g->cell[i].y == c.y && g->cell[i].z == c.z)
            return i;
    return -1;
}

static const tsr_cell dirs[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};

static void gen_box(gen *g, int w, int h, int d)
{
    g->n = 0;
    g->dims3 = d > 1;
    for (int z = 0; z < d; z++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                g->assign[g->n] = -1;
                g->cell[g->n++] = (tsr_cell){x, y, z};
            }
}

/* A random connected region of n cells (polyomino, or polycube when 3D). */
static void gen_blob(gen *g, rng *r, int n, bool dims3)
{
    g->n = 1;
    g->dims3 = dims3;
    g->cell[0] = (tsr_cell){0, 0, 0};
    while (g->n < n) {
        tsr_cell c = g->cell[rnd(r, g->n)], d = dirs[rnd(r, dims3 ? 6 : 4)];
        tsr_cell q = {c.x + d.x, c.y + d.y, c.z + d.z};
        if (gen_find(g, q) < 0 && (!dims3 || (abs(q.x) < 2 && abs(q.y) < 2 && abs(q.z) < 2)))
            g->cell[g->n++] = q;
    }
    for (int i = 0; i < g->n; i++)
        g->assign[i] = -1;
}

static void gen_remove(gen *g, rng *r, int k)
{
    for (int j = 0; j < k && g->n > 4; j++) {
        int i = rnd(r, g->n);
        g->cell[i] = g->cell[--g->n];
        g->assign[i] = g->assign[g->n];
    }
}

/* Cut the unassigned cells into connected pieces of minsz..maxsz cells
 * (smaller where a flood gets stuck; lone cells usually join a neighbour).
 * Pieces already assigned (the first g->np) are kept as they are. */
static void gen_cut(gen *g, rng *r, int minsz, int maxsz)
{
    int size[MAXB];
    for (int p = 0; p < g->np; p++)
        size[p] = MAXPC; /* never grown */
    for (;;) {
        int free_cells[MAXB], nf = 0;
        for (int i = 0; i < g->n; i++)
            if (g->assign[i] < 0)
                free_cells[nf++] = i;
        if (nf == 0)
            break;
        int p = g->np++, target = minsz + rnd(r, maxsz - minsz + 1);
        g->assign[free_cells[rnd(r, nf)]] = p;
        size[p] = 1;
        while (size[p] < target) {
            int cand[MAXB * 6], nc = 0;
            for (int i = 0; i < g->n; i++)
                if (g->assign[i] == p)
                    for (int d = 0; d < 6; d++) {
                        tsr_cell q = {g->cell[i].x + dirs[d].x, g->cell[i].y + dirs[d].y,
                                      g->cell[i].z + dirs[d].z};
                        int j = gen_find(g, q);
                        if (j >= 0 && g->assign[j] < 0)
                            cand[nc++] = j;
                    }
            if (nc == 0)
                break;
            g->assign[cand[rnd(r, nc)]] = p;
            size[p]++;
        }
        if (size[p] == 1 && rnd(r, 10) < 7) {
            int i = 0;
            while (g->assign[i] != p)
                i++;
            for (int d = 0; d < 6; d++) {
                tsr_cell q = {g->cell[i].x + dirs[d].x, g->cell[i].y + dirs[d].y, g->cell[i].z + dirs[d].z};
                int j = gen_find(g, q);
                if (j >= 0 && g->assign[j] >= g->nfixed && g->assign[j] != p &&
                    size[g->assign[j]] < MAXPC) {
                    size[g->assign[j]]++;
                    g->assign[i] = g->assign[j];
                    g->np--;
                    break;
                }
            }
        }
    }
}

/* Double a cut region by a reflection (x -> -x) or a half turn about the z
 * axis, placed beside it: the board and its cut become symmetric, and every
 * piece gets a mirror image or a turned copy. */
static void gen_double(gen *g, bool half_turn)
{
    int xmax = g->cell[0].x, ymin = g->cell[0].y, ymax = g->cell[0].y, n = g->n, np = g->np;
    for (int i = 1; i < n; i++) {
        xmax = g->cell[i].x > xmax ? g->cell[i].x : xmax;
        ymin = g->cell[i].y < ymin ? g->cell[i].y : ymin;
        ymax = g->cell[i].y > ymax ? g->cell[i].y : ymax;
    }
    for (int i = 0; i < n; i++) {
        tsr_cell c = g->cell[i];
        g->cell[n + i] = (tsr_cell){2 * xmax + 1 - c.x, half_turn ? ymin + ymax - c.y : c.y, c.z};
        g->assign[n + i] = g->assign[i] + np;
        g->bcol[n + i] = g->bcol[i]; /* the colours too: a symmetric colouring */
        g->pcol[n + i] = g->pcol[i];
    }
    g->n = 2 * n;
    g->np = 2 * np;
}

/* Canonical form of a coloured shape under the allowed transforms (the
 * smallest normalised image, cells first, then colours), for grouping
 * equal pieces. */
static void canon(const tsr_cell *c, const uint8_t *col, int n, const xform *al, int nal,
                  tsr_cell *out, uint8_t *outc)
{
    for (int a = 0; a < nal; a++) {
        tsr_cell t[MAXPC];
        uint8_t tc[MAXPC];
        for (int i = 0; i < n; i++) {
            t[i] = xf_apply(&al[a], c[i]);
            tc[i] = col[i];
        }
        normalise_col(t, tc, n);
        int d = memcmp(t, out, (size_t)n * sizeof *t);
        if (a == 0 || d < 0 || (d == 0 && memcmp(tc, outc, (size_t)n) < 0)) {
            memcpy(out, t, (size_t)n * sizeof *t);
            memcpy(outc, tc, (size_t)n);
        }
    }
}

typedef struct gen_opts {
    int pfix;           /* percent: make 1-2 pieces fixed */
    int pmerge;         /* percent: merge a group of equal pieces into one entry */
    bool shift_board;   /* may move the board off the origin */
} gen_opts;

/* Build the puzzle from a cut board.  `entry_of_cut` receives, per cut
 * piece, the index of the puzzle piece it became. */
static tsr_puzzle *gen_puzzle(const gen *g, rng *r, enum tsr_rotations rot, bool mirror,
                              const gen_opts *go, int *entry_of_cut)
{
    xform al[48], plane[48];
    int nal = allowed_xforms(rot, mirror, al), nplane = 0;
    for (int a = 0; a < nal; a++)
        if (g->dims3 || abs(al[a].m[2][2]) == 1)
            plane[nplane++] = al[a];
    tsr_cell off = {0, 0, 0};
    if (go->shift_board && rnd(r, 3) == 0)
        off = (tsr_cell){rnd(r, 7) - 3, rnd(r, 7) - 3, g->dims3 ? rnd(r, 7) - 3 : 0};
    /* pieces of the cut */
    int np = g->np, psize[MAXB];
    tsr_cell pc[MAXB][MAXPC], cf[MAXB][MAXPC];
    uint8_t pcc[MAXB][MAXPC], cfc[MAXB][MAXPC]; /* their colours */
    bool fixed[MAXB] = {false};
    for (int p = 0; p < g->nfixed; p++)
        fixed[p] = true;
    for (int p = 0; p < np; p++)
        psize[p] = 0;
    for (int i = 0; i < g->n; i++) {
        int p = g->assign[i];
        ck_assert_int_lt(psize[p], MAXPC);
        pcc[p][psize[p]] = g->colored ? g->pcol[i] : 0;
        pc[p][psize[p]++] = (tsr_cell){g->cell[i].x + off.x, g->cell[i].y + off.y, g->cell[i].z + off.z};
    }
    if (g->nfixed == 0 && np >= 2 && rnd(r, 100) < go->pfix) {
        int k = np >= 4 && rnd(r, 3) == 0 ? 2 : 1;
        for (int j = 0; j < k; j++)
            fixed[rnd(r, np)] = true;
    }
    for (int p = 0; p < np; p++)
        if (!fixed[p])
            canon(pc[p], pcc[p], psize[p], al, nal, cf[p], cfc[p]);
    /* group equal mobile shapes into entries */
    int group[MAXB], ng = 0, gsize[MAXB], grep[MAXB];
    for (int p = 0; p < np; p++) {
        group[p] = -1;
        if (fixed[p])
            continue;
        for (int q = 0; q < p && group[p] < 0; q++)
            if (!fixed[q] && psize[q] == psize[p] && same_cells(cf[q], cf[p], psize[p]) &&
                memcmp(cfc[q], cfc[p], (size_t)psize[p]) == 0)
                group[p] = group[q];
        if (group[p] < 0) {
            grep[ng] = p;
            gsize[ng] = 0;
            group[p] = ng++;
        }
        gsize[group[p]]++;
    }
    /* each group becomes 1, 2 or gsize entries */
    int nentry = 0, ecount[MAXB], eshape[MAXB], ent_of_member[MAXB];
    for (int k = 0; k < ng; k++) {
        int n = gsize[k], parts;
        int cnt[MAXB];
        if (n == 1 || rnd(r, 100) < go->pmerge) {
            parts = 1;
            cnt[0] = n;
        } else if (n == 2 || rnd(r, 2)) {
            parts = n;
            for (int j = 0; j < n; j++)
                cnt[j] = 1;
        } else {
            parts = 2;
            cnt[0] = 1 + rnd(r, n - 1);
            cnt[1] = n - cnt[0];
        }
        int base = nentry;
        for (int j = 0; j < parts; j++) {
            ecount[nentry] = cnt[j];
            eshape[nentry] = grep[k];
            nentry++;
        }
        /* members of the group go to the group's entries in turn */
        int j = 0, used = 0;
        for (int p = 0; p < np; p++)
            if (group[p] == k) {
                if (used == cnt[j]) {
                    j++;
                    used = 0;
                }
                ent_of_member[p] = base + j;
                used++;
            }
    }
    /* puzzle pieces: entries and fixed pieces in random order */
    int order[MAXB], norder = 0;
    for (int e = 0; e < nentry; e++)
        order[norder++] = e;
    for (int p = 0; p < np; p++)
        if (fixed[p])
            order[norder++] = MAXB + p;
    for (int i = norder - 1; i > 0; i--) {
        int j = rnd(r, i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    tsr_puzzle *pz = tsr_puzzle_new();
    ck_assert_ptr_nonnull(pz);
    pz->rotations = rot;
    pz->mirror = mirror;
    for (int i = 0; i < g->n; i++)
        ck_assert_int_eq(tsr_puzzle_add_board_cell(pz, (tsr_cell){g->cell[i].x + off.x, g->cell[i].y + off.y,
                                                                  g->cell[i].z + off.z}),
                         0);
    if (g->colored) { /* the board's colours, and every pair the cut uses */
        ck_assert_int_eq(tsr_puzzle_set_board_colors(pz, g->bcol), 0);
        for (int i = 0; i < g->n; i++)
            if (g->pcol[i] && g->bcol[i])
                ck_assert_int_eq(tsr_puzzle_allow_colors(pz, g->pcol[i], g->bcol[i]), 0);
    }
    int piece_of_entry[MAXB], nmob = 0, nfix = 0;
    for (int i = 0; i < norder; i++) {
        char name[16];
        int idx;
        if (order[i] >= MAXB) {
            int p = order[i] - MAXB;
            snprintf(name, sizeof name, "fix%d", nfix++);
            idx = tsr_puzzle_add_piece(pz, name, pc[p], psize[p], 1, true);
            entry_of_cut[p] = idx;
            if (idx >= 0 && g->colored)
                ck_assert_int_eq(tsr_puzzle_set_piece_colors(pz, idx, pcc[p]), 0);
        } else {
            int e = order[i], p = eshape[e], n = psize[p];
            /* a random allowed orientation (kept flat in 2D) at a random place */
            const xform *t = &plane[rnd(r, nplane)];
            tsr_cell c[MAXPC];
            uint8_t cc[MAXPC];
            for (int j = 0; j < n; j++) {
                c[j] = xf_apply(t, pc[p][j]);
                cc[j] = pcc[p][j];
            }
            normalise_col(c, cc, n); /* the colours turn with the cells */
            tsr_cell d = {rnd(r, 8) - 2, rnd(r, 8) - 2, g->dims3 ? rnd(r, 8) - 2 : 0};
            for (int j = 0; j < n; j++)
                c[j] = (tsr_cell){c[j].x + d.x, c[j].y + d.y, c[j].z + d.z};
            if (nmob < 26)
                snprintf(name, sizeof name, "%c", 'A' + nmob);
            else
                snprintf(name, sizeof name, "%c%d", 'a' + nmob % 26, nmob / 26);
            nmob++;
            idx = tsr_puzzle_add_piece(pz, name, c, n, ecount[e], false);
            piece_of_entry[e] = idx;
            if (idx >= 0 && g->colored)
                ck_assert_int_eq(tsr_puzzle_set_piece_colors(pz, idx, cc), 0);
        }
        ck_assert_int_ge(idx, 0);
    }
    for (int p = 0; p < np; p++)
        if (!fixed[p])
            entry_of_cut[p] = piece_of_entry[ent_of_member[p]];
    tsr_err err = {""};
    ck_assert_msg(tsr_puzzle_validate(pz, "generated", &err) == 0, "%s", err.msg);
    return pz;
}

/* The cut must be one of the reference's tilings. */
static void check_cut_found(const ref *R, const gen *g, const tsr_puzzle *pz, const int *piece_of_cut)
{
    int lab[MAXB], np = 0;
    uint64_t mask[MAXB];
    uint8_t col[MAXB];
    for (int p = 0; p < g->np; p++) {
        int piece = piece_of_cut[p], e = R->entry_of[piece];
        uint64_t m = 0;
        for (int i = 0; i < g->n; i++)
            if (g->assign[i] == p) {
                m |= 1ull << board_index(R, pz->cells[i]);
                col[board_index(R, pz->cells[i])] = g->colored ? g->pcol[i] : 0;
            }
        if (e >= 0) {
            lab[np] = e;
            mask[np++] = m;
        } else {
            ck_assert(m == R->fixmask[-1 - e]);
        }
    }
    uint8_t key[KEYW * MAXB];
    make_key(R, np, lab, mask, R->fixmask, col, key);
    ck_assert_msg(ref_find(R, key) >= 0, "the reference misses the cut tiling");
}

enum family {
    F_RECT2D, F_HOLES2D, F_REGION2D, F_BOX3D, F_BLOB3D, F_SAME, F_FIXED, F_SYM, F_LARGE, F_LOOSE,
    F_TWINS, F_COLOURS, F_UNEVEN, NFAMILY
};
static const char *const family_names[NFAMILY] = {"rect2d", "holes2d", "region2d",  "box3d", "blob3d",
                                                  "same-shape", "fixed", "symmetric", "large",
                                                  "loose", "twins", "colours", "uneven"};

static enum tsr_rotations rand_rot(rng *r, bool dims3)
{
    int k = rnd(r, 10);
    if (dims3)
        return k < 7 ? TSR_ROT_ALL : k < 9 ? TSR_ROT_ONE_SIDED : TSR_ROT_NONE;
    return k < 5 ? TSR_ROT_ALL : k < 8 ? TSR_ROT_ONE_SIDED : TSR_ROT_NONE;
}

/* Shapes for boards tiled by copies of one shape. */
static const struct {
    int n;
    tsr_cell c[4];
} shapes[] = {
    {2, {{0, 0, 0}, {1, 0, 0}}},                       /* domino */
    {3, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}},            /* I3 */
    {3, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}},            /* L3 */
    {4, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}}, /* O4 */
    {4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}}}, /* L4 */
    {4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {1, 1, 0}}}, /* T4 */
    {4, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {2, 1, 0}}}, /* S4 */
    {4, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}, /* tripod */
    {4, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {1, 1, 1}}}, /* screw (chiral) */
    {4, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 0, 1}}}, /* other screw */
};

/* Make the optional set a union of orbits of the board's symmetries (the
 * lattice transforms that map the board onto itself), so that the
 * symmetries survive and the redundancy filter has work to do; cells under
 * fixed pieces stay required, which may break some of them again. */
static void close_optional(tsr_puzzle *pz, const bool *under_fixed)
{
    xform all[48];
    make_xforms(all);
    tsr_cell lo = min_corner(pz->cells, pz->ncells), img[MAXB], opt[MAXB];
    int nopt = pz->noptional;
    memcpy(opt, pz->optional, (size_t)nopt * sizeof *opt);
    for (int k = 1; k < 48; k++) {
        for (int i = 0; i < pz->ncells; i++)
            img[i] = xf_apply(&all[k], pz->cells[i]);
        tsr_cell tlo = min_corner(img, pz->ncells);
        tsr_cell off = {lo.x - tlo.x, lo.y - tlo.y, lo.z - tlo.z};
        bool sym = true;
        for (int i = 0; i < pz->ncells && sym; i++) {
            tsr_cell q = {img[i].x + off.x, img[i].y + off.y, img[i].z + off.z};
            sym = false;
            for (int j = 0; j < pz->ncells && !sym; j++)
                sym = same_cells(&q, &pz->cells[j], 1);
        }
        for (int o = 0; o < nopt && sym; o++) {
            tsr_cell q = xf_apply(&all[k], opt[o]);
            q = (tsr_cell){q.x + off.x, q.y + off.y, q.z + off.z};
            int at = -1;
            for (int j = 0; j < pz->ncells && at < 0; j++)
                if (same_cells(&q, &pz->cells[j], 1))
                    at = j;
            bool dup = under_fixed[at];
            for (int j = 0; j < pz->noptional && !dup; j++)
                dup = same_cells(&pz->optional[j], &q, 1);
            if (!dup)
                ck_assert_int_eq(tsr_puzzle_add_optional_cell(pz, q), 0);
        }
    }
}

/* Loosen a puzzle whose cut is a solution, keeping it one: optional cells
 * (a few random cells, or as many as a piece has, never under a fixed
 * piece), count ranges
 * around some counts, sometimes an extra entry that may stay out. */
static void make_loose(tsr_puzzle *pz, rng *r)
{
    bool under_fixed[MAXB] = {false};
    for (int i = 0; i < pz->ncells; i++)
        for (int p = 0; p < pz->npieces; p++)
            for (int j = 0; pz->pieces[p].fixed && j < pz->pieces[p].ncells; j++)
                under_fixed[i] |= same_cells(&pz->cells[i], &pz->pieces[p].cells[j], 1);
    int k = rnd(r, 3);
    if (k == 0) {
        for (int n = 1 + rnd(r, 4), tries = 0; n > 0 && tries < 50; tries++) {
            int i = rnd(r, pz->ncells);
            bool dup = under_fixed[i];
            for (int j = 0; j < pz->noptional && !dup; j++)
                dup = same_cells(&pz->optional[j], &pz->cells[i], 1);
            if (!dup) {
                ck_assert_int_eq(tsr_puzzle_add_optional_cell(pz, pz->cells[i]), 0);
                n--;
            }
        }
    } else if (k == 1) { /* as many cells as some piece has, spread over the board */
        int n = pz->pieces[rnd(r, pz->npieces)].ncells, start = rnd(r, pz->ncells);
        for (int i = 0; i < pz->ncells && n > 0; i++)
            if (!under_fixed[(start + i) % pz->ncells]) {
                ck_assert_int_eq(tsr_puzzle_add_optional_cell(pz, pz->cells[(start + i) % pz->ncells]), 0);
                n--;
            }
    }
    for (int p = 0; p < pz->npieces; p++) {
        tsr_piece *pc = &pz->pieces[p];
        if (pc->fixed || rnd(r, 2))
            continue;
        pc->count_min = rnd(r, pc->count + 1);
        pc->count += rnd(r, 2);
    }
    if (rnd(r, 3) == 0 && pz->npieces < MAXE) {
        int sh = rnd(r, 3); /* domino, I3 or L3 */
        int e = tsr_puzzle_add_piece(pz, "extra", shapes[sh].c, shapes[sh].n, 1 + rnd(r, 2), false);
        ck_assert_int_ge(e, 0);
        pz->pieces[e].count_min = 0;
    }
    if (pz->noptional > 0 && rnd(r, 2))
        close_optional(pz, under_fixed);
}

/* Colour the board's cells by orbits of its symmetries (every lattice
 * transform that maps it onto itself), so that they all survive. */
static void orbit_colors(gen *g, rng *r, int ncol)
{
    xform all[48];
    make_xforms(all);
    int par[MAXB];
    for (int i = 0; i < g->n; i++)
        par[i] = i;
    tsr_cell lo = min_corner(g->cell, g->n), img[MAXB];
    for (int k = 1; k < 48; k++) {
        for (int i = 0; i < g->n; i++)
            img[i] = xf_apply(&all[k], g->cell[i]);
        tsr_cell tlo = min_corner(img, g->n);
        int to[MAXB];
        bool sym = true;
        for (int i = 0; i < g->n && sym; i++) {
            tsr_cell q = {img[i].x - tlo.x + lo.x, img[i].y - tlo.y + lo.y, img[i].z - tlo.z + lo.z};
            sym = (to[i] = gen_find(g, q)) >= 0;
        }
        for (int i = 0; i < g->n && sym; i++)
            par[uf_find(par, i)] = uf_find(par, to[i]);
    }
    uint8_t c[MAXB];
    for (int i = 0; i < g->n; i++)
        c[i] = (uint8_t)rnd(r, ncol + 1);
    for (int i = 0; i < g->n; i++)
        g->bcol[i] = c[uf_find(par, i)];
}

/* Colours for a cut board (before it is doubled, when it is): the board's
 * at random, or by orbits of its symmetries; the pieces' cells through a
 * random map of the board's colours (so that pieces of equal shape on
 * cells of equal colours are equal again), or at random, or mostly
 * neutral. */
static void color_cut(gen *g, rng *r, bool by_orbits)
{
    int ncol = 1 + rnd(r, 3), mode = rnd(r, 3);
    g->colored = true;
    if (by_orbits)
        orbit_colors(g, r, ncol);
    else
        for (int i = 0; i < g->n; i++)
            g->bcol[i] = rnd(r, 3) == 0 ? 0 : (uint8_t)(1 + rnd(r, ncol));
    uint8_t map[4];
    for (int c = 0; c < 4; c++)
        map[c] = (uint8_t)rnd(r, ncol + 1);
    for (int i = 0; i < g->n; i++)
        g->pcol[i] = mode == 0 ? map[g->bcol[i]]
                     : mode == 1 ? (rnd(r, 2) ? 0 : (uint8_t)(1 + rnd(r, ncol)))
                                 : (rnd(r, 5) ? 0 : (uint8_t)(1 + rnd(r, ncol)));
}

/* Some pairs beside those the cut needs, so that other placements fit. */
static void extra_pairs(tsr_puzzle *pz, rng *r)
{
    for (int p = 1; p <= 3; p++)
        for (int b = 1; b <= 3; b++)
            if (rnd(r, 5) == 0)
                ck_assert_int_eq(tsr_puzzle_allow_colors(pz, p, b), 0);
}

/* Draw a puzzle of the family; returns it with its reference, retrying
 * until the reference can handle it. */
static tsr_puzzle *draw_puzzle(enum family fam, int index, uint64_t base_seed, ref **out)
{
    rng r;
    rng_seed(&r, base_seed * 1000003ull + (uint64_t)fam * 100003ull + (uint64_t)index);
    for (int attempt = 0; attempt < 200; attempt++) {
        gen g;
        memset(&g, 0, sizeof g);
        gen_opts go = {12, 60, true};
        int minsz = 2, maxsz = 5, same = 0, colour_kind = 0;
        bool dims3 = false;
        switch (fam) {
        case F_RECT2D: {
            int w, h;
            do {
                w = 2 + rnd(&r, 5);
                h = 2 + rnd(&r, 5);
            } while (w * h > 30);
            gen_box(&g, w, h, 1);
            if (rnd(&r, 3) == 0)
                minsz = 3, maxsz = 6;
            break;
        }
        case F_HOLES2D: {
            int w, h;
            do {
                w = 3 + rnd(&r, 4);
                h = 3 + rnd(&r, 4);
            } while (w * h > 30);
            gen_box(&g, w, h, 1);
            gen_remove(&g, &r, 1 + rnd(&r, 4));
            break;
        }
        case F_REGION2D:
            gen_blob(&g, &r, 8 + rnd(&r, 13), false);
            break;
        case F_BOX3D: {
            static const int boxes[][3] = {{2, 2, 2}, {2, 2, 3}, {2, 3, 3}, {3, 2, 2}, {2, 2, 4},
                                           {3, 3, 2}, {2, 3, 4}, {3, 3, 3}, {2, 2, 5}, {3, 3, 3}};
            int b = rnd(&r, 10);
            gen_box(&g, boxes[b][0], boxes[b][1], boxes[b][2]);
            minsz = 2 + (g.n > 18);
            maxsz = 6;
            break;
        }
        case F_BLOB3D:
            gen_blob(&g, &r, 8 + rnd(&r, 11), true);
            maxsz = 6;
            break;
        case F_FIXED:
            dims3 = rnd(&r, 2);
            maxsz = dims3 ? 6 : 5;
            if (rnd(&r, 2)) { /* fixed pieces chosen among the cut's */
                if (dims3)
                    gen_box(&g, 2 + rnd(&r, 2), 2 + rnd(&r, 2), 2 + rnd(&r, 2));
                else
                    gen_box(&g, 3 + rnd(&r, 3), 3 + rnd(&r, 3), 1);
                go.pfix = 100;
                break;
            }
            /* fixed pieces placed symmetrically: the centre, or opposite
             * corners that a symmetry swaps */
            if (dims3) {
                int k = rnd(&r, 3);
                gen_box(&g, k == 2 ? 2 : 3, k == 2 ? 2 : 3, k == 1 ? 3 : 2 + (k == 2));
                if (k == 0) { /* 3x3x2: centre column */
                    g.assign[gen_find(&g, (tsr_cell){1, 1, 0})] = 0;
                    g.assign[gen_find(&g, (tsr_cell){1, 1, 1})] = 0;
                    g.np = 1;
                } else if (k == 1) { /* 3x3x3: centre cell */
                    g.assign[gen_find(&g, (tsr_cell){1, 1, 1})] = 0;
                    g.np = 1;
                } else { /* 2x2x3: opposite corners */
                    g.assign[gen_find(&g, (tsr_cell){0, 0, 0})] = 0;
                    g.assign[gen_find(&g, (tsr_cell){1, 1, 2})] = 1;
                    g.np = 2;
                }
            } else {
                int w = 3 + 2 * rnd(&r, 2), h = 3 + 2 * rnd(&r, 2), k = rnd(&r, 3);
                gen_box(&g, w, h, 1);
                if (k == 0) {
                    g.assign[gen_find(&g, (tsr_cell){w / 2, h / 2, 0})] = 0;
                    g.np = 1;
                } else {
                    tsr_cell corner[4] = {{0, 0, 0}, {w - 1, h - 1, 0}, {w - 1, 0, 0}, {0, h - 1, 0}};
                    g.np = k == 1 ? 2 : 4;
                    for (int j = 0; j < g.np; j++)
                        g.assign[gen_find(&g, corner[j])] = j;
                }
            }
            g.nfixed = g.np;
            break;
        case F_SYM: {
            /* a random half, cut, then doubled */
            dims3 = rnd(&r, 3) == 0;
            if (rnd(&r, 2))
                gen_blob(&g, &r, dims3 ? 6 + rnd(&r, 6) : 6 + rnd(&r, 8), dims3);
            else if (dims3)
                gen_box(&g, 1 + rnd(&r, 2), 2, 2 + rnd(&r, 2));
            else
                gen_box(&g, 1 + rnd(&r, 3), 2 + rnd(&r, 4), 1);
            minsz = dims3 ? 3 : 3 + rnd(&r, 2);
            maxsz = dims3 ? 6 : 5;
            go.pmerge = 80;
            break;
        }
        case F_LARGE:
            if (rnd(&r, 2)) {
                int w = 5 + rnd(&r, 3), h = 5 + rnd(&r, 3);
                gen_box(&g, w, h > 6 && w > 6 ? 6 : h, 1);
                minsz = 4;
            } else {
                gen_box(&g, 3, 3, 3 + rnd(&r, 2));
                minsz = 4;
            }
            maxsz = 6;
            break;
        case F_LOOSE: {
            dims3 = rnd(&r, 3) == 0;
            int k = rnd(&r, 3);
            if (k == 0)
                gen_blob(&g, &r, dims3 ? 8 + rnd(&r, 8) : 8 + rnd(&r, 12), dims3);
            else if (dims3)
                gen_box(&g, 2, 2 + rnd(&r, 2), 2 + rnd(&r, 2));
            else
                gen_box(&g, 2 + rnd(&r, 4), 2 + rnd(&r, 4), 1);
            minsz = 1 + rnd(&r, 2);
            maxsz = 4 + rnd(&r, 2);
            go.pmerge = 70;
            break;
        }
        case F_TWINS: /* a half cut and mirrored beside itself: mirror twins */
            dims3 = rnd(&r, 2);
            if (dims3)
                gen_box(&g, 1 + rnd(&r, 2), 2, 2 + rnd(&r, 2));
            else
                gen_box(&g, 1 + rnd(&r, 3), 2 + rnd(&r, 3), 1);
            minsz = 4; /* chiral pieces have four cells or more */
            maxsz = dims3 ? 5 : 4;
            go.pmerge = 20; /* equal shapes mostly apart, or split in two */
            break;
        case F_UNEVEN: /* a quarter cut, turned beside itself, then mirrored */
            dims3 = rnd(&r, 4) == 0; /* quarters that hold two chiral tetrominoes */
            gen_box(&g, 2, dims3 ? 2 : 4, dims3 ? 2 : 1);
            minsz = 4; /* chiral pieces have four cells or more */
            maxsz = 4;
            go.pmerge = 50; /* a shape together, its mirror image apart: uneven */
            break;
        case F_COLOURS: /* a blob, a box, or a half doubled: coloured below */
            dims3 = rnd(&r, 3) == 0;
            colour_kind = rnd(&r, 4);
            if (colour_kind == 0)
                gen_blob(&g, &r, dims3 ? 8 + rnd(&r, 8) : 8 + rnd(&r, 12), dims3);
            else if (colour_kind == 1 && dims3)
                gen_box(&g, 2, 2 + rnd(&r, 2), 2 + rnd(&r, 2));
            else if (colour_kind == 1)
                gen_box(&g, 2 + rnd(&r, 4), 2 + rnd(&r, 3), 1);
            else if (dims3)
                gen_box(&g, 1 + rnd(&r, 2), 2, 2);
            else
                gen_box(&g, 1 + rnd(&r, 3), 2 + rnd(&r, 3), 1);
            minsz = 2;
            maxsz = dims3 ? 5 : 4;
            go.pmerge = 50;
            break;
        case F_SAME: {
            same = rnd(&r, (int)(sizeof shapes / sizeof shapes[0]));
            int n = shapes[same].n;
            dims3 = same >= 7 || rnd(&r, 3) == 0;
            int w, h, d;
            do {
                w = 2 + rnd(&r, 4);
                h = 2 + rnd(&r, 4);
                d = dims3 ? 2 + rnd(&r, 2) : 1;
            } while ((w * h * d) % n != 0 || w * h * d > (dims3 ? 24 : 20));
            gen_box(&g, w, h, d);
            break;
        }
        default:
            ck_abort();
        }
        if (fam != F_SAME)
            gen_cut(&g, &r, minsz, maxsz);
        if (fam == F_COLOURS) /* half of the boxes by orbits; halves doubled with their colours */
            color_cut(&g, &r, colour_kind == 1 && rnd(&r, 2));
        if (fam == F_COLOURS && colour_kind >= 2)
            gen_double(&g, colour_kind == 3);
        if (fam == F_SYM)
            gen_double(&g, rnd(&r, 2));
        if (fam == F_TWINS)
            gen_double(&g, false);
        if (fam == F_UNEVEN) { /* every shape twice, and its mirror image twice */
            gen_double(&g, true);
            gen_double(&g, false);
        }
        enum tsr_rotations rot = rand_rot(&r, g.dims3);

        bool mirror = rnd(&r, 4) == 0;
        if (fam == F_SYM && !g.dims3 && rnd(&r, 2))
            rot = TSR_ROT_ONE_SIDED; /* mirror-image pieces are distinct */
        if (fam == F_SYM && rnd(&r, 3))
            mirror = false;
        if (fam == F_TWINS || fam == F_UNEVEN) { /* twins distinct, the board's mirrors relating them */
            rot = g.dims3 ? TSR_ROT_ALL : TSR_ROT_ONE_SIDED;
            mirror = false;
        }
        tsr_puzzle *pz;
        int piece_of_cut[MAXB];
        if (fam != F_SAME) {
            pz = gen_puzzle(&g, &r, rot, mirror, &go, piece_of_cut);
        } else {
            /* lay the copies out side by side so that gen_puzzle groups them
             * (and splits them into entries), then put them on the box */
            int n = shapes[same].n;
            gen sg = g;
            sg.n = 0;
            for (int p = 0; p < g.n / n; p++)
                for (int i = 0; i < n; i++) {
                    sg.cell[sg.n] = (tsr_cell){shapes[same].c[i].x + 4 * p, shapes[same].c[i].y,
                                               shapes[same].c[i].z};
                    sg.assign[sg.n++] = p;
                }
            sg.np = g.n / n;
            go.pfix = 0;
            go.shift_board = false;
            tsr_puzzle *tz = gen_puzzle(&sg, &r, rot, mirror, &go, piece_of_cut);
            pz = tsr_puzzle_new();
            ck_assert_ptr_nonnull(pz);
            pz->rotations = rot;
            pz->mirror = mirror;
            for (int i = 0; i < g.n; i++)
                ck_assert_int_eq(tsr_puzzle_add_board_cell(pz, g.cell[i]), 0);
            for (int p = 0; p < tz->npieces; p++)
                ck_assert_int_ge(tsr_puzzle_add_piece(pz, tz->pieces[p].name, tz->pieces[p].cells,
                                                      tz->pieces[p].ncells, tz->pieces[p].count, false),
                                 0);
            tsr_puzzle_free(tz);
        }
        if (fam == F_LOOSE || ((fam == F_TWINS || fam == F_UNEVEN) && rnd(&r, 2)) || (fam == F_COLOURS && rnd(&r, 4) == 0))
            make_loose(pz, &r); /* twins of unequal ranges among them */
        if (fam == F_COLOURS) {
            extra_pairs(pz, &r);
            tsr_err err = {""};
            ck_assert_msg(tsr_puzzle_validate(pz, "generated", &err) == 0, "%s", err.msg);
        }
        char name[64];
        snprintf(name, sizeof name, "diff-%s-%d", family_names[fam], index);
        ck_assert_int_eq(tsr_puzzle_set_name(pz, name), 0);
        ref *R = ref_solve(pz, REF_CAP, REF_NODES);
        bool ok = R && !R->overflow && R->nt > 0 && (fam != F_UNEVEN || R->any_uneven);
        if (R && !R->overflow && fam != F_SAME) {
            ck_assert_msg(R->nt > 0, "reference found no tiling of a cut board");
            check_cut_found(R, &g, pz, piece_of_cut);
        }
        if (ok) {
            for (int m = 0; m < 3; m++)
                pz->expected[m] = R->counts[m];
            *out = R;
            return pz;
        }
        ref_free(R);
        tsr_puzzle_free(pz);
    }
    ck_abort_msg("no usable puzzle for %s #%d", family_names[fam], index);
    return NULL;
}

/* ---- engine configurations (engine_configs.h) ------------------------------------- */

/* Options of configuration k for a puzzle of P copies; the configuration
 * as tessera CLI flags goes to desc.  Returns false when it does not apply
 * (no piece for a named redundancy filter). */
static bool make_options(int k, const ref *R, enum tsr_unique mode, tsr_options *o, char *desc,
                         size_t size)
{
    const cfg *c = &configs[k];
    const char *piece = NULL;
    if (c->red == RED_FIRST || c->red == RED_LAST) {
        int pick = -1;
        for (int e = 0; e < R->ne; e++)
            if (R->count[e] == 1 && (pick < 0 || c->red == RED_LAST) &&
                !(mode > 0 && R->relabel_on[mode - 1] && R->uneven[e])) /* refused: relabelled */
                pick = e;
        if (pick < 0)
            return false;
        piece = R->pz->pieces[R->piece_of[pick]].name;
    }
    cfg_options(c, R->ncop, mode, piece, o, desc, size);
    return true;
}

/* ---- checking the engine's solutions ------------------------------------------------ */

typedef struct echeck {
    const ref *R;
    enum tsr_unique mode;
    unsigned char *seen;  /* per tiling: its class was reported */
    long long n;
    char err[512];
} echeck;

static int on_solution(void *ctx, const tsr_solution *s)
{
    echeck *ec = ctx;
    const ref *R = ec->R;
    const tsr_puzzle *pz = R->pz;
    int used[MAXE] = {0}, lab[MAXB], np = 0;
    uint64_t mask[MAXB], fixm[MAXFIX] = {0}, occ = 0;
    uint8_t col[MAXB] = {0};
    bool fixseen[MAXFIX] = {false};
    long long at = ec->n + 1;
#define BAD(...)                                                                            \
    do {                                                                                   \
        int l_ = snprintf(ec->err, sizeof ec->err, "solution %lld: ", at);                 \
        snprintf(ec->err + l_, sizeof ec->err - (size_t)l_, __VA_ARGS__);                  \
        return 1;                                                                          \
    } while (0)
    if (!R->loose && s->nplacements != R->ncop + R->nfix)
        BAD("%d placements, expected %d", s->nplacements, R->ncop + R->nfix);
    for (int i = 0; i < s->nplacements; i++) {
        const tsr_placement *p = &s->placements[i];
        if (p->piece < 0 || p->piece >= pz->npieces)
            BAD("placement %d: piece index %d", i, p->piece);
        const tsr_piece *pc = &pz->pieces[p->piece];
        if (p->ncells != pc->ncells)
            BAD("placement %d (%s): %d cells, the piece has %d", i, pc->name, p->ncells, pc->ncells);
        uint64_t m = cells_mask(R, p->cells, p->ncells);
        if (m == 0)
            BAD("placement %d (%s): cells off the board or repeated", i, pc->name);
        if (m & occ)
            BAD("placement %d (%s) overlaps another", i, pc->name);
        occ |= m;
        if ((p->colors != NULL) != (pc->colors != NULL))
            BAD("placement %d (%s): colours %s", i, pc->name, p->colors ? "given" : "missing");
        for (int k = 0; k < p->ncells; k++) { /* each colour may sit where it is */
            int b = board_index(R, p->cells[k]);
            col[b] = p->colors ? p->colors[k] : 0;
            if (!R->allow[col[b]][R->bcol[b]])
                BAD("placement %d (%s): colour %d on a board cell of colour %d", i, pc->name,
                    col[b], R->bcol[b]);
        }
        int e = R->entry_of[p->piece];
        if (e < 0) {
            int f = -1 - e;
            if (fixseen[f] || m != R->fixmask[f])
                BAD("fixed piece %s moved or repeated", pc->name);
            fixseen[f] = true;
            fixm[f] = m;
            continue;
        }
        if (m & R->fixedmask)
            BAD("placement %d (%s) covers a fixed piece", i, pc->name);
        tsr_cell sh[MAXPC];
        uint8_t shc[MAXPC] = {0};
        memcpy(sh, p->cells, (size_t)p->ncells * sizeof *sh);
        if (p->colors)
            memcpy(shc, p->colors, (size_t)p->ncells);
        normalise_col(sh, shc, p->ncells);
        bool allowed = false;
        for (int o = 0; o < R->norient[e] && !allowed; o++)
            allowed = same_cells(R->orient[e][o], sh, p->ncells) &&
                      memcmp(R->ocol[e][o], shc, (size_t)p->ncells) == 0;
        if (!allowed)
            BAD("placement %d (%s): orientation not allowed", i, pc->name);
        if (++used[e] > R->count[e])
            BAD("piece %s used more than %d times", pc->name, R->count[e]);
        lab[np] = e;
        mask[np++] = m;
    }
    if ((occ | R->optmask) != R->full)
        BAD("board not covered");
    for (int e = 0; e < R->ne; e++)
        if (used[e] < R->lo[e])
            BAD("piece %s used %d times, fewer than %d", pz->pieces[R->piece_of[e]].name, used[e],
                R->lo[e]);
    for (int f = 0; f < R->nfix; f++)
        if (!fixseen[f])
            BAD("a fixed piece is missing");
    uint8_t key[KEYW * MAXB];
    make_key(R, np, lab, mask, fixm, col, key);
    int t = ref_find(R, key);
    if (t < 0)
        BAD("a valid tiling the reference does not know");
    int cls = ec->mode == TSR_UNIQUE_RAW ? t : R->cls[ec->mode - 1][t];
    if (ec->seen[cls])
        BAD("reported twice (same %s as tiling %d)", ec->mode == TSR_UNIQUE_RAW ? "tiling" : "class", cls);
    ec->seen[cls] = 1;
    ec->n++;
    return 0;
#undef BAD
}

/* Loose puzzles whose runs used the redundancy filter (by default more
 * images are removed at the root than with it off), the volume filter and
 * trigger and the parity trigger (fewer nodes than DLX alone), per family
 * run: the coverage the new paths get, printed with the family's summary. */
static int loose_filtered, loose_vfilter, loose_vtrigger, loose_parity;

/* Images the root removed, read back from the configuration string. */
static int images_removed(const tsr_solver *sv)
{
    const char *at = strstr(tsr_solver_config(sv), "images=");
    int alive = 0, total = 0;
    if (at == NULL || sscanf(at, "images=%d/%d", &alive, &total) != 2)
        return 0;
    return total - alive;
}

/* Solve pz in every mode and configuration; print each mismatch.  Returns
 * the number of mismatches. */
static int check_puzzle(const tsr_puzzle *pz, const ref *R, const char *what, int serial)
{
    int fails = 0;
    unsigned char *seen = malloc((size_t)R->nt + 1);
    ck_assert_ptr_nonnull(seen);
    bool loose = !tsr_puzzle_is_exact(pz), redundancy = false, vfilter = false, vtrigger = false,
         parity = false;
    int removed = 0; /* images removed at the root by default (configs[0]) */
    uint64_t dlx_nodes = 0; /* raw mode, DLX alone, no volume (configs[1], flat or not) */
    for (int mode = 0; mode < 3; mode++)
        for (int k = 0; k < NCONFIG; k++) {
            tsr_options o;
            char desc[256], msg[1024] = "";
            if (!make_options(k, R, (enum tsr_unique)mode, &o, desc, sizeof desc))
                continue;
            tsr_solver *sv = NULL;
            tsr_err err = {""};
            int rc = tsr_solver_new(pz, &o, &sv, &err);
            if (!tsr_puzzle_is_exact(pz) && !cfg_loose_ok(&o)) {
                if (rc == 0)
                    snprintf(msg, sizeof msg, "accepted options a loose puzzle cannot use [%s]",
                             tsr_solver_config(sv));
                else if (rc != TSR_EINVAL || strstr(err.msg, "needs fixed piece counts") == NULL)
                    snprintf(msg, sizeof msg, "refused with %d: %s", rc, err.msg);
                tsr_solver_free(sv);
            } else if (rc != 0) {
                snprintf(msg, sizeof msg, "tsr_solver_new failed (%d): %s", rc, err.msg);
            } else {
                const cfg *c = &configs[k];
                bool plain = c->fila == KEEP && c->order == NULL && c->nof == KEEP &&
                             c->volume == KEEP && c->vtrigger == KEEP;
                if (mode == 0 && k == 0) { /* the door's bound holds the images made */
                    tsr_cost cost;
                    const char *at = strstr(tsr_solver_config(sv), "images=");
                    int alive = 0, total = 0;
                    if (tsr_solver_check(pz, &o, 1, &cost, &err) != 0 || at == NULL ||
                        sscanf(at, "images=%d/%d", &alive, &total) != 2 || cost.images < total)
                        snprintf(msg, sizeof msg, "tsr_solver_check bounds the images by %.0f, "
                                 "but there are %d (%s)", cost.images, total, err.msg);
                }
                if (loose && mode == 0 && plain && c->red == RED_AUTO)
                    removed = images_removed(sv); /* comes first */
                else if (loose && mode == 0 && plain && c->red == RED_OFF)
                    redundancy = removed > images_removed(sv);
                memset(seen, 0, (size_t)R->nt + 1);
                echeck ec = {R, (enum tsr_unique)mode, seen, 0, ""};
                tsr_callbacks cb = {0};
                cb.ctx = &ec;
                cb.solution = on_solution;
                tsr_stats st;
                rc = tsr_solver_run(sv, NULL, 0, &cb, &st);
                if (rc != 0)
                    snprintf(msg, sizeof msg, "tsr_solver_run returned %d", rc);
                else if (ec.err[0])
                    snprintf(msg, sizeof msg, "%s", ec.err);
                else if (ec.n != R->counts[mode])
                    snprintf(msg, sizeof msg, "expected %lld solutions, got %lld", R->counts[mode], ec.n);
                else if (st.solutions != (uint64_t)ec.n)
                    snprintf(msg, sizeof msg, "stats.solutions %llu, callbacks %lld",
                             (unsigned long long)st.solutions, ec.n);
                else if (st.classes != (uint64_t)ref_reported_classes(R, mode))
                    snprintf(msg, sizeof msg, "stats.classes %llu, expected %lld (mirror classes)",
                             (unsigned long long)st.classes, ref_reported_classes(R, mode));
                else if (st.stopped)
                    snprintf(msg, sizeof msg, "run reported stopped");
                unsigned long long classes = 0;
                long long byclass = k == 0 && !msg[0] ? classcount_run(sv, &classes) : ec.n;
                if (byclass != ec.n || (k == 0 && !msg[0] && classes != st.classes))
                    snprintf(msg, sizeof msg,
                             "counted by classes: %lld solutions in %llu classes, listed: %lld "
                             "in %llu", byclass, classes, ec.n, (unsigned long long)st.classes);
                if (loose && mode == 0 && c->fila == 0 && c->red == RED_AUTO && c->order == NULL) {
                    if (c->volume == KEEP && c->vtrigger == KEEP && c->parity == KEEP &&
                        c->pfilter == KEEP && c->nof == KEEP)
                        dlx_nodes = st.nodes; /* comes first */
                    else if (c->volume > 0 && st.nodes < dlx_nodes)
                        vfilter = true;
                    else if (c->vtrigger > 0 && st.nodes < dlx_nodes)
                        vtrigger = true;
                    else if (c->parity > 0 && st.nodes < dlx_nodes)
                        parity = true;
                }
                if (msg[0])
                    snprintf(desc + strlen(desc), sizeof desc - strlen(desc), "  [%s]",
                             tsr_solver_config(sv));
                tsr_stats_free(&st);
                tsr_solver_free(sv);
            }
            if (msg[0]) {
                if (fails == 0) {
                    char path[64];
                    snprintf(path, sizeof path, "/tmp/tessera-diff-fail-%d.json", serial);
                    fprintf(stderr, "\n=== MISMATCH on %s (written to %s):\n", what, path);
                    tsr_write_puzzle_json(stderr, pz);
                    FILE *f = fopen(path, "w");
                    if (f) {
                        tsr_write_puzzle_json(f, pz);
                        fclose(f);
                    }
                }
                if (fails < 8)
                    fprintf(stderr, "  %s: %s\n", desc, msg);
                fails++;
            }
        }
    free(seen);
    loose_filtered += redundancy;
    loose_vfilter += vfilter;
    loose_vtrigger += vtrigger;
    loose_parity += parity;
    return fails;
}

/* ---- tests ----------------------------------------------------------------------------- */

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

static int puzzles_per_family(enum family f)
{
    static const int full[NFAMILY] = {80, 50, 50, 80, 40, 50, 60, 80, 40, 300, 80, 120, 50};
    if (env_long("TSR_DIFF_QUICK", 0))
        return 6;
    long n = env_long("TSR_DIFF_COUNT", 0);
    return n > 0 ? (int)n : full[f];
}

START_TEST(family)
{
    enum family fam = (enum family)_i;
    const char *only = getenv("TSR_DIFF_FAMILY");
    if (only != NULL && *only != '\0' && strcmp(only, family_names[fam]) != 0)
        return; /* hunting in one family */
    uint64_t seed = (uint64_t)env_long("TSR_DIFF_SEED", 0);
    int n = puzzles_per_family(fam), bad = 0, failed_puzzles = 0;
    int color_cut = 0, color_twins = 0, symmetric = 0, uneven = 0, relabelled = 0;
    loose_filtered = loose_vfilter = loose_vtrigger = loose_parity = 0;
    long long totals[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        ref *R = NULL;
        tsr_puzzle *pz = draw_puzzle(fam, i, seed, &R);
        char what[128];
        snprintf(what, sizeof what, "%s #%d (TSR_DIFF_SEED=%llu), raw/rotations/mirror %lld/%lld/%lld",
                 family_names[fam], i, (unsigned long long)seed, R->counts[0], R->counts[1], R->counts[2]);
        int f = check_puzzle(pz, R, what, (int)fam * 1000 + i);
        bad += f;
        failed_puzzles += f > 0;
        for (int m = 0; m < 3; m++)
            totals[m] += R->counts[m];
        color_cut += R->color_cut > 0;
        color_twins += R->color_twins;
        symmetric += R->counts[TSR_UNIQUE_MIRROR] < R->counts[TSR_UNIQUE_RAW];
        uneven += R->any_uneven;
        relabelled += R->counts[TSR_UNIQUE_MIRROR] < R->paired;
        ref_free(R);
        tsr_puzzle_free(pz);
    }
    fprintf(stderr, "%s: %d puzzles, %lld/%lld/%lld raw/rotations/mirror solutions, %d failing\n",
            family_names[fam], n, totals[0], totals[1], totals[2], failed_puzzles);
    if (uneven > 0)
        fprintf(stderr,
                "%s: twins listed unevenly in %d puzzles; relabelling joined classes in %d\n",
                family_names[fam], uneven, relabelled);
    if (fam == F_COLOURS)
        fprintf(stderr,
                "%s: colours removed placements in %d puzzles, told apart two orientations on "
                "the same cells in %d; a symmetry survived in %d\n",
                family_names[fam], color_cut, color_twins, symmetric);
    if (fam == F_LOOSE)
        fprintf(stderr,
                "%s: the redundancy filter removed images in %d puzzles; the volume filter at "
                "every level saved nodes in %d, the volume trigger in %d, the parity trigger "
                "in %d\n",
                family_names[fam], loose_filtered, loose_vfilter, loose_vtrigger, loose_parity);
    ck_assert_msg(bad == 0, "%s: %d mismatches on %d of %d puzzles (see stderr)", family_names[fam], bad,
                  failed_puzzles, n);
}
END_TEST

/* The reference itself on known counts: 2x3 by dominoes, and the Soma cube
 * (11520 / 480 / 240, puzzles/README.md "Published counts"). */
START_TEST(reference_known)
{
    /* 2x3 by dominoes: 3 tilings; up to the rectangle's symmetries 2 */
    tsr_puzzle *pz = tsr_puzzle_new();
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++)
            ck_assert_int_eq(tsr_puzzle_add_board_cell(pz, (tsr_cell){x, y, 0}), 0);
    tsr_cell dom[2] = {{0, 0, 0}, {1, 0, 0}};
    ck_assert_int_ge(tsr_puzzle_add_piece(pz, "D", dom, 2, 3, false), 0);
    ref *R = ref_solve(pz, REF_CAP, REF_NODES);
    ck_assert(R && !R->overflow);
    ck_assert_int_eq(R->counts[0], 3);
    ck_assert_int_eq(R->counts[1], 2);
    ck_assert_int_eq(R->counts[2], 2);
    ref_free(R);
    tsr_puzzle_free(pz);
    /* the Soma cube (puzzles/README.md) */
    static const char *soma[7] = {"000 010 100", "000 010 100 200", "000 010 020 110", "010 020 100 110",
                                  "000 010 100 101", "001 011 100 101", "000 010 100 001"};
    pz = tsr_puzzle_new();
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 3; x++)
                ck_assert_int_eq(tsr_puzzle_add_board_cell(pz, (tsr_cell){x, y, z}), 0);
    for (int p = 0; p < 7; p++) {
        tsr_cell c[4];
        int n = 0;
        for (const char *s = soma[p]; *s; s += s[3] ? 4 : 3)
            c[n++] = (tsr_cell){s[0] - '0', s[1] - '0', s[2] - '0'};
        char name[2] = {(char)('a' + p), 0};
        ck_assert_int_ge(tsr_puzzle_add_piece(pz, name, c, n, 1, false), 0);
    }
    R = ref_solve(pz, 12000, 100000000L);
    ck_assert(R && !R->overflow);
    ck_assert_int_eq(R->counts[0], 11520);
    ck_assert_int_eq(R->counts[1], 480);
    ck_assert_int_eq(R->counts[2], 240);
    ref_free(R);
    tsr_puzzle_free(pz);
}
END_TEST

/* Small puzzles whose allowed orientations are not closed under the board's
 * symmetries (one-sided pieces in 3D, "none" with mirror): a board
 * symmetry maps some orientations of a piece to allowed ones and others
 * not; and a piece that is not connected.  Each was found by the random
 * tests or by reading, and reduced by hand; the counts are worked out by
 * hand and must match the reference too. */
static const struct {
    const char *json;
    long long counts[3];
} regressions[] = {
    /* two dominoes written along y on a 2x1x2 box: one tiling (two x rows) */
    {"{'board': {'size': [2, 1, 2]}, 'rotations': 'one-sided',"
     " 'pieces': [{'name': 'D', 'cells': [[0,0,0],[0,1,0]], 'count': 2}]}",
     {1, 1, 1}},
    /* 2D: L-tromino and monomino in a 2x2 square, translations and x-mirror */
    {"{'board': {'size': [2, 2]}, 'rotations': 'none', 'mirror': true,"
     " 'pieces': [{'name': 'L', 'cells': [[0,0],[1,0],[0,1]]}, {'name': 'M', 'cells': [[0,0]]}]}",
     {2, 1, 1}},
    /* L-tromino standing in the xz plane and a monomino on a 2x1x2 box */
    {"{'board': {'size': [2, 1, 2]}, 'rotations': 'one-sided',"
     " 'pieces': [{'name': 'A', 'cells': [[0,0,0],[1,0,0],[0,0,1]]}, {'name': 'B', 'cells': [[0,0,0]]}]}",
     {2, 1, 1}},
    /* a 6-cube (full top layer, one bottom row) and a domino in 2x2x2 */
    {"{'board': {'size': [2, 2, 2]}, 'rotations': 'one-sided',"
     " 'pieces': [{'name': 'A', 'cells': [[0,0,0],[1,0,0],[0,0,1],[1,0,1],[0,1,1],[1,1,1]]},"
     " {'name': 'B', 'cells': [[0,0,0],[1,0,0]]}]}",
     {4, 1, 1}},
    /* domino and two L-trominoes in 2x2x2: a quarter turn about a horizontal
     * axis maps some tilings onto tilings, so rotations has one class */
    {"{'board': {'size': [2, 2, 2]}, 'rotations': 'one-sided',"
     " 'pieces': [{'name': 'A', 'cells': [[0,0,0],[0,1,0]]},"
     " {'name': 'B', 'cells': [[0,0,0],[1,0,0],[1,0,1]]}, {'name': 'C', 'cells': [[0,0,0],[0,1,0],[0,1,1]]}]}",
     {8, 1, 1}},
    /* a piece in two parts (1x3 board, cells x = 0 and 2) and a monomino:
     * the piece spans two regions, so the volume checks must not ask each
     * region to be filled by whole pieces (the default volume filter once
     * removed the monomino's only placement) */
    {"{'board': {'size': [3, 1]},"
     " 'pieces': [{'name': 'A', 'cells': [[0,0],[2,0]]}, {'name': 'B', 'cells': [[0,0]]}]}",
     {1, 1, 1}},
    /* screw tetracubes listed apart, A1, A2 and their mirror images B1, B2,
     * in a 2x2x4 box: a reflection sends A1 to B1 and A2 to B2, so mirror
     * counts 21 classes (it once sent both to B1, no tiling: 36) */
    {"{'board': {'size': [2, 2, 4]}, 'pieces': ["
     " {'name': 'A1', 'cells': [[0,0,0],[1,0,0],[1,1,0],[1,1,1]]},"
     " {'name': 'A2', 'cells': [[0,0,0],[1,0,0],[1,1,0],[1,1,1]]},"
     " {'name': 'B1', 'cells': [[0,0,0],[1,0,0],[1,1,0],[0,0,1]]},"
     " {'name': 'B2', 'cells': [[0,0,0],[1,0,0],[1,1,0],[0,0,1]]}]}",
     {288, 36, 21}},
    /* the screws again, A twice as one entry against B1 and B2: listed
     * unevenly, so a reflected solution is the same whichever of B1 and
     * B2 each mirrored A becomes, and mirror counts the classes of A x2,
     * B x2 (7, as BurrTools does for that form); it once related no
     * reflection at all (18, the rotations count) */
    {"{'board': {'size': [2, 2, 4]}, 'pieces': ["
     " {'name': 'A', 'cells': [[0,0,0],[1,0,0],[1,1,0],[1,1,1]], 'count': 2},"
     " {'name': 'B1', 'cells': [[0,0,0],[1,0,0],[1,1,0],[0,0,1]]},"
     " {'name': 'B2', 'cells': [[0,0,0],[1,0,0],[1,1,0],[0,0,1]]}]}",
     {144, 18, 7}},
    /* one-sided L twice against J1 and J2 on a 4x4 board: turning the flat
     * board over is a rotation that mirrors them, so rotations relabels
     * too: one class, as L x2, J x2 has (the rank rule made 2) */
    {"{'board': {'size': [4, 4]}, 'rotations': 'one-sided', 'pieces': ["
     " {'name': 'L', 'rows': ['#.', '#.', '##'], 'count': 2},"
     " {'name': 'J1', 'rows': ['.#', '.#', '##']}, {'name': 'J2', 'rows': ['.#', '.#', '##']}]}",
     {8, 1, 1}},
    /* mirror-image screws of unequal ranges (A 0-2, B 0-1) and L-tetracubes
     * (0-3) in a 2x2x3 box: the two classes up to rotations are each
     * other's mirror image (twins of unequal ranges were once never
     * related: 2) */
    {"{'board': {'size': [2, 2, 3]}, 'pieces': ["
     " {'name': 'A', 'cells': [[0,0,0],[1,0,0],[1,1,0],[1,1,1]], 'count': [0, 2]},"
     " {'name': 'B', 'cells': [[0,0,0],[1,0,0],[1,1,0],[0,0,1]], 'count': [0, 1]},"
     " {'name': 'L', 'cells': [[0,0,0],[1,0,0],[2,0,0],[0,1,0]], 'count': [0, 3]}]}",
     {16, 2, 1}},
    /* two monominoes between fixed end cells of a 4x1 board: the reversal
     * swaps the ends and identifies AB with BA when the ends have one
     * colour, not when they differ (fixed pieces keep their colours) */
    {"{'board': {'size': [4, 1]}, 'pieces': ["
     " {'name': 'L', 'cells': [[0,0]], 'colors': [1], 'fixed': true},"
     " {'name': 'R', 'cells': [[3,0]], 'colors': [1], 'fixed': true},"
     " {'name': 'A', 'rows': ['#']}, {'name': 'B', 'rows': ['#']}]}",
     {2, 1, 1}},
    {"{'board': {'size': [4, 1]}, 'pieces': ["
     " {'name': 'L', 'cells': [[0,0]], 'colors': [1], 'fixed': true},"
     " {'name': 'R', 'cells': [[3,0]], 'colors': [2], 'fixed': true},"
     " {'name': 'A', 'rows': ['#']}, {'name': 'B', 'rows': ['#']}]}",
     {2, 2, 2}},
    /* a domino with ends of colours 1 and 2 on a neutral 2x1 board: two
     * placements on the same cells, one up to the half turn */
    {"{'board': {'size': [2, 1]}, 'pieces': [{'name': 'D', 'rows': ['12']}]}",
     {2, 1, 1}},
};

START_TEST(regression)
{
    char json[1024];
    const char *src = regressions[_i].json;
    size_t n = strlen(src);
    ck_assert_uint_lt(n, sizeof json);
    for (size_t i = 0; i <= n; i++)
        json[i] = src[i] == '\'' ? '"' : src[i];
    tsr_puzzle *pz = NULL;
    tsr_err err = {""};
    ck_assert_msg(tsr_puzzle_read_json(json, n, "regression", &pz, NULL, &err) == 0, "%s", err.msg);
    ref *R = ref_solve(pz, REF_CAP, REF_NODES);
    ck_assert(R && !R->overflow);
    for (int m = 0; m < 3; m++) {
        ck_assert_int_eq(R->counts[m], regressions[_i].counts[m]);
        pz->expected[m] = R->counts[m];
    }
    char what[64];
    snprintf(what, sizeof what, "regression #%d", _i);
    int fails = check_puzzle(pz, R, what, 9000 + _i);
    ref_free(R);
    tsr_puzzle_free(pz);
    ck_assert_msg(fails == 0, "regression #%d: %d mismatches (see stderr)", _i, fails);
}
END_TEST

static Suite *diff_suite(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("reference");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, reference_known);
    suite_add_tcase(s, tc);
    tc = tcase_create("regressions");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, regression, 0, (int)(sizeof regressions / sizeof regressions[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, family, 0, NFAMILY);
    suite_add_tcase(s, tc);
    return s;
}

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    return diff_suite();
}
