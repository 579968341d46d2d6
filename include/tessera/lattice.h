/*
 * tessera/lattice.h - the cubic lattice every puzzle lives on: a cell, and
 * the motions a piece may make.  Geometry (src/geom) owns these; the puzzle
 * model and everything above build on them, so this header includes
 * nothing of Tessera.
 */
#ifndef TESSERA_LATTICE_H
#define TESSERA_LATTICE_H

/* One cell: a 2D puzzle has z = 0 everywhere. */
typedef struct tsr_cell {
    int x, y, z;
} tsr_cell;

/* The motions a piece may make before it is placed. */
enum tsr_rotations {
    TSR_ROT_ALL = 0,       /* the 24 proper rotations of 3D space */
    TSR_ROT_ONE_SIDED = 1, /* the 4 rotations about the z axis */
    TSR_ROT_NONE = 2       /* translations only */
};

#endif
