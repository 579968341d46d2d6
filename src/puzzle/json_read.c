/*
 * json_read.c - the reader for Puzzle JSON version 1 (docs/puzzle-format.md).
 *
 * jansson parses the document; this file then walks the tree and checks
 * every key, type and range itself, so that each complaint names the JSON
 * path of the offending value ("$.pieces[3].cells[2]: expected ...").  The
 * model is built only through the public helpers of puzzle.h and checked at
 * the end by tsr_puzzle_validate, which owns the rules that span the whole
 * puzzle (volume, fixed pieces on the board and apart).  What only this
 * layer can point at by path (bad art characters, duplicate cells in a
 * list, duplicate names, caps) is caught here first.
 *
 * The board and the pieces share one shape grammar, json_shape.c: art
 * ("rows", "layers"), cell lists ("cells"), the board's "size" and
 * "optional".  Colours (tessera/puzzle.h): a digit 1-9 in art is a cell of
 * that colour, "colors" beside "cells" lists each cell's colour, and the
 * puzzle's "colors" object holds the palette and the allowed pairs; it is
 * read before the shapes, so that a colour beyond the palette is reported
 * where it is written.
 */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "geom/geom.h"
#include "puzzle/json_read.h"
#include "puzzle/json_shape.h"
#include "puzzle/option_json.h"
#include "tessera/puzzle.h"

#define MAX_DOC_BYTES ((size_t)16 << 20)
#define MAX_DEPTH 32        /* a real document nests 5 deep at most */
#define MAX_KEY_IN_PATH 40  /* longer keys are shortened in messages */

/* ---- JSON paths and error messages ------------------------------------ */

static void path_append(jr_path *p, const char *s)
{
    size_t room = sizeof p->buf - 1 - p->len, n = strlen(s);
    if (n > room)
        n = room; /* a truncated path still locates the problem */
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

size_t jr_push_key(jr_path *p, const char *key)
{
    size_t mark = p->len, n = 0;
    char seg[MAX_KEY_IN_PATH + 8] = ".";
    /* keys come from the input: keep messages one printable line */
    for (; key[n] && n < MAX_KEY_IN_PATH; n++)
        seg[n + 1] = isprint((unsigned char)key[n]) ? key[n] : '?';
    strcpy(seg + n + 1, key[n] ? "..." : "");
    path_append(p, seg);
    return mark;
}

size_t jr_push_index(jr_path *p, size_t i)
{
    size_t mark = p->len;
    char seg[32];
    snprintf(seg, sizeof seg, "[%zu]", i);
    path_append(p, seg);
    return mark;
}

void jr_pop(jr_path *p, size_t mark)
{
    p->len = mark;
    p->buf[mark] = '\0';
}

typedef struct reader {
    const char *source; /* may be NULL */
    tsr_err *err;
    jr_path path;
} reader;

/* "SOURCE: $.path: message", returning `code`. */
int jr_fail(jr_reader *r, int code, const char *fmt, ...)
{
    char msg[TSR_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->source != NULL)
        return tsr_err_set(r->err, code, "%s: %s: %s", r->source, r->path.buf, msg);
    return tsr_err_set(r->err, code, "%s: %s", r->path.buf, msg);
}

/* Like fail, for errors located by line and column rather than by path. */
PRINTF_LIKE(5, 6)
static int fail_at(jr_reader *r, int code, int line, int column, const char *fmt, ...)
{
    char msg[TSR_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->source != NULL)
        return tsr_err_set(r->err, code, "%s:%d:%d: %s", r->source, line, column, msg);
    return tsr_err_set(r->err, code, "%d:%d: %s", line, column, msg);
}

/* A short description of a value for "got ..." in messages. */
const char *jr_describe(const json_t *j, char *buf, size_t n)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY:
        snprintf(buf, n, "an array of %zu elements", json_array_size(j));
        return buf;
    case JSON_STRING:
        snprintf(buf, n, "\"%.24s%s\"", json_string_value(j),
                 json_string_length(j) > 24 ? "..." : "");
        return buf;
    case JSON_INTEGER:
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        return buf;
    case JSON_REAL:
        snprintf(buf, n, "%g", json_real_value(j));
        return buf;
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    default: return "null";
    }
}

int jr_fail_type(jr_reader *r, const json_t *j, const char *expected)
{
    char buf[64];
    return jr_fail(r, TSR_EINVAL, "expected %s, got %s", expected, jr_describe(j, buf, sizeof buf));
}

/* "\"a\", \"b\", \"c\"" for messages. */
const char *jr_join_keys(const char *const *keys, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; keys[i] != NULL && len < n; i++) {
        int w = snprintf(buf + len, n - len, "%s\"%s\"", i ? ", " : "", keys[i]);
        len += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* ---- generic value readers ----------------------------------------------
 * The opt_* helpers read an optional member of `obj`: when it is absent
 * they leave *out alone (callers preset defaults); when present they check
 * it at its own path. */

static int check_keys(jr_reader *r, const json_t *obj, const char *const *allowed)
{
    for (void *it = json_object_iter((json_t *)obj); it != NULL;
         it = json_object_iter_next((json_t *)obj, it)) {
        const char *key = json_object_iter_key(it);
        size_t i = 0;
        while (allowed[i] != NULL && strcmp(allowed[i], key) != 0)
            i++;
        if (allowed[i] == NULL) {
            char list[256];
            jr_push_key(&r->path, key);
            return jr_fail(r, TSR_EINVAL, "unknown key; expected one of %s",
                        jr_join_keys(allowed, list, sizeof list));
        }
    }
    return 0;
}

static int require(jr_reader *r, const json_t *obj, const char *key, json_t **out)
{
    *out = json_object_get(obj, key);
    if (*out == NULL)
        return jr_fail(r, TSR_EINVAL, "missing required key \"%s\"", key);
    return 0;
}

static bool is_int_in(const json_t *j, long long min, long long max)
{
    return json_is_integer(j) && json_integer_value(j) >= min && json_integer_value(j) <= max;
}

/* An integer in [min, max] at the current path. */
int jr_want_int(jr_reader *r, const json_t *j, long long min, long long max, long long *out)
{
    if (is_int_in(j, min, max)) {
        *out = json_integer_value(j);
        return 0;
    }
    char what[64];
    if (max == LLONG_MAX)
        snprintf(what, sizeof what, "an integer >= %lld", min);
    else
        snprintf(what, sizeof what, "an integer from %lld to %lld", min, max);
    return jr_fail_type(r, j, what);
}

static int opt_llong(jr_reader *r, const json_t *obj, const char *key, long long min,
                     long long max, long long *out)
{
    json_t *j = json_object_get(obj, key);
    if (j == NULL)
        return 0;
    size_t mark = jr_push_key(&r->path, key);
    int rc = jr_want_int(r, j, min, max, out);
    if (rc == 0)
        jr_pop(&r->path, mark);
    return rc;
}

/* An optional key's value into *out (NULL when the key is absent) when
 * `ok` accepts it; else a type error at the key naming `expected`. */
static int opt_value(jr_reader *r, const json_t *obj, const char *key, bool (*ok)(const json_t *),
                     const char *expected, json_t **out)
{
    *out = json_object_get(obj, key);
    if (*out == NULL || ok(*out))
        return 0;
    jr_push_key(&r->path, key);
    return jr_fail_type(r, *out, expected);
}

/* jansson's type tests are macros: these are functions for opt_value */
static bool is_boolean(const json_t *j) { return json_is_boolean(j); }
static bool is_string(const json_t *j) { return json_is_string(j); }

static int opt_bool(jr_reader *r, const json_t *obj, const char *key, bool *out)
{
    json_t *j;
    int rc = opt_value(r, obj, key, is_boolean, "true or false", &j);
    if (rc == 0 && j != NULL)
        *out = json_is_true(j);
    return rc;
}

/* The string stays owned by the document. */
static int opt_string(jr_reader *r, const json_t *obj, const char *key, const char **out)
{
    json_t *j;
    int rc = opt_value(r, obj, key, is_string, "a string", &j);
    if (rc == 0 && j != NULL)
        *out = json_string_value(j);
    return rc;
}

/* One of the NULL-terminated `names`; *out receives its index. */
static int opt_enum(jr_reader *r, const json_t *obj, const char *key, const char *const *names,
                    int *out)
{
    json_t *j = json_object_get(obj, key);
    if (j == NULL)
        return 0;
    for (int i = 0; json_is_string(j) && names[i] != NULL; i++)
        if (strcmp(json_string_value(j), names[i]) == 0) {
            *out = i;
            return 0;
        }
    char list[128], what[160];
    snprintf(what, sizeof what, "one of %s", jr_join_keys(names, list, sizeof list));
    jr_push_key(&r->path, key);
    return jr_fail_type(r, j, what);
}

/* The most a colour number may be: the palette's size, else the cap. */
static int color_limit(const tsr_puzzle *pz)
{
    return pz->npalette > 0 ? pz->npalette : TSR_MAX_COLORS;
}

/* ---- the puzzle ---------------------------------------------------------- */

static const char *const board_keys[] = {"size", "rows", "layers", "cells", "optional", "colors",
                                         NULL};

static int read_board(jr_reader *r, const json_t *board, tsr_puzzle *pz)
{
    if (!json_is_object(board))
        return jr_fail_type(r, board, "an object");
    int rc = check_keys(r, board, board_keys);
    if (rc)
        return rc;
    jshape_cells cv = {0}, opt = {0};
    rc = jshape_read(r, board, &jshape_board, &cv, &opt, color_limit(pz));
    if (rc == 0)
        rc = jshape_read_optional(r, board, &opt);
    for (int i = 0; rc == 0 && i < cv.n; i++)
        if ((rc = tsr_puzzle_add_board_cell(pz, cv.v[i])) < 0)
            rc = jr_fail(r, rc, "cannot add a board cell: %s", tsr_strerror(rc));
    if (rc == 0 && (rc = tsr_puzzle_set_board_colors(pz, cv.col)) < 0)
        rc = jr_fail(r, rc, "out of memory");
    free(cv.col);
    for (int i = 0; rc == 0 && i < opt.n; i++)
        if ((rc = tsr_puzzle_add_optional_cell(pz, opt.v[i])) < 0)
            rc = jr_fail(r, rc, "cannot add an optional cell: %s", tsr_strerror(rc));
    free(cv.v);
    free(opt.v);
    return rc;
}

static const char *const piece_keys[] = {"name", "cells", "rows", "layers", "count", "fixed",
                                         "colors", NULL};

/* "count": an integer N (exactly N copies) or a range [MIN, MAX].  A piece
 * can have no more copies than the board has cells; this cap also keeps
 * volume sums far from overflow. */
static int read_count(jr_reader *r, const json_t *obj, int *count_min, int *count)
{
    const json_t *j = json_object_get(obj, "count");
    if (j == NULL)
        return 0;
    size_t mark = jr_push_key(&r->path, "count");
    long long v[2];
    int rc = 0;
    if (json_is_array(j)) {
        if (json_array_size(j) != 2)
            return jr_fail_type(r, j, "a range [min, max] of 2 integers");
        for (size_t i = 0; i < 2 && rc == 0; i++) {
            size_t imark = jr_push_index(&r->path, i);
            rc = jr_want_int(r, json_array_get(j, i), i == 0 ? 0 : 1, TSR_MAX_CELLS, &v[i]);
            if (rc == 0)
                jr_pop(&r->path, imark);
        }
        if (rc == 0 && v[0] > v[1])
            rc = jr_fail(r, TSR_EINVAL, "range [%lld, %lld]: min exceeds max", v[0], v[1]);
    } else if (!json_is_integer(j)) {
        char what[80];
        snprintf(what, sizeof what, "an integer from 1 to %d or a range [min, max]",
                 TSR_MAX_CELLS);
        rc = jr_fail_type(r, j, what);
    } else if ((rc = jr_want_int(r, j, 1, TSR_MAX_CELLS, &v[0])) == 0) {
        v[1] = v[0];
    }
    if (rc)
        return rc;
    jr_pop(&r->path, mark);
    *count_min = (int)v[0];
    *count = (int)v[1];
    return 0;
}

/* One element of "pieces"; `names` maps the names seen so far to indices. */
static int read_piece(jr_reader *r, const json_t *obj, size_t index, json_t *names, jshape_cells *cv,
                      tsr_puzzle *pz)
{
    if (!json_is_object(obj))
        return jr_fail_type(r, obj, "a piece object");
    json_t *jname;
    int rc = check_keys(r, obj, piece_keys);
    if (rc == 0)
        rc = require(r, obj, "name", &jname);
    if (rc)
        return rc;

    size_t mark = jr_push_key(&r->path, "name");
    size_t len = json_string_length(jname);
    if (!json_is_string(jname) || len == 0 || len > TSR_MAX_NAME) {
        char what[64];
        snprintf(what, sizeof what, "a non-empty string of at most %d bytes", TSR_MAX_NAME);
        return jr_fail_type(r, jname, what);
    }
    const char *name = json_string_value(jname);
    const json_t *prev = json_object_get(names, name);
    if (prev != NULL)
        return jr_fail(r, TSR_EINVAL, "duplicate piece name \"%s\", already used by piece %"
                    JSON_INTEGER_FORMAT, name, json_integer_value(prev));
    if (json_object_set_new(names, name, json_integer((json_int_t)index)) != 0)
        return jr_fail(r, TSR_ENOMEM, "out of memory");
    jr_pop(&r->path, mark);

    int count_min = 1, count = 1;
    bool fixed = false;
    if ((rc = read_count(r, obj, &count_min, &count)) != 0 ||
        (rc = opt_bool(r, obj, "fixed", &fixed)) != 0)
        return rc;
    if (fixed && (count != 1 || count_min != 1)) {
        jr_push_key(&r->path, "count");
        return jr_fail(r, TSR_EINVAL, "a fixed piece must have count 1");
    }
    if ((rc = jshape_read(r, obj, fixed ? &jshape_fixed_piece : &jshape_piece, cv, NULL,
                         color_limit(pz))) != 0)
        return rc;
    rc = tsr_puzzle_add_piece(pz, name, cv->v, cv->n, count, fixed);
    if (rc < 0)
        return jr_fail(r, rc, "cannot add the piece: %s", tsr_strerror(rc));
    pz->pieces[rc].count_min = count_min;
    if ((rc = tsr_puzzle_set_piece_colors(pz, rc, cv->col)) < 0)
        return jr_fail(r, rc, "out of memory");
    return 0;
}

static int read_pieces(jr_reader *r, const json_t *pieces, tsr_puzzle *pz)
{
    if (!json_is_array(pieces) || json_array_size(pieces) == 0)
        return jr_fail_type(r, pieces, "a non-empty array of pieces");
    if (json_array_size(pieces) > TSR_MAX_PIECES)
        return jr_fail(r, TSR_ETOOBIG, "more than %d pieces", TSR_MAX_PIECES);
    json_t *names = json_object();
    if (names == NULL)
        return jr_fail(r, TSR_ENOMEM, "out of memory");
    jshape_cells cv = {0}; /* reused from piece to piece */
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(pieces); i++) {
        size_t mark = jr_push_index(&r->path, i);
        rc = read_piece(r, json_array_get(pieces, i), i, names, &cv, pz);
        if (rc == 0)
            jr_pop(&r->path, mark);
    }
    free(cv.v);
    free(cv.col);
    json_decref(names);
    return rc;
}

/* "colors": {"palette": ["#rrggbb", ...], "allow": [{"piece": P, "board":
 * B}, ...]}: the display colours of colours 1, 2, ... and the allowed
 * (piece colour, board colour) pairs, each listed once. */
static const char *const colors_keys[] = {"palette", "allow", NULL};
static const char *const pair_keys[] = {"piece", "board", NULL};

static int read_palette(jr_reader *r, const json_t *list, tsr_puzzle *pz)
{
    char what[64];
    snprintf(what, sizeof what, "an array of 1 to %d colours \"#rrggbb\"", TSR_MAX_COLORS);
    if (!json_is_array(list) || json_array_size(list) < 1 ||
        json_array_size(list) > TSR_MAX_COLORS)
        return jr_fail_type(r, list, what);
    uint32_t rgb[TSR_MAX_COLORS];
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *c = json_array_get(list, i);
        const char *t = json_string_value(c);
        unsigned v = 0;
        int used = 0;
        if (t == NULL || strlen(t) != 7 || sscanf(t, "#%6x%n", &v, &used) != 1 || used != 7 ||
            strspn(t + 1, "0123456789abcdefABCDEF") != 6) {
            jr_push_index(&r->path, i);
            return jr_fail_type(r, c, "a colour \"#rrggbb\"");
        }
        rgb[i] = v;
    }
    int rc = tsr_puzzle_set_palette(pz, rgb, (int)json_array_size(list));
    return rc < 0 ? jr_fail(r, rc, "out of memory") : 0;
}

static int read_allow(jr_reader *r, const json_t *list, tsr_puzzle *pz)
{
    if (!json_is_array(list))
        return jr_fail_type(r, list, "an array of pairs {\"piece\": P, \"board\": B}");
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *o = json_array_get(list, i);
        size_t mark = jr_push_index(&r->path, i);
        if (!json_is_object(o))
            return jr_fail_type(r, o, "a pair {\"piece\": P, \"board\": B}");
        long long c[2];
        int rc = check_keys(r, o, pair_keys);
        for (int k = 0; rc == 0 && k < 2; k++) {
            json_t *v;
            if ((rc = require(r, o, pair_keys[k], &v)) != 0)
                return rc;
            size_t kmark = jr_push_key(&r->path, pair_keys[k]);
            if ((rc = jr_want_int(r, v, 1, color_limit(pz), &c[k])) == 0)
                jr_pop(&r->path, kmark);
        }
        if (rc)
            return rc;
        if (tsr_puzzle_color_allowed(pz, (int)c[0], (int)c[1]))
            return jr_fail(r, TSR_EINVAL, "the pair (piece %lld, board %lld) is listed twice", c[0],
                        c[1]);
        if ((rc = tsr_puzzle_allow_colors(pz, (int)c[0], (int)c[1])) < 0)
            return jr_fail(r, rc, "out of memory");
        jr_pop(&r->path, mark);
    }
    return 0;
}

static int read_colors(jr_reader *r, const json_t *obj, tsr_puzzle *pz)
{
    if (!json_is_object(obj))
        return jr_fail_type(r, obj, "an object {\"palette\": [...], \"allow\": [...]}");
    int rc = check_keys(r, obj, colors_keys);
    for (int k = 0; rc == 0 && k < 2; k++) {
        const json_t *v = json_object_get(obj, colors_keys[k]);
        if (v == NULL)
            continue;
        size_t mark = jr_push_key(&r->path, colors_keys[k]);
        rc = k == 0 ? read_palette(r, v, pz) : read_allow(r, v, pz);
        if (rc == 0)
            jr_pop(&r->path, mark);
    }
    return rc;
}


static int read_expected(jr_reader *r, const json_t *obj, tsr_puzzle *pz)
{
    if (!json_is_object(obj))
        return jr_fail_type(r, obj, "an object");
    int rc = check_keys(r, obj, tsr_unique_names);
    for (int i = 0; rc == 0 && tsr_unique_names[i] != NULL; i++)
        rc = opt_llong(r, obj, tsr_unique_names[i], 0, LLONG_MAX, &pz->expected[i]);
    return rc;
}

static const char *const puzzle_keys[] = {"version", "name", "description", "lattice", "board",
                                          "pieces", "rotations", "mirror", "expected", "colors",
                                          NULL};
/* Indexed by enum tsr_rotations. */
static const char *const rotation_names[] = {"all", "one-sided", "none", NULL};

static int read_puzzle(jr_reader *r, const json_t *obj, tsr_puzzle *pz)
{
    if (!json_is_object(obj))
        return jr_fail_type(r, obj, "a puzzle object");
    int rc = check_keys(r, obj, puzzle_keys);
    if (rc)
        return rc;

    json_t *v = json_object_get(obj, "version");
    if (v != NULL && !(json_is_integer(v) && json_integer_value(v) == 1)) {
        jr_push_key(&r->path, "version");
        return jr_fail_type(r, v, "1 (the only version)");
    }

    const char *name = NULL, *description = NULL;
    if ((rc = opt_string(r, obj, "name", &name)) != 0 ||
        (rc = opt_string(r, obj, "description", &description)) != 0)
        return rc;
    if ((name && tsr_puzzle_set_name(pz, name) < 0) ||
        (description && tsr_puzzle_set_description(pz, description) < 0))
        return jr_fail(r, TSR_ENOMEM, "out of memory");

    /* the lattice says what a cell is, so it comes before any shape */
    int lattice = TSR_LATTICE_CUBIC;
    if ((rc = opt_enum(r, obj, "lattice", tsr_lattice_names, &lattice)) != 0)
        return rc;
    pz->lattice = r->lattice = (enum tsr_lattice)lattice;

    if ((v = json_object_get(obj, "colors")) != NULL) { /* first: the palette bounds colours */
        size_t mark = jr_push_key(&r->path, "colors");
        if ((rc = read_colors(r, v, pz)) != 0)
            return rc;
        jr_pop(&r->path, mark);
    }
    static const char *const sections[] = {"board", "pieces"};
    for (int i = 0; i < 2; i++) {
        if ((rc = require(r, obj, sections[i], &v)) != 0)
            return rc;
        size_t mark = jr_push_key(&r->path, sections[i]);
        rc = i == 0 ? read_board(r, v, pz) : read_pieces(r, v, pz);
        if (rc)
            return rc;
        jr_pop(&r->path, mark);
    }

    int rot = (int)pz->rotations;
    if ((rc = opt_enum(r, obj, "rotations", rotation_names, &rot)) != 0 ||
        (rc = opt_bool(r, obj, "mirror", &pz->mirror)) != 0)
        return rc;
    pz->rotations = (enum tsr_rotations)rot;

    for (int i = 0; i < 3; i++)
        pz->expected[i] = -1;
    if ((v = json_object_get(obj, "expected")) != NULL) {
        size_t mark = jr_push_key(&r->path, "expected");
        if ((rc = read_expected(r, v, pz)) != 0)
            return rc;
        jr_pop(&r->path, mark);
    }
    return 0;
}

/* ---- job options -------------------------------------------------------
 * Each option's value is read by its kind (options.c); this walks the
 * object and says where. */

#define OPTION_KEY(name, kind, min, max, def, flags, cli, help) #name,
static const char *const option_keys[] = {TSR_OPTIONS(OPTION_KEY) NULL};

static int read_options(jr_reader *r, const json_t *obj, const tsr_puzzle *pz, tsr_options *o)
{
    if (!json_is_object(obj))
        return jr_fail_type(r, obj, "an options object");
    int rc = check_keys(r, obj, option_keys);
    for (int i = 0; rc == 0 && i < TSR_NOPTIONS; i++) {
        const tsr_option *op = &tsr_option_list[i];
        const json_t *v = json_object_get(obj, op->name);
        if (v == NULL)
            continue; /* left at its default */
        char shown[64], why[TSR_ERR_MAX];
        size_t mark = jr_push_key(&r->path, op->name);
        rc = tsr_option_read_json(o, op, v, jr_describe(v, shown, sizeof shown), pz, why,
                                  sizeof why);
        if (rc)
            return jr_fail(r, rc, "%s", why);
        jr_pop(&r->path, mark);
    }
    return rc;
}

/* ---- the document ---------------------------------------------------------- */

/* Refuse deep nesting before jansson recurses into it.  Columns count
 * characters, not bytes, as jansson's do. */
static int check_depth(jr_reader *r, const char *text, size_t len)
{
    int depth = 0, line = 1, column = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') {
            line++;
            column = 0;
        } else if ((c & 0xC0) != 0x80) {
            column++;
        }
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > MAX_DEPTH)
                return fail_at(r, TSR_EINVAL, line, column, "nesting deeper than %d levels",
                               MAX_DEPTH);
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        }
    }
    return 0;
}

static const char *const job_keys[] = {"puzzle", "options", NULL};
static const char *const polycube_job_keys[] = {"polycube", "options", NULL};
static const char *const xmpuzzle_job_keys[] = {"xmpuzzle", "problem", "options", NULL};

/* The polycube text of a job {"polycube": "...", "options": ...}, read into
 * pz (which is empty); its messages name the line within the string. */
static int read_polycube_member(jr_reader *r, const json_t *text, tsr_puzzle *pz)
{
    if (!json_is_string(text))
        return jr_fail_type(r, text, "a string of polycube definition text");
    char where[600];
    snprintf(where, sizeof where, "%s%s%s", r->source ? r->source : "",
             r->source ? ": " : "", r->path.buf);
    tsr_puzzle *tmp = NULL;
    int rc = tsr_puzzle_read_polycube(json_string_value(text), json_string_length(text), where,
                                      &tmp, r->err);
    if (rc)
        return rc;
    tsr_puzzle swap = *pz;
    *pz = *tmp;
    *tmp = swap;
    tsr_puzzle_free(tmp);
    return 0;
}

/* The BurrTools XML of a job {"xmpuzzle": "<?xml ...", "problem": N or
 * "NAME", "options": ...} (the file's XML as text: a browser inflates the
 * gzip), the chosen problem read into pz (which is empty). */
static int read_xmpuzzle_member(jr_reader *r, const json_t *root, tsr_puzzle *pz)
{
    const json_t *text = json_object_get(root, "xmpuzzle"), *problem = json_object_get(root, "problem");
    size_t mark = jr_push_key(&r->path, "xmpuzzle");
    if (!json_is_string(text))
        return jr_fail_type(r, text, "a string: the XML of a BurrTools file");
    jr_pop(&r->path, mark);
    char spec[TSR_MAX_NAME + 1] = "";
    if (problem != NULL) {
        mark = jr_push_key(&r->path, "problem");
        if (json_is_integer(problem) && json_integer_value(problem) >= 1 &&
            json_integer_value(problem) <= 100000)
            snprintf(spec, sizeof spec, "%lld", (long long)json_integer_value(problem));
        else if (json_is_string(problem) && json_string_length(problem) >= 1 &&
                 json_string_length(problem) <= TSR_MAX_NAME)
            snprintf(spec, sizeof spec, "%s", json_string_value(problem));
        else
            return jr_fail_type(r, problem, "the problem's number from 1, or its name");
        jr_pop(&r->path, mark);
    }
    char where[600];
    snprintf(where, sizeof where, "%s%s$.xmpuzzle", r->source ? r->source : "", r->source ? ": " : "");
    tsr_puzzle *tmp = NULL;
    int rc = tsr_puzzle_read_xmpuzzle(json_string_value(text), json_string_length(text), where,
                                      spec[0] ? spec : NULL, &tmp, r->err);
    if (rc)
        return rc;
    /* the reader names the puzzle after its source and problem: here the
     * source is a place in the request, so the problem's name alone */
    size_t n = strlen(where);
    if (tmp->name != NULL && strncmp(tmp->name, where, n) == 0)
        rc = tsr_puzzle_set_name(tmp, tmp->name[n] == ':' ? tmp->name + n + 2 : "BurrTools puzzle");
    if (rc) {
        tsr_puzzle_free(tmp);
        return rc;
    }
    tsr_puzzle swap = *pz;
    *pz = *tmp;
    *tmp = swap;
    tsr_puzzle_free(tmp);
    return 0;
}

/* A bare puzzle, or a job {"puzzle": ..., "options": ...}, or a job
 * {"polycube": "...", "options": ...}, or {"xmpuzzle": ..., "problem": ...}. */
static int read_document(jr_reader *r, const json_t *root, tsr_puzzle *pz, tsr_options *o)
{
    if (!json_is_object(root))
        return jr_fail_type(r, root, "an object (a puzzle or a job)");
    const json_t *puzzle = json_object_get(root, "puzzle");
    const json_t *polycube = json_object_get(root, "polycube");
    const json_t *xm = json_object_get(root, "xmpuzzle");
    if (puzzle == NULL && polycube == NULL && xm == NULL)
        return read_puzzle(r, root, pz);

    int rc = check_keys(r, root, puzzle != NULL ? job_keys : polycube != NULL ? polycube_job_keys
                                                                           : xmpuzzle_job_keys);
    if (rc)
        return rc;
    if (puzzle == NULL && polycube == NULL) {
        rc = read_xmpuzzle_member(r, root, pz);
    } else {
        size_t mark = jr_push_key(&r->path, puzzle != NULL ? "puzzle" : "polycube");
        rc = puzzle != NULL ? read_puzzle(r, puzzle, pz) : read_polycube_member(r, polycube, pz);
        if (rc == 0)
            jr_pop(&r->path, mark);
    }
    if (rc != 0)
        return rc;
    const json_t *options = json_object_get(root, "options");
    if (options == NULL)
        return 0;
    jr_push_key(&r->path, "options");
    return read_options(r, options, pz, o);
}

/* The size cap, the nesting cap, then jansson (duplicate keys refused). */
static int load_document(jr_reader *r, const char *text, size_t len, json_t **root)
{
    *root = NULL;
    if (len > MAX_DOC_BYTES)
        return jr_fail(r, TSR_ETOOBIG, "the document is %zu bytes; the limit is %zu MiB", len,
                    MAX_DOC_BYTES >> 20);
    int rc = check_depth(r, text, len);
    if (rc)
        return rc;
    json_error_t jerr;
    *root = json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES, &jerr);
    if (*root == NULL) {
        /* jansson says "'}' expected near '"pieces"'" where a ',' was
         * forgotten between two members: say what is most likely missing */
        char close = 0;
        const char *near = NULL;
        if (strncmp(jerr.text, "'}' expected near '", 19) == 0 ||
            strncmp(jerr.text, "']' expected near '", 19) == 0) {
            close = jerr.text[1];
            near = jerr.text + 19;
        }
        if (near != NULL && strchr("\"{[-0123456789tfn", near[0]) != NULL)
            return fail_at(r, TSR_EINVAL, jerr.line, jerr.column,
                           "JSON syntax error: missing ',' before %.*s (or a '%c' to close the %s)",
                           (int)(strlen(near) - (near[strlen(near) - 1] == '\'')), near, close,
                           close == '}' ? "object" : "array");
        return fail_at(r, TSR_EINVAL, jerr.line, jerr.column, "JSON syntax error: %s",
                       jerr.text);
    }
    return 0;
}

int tsr_options_read_json(const char *text, size_t len, const char *source,
                          const tsr_puzzle *pz, tsr_options *opt, tsr_err *err)
{
    jr_reader r = {.source = source, .err = err, .path = {.buf = "$", .len = 1}};
    tsr_options_init(opt);
    json_t *root;
    int rc = load_document(&r, text, len, &root);
    if (rc)
        return rc;
    tsr_options o;
    tsr_options_init(&o);
    rc = read_options(&r, root, pz, &o);
    json_decref(root);
    if (rc == 0)
        *opt = o;
    return rc;
}

int tsr_puzzle_read_json(const char *text, size_t len, const char *source,
                         tsr_puzzle **out, tsr_options *opt, tsr_err *err)
{
    jr_reader r = {.source = source, .err = err, .path = {.buf = "$", .len = 1}};
    *out = NULL;
    if (opt != NULL)
        tsr_options_init(opt);
    if (text == NULL && len > 0)
        return tsr_err_set(err, TSR_EINVAL, "tsr_puzzle_read_json: no text");
    json_t *root;
    int rc = load_document(&r, text, len, &root);
    if (rc)
        return rc;

    tsr_options o;
    tsr_options_init(&o);
    tsr_puzzle *pz = tsr_puzzle_new();
    if (pz == NULL)
        rc = jr_fail(&r, TSR_ENOMEM, "out of memory");
    else
        rc = read_document(&r, root, pz, &o);
    json_decref(root);
    if (rc == 0)
        rc = tsr_puzzle_validate(pz, source, err);
    if (rc < 0) {
        tsr_puzzle_free(pz);
        return rc;
    }
    if (opt != NULL)
        *opt = o;
    *out = pz;
    return 0;
}
