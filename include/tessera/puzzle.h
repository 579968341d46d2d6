/*
 * tessera/puzzle.h - the puzzle model, its readers and the solution writers.
 *
 * A puzzle is a board (any finite set of cells of the cubic lattice, 2D
 * boards having z = 0 everywhere) and a list of pieces.  A piece is any
 * non-empty set of cells, with a count of identical copies; a fixed piece is
 * placed exactly where its cells say and occupies those board cells.
 *
 * Loose puzzles: a mobile piece's count may be a range (a solution uses
 * between count_min and count copies), and some board cells may be
 * optional (a solution may leave them empty).  A puzzle with neither is
 * "exact": every solution is an exact cover of the free cells.
 * Coordinates of mobile pieces are only a shape: their position is ignored.
 *
 * Colours (BurrTools' colour constraints): board cells and piece cells may
 * carry a colour number, 1 to TSR_MAX_COLORS, or 0 for neutral; the
 * puzzle lists the allowed (piece colour, board colour) pairs.  A piece
 * cell of colour p may sit on a board cell of colour b when p or b is
 * neutral or (p, b) is allowed (tsr_puzzle_color_allowed), so a coloured
 * cell whose colour has no pair sits on neutral cells only.  Colours turn
 * with the piece and are part of its shape: two orientations whose cells
 * coincide but whose colours differ are two placements, and a symmetry of
 * the board must keep its colouring.  A puzzle without colours has NULL
 * colour arrays and no pairs, and nothing of this costs it anything.
 *
 * The model is plain data owned by the caller: build it with the readers
 * (JSON version 1 or polycube definition text) or by hand with the helpers
 * below, then hand it to the engine (tessera/engine.h).
 */
#ifndef TESSERA_PUZZLE_H
#define TESSERA_PUZZLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "lattice.h"

/* Hard caps that keep absurd input from exhausting memory.  They are far
 * above any real puzzle (the largest known boards have a few thousand cells). */
#define TSR_MAX_CELLS 100000      /* board cells */
#define TSR_MAX_PIECES 10000      /* piece entries */
#define TSR_MAX_PIECE_CELLS 1000  /* cells of one mobile piece (fixed ones: TSR_MAX_CELLS) */
#define TSR_MAX_COORD 100000      /* |coordinate| */
#define TSR_MAX_NAME 64           /* bytes of a piece name */
#define TSR_MAX_COLORS 63         /* colour numbers 1..63, as BurrTools (0 is neutral) */


enum tsr_unique {
    TSR_UNIQUE_RAW = 0,       /* every distinct tiling */
    TSR_UNIQUE_ROTATIONS = 1, /* up to proper rotations of the whole board */
    TSR_UNIQUE_MIRROR = 2     /* up to rotations and reflections */
};

/* The counting modes' names, indexed by enum tsr_unique, NULL after the
 * last: the one spelling of the option, of a puzzle file's "expected", of
 * the API and of the CLI. */
extern const char *const tsr_unique_names[];

/* What each mode identifies, indexed as the names, for help texts. */
extern const char *const tsr_unique_help[];

/* The mode named `name`, or -1. */
int tsr_unique_parse(const char *name);

typedef struct tsr_piece {
    char *name;       /* non-empty, at most TSR_MAX_NAME bytes, unique in the puzzle */
    tsr_cell *cells;  /* ncells distinct cells */
    int ncells;
    int count;        /* identical copies (the most a solution uses), >= 1;
                         fixed pieces have count 1 */
    int count_min;    /* the fewest copies a solution uses, 0 <= count_min <= count;
                         equal to count unless the puzzle gave a range */
    bool fixed;       /* placed exactly at `cells` */
    unsigned char *colors; /* ncells colours parallel to cells (0 neutral, at most
                              TSR_MAX_COLORS); NULL when every cell is neutral */
} tsr_piece;

/* An allowed colour pair: a piece cell of colour `piece` may sit on a board
 * cell of colour `board` (both 1..TSR_MAX_COLORS). */
typedef struct tsr_color_pair {
    unsigned char piece, board;
} tsr_color_pair;

typedef struct tsr_puzzle {
    char *name;         /* may be NULL */
    char *description;  /* may be NULL */
    tsr_cell *cells;    /* the board, distinct cells, fixed pieces' cells included */
    int ncells;
    tsr_cell *optional; /* board cells a solution may leave empty (distinct, not
                           under fixed pieces); NULL when noptional is 0 */
    int noptional;
    tsr_piece *pieces;
    int npieces;
    enum tsr_lattice lattice;     /* default TSR_LATTICE_CUBIC (0); every cell is on it */
    enum tsr_rotations rotations; /* default TSR_ROT_ALL */
    bool mirror;                  /* also allow reflected pieces */
    long long expected[3];        /* published solution counts, indexed by
                                     enum tsr_unique; -1 where unknown */
    unsigned char *colors;        /* ncells board colours parallel to cells (0 neutral);
                                     NULL when every cell is neutral */
    tsr_color_pair *allowed;      /* the allowed pairs, each listed once; NULL when none */
    int nallowed;
    uint32_t *palette;            /* display colours 0xRRGGBB of colours 1..npalette (the
                                     colours a BurrTools file defines); NULL when none */
    int npalette;                 /* 0, or at least every colour number used */
} tsr_puzzle;

/* Construction and destruction.  tsr_puzzle_new returns NULL when out of
 * memory.  add_* copy their arguments. */
tsr_puzzle *tsr_puzzle_new(void);
void tsr_puzzle_free(tsr_puzzle *pz);
int tsr_puzzle_set_name(tsr_puzzle *pz, const char *name);
int tsr_puzzle_set_description(tsr_puzzle *pz, const char *text);
int tsr_puzzle_add_board_cell(tsr_puzzle *pz, tsr_cell c);
/* Marks a cell, which must also be a board cell, as optional. */
int tsr_puzzle_add_optional_cell(tsr_puzzle *pz, tsr_cell c);
/* Returns the new piece's index (>= 0) or a negative error code.  The
 * piece gets exactly `count` copies (count_min = count); set a range by
 * assigning count_min afterwards. */
int tsr_puzzle_add_piece(tsr_puzzle *pz, const char *name, const tsr_cell *cells,
                         int ncells, int count, bool fixed);

/* Colours (see the top of this file).  set_*_colors copy ncells colours
 * (NULL, or all neutral: none); call them after the cells are added (a
 * board cell added later is neutral).  allow_colors adds a pair once. */
int tsr_puzzle_set_board_colors(tsr_puzzle *pz, const unsigned char *colors);
int tsr_puzzle_set_piece_colors(tsr_puzzle *pz, int piece, const unsigned char *colors);
int tsr_puzzle_allow_colors(tsr_puzzle *pz, int piece_color, int board_color);
int tsr_puzzle_set_palette(tsr_puzzle *pz, const uint32_t *rgb, int n);
/* May a piece cell of colour p sit on a board cell of colour b? */
bool tsr_puzzle_color_allowed(const tsr_puzzle *pz, int p, int b);
/* True when some board or piece cell has a colour. */
bool tsr_puzzle_has_colors(const tsr_puzzle *pz);

/* Consistency checks the engine relies on: a non-empty board without
 * duplicate cells, non-empty pieces without duplicate cells, unique names,
 * count ranges with 0 <= count_min <= count, fixed pieces on the board and
 * not overlapping one another, optional cells on the board and off the
 * fixed pieces, and volumes that can match: some choice of counts within
 * the ranges covers every required free cell and fits in the free cells
 * (for an exact puzzle: the mobile volume equals the free volume); colours
 * from 0 to TSR_MAX_COLORS (and within the palette when there is one),
 * pairs of colours 1 to TSR_MAX_COLORS listed once, and fixed pieces whose
 * cells may sit where they are.  `what`
 * prefixes messages (a file name, say); it may be NULL. */
int tsr_puzzle_validate(const tsr_puzzle *pz, const char *what, tsr_err *err);

/* A BurrTools file (.xmpuzzle: gzip-compressed XML, or the XML itself) as
 * a puzzle: the problem `problem` names (its number from 1, or its name;
 * NULL: the first), its result shape the board ('+' voxels optional), its
 * shapes the pieces with their counts or ranges, turned in the 24 rotations
 * and never mirrored (BurrTools' rules), with their colours, the problem's
 * colour constraints and the file's colours as the palette.  Only the cube
 * grid.  src/puzzle/xmpuzzle.c
 * says what is bounded. */
int tsr_puzzle_read_xmpuzzle(const void *data, size_t len, const char *source, const char *problem,
                             tsr_puzzle **out, tsr_err *err);
/* Does the data look like one (gzip magic, or XML)? */
bool tsr_is_xmpuzzle(const void *data, size_t len);

/* Number of board cells not covered by fixed pieces (optional ones
 * included), and volume of the mobile pieces at their largest counts. */
long tsr_puzzle_free_volume(const tsr_puzzle *pz);
long tsr_puzzle_piece_volume(const tsr_puzzle *pz);

/* True when every board cell and every piece cell has z == 0. */
bool tsr_puzzle_is_flat(const tsr_puzzle *pz);

/* True when no cell is optional and every mobile piece has a fixed count. */
bool tsr_puzzle_is_exact(const tsr_puzzle *pz);

/* The job options (the struct, its list and its readers and writers) are
 * tessera/options.h, included at the end of this file. */
typedef struct tsr_options tsr_options;

/* ---- Readers -------------------------------------------------------------
 * All readers take the whole document in memory.  `source` names it in error
 * messages (a file name, "<stdin>", "request body"); it may be NULL.  On
 * failure *out is NULL, err names the JSON path or line, and the return
 * code is negative (TSR_EINVAL for bad input, TSR_ETOOBIG over a cap). */

/* Puzzle JSON version 1 (docs/puzzle-format.md).  Accepts a bare puzzle
 * object or a job {"puzzle": {...}, "options": {...}} or a job with the
 * puzzle as polycube text {"polycube": "...", "options": {...}}; when `opt` is not
 * NULL it is initialised and the job's options (if any) are stored in it. */
int tsr_puzzle_read_json(const char *text, size_t len, const char *source,
                         tsr_puzzle **out, tsr_options *opt, tsr_err *err);

/* polycube definition files (D:/C:/L ... ~L/~D). */
int tsr_puzzle_read_polycube(const char *text, size_t len, const char *source,
                             tsr_puzzle **out, tsr_err *err);

/* Detect the format from the content (first non-blank character '{' means
 * JSON) and read it. */
int tsr_puzzle_read(const char *text, size_t len, const char *source,
                    tsr_puzzle **out, tsr_options *opt, tsr_err *err);

/* The whole of a file (or stdin for "-"), NUL-terminated, in a buffer to
 * free; *len excludes the NUL.  Files over 16 MiB are refused.  Errors name
 * the file as tsr_file_name does. */
int tsr_file_read(const char *path, char **text, size_t *len, tsr_err *err);
/* How messages name a file: "<stdin>" for "-", else the path. */
const char *tsr_file_name(const char *path);

/* Read a whole file (or stdin for "-") and parse it with tsr_puzzle_read. */
int tsr_puzzle_load_file(const char *path, tsr_puzzle **out, tsr_options *opt,
                         tsr_err *err);

/* ---- Solutions and writers -------------------------------------------- */

typedef struct tsr_placement {
    int piece;              /* index into puzzle->pieces */
    int ncells;
    const tsr_cell *cells;  /* board cells it occupies */
    const unsigned char *colors; /* the piece's colour on each of those cells, as
                                    turned; NULL when the piece is neutral */
} tsr_placement;

typedef struct tsr_solution {
    int nplacements;               /* fixed pieces included */
    const tsr_placement *placements;
} tsr_solution;

/* Text layers: one grid per z layer (z = 0 first), rows with y = 0 first,
 * each board cell showing its piece's name (padded to the longest name),
 * '.' for a cell that no placement covers, '+' for an optional cell that no
 * placement covers, and ' ' off the board.  Layers are
 * separated by a blank line; a solid (more than one layer) heads each with
 * its line "z = K".  The plane lattices are drawn as their art
 * (docs/puzzle-format.md): rows with the highest y first, a hexagon (x, y)
 * at column 2x + y, a triangle (x, y, z) at column 2x + y + z (times the
 * label's width plus a blank when names are longer than one character). */
int tsr_write_solution_text(FILE *f, const tsr_puzzle *pz, const tsr_solution *s);

/* One line: {"pieces": [{"name": "F", "cells": [[x,y,z], ...]}, ...]}; on
 * a plane lattice {"lattice": "hexagonal", "pieces": [...]} (hexagons
 * [x, y]) or "triangular". */
int tsr_write_solution_json(FILE *f, const tsr_puzzle *pz, const tsr_solution *s);

/* A polycube definition of the sub-puzzle left when the placements of `s`
 * are stationary and the pieces it does not place are mobile: a partial
 * assembly becomes a file that can be solved on its own.  TSR_EUNSUPP for
 * what the format cannot say: no rotations, mirrored 3D pieces, optional
 * cells, count ranges, colours, a lattice other than the cubic one. */
int tsr_write_polycube(FILE *f, const tsr_puzzle *pz, const tsr_solution *s);

/* The whole puzzle as JSON version 1 (one object, pretty-printed). */
int tsr_write_puzzle_json(FILE *f, const tsr_puzzle *pz);

/* The whole puzzle as a BurrTools file (src/puzzle/xmwrite.c): gzip-
 * compressed XML (the XML itself when gzip is false) with a shape per
 * mobile piece, the board as the result shape (optional cells variable
 * voxels, fixed pieces carved out: BurrTools has none) and one problem
 * named after the puzzle, the pieces' counts or ranges.  What BurrTools
 * cannot express is refused, err naming it: a piece that the puzzle's
 * "rotations" or "mirror" give other orientations on the board than
 * BurrTools' 24 rotations (TSR_EUNSUPP), text XML cannot carry
 * (TSR_EUNSUPP), more than tsr_puzzle_read_xmpuzzle reads back
 * (TSR_ETOOBIG).  Nothing is written then. */
int tsr_write_xmpuzzle(FILE *f, const tsr_puzzle *pz, bool gzip, tsr_err *err);

/* ---- Converting (src/puzzle/convert.c) --------------------------------
 * A whole puzzle in one of the formats the readers read, for `tessera
 * convert` and POST /api/v1/convert. */
enum tsr_format {
    TSR_FORMAT_JSON = 0,     /* Puzzle JSON version 1 */
    TSR_FORMAT_POLYCUBE = 1, /* a polycube definition file */
    TSR_FORMAT_XMPUZZLE = 2  /* a BurrTools file, gzip-compressed */
};
/* The formats' names ("json", "polycube", "xmpuzzle"), NULL after the last. */
extern const char *const tsr_format_names[];
/* The format named `name`, or -1. */
int tsr_format_parse(const char *name);
/* The format a file name's extension says (.json; .txt or .polycube;
 * .xmpuzzle), or -1. */
int tsr_format_of_path(const char *path);
/* A format's file extension (".json", ".txt", ".xmpuzzle") and media type. */
const char *tsr_format_extension(enum tsr_format format);
const char *tsr_format_media_type(enum tsr_format format);
/* pz in `format`, whole, into a new buffer (*out, to free; *len bytes):
 * 0, or a negative code with err naming what the format cannot express
 * (*out NULL). */
int tsr_puzzle_write(const tsr_puzzle *pz, enum tsr_format format, char **out, size_t *len,
                     tsr_err *err);

#include "options.h" /* after everything it uses from this file */

#endif
