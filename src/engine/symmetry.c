/*
 * symmetry.c - symmetry group, redundancy filter and canonical solutions
 * (the reasoning is in symmetry.h).
 */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "engine/symmetry.h"

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void sym_sort(int *ids, int n)
{
#if defined(__AVX512F__)
    /* every leaf sorts its solution, a dozen ids in random order, where
     * insertion sort mispredicts once an id: each id's rank is instead the
     * number of smaller ids (and of equal ones before it), counted sixteen
     * at a time, without a branch on the data */
    if (n <= 16) {
        __m512i v = _mm512_mask_loadu_epi32(_mm512_set1_epi32(INT_MAX),
                                            (__mmask16)((1u << n) - 1), ids);
        int in[16];
        _mm512_storeu_si512(in, v);
        for (int i = 0; i < n; i++) {
            __m512i x = _mm512_set1_epi32(in[i]);
            unsigned lt = _mm512_cmplt_epi32_mask(v, x);
            unsigned eq = _mm512_cmpeq_epi32_mask(v, x) & ((1u << i) - 1);
            ids[__builtin_popcount(lt | eq)] = in[i];
        }
        return;
    }
#elif defined(__AVX2__)
    /* the same, eight at a time (ids past n read as INT_MAX, larger than
     * any id) */
    if (n <= 16) {
        int in[16];
        for (int i = 0; i < 16; i++)
            in[i] = i < n ? ids[i] : INT_MAX;
        __m256i v0 = _mm256_loadu_si256((const __m256i *)in);
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(in + 8));
        for (int i = 0; i < n; i++) {
            __m256i x = _mm256_set1_epi32(in[i]);
            unsigned lt = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(x, v0))) |
                          (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(x, v1)))
                              << 8;
            unsigned eq = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(x, v0))) |
                          (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(x, v1)))
                              << 8;
            ids[__builtin_popcount(lt | (eq & ((1u << i) - 1)))] = in[i];
        }
        return;
    }
#endif
    /* keys are short (a few dozen ids): insertion sort beats qsort */
    for (int i = 1; i < n; i++) {
        int v = ids[i], j = i;
        for (; j > 0 && ids[j - 1] > v; j--)
            ids[j] = ids[j - 1];
        ids[j] = v;
    }
}

static int key_cmp(const int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

void sym_free(sym_group *g)
{
    if (g == NULL)
        return;
    free(g->cellmap);
    free(g->fixtype);
    free(g->imgmap);
    free(g->mult);
    free(g->rlclass);
    free(g);
}

/* Sorted cells of `cells` under transform t plus `off`. */
static void transform_cells(const geo_mat *t, tsr_cell off, const tsr_cell *cells, int n,
                            tsr_cell *out)
{
    for (int i = 0; i < n; i++) {
        tsr_cell q = geo_apply(t, cells[i]);
        out[i] = (tsr_cell){q.x + off.x, q.y + off.y, q.z + off.z};
    }
    qsort(out, (size_t)n, sizeof *out, geo_cell_cmp);
}


/* Fixed piece pf under t (plus off) covers the cells of ph: do their
 * colours agree cell by cell?  1 or 0, or TSR_ENOMEM.  Both sorted with
 * their colours, as a fixed piece may have as many cells as the board. */
static int fixed_colors_agree(const tsr_piece *pf, const tsr_piece *ph, const geo_mat *t,
                              tsr_cell off)
{
    size_t n = (size_t)pf->ncells;
    geo_ccell *x = malloc(2 * n * sizeof *x), *y = x + n;
    if (x == NULL)
        return TSR_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        tsr_cell q = geo_apply(t, pf->cells[i]);
        x[i] = (geo_ccell){{q.x + off.x, q.y + off.y, q.z + off.z}, pf->colors ? pf->colors[i] : 0};
        y[i] = (geo_ccell){ph->cells[i], ph->colors ? ph->colors[i] : 0};
    }
    qsort(x, n, sizeof *x, geo_ccell_cmp);
    qsort(y, n, sizeof *y, geo_ccell_cmp);
    int agree = 1;
    for (size_t i = 0; i < n && agree; i++)
        agree = x[i].color == y[i].color;
    free(x);
    return agree;
}

/* Does transform t (with translation off) map the fixed pieces onto fixed
 * pieces of the same shape, each cell onto one of its colour?  1 or 0, or
 * TSR_ECANCELED when `stop` asks (thousands of fixed pieces cost seconds:
 * each is compared with all the others). */
static int maps_fixed(const tsr_puzzle *pz, const geo_mat *t, tsr_cell off, tsr_cell *a,
                      tsr_cell *b, const tsr_stop *stop, unsigned long *work)
{
    for (int f = 0; f < pz->npieces; f++) {
        const tsr_piece *pf = &pz->pieces[f];
        if (!pf->fixed)
            continue;
        transform_cells(t, off, pf->cells, pf->ncells, a);
        bool found = false;
        for (int h = 0; h < pz->npieces && !found; h++) {
            const tsr_piece *ph = &pz->pieces[h];
            if (!ph->fixed || ph->ncells != pf->ncells)
                continue;
            if (img_stopped(stop, work, (unsigned long)ph->ncells))
                return TSR_ECANCELED;
            memcpy(b, ph->cells, (size_t)ph->ncells * sizeof *b);
            qsort(b, (size_t)ph->ncells, sizeof *b, geo_cell_cmp);
            found = memcmp(a, b, (size_t)ph->ncells * sizeof *a) == 0;
            if (found && (pf->colors != NULL || ph->colors != NULL)) {
                int agree = fixed_colors_agree(pf, ph, t, off);
                if (agree < 0)
                    return agree;
                found = agree == 1;
            }
        }
        if (!found)
            return 0;
    }
    return 1;
}

/* Orientation o of type t and orientation p of type u are the same
 * coloured shape (the types have the same size). */
static bool same_orientation(const img_type *a, int o, const img_type *b, int p)
{
    size_t n = (size_t)a->size;
    if (memcmp(a->orient + o * n, b->orient + p * n, n * sizeof *a->orient) != 0)
        return false;
    if (a->ocolor == NULL && b->ocolor == NULL)
        return true;
    if (a->ocolor == NULL || b->ocolor == NULL)
        return false; /* a coloured piece has a colour in every orientation */
    return memcmp(a->ocolor + o * n, b->ocolor + p * n, n) == 0;
}

/* Twins are types with the same allowed orientations: identical pieces
 * listed as separate entries (A1 and A2), which a transform may send to
 * the separate entries of their mirror image (B1 and B2).  rank[t] is the
 * number of twins of t listed before it and head[t] the first of them (t
 * itself when none).  All types share the allowed
 * transforms, so their orientations are orbits of one group: two types are
 * twins exactly when one's first orientation is among the other's.  An
 * orientation is a coloured shape: pieces of one shape coloured apart are
 * no twins.  Returns 0 or TSR_ECANCELED. */
static int twin_ranks(const img_problem *ip, const tsr_stop *stop, unsigned long *work, int *rank,
                      int *head)
{
    for (int t = 0; t < ip->ntypes; t++) {
        const img_type *a = &ip->types[t];
        rank[t] = 0;
        head[t] = t;
        for (int u = 0; u < t; u++) {
            const img_type *b = &ip->types[u];
            if (b->size != a->size || b->norient != a->norient)
                continue;
            if (img_stopped(stop, work, (unsigned long)a->norient * (unsigned long)a->size))
                return TSR_ECANCELED;
            bool twin = false;
            for (int o = 0; o < b->norient && !twin; o++)
                twin = same_orientation(a, 0, b, o);
            if (twin && rank[t]++ == 0)
                head[t] = u;
        }
    }
    return 0;
}

/* Image of the cells `cells` (sorted) with the colours `colors` (parallel;
 * NULL for a neutral piece) for an image of type t: the same type when it
 * allows that orientation, else one of the other types of equal size that
 * do: the one of the same rank among them as t among its twins (t's mirror
 * twin; A2's is B2 when A1, A2 and B1, B2 are listed apart), whatever
 * their count ranges (a solution whose image breaks a range is no
 * solution, which sym_apply sees); -1 when there is none. */
static inline int find_as(const img_problem *ip, int t, const int *cells,
                          const unsigned char *colors, int n)
{
    /* a neutral piece has one image per cell set: the plain lookup */
    return colors == NULL && ip->types[t].ocolor == NULL ? img_find(ip, t, cells, n)
                                                         : img_find_colored(ip, t, cells, colors, n);
}

static int map_image(const img_problem *ip, const int *rank, int t, const int *cells,
                     const unsigned char *colors, int n)
{
    int i = find_as(ip, t, cells, colors, n);
    for (int u = 0, r = rank[t]; i < 0 && u < ip->ntypes; u++)
        if (u != t && ip->types[u].size == ip->types[t].size) {
            int j = find_as(ip, u, cells, colors, n);
            if (j >= 0 && r-- == 0)
                i = j;
        }
    return i;
}

/* A cell id with the colour it carries, to sort a coloured image's cells. */
typedef struct sym_cc {
    int cell, color;
} sym_cc;

static int cc_cmp(const void *a, const void *b)
{
    return int_cmp(&((const sym_cc *)a)->cell, &((const sym_cc *)b)->cell);
}

/* The cell ids ic[0..n) (with the colours oc, or NULL) under the cell map
 * cm, sorted into `cells` with their colours into `colors` (cc scratch). */
static void map_cells(const int *cm, const int *ic, int n, const unsigned char *oc, int *cells,
                      sym_cc *cc, unsigned char *colors)
{
    if (oc != NULL) {
        for (int j = 0; j < n; j++)
            cc[j] = (sym_cc){cm[ic[j]], oc[j]};
        qsort(cc, (size_t)n, sizeof *cc, cc_cmp);
        for (int j = 0; j < n; j++) {
            cells[j] = cc[j].cell;
            colors[j] = (unsigned char)cc[j].color;
        }
    } else {
        for (int j = 0; j < n; j++)
            cells[j] = cm[ic[j]];
        qsort(cells, (size_t)n, sizeof *cells, int_cmp);
    }
}

/* Where element e sends the images of type t in orientation o, into
 * map[]: -1 for all of them, or for each the image of the same cells.
 * The images of (t, o) are translates of one shape, and e is a rigid map
 * of the board's cells (cm), so their images are translates of one shape
 * too, of one type u and orientation o2: the image of the first is found
 * by its cells (map_image), that of every other by its first cell alone
 * (img_find_at), which is the image of its k-th cell for one k.  Cost:
 * one sorted lookup per (t, o) and a binary search per image, where
 * mapping every image's cells would cost images x cells (minutes on a
 * 27x27x27 board with 1000-cell pieces).  A coloured piece's colours go
 * with its cells (e keeps the board's colouring, so the turned placement
 * may sit where it lands); `cc` and `colors` are scratch for them. */
static void map_orientation(const img_problem *ip, const int *rank, const int *cm, int t, int o,
                            int *map, int *cells, sym_cc *cc, unsigned char *colors)
{
    const img_type *ty = &ip->types[t];
    int i0 = ty->ofirst[o], end = ty->ofirst[o + 1], n = ty->size;
    if (i0 == end)
        return;
    const int *ic = img_cells_of(ip, i0);
    for (int j = 0; j < n; j++)
        cells[j] = cm[ic[j]];
    int k = 0; /* the cell that becomes the image's first */
    for (int j = 1; j < n; j++)
        if (cells[j] < cells[k])
            k = j;
    const unsigned char *oc = ty->ocolor ? ty->ocolor + (size_t)o * (size_t)n : NULL;
    map_cells(cm, ic, n, oc, cells, cc, colors);
    int j0 = map_image(ip, rank, t, cells, oc ? colors : NULL, n);
    if (j0 < 0) {
        for (int i = i0; i < end; i++)
            map[i] = -1;
        return;
    }
    int u = ip->img_type[j0], o2 = img_orientation(ip, u, j0);
    for (int i = i0; i < end; i++) {
        map[i] = img_find_at(ip, u, o2, cm[img_cells_of(ip, i)[k]]);
        assert(map[i] >= 0); /* a translate of an image on free cells is an image */
    }
#ifndef NDEBUG
    if (oc == NULL) { /* the last, the long way */
        const int *c = img_cells_of(ip, end - 1);
        for (int j = 0; j < n; j++)
            cells[j] = cm[c[j]];
        qsort(cells, (size_t)n, sizeof *cells, int_cmp);
        assert(map[end - 1] == img_find(ip, u, cells, n));
    } else { /* a translate keeps its colouring */
        assert(memcmp(img_colors(ip, map[end - 1]), img_colors(ip, j0), (size_t)n) == 0);
    }
#endif
}

/* Is element e in the group of counting mode `mode`? */
static bool in_mode(const sym_group *g, enum tsr_unique mode, int e)
{
    return e == 0 || (mode == TSR_UNIQUE_ROTATIONS && g->proper[e]) || mode == TSR_UNIQUE_MIRROR;
}

/* Find the twins listed unevenly (symmetry.h) under the elements of the
 * mode's group: a class (head[] names each type's first twin) that some
 * element sends to a class of another number of entries.  When there are
 * any, mark the classes on both sides in g->rlclass with rank 0 (a
 * transform then sends their images to the first entry with the new
 * shape), keep only the mode's elements in G, and set g->flip to an
 * element that changes classes.  The relabelling needs every element to
 * change all chiral classes or none (true of reflections for free pieces
 * and of turning a flat board over for one-sided ones); else (pieces
 * turned only about z in a box whose symmetries lay some on their side)
 * the rank rule stays.  tgt: n * ntypes scratch.  0 or TSR_ENOMEM. */
static int relabel_classes(const img_problem *ip, sym_group *g, enum tsr_unique mode,
                           const int *head, int *rank, int *cells, sym_cc *cc,
                           unsigned char *colors)
{
    int nt = ip->ntypes, nc = ip->ncells;
    size_t nn = (size_t)(nt ? nt : 1);
    int *size = calloc(nn, sizeof *size), *tgt = malloc((size_t)g->n * nn * sizeof *tgt);
    bool *uneven = calloc(nn, sizeof *uneven), *chiral = calloc(nn, sizeof *chiral);
    int rc = size && tgt && uneven && chiral ? 0 : TSR_ENOMEM;
    bool any = false;
    for (int t = 0; rc == 0 && t < nt; t++)
        size[head[t]]++;
    /* where each element in the mode sends each class */
    for (int e = 1; rc == 0 && e < g->n; e++) {
        const int *cm = g->cellmap + (size_t)e * (size_t)nc;
        for (int h = 0; h < nt; h++) {
            const img_type *ty = &ip->types[h];
            int *to = &tgt[(size_t)e * nn + (size_t)h];
            *to = h;
            if (head[h] != h || ty->nimages == 0 || !in_mode(g, mode, e))
                continue;
            const unsigned char *oc = img_colors(ip, ty->first);
            map_cells(cm, img_cells_of(ip, ty->first), ty->size, oc, cells, cc, colors);
            const unsigned char *col = oc ? colors : NULL;
            if (find_as(ip, h, cells, col, ty->size) >= 0)
                continue; /* its own class */
            *to = -1;
            for (int u = 0; u < nt && *to < 0; u++)
                if (ip->types[u].size == ty->size && find_as(ip, u, cells, col, ty->size) >= 0)
                    *to = head[u];
            chiral[h] = true;
            if (*to >= 0 && size[*to] != size[h])
                uneven[h] = uneven[*to] = any = true;
        }
    }
    int flip = -1;
    for (int e = 1; rc == 0 && any && e < g->n; e++) {
        int changed = 0, nchiral = 0;
        for (int h = 0; h < nt; h++) {
            nchiral += chiral[h];
            changed += chiral[h] && tgt[(size_t)e * nn + (size_t)h] != h;
        }
        if (changed > 0 && changed < nchiral)
            any = false; /* no one flip: the rank rule, which relates what it can */
        if (changed > 0 && flip < 0)
            flip = e;
    }
    if (rc == 0 && any) {
        g->rlclass = malloc(nn * sizeof *g->rlclass);
        if (g->rlclass == NULL)
            rc = TSR_ENOMEM;
    }
    if (rc == 0 && any) {
        for (int t = 0; t < nt; t++) {
            g->rlclass[t] = uneven[head[t]] ? head[t] : -1;
            if (uneven[head[t]])
                rank[t] = 0;
        }
        /* G becomes the mode's group: its classes are the mode's */
        int k = 0;
        for (int e = 0; e < g->n; e++) {
            if (!in_mode(g, mode, e))
                continue;
            if (e == flip)
                g->flip = k;
            g->tf[k] = g->tf[e];
            g->proper[k] = g->proper[e];
            memmove(g->cellmap + (size_t)k * (size_t)nc, g->cellmap + (size_t)e * (size_t)nc,
                    (size_t)nc * sizeof *g->cellmap);
            k++;
        }
        g->n = k;
        g->relabel = true;
    }
    free(size);
    free(tgt);
    free(uneven);
    free(chiral);
    return rc;
}

/* Fill imgmap for element e and decide whether it is full: every image
 * maps, and all images of a type go to one type of the same count range,
 * bijectively (a twin of another range may take a solution out of the
 * ranges: then each solution's image is checked).  Returns 0,
 * or TSR_ECANCELED when `stop` asks (an element costs a binary search per
 * image: seconds for millions of images). */
static int map_images(const img_problem *ip, const int *rank, sym_group *g, int e, int *cells,
                      sym_cc *cc, unsigned char *colors, const tsr_stop *stop,
                      unsigned long *work)
{
    int nc = ip->ncells, ni = ip->nimages, nt = ip->ntypes;
    const int *cm = g->cellmap + (size_t)e * nc;
    int *map = g->imgmap + (size_t)e * ni, *ft = g->fixtype + (size_t)e * nt;
    bool full = true;
    for (int t = 0; t < nt; t++) {
        ft[t] = -2; /* not seen yet */
        const img_type *ty = &ip->types[t];
        for (int o = 0; o < ty->norient; o++) {
            /* a binary search per image, a sort of one image's cells */
            unsigned long units = (unsigned long)(ty->ofirst[o + 1] - ty->ofirst[o] + ty->size);
            if (img_stopped(stop, work, units))
                return TSR_ECANCELED;
            map_orientation(ip, rank, cm, t, o, map, cells, cc, colors);
        }
    }
    for (int i = 0; i < ni; i++) {
        int t = ip->img_type[i];
        if (i == ip->types[t].first && img_stopped(stop, work, (unsigned long)ip->types[t].nimages))
            return TSR_ECANCELED;
        int to = map[i] < 0 ? -1 : ip->img_type[map[i]];
        if (ft[t] == -2)
            ft[t] = to;
        else if (ft[t] != to)
            ft[t] = -1;
        full &= to >= 0;
    }
    for (int t = 0; t < nt; t++)
        if (ft[t] == -2)
            ft[t] = t; /* a type without images maps nowhere, harmlessly */
    for (int t = 0; t < nt && full; t++) {
        full = ft[t] >= 0 && ip->types[ft[t]].count == ip->types[t].count &&
               ip->types[ft[t]].count_min == ip->types[t].count_min;
        for (int u = 0; u < t && full; u++)
            full = ft[u] != ft[t];
    }
    if (!full)
        for (int t = 0; t < nt; t++)
            ft[t] = -1;
    g->full[e] = full;
    return 0;
}

int sym_build(const img_problem *ip, enum tsr_unique mode, const tsr_stop *stop,
              sym_group **out)
{
    const tsr_puzzle *pz = ip->pz;
    int nc = ip->ncells, nt = ip->ntypes, ni = ip->nimages;
    sym_group *g = calloc(1, sizeof *g);
    int maxn = pz->ncells > ip->maxsize ? pz->ncells : ip->maxsize;
    for (int f = 0; f < pz->npieces; f++)
        if (pz->pieces[f].ncells > maxn)
            maxn = pz->pieces[f].ncells;
    tsr_cell *a = malloc((size_t)maxn * sizeof *a), *b = malloc((size_t)maxn * sizeof *b);
    size_t most = (size_t)(ip->maxsize > 0 ? ip->maxsize : 1);
    int *cells = malloc(most * sizeof *cells);
    sym_cc *cc = malloc(most * sizeof *cc);
    unsigned char *colors = malloc(most);
    if (g != NULL)
        g->cellmap = malloc((size_t)ip->L.ntransforms * (size_t)(nc ? nc : 1) * sizeof(int));
    if (g == NULL || a == NULL || b == NULL || cells == NULL || cc == NULL || colors == NULL ||
        g->cellmap == NULL) {
        free(a);
        free(b);
        free(cells);
        free(cc);
        free(colors);
        sym_free(g);
        return TSR_ENOMEM;
    }
    const geo_mat *T = ip->L.map;
    tsr_cell lo = geo_min_corner(pz->cells, pz->ncells);
    unsigned long work = 0;
    int rc = 0;
    for (int k = 0; k < ip->L.ntransforms; k++) {
        /* translation that puts the transformed board back on its box (a
         * triangle's kind is no coordinate to translate: the transform
         * keeps it right) */
        for (int i = 0; i < pz->ncells; i++)
            a[i] = geo_apply(&T[k], pz->cells[i]);
        tsr_cell tlo = geo_min_corner(a, pz->ncells);
        tsr_cell off = {lo.x - tlo.x, lo.y - tlo.y, ip->L.translate == 3 ? lo.z - tlo.z : 0};
        int *cm = g->cellmap + (size_t)g->n * nc;
        bool ok = true;
        for (int c = 0; c < nc && ok; c++) {
            tsr_cell q = geo_apply(&T[k], ip->cells[c]);
            q = (tsr_cell){q.x + off.x, q.y + off.y, q.z + off.z};
            ok = (cm[c] = img_cell_at(ip, q)) >= 0 &&
                 (ip->optional == NULL || ip->optional[cm[c]] == ip->optional[c]) &&
                 (ip->color == NULL || ip->color[cm[c]] == ip->color[c]);
        }
        int fixed = ok ? maps_fixed(pz, &T[k], off, a, b, stop, &work) : 0;
        if (fixed < 0) {
            rc = fixed;
            break;
        }
        ok = fixed == 1;
        for (int e = 0; e < g->n && ok; e++)
            if (memcmp(g->cellmap + (size_t)e * nc, cm, (size_t)nc * sizeof *cm) == 0)
                ok = false; /* acts exactly like an element we have (proper ones come first) */
        if (ok) {
            g->tf[g->n] = k;
            g->proper[g->n] = k < ip->L.nmotions;
            g->n++;
        }
    }
    free(a);
    free(b);
    g->imgmap = malloc((size_t)g->n * (size_t)(ni ? ni : 1) * sizeof(int));
    g->fixtype = malloc((size_t)g->n * (size_t)(nt ? nt : 1) * sizeof(int));
    g->mult = malloc((size_t)g->n * (size_t)g->n * sizeof(int));
    int *comp = malloc((size_t)(nc ? nc : 1) * sizeof *comp);
    int *rank = malloc(2 * (size_t)(nt ? nt : 1) * sizeof *rank), *head = rank + nt;
    if (rc == 0 && (g->imgmap == NULL || g->fixtype == NULL || g->mult == NULL || comp == NULL ||
                    rank == NULL))
        rc = TSR_ENOMEM;
    if (rc == 0)
        rc = twin_ranks(ip, stop, &work, rank, head);
    if (rc == 0 && mode != TSR_UNIQUE_RAW)
        rc = relabel_classes(ip, g, mode, head, rank, cells, cc, colors);
    for (int e = 0; e < g->n && rc == 0; e++)
        rc = map_images(ip, rank, g, e, cells, cc, colors, stop, &work);
    free(rank);
    /* multiplication table: (x after y) acts on cell c as x(y(c)) */
    for (int x = 0; x < g->n && rc == 0; x++)
        for (int y = 0; y < g->n; y++) {
            if (img_stopped(stop, &work, 2ul * (unsigned long)nc)) {
                rc = TSR_ECANCELED; /* a composition and a compare or two per cell */
                break;
            }
            for (int c = 0; c < nc; c++)
                comp[c] = g->cellmap[(size_t)x * nc + g->cellmap[(size_t)y * nc + c]];
            g->mult[x * g->n + y] = -1;
            for (int e = 0; e < g->n; e++)
                if (memcmp(g->cellmap + (size_t)e * nc, comp, (size_t)nc * sizeof *comp) == 0) {
                    g->mult[x * g->n + y] = e;
                    break;
                }
        }
    free(comp);
    free(cells);
    free(cc);
    free(colors);
    if (rc) {
        sym_free(g);
        return rc;
    }
    g->all_full = !g->relabel;
    for (int e = 0; e < g->n; e++)
        g->all_full &= g->full[e];
    *out = g;
    return 0;
}

uint64_t sym_mode_mask(const sym_group *g, enum tsr_unique mode)
{
    uint64_t m = 0;
    for (int e = 0; e < g->n; e++)
        if (in_mode(g, mode, e))
            m |= 1ull << e;
    return m;
}

/* g_k(sol) into out, unsorted; false when it is not a solution. */
static bool map_solution(const img_problem *ip, const sym_group *g, int k, const int *sol, int n,
                         int *out, int *tally)
{
    const int *map = g->imgmap + (size_t)k * ip->nimages;
    bool ok = true;
    if (!g->full[k])
        memset(tally, 0, (size_t)ip->ntypes * sizeof *tally);
    for (int i = 0; i < n; i++) {
        out[i] = map[sol[i]];
        if (!g->full[k]) {
            if (out[i] < 0)
                return false;
            tally[ip->img_type[out[i]]]++;
        }
    }
    if (!g->full[k])
        for (int t = 0; t < ip->ntypes && ok; t++)
            ok = tally[t] >= ip->types[t].count_min && tally[t] <= ip->types[t].count;
    return ok;
}

bool sym_apply(const img_problem *ip, const sym_group *g, int k, const int *sol, int n, int *out,
               int *tally)
{
    bool ok = map_solution(ip, g, k, sol, n, out, tally);
    sym_sort(out, n);
    return ok;
}

/* The key of the set out[0..n) (distinct ids, in any order) against the
 * key b: the set is sorted only as far as the first difference, which
 * usually comes at the first id, so a leaf's canonical test costs a pass
 * over each image of it instead of a sort. */
static int set_cmp(int *out, const int *b, int n)
{
    for (int i = 0; i < n; i++) {
        int m = i;
        for (int j = i + 1; j < n; j++)
            if (out[j] < out[m])
                m = j;
        int v = out[m];
        out[m] = out[i];
        out[i] = v;
        if (v != b[i])
            return v < b[i] ? -1 : 1;
    }
    return 0;
}

/* Is image i of type t the smallest of its orbit under the full elements
 * that keep the type? */
static bool orbit_rep(const img_problem *ip, const sym_group *g, int t, int i)
{
    for (int e = 1; e < g->n; e++)
        if (g->fixtype[(size_t)e * ip->ntypes + t] == t &&
            g->imgmap[(size_t)e * ip->nimages + i] < i)
            return false;
    return true;
}

int sym_filter_candidates(const img_problem *ip, const sym_group *g, const char *spec,
                          const tsr_stop *stop, int *cands, tsr_err *err)
{
    if (strcmp(spec, TSR_REDUNDANCY_OFF) == 0 || g->n <= 1)
        return 0;
    int want = -1;
    if (spec[0] != '\0') {
        for (int t = 0; t < ip->ntypes; t++)
            if (strcmp(ip->pz->pieces[ip->types[t].piece].name, spec) == 0)
                want = t;
        if (want < 0)
            return tsr_err_set(err, TSR_EINVAL,
                               "redundancy filter: '%s' is not the name of a mobile piece", spec);
        if (g->relabel && g->rlclass[want] >= 0)
            return tsr_err_set(err, TSR_EINVAL,
                               "redundancy filter: piece '%s' and its mirror image (as this "
                               "board's symmetries turn it) are listed in different numbers of "
                               "entries, so counting up to %s relabels them; choose another "
                               "piece or 'off'",
                               spec, g->flip >= 0 && !g->proper[g->flip] ? "reflections"
                                                                         : "rotations");
        if (ip->types[want].count != 1)
            return tsr_err_set(err, TSR_EINVAL,
                               "redundancy filter: piece '%s' may have %d copies; it must be unique",
                               spec, ip->types[want].count);
    }
    /* score: images per kept image, i.e. how much symmetry the piece breaks;
     * a piece in every solution (count_min 1) comes before one that may stay
     * out (count [0, 1]), whose filter leaves the classes without it whole */
    int n = 0, *kept = malloc((size_t)(ip->ntypes ? ip->ntypes : 1) * sizeof *kept);
    if (kept == NULL)
        return TSR_ENOMEM;
    double best = 1 + 1e-9;
    bool best_sure = false;
    unsigned long work = 0;
    for (int t = 0; t < ip->ntypes; t++) {
        const img_type *ty = &ip->types[t];
        if ((want >= 0 && t != want) || ty->count != 1 || ty->nimages == 0 ||
            (g->relabel && g->rlclass[t] >= 0))
            continue; /* a relabelled entry's placement moves: it constrains nothing */
        bool sure = ty->count_min == 1;
        if (best_sure && !sure)
            continue;
        kept[t] = 0;
        for (int i = ty->first; i < ty->first + ty->nimages; i++) {
            if (img_stopped(stop, &work, (unsigned long)g->n)) {
                free(kept);
                return TSR_ECANCELED;
            }
            kept[t] += orbit_rep(ip, g, t, i);
        }
        double score = (double)ty->nimages / kept[t];
        if (score <= 1 + 1e-9)
            continue; /* breaks no symmetry */
        if (sure && !best_sure)
            n = 0, best = score, best_sure = true;
        if (score > best + 1e-9)
            n = 0, best = score;
        if (score > best - 1e-9) {
            /* insert keeping fewer kept images first (the piece placed
             * first branches least); among pieces that may stay out, more
             * first: the piece that fits in most places is in most
             * solutions, so its filter reduces most classes */
            int k = n++;
            while (k > 0 && (best_sure ? kept[cands[k - 1]] > kept[t]
                                       : kept[cands[k - 1]] < kept[t]))
                cands[k] = cands[k - 1], k--;
            cands[k] = t;
        }
    }
    free(kept);
    return n;
}

int sym_filter_keep(const img_problem *ip, const sym_group *g, int t, const tsr_stop *stop,
                    unsigned char *keep)
{
    memset(keep, 1, (size_t)ip->nimages);
    if (t < 0)
        return 0;
    const img_type *ty = &ip->types[t];
    unsigned long work = 0;
    for (int i = ty->first; i < ty->first + ty->nimages; i++) {
        if (img_stopped(stop, &work, (unsigned long)g->n))
            return TSR_ECANCELED;
        keep[i] = orbit_rep(ip, g, t, i);
    }
    return 0;
}

/* Can the filtered search find this solution (its ids in any order)? */
static bool findable(const unsigned char *keep, const int *sol, int n)
{
    for (int i = 0; i < n; i++)
        if (!keep[sol[i]])
            return false;
    return true;
}

/* The image of the same cells as image i in type u (a twin of i's type). */
static int as_twin(const img_problem *ip, int u, int i)
{
    int j = ip->img_type[i] == u ? i
                                 : find_as(ip, u, img_cells_of(ip, i), img_colors(ip, i),
                                           ip->types[u].size);
    assert(j >= 0); /* twins have the same coloured placements */
    return j;
}

/* Put the images of each relabelling class among ids[0..n) in canonical
 * labelling (symmetry.h); false when a class's placements cannot be
 * labelled within its entries' counts.  tmp holds n ints. */
static bool canon_labels(const img_problem *ip, const sym_group *g, int *ids, int n, int *tmp)
{
    const int *rl = g->rlclass;
    for (int h = 0; h < ip->ntypes; h++) {
        if (rl[h] != h)
            continue;
        int k = 0, need = 0;
        for (int i = 0; i < n; i++)
            if (rl[ip->img_type[ids[i]]] == h)
                tmp[k++] = as_twin(ip, h, ids[i]);
        for (int u = h; u < ip->ntypes; u++)
            need += rl[u] == h ? ip->types[u].count_min : 0;
        sym_sort(tmp, k);
        int j = 0, slot = 0;
        for (int u = h; u < ip->ntypes; u++) {
            if (rl[u] != h)
                continue;
            need -= ip->types[u].count_min;
            int q = k - j - need < ip->types[u].count ? k - j - need : ip->types[u].count;
            if (q < ip->types[u].count_min)
                return false;
            for (int r = 0; r < q; r++, j++) {
                while (rl[ip->img_type[ids[slot]]] != h)
                    slot++;
                ids[slot++] = as_twin(ip, u, tmp[j]);
            }
        }
        if (j != k)
            return false; /* more placements than the entries take */
    }
    return true;
}

/* Element e's image of sol into out (unsorted), canonically labelled;
 * false when it is no solution.  tally: ntypes ints, tmp: n. */
static bool relabelled_image(const img_problem *ip, const sym_group *g, int e, const int *sol,
                             int n, int *out, int *tally, int *tmp)
{
    const int *map = g->imgmap + (size_t)e * ip->nimages;
    for (int i = 0; i < n; i++)
        if ((out[i] = map[sol[i]]) < 0)
            return false;
    if (!canon_labels(ip, g, out, n, tmp))
        return false;
    if (g->full[e])
        return true;
    memset(tally, 0, (size_t)ip->ntypes * sizeof *tally);
    for (int i = 0; i < n; i++)
        tally[ip->img_type[out[i]]]++;
    for (int t = 0; t < ip->ntypes; t++)
        if (g->rlclass[t] < 0 && (tally[t] < ip->types[t].count_min || tally[t] > ip->types[t].count))
            return false;
    return true;
}

bool sym_accept(const img_problem *ip, const sym_group *g, const unsigned char *keep,
                const int *sol, int n, int *scratch, uint64_t *stab)
{
    int *tally = scratch + n;
    int *tmp = tally + ip->ntypes;
    if (g->relabel && relabelled_image(ip, g, g->flip, sol, n, scratch, tally, tmp)) {
        /* matchable: canonically labelled, and the smallest such member */
        memcpy(scratch, sol, (size_t)n * sizeof *sol);
        if (!canon_labels(ip, g, scratch, n, tmp) || set_cmp(scratch, sol, n) != 0)
            return false;
        for (int e = 1; e < g->n; e++)
            if (relabelled_image(ip, g, e, sol, n, scratch, tally, tmp) &&
                set_cmp(scratch, sol, n) < 0 && (keep == NULL || findable(keep, scratch, n)))
                return false;
        return true;
    }
    uint64_t fixes = 1; /* the identity */
    for (int e = 1; e < g->n; e++) {
        if (!map_solution(ip, g, e, sol, n, scratch, tally))
            continue;
        int c = set_cmp(scratch, sol, n);
        if (c < 0 && (keep == NULL || findable(keep, scratch, n)))
            return false;
        fixes |= (uint64_t)(c == 0) << e;
    }
    if (stab != NULL)
        *stab = fixes;
    return true;
}

int sym_quick_accept(const img_problem *ip, const sym_group *g, int t, const unsigned char *keep,
                     unsigned char *quick)
{
    memset(quick, 0, (size_t)ip->nimages);
    if (t < 0 || keep == NULL || !g->all_full || g->relabel || ip->types[t].count != 1 ||
        ip->types[t].count_min != 1)
        return 0;
    for (int e = 0; e < g->n; e++)
        if (g->fixtype[(size_t)e * ip->ntypes + t] != t)
            return 0;
    int n = 0;
    const img_type *ty = &ip->types[t];
    for (int i = ty->first; i < ty->first + ty->nimages; i++) {
        bool free_orbit = keep[i];
        for (int e = 1; e < g->n && free_orbit; e++)
            free_orbit = g->imgmap[(size_t)e * ip->nimages + i] != i;
        quick[i] = free_orbit;
        n += free_orbit;
    }
    return n;
}

int sym_count(const sym_group *g, uint64_t mode_mask, uint64_t stab)
{
    assert(g->all_full && (stab & 1));
    int ng = g->n, nh = __builtin_popcountll(mode_mask);
    if (nh != 1 && 2 * nh != ng && nh != ng)
        return -1;
    int ns = __builtin_popcountll(stab), nhs = __builtin_popcountll(stab & mode_mask);
    assert((ng * nhs) % (nh * ns) == 0);
    return ng * nhs / (nh * ns);
}

int sym_expand(const img_problem *ip, const sym_group *g, uint64_t mode_mask, const int *sol,
               int nsol, int *out)
{
    if (g->relabel) { /* mirror mode: the accepted solution stands for its class */
        if (out != NULL) {
            memcpy(out, sol, (size_t)nsol * sizeof *sol);
            sym_sort(out, nsol);
        }
        return 1;
    }
    int n = g->n, nc = nsol;
    int *all = malloc((size_t)n * (size_t)(nc ? nc : 1) * sizeof *all); /* nc = 0: the empty solution */
    int *tally = malloc((size_t)(ip->ntypes ? ip->ntypes : 1) * sizeof *tally);
    bool *valid = malloc((size_t)n * sizeof *valid);
    if (all == NULL || tally == NULL || valid == NULL) {
        free(all);
        free(tally);
        free(valid);
        return TSR_ENOMEM;
    }
    for (int e = 0; e < n; e++)
        valid[e] = sym_apply(ip, g, e, sol, nc, all + (size_t)e * nc, tally);
    int count = 0;
    /* member e is reported when it is a solution, no solution h(e) with h in
     * the mode's group has a smaller key, and it is the first element with
     * its key */
    for (int e = 0; e < n; e++) {
        const int *ke = all + (size_t)e * nc;
        bool report = valid[e];
        for (int d = 0; d < e && report; d++)
            if (valid[d] && key_cmp(all + (size_t)d * nc, ke, nc) == 0)
                report = false;
        for (int h = 0; h < n && report; h++)
            if ((mode_mask >> h) & 1) {
                int he = g->mult[h * n + e];
                if (he >= 0 && valid[he] && key_cmp(all + (size_t)he * nc, ke, nc) < 0)
                    report = false;
            }
        if (report) {
            if (out != NULL) /* NULL: only count them */
                memcpy(out + (size_t)count * nc, ke, (size_t)nc * sizeof *ke);
            count++;
        }
    }
    free(all);
    free(tally);
    free(valid);
    return count;
}
