/*
 * cost.c - what a solver would cost, known before it is built
 * (tsr_solver_check in tessera/engine.h).
 *
 * A daemon must refuse at the door what it could not prepare: a puzzle
 * that preparation would reject (too many piece copies, a goal above
 * them, a malformed order, a board whose bounding box cannot be
 * allocated), and one whose solver would not fit in memory.  Building the
 * placements to find out costs what preparation costs (seconds and
 * gigabytes on a huge puzzle), so this file bounds them from the shapes
 * alone, in time linear in the board and the pieces:
 *
 *   placements of an orientation <= min(board cells, box positions),
 *
 * where box positions are where the orientation's bounding box fits in the
 * board's.  It is exact for a box-shaped board and an upper bound for any
 * other.  Memory then follows the layout of the structures preparation and
 * the search build (images.h, symmetry.h, dlx.c): the image cell lists,
 * the symmetry maps, and one DLX matrix per search thread plus one for the
 * tree-size estimate beside them, 24 bytes a node.  The constants were
 * fitted to peak RSS measured on the 6x10, the Tetris Cube, the 35
 * hexominoes and boards of 1000-cell pieces (docs/api.md, "Limits"), and
 * err high.
 */
#include <math.h>
#include <stdlib.h>

#include "engine/fila.h"
#include "engine/search.h"
#include "geom/geom.h"
#include "tessera/engine.h"

#define COST_BASE_BYTES (16.0 * 1024 * 1024) /* the program, its tables, FILA's lists */
#define COST_THREAD_BYTES (2.0 * 1024 * 1024) /* a worker's stacks and buffers */
#define COST_DLX_NODE_BYTES 24.0              /* U D C RB RE nodeimg */
#define COST_IMAGE_BYTES 40.0                 /* offsets, type, hash, rownode, flags */
#define COST_MAX_BOX 67108864.0               /* 2^26 cells: a 256 MB coordinate grid */

/* Upper bound on the placements of piece `pc` on the board with bounding
 * box `ext`: orientation by orientation (a coloured piece's coloured
 * orientations, which may be more: colours only remove placements after
 * that).  `cbuf` takes the colours; negative: TSR_ENOMEM. */
static double piece_placements(const tsr_puzzle *pz, const geo_lattice *L, const tsr_piece *pc,
                               const int ext[3],
                               const int *allowed, int nallowed, tsr_cell *buf,
                               unsigned char *cbuf)
{
    int n = geo_lattice_orientations_colored(L, pc->cells, pc->colors, pc->ncells, allowed,
                                             nallowed, buf, cbuf);
    if (n < 0)
        return n;
    double total = 0;
    for (int o = 0; o < n; o++) {
        const tsr_cell *sh = buf + (size_t)o * pc->ncells;
        int hi[3] = {0, 0, 0};
        for (int k = 0; k < pc->ncells; k++) { /* normalised: the low corner is 0 */
            hi[0] = sh[k].x > hi[0] ? sh[k].x : hi[0];
            hi[1] = sh[k].y > hi[1] ? sh[k].y : hi[1];
            hi[2] = sh[k].z > hi[2] ? sh[k].z : hi[2];
        }
        double fits = 1;
        for (int a = 0; a < 3; a++)
            fits *= ext[a] - hi[a] > 0 ? ext[a] - hi[a] : 0;
        total += fits < pz->ncells ? fits : pz->ncells;
    }
    return total;
}

int tsr_solver_check(const tsr_puzzle *pz, const tsr_options *opt, int threads, tsr_cost *cost,
                     tsr_err *err)
{
    *cost = (tsr_cost){0};
    int rc = tsr_puzzle_validate(pz, NULL, err);
    if (rc)
        return rc;
    tsr_options defaults;
    if (opt == NULL) {
        tsr_options_init(&defaults);
        opt = &defaults;
    }
    long copies = 0;
    int maxcells = 1;
    for (int i = 0; i < pz->npieces; i++)
        if (!pz->pieces[i].fixed) {
            copies += pz->pieces[i].count;
            maxcells = pz->pieces[i].ncells > maxcells ? pz->pieces[i].ncells : maxcells;
        }
    if (copies >= FILA_MAX_COPIES)
        return tsr_err_set(err, TSR_ETOOBIG, "%ld piece copies; the engine takes at most %d",
                           copies, FILA_MAX_COPIES - 1);
    if (opt->goal < 0)
        return tsr_err_set(err, TSR_EINVAL, "goal must not be negative");
    if (opt->goal > copies)
        return tsr_err_set(err, TSR_EINVAL, "goal %d exceeds the %ld piece copies", opt->goal,
                           copies);
    if (opt->pairs > 0 && opt->goal > 0) /* as preparation refuses it (prepare.c) */
        return tsr_err_set(err, TSR_EINVAL, "option 'pairs' needs complete solutions (goal 0)");
    char *heur = malloc((size_t)copies + 2);
    double *angle = malloc(((size_t)copies + 2) * sizeof *angle);
    tsr_cell *buf = malloc((size_t)GEO_NTRANSFORMS * (size_t)maxcells * sizeof *buf);
    unsigned char *cbuf = malloc((size_t)GEO_NTRANSFORMS * (size_t)maxcells);
    if (heur == NULL || angle == NULL || buf == NULL || cbuf == NULL)
        rc = TSR_ENOMEM;
    if (rc == 0)
        rc = srch_parse_order(opt->order, (int)copies, heur, angle, err);
    if (rc == 0)
        rc = srch_check_fila_order(heur, angle, (int)copies, opt->fila, opt->order, err);

    tsr_cell lo = geo_min_corner(pz->cells, pz->ncells), hi = lo;
    for (int i = 0; i < pz->ncells; i++) {
        hi.x = pz->cells[i].x > hi.x ? pz->cells[i].x : hi.x;
        hi.y = pz->cells[i].y > hi.y ? pz->cells[i].y : hi.y;
        hi.z = pz->cells[i].z > hi.z ? pz->cells[i].z : hi.z;
    }
    int ext[3] = {hi.x - lo.x + 1, hi.y - lo.y + 1, hi.z - lo.z + 1};
    double box = (double)ext[0] * ext[1] * ext[2];
    if (rc == 0 && box > COST_MAX_BOX)
        rc = tsr_err_set(err, TSR_ETOOBIG,
                         "the board spans %d x %d x %d cells (from (%d,%d,%d) to (%d,%d,%d)); "
                         "its bounding box may hold at most %.0f",
                         ext[0], ext[1], ext[2], lo.x, lo.y, lo.z, hi.x, hi.y, hi.z, COST_MAX_BOX);
    geo_lattice L;
    geo_lattice_init(&L, pz->lattice);
    int allowed[GEO_NTRANSFORMS];
    int nallowed = geo_lattice_allowed(&L, pz->rotations, pz->mirror, allowed);
    for (int i = 0; rc == 0 && i < pz->npieces; i++) {
        const tsr_piece *pc = &pz->pieces[i];
        if (pc->fixed)
            continue;
        double n = piece_placements(pz, &L, pc, ext, allowed, nallowed, buf, cbuf);
        if (n < 0) {
            rc = (int)n;
            break;
        }
        cost->images += n;
        cost->image_cells += n * pc->ncells;
    }
    free(heur);
    free(angle);
    free(buf);
    free(cbuf);
    if (rc)
        return rc;
    int group = L.id != TSR_LATTICE_CUBIC ? L.ntransforms
                : tsr_puzzle_is_flat(pz) ? 8 : GEO_NTRANSFORMS;
    int matrices = (threads > 0 ? threads : 1) + 1;
    double nodes = cost->image_cells + cost->images + pz->ncells + pz->npieces;
    cost->bytes = COST_BASE_BYTES + COST_THREAD_BYTES * matrices + 4.0 * box +
                  4.0 * cost->image_cells + (COST_IMAGE_BYTES + 4.0 * group) * cost->images +
                  COST_DLX_NODE_BYTES * nodes * matrices;
    return 0;
}
