/*
 * json_shape.c - the shape grammar of Puzzle JSON (docs/puzzle-format.md,
 * "Coordinates and art"): the cells of the board or of one piece, from
 * "size", "rows", "layers" or "cells" (with "colors" beside a list), and
 * the board's "optional" list.
 *
 * The board and the pieces share the grammar ("size" is board-only): art
 * and cell lists go through the same helpers, with the art alphabet
 * swapped ('.' is a board cell, '#' a piece cell).  The board alone has
 * optional cells: '+' in its art, and its "optional" list beside any
 * form.  A digit 1-9 in art is a cell of that colour.  What only this
 * layer can point at by path (bad art characters, duplicate cells in a
 * list, caps) is caught here; the rules spanning the puzzle are
 * tsr_puzzle_validate's.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "geom/geom.h"
#include "puzzle/json_read.h"
#include "puzzle/json_shape.h"
#include "tessera/puzzle.h"

static const char *const board_forms[] = {"size", "rows", "layers", "cells", NULL};
static const char *const piece_forms[] = {"cells", "rows", "layers", NULL};

const jshape_kind jshape_board = {"the board", board_forms, '.', '+', "# ",
                                      "'.' for a cell, '+' for an optional cell, '#' or ' ' "
                                      "for none", TSR_MAX_CELLS};
const jshape_kind jshape_piece = {"the piece", piece_forms, '#', '\0', ". ",
                                      "'#' for a cell, '.' or ' ' for none",
                                      TSR_MAX_PIECE_CELLS};
/* a fixed piece shapes the board, so it may be as large as the board */
const jshape_kind jshape_fixed_piece = {"the piece", piece_forms, '#', '\0', ". ",
                                            "'#' for a cell, '.' or ' ' for none",
                                            TSR_MAX_CELLS};

static int cells_push(jr_reader *r, jshape_cells *cv, const jshape_kind *k, tsr_cell c)
{
    if (cv->n >= k->limit)
        return jr_fail(r, TSR_ETOOBIG, "%s has more than %d cells", k->what, k->limit);
    size_t cap = cv->cap;
    if (base_grow((void **)&cv->v, &cv->cap, (size_t)cv->n, sizeof *cv->v, 64, 0) != 0)
        return jr_fail(r, TSR_ENOMEM, "out of memory");
    if (cv->col != NULL && cv->cap != cap) {
        unsigned char *col = realloc(cv->col, cv->cap);
        if (col == NULL)
            return jr_fail(r, TSR_ENOMEM, "out of memory");
        cv->col = col;
    }
    if (cv->col != NULL)
        cv->col[cv->n] = 0;
    cv->v[cv->n++] = c;
    return 0;
}

/* The colour of cell i (< cv->n). */
static int cells_color(jr_reader *r, jshape_cells *cv, int i, int color)
{
    if (cv->col == NULL && color != 0 && (cv->col = calloc(cv->cap, 1)) == NULL)
        return jr_fail(r, TSR_ENOMEM, "out of memory");
    if (cv->col != NULL)
        cv->col[i] = (unsigned char)color;
    return 0;
}

/* "size": [X, Y] or [X, Y, Z], the whole box; on the plane lattices
 * [W, H], the parallelogram 0 <= x < W, 0 <= y < H (both triangles of
 * each rhombus on the triangular lattice: 2WH cells). */
static int read_size(jr_reader *r, const json_t *size, const jshape_kind *k, jshape_cells *cv)
{
    size_t n = json_array_size(size);
    bool plane = r->lattice != TSR_LATTICE_CUBIC;
    if (plane && json_is_array(size) && n != 2)
        return jr_fail_type(r, size, r->lattice == TSR_LATTICE_HEXAGONAL
                                         ? "[W, H] on the hexagonal lattice: the parallelogram "
                                           "of W x H hexagons"
                                         : "[W, H] on the triangular lattice: the parallelogram "
                                           "of W x H rhombi, 2WH triangles");
    if (!json_is_array(size) || n < 2 || n > 3)
        return jr_fail_type(r, size, "an array of 2 or 3 positive integers");
    /* the triangles' kinds are a third dimension of 2 */
    long long dim[3] = {1, 1, r->lattice == TSR_LATTICE_TRIANGULAR ? 2 : 1}, total = dim[2];
    for (size_t i = 0; i < n; i++) {
        size_t mark = jr_push_index(&r->path, i);
        int rc = jr_want_int(r, json_array_get(size, i), 1, LLONG_MAX, &dim[i]);
        if (rc)
            return rc;
        jr_pop(&r->path, mark);
        /* total * dim[i] > limit, tested without overflowing */
        if (dim[i] > k->limit / total)
            return jr_fail(r, TSR_ETOOBIG, "%s would have more than %d cells", k->what,
                           k->limit);
        total *= dim[i];
    }
    for (int z = 0; z < dim[2]; z++)
        for (int y = 0; y < dim[1]; y++)
            for (int x = 0; x < dim[0]; x++) {
                int rc = cells_push(r, cv, k, (tsr_cell){x, y, z});
                if (rc)
                    return rc;
            }
    return 0;
}

/* One character of art at `column`: *cell (a cell, or no cell and no
 * complaint), *optional and *color say what it draws; else an error.  On
 * the triangular lattice '^' and 'v' draw a cell too (the row reader
 * checks their kind); elsewhere they are refused with a word on why. */
static int art_char(jr_reader *r, const jshape_kind *k, char ch, size_t column, int colors,
                    bool *cell, bool *optional, int *color)
{
    bool kinds = r->lattice == TSR_LATTICE_TRIANGULAR;
    *optional = k->optional != '\0' && ch == k->optional;
    *color = ch >= '1' && ch <= '9' ? ch - '0' : 0;
    if (*color > colors)
        return jr_fail(r, TSR_EINVAL, "colour %d at column %zu, but the palette has %d colour%s",
                       *color, column, colors, colors == 1 ? "" : "s");
    *cell = ch == k->cell || *optional || *color || (kinds && (ch == '^' || ch == 'v'));
    if (*cell || (ch != '\0' && strchr(k->blank, ch) != NULL))
        return 0;
    if (ch == '^' || ch == 'v')
        return jr_fail(r, TSR_EINVAL, "'%c' at column %zu: '^' and 'v' draw the triangles of the "
                       "triangular lattice; on the %s lattice the art has %s", ch, column,
                       tsr_lattice_names[r->lattice], k->art_help);
    char shown[8];
    unsigned char c = (unsigned char)ch;
    if (isprint(c))
        snprintf(shown, sizeof shown, "'%c'", c);
    else
        snprintf(shown, sizeof shown, "\\x%02x", c);
    return jr_fail(r, TSR_EINVAL, "invalid character %s at column %zu; expected %s, %sor a "
                   "digit 1-9 for a cell of that colour", shown, column, k->art_help,
                   kinds ? "'^' or 'v' for a cell pointing up or down, " : "");
}

/* A cell drawn in art: into cv (with its colour), and into opt when it is
 * optional. */
static int art_cell(jr_reader *r, const jshape_kind *k, tsr_cell c, bool optional, int color,
                    jshape_cells *cv, jshape_cells *opt)
{
    int rc = cells_push(r, cv, k, c);
    if (rc == 0 && color)
        rc = cells_color(r, cv, cv->n - 1, color);
    if (rc == 0 && optional)
        rc = cells_push(r, opt, k, c);
    return rc;
}

/* "rows" on the cubic lattice: one layer of art at height z; row i is
 * y = i, column j is x = j.  Optional cells (board art) go to cv and to
 * opt. */
static int read_rows(jr_reader *r, const json_t *rows, size_t z, const jshape_kind *k,
                     jshape_cells *cv, jshape_cells *opt, int colors)
{
    if (!json_is_array(rows))
        return jr_fail_type(r, rows, "an array of strings");
    for (size_t y = 0; y < json_array_size(rows); y++) {
        size_t mark = jr_push_index(&r->path, y);
        const json_t *row = json_array_get(rows, y);
        if (!json_is_string(row))
            return jr_fail_type(r, row, "a string");
        const char *s = json_string_value(row);
        for (size_t x = 0; x < json_string_length(row); x++) {
            bool cell, optional;
            int color, rc = art_char(r, k, s[x], x, colors, &cell, &optional, &color);
            if (rc == 0 && cell && (x > TSR_MAX_COORD || y > TSR_MAX_COORD || z > TSR_MAX_COORD))
                rc = jr_fail(r, TSR_ETOOBIG, "cell at column %zu is beyond coordinate %d", x,
                             TSR_MAX_COORD);
            if (rc == 0 && cell)
                rc = art_cell(r, k, (tsr_cell){(int)x, (int)y, (int)z}, optional, color, cv, opt);
            if (rc)
                return rc;
        }
        jr_pop(&r->path, mark);
    }
    return 0;
}

/* Where the first cell of a hexagonal drawing was, which fixes the parity
 * of column - y for every other cell. */
typedef struct hex_anchor {
    bool set;
    int parity;
    size_t row, column;
} hex_anchor;

/* The cell at `column` of row `i` of a plane drawing whose rows give
 * y = ylast - i (the last row is y = 0), into *c; `ch` is the character.
 * Hexagons sit at column 2x + y, triangles at column 2x + y + z: column - y
 * is 2x (+ 1 for a down triangle, or for every hexagon of a drawing set
 * one column over). */
static int plane_cell(jr_reader *r, char ch, size_t i, size_t column, size_t ylast,
                      hex_anchor *a, tsr_cell *c)
{
    if (ylast - i > TSR_MAX_COORD)
        return jr_fail(r, TSR_ETOOBIG, "cell at column %zu is beyond coordinate %d", column,
                       TSR_MAX_COORD);
    long long y = (long long)(ylast - i), d = (long long)column - y;
    int parity = (int)(d & 1); /* two's complement: 0 or 1 for negative d too */
    if (r->lattice == TSR_LATTICE_HEXAGONAL) {
        if (!a->set)
            *a = (hex_anchor){true, parity, i, column};
        if (parity != a->parity)
            return jr_fail(r, TSR_EINVAL, "'%c' at column %zu is between two hexagons: each row "
                           "is shifted half a hexagon (one column) from the next, and the first "
                           "cell drawn (rows[%zu], column %zu) puts this row's hexagons at %s "
                           "columns", ch, column, a->row, a->column,
                           (a->parity + y) % 2 ? "odd" : "even");
    } else if ((ch == '^' && parity != 0) || (ch == 'v' && parity != 1)) {
        return jr_fail(r, TSR_EINVAL, "'%c' at column %zu is where a triangle points %s: in "
                       "this row (y = %lld, the last row being y = 0) the triangles pointing up "
                       "are at %s columns, those pointing down at %s ones", ch, column,
                       parity ? "down" : "up", y, y % 2 ? "odd" : "even",
                       y % 2 ? "even" : "odd");
    }
    long long x = (d - parity) / 2;
    if (x < -TSR_MAX_COORD || x > TSR_MAX_COORD)
        return jr_fail(r, TSR_ETOOBIG, "cell at column %zu is beyond coordinate %d", column,
                       TSR_MAX_COORD);
    int z = r->lattice == TSR_LATTICE_TRIANGULAR ? parity : 0;
    *c = (tsr_cell){(int)x, (int)y, z};
    return 0;
}

/* "rows" on a plane lattice: drawn y-up, as puzzle people draw them (the
 * last row is y = 0), each row shifted half a cell from the next (see
 * plane_cell and docs/puzzle-format.md). */
static int read_plane_rows(jr_reader *r, const json_t *rows, const jshape_kind *k,
                           jshape_cells *cv, jshape_cells *opt, int colors)
{
    if (!json_is_array(rows))
        return jr_fail_type(r, rows, "an array of strings");
    size_t nrows = json_array_size(rows);
    hex_anchor anchor = {false, 0, 0, 0};
    for (size_t i = 0; i < nrows; i++) {
        size_t mark = jr_push_index(&r->path, i);
        const json_t *row = json_array_get(rows, i);
        if (!json_is_string(row))
            return jr_fail_type(r, row, "a string");
        const char *s = json_string_value(row);
        for (size_t column = 0; column < json_string_length(row); column++) {
            bool cell, optional;
            int color, rc = art_char(r, k, s[column], column, colors, &cell, &optional, &color);
            tsr_cell c;
            if (rc == 0 && cell)
                rc = plane_cell(r, s[column], i, column, nrows - 1, &anchor, &c);
            if (rc == 0 && cell)
                rc = art_cell(r, k, c, optional, color, cv, opt);
            if (rc)
                return rc;
        }
        jr_pop(&r->path, mark);
    }
    return 0;
}

/* "layers": layer i is z = i, each one like "rows"; the cubic lattice's
 * only. */
static int read_layers(jr_reader *r, const json_t *layers, const jshape_kind *k,
                       jshape_cells *cv, jshape_cells *opt, int colors)
{
    if (r->lattice != TSR_LATTICE_CUBIC)
        return jr_fail(r, TSR_EINVAL, "the %s lattice is a plane: draw it with \"rows\" (or "
                       "list \"cells\")", tsr_lattice_names[r->lattice]);
    if (!json_is_array(layers))
        return jr_fail_type(r, layers, "an array of layers (arrays of strings)");
    for (size_t z = 0; z < json_array_size(layers); z++) {
        size_t mark = jr_push_index(&r->path, z);
        int rc = read_rows(r, json_array_get(layers, z), z, k, cv, opt, colors);
        if (rc)
            return rc;
        jr_pop(&r->path, mark);
    }
    return 0;
}

/* What a cell is on the reader's lattice, for messages. */
static const char *cell_form(const jr_reader *r)
{
    switch (r->lattice) {
    case TSR_LATTICE_HEXAGONAL: return "a hexagon [x, y] of 2 integers";
    case TSR_LATTICE_TRIANGULAR: return "a triangle [x, y, z] of 3 integers";
    default: return "an array of 2 or 3 integers";
    }
}

/* What a list of cells is on the reader's lattice, for messages. */
static const char *cell_list_form(const jr_reader *r)
{
    switch (r->lattice) {
    case TSR_LATTICE_HEXAGONAL: return "an array of cells [x, y]";
    case TSR_LATTICE_TRIANGULAR: return "an array of cells [x, y, z]";
    default: return "an array of cells [x, y] or [x, y, z]";
    }
}

/* A cell at the current path: [x, y] or [x, y, z] on the cubic lattice
 * (z = 0 for two), [x, y] on the hexagonal one, [x, y, z] with z 0 or 1
 * on the triangular one. */
static int read_cell(jr_reader *r, const json_t *j, tsr_cell *c)
{
    size_t n = json_array_size(j), want = r->lattice == TSR_LATTICE_HEXAGONAL ? 2 : 3;
    if (json_is_array(j) && n == 3 && r->lattice == TSR_LATTICE_HEXAGONAL)
        return jr_fail(r, TSR_EINVAL, "a cell of the hexagonal lattice is [x, y]: a hexagon "
                       "has no third coordinate");
    if (json_is_array(j) && n == 2 && r->lattice == TSR_LATTICE_TRIANGULAR)
        return jr_fail(r, TSR_EINVAL, "a cell of the triangular lattice is [x, y, z]: z is 0 "
                       "for the triangle pointing up, 1 for the one pointing down");
    if (!json_is_array(j) || n < 2 || n > want)
        return jr_fail_type(r, j, cell_form(r));
    int coord[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(j, i);
        char buf[64];
        if (!json_is_integer(e))
            return jr_fail(r, TSR_EINVAL, "expected %s; element %zu is %s", cell_form(r), i,
                           jr_describe(e, buf, sizeof buf));
        json_int_t v = json_integer_value(e);
        if (v < -TSR_MAX_COORD || v > TSR_MAX_COORD) {
            jr_push_index(&r->path, i);
            return jr_fail(r, TSR_ETOOBIG, "coordinate %" JSON_INTEGER_FORMAT
                           " is outside -%d..%d", v, TSR_MAX_COORD, TSR_MAX_COORD);
        }
        coord[i] = (int)v;
    }
    if (r->lattice == TSR_LATTICE_TRIANGULAR && coord[2] != 0 && coord[2] != 1)
        return jr_fail(r, TSR_EINVAL, "z is %d; on the triangular lattice z is 0 for the "
                       "triangle pointing up (corners (x, y), (x+1, y), (x, y+1)) and 1 for the "
                       "one pointing down (corners (x+1, y), (x+1, y+1), (x, y+1))", coord[2]);
    *c = (tsr_cell){coord[0], coord[1], coord[2]};
    return 0;
}

typedef struct indexed_cell {
    tsr_cell c;
    int index;
} indexed_cell;

static bool same_cell(tsr_cell a, tsr_cell b)
{
    return a.x == b.x && a.y == b.y && a.z == b.z;
}

static int indexed_cell_cmp(const void *a, const void *b)
{
    const indexed_cell *p = a, *q = b;
    if (p->c.x != q->c.x)
        return p->c.x < q->c.x ? -1 : 1;
    if (p->c.y != q->c.y)
        return p->c.y < q->c.y ? -1 : 1;
    if (p->c.z != q->c.z)
        return p->c.z < q->c.z ? -1 : 1;
    return (p->index > q->index) - (p->index < q->index);
}

/* Report the earliest repeated entry of a cell list (index = list position);
 * sorting keeps this O(n log n) for boards of TSR_MAX_CELLS cells. */
static int check_duplicates(jr_reader *r, const jshape_cells *cv)
{
    if (cv->n < 2)
        return 0;
    indexed_cell *s = malloc((size_t)cv->n * sizeof *s);
    if (s == NULL)
        return jr_fail(r, TSR_ENOMEM, "out of memory");
    for (int i = 0; i < cv->n; i++)
        s[i] = (indexed_cell){cv->v[i], i};
    qsort(s, (size_t)cv->n, sizeof *s, indexed_cell_cmp);
    /* equal cells sort together by index: a group's first two entries are
     * the original and its first repeat */
    int dup = -1, first = -1;
    for (int i = 1; i < cv->n; i++)
        if (same_cell(s[i - 1].c, s[i].c) && (i < 2 || !same_cell(s[i - 2].c, s[i].c)) &&
            (dup < 0 || s[i].index < dup)) {
            dup = s[i].index;
            first = s[i - 1].index;
        }
    free(s);
    if (dup < 0)
        return 0;
    jr_push_index(&r->path, (size_t)dup);
    tsr_cell c = cv->v[dup];
    return jr_fail(r, TSR_EINVAL, "duplicate cell [%d, %d, %d], already at index %d", c.x, c.y,
                c.z, first);
}

/* "cells": a list of [x, y(, z)]. */
static int read_cell_list(jr_reader *r, const json_t *list, const jshape_kind *k, jshape_cells *cv)
{
    if (!json_is_array(list))
        return jr_fail_type(r, list, cell_list_form(r));
    for (size_t i = 0; i < json_array_size(list); i++) {
        size_t mark = jr_push_index(&r->path, i);
        tsr_cell c;
        int rc = read_cell(r, json_array_get(list, i), &c);
        if (rc == 0)
            rc = cells_push(r, cv, k, c);
        if (rc)
            return rc;
        jr_pop(&r->path, mark);
    }
    return check_duplicates(r, cv);
}

/* "colors" beside "cells": one colour per cell, in the same order. */
static int read_color_list(jr_reader *r, const json_t *obj, const char *form, int colors,
                           jshape_cells *cv)
{
    const json_t *list = json_object_get(obj, "colors");
    if (list == NULL)
        return 0;
    size_t mark = jr_push_key(&r->path, "colors");
    if (strcmp(form, "cells") != 0)
        return jr_fail(r, TSR_EINVAL, "\"colors\" goes with \"cells\"; in \"%s\", draw a "
                    "coloured cell as its colour's digit", form);
    char what[96];
    snprintf(what, sizeof what, "an array of %d colours (0 to %d), one per cell", cv->n,
             colors);
    if (!json_is_array(list) || json_array_size(list) != (size_t)cv->n)
        return jr_fail_type(r, list, what);
    for (int i = 0; i < cv->n; i++) {
        size_t imark = jr_push_index(&r->path, (size_t)i);
        long long c;
        int rc = jr_want_int(r, json_array_get(list, (size_t)i), 0, colors, &c);
        if (rc == 0)
            rc = cells_color(r, cv, i, (int)c);
        if (rc)
            return rc;
        jr_pop(&r->path, imark);
    }
    jr_pop(&r->path, mark);
    return 0;
}

int jshape_read(jr_reader *r, const json_t *obj, const jshape_kind *k, jshape_cells *cv,
                      jshape_cells *opt, int colors)
{
    const char *form = NULL;
    int nforms = 0;
    for (int i = 0; k->forms[i] != NULL; i++)
        if (json_object_get(obj, k->forms[i]) != NULL) {
            form = form ? form : k->forms[i];
            nforms++;
        }
    if (nforms != 1) {
        char list[128];
        return jr_fail(r, TSR_EINVAL, "expected exactly one of %s",
                    jr_join_keys(k->forms, list, sizeof list));
    }
    cv->n = 0;
    free(cv->col);
    cv->col = NULL;
    size_t mark = jr_push_key(&r->path, form);
    const json_t *v = json_object_get(obj, form);
    int rc;
    if (strcmp(form, "size") == 0)
        rc = read_size(r, v, k, cv);
    else if (strcmp(form, "rows") == 0)
        rc = r->lattice == TSR_LATTICE_CUBIC ? read_rows(r, v, 0, k, cv, opt, colors)
                                             : read_plane_rows(r, v, k, cv, opt, colors);
    else if (strcmp(form, "layers") == 0)
        rc = read_layers(r, v, k, cv, opt, colors);
    else
        rc = read_cell_list(r, v, k, cv);
    if (rc)
        return rc;
    if (cv->n == 0)
        return jr_fail(r, TSR_EINVAL, "%s has no cells", k->what);
    jr_pop(&r->path, mark);
    return read_color_list(r, obj, form, colors, cv);
}

int jshape_read_optional(jr_reader *r, const json_t *board, jshape_cells *opt)
{
    const json_t *list = json_object_get(board, "optional");
    if (list == NULL)
        return 0;
    size_t mark = jr_push_key(&r->path, "optional");
    if (!json_is_array(list))
        return jr_fail_type(r, list, cell_list_form(r));
    jshape_cells own = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(list); i++) {
        size_t imark = jr_push_index(&r->path, i);
        tsr_cell c;
        rc = read_cell(r, json_array_get(list, i), &c);
        if (rc == 0)
            rc = cells_push(r, &own, &jshape_board, c);
        if (rc == 0)
            jr_pop(&r->path, imark);
    }
    if (rc == 0)
        rc = check_duplicates(r, &own);
    for (int i = 0; rc == 0 && i < own.n; i++)
        rc = cells_push(r, opt, &jshape_board, own.v[i]);
    free(own.v);
    if (rc == 0)
        jr_pop(&r->path, mark);
    return rc;
}
