/*
 * tessera/lattice.h - the lattices a puzzle lives on (cubic, triangular,
 * hexagonal): a cell, the lattices' names, and the motions a piece may
 * make.  Geometry (src/geom) owns these; the puzzle model and everything
 * above build on them, so this header includes nothing of Tessera.
 */
#ifndef TESSERA_LATTICE_H
#define TESSERA_LATTICE_H

/* One cell: a 2D puzzle has z = 0 everywhere.  On the triangular lattice
 * z is the kind of triangle (0 pointing up, 1 pointing down); on the
 * hexagonal lattice z is 0. */
typedef struct tsr_cell {
    int x, y, z;
} tsr_cell;

/* The lattices.  Coordinates follow Polyform Puzzler's:
 *   cubic       [x, y, z], unit cubes (squares when z = 0 everywhere);
 *   triangular  [x, y, z], z = 0 the up triangle with corners (x, y),
 *               (x+1, y), (x, y+1), z = 1 the down one with corners
 *               (x+1, y), (x+1, y+1), (x, y+1), in the axes 60 degrees apart;
 *   hexagonal   [x, y] axial (z = 0): the neighbours of (x, y) are
 *               (x+-1, y), (x, y+-1), (x+1, y-1) and (x-1, y+1). */
enum tsr_lattice {
    TSR_LATTICE_CUBIC = 0,
    TSR_LATTICE_TRIANGULAR = 1,
    TSR_LATTICE_HEXAGONAL = 2
};
#define TSR_NLATTICES 3

/* The motions a piece may make before it is placed. */
enum tsr_rotations {
    TSR_ROT_ALL = 0,       /* the 24 proper rotations of 3D space */
    TSR_ROT_ONE_SIDED = 1, /* the 4 rotations about the z axis */
    TSR_ROT_NONE = 2       /* translations only */
};

#endif
