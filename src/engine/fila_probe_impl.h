/*
 * fila_probe_impl.h - the estimator's side of FILA, for one occupancy
 * width: Knuth's random descents (fila_probe), the exhaustive tail below
 * a descent (fila_enum), and the estimate below one placed image
 * (estimate_below).
 *
 * Included by fila_impl.h, where FL_WIDTH, MASK and FLN are defined and
 * choose (the search's own choice of list set at a node) comes before, so
 * that the descents branch exactly where the search does.  Not a public
 * header.
 */

/* The whole subtree below a node of weight w, for the estimator's exhaustive
 * tail: every fit counts w nodes, every leaf w times the solutions the
 * driver's leaf hook reports for it.  gids[0..ng) are the images placed by
 * FILA above (global ids); `from` the local image placed into the node
 * (alive_at), -1 if unknown. */
static void FLN(fila_enum)(fila *f, int p, MASK o, int from, double w, int *gids, int ng,
                           const fila_probe_hooks *h, fila_descent *out)
{
    const fila_plan *pl = f->plan;
    if (out->err != 0)
        return;
    if (h->stop != NULL && ++out->steps % FILA_PROBE_POLL == 0 && h->stop(h->ctx)) {
        out->err = TSR_ECANCELED;
        return;
    }
    if (p == pl->goal) {
        int m = h->leaf(h->ctx, gids, ng);
        if (m < 0)
            out->err = m;
        out->solutions += m > 0 ? w * m : 0;
        out->leaves += m > 0;
        return;
    }
    const uint32_t *off;
    const MASK *em;
    const int *ei;
    uint64_t shapes;
    if (f->wp[p]) {
        FLN(alive_at)(f, p, o, from >= 0 && f->wpe[p] && f->wpe[p + 1] ? from : -1);
        if (p == f->pstart)
            f->pstart = -1; /* no longer a descent's start */
    }
    if (!FLN(choose)(f, p, o, &off, &em, &ei, &shapes))
        return;
    bool check_parity = pl->parity_min > 0 && p - 1 >= pl->parity_min;
    for (; shapes && out->err == 0; shapes &= shapes - 1) {
        int s = __builtin_ctzll(shapes);
        int cls = check_parity ? pl->type_class[f->gtype[s]] : -1;
        bool last = --f->N[s] == 0;
        if (last)
            f->avail &= ~(1ull << s);
        for (uint32_t k = off[s]; k < off[s + 1]; k++) {
            if (o & em[k])
                continue;
            out->nodes += w;
            int img = ei[k];
            f->hp -= f->ipar[img];
            if (cls >= 0)
                f->pstate -= pl->class_radix[cls];
            if (!check_parity || parity_ok(f)) {
                gids[ng] = f->igid[img];
                FLN(fila_enum)(f, p - 1, o | em[k], img, w, gids, ng + 1, h, out);
            }
            f->hp += f->ipar[img];
            if (cls >= 0)
                f->pstate += pl->class_radix[cls];
        }
        if (last)
            f->avail |= 1ull << s;
        f->N[s]++;
    }
}

/* One random descent for Knuth's tree-size estimate: returns the sum over
 * the levels below of the product of the numbers of fitting images.  The
 * cell is the one the search would branch on, the image a uniform choice
 * among those that fit (each of them is a node the search counts); a child
 * the parity trigger rejects is a node without children, as in the search.
 * With hooks h, the descent also adds to *out: its nodes, and once it
 * reaches h->tail pieces left the whole subtree there (fila_enum) with the
 * solutions of its leaves. */
static double FLN(fila_probe)(fila *f, int p, MASK o, uint64_t *rng, const fila_probe_hooks *h,
                              fila_descent *out)
{
    const fila_plan *pl = f->plan;
    double prod = 1, sum = 0;
    int taken[FILA_MAX_BITS], gids[FILA_MAX_BITS], nt = 0;
    int hp = f->hp, pstate = f->pstate;
    bool dead = false;
    /* the image placed into the node (alive_at); the first node's bits
     * are the same for every descent from the same state */
    int from = -1, start = p;
    while (p > pl->goal && !dead && (h == NULL || p > h->tail)) {
        const uint32_t *off;
        const MASK *em;
        const int *ei;
        uint64_t shapes;
        if (f->wp[p] && p < start) {
            FLN(alive_at)(f, p, o, f->wpe[p] && f->wpe[p + 1] ? from : -1);
            if (p == f->pstart)
                f->pstart = -1; /* no longer a descent's start */
        } else if (f->wp[p] && (f->pstart != start || f->pstart_o != o)) {
            FLN(alive_at)(f, p, o, -1);
            f->pstart = start;
            f->pstart_o = o;
        }
        if (!FLN(choose)(f, p, o, &off, &em, &ei, &shapes))
            break;
        long n = 0;
        for (uint64_t sh = shapes; sh; sh &= sh - 1)
            for (uint32_t k = off[__builtin_ctzll(sh)], e = off[__builtin_ctzll(sh) + 1]; k < e; k++)
                n += !(o & em[k]);
        if (n == 0)
            break;
        prod *= (double)n;
        sum += prod;
        if (h != NULL)
            out->level[p - 1] += prod;
        *rng ^= *rng >> 12, *rng ^= *rng << 25, *rng ^= *rng >> 27;
        long pick = (long)((*rng * 2685821657736338717ull >> 20) % (uint64_t)n);
        int img = -1;
        for (uint64_t sh = shapes; sh && pick >= 0; sh &= sh - 1) {
            int s = __builtin_ctzll(sh);
            for (uint32_t k = off[s], e = off[s + 1]; k < e && pick >= 0; k++)
                if (!(o & em[k]) && pick-- == 0) {
                    o |= em[k];
                    if (--f->N[s] == 0)
                        f->avail &= ~(1ull << s);
                    img = ei[k];
                    gids[nt] = f->igid[img];
                    taken[nt++] = s;
                }
        }
        p--;
        from = img;
        if (pl->parity_min > 0 && p >= pl->parity_min) {
            int cls = pl->type_class[f->gtype[taken[nt - 1]]];
            f->hp -= f->ipar[img];
            if (cls >= 0)
                f->pstate -= pl->class_radix[cls];
            dead = !parity_ok(f);
        }
    }
    if (h != NULL) {
        out->nodes += sum;
        if (!dead)
            FLN(fila_enum)(f, p, o, from, prod, gids, nt, h, out);
    }
    while (nt > 0) {
        int s = taken[--nt];
        if (f->N[s]++ == 0)
            f->avail |= 1ull << s;
    }
    f->hp = hp;
    f->pstate = pstate;
    return sum;
}

/* Knuth's estimate below the node where local image li is placed on the
 * state fila_probe_begin built: the mean over `probes` descents. */
static double FLN(estimate_below)(fila *f, int li, int probes, uint64_t *rng)
{
    const fila_plan *pl = f->plan;
    int s = f->ishape[li], hp = f->hp, pstate = f->pstate;
    MASK o = FLN(fila_start)(f) | f->FLN(imask)[li];
    if (--f->N[s] == 0)
        f->avail &= ~(1ull << s);
    f->hp -= f->ipar[li];
    int cls = pl->parity_min > 0 ? pl->type_class[f->gtype[s]] : -1;
    if (cls >= 0)
        f->pstate -= pl->class_radix[cls];
    double total = 0;
    if (pl->parity_min <= 0 || f->top - 1 < pl->parity_min || parity_ok(f))
        for (int i = 0; i < probes; i++)
            total += FLN(fila_probe)(f, f->top - 1, o, rng, NULL, NULL);
    if (f->N[s]++ == 0)
        f->avail |= 1ull << s;
    f->hp = hp;
    f->pstate = pstate;
    return total / probes;
}
