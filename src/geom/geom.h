/*
 * geom.h - lattice geometry: the 48 orthogonal transforms of the cubic
 * lattice and shape normalisation.
 *
 * A transform is a signed permutation matrix.  geo_transforms() lists all 48
 * in a fixed order: index 0 is the identity, indices 0..23 are the proper
 * rotations (determinant +1) and 24..47 the improper ones (each a proper
 * rotation composed with the reflection x -> -x).  Within each half the
 * order is deterministic, so transform indices are stable across runs.
 */
#ifndef TSR_GEOM_H
#define TSR_GEOM_H

#include <stdbool.h>

#include "tessera/lattice.h"

#define GEO_NTRANSFORMS 48
#define GEO_NPROPER 24

typedef struct geo_mat {
    signed char m[3][3];
} geo_mat;

/* Fill `out` with the 48 transforms in the order described above. */
void geo_transforms(geo_mat out[GEO_NTRANSFORMS]);

/* True when `t` maps the z axis to itself with z unchanged (a rotation in
 * the plane, one of the 4 "one-sided" moves). */
bool geo_is_planar(const geo_mat *t);

static inline tsr_cell geo_apply(const geo_mat *t, tsr_cell c)
{
    tsr_cell r;
    r.x = t->m[0][0] * c.x + t->m[0][1] * c.y + t->m[0][2] * c.z;
    r.y = t->m[1][0] * c.x + t->m[1][1] * c.y + t->m[1][2] * c.z;
    r.z = t->m[2][0] * c.x + t->m[2][1] * c.y + t->m[2][2] * c.z;
    return r;
}

/* Order cells by z, then y, then x (the "reading order" used everywhere). */
int geo_cell_cmp(const void *a, const void *b);

/* Translate so that the minimum x, y and z are 0, then sort: two cell sets
 * are translates of each other iff their normalised forms are equal. */
void geo_normalize(tsr_cell *cells, int n);

/* Minimum corner of a cell set. */
tsr_cell geo_min_corner(const tsr_cell *cells, int n);

/* Normalised shapes of `cells` under the transforms `allowed` (indices into
 * geo_transforms order), without duplicates.  Writes at most nallowed shapes
 * of n cells each into `out` (nallowed * n cells) and returns how many. */
int geo_orientations(const tsr_cell *cells, int n, const int *allowed, int nallowed,
                     tsr_cell *out);

/* Transform indices a rotation mode allows, mirror images included when
 * `mirror`; returns the count (<= 48). */
int geo_allowed_transforms(enum tsr_rotations rot, bool mirror, int out[GEO_NTRANSFORMS]);

#endif
