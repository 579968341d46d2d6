/*
 * fila_impl.h - FILA list building and recursion for one occupancy width.
 *
 * Included by fila.c with FL_WIDTH defined as 64 or 128; every name below
 * gets the width as a suffix.  Not a public header.
 *
 * Invariant of the recursion: `o` has a bit set for every occupied cell of
 * the region and for every bit position beyond the region, so ~o is exactly
 * the set of holes; f->N[s] copies of shape s are left, and bit s of
 * f->avail is set exactly when N[s] > 0 (when no shape has two copies,
 * f->single, the search keeps avail alone and N stays as it started).
 * Each list set carries the mask of shapes it has images for, so loops
 * visit only shapes both present and available.
 */
#define FLN__(x, w) x##w
#define FLN_(x, w) FLN__(x, w)
#define FLN(x) FLN_(x, FL_WIDTH)

#if FL_WIDTH == 64
#define MASK uint64_t
static inline int ctz64(uint64_t m) { return __builtin_ctzll(m); }
static inline int popc64(uint64_t m) { return __builtin_popcountll(m); }
static inline unsigned ext64(uint64_t v, uint64_t m) { return (unsigned)pext64(v, m); }
#else
#define MASK u128
static inline int ctz128(u128 m)
{
    uint64_t lo = (uint64_t)m;
    return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((uint64_t)(m >> 64));
}
static inline int popc128(u128 m)
{
    return __builtin_popcountll((uint64_t)m) + __builtin_popcountll((uint64_t)(m >> 64));
}
static inline unsigned ext128(u128 v, u128 m)
{
    uint64_t lo = pext64((uint64_t)v, (uint64_t)m);
    return (unsigned)(lo | pext64((uint64_t)(v >> 64), (uint64_t)(m >> 64))
                                << __builtin_popcountll((uint64_t)m));
}
#endif

/* Append one list set for bit b: every image in imgs[0..n) (grouped by
 * shape, ascending) whose neighbour mask avoids z.  The entries' images
 * and masks grow in *eimg and *emask (capacities *capi and *capm), the
 * masks with room for FILA_PAD more past the last entry. */
static int FLN(emit)(fila *f, uint32_t *off, uint64_t *pres, int **eimg, size_t *capi,
                     MASK **emask, size_t *capm, long *ne, const int *imgs, const uint64_t *nm,
                     int n, unsigned z)
{
    size_t end = (size_t)*ne + (size_t)n; /* entries, should all of imgs fit */
    if ((n > 0 && base_grow((void **)eimg, capi, end - 1, sizeof **eimg, 4096, 0) != 0) ||
        base_grow((void **)emask, capm, end + FILA_PAD - 1, sizeof **emask, 4096, 0) != 0)
        return TSR_ENOMEM;
    /* every image is written and the end moves past those that avoid z:
     * whether one does is a coin toss, so no branch decides it */
    int *ei = *eimg, s = 0;
    MASK *em = *emask;
    const MASK *im = f->FLN(imask);
    long e = *ne;
    for (int i = 0; i < n; i++) {
        int img = imgs[i];
        while (s <= f->ishape[img])
            off[s++] = (uint32_t)e;
        ei[e] = img;
        em[e] = im[img];
        e += (nm[i] & z) == 0;
    }
    *ne = e;
    while (s <= f->Q)
        off[s++] = (uint32_t)e;
    *pres = 0;
    for (s = 0; s < f->Q; s++)
        if (off[s + 1] > off[s])
            *pres |= 1ull << s;
    return 0;
}

/* Room for `entries` list entries in an entry array pair (emit's), when
 * that is at most FILA_PRESIZE_MAX (else they grow as emit writes). */
static int FLN(presize)(int **eimg, size_t *capi, MASK **emask, size_t *capm, size_t entries)
{
    if (entries == 0 || entries > FILA_PRESIZE_MAX)
        return 0;
    if (base_grow((void **)eimg, capi, entries - 1, sizeof **eimg, entries, 0) != 0 ||
        base_grow((void **)emask, capm, entries + FILA_PAD - 1, sizeof **emask,
                  entries + FILA_PAD, 0) != 0)
        return TSR_ENOMEM;
    return 0;
}

static inline void FLN(count_add)(MASK c[3], MASK m);

static int FLN(fila_build)(fila *f)
{
    const fila_plan *pl = f->plan;
    int V = f->V, Q = f->Q;
    bool need_u = false, need_o = false, need_e = false, need_s = false;
    for (int p = 0; p <= pl->maxp; p++) {
        need_u |= pl->heur[p] == 'e' || pl->heur[p] == 's';
        need_o |= pl->heur[p] == 'f';
        need_e |= pl->heur[p] == 'e';
        need_s |= pl->heur[p] == 's';
    }
    /* image masks and neighbour masks */
    for (int i = 0; i < f->nimg; i++) {
        MASK m = 0;
        const int *c = img_cells_of(f->ip, f->igid[i]);
        for (int k = 0; k < img_size(f->ip, f->igid[i]); k++)
            m |= (MASK)1 << f->bitof[c[k]];
        f->FLN(imask)[i] = m;
    }
    for (int b = 0; b < V; b++) {
        MASK m = 0, later = 0;
        for (int i = 0; i < f->nnb[b]; i++) {
            m |= (MASK)1 << f->nbb[b][i];
            if (f->nbb[b][i] > b)
                later |= (MASK)1 << f->nbb[b][i];
        }
        f->FLN(nbm)[b] = m;
        f->FLN(onbm)[b] = later;
        MASK um = 0, rest = m; /* the first nof_max of them */
        for (int k = 0; rest != 0 && (pl->nof_max <= 0 || k < pl->nof_max); k++) {
            um |= rest & ((MASK)0 - rest);
            rest &= rest - 1;
        }
        f->FLN(uzm)[b] = pl->nof ? um : 0;
        f->FLN(ozm)[b] = pl->nof ? later : 0;
    }
    /* the neighbour offsets (struct fila: delta), when the plan asks for
     * them and they are few */
    f->ndelta = 0;
    bool deltas = pl->box == 0 && pl->shift_count;
    for (int b = 0; b < V && deltas; b++)
        for (int i = 0; i < f->nnb[b] && deltas; i++) {
            int d = f->nbb[b][i] - b, k = 0;
            while (k < f->ndelta && f->delta[k] != d)
                k++;
            if (k == f->ndelta && k < FILA_MAX_DELTAS) {
                f->delta[f->ndelta++] = d;
                f->FLN(dmask)[k] = 0;
            }
            if (k == FILA_MAX_DELTAS)
                deltas = false; /* too many: count hole by hole */
            else
                f->FLN(dmask)[k] |= (MASK)1 << b;
        }
    if (!deltas)
        f->ndelta = 0;
    if (pl->box > 0)
        for (int a = 0; a < 3; a++) {
            MASK hp = 0, hm = 0;
            for (int b = 0; b < V; b++) {
                int coord = b / pl->stride[a] % pl->ext[a];
                if (coord + 1 < pl->ext[a])
                    hp |= (MASK)1 << b;
                if (coord > 0)
                    hm |= (MASK)1 << b;
            }
            f->FLN(hasp)[a] = hp;
            f->FLN(hasm)[a] = hm;
        }
    /* E's neighbour counts per image (candidates_e) */
    f->ecount = need_e && pl->box == 0;
    if (f->ecount && base_grow((void **)&f->FLN(dcnt), &f->FLN(cap_dcnt), 3 * (size_t)f->nimg,
                               sizeof *f->FLN(dcnt), 256, 0) != 0)
        return TSR_ENOMEM;
    for (int i = 0; f->ecount && i < f->nimg; i++) {
        /* a bit's neighbours in the image: one for each of the image's
         * cells whose neighbour it is */
        MASK *d = f->FLN(dcnt) + 3 * (size_t)i;
        d[0] = d[1] = d[2] = 0;
        for (MASK m = f->FLN(imask)[i]; m; m &= m - 1)
            FLN(count_add)(d, f->FLN(nbm)[FLN(ctz)(m)]);
    }
    /* images covering each bit, in image order (so grouped by shape) */
    long total = 0;
    for (int b = 0; b <= V; b++)
        f->cover_off[b] = 0;
    for (int i = 0; i < f->nimg; i++)
        for (MASK m = f->FLN(imask)[i]; m; m &= m - 1)
            f->cover_off[FLN(ctz)(m) + 1]++, total++;
    for (int b = 0; b < V; b++)
        f->cover_off[b + 1] += f->cover_off[b];
    int *fill = malloc((size_t)(V + 1) * sizeof *fill);
    int *tmp = realloc(f->cover_img, (size_t)(total ? total : 1) * sizeof *tmp);
    if (fill == NULL || tmp == NULL) {
        free(fill);
        if (tmp)
            f->cover_img = tmp;
        return TSR_ENOMEM;
    }
    f->cover_img = tmp;
    memcpy(fill, f->cover_off, (size_t)(V + 1) * sizeof *fill);
    for (int i = 0; i < f->nimg; i++)
        for (MASK m = f->FLN(imask)[i]; m; m &= m - 1)
            f->cover_img[fill[FLN(ctz)(m)]++] = i;
    free(fill);

    /* no list is longer than the images covering its cell, or than a
     * shape's images where pieces are weighed (S always, E when the plan
     * says): which levels do, and which keep their bits from the parent's */
    f->maxlist = 1;
    for (int b = 0; b < V; b++)
        if (f->cover_off[b + 1] - f->cover_off[b] > f->maxlist)
            f->maxlist = f->cover_off[b + 1] - f->cover_off[b];
    f->pieces = need_e && pl->pieces;
    f->pseg = f->pieces || need_s;
    for (int p = 0; p <= f->top + 1 && p <= FILA_MAX_BITS; p++) {
        char h = p <= pl->maxp ? pl->heur[p] : 0;
        f->wpe[p] = h == 'e' && f->pieces && p >= pl->pieces;
        f->wp[p] = f->wpe[p] || (h == 's' && f->pseg);
    }
    for (int i = 0, first = 0; f->pseg && i <= f->nimg; i++)
        if (i == f->nimg || f->ishape[i] != f->ishape[first]) {
            if (i - first > f->maxlist)
                f->maxlist = i - first;
            first = i;
        }
    f->fitstride = f->maxlist + FILA_PAD;
    uint32_t *fb = realloc(f->fitbuf, ((size_t)f->top + 1) * 2 * (size_t)f->fitstride * sizeof *fb);
    if (fb == NULL)
        return TSR_ENOMEM;
    f->fitbuf = fb;
    fila_kid *kb = realloc(f->kidbuf, ((size_t)f->top + 1) * (size_t)f->fitstride * sizeof *kb);
    if (kb == NULL)
        return TSR_ENOMEM;
    f->kidbuf = kb;
    for (int q = 0; q <= f->top; q++) {
        f->fitp[q] = fb + (size_t)q * 2 * (size_t)f->fitstride;
        f->kidp[q] = kb + (size_t)q * (size_t)f->fitstride;
    }
    size_t nus = 0, nos = 0; /* list sets */
    for (int b = 0; b < V; b++) {
        f->ubase[b] = (int)nus;
        f->obase[b] = (int)nos;
        nus += (size_t)f->freen[b] + 1;
        nos += (size_t)f->ofreen[b] + 1;
    }
    /* room for the entries at once, as many as the lists could hold (the
     * images covering each bit, once per state of its neighbours), up to
     * FILA_PRESIZE_MAX entries: growing by doubling copied them again and
     * again (a fifth of a small puzzle's page faults); room reserved
     * and never written costs no memory */
    size_t ubound = (size_t)f->nimg, obound = 0;
    for (int b = 0; b < V; b++) {
        size_t n = (size_t)(f->cover_off[b + 1] - f->cover_off[b]);
        ubound += n * ((size_t)f->freen[b] + 1);
        obound += n * ((size_t)f->ofreen[b] + 1);
    }
    if ((need_u && FLN(presize)(&f->uimg, &f->cap_uimg, &f->FLN(umask), &f->FLN(cap_umask),
                                ubound) != 0) ||
        (need_o && FLN(presize)(&f->oimg, &f->cap_oimg, &f->FLN(omask), &f->FLN(cap_omask),
                                obound) != 0))
        return TSR_ENOMEM;
    int rc = 0;
    if (need_u) {
        uint32_t *o = realloc(f->uoff, nus * (size_t)(Q + 1) * sizeof *o);
        if (o != NULL)
            f->uoff = o;
        uint64_t *pr = realloc(f->upres, nus * sizeof *pr);
        if (pr != NULL)
            f->upres = pr;
        if (o == NULL || pr == NULL)
            return TSR_ENOMEM;
        f->nu = 0;
        for (int b = 0; b < V && rc == 0; b++) {
            const int *imgs = f->cover_img + f->cover_off[b];
            int n = f->cover_off[b + 1] - f->cover_off[b];
            /* a bit's list sets: its images once per state of its neighbours */
            if (img_stopped(f->build_stop, &f->build_work, (unsigned long)n * (f->freen[b] + 1u)))
                return TSR_ECANCELED;
            for (int i = 0; i < n; i++)
                f->nmask_scratch[i] = FLN(ext)(f->FLN(imask)[imgs[i]], f->FLN(uzm)[b]);
            unsigned fm = f->freen[b], z = 0;
            do {
                rc = FLN(emit)(f, f->uoff + ((size_t)f->ubase[b] + z) * (Q + 1),
                               f->upres + f->ubase[b] + z, &f->uimg, &f->cap_uimg,
                               &f->FLN(umask), &f->FLN(cap_umask), &f->nu, imgs,
                               f->nmask_scratch, n, z);
                z = (z - fm) & fm;
            } while (z != 0 && rc == 0);
        }
    }
    if (f->pseg && rc == 0) {
        /* every image of each shape, after the lists, and for E the
         * overlaps' table */
        if ((f->plocal == NULL && pieces_words(f) != 0) ||
            (f->pieces && f->pconf == NULL && pieces_table(f) != 0))
            return TSR_ENOMEM;
        f->pbase = f->nu;
        size_t end = (size_t)f->nu + (size_t)f->nimg;
        if (base_grow((void **)&f->uimg, &f->cap_uimg, end, sizeof *f->uimg, 4096, 0) != 0 ||
            base_grow((void **)&f->FLN(umask), &f->FLN(cap_umask), end + FILA_PAD - 1,
                      sizeof(MASK), 4096, 0) != 0 ||
            base_grow((void **)&f->palive, &f->cap_palive,
                      ((size_t)f->top + 1) * (size_t)f->pq - 1, sizeof *f->palive, 256, 0) != 0)
            return TSR_ENOMEM;
        int s = 0;
        for (int i = 0; i < f->nimg; i++) {
            while (s <= f->ishape[i])
                f->poff[s++] = (uint32_t)f->nu;
            f->uimg[f->nu] = i;
            f->FLN(umask)[f->nu++] = f->FLN(imask)[i];
            f->plocal[f->igid[i]] = i;
        }
        while (s <= Q)
            f->poff[s++] = (uint32_t)f->nu;
    }
    if (need_o && rc == 0) {
        uint32_t *o = realloc(f->ooff, nos * (size_t)(Q + 1) * sizeof *o);
        if (o != NULL)
            f->ooff = o;
        uint64_t *pr = realloc(f->opres, nos * sizeof *pr);
        if (pr != NULL)
            f->opres = pr;
        if (o == NULL || pr == NULL)
            return TSR_ENOMEM;
        f->no = 0;
        int *imgs = malloc((size_t)(f->nimg ? f->nimg : 1) * sizeof *imgs);
        if (imgs == NULL)
            return TSR_ENOMEM;
        for (int b = 0; b < V && rc == 0; b++) {
            unsigned long units = (unsigned long)(f->cover_off[b + 1] - f->cover_off[b]);
            if (img_stopped(f->build_stop, &f->build_work, units * (f->ofreen[b] + 1u))) {
                rc = TSR_ECANCELED;
                break;
            }
            int n = 0;
            for (int k = f->cover_off[b]; k < f->cover_off[b + 1]; k++) {
                int img = f->cover_img[k];
                if (FLN(ctz)(f->FLN(imask)[img]) == b)
                    imgs[n++] = img;
            }
            for (int i = 0; i < n; i++)
                f->nmask_scratch[i] = FLN(ext)(f->FLN(imask)[imgs[i]], f->FLN(onbm)[b]);
            unsigned fm = f->ofreen[b], z = 0;
            do {
                rc = FLN(emit)(f, f->ooff + ((size_t)f->obase[b] + z) * (Q + 1),
                               f->opres + f->obase[b] + z, &f->oimg, &f->cap_oimg,
                               &f->FLN(omask), &f->FLN(cap_omask), &f->no, imgs,
                               f->nmask_scratch, n, z);
                z = (z - fm) & fm;
            } while (z != 0 && rc == 0);
        }
        free(imgs);
    }
    /* the padding past the last entry reads as images that never fit */
    if (rc == 0 && need_u && f->FLN(umask) != NULL)
        memset(f->FLN(umask) + f->nu, 0xff, FILA_PAD * sizeof(MASK));
    if (rc == 0 && need_o && f->FLN(omask) != NULL)
        memset(f->FLN(omask) + f->no, 0xff, FILA_PAD * sizeof(MASK));
    return rc;
}

/* The occupancy FILA starts from: every bit but the open cells set. */
static MASK FLN(fila_start)(const fila *f)
{
    MASK o = ~(MASK)0;
    for (int b = 0; b < f->V; b++)
        if (f->gcell[b] >= 0)
            o &= ~((MASK)1 << b);
    return o;
}

#ifdef TSR_DEBUG
/* The invariant of the recursion (debug builds, configure --enable-debug)
 * at a node with p pieces left, occupancy o and the shapes with copies
 * left in avail: o is the start's occupancy (closed cells, bits beyond the
 * region) plus the images placed above the node, stack[p .. top), which
 * overlap neither it nor each other; N[s] copies of shape s are left, p in
 * all, and avail has bit s exactly when N[s] > 0.  It costs O(top + Q), so
 * it runs where the tick hook does and around a search, not at each node. */
static bool FLN(fila_sane)(const fila *f, int p, MASK o, uint64_t avail)
{
    MASK want = FLN(fila_start)(f);
    for (int k = p; k < f->top; k++) {
        MASK m = f->FLN(imask)[f->stack[k]];
        if (want & m)
            return false;
        want |= m;
    }
    int left = 0;
    for (int s = 0; s < f->Q; s++) {
        if (f->single) { /* N holds the copies where the search started */
            if (f->N[s] < 0 || f->N[s] > 1 || ((avail >> s & 1) && f->N[s] != 1))
                return false;
            left += (int)(avail >> s & 1);
            continue;
        }
        if (f->N[s] < 0 || ((avail >> s & 1) != 0) != (f->N[s] > 0))
            return false;
        left += f->N[s];
    }
    return o == want && left == p && (f->Q == 64 || avail >> f->Q == 0);
}
#endif

/* Every cell's open neighbours counted at once: a bit-sliced counter
 * (c[2] c[1] c[0], up to 7) to which each direction adds the set of cells
 * whose neighbour that way is a hole. */
static inline void FLN(count_add)(MASK c[3], MASK m)
{
    MASK carry0 = c[0] & m;
    c[0] ^= m;
    MASK carry1 = c[1] & carry0;
    c[1] ^= carry0;
    c[2] |= carry1;
}

/* The holes whose count is the smallest. */
static inline MASK FLN(count_least)(const MASK c[3], MASK holes)
{
    for (int n = 0; n <= 6; n++) {
        MASK e = holes & (n & 1 ? c[0] : ~c[0]) & (n & 2 ? c[1] : ~c[1]) &
                 (n & 4 ? c[2] : ~c[2]);
        if (e)
            return e;
    }
    return holes;
}

/* Box numbering: the holes with the fewest open neighbours, the
 * directions being a stride along each axis. */
static inline MASK FLN(fewest_neighbours)(const fila *f, MASK holes)
{
    MASK c[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++) {
        int st = f->plan->stride[a];
        if (f->plan->ext[a] < 2)
            continue;
        FLN(count_add)(c, (holes >> st) & f->FLN(hasp)[a]);
        FLN(count_add)(c, (holes << st) & f->FLN(hasm)[a]);
    }
    return FLN(count_least)(c, holes);
}

/* Every hole's open neighbours, bit-sliced into c, on another numbering:
 * a shift per neighbour offset (struct fila: delta) where there are few
 * enough of them, else hole by hole.  Out of line, so that the cubes'
 * candidate step stays as small as it was. */
static __attribute__((noinline)) void FLN(hole_counts)(const fila *f, MASK holes, MASK c[3])
{
    c[0] = c[1] = c[2] = 0;
    for (int k = 0; k < f->ndelta; k++) {
        int d = f->delta[k]; /* bit b: b's neighbour at b + d is a hole */
        FLN(count_add)(c, (d > 0 ? holes >> d : holes << -d) & f->FLN(dmask)[k]);
    }
    for (MASK hh = f->ndelta > 0 ? 0 : holes; hh; hh &= hh - 1) {
        int v = FLN(ctz)(hh), n = FLN(popc)(f->FLN(nbm)[v] & holes);
        MASK bit = (MASK)1 << v;
        c[0] |= n & 1 ? bit : 0;
        c[1] |= n & 2 ? bit : 0;
        c[2] |= n & 4 ? bit : 0;
    }
#ifdef TSR_DEBUG
    /* the offsets count what counting each hole's neighbours counts */
    for (MASK hh = holes; hh; hh &= hh - 1) {
        int v = FLN(ctz)(hh);
        assert((int)((c[0] >> v & 1) | (c[1] >> v & 1) << 1 | (c[2] >> v & 1) << 2) ==
               FLN(popc)(f->FLN(nbm)[v] & holes));
    }
#endif
}

/* Fits at bit b (unordered lists) for the shapes in avail, counting no
 * further than `limit`. */
static inline int FLN(count_fits)(const fila *f, int b, MASK o, uint64_t avail, int limit)
{
    size_t ls = (size_t)f->ubase[b] + FLN(ext)(o, f->FLN(uzm)[b]);
    const uint32_t *off = f->uoff + ls * (f->Q + 1);
    const MASK *em = f->FLN(umask);
    int cnt = 0;
    for (uint64_t sh = f->upres[ls] & avail; sh; sh &= sh - 1) {
        int s = __builtin_ctzll(sh);
        cnt += FLN(count)(em, o, off[s], off[s + 1]);
        if (cnt >= limit) /* enough to lose to the best so far */
            return cnt;
    }
    return cnt;
}

/* The ordered list set at the first hole (POF), for the shapes in avail. */
static inline const uint32_t *FLN(choose_f)(const fila *f, MASK o, uint64_t avail,
                                            uint64_t *shapesp)
{
    int b = FLN(ctz)(~o);
    size_t ls = (size_t)f->obase[b] + FLN(ext)(o, f->FLN(ozm)[b]);
    *shapesp = f->opres[ls] & avail;
    return f->ooff + ls * (f->Q + 1);
}

/* The holes the E heuristic (h == 'e': those with the fewest open
 * neighbours) or the S heuristic (every hole) compares, in bit order, into
 * cand[]; returns how many. */
static int FLN(candidates)(const fila *f, char h, MASK o, int *cand)
{
    const fila_plan *pl = f->plan;
    MASK holes = ~o;
    int nc = 0;
    if (h == 'e' && pl->box > 0) {
        for (MASK hh = FLN(fewest_neighbours)(f, holes); hh; hh &= hh - 1)
            cand[nc++] = FLN(ctz)(hh);
    } else if (h == 'e') {
        MASK c[3];
        FLN(hole_counts)(f, holes, c);
        for (MASK hh = FLN(count_least)(c, holes); hh; hh &= hh - 1)
            cand[nc++] = FLN(ctz)(hh);
    } else {
        for (MASK hh = holes; hh; hh &= hh - 1)
            cand[nc++] = FLN(ctz)(hh);
    }
    return nc;
}

/* The pieces weighed at a node (struct fila: wp): level p's bits of the
 * images that fit o (palive), from level p + 1's less those local image
 * `from` (placed between the two) overlaps (E's pieces, wpe, at both
 * levels: only they have the overlaps' table), or when from < 0 tested
 * one by one. */
static inline void FLN(alive_at)(fila *f, int p, MASK o, int from)
{
    const int pq = f->pq;
    uint64_t *al = f->palive + (size_t)p * (size_t)pq;
    if (from >= 0) {
        const uint64_t *pa = al + pq, *cf = f->pconf + (size_t)f->igid[from] * (size_t)pq;
#ifdef __AVX2__
        for (int i = 0; i < pq; i += 4) /* pq is a multiple of 4 */
            _mm256_storeu_si256((__m256i *)(al + i),
                                _mm256_andnot_si256(_mm256_loadu_si256((const __m256i *)(cf + i)),
                                                    _mm256_loadu_si256((const __m256i *)(pa + i))));
#else
        for (int i = 0; i < pq; i++)
            al[i] = pa[i] & ~cf[i];
#endif
        return;
    }
    const img_problem *ip = f->ip;
    const MASK *em = f->FLN(umask);
    memset(al, 0, (size_t)pq * sizeof *al);
    for (uint32_t k = f->poff[0]; k < f->poff[f->Q]; k++) {
        int g = f->igid[f->uimg[k]], t = ip->img_type[g], y = g - ip->types[t].first;
        al[t * f->pw + y / 64] |= (uint64_t)((o & em[k]) == 0) << (y % 64);
    }
}

/* The shape of avail with the fewest fits at level p (the first on ties)
 * in *bsp and their number in *pminp (bs -1 when none may be branched
 * on); false when a shape fits nowhere (no solution lies below the node).
 * A shape with copies left is not branched on: its copies would be
 * placed in every order, each tiling found once per order. */
static inline bool FLN(piece_least)(const fila *f, int p, uint64_t avail, uint32_t *pminp,
                                    int *bsp)
{
    const int pw = f->pw;
    const uint64_t *al = f->palive + (size_t)p * (size_t)f->pq;
    uint32_t pmin = UINT32_MAX;
    int bs = -1;
    for (uint64_t sh = avail; sh; sh &= sh - 1) {
        int s = __builtin_ctzll(sh);
        const uint64_t *w = al + f->gtype[s] * pw;
        uint32_t m = 0;
        for (int q = 0; q < pw; q++)
            m += (uint32_t)__builtin_popcountll(w[q]);
        if (m == 0)
            return false;
        if (m < pmin && (f->single || f->N[s] == 1)) {
            pmin = m;
            bs = s;
        }
    }
    if (bs >= 0) /* else the caller's bound stands */
        *pminp = pmin;
    *bsp = bs;
    return true;
}

/* The unordered list set at the hole the E heuristic (h == 'e') or the S
 * heuristic picks at a node with p pieces left, for the shapes in avail
 * (or E's piece set, poff, when a piece fits fewer ways); NULL when the
 * node has no child. */
static const uint32_t *FLN(choose_u)(const fila *f, char h, int p, MASK o, uint64_t avail,
                                     uint64_t *shapesp)
{
    /* the pieces: the fewest fits of a shape, as gather_best finds them
     * (the caller has the level's bits: alive_at) */
    uint32_t pm = (1u << 30) - 1;
    int bs = -1;
    if (f->wp[p] && !FLN(piece_least)(f, p, avail, &pm, &bs))
        return NULL;
    int pmin = (int)pm;
    int cand[FILA_MAX_BITS], nc = FLN(candidates)(f, h, o, cand);
    /* with a single candidate there is nothing to compare: a hole nothing
     * fits shows up as a node without children just the same (unless a
     * piece may be the better branch) */
    bool lone = nc == 1 && bs < 0;
    int best = lone ? cand[0] : -1, fmin = lone ? 1 : pmin + 1;
    for (int i = 0; i < nc && !lone && fmin > 0; i++) {
        int cnt = FLN(count_fits)(f, cand[i], o, avail, fmin);
        if (cnt < fmin) {
            fmin = cnt;
            best = cand[i];
        }
    }
    if (fmin == 0)
        return NULL;
    if (best < 0) { /* the piece */
        *shapesp = 1ull << bs;
        return f->poff;
    }
    size_t ls = (size_t)f->ubase[best] + FLN(ext)(o, f->FLN(uzm)[best]);
    *shapesp = f->upres[ls] & avail;
    return f->uoff + ls * (f->Q + 1);
}

/* Choose the list set to branch on at a node with p pieces left: the
 * first hole (ordered lists) or the hole the E or S heuristic picks
 * (unordered lists).  Returns false when E or S finds a hole nothing fits.
 * Where pieces are weighed (wp), the caller has level p's bits (alive_at). */
static inline bool FLN(choose)(const fila *f, int p, MASK o, const uint32_t **offp,
                               const MASK **emp, const int **eip, uint64_t *shapesp)
{
    char h = f->plan->heur[p];
    if (h == 'f') {
        *offp = FLN(choose_f)(f, o, f->avail, shapesp);
        *emp = f->FLN(omask);
        *eip = f->oimg;
        return true;
    }
    *offp = FLN(choose_u)(f, h, p, o, f->avail, shapesp);
    *emp = f->FLN(umask);
    *eip = f->uimg;
    return *offp != NULL;
}

#include "engine/fila_probe_impl.h" /* the estimator's descents */

/* The FILA recursion at a node with p pieces left, occupancy o and the
 * shapes with copies left in avail (f->avail is not kept up to date here:
 * a register is cheaper, and only this recursion runs during a search).
 * When the node uses the ordered lists (f->ahead[p]) its caller has chosen
 * its list set: off and shapes, the shapes of avail it has images for
 * (never none); otherwise they are unused.
 *
 * A node first gathers its children, the entries of the chosen list set
 * that fit, into its slice of fitbuf (counting its attempts and fits
 * there, once), then searches them in order.  Every level publishes that
 * loop in f->lv[p] (the children and the one being searched) so that, from
 * the tick, the driver can read the position for progress (fila_progress)
 * and give the untried children of any level away (fila_donate, which
 * sets LV_CUT to end the loop after the current child).  Nothing is
 * accumulated per node: the weight of a level's children is derived from
 * the published loop when it is needed, and only the rare levels that gave
 * work away, or have a child that did, report what they searched
 * (level_end). */
static void FLN(fila_solve)(fila *f, int p, MASK o, uint64_t avail, const uint32_t *off,
                           uint64_t shapes);

/* The E heuristic's holes, as candidates gives them, at a node of the
 * search with p pieces left on a numbering other than the box's.  There
 * each hole's open neighbours cost a shift per neighbour offset, or a
 * count per hole (the polyhex ring has 14 offsets: a tenth of its time
 * went there).  Instead the counts of every bit are kept, bit-sliced, in
 * f->lc[p]: an E node whose parent is an E node takes the parent's
 * counts less, for each bit, its neighbours in the image placed between
 * them (dcnt, a 3-bit subtraction), else counts afresh (hole_counts).  A
 * bit that the image filled may wrap below zero: it is no hole below this
 * node, and holes are all that count_least reads. */
static int FLN(candidates_e)(fila *f, int p, MASK o, int *cand)
{
    MASK holes = ~o, *c = f->FLN(lc)[p];
    if (p < f->solve_top && f->heur[p + 1] == 'e') {
        const MASK *a = f->FLN(lc)[p + 1], *d = f->FLN(dcnt) + 3 * (size_t)f->stack[p];
        MASK x0 = a[0] ^ d[0], b0 = ~a[0] & d[0]; /* difference and borrow, bit 0 */
        MASK x1 = a[1] ^ d[1], b1 = (~a[1] & d[1]) | (~x1 & b0);
        c[0] = x0;
        c[1] = x1 ^ b0;
        c[2] = a[2] ^ d[2] ^ b1;
    } else {
        FLN(hole_counts)(f, holes, c);
    }
    int nc = 0;
    for (MASK hh = FLN(count_least)(c, holes); hh; hh &= hh - 1)
        cand[nc++] = FLN(ctz)(hh);
#ifdef TSR_DEBUG
    int want[FILA_MAX_BITS], nw = FLN(candidates)(f, 'e', o, want);
    assert(nw == nc && memcmp(want, cand, (size_t)nc * sizeof *cand) == 0);
#endif
    return nc;
}

/* The E and S heuristics at a node: the hole with the fewest children, the
 * first on ties.  Each candidate hole's children are gathered into one of
 * the level's two slices of fitbuf, stopping once there are as many as the
 * best's, so the winner's are at hand: returns how many, the slice in *fitp
 * and the winner's attempts in *triedp.  A lone candidate is not compared:
 * a hole nothing fits shows up as a node without children just the same.
 * When E weighs the pieces, a piece with fewer fits than every hole is
 * the node's branch instead (its fits are at hand in the piece lists, its
 * attempts all its images).  Returns UINT32_MAX when the node is dead
 * before any attempt counts (no hole, several and one that nothing fits,
 * or a piece that fits nowhere).  Kept out of line so that the
 * recursion's own frame stays small. */
static __attribute__((noinline)) uint32_t FLN(gather_best)(fila *f, int p, MASK o,
                                                            uint64_t avail, uint32_t **fitp,
                                                            uint32_t *triedp)
{
    const MASK *em = f->FLN(umask);
    uint32_t *fit = *fitp, *spare = fit + f->fitstride;
    /* with pieces, a hole wins when it has no more fits than the piece */
    uint32_t pmin = UINT32_MAX - 1;
    int bs = -1;
    if (f->wp[p]) {
        /* the parent's bits when both weigh E's pieces in this search */
        bool inherit = p < f->solve_top && f->wpe[p] && f->wpe[p + 1];
        FLN(alive_at)(f, p, o, inherit ? f->stack[p] : -1);
        if (!FLN(piece_least)(f, p, avail, &pmin, &bs))
            return UINT32_MAX;
    }
    int cand[FILA_MAX_BITS];
    int nc = f->ecount && f->heur[p] == 'e' ? FLN(candidates_e)(f, p, o, cand)
                                            : FLN(candidates)(f, f->heur[p], o, cand);
    uint32_t n = pmin + 1, tried = 0;
    for (int c = 0; c < nc; c++) {
        size_t ls = (size_t)f->ubase[cand[c]] + FLN(ext)(o, f->FLN(uzm)[cand[c]]);
        uint32_t t, m = FLN(gather_set)(em, o, f->uoff + ls * (f->Q + 1), f->upres[ls] & avail,
                                        spare, &t, n);
        if (m < n) {
            uint32_t *x = fit;
            fit = spare;
            spare = x;
            n = m;
            tried = t;
            if (n == 0)
                break;
        }
    }
    if (nc == 0 || (n == 0 && nc > 1))
        return UINT32_MAX;
    if (n == pmin + 1) { /* no hole beat the piece: its fits, from its bits */
        int t = f->gtype[bs], first = f->ip->types[t].first;
        const uint64_t *al = f->palive + (size_t)p * (size_t)f->pq + t * f->pw;
        n = 0;
        for (int w = 0; w < f->pw; w++)
            for (uint64_t b = al[w]; b; b &= b - 1) {
                int g = first + 64 * w + __builtin_ctzll(b);
                fit[n++] = (uint32_t)(f->pbase + f->plocal[g]);
            }
        tried = f->poff[bs + 1] - f->poff[bs];
    }
    *fitp = fit;
    *triedp = tried;
    return n;
}

/* One child of a node, for fila_solve's loop: the entry k of em/ei, the
 * i-th of the node's children.  When the children use the ordered lists
 * (`ahead`), the first pass found the child alive: co is its occupancy and
 * coff/csh its list set and that set's shapes left; otherwise they are
 * unused.  Returns whether the loop ends here (a stop, or the level given
 * away). */
static inline __attribute__((always_inline)) bool
FLN(child)(fila *f, int p, MASK o, uint64_t avail, fila_level *lv, uint32_t i, uint32_t k,
           const MASK *em, const int *ei, MASK co, const uint32_t *coff, uint64_t csh,
           const bool parity, const bool single, const bool ahead)
{
    const fila_plan *pl = f->plan;
    lv->i = i;
    int img = ei[k], s = f->ishape[img];
    int cls = -1;
    if (parity) {
        cls = pl->type_class[f->gtype[s]];
        f->hp -= f->ipar[img];
        if (cls >= 0)
            f->pstate -= pl->class_radix[cls];
        if (!parity_ok(f)) {
            f->hp += f->ipar[img];
            if (cls >= 0)
                f->pstate += pl->class_radix[cls];
            return false;
        }
    }
    uint64_t left;
    if (single)
        left = avail & ~(1ull << s);
    else
        left = --f->N[s] == 0 ? avail & ~(1ull << s) : avail;
    f->stack[p - 1] = img;
    /* stop is clear here (a child that set it ended the loop), so only the
     * tick can set it before this child's subtree */
    bool go = true;
    if ((++f->tick & FILA_TICK_MASK) == 0) {
#ifdef TSR_DEBUG
        assert(FLN(fila_sane)(f, p - 1, o | em[k], left));
#endif
        f->cur = p; /* the levels cur .. solve_top are live */
        if (f->hooks->tick(f->hooks->ctx)) {
            f->stop = f->event = 1;
            go = false;
        }
    }
    if (go) {
        if (ahead)
            FLN(fila_solve)(f, p - 1, co, left, coff, csh);
        else
            FLN(fila_solve)(f, p - 1, o | em[k], left, NULL, 0);
    }
    if (!single)
        f->N[s]++;
    if (parity) {
        f->hp += f->ipar[img];
        if (cls >= 0)
            f->pstate += pl->class_radix[cls];
    }
    if (f->event) {
        if (f->dirty)
            level_take_dirty(f, lv);
        if (f->stop || (lv->flags & LV_CUT))
            return true;
    }
    return false;
}

/* May the two shapes of `left` (one bit: two copies of it) fill the holes
 * of occupancy co?  The two-piece table's answer (pairs.h): false means no
 * solution lies below. */
static inline bool FLN(pairs_may)(const fila *f, MASK co, uint64_t left)
{
    MASK x = ~co; /* the holes, in bit order */
    uint64_t lo = pdep64((uint64_t)x, f->pg[0]), hi = 0;
#if FL_WIDTH == 64
    if (f->pgn < 64 && f->pg[1])
        hi = pdep64(x >> f->pgn, f->pg[1]);
#else
    hi = pdep64((uint64_t)(x >> f->pgn), f->pg[1]);
#endif
    uint64_t salt = f->psalt[__builtin_ctzll(left)] + f->psalt[63 - __builtin_clzll(left)];
    return pairs_may(f->plan->pairs, lo, hi, salt);
}

/* A first pass's look at a child of level p (children) with occupancy co
 * and the shapes `left`: its list set (its first hole's) in *lsp, and
 * that set's shapes, or 0 when the pass drops the child uncounted: no
 * list set, the two-piece table says no (`pairs`), or, where the child's
 * children are leaves (`last`), none fits; then their attempts are added
 * to *deadp, as the child would have counted them.  `last` gathers them
 * into the child's slice, where the child's own gather will find them. */
static inline __attribute__((always_inline)) uint64_t
FLN(child_set)(fila *f, int p, MASK co, uint64_t left, const bool pairs, const bool last,
               uint32_t *lsp, uint64_t *deadp)
{
    int b = FLN(ctz)(~co);
    uint32_t ls = (uint32_t)f->obase[b] + FLN(ext)(co, f->FLN(ozm)[b]);
    uint64_t csh = f->opres[ls] & left;
    *lsp = ls;
    if (pairs && csh && !FLN(pairs_may)(f, co, left))
        csh = 0;
    if (last && csh) {
        uint32_t t;
        if (FLN(gather_set)(f->FLN(omask), co, f->ooff + (size_t)ls * ((size_t)f->Q + 1), csh,
                            f->fitp[p - 1], &t, 1) == 0) {
            *deadp += t;
            csh = 0;
        }
    }
    return csh;
}

/* The loop over a node's children fit[0 .. n) (entries of em/ei), for
 * fila_solve.  `parity` (whether the parity trigger checks a placement
 * here), `single` (f->single: no copies to count) and `ahead` (whether the
 * children use the ordered lists, so that this loop picks their list sets)
 * are constants in each of the eight copies fila_solve calls, which keeps
 * those tests out of the loop.
 *
 * With `ahead`, a child whose first hole has no list for the shapes left
 * has no attempt and no fit: nothing to count, no call.  Whether a child is
 * such a one is close to a coin toss, so a first pass, without a branch,
 * picks the live children into the level's slice of kidbuf (with their
 * list sets, which it looks up anyway), and the second searches them.
 * Nothing a child's search changes is read by the first pass, so the two
 * search the same children in the same order as one loop would.  With
 * `pairs` (the children have two pieces left and the plan has the
 * two-piece table) the first pass also drops the children whose holes the
 * table says their two pieces cannot fill, uncounted, as a child without
 * a list set is. */
static inline __attribute__((always_inline)) void
FLN(children)(fila *f, int p, MASK o, uint64_t avail, fila_level *lv, const uint32_t *fit,
              uint32_t n, const MASK *em, const int *ei, const bool parity, const bool single,
              const bool ahead, const bool last, const bool pairs)
{
    if (!ahead) {
        for (uint32_t i = 0; i < n; i++)
            if (FLN(child)(f, p, o, avail, lv, i, fit[i], em, ei, 0, NULL, 0, parity, single,
                           false))
                break;
        return;
    }
    const size_t Q1 = (size_t)f->Q + 1;
    fila_kid *kid = f->kidp[p];
    uint32_t m = 0;
    uint64_t dead_tries = 0; /* `last`: the attempts of the children found dead here */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = fit[i];
        int s = f->ishape[ei[k]];
        uint64_t left = avail & ~(1ull << s);
        if (!single && f->N[s] > 1)
            left = avail;
        MASK co = o | em[k];
        uint32_t ls;
        uint64_t csh = FLN(child_set)(f, p, co, left, pairs, last, &ls, &dead_tries);
        kid[m].FLN(w) = (FLN(fila_kid)){.co = co, .csh = csh, .i = i, .ls = ls};
        m += csh != 0;
    }
    if (last)
        f->attempts[p - 1] += dead_tries;
    for (uint32_t j = 0; j < m; j++) {
        const FLN(fila_kid) *c = &kid[j].FLN(w);
        if (FLN(child)(f, p, o, avail, lv, c->i, fit[c->i], em, ei, c->co, f->ooff + c->ls * Q1,
                       c->csh, parity, single, true))
            break;
    }
}

/* The FILA recursion at a node with p pieces left, occupancy o and the
 * shapes with copies left in avail (f->avail is not kept up to date here:
 * a register is cheaper, and only this recursion runs during a search).
 * When the node uses the ordered lists (f->ahead[p]) its caller has chosen
 * its list set: off and shapes, the shapes of avail it has images for
 * (never none); otherwise they are unused.
 *
 * A node first gathers its children, the entries of the chosen list set
 * that fit, into its slice of fitbuf (counting its attempts and fits
 * there, once), then searches them in order.  Every level publishes that
 * loop in f->lv[p] (the children and the one being searched) so that, from
 * the tick, the driver can read the position for progress (fila_progress)
 * and give the untried children of any level away (fila_donate, which
 * sets LV_CUT to end the loop after the current child).  Nothing is
 * accumulated per node: the weight of a level's children is derived from
 * the published loop when it is needed, and only the rare levels that gave
 * work away, or have a child that did, report what they searched
 * (level_end). */
static void FLN(fila_node)(fila *f, int p, MASK o, uint64_t avail, const uint32_t *off,
                           uint64_t shapes);
static void FLN(memo_node)(fila *f, int p, MASK o, uint64_t avail, const uint32_t *off,
                           uint64_t shapes);

/* The global ids of the images placed above level p, into f->gids;
 * returns how many. */
static inline int FLN(path_gids)(fila *f, int p)
{
    int n = 0;
    for (int k = f->top - 1; k >= p; k--)
        f->gids[n++] = f->igid[f->stack[k]];
    return n;
}

/* A leaf below level p, its n images in f->gids: reported, and whether it
 * ended the run. */
static inline bool FLN(leaf_at)(fila *f, int p, int n)
{
    f->cur = p + 1; /* the live levels, should the leaf end the run */
    if (f->hooks->leaf(f->hooks->ctx, f->gids, n)) {
        f->stop = f->event = 1;
        return true;
    }
    return false;
}

static void FLN(fila_solve)(fila *f, int p, MASK o, uint64_t avail, const uint32_t *off,
                           uint64_t shapes)
{
    if (p == f->goal) {
        if (f->hooks->leaves != NULL) { /* only counted */
            ++*f->hooks->leaves;
            if (f->mrec)
                memo_add(&f->memo, NULL);
            return;
        }
        int n = FLN(path_gids)(f, p);
        if (f->mrec)
            memo_add(&f->memo, f->gids + n - f->memo.level);
        FLN(leaf_at)(f, p, n);
        return;
    }
    if (p == f->memo.on) {
        FLN(memo_node)(f, p, o, avail, off, shapes);
        return;
    }
    FLN(fila_node)(f, p, o, avail, off, shapes);
}

/* The search at a node that is not a leaf (fila_solve). */
static inline __attribute__((always_inline)) void
FLN(fila_node)(fila *f, int p, MASK o, uint64_t avail, const uint32_t *off, uint64_t shapes)
{
    const MASK *em;
    const int *ei;
    /* two slices per level: the E and S heuristics gather each candidate
     * hole's children into one while the best so far is in the other */
    uint32_t *fit = f->fitp[p];
    uint32_t n, tried = 0;
    if (f->ahead[p]) { /* the ordered lists: the caller chose the list set */
        em = f->FLN(omask);
        ei = f->oimg;
        n = FLN(gather_set)(em, o, off, shapes, fit, &tried, UINT32_MAX);
    } else {
        em = f->FLN(umask);
        ei = f->uimg;
        n = FLN(gather_best)(f, p, o, avail, &fit, &tried);
        if (n == UINT32_MAX)
            return; /* no attempt, no fit counted */
    }
    f->attempts[p] += tried;
    f->fits[p] += n;
    if (n == 0)
        return;
    fila_level *lv = &f->lv[p];
    lv->fit = fit; /* lv->ei is set where the search starts */
    lv->n = n;
    lv->flags = 0;
#define FL_CHILDREN(parity, single, ahead, last, pairs) \
    FLN(children)(f, p, o, avail, lv, fit, n, em, ei, parity, single, ahead, last, pairs)
    unsigned mode = f->mode[p];
    if (mode == 3) /* the common cases first: conditional jumps predict better */
        FL_CHILDREN(false, true, true, false, false);
    else if (mode == 2)
        FL_CHILDREN(false, true, false, false, false);
    else switch (mode) { /* 2 and 3 are done above */
    case 11: FL_CHILDREN(false, true, true, true, false); break; /* one level a search */
    case 19: FL_CHILDREN(false, true, true, false, true); break;  /* one level a search */
    case 17: FL_CHILDREN(false, false, true, false, true); break; /* one level a search */
    case 0: FL_CHILDREN(false, false, false, false, false); break;
    case 1: FL_CHILDREN(false, false, true, false, false); break;
    case 4: FL_CHILDREN(true, false, false, false, false); break;
    case 5: FL_CHILDREN(true, false, true, false, false); break;
    case 6: FL_CHILDREN(true, true, false, false, false); break;
    default: FL_CHILDREN(true, true, true, false, false); break;
    }
#undef FL_CHILDREN
    if (f->event && lv->flags && !f->stop)
        level_end(f, p);
}

/* A node with memo.level pieces left: reported from the memo when it has
 * been searched before, else searched and remembered (memo.h). */
static __attribute__((noinline)) void FLN(memo_node)(fila *f, int p, MASK o, uint64_t avail,
                                                    const uint32_t *off, uint64_t shapes)
{
    memo *m = &f->memo;
    memo_key k;
    int j = 0;
    for (int b = 0; b < FL_WIDTH; b += 32)
        k.w[j++] = (uint32_t)(o >> b);
    uint64_t pk = avail;
    if (!f->single) { /* the copies left too: at most 6 shapes, 10 bits each */
        pk = 0;
        for (uint64_t a = avail; a; a &= a - 1) {
            int s = __builtin_ctzll(a);
            pk = pk << 10 | (uint64_t)s << 4 | (uint64_t)f->N[s];
        }
    }
    k.w[j] = (uint32_t)pk;
    k.w[j + 1] = (uint32_t)(pk >> 32);
    uint64_t at = memo_find(m, &k);
    if (at != 0) {
        const uint32_t *img;
        uint32_t ns = memo_take(m, at, f->attempts, f->fits, &img);
        if (f->hooks->leaves != NULL) { /* only counted: the record holds no images */
            *f->hooks->leaves += ns;
            return;
        }
        if (ns == 0)
            return;
        int n = FLN(path_gids)(f, p);
        for (uint32_t i = 0; i < ns; i++, img += p) {
            for (int q = 0; q < p; q++)
                f->gids[n + q] = (int)img[q];
            if (FLN(leaf_at)(f, p, n + p))
                return;
        }
        return;
    }
    uint64_t att[MEMO_MAX_LEVEL + 1], fit[MEMO_MAX_LEVEL + 1];
    for (int q = 1; q <= p; q++) {
        att[q] = f->attempts[q];
        fit[q] = f->fits[q];
    }
    unsigned long cuts = f->cuts;
    memo_open(m, &k);
    f->mrec = m->open != 0;
    FLN(fila_node)(f, p, o, avail, off, shapes);
    f->mrec = false;
    for (int q = 1; q <= p; q++) {
        att[q] = f->attempts[q] - att[q];
        fit[q] = f->fits[q] - fit[q];
    }
    memo_close(m, !f->stop && f->cuts == cuts, att, fit);
}

/* The search below a node (the entry of fila_search and fila_replay). */
static void FLN(fila_solve_at)(fila *f, int p, MASK o, uint64_t avail)
{
    uint64_t shapes = 0;
    const uint32_t *off = f->ahead[p] ? FLN(choose_f)(f, o, avail, &shapes) : NULL;
    if (!f->ahead[p] || shapes)
        FLN(fila_solve)(f, p, o, avail, off, shapes);
}

/* Would the first pass of level p (children) have kept its child of
 * occupancy co with the shapes `left` (child_set)?  Work given away from
 * level p includes the children it dropped, as its weight needs; the task
 * of one must count nothing either. */
static bool FLN(kept)(fila *f, int p, MASK co, uint64_t left)
{
    unsigned mode = f->mode[p];
    uint32_t ls;
    uint64_t dead = 0; /* counted by the pass that gave the task away */
    return !(mode & 1) || FLN(child_set)(f, p, co, left, mode & 16, mode & 8, &ls, &dead) != 0;
}

/* A task's path inside FILA: at each level take the forced image (the one
 * of the task's images that covers the cell the heuristic picks), with the
 * weight the full search gives it, so that the task's subtree is searched
 * and accounted exactly as in a run without tasks.  When the forced images
 * are not a path of this search (a partial assembly given by hand), they are
 * all placed at once instead.  Where the replay ends, the task's own search
 * starts: its level and weight go to f->solve_top and f->w_top. */
static void FLN(fila_replay)(fila *f, int p, MASK o, double w)
{
    const fila_plan *pl = f->plan;
    const uint32_t *off = NULL;
    const MASK *em = NULL;
    const int *ei = NULL;
    uint64_t shapes = 0;
    int fimg = -1;
    long n = 0;
    if (f->wp[p] && p > pl->goal)
        FLN(alive_at)(f, p, o, -1);
    if (p > pl->goal && FLN(choose)(f, p, o, &off, &em, &ei, &shapes))
        for (uint64_t sh = shapes; sh; sh &= sh - 1) {
            int s = __builtin_ctzll(sh);
            for (uint32_t k = off[s]; k < off[s + 1]; k++)
                if (!(o & em[k])) { /* a child of the node, as fila_solve counts them */
                    n++;
                    if (f->iforced[ei[k]])
                        fimg = ei[k];
                }
        }
    int placed[FILA_MAX_BITS], np = 0;
    if (fimg >= 0)
        placed[np++] = fimg;
    else /* not on this search's path: place everything left */
        for (int i = 0; i < f->nimg; i++)
            if (f->iforced[i])
                placed[np++] = i;
    for (int i = 0; i < np; i++) {
        int img = placed[i], s = f->ishape[img];
        o |= f->FLN(imask)[img];
        if (--f->N[s] == 0)
            f->avail &= ~(1ull << s);
        f->hp -= f->ipar[img];
        int cls = pl->parity_min > 0 ? pl->type_class[f->gtype[s]] : -1;
        if (cls >= 0)
            f->pstate -= pl->class_radix[cls];
        f->stack[p - 1 - i] = img;
        f->iforced[img] = 0;
    }
    f->nforced -= np;
    double cw = fimg >= 0 ? w / (double)n : w;
    int q = p - np;
    bool parity = pl->parity_min <= 0 || q < pl->parity_min || parity_ok(f);
    if (parity && f->nforced > 0) {
        FLN(fila_replay)(f, q, o, cw);
    } else {
        f->solve_top = q;
        f->w_top = cw;
        /* a child of this search's node p: searched only if p's first
         * pass kept it (kept), as in a run without tasks */
        if (parity && (fimg < 0 || FLN(kept)(f, p, o, f->avail)))
            FLN(fila_solve_at)(f, q, o, f->avail);
    }
    for (int i = np - 1; i >= 0; i--) {
        int img = placed[i], s = f->ishape[img];
        f->iforced[img] = 1;
        if (f->N[s]++ == 0)
            f->avail |= 1ull << s;
        f->hp += f->ipar[img];
        int cls = pl->parity_min > 0 ? pl->type_class[f->gtype[s]] : -1;
        if (cls >= 0)
            f->pstate += pl->class_radix[cls];
    }
    f->nforced += np;
}

/* Give away the untried children of live level q (weight cw each), those
 * after the one being searched, each as a task (the images placed above
 * it plus the child).  The level counted their placements when it
 * gathered them.  Returns the number of tasks. */
static int FLN(fila_donate_level)(fila *f, int q, double cw, int *images, int nprefix,
                                  fila_donate_fn donate, void *ctx)
{
    fila_level *lv = &f->lv[q];
    int n = nprefix;
    for (int k = f->top - 1; k >= q; k--) /* the levels above q */
        images[n++] = f->igid[f->stack[k]];
    int tasks = 0;
    for (uint32_t i = lv->i + 1; i < lv->n; i++) {
        images[n] = f->igid[lv->ei[lv->fit[i]]];
        donate(ctx, images, n + 1, cw);
        tasks++;
    }
    lv->flags |= LV_CUT;
    f->event = 1;
    f->cuts++;
    lv->ngiven = (uint32_t)tasks;
    return tasks;
}

#undef MASK
#undef FLN
#undef FLN_
#undef FLN__
