/*
 * filters.c - volume, fit and parity constraints (see filters.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/filters.h"

/* Cells as bits, for boards of at most 128 cells: there a region grows a
 * whole neighbourhood per step instead of a cell per queue entry (the
 * 6x10's root filter floods around each of its 2056 images) */
typedef unsigned __int128 cellset;

static inline int cs_ctz(cellset m)
{
    uint64_t lo = (uint64_t)m;
    return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((uint64_t)(m >> 64));
}

static inline int cs_count(cellset m)
{
    return __builtin_popcountll((uint64_t)m) + __builtin_popcountll((uint64_t)(m >> 64));
}

struct flt_volume {
    const img_problem *ip;
    cellset *nbm;       /* per cell: its neighbours; NULL past 128 cells */
    cellset reqm;       /* the required cells */
    int *queue;
    int *mark;          /* per cell: generation that visited it */
    int gen;
    unsigned char *ach; /* achievable volumes 0..total */
    int total;          /* volume of the pieces left (less `minus`) */
    unsigned char *blocked;
    bool connected;     /* every piece is face-connected, so it lies in one region */
    unsigned long visited; /* cells the floods reached, the filter's measure of its work */
};

/* What the volume checks read of a position: a DLX state, or with d NULL
 * the root, where every cell is open and every type has all its copies
 * left (the root filter needs no matrix for that: flt_volume_filter_root). */
static inline bool vol_open(const dlx *d, int c) { return d == NULL || dlx_cell_open(d, c); }

static inline int vol_need(const flt_volume *v, const dlx *d, int t)
{
    return d != NULL ? dlx_need(d, t) : v->ip->types[t].count;
}

/* Is every type's shape face-connected?  Then a placement lies in one
 * region of open cells, which the volume checks assume.  Tested on each
 * type's first image, by a flood over its cells (queue and mark free). */
static bool pieces_connected(flt_volume *v)
{
    const img_problem *ip = v->ip;
    for (int t = 0; t < ip->ntypes; t++) {
        if (ip->types[t].nimages == 0)
            continue;
        const int *cells = img_cells_of(ip, ip->types[t].first);
        int n = img_size(ip, ip->types[t].first), head = 0, tail = 0;
        v->gen++;
        for (int k = 0; k < n; k++)
            v->mark[cells[k]] = v->gen; /* gen: in the piece, not reached */
        v->gen++;
        v->queue[tail++] = cells[0];
        v->mark[cells[0]] = v->gen;
        while (head < tail) {
            int c = v->queue[head++];
            for (int k = 0; k < 6; k++) {
                int nb = ip->nbr[c * 6 + k];
                if (nb >= 0 && v->mark[nb] == v->gen - 1) {
                    v->mark[nb] = v->gen;
                    v->queue[tail++] = nb;
                }
            }
        }
        if (tail != n)
            return false;
    }
    return true;
}

flt_volume *flt_volume_new(const img_problem *ip)
{
    flt_volume *v = calloc(1, sizeof *v);
    if (v == NULL)
        return NULL;
    size_t n = (size_t)ip->ncells + 1;
    v->ip = ip;
    v->queue = malloc(n * sizeof *v->queue);
    v->mark = calloc(n, sizeof *v->mark);
    v->ach = malloc(n);
    v->blocked = calloc(n, 1);
    if (!v->queue || !v->mark || !v->ach || !v->blocked) {
        flt_volume_free(v);
        return NULL;
    }
    v->connected = pieces_connected(v);
    if (ip->ncells <= 128) {
        v->nbm = calloc(n, sizeof *v->nbm);
        if (v->nbm == NULL) {
            flt_volume_free(v);
            return NULL;
        }
        for (int c = 0; c < ip->ncells; c++) {
            for (int k = 0; k < 6; k++)
                if (ip->nbr[c * 6 + k] >= 0)
                    v->nbm[c] |= (cellset)1 << ip->nbr[c * 6 + k];
            if (ip->optional == NULL || !ip->optional[c])
                v->reqm |= (cellset)1 << c;
        }
    }
    return v;
}

void flt_volume_free(flt_volume *v)
{
    if (v == NULL)
        return;
    free(v->queue);
    free(v->mark);
    free(v->ach);
    free(v->blocked);
    free(v->nbm);
    free(v);
}

/* Achievable volumes of the pieces left, less one copy of type `minus`
 * (-1 for none); v->total gets their volume.  Returns the common piece
 * size when all pieces left have one size (then v is achievable iff
 * v % size == 0 and v <= total), else 0 after filling v->ach up to the
 * smaller of total and the cells (a loose puzzle's pieces may exceed the
 * board; no region does). */
static int achievable(flt_volume *v, const dlx *d, int minus)
{
    const img_problem *ip = v->ip;
    int common = -1, total = 0;
    for (int t = 0; t < ip->ntypes; t++) {
        int k = vol_need(v, d, t) - (t == minus);
        if (k <= 0)
            continue;
        total += k * ip->types[t].size;
        if (common == -1)
            common = ip->types[t].size;
        else if (common != ip->types[t].size)
            common = 0;
    }
    v->total = total;
    if (common > 0)
        return common;
    int cap = total < ip->ncells ? total : ip->ncells, reach = 0;
    memset(v->ach, 0, (size_t)cap + 1);
    v->ach[0] = 1;
    for (int t = 0; t < ip->ntypes; t++) {
        int k = vol_need(v, d, t) - (t == minus), s = ip->types[t].size;
        for (int c = 0; c < k; c++) {
            for (int x = reach < cap - s ? reach : cap - s; x >= 0; x--)
                if (v->ach[x])
                    v->ach[x + s] = 1;
            reach = reach + s < cap ? reach + s : cap;
        }
    }
    return 0;
}

/* Can the pieces left fill a region of `vol` open cells, `req` of them
 * required?  Some sum of them must lie in [req, vol] (req == vol in an
 * exact puzzle); an empty region of optional cells takes none.  With one
 * common size the sums are its multiples up to v->total. */
static bool volume_fine(const flt_volume *v, int common, int req, int vol)
{
    if (req == 0)
        return true;
    if (common > 0) {
        int m = (req + common - 1) / common * common;
        return m <= vol && m <= v->total;
    }
    for (int x = req; x <= vol && x <= v->total; x++)
        if (v->ach[x])
            return true;
    return false;
}

/* Size of the region of open, unblocked cells around `start`; *req gets
 * how many of them are required. */
static int flood(flt_volume *v, const dlx *d, int start, int *req)
{
    const int *nbr = v->ip->nbr;
    const unsigned char *opt = v->ip->optional;
    int head = 0, tail = 0;
    v->queue[tail++] = start;
    v->mark[start] = v->gen;
    *req = 0;
    while (head < tail) {
        int c = v->queue[head++];
        *req += opt == NULL || !opt[c];
        for (int k = 0; k < 6; k++) {
            int n = nbr[c * 6 + k];
            if (n >= 0 && v->mark[n] != v->gen && !v->blocked[n] && vol_open(d, n)) {
                v->mark[n] = v->gen;
                v->queue[tail++] = n;
            }
        }
    }
    v->visited += (unsigned long)tail;
    return tail;
}

/* The copies each type must still place must fit in the open cells (a
 * loose puzzle; in an exact one they fill them exactly). */
static bool minimums_fit(const flt_volume *v, const dlx *d, int open)
{
    long need = 0;
    for (int t = 0; t < v->ip->ntypes; t++) {
        int low = dlx_low(d, t);
        need += low > 0 ? (long)low * v->ip->types[t].size : 0;
    }
    return need <= open;
}

/* The open cells as a set (boards of at most 128 cells). */
static cellset open_set(const flt_volume *v, const dlx *d)
{
    cellset open = 0;
    for (int c = 0; c < v->ip->ncells; c++)
        if (vol_open(d, c))
            open |= (cellset)1 << c;
    return open;
}

/* The region of `free` cells around `start`, growing a cell's whole
 * neighbourhood at a time: flood's region, on cell sets. */
static cellset flood_bits(const flt_volume *v, cellset free, int start)
{
    cellset region = (cellset)1 << start, frontier = region;
    while (frontier) {
        cellset grow = 0;
        for (cellset f = frontier; f; f &= f - 1)
            grow |= v->nbm[cs_ctz(f)];
        frontier = grow & free & ~region;
        region |= frontier;
    }
    return region;
}

bool flt_volume_ok(flt_volume *v, const dlx *d)
{
    if (!v->connected)
        return true; /* a piece may span two regions */
    int common = achievable(v, d, -1), open = 0, req = 0;
    if (v->nbm != NULL) {
        cellset all = open_set(v, d);
        for (cellset left = all; left;) {
            cellset region = flood_bits(v, all, cs_ctz(left));
            if (!volume_fine(v, common, cs_count(region & v->reqm), cs_count(region)))
                return false;
            left &= ~region;
        }
        return v->ip->exact || minimums_fit(v, d, cs_count(all));
    }
    v->gen++;
    for (int c = 0; c < v->ip->ncells; c++)
        if (dlx_cell_open(d, c) && v->mark[c] != v->gen) {
            int vol = flood(v, d, c, &req);
            if (!volume_fine(v, common, req, vol))
                return false;
            open += vol;
        }
    return v->ip->exact || minimums_fit(v, d, open);
}

/* Would placing `img` leave a region around it that the pieces left
 * cannot fill?  On cell sets (`open`: the open cells) when the board has
 * them, else by flood. */
static bool image_strands(flt_volume *v, const dlx *d, cellset open, int img, int common)
{
    const img_problem *ip = v->ip;
    const int *cells = img_cells_of(ip, img);
    int size = img_size(ip, img);
    if (v->nbm != NULL) {
        cellset im = 0, around = 0;
        for (int k = 0; k < size; k++) {
            im |= (cellset)1 << cells[k];
            around |= v->nbm[cells[k]];
        }
        cellset free = open & ~im;
        for (around &= free; around;) {
            cellset region = flood_bits(v, free, cs_ctz(around));
            if (!volume_fine(v, common, cs_count(region & v->reqm), cs_count(region)))
                return true;
            around &= ~region;
        }
        return false;
    }
    for (int k = 0; k < size; k++)
        v->blocked[cells[k]] = 1;
    v->gen++;
    bool bad = false;
    for (int k = 0; k < size && !bad; k++)
        for (int j = 0; j < 6 && !bad; j++) {
            int nb = ip->nbr[cells[k] * 6 + j];
            if (nb >= 0 && !v->blocked[nb] && vol_open(d, nb) && v->mark[nb] != v->gen) {
                int req, vol = flood(v, d, nb, &req);
                bad = !volume_fine(v, common, req, vol);
            }
        }
    for (int k = 0; k < size; k++)
        v->blocked[cells[k]] = 0;
    return bad;
}

/* The images among rows[0 .. nrows) (type by type) that strand a region
 * in position d (NULL: the root), written to out[] (which may be rows:
 * each is written after it is read); *nout gets how many.  Returns 0, or
 * TSR_ECANCELED when `stop` asks, with those found so far in out[]. */
static int stranding(flt_volume *v, const dlx *d, const tsr_stop *stop, const int *rows,
                     int nrows, int *out, int *nout)
{
    const img_problem *ip = v->ip;
    int cached_type = -2, common = 0, k = 0, rc = 0;
    /* hiding rows leaves the open cells as they are */
    cellset open = v->nbm != NULL ? open_set(v, d) : 0;
    unsigned long work = 0;
    for (int r = 0; r < nrows; r++) {
        /* an image's floods reach the regions around it, on a large board
         * most of the board (v->visited); on cell sets they cost little */
        if (img_stopped(stop, &work, v->visited + (unsigned long)img_size(ip, rows[r]))) {
            rc = TSR_ECANCELED;
            break;
        }
        v->visited = 0;
        int img = rows[r], t = ip->img_type[img];
        if (t != cached_type) { /* rows come type by type */
            common = achievable(v, d, t);
            cached_type = t;
        }
        if (image_strands(v, d, open, img, common))
            out[k++] = img;
    }
    *nout = k;
    return rc;
}

int flt_volume_filter(flt_volume *v, dlx *d, const tsr_stop *stop, int *stack, int *n)
{
    const img_problem *ip = v->ip;
    int *rows = malloc((size_t)(ip->nimages ? ip->nimages : 1) * sizeof *rows);
    if (rows == NULL)
        return 0;
    int nrows = v->connected ? dlx_rows(d, rows) : 0, hidden = 0;
    int rc = stranding(v, d, stop, rows, nrows, stack + *n, &hidden);
    for (int k = 0; k < hidden; k++)
        dlx_hide(d, stack[(*n)++]);
    free(rows);
    return rc ? rc : hidden;
}

int flt_volume_filter_root(flt_volume *v, const tsr_stop *stop, unsigned char *alive)
{
    const img_problem *ip = v->ip;
    int *rows = malloc((size_t)(ip->nimages ? ip->nimages : 1) * sizeof *rows);
    if (rows == NULL)
        return TSR_ENOMEM;
    int nrows = 0, hidden = 0;
    for (int i = 0; v->connected && i < ip->nimages; i++)
        if (alive[i])
            rows[nrows++] = i; /* in id order, so type by type */
    int rc = stranding(v, NULL, stop, rows, nrows, rows, &hidden);
    for (int k = 0; k < hidden; k++)
        alive[rows[k]] = 0;
    free(rows);
    return rc ? rc : hidden;
}

int flt_fit_filter(const img_problem *ip, dlx *d, const tsr_stop *stop, int *rows, int *stack,
                   int *n)
{
    int hidden = 0, changed;
    unsigned long work = 0;
    do {
        changed = 0;
        int nrows = dlx_rows(d, rows), start = *n;
        for (int r = 0; r < nrows; r++) {
            /* placing a row unlinks the rows that overlap it, of the order
             * of size x size nodes for a compact piece, and the dead check
             * reads every column */
            unsigned long size = (unsigned long)img_size(ip, rows[r]);
            if (img_stopped(stop, &work, size * size + (unsigned long)ip->ncells)) {
                for (int k = start; k < *n; k++)
                    dlx_hide(d, stack[k]); /* the stack holds hidden rows only */
                return TSR_ECANCELED;
            }
            if (!dlx_place(d, rows[r]))
                continue;
            bool dead = dlx_dead(d);
            dlx_unplace(d, rows[r]);
            if (dead)
                stack[(*n)++] = rows[r];
        }
        for (int k = start; k < *n; k++)
            dlx_hide(d, stack[k]);
        changed = *n - start;
        hidden += changed;
    } while (changed);
    return hidden;
}

void flt_parity_free(flt_parity *fp)
{
    if (fp == NULL)
        return;
    free(fp->type_class);
    free(fp->class_radix);
    free(fp->class_mag);
    free(fp->ok);
    free(fp);
}

flt_parity *flt_parity_new(const img_problem *ip, const tsr_stop *stop)
{
    flt_parity *fp = calloc(1, sizeof *fp);
    if (fp == NULL)
        return NULL;
    int nt = ip->ntypes;
    fp->type_class = malloc((size_t)(nt ? nt : 1) * sizeof(int));
    fp->class_radix = malloc((size_t)(nt ? nt : 1) * sizeof(int));
    fp->class_mag = malloc((size_t)(nt ? nt : 1) * sizeof(int));
    int *class_count = calloc((size_t)(nt ? nt : 1), sizeof(int));
    if (!fp->type_class || !fp->class_radix || !fp->class_mag || !class_count)
        goto fail;
    for (int t = 0; t < nt; t++) {
        int m = ip->types[t].parity, c;
        fp->type_class[t] = -1;
        if (m == 0)
            continue;
        for (c = 0; c < fp->nclasses && fp->class_mag[c] != m; c++)
            ;
        if (c == fp->nclasses)
            fp->class_mag[fp->nclasses++] = m;
        fp->type_class[t] = c;
        class_count[c] += ip->types[t].count;
    }
    long states = 1;
    for (int c = 0; c < fp->nclasses; c++) {
        fp->class_radix[c] = (int)states;
        states *= class_count[c] + 1;
        fp->range += class_count[c] * fp->class_mag[c];
        if (states > 100000)
            goto fail;
    }
    fp->nstates = (int)states;
    fp->words = (2 * fp->range + 1 + 63) / 64;
    if ((double)states * fp->words > 4e6)
        goto fail;
    fp->ok = calloc((size_t)states * fp->words, sizeof(uint64_t));
    if (fp->ok == NULL)
        goto fail;
    /* reachable sums for each state: start from {0}, add each class's
     * possible contributions m * (a - 2b), b = 0..a */
    unsigned char *cur = malloc((size_t)2 * fp->range + 1), *nxt = malloc((size_t)2 * fp->range + 1);
    if (cur == NULL || nxt == NULL) {
        free(cur);
        free(nxt);
        goto fail;
    }
    int R = fp->range;
    unsigned long work = 0, units = 0;
    for (long s = 0; s < states; s++) {
        memset(cur, 0, (size_t)2 * R + 1);
        cur[R] = 1;
        for (int c = 0; c < fp->nclasses; c++) {
            /* a state costs a pass over the sums per class, and a pass over
             * the copies per reachable sum: seconds for hundreds of copies
             * in two classes */
            if (img_stopped(stop, &work, units)) {
                free(cur);
                free(nxt);
                goto fail;
            }
            int a = (int)(s / fp->class_radix[c] % (class_count[c] + 1)), m = fp->class_mag[c];
            memset(nxt, 0, (size_t)2 * R + 1);
            units = 2ul * (unsigned long)R + 1;
            for (int x = 0; x <= 2 * R; x++)
                if (cur[x]) {
                    units += (unsigned long)a + 1;
                    for (int b = 0; b <= a; b++) {
                        int y = x + m * (a - 2 * b);
                        if (y >= 0 && y <= 2 * R)
                            nxt[y] = 1;
                    }
                }
            memcpy(cur, nxt, (size_t)2 * R + 1);
        }
        for (int x = 0; x <= 2 * R; x++)
            if (cur[x])
                fp->ok[s * fp->words + (x >> 6)] |= 1ull << (x & 63);
    }
    free(cur);
    free(nxt);
    free(class_count);
    return fp;
fail:
    free(class_count);
    flt_parity_free(fp);
    return NULL;
}

int flt_parity_state(const flt_parity *fp, const img_problem *ip, const dlx *d)
{
    int state = 0;
    for (int t = 0; t < ip->ntypes; t++)
        if (fp->type_class[t] >= 0)
            state += dlx_need(d, t) * fp->class_radix[fp->type_class[t]];
    return state;
}

int flt_parity_filter(const flt_parity *fp, const img_problem *ip, dlx *d, int state,
                      int hole_parity, const tsr_stop *stop, int *rows, int *stack, int *n)
{
    int hidden = 0, nrows = dlx_rows(d, rows);
    unsigned long work = 0;
    for (int r = 0; r < nrows; r++) {
        if (img_stopped(stop, &work, (unsigned long)img_size(ip, rows[r])))
            return TSR_ECANCELED; /* img_parity reads every cell */
        int img = rows[r], cls = fp->type_class[ip->img_type[img]];
        if (cls < 0)
            continue;
        int par = img_parity(ip, img);
        if (!flt_parity_ok(fp, state - fp->class_radix[cls], hole_parity - par)) {
            dlx_hide(d, img);
            stack[(*n)++] = img;
            hidden++;
        }
    }
    return hidden;
}

/* ---- parity with ranges (filters.h) ---- */

#define LPARITY_MAX_WORK 200000 /* array updates per check */

struct flt_lparity {
    const img_problem *ip;
    int range;          /* largest |sum| of the pieces' parities */
    bool off;           /* the sums would cost too much: always yes */
    unsigned char *cur, *nxt; /* reachable sums, offset by range */
};

flt_lparity *flt_lparity_new(const img_problem *ip)
{
    flt_lparity *lp = calloc(1, sizeof *lp);
    if (lp == NULL)
        return NULL;
    lp->ip = ip;
    long range = 0, work = 0;
    for (int t = 0; t < ip->ntypes; t++)
        range += (long)ip->types[t].count * ip->types[t].parity;
    for (int t = 0; t < ip->ntypes; t++)
        if (ip->types[t].parity > 0)
            work += (2 * range + 1) * (2L * ip->types[t].count + 1);
    lp->off = work > LPARITY_MAX_WORK;
    lp->range = lp->off ? 0 : (int)range;
    lp->cur = malloc((size_t)2 * lp->range + 1);
    lp->nxt = malloc((size_t)2 * lp->range + 1);
    if (lp->cur == NULL || lp->nxt == NULL) {
        flt_lparity_free(lp);
        return NULL;
    }
    return lp;
}

void flt_lparity_free(flt_lparity *lp)
{
    if (lp == NULL)
        return;
    free(lp->cur);
    free(lp->nxt);
    free(lp);
}

bool flt_lparity_ok(flt_lparity *lp, const dlx *d)
{
    const img_problem *ip = lp->ip;
    if (lp->off)
        return true;
    int h = 0, b = 0, w = 0;
    for (int c = 0; c < ip->ncells; c++)
        if (dlx_cell_open(d, c)) {
            int col = img_color(ip, c);
            if (ip->optional != NULL && ip->optional[c])
                col > 0 ? w++ : b++;
            else
                h += col;
        }
    int R = lp->range, reach = 0; /* sums so far lie in [-reach, reach] */
    unsigned char *cur = lp->cur, *nxt = lp->nxt;
    memset(cur, 0, (size_t)2 * R + 1);
    cur[R] = 1;
    for (int t = 0; t < ip->ntypes; t++) {
        int m = ip->types[t].parity, need = dlx_need(d, t), low = dlx_low(d, t);
        if (m == 0 || need == 0)
            continue;
        /* k copies, k in [low, need], give m * j for |j| <= k, j = k mod 2 */
        memset(nxt + R - reach - m * need, 0, (size_t)2 * (reach + m * need) + 1);
        for (int x = R - reach; x <= R + reach; x++)
            if (cur[x])
                for (int j = -need; j <= need; j++)
                    if (((j + need) & 1) == 0 || (need > low && j > -need && j < need))
                        nxt[x + m * j] = 1;
        reach += m * need;
        unsigned char *swap = cur;
        cur = nxt;
        nxt = swap;
    }
    for (int x = h - b; x <= h + w; x++)
        if (x >= -reach && x <= reach && cur[R + x])
            return true;
    return false;
}
