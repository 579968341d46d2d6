/*
 * ref_lattice.h - an independent brute-force counter of polyform tilings on
 * the cubic, triangular and hexagonal lattices, and a random-puzzle
 * generator for differential tests.
 *
 * Why: issue 24 brings the triangular and hexagonal lattices to the engine;
 * its counts need a judge that shares no code with it.  This reference is
 * written from the lattice definitions in issue 24 (Polyform Puzzler's
 * coordinates) and includes nothing from src/: its own transforms, its own
 * neighbours, its own search.  It is slow and plain on purpose.
 *
 * Coordinates (a cell is always three integers):
 *   cubic:       (x, y, z), a flat puzzle has z = 0;
 *   triangular:  (x, y, z), z = 0 the up triangle with corners (x, y),
 *                (x+1, y), (x, y+1); z = 1 the down triangle with corners
 *                (x+1, y), (x+1, y+1), (x, y+1);
 *   hexagonal:   axial (x, y), z = 0.
 *
 * Motions a piece may make:
 *   plane lattices: free = the 6 turns and the 6 flips, one-sided = the 6
 *   turns, none = translations only; `mirror` adds each motion's flip;
 *   cubic: free = the 24 rotations, one-sided = the 4 turns about z,
 *   none = translations only; `mirror` adds each one's reflection x -> -x.
 *
 * Counts: raw (every distinct tiling; copies of one piece are
 * interchangeable), rotations (up to the motions of space that map the
 * board onto itself: on the plane lattices all 12, turning a flat board
 * over being a rotation in space; on the cubic lattice the 24 proper
 * rotations) and mirror (also reflections: all 48 on the cubic lattice;
 * on the plane lattices the same as rotations).  Under a board symmetry a
 * piece whose image it may not take becomes the piece listed as that image
 * (the twin of the same rank, as tests/unit/test_diff.c's header says), so
 * a reflected solution is the same solution when its pieces match the
 * puzzle's within their counts.  Twins listed in unequal numbers of
 * entries (A x2 against B1, B2), which the engine relabels
 * (src/engine/symmetry.h), are beyond this rule: the generator never
 * makes them (it merges all equal pieces or none), and test_diff.c's
 * "uneven" family checks them.
 *
 * From a differential test (a tsr_puzzle on any lattice): board cells and
 * piece cells copy over as they are (tsr_cell and ref_cell are both x, y,
 * z); a piece's count range is min..max, `fixed` as it is; "rotations"
 * all / one-sided / none is REF_FREE / REF_ONE_SIDED / REF_NONE and
 * "mirror" is `mirror`.  Then ref_solve, ref_count per mode, and per
 * reported solution ref_find (is it a raw tiling?) and ref_class (is its
 * class new?), as test_diff.c does with its own reference.  Single-threaded
 * (the first call fills a static table).
 */
#ifndef REF_LATTICE_H
#define REF_LATTICE_H

#include <stdbool.h>
#include <stdint.h>

#define REF_MAXB 128   /* board cells */
#define REF_MAXP 64    /* pieces (entries) */
#define REF_MAXPC 12   /* cells of a piece */

enum ref_lattice { REF_CUBIC, REF_TRIANGULAR, REF_HEXAGONAL };
enum ref_motion { REF_FREE, REF_ONE_SIDED, REF_NONE };
enum ref_mode { REF_RAW, REF_ROTATIONS, REF_MIRROR };

typedef struct ref_cell {
    int x, y, z;
} ref_cell;

typedef struct ref_piece {
    const char *name;      /* for messages only; may be NULL */
    const ref_cell *cells;
    int ncells;
    int min, max;          /* a solution uses min..max copies */
    bool fixed;            /* placed at exactly its cells, once (min and max ignored);
                            * its cells must be required board cells */
} ref_piece;

typedef struct ref_puzzle {
    enum ref_lattice lattice;
    enum ref_motion motion;    /* of every mobile piece, as Tessera's "rotations" */
    bool mirror;               /* adds each motion's reflection, as Tessera's "mirror" */
    const ref_cell *board;
    int nboard;
    const ref_cell *optional;  /* board cells a solution may leave empty */
    int noptional;
    const ref_piece *pieces;
    int npieces;
} ref_puzzle;

typedef struct ref_result ref_result;

/* ---- the counter ------------------------------------------------------------ */

/* Enumerate every tiling (at most max_tilings, searching at most max_nodes
 * nodes) and count the classes.  NULL when the puzzle is malformed (a cell
 * repeated, a triangle kind other than 0 or 1, a fixed piece off the board
 * or on an optional cell, ...) or beyond REF_MAX*; otherwise check
 * ref_complete() before trusting counts (ref_count is -1 past a cap).
 * About 20 million nodes a second: the 37-cell polyhex hexagon (147,480
 * tilings) takes 5 s, 36.8 million nodes, 11 MB. */
ref_result *ref_solve(const ref_puzzle *pz, long max_tilings, long long max_nodes);
void ref_free(ref_result *R);
bool ref_complete(const ref_result *R);       /* no cap was reached */
long long ref_count(const ref_result *R, enum ref_mode mode);
long long ref_nodes(const ref_result *R);
long ref_ntilings(const ref_result *R);

/* A tiling given by the caller: owner[i] is the placement covering
 * pz->board[i] (-1: an empty optional cell), piece_of[k] the index in
 * pz->pieces of placement k.  Returns the index of that raw tiling, or -1
 * when it is none of them (an invalid tiling is none of them). */
long ref_find(const ref_result *R, const int *owner, const int *piece_of);
/* The class of tiling t in a counting mode: the smallest tiling index in
 * its class (REF_RAW: t itself).  Two tilings are the same solution in a
 * mode exactly when their classes are equal. */
long ref_class(const ref_result *R, long t, enum ref_mode mode);
/* Tiling t as owner/piece_of arrays (as for ref_find); returns the number
 * of placements. */
int ref_tiling(const ref_result *R, long t, int *owner, int *piece_of);
/* The board's symmetries in a mode (identity first) and the tiling that
 * symmetry s maps tiling t to (-1: no raw tiling, e.g. a count range is
 * not met by the relabelled pieces). */
int ref_nsymmetries(const ref_result *R, enum ref_mode mode);
long ref_image(const ref_result *R, long t, int s);

/* ---- the lattice, as the reference sees it ------------------------------------ */

/* Point-group transforms, identity first: cubic 48 (the 24 proper ones
 * first), plane lattices 12 (k < 6: turns by k*60 degrees; k >= 6: the
 * flip, then k-6 turns).  Each is a lattice map up to a translation. */
int ref_ntransforms(enum ref_lattice L);
ref_cell ref_transform(enum ref_lattice L, int k, ref_cell c);
/* The transforms a piece may make (indices into the above). */
int ref_motions(enum ref_lattice L, enum ref_motion m, bool mirror, int *out);
/* Edge (face) neighbours: 6 cubic, 3 triangular, 6 hexagonal. */
int ref_neighbours(enum ref_lattice L, ref_cell c, ref_cell *out);
/* Sort cells in the lattice's order and translate the first to the origin
 * (the triangle kind z is kept). */
void ref_normalise(enum ref_lattice L, ref_cell *c, int n);
/* Canonical form under the given transforms (smallest normalised image). */
void ref_canonical(enum ref_lattice L, const int *xf, int nxf, const ref_cell *c, int n, ref_cell *out);
int ref_cell_cmp(enum ref_lattice L, ref_cell a, ref_cell b);
bool ref_connected(enum ref_lattice L, const ref_cell *c, int n);

/* ---- random puzzles ------------------------------------------------------------- */

enum ref_board_kind {
    REF_BOARD_PARALLELOGRAM,
    REF_BOARD_HEXAGON,
    REF_BOARD_BLOB,
    REF_BOARD_SYMMETRIC_BLOB,
    REF_BOARD_DOUBLED,          /* a cut blob and its image under a flip or a half turn beside it */
    REF_BOARD_KINDS
};

typedef struct ref_gen_opts {
    enum ref_lattice lattice;
    enum ref_board_kind board;  /* parallelogram (a box on the cubic lattice, flat or not),
                                 * regular hexagon (a square on the cubic lattice), random
                                 * blob, a blob closed under a random transform, or a cut
                                 * blob doubled by a flip or a half turn (pieces in pairs) */
    int min_cells, max_cells;   /* board size (hexagons: the largest that fits) */
    int min_piece, max_piece;   /* cut pieces' sizes (a piece stuck smaller usually joins a
                                 * neighbour); keep max_cells / min_piece under REF_MAXP */
    enum ref_motion motion;
    bool mirror;
    int holes;                  /* cells removed from the board before the cut */
    bool merge;                 /* equal pieces become one piece with a count */
    bool ranges;                /* some counts become ranges, maybe an extra dihex-like piece from 0 */
    int optional;               /* board cells made optional (at most; never under a fixed piece) */
    bool optional_symmetric;    /* the optional set closed under the board's symmetries */
    int fixed;                  /* cut pieces left in place as fixed pieces (at most) */
} ref_gen_opts;

typedef struct ref_gen {
    ref_puzzle pz;
    ref_cell board[REF_MAXB];
    ref_cell optional[REF_MAXB];
    ref_piece pieces[REF_MAXP];
    ref_cell piece_cells[REF_MAXP][REF_MAXPC];
    char names[REF_MAXP][8];
    /* the cut: cut_owner[i] is the cut piece on board cell i, and cut
     * piece p became pz.pieces[cut_piece[p]] */
    int ncut;
    int cut_owner[REF_MAXB];
    int cut_piece[REF_MAXB];
} ref_gen;

/* Draw a puzzle from the seed (the same seed, the same puzzle): a board
 * cut into random connected pieces, so that the cut is a solution. */
void ref_generate(uint64_t seed, const ref_gen_opts *o, ref_gen *out);

#endif
