/*
 * model.c - the puzzle model: construction, destruction and validation.
 *
 * Readers build a puzzle through these helpers, so every puzzle the engine
 * sees has passed tsr_puzzle_validate: the engine may then assume distinct
 * cells, named pieces, fixed pieces on free board cells and matching volumes.
 */
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "tessera/puzzle.h"

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
    }
    free(pz->pieces);
    free(pz->cells);
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

int tsr_puzzle_set_description(tsr_puzzle *pz, const char *text)
{
    return replace_string(&pz->description, text);
}

/* Grow *arr (of elements of size `size`) so that it holds at least `need`. */
static int reserve(void **arr, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*arr, (size_t)ncap * size);
    if (p == NULL)
        return TSR_ENOMEM;
    *arr = p;
    *cap = ncap;
    return 0;
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
    int cap = capacity_of(pz->ncells);
    int rc = reserve((void **)&pz->cells, &cap, pz->ncells + 1, sizeof *pz->cells);
    if (rc)
        return rc;
    pz->cells[pz->ncells++] = c;
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
    p->fixed = fixed;
    return pz->npieces++;
}

void tsr_options_init(tsr_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->unique = TSR_UNIQUE_ROTATIONS;
    opt->fila = -1;
    opt->nof = -1;
    opt->volume = -1;
    opt->parity = -1;
    opt->fit = -1;
    opt->store = -1;
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
    for (int i = 0; i < pz->ncells; i++)
        if (pz->cells[i].z != 0)
            return false;
    for (int i = 0; i < pz->npieces; i++)
        for (int j = 0; j < pz->pieces[i].ncells; j++)
            if (pz->pieces[i].cells[j].z != 0)
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
        if (p->count < 1 || (p->fixed && p->count != 1)) {
            rc = tsr_err_set(err, TSR_EINVAL, "%s%spiece '%s': count must be %s", PREFIX, p->name,
                             p->fixed ? "1 for a fixed piece" : "at least 1");
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
    if (rc == 0) {
        long fv = tsr_puzzle_free_volume(pz), pv = tsr_puzzle_piece_volume(pz);
        if (fv != pv)
            rc = tsr_err_set(err, TSR_EINVAL,
                             "%s%sthe pieces cover %ld cells but the board has %ld free cells",
                             PREFIX, pv, fv);
    }
out:
    free(board);
    return rc;
}
