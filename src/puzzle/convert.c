/*
 * convert.c - a whole puzzle written in one of the formats Tessera reads:
 * what `tessera convert` and POST /api/v1/convert share, so that both
 * write the same bytes and refuse the same things with the same words.
 *
 *   json       Puzzle JSON version 1 (tsr_write_puzzle_json)
 *   polycube   a polycube definition file (tsr_write_polycube with no
 *              placements: the whole puzzle)
 *   xmpuzzle   a BurrTools file, gzip-compressed (tsr_write_xmpuzzle)
 *
 * The writers print to a FILE *; here they print into memory, so that a
 * refusal leaves nothing half-written for the caller to clean up.  What
 * tsr_write_polycube refuses without words is said here, before it is
 * called: the format has no counts (tsr_write_polycube, made for the
 * sub-puzzles of partial assemblies, writes copies as pieces NAME_1,
 * NAME_2, ..., which read back as distinct pieces: the counts would not
 * be the puzzle's), no count ranges, optional cells, "rotations": "none"
 * or mirror images of 3D pieces, and its names cannot hold blanks or its
 * separators.  Neither it nor BurrTools' files (as written) have the
 * plane lattices.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "puzzle/polycube.h"
#include "tessera/puzzle.h"

const char *const tsr_format_names[] = {"json", "polycube", "xmpuzzle", NULL};

/* Indexed by enum tsr_format: a file's extension, its media type. */
static const char *const extensions[] = {".json", ".txt", ".xmpuzzle"};
static const char *const media_types[] = {"application/json; charset=utf-8",
                                          "text/plain; charset=utf-8", "application/gzip"};

int tsr_format_parse(const char *name)
{
    for (int i = 0; name != NULL && tsr_format_names[i] != NULL; i++)
        if (strcmp(name, tsr_format_names[i]) == 0)
            return i;
    return -1;
}

int tsr_format_of_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot == NULL || strchr(dot, '/') != NULL)
        return -1;
    if (strcmp(dot, ".json") == 0)
        return TSR_FORMAT_JSON;
    if (strcmp(dot, ".txt") == 0 || strcmp(dot, ".polycube") == 0)
        return TSR_FORMAT_POLYCUBE;
    if (strcmp(dot, ".xmpuzzle") == 0)
        return TSR_FORMAT_XMPUZZLE;
    return -1;
}

const char *tsr_format_extension(enum tsr_format format)
{
    return (unsigned)format <= TSR_FORMAT_XMPUZZLE ? extensions[format] : "";
}

const char *tsr_format_media_type(enum tsr_format format)
{
    return (unsigned)format <= TSR_FORMAT_XMPUZZLE ? media_types[format]
                                                  : "application/octet-stream";
}

/* What a polycube definition cannot say about pz: 0, or TSR_EUNSUPP
 * naming it. */
static int polycube_check(const tsr_puzzle *pz, tsr_err *err)
{
    if (pz->lattice != TSR_LATTICE_CUBIC)
        return tsr_err_set(err, TSR_EUNSUPP, "the puzzle is on the %s lattice: a polycube "
                                             "definition describes polycubes (the cubic lattice) "
                                             "only", tsr_lattice_names[pz->lattice]);
    if (pz->rotations == TSR_ROT_NONE)
        return tsr_err_set(err, TSR_EUNSUPP, "\"rotations\": \"none\": a polycube definition "
                                             "has no such rule (its pieces turn, or turn about "
                                             "z with oneSide)");
    if (pz->mirror && !tsr_puzzle_is_flat(pz))
        return tsr_err_set(err, TSR_EUNSUPP, "\"mirror\": true: a polycube definition has no "
                                             "mirror images of 3D pieces");
    if (pz->noptional > 0)
        return tsr_err_set(err, TSR_EUNSUPP, "%d optional board cell%s: a polycube definition "
                                             "describes exact covers, every cell filled",
                           pz->noptional, pz->noptional == 1 ? "" : "s");
    if (tsr_puzzle_has_colors(pz))
        return tsr_err_set(err, TSR_EUNSUPP, "colours: a polycube definition has no colours, "
                                             "and without them the puzzle would be another one");
    for (int k = 0; k < pz->npieces; k++) {
        const tsr_piece *p = &pz->pieces[k];
        if (p->count_min != p->count)
            return tsr_err_set(err, TSR_EUNSUPP, "piece %s: the count range [%d, %d]: a polycube "
                                                 "definition has no ranges, only pieces",
                               p->name, p->count_min, p->count);
        if (p->count > 1 && !p->fixed)
            return tsr_err_set(err, TSR_EUNSUPP, "piece %s: %d copies: a polycube definition has "
                                                 "no counts, and as %d pieces %s_1, %s_2, ... "
                                                 "every solution would count once per "
                                                 "permutation of the copies",
                               p->name, p->count, p->count, p->name, p->name);
        if (!tsr_polycube_name_ok(p->name))
            return tsr_err_set(err, TSR_EUNSUPP, "piece %s: a polycube name has no blanks, "
                                                 "control characters or ':' '=' ',' '#', and is "
                                                 "not '.' nor starts with '~'",
                               p->name);
    }
    return 0;
}

int tsr_puzzle_write(const tsr_puzzle *pz, enum tsr_format format, char **out, size_t *len,
                     tsr_err *err)
{
    *out = NULL;
    *len = 0;
    if (format == TSR_FORMAT_POLYCUBE) {
        int rc = polycube_check(pz, err);
        if (rc != 0)
            return rc;
    }
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (f == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    int rc;
    switch (format) {
    case TSR_FORMAT_JSON:
        rc = tsr_write_puzzle_json(f, pz);
        if (rc == TSR_EUNSUPP)
            tsr_err_set(err, rc, "a name or the description is not UTF-8, which JSON needs");
        break;
    case TSR_FORMAT_POLYCUBE:
        rc = tsr_write_polycube(f, pz, NULL);
        if (rc == TSR_EUNSUPP) /* what polycube_check cannot see */
            tsr_err_set(err, rc, "piece names clash once numbered (a piece of count 3 becomes "
                                 "NAME_1 to NAME_3) or are too long for a polycube definition");
        else if (rc == TSR_ETOOBIG)
            tsr_err_set(err, rc, "the board's box or the pieces' copies are too many for a "
                                 "polycube definition");
        break;
    case TSR_FORMAT_XMPUZZLE:
        rc = tsr_write_xmpuzzle(f, pz, true, err);
        break;
    default:
        rc = tsr_err_set(err, TSR_EINVAL, "unknown format %d", (int)format);
    }
    if (fclose(f) != 0 && rc == 0)
        rc = tsr_err_set(err, TSR_ENOMEM, "out of memory");
    if (rc != 0) {
        if (err != NULL && err->msg[0] == '\0')
            tsr_err_set(err, rc, "%s", tsr_strerror(rc));
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}
