/*
 * filters.c - volume, fit and parity constraints (see filters.h).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/filters.h"

struct flt_volume {
    const img_problem *ip;
    int *queue;
    int *mark;          /* per cell: generation that visited it */
    int gen;
    unsigned char *ach; /* achievable volumes 0..ncells */
    unsigned char *blocked;
};

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
    free(v);
}

/* Achievable volumes of the pieces left, less one copy of type `minus`
 * (-1 for none).  Returns the common piece size when all pieces left have
 * one size (then v is achievable iff v % size == 0 and v <= total), else 0
 * after filling v->ach. */
static int achievable(flt_volume *v, const dlx *d, int minus)
{
    const img_problem *ip = v->ip;
    int common = -1, total = 0;
    for (int t = 0; t < ip->ntypes; t++) {
        int k = dlx_need(d, t) - (t == minus);
        if (k <= 0)
            continue;
        total += k * ip->types[t].size;
        if (common == -1)
            common = ip->types[t].size;
        else if (common != ip->types[t].size)
            common = 0;
    }
    if (common > 0)
        return common;
    memset(v->ach, 0, (size_t)total + 1);
    v->ach[0] = 1;
    int reach = 0;
    for (int t = 0; t < ip->ntypes; t++) {
        int k = dlx_need(d, t) - (t == minus), s = ip->types[t].size;
        for (int c = 0; c < k; c++) {
            for (int x = reach; x >= 0; x--)
                if (v->ach[x])
                    v->ach[x + s] = 1;
            reach += s;
        }
    }
    return 0;
}

static bool volume_fine(const flt_volume *v, int common, int vol)
{
    return common > 0 ? vol % common == 0 : v->ach[vol];
}

/* Size of the region of open, unblocked cells around `start`. */
static int flood(flt_volume *v, const dlx *d, int start)
{
    const int *nbr = v->ip->nbr;
    int head = 0, tail = 0;
    v->queue[tail++] = start;
    v->mark[start] = v->gen;
    while (head < tail) {
        int c = v->queue[head++];
        for (int k = 0; k < 6; k++) {
            int n = nbr[c * 6 + k];
            if (n >= 0 && v->mark[n] != v->gen && !v->blocked[n] && dlx_cell_open(d, n)) {
                v->mark[n] = v->gen;
                v->queue[tail++] = n;
            }
        }
    }
    return tail;
}

bool flt_volume_ok(flt_volume *v, const dlx *d)
{
    int common = achievable(v, d, -1);
    v->gen++;
    for (int c = 0; c < v->ip->ncells; c++)
        if (dlx_cell_open(d, c) && v->mark[c] != v->gen && !volume_fine(v, common, flood(v, d, c)))
            return false;
    return true;
}

int flt_volume_filter(flt_volume *v, dlx *d, int *stack, int *n)
{
    const img_problem *ip = v->ip;
    int *rows = malloc((size_t)(ip->nimages ? ip->nimages : 1) * sizeof *rows);
    if (rows == NULL)
        return 0;
    int nrows = dlx_rows(d, rows), hidden = 0, cached_type = -2, common = 0;
    for (int r = 0; r < nrows; r++) {
        int img = rows[r], t = ip->img_type[img];
        if (t != cached_type) { /* rows come type by type */
            common = achievable(v, d, t);
            cached_type = t;
        }
        const int *cells = img_cells_of(ip, img);
        int size = img_size(ip, img);
        for (int k = 0; k < size; k++)
            v->blocked[cells[k]] = 1;
        v->gen++;
        bool bad = false;
        for (int k = 0; k < size && !bad; k++)
            for (int j = 0; j < 6 && !bad; j++) {
                int nb = ip->nbr[cells[k] * 6 + j];
                if (nb >= 0 && !v->blocked[nb] && dlx_cell_open(d, nb) && v->mark[nb] != v->gen)
                    bad = !volume_fine(v, common, flood(v, d, nb));
            }
        for (int k = 0; k < size; k++)
            v->blocked[cells[k]] = 0;
        if (bad) {
            dlx_hide(d, img);
            stack[(*n)++] = img;
            hidden++;
        }
    }
    free(rows);
    return hidden;
}

int flt_fit_filter(dlx *d, int *rows, int *stack, int *n)
{
    int hidden = 0, changed;
    do {
        changed = 0;
        int nrows = dlx_rows(d, rows), start = *n;
        for (int r = 0; r < nrows; r++) {
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

flt_parity *flt_parity_new(const img_problem *ip)
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
    for (long s = 0; s < states; s++) {
        memset(cur, 0, (size_t)2 * R + 1);
        cur[R] = 1;
        for (int c = 0; c < fp->nclasses; c++) {
            int a = (int)(s / fp->class_radix[c] % (class_count[c] + 1)), m = fp->class_mag[c];
            memset(nxt, 0, (size_t)2 * R + 1);
            for (int x = 0; x <= 2 * R; x++)
                if (cur[x])
                    for (int b = 0; b <= a; b++) {
                        int y = x + m * (a - 2 * b);
                        if (y >= 0 && y <= 2 * R)
                            nxt[y] = 1;
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
                      int hole_parity, int *rows, int *stack, int *n)
{
    int hidden = 0, nrows = dlx_rows(d, rows);
    for (int r = 0; r < nrows; r++) {
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
