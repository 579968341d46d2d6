/*
 * geom.c - the lattices: the cube's 48 orthogonal transforms, the plane
 * lattices' 12, each lattice's neighbours, colouring and translations, and
 * shape normalisation and orientations on any of them (see geom.h).
 * Everything here is pure computation; a descriptor is filled on demand
 * into the caller's memory.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "tessera/error.h"

static int det3(const geo_mat *t)
{
    const signed char(*m)[3] = t->m;
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

void geo_transforms(geo_mat out[GEO_NTRANSFORMS])
{
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    geo_mat all[GEO_NTRANSFORMS];
    int n = 0;
    for (int p = 0; p < 6; p++)
        for (int s = 0; s < 8; s++) {
            geo_mat t;
            memset(&t, 0, sizeof t);
            for (int r = 0; r < 3; r++)
                t.m[r][perms[p][r]] = (s >> r) & 1 ? -1 : 1;
            all[n++] = t;
        }
    /* proper ones first (identity is perms[0], s = 0, so it comes first),
     * then each proper rotation composed with x -> -x, in the same order */
    int k = 0;
    for (int i = 0; i < n; i++)
        if (det3(&all[i]) > 0)
            out[k++] = all[i];
    for (int i = 0; i < GEO_NPROPER; i++) {
        out[k] = out[i];
        for (int c = 0; c < 3; c++)
            out[k].m[0][c] = (signed char)-out[k].m[0][c];
        k++;
    }
}

bool geo_is_planar(const geo_mat *t)
{
    return t->m[2][2] == 1 && t->m[2][0] == 0 && t->m[2][1] == 0 && det3(t) > 0;
}

int geo_cell_cmp(const void *a, const void *b)
{
    const tsr_cell *p = a, *q = b;
    if (p->z != q->z)
        return p->z < q->z ? -1 : 1;
    if (p->y != q->y)
        return p->y < q->y ? -1 : 1;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return 0;
}

int geo_ccell_cmp(const void *a, const void *b)
{
    return geo_cell_cmp(&((const geo_ccell *)a)->c, &((const geo_ccell *)b)->c);
}

tsr_cell geo_min_corner(const tsr_cell *cells, int n)
{
    tsr_cell lo = cells[0];
    for (int i = 1; i < n; i++) {
        if (cells[i].x < lo.x) lo.x = cells[i].x;
        if (cells[i].y < lo.y) lo.y = cells[i].y;
        if (cells[i].z < lo.z) lo.z = cells[i].z;
    }
    return lo;
}

void geo_normalize(tsr_cell *cells, int n)
{
    if (n <= 0)
        return;
    tsr_cell lo = geo_min_corner(cells, n);
    for (int i = 0; i < n; i++) {
        cells[i].x -= lo.x;
        cells[i].y -= lo.y;
        cells[i].z -= lo.z;
    }
    qsort(cells, (size_t)n, sizeof *cells, geo_cell_cmp);
}

int geo_orientations(const tsr_cell *cells, int n, const int *allowed, int nallowed,
                     tsr_cell *out)
{
    geo_lattice L;
    geo_lattice_init(&L, TSR_LATTICE_CUBIC);
    return geo_lattice_orientations(&L, cells, n, allowed, nallowed, out);
}

int geo_orientations_colored(const tsr_cell *cells, const unsigned char *colors, int n,
                             const int *allowed, int nallowed, tsr_cell *out,
                             unsigned char *ocolors)
{
    geo_lattice L;
    geo_lattice_init(&L, TSR_LATTICE_CUBIC);
    return geo_lattice_orientations_colored(&L, cells, colors, n, allowed, nallowed, out,
                                            ocolors);
}

int geo_allowed_transforms(enum tsr_rotations rot, bool mirror, int out[GEO_NTRANSFORMS])
{
    geo_lattice L;
    geo_lattice_init(&L, TSR_LATTICE_CUBIC);
    return geo_lattice_allowed(&L, rot, mirror, out);
}

geo_mat geo_compose(const geo_mat *a, const geo_mat *b)
{
    geo_mat r;
    for (int i = 0; i < 3; i++) {
        int t = a->t[i];
        for (int j = 0; j < 3; j++) {
            int s = 0;
            for (int k = 0; k < 3; k++)
                s += a->m[i][k] * b->m[k][j];
            r.m[i][j] = (signed char)s;
            t += a->m[i][j] * b->t[j];
        }
        r.t[i] = (signed char)t;
    }
    return r;
}

/* ---- Lattices ---------------------------------------------------------- */

const char *const tsr_lattice_names[] = {"cubic", "triangular", "hexagonal", NULL};

int tsr_lattice_parse(const char *name)
{
    for (int i = 0; tsr_lattice_names[i] != NULL; i++)
        if (strcmp(name, tsr_lattice_names[i]) == 0)
            return i;
    return -1;
}

/* The plane lattices' group from its turn r (order 6) and flip f: r^k at
 * index k, r^k f at 6 + k. */
static void plane_group(geo_lattice *L, const geo_mat *r, const geo_mat *f)
{
    geo_mat rk = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {0, 0, 0}};
    for (int k = 0; k < 6; k++) {
        L->map[k] = rk;
        L->map[6 + k] = geo_compose(&rk, f);
        L->planar[k] = 1;
        L->planar[6 + k] = 0;
        L->twin[k] = (unsigned char)(6 + k);
        L->twin[6 + k] = (unsigned char)k;
        rk = geo_compose(r, &rk);
    }
    L->ntransforms = L->nmotions = 12;
    L->translate = 2;
}

static void set_nbr(geo_lattice *L, int kind, int n, const signed char (*d)[3])
{
    L->nnbr[kind] = n;
    memcpy(L->nbr[kind], d, (size_t)n * sizeof *d);
}

void geo_lattice_init(geo_lattice *L, enum tsr_lattice id)
{
    memset(L, 0, sizeof *L);
    L->id = id;
    L->name = tsr_lattice_names[id];
    L->nkinds = 1;
    if (id == TSR_LATTICE_TRIANGULAR) {
        /* Puzzler's: a turn by 60 degrees (x, y, z) -> (-y-1, x+y+z, 1-z),
         * a flip (x, y, z) -> (-(x+y+z), y, z) */
        const geo_mat r = {{{0, -1, 0}, {1, 1, 1}, {0, 0, -1}}, {-1, 0, 1}};
        const geo_mat f = {{{-1, -1, -1}, {0, 1, 0}, {0, 0, 1}}, {0, 0, 0}};
        plane_group(L, &r, &f);
        static const signed char up[3][3] = {{0, 0, 1}, {-1, 0, 1}, {0, -1, 1}};
        static const signed char down[3][3] = {{0, 0, -1}, {1, 0, -1}, {0, 1, -1}};
        set_nbr(L, 0, 3, up);
        set_nbr(L, 1, 3, down);
        L->nkinds = 2;
        L->coloured = true;
    } else if (id == TSR_LATTICE_HEXAGONAL) {
        /* Puzzler's: a turn (x, y) -> (-y, x+y), a flip (x, y) -> (-x, x+y) */
        const geo_mat r = {{{0, -1, 0}, {1, 1, 0}, {0, 0, 1}}, {0, 0, 0}};
        const geo_mat f = {{{-1, 0, 0}, {1, 1, 0}, {0, 0, 1}}, {0, 0, 0}};
        plane_group(L, &r, &f);
        static const signed char d[6][3] = {{-1, 0, 0}, {0, -1, 0}, {1, -1, 0},
                                            {1, 0, 0},  {0, 1, 0},  {-1, 1, 0}};
        set_nbr(L, 0, 6, d);
    } else {
        geo_transforms(L->map);
        L->ntransforms = GEO_NTRANSFORMS;
        L->nmotions = GEO_NPROPER;
        for (int i = 0; i < GEO_NTRANSFORMS; i++) {
            L->planar[i] = geo_is_planar(&L->map[i]);
            L->twin[i] = (unsigned char)(i < GEO_NPROPER ? i + GEO_NPROPER : i - GEO_NPROPER);
        }
        L->translate = 3;
        /* the order images.h's neighbour ids use: -x, -y, -z, +x, +y, +z */
        static const signed char d[6][3] = {{-1, 0, 0}, {0, -1, 0}, {0, 0, -1},
                                            {1, 0, 0},  {0, 1, 0},  {0, 0, 1}};
        set_nbr(L, 0, 6, d);
        L->coloured = true;
    }
}

bool geo_lattice_has(const geo_lattice *L, tsr_cell c)
{
    switch (L->id) {
    case TSR_LATTICE_TRIANGULAR: return c.z == 0 || c.z == 1;
    case TSR_LATTICE_HEXAGONAL: return c.z == 0;
    default: return true;
    }
}

int geo_lattice_neighbours(const geo_lattice *L, tsr_cell c, tsr_cell out[GEO_MAX_NBR])
{
    int kind = L->nkinds > 1 ? c.z : 0;
    assert(kind >= 0 && kind < L->nkinds);
    for (int i = 0; i < L->nnbr[kind]; i++) {
        const signed char *d = L->nbr[kind][i];
        out[i] = (tsr_cell){c.x + d[0], c.y + d[1], c.z + d[2]};
    }
    return L->nnbr[kind];
}

int geo_lattice_colour(const geo_lattice *L, tsr_cell c)
{
    if (!L->coloured)
        return -1;
    if (L->id == TSR_LATTICE_TRIANGULAR)
        return c.z & 1;
    return (c.x + c.y + c.z) & 1;
}

void geo_lattice_normalize(const geo_lattice *L, tsr_cell *cells, int n)
{
    if (n <= 0)
        return;
    if (L->translate == 3) {
        geo_normalize(cells, n);
        return;
    }
    tsr_cell lo = geo_min_corner(cells, n);
    for (int i = 0; i < n; i++) {
        cells[i].x -= lo.x;
        cells[i].y -= lo.y;
    }
    qsort(cells, (size_t)n, sizeof *cells, geo_cell_cmp);
}

int geo_lattice_allowed(const geo_lattice *L, enum tsr_rotations rot, bool mirror,
                        int out[GEO_NTRANSFORMS])
{
    unsigned char on[GEO_NTRANSFORMS] = {0};
    for (int i = 0; i < L->nmotions; i++) {
        bool ok = rot == TSR_ROT_ALL || (rot == TSR_ROT_ONE_SIDED && L->planar[i]) || i == 0;
        if (ok) {
            on[i] = 1;
            if (mirror)
                on[L->twin[i]] = 1;
        }
    }
    int n = 0;
    for (int i = 0; i < L->ntransforms; i++)
        if (on[i])
            out[n++] = i;
    return n;
}

int geo_lattice_orientations(const geo_lattice *L, const tsr_cell *cells, int n,
                             const int *allowed, int nallowed, tsr_cell *out)
{
    int count = 0;
    for (int a = 0; a < nallowed; a++) {
        tsr_cell *dst = out + (size_t)count * n;
        for (int i = 0; i < n; i++)
            dst[i] = geo_apply(&L->map[allowed[a]], cells[i]);
        geo_lattice_normalize(L, dst, n);
        int dup = 0;
        for (int j = 0; j < count && !dup; j++)
            dup = memcmp(out + (size_t)j * n, dst, (size_t)n * sizeof *dst) == 0;
        if (!dup)
            count++;
    }
    return count;
}

typedef struct colored {
    tsr_cell c;
    unsigned char color;
} colored;

static int colored_cmp(const void *a, const void *b)
{
    return geo_cell_cmp(&((const colored *)a)->c, &((const colored *)b)->c);
}

int geo_lattice_orientations_colored(const geo_lattice *L, const tsr_cell *cells,
                                     const unsigned char *colors, int n, const int *allowed,
                                     int nallowed, tsr_cell *out, unsigned char *ocolors)
{
    if (colors == NULL)
        return geo_lattice_orientations(L, cells, n, allowed, nallowed, out);
    colored *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (v == NULL)
        return TSR_ENOMEM;
    int count = 0;
    for (int a = 0; a < nallowed; a++) {
        tsr_cell *dst = out + (size_t)count * n;
        unsigned char *dcol = ocolors + (size_t)count * n;
        for (int i = 0; i < n; i++)
            dst[i] = geo_apply(&L->map[allowed[a]], cells[i]);
        /* normalised as geo_lattice_orientations does, each colour kept
         * with its cell through the translation and the sort */
        tsr_cell lo = geo_min_corner(dst, n);
        if (L->translate != 3)
            lo.z = 0;
        for (int i = 0; i < n; i++)
            v[i] = (colored){{dst[i].x - lo.x, dst[i].y - lo.y, dst[i].z - lo.z}, colors[i]};
        qsort(v, (size_t)n, sizeof *v, colored_cmp);
        for (int i = 0; i < n; i++) {
            dst[i] = v[i].c;
            dcol[i] = v[i].color;
        }
        int dup = 0;
        for (int j = 0; j < count && !dup; j++)
            dup = memcmp(out + (size_t)j * n, dst, (size_t)n * sizeof *dst) == 0 &&
                  memcmp(ocolors + (size_t)j * n, dcol, (size_t)n) == 0;
        if (!dup)
            count++;
    }
    free(v);
    return count;
}
