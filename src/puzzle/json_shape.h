/*
 * json_shape.h - the shape grammar of Puzzle JSON (json_shape.c): the
 * cells of the board or of one piece, as json_read.c asks for them.
 */
#ifndef TSR_JSON_SHAPE_H
#define TSR_JSON_SHAPE_H

#include <jansson.h>

#include "puzzle/json_read.h"
#include "tessera/puzzle.h"

/* Cells being collected for the board or one piece, and their colours:
 * `col` is allocated at the first colour and then stays parallel to v
 * (same capacity), NULL while every cell is neutral.  The owner frees v
 * and col. */
typedef struct jshape_cells {
    tsr_cell *v;
    unsigned char *col;
    int n;
    size_t cap;
} jshape_cells;

/* What differs between a board shape and a piece shape. */
typedef struct jshape_kind {
    const char *what;          /* "the board", "the piece" */
    const char *const *forms;  /* exactly one of these keys must be present */
    char cell;                 /* art character for a cell ... */
    char optional;             /* ... for an optional cell ('\0': none) ... */
    const char *blank;         /* ... and those for no cell */
    const char *art_help;      /* both, for messages */
    int limit;                 /* most cells allowed */
} jshape_kind;

extern const jshape_kind jshape_board, jshape_piece;
/* a fixed piece shapes the board, so it may be as large as the board */
extern const jshape_kind jshape_fixed_piece;

/* The cells of a board or piece object, into cv (emptied first, colours
 * too); optional cells drawn in art also into opt (board only).  `colors`
 * is the highest colour number allowed. */
int jshape_read(jr_reader *r, const json_t *obj, const jshape_kind *k, jshape_cells *cv,
                jshape_cells *opt, int colors);

/* The board's "optional": cells (of any form) a solution may leave empty,
 * appended to opt, which may already hold the '+' cells of the art. */
int jshape_read_optional(jr_reader *r, const json_t *board, jshape_cells *opt);

#endif
