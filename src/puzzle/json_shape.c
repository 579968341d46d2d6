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

/* "size": [X, Y] or [X, Y, Z], the whole box. */
static int read_size(jr_reader *r, const json_t *size, const jshape_kind *k, jshape_cells *cv)
{
    size_t n = json_array_size(size);
    if (!json_is_array(size) || n < 2 || n > 3)
        return jr_fail_type(r, size, "an array of 2 or 3 positive integers");
    long long dim[3] = {1, 1, 1}, total = 1;
    for (size_t i = 0; i < n; i++) {
        size_t mark = jr_push_index(&r->path, i);
        int rc = jr_want_int(r, json_array_get(size, i), 1, LLONG_MAX, &dim[i]);
        if (rc)
            return rc;
        jr_pop(&r->path, mark);
        /* total * dim[i] > limit, tested without overflowing */
        if (dim[i] > k->limit / total)
            return jr_fail(r, TSR_ETOOBIG, "%s would have more than %d cells", k->what, k->limit);
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

/* "rows": one layer of art at height z; row i is y = i, column j is x = j.
 * Optional cells (board art) go to cv and to opt. */
static int read_rows(jr_reader *r, const json_t *rows, size_t z, const jshape_kind *k, jshape_cells *cv,
                     jshape_cells *opt, int colors)
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
            bool optional = k->optional != '\0' && s[x] == k->optional;
            int color = s[x] >= '1' && s[x] <= '9' ? s[x] - '0' : 0; /* a coloured cell */
            if (color > colors)
                return jr_fail(r, TSR_EINVAL, "colour %d at column %zu, but the palette has %d "
                            "colour%s", color, x, colors, colors == 1 ? "" : "s");
            if (s[x] == k->cell || optional || color) {
                if (x > TSR_MAX_COORD || y > TSR_MAX_COORD || z > TSR_MAX_COORD)
                    return jr_fail(r, TSR_ETOOBIG, "cell at column %zu is beyond coordinate %d",
                                x, TSR_MAX_COORD);
                tsr_cell c = {(int)x, (int)y, (int)z};
                int rc = cells_push(r, cv, k, c);
                if (rc == 0 && color)
                    rc = cells_color(r, cv, cv->n - 1, color);
                if (rc == 0 && optional)
                    rc = cells_push(r, opt, k, c);
                if (rc)
                    return rc;
            } else if (s[x] == '\0' || strchr(k->blank, s[x]) == NULL) {
                char shown[8];
                unsigned char c = (unsigned char)s[x];
                if (isprint(c))
                    snprintf(shown, sizeof shown, "'%c'", c);
                else
                    snprintf(shown, sizeof shown, "\\x%02x", c);
                return jr_fail(r, TSR_EINVAL, "invalid character %s at column %zu; expected %s, "
                            "or a digit 1-9 for a cell of that colour", shown, x, k->art_help);
            }
        }
        jr_pop(&r->path, mark);
    }
    return 0;
}

/* "layers": layer i is z = i, each one like "rows". */
static int read_layers(jr_reader *r, const json_t *layers, const jshape_kind *k, jshape_cells *cv,
                       jshape_cells *opt, int colors)
{
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

/* [x, y] or [x, y, z] at the current path. */
static int read_cell(jr_reader *r, const json_t *j, tsr_cell *c)
{
    size_t n = json_array_size(j);
    if (!json_is_array(j) || n < 2 || n > 3)
        return jr_fail_type(r, j, "an array of 2 or 3 integers");
    int coord[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(j, i);
        char buf[64];
        if (!json_is_integer(e))
            return jr_fail(r, TSR_EINVAL, "expected an array of 2 or 3 integers; element %zu is %s",
                        i, jr_describe(e, buf, sizeof buf));
        json_int_t v = json_integer_value(e);
        if (v < -TSR_MAX_COORD || v > TSR_MAX_COORD) {
            jr_push_index(&r->path, i);
            return jr_fail(r, TSR_ETOOBIG, "coordinate %" JSON_INTEGER_FORMAT
                        " is outside -%d..%d", v, TSR_MAX_COORD, TSR_MAX_COORD);
        }
        coord[i] = (int)v;
    }
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
        return jr_fail_type(r, list, "an array of cells [x, y] or [x, y, z]");
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
        rc = read_rows(r, v, 0, k, cv, opt, colors);
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
        return jr_fail_type(r, list, "an array of cells [x, y] or [x, y, z]");
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
