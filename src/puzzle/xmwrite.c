/*
 * xmwrite.c - a puzzle written as a BurrTools file (.xmpuzzle): the XML
 * that xmpuzzle.c reads and BurrTools' own loader takes (its
 * src/lib/puzzle.cpp, voxel.cpp and problem.cpp), gzip-compressed as
 * BurrTools saves it:
 *
 *   <?xml version="1.0"?>
 *   <puzzle version="2">
 *     <gridType type="0"/>
 *     <colors/>
 *     <shapes>
 *       <voxel x="3" y="2" z="1" name="L" type="0">####__</voxel>      one per piece
 *       <voxel x="6" y="10" z="1" name="Board" type="0">##+#...</voxel> the board, last
 *     </shapes>
 *     <problems>
 *       <problem name="THE PUZZLE'S NAME" state="0">
 *         <shapes><shape id="0" count="1"/><shape id="1" min="0" max="2"/>...</shapes>
 *         <result id="12"/>
 *         <bitmap/>
 *       </problem>
 *     </problems>
 *     <comment>the puzzle's description</comment>
 *   </puzzle>
 *
 * The model maps so that BurrTools counts what Tessera counts:
 *   - the board is the problem's result shape in its bounding box, moved
 *     to the origin; optional cells are variable ('+') voxels;
 *   - BurrTools has no fixed piece: a fixed piece's cells are simply not
 *     there for the mobile pieces, so they are carved out of the result
 *     (the file reads back without the fixed piece, with the same
 *     solutions);
 *   - each mobile piece is a shape in its own box, with its name, its count
 *     as count="N" or its range as min="A" max="B";
 *   - BurrTools turns every piece in the 24 rotations and never mirrors
 *     one.  A puzzle whose rules give some piece other orientations in the
 *     board is refused (TSR_EUNSUPP, naming the piece and the rule) rather
 *     than written with other rules; when the rules make no difference
 *     (mirror images of achiral pieces, turning a flat piece over on a flat
 *     board) it is written;
 *   - the published counts ("expected") are not written: BurrTools keeps
 *     its own, once it has solved the problem;
 *   - the cubic lattice only: BurrTools has a grid of triangular prisms
 *     of its own, which is not written; a plane-lattice puzzle is refused.
 * Names and the description must be text XML can carry (valid UTF-8, no
 * control characters but tab and line breaks in the description); sizes
 * are bounded by what xmpuzzle.c reads back (TSR_ETOOBIG over them).
 *
 * Colours (tessera/puzzle.h, docs/puzzle-format.md "Colours") are
 * BurrTools' own: a voxel's colour number goes after its state character
 * (put_voxel), as many <color> entries as the highest colour number used
 * (the palette's, then XW_DEFAULT_RGB for colours it does not name), and
 * the allowed pairs into <bitmap>, numbered from 0 as BurrTools stores
 * them (<pair piece="P-1" result="B-1"/>).  A coloured piece's orientations
 * are coloured shapes, which the orientation check compares.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/base.h"
#include "geom/geom.h"
#include "tessera/puzzle.h"

/* What xmpuzzle.c reads back (its XM_MAX_* caps): more is not written. */
#define XW_MAX_VOXELS (1L << 24) /* in one shape's box */
#define XW_MAX_SHAPES 4096       /* the pieces and the board */
#define XW_MAX_COUNT 8191        /* copies of one piece */

/* ---- text XML can carry ------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0: overlong forms,
 * surrogates and code points past U+10FFFF are not UTF-8. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (n == 0 || (n == 3 && c > 0xef))
        return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) || (c == 0xf0 && s[1] < 0x90) ||
        (c == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

/* Can `text` go into the XML?  Valid UTF-8 without control characters;
 * `lines` lets tab, line feed and carriage return through (a comment's
 * text, not an attribute, where XML would turn them into spaces). */
static bool xml_text_ok(const char *text, bool lines)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        if ((*s < 0x20 && !(lines && (*s == '\t' || *s == '\n' || *s == '\r'))) || *s == 0x7f)
            return false;
        int n = utf8_len(s);
        if (n == 0)
            return false;
        s += n;
    }
    return true;
}

static int put_str(base_buf *b, const char *s)
{
    return base_buf_add(b, s, strlen(s));
}

/* text with & < > " ' escaped, for an attribute value or element text
 * (the five entities BurrTools' own parser knows). */
static int put_escaped(base_buf *b, const char *text)
{
    int rc = 0;
    for (const char *p = text; *p && rc == 0; p++) {
        switch (*p) {
        case '&': rc = put_str(b, "&amp;"); break;
        case '<': rc = put_str(b, "&lt;"); break;
        case '>': rc = put_str(b, "&gt;"); break;
        case '"': rc = put_str(b, "&quot;"); break;
        case '\'': rc = put_str(b, "&apos;"); break;
        default: rc = base_buf_add(b, p, 1);
        }
    }
    return rc;
}

/* ---- what BurrTools can express ------------------------------------------ */

/* How many orientations of p the transforms t[0..n) give, counting only
 * those lying in the plane z = 0 when the puzzle is flat (no other fits a
 * flat board).  buf holds GEO_NTRANSFORMS * p->ncells cells. */
static int orientations(const tsr_piece *p, const int *t, int n, bool flat, tsr_cell *buf,
                        unsigned char *cbuf)
{
    /* coloured shapes: a piece achiral as cells may be chiral in colour */
    int k = geo_orientations_colored(p->cells, p->colors, p->ncells, t, n, buf, cbuf), count = 0;
    if (k < 0)
        return k;
    for (int i = 0; i < k; i++) {
        bool in_plane = true;
        for (int c = 0; c < p->ncells && in_plane; c++)
            in_plane = buf[(size_t)i * p->ncells + c].z == 0;
        count += !flat || in_plane;
    }
    return count;
}

/* Does every mobile piece take, in this puzzle, exactly the orientations
 * BurrTools gives it (the 24 rotations, never a mirror image)?  The sets
 * are equal when each has as many members as their union.  0, or
 * TSR_EUNSUPP naming the first piece that differs and the rule. */
static int check_orientations(const tsr_puzzle *pz, tsr_err *err)
{
    int mine[GEO_NTRANSFORMS], burr[GEO_NTRANSFORMS], both[GEO_NTRANSFORMS];
    int nm = geo_allowed_transforms(pz->rotations, pz->mirror, mine);
    int nb = geo_allowed_transforms(TSR_ROT_ALL, false, burr);
    int nu = geo_allowed_transforms(TSR_ROT_ALL, true, both); /* every transform */
    if (nm == nb && memcmp(mine, burr, (size_t)nb * sizeof *burr) == 0)
        return 0; /* BurrTools' own rules */
    bool flat = tsr_puzzle_is_flat(pz);
    int most = 1;
    for (int k = 0; k < pz->npieces; k++)
        most = pz->pieces[k].ncells > most ? pz->pieces[k].ncells : most;
    tsr_cell *buf = malloc((size_t)GEO_NTRANSFORMS * (size_t)most * sizeof *buf);
    unsigned char *cbuf = malloc((size_t)GEO_NTRANSFORMS * (size_t)most);
    if (buf == NULL || cbuf == NULL) {
        free(buf);
        free(cbuf);
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    }
    int rc = 0;
    for (int k = 0; k < pz->npieces && rc == 0; k++) {
        const tsr_piece *p = &pz->pieces[k];
        if (p->fixed)
            continue;
        int m = orientations(p, mine, nm, flat, buf, cbuf);
        int b = orientations(p, burr, nb, flat, buf, cbuf);
        int u = orientations(p, both, nu, flat, buf, cbuf);
        if (m < 0 || b < 0 || u < 0) {
            rc = tsr_err_set(err, TSR_ENOMEM, "out of memory");
            break;
        }
        if (m == u && b == u)
            continue;
        if (m > b)
            rc = tsr_err_set(err, TSR_EUNSUPP,
                             "piece %s: \"mirror\": true lets it be placed as its mirror image, "
                             "which BurrTools never does (it turns pieces, never mirrors them)",
                             p->name);
        else
            rc = tsr_err_set(err, TSR_EUNSUPP,
                             "piece %s: \"rotations\": \"%s\" gives it %d orientation%s on this "
                             "board where BurrTools, which turns every piece all ways, gives it %d",
                             p->name, pz->rotations == TSR_ROT_NONE ? "none" : "one-sided", m,
                             m == 1 ? "" : "s", b);
    }
    free(buf);
    free(cbuf);
    return rc;
}

/* The names, description and sizes the file can carry. */
static int check_model(const tsr_puzzle *pz, tsr_err *err)
{
    if (pz->ncells < 1 || pz->cells == NULL)
        return tsr_err_set(err, TSR_EINVAL, "the puzzle has no board");
    if (pz->lattice != TSR_LATTICE_CUBIC) /* BurrTools' triangle grid is not Tessera's */
        return tsr_err_set(err, TSR_EUNSUPP, "the puzzle is on the %s lattice: BurrTools files "
                                             "are written for the cubic lattice only",
                           tsr_lattice_names[pz->lattice]);
    if (pz->name != NULL && !xml_text_ok(pz->name, false))
        return tsr_err_set(err, TSR_EUNSUPP, "the puzzle's name is not text a BurrTools file can "
                                             "carry (UTF-8 without control characters)");
    if (pz->description != NULL && !xml_text_ok(pz->description, true))
        return tsr_err_set(err, TSR_EUNSUPP, "the puzzle's description is not text a BurrTools "
                                             "file can carry (UTF-8 without control characters)");
    int mobile = 0;
    for (int k = 0; k < pz->npieces; k++) {
        const tsr_piece *p = &pz->pieces[k];
        if (p->name == NULL || p->ncells < 1 || p->count < 1)
            return TSR_EINVAL;
        if (!xml_text_ok(p->name, false))
            return tsr_err_set(err, TSR_EUNSUPP, "piece %d: its name is not text a BurrTools file "
                                                 "can carry (UTF-8 without control characters)",
                               k + 1);
        if (!p->fixed && p->count > XW_MAX_COUNT)
            return tsr_err_set(err, TSR_ETOOBIG, "piece %s: %d copies; a BurrTools file of Tessera's "
                                                 "holds at most %d",
                               p->name, p->count, XW_MAX_COUNT);
        mobile += !p->fixed;
    }
    if (mobile + 1 > XW_MAX_SHAPES)
        return tsr_err_set(err, TSR_ETOOBIG, "%d pieces; a BurrTools file of Tessera's holds at "
                                             "most %d shapes",
                           mobile, XW_MAX_SHAPES - 1);
    if (mobile == 0)
        return tsr_err_set(err, TSR_EUNSUPP, "no piece to place: fixed pieces are carved out of "
                                             "BurrTools' result shape, and nothing would be left "
                                             "to place");
    return check_orientations(pz, err);
}

/* ---- shapes --------------------------------------------------------------- */

/* The bounding box of cells, as a voxel space: its corner and sizes. */
typedef struct xw_box {
    tsr_cell lo;
    long sx, sy, sz;
} xw_box;

static int box_of(const tsr_cell *cells, int n, const char *what, xw_box *b, tsr_err *err)
{
    tsr_cell lo = cells[0], hi = cells[0];
    for (int i = 1; i < n; i++) {
        tsr_cell c = cells[i];
        lo.x = c.x < lo.x ? c.x : lo.x, hi.x = c.x > hi.x ? c.x : hi.x;
        lo.y = c.y < lo.y ? c.y : lo.y, hi.y = c.y > hi.y ? c.y : hi.y;
        lo.z = c.z < lo.z ? c.z : lo.z, hi.z = c.z > hi.z ? c.z : hi.z;
    }
    /* each extent is at most 2 * TSR_MAX_COORD + 1: the product fits */
    long long sx = (long long)hi.x - lo.x + 1, sy = (long long)hi.y - lo.y + 1,
              sz = (long long)hi.z - lo.z + 1;
    if (sx * sy * sz > XW_MAX_VOXELS)
        return tsr_err_set(err, TSR_ETOOBIG, "%s: its %lldx%lldx%lld box is over the %ld voxels a "
                                             "BurrTools file of Tessera's holds in a shape",
                           what, sx, sy, sz, XW_MAX_VOXELS);
    *b = (xw_box){lo, (long)sx, (long)sy, (long)sz};
    return 0;
}

static long box_index(const xw_box *b, tsr_cell c)
{
    return ((long)(c.z - b->lo.z) * b->sy + (c.y - b->lo.y)) * b->sx + (c.x - b->lo.x);
}

/* One voxel: its state ('_' empty, '#' filled, '+' variable) and, for a
 * filled or variable one, its colour number (1-based, none for neutral)
 * after the state character, as BurrTools' voxel_c::save writes it. */
static int put_voxel(base_buf *b, char state, int color)
{
    if (state == '_' || color == 0)
        return base_buf_add(b, &state, 1);
    return base_buf_printf(b, "%c%d", state, color);
}

/* <voxel ...>STATES</voxel>: grid[i] is voxel i's state and col[i] its
 * colour (col NULL: all neutral), x fastest, then y, then z, as BurrTools
 * lists them. */
static int put_shape(base_buf *b, const char *name, const xw_box *box, const char *grid,
                     const unsigned char *col)
{
    int rc = base_buf_printf(b, "    <voxel x=\"%ld\" y=\"%ld\" z=\"%ld\" name=\"", box->sx, box->sy,
                             box->sz);
    if (rc == 0)
        rc = put_escaped(b, name);
    if (rc == 0)
        rc = put_str(b, "\" type=\"0\">");
    long n = box->sx * box->sy * box->sz;
    for (long i = 0; i < n && rc == 0; i++)
        rc = put_voxel(b, grid[i], col ? col[i] : 0);
    return rc == 0 ? put_str(b, "</voxel>\n") : rc;
}

/* A mobile piece: its cells in their own box. */
static int put_piece(base_buf *b, const tsr_piece *p, tsr_err *err)
{
    xw_box box;
    char what[TSR_MAX_NAME + 16];
    snprintf(what, sizeof what, "piece %s", p->name);
    int rc = box_of(p->cells, p->ncells, what, &box, err);
    if (rc != 0)
        return rc;
    size_t n = (size_t)(box.sx * box.sy * box.sz);
    char *grid = malloc(n);
    unsigned char *col = p->colors ? calloc(n, 1) : NULL;
    if (grid == NULL || (p->colors && col == NULL)) {
        free(grid);
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    }
    memset(grid, '_', n);
    for (int i = 0; i < p->ncells; i++) {
        grid[box_index(&box, p->cells[i])] = '#';
        if (col != NULL)
            col[box_index(&box, p->cells[i])] = p->colors[i];
    }
    rc = put_shape(b, p->name, &box, grid, col);
    free(grid);
    free(col);
    return rc;
}

/* The board as the result: every board cell filled, optional ones
 * variable, those under fixed pieces carved out; in the board's box. */
static int put_board(base_buf *b, const tsr_puzzle *pz, tsr_err *err)
{
    xw_box box;
    int rc = box_of(pz->cells, pz->ncells, "the board", &box, err);
    if (rc != 0)
        return rc;
    size_t n = (size_t)(box.sx * box.sy * box.sz);
    char *grid = malloc(n);
    unsigned char *col = pz->colors ? calloc(n, 1) : NULL;
    if (grid == NULL || (pz->colors && col == NULL)) {
        free(grid);
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    }
    memset(grid, '_', n);
    for (int i = 0; i < pz->ncells; i++) {
        grid[box_index(&box, pz->cells[i])] = '#';
        if (col != NULL) /* a carved cell's colour is not written ('_') */
            col[box_index(&box, pz->cells[i])] = pz->colors[i];
    }
    for (int i = 0; i < pz->noptional; i++)
        grid[box_index(&box, pz->optional[i])] = '+';
    for (int k = 0; k < pz->npieces; k++)
        for (int i = 0; pz->pieces[k].fixed && i < pz->pieces[k].ncells; i++) {
            tsr_cell c = pz->pieces[k].cells[i];
            /* validated puzzles have fixed pieces on the board; a cell
             * outside the box is no board cell to carve */
            if (c.x >= box.lo.x && c.x < box.lo.x + box.sx && c.y >= box.lo.y &&
                c.y < box.lo.y + box.sy && c.z >= box.lo.z && c.z < box.lo.z + box.sz)
                grid[box_index(&box, c)] = '_';
        }
    bool left = false;
    for (size_t i = 0; i < n && !left; i++)
        left = grid[i] != '_';
    rc = left ? put_shape(b, "Board", &box, grid, col)
              : tsr_err_set(err, TSR_EUNSUPP, "the fixed pieces cover the whole board: BurrTools' "
                                              "result shape would be empty");
    free(grid);
    free(col);
    return rc;
}

/* Display colours for colour numbers the palette does not name (BurrTools
 * shows every colour): distinct, then repeating. */
static const uint32_t XW_DEFAULT_RGB[] = {0xE6194B, 0x3CB44B, 0x4363D8, 0xF58231, 0x911EB4,
                                          0x46F0F0, 0xF032E6, 0xBCF60C, 0xFABEBE, 0x008080};

/* The colour numbers the file uses: the palette's, and every colour on a
 * board cell, a mobile piece's cell or in a pair (fixed pieces are carved
 * out, their colours with them). */
static int colours_used(const tsr_puzzle *pz)
{
    int most = pz->npalette;
    for (int i = 0; pz->colors != NULL && i < pz->ncells; i++)
        most = pz->colors[i] > most ? pz->colors[i] : most;
    for (int k = 0; k < pz->npieces; k++)
        for (int i = 0; !pz->pieces[k].fixed && pz->pieces[k].colors && i < pz->pieces[k].ncells;
             i++)
            most = pz->pieces[k].colors[i] > most ? pz->pieces[k].colors[i] : most;
    for (int i = 0; i < pz->nallowed; i++) {
        most = pz->allowed[i].piece > most ? pz->allowed[i].piece : most;
        most = pz->allowed[i].board > most ? pz->allowed[i].board : most;
    }
    return most;
}

/* <colors>: one <color red=".." green=".." blue=".."/> per colour number. */
static int put_colours(base_buf *b, const tsr_puzzle *pz)
{
    int n = colours_used(pz);
    if (n == 0)
        return put_str(b, "  <colors/>\n");
    int rc = put_str(b, "  <colors>\n");
    for (int i = 0; i < n && rc == 0; i++) {
        uint32_t rgb = i < pz->npalette
                           ? pz->palette[i]
                           : XW_DEFAULT_RGB[i % (int)(sizeof XW_DEFAULT_RGB / sizeof *XW_DEFAULT_RGB)];
        rc = base_buf_printf(b, "    <color red=\"%u\" green=\"%u\" blue=\"%u\"/>\n",
                             (unsigned)(rgb >> 16 & 0xFF), (unsigned)(rgb >> 8 & 0xFF),
                             (unsigned)(rgb & 0xFF));
    }
    return rc == 0 ? put_str(b, "  </colors>\n") : rc;
}

/* <bitmap>: the allowed pairs, colours counted from 0 as BurrTools stores
 * them (problem_c::allowPlacement). */
static int put_bitmap(base_buf *b, const tsr_puzzle *pz)
{
    if (pz->nallowed == 0)
        return put_str(b, "      <bitmap/>\n");
    int rc = put_str(b, "      <bitmap>\n");
    for (int i = 0; i < pz->nallowed && rc == 0; i++)
        rc = base_buf_printf(b, "        <pair piece=\"%d\" result=\"%d\"/>\n",
                             pz->allowed[i].piece - 1, pz->allowed[i].board - 1);
    return rc == 0 ? put_str(b, "      </bitmap>\n") : rc;
}

/* The problem: every mobile piece by its shape id, with its count or
 * range; the board is shape `result`; the allowed colour pairs. */
static int put_problem(base_buf *b, const tsr_puzzle *pz, int result)
{
    int rc = put_str(b, "    <problem");
    if (rc == 0 && pz->name != NULL) {
        rc = put_str(b, " name=\"");
        if (rc == 0)
            rc = put_escaped(b, pz->name);
        if (rc == 0)
            rc = put_str(b, "\"");
    }
    if (rc == 0) /* state 0: not solved yet */
        rc = put_str(b, " state=\"0\">\n      <shapes>\n");
    for (int k = 0, id = 0; k < pz->npieces && rc == 0; k++) {
        const tsr_piece *p = &pz->pieces[k];
        if (p->fixed)
            continue;
        if (p->count_min == p->count)
            rc = base_buf_printf(b, "        <shape id=\"%d\" count=\"%d\"/>\n", id, p->count);
        else
            rc = base_buf_printf(b, "        <shape id=\"%d\" min=\"%d\" max=\"%d\"/>\n", id,
                                 p->count_min, p->count);
        id++;
    }
    if (rc == 0)
        rc = base_buf_printf(b, "      </shapes>\n      <result id=\"%d\"/>\n", result);
    if (rc == 0)
        rc = put_bitmap(b, pz);
    return rc == 0 ? put_str(b, "    </problem>\n") : rc;
}

/* The whole document into b. */
static int build_xml(base_buf *b, const tsr_puzzle *pz, tsr_err *err)
{
    int rc = base_buf_printf(b, "<?xml version=\"1.0\"?>\n<puzzle version=\"2\">\n"
                                "  <gridType type=\"0\"/>\n");
    if (rc == 0)
        rc = put_colours(b, pz);
    if (rc == 0)
        rc = base_buf_printf(b, "  <shapes>\n");
    int result = 0;
    for (int k = 0; k < pz->npieces && rc == 0; k++)
        if (!pz->pieces[k].fixed) {
            rc = put_piece(b, &pz->pieces[k], err);
            result++;
        }
    if (rc == 0)
        rc = put_board(b, pz, err);
    if (rc == 0)
        rc = base_buf_printf(b, "  </shapes>\n  <problems>\n");
    if (rc == 0)
        rc = put_problem(b, pz, result);
    if (rc == 0)
        rc = base_buf_printf(b, "  </problems>\n");
    if (rc == 0 && pz->description != NULL) {
        rc = put_str(b, "  <comment>");
        if (rc == 0)
            rc = put_escaped(b, pz->description);
        if (rc == 0)
            rc = put_str(b, "</comment>\n");
    }
    if (rc == 0)
        rc = base_buf_printf(b, "</puzzle>\n");
    if (rc == TSR_ENOMEM)
        tsr_err_set(err, rc, "out of memory");
    return rc;
}

/* ---- gzip --------------------------------------------------------------------- */

/* data as one gzip member on f. */
static int put_gzip(FILE *f, const char *data, size_t len, tsr_err *err)
{
    z_stream z = {0};
    if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    unsigned char out[64 * 1024];
    int zr = Z_OK, rc = 0;
    z.next_in = (unsigned char *)data;
    while (zr != Z_STREAM_END && rc == 0) {
        /* feed at most 1 GiB a call: avail_in is 32 bits */
        size_t chunk = len > (1u << 30) ? (1u << 30) : len;
        z.avail_in = (uInt)chunk;
        z.next_out = out;
        z.avail_out = sizeof out;
        zr = deflate(&z, chunk == len ? Z_FINISH : Z_NO_FLUSH);
        size_t used = chunk - z.avail_in;
        data += used, len -= used;
        size_t n = sizeof out - z.avail_out;
        if (zr == Z_STREAM_ERROR)
            rc = tsr_err_set(err, TSR_EIO, "compressing failed");
        else if (n > 0 && fwrite(out, 1, n, f) != n)
            rc = tsr_err_set(err, TSR_EIO, "writing failed");
    }
    deflateEnd(&z);
    return rc;
}

int tsr_write_xmpuzzle(FILE *f, const tsr_puzzle *pz, bool gzip, tsr_err *err)
{
    int rc = check_model(pz, err);
    if (rc != 0)
        return rc;
    base_buf b = {0};
    rc = build_xml(&b, pz, err);
    if (rc == 0 && gzip)
        rc = put_gzip(f, b.data, b.len, err);
    else if (rc == 0 && fwrite(b.data, 1, b.len, f) != b.len)
        rc = tsr_err_set(err, TSR_EIO, "writing failed");
    base_buf_free(&b);
    if (rc == 0 && (fflush(f) != 0 || ferror(f)))
        rc = tsr_err_set(err, TSR_EIO, "writing failed");
    return rc;
}
