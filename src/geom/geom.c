/*
 * geom.c - the orthogonal transforms of the cubic lattice and shape
 * normalisation (see geom.h).  Everything here is pure computation.
 */
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"

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
    geo_mat t[GEO_NTRANSFORMS];
    geo_transforms(t);
    int count = 0;
    for (int a = 0; a < nallowed; a++) {
        tsr_cell *dst = out + (size_t)count * n;
        for (int i = 0; i < n; i++)
            dst[i] = geo_apply(&t[allowed[a]], cells[i]);
        geo_normalize(dst, n);
        int dup = 0;
        for (int j = 0; j < count && !dup; j++)
            dup = memcmp(out + (size_t)j * n, dst, (size_t)n * sizeof *dst) == 0;
        if (!dup)
            count++;
    }
    return count;
}

int geo_allowed_transforms(enum tsr_rotations rot, bool mirror, int out[GEO_NTRANSFORMS])
{
    geo_mat t[GEO_NTRANSFORMS];
    geo_transforms(t);
    int n = 0;
    for (int i = 0; i < GEO_NTRANSFORMS; i++) {
        bool proper = i < GEO_NPROPER;
        /* the improper twin of a rotation is i - 24; it is allowed exactly
         * when its proper partner is and mirrors are on */
        int base = proper ? i : i - GEO_NPROPER;
        bool ok;
        switch (rot) {
        case TSR_ROT_ALL: ok = true; break;
        case TSR_ROT_ONE_SIDED: ok = geo_is_planar(&t[base]); break;
        default: ok = base == 0; break;
        }
        if (ok && (proper || mirror))
            out[n++] = i;
    }
    return n;
}
