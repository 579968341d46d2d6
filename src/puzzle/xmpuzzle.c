/*
 * xmpuzzle.c - BurrTools files (.xmpuzzle) read into the puzzle model.
 *
 * A BurrTools file is gzip-compressed XML (plain XML is taken too):
 *
 *   <puzzle version="2">
 *     <gridType type="0"/>                      0: cubes ("bricks"); others refused
 *     <colors><color red=.. green=.. blue=../>...</colors>
 *     <shapes>
 *       <voxel x="3" y="2" z="1" name="L" type="0">###_#_</voxel> ...
 *     </shapes>
 *     <problems>
 *       <problem name="...">
 *         <shapes><shape id="0" count="1"/> <shape id="1" min="0" max="2"/></shapes>
 *         <result id="2"/>
 *         <bitmap><pair piece="0" result="1"/></bitmap>
 *       </problem>
 *     </problems>
 *   </puzzle>
 *
 * A voxel string lists the box's voxels x fastest, then y, then z: '_'
 * empty, '#' filled, '+' variable (in the result: a cell a solution may
 * leave empty), each filled or variable voxel optionally followed by its
 * colour number (1-based, up to 63; 0 or none: neutral).  A problem's
 * shapes are its pieces with their counts or ranges; its result is the
 * board; its <bitmap> pairs (0-based colours) are the allowed (piece
 * colour, result colour) pairs; the file's <colors> are the palette.
 *
 * The file is untrusted: the inflated size, the voxel boxes, the counts and
 * the element nesting are bounded before anything is allocated by them, and
 * every refusal names the file and what is wrong (with the XML line where
 * there is one).  The XML is parsed by expat and inflated by zlib.
 *
 * Colours carry over as they are (tessera/puzzle.h, docs/puzzle-format.md
 * "Colours"): BurrTools' rule, problem_c::placementAllowed, is the model's.
 * A colour above the file's number of colours is refused: BurrTools
 * asserts on it, and with no colours defined it would ignore the pairs.
 */
#include <expat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/base.h"
#include "tessera/puzzle.h"

#define XM_MAX_BYTES (64u << 20)    /* inflated XML */
#define XM_MAX_VOXELS (1L << 24)    /* in one shape's box */
#define XM_MAX_SHAPES 4096
#define XM_MAX_PROBLEMS 1024
#define XM_MAX_PARTS 4096           /* shapes in one problem */
#define XM_MAX_COUNT 8191           /* copies of one piece */
#define XM_MAX_DEPTH 64
#define XM_MAX_PAIRS ((TSR_MAX_COLORS) * (TSR_MAX_COLORS))

typedef struct xm_shape {
    long sx, sy, sz;
    char name[TSR_MAX_NAME + 1];
    char *text; /* the voxel string */
    size_t len, cap;
} xm_shape;

typedef struct xm_part {
    int id, min, max;
} xm_part;

typedef struct xm_problem {
    char name[TSR_MAX_NAME + 1];
    xm_part *parts;
    int nparts;
    size_t cap;
    int result;  /* shape id, -1 when none given */
    tsr_color_pair *pairs; /* colour constraint pairs, 1-based as the model's */
    int npairs;
    size_t pairs_cap;
} xm_problem;

typedef struct xm_reader {
    XML_Parser xp;
    const char *source;
    tsr_err *err;
    int rc;
    int depth;
    int grid;         /* gridType type; 0 when absent */
    int ncolors;
    uint32_t palette[TSR_MAX_COLORS];
    xm_shape *shapes;
    int nshapes;
    size_t shapes_cap;
    xm_problem *problems;
    int nproblems;
    size_t problems_cap;
    bool in_puzzle, in_shapes, in_problems, in_problem_shapes, in_bitmap;
    xm_shape *text_to; /* the voxel whose string is being read */
} xm_reader;

/* The first error wins; the parser stops. */
static void fail(xm_reader *r, int code, const char *fmt, ...)
{
    if (r->rc != 0)
        return;
    char msg[TSR_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->rc = tsr_err_set(r->err, code, "%s:%lu: %s", r->source,
                        (unsigned long)XML_GetCurrentLineNumber(r->xp), msg);
    XML_StopParser(r->xp, XML_FALSE);
}

static const char *attr(const char **atts, const char *key)
{
    for (int i = 0; atts[i] != NULL; i += 2)
        if (strcmp(atts[i], key) == 0)
            return atts[i + 1];
    return NULL;
}

/* An attribute that must be a whole number in [lo, hi]: true with *out, or
 * false after failing (missing and optional: true, *out unchanged). */
static bool attr_int(xm_reader *r, const char **atts, const char *elem, const char *key, long lo,
                     long hi, bool required, long *out)
{
    const char *v = attr(atts, key);
    if (v == NULL) {
        if (required)
            fail(r, TSR_EINVAL, "<%s> needs a '%s' attribute", elem, key);
        return !required;
    }
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < lo || n > hi) {
        fail(r, TSR_EINVAL, "<%s %s=\"%.40s\">: expected a whole number from %ld to %ld", elem, key,
             v, lo, hi);
        return false;
    }
    *out = n;
    return true;
}

/* A name cut to fit `size` bytes (expat hands UTF-8): never in the middle
 * of a character, which would make the puzzle unwritable as JSON. */
static void copy_name(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size) {
        n = size - 1;
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--; /* src[n] continues a character: cut before its start */
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void on_start(void *ctx, const char *el, const char **atts)
{
    xm_reader *r = ctx;
    if (r->rc != 0)
        return;
    if (++r->depth > XM_MAX_DEPTH) {
        fail(r, TSR_EINVAL, "elements nested more than %d deep", XM_MAX_DEPTH);
        return;
    }
    long n = 0;
    if (r->depth == 1) {
        if (strcmp(el, "puzzle") != 0)
            fail(r, TSR_EINVAL, "not a BurrTools puzzle: the document is <%s>, not <puzzle>", el);
        r->in_puzzle = true;
    } else if (r->depth == 2 && strcmp(el, "gridType") == 0) {
        if (attr_int(r, atts, el, "type", 0, 1000, true, &n))
            r->grid = (int)n;
    } else if (r->depth == 3 && strcmp(el, "color") == 0) {
        if (r->ncolors == TSR_MAX_COLORS) {
            fail(r, TSR_EINVAL, "more than %d colours", TSR_MAX_COLORS);
            return;
        }
        long rgb[3] = {0, 0, 0};
        static const char *const channel[3] = {"red", "green", "blue"};
        for (int i = 0; i < 3; i++)
            if (!attr_int(r, atts, el, channel[i], 0, 255, false, &rgb[i]))
                return;
        r->palette[r->ncolors++] = (uint32_t)(rgb[0] << 16 | rgb[1] << 8 | rgb[2]);
    } else if (r->depth == 2 && strcmp(el, "shapes") == 0) {
        r->in_shapes = true;
    } else if (r->depth == 3 && r->in_shapes && strcmp(el, "voxel") == 0) {
        if (r->nshapes == XM_MAX_SHAPES) {
            fail(r, TSR_ETOOBIG, "more than %d shapes", XM_MAX_SHAPES);
            return;
        }
        if (base_grow((void **)&r->shapes, &r->shapes_cap, (size_t)r->nshapes, sizeof *r->shapes, 16,
                      0) != 0) {
            fail(r, TSR_ENOMEM, "out of memory");
            return;
        }
        xm_shape *s = &r->shapes[r->nshapes++];
        memset(s, 0, sizeof *s);
        long type = 0;
        if (!attr_int(r, atts, el, "x", 0, XM_MAX_VOXELS, true, &s->sx) ||
            !attr_int(r, atts, el, "y", 0, XM_MAX_VOXELS, true, &s->sy) ||
            !attr_int(r, atts, el, "z", 0, XM_MAX_VOXELS, true, &s->sz) ||
            !attr_int(r, atts, el, "type", 0, 0, false, &type))
            return;
        if (s->sx * s->sy > XM_MAX_VOXELS || s->sx * s->sy * s->sz > XM_MAX_VOXELS) {
            fail(r, TSR_ETOOBIG, "shape %d: a %ldx%ldx%ld box is more than %ld voxels",
                 r->nshapes, s->sx, s->sy, s->sz, XM_MAX_VOXELS);
            return;
        }
        const char *name = attr(atts, "name");
        if (name != NULL)
            copy_name(s->name, sizeof s->name, name);
        r->text_to = s;
    } else if (r->depth == 2 && strcmp(el, "problems") == 0) {
        r->in_problems = true;
    } else if (r->depth == 3 && r->in_problems && strcmp(el, "problem") == 0) {
        if (r->nproblems == XM_MAX_PROBLEMS) {
            fail(r, TSR_ETOOBIG, "more than %d problems", XM_MAX_PROBLEMS);
            return;
        }
        if (base_grow((void **)&r->problems, &r->problems_cap, (size_t)r->nproblems,
                      sizeof *r->problems, 8, 0) != 0) {
            fail(r, TSR_ENOMEM, "out of memory");
            return;
        }
        xm_problem *p = &r->problems[r->nproblems++];
        memset(p, 0, sizeof *p);
        p->result = -1;
        const char *name = attr(atts, "name");
        if (name != NULL)
            copy_name(p->name, sizeof p->name, name);
    } else if (r->depth == 4 && r->nproblems > 0 && strcmp(el, "shapes") == 0) {
        r->in_problem_shapes = true;
    } else if (r->depth == 5 && r->in_problem_shapes && strcmp(el, "shape") == 0) {
        xm_problem *p = &r->problems[r->nproblems - 1];
        if (p->nparts == XM_MAX_PARTS) {
            fail(r, TSR_ETOOBIG, "more than %d shapes in a problem", XM_MAX_PARTS);
            return;
        }
        if (base_grow((void **)&p->parts, &p->cap, (size_t)p->nparts, sizeof *p->parts, 16, 0) != 0) {
            fail(r, TSR_ENOMEM, "out of memory");
            return;
        }
        long id = 0, lo = 1, hi = 1;
        if (!attr_int(r, atts, el, "id", 0, XM_MAX_SHAPES - 1, true, &id))
            return;
        if (attr(atts, "count") != NULL) {
            if (!attr_int(r, atts, el, "count", 0, XM_MAX_COUNT, true, &lo))
                return;
            hi = lo;
        } else if (attr(atts, "min") != NULL || attr(atts, "max") != NULL) {
            if (!attr_int(r, atts, el, "min", 0, XM_MAX_COUNT, true, &lo) ||
                !attr_int(r, atts, el, "max", 0, XM_MAX_COUNT, true, &hi))
                return;
            if (lo > hi) {
                fail(r, TSR_EINVAL, "<shape id=\"%ld\">: min %ld is above max %ld", id, lo, hi);
                return;
            }
        }
        p->parts[p->nparts++] = (xm_part){(int)id, (int)lo, (int)hi};
    } else if (r->depth == 4 && r->nproblems > 0 && strcmp(el, "result") == 0) {
        if (attr_int(r, atts, el, "id", 0, XM_MAX_SHAPES - 1, true, &n))
            r->problems[r->nproblems - 1].result = (int)n;
    } else if (r->depth == 4 && r->nproblems > 0 && strcmp(el, "bitmap") == 0) {
        r->in_bitmap = true;
    } else if (r->depth == 5 && r->in_bitmap && strcmp(el, "pair") == 0) {
        xm_problem *p = &r->problems[r->nproblems - 1];
        long pc = 0, rc = 0;
        if (!attr_int(r, atts, el, "piece", 0, TSR_MAX_COLORS - 1, true, &pc) ||
            !attr_int(r, atts, el, "result", 0, TSR_MAX_COLORS - 1, true, &rc))
            return;
        if (pc >= r->ncolors || rc >= r->ncolors) { /* <colors> comes first in a file */
            fail(r, TSR_EINVAL, "<pair piece=\"%ld\" result=\"%ld\">: the file defines %d "
                 "colour%s (pairs count them from 0)", pc, rc, r->ncolors,
                 r->ncolors == 1 ? "" : "s");
            return;
        }
        for (int i = 0; i < p->npairs; i++)
            if (p->pairs[i].piece == pc + 1 && p->pairs[i].board == rc + 1)
                return; /* BurrTools keeps them in a set */
        if (p->npairs == XM_MAX_PAIRS ||
            base_grow((void **)&p->pairs, &p->pairs_cap, (size_t)p->npairs, sizeof *p->pairs, 16,
                      0) != 0) {
            fail(r, TSR_ENOMEM, "out of memory");
            return;
        }
        p->pairs[p->npairs++] = (tsr_color_pair){(unsigned char)(pc + 1), (unsigned char)(rc + 1)};
    }
    /* anything else (comments, solutions, disassemblies, the assembler's
     * saved state) is not needed to count assemblies */
}

static void on_end(void *ctx, const char *el)
{
    xm_reader *r = ctx;
    if (r->rc != 0)
        return;
    if (r->depth == 3 && r->text_to != NULL)
        r->text_to = NULL;
    if (r->depth == 2)
        r->in_shapes = r->in_problems = false;
    if (r->depth == 4)
        r->in_problem_shapes = r->in_bitmap = false;
    r->depth--;
    (void)el;
}

/* A voxel string's text, bounded by what its box can hold (each voxel a
 * state character and at most two colour digits). */
static void on_text(void *ctx, const char *s, int len)
{
    xm_reader *r = ctx;
    if (r->rc != 0 || r->text_to == NULL || len <= 0)
        return;
    xm_shape *sh = r->text_to;
    size_t most = (size_t)(sh->sx * sh->sy * sh->sz) * 3 + 64;
    if (sh->len + (size_t)len > most) {
        fail(r, TSR_EINVAL, "shape %d: the voxel string is longer than its %ldx%ldx%ld box",
             (int)(sh - r->shapes) + 1, sh->sx, sh->sy, sh->sz);
        return;
    }
    if (base_grow((void **)&sh->text, &sh->cap, sh->len + (size_t)len, 1, 256, 0) != 0) {
        fail(r, TSR_ENOMEM, "out of memory");
        return;
    }
    memcpy(sh->text + sh->len, s, (size_t)len);
    sh->len += (size_t)len;
    sh->text[sh->len] = '\0';
}

/* The inflated bytes of a gzip stream, at most XM_MAX_BYTES; or the data
 * itself when it is not compressed. */
static int inflate_all(const unsigned char *data, size_t len, const char *source,
                       unsigned char **out, size_t *outlen, tsr_err *err)
{
    *out = NULL;
    *outlen = 0;
    if (len < 2 || data[0] != 0x1f || data[1] != 0x8b) {
        *out = malloc(len + 1);
        if (*out == NULL)
            return tsr_err_set(err, TSR_ENOMEM, "%s: out of memory", source);
        memcpy(*out, data, len);
        *outlen = len;
        return 0;
    }
    z_stream z = {0};
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return tsr_err_set(err, TSR_ENOMEM, "%s: out of memory", source);
    size_t cap = 0, n = 0;
    unsigned char *buf = NULL;
    int zr = Z_OK, rc = 0;
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
    while (zr != Z_STREAM_END && rc == 0) {
        if (base_grow((void **)&buf, &cap, n + 1, 1, 64 * 1024, (size_t)XM_MAX_BYTES + 2) != 0) {
            rc = cap >= XM_MAX_BYTES
                     ? tsr_err_set(err, TSR_ETOOBIG, "%s: inflates to more than %u MiB of XML",
                                   source, XM_MAX_BYTES >> 20)
                     : tsr_err_set(err, TSR_ENOMEM, "%s: out of memory", source);
            break;
        }
        z.next_out = buf + n;
        z.avail_out = (uInt)(cap - 1 - n);
        zr = inflate(&z, Z_NO_FLUSH);
        n = cap - 1 - z.avail_out;
        if (zr == Z_BUF_ERROR && z.avail_in == 0)
            rc = tsr_err_set(err, TSR_EINVAL, "%s: the gzip data ends early (a cut file?)", source);
        else if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
            rc = tsr_err_set(err, TSR_EINVAL, "%s: not valid gzip data (%s)", source,
                             z.msg ? z.msg : "corrupt");
        else if (n > XM_MAX_BYTES)
            rc = tsr_err_set(err, TSR_ETOOBIG, "%s: inflates to more than %u MiB of XML", source,
                             XM_MAX_BYTES >> 20);
    }
    inflateEnd(&z);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *outlen = n;
    return 0;
}

/* The cells of shape s ('#' filled and '+' variable; in the result a '+'
 * is optional, in a piece a cell), with their colours (parallel; 0
 * neutral), as puzzle cells.  A colour is the decimal number after its
 * voxel's state character, as BurrTools reads it (voxel_c's parser).
 * Returns the count, or -1 after failing (a malformed string). */
static long shape_cells(xm_reader *r, const xm_shape *s, bool variable_too, tsr_cell *cells,
                        bool *optional, unsigned char *colors, bool *colored)
{
    long idx = 0, n = 0, voxels = s->sx * s->sy * s->sz, color = 0;
    bool last_filled = false; /* the voxel the digits belong to is a cell */
    *colored = false;
    for (size_t i = 0; i < s->len; i++) {
        char c = s->text[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c >= '0' && c <= '9') {
            if (idx == 0) {
                fail(r, TSR_EINVAL, "shape %d: the voxel string starts with a colour digit",
                     (int)(s - r->shapes) + 1);
                return -1;
            }
            color = color * 10 + (c - '0');
            if (color > TSR_MAX_COLORS || (last_filled && color > r->ncolors)) {
                fail(r, TSR_EINVAL, "shape %d: voxel %ld has colour %ld, but the file defines %d "
                     "colour%s", (int)(s - r->shapes) + 1, idx, color, r->ncolors,
                     r->ncolors == 1 ? "" : "s");
                return -1;
            }
            if (last_filled) {
                if (colors != NULL)
                    colors[n - 1] = (unsigned char)color;
                *colored |= color != 0;
            }
            continue;
        }
        if (c != '_' && c != '#' && c != '+') {
            fail(r, TSR_EINVAL, "shape %d: '%c' in the voxel string (expected _ # + or a colour)",
                 (int)(s - r->shapes) + 1, c);
            return -1;
        }
        if (idx == voxels) {
            fail(r, TSR_EINVAL, "shape %d: more voxels than its %ldx%ldx%ld box holds",
                 (int)(s - r->shapes) + 1, s->sx, s->sy, s->sz);
            return -1;
        }
        color = 0;
        last_filled = c != '_'; /* an empty voxel's colour BurrTools clears */
        if (last_filled) { /* '#', or '+': optional in the result, a cell of a piece */
            if (cells != NULL) {
                long x = idx % s->sx, y = idx / s->sx % s->sy, z = idx / (s->sx * s->sy);
                cells[n] = (tsr_cell){(int)x, (int)y, (int)z};
                if (optional != NULL)
                    optional[n] = c == '+' && !variable_too;
            }
            if (colors != NULL)
                colors[n] = 0;
            n++;
        }
        idx++;
    }
    if (idx < voxels) {
        fail(r, TSR_EINVAL, "shape %d: %ld voxels for a %ldx%ldx%ld box of %ld",
             (int)(s - r->shapes) + 1, idx, s->sx, s->sy, s->sz, voxels);
        return -1;
    }
    return n;
}

/* The problem a spec names: NULL the first; a number from 1; else a name. */
static int pick_problem(xm_reader *r, const char *spec)
{
    if (r->nproblems == 0) {
        tsr_err_set(r->err, TSR_EINVAL, "%s: the file has no problem to solve", r->source);
        return -1;
    }
    if (spec == NULL || *spec == '\0')
        return 0;
    char *end;
    long k = strtol(spec, &end, 10);
    if (end != spec && *end == '\0') {
        if (k >= 1 && k <= r->nproblems)
            return (int)k - 1;
        tsr_err_set(r->err, TSR_EINVAL, "%s: problem %s: the file has %d problem%s (numbered from 1)",
                    r->source, spec, r->nproblems, r->nproblems == 1 ? "" : "s");
        return -1;
    }
    for (int i = 0; i < r->nproblems; i++)
        if (strcmp(r->problems[i].name, spec) == 0)
            return i;
    tsr_err_set(r->err, TSR_EINVAL, "%s: no problem is named '%s'", r->source, spec);
    return -1;
}

/* The chosen problem as a puzzle. */
static int build(xm_reader *r, const char *spec, tsr_puzzle **out)
{
    static const char *const grids[] = {"cubes (bricks)", "triangular prisms", "spheres",
                                        "rhombic dodecahedra", "tetrahedra-octahedra"};
    if (r->grid != 0)
        return tsr_err_set(r->err, TSR_EINVAL,
                           "%s: the grid is %s (gridType %d): Tessera reads BurrTools' cube grid only",
                           r->source, r->grid < 5 ? grids[r->grid] : "unknown", r->grid);
    int k = pick_problem(r, spec);
    if (k < 0)
        return TSR_EINVAL;
    const xm_problem *p = &r->problems[k];
    char what[TSR_MAX_NAME + 32];
    if (p->name[0])
        snprintf(what, sizeof what, "problem %d (%s)", k + 1, p->name);
    else
        snprintf(what, sizeof what, "problem %d", k + 1);
    if (p->result < 0 || p->result >= r->nshapes)
        return tsr_err_set(r->err, TSR_EINVAL, "%s: %s: %s", r->source, what,
                           p->result < 0 ? "no result shape" : "its result is not a shape of the file");
    tsr_puzzle *pz = tsr_puzzle_new();
    if (pz == NULL)
        return TSR_ENOMEM;
    const xm_shape *res = &r->shapes[p->result];
    long most = res->sx * res->sy * res->sz;
    for (int i = 0; i < p->nparts; i++) {
        const xm_shape *s = &r->shapes[p->parts[i].id < r->nshapes ? p->parts[i].id : 0];
        long v = s->sx * s->sy * s->sz;
        most = v > most ? v : most;
    }
    tsr_cell *cells = malloc((size_t)(most ? most : 1) * sizeof *cells);
    bool *opt = malloc((size_t)(most ? most : 1) * sizeof *opt);
    unsigned char *colors = malloc((size_t)(most ? most : 1));
    int rc = cells == NULL || opt == NULL || colors == NULL ? TSR_ENOMEM : 0;
    bool colored;
    long n = rc == 0 ? shape_cells(r, res, false, cells, opt, colors, &colored) : 0;
    if (n < 0)
        rc = r->rc;
    for (long i = 0; rc == 0 && i < n; i++) {
        rc = tsr_puzzle_add_board_cell(pz, cells[i]);
        if (rc == 0 && opt[i])
            rc = tsr_puzzle_add_optional_cell(pz, cells[i]);
    }
    if (rc == 0 && colored)
        rc = tsr_puzzle_set_board_colors(pz, colors);
    if (rc == 0 && n == 0)
        rc = tsr_err_set(r->err, TSR_EINVAL, "%s: %s: its result shape %d is empty", r->source,
                         what, p->result + 1);
    for (int i = 0; rc == 0 && i < p->nparts; i++) {
        const xm_part *part = &p->parts[i];
        if (part->id >= r->nshapes) {
            rc = tsr_err_set(r->err, TSR_EINVAL, "%s: %s: shape id %d is not a shape of the file",
                             r->source, what, part->id);
            break;
        }
        if (part->max == 0)
            continue; /* a piece no solution uses */
        const xm_shape *s = &r->shapes[part->id];
        long m = shape_cells(r, s, true, cells, NULL, colors, &colored);
        if (m < 0) {
            rc = r->rc;
            break;
        }
        if (m == 0) {
            rc = tsr_err_set(r->err, TSR_EINVAL, "%s: %s: shape %d is empty", r->source, what,
                             part->id + 1);
            break;
        }
        /* its name, else S1, S2, ... as BurrTools shows it; a name taken
         * already (a shape listed twice, two shapes of one name) gets the
         * shape's number and then the part's */
        char name[TSR_MAX_NAME + 1];
        for (int tries = s->name[0] ? 0 : 1; tries < 3; tries++) {
            if (tries == 0)
                snprintf(name, sizeof name, "%s", s->name);
            else if (tries == 1)
                snprintf(name, sizeof name, "S%d", part->id + 1);
            else
                snprintf(name, sizeof name, "S%d-%d", part->id + 1, i + 1);
            bool taken = false;
            for (int j = 0; j < pz->npieces && !taken; j++)
                taken = strcmp(pz->pieces[j].name, name) == 0;
            if (!taken)
                break;
        }
        int idx = tsr_puzzle_add_piece(pz, name, cells, (int)m, part->max, false);
        if (idx < 0) {
            rc = tsr_err_set(r->err, idx, "%s: %s: piece %s: %s", r->source, what, name,
                             tsr_strerror(idx));
            break;
        }
        pz->pieces[idx].count_min = part->min;
        if (colored && (rc = tsr_puzzle_set_piece_colors(pz, idx, colors)) != 0)
            break;
    }
    /* the problem's colour constraints and the file's colours */
    for (int i = 0; rc == 0 && i < p->npairs; i++)
        rc = tsr_puzzle_allow_colors(pz, p->pairs[i].piece, p->pairs[i].board);
    if (rc == 0 && r->ncolors > 0)
        rc = tsr_puzzle_set_palette(pz, r->palette, r->ncolors);
    char title[2 * TSR_MAX_NAME + 8];
    if (rc == 0) {
        snprintf(title, sizeof title, "%s%s%s", r->source, p->name[0] ? ": " : "", p->name);
        rc = tsr_puzzle_set_name(pz, title);
    }
    free(cells);
    free(opt);
    free(colors);
    if (rc == 0) {
        pz->rotations = TSR_ROT_ALL; /* BurrTools turns pieces, never mirrors them */
        pz->mirror = false;
        rc = tsr_puzzle_validate(pz, r->source, r->err);
    }
    if (rc != 0) {
        tsr_puzzle_free(pz);
        return rc;
    }
    *out = pz;
    return 0;
}

int tsr_puzzle_read_xmpuzzle(const void *data, size_t len, const char *source, const char *problem,
                             tsr_puzzle **out, tsr_err *err)
{
    *out = NULL;
    source = source ? source : "xmpuzzle";
    unsigned char *xml = NULL;
    size_t n = 0;
    int rc = inflate_all(data, len, source, &xml, &n, err);
    if (rc != 0)
        return rc;
    xm_reader r = {.source = source, .err = err};
    r.xp = XML_ParserCreate(NULL);
    if (r.xp == NULL) {
        free(xml);
        return tsr_err_set(err, TSR_ENOMEM, "%s: out of memory", source);
    }
    XML_SetUserData(r.xp, &r);
    XML_SetElementHandler(r.xp, on_start, on_end);
    XML_SetCharacterDataHandler(r.xp, on_text);
    if (XML_Parse(r.xp, (const char *)xml, (int)(n > INT32_MAX ? INT32_MAX : n), XML_TRUE) ==
            XML_STATUS_ERROR &&
        r.rc == 0)
        r.rc = tsr_err_set(err, TSR_EINVAL, "%s:%lu: not well-formed XML: %s", source,
                           (unsigned long)XML_GetCurrentLineNumber(r.xp),
                           XML_ErrorString(XML_GetErrorCode(r.xp)));
    if (r.rc == 0 && !r.in_puzzle)
        r.rc = tsr_err_set(err, TSR_EINVAL, "%s: not a BurrTools puzzle (no <puzzle>)", source);
    rc = r.rc == 0 ? build(&r, problem, out) : r.rc;
    XML_ParserFree(r.xp);
    free(xml);
    for (int i = 0; i < r.nshapes; i++)
        free(r.shapes[i].text);
    free(r.shapes);
    for (int i = 0; i < r.nproblems; i++) {
        free(r.problems[i].parts);
        free(r.problems[i].pairs);
    }
    free(r.problems);
    return rc;
}

bool tsr_is_xmpuzzle(const void *data, size_t len)
{
    const unsigned char *d = data;
    if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b)
        return true;
    size_t i = 0;
    while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n'))
        i++;
    return len - i >= 5 && memcmp(d + i, "<?xml", 5) == 0;
}
