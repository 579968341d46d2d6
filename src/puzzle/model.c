/*
 * model.c - the puzzle model: construction, destruction and validation.
 *
 * Readers build a puzzle through these helpers, so every puzzle the engine
 * sees has passed tsr_puzzle_validate: the engine may then assume distinct
 * cells, named pieces, fixed pieces on free board cells, optional cells on
 * free board cells, sane count ranges and volumes that can match.
 *
 * The volume check of a loose puzzle (count ranges, optional cells) is a
 * bounded knapsack: is there a choice of counts whose volume lies between
 * the required free cells and all free cells?  It is decided exactly with
 * a bitset of reachable volumes, unless that would cost more than
 * VOLUME_WORK_CAP word operations; then only the two bounds are checked
 * and a puzzle that slips through simply has no solution.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "geom/geom.h"
#include "tessera/puzzle.h"

#define VOLUME_WORK_CAP 50000000L

tsr_puzzle *tsr_puzzle_new(void)
{
    tsr_puzzle *pz = calloc(1, sizeof *pz);
    if (pz == NULL)
        return NULL;
    pz->rotations = TSR_ROT_ALL;
    for (int i = 0; i < 3; i++)
        pz->expected[i] = -1;
    return pz;
}

void tsr_puzzle_free(tsr_puzzle *pz)
{
    if (pz == NULL)
        return;
    for (int i = 0; i < pz->npieces; i++) {
        free(pz->pieces[i].name);
        free(pz->pieces[i].cells);
        free(pz->pieces[i].colors);
    }
    free(pz->pieces);
    free(pz->cells);
    free(pz->colors);
    free(pz->allowed);
    free(pz->palette);
    free(pz->optional);
    free(pz->name);
    free(pz->description);
    free(pz);
}

static int replace_string(char **slot, const char *text)
{
    char *copy = NULL;
    if (text != NULL && (copy = strdup(text)) == NULL)
        return TSR_ENOMEM;
    free(*slot);
    *slot = copy;
    return 0;
}

int tsr_puzzle_set_name(tsr_puzzle *pz, const char *name)
{
    return replace_string(&pz->name, name);
}

const char *const tsr_unique_names[] = {"raw", "rotations", "mirror", NULL};
const char *const tsr_unique_help[] = {
    "every distinct tiling",
    "up to rotations of the whole board; a flat board turned over is a rotation in space, "
    "so on a flat board mirror images are one solution too",
    "up to rotations and reflections of the whole board",
    NULL};

int tsr_unique_parse(const char *name)
{
    for (int u = 0; tsr_unique_names[u] != NULL; u++)
        if (strcmp(name, tsr_unique_names[u]) == 0)
            return u;
    return -1;
}

int tsr_puzzle_set_description(tsr_puzzle *pz, const char *text)
{
    return replace_string(&pz->description, text);
}

/* Grow *arr (of elements of size `size`) so that it holds at least `need`. */
static int reserve(void **arr, int *cap, int need, size_t size)
{
    size_t c = (size_t)*cap;
    int rc = need > 0 ? base_grow(arr, &c, (size_t)need - 1, size, 16, INT_MAX) : 0;
    *cap = (int)c;
    return rc == TSR_ETOOBIG ? TSR_ENOMEM : rc;
}

/* Capacities are not stored in the public struct; they are recomputed as the
 * next power of two above the length, which is what reserve() allocates. */
static int capacity_of(int n)
{
    if (n == 0)
        return 0;
    int cap = 16;
    while (cap < n)
        cap *= 2;
    return cap;
}

int tsr_puzzle_add_board_cell(tsr_puzzle *pz, tsr_cell c)
{
    int cap = capacity_of(pz->ncells), ccap = cap;
    int rc = reserve((void **)&pz->cells, &cap, pz->ncells + 1, sizeof *pz->cells);
    /* the colours stay parallel to the cells, with the same capacity */
    if (rc == 0 && pz->colors != NULL)
        rc = reserve((void **)&pz->colors, &ccap, pz->ncells + 1, 1);
    if (rc)
        return rc;
    if (pz->colors != NULL)
        pz->colors[pz->ncells] = 0;
    pz->cells[pz->ncells++] = c;
    return 0;
}

/* A copy of n colours in an array of `room` bytes, or *out NULL when they
 * are all neutral (or colors is NULL). */
static int copy_colors(const unsigned char *colors, int n, int room, unsigned char **out)
{
    *out = NULL;
    bool any = false;
    for (int i = 0; colors != NULL && i < n && !any; i++)
        any = colors[i] != 0;
    if (!any)
        return 0;
    if ((*out = malloc((size_t)(room > n ? room : n))) == NULL)
        return TSR_ENOMEM;
    memcpy(*out, colors, (size_t)n);
    return 0;
}

int tsr_puzzle_set_board_colors(tsr_puzzle *pz, const unsigned char *colors)
{
    unsigned char *c;
    int rc = copy_colors(colors, pz->ncells, capacity_of(pz->ncells), &c);
    if (rc == 0) {
        free(pz->colors);
        pz->colors = c;
    }
    return rc;
}

int tsr_puzzle_set_piece_colors(tsr_puzzle *pz, int piece, const unsigned char *colors)
{
    if (piece < 0 || piece >= pz->npieces)
        return TSR_EINVAL;
    tsr_piece *p = &pz->pieces[piece];
    unsigned char *c;
    int rc = copy_colors(colors, p->ncells, p->ncells, &c);
    if (rc == 0) {
        free(p->colors);
        p->colors = c;
    }
    return rc;
}

int tsr_puzzle_allow_colors(tsr_puzzle *pz, int piece_color, int board_color)
{
    if (piece_color < 1 || piece_color > TSR_MAX_COLORS || board_color < 1 ||
        board_color > TSR_MAX_COLORS)
        return TSR_EINVAL;
    for (int i = 0; i < pz->nallowed; i++)
        if (pz->allowed[i].piece == piece_color && pz->allowed[i].board == board_color)
            return 0;
    int cap = capacity_of(pz->nallowed);
    int rc = reserve((void **)&pz->allowed, &cap, pz->nallowed + 1, sizeof *pz->allowed);
    if (rc)
        return rc;
    pz->allowed[pz->nallowed++] = (tsr_color_pair){(unsigned char)piece_color,
                                                   (unsigned char)board_color};
    return 0;
}

int tsr_puzzle_set_palette(tsr_puzzle *pz, const uint32_t *rgb, int n)
{
    if (n < 0 || n > TSR_MAX_COLORS)
        return TSR_EINVAL;
    uint32_t *c = NULL;
    if (n > 0 && (c = malloc((size_t)n * sizeof *c)) == NULL)
        return TSR_ENOMEM;
    for (int i = 0; i < n; i++)
        c[i] = rgb[i] & 0xFFFFFFu;
    free(pz->palette);
    pz->palette = c;
    pz->npalette = n;
    return 0;
}

/* BurrTools' problem_c::placementAllowed (docs/puzzle-format.md, "Colours"):
 * neutral goes anywhere and takes anything; two colours need their pair. */
bool tsr_puzzle_color_allowed(const tsr_puzzle *pz, int p, int b)
{
    if (p == 0 || b == 0)
        return true;
    for (int i = 0; i < pz->nallowed; i++)
        if (pz->allowed[i].piece == p && pz->allowed[i].board == b)
            return true;
    return false;
}

bool tsr_puzzle_has_colors(const tsr_puzzle *pz)
{
    if (pz->colors != NULL)
        return true;
    for (int i = 0; i < pz->npieces; i++)
        if (pz->pieces[i].colors != NULL)
            return true;
    return false;
}

int tsr_puzzle_add_optional_cell(tsr_puzzle *pz, tsr_cell c)
{
    int cap = capacity_of(pz->noptional);
    int rc = reserve((void **)&pz->optional, &cap, pz->noptional + 1, sizeof *pz->optional);
    if (rc)
        return rc;
    pz->optional[pz->noptional++] = c;
    return 0;
}

int tsr_puzzle_add_piece(tsr_puzzle *pz, const char *name, const tsr_cell *cells,
                         int ncells, int count, bool fixed)
{
    if (name == NULL || ncells < 0 || count < 1)
        return TSR_EINVAL;
    int cap = capacity_of(pz->npieces);
    int rc = reserve((void **)&pz->pieces, &cap, pz->npieces + 1, sizeof *pz->pieces);
    if (rc)
        return rc;
    tsr_piece *p = &pz->pieces[pz->npieces];
    memset(p, 0, sizeof *p);
    p->name = strdup(name);
    p->cells = malloc(ncells > 0 ? (size_t)ncells * sizeof *cells : 1);
    if (p->name == NULL || p->cells == NULL) {
        free(p->name);
        free(p->cells);
        return TSR_ENOMEM;
    }
    if (ncells > 0)
        memcpy(p->cells, cells, (size_t)ncells * sizeof *cells);
    p->ncells = ncells;
    p->count = count;
    p->count_min = count;
    p->fixed = fixed;
    return pz->npieces++;
}

long tsr_puzzle_piece_volume(const tsr_puzzle *pz)
{
    long v = 0;
    for (int i = 0; i < pz->npieces; i++)
        if (!pz->pieces[i].fixed)
            v += (long)pz->pieces[i].ncells * pz->pieces[i].count;
    return v;
}

long tsr_puzzle_free_volume(const tsr_puzzle *pz)
{
    long v = pz->ncells;
    for (int i = 0; i < pz->npieces; i++)
        if (pz->pieces[i].fixed)
            v -= pz->pieces[i].ncells;
    return v;
}

bool tsr_puzzle_is_flat(const tsr_puzzle *pz)
{
    if (pz->lattice != TSR_LATTICE_CUBIC)
        return true; /* the plane lattices: z tells a triangle's kind */
    for (int i = 0; i < pz->ncells; i++)
        if (pz->cells[i].z != 0)
            return false;
    for (int i = 0; i < pz->npieces; i++)
        for (int j = 0; j < pz->pieces[i].ncells; j++)
            if (pz->pieces[i].cells[j].z != 0)
                return false;
    return true;
}

bool tsr_puzzle_is_exact(const tsr_puzzle *pz)
{
    if (pz->noptional > 0)
        return false;
    for (int i = 0; i < pz->npieces; i++)
        if (!pz->pieces[i].fixed && pz->pieces[i].count_min != pz->pieces[i].count)
            return false;
    return true;
}

/* Sorted copy of a cell list, or NULL when out of memory. */
static tsr_cell *sorted_copy(const tsr_cell *cells, int n)
{
    tsr_cell *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
    if (s == NULL)
        return NULL;
    if (n > 0)
        memcpy(s, cells, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, geo_cell_cmp);
    return s;
}

/* Index of the first adjacent duplicate in a sorted list, or -1. */
static int find_duplicate(const tsr_cell *sorted, int n)
{
    for (int i = 1; i < n; i++)
        if (geo_cell_cmp(&sorted[i - 1], &sorted[i]) == 0)
            return i;
    return -1;
}

#define PREFIX what ? what : "", what ? ": " : ""

/* Optional cells: distinct, on the board (sorted `board`), off the fixed
 * pieces. */
static int check_optional(const tsr_puzzle *pz, const tsr_cell *board, const char *what,
                          tsr_err *err)
{
    tsr_cell *opt = sorted_copy(pz->optional, pz->noptional);
    if (opt == NULL)
        return TSR_ENOMEM;
    int rc = 0, dup = find_duplicate(opt, pz->noptional);
    if (dup >= 0)
        rc = tsr_err_set(err, TSR_EINVAL, "%s%soptional cell (%d,%d,%d) is listed twice", PREFIX,
                         opt[dup].x, opt[dup].y, opt[dup].z);
    for (int i = 0; rc == 0 && i < pz->noptional; i++)
        if (!bsearch(&opt[i], board, (size_t)pz->ncells, sizeof *board, geo_cell_cmp))
            rc = tsr_err_set(err, TSR_EINVAL, "%s%soptional cell (%d,%d,%d) is not on the board",
                             PREFIX, opt[i].x, opt[i].y, opt[i].z);
    for (int k = 0; rc == 0 && k < pz->npieces; k++) {
        const tsr_piece *p = &pz->pieces[k];
        for (int j = 0; rc == 0 && p->fixed && j < p->ncells; j++)
            if (bsearch(&p->cells[j], opt, (size_t)pz->noptional, sizeof *opt, geo_cell_cmp))
                rc = tsr_err_set(err, TSR_EINVAL,
                                 "%s%soptional cell (%d,%d,%d) is covered by fixed piece '%s'",
                                 PREFIX, p->cells[j].x, p->cells[j].y, p->cells[j].z, p->name);
    }
    free(opt);
    return rc;
}

/* A colour number in range: at most TSR_MAX_COLORS, and within the
 * palette when the puzzle has one. */
static bool color_ok(const tsr_puzzle *pz, int c)
{
    return c <= TSR_MAX_COLORS && (pz->npalette == 0 || c <= pz->npalette);
}


/* Colours: numbers in range on the board and the pieces, pairs in range
 * and listed once, and each coloured fixed piece's cells allowed on the
 * board cells under them (the fixed pieces are on the board: checked
 * before). */
static int check_colors(const tsr_puzzle *pz, const char *what, tsr_err *err)
{
    int most = pz->npalette > 0 ? pz->npalette : TSR_MAX_COLORS;
    for (int i = 0; pz->colors != NULL && i < pz->ncells; i++)
        if (!color_ok(pz, pz->colors[i]))
            return tsr_err_set(err, TSR_EINVAL, "%s%sboard cell (%d,%d,%d) has colour %d (colours "
                               "are 0 to %d)", PREFIX, pz->cells[i].x, pz->cells[i].y,
                               pz->cells[i].z, pz->colors[i], most);
    for (int k = 0; k < pz->npieces; k++) {
        const tsr_piece *p = &pz->pieces[k];
        for (int i = 0; p->colors != NULL && i < p->ncells; i++)
            if (!color_ok(pz, p->colors[i]))
                return tsr_err_set(err, TSR_EINVAL, "%s%spiece '%s': cell (%d,%d,%d) has colour "
                                   "%d (colours are 0 to %d)", PREFIX, p->name, p->cells[i].x,
                                   p->cells[i].y, p->cells[i].z, p->colors[i], most);
    }
    for (int i = 0; i < pz->nallowed; i++) {
        tsr_color_pair a = pz->allowed[i];
        if (a.piece < 1 || a.board < 1 || !color_ok(pz, a.piece) || !color_ok(pz, a.board))
            return tsr_err_set(err, TSR_EINVAL, "%s%sallowed colour pair %d (piece %d on board "
                               "%d): colours are 1 to %d", PREFIX, i + 1, a.piece, a.board, most);
        for (int j = 0; j < i; j++)
            if (pz->allowed[j].piece == a.piece && pz->allowed[j].board == a.board)
                return tsr_err_set(err, TSR_EINVAL, "%s%sallowed colour pair (piece %d on board "
                                   "%d) is listed twice", PREFIX, a.piece, a.board);
    }
    bool fixed_colored = false;
    for (int k = 0; k < pz->npieces; k++)
        fixed_colored |= pz->pieces[k].fixed && pz->pieces[k].colors != NULL;
    if (pz->colors == NULL || !fixed_colored)
        return 0; /* a neutral side allows everything */
    geo_ccell *board = malloc((size_t)pz->ncells * sizeof *board);
    if (board == NULL)
        return TSR_ENOMEM;
    for (int i = 0; i < pz->ncells; i++)
        board[i] = (geo_ccell){pz->cells[i], pz->colors[i]};
    qsort(board, (size_t)pz->ncells, sizeof *board, geo_ccell_cmp);
    int rc = 0;
    for (int k = 0; rc == 0 && k < pz->npieces; k++) {
        const tsr_piece *p = &pz->pieces[k];
        for (int i = 0; rc == 0 && p->fixed && p->colors != NULL && i < p->ncells; i++) {
            geo_ccell key = {p->cells[i], 0};
            const geo_ccell *at = bsearch(&key, board, (size_t)pz->ncells, sizeof *board,
                                             geo_ccell_cmp);
            if (at != NULL && !tsr_puzzle_color_allowed(pz, p->colors[i], at->color))
                rc = tsr_err_set(err, TSR_EINVAL, "%s%sfixed piece '%s': its cell (%d,%d,%d) of "
                                 "colour %d may not sit on a board cell of colour %d", PREFIX,
                                 p->name, p->cells[i].x, p->cells[i].y, p->cells[i].z,
                                 p->colors[i], at->color);
        }
    }
    free(board);
    return rc;
}

/* bits |= bits << w over `nwords` words (the volumes reachable with one
 * more item of volume w); from the top down, so every word read is still
 * the old one. */
static void shift_or(uint64_t *bits, long nwords, long w)
{
    long q = w / 64;
    int r = (int)(w % 64);
    for (long k = nwords - 1; k >= q; k--) {
        uint64_t v = bits[k - q] << r;
        if (r && k - q - 1 >= 0)
            v |= bits[k - q - 1] >> (64 - r);
        bits[k] |= v;
    }
}

/* Some choice of counts in the ranges has a volume from `required` to
 * `free` (see the top of the file).  Returns 0 (yes, or undecided within
 * the cap), 1 (no; *best gets the largest volume that fits), or TSR_ENOMEM. */
static int knapsack_misses(const tsr_puzzle *pz, long base, long required, long free_cells,
                           long *best)
{
    long span = free_cells - base; /* volumes above the minimum that still fit */
    long nwords = span / 64 + 1, items = 0;
    for (int i = 0; i < pz->npieces; i++)
        if (!pz->pieces[i].fixed)
            for (long e = pz->pieces[i].count - pz->pieces[i].count_min; e > 0; e /= 2)
                items++; /* about one chunk per bit of e (see below) */
    if (items > 0 && nwords > VOLUME_WORK_CAP / items)
        return 0;
    uint64_t *bits = calloc((size_t)nwords, sizeof *bits);
    if (bits == NULL)
        return TSR_ENOMEM;
    bits[0] = 1; /* every piece at its minimum */
    /* binary splitting: e extra copies as chunks 1, 2, 4, ..., rest reach
     * every number of extra copies from 0 to e */
    for (int i = 0; i < pz->npieces; i++) {
        const tsr_piece *p = &pz->pieces[i];
        long e = p->fixed ? 0 : p->count - p->count_min;
        for (long c = 1; e > 0; e -= c, c *= 2) {
            long chunk = c < e ? c : e;
            if (chunk * p->ncells <= span)
                shift_or(bits, nwords, chunk * p->ncells);
        }
    }
    long v = span; /* the largest reachable volume that fits */
    while (!((bits[v / 64] >> (v % 64)) & 1))
        v--; /* stops at 0 at the latest: bits[0] & 1 is set */
    free(bits);
    *best = base + v;
    return base + v < required;
}

/* The volumes can match (see tsr_puzzle_validate). */
static int check_volume(const tsr_puzzle *pz, const char *what, tsr_err *err)
{
    long fv = tsr_puzzle_free_volume(pz), pv = tsr_puzzle_piece_volume(pz);
    if (tsr_puzzle_is_exact(pz)) {
        if (fv != pv)
            return tsr_err_set(err, TSR_EINVAL,
                               "%s%sthe pieces cover %ld cells but the board has %ld free cells",
                               PREFIX, pv, fv);
        return 0;
    }
    long required = fv - pz->noptional, least = 0;
    for (int i = 0; i < pz->npieces; i++)
        if (!pz->pieces[i].fixed)
            least += (long)pz->pieces[i].ncells * pz->pieces[i].count_min;
    if (least > fv)
        return tsr_err_set(err, TSR_EINVAL,
                           "%s%sthe pieces cover at least %ld cells but the board has %ld free "
                           "cells (%ld too many)", PREFIX, least, fv, least - fv);
    if (pv < required)
        return tsr_err_set(err, TSR_EINVAL,
                           "%s%sthe pieces cover at most %ld cells but the board has %ld "
                           "required cells (%ld short)", PREFIX, pv, required, required - pv);
    long best;
    int miss = knapsack_misses(pz, least, required, fv, &best);
    if (miss < 0)
        return miss;
    if (miss)
        return tsr_err_set(err, TSR_EINVAL,
                           "%s%sno choice of counts covers the %ld required cells within the %ld "
                           "free cells: the largest volume that fits is %ld (%ld short)",
                           PREFIX, required, fv, best, required - best);
    return 0;
}

/* The first cell (board, optional or piece) that is not on lattice L, into
 * *c; returns whose it is ("the board", or "piece 'X'" written into who),
 * or NULL when all are on it. */
static const char *off_lattice(const tsr_puzzle *pz, const geo_lattice *L, tsr_cell *c,
                               char *who, size_t size)
{
    for (int i = 0; i < pz->ncells; i++)
        if (!geo_lattice_has(L, *c = pz->cells[i]))
            return "the board";
    for (int i = 0; i < pz->noptional; i++)
        if (!geo_lattice_has(L, *c = pz->optional[i]))
            return "the board's optional cells";
    for (int p = 0; p < pz->npieces; p++)
        for (int i = 0; i < pz->pieces[p].ncells; i++)
            if (!geo_lattice_has(L, *c = pz->pieces[p].cells[i])) {
                snprintf(who, size, "piece '%s'",
                         pz->pieces[p].name ? pz->pieces[p].name : "?");
                return who;
            }
    return NULL;
}

int tsr_puzzle_validate(const tsr_puzzle *pz, const char *what, tsr_err *err)
{
    if (pz->ncells <= 0)
        return tsr_err_set(err, TSR_EINVAL, "%s%sthe board has no cells", PREFIX);
    if (pz->ncells > TSR_MAX_CELLS)
        return tsr_err_set(err, TSR_ETOOBIG, "%s%sthe board has %d cells (limit %d)",
                           PREFIX, pz->ncells, TSR_MAX_CELLS);
    if (pz->npieces <= 0)
        return tsr_err_set(err, TSR_EINVAL, "%s%sthe puzzle has no pieces", PREFIX);
    if (pz->npieces > TSR_MAX_PIECES)
        return tsr_err_set(err, TSR_ETOOBIG, "%s%sthe puzzle has %d pieces (limit %d)",
                           PREFIX, pz->npieces, TSR_MAX_PIECES);

    if ((int)pz->lattice < 0 || (int)pz->lattice >= TSR_NLATTICES)
        return tsr_err_set(err, TSR_EINVAL, "%s%sunknown lattice %d", PREFIX, (int)pz->lattice);
    geo_lattice L;
    geo_lattice_init(&L, pz->lattice);
    tsr_cell off;
    char who[TSR_MAX_NAME + 16];
    const char *whose = off_lattice(pz, &L, &off, who, sizeof who);
    if (whose != NULL)
        return tsr_err_set(err, TSR_EINVAL, "%s%s%s has cell (%d,%d,%d), which is not a cell of "
                           "the %s lattice (%s)", PREFIX, whose, off.x, off.y, off.z, L.name,
                           pz->lattice == TSR_LATTICE_HEXAGONAL
                               ? "its cells are [x, y]"
                               : "its cells are [x, y, z] with z 0 (up) or 1 (down)");
    tsr_cell *board = sorted_copy(pz->cells, pz->ncells);
    if (board == NULL)
        return TSR_ENOMEM;
    int rc = 0;
    int dup = find_duplicate(board, pz->ncells);
    if (dup >= 0) {
        rc = tsr_err_set(err, TSR_EINVAL, "%s%sboard cell (%d,%d,%d) is listed twice", PREFIX,
                         board[dup].x, board[dup].y, board[dup].z);
        goto out;
    }
    /* which board cells fixed pieces cover, to detect overlaps */
    char *covered = calloc((size_t)pz->ncells, 1);
    if (covered == NULL) {
        rc = TSR_ENOMEM;
        goto out;
    }
    long long mobile_copies = 0;
    for (int i = 0; i < pz->npieces && rc == 0; i++) {
        const tsr_piece *p = &pz->pieces[i];
        if (p->name == NULL || p->name[0] == '\0') {
            rc = tsr_err_set(err, TSR_EINVAL, "%s%spiece %d has no name", PREFIX, i + 1);
            break;
        }
        if (strlen(p->name) > TSR_MAX_NAME) {
            rc = tsr_err_set(err, TSR_EINVAL, "%s%spiece %d: name longer than %d bytes", PREFIX,
                             i + 1, TSR_MAX_NAME);
            break;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(pz->pieces[j].name, p->name) == 0) {
                rc = tsr_err_set(err, TSR_EINVAL, "%s%spiece name '%s' is used twice", PREFIX,
                                 p->name);
                break;
            }
        if (rc)
            break;
        if (p->ncells <= 0) {
            rc = tsr_err_set(err, TSR_EINVAL, "%s%spiece '%s' has no cells", PREFIX, p->name);
            break;
        }
        int limit = p->fixed ? TSR_MAX_CELLS : TSR_MAX_PIECE_CELLS; /* fixed: board-sized */
        if (p->ncells > limit) {
            rc = tsr_err_set(err, TSR_ETOOBIG, "%s%spiece '%s' has %d cells (limit %d)", PREFIX,
                             p->name, p->ncells, limit);
            break;
        }
        if (p->count < 1 || (p->fixed && (p->count != 1 || p->count_min != 1))) {
            rc = tsr_err_set(err, TSR_EINVAL, "%s%spiece '%s': count must be %s", PREFIX, p->name,
                             p->fixed ? "1 for a fixed piece" : "at least 1");
            break;
        }
        if (p->count_min < 0 || p->count_min > p->count) {
            rc = tsr_err_set(err, TSR_EINVAL,
                             "%s%spiece '%s': count range [%d, %d] needs 0 <= min <= max", PREFIX,
                             p->name, p->count_min, p->count);
            break;
        }
        tsr_cell *pc = sorted_copy(p->cells, p->ncells);
        if (pc == NULL) {
            rc = TSR_ENOMEM;
            break;
        }
        dup = find_duplicate(pc, p->ncells);
        if (dup >= 0)
            rc = tsr_err_set(err, TSR_EINVAL, "%s%spiece '%s': cell (%d,%d,%d) is listed twice",
                             PREFIX, p->name, pc[dup].x, pc[dup].y, pc[dup].z);
        for (int j = 0; rc == 0 && p->fixed && j < p->ncells; j++) {
            tsr_cell *hit = bsearch(&pc[j], board, (size_t)pz->ncells, sizeof *board, geo_cell_cmp);
            if (hit == NULL)
                rc = tsr_err_set(err, TSR_EINVAL,
                                 "%s%sfixed piece '%s': cell (%d,%d,%d) is not on the board",
                                 PREFIX, p->name, pc[j].x, pc[j].y, pc[j].z);
            else if (covered[hit - board]++)
                rc = tsr_err_set(err, TSR_EINVAL,
                                 "%s%sfixed piece '%s' overlaps another fixed piece at (%d,%d,%d)",
                                 PREFIX, p->name, pc[j].x, pc[j].y, pc[j].z);
        }
        free(pc);
        if (!p->fixed)
            mobile_copies += p->count;
    }
    free(covered);
    if (rc == 0 && mobile_copies == 0)
        rc = tsr_err_set(err, TSR_EINVAL, "%s%sthe puzzle has no mobile pieces", PREFIX);
    if (rc == 0)
        rc = check_optional(pz, board, what, err);
    if (rc == 0)
        rc = check_colors(pz, what, err);
    if (rc == 0)
        rc = check_volume(pz, what, err);
out:
    free(board);
    return rc;
}
