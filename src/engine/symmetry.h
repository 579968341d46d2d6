/*
 * symmetry.h - the puzzle's symmetry group, the rotational-redundancy
 * filter, and canonical solutions.
 *
 * The group G holds every lattice transform (proper or improper) that maps
 * the board onto itself, its optional cells onto optional cells, each free
 * cell onto one of its colour and the fixed pieces onto fixed pieces of
 * the same shape and colours; transforms acting
 * identically on the cells are merged (an element
 * is proper when some proper rotation realises it).  Element 0 is the
 * identity.
 *
 * A transform maps an image to the image with the transformed cells and the
 * same colours on them (G keeps the board's colouring, so that image's
 * colours may sit there too), of the
 * same type when that type allows the new orientation, else of another type
 * that does (the mirror twin of a one-sided piece): among those, the one of
 * the rank that the type has among its twins (identical pieces listed
 * apart: A1, A2 go to B1, B2), whatever its count range; else to nothing.
 * A solution whose image breaks a count range has no image.  So an element may map one solution to a solution and
 * another to no solution at all (one-sided pieces in 3D turn some placements
 * into forbidden orientations): the class of a solution S is the set of
 * valid g(S).  Elements that map every image and permute the types are "full":
 * only they may be used to constrain a piece.
 *
 * A solution is the sorted list of its mobile image ids (identical pieces
 * share images, so permuting them changes nothing); in a loose puzzle
 * (count ranges, optional cells) solutions differ in length, but a
 * transform keeps the length, so a class has one length.  Keys of equal
 * length compare lexicographically.  The search may skip images of one constrained type (the
 * redundancy filter keeps one image per orbit of the full elements); it then
 * accepts a solution only when its key is the smallest among the valid
 * members of its class that the filtered search can find.  Every class has
 * such a member: the constrained type t has at most one copy (count 1, or
 * [0, 1] in a loose puzzle); a solution without t is findable itself, and
 * one with t at image i is sent by the full element e that keeps t and
 * maps i to its orbit's kept image to e(S), which is a solution (e maps
 * required cells to required, optional to optional, and types to types of
 * the same size and count range, so every tally stays in its range) with t
 * once, at the kept image.  So each class is accepted exactly once whatever the filter,
 * and the reporting modes expand an accepted solution into the class members
 * that are canonical in the mode's subgroup (just the identity for raw, the
 * proper rotations for rotations).
 *
 * Twins listed unevenly.  When a chiral piece and its mirror image are
 * listed in different numbers of entries (A with count 2 against B1 and
 * B2), no entry of one side can be paired with one of the other, so the
 * rank rule sends B2's images nowhere.  A mode whose group holds a
 * transform that mirrors the pieces (a reflection in mirror mode; turning
 * a flat board over, a rotation, for one-sided pieces) then takes the
 * mirrored solution to be the same whatever entries its mirrored pieces
 * take within their counts; following that rule there and back, two
 * solutions that differ only in which entries of one shape sit where are
 * the same too.  So the entries of such a shape and of its mirror image
 * form relabelling classes: G keeps only the mode's elements (its classes
 * are the mode's, and expanding a class gives itself), a transform sends
 * their images to the first entry that has the new shape, and a solution
 * whose mirrored image fits the counts (a "matchable" one; all of a
 * class's members are, or none) is put in canonical labelling: the class's
 * placements, ordered by their image in the class's first entry, fill its
 * entries in order, each as full as the later entries' minimums allow.
 * Such a solution is accepted when it is canonically labelled and its key
 * is the smallest among the canonically labelled images the filtered
 * search can find (the filter never constrains a relabelled entry, whose
 * placement the relabelling moves); every class has such a member by the
 * argument above.  Other solutions keep the rank rule (they have no valid
 * mirrored image), and so do modes without such a transform (raw counts
 * and rotations in space tell the entries apart) and groups in which one
 * transform mirrors some chiral shapes and not others (pieces turned only
 * about z in a box whose symmetries lay some on their side): no single
 * flip relates all of a solution's pieces there.
 */
#ifndef TSR_SYMMETRY_H
#define TSR_SYMMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/images.h"

typedef struct sym_group {
    int n;
    int tf[GEO_NTRANSFORMS];      /* geo transform index of each element */
    bool proper[GEO_NTRANSFORMS];
    bool full[GEO_NTRANSFORMS];   /* maps every image, permuting the types */
    bool all_full;                /* every element is full (and none relabels) */
    int *cellmap;                 /* n * ncells */
    int *imgmap;                  /* n * nimages, -1 where the image has no image */
    int *fixtype;                 /* n * ntypes: the type all images of a type go to under
                                     a full element, else -1 */
    int *mult;                    /* n * n: index of (a after b) at [a * n + b] */
    bool relabel;                 /* twins listed unevenly, relabelled in the mode */
    int flip;                     /* with relabel: an element that changes chiral classes */
    int *rlclass;                 /* ntypes: first entry of a type's relabelling class,
                                     -1 outside them (NULL when !relabel) */
} sym_group;

/* The group of the compiled puzzle for counting mode `mode` (which decides
 * how unevenly listed twins map, above): 0, TSR_ENOMEM, or TSR_ECANCELED
 * when `stop` (may be NULL) asks to stop. */
int sym_build(const img_problem *ip, enum tsr_unique mode, const tsr_stop *stop,
              sym_group **out);
void sym_free(sym_group *g);

/* Bitmask of the group elements that belong to a uniqueness mode's group. */
uint64_t sym_mode_mask(const sym_group *g, enum tsr_unique mode);

/* The redundancy filter.  `spec` is "" (choose automatically), "off", or a
 * piece name.  Writes to cands (ntypes entries) the types of at most one
 * copy that break the most symmetry, fewest kept images first, and returns
 * how many (0: no filter), or a negative code (TSR_ECANCELED when `stop`,
 * which may be NULL, asks to stop).  Types in every solution
 * (count_min 1) come before those that may stay out, whose filter leaves
 * the classes without them unreduced; among the latter, most kept images
 * first. */
int sym_filter_candidates(const img_problem *ip, const sym_group *g, const char *spec,
                          const tsr_stop *stop, int *cands, tsr_err *err);

/* keep[i] = 0 for the images of type t the filter removes, 1 otherwise (all
 * 1 when t < 0).  Returns 0, or TSR_ECANCELED when `stop` (may be NULL)
 * asks to stop. */
int sym_filter_keep(const img_problem *ip, const sym_group *g, int t, const tsr_stop *stop,
                    unsigned char *keep);

/* Whether the search should accept `sol` (sorted, n ids), given the
 * filter's keep flags (NULL = no filter).  `scratch` holds 2n + ntypes ints.
 * When g->all_full, *stab gets the elements that map an accepted sol onto
 * itself (its stabiliser). */
bool sym_accept(const img_problem *ip, const sym_group *g, const unsigned char *keep,
                const int *sol, int n, int *scratch, uint64_t *stab);

/* The images whose presence in a solution settles sym_accept at once:
 * accepted, with the identity alone for stabiliser.  Such an image i is a
 * kept image of the constrained type t, which is in every solution once
 * (count and count_min 1), in a group whose elements are all full and all
 * map t to t, and no element but the identity fixes i.  Then for e != 1
 * e(S) has t at e(i) != i, in i's orbit, where i is the image the filter
 * keeps: e(S) is not findable (so it cannot reject S) and is not S.  On an
 * asymmetric constrained piece that is every solution, so a leaf skips
 * mapping its solution through the whole group.  Writes quick[i] (nimages
 * flags) and returns how many are set (0: none, quick all 0). */
int sym_quick_accept(const img_problem *ip, const sym_group *g, int t, const unsigned char *keep,
                     unsigned char *quick);

/* How many solutions a mode reports for an accepted solution with
 * stabiliser `stab` (sym_accept), when g->all_full: what sym_expand counts,
 * without listing them.  The mode's group H (identity, proper elements or
 * all) is normal in G, so the class's H-orbits number
 * |G| |H & stab| / (|H| |stab|).  -1 when that does not hold (H of another
 * order): then ask sym_expand. */
int sym_count(const sym_group *g, uint64_t mode_mask, uint64_t stab);

/* Expand an accepted solution of n ids into the solutions a mode reports:
 * writes them (each n sorted ids) into out, which holds g->n solutions, and
 * returns how many (or TSR_ENOMEM); out NULL only counts them.  Each is the
 * smallest key of its class. */
int sym_expand(const img_problem *ip, const sym_group *g, uint64_t mode_mask, const int *sol,
               int n, int *out);

/* Sort a solution's image ids into its key. */
void sym_sort(int *ids, int n);

/* Apply element k to a solution of n ids: out = sorted images of g_k(sol).
 * Returns false when g_k(sol) is not a solution (an image has no image, or
 * the piece counts come out of their ranges); `tally` holds ip->ntypes ints. */
bool sym_apply(const img_problem *ip, const sym_group *g, int k, const int *sol, int n, int *out,
               int *tally);

#endif
