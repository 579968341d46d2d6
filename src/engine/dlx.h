/*
 * dlx.h - Knuth's dancing links over the compiled images.
 *
 * Columns are the free cells followed by one column per piece type.  A
 * required cell is primary (covered exactly once); an optional cell is
 * secondary (covered at most once: selecting a row covers it, removing the
 * rows that conflict, but it is never in the header list, so never chosen
 * and never required).  A type column is covered between count_min and
 * count times: need[] counts the copies still allowed, low[] those still
 * required (<= 0 once the minimum is met); the column is covered, hiding
 * its rows, when need reaches 0.  For an exact puzzle low == need always.
 * Rows are the images that survived the root filters.
 *
 * A column is branched on only when every solution below takes exactly
 * one of its rows: a cell, or a type with need == low == 1.  So a type
 * column with more than one copy left is never chosen: branching on cells
 * only visits each set of identical pieces once, never in their k! orders.
 *
 * The structure supports what the search driver needs: choosing a column by
 * a heuristic, selecting and unselecting a row, hiding rows for the filters,
 * and enumerating the rows that are still available.
 */
#ifndef TSR_DLX_H
#define TSR_DLX_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/images.h"

typedef struct dlx dlx;

/* The matrix of the images with alive[i] set (NULL: all of them); NULL
 * when out of memory or when `stop` (may be NULL) asks to stop. */
dlx *dlx_new(const img_problem *ip, const unsigned char *alive, const tsr_stop *stop);
void dlx_free(dlx *d);

/* Choose a column; returns its id (cells are 0..ncells-1, types follow), or
 * -1 when no column can be branched on (every column covered, for an exact
 * puzzle).  A dead column (fewer rows than the copies it requires) or one
 * with one option always wins.  Otherwise, with rank == NULL the column with
 * fewest options (Knuth's min-fit); else the open cell of lowest rank[cell],
 * ties to fewer options.  *options gets the column's number of rows; fewer
 * than the copies it needs (dlx_need_of) means the position is dead. */
int dlx_choose(const dlx *d, const double *rank, int *options);
int dlx_need_of(const dlx *d, int c);

/* Loose puzzles, once dlx_choose finds nothing to branch on: the open type
 * column with rows (the fewest, first in header order on ties), or -1 when
 * none has any (then the placed rows are a solution).  *low gets the copies
 * of it still required. */
int dlx_open_type(const dlx *d, int *low);

/* Rows of column c in order: first row node, then next; -1 at the end.
 * Iterate only between dlx_cover_column and dlx_uncover_column of c. */
int dlx_first(const dlx *d, int c);
int dlx_next(const dlx *d, int node);
int dlx_row_of(const dlx *d, int node); /* image id */

/* Branching on column c: cover it once, then for each row node select the
 * row's other columns, recurse, unselect; finally uncover c. */
void dlx_cover_column(dlx *d, int c);
void dlx_uncover_column(dlx *d, int c);
void dlx_select(dlx *d, int node);
void dlx_unselect(dlx *d, int node);

/* Place an image directly (for starting from a partial assembly); false
 * when it is not available.  Undo with dlx_unplace in reverse order. */
bool dlx_place(dlx *d, int image);
void dlx_unplace(dlx *d, int image);

/* Hide an available row (filters); dlx_unhide must be called in reverse order. */
void dlx_hide(dlx *d, int image);
void dlx_unhide(dlx *d, int image);

/* Is the image's row currently available (not hidden, not conflicting)? */
bool dlx_available(const dlx *d, int image);

/* Available rows, written to out (capacity ip->nimages); returns count. */
int dlx_rows(const dlx *d, int *out);

/* State summaries. */
int dlx_remaining_copies(const dlx *d);
int dlx_need(const dlx *d, int type);       /* copies of a type left */
int dlx_low(const dlx *d, int type);        /* ... of them still required */
bool dlx_cell_open(const dlx *d, int cell);
int dlx_col_len(const dlx *d, int c);
bool dlx_dead(const dlx *d);                 /* some column cannot be satisfied */

#endif
