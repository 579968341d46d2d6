/*
 * fila.c - FILA context: the parts independent of the occupancy width.
 *
 * The list building and the recursion live in fila_impl.h, which this file
 * includes twice: once with a 64-bit occupancy field and once with a
 * 128-bit one.  A context serves one search run and is rebuilt at every
 * handoff from DLX, reusing its buffers.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#if defined(__BMI2__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "base/base.h"
#include "engine/fila.h"
#include "engine/memo.h"
#include "engine/pairs.h"

typedef unsigned __int128 u128;

/* A bit's list sets are numbered densely: ubase[b] + ilsi (unordered
 * lists) or obase[b] + ilsi (ordered), the ILSI at most freen[b] or
 * ofreen[b]; each list set has Q + 1 offsets into the entry arrays (one
 * per shape and the end).  Dense, the offsets of the ordered lists fit the
 * first-level cache even when most cells have few open neighbours. */

/* The loop of a live level, published for progress and for giving its
 * untried siblings away (fila_solve).  A level gathers its fitting entries
 * first (its children, in the order it searches them) and walks them; a
 * child whose subtree gave work away is "dirty": it counts the weight it
 * actually searched, not its whole share, so a level keeps the count and
 * the sum of its dirty children. */
typedef struct fila_level {
    const uint32_t *fit;  /* the children: entries of the list set that fit */
    const int *ei;        /* the lists' images (ordered or unordered) */
    uint32_t n;           /* children */
    uint32_t i;           /* the child being searched */
    unsigned char flags;  /* LV_CUT, LV_DIRTY */
    uint32_t ngiven;      /* LV_CUT: siblings given away */
    uint32_t ndirty;      /* LV_DIRTY: dirty children so far ... */
    double dirty_done;    /* ... and the weight they searched */
} fila_level;

enum { LV_CUT = 1, LV_DIRTY = 2 };

/* A child that a first pass over a node's children found alive (its first
 * hole has a list for the shapes left, fila_solve): which child it is, its
 * occupancy, and its list set and that set's shapes left.  The pass keeps
 * the test of every child out of the loop that searches them, where it
 * was a branch close to a coin toss. */
typedef struct { uint64_t co, csh; uint32_t i, ls; } fila_kid64;
typedef struct { u128 co; uint64_t csh; uint32_t i, ls; } fila_kid128;
typedef union { fila_kid64 w64; fila_kid128 w128; } fila_kid; /* FLN(w) picks the width */

/* Neighbour offsets E may count by shifts (struct fila: delta) */
#define FILA_MAX_DELTAS 12

/* How often (placements) the recursion calls the tick hook: often enough
 * that a pause or a checkpoint takes effect within milliseconds, rarely
 * enough that the call costs nothing measurable (about 1 ms apart at
 * 2e7 placements a second). */
#define FILA_TICK_MASK 0x3fff

struct fila {
    const img_problem *ip;
    const fila_plan *plan;
    const fila_hooks *hooks;
    int width;                    /* 64 or 128 for the current build */
    int V, Q;                     /* bits, shapes */
    uint64_t avail;               /* shapes with copies left */
    int gcell[FILA_MAX_BITS];     /* bit -> global cell */
    int *bitof;                   /* global cell -> bit, -1 */
    /* open neighbours of each bit: direction k (ILSI bit) and neighbour bit */
    signed char nnb[FILA_MAX_BITS], nbb[FILA_MAX_BITS][6];
    signed char onnb[FILA_MAX_BITS]; /* of those, how many come later in bit order */
    /* ILSI: the occupancy of a bit's open neighbours (unordered lists: the
     * first plan->nof_max of them; ordered: the later ones), packed in bit
     * order (pext); freen/ofreen are the ILSI values possible (0 without
     * NOF) */
    unsigned char freen[FILA_MAX_BITS], ofreen[FILA_MAX_BITS];
    int ubase[FILA_MAX_BITS], obase[FILA_MAX_BITS];
    int gtype[FILA_MAX_SHAPES];   /* shape -> type */
    int N[FILA_MAX_SHAPES];
    /* local images, grouped by shape */
    int nimg, cap_img;
    int *igid, *ishape;
    signed char *ipar;
    /* list sets */
    uint32_t *uoff, *ooff;
    uint64_t *upres, *opres;      /* per list set: shapes it has images for */
    int *uimg, *oimg;
    long nu, no;
    /* typed masks */
    uint64_t *imask64, *umask64, *omask64, nbm64[FILA_MAX_BITS], onbm64[FILA_MAX_BITS];
    u128 *imask128, *umask128, *omask128, nbm128[FILA_MAX_BITS], onbm128[FILA_MAX_BITS];
    /* capacities (base_grow) of the entry arrays: one each, so that a
     * context built at one width and then the other grows the right one */
    size_t cap_uimg, cap_oimg, cap_umask64, cap_omask64, cap_umask128, cap_omask128;
    /* the neighbours whose occupancy picks a bit's list set: nbm/onbm with
     * NOF, nothing without (so the ILSI is 0 without a test) */
    uint64_t uzm64[FILA_MAX_BITS], ozm64[FILA_MAX_BITS];
    u128 uzm128[FILA_MAX_BITS], ozm128[FILA_MAX_BITS];
    /* box numbering: bits with a neighbour in the + and - direction of each axis */
    uint64_t hasp64[3], hasm64[3];
    u128 hasp128[3], hasm128[3];
    /* per run */
    fila_level lv[FILA_MAX_BITS + 1];
    unsigned char *iforced;       /* per local image: a task image still to place */
    int nforced;
    int stack[FILA_MAX_BITS];     /* stack[p - 1]: image placed with p pieces left */
    int top;                      /* pieces left when FILA took over */
    uint32_t *fitbuf;             /* (top + 1) * 2 * fitstride: two slices of fitting
                                   * entries per level (E and S fill the spare one) */
    int maxlist, fitstride;       /* fitstride: maxlist and room for a vector store */
    uint32_t *fitp[FILA_MAX_BITS + 1]; /* level p's first slice in fitbuf */
    fila_kid *kidbuf;             /* (top + 1) * fitstride: live children per level */
    fila_kid *kidp[FILA_MAX_BITS + 1]; /* level p's slice of kidbuf */
    /* per run, copied from the plan and the hooks so that the recursion
     * reads them without a chain of loads: the heuristic per pieces left */
    char heur[FILA_MAX_BITS + 1];
    /* ahead[p]: a node with p pieces left uses the ordered lists and is not
     * a leaf, so its parent picks its list set (and skips it when that has
     * nothing for the shapes left) */
    bool ahead[FILA_MAX_BITS + 1];
    /* mode[p]: which copy of the child loop a node with p pieces left runs:
     * 4 if the parity trigger checks its placements, + 2 if single, + 1 if
     * its children use the ordered lists (ahead[p - 1]), + 8 (single and
     * without the parity trigger) if, moreover, their children are leaves,
     * + 16 (ahead, without the parity trigger) if the children have two
     * pieces left and the two-piece table drops the dead ones */
    unsigned char mode[FILA_MAX_BITS + 1];
    uint64_t *attempts, *fits;
    /* no shape has more than one copy left: the recursion keeps its
     * shapes in avail alone and leaves N as it was where the search began */
    bool single;
    int gids[FILA_MAX_BITS];
    int pstate, hp;
    unsigned tick;
    int stop;
    /* set whenever stop, dirty or a level's LV_CUT is set (and only
     * cleared when a search starts), so that the recursion looks at those
     * three after a child only once one of them may have changed */
    int event;
    int goal;                     /* the plan's goal */
    /* the task's own search starts at level solve_top with weight w_top
     * (above it, a task's path is replayed); during a tick the levels
     * cur .. solve_top are live */
    int solve_top, cur;
    double w_top;
    /* set by a level that ends dirty, with the weight it searched, for its
     * parent to take (or, at solve_top, for the driver: fila_dirty) */
    bool dirty;
    double dirty_done;
    /* the state the lists were last built for, as prepare left it: when
     * the next build finds the same (a task replayed below the handoff
     * where the last one started), the lists stand as they are */
    bool built;
    int built_V, built_Q, built_nimg;
    int built_gcell[FILA_MAX_BITS], built_gtype[FILA_MAX_SHAPES], built_N[FILA_MAX_SHAPES];
    int *built_igid;
    /* scratch for building */
    int *cover_off, *cover_img;   /* images covering each bit */
    uint64_t *nmask_scratch;
    /* asked while lists are built (fila_set_stop), by entries written */
    const tsr_stop *build_stop;
    unsigned long build_work;
    /* other numberings than the box (the plane lattices'): the distinct
     * differences between a bit and its neighbours' bits, and for each the
     * bits that have a neighbour that far off, so that E counts every
     * hole's open neighbours at once, as box numbering does; ndelta 0 when
     * there are more than FILA_MAX_DELTAS (an irregular board) or with box
     * numbering.  Last, to leave the layout of the fields above as the
     * cubes' searches had it. */
    int ndelta;
    int delta[FILA_MAX_DELTAS];
    uint64_t dmask64[FILA_MAX_DELTAS];
    u128 dmask128[FILA_MAX_DELTAS];
    /* the two-piece table (plan->pairs) for this build: the board
     * positions of the open bits (pg[0] for 0-63, pg[1] for 64-127; the
     * first pgn bits go to pg[0]) and each shape's salt */
    bool pairs;
    uint64_t pg[2];
    int pgn;
    uint64_t psalt[FILA_MAX_SHAPES];
    /* E's open-neighbour counts on a numbering other than the box's
     * (gather_best): per local image, how many of its cells each bit has
     * as neighbours (bit-sliced, 3 masks; built only when the plan has E
     * levels), and per level the counts at the node searched there */
    bool ecount;
    uint64_t *dcnt64;
    u128 *dcnt128;
    size_t cap_dcnt64, cap_dcnt128;
    uint64_t lc64[FILA_MAX_BITS + 1][3];
    u128 lc128[FILA_MAX_BITS + 1][3];
    /* The pieces weighed (by S always, by E when plan->pieces): after the
     * unordered lists' entries (from pbase), every local image of each
     * shape s, poff[s] .. poff[s + 1].  A type's images are bits of pw
     * words, by their place among the type's (global) images; per level
     * p, palive + p * pq (pq: types times pw, rounded up to a multiple of
     * 4) has the bits of those that fit the node searched there, and for
     * E pconf + g * pq, built once, those that global image g overlaps
     * (itself among them), so that a child's are its parent's less those
     * of the image placed between them.  plocal: global image -> local. */
    bool pieces, pseg; /* E weighs them; the piece segment is built (S too) */
    bool wp[FILA_MAX_BITS + 2], wpe[FILA_MAX_BITS + 2]; /* per level: weighed; by E */
    uint32_t poff[FILA_MAX_SHAPES + 1];
    long pbase;
    int pw, pq;
    uint64_t *palive, *pconf;
    int *plocal;
    size_t cap_palive;
    /* descents (fila_probe) from one state share its level's bits: the
     * level and occupancy they hold, pstart -1 when none */
    int pstart;
    u128 pstart_o;
    /* the memo of small subtrees (memo.h); mrec: a node's record is being
     * written; cuts: work given away so far (a record spanning one is
     * dropped) */
    memo memo;
    bool mrec;
    unsigned long cuts;
};

fila *fila_new(const img_problem *ip, const fila_plan *plan)
{
    fila *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    f->ip = ip;
    f->plan = plan;
    size_t nc = (size_t)(ip->ncells ? ip->ncells : 1), ni = (size_t)(ip->nimages ? ip->nimages : 1);
    f->bitof = malloc(nc * sizeof(int));
    f->igid = malloc(ni * sizeof(int));
    f->ishape = malloc(ni * sizeof(int));
    f->ipar = malloc(ni);
    f->imask64 = malloc(ni * sizeof(uint64_t));
    f->imask128 = malloc(ni * sizeof(u128));
    f->cover_off = malloc((FILA_MAX_BITS + 1) * sizeof(int));
    f->nmask_scratch = malloc(ni * sizeof(uint64_t));
    f->iforced = calloc(ni, 1);
    f->built_igid = malloc(ni * sizeof(int));
    if (!f->iforced || !f->built_igid || !f->bitof || !f->igid || !f->ishape || !f->ipar || !f->imask64 || !f->imask128 ||
        !f->cover_off || !f->nmask_scratch) {
        fila_free(f);
        return NULL;
    }
    /* the memo's records are complete solutions below a node (memo.h) */
    memo_init(&f->memo, plan->goal == 0 ? plan->memo : 0, MEMO_BYTES);
    return f;
}

void fila_set_stop(fila *f, const tsr_stop *stop) { f->build_stop = stop; }

void fila_free(fila *f)
{
    if (f == NULL)
        return;
    memo_free(&f->memo);
    free(f->bitof);
    free(f->igid);
    free(f->ishape);
    free(f->ipar);
    free(f->uoff);
    free(f->ooff);
    free(f->upres);
    free(f->opres);
    free(f->uimg);
    free(f->oimg);
    free(f->imask64);
    free(f->umask64);
    free(f->omask64);
    free(f->imask128);
    free(f->dcnt64);
    free(f->dcnt128);
    free(f->umask128);
    free(f->omask128);
    free(f->cover_off);
    free(f->cover_img);
    free(f->nmask_scratch);
    free(f->fitbuf);
    free(f->kidbuf);
    free(f->palive);
    free(f->pconf);
    free(f->plocal);
    free(f->iforced);
    free(f->built_igid);
    free(f);
}

static int open_cells(const dlx *d, const img_problem *ip)
{
    int n = 0;
    for (int c = 0; c < ip->ncells; c++)
        n += dlx_cell_open(d, c);
    return n;
}

bool fila_can_take(const fila *f, const dlx *d)
{
    if (dlx_remaining_copies(d) > f->plan->maxp ||
        (f->plan->box == 0 && open_cells(d, f->ip) > FILA_MAX_BITS))
        return false;
    int shapes = 0;
    for (int t = 0; t < f->ip->ntypes; t++)
        shapes += dlx_need(d, t) > 0;
    return shapes <= FILA_MAX_SHAPES;
}

/* Is the parity of the holes reachable by the pieces left? */
static inline bool parity_ok(const fila *f)
{
    const fila_plan *pl = f->plan;
    int v = f->hp + pl->parity_range;
    if (v < 0 || v > 2 * pl->parity_range)
        return false;
    const uint64_t *row = pl->parity_ok + (size_t)f->pstate * pl->parity_words;
    return (row[v >> 6] >> (v & 63)) & 1;
}

/* Number the open cells, collect shapes and images: shared by both widths. */
static int prepare(fila *f, const dlx *d, int *rows)
{
    const img_problem *ip = f->ip;
    const fila_plan *pl = f->plan;
    int V = 0;
    if (pl->box > 0) { /* bits are box indices; bits off the open region stay unused */
        V = pl->box;
        for (int b = 0; b < V; b++)
            f->gcell[b] = -1;
        for (int c = 0; c < ip->ncells; c++) {
            f->bitof[c] = dlx_cell_open(d, c) ? (int)pl->rank[c] : -1;
            if (f->bitof[c] >= 0)
                f->gcell[f->bitof[c]] = c;
        }
    } else { /* bits in the plan's cell order (rank, then id) */
        for (int c = 0; c < ip->ncells; c++) {
            f->bitof[c] = -1;
            if (!dlx_cell_open(d, c))
                continue;
            int k = V++;
            while (k > 0 && (pl->rank[f->gcell[k - 1]] > pl->rank[c]))
                f->gcell[k] = f->gcell[k - 1], k--;
            f->gcell[k] = c;
        }
        for (int b = 0; b < V; b++)
            f->bitof[f->gcell[b]] = b;
    }
    f->V = V;
    for (int b = 0; b < V; b++) {
        if (f->gcell[b] < 0) {
            f->nnb[b] = f->onnb[b] = 0;
            f->freen[b] = f->ofreen[b] = 0;
            continue;
        }
        int n = 0, on = 0;
        for (int k = 0; k < 6; k++) {
            int nc = ip->nbr[f->gcell[b] * 6 + k];
            int nbit = nc >= 0 ? f->bitof[nc] : -1;
            if (nbit >= 0) {
                f->nbb[b][n++] = (signed char)nbit;
                on += nbit > b;
            }
        }
        f->nnb[b] = (signed char)n;
        f->onnb[b] = (signed char)on;
        int un = pl->nof_max > 0 && n > pl->nof_max ? pl->nof_max : n;
        f->freen[b] = pl->nof ? (unsigned char)((1u << un) - 1) : 0;
        f->ofreen[b] = pl->nof ? (unsigned char)((1u << on) - 1) : 0;
    }
    /* shapes: types with copies left */
    int Q = 0;
    for (int t = 0; t < ip->ntypes; t++) {
        int need = dlx_need(d, t);
        if (need <= 0)
            continue;
        if (Q == FILA_MAX_SHAPES)
            return TSR_EUNSUPP;
        f->gtype[Q] = t;
        f->N[Q] = need;
        Q++;
    }
    f->Q = Q;
    f->avail = Q == 64 ? ~0ull : (1ull << Q) - 1;
    f->pairs = pl->pairs != NULL && pl->goal == 0;
    if (f->pairs && pl->box > 0) { /* bits are board positions already */
        f->pg[0] = f->pg[1] = ~0ull;
        f->pgn = 64;
    } else if (f->pairs) { /* bits are the open cells in board order */
        f->pg[0] = f->pg[1] = 0;
        for (int b = 0; b < V; b++) {
            int g = pl->gpos[f->gcell[b]];
            f->pg[g >> 6] |= 1ull << (g & 63);
        }
        f->pgn = __builtin_popcountll(f->pg[0]);
    }
    if (f->pairs) {
        for (int s = 0; s < Q; s++)
            f->psalt[s] = pl->pairs->salt[f->gtype[s]];
    }
    /* images grouped by shape: dlx_rows lists them type by type already */
    int n = dlx_rows(d, rows);
    f->nimg = 0;
    for (int i = 0, s = 0; i < n; i++) {
        int t = ip->img_type[rows[i]];
        while (s < Q && f->gtype[s] != t)
            s++; /* both dlx_rows and the shapes go type by type */
        f->igid[f->nimg] = rows[i];
        f->ishape[f->nimg] = s;
        f->ipar[f->nimg] = (signed char)img_parity(ip, rows[i]);
        f->nimg++;
    }
    return 0;
}

/* Parallel bit extract: the bits of v where m has ones, packed down. */
static inline uint64_t pext64(uint64_t v, uint64_t m)
{
#ifdef __BMI2__
    return _pext_u64(v, m);
#else
    uint64_t r = 0;
    for (uint64_t bit = 1; m; m &= m - 1, bit <<= 1)
        if (v & m & -m)
            r |= bit;
    return r;
#endif
}

/* Parallel bit deposit: the low bits of v to the places of m's ones. */
static inline uint64_t pdep64(uint64_t v, uint64_t m)
{
#ifdef __BMI2__
    return _pdep_u64(v, m);
#else
    uint64_t r = 0;
    for (uint64_t bit = 1; m; m &= m - 1, bit <<= 1)
        if (v & bit)
            r |= m & -m;
    return r;
#endif
}

/* Lists and the per-level slices of fitting entries have FILA_PAD spare
 * entries at their end, so that a vector may load or store whole vectors
 * from any entry of a list. */
#define FILA_PAD 8
/* A build reserves its lists' entries at once up to this many (fila_impl.h:
 * presize): 40 MB of 128-bit masks and image numbers, of address space
 * (only the entries written are memory) */
#define FILA_PRESIZE_MAX ((size_t)1 << 21)

#if defined(__AVX2__) && !(defined(__AVX512F__) && defined(__AVX512VL__))
/* For each 4-bit mask, the lanes it selects, in order, one per byte. */
static const uint32_t compress4[16] = {
    0x0, 0x0, 0x1, 0x100, 0x2, 0x200, 0x201, 0x20100,
    0x3, 0x300, 0x301, 0x30100, 0x302, 0x30200, 0x30201, 0x3020100,
};
#endif

/* The entries k in [a, e) of a list of 64-bit masks that fit occupancy o
 * ((o & em[k]) == 0), appended in order to fit[n..]; returns the new n.
 * Whether an image fits is close to a coin toss, so there is no branch per
 * entry: with AVX-512 eight entries are tested and compressed at once,
 * with AVX2 four, else one at a time.  The vector paths read up to 7
 * entries past e and write up to 7 past the result (FILA_PAD); what they
 * read there is masked off. */
static inline uint32_t gather64(const uint64_t *em, uint64_t o, uint32_t a, uint32_t e,
                                uint32_t *fit, uint32_t n)
{
#if defined(__AVX512F__) && defined(__AVX512VL__)
    const __m512i ov = _mm512_set1_epi64((long long)o);
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (uint32_t k = a; k < e; k += 8) {
        __mmask8 tail = e - k >= 8 ? 0xff : (__mmask8)((1u << (e - k)) - 1);
        __mmask8 hit = _mm512_mask_testn_epi64_mask(tail, _mm512_loadu_si512(em + k), ov);
        __m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)k), lanes);
        _mm256_storeu_si256((__m256i *)(fit + n), _mm256_maskz_compress_epi32(hit, idx));
        n += (uint32_t)__builtin_popcount(hit);
    }
#elif defined(__AVX2__)
    const __m256i ov = _mm256_set1_epi64x((long long)o), zero = _mm256_setzero_si256();
    for (uint32_t k = a; k < e; k += 4) {
        unsigned tail = e - k >= 4 ? 15 : (1u << (e - k)) - 1;
        __m256i m = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(em + k)), ov);
        unsigned hit = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(m, zero)));
        hit &= tail;
        __m128i sel = _mm_cvtepu8_epi32(_mm_cvtsi32_si128((int)compress4[hit]));
        _mm_storeu_si128((__m128i *)(fit + n), _mm_add_epi32(_mm_set1_epi32((int)k), sel));
        n += (uint32_t)__builtin_popcount(hit);
    }
#else
    for (uint32_t k = a; k < e; k++) {
        fit[n] = k;
        n += (o & em[k]) == 0;
    }
#endif
    return n;
}

/* How many entries in [a, e) fit o (as gather64, without the indices). */
static inline int count64(const uint64_t *em, uint64_t o, uint32_t a, uint32_t e)
{
    int cnt = 0;
#if defined(__AVX512F__) && defined(__AVX512VL__)
    const __m512i ov = _mm512_set1_epi64((long long)o);
    for (uint32_t k = a; k < e; k += 8) {
        __mmask8 tail = e - k >= 8 ? 0xff : (__mmask8)((1u << (e - k)) - 1);
        cnt += __builtin_popcount(_mm512_mask_testn_epi64_mask(tail, _mm512_loadu_si512(em + k), ov));
    }
#elif defined(__AVX2__)
    const __m256i ov = _mm256_set1_epi64x((long long)o), zero = _mm256_setzero_si256();
    for (uint32_t k = a; k < e; k += 4) {
        unsigned tail = e - k >= 4 ? 15 : (1u << (e - k)) - 1;
        __m256i m = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(em + k)), ov);
        cnt += __builtin_popcount(
            (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(m, zero))) & tail);
    }
#else
    for (uint32_t k = a; k < e; k++)
        cnt += (o & em[k]) == 0;
#endif
    return cnt;
}

/* The same for 128-bit masks.  With AVX-512 four entries are tested at
 * once (eight 64-bit halves; an entry fits when both of its halves do),
 * with AVX2 two, else one at a time; the vector paths read up to 3 entries
 * past e and write up to 3 past the result (FILA_PAD).  fits128 is the
 * one vector step both use: bit j set when entry k + j fits. */
#if defined(__AVX512F__) && defined(__AVX512VL__)
#define STEP128 4
typedef __m512i occ128; /* o's two halves, once per entry of a step */
static inline occ128 occ128_of(u128 o)
{
    const long long lo = (long long)(uint64_t)o, hi = (long long)(uint64_t)(o >> 64);
    return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}
static inline unsigned fits128(const u128 *em, uint32_t k, uint32_t e, occ128 ov)
{
    __mmask8 tail = e - k >= 4 ? 0xff : (__mmask8)((1u << 2 * (e - k)) - 1);
    unsigned z = _mm512_mask_testn_epi64_mask(tail, _mm512_loadu_si512(em + k), ov);
    return (unsigned)pext64(z & (z >> 1), 0x55); /* both halves clear */
}
#elif defined(__AVX2__)
#define STEP128 2
typedef __m256i occ128;
static inline occ128 occ128_of(u128 o)
{
    const long long lo = (long long)(uint64_t)o, hi = (long long)(uint64_t)(o >> 64);
    return _mm256_set_epi64x(hi, lo, hi, lo);
}
static inline unsigned fits128(const u128 *em, uint32_t k, uint32_t e, occ128 ov)
{
    __m256i m = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(em + k)), ov);
    unsigned z = (unsigned)_mm256_movemask_pd(
        _mm256_castsi256_pd(_mm256_cmpeq_epi64(m, _mm256_setzero_si256())));
    return (unsigned)pext64(z & (z >> 1), 0x5) & (e - k >= 2 ? 3 : 1);
}
#endif

static inline uint32_t gather128(const u128 *em, u128 o, uint32_t a, uint32_t e, uint32_t *fit,
                                 uint32_t n)
{
#ifdef STEP128
    const occ128 ov = occ128_of(o);
    for (uint32_t k = a; k < e; k += STEP128) {
        unsigned hit = fits128(em, k, e, ov);
#if STEP128 == 4
        __m128i idx = _mm_add_epi32(_mm_set1_epi32((int)k), _mm_setr_epi32(0, 1, 2, 3));
        _mm_storeu_si128((__m128i *)(fit + n), _mm_maskz_compress_epi32((__mmask8)hit, idx));
#else
        __m128i sel = _mm_cvtepu8_epi32(_mm_cvtsi32_si128((int)compress4[hit]));
        _mm_storeu_si128((__m128i *)(fit + n), _mm_add_epi32(_mm_set1_epi32((int)k), sel));
#endif
        n += (uint32_t)__builtin_popcount(hit);
    }
#else
    for (uint32_t k = a; k < e; k++) {
        fit[n] = k;
        n += (o & em[k]) == 0;
    }
#endif
    return n;
}

static inline int count128(const u128 *em, u128 o, uint32_t a, uint32_t e)
{
    int cnt = 0;
#ifdef STEP128
    const occ128 ov = occ128_of(o);
    for (uint32_t k = a; k < e; k += STEP128)
        cnt += __builtin_popcount(fits128(em, k, e, ov));
#else
    for (uint32_t k = a; k < e; k++)
        cnt += (o & em[k]) == 0;
#endif
    return cnt;
}

/* A node's children in one list set: for each shape in `shapes` (the
 * list set's shapes with copies left) the entries off[s] .. off[s + 1]
 * that fit o, appended in order to fit[]; returns how many, and in *tried
 * the entries of those shapes.  Stops after a shape once there are
 * `limit` or more (then the list and *tried are incomplete). */
static inline uint32_t gather_set64(const uint64_t *em, uint64_t o, const uint32_t *off,
                                    uint64_t shapes, uint32_t *fit, uint32_t *tried, uint32_t limit)
{
    uint32_t n = 0, t = 0;
    for (; shapes && n < limit; shapes &= shapes - 1) {
        int s = __builtin_ctzll(shapes);
        t += off[s + 1] - off[s];
        n = gather64(em, o, off[s], off[s + 1], fit, n);
    }
    *tried = t;
    return n;
}

static inline uint32_t gather_set128(const u128 *em, u128 o, const uint32_t *off, uint64_t shapes,
                                     uint32_t *fit, uint32_t *tried, uint32_t limit)
{
    uint32_t n = 0, t = 0;
    for (; shapes && n < limit; shapes &= shapes - 1) {
        int s = __builtin_ctzll(shapes);
        t += off[s + 1] - off[s];
        n = gather128(em, o, off[s], off[s + 1], fit, n);
    }
    *tried = t;
    return n;
}

/* A live level's children: how many, and how many come before the one
 * being searched. */
static void level_position(const fila_level *lv, uint64_t *n, uint64_t *before)
{
    *n = lv->n;
    *before = lv->i;
}

/* The weight of one child of each live level from `top` down to `q`: a
 * child of a level stands for 1/n of its node.  cw[l] for l = q .. top. */
static void child_weights(const fila *f, int q, double *cw)
{
    double w = f->w_top;
    for (int l = f->solve_top; l >= q; l--) {
        uint64_t n, before;
        level_position(&f->lv[l], &n, &before);
        w = n > 0 ? w / (double)n : 0;
        cw[l] = w;
    }
}

/* What the finished children of a level searched: a clean child its whole
 * share, a dirty one what it reported. */
static double level_done(const fila_level *lv, double cw, uint64_t finished)
{
    if (!(lv->flags & LV_DIRTY))
        return cw * (double)finished;
    return cw * (double)(finished - lv->ndirty) + lv->dirty_done;
}

/* Level q ends (not stopped) with flags set: what it searched goes up. */
static void level_end(fila *f, int q)
{
    double cw[FILA_MAX_BITS + 1];
    fila_level *lv = &f->lv[q];
    child_weights(f, q, cw);
    uint64_t n, before;
    level_position(lv, &n, &before);
    f->dirty = true;
    f->event = 1;
    f->dirty_done = level_done(lv, cw[q], n - (lv->flags & LV_CUT ? lv->ngiven : 0));
}

/* A child of level q ended dirty. */
static void level_take_dirty(fila *f, fila_level *lv)
{
    if (!(lv->flags & LV_DIRTY)) {
        lv->flags |= LV_DIRTY;
        lv->ndirty = 0;
        lv->dirty_done = 0;
    }
    lv->ndirty++;
    lv->dirty_done += f->dirty_done;
    f->dirty = false;
}

/* The pieces' bits: words per type (the most images of a type) and per
 * level or row (all types, whole vectors of 4 words). */
static void pieces_size(const img_problem *ip, int *pw, int *pq)
{
    int most = 1;
    for (int t = 0; t < ip->ntypes; t++)
        if (ip->types[t].nimages > most)
            most = ip->types[t].nimages;
    *pw = (most + 63) / 64;
    *pq = (ip->ntypes * *pw + 3) & ~3;
}

double fila_pieces_bytes(const img_problem *ip)
{
    int pw, pq;
    pieces_size(ip, &pw, &pq);
    return 8.0 * ip->nimages * pq;
}

/* The pieces' bits (struct fila: pw, pq) and the global-to-local map,
 * the first time a build weighs pieces. */
static int pieces_words(fila *f)
{
    pieces_size(f->ip, &f->pw, &f->pq);
    f->plocal = malloc((size_t)(f->ip->nimages ? f->ip->nimages : 1) * sizeof *f->plocal);
    return f->plocal ? 0 : TSR_ENOMEM;
}

/* E's pieces: the bits of the images each global image overlaps
 * (struct fila: pconf), built the first time a build needs them: the
 * union, over the image's cells, of the bits of the images covering
 * each. */
static int pieces_table(fila *f)
{
    const img_problem *ip = f->ip;
    size_t pq = (size_t)f->pq, ni = (size_t)(ip->nimages ? ip->nimages : 1);
    uint64_t *cov = calloc((size_t)(ip->ncells ? ip->ncells : 1) * pq, sizeof *cov);
    f->pconf = malloc(ni * pq * sizeof *f->pconf);
    if (!cov || !f->pconf) {
        free(cov), free(f->pconf);
        f->pconf = NULL;
        return TSR_ENOMEM;
    }
    for (int g = 0; g < ip->nimages; g++) {
        int t = ip->img_type[g], at = g - ip->types[t].first;
        for (int k = 0; k < img_size(ip, g); k++)
            cov[(size_t)img_cells_of(ip, g)[k] * pq + (size_t)(t * f->pw + at / 64)] |=
                1ull << (at % 64);
    }
    for (int g = 0; g < ip->nimages; g++) {
        uint64_t *row = f->pconf + (size_t)g * pq;
        memset(row, 0, pq * sizeof *row);
        for (int k = 0; k < img_size(ip, g); k++) {
            const uint64_t *c = cov + (size_t)img_cells_of(ip, g)[k] * pq;
            for (size_t w = 0; w < pq; w++)
                row[w] |= c[w];
        }
    }
    free(cov);
    return 0;
}

#define FL_WIDTH 64
#include "engine/fila_impl.h"
#undef FL_WIDTH
#define FL_WIDTH 128
#include "engine/fila_impl.h"
#undef FL_WIDTH

/* Did prepare find the state the lists were last built for: the same
 * cells open, in the same bits, the same copies of the same types left
 * and the same images alive? */
static bool same_state(const fila *f)
{
    return f->built && f->V == f->built_V && f->Q == f->built_Q && f->nimg == f->built_nimg &&
           memcmp(f->gcell, f->built_gcell, (size_t)f->V * sizeof *f->gcell) == 0 &&
           memcmp(f->gtype, f->built_gtype, (size_t)f->Q * sizeof *f->gtype) == 0 &&
           memcmp(f->N, f->built_N, (size_t)f->Q * sizeof *f->N) == 0 &&
           memcmp(f->igid, f->built_igid, (size_t)f->nimg * sizeof *f->igid) == 0;
}

/* Number the cells, collect the images and build the lists for a DLX
 * state (unless they stand built for it already). */
static int build(fila *f, const dlx *d)
{
    const img_problem *ip = f->ip;
    int *rows = malloc((size_t)(ip->nimages ? ip->nimages : 1) * sizeof *rows);
    if (rows == NULL)
        return TSR_ENOMEM;
    f->top = dlx_remaining_copies(d);
    f->pstart = -1; /* the levels' bits are the next search's or descent's */
    int rc = prepare(f, d, rows);
    free(rows);
    /* whether no shape has copies: the search's and the descents' alike */
    f->single = true;
    for (int s = 0; rc == 0 && s < f->Q; s++)
        f->single &= f->N[s] <= 1;
    if (rc == 0 && same_state(f))
        return 0; /* the lists depend on nothing else (the plan is fixed) */
    f->built = false;
    /* the memo's keys: occupancy, then the shapes left (with their copies
     * unless single), one word when they fit */
    memo_clear(&f->memo, (f->V <= 64 ? 2 : 4) + (f->single && f->Q <= 32 ? 1 : 2));
    if (rc == 0)
        rc = f->V <= 64 ? fila_build64(f) : fila_build128(f);
    if (rc == 0) {
        f->built = true;
        f->built_V = f->V;
        f->built_Q = f->Q;
        f->built_nimg = f->nimg;
        memcpy(f->built_gcell, f->gcell, (size_t)f->V * sizeof *f->gcell);
        memcpy(f->built_gtype, f->gtype, (size_t)f->Q * sizeof *f->gtype);
        memcpy(f->built_N, f->N, (size_t)f->Q * sizeof *f->N);
        memcpy(f->built_igid, f->igid, (size_t)f->nimg * sizeof *f->igid);
    }
    return rc;
}

/* The parity trigger's state for the pieces left (0 when it is off). */
static void parity_start(fila *f)
{
    f->pstate = 0;
    if (f->plan->parity_min > 0)
        for (int s = 0; s < f->Q; s++) {
            int cls = f->plan->type_class[f->gtype[s]];
            if (cls >= 0)
                f->pstate += f->N[s] * f->plan->class_radix[cls];
        }
}

/* Build the lists and set the parity state as fila_search does; the hole
 * parity is the colour sum of the open cells. */
int fila_probe_begin(fila *f, const dlx *d)
{
    int rc = build(f, d);
    if (rc)
        return rc;
    f->hp = 0;
    for (int b = 0; b < f->V; b++)
        if (f->gcell[b] >= 0)
            f->hp += img_color(f->ip, f->gcell[b]);
    parity_start(f);
    return 0;
}

void fila_descend(fila *f, uint64_t *rng, const fila_probe_hooks *h, fila_descent *out)
{
    if (f->V <= 64)
        fila_probe64(f, f->top, fila_start64(f), rng, h, out);
    else
        fila_probe128(f, f->top, fila_start128(f), rng, h, out);
}

double fila_estimate(fila *f, int image, int probes, uint64_t *rng)
{
    int li = -1;
    for (int i = 0; i < f->nimg && li < 0 && image >= 0; i++)
        if (f->igid[i] == image)
            li = i;
    if (probes <= 0 || (image >= 0 && li < 0))
        return -1;
    if (image < 0) {
        double total = 0;
        for (int i = 0; i < probes; i++)
            total += f->V <= 64 ? fila_probe64(f, f->top, fila_start64(f), rng, NULL, NULL)
                                : fila_probe128(f, f->top, fila_start128(f), rng, NULL, NULL);
        return total / probes;
    }
    return f->V <= 64 ? estimate_below64(f, li, probes, rng) : estimate_below128(f, li, probes, rng);
}

bool fila_can_build(const fila *f, const dlx *d)
{
    if (f->plan->box == 0 && open_cells(d, f->ip) > FILA_MAX_BITS)
        return false;
    int shapes = 0;
    for (int t = 0; t < f->ip->ntypes; t++)
        shapes += dlx_need(d, t) > 0;
    return shapes <= FILA_MAX_SHAPES;
}

#ifdef TSR_DEBUG
/* fila_impl.h's invariant where a search starts and ends: nothing placed. */
static bool search_sane(const fila *f)
{
    return f->V <= 64 ? fila_sane64(f, f->top, fila_start64(f), f->avail)
                      : fila_sane128(f, f->top, fila_start128(f), f->avail);
}
#endif

int fila_search(fila *f, const dlx *d, int hole_parity, double w, const fila_hooks *hooks,
                const unsigned char *forced)
{
    int rc = build(f, d);
    if (rc)
        return rc;
    f->nforced = 0;
    for (int i = 0; i < f->nimg; i++) {
        f->iforced[i] = forced != NULL && forced[f->igid[i]];
        f->nforced += f->iforced[i];
    }
    /* without room, the search runs without it */
    (void)memo_start(&f->memo, hooks->leaves != NULL);
    f->hooks = hooks;
    f->attempts = hooks->attempts;
    f->fits = hooks->fits;
    for (int q = 0; q <= f->top && q <= FILA_MAX_BITS; q++) {
        f->heur[q] = f->plan->heur[q];
        f->ahead[q] = f->heur[q] == 'f' && q != f->plan->goal;
    }
    f->stop = 0;
    f->event = 0;
    f->goal = f->plan->goal;
    for (int q = 1; q <= f->top && q <= FILA_MAX_BITS; q++) {
        bool parity = f->plan->parity_min > 0 && q - 1 >= f->plan->parity_min;
        /* + 8 when the children's children are leaves (and neither the
         * parity trigger checks here nor a shape has copies, which keeps
         * the copies of the loop to one more) */
        bool last = !parity && f->single && f->ahead[q - 1] && q - 2 == f->plan->goal;
        /* + 16 when the children have two pieces left and the two-piece
         * table can drop the dead ones (without the parity trigger here,
         * which keeps the copies of the loop to two more) */
        bool pairs = f->pairs && !parity && f->ahead[q - 1] && q - 1 == 2;
        f->mode[q] = (unsigned char)(16 * pairs + 8 * last + 4 * parity + 2 * f->single +
                                     f->ahead[q - 1]);
        f->lv[q].ei = f->ahead[q] ? f->oimg : f->uimg;
    }
    f->hp = hole_parity;
    parity_start(f);
    int p = dlx_remaining_copies(d);
    f->top = f->solve_top = f->cur = p;
    f->w_top = w;
    f->dirty = false;
#ifdef TSR_DEBUG
    assert(search_sane(f));
#endif
    if (f->V <= 64) {
        if (f->nforced > 0)
            fila_replay64(f, p, fila_start64(f), w);
        else
            fila_solve_at64(f, p, fila_start64(f), f->avail);
    } else {
        if (f->nforced > 0)
            fila_replay128(f, p, fila_start128(f), w);
        else
            fila_solve_at128(f, p, fila_start128(f), f->avail);
    }
#ifdef TSR_DEBUG
    assert(search_sane(f)); /* the recursion undid every placement, stopped or not */
#endif
    return f->stop;
}

double fila_task_weight(const fila *f) { return f->w_top; }

double fila_leaf_weight(const fila *f)
{
    double cw[FILA_MAX_BITS + 1];
    child_weights(f, f->cur, cw); /* the leaf set cur to the level above it */
    return f->cur <= f->solve_top ? cw[f->cur] : f->w_top;
}

bool fila_dirty(const fila *f, double *done)
{
    *done = f->dirty_done;
    return f->dirty;
}

double fila_progress(const fila *f)
{
    double cw[FILA_MAX_BITS + 1];
    child_weights(f, f->cur, cw);
    /* deepest (smallest) terms first, in extended precision: on a deep tree
     * the deep levels are what moves */
    long double done = 0;
    for (int q = f->cur; q <= f->solve_top; q++) {
        uint64_t n, before;
        level_position(&f->lv[q], &n, &before);
        done += level_done(&f->lv[q], cw[q], before);
    }
    return (double)done;
}

int fila_donate(fila *f, int *images, int nprefix, bool all, fila_donate_fn donate, void *ctx)
{
    double cw[FILA_MAX_BITS + 1];
    child_weights(f, f->cur, cw);
    int tasks = 0;
    for (int q = f->solve_top; q >= f->cur && q > 0; q--) {
        if (f->lv[q].flags & LV_CUT)
            continue;
        int given = f->V <= 64 ? fila_donate_level64(f, q, cw[q], images, nprefix, donate, ctx)
                               : fila_donate_level128(f, q, cw[q], images, nprefix, donate, ctx);
        tasks += given;
        if (!all && given > 0)
            break;
    }
    return tasks;
}
