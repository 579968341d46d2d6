/*
 * geom.h - lattice geometry: the 48 orthogonal transforms of the cubic
 * lattice, shape normalisation, and (below) every lattice as data.
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

/* An affine map of lattice coordinates: c -> m c + t.  The cubic
 * lattice's transforms are linear (t = 0); the triangular lattice's move
 * the kind z as well (a turn swaps up and down triangles), which needs the
 * offset. */
typedef struct geo_mat {
    signed char m[3][3];
    signed char t[3];
} geo_mat;

/* Fill `out` with the 48 transforms in the order described above. */
void geo_transforms(geo_mat out[GEO_NTRANSFORMS]);

/* True when `t` maps the z axis to itself with z unchanged (a rotation in
 * the plane, one of the 4 "one-sided" moves). */
bool geo_is_planar(const geo_mat *t);

static inline tsr_cell geo_apply(const geo_mat *t, tsr_cell c)
{
    tsr_cell r;
    r.x = t->m[0][0] * c.x + t->m[0][1] * c.y + t->m[0][2] * c.z + t->t[0];
    r.y = t->m[1][0] * c.x + t->m[1][1] * c.y + t->m[1][2] * c.z + t->t[1];
    r.z = t->m[2][0] * c.x + t->m[2][1] * c.y + t->m[2][2] * c.z + t->t[2];
    return r;
}

/* a after b: the map c -> a(b(c)). */
geo_mat geo_compose(const geo_mat *a, const geo_mat *b);

/* Order cells by z, then y, then x (the "reading order" used everywhere). */
int geo_cell_cmp(const void *a, const void *b);

/* A cell with a colour (0: neutral), and their order by the cell alone
 * (geo_cell_cmp), for qsort and bsearch over coloured cells. */
typedef struct geo_ccell {
    tsr_cell c;
    int color;
} geo_ccell;
int geo_ccell_cmp(const void *a, const void *b);

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

/* The same for a coloured shape: colours[i] (a colour number, 0 neutral)
 * travels with cells[i], and two orientations are the same only when both
 * their cells and their colours are (a coloured domino has two
 * orientations on the same cells).  `ocolors` (nallowed * n) receives each
 * orientation's colours in the order of its sorted cells.  colors NULL:
 * geo_orientations, and ocolors is not touched.  Returns the count, or
 * TSR_ENOMEM. */
int geo_orientations_colored(const tsr_cell *cells, const unsigned char *colors, int n,
                             const int *allowed, int nallowed, tsr_cell *out,
                             unsigned char *ocolors);

/* Transform indices a rotation mode allows, mirror images included when
 * `mirror`; returns the count (<= 48). */
int geo_allowed_transforms(enum tsr_rotations rot, bool mirror, int out[GEO_NTRANSFORMS]);

/* ---- Lattices as data -------------------------------------------------
 * A lattice is described once, here: its transforms (its point group, as
 * affine maps on coordinates), which of them a rotation mode allows, the
 * translations, the cells' neighbours and a 2-colouring where it has one.
 * Everything above asks the descriptor instead of assuming cubes.
 *
 * Transforms are listed motions first: index 0 is the identity, indices
 * 0 .. nmotions-1 are the rigid motions of space a free piece may make (the
 * 24 rotations of the cube; on the plane lattices the 6 turns and the 6
 * flips, a flip being a half turn in space), then the improper transforms
 * (the cube's 24 reflections; none on the plane lattices).  planar[i] marks
 * the turns in the plane (one-sided pieces: 4 on cubes, 6 on the plane
 * lattices) and twin[i] is the transform's mirror image (i composed with a
 * reflection), what the `mirror` option adds. */
#define GEO_MAX_NBR 6

typedef struct geo_lattice {
    enum tsr_lattice id;
    const char *name;             /* its one spelling: "cubic", "triangular", "hexagonal" */
    int ntransforms, nmotions;
    geo_mat map[GEO_NTRANSFORMS];
    unsigned char planar[GEO_NTRANSFORMS];
    unsigned char twin[GEO_NTRANSFORMS];
    int translate;                /* coordinates a translation moves: 3 (x, y, z) or 2 (x, y) */
    int nkinds;                   /* kinds of cell, told by z: 1, or 2 on triangles */
    int nnbr[2];                  /* neighbours of a cell of each kind */
    signed char nbr[2][GEO_MAX_NBR][3]; /* their offsets (dx, dy, dz) */
    bool coloured;                /* a 2-colouring every piece keeps up to a swap */
} geo_lattice;

/* The lattices' names, indexed by enum tsr_lattice, NULL after the last. */
extern const char *const tsr_lattice_names[];

/* The lattice named `name`, or -1. */
int tsr_lattice_parse(const char *name);

/* Fill *L with the descriptor of lattice `id` (a pure computation: the
 * caller owns the result, nothing global is kept). */
void geo_lattice_init(geo_lattice *L, enum tsr_lattice id);

/* Is c a cell of the lattice (z = 0 on hexagons, 0 or 1 on triangles)? */
bool geo_lattice_has(const geo_lattice *L, tsr_cell c);

/* The neighbours of c (cells sharing a face or an edge of the tile), in
 * the descriptor's order; returns how many (<= GEO_MAX_NBR). */
int geo_lattice_neighbours(const geo_lattice *L, tsr_cell c, tsr_cell out[GEO_MAX_NBR]);

/* The 2-colouring (cubes: x + y + z even or odd; triangles: up or down),
 * 0 or 1; -1 on a lattice without one. */
int geo_lattice_colour(const geo_lattice *L, tsr_cell c);

/* Translate so that the lowest translatable coordinates are 0 (never the
 * kind of a triangle), then sort: two cell sets are translates of each
 * other iff their normalised forms are equal. */
void geo_lattice_normalize(const geo_lattice *L, tsr_cell *cells, int n);

/* As geo_allowed_transforms and geo_orientations, on lattice L. */
int geo_lattice_allowed(const geo_lattice *L, enum tsr_rotations rot, bool mirror,
                        int out[GEO_NTRANSFORMS]);
int geo_lattice_orientations(const geo_lattice *L, const tsr_cell *cells, int n,
                             const int *allowed, int nallowed, tsr_cell *out);
/* As geo_orientations_colored, on lattice L. */
int geo_lattice_orientations_colored(const geo_lattice *L, const tsr_cell *cells,
                                     const unsigned char *colors, int n, const int *allowed,
                                     int nallowed, tsr_cell *out, unsigned char *ocolors);

#endif
