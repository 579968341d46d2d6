/*
 * test_geom.c - the lattice transforms and shape normalisation.
 *
 * The numbers checked here are facts of geometry, not of our code: 48
 * signed permutation matrices, 24 of them rotations, 4 rotations in the
 * plane; the pentomino F has 8 orientations in the plane and 24 in space as
 * a free piece; a 2x2x2 cube has 1 orientation.
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

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    Suite *s = suite_create("geom");
    TCase *tc = tcase_create("geom");
    tcase_add_test(tc, transforms_are_the_48_symmetries);
    tcase_add_test(tc, allowed_transform_counts);
    tcase_add_test(tc, orientation_counts);
    tcase_add_test(tc, normalize_sorts_and_translates);
    suite_add_tcase(s, tc);
    return s;
}
