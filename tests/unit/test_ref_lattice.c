/*
 * test_ref_lattice.c - proves the independent lattice reference
 * (ref_lattice.c) against numbers nobody here computed, so that it can
 * judge the engine on the triangular and hexagonal lattices (issue 24).
 *
 * What it checks:
 *   - the lattices: every transform maps neighbours to neighbours, the
 *     turns have order 6 (4 and 24 on the cubic lattice), the flips order
 *     2, and the transforms act as 12 (48) distinct maps;
 *   - polyforms counted by order, fixed, one-sided and free (OEIS
 *     A001420, A006534, A000577 and A001207, A006535, A000228 for
 *     polyiamonds and polyhexes, A001168, A000988, A000105 for polyominoes);
 *   - the hexiamonds and tetrahexes defined here by their shapes carry
 *     Polyform Puzzler's letters (its piece tables, transcribed below);
 *   - published puzzle counts (../shared/oracle.md and Polyform Puzzler's
 *     docs): the 12 hexiamonds in the 9x4, 6x6 and 12x3 parallelograms,
 *     the 7 tetrahexes in the 7x4 parallelogram, the hexiamond rings, the
 *     3 trihexes + 7 tetrahexes in the hexagon of side 4, the polyhexes of
 *     orders 1-4 in the diamond ring, pentominoes in 3x20 and 6x10, the
 *     Soma cube; each class count also by Burnside's lemma (the average
 *     number of tilings each symmetry fixes), which checks that
 *     self-symmetric solutions are counted right;
 *   - the fixtures in tests/fixtures/lattices/ (Puzzle JSON for the engine,
 *     read with jansson): each file's expected counts are the reference's;
 *   - the random-puzzle generator: on every lattice, in every option, the
 *     cut is one of the reference's tilings, and the counts obey Burnside.
 *
 * The diamond ring (its test and its fixture, about 25 s of CPU) runs only
 * with TSR_REF_LONG=1; the rest takes about 25 s (the hexagon of side 4,
 * twice, 11 of them; pentominoes 6x10 3).
 * tests/fixtures/lattices/polysolve/README.md compares the same counts with
 * polysolve's and cross-checks the reference's raw counts against it on
 * random puzzles (one-sided, translations only, copies, ranges).
 */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ref_lattice.h"

#define MAXC 256

typedef struct shape {
    const char *name;
    int n;
    ref_cell c[REF_MAXPC];
} shape;

static bool long_tests(void)
{
    const char *v = getenv("TSR_REF_LONG");
    return v && *v && strcmp(v, "0") != 0;
}

/* ---- the lattices ------------------------------------------------------------------ */

static bool is_neighbour(enum ref_lattice L, ref_cell a, ref_cell b)
{
    ref_cell nb[6];
    int k = ref_neighbours(L, a, nb);
    for (int i = 0; i < k; i++)
        if (nb[i].x == b.x && nb[i].y == b.y && nb[i].z == b.z)
            return true;
    return false;
}

static int window(enum ref_lattice L, ref_cell *out)
{
    int n = 0;
    for (int z = L == REF_HEXAGONAL ? 0 : L == REF_TRIANGULAR ? 0 : -2; z <= (L == REF_TRIANGULAR ? 1 : L == REF_CUBIC ? 2 : 0); z++)
        for (int y = -3; y <= 3; y++)
            for (int x = -3; x <= 3; x++)
                out[n++] = (ref_cell){x, y, z};
    return n;
}

START_TEST(lattice_axioms)
{
    static const enum ref_lattice lat[3] = {REF_CUBIC, REF_TRIANGULAR, REF_HEXAGONAL};
    for (int l = 0; l < 3; l++) {
        enum ref_lattice L = lat[l];
        ref_cell w[MAXC];
        int n = window(L, w), nt = ref_ntransforms(L);
        for (int i = 0; i < n; i++) {
            ref_cell nb[6];
            int k = ref_neighbours(L, w[i], nb);
            for (int j = 0; j < k; j++) {
                ck_assert(is_neighbour(L, nb[j], w[i])); /* symmetric */
                for (int t = 0; t < nt; t++)
                    ck_assert_msg(is_neighbour(L, ref_transform(L, t, w[i]), ref_transform(L, t, nb[j])),
                                  "lattice %d transform %d breaks an adjacency", l, t);
            }
        }
        /* an asymmetric shape: 12 (48) distinct images, so the transforms are
         * distinct maps; the turn's order, the flip's */
        static const ref_cell asym_cubic[] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 2}, {0, 0, 3}};
        static const ref_cell asym_tri[] = {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {2, 0, 0}, {0, 1, 0}, {0, 1, 1}, {0, 2, 0}, {0, 2, 1}, {2, 0, 1}, {3, 0, 0}};
        static const ref_cell asym_hex[] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {0, 1, 0}, {0, 2, 0}};
        const ref_cell *a = L == REF_CUBIC ? asym_cubic : L == REF_TRIANGULAR ? asym_tri : asym_hex;
        int an = L == REF_CUBIC ? 7 : L == REF_TRIANGULAR ? 11 : 6;
        ref_cell img[48][REF_MAXPC];
        for (int t = 0; t < nt; t++) {
            for (int i = 0; i < an; i++)
                img[t][i] = ref_transform(L, t, a[i]);
            ref_normalise(L, img[t], an);
            for (int u = 0; u < t; u++)
                ck_assert_msg(memcmp(img[t], img[u], sizeof(ref_cell) * (size_t)an) != 0,
                              "lattice %d: transforms %d and %d agree", l, u, t);
        }
        ck_assert(ref_connected(L, a, an));
        if (L != REF_CUBIC) { /* turn^6 and flip^2 are the identity up to a translation */
            ref_cell s[REF_MAXPC], t6[REF_MAXPC], f2[REF_MAXPC];
            memcpy(s, a, sizeof *s * (size_t)an);
            for (int i = 0; i < an; i++) {
                t6[i] = a[i];
                for (int r = 0; r < 6; r++)
                    t6[i] = ref_transform(L, 1, t6[i]);
                f2[i] = ref_transform(L, 6, ref_transform(L, 6, a[i]));
            }
            ref_normalise(L, s, an);
            ref_normalise(L, t6, an);
            ref_normalise(L, f2, an);
            ck_assert(memcmp(s, t6, sizeof *s * (size_t)an) == 0);
            ck_assert(memcmp(s, f2, sizeof *s * (size_t)an) == 0);
        }
        int m[48];
        ck_assert_int_eq(ref_motions(L, REF_FREE, false, m), L == REF_CUBIC ? 24 : 12);
        ck_assert_int_eq(ref_motions(L, REF_ONE_SIDED, false, m), L == REF_CUBIC ? 4 : 6);
        ck_assert_int_eq(ref_motions(L, REF_NONE, false, m), 1);
        ck_assert_int_eq(ref_motions(L, REF_FREE, true, m), L == REF_CUBIC ? 48 : 12);
        ck_assert_int_eq(ref_motions(L, REF_NONE, true, m), 2);
    }
}
END_TEST

/* ---- polyforms by order ----------------------------------------------------------------- */

/* Every fixed polyform of order n (normalised, sorted, distinct) grown from
 * those of order n-1; returns their number. */
static int grow_fixed(enum ref_lattice L, int n, ref_cell (*out)[REF_MAXPC], int max)
{
    if (n == 1) {
        int k = 0;
        out[k++][0] = (ref_cell){0, 0, 0};
        if (L == REF_TRIANGULAR)
            out[k++][0] = (ref_cell){0, 0, 1};
        return k;
    }
    ref_cell (*prev)[REF_MAXPC] = malloc(sizeof *prev * (size_t)max);
    ck_assert_ptr_nonnull(prev);
    int np = grow_fixed(L, n - 1, prev, max), k = 0;
    for (int p = 0; p < np; p++)
        for (int i = 0; i < n - 1; i++) {
            ref_cell nb[6];
            int kn = ref_neighbours(L, prev[p][i], nb);
            for (int j = 0; j < kn; j++) {
                if (L == REF_CUBIC && nb[j].z != 0)
                    continue; /* polyominoes: the plane z = 0 */
                ref_cell s[REF_MAXPC];
                memcpy(s, prev[p], sizeof *s * (size_t)(n - 1));
                bool dup = false;
                for (int q = 0; q < n - 1 && !dup; q++)
                    dup = memcmp(&s[q], &nb[j], sizeof nb[j]) == 0;
                if (dup)
                    continue;
                s[n - 1] = nb[j];
                ref_normalise(L, s, n);
                for (int q = 0; q < k && !dup; q++)
                    dup = memcmp(out[q], s, sizeof *s * (size_t)n) == 0;
                if (!dup) {
                    ck_assert_int_lt(k, max);
                    memcpy(out[k++], s, sizeof *s * (size_t)n);
                }
            }
        }
    free(prev);
    return k;
}

static int count_classes(enum ref_lattice L, enum ref_motion m, ref_cell (*f)[REF_MAXPC], int nf, int n)
{
    int xf[48], nxf = ref_motions(L, m, false, xf), k = 0;
    ref_cell (*canon)[REF_MAXPC] = malloc(sizeof *canon * (size_t)nf);
    ck_assert_ptr_nonnull(canon);
    for (int i = 0; i < nf; i++) {
        ref_cell c[REF_MAXPC];
        ref_canonical(L, xf, nxf, f[i], n, c);
        bool dup = false;
        for (int j = 0; j < k && !dup; j++)
            dup = memcmp(canon[j], c, sizeof *c * (size_t)n) == 0;
        if (!dup)
            memcpy(canon[k++], c, sizeof *c * (size_t)n);
    }
    free(canon);
    return k;
}

START_TEST(polyform_counts)
{
    static const struct {
        enum ref_lattice L;
        int orders;
        int fixed[7], one_sided[7], free_[7];
    } known[] = {
        /* polyiamonds: A001420, A006534, A000577 */
        {REF_TRIANGULAR, 7, {2, 3, 6, 14, 36, 94, 250}, {1, 1, 1, 4, 6, 19, 43}, {1, 1, 1, 3, 4, 12, 24}},
        /* polyhexes: A001207, A006535, A000228 */
        {REF_HEXAGONAL, 6, {1, 3, 11, 44, 186, 814}, {1, 1, 3, 10, 33, 147}, {1, 1, 3, 7, 22, 82}},
        /* polyominoes on the cubic lattice's plane: A001168, A000988, A000105 */
        {REF_CUBIC, 6, {1, 2, 6, 19, 63, 216}, {1, 1, 2, 7, 18, 60}, {1, 1, 2, 5, 12, 35}},
    };
    enum { MAXF = 1000 };
    ref_cell (*f)[REF_MAXPC] = malloc(sizeof *f * MAXF);
    ck_assert_ptr_nonnull(f);
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        for (int n = 1; n <= known[k].orders; n++) {
            int nf = grow_fixed(known[k].L, n, f, MAXF);
            ck_assert_int_eq(nf, known[k].fixed[n - 1]);
            for (int i = 0; i < nf; i++)
                ck_assert(ref_connected(known[k].L, f[i], n));
            ck_assert_int_eq(count_classes(known[k].L, REF_NONE, f, nf, n), known[k].fixed[n - 1]);
            ck_assert_int_eq(count_classes(known[k].L, REF_ONE_SIDED, f, nf, n), known[k].one_sided[n - 1]);
            ck_assert_int_eq(count_classes(known[k].L, REF_FREE, f, nf, n), known[k].free_[n - 1]);
        }
    free(f);
}
END_TEST

/* ---- named pieces ------------------------------------------------------------------- */

/* The 12 hexiamonds, drawn here from their usual descriptions.  A rhombus
 * R(x, y) is the up and the down triangle (x, y, 0), (x, y, 1); a row of
 * triangles runs up, down, up, ... along x. */
#define R(x, y) {x, y, 0}, {x, y, 1}
static const shape hexiamonds[12] = {
    {"I", 6, {R(0, 0), R(1, 0), R(2, 0)}},                         /* bar: three rhombi in a row */
    {"P", 6, {R(0, 0), R(1, 0), {2, 0, 0}, {0, 1, 0}}},            /* sphinx: 5-trapezoid, a head on its short side's end */
    {"J", 6, {R(0, 0), R(1, 0), {2, 0, 0}, {2, -1, 1}}},           /* crook: 5-trapezoid, a triangle under one end of its long side */
    {"E", 6, {R(0, 0), R(1, 0), {2, 0, 0}, {1, -1, 1}}},           /* crown: 5-trapezoid, a triangle under the middle of its long side */
    {"V", 6, {R(0, 0), R(1, 0), R(0, 1)}},                         /* lobster: three rhombi, the third on the first */
    {"H", 6, {R(0, 0), R(1, 0), {1, -1, 1}, {2, -1, 0}}},          /* pistol: two rhombi, the grip (two triangles) under the second */
    {"S", 6, {R(0, 0), R(1, 0), {0, -1, 1}, {1, 1, 0}}},           /* snake: two rhombi, triangles at opposite ends, opposite sides */
    {"X", 6, {R(0, 0), R(1, 0), {0, 1, 0}, {1, -1, 1}}},           /* butterfly: two rhombi, a triangle on top of one, under the other */
    {"C", 6, {R(0, 0), R(1, 0), R(1, 1)}},                         /* bat / chevron: three rhombi bent */
    {"G", 6, {R(0, 0), R(1, 0), {1, 1, 0}, {0, 1, 1}}},            /* shoe / hook */
    {"F", 6, {R(0, 0), R(1, 0), {0, 1, 0}, {1, 1, 0}}},            /* yacht: two rhombi, two sails on top */
    {"O", 6, {{0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 1, 0}}}, /* hexagon: the six triangles round the point (1, 1) */
};
#undef R

/* The trihexes and tetrahexes, axial coordinates. */
static const shape trihexes[3] = {
    {"I3", 3, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}}, /* straight */
    {"V3", 3, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}}}, /* bent at 120 degrees */
    {"A3", 3, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}}, /* triangle */
};
static const shape tetrahexes[7] = {
    {"I", 4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}}},  /* bar */
    {"J", 4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {2, 1, 0}}},  /* three straight, a hook at the end */
    {"O", 4, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}},  /* bee: a rhombus of four */
    {"P", 4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {1, 1, 0}}},  /* three straight, one on the middle */
    {"S", 4, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {2, 1, 0}}},  /* zigzag */
    {"U", 4, {{1, -1, 0}, {1, 0, 0}, {0, 1, 0}, {-1, 1, 0}}}, /* arch: four of the six round a hexagon */
    {"Y", 4, {{1, 0, 0}, {0, 0, 0}, {2, -1, 0}, {1, 1, 0}}}, /* propeller: three arms at 120 degrees */
};
static const shape monohex = {"H1", 1, {{0, 0, 0}}}, dihex = {"I2", 2, {{0, 0, 0}, {1, 0, 0}}};

/* Polyform Puzzler's piece tables (puzzler/puzzles/polyiamonds.py and
 * polyhexes.py, class Hexiamonds and Tetrahexes; (0, 0[, 0]) implied),
 * transcribed to check that the letters above name the same shapes. */
static const shape puzzler_hexiamonds[12] = {
    {"I", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {2, 0, 0}, {2, 0, 1}}},
    {"P", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {2, 0, 0}, {1, 1, 0}}},
    {"J", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {2, 0, 0}, {0, -1, 1}}},
    {"E", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {2, 0, 0}, {1, -1, 1}}},
    {"V", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {0, 1, 0}, {0, 1, 1}}},
    {"H", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {1, -1, 1}, {2, -1, 0}}},
    {"S", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {0, -1, 1}, {1, 1, 0}}},
    {"X", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {0, 1, 0}, {1, -1, 1}}},
    {"C", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}}},
    {"G", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {0, 1, 1}}},
    {"F", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {0, 1, 0}, {1, 1, 0}}},
    {"O", 6, {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {0, -1, 1}, {1, -1, 0}, {1, -1, 1}}},
};
static const shape puzzler_tetrahexes[7] = {
    {"I", 4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}}},
    {"J", 4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {2, 1, 0}}},
    {"O", 4, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}},
    {"P", 4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {1, 1, 0}}},
    {"S", 4, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {2, 1, 0}}},
    {"U", 4, {{0, 0, 0}, {-1, 1, 0}, {1, 0, 0}, {1, 1, 0}}},
    {"Y", 4, {{0, 0, 0}, {1, 0, 0}, {2, -1, 0}, {1, 1, 0}}},
};

static bool congruent(enum ref_lattice L, enum ref_motion m, const shape *a, const shape *b)
{
    int xf[48], nxf = ref_motions(L, m, false, xf);
    ref_cell ca[REF_MAXPC], cb[REF_MAXPC];
    if (a->n != b->n)
        return false;
    ref_canonical(L, xf, nxf, a->c, a->n, ca);
    ref_canonical(L, xf, nxf, b->c, b->n, cb);
    return memcmp(ca, cb, sizeof *ca * (size_t)a->n) == 0;
}

static void check_set(enum ref_lattice L, const shape *mine, const shape *theirs, int n)
{
    for (int i = 0; i < n; i++) {
        ck_assert_msg(ref_connected(L, mine[i].c, mine[i].n), "%s is not connected", mine[i].name);
        for (int j = 0; j < n; j++) {
            bool same = congruent(L, REF_FREE, &mine[i], &theirs[j]);
            ck_assert_msg(same == (strcmp(mine[i].name, theirs[j].name) == 0),
                          "our %s and Puzzler's %s: %s", mine[i].name, theirs[j].name,
                          same ? "same shape, different letters" : "different shapes");
            if (j < i)
                ck_assert(!congruent(L, REF_FREE, &mine[i], &mine[j]));
        }
    }
}

START_TEST(piece_names)
{
    check_set(REF_TRIANGULAR, hexiamonds, puzzler_hexiamonds, 12);
    check_set(REF_HEXAGONAL, tetrahexes, puzzler_tetrahexes, 7);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < i; j++)
            ck_assert(!congruent(REF_HEXAGONAL, REF_FREE, &trihexes[i], &trihexes[j]));
}
END_TEST

/* ---- published puzzles -------------------------------------------------------------- */

typedef struct puzzle {
    enum ref_lattice L;
    int n;
    ref_cell board[MAXC];
    int np;
    ref_piece pieces[REF_MAXP];
} puzzle;

static void add_pieces(puzzle *p, const shape *s, int n)
{
    for (int i = 0; i < n; i++)
        p->pieces[p->np++] = (ref_piece){s[i].name, s[i].c, s[i].n, 1, 1, false};
}

static void add(puzzle *p, ref_cell c)
{
    ck_assert_int_lt(p->n, MAXC);
    p->board[p->n++] = c;
}

/* W x H parallelogram: 0 <= x < W, 0 <= y < H, both triangles of each rhombus. */
static void parallelogram(puzzle *p, enum ref_lattice L, int w, int h)
{
    p->L = L;
    for (int z = 0; z < (L == REF_TRIANGULAR ? 2 : 1); z++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                add(p, (ref_cell){x, y, z});
}

/* Burnside: the classes of a group action are the average number of
 * points each element fixes.  Valid when every symmetry maps every raw
 * tiling to a raw tiling (exact counts, free pieces), as in these puzzles. */
static void check_burnside(const ref_result *R, enum ref_mode mode)
{
    int ns = ref_nsymmetries(R, mode);
    long long fixed = 0;
    for (long t = 0; t < ref_ntilings(R); t++)
        for (int s = 0; s < ns; s++) {
            long u = ref_image(R, t, s);
            ck_assert_msg(u >= 0, "a symmetry left the raw tilings");
            fixed += u == t;
        }
    ck_assert_int_eq(fixed % ns, 0);
    ck_assert_int_eq(fixed / ns, ref_count(R, mode));
}

static void expect(const puzzle *p, enum ref_motion m, long long raw, long long rot, long long mir, int nsym)
{
    ref_puzzle pz = {p->L, m, false, p->board, p->n, NULL, 0, p->pieces, p->np};
    clock_t t0 = clock();
    ref_result *R = ref_solve(&pz, 2000000, 4000000000LL);
    ck_assert_ptr_nonnull(R);
    ck_assert(ref_complete(R));
    fprintf(stderr, "lattice %d, %d cells, %d pieces: raw %lld rotations %lld mirror %lld, %d symmetries, "
            "%lld nodes, %.2f s\n", p->L, p->n, p->np, ref_count(R, REF_RAW), ref_count(R, REF_ROTATIONS),
            ref_count(R, REF_MIRROR), ref_nsymmetries(R, REF_MIRROR), ref_nodes(R),
            (double)(clock() - t0) / CLOCKS_PER_SEC);
    ck_assert_int_eq(ref_count(R, REF_RAW), raw);
    ck_assert_int_eq(ref_count(R, REF_ROTATIONS), rot);
    ck_assert_int_eq(ref_count(R, REF_MIRROR), mir);
    ck_assert_int_eq(ref_nsymmetries(R, REF_MIRROR), nsym);
    check_burnside(R, REF_ROTATIONS);
    if (ref_nsymmetries(R, REF_MIRROR) != ref_nsymmetries(R, REF_ROTATIONS)) /* else the same group */
        check_burnside(R, REF_MIRROR);
    ref_free(R);
}

START_TEST(hexiamonds_9x4)
{ /* oracle.md: raw 148, mirror 74 (Puzzler: 74) */
    static puzzle p;
    parallelogram(&p, REF_TRIANGULAR, 9, 4);
    add_pieces(&p, hexiamonds, 12);
    expect(&p, REF_FREE, 148, 74, 74, 2);
}
END_TEST

START_TEST(hexiamonds_12x3)
{ /* oracle.md: none (Puzzler: 0) */
    static puzzle p;
    parallelogram(&p, REF_TRIANGULAR, 12, 3);
    add_pieces(&p, hexiamonds, 12);
    expect(&p, REF_FREE, 0, 0, 0, 2);
}
END_TEST

START_TEST(hexiamonds_6x6)
{ /* oracle.md: raw 624, mirror 156 (Puzzler: 156) */
    static puzzle p;
    parallelogram(&p, REF_TRIANGULAR, 6, 6);
    add_pieces(&p, hexiamonds, 12);
    expect(&p, REF_FREE, 624, 156, 156, 4);
}
END_TEST

START_TEST(tetrahexes_7x4)
{ /* oracle.md: raw 18, mirror 9 */
    static puzzle p;
    parallelogram(&p, REF_HEXAGONAL, 7, 4);
    add_pieces(&p, tetrahexes, 7);
    expect(&p, REF_FREE, 18, 9, 9, 2);
}
END_TEST

/* Puzzler's coordinates_hexagon(m) for hexagons: 0 <= x, y < 2m-1 and
 * m-1 <= x+y <= 3m-3. */
static void hex_hexagon(puzzle *p, int m)
{
    p->L = REF_HEXAGONAL;
    for (int y = 0; y < 2 * m - 1; y++)
        for (int x = 0; x < 2 * m - 1; x++)
            if (x + y >= m - 1 && x + y <= 3 * m - 3)
                add(p, (ref_cell){x, y, 0});
}

START_TEST(polyhexes34_hexagon)
{ /* oracle.md: raw 147,480, mirror 12,290 (Puzzler: 12,290) */
    static puzzle p;
    hex_hexagon(&p, 4);
    ck_assert_int_eq(p.n, 37);
    add_pieces(&p, trihexes, 3);
    add_pieces(&p, tetrahexes, 7);
    expect(&p, REF_FREE, 147480, 12290, 12290, 12);
}
END_TEST

START_TEST(polyhexes1234_diamond_ring)
{ /* Puzzler's Polyhexes1234DiamondRing: the 7x7 parallelogram less the 3x3
   * one at (2, 2); 83,837 solutions up to its 4 symmetries, so raw
   * 335,348 as polysolve counts it */
    if (!long_tests())
        return;
    static puzzle p;
    p.L = REF_HEXAGONAL;
    for (int y = 0; y < 7; y++)
        for (int x = 0; x < 7; x++)
            if (!(x >= 2 && x < 5 && y >= 2 && y < 5))
                add(&p, (ref_cell){x, y, 0});
    add_pieces(&p, &monohex, 1);
    add_pieces(&p, &dihex, 1);
    add_pieces(&p, trihexes, 3);
    add_pieces(&p, tetrahexes, 7);
    expect(&p, REF_FREE, 335348, 83837, 83837, 4);
}
END_TEST

/* Puzzler's HexiamondsRing and HexiamondsRing2: the hexagon of side 4
 * (3 < x+y+z < 12 in the 8x8 parallelogram) less a hexagon of side 2,
 * centred (no solution) or moved one unit (11 solutions). */
static void hexiamond_ring(puzzle *p, int dx)
{
    p->L = REF_TRIANGULAR;
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++) {
                int s = x + y + z;
                bool hole = 1 + dx < x && x < 6 + dx && 1 < y && y < 6 && 5 + dx < s && s < 10 + dx;
                if (3 < s && s < 12 && !hole)
                    add(p, (ref_cell){x, y, z});
            }
}

START_TEST(hexiamonds_rings)
{
    static puzzle p, q;
    hexiamond_ring(&p, 0);
    ck_assert_int_eq(p.n, 72);
    add_pieces(&p, hexiamonds, 12);
    expect(&p, REF_FREE, 0, 0, 0, 12);
    hexiamond_ring(&q, 1);
    ck_assert_int_eq(q.n, 72);
    add_pieces(&q, hexiamonds, 12);
    expect(&q, REF_FREE, 22, 11, 11, 2);
}
END_TEST

/* The pentominoes on the cubic lattice: the oracle's 6x10 (2,339: the
 * Haselgroves, 1960) and 3x20 (2 solutions). */
static const shape pentominoes[12] = {
    {"F", 5, {{1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, 2, 0}}},
    {"I", 5, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}}},
    {"L", 5, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {0, 1, 0}}},
    {"N", 5, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {2, 1, 0}, {3, 1, 0}}},
    {"P", 5, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 2, 0}}},
    {"T", 5, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {1, 1, 0}, {1, 2, 0}}},
    {"U", 5, {{0, 0, 0}, {2, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 1, 0}}},
    {"V", 5, {{0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {1, 2, 0}, {2, 2, 0}}},
    {"W", 5, {{0, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, 2, 0}, {2, 2, 0}}},
    {"X", 5, {{1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 1, 0}, {1, 2, 0}}},
    {"Y", 5, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {1, 1, 0}}},
    {"Z", 5, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {1, 2, 0}, {2, 2, 0}}},
};

START_TEST(pentominoes_3x20)
{
    static puzzle p;
    p.L = REF_CUBIC;
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 20; x++)
            add(&p, (ref_cell){x, y, 0});
    add_pieces(&p, pentominoes, 12);
    expect(&p, REF_FREE, 8, 2, 2, 8);
}
END_TEST

START_TEST(pentominoes_6x10)
{
    static puzzle p;
    p.L = REF_CUBIC;
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 10; x++)
            add(&p, (ref_cell){x, y, 0});
    add_pieces(&p, pentominoes, 12);
    expect(&p, REF_FREE, 9356, 2339, 2339, 8);
}
END_TEST

/* The Soma cube: 240 solutions up to rotations and reflections, 11,520 in
 * all (Conway and Guy); the two screws are mirror images, so a reflected
 * solution swaps them and stays a solution: 480 up to rotations. */
static const shape soma[7] = {
    {"V", 3, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}},
    {"L", 4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}}},
    {"T", 4, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {1, 1, 0}}},
    {"Z", 4, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {2, 1, 0}}},
    {"A", 4, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}},
    {"B", 4, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {1, 1, 1}}},
    {"P", 4, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 0, 1}}},
};

START_TEST(soma_cube)
{
    static puzzle p;
    p.L = REF_CUBIC;
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 3; x++)
                add(&p, (ref_cell){x, y, z});
    add_pieces(&p, soma, 7);
    ref_puzzle pz = {p.L, REF_FREE, false, p.board, p.n, NULL, 0, p.pieces, p.np};
    ref_result *R = ref_solve(&pz, 100000, 100000000LL);
    ck_assert_ptr_nonnull(R);
    ck_assert(ref_complete(R));
    ck_assert_int_eq(ref_count(R, REF_RAW), 11520);
    ck_assert_int_eq(ref_count(R, REF_ROTATIONS), 480);
    ck_assert_int_eq(ref_count(R, REF_MIRROR), 240);
    check_burnside(R, REF_ROTATIONS);
    ref_free(R);
}
END_TEST

/* Counted by hand: 3 dominoes (one piece of count 3) tile a 3x2
 * rectangle in 3 ways, 2 up to its symmetries (4 rotations of space, 8
 * with reflections, z -> -z among them); 3 diamonds (2-iamonds) tile the
 * hexagon of 6 triangles in 2 ways, the two propellers, 1 up to its 12
 * symmetries; a monohex and a dihex tile the triangle of 3 hexagons in 3
 * ways, 1 up to its 6 symmetries. */
START_TEST(small_hand_counts)
{
    static const ref_cell domino[] = {{0, 0, 0}, {1, 0, 0}};
    static puzzle p;
    p.L = REF_CUBIC;
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++)
            add(&p, (ref_cell){x, y, 0});
    p.pieces[p.np++] = (ref_piece){"D", domino, 2, 3, 3, false};
    expect(&p, REF_FREE, 3, 2, 2, 8);

    static const ref_cell diamond[] = {{0, 0, 0}, {0, 0, 1}};
    static puzzle h;
    h.L = REF_TRIANGULAR;
    for (int i = 0; i < 6; i++)
        add(&h, hexiamonds[11].c[i]);
    h.pieces[h.np++] = (ref_piece){"D", diamond, 2, 3, 3, false};
    expect(&h, REF_FREE, 2, 1, 1, 12);

    static puzzle a;
    a.L = REF_HEXAGONAL;
    for (int i = 0; i < 3; i++)
        add(&a, trihexes[2].c[i]);
    add_pieces(&a, &monohex, 1);
    add_pieces(&a, &dihex, 1);
    expect(&a, REF_FREE, 3, 1, 1, 6);
}
END_TEST

/* One-sided tetrahexes: the 7 and the mirror images of J, P and S, turned
 * but never flipped.  Raw counts from polysolve ("rotate", one copy of
 * each: where it is sound): 246 in the 10x4 parallelogram, 8 in the
 * diamond ring.  A flip of the board turns J into J', so the classes test
 * the relabelling on a plane lattice; Burnside checks them. */
START_TEST(one_sided_tetrahexes)
{
    static shape mirror[3];
    static puzzle p, q;
    int k = 0;
    for (int i = 0; i < 7; i++) {
        const char *n = tetrahexes[i].name;
        if (strcmp(n, "J") && strcmp(n, "P") && strcmp(n, "S"))
            continue;
        mirror[k] = tetrahexes[i];
        mirror[k].name = n[0] == 'J' ? "J'" : n[0] == 'P' ? "P'" : "S'";
        for (int j = 0; j < mirror[k].n; j++)
            mirror[k].c[j] = ref_transform(REF_HEXAGONAL, 6, tetrahexes[i].c[j]);
        ck_assert(!congruent(REF_HEXAGONAL, REF_ONE_SIDED, &mirror[k], &tetrahexes[i]));
        ck_assert(congruent(REF_HEXAGONAL, REF_FREE, &mirror[k], &tetrahexes[i]));
        k++;
    }
    parallelogram(&p, REF_HEXAGONAL, 10, 4);
    add_pieces(&p, tetrahexes, 7);
    add_pieces(&p, mirror, 3);
    expect(&p, REF_ONE_SIDED, 246, 123, 123, 2);
    q.L = REF_HEXAGONAL;
    for (int y = 0; y < 7; y++)
        for (int x = 0; x < 7; x++)
            if (!(x >= 2 && x < 5 && y >= 2 && y < 5))
                add(&q, (ref_cell){x, y, 0});
    add_pieces(&q, tetrahexes, 7);
    add_pieces(&q, mirror, 3);
    expect(&q, REF_ONE_SIDED, 8, 2, 2, 4);
}
END_TEST

/* Options by hand.  Fixed piece: in a 3x2 rectangle a domino fixed on the
 * left column leaves a 2x2 square to 2 dominoes, 2 ways (rows, columns);
 * the only symmetries that keep the fixed piece in place map each to
 * itself: 2 classes.  Optional cells: a row of 3 hexagons, the
 * ends optional, one dihex: 2 ways, one class (the row's flip).  Ranges:
 * monominoes [0, 4] and dominoes [0, 2] tile the 2x2 square in 7 ways (all
 * monominoes; a domino in 4 places; two dominoes, 2 ways), 3 classes.
 * Mirror twins apart: two screw tetracubes A1, A2 and their mirrors B1,
 * B2 listed as separate pieces in a 2x2x4 box: BurrTools' 288 assemblies,
 * 36 up to rotations, 21 up to reflections (docs/puzzle-format.md). */
START_TEST(options_by_hand)
{
    static const ref_cell domino[] = {{0, 0, 0}, {1, 0, 0}}, mono[] = {{0, 0, 0}};
    static const ref_cell fixed_dom[] = {{0, 0, 0}, {0, 1, 0}};
    static puzzle p;
    p.L = REF_CUBIC;
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++)
            add(&p, (ref_cell){x, y, 0});
    p.pieces[p.np++] = (ref_piece){"F", fixed_dom, 2, 1, 1, true};
    p.pieces[p.np++] = (ref_piece){"D", domino, 2, 2, 2, false};
    ref_puzzle pz = {p.L, REF_FREE, false, p.board, p.n, NULL, 0, p.pieces, p.np};
    ref_result *R = ref_solve(&pz, 1000, 100000);
    ck_assert(R && ref_complete(R));
    ck_assert_int_eq(ref_count(R, REF_RAW), 2);
    ck_assert_int_eq(ref_count(R, REF_ROTATIONS), 2);
    ck_assert_int_eq(ref_count(R, REF_MIRROR), 2);
    /* board order as listed: the row y = 0, then y = 1; F is placement 0 */
    int rows[6] = {0, 1, 1, 0, 2, 2}, columns[6] = {0, 1, 2, 0, 1, 2}, bent[6] = {0, 1, 2, 0, 2, 1};
    int piece_of[3] = {0, 1, 1};
    long a = ref_find(R, rows, piece_of), b = ref_find(R, columns, piece_of);
    ck_assert(a >= 0 && b >= 0 && a != b);
    ck_assert_int_eq(ref_find(R, bent, piece_of), -1);  /* not dominoes */
    int wrong_piece[3] = {1, 1, 1};
    ck_assert_int_eq(ref_find(R, rows, wrong_piece), -1); /* F is no mobile domino */
    ref_free(R);
    static const ref_cell three[] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
    static const ref_piece one_domino[] = {{"D", domino, 2, 1, 1, false}};
    ref_puzzle nz = {REF_CUBIC, REF_FREE, false, three, 3, NULL, 0, one_domino, 1};
    R = ref_solve(&nz, 1000, 100000); /* no tiling at all: lookups still answer */
    ck_assert(R && ref_complete(R));
    ck_assert_int_eq(ref_count(R, REF_RAW), 0);
    int partial[3] = {0, 0, -1}, one[1] = {0};
    ck_assert_int_eq(ref_find(R, partial, one), -1);
    ref_free(R);

    static const ref_cell row[] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, ends[] = {{0, 0, 0}, {2, 0, 0}};
    static const ref_piece dihex_piece[] = {{"I2", domino, 2, 1, 1, false}};
    ref_puzzle oz = {REF_HEXAGONAL, REF_FREE, false, row, 3, ends, 2, dihex_piece, 1};
    R = ref_solve(&oz, 1000, 100000);
    ck_assert(R && ref_complete(R));
    ck_assert_int_eq(ref_count(R, REF_RAW), 2);
    ck_assert_int_eq(ref_count(R, REF_MIRROR), 1);
    ref_free(R);

    static const ref_cell square[] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
    static const ref_piece mixed[] = {{"M", mono, 1, 0, 4, false}, {"D", domino, 2, 0, 2, false}};
    ref_puzzle rz = {REF_CUBIC, REF_FREE, false, square, 4, NULL, 0, mixed, 2};
    R = ref_solve(&rz, 1000, 100000);
    ck_assert(R && ref_complete(R));
    ck_assert_int_eq(ref_count(R, REF_RAW), 7);
    ck_assert_int_eq(ref_count(R, REF_ROTATIONS), 3);
    ck_assert_int_eq(ref_count(R, REF_MIRROR), 3);
    ref_free(R);

    static const ref_cell screw_a[] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
    static ref_cell screw_b[4];
    for (int i = 0; i < 4; i++)
        screw_b[i] = (ref_cell){-screw_a[i].x, screw_a[i].y, screw_a[i].z};
    static ref_cell box[16];
    int n = 0;
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 2; x++)
                box[n++] = (ref_cell){x, y, z};
    ref_piece screws[4] = {{"A1", screw_a, 4, 1, 1, false}, {"A2", screw_a, 4, 1, 1, false},
                           {"B1", screw_b, 4, 1, 1, false}, {"B2", screw_b, 4, 1, 1, false}};
    ref_puzzle sz = {REF_CUBIC, REF_FREE, false, box, 16, NULL, 0, screws, 4};
    R = ref_solve(&sz, 10000, 10000000);
    ck_assert(R && ref_complete(R));
    ck_assert_int_eq(ref_count(R, REF_RAW), 288);
    ck_assert_int_eq(ref_count(R, REF_ROTATIONS), 36);
    ck_assert_int_eq(ref_count(R, REF_MIRROR), 21);
    ref_free(R);
}
END_TEST

/* ---- the fixtures ------------------------------------------------------------------ */

/* Every Puzzle JSON in tests/fixtures/lattices/ (the files the engine will
 * be tested on) has the expected counts the reference finds.  Files whose
 * raw count passes 200,000 run with TSR_REF_LONG=1. */
static ref_cell json_cell(json_t *c)
{
    ck_assert(json_is_array(c) && (json_array_size(c) == 2 || json_array_size(c) == 3));
    ref_cell r = {(int)json_integer_value(json_array_get(c, 0)), (int)json_integer_value(json_array_get(c, 1)), 0};
    if (json_array_size(c) == 3)
        r.z = (int)json_integer_value(json_array_get(c, 2));
    return r;
}

static void check_fixture(const char *path)
{
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    ck_assert_msg(doc != NULL, "%s: %s", path, err.text);
    const char *lat = json_string_value(json_object_get(doc, "lattice"));
    ck_assert_ptr_nonnull(lat);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "rotations")), "all");
    json_t *exp = json_object_get(doc, "expected");
    long long want[3] = {json_integer_value(json_object_get(exp, "raw")),
                         json_integer_value(json_object_get(exp, "rotations")),
                         json_integer_value(json_object_get(exp, "mirror"))};
    if (want[REF_RAW] > 200000 && !long_tests()) {
        json_decref(doc);
        return;
    }
    static puzzle p;
    static ref_cell cells[REF_MAXP][REF_MAXPC];
    memset(&p, 0, sizeof p);
    p.L = strcmp(lat, "triangular") == 0 ? REF_TRIANGULAR : REF_HEXAGONAL;
    ck_assert(strcmp(lat, "triangular") == 0 || strcmp(lat, "hexagonal") == 0);
    json_t *board = json_object_get(json_object_get(doc, "board"), "cells"), *v;
    size_t i, j;
    json_array_foreach(board, i, v)
        add(&p, json_cell(v));
    json_array_foreach(json_object_get(doc, "pieces"), i, v) {
        json_t *pc = json_object_get(v, "cells"), *c;
        ck_assert(json_object_get(v, "count") == NULL);
        ck_assert_int_le(json_array_size(pc), REF_MAXPC);
        json_array_foreach(pc, j, c)
            cells[i][j] = json_cell(c);
        p.pieces[p.np++] = (ref_piece){json_string_value(json_object_get(v, "name")), cells[i], (int)json_array_size(pc), 1, 1, false};
    }
    ref_puzzle pz = {p.L, REF_FREE, false, p.board, p.n, NULL, 0, p.pieces, p.np};
    ref_result *R = ref_solve(&pz, 2000000, 4000000000LL);
    ck_assert_ptr_nonnull(R);
    ck_assert(ref_complete(R));
    for (int m = REF_RAW; m <= REF_MIRROR; m++)
        ck_assert_msg(ref_count(R, m) == want[m], "%s: mode %d: the reference counts %lld, the file expects %lld",
                      path, m, ref_count(R, m), want[m]);
    fprintf(stderr, "%s: %lld %lld %lld\n", strrchr(path, '/') + 1, want[0], want[1], want[2]);
    ref_free(R);
    json_decref(doc);
}

START_TEST(fixtures)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/lattices", TSR_SRCDIR);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "%s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        check_fixture(path);
        n++;
    }
    closedir(d);
    ck_assert_int_ge(n, 8);
}
END_TEST

/* ---- the generator ------------------------------------------------------------------ */

/* The cut must be one of the reference's tilings. */
static void check_cut(const ref_gen *g, const ref_result *R)
{
    int owner[REF_MAXB], piece_of[REF_MAXB];
    for (int i = 0; i < g->pz.nboard; i++)
        owner[i] = g->cut_owner[i];
    for (int p = 0; p < g->ncut; p++)
        piece_of[p] = g->cut_piece[p];
    long t = ref_find(R, owner, piece_of);
    ck_assert_msg(t >= 0, "the reference misses the cut");
    /* and the tiling reads back as itself */
    int o2[REF_MAXB], p2[REF_MAXB];
    int np = ref_tiling(R, t, o2, p2);
    ck_assert_int_eq(np, g->ncut);
    ck_assert_int_eq(ref_find(R, o2, p2), t);
}

START_TEST(generator)
{
    static const enum ref_lattice lat[3] = {REF_TRIANGULAR, REF_HEXAGONAL, REF_CUBIC};
    int done = 0, with_sym = 0, with_twins = 0, with_fixed = 0, with_optional = 0, doubled = 0;
    for (int l = 0; l < 3; l++)
        for (int k = 0; k < 60; k++) {
            ref_gen_opts o = {
                .lattice = lat[l],
                .board = (enum ref_board_kind)(k % REF_BOARD_KINDS),
                .min_cells = 6,
                .max_cells = 24,
                .min_piece = 2 + k % 2,
                .max_piece = 4 + k % 3,
                .motion = (enum ref_motion)(k / 4 % 3),
                .mirror = k % 7 == 3,
                .holes = k % 5 == 1 ? 2 : 0,
                .merge = k % 3 != 0,
                .ranges = k % 6 == 5,
                .optional = k % 8 == 2 || k % 8 == 5 ? 2 : 0,
                .optional_symmetric = k % 8 == 5,
                .fixed = k % 9 == 4 ? 1 + k % 2 : 0,
            };
            if (o.board == REF_BOARD_HEXAGON)
                o.max_cells = 24;
            static ref_gen g;
            ref_generate(1000u * (unsigned)l + (unsigned)k, &o, &g);
            static ref_gen g2;
            ref_generate(1000u * (unsigned)l + (unsigned)k, &o, &g2);
            /* a seed, a puzzle */
            ck_assert_int_eq(g.pz.nboard, g2.pz.nboard);
            ck_assert_int_eq(g.pz.npieces, g2.pz.npieces);
            ck_assert(memcmp(g.board, g2.board, sizeof g.board) == 0);
            ck_assert(memcmp(g.piece_cells, g2.piece_cells, sizeof g.piece_cells) == 0);
            ref_result *R = ref_solve(&g.pz, 200000, 50000000LL);
            ck_assert_ptr_nonnull(R);
            if (!ref_complete(R)) {
                ref_free(R);
                continue;
            }
            check_cut(&g, R);
            long long raw = ref_count(R, REF_RAW), rot = ref_count(R, REF_ROTATIONS), mir = ref_count(R, REF_MIRROR);
            ck_assert(raw >= 1 && rot >= 1 && mir >= 1 && mir <= rot && rot <= raw);
            if (g.pz.lattice != REF_CUBIC)
                ck_assert_int_eq(rot, mir);
            /* classes: the images of a tiling under a mode's symmetries are in its class */
            for (long t = 0; t < ref_ntilings(R); t++)
                for (int m = REF_ROTATIONS; m <= REF_MIRROR; m++)
                    for (int s = 0; s < ref_nsymmetries(R, m); s++) {
                        long u = ref_image(R, t, s);
                        if (u >= 0)
                            ck_assert_int_eq(ref_class(R, u, m), ref_class(R, t, m));
                    }
            bool has_fixed = false;
            for (int e = 0; e < g.pz.npieces; e++)
                has_fixed |= g.pz.pieces[e].fixed;
            /* Burnside needs every image of a tiling to be a tiling: free
             * pieces, exact counts, no fixed piece or optional cell; and on
             * the cubic lattice reflections only when pieces may reflect */
            if (g.pz.noptional == 0 && o.motion == REF_FREE && !o.ranges && !has_fixed)
                check_burnside(R, g.pz.lattice != REF_CUBIC || o.mirror ? REF_MIRROR : REF_ROTATIONS);
            with_fixed += has_fixed;
            if (o.board == REF_BOARD_DOUBLED && g.pz.noptional == 0) { /* the doubling's symmetry */
                ck_assert_int_eq(g.ncut % 2, 0);
                ck_assert_int_ge(ref_nsymmetries(R, REF_MIRROR), 2);
                doubled++;
            }
            with_optional += g.pz.noptional > 0;
            with_sym += ref_nsymmetries(R, REF_MIRROR) > 1;
            for (int e = 0; e < g.pz.npieces; e++)
                with_twins += g.pz.pieces[e].max > 1;
            done++;
            ref_free(R);
        }
    fprintf(stderr, "generator: %d puzzles checked, %d with board symmetries, %d pieces with copies, "
            "%d with fixed pieces, %d with optional cells, %d doubled\n", done, with_sym, with_twins, with_fixed,
            with_optional, doubled);
    ck_assert_int_ge(done, 150);
    ck_assert_int_ge(with_sym, 40);
    ck_assert_int_ge(with_twins, 20);
    ck_assert_int_ge(with_fixed, 10);
    ck_assert_int_ge(with_optional, 20);
    ck_assert_int_ge(doubled, 20);
}
END_TEST

Suite *test_suite(void);

Suite *test_suite(void)
{
    Suite *s = suite_create("ref_lattice");
    TCase *tc = tcase_create("lattice");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, lattice_axioms);
    tcase_add_test(tc, polyform_counts);
    tcase_add_test(tc, piece_names);
    tcase_add_test(tc, small_hand_counts);
    tcase_add_test(tc, options_by_hand);
    suite_add_tcase(s, tc);
    tc = tcase_create("puzzles");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, hexiamonds_9x4);
    tcase_add_test(tc, hexiamonds_12x3);
    tcase_add_test(tc, hexiamonds_6x6);
    tcase_add_test(tc, hexiamonds_rings);
    tcase_add_test(tc, tetrahexes_7x4);
    tcase_add_test(tc, polyhexes34_hexagon);
    tcase_add_test(tc, polyhexes1234_diamond_ring);
    tcase_add_test(tc, pentominoes_3x20);
    tcase_add_test(tc, pentominoes_6x10);
    tcase_add_test(tc, soma_cube);
    tcase_add_test(tc, one_sided_tetrahexes);
    tcase_add_test(tc, fixtures);
    suite_add_tcase(s, tc);
    tc = tcase_create("generator");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, generator);
    suite_add_tcase(s, tc);
    return s;
}
