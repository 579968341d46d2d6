/*
 * write.c - the writers: a solution as text layers or one JSON line, a
 * partial assembly as a polycube definition, a puzzle as JSON version 1.
 *
 * Writers print only to the FILE * they are given and return 0, TSR_EINVAL
 * for a solution that does not fit the puzzle (unknown piece, cell off the
 * board, overlapping placements, more placements than copies), TSR_ETOOBIG
 * for a board whose bounding box is too large to draw, TSR_EUNSUPP for what
 * the target format cannot express, or TSR_EIO when writing fails.  A NULL
 * solution means no placements.
 *
 * Text layers draw the board's bounding box: a grid per z layer, rows y =
 * min first, cells padded to the longest piece name and separated by one
 * space; trailing blanks are dropped from each line.  The plane lattices
 * are drawn as their art, y up and each row shifted half a cell (below).
 *
 * tsr_write_polycube writes the sub-puzzle a partial assembly leaves, in the
 * format polycube_read.c reads (and in the shape polycube itself prints it):
 *   D:xDim=..:yDim=..:zDim=..[:oneSide]   the bounding box, moved to 0..dim-1
 *   C:name=..:type=M:layout=..            one line per copy left to place,
 *                                         its shape moved to the origin
 *   L:stationary=...                      one layout block drawing every
 *   rows, y = yDim-1 first, z groups      placement and fixed piece, and the
 *   ~L                                    box cells off the board as one more
 *   ~D                                    stationary piece named "*"
 * The format has no counts, so a piece with count > 1 becomes pieces
 * NAME_1, NAME_2, ... (placed copies first).  If "*" is taken the hole piece
 * is "*_1", "*_2", ...  Unsupported (TSR_EUNSUPP): rotations "none", mirror
 * images of 3D pieces (for flat pieces mirroring is a turn in space, so a
 * flat puzzle with mirror is written as free), names the format cannot carry
 * (see polycube.h) or that clash once suffixed, and loose puzzles (count
 * ranges, optional cells: the format describes exact covers).  Reading the
 * file back gives the same free cells and the same pieces up to translation
 * and naming.
 *
 * tsr_write_puzzle_json writes what json_read.c reads: one member per line,
 * the board as "cells" (and "optional" when it has optional cells), one
 * piece object per line, a count range as [min, max], "lattice" for a
 * plane lattice (cells [x, y] on the hexagonal one).
 *
 * Polycube definitions describe polycubes: tsr_write_polycube refuses the
 * plane lattices (TSR_EUNSUPP).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "geom/geom.h"
#include "puzzle/polycube.h"
#include "tessera/puzzle.h"

/* Owner values of a box cell besides a placement index. */
#define OFF_BOARD (-1)
#define FREE_CELL (-2)
#define OPTIONAL_CELL (-3) /* an optional board cell, free */

/* Text drawings may be sparse; this keeps a scattered board from asking
 * for an absurd grid. */
#define MAX_TEXT_BOX (16 * (size_t)TSR_MAX_CELLS)

/* ---- checks and the box grid ------------------------------------------ */

/* Pieces need names and cells; placements need known pieces and cells. */
static int check_input(const tsr_puzzle *pz, const tsr_solution *s)
{
    for (int k = 0; k < pz->npieces; k++)
        if (!pz->pieces[k].name || pz->pieces[k].ncells < 1 || pz->pieces[k].count < 1)
            return TSR_EINVAL;
    if (!s)
        return 0;
    if (s->nplacements < 0 || (s->nplacements > 0 && !s->placements))
        return TSR_EINVAL;
    for (int i = 0; i < s->nplacements; i++) {
        const tsr_placement *p = &s->placements[i];
        if (p->piece < 0 || p->piece >= pz->npieces || p->ncells < 1 || !p->cells)
            return TSR_EINVAL;
    }
    return 0;
}

static int nplacements(const tsr_solution *s)
{
    return s ? s->nplacements : 0;
}

/* The bounding box of the board, holding at most `cap` cells. */
struct box {
    tsr_cell lo;
    int nx, ny, nz;
    size_t n;
};

static int box_of(const tsr_puzzle *pz, size_t cap, struct box *b)
{
    if (pz->ncells < 1 || !pz->cells)
        return TSR_EINVAL;
    tsr_cell lo = pz->cells[0], hi = lo;
    for (int i = 1; i < pz->ncells; i++) {
        tsr_cell c = pz->cells[i];
        lo.x = c.x < lo.x ? c.x : lo.x, hi.x = c.x > hi.x ? c.x : hi.x;
        lo.y = c.y < lo.y ? c.y : lo.y, hi.y = c.y > hi.y ? c.y : hi.y;
        lo.z = c.z < lo.z ? c.z : lo.z, hi.z = c.z > hi.z ? c.z : hi.z;
    }
    long long nx = (long long)hi.x - lo.x + 1, ny = (long long)hi.y - lo.y + 1,
              nz = (long long)hi.z - lo.z + 1;
    /* each extent is below 2^32, so two products cannot overflow */
    if (nx > (long long)cap || ny > (long long)cap || nz > (long long)cap ||
        nx * ny > (long long)cap || nx * ny * nz > (long long)cap)
        return TSR_ETOOBIG;
    *b = (struct box){lo, (int)nx, (int)ny, (int)nz, (size_t)(nx * ny * nz)};
    return 0;
}

static long box_index(const struct box *b, tsr_cell c)
{
    long long x = (long long)c.x - b->lo.x, y = (long long)c.y - b->lo.y,
              z = (long long)c.z - b->lo.z;
    if (x < 0 || x >= b->nx || y < 0 || y >= b->ny || z < 0 || z >= b->nz)
        return -1;
    return (long)((z * b->ny + y) * b->nx + x);
}

/* A grid over the box: OFF_BOARD, FREE_CELL, or who covers the cell. */
static int *board_grid(const tsr_puzzle *pz, const struct box *b)
{
    int *owner = malloc(b->n * sizeof *owner);
    if (!owner)
        return NULL;
    for (size_t i = 0; i < b->n; i++)
        owner[i] = OFF_BOARD;
    for (int i = 0; i < pz->ncells; i++)
        owner[box_index(b, pz->cells[i])] = FREE_CELL;
    for (int i = 0; i < pz->noptional; i++) {
        long at = box_index(b, pz->optional[i]);
        if (at >= 0 && owner[at] == FREE_CELL)
            owner[at] = OPTIONAL_CELL;
    }
    return owner;
}

/* Marks cells as covered by `who`; they must be free board cells. */
static int paint(const struct box *b, int *owner, int who, const tsr_cell *cells, int n)
{
    for (int i = 0; i < n; i++) {
        long at = box_index(b, cells[i]);
        if (at < 0 || (owner[at] != FREE_CELL && owner[at] != OPTIONAL_CELL))
            return TSR_EINVAL;
        owner[at] = who;
    }
    return 0;
}

/* Marks of the cells no placement covers, in text drawings. */
struct marks {
    const char *off, *free_cell, *optional;
};

/* One row of the box: cells padded to `width`, separated by one space. */
static char *put_row(char *out, const int *owner, int nx, size_t width,
                     const char *const *label, const struct marks *m)
{
    for (int x = 0; x < nx; x++) {
        const char *t = owner[x] == OFF_BOARD       ? m->off
                        : owner[x] == FREE_CELL     ? m->free_cell
                        : owner[x] == OPTIONAL_CELL ? m->optional
                                                    : label[owner[x]];
        size_t n = strlen(t);
        if (x)
            *out++ = ' ';
        memcpy(out, t, n);
        memset(out + n, ' ', width - n);
        out += width;
    }
    return out;
}

/* Writes buf..end as a line without its trailing blanks. */
static void put_line(FILE *f, char *buf, char *end)
{
    while (end > buf && end[-1] == ' ')
        end--;
    fwrite(buf, 1, (size_t)(end - buf), f);
    fputc('\n', f);
}

static char *row_buffer(const struct box *b, size_t width)
{
    /* every z group of a row, ", " between groups, and a spare byte */
    return malloc((size_t)b->nz * ((size_t)b->nx * (width + 1) + 2) + 1);
}

static int finish(FILE *f, int rc)
{
    return rc < 0 ? rc : ferror(f) ? TSR_EIO : 0;
}

/* ---- text layers -------------------------------------------------------- */

/* ---- plane drawings ------------------------------------------------------
 * The plane lattices are drawn as their art is (docs/puzzle-format.md):
 * y up, a hexagon (x, y) at column 2x + y and a triangle (x, y, z) at
 * column 2x + y + z, so that each row is shifted half a cell from the next.
 * Columns are moved by an amount of the parity of the lowest y, so that
 * the drawing read back as art (the last row y = 0) keeps every triangle's
 * kind.  A label wider than one character widens the columns: a triangle
 * takes width + 1 characters, a hexagon half of that (two columns apart). */

/* The column of c, or LLONG_MIN for a cell off the lattice. */
static long long plane_column(enum tsr_lattice lattice, tsr_cell c)
{
    if (c.z != 0 && (lattice == TSR_LATTICE_HEXAGONAL || c.z != 1))
        return LLONG_MIN;
    return 2LL * c.x + c.y + c.z;
}

struct plane_box {
    long long ylo, yhi, s; /* rows ylo..yhi, columns from s */
    long long ncols;
    size_t n;              /* (yhi - ylo + 1) * ncols */
};

static int plane_box_of(const tsr_puzzle *pz, struct plane_box *b)
{
    if (pz->ncells < 1 || !pz->cells)
        return TSR_EINVAL;
    long long clo = LLONG_MAX, chi = LLONG_MIN;
    b->ylo = b->yhi = pz->cells[0].y;
    for (int i = 0; i < pz->ncells; i++) {
        long long c = plane_column(pz->lattice, pz->cells[i]);
        if (c == LLONG_MIN)
            return TSR_EINVAL;
        clo = c < clo ? c : clo, chi = c > chi ? c : chi;
        b->ylo = pz->cells[i].y < b->ylo ? pz->cells[i].y : b->ylo;
        b->yhi = pz->cells[i].y > b->yhi ? pz->cells[i].y : b->yhi;
    }
    b->s = clo - ((clo - b->ylo) & 1); /* s - ylo even: the kinds read back */
    b->ncols = chi - b->s + 1;
    long long nrows = b->yhi - b->ylo + 1;
    if (b->ncols > (long long)MAX_TEXT_BOX || nrows > (long long)MAX_TEXT_BOX ||
        b->ncols * nrows > (long long)MAX_TEXT_BOX)
        return TSR_ETOOBIG;
    b->n = (size_t)(b->ncols * nrows);
    return 0;
}

static long plane_index(const tsr_puzzle *pz, const struct plane_box *b, tsr_cell c)
{
    long long col = plane_column(pz->lattice, c);
    if (col == LLONG_MIN || c.y < b->ylo || c.y > b->yhi || col < b->s || col - b->s >= b->ncols)
        return -1;
    return (long)((b->yhi - c.y) * b->ncols + (col - b->s)); /* top row first */
}

static int write_plane_text(FILE *f, const tsr_puzzle *pz, const tsr_solution *s, size_t width)
{
    struct plane_box b;
    int rc = plane_box_of(pz, &b);
    if (rc < 0)
        return rc;
    size_t unit = width == 1 ? 1
                  : pz->lattice == TSR_LATTICE_TRIANGULAR ? width + 1 : (width + 2) / 2;
    int np = nplacements(s);
    int *owner = malloc(b.n * sizeof *owner);
    char *line = malloc((size_t)b.ncols * unit + width + 1);
    rc = owner && line ? 0 : TSR_ENOMEM;
    for (size_t i = 0; rc == 0 && i < b.n; i++)
        owner[i] = OFF_BOARD;
    for (int i = 0; rc == 0 && i < pz->ncells; i++)
        owner[plane_index(pz, &b, pz->cells[i])] = FREE_CELL;
    for (int i = 0; rc == 0 && i < pz->noptional; i++) {
        long at = plane_index(pz, &b, pz->optional[i]);
        if (at >= 0 && owner[at] == FREE_CELL)
            owner[at] = OPTIONAL_CELL;
    }
    for (int i = 0; rc == 0 && i < np; i++)
        for (int j = 0; rc == 0 && j < s->placements[i].ncells; j++) {
            long at = plane_index(pz, &b, s->placements[i].cells[j]);
            if (at < 0 || (owner[at] != FREE_CELL && owner[at] != OPTIONAL_CELL))
                rc = TSR_EINVAL;
            else
                owner[at] = i;
        }
    for (long long row = 0; rc == 0 && row < b.yhi - b.ylo + 1; row++) {
        const int *o = owner + row * b.ncols;
        char *end = line;
        for (long long col = 0; col < b.ncols; col++) {
            const char *t = o[col] == OFF_BOARD       ? ""
                            : o[col] == FREE_CELL     ? "."
                            : o[col] == OPTIONAL_CELL ? "+"
                                                      : pz->pieces[s->placements[o[col]].piece].name;
            char *at = line + col * unit;
            if (end < at) { /* blanks up to this cell */
                memset(end, ' ', (size_t)(at - end));
                end = at;
            }
            if (*t) {
                memcpy(at, t, strlen(t));
                end = at + strlen(t);
            }
        }
        put_line(f, line, end);
    }
    free(owner);
    free(line);
    return finish(f, rc);
}

int tsr_write_solution_text(FILE *f, const tsr_puzzle *pz, const tsr_solution *s)
{
    static const struct marks text_marks = {"", ".", "+"};
    struct box b;
    int rc = check_input(pz, s);
    if (rc < 0)
        return rc;
    size_t width = 1;
    for (int k = 0; k < pz->npieces; k++)
        if (strlen(pz->pieces[k].name) > width)
            width = strlen(pz->pieces[k].name);
    if (pz->lattice != TSR_LATTICE_CUBIC)
        return write_plane_text(f, pz, s, width);
    if ((rc = box_of(pz, MAX_TEXT_BOX, &b)) < 0)
        return rc;
    int np = nplacements(s);
    int *owner = board_grid(pz, &b);
    const char **label = malloc((size_t)(np ? np : 1) * sizeof *label);
    char *line = row_buffer(&b, width);
    rc = owner && label && line ? 0 : TSR_ENOMEM;
    for (int i = 0; i < np && rc == 0; i++) {
        const tsr_placement *p = &s->placements[i];
        label[i] = pz->pieces[p->piece].name;
        rc = paint(&b, owner, i, p->cells, p->ncells);
    }
    for (int z = 0; z < b.nz && rc == 0; z++) {
        if (z)
            fputc('\n', f);
        if (b.nz > 1) /* a solid: say which layer, as the drawings do */
            fprintf(f, "z = %d\n", b.lo.z + z);
        for (int y = 0; y < b.ny; y++) {
            const int *row = owner + ((size_t)z * b.ny + y) * b.nx;
            put_line(f, line, put_row(line, row, b.nx, width, label, &text_marks));
        }
    }
    free(owner);
    free(label);
    free(line);
    return finish(f, rc);
}

/* ---- JSON helpers --------------------------------------------------------- */

/* Cells as the reader reads them: [x, y] on the hexagonal lattice, which
 * has no third coordinate, else [x, y, z]. */
static json_t *cells_json(enum tsr_lattice lattice, const tsr_cell *cells, int n)
{
    json_t *a = json_array();
    bool hex = lattice == TSR_LATTICE_HEXAGONAL;
    for (int i = 0; a && i < n; i++)
        if (json_array_append_new(a, hex ? json_pack("[ii]", cells[i].x, cells[i].y)
                                         : json_pack("[iii]", cells[i].x, cells[i].y,
                                                     cells[i].z)) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

/* obj[key] = v, taking v; -1 when v is NULL or the set fails. */
static int put(json_t *obj, const char *key, json_t *v)
{
    return v ? json_object_set_new(obj, key, v) : -1;
}

/* Strings are the one value jansson refuses for content (invalid UTF-8),
 * which the format cannot carry; other failures are lack of memory. */
static int put_string(json_t *obj, const char *key, const char *text, int *rc)
{
    json_t *v = json_string(text);
    if (!v) {
        *rc = TSR_EUNSUPP;
        return -1;
    }
    if (json_object_set_new(obj, key, v) != 0) {
        *rc = TSR_ENOMEM;
        return -1;
    }
    return 0;
}

/* ---- solution JSON ---------------------------------------------------------- */

/* Text t at p; returns the end. */
static char *put_str(char *p, const char *t)
{
    size_t n = strlen(t);
    memcpy(p, t, n);
    return p + n;
}

/* Decimal v at p; returns the end.  (snprintf per number was most of an
 * export's time.) */
static char *put_int(char *p, int v)
{
    char tmp[12];
    int n = 0;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do
        tmp[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *p++ = '-';
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

/* One line, as jansson writes {"pieces": [{"name": N, "cells": [[x,y,z],
 * ...]}, ...]} compact (with "colors": [...] beside a coloured piece's
 * cells), but printed straight into one buffer: the daemon's export
 * formats millions of these, and building a jansson tree per solution
 * cost ~300 allocations each.  On a plane lattice the line opens with
 * "lattice": "triangular" or "hexagonal" (what the cells mean), and a
 * hexagon is [x, y] as in puzzle files.  Names (escaped by jansson, which
 * also refuses bad UTF-8) are encoded once per piece. */
int tsr_write_solution_json(FILE *f, const tsr_puzzle *pz, const tsr_solution *s)
{
    int rc = check_input(pz, s);
    if (rc < 0)
        return rc;
    if ((unsigned)pz->lattice >= TSR_NLATTICES)
        return TSR_EINVAL;
    int np = nplacements(s);
    char **names = calloc((size_t)pz->npieces + 1, sizeof *names);
    size_t need = 48; /* {"lattice":"triangular","pieces":[ ... ]}\n */
    bool hex = pz->lattice == TSR_LATTICE_HEXAGONAL;
    if (!names)
        return TSR_ENOMEM;
    for (int i = 0; i < np && rc == 0; i++) {
        const tsr_placement *p = &s->placements[i];
        char **name = &names[p->piece];
        if (!*name) {
            json_t *v = json_string(pz->pieces[p->piece].name);
            *name = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
            rc = !v ? TSR_EUNSUPP : !*name ? TSR_ENOMEM : 0;
            json_decref(v);
        }
        if (rc == 0) /* {"name":N,"cells":[...],"colors":[...]}, 3 ints of 11 chars each
                        and a colour of 3 */
            need += strlen(*name) + 36 + (size_t)p->ncells * 44;
    }
    char *buf = rc == 0 ? malloc(need) : NULL;
    if (rc == 0 && !buf)
        rc = TSR_ENOMEM;
    if (rc == 0) {
        char *o = buf;
        if (pz->lattice != TSR_LATTICE_CUBIC) { /* what a cell means; cubic: as ever */
            o = put_str(o, "{\"lattice\":\"");
            o = put_str(o, tsr_lattice_names[pz->lattice]);
            o = put_str(o, "\",\"pieces\":[");
        } else {
            o = put_str(o, "{\"pieces\":[");
        }
        for (int i = 0; i < np; i++) {
            const tsr_placement *p = &s->placements[i];
            o = put_str(o, i ? ",{\"name\":" : "{\"name\":");
            o = put_str(o, names[p->piece]);
            o = put_str(o, ",\"cells\":[");
            for (int c = 0; c < p->ncells; c++) {
                const tsr_cell *cell = &p->cells[c];
                if (c)
                    *o++ = ',';
                *o++ = '[';
                o = put_int(o, cell->x);
                *o++ = ',';
                o = put_int(o, cell->y);
                if (!hex) { /* a hexagon is [x, y], as in puzzle files */
                    *o++ = ',';
                    o = put_int(o, cell->z);
                }
                *o++ = ']';
            }
            /* a coloured piece's colours, as turned, one per cell */
            for (int c = 0; p->colors != NULL && c < p->ncells; c++) {
                o = put_str(o, c ? "," : "],\"colors\":[");
                o = put_int(o, p->colors[c]);
            }
            o = put_str(o, "]}");
        }
        o = put_str(o, "]}\n");
        if (fwrite(buf, 1, (size_t)(o - buf), f) != (size_t)(o - buf))
            rc = TSR_EIO;
    }
    free(buf);
    for (int k = 0; k < pz->npieces; k++)
        free(names[k]);
    free(names);
    return finish(f, rc);
}

/* ---- puzzle JSON -------------------------------------------------------------- */

/* Indexed by enum tsr_rotations and enum tsr_unique, as json_read.c reads them. */
static const char *const rotation_names[] = {"all", "one-sided", "none"};

/* n colours as a JSON array (parallel to the cells written beside it). */
static json_t *colors_json(const unsigned char *colors, int n)
{
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_integer(colors[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* The puzzle's "colors": the palette and the allowed pairs, or NULL when
 * it has neither (then *rc stays 0). */
static json_t *puzzle_colors_json(const tsr_puzzle *pz, int *rc)
{
    *rc = 0;
    if (pz->npalette == 0 && pz->nallowed == 0)
        return NULL;
    *rc = TSR_ENOMEM;
    json_t *o = json_object(), *palette = json_array(), *allow = json_array();
    bool ok = o && palette && allow;
    for (int i = 0; ok && i < pz->npalette; i++) {
        char hex[8];
        snprintf(hex, sizeof hex, "#%06x", (unsigned)(pz->palette[i] & 0xFFFFFFu));
        ok = json_array_append_new(palette, json_string(hex)) == 0;
    }
    for (int i = 0; ok && i < pz->nallowed; i++)
        ok = json_array_append_new(allow, json_pack("{s:i,s:i}", "piece", pz->allowed[i].piece,
                                                    "board", pz->allowed[i].board)) == 0;
    if (ok && pz->npalette > 0)
        ok = json_object_set(o, "palette", palette) == 0;
    if (ok && pz->nallowed > 0)
        ok = json_object_set(o, "allow", allow) == 0;
    json_decref(palette);
    json_decref(allow);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    *rc = 0;
    return o;
}

static json_t *piece_json(enum tsr_lattice lattice, const tsr_piece *p, int *rc)
{
    json_t *o = json_object();
    *rc = TSR_ENOMEM;
    if (o && put_string(o, "name", p->name, rc) == 0 &&
        put(o, "cells", cells_json(lattice, p->cells, p->ncells)) == 0 &&
        (p->colors == NULL || put(o, "colors", colors_json(p->colors, p->ncells)) == 0) &&
        put(o, "count", p->count_min == p->count ? json_integer(p->count)
                                                 : json_pack("[ii]", p->count_min, p->count)) == 0 &&
        put(o, "fixed", json_boolean(p->fixed)) == 0) {
        *rc = 0;
        return o;
    }
    json_decref(o);
    return NULL;
}

/* The top-level members in the order they are written, "pieces" excepted. */
static json_t *puzzle_members(const tsr_puzzle *pz, int *rc)
{
    json_t *o = json_object(), *expected = json_object();
    *rc = TSR_ENOMEM;
    json_t *board = json_pack("{s:o}", "cells", cells_json(pz->lattice, pz->cells, pz->ncells));
    if (board && ((pz->colors && put(board, "colors", colors_json(pz->colors, pz->ncells)) != 0) ||
                  (pz->noptional > 0 &&
                   put(board, "optional", cells_json(pz->lattice, pz->optional, pz->noptional)) != 0))) {
        json_decref(board);
        board = NULL;
    }
    int crc;
    json_t *colors = puzzle_colors_json(pz, &crc);
    bool ok = o && expected && put(o, "version", json_integer(1)) == 0 &&
              (!pz->name || put_string(o, "name", pz->name, rc) == 0) &&
              (!pz->description || put_string(o, "description", pz->description, rc) == 0) &&
              (pz->lattice == TSR_LATTICE_CUBIC || /* the default, left out as before */
               put(o, "lattice", json_string(tsr_lattice_names[pz->lattice])) == 0) &&
              json_object_set(o, "board", board) == 0 &&
              put(o, "rotations", json_string(rotation_names[pz->rotations])) == 0 &&
              put(o, "mirror", json_boolean(pz->mirror)) == 0 && crc == 0 &&
              (colors == NULL || json_object_set(o, "colors", colors) == 0);
    for (int i = 0; ok && i < 3; i++)
        if (pz->expected[i] >= 0)
            ok = put(expected, tsr_unique_names[i], json_integer(pz->expected[i])) == 0;
    if (ok && json_object_size(expected) > 0)
        ok = json_object_set(o, "expected", expected) == 0;
    json_decref(board);
    json_decref(colors);
    json_decref(expected);
    if (ok) {
        *rc = 0;
        return o;
    }
    json_decref(o);
    return NULL;
}

static void put_member(FILE *f, const char *key, const json_t *v, bool first)
{
    fprintf(f, "%s\n  \"%s\": ", first ? "" : ",", key);
    json_dumpf(v, f, JSON_ENCODE_ANY);
}

int tsr_write_puzzle_json(FILE *f, const tsr_puzzle *pz)
{
    int rc = check_input(pz, NULL);
    if (rc < 0)
        return rc;
    if ((unsigned)pz->rotations > TSR_ROT_NONE || (unsigned)pz->lattice >= TSR_NLATTICES)
        return TSR_EINVAL;
    json_t *m = puzzle_members(pz, &rc);
    if (!m)
        return rc;
    fputc('{', f);
    bool first = true;
    const char *key;
    json_t *v;
    json_object_foreach(m, key, v) {
        put_member(f, key, v, first);
        first = false;
        if (strcmp(key, "board") != 0)
            continue;
        fputs(",\n  \"pieces\": [", f); /* after the board, one piece a line */
        for (int k = 0; k < pz->npieces && rc == 0; k++) {
            json_t *p = piece_json(pz->lattice, &pz->pieces[k], &rc);
            if (p) {
                fprintf(f, "%s\n    ", k ? "," : "");
                json_dumpf(p, f, 0);
            }
            json_decref(p);
        }
        fputs("\n  ]", f);
    }
    fputs("\n}\n", f);
    json_decref(m);
    return finish(f, rc);
}

/* ---- polycube definition ----------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What goes into the file: the stationary entries (placements of s, then
 * fixed pieces s does not place) and the copies left to place, each with a
 * distinct name. */
struct sub_puzzle {
    int nstat, nmobile;
    int *piece;             /* nstat + nmobile piece indices */
    const tsr_cell **cells; /* nstat stationary cell lists ... */
    int *ncells;            /* ... and their lengths */
    char **name;            /* nstat + nmobile names */
    char hole[16];          /* the piece filling the box off the board */
};

static void free_sub(struct sub_puzzle *sp)
{
    for (int i = 0; sp->name && i < sp->nstat + sp->nmobile; i++)
        free(sp->name[i]);
    free(sp->name);
    free(sp->piece);
    free(sp->cells);
    free(sp->ncells);
}

/* Names copy `copy` (1-based) of piece k; NULL when out of memory. */
static char *copy_name(const tsr_piece *p, int copy)
{
    size_t n = strlen(p->name) + 16;
    char *s = malloc(n);
    if (s && p->count == 1)
        snprintf(s, n, "%s", p->name);
    else if (s)
        snprintf(s, n, "%s_%d", p->name, copy);
    return s;
}

/* Counts the entries into sp; `placed` gets each piece's placement count.
 * Fails on more placements than copies and on names the format cannot
 * carry; the reader's piece cap bounds the total. */
static int count_entries(const tsr_puzzle *pz, const tsr_solution *s, int *placed,
                         struct sub_puzzle *sp)
{
    sp->nstat = nplacements(s);
    for (int i = 0; i < sp->nstat; i++)
        placed[s->placements[i].piece]++;
    for (int k = 0; k < pz->npieces; k++) {
        const tsr_piece *p = &pz->pieces[k];
        if (placed[k] > p->count)
            return TSR_EINVAL;
        if (!tsr_polycube_name_ok(p->name))
            return TSR_EUNSUPP;
        if (p->fixed && placed[k] == 0)
            sp->nstat++;
        else if (!p->fixed && p->count - placed[k] > TSR_MAX_PIECES - sp->nmobile)
            return TSR_ETOOBIG;
        else if (!p->fixed)
            sp->nmobile += p->count - placed[k];
    }
    return sp->nstat + sp->nmobile > TSR_MAX_PIECES ? TSR_ETOOBIG : 0;
}

/* Fills the entries: placements (their copies numbered first, in placement
 * order), fixed pieces left unplaced, then the copies left to place.
 * `next` is scratch space for each piece's next copy number. */
static int fill_entries(const tsr_puzzle *pz, const tsr_solution *s, int *next,
                        struct sub_puzzle *sp)
{
    int total = sp->nstat + sp->nmobile;
    sp->piece = malloc(((size_t)total + 1) * sizeof *sp->piece);
    sp->name = calloc((size_t)total + 1, sizeof *sp->name);
    sp->cells = malloc(((size_t)sp->nstat + 1) * sizeof *sp->cells);
    sp->ncells = malloc(((size_t)sp->nstat + 1) * sizeof *sp->ncells);
    if (!sp->piece || !sp->name || !sp->cells || !sp->ncells)
        return TSR_ENOMEM;
    for (int k = 0; k < pz->npieces; k++)
        next[k] = 1;
    int e = 0;
    for (int i = 0; i < nplacements(s); i++, e++) {
        const tsr_placement *p = &s->placements[i];
        sp->piece[e] = p->piece;
        sp->cells[e] = p->cells;
        sp->ncells[e] = p->ncells;
        sp->name[e] = copy_name(&pz->pieces[p->piece], next[p->piece]++);
    }
    for (int k = 0; k < pz->npieces; k++)
        if (pz->pieces[k].fixed && next[k] == 1) {
            sp->piece[e] = k;
            sp->cells[e] = pz->pieces[k].cells;
            sp->ncells[e] = pz->pieces[k].ncells;
            sp->name[e++] = copy_name(&pz->pieces[k], 1);
        }
    for (int k = 0; k < pz->npieces; k++)
        while (!pz->pieces[k].fixed && next[k] <= pz->pieces[k].count) {
            sp->piece[e] = k;
            sp->name[e++] = copy_name(&pz->pieces[k], next[k]++);
        }
    for (int i = 0; i < total; i++)
        if (!sp->name[i])
            return TSR_ENOMEM;
    return 0;
}

/* The names must fit the reader and differ; the hole piece gets the first
 * of "*", "*_1", "*_2", ... that no entry uses. */
static int check_names(struct sub_puzzle *sp)
{
    size_t total = (size_t)sp->nstat + (size_t)sp->nmobile;
    char **sorted = malloc((total + 1) * sizeof *sorted);
    if (!sorted)
        return TSR_ENOMEM;
    memcpy(sorted, sp->name, total * sizeof *sorted);
    qsort(sorted, total, sizeof *sorted, name_cmp);
    int rc = 0;
    for (size_t i = 0; i < total && rc == 0; i++)
        if (strlen(sorted[i]) > TSR_MAX_NAME || (i && strcmp(sorted[i - 1], sorted[i]) == 0))
            rc = TSR_EUNSUPP;
    strcpy(sp->hole, "*");
    const char *key = sp->hole;
    for (int i = 1; bsearch(&key, sorted, total, sizeof *sorted, name_cmp); i++)
        snprintf(sp->hole, sizeof sp->hole, "*_%d", i);
    free(sorted);
    return rc;
}

static int plan_sub(const tsr_puzzle *pz, const tsr_solution *s, struct sub_puzzle *sp)
{
    int *scratch = calloc((size_t)pz->npieces + 1, sizeof *scratch);
    if (!scratch)
        return TSR_ENOMEM;
    int rc = count_entries(pz, s, scratch, sp);
    if (rc == 0)
        rc = fill_entries(pz, s, scratch, sp);
    free(scratch);
    return rc < 0 ? rc : check_names(sp);
}

static void put_layout(FILE *f, const tsr_piece *p)
{
    tsr_cell lo = geo_min_corner(p->cells, p->ncells);
    fputs(":layout=", f);
    for (int i = 0; i < p->ncells; i++)
        fprintf(f, "%s%d %d %d", i ? ", " : "", p->cells[i].x - lo.x, p->cells[i].y - lo.y,
                p->cells[i].z - lo.z);
}

/* The layout block: every stationary entry and the hole piece. */
static int put_stationary(FILE *f, const struct sub_puzzle *sp, const struct box *b,
                          int *owner)
{
    bool hole = false;
    for (size_t i = 0; i < b->n; i++)
        hole |= owner[i] == OFF_BOARD;
    size_t width = hole ? strlen(sp->hole) : 1;
    for (int i = 0; i < sp->nstat; i++)
        if (strlen(sp->name[i]) > width)
            width = strlen(sp->name[i]);
    if (sp->nstat == 0 && !hole)
        return 0;
    char *line = row_buffer(b, width);
    if (!line)
        return TSR_ENOMEM;
    fputs("L:stationary=", f);
    for (int i = 0; i < sp->nstat; i++)
        fprintf(f, "%s%s", i ? " " : "", sp->name[i]);
    fprintf(f, "%s%s\n", hole && sp->nstat ? " " : "", hole ? sp->hole : "");
    for (int y = b->ny - 1; y >= 0; y--) {
        char *end = line;
        for (int z = 0; z < b->nz; z++) {
            if (z) {
                memcpy(end, ", ", 2);
                end += 2;
            }
            const int *row = owner + ((size_t)z * b->ny + y) * b->nx;
            /* exact puzzles only: no optional cells */
            struct marks m = {sp->hole, ".", "."};
            end = put_row(end, row, b->nx, width, (const char *const *)sp->name, &m);
        }
        put_line(f, line, end);
    }
    fputs("~L\n", f);
    free(line);
    return 0;
}

int tsr_write_polycube(FILE *f, const tsr_puzzle *pz, const tsr_solution *s)
{
    bool flat = tsr_puzzle_is_flat(pz);
    /* the format has no optional cells, ranges, colours or plane lattices */
    if (pz->lattice != TSR_LATTICE_CUBIC || pz->rotations == TSR_ROT_NONE ||
        (pz->mirror && !flat) || !tsr_puzzle_is_exact(pz) || tsr_puzzle_has_colors(pz))
        return TSR_EUNSUPP;
    struct box b;
    int rc = check_input(pz, s);
    if (rc < 0 || (rc = box_of(pz, TSR_MAX_CELLS, &b)) < 0)
        return rc;
    struct sub_puzzle sp = {0};
    int *owner = NULL;
    if ((rc = plan_sub(pz, s, &sp)) == 0 && !(owner = board_grid(pz, &b)))
        rc = TSR_ENOMEM;
    for (int i = 0; i < sp.nstat && rc == 0; i++)
        rc = paint(&b, owner, i, sp.cells[i], sp.ncells[i]);
    if (rc == 0) {
        fprintf(f, "D:xDim=%d:yDim=%d:zDim=%d%s\n", b.nx, b.ny, b.nz,
                pz->rotations == TSR_ROT_ONE_SIDED && !pz->mirror ? ":oneSide" : "");
        for (int i = sp.nstat; i < sp.nstat + sp.nmobile; i++) {
            fprintf(f, "C:name=%s:type=M", sp.name[i]);
            put_layout(f, &pz->pieces[sp.piece[i]]);
            fputc('\n', f);
        }
        rc = put_stationary(f, &sp, &b, owner);
    }
    if (rc == 0)
        fputs("~D\n", f);
    free(owner);
    free_sub(&sp);
    return finish(f, rc);
}
