/*
 * engine_configs.h - the engine configurations every random puzzle of the
 * differential tests runs in (test_diff on the cubic lattice, test_latdiff
 * on the triangular and hexagonal ones).  One table for both, so that a
 * configuration added for one lattice is tested on all of them.
 *
 * A configuration leaves an option at its automatic value (KEEP) or sets
 * it; FILA_P and FILA_P1 stand for the puzzle's copies and one less (FILA
 * from the root, or below the first piece).  RED_FIRST and RED_LAST name a
 * piece for the redundancy filter, which the test chooses (cfg_options
 * takes its name).  `pairs` forces the two-piece table on or off (where
 * FILA reaches two pieces left in the first hole's order: pairs.h), and
 * `pieces` E's weighing of the pieces (fila.h: 0 off, 1 at every level,
 * N from N pieces left up; forced on, it needs an E level in the order
 * there); `memo` sets the level of FILA's memo (memo.h; 0
 * off), which must change nothing but the time.
 */
#ifndef TSR_TEST_ENGINE_CONFIGS_H
#define TSR_TEST_ENGINE_CONFIGS_H

#include <stdbool.h>
#include <stdio.h>

#include "tessera/engine.h"

enum { KEEP = -99, FILA_P = -100, FILA_P1 = -101 };
enum { RED_AUTO, RED_OFF, RED_FIRST, RED_LAST };

typedef struct cfg {
    int fila;
    const char *order;
    int nof, volume, parity, vtrigger, pfilter, fit, red, pairs, pieces, memo;
} cfg;

static const cfg configs[] = {
    {KEEP, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},      /* defaults */
    {0, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},         /* DLX only */
    {FILA_P, "e", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {FILA_P, "s", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {FILA_P, "f", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {FILA_P1, "e", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {FILA_P1, "s", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {FILA_P1, "f", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {KEEP, NULL, 0, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},         /* NOF off */
    {FILA_P, "e", 0, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {KEEP, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_OFF, KEEP, KEEP, KEEP},
    {0, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_OFF, KEEP, KEEP, KEEP},
    {FILA_P, "f", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_OFF, KEEP, KEEP, KEEP},
    {KEEP, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_FIRST, KEEP, KEEP, KEEP},
    {0, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_LAST, KEEP, KEEP, KEEP},
    {KEEP, NULL, KEEP, 0, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},         /* volume off */
    {KEEP, NULL, KEEP, -2, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},        /* volume once */
    {0, NULL, KEEP, 1, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},            /* volume per level */
    {KEEP, NULL, KEEP, KEEP, 1, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},         /* parity trigger */
    {0, NULL, KEEP, KEEP, 1, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {FILA_P, "s", KEEP, KEEP, 1, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {0, NULL, KEEP, KEEP, KEEP, 1, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},            /* volume trigger */
    {0, NULL, KEEP, 1, KEEP, 1, KEEP, KEEP, RED_LAST, KEEP, KEEP, KEEP},               /* both, named piece */
    {0, NULL, KEEP, KEEP, KEEP, KEEP, 1, KEEP, RED_AUTO, KEEP, KEEP, KEEP},            /* parity filter */
    {KEEP, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, 1, RED_AUTO, KEEP, KEEP, KEEP},         /* fit filter */
    {0, "f", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},          /* DLX, ranked cells */
    {0, "r", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {FILA_P, "x", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {FILA_P, "a@30", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {FILA_P, "s:e=3:f=2", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, KEEP},
    {FILA_P, "f", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, 1, KEEP, KEEP},    /* two-piece table */
    {KEEP, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, 1, KEEP, KEEP},
    {FILA_P1, "s:e=4:f=3", 0, KEEP, KEEP, KEEP, KEEP, KEEP, RED_OFF, 1, KEEP, KEEP},
    {FILA_P, "f", KEEP, KEEP, 3, KEEP, KEEP, KEEP, RED_AUTO, 1, KEEP, KEEP},    /* parity above it */
    {KEEP, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, 0, KEEP, KEEP},
    {FILA_P, "e", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, 1, KEEP}, /* E's pieces */
    {FILA_P1, "e", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, 3, KEEP}, /* from 3 left */
    {FILA_P1, "s:e=4:f=2", 0, KEEP, KEEP, KEEP, KEEP, KEEP, RED_OFF, 1, 1, KEEP},
    {FILA_P, "e", KEEP, KEEP, 2, KEEP, KEEP, KEEP, RED_AUTO, KEEP, 1, KEEP},   /* parity above them */
    {FILA_P, "e:s=3", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_LAST, KEEP, 1, KEEP},
    {KEEP, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, 0, KEEP},
    {FILA_P, "f", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, 2}, /* the memo */
    {FILA_P, "e", KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_OFF, KEEP, 1, 3},
    {FILA_P1, "s:e=4:f=2", KEEP, KEEP, 2, KEEP, KEEP, KEEP, RED_AUTO, 1, KEEP, 1},
    {FILA_P, "s", 0, KEEP, KEEP, KEEP, KEEP, KEEP, RED_LAST, KEEP, KEEP, 4},
    {KEEP, NULL, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, RED_AUTO, KEEP, KEEP, 0},
};
#define NCONFIG ((int)(sizeof configs / sizeof configs[0]))

/* Options of configuration c in counting mode `mode` for a puzzle of
 * `copies` mobile copies; `piece` is the piece RED_FIRST or RED_LAST
 * constrains (the caller's choice; unused otherwise).  The configuration
 * as tessera's flags goes to desc. */
static inline void cfg_options(const cfg *c, int copies, enum tsr_unique mode, const char *piece,
                               tsr_options *o, char *desc, size_t size)
{
    static const char *const modes[] = {"raw", "rotations", "mirror"};
    tsr_options_init(o);
    o->unique = mode;
    size_t len = (size_t)snprintf(desc, size, "--unique=%s", modes[mode]);
#define ADD(...) len += (size_t)snprintf(desc + len, len < size ? size - len : 0, __VA_ARGS__)
    if (c->fila != KEEP) {
        o->fila = c->fila == FILA_P ? copies : c->fila == FILA_P1 ? copies - 1 : c->fila;
        ADD(" --fila=%d", o->fila);
    }
    if (c->order) {
        snprintf(o->order, sizeof o->order, "%s", c->order);
        ADD(" --order=%s", c->order);
    }
    if (c->nof != KEEP) {
        o->nof = c->nof;
        ADD(c->nof ? " --nof" : " --no-nof");
    }
    if (c->volume != KEEP) {
        o->volume = c->volume;
        if (c->volume == -2)
            ADD(" --volume=once");
        else if (c->volume == 0)
            ADD(" --volume=off");
        else
            ADD(" --volume=%d", c->volume);
    }
    if (c->parity != KEEP) {
        o->parity = c->parity;
        ADD(" --parity=%d", c->parity);
    }
    if (c->vtrigger != KEEP) {
        o->vtrigger = c->vtrigger;
        ADD(" --vtrigger=%d", c->vtrigger);
    }
    if (c->pfilter != KEEP) {
        o->pfilter = c->pfilter;
        ADD(" --pfilter=%d", c->pfilter);
    }
    if (c->fit != KEEP) {
        o->fit = c->fit;
        ADD(c->fit ? " --fit" : " --no-fit");
    }
    if (c->pairs != KEEP) {
        o->pairs = c->pairs;
        ADD(c->pairs ? " --pairs" : " --no-pairs");
    }
    if (c->pieces != KEEP) {
        o->pieces = c->pieces;
        ADD(" --pieces=%d", c->pieces);
    }
    if (c->memo != KEEP) {
        o->memo = c->memo;
        ADD(" --memo=%d", c->memo);
    }
    if (c->red == RED_OFF) {
        snprintf(o->redundancy, sizeof o->redundancy, "off");
        ADD(" --redundancy=off");
    } else if (c->red == RED_FIRST || c->red == RED_LAST) {
        snprintf(o->redundancy, sizeof o->redundancy, "%s", piece);
        ADD(" --redundancy=%s", o->redundancy);
    }
#undef ADD
}

/* Does the engine accept these options for a loose puzzle (count ranges,
 * optional cells)?  Only DLX, with no parity or fit filter (automatic
 * values are fine); the redundancy filter, the volume filter and trigger
 * and the parity trigger are accepted. */
static inline bool cfg_loose_ok(const tsr_options *o)
{
    return o->fila <= 0 && o->pfilter <= 0 && o->fit <= 0 && o->pairs <= 0 && o->pieces <= 0;
}

#endif
