/*
 * test_geom.c - the lattice transforms and shape normalisation.
 *
 * The numbers checked here are facts of geometry, not of our code: 48
 * signed permutation matrices, 24 of them rotations, 4 rotations in the
 * plane; the pentomino F has 8 orientations in the plane and 24 in space as
 * a free piece; a 2x2x2 cube has 1 orientation.
 *
 * The lattices as data: each descriptor's transforms form a group (modulo
 * translations) that keeps the lattice and its adjacency, with Polyform
 * Puzzler's formulas; and grown from one cell with its neighbours, then
 * counted up to the allowed transforms, the polyforms come out as the
 * literature counts them (OEIS): polyominoes free 1 1 2 5 12 35 and
 * one-sided 1 1 2 7 18 60 (A000105, A000988); polycubes up to rotation
 * 1 1 2 8 29 166 and up to rotation and reflection 1 1 2 7 23 112
 * (A000162, A038119); polyiamonds free 1 1 1 3 4 12 24 and one-sided
 * 1 1 1 4 6 19 43 (A000577, A006534); polyhexes free 1 1 3 7 22 82 and
 * one-sided 1 1 3 10 33 147 (A000228, A006535).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"

static int det(const geo_mat *t)
{
    const signed char(*m)[3] = t->m;
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

START_TEST(transforms_are_the_48_symmetries)
{
    geo_mat t[GEO_NTRANSFORMS];
    geo_transforms(t);
    for (int i = 0; i < GEO_NTRANSFORMS; i++) {
        ck_assert_int_eq(det(&t[i]), i < GEO_NPROPER ? 1 : -1);
        for (int j = 0; j < i; j++)
            ck_assert_int_ne(memcmp(&t[i], &t[j], sizeof t[i]), 0);
    }
    /* identity first */
    tsr_cell c = {1, 2, 3};
    tsr_cell r = geo_apply(&t[0], c);
    ck_assert(r.x == 1 && r.y == 2 && r.z == 3);
    int planar = 0;
    for (int i = 0; i < GEO_NTRANSFORMS; i++)
        planar += geo_is_planar(&t[i]);
    ck_assert_int_eq(planar, 4);
}
END_TEST

START_TEST(allowed_transform_counts)
{
    int a[GEO_NTRANSFORMS];
    ck_assert_int_eq(geo_allowed_transforms(TSR_ROT_ALL, false, a), 24);
    ck_assert_int_eq(geo_allowed_transforms(TSR_ROT_ALL, true, a), 48);
    ck_assert_int_eq(geo_allowed_transforms(TSR_ROT_ONE_SIDED, false, a), 4);
    ck_assert_int_eq(geo_allowed_transforms(TSR_ROT_ONE_SIDED, true, a), 8);
    ck_assert_int_eq(geo_allowed_transforms(TSR_ROT_NONE, false, a), 1);
    ck_assert_int_eq(geo_allowed_transforms(TSR_ROT_NONE, true, a), 2);
}
END_TEST

static int orientations(const tsr_cell *cells, int n, enum tsr_rotations rot, bool mirror)
{
    int a[GEO_NTRANSFORMS];
    int na = geo_allowed_transforms(rot, mirror, a);
    tsr_cell *out = malloc(sizeof *out * (size_t)n * GEO_NTRANSFORMS);
    int k = geo_orientations(cells, n, a, na, out);
    free(out);
    return k;
}

/* Colours travel with the cells: a domino with ends 1 and 2 has twice the
 * orientations of a plain one, each listing its colours in cell order; a
 * cube coloured on one face has 6 where the plain cube has 1. */
START_TEST(coloured_orientations)
{
    int a[GEO_NTRANSFORMS];
    tsr_cell out[2 * GEO_NTRANSFORMS];
    unsigned char col[2 * GEO_NTRANSFORMS];
    const tsr_cell d[2] = {{0, 0, 0}, {1, 0, 0}};
    const unsigned char dc[2] = {1, 2};
    int na = geo_allowed_transforms(TSR_ROT_ONE_SIDED, false, a);
    ck_assert_int_eq(geo_orientations(d, 2, a, na, out), 2);
    ck_assert_int_eq(geo_orientations_colored(d, dc, 2, a, na, out, col), 4);
    bool seen[2][2] = {{false}}; /* [vertical][colour 1 first] */
    for (int o = 0; o < 4; o++) {
        ck_assert(col[2 * o] + col[2 * o + 1] == 3);
        seen[out[2 * o + 1].y == 1][col[2 * o] == 1] = true;
    }
    ck_assert(seen[0][0] && seen[0][1] && seen[1][0] && seen[1][1]);
    ck_assert_int_eq(geo_orientations_colored(d, NULL, 2, a, na, out, col), 2);
    tsr_cell cube[8], big[8 * GEO_NTRANSFORMS];
    unsigned char cc[8], bigc[8 * GEO_NTRANSFORMS];
    for (int i = 0; i < 8; i++) {
        cube[i] = (tsr_cell){i & 1, (i >> 1) & 1, (i >> 2) & 1};
        cc[i] = (unsigned char)(i & 4 ? 5 : 0); /* the top face */
    }
    na = geo_allowed_transforms(TSR_ROT_ALL, false, a);
    ck_assert_int_eq(geo_orientations_colored(cube, cc, 8, a, na, big, bigc), 6);
}
END_TEST

START_TEST(orientation_counts)
{
    const tsr_cell F[5] = {{1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, 2, 0}};
    const tsr_cell X[5] = {{1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 1, 0}, {1, 2, 0}};
    const tsr_cell L[5] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {0, 1, 0}};
    tsr_cell cube[8];
    for (int i = 0; i < 8; i++)
        cube[i] = (tsr_cell){i & 1, (i >> 1) & 1, (i >> 2) & 1};
    ck_assert_int_eq(orientations(F, 5, TSR_ROT_ONE_SIDED, false), 4);
    ck_assert_int_eq(orientations(F, 5, TSR_ROT_ONE_SIDED, true), 8);
    ck_assert_int_eq(orientations(F, 5, TSR_ROT_ALL, false), 24);
    ck_assert_int_eq(orientations(X, 5, TSR_ROT_ONE_SIDED, false), 1);
    ck_assert_int_eq(orientations(X, 5, TSR_ROT_ALL, false), 3); /* flat in xy, xz or yz */
    ck_assert_int_eq(orientations(L, 5, TSR_ROT_ALL, true), 24); /* flat: mirrors add nothing */
    ck_assert_int_eq(orientations(cube, 8, TSR_ROT_ALL, true), 1);
    ck_assert_int_eq(orientations(L, 5, TSR_ROT_NONE, false), 1);
}
END_TEST

START_TEST(normalize_sorts_and_translates)
{
    tsr_cell c[3] = {{5, 7, 2}, {4, 7, 2}, {4, 8, 3}};
    geo_normalize(c, 3);
    ck_assert(c[0].x == 0 && c[0].y == 0 && c[0].z == 0);
    ck_assert(c[1].x == 1 && c[1].y == 0 && c[1].z == 0);
    ck_assert(c[2].x == 0 && c[2].y == 1 && c[2].z == 1);
    tsr_cell lo = geo_min_corner((tsr_cell[]){{3, -1, 4}, {-2, 5, 0}}, 2);
    ck_assert(lo.x == -2 && lo.y == -1 && lo.z == 0);
}
END_TEST

/* The same cell set up to translation on lattice L? */
static bool same_shape(const geo_lattice *L, tsr_cell *a, tsr_cell *b, int n)
{
    geo_lattice_normalize(L, a, n);
    geo_lattice_normalize(L, b, n);
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* A shape without symmetry on each lattice, to tell transforms apart. */
static int probe_shape(enum tsr_lattice id, tsr_cell *c)
{
    /* arms of 3, 2 and 1 cubes along x, y and z */
    static const tsr_cell cube[7] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0},
                                     {0, 1, 0}, {0, 2, 0}, {0, 0, 1}};
    static const tsr_cell tri[5] = {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {0, 1, 0}};
    static const tsr_cell hex[4] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}};
    const tsr_cell *src = id == TSR_LATTICE_CUBIC ? cube : id == TSR_LATTICE_TRIANGULAR ? tri : hex;
    int n = id == TSR_LATTICE_CUBIC ? 7 : id == TSR_LATTICE_HEXAGONAL ? 4 : 5;
    memcpy(c, src, (size_t)n * sizeof *c);
    return n;
}

static bool is_neighbour(const geo_lattice *L, tsr_cell a, tsr_cell b)
{
    tsr_cell nb[GEO_MAX_NBR];
    int k = geo_lattice_neighbours(L, a, nb);
    for (int i = 0; i < k; i++)
        if (nb[i].x == b.x && nb[i].y == b.y && nb[i].z == b.z)
            return true;
    return false;
}

START_TEST(lattice_groups)
{
    static const int want_n[] = {48, 12, 12}, want_motions[] = {24, 12, 12}, want_planar[] = {4, 6, 6};
    for (int id = 0; id < TSR_NLATTICES; id++) {
        geo_lattice L;
        geo_lattice_init(&L, (enum tsr_lattice)id);
        ck_assert_str_eq(L.name, tsr_lattice_names[id]);
        ck_assert_int_eq(tsr_lattice_parse(L.name), id);
        ck_assert_int_eq(L.ntransforms, want_n[id]);
        ck_assert_int_eq(L.nmotions, want_motions[id]);
        tsr_cell p[7], a[7], b[7];
        int n = probe_shape((enum tsr_lattice)id, p), planar = 0;
        for (int i = 0; i < L.ntransforms; i++) {
            planar += L.planar[i];
            ck_assert_int_eq(L.twin[L.twin[i]], i);
            /* on the cube a mirror image is no motion; the plane's flips are */
            ck_assert(L.nmotions == L.ntransforms || (L.twin[i] < L.nmotions) != (i < L.nmotions));
            /* distinct: the probe tells every pair apart */
            for (int j = 0; j < i; j++) {
                for (int k = 0; k < n; k++)
                    a[k] = geo_apply(&L.map[i], p[k]), b[k] = geo_apply(&L.map[j], p[k]);
                ck_assert_msg(!same_shape(&L, a, b, n), "%s: transforms %d and %d agree", L.name, i, j);
            }
            /* closed: every product is a transform, up to a translation */
            for (int j = 0; j < L.ntransforms; j++) {
                geo_mat ij = geo_compose(&L.map[i], &L.map[j]);
                int found = 0;
                for (int m = 0; m < L.ntransforms; m++) {
                    for (int k = 0; k < n; k++)
                        a[k] = geo_apply(&ij, p[k]), b[k] = geo_apply(&L.map[m], p[k]);
                    found += same_shape(&L, a, b, n);
                }
                ck_assert_msg(found == 1, "%s: %d after %d", L.name, i, j);
            }
        }
        ck_assert_int_eq(planar, want_planar[id]);
        /* the identity first */
        for (int k = 0; k < n; k++)
            a[k] = geo_apply(&L.map[0], p[k]);
        ck_assert_int_eq(memcmp(a, p, (size_t)n * sizeof *a), 0);
    }
}
END_TEST

/* On every lattice a domino (a cell and its neighbour) can be turned onto
 * itself with its cells swapped, so with its ends coloured 1 and 2 it has
 * twice the orientations it has plain, and each keeps both colours. */
START_TEST(lattice_coloured_dominoes)
{
    for (int id = 0; id < TSR_NLATTICES; id++) {
        geo_lattice L;
        geo_lattice_init(&L, (enum tsr_lattice)id);
        tsr_cell d[2] = {{0, 0, 0}}, nb[GEO_MAX_NBR], out[2 * GEO_NTRANSFORMS];
        unsigned char col[2 * GEO_NTRANSFORMS];
        static const unsigned char dc[2] = {1, 2};
        ck_assert(geo_lattice_has(&L, d[0]) && geo_lattice_neighbours(&L, d[0], nb) > 0);
        d[1] = nb[0];
        int a[GEO_NTRANSFORMS], na = geo_lattice_allowed(&L, TSR_ROT_ALL, false, a);
        int plain = geo_lattice_orientations(&L, d, 2, a, na, out);
        int coloured = geo_lattice_orientations_colored(&L, d, dc, 2, a, na, out, col);
        ck_assert_msg(coloured == 2 * plain, "%s: %d coloured, %d plain", L.name, coloured, plain);
        for (int o = 0; o < coloured; o++)
            ck_assert(col[2 * o] + col[2 * o + 1] == 3 && col[2 * o] != col[2 * o + 1]);
    }
}
END_TEST

START_TEST(lattice_adjacency)
{
    for (int id = 0; id < TSR_NLATTICES; id++) {
        geo_lattice L;
        geo_lattice_init(&L, (enum tsr_lattice)id);
        for (int x = -3; x <= 3; x++)
            for (int y = -3; y <= 3; y++)
                for (int z = -1; z <= 2; z++) {
                    tsr_cell c = {x, y, z}, nb[GEO_MAX_NBR];
                    if (!geo_lattice_has(&L, c))
                        continue;
                    int k = geo_lattice_neighbours(&L, c, nb);
                    ck_assert_int_eq(k, id == TSR_LATTICE_TRIANGULAR ? 3 : 6);
                    for (int i = 0; i < k; i++) {
                        ck_assert(geo_lattice_has(&L, nb[i]));
                        ck_assert(is_neighbour(&L, nb[i], c)); /* symmetric */
                        if (L.coloured) /* neighbours differ in colour */
                            ck_assert_int_ne(geo_lattice_colour(&L, c), geo_lattice_colour(&L, nb[i]));
                        for (int t = 0; t < L.ntransforms; t++) {
                            tsr_cell tc = geo_apply(&L.map[t], c), tn = geo_apply(&L.map[t], nb[i]);
                            ck_assert(geo_lattice_has(&L, tc));
                            ck_assert_msg(is_neighbour(&L, tc, tn), "%s: transform %d breaks (%d,%d,%d)",
                                          L.name, t, x, y, z);
                        }
                    }
                }
    }
}
END_TEST

START_TEST(lattice_puzzler_formulas)
{
    geo_lattice T, H;
    geo_lattice_init(&T, TSR_LATTICE_TRIANGULAR);
    geo_lattice_init(&H, TSR_LATTICE_HEXAGONAL);
    for (int x = -2; x <= 2; x++)
        for (int y = -2; y <= 2; y++) {
            for (int z = 0; z <= 1; z++) {
                tsr_cell r = geo_apply(&T.map[1], (tsr_cell){x, y, z});
                ck_assert(r.x == -y - 1 && r.y == x + y + z && r.z == 1 - z);
                tsr_cell f = geo_apply(&T.map[6], (tsr_cell){x, y, z});
                ck_assert(f.x == -(x + y + z) && f.y == y && f.z == z);
            }
            tsr_cell r = geo_apply(&H.map[1], (tsr_cell){x, y, 0});
            ck_assert(r.x == -y && r.y == x + y && r.z == 0);
            tsr_cell f = geo_apply(&H.map[6], (tsr_cell){x, y, 0});
            ck_assert(f.x == -x && f.y == x + y && f.z == 0);
        }
    /* a turn swaps the kinds of triangle; the half turn is a point reflection */
    tsr_cell h = geo_apply(&T.map[3], (tsr_cell){2, 5, 0});
    ck_assert(h.x == -3 && h.y == -6 && h.z == 1);
}
END_TEST

/* Polyforms of each order from 1 to `max`, grown from one cell by adding
 * neighbours (on cubes only those in the plane when `flat`) and counted up
 * to the transforms `rot` and `mirror` allow: the canonical form of a shape
 * is the least of its orientations' normalised cell lists. */
typedef struct { tsr_cell c[8]; } form;

static int form_cmp(const void *a, const void *b) { return memcmp(a, b, sizeof(form)); }

static void canonical(const geo_lattice *L, const int *al, int na, const tsr_cell *cells, int n,
                      bool flat, form *out)
{
    tsr_cell o[GEO_NTRANSFORMS * 8];
    int k = geo_lattice_orientations(L, cells, n, al, na, o);
    bool first = true;
    for (int i = 0; i < k; i++) {
        form f;
        memset(&f, 0, sizeof f);
        memcpy(f.c, o + (size_t)i * n, (size_t)n * sizeof *o);
        bool in_plane = true; /* a flat polyomino's orientations that stay flat */
        for (int j = 0; j < n; j++)
            in_plane = in_plane && f.c[j].z == 0;
        if ((!flat || L->id != TSR_LATTICE_CUBIC || in_plane) && (first || form_cmp(&f, out) < 0))
            *out = f, first = false;
    }
    ck_assert(!first);
}

static void count_polyforms(enum tsr_lattice id, bool flat, enum tsr_rotations rot, bool mirror,
                            int max, int *counts)
{
    geo_lattice L;
    geo_lattice_init(&L, id);
    int al[GEO_NTRANSFORMS], na = geo_lattice_allowed(&L, rot, mirror, al);
    form *cur = malloc(sizeof *cur), *next = NULL;
    ck_assert_ptr_nonnull(cur);
    tsr_cell one = {0, 0, 0};
    canonical(&L, al, na, &one, 1, flat, &cur[0]);
    int ncur = 1;
    counts[0] = 1;
    for (int n = 2; n <= max; n++) {
        size_t cap = (size_t)ncur * (size_t)(n - 1) * GEO_MAX_NBR, nn = 0;
        next = malloc(cap * sizeof *next);
        ck_assert_ptr_nonnull(next);
        for (int i = 0; i < ncur; i++)
            for (int j = 0; j < n - 1; j++) {
                tsr_cell nb[GEO_MAX_NBR];
                int k = geo_lattice_neighbours(&L, cur[i].c[j], nb);
                for (int m = 0; m < k; m++) {
                    if (flat && nb[m].z != 0 && id == TSR_LATTICE_CUBIC)
                        continue;
                    bool in = false;
                    for (int q = 0; q < n - 1 && !in; q++)
                        in = memcmp(&cur[i].c[q], &nb[m], sizeof nb[m]) == 0;
                    if (in)
                        continue;
                    tsr_cell cells[8];
                    memcpy(cells, cur[i].c, (size_t)(n - 1) * sizeof *cells);
                    cells[n - 1] = nb[m];
                    canonical(&L, al, na, cells, n, flat, &next[nn++]);
                }
            }
        qsort(next, nn, sizeof *next, form_cmp);
        size_t u = 0;
        for (size_t i = 0; i < nn; i++)
            if (u == 0 || form_cmp(&next[i], &next[u - 1]) != 0)
                next[u++] = next[i];
        free(cur);
        cur = next;
        ncur = (int)u;
        counts[n - 1] = ncur;
    }
    free(cur);
}

START_TEST(lattice_polyform_counts)
{
    static const struct {
        enum tsr_lattice id;
        bool flat;
        enum tsr_rotations rot;
        bool mirror;
        int n, want[7];
    } cases[] = {
        {TSR_LATTICE_CUBIC, true, TSR_ROT_ALL, false, 6, {1, 1, 2, 5, 12, 35}},
        {TSR_LATTICE_CUBIC, true, TSR_ROT_ONE_SIDED, false, 6, {1, 1, 2, 7, 18, 60}},
        {TSR_LATTICE_CUBIC, false, TSR_ROT_ALL, false, 6, {1, 1, 2, 8, 29, 166}},
        {TSR_LATTICE_CUBIC, false, TSR_ROT_ALL, true, 6, {1, 1, 2, 7, 23, 112}},
        {TSR_LATTICE_TRIANGULAR, true, TSR_ROT_ALL, false, 7, {1, 1, 1, 3, 4, 12, 24}},
        {TSR_LATTICE_TRIANGULAR, true, TSR_ROT_ONE_SIDED, false, 7, {1, 1, 1, 4, 6, 19, 43}},
        {TSR_LATTICE_TRIANGULAR, true, TSR_ROT_ONE_SIDED, true, 7, {1, 1, 1, 3, 4, 12, 24}},
        {TSR_LATTICE_HEXAGONAL, true, TSR_ROT_ALL, false, 6, {1, 1, 3, 7, 22, 82}},
        {TSR_LATTICE_HEXAGONAL, true, TSR_ROT_ONE_SIDED, false, 6, {1, 1, 3, 10, 33, 147}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got[7];
        count_polyforms(cases[i].id, cases[i].flat, cases[i].rot, cases[i].mirror, cases[i].n, got);
        for (int k = 0; k < cases[i].n; k++)
            ck_assert_msg(got[k] == cases[i].want[k], "%s case %zu, order %d: %d, want %d",
                          tsr_lattice_names[cases[i].id], i, k + 1, got[k], cases[i].want[k]);
    }
}
END_TEST

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    Suite *s = suite_create("geom");
    TCase *tc = tcase_create("geom");
    tcase_add_test(tc, transforms_are_the_48_symmetries);
    tcase_add_test(tc, allowed_transform_counts);
    tcase_add_test(tc, orientation_counts);
    tcase_add_test(tc, coloured_orientations);
    tcase_add_test(tc, lattice_coloured_dominoes);
    tcase_add_test(tc, normalize_sorts_and_translates);
    tcase_add_test(tc, lattice_groups);
    tcase_add_test(tc, lattice_adjacency);
    tcase_add_test(tc, lattice_puzzler_formulas);
    tcase_add_test(tc, lattice_polyform_counts);
    suite_add_tcase(s, tc);
    return s;
}
