/*
 * polycube_read.c - reader for the puzzle definition files of Matt Busche's
 * polycube solver (versions 1.2.1 and 2.0).
 *
 * The format, as the solver reads and writes it (Puzzle::printState in its
 * source; the examples of mattbusche.org "Solving Polyomino and Polycube
 * Puzzles", 2011):
 *
 *   # comment                        '#' starts a comment anywhere on a line
 *   D:xDim=4:yDim=4:zDim=4           opens the definition of the puzzle box
 *   C:name=A:type=M:layout=0 0 2, 1 0 2, 2 0 2
 *   L:stationary=* X                 opens a graphical layout block ...
 *   * * . . , * * . .                ... rows of cells ...
 *   ~L                               ... closed by ~L
 *   ~D                               closes the definition
 *
 * D: attributes: xDim, yDim (required), zDim (default 1) and the flag
 * oneSide (pieces turn only about the z axis: one-sided polyominoes; also
 * accepted as oneSide=1 / oneSide=0).
 * C: attributes: name (required), layout (required: comma-separated "x y z"
 * triples) and type (M = mobile, the default; S = stationary, fixed at the
 * given coordinates).
 * L attributes: stationary, a space-separated list of the names in the block
 * that are stationary; every other name in the block is a mobile piece.
 *
 * Layout rows, as the solver prints them: the first row of a block has
 * y = yDim-1 and each following row one less (the drawing shows y growing
 * upwards); a row holds one group of cells per z layer, z = 0 first, groups
 * separated by ','; within a group, whitespace-separated tokens are the
 * cells x = 0, 1, ...; "." is an empty cell and any other token the name of
 * the piece covering it (names may be longer than one character).  Blank
 * lines inside a block are skipped without using up a row, so a block may
 * draw several mobile pieces separated by blank lines.  Mobile pieces keep
 * these coordinates (only their shape matters), so they may lie outside the
 * box; stationary cells must lie inside it.
 *
 * The board is the whole xDim*yDim*zDim box; stationary pieces become fixed
 * pieces covering some of its cells, which is how the format shapes
 * irregular boards.  The format has no piece counts: every C: line and every
 * layout name is a piece of its own (count 1), even when shapes repeat.
 * Pieces are numbered in the order they are first defined.
 *
 * Decisions where the format is silent, chosen to be strict: a document
 * holds exactly one D: ... ~D definition (only comments after it); a name
 * is defined once (in one C: line or one layout block); attributes must be
 * known and appear at most once; duplicate cells are errors.  Every error
 * names "SOURCE:LINE: ..." (or "LINE: ..." without a source).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "puzzle/polycube.h"
#include "tessera/puzzle.h"

/* A piece as it is being read, before it goes into the puzzle. */
struct pc_piece {
    char *name;
    tsr_cell *cells;
    int ncells;
    size_t cap;
    bool fixed;
    int line;  /* where it was defined, for messages */
    int block; /* the layout block that defines it; 0 for a C: line */
};

struct parser {
    const char *source;
    tsr_err *err;
    int line;
    bool have_d, done;  /* seen D: and ~D */
    int dim[3];
    bool one_side;
    int block, nblocks; /* current layout block (0: none) and blocks so far */
    int block_line;     /* the line of the current block's L */
    int block_first;    /* first piece index the current block may define */
    int row;            /* rows read in the current block */
    struct pc_piece *pieces;
    int npieces;
    size_t cap;
    int *map; /* open-addressing hash of names: piece index or -1 */
    size_t map_cap;
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(const struct parser *p, int code, const char *fmt, ...)
{
    char msg[TSR_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (p->source)
        return tsr_err_set(p->err, code, "%s:%d: %s", p->source, p->line, msg);
    return tsr_err_set(p->err, code, "%d: %s", p->line, msg);
}

static int no_memory(const struct parser *p)
{
    return fail(p, TSR_ENOMEM, "out of memory");
}

/* ---- small text helpers ---------------------------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static char *trim(char *s)
{
    while (is_space(*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && is_space(e[-1]))
        *--e = '\0';
    return s;
}

/* Cuts *cursor at the next `sep` (or its end) and returns the piece before
 * it, or NULL when nothing is left. */
static char *split(char **cursor, char sep)
{
    char *s = *cursor;
    if (!s)
        return NULL;
    char *e = strchr(s, sep);
    if (e) {
        *e = '\0';
        *cursor = e + 1;
    } else {
        *cursor = NULL;
    }
    return s;
}

/* The next whitespace-separated token of *cursor, or NULL. */
static char *next_token(char **cursor)
{
    char *s = *cursor;
    while (is_space(*s))
        s++;
    if (!*s)
        return NULL;
    char *e = s;
    while (*e && !is_space(*e))
        e++;
    *cursor = *e ? e + 1 : e;
    *e = '\0';
    return s;
}

/* A whole decimal integer with optional sign.  Magnitudes beyond 10^12
 * saturate there, so callers' range checks report them as too big. */
static bool parse_int(const char *s, long long *out)
{
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return false;
    long long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        if (v < 1000000000000LL)
            v = v * 10 + (*s - '0');
    }
    *out = neg ? -v : v;
    return true;
}

/* ---- pieces and the name index --------------------------------------- */

static size_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return (size_t)h;
}

static size_t map_slot(const struct parser *p, const char *name)
{
    size_t mask = p->map_cap - 1, i = hash_name(name) & mask;
    while (p->map[i] >= 0 && strcmp(p->pieces[p->map[i]].name, name) != 0)
        i = (i + 1) & mask;
    return i;
}

static int find_piece(const struct parser *p, const char *name)
{
    return p->map_cap ? p->map[map_slot(p, name)] : -1;
}

/* Keeps the hash at most half full; rebuilt from the piece list. */
static int grow_map(struct parser *p)
{
    if (2 * (size_t)(p->npieces + 1) <= p->map_cap)
        return 0;
    size_t cap = p->map_cap ? 2 * p->map_cap : 64;
    int *map = malloc(cap * sizeof *map);
    if (!map)
        return no_memory(p);
    free(p->map);
    p->map = map;
    p->map_cap = cap;
    for (size_t i = 0; i < cap; i++)
        map[i] = -1;
    for (int k = 0; k < p->npieces; k++)
        map[map_slot(p, p->pieces[k].name)] = k;
    return 0;
}

/* Checks a name that is not yet defined and adds an empty piece for it. */
static int new_piece(struct parser *p, const char *name, bool fixed)
{
    if (strlen(name) > TSR_MAX_NAME)
        return fail(p, TSR_ETOOBIG, "piece name '%.40s...' is longer than %d bytes",
                    name, TSR_MAX_NAME);
    if (!tsr_polycube_name_ok(name))
        return fail(p, TSR_EINVAL, "invalid piece name '%.40s'", name);
    if (p->npieces >= TSR_MAX_PIECES)
        return fail(p, TSR_ETOOBIG, "more than %d pieces", TSR_MAX_PIECES);
    int rc = grow_map(p);
    if (rc < 0)
        return rc;
    rc = base_grow((void **)&p->pieces, &p->cap, (size_t)p->npieces, sizeof *p->pieces, 16, 0);
    if (rc != 0)
        return no_memory(p);
    char *copy = strdup(name);
    if (!copy)
        return no_memory(p);
    p->pieces[p->npieces] = (struct pc_piece){
        .name = copy, .fixed = fixed, .line = p->line, .block = p->block};
    p->map[map_slot(p, name)] = p->npieces;
    return p->npieces++;
}

static int redefined(const struct parser *p, int k)
{
    return fail(p, TSR_EINVAL, "piece '%s' redefined (first defined on line %d)",
                p->pieces[k].name, p->pieces[k].line);
}

static int add_cell(struct parser *p, struct pc_piece *pc, tsr_cell c)
{
    if (pc->fixed && (c.x < 0 || c.x >= p->dim[0] || c.y < 0 || c.y >= p->dim[1] ||
                      c.z < 0 || c.z >= p->dim[2]))
        return fail(p, TSR_EINVAL,
                    "cell (%d %d %d) of stationary piece '%s' lies outside the %dx%dx%d box",
                    c.x, c.y, c.z, pc->name, p->dim[0], p->dim[1], p->dim[2]);
    /* a stationary piece shapes the board, so it may be as large as the board */
    int limit = pc->fixed ? TSR_MAX_CELLS : TSR_MAX_PIECE_CELLS;
    int rc = base_grow((void **)&pc->cells, &pc->cap, (size_t)pc->ncells, sizeof *pc->cells, 8,
                       (size_t)limit);
    if (rc == TSR_ETOOBIG)
        return fail(p, TSR_ETOOBIG, "piece '%s' has more than %d cells", pc->name, limit);
    if (rc != 0)
        return no_memory(p);
    pc->cells[pc->ncells++] = c;
    return 0;
}

/* ---- attributes ------------------------------------------------------ */

/* Splits "key=value:flag:..." into vals[i] for keys[i] (NULL when absent,
 * "" for a bare flag).  `rec` names the line kind in messages. */
static int parse_attrs(const struct parser *p, char *rest, const char *rec,
                       const char *const keys[], char *vals[])
{
    for (int i = 0; keys[i]; i++)
        vals[i] = NULL;
    char *field;
    while ((field = split(&rest, ':')) != NULL) {
        char *val = strchr(field, '=');
        if (val)
            *val++ = '\0';
        char *key = trim(field);
        if (!*key)
            return fail(p, TSR_EINVAL, "empty attribute in %s line", rec);
        int i = 0;
        while (keys[i] && strcmp(keys[i], key) != 0)
            i++;
        if (!keys[i])
            return fail(p, TSR_EINVAL, "unknown attribute '%.40s' in %s line", key, rec);
        if (vals[i])
            return fail(p, TSR_EINVAL, "attribute '%s' given twice in %s line", key, rec);
        vals[i] = val ? trim(val) : "";
    }
    return 0;
}

static int need(const struct parser *p, const char *val, const char *key, const char *rec)
{
    if (!val || !*val)
        return fail(p, TSR_EINVAL, "%s line needs %s=...", rec, key);
    return 0;
}

/* ---- the three kinds of line ----------------------------------------- */

static int read_d(struct parser *p, char *rest)
{
    static const char *const keys[] = {"xDim", "yDim", "zDim", "oneSide", NULL};
    char *vals[4];
    int rc = parse_attrs(p, rest, "D:", keys, vals);
    if (rc < 0)
        return rc;
    if (!vals[2])
        vals[2] = "1";
    long long volume = 1;
    for (int i = 0; i < 3; i++) {
        long long v;
        if ((rc = need(p, vals[i], keys[i], "D:")) < 0)
            return rc;
        if (!parse_int(vals[i], &v))
            return fail(p, TSR_EINVAL, "%s: '%.40s' is not an integer", keys[i], vals[i]);
        if (v < 1)
            return fail(p, TSR_EINVAL, "%s must be at least 1", keys[i]);
        if (v > TSR_MAX_CELLS || (volume *= v) > TSR_MAX_CELLS)
            return fail(p, TSR_ETOOBIG, "the box has more than %d cells", TSR_MAX_CELLS);
        p->dim[i] = (int)v;
    }
    const char *side = vals[3];
    if (side && strcmp(side, "") != 0 && strcmp(side, "1") != 0 && strcmp(side, "0") != 0)
        return fail(p, TSR_EINVAL, "oneSide takes no value, 0 or 1, not '%.40s'", side);
    p->one_side = side && strcmp(side, "0") != 0;
    p->have_d = true;
    return 0;
}

/* Fails on cells listed twice; sorts a copy so large pieces stay cheap. */
static int cell_cmp(const void *a, const void *b)
{
    const tsr_cell *u = a, *v = b;
    if (u->x != v->x)
        return u->x < v->x ? -1 : 1;
    if (u->y != v->y)
        return u->y < v->y ? -1 : 1;
    return (u->z > v->z) - (u->z < v->z);
}

static int check_duplicates(const struct parser *p, const struct pc_piece *pc)
{
    tsr_cell *v = malloc((size_t)pc->ncells * sizeof *v);
    if (!v)
        return no_memory(p);
    memcpy(v, pc->cells, (size_t)pc->ncells * sizeof *v);
    qsort(v, (size_t)pc->ncells, sizeof *v, cell_cmp);
    int rc = 0;
    for (int i = 1; i < pc->ncells && rc == 0; i++)
        if (cell_cmp(&v[i - 1], &v[i]) == 0)
            rc = fail(p, TSR_EINVAL, "piece '%s' lists cell (%d %d %d) twice", pc->name,
                      v[i].x, v[i].y, v[i].z);
    free(v);
    return rc;
}

static int read_layout_attr(struct parser *p, struct pc_piece *pc, char *text)
{
    char *part;
    for (int n = 1; (part = split(&text, ',')) != NULL; n++) {
        long long v[3];
        int k = 0;
        char *tok;
        while ((tok = next_token(&part)) != NULL) {
            if (k == 3 || !parse_int(tok, &v[k]))
                return fail(p, TSR_EINVAL, "layout entry %d is not three integers 'x y z'", n);
            if (v[k] < -TSR_MAX_COORD || v[k] > TSR_MAX_COORD)
                return fail(p, TSR_ETOOBIG, "layout entry %d: coordinate beyond %d", n,
                            TSR_MAX_COORD);
            k++;
        }
        if (k != 3)
            return fail(p, TSR_EINVAL, "layout entry %d is not three integers 'x y z'", n);
        int rc = add_cell(p, pc, (tsr_cell){(int)v[0], (int)v[1], (int)v[2]});
        if (rc < 0)
            return rc;
    }
    return check_duplicates(p, pc);
}

static int read_c(struct parser *p, char *rest)
{
    static const char *const keys[] = {"name", "type", "layout", NULL};
    char *vals[3];
    int rc = parse_attrs(p, rest, "C:", keys, vals);
    if (rc < 0 || (rc = need(p, vals[0], "name", "C:")) < 0 ||
        (rc = need(p, vals[2], "layout", "C:")) < 0)
        return rc;
    const char *type = vals[1] ? vals[1] : "M";
    if (strcmp(type, "M") != 0 && strcmp(type, "S") != 0)
        return fail(p, TSR_EINVAL, "type must be M (mobile) or S (stationary), not '%.40s'",
                    type);
    int k = find_piece(p, vals[0]);
    if (k >= 0)
        return redefined(p, k);
    if ((k = new_piece(p, vals[0], type[0] == 'S')) < 0)
        return k;
    return read_layout_attr(p, &p->pieces[k], vals[2]);
}

static int read_l(struct parser *p, char *rest)
{
    static const char *const keys[] = {"stationary", NULL};
    char *vals[1];
    int rc = parse_attrs(p, rest, "L:", keys, vals);
    if (rc < 0 || (vals[0] && (rc = need(p, vals[0], "stationary", "L:")) < 0))
        return rc;
    p->block = ++p->nblocks;
    p->block_line = p->line;
    p->block_first = p->npieces;
    p->row = 0;
    char *names = vals[0], *name;
    while (names && (name = next_token(&names)) != NULL) {
        int k = find_piece(p, name);
        if (k >= 0 && p->pieces[k].block == p->block)
            return fail(p, TSR_EINVAL, "'%s' listed twice in stationary=", name);
        if (k >= 0)
            return redefined(p, k);
        if ((k = new_piece(p, name, true)) < 0)
            return k;
    }
    return 0;
}

static int read_row(struct parser *p, char *text)
{
    long long y = (long long)p->dim[1] - 1 - p->row++;
    if (y < -TSR_MAX_COORD)
        return fail(p, TSR_ETOOBIG, "layout block has too many rows");
    char *group;
    for (int z = 0; (group = split(&text, ',')) != NULL; z++) {
        char *tok;
        for (int x = 0; (tok = next_token(&group)) != NULL; x++) {
            if (x > TSR_MAX_COORD || z > TSR_MAX_COORD)
                return fail(p, TSR_ETOOBIG, "layout row is too long");
            if (strcmp(tok, ".") == 0)
                continue;
            int k = find_piece(p, tok);
            if (k >= 0 && p->pieces[k].block != p->block)
                return redefined(p, k);
            if (k < 0 && (k = new_piece(p, tok, false)) < 0)
                return k;
            int rc = add_cell(p, &p->pieces[k], (tsr_cell){x, (int)y, z});
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

static int end_block(struct parser *p)
{
    for (int k = p->block_first; k < p->npieces; k++)
        if (p->pieces[k].ncells == 0)
            return fail(p, TSR_EINVAL,
                        "stationary piece '%s' (listed on line %d) does not appear in the layout",
                        p->pieces[k].name, p->block_line);
    p->block = 0;
    return 0;
}

/* One line, comment already removed and trimmed, not blank. */
static int read_line(struct parser *p, char *s)
{
    if (p->block) {
        if (strcmp(s, "~L") == 0)
            return end_block(p);
        if (strcmp(s, "~D") == 0)
            return fail(p, TSR_EINVAL, "~D inside the layout block opened on line %d "
                                       "(missing ~L)", p->block_line);
        return read_row(p, s);
    }
    char *rest = s;
    char *kind = trim(split(&rest, ':'));
    if (p->done)
        return fail(p, TSR_EINVAL, "text after ~D (a document holds one puzzle)");
    if (!p->have_d) {
        if (strcmp(kind, "D") != 0)
            return fail(p, TSR_EINVAL, "expected a D: line, not '%.40s'", s);
        return read_d(p, rest);
    }
    if (strcmp(kind, "C") == 0)
        return read_c(p, rest);
    if (strcmp(kind, "L") == 0)
        return read_l(p, rest);
    if (strcmp(kind, "D") == 0)
        return fail(p, TSR_EINVAL, "D: line inside a definition (missing ~D?)");
    if (strcmp(kind, "~D") != 0 && strcmp(kind, "~L") != 0)
        return fail(p, TSR_EINVAL, "unknown line '%.40s'", kind);
    if (rest)
        return fail(p, TSR_EINVAL, "%s takes no attributes", kind);
    if (kind[1] == 'L')
        return fail(p, TSR_EINVAL, "~L without an open L block");
    p->done = true;
    return 0;
}

/* Splits the (copied) text into lines and feeds them to read_line. */
static int read_lines(struct parser *p, char *buf, size_t len)
{
    char *end = buf + len;
    bool any = false; /* a line with something on it (a comment counts) */
    for (char *s = buf; s < end; p->line++) {
        char *nl = memchr(s, '\n', (size_t)(end - s));
        char *eol = nl ? nl : end;
        *eol = '\0';
        if (strlen(s) != (size_t)(eol - s))
            return fail(p, TSR_EINVAL, "NUL byte in the text");
        any |= s[strspn(s, " \t\r\f\v")] != '\0';
        char *hash = strchr(s, '#');
        if (hash)
            *hash = '\0';
        char *line = trim(s);
        s = eol + 1;
        if (*line) {
            int rc = read_line(p, line);
            if (rc < 0)
                return rc;
        }
    }
    p->line = p->line > 1 ? p->line - 1 : 1; /* report the end on the last line */
    if (!p->have_d && !any) /* not "no D: line": there is no line at all */
        return fail(p, TSR_EINVAL, "the text is empty (a puzzle is JSON or polycube text)");
    if (!p->have_d)
        return fail(p, TSR_EINVAL, "no D: line (not a polycube definition)");
    if (p->block)
        return fail(p, TSR_EINVAL, "missing ~L for the layout block opened on line %d",
                    p->block_line);
    if (!p->done)
        return fail(p, TSR_EINVAL, "missing ~D at the end");
    return 0;
}

/* The whole box is the board; the pieces follow in definition order. */
static int build(const struct parser *p, tsr_puzzle **out)
{
    tsr_puzzle *pz = tsr_puzzle_new();
    if (!pz)
        return no_memory(p);
    int rc = 0;
    pz->rotations = p->one_side ? TSR_ROT_ONE_SIDED : TSR_ROT_ALL;
    pz->mirror = false;
    for (int z = 0; z < p->dim[2] && rc >= 0; z++)
        for (int y = 0; y < p->dim[1] && rc >= 0; y++)
            for (int x = 0; x < p->dim[0] && rc >= 0; x++)
                rc = tsr_puzzle_add_board_cell(pz, (tsr_cell){x, y, z});
    for (int k = 0; k < p->npieces && rc >= 0; k++) {
        const struct pc_piece *pc = &p->pieces[k];
        rc = tsr_puzzle_add_piece(pz, pc->name, pc->cells, pc->ncells, 1, pc->fixed);
    }
    if (rc < 0) {
        tsr_puzzle_free(pz);
        return tsr_err_set(p->err, rc, "%s%s%s", p->source ? p->source : "",
                           p->source ? ": " : "", tsr_strerror(rc));
    }
    *out = pz;
    return 0;
}

int tsr_puzzle_read_polycube(const char *text, size_t len, const char *source,
                             tsr_puzzle **out, tsr_err *err)
{
    *out = NULL;
    struct parser p = {.source = source, .err = err, .line = 1};
    char *buf = malloc(len + 1);
    if (!buf)
        return no_memory(&p);
    if (len)
        memcpy(buf, text, len);
    buf[len] = '\0';
    int rc = read_lines(&p, buf, len);
    free(buf);
    if (rc >= 0)
        rc = build(&p, out);
    for (int k = 0; k < p.npieces; k++) {
        free(p.pieces[k].name);
        free(p.pieces[k].cells);
    }
    free(p.pieces);
    free(p.map);
    if (rc >= 0 && (rc = tsr_puzzle_validate(*out, source, err)) < 0) {
        tsr_puzzle_free(*out);
        *out = NULL;
    }
    return rc < 0 ? rc : 0;
}
