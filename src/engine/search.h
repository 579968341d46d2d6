/*
 * search.h - internals of the search driver shared with the tests.
 *
 * The driver implements tessera/engine.h in three files: prepare.c resolves
 * the options into a plan; search.c runs DLX at the top of the tree, hands
 * subtrees to FILA once few enough pieces remain and turns every leaf into
 * reported solutions through the symmetry module; estimate.c estimates a
 * run before it is made.  What those share is in search_impl.h.
 */
#ifndef TSR_SEARCH_H
#define TSR_SEARCH_H

#include "tessera/engine.h"

/* Parse a heuristic schedule such as "e=11:f=3" or "a@160=35:s=20" into
 * heur[p] / angle[p] for p = 0..maxp (letters s f e x y z r a).  Levels no
 * entry covers get 's'.  Returns 0 or TSR_EINVAL with a message. */
int srch_parse_order(const char *spec, int maxp, char *heur, double *angle, tsr_err *err);

/* The levels FILA takes (p <= fila) may use one fixed order only (and the
 * searches 's' and 'e'): FILA ranks cells once.  0 or TSR_EINVAL naming
 * the schedule `spec`. */
int srch_check_fila_order(const char *heur, const double *angle, int maxp, int nfila,
                          const char *spec, tsr_err *err);

#endif
