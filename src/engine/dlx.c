/*
 * dlx.c - dancing links (see dlx.h).
 *
 * Layout: node 0 is the root, nodes 1..ncols are column headers (column c
 * has header c + 1), and each image's row follows as a contiguous block:
 * its type node first, then its cells in ascending order.  Rows are circular
 * by index arithmetic (RB/RE give a node's row block), so there are no
 * left/right links for row nodes.
 *
 * Secondary columns (optional cells) have headers linked to themselves, so
 * covering and uncovering them touches only their rows.
 *
 * Invariant: a row is available exactly when its type column is not
 * covered and its type node is linked into that column's list.  Covering a
 * cell column unlinks every other node of the rows through it, type node
 * included, so the type column's length is always the number of available
 * images of that type.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dlx.h"

struct dlx {
    const img_problem *ip;
    int ncols, nnodes;
    int *L, *R;        /* header list, indexed by header node */
    int *U, *D, *C;    /* per node; C is the column id (not header) */
    int *RB, *RE;      /* row block of each row node */
    int *len, *need;   /* per column */
    int *low;          /* per column: copies still required (see dlx.h) */
    unsigned char *covered;
    int *rownode;      /* image -> its type node, -1 when not in the matrix */
    int *nodeimg;      /* node -> image */
    int remaining;
};

static inline int H(int c) { return c + 1; }

#ifdef TSR_DEBUG
/* The links as the header comment states them (debug builds, configure
 * --enable-debug): the header list is a ring, and each column's list is a
 * ring of nodes of that column, doubly linked, as long as len says.  It
 * holds whenever no cover is half done, so at creation and at the end. */
static bool dlx_sane(const dlx *d)
{
    int steps = 0;
    for (int h = d->R[0]; h != 0; h = d->R[h])
        if (d->L[d->R[h]] != h || ++steps > d->ncols)
            return false;
    for (int c = 0; c < d->ncols; c++) {
        int n = 0;
        for (int x = d->D[H(c)]; x != H(c); x = d->D[x]) {
            if (d->U[d->D[x]] != x || d->D[d->U[x]] != x || d->C[x] != c || ++n > d->nnodes)
                return false;
        }
        if (n != d->len[c])
            return false;
    }
    return true;
}
#endif

dlx *dlx_new(const img_problem *ip, const unsigned char *alive, const tsr_stop *stop)
{
    dlx *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->ip = ip;
    d->ncols = ip->ncells + ip->ntypes;
    long nrownodes = 0;
    for (int i = 0; i < ip->nimages; i++)
        if (alive == NULL || alive[i])
            nrownodes += img_size(ip, i) + 1;
    d->nnodes = (int)(d->ncols + 1 + nrownodes);
    size_t nn = (size_t)d->nnodes, nc = (size_t)d->ncols + 1;
    d->L = malloc(nc * sizeof(int));
    d->R = malloc(nc * sizeof(int));
    d->U = malloc(nn * sizeof(int));
    d->D = malloc(nn * sizeof(int));
    d->C = malloc(nn * sizeof(int));
    d->RB = malloc(nn * sizeof(int));
    d->RE = malloc(nn * sizeof(int));
    d->nodeimg = malloc(nn * sizeof(int));
    d->len = calloc(nc, sizeof(int));
    d->need = calloc(nc, sizeof(int));
    d->low = calloc(nc, sizeof(int));
    d->covered = calloc(nc, 1);
    d->rownode = malloc((size_t)(ip->nimages ? ip->nimages : 1) * sizeof(int));
    if (!d->L || !d->R || !d->U || !d->D || !d->C || !d->RB || !d->RE || !d->nodeimg ||
        !d->len || !d->need || !d->low || !d->covered || !d->rownode) {
        dlx_free(d);
        return NULL;
    }
    for (int c = 0; c < d->ncols; c++) {
        d->U[H(c)] = d->D[H(c)] = H(c);
        d->L[H(c)] = d->R[H(c)] = H(c);
        d->C[H(c)] = c;
        d->need[c] = c < ip->ncells ? 1 : ip->types[c - ip->ncells].count;
        d->low[c] = c < ip->ncells ? 1 : ip->types[c - ip->ncells].count_min;
        /* a type allowed no copy takes no part: covered from the start */
        d->covered[c] = d->need[c] == 0;
    }
    /* header list: type columns first, so that min-fit ties favour pieces
     * (a constrained piece is then placed first), then the required cells */
    int prev = 0;
    for (int k = 0; k < d->ncols; k++) {
        int c = k < ip->ntypes ? ip->ncells + k : k - ip->ntypes;
        if (d->covered[c] || (c < ip->ncells && ip->optional && ip->optional[c]))
            continue;
        d->R[prev] = H(c);
        d->L[H(c)] = prev;
        prev = H(c);
    }
    d->R[prev] = 0;
    d->L[0] = prev;
    int x = d->ncols + 1;
    unsigned long work = 0;
    for (int i = 0; i < ip->nimages; i++) {
        /* a row is a node per cell, each appended to its column's list */
        if (img_stopped(stop, &work, (unsigned long)img_size(ip, i) + 1)) {
            dlx_free(d);
            return NULL;
        }
        d->rownode[i] = -1;
        if ((alive != NULL && !alive[i]) || d->covered[ip->ncells + ip->img_type[i]])
            continue;
        int n = img_size(ip, i), start = x;
        const int *cells = img_cells_of(ip, i);
        d->rownode[i] = start;
        for (int k = 0; k <= n; k++, x++) {
            int c = k == 0 ? ip->ncells + ip->img_type[i] : cells[k - 1];
            d->C[x] = c;
            d->RB[x] = start;
            d->RE[x] = start + n + 1;
            d->nodeimg[x] = i;
            /* append at the bottom of column c */
            d->U[x] = d->U[H(c)];
            d->D[x] = H(c);
            d->D[d->U[H(c)]] = x;
            d->U[H(c)] = x;
            d->len[c]++;
        }
    }
    d->remaining = ip->ncopies;
#ifdef TSR_DEBUG
    assert(dlx_sane(d));
#endif
    return d;
}


void dlx_free(dlx *d)
{
    if (d == NULL)
        return;
#ifdef TSR_DEBUG
    assert(dlx_sane(d));
#endif
    free(d->L);
    free(d->R);
    free(d->U);
    free(d->D);
    free(d->C);
    free(d->RB);
    free(d->RE);
    free(d->nodeimg);
    free(d->len);
    free(d->need);
    free(d->low);
    free(d->covered);
    free(d->rownode);
    free(d);
}

int dlx_need_of(const dlx *d, int c) { return d->need[c]; }

int dlx_choose(const dlx *d, const double *rank, int *options)
{
    int best = -1, best_len = 0;
    double best_rank = 0;
    int ncells = d->ip->ncells;
    for (int x = d->R[0]; x != 0; x = d->R[x]) {
        int c = x - 1, len = d->len[c], need = d->need[c];
        if (len < d->low[c]) {
            *options = len;
            return c; /* dead */
        }
        if (need != 1 || d->low[c] != 1)
            continue; /* only cells branch for identical copies, and types
                         that must take exactly one more row */
        if (len == 1) {
            *options = 1;
            return c;
        }
        if (rank == NULL) {
            if (best < 0 || len < best_len) {
                best = c;
                best_len = len;
            }
        } else if (c < ncells) { /* ranked orders consider pieces only when forced */
            double r = rank[c];
            if (best < 0 || r < best_rank || (r == best_rank && len < best_len)) {
                best = c;
                best_len = len;
                best_rank = r;
            }
        }
    }
    *options = best_len;
    return best;
}

int dlx_open_type(const dlx *d, int *low)
{
    int best = -1;
    for (int x = d->R[0]; x != 0; x = d->R[x]) {
        int c = x - 1;
        if (c >= d->ip->ncells && d->len[c] > 0 && (best < 0 || d->len[c] < d->len[best]))
            best = c;
    }
    *low = best >= 0 ? d->low[best] : 0;
    return best;
}

int dlx_first(const dlx *d, int c)
{
    int x = d->D[H(c)];
    return x == H(c) ? -1 : x;
}

int dlx_next(const dlx *d, int node)
{
    int x = d->D[node];
    return x <= d->ncols ? -1 : x;
}

int dlx_row_of(const dlx *d, int node) { return d->nodeimg[node]; }

static void cover(dlx *d, int c)
{
    int h = H(c);
    d->L[d->R[h]] = d->L[h];
    d->R[d->L[h]] = d->R[h];
    d->covered[c] = 1;
    for (int i = d->D[h]; i != h; i = d->D[i]) {
        int rb = d->RB[i], re = d->RE[i];
        for (int j = i + 1 == re ? rb : i + 1; j != i; j = j + 1 == re ? rb : j + 1) {
            d->D[d->U[j]] = d->D[j];
            d->U[d->D[j]] = d->U[j];
            d->len[d->C[j]]--;
        }
    }
}

static void uncover(dlx *d, int c)
{
    int h = H(c);
    for (int i = d->U[h]; i != h; i = d->U[i]) {
        int rb = d->RB[i], re = d->RE[i];
        for (int j = i == rb ? re - 1 : i - 1; j != i; j = j == rb ? re - 1 : j - 1) {
            d->len[d->C[j]]++;
            d->D[d->U[j]] = j;
            d->U[d->D[j]] = j;
        }
    }
    d->covered[c] = 0;
    d->L[d->R[h]] = h;
    d->R[d->L[h]] = h;
}

void dlx_cover_column(dlx *d, int c) { cover(d, c); }
void dlx_uncover_column(dlx *d, int c) { uncover(d, c); }

void dlx_select(dlx *d, int x)
{
    int ncells = d->ip->ncells, rb = d->RB[x], re = d->RE[x];
    if (d->C[x] >= ncells) { /* branching on a piece: its column is covered already */
        d->need[d->C[x]]--;
        d->low[d->C[x]]--;
    }
    for (int j = x + 1 == re ? rb : x + 1; j != x; j = j + 1 == re ? rb : j + 1) {
        int c = d->C[j];
        if (c < ncells) {
            cover(d, c);
        } else {
            d->low[c]--;
            if (--d->need[c] == 0)
                cover(d, c);
        }
    }
    d->remaining--;
}

void dlx_unselect(dlx *d, int x)
{
    int ncells = d->ip->ncells, rb = d->RB[x], re = d->RE[x];
    d->remaining++;
    for (int j = x == rb ? re - 1 : x - 1; j != x; j = j == rb ? re - 1 : j - 1) {
        int c = d->C[j];
        if (c < ncells) {
            uncover(d, c);
        } else {
            d->low[c]++;
            if (d->need[c]++ == 0)
                uncover(d, c);
        }
    }
    if (d->C[x] >= ncells) {
        d->need[d->C[x]]++;
        d->low[d->C[x]]++;
    }
}

bool dlx_available(const dlx *d, int image)
{
    int x = d->rownode[image];
    if (x < 0 || d->covered[d->C[x]])
        return false;
    return d->D[d->U[x]] == x;
}

bool dlx_place(dlx *d, int image)
{
    if (!dlx_available(d, image))
        return false;
    int x = d->rownode[image] + 1; /* first cell node */
    cover(d, d->C[x]);
    dlx_select(d, x);
    return true;
}

void dlx_unplace(dlx *d, int image)
{
    int x = d->rownode[image] + 1;
    dlx_unselect(d, x);
    uncover(d, d->C[x]);
}

void dlx_hide(dlx *d, int image)
{
    int x = d->rownode[image];
    for (int j = x; j < d->RE[x]; j++) {
        d->D[d->U[j]] = d->D[j];
        d->U[d->D[j]] = d->U[j];
        d->len[d->C[j]]--;
    }
}

void dlx_unhide(dlx *d, int image)
{
    int x = d->rownode[image];
    for (int j = d->RE[x] - 1; j >= x; j--) {
        d->len[d->C[j]]++;
        d->D[d->U[j]] = j;
        d->U[d->D[j]] = j;
    }
}

int dlx_rows(const dlx *d, int *out)
{
    int n = 0, ncells = d->ip->ncells;
    for (int t = 0; t < d->ip->ntypes; t++) {
        int c = ncells + t;
        if (d->covered[c])
            continue;
        for (int x = d->D[H(c)]; x != H(c); x = d->D[x])
            out[n++] = d->nodeimg[x];
    }
    return n;
}

int dlx_remaining_copies(const dlx *d) { return d->remaining; }
int dlx_need(const dlx *d, int type)
{
    int c = d->ip->ncells + type;
    return d->covered[c] ? 0 : d->need[c];
}
int dlx_low(const dlx *d, int type)
{
    int c = d->ip->ncells + type;
    return d->covered[c] || d->low[c] < 0 ? 0 : d->low[c];
}
bool dlx_cell_open(const dlx *d, int cell) { return !d->covered[cell]; }
int dlx_col_len(const dlx *d, int c) { return d->len[c]; }

bool dlx_dead(const dlx *d)
{
    for (int x = d->R[0]; x != 0; x = d->R[x])
        if (d->len[x - 1] < d->low[x - 1])
            return true;
    return false;
}
