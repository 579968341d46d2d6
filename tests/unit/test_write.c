/*
 * test_write.c - the writers (write.c): exact text layers for a 2D and a 3D
 * solution, the one-line solution JSON, the polycube sub-puzzle writer and
 * the puzzle JSON writer, each read back by its reader (round trips), and
 * the solutions and puzzles the writers must refuse; the plane lattices'
 * drawings, JSON lines and round trips, and the formats that refuse them.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "tessera/puzzle.h"

/* ---- helpers ------------------------------------------------------------- */

/* Writers write into memory: text = sink_close(&o) after writing to
 * sink_open(&o); the caller frees the text. */
struct sink {
    char *text;
    size_t len;
    FILE *f;
};

static FILE *sink_open(struct sink *o)
{
    o->text = NULL;
    o->f = open_memstream(&o->text, &o->len);
    ck_assert_ptr_nonnull(o->f);
    return o->f;
}

static char *sink_close(struct sink *o)
{
    fclose(o->f);
    return o->text;
}

static void add_cells(tsr_puzzle *pz, const tsr_cell *cells, int n)
{
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(tsr_puzzle_add_board_cell(pz, cells[i]), 0);
}

static void add_piece(tsr_puzzle *pz, const char *name, const tsr_cell *cells, int n,
                      int count, bool fixed)
{
    ck_assert_int_ge(tsr_puzzle_add_piece(pz, name, cells, n, count, fixed), 0);
}

static void validate(const tsr_puzzle *pz)
{
    tsr_err err = {""};
    ck_assert_msg(tsr_puzzle_validate(pz, "test", &err) == 0, "%s", err.msg);
}

static tsr_puzzle *read_polycube(const char *text)
{
    tsr_puzzle *pz = NULL;
    tsr_err err = {""};
    int rc = tsr_puzzle_read_polycube(text, strlen(text), "written", &pz, &err);
    ck_assert_msg(rc == 0, "%s in\n%s", err.msg, text);
    return pz;
}

/* "x,y,z;..." of the cells moved to the origin and sorted, for comparing
 * shapes (and, with `keep`, exact cell sets). */
static char *cells_key(const tsr_cell *cells, int n, bool keep)
{
    tsr_cell *v = malloc((size_t)n * sizeof *v);
    char *key = malloc((size_t)n * 40 + 1), *at = key;
    memcpy(v, cells, (size_t)n * sizeof *v);
    if (keep)
        qsort(v, (size_t)n, sizeof *v, geo_cell_cmp);
    else
        geo_normalize(v, n);
    *at = '\0';
    for (int i = 0; i < n; i++)
        at += sprintf(at, "%d,%d,%d;", v[i].x, v[i].y, v[i].z);
    free(v);
    return key;
}

static void assert_same_cells(const tsr_cell *a, int na, const tsr_cell *b, int nb, bool keep)
{
    ck_assert_int_eq(na, nb);
    char *ka = cells_key(a, na, keep), *kb = cells_key(b, nb, keep);
    ck_assert_str_eq(ka, kb);
    free(ka);
    free(kb);
}

/* Same pieces in the same order: names, flags, counts, fixed cells exactly
 * and mobile shapes up to translation. */
static void assert_same_pieces(const tsr_puzzle *a, const tsr_puzzle *b)
{
    ck_assert_int_eq(a->npieces, b->npieces);
    for (int i = 0; i < a->npieces; i++) {
        const tsr_piece *p = &a->pieces[i], *q = &b->pieces[i];
        ck_assert_str_eq(p->name, q->name);
        ck_assert_int_eq(p->fixed, q->fixed);
        ck_assert_int_eq(p->count, q->count);
        assert_same_cells(p->cells, p->ncells, q->cells, q->ncells, p->fixed);
    }
}

/* ---- a small 2D puzzle with a hole, and a 3D one ------------------------- */

/*   y=0:  A Bb Bb
 *   y=1:  A  -  .      (- is not on the board; . is not covered) */
static const tsr_cell BOARD_2D[] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {2, 1, 0}};
static const tsr_cell A_AT[] = {{0, 0, 0}, {0, 1, 0}};
static const tsr_cell BB_AT[] = {{1, 0, 0}, {2, 0, 0}};

static tsr_puzzle *puzzle_2d(void)
{
    tsr_puzzle *pz = tsr_puzzle_new();
    add_cells(pz, BOARD_2D, 5);
    add_piece(pz, "A", A_AT, 2, 1, false);
    add_piece(pz, "Bb", BB_AT, 2, 1, false);
    add_piece(pz, "c", &BOARD_2D[0], 1, 1, false);
    validate(pz);
    return pz;
}

static const tsr_placement PLACED_2D[] = {{0, 2, A_AT, NULL}, {1, 2, BB_AT, NULL}};
static const tsr_solution SOLUTION_2D = {2, PLACED_2D};

START_TEST(text_2d)
{
    tsr_puzzle *pz = puzzle_2d();
    struct sink o;
    int rc = tsr_write_solution_text(sink_open(&o), pz, &SOLUTION_2D);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, "A  Bb Bb\n"
                           "A     .\n");
    free(text);
    rc = tsr_write_solution_text(sink_open(&o), pz, NULL);
    text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, ".  .  .\n"
                           ".     .\n");
    free(text);
    tsr_puzzle_free(pz);
}
END_TEST

/* A 2x2x2 box without its corner (1,1,1), away from the origin. */
START_TEST(text_3d)
{
    static const tsr_cell board[] = {{5, 5, 5}, {6, 5, 5}, {5, 6, 5}, {6, 6, 5},
                                     {5, 5, 6}, {6, 5, 6}, {5, 6, 6}};
    static const tsr_cell l[] = {{5, 5, 5}, {6, 5, 5}, {5, 6, 5}};
    static const tsr_cell i1[] = {{6, 6, 5}, {6, 5, 6}}, i2[] = {{5, 5, 6}, {5, 6, 6}};
    static const tsr_placement placed[] = {{0, 3, l, NULL}, {1, 2, i1, NULL}, {1, 2, i2, NULL}};
    tsr_puzzle *pz = tsr_puzzle_new();
    add_cells(pz, board, 7);
    add_piece(pz, "L", l, 3, 1, false);
    add_piece(pz, "I", i2, 2, 2, false);
    validate(pz);
    tsr_solution s = {3, placed};
    struct sink o;
    int rc = tsr_write_solution_text(sink_open(&o), pz, &s);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, "z = 5\n"
                           "L L\n"
                           "L I\n"
                           "\n"
                           "z = 6\n"
                           "I I\n"
                           "I\n");
    free(text);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(solution_json)
{
    tsr_puzzle *pz = puzzle_2d();
    struct sink o;
    int rc = tsr_write_solution_json(sink_open(&o), pz, &SOLUTION_2D);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, "{\"pieces\":[{\"name\":\"A\",\"cells\":[[0,0,0],[0,1,0]]},"
                           "{\"name\":\"Bb\",\"cells\":[[1,0,0],[2,0,0]]}]}\n");
    free(text);
    rc = tsr_write_solution_json(sink_open(&o), pz, NULL);
    text = sink_close(&o);
    ck_assert_str_eq(text, "{\"pieces\":[]}\n");
    free(text);
    tsr_puzzle_free(pz);
}
END_TEST

/* Solutions that do not fit the puzzle are refused by every writer. */
START_TEST(bad_solutions)
{
    tsr_puzzle *pz = puzzle_2d();
    static const tsr_cell off[] = {{1, 1, 0}}, far[] = {{9, 9, 9}};
    const tsr_placement cases[][2] = {
        {{3, 2, A_AT, NULL}, {1, 2, BB_AT, NULL}},   /* no piece 3 */
        {{0, 2, A_AT, NULL}, {1, 2, A_AT, NULL}},    /* overlap */
        {{0, 1, off, NULL}, {1, 2, BB_AT, NULL}},    /* not on the board */
        {{0, 1, far, NULL}, {1, 2, BB_AT, NULL}},    /* outside the box */
        {{0, 2, A_AT, NULL}, {0, 2, BB_AT, NULL}},   /* two copies of a count-1 piece */
        {{0, 0, A_AT, NULL}, {1, 2, BB_AT, NULL}},   /* no cells */
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        tsr_solution s = {2, cases[i]};
        struct sink o;
        int rc = tsr_write_polycube(sink_open(&o), pz, &s);
        free(sink_close(&o));
        ck_assert_msg(rc == TSR_EINVAL, "case %d: polycube %d", i, rc);
        rc = tsr_write_solution_text(sink_open(&o), pz, &s);
        free(sink_close(&o));
        ck_assert_msg(rc == (i == 4 ? 0 : TSR_EINVAL), "case %d: text %d", i, rc);
    }
    tsr_solution s = {1, cases[0]};
    struct sink o;
    int rc = tsr_write_solution_json(sink_open(&o), pz, &s);
    free(sink_close(&o));
    ck_assert_int_eq(rc, TSR_EINVAL);
    tsr_puzzle_free(pz);
}
END_TEST

/* ---- the polycube writer ----------------------------------------------------- */

/* A 3x3 ring (no centre) at x 5..7, y -2..0: three dominoes, a monomino
 * and a fixed monomino F; the assembly places F and one domino. */
static const tsr_cell RING[] = {{5, -2, 0}, {6, -2, 0}, {7, -2, 0}, {5, -1, 0},
                                {7, -1, 0}, {5, 0, 0},  {6, 0, 0},  {7, 0, 0}};
static const tsr_cell DOMINO_AT[] = {{5, -2, 0}, {6, -2, 0}};
static const tsr_cell F_AT[] = {{7, 0, 0}};

static tsr_puzzle *ring_puzzle(const char *domino, const char *mono)
{
    tsr_puzzle *pz = tsr_puzzle_new();
    add_cells(pz, RING, 8);
    static const tsr_cell d[] = {{0, 3, 0}, {0, 4, 0}}, m[] = {{9, 9, 0}};
    add_piece(pz, domino, d, 2, 3, false);
    add_piece(pz, "F", F_AT, 1, 1, true);
    add_piece(pz, mono, m, 1, 1, false);
    validate(pz);
    return pz;
}

static const tsr_placement RING_PLACED[] = {{1, 1, F_AT, NULL}, {0, 2, DOMINO_AT, NULL}};
static const tsr_solution RING_SOLUTION = {2, RING_PLACED};

/* Board cells that neither fixed pieces nor placements cover, moved so the
 * board's bounding box starts at the origin. */
static char *free_key(const tsr_puzzle *pz, const tsr_solution *s)
{
    tsr_cell lo = geo_min_corner(pz->cells, pz->ncells);
    tsr_cell *v = malloc((size_t)pz->ncells * sizeof *v);
    int n = 0;
    for (int i = 0; i < pz->ncells; i++) {
        tsr_cell c = pz->cells[i];
        bool covered = false;
        for (int k = 0; k < pz->npieces; k++)
            for (int j = 0; pz->pieces[k].fixed && j < pz->pieces[k].ncells; j++)
                covered |= !geo_cell_cmp(&c, &pz->pieces[k].cells[j]);
        for (int p = 0; s && p < s->nplacements; p++)
            for (int j = 0; j < s->placements[p].ncells; j++)
                covered |= !geo_cell_cmp(&c, &s->placements[p].cells[j]);
        if (!covered)
            v[n++] = (tsr_cell){c.x - lo.x, c.y - lo.y, c.z - lo.z};
    }
    char *key = cells_key(v, n, true);
    free(v);
    return key;
}

START_TEST(polycube_partial_assembly)
{
    tsr_puzzle *pz = ring_puzzle("I", "o");
    struct sink o;
    int rc = tsr_write_polycube(sink_open(&o), pz, &RING_SOLUTION);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, "D:xDim=3:yDim=3:zDim=1\n"
                           "C:name=I_2:type=M:layout=0 0 0, 0 1 0\n"
                           "C:name=I_3:type=M:layout=0 0 0, 0 1 0\n"
                           "C:name=o:type=M:layout=0 0 0\n"
                           "L:stationary=F I_1 *\n"
                           ".   .   F\n"
                           ".   *   .\n"
                           "I_1 I_1 .\n"
                           "~L\n"
                           "~D\n");
    tsr_puzzle *back = read_polycube(text);
    /* the same free cells and the same copies left to place */
    char *want = free_key(pz, &RING_SOLUTION), *got = free_key(back, NULL);
    ck_assert_str_eq(got, want);
    free(want);
    free(got);
    ck_assert_int_eq(back->npieces, 6);
    const char *names[] = {"I_2", "I_3", "o", "F", "I_1", "*"};
    for (int i = 0; i < 6; i++) {
        ck_assert_str_eq(back->pieces[i].name, names[i]);
        ck_assert_int_eq(back->pieces[i].fixed, i >= 3);
    }
    assert_same_cells(back->pieces[0].cells, 2, pz->pieces[0].cells, 2, false);
    free(text);
    tsr_puzzle_free(back);
    tsr_puzzle_free(pz);
}
END_TEST

/* Definitions read from polycube files come back as themselves. */
START_TEST(polycube_round_trip_files)
{
    static const char *defs[] = {
        "D:xDim=4:yDim=2:zDim=2\n"
        "C:name=A:type=M:layout=0 0 2, 1 0 2, 2 0 2, 2 0 1\n"
        "C:name=B:type=M:layout=0 0 0, 1 0 0, 2 0 0, 2 1 0\n"
        "C:name=C:type=M:layout=0 0 0, 1 0 0, 1 0 1, 2 0 1\n"
        "C:name=D:type=M:layout=0 0 0, 1 0 0, 2 0 0, 2 1 0\n"
        "~D\n",
        "D:xDim=4:yDim=3:zDim=1:oneSide\n"
        "L\n"
        "P P .\n"
        "P P P\n"
        "\n"
        "Long Long\n"
        "~L\n"
        "C:name=q:layout=0 0 0, 1 0 0\n"
        "L:stationary=* x\n"
        "* . . x\n"
        ". . . .\n"
        ". . . *\n"
        "~L\n"
        "~D\n",
    };
    for (int i = 0; i < 2; i++) {
        tsr_puzzle *pz = read_polycube(defs[i]);
        struct sink o;
        int rc = tsr_write_polycube(sink_open(&o), pz, NULL);
        char *text = sink_close(&o);
        ck_assert_int_eq(rc, 0);
        tsr_puzzle *back = read_polycube(text);
        free(text);
        assert_same_cells(pz->cells, pz->ncells, back->cells, back->ncells, true);
        assert_same_pieces(pz, back);
        ck_assert_int_eq(pz->rotations, back->rotations);
        tsr_puzzle_free(back);
        tsr_puzzle_free(pz);
    }
}
END_TEST

START_TEST(polycube_names)
{
    /* '*' taken: the hole piece is "*_1" */
    tsr_puzzle *pz = ring_puzzle("I", "*");
    struct sink o;
    int rc = tsr_write_polycube(sink_open(&o), pz, NULL);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_ptr_nonnull(strstr(text, "L:stationary=F *_1\n"));
    tsr_puzzle_free(read_polycube(text));
    free(text);
    tsr_puzzle_free(pz);

    /* names the format cannot carry, or that clash once suffixed */
    const char *bad[][2] = {{"I", "I_2"}, {"a b", "o"}, {"I", "o:p"}, {"I", "~o"}};
    for (int i = 0; i < 4; i++) {
        pz = ring_puzzle(bad[i][0], bad[i][1]);
        rc = tsr_write_polycube(sink_open(&o), pz, &RING_SOLUTION);
        free(sink_close(&o));
        ck_assert_msg(rc == TSR_EUNSUPP, "case %d: %d", i, rc);
        tsr_puzzle_free(pz);
    }
}
END_TEST

START_TEST(polycube_rotations)
{
    tsr_puzzle *pz = ring_puzzle("I", "o");
    struct sink o;
    int rc;
    pz->rotations = TSR_ROT_NONE;
    rc = tsr_write_polycube(sink_open(&o), pz, NULL);
    free(sink_close(&o));
    ck_assert_int_eq(rc, TSR_EUNSUPP);

    pz->rotations = TSR_ROT_ONE_SIDED;
    rc = tsr_write_polycube(sink_open(&o), pz, NULL);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_ptr_nonnull(strstr(text, "D:xDim=3:yDim=3:zDim=1:oneSide\n"));
    tsr_puzzle *back = read_polycube(text);
    ck_assert_int_eq(back->rotations, TSR_ROT_ONE_SIDED);
    tsr_puzzle_free(back);
    free(text);

    /* one-sided with mirror images of flat pieces: all flat turns */
    pz->mirror = true;
    rc = tsr_write_polycube(sink_open(&o), pz, NULL);
    text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_ptr_nonnull(strstr(text, "D:xDim=3:yDim=3:zDim=1\n"));
    free(text);

    /* 3D mirror images: not expressible */
    pz->cells[0].z = 1;
    pz->pieces[1].cells[0] = pz->cells[0];
    rc = tsr_write_polycube(sink_open(&o), pz, NULL);
    free(sink_close(&o));
    ck_assert_int_eq(rc, TSR_EUNSUPP);
    tsr_puzzle_free(pz);
}
END_TEST

/* ---- the puzzle JSON writer ---------------------------------------------------- */

static tsr_puzzle *read_json(const char *text)
{
    tsr_puzzle *pz = NULL;
    tsr_err err = {""};
    int rc = tsr_puzzle_read_json(text, strlen(text), "written", &pz, NULL, &err);
    ck_assert_msg(rc == 0, "%s in\n%s", err.msg, text);
    return pz;
}

START_TEST(puzzle_json_exact)
{
    static const tsr_cell two[] = {{0, 0, 0}, {1, 0, 0}};
    tsr_puzzle *pz = tsr_puzzle_new();
    add_cells(pz, two, 2);
    add_piece(pz, "d", two, 2, 1, false);
    struct sink o;
    int rc = tsr_write_puzzle_json(sink_open(&o), pz);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text,
                     "{\n"
                     "  \"version\": 1,\n"
                     "  \"board\": {\"cells\": [[0, 0, 0], [1, 0, 0]]},\n"
                     "  \"pieces\": [\n"
                     "    {\"name\": \"d\", \"cells\": [[0, 0, 0], [1, 0, 0]], \"count\": 1, "
                     "\"fixed\": false}\n"
                     "  ],\n"
                     "  \"rotations\": \"all\",\n"
                     "  \"mirror\": false\n"
                     "}\n");
    free(text);
    tsr_puzzle_free(pz);
}
END_TEST

/* Count ranges and optional cells survive the puzzle writer, text layers
 * show an empty optional cell as '+', and the polycube writer refuses. */
START_TEST(loose_round_trip)
{
    tsr_puzzle *pz = read_json("{\"board\": {\"rows\": [\"+..\"], \"optional\": [[2, 0]]},"
                               " \"pieces\": [{\"name\": \"D\", \"rows\": [\"##\"], \"count\": [0, 1]},"
                               " {\"name\": \"M\", \"rows\": [\"#\"], \"count\": [1, 2]}]}");
    struct sink o;
    int rc = tsr_write_puzzle_json(sink_open(&o), pz);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    tsr_puzzle *back = read_json(text);
    free(text);
    ck_assert_int_eq(back->noptional, 2);
    ck_assert_mem_eq(back->optional, pz->optional, 2 * sizeof *pz->optional);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(back->pieces[i].count, pz->pieces[i].count);
        ck_assert_int_eq(back->pieces[i].count_min, pz->pieces[i].count_min);
    }
    tsr_puzzle_free(back);
    static const tsr_cell m_at[] = {{1, 0, 0}};
    const tsr_placement pl[] = {{1, 1, m_at, NULL}};
    const tsr_solution sol = {1, pl};
    rc = tsr_write_solution_text(sink_open(&o), pz, &sol);
    text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, "+ M +\n");
    free(text);
    rc = tsr_write_polycube(sink_open(&o), pz, NULL);
    free(sink_close(&o));
    ck_assert_int_eq(rc, TSR_EUNSUPP);
    tsr_puzzle_free(pz);
}
END_TEST

/* Colours survive the puzzle writer: read(write(p)) has p's board and
 * piece colours, pairs and palette; a solution's JSON line carries a
 * coloured placement's colours as turned. */
START_TEST(colours_round_trip)
{
    tsr_puzzle *pz = read_json("{\"colors\": {\"palette\": [\"#ff0000\", \"#0000Ff\", \"#00ff00\"],"
                               " \"allow\": [{\"piece\": 1, \"board\": 1}, {\"piece\": 2, \"board\": 3}]},"
                               " \"board\": {\"rows\": [\"13.\", \"+..\"], \"optional\": [[1, 1]]},"
                               " \"pieces\": [{\"name\": \"D\", \"rows\": [\"12\"], \"count\": [1, 2]},"
                               " {\"name\": \"M\", \"cells\": [[0, 0]], \"colors\": [0], \"count\": 2},"
                               " {\"name\": \"F\", \"cells\": [[2, 1]], \"colors\": [2], \"fixed\": true}]}");
    ck_assert_ptr_nonnull(pz->colors);
    ck_assert_ptr_null(pz->pieces[1].colors); /* all neutral: none */
    struct sink o;
    int rc = tsr_write_puzzle_json(sink_open(&o), pz);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    tsr_puzzle *back = read_json(text);
    free(text);
    ck_assert_int_eq(back->ncells, pz->ncells);
    ck_assert_mem_eq(back->cells, pz->cells, (size_t)pz->ncells * sizeof *pz->cells);
    ck_assert_mem_eq(back->colors, pz->colors, (size_t)pz->ncells);
    for (int k = 0; k < pz->npieces; k++) {
        ck_assert_int_eq(back->pieces[k].ncells, pz->pieces[k].ncells);
        ck_assert((back->pieces[k].colors == NULL) == (pz->pieces[k].colors == NULL));
        if (pz->pieces[k].colors)
            ck_assert_mem_eq(back->pieces[k].colors, pz->pieces[k].colors,
                             (size_t)pz->pieces[k].ncells);
    }
    ck_assert_int_eq(back->nallowed, 2);
    ck_assert_mem_eq(back->allowed, pz->allowed, 2 * sizeof *pz->allowed);
    ck_assert_int_eq(back->npalette, 3);
    ck_assert_mem_eq(back->palette, pz->palette, 3 * sizeof *pz->palette);
    ck_assert_uint_eq(back->palette[1], 0x0000FFu);
    tsr_puzzle_free(back);
    static const tsr_cell d_at[] = {{0, 0, 0}, {1, 0, 0}};
    static const unsigned char d_col[] = {2, 1};
    const tsr_placement pl[] = {{0, 2, d_at, d_col}};
    const tsr_solution sol = {1, pl};
    rc = tsr_write_solution_json(sink_open(&o), pz, &sol);
    text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, "{\"pieces\":[{\"name\":\"D\",\"cells\":[[0,0,0],[1,0,0]],\"colors\":[2,1]}]}\n");
    free(text);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(puzzle_json_round_trip)
{
    tsr_puzzle *pz = ring_puzzle("I", "o");
    ck_assert_int_eq(tsr_puzzle_set_name(pz, "Ring \"8\" \xc3\xa9"), 0);
    ck_assert_int_eq(tsr_puzzle_set_description(pz, "line one\nline two"), 0);
    pz->rotations = TSR_ROT_ONE_SIDED;
    pz->mirror = true;
    pz->expected[TSR_UNIQUE_RAW] = 12;
    pz->expected[TSR_UNIQUE_MIRROR] = 3;
    struct sink o;
    int rc = tsr_write_puzzle_json(sink_open(&o), pz);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    tsr_puzzle *back = read_json(text);
    free(text);
    ck_assert_str_eq(back->name, pz->name);
    ck_assert_str_eq(back->description, pz->description);
    ck_assert_int_eq(back->rotations, TSR_ROT_ONE_SIDED);
    ck_assert(back->mirror);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(back->expected[i], pz->expected[i]);
    ck_assert_int_eq(back->ncells, pz->ncells);
    ck_assert_mem_eq(back->cells, pz->cells, (size_t)pz->ncells * sizeof *pz->cells);
    assert_same_pieces(pz, back);
    for (int i = 0; i < pz->npieces; i++) /* mobile cells exactly too */
        ck_assert_mem_eq(back->pieces[i].cells, pz->pieces[i].cells,
                         (size_t)pz->pieces[i].ncells * sizeof(tsr_cell));
    tsr_puzzle_free(back);

    /* names JSON cannot carry */
    ck_assert_int_eq(tsr_puzzle_set_name(pz, "bad \xff"), 0);
    rc = tsr_write_puzzle_json(sink_open(&o), pz);
    free(sink_close(&o));
    ck_assert_int_eq(rc, TSR_EUNSUPP);
    tsr_puzzle_free(pz);
}
END_TEST

/* A polycube definition, as JSON, is the same puzzle. */
START_TEST(puzzle_json_from_polycube)
{
    tsr_puzzle *pz = read_polycube("D:xDim=3:yDim=2\n"
                                   "L:stationary=S\n"
                                   "S . .\n"
                                   "a a b\n"
                                   "~L\n"
                                   "C:name=c:layout=0 0 0, 1 0 0\n"
                                   "~D\n");
    struct sink o;
    int rc = tsr_write_puzzle_json(sink_open(&o), pz);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    tsr_puzzle *back = read_json(text);
    free(text);
    assert_same_cells(pz->cells, pz->ncells, back->cells, back->ncells, true);
    assert_same_pieces(pz, back);
    tsr_puzzle_free(back);
    tsr_puzzle_free(pz);
}
END_TEST

/* ---- the plane lattices ------------------------------------------------------ */

/* The hexagon of 7 hexagons around (1, 1), drawn y up with hexagon (x, y)
 * at column 2x + y:
 *       B .        y = 2: (0, 2) (1, 2)
 *      B B A       y = 1: (0, 1) (1, 1) (2, 1)
 *       A A        y = 0: (1, 0) (2, 0)          */
static const tsr_cell HEX7[] = {{1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {1, 1, 0},
                                {2, 1, 0}, {0, 2, 0}, {1, 2, 0}};
static const tsr_cell HEX_A[] = {{1, 0, 0}, {2, 0, 0}, {2, 1, 0}};
static const tsr_cell HEX_B[] = {{0, 1, 0}, {1, 1, 0}, {0, 2, 0}};

static tsr_puzzle *hex_puzzle(const char *a, const char *b)
{
    tsr_puzzle *pz = tsr_puzzle_new();
    pz->lattice = TSR_LATTICE_HEXAGONAL;
    add_cells(pz, HEX7, 7);
    add_piece(pz, a, HEX_A, 3, 2, false);
    add_piece(pz, b, &HEX7[6], 1, 1, false);
    validate(pz);
    return pz;
}

static char *text_of(const tsr_puzzle *pz, const tsr_solution *s, int want_rc)
{
    struct sink o;
    int rc = tsr_write_solution_text(sink_open(&o), pz, s);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, want_rc);
    return text;
}

START_TEST(text_hexagonal)
{
    tsr_puzzle *pz = hex_puzzle("A", "B");
    const tsr_placement pl[] = {{0, 3, HEX_A, NULL}, {1, 3, HEX_B, NULL}};
    const tsr_solution s = {2, pl};
    char *text = text_of(pz, &s, 0);
    ck_assert_str_eq(text, "  B .\n"
                           " B B A\n"
                           "  A A\n");
    free(text);
    tsr_puzzle_free(pz);
    /* longer names widen the columns: a hexagon every 4 characters, rows
     * shifted by 2 */
    pz = hex_puzzle("Aa", "Bb");
    text = text_of(pz, &s, 0);
    ck_assert_str_eq(text, "    Bb  .\n"
                           "  Bb  Bb  Aa\n"
                           "    Aa  Aa\n");
    free(text);
    /* a cell with z = 1 is no hexagon */
    static const tsr_cell odd[] = {{1, 2, 1}};
    const tsr_placement bad[] = {{1, 1, odd, NULL}};
    free(text_of(pz, &(tsr_solution){1, bad}, TSR_EINVAL));
    tsr_puzzle_free(pz);
}
END_TEST

/* The hexagon of 6 triangles around the point (1, 1), triangle (x, y, z)
 * at column 2x + y + z, the last row y = 0 (as art: " ^v^" over " v^v"):
 *      TTT         y = 1: (0, 1, 0) (0, 1, 1) (1, 1, 0)
 *      UU.         y = 0: (0, 0, 1) (1, 0, 0) (1, 0, 1)    */
static const tsr_cell TRI6[] = {{0, 0, 1}, {1, 0, 0}, {1, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 1, 0}};
static const tsr_cell TRI_T[] = {{0, 1, 0}, {0, 1, 1}, {1, 1, 0}};
static const tsr_cell TRI_U[] = {{0, 0, 1}, {1, 0, 0}};

START_TEST(text_triangular)
{
    tsr_puzzle *pz = tsr_puzzle_new();
    pz->lattice = TSR_LATTICE_TRIANGULAR;
    add_cells(pz, TRI6, 6);
    add_piece(pz, "T", TRI_T, 3, 1, false);
    add_piece(pz, "U", TRI_U, 2, 1, false);
    add_piece(pz, "m", &TRI6[2], 1, 1, false);
    validate(pz);
    const tsr_placement pl[] = {{0, 3, TRI_T, NULL}, {1, 2, TRI_U, NULL}};
    const tsr_solution s = {2, pl};
    char *text = text_of(pz, &s, 0);
    ck_assert_str_eq(text, " TTT\n"
                           " UU.\n");
    free(text);
    /* the drawing, read back as art, is the board */
    tsr_puzzle *back = read_json("{\"lattice\": \"triangular\", \"board\": {\"rows\": "
                                 "[\" ...\", \" ...\"]}, \"pieces\": [{\"name\": \"s\", "
                                 "\"rows\": [\"######\"]}]}");
    assert_same_cells(pz->cells, pz->ncells, back->cells, back->ncells, true);
    tsr_puzzle_free(back);
    /* moved one row up, it is drawn the same: the columns move with the
     * lowest row's parity, so that the kinds read back */
    for (int i = 0; i < pz->ncells; i++)
        pz->cells[i].y += 1;
    const tsr_cell t_up[] = {{0, 2, 0}, {0, 2, 1}, {1, 2, 0}};
    const tsr_placement up[] = {{0, 3, t_up, NULL}};
    text = text_of(pz, &(tsr_solution){1, up}, 0);
    ck_assert_str_eq(text, " TTT\n"
                           " ...\n");
    free(text);
    /* wider names: a triangle every width + 1 characters */
    free(pz->pieces[0].name);
    pz->pieces[0].name = strdup("Tt");
    text = text_of(pz, &(tsr_solution){1, up}, 0);
    ck_assert_str_eq(text, "   Tt Tt Tt\n"
                           "   .  .  .\n");
    free(text);
    static const tsr_cell two[] = {{0, 1, 2}};
    const tsr_placement bad[] = {{2, 1, two, NULL}};
    free(text_of(pz, &(tsr_solution){1, bad}, TSR_EINVAL));
    tsr_puzzle_free(pz);
}
END_TEST

/* A solution's JSON line says its lattice; a hexagon is [x, y]. */
START_TEST(solution_json_plane)
{
    tsr_puzzle *pz = hex_puzzle("A", "B");
    const tsr_placement pl[] = {{0, 3, HEX_A, NULL}};
    struct sink o;
    int rc = tsr_write_solution_json(sink_open(&o), pz, &(tsr_solution){1, pl});
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, "{\"lattice\":\"hexagonal\",\"pieces\":[{\"name\":\"A\","
                           "\"cells\":[[1,0],[2,0],[2,1]]}]}\n");
    free(text);
    pz->lattice = TSR_LATTICE_TRIANGULAR; /* the same cells, as up triangles */
    rc = tsr_write_solution_json(sink_open(&o), pz, NULL);
    text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, "{\"lattice\":\"triangular\",\"pieces\":[]}\n");
    free(text);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(puzzle_json_plane_exact)
{
    tsr_puzzle *pz = hex_puzzle("A", "B");
    struct sink o;
    int rc = tsr_write_puzzle_json(sink_open(&o), pz);
    char *text = sink_close(&o);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text,
                     "{\n"
                     "  \"version\": 1,\n"
                     "  \"lattice\": \"hexagonal\",\n"
                     "  \"board\": {\"cells\": [[1, 0], [2, 0], [0, 1], [1, 1], [2, 1], [0, 2], "
                     "[1, 2]]},\n"
                     "  \"pieces\": [\n"
                     "    {\"name\": \"A\", \"cells\": [[1, 0], [2, 0], [2, 1]], \"count\": 2, "
                     "\"fixed\": false},\n"
                     "    {\"name\": \"B\", \"cells\": [[1, 2]], \"count\": 1, \"fixed\": false}\n"
                     "  ],\n"
                     "  \"rotations\": \"all\",\n"
                     "  \"mirror\": false\n"
                     "}\n");
    free(text);
    tsr_puzzle_free(pz);
}
END_TEST

static unsigned rnd_state;
static int rnd(int n) /* 0 .. n-1, a fixed sequence per seed */
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return (int)((rnd_state >> 16) % (unsigned)n);
}

/* A random valid puzzle on a plane lattice: a scattered board away from
 * the origin cut into pieces (some fixed, some moved, some coloured, some
 * with a range), optional cells, every top-level member set at random. */
static tsr_puzzle *random_plane_puzzle(enum tsr_lattice lattice)
{
    tsr_puzzle *pz = tsr_puzzle_new();
    pz->lattice = lattice;
    int w = 1 + rnd(6), h = 1 + rnd(6), ox = rnd(7) - 3, oy = rnd(7) - 3;
    int kinds = lattice == TSR_LATTICE_TRIANGULAR ? 2 : 1;
    tsr_cell cells[72];
    int n = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int z = 0; z < kinds; z++)
                if (rnd(10) < 7 || n == 0)
                    cells[n++] = (tsr_cell){x + ox, y + oy, z};
    for (int i = n - 1; i > 0; i--) { /* shuffled: pieces of scattered cells */
        int j = rnd(i + 1);
        tsr_cell c = cells[i];
        cells[i] = cells[j], cells[j] = c;
    }
    add_cells(pz, cells, n);
    unsigned char colors[72];
    bool coloured = rnd(2);
    for (int i = 0; i < n; i++)
        colors[i] = coloured ? (unsigned char)rnd(4) : 0;
    ck_assert_int_eq(tsr_puzzle_set_board_colors(pz, colors), 0);
    for (int at = 0, k = 0; at < n; k++) {
        int len = 1 + rnd(4);
        len = len > n - at ? n - at : len;
        bool fixed = k > 0 && rnd(5) == 0; /* the first is mobile: a puzzle has one */
        tsr_cell piece[4];
        int dx = fixed ? 0 : rnd(9) - 4, dy = fixed ? 0 : rnd(9) - 4;
        for (int i = 0; i < len; i++) {
            piece[i] = (tsr_cell){cells[at + i].x + dx, cells[at + i].y + dy, cells[at + i].z};
            colors[i] = !fixed && rnd(3) == 0 ? (unsigned char)(1 + rnd(3)) : 0;
            if (!fixed && rnd(8) == 0)
                ck_assert_int_eq(tsr_puzzle_add_optional_cell(pz, cells[at + i]), 0);
        }
        char name[16];
        snprintf(name, sizeof name, "p%d", k);
        add_piece(pz, name, piece, len, 1, fixed);
        ck_assert_int_eq(tsr_puzzle_set_piece_colors(pz, k, colors), 0);
        pz->pieces[k].count_min = !fixed && rnd(4) == 0 ? 0 : 1;
        at += len;
    }
    if (coloured || rnd(2)) {
        static const uint32_t rgb[] = {0xff0000, 0x00ff00, 0x0000ff};
        ck_assert_int_eq(tsr_puzzle_set_palette(pz, rgb, 3), 0);
        ck_assert_int_eq(tsr_puzzle_allow_colors(pz, 1 + rnd(3), 1 + rnd(3)), 0);
    }
    if (rnd(2))
        ck_assert_int_eq(tsr_puzzle_set_name(pz, "random \"plane\""), 0);
    if (rnd(2))
        ck_assert_int_eq(tsr_puzzle_set_description(pz, "one\ntwo"), 0);
    pz->rotations = (enum tsr_rotations)rnd(3);
    pz->mirror = rnd(2);
    for (int i = 0; i < 3; i++)
        pz->expected[i] = rnd(3) - 1;
    validate(pz);
    return pz;
}

static void assert_identical(const tsr_puzzle *a, const tsr_puzzle *b)
{
    ck_assert_int_eq(a->lattice, b->lattice);
    ck_assert_pstr_eq(a->name, b->name);
    ck_assert_pstr_eq(a->description, b->description);
    ck_assert_int_eq(a->ncells, b->ncells);
    ck_assert_mem_eq(a->cells, b->cells, (size_t)a->ncells * sizeof *a->cells);
    ck_assert((a->colors == NULL) == (b->colors == NULL));
    if (a->colors)
        ck_assert_mem_eq(a->colors, b->colors, (size_t)a->ncells);
    ck_assert_int_eq(a->noptional, b->noptional);
    if (a->noptional) /* optional cells: the art's first, then the list's: same set */
        assert_same_cells(a->optional, a->noptional, b->optional, b->noptional, true);
    ck_assert_int_eq(a->npieces, b->npieces);
    for (int k = 0; k < a->npieces; k++) {
        const tsr_piece *p = &a->pieces[k], *q = &b->pieces[k];
        ck_assert_str_eq(p->name, q->name);
        ck_assert_int_eq(p->ncells, q->ncells);
        ck_assert_mem_eq(p->cells, q->cells, (size_t)p->ncells * sizeof *p->cells);
        ck_assert_int_eq(p->count, q->count);
        ck_assert_int_eq(p->count_min, q->count_min);
        ck_assert_int_eq(p->fixed, q->fixed);
        ck_assert((p->colors == NULL) == (q->colors == NULL));
        if (p->colors)
            ck_assert_mem_eq(p->colors, q->colors, (size_t)p->ncells);
    }
    ck_assert_int_eq(a->rotations, b->rotations);
    ck_assert_int_eq(a->mirror, b->mirror);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(a->expected[i], b->expected[i]);
    ck_assert_int_eq(a->nallowed, b->nallowed);
    if (a->nallowed)
        ck_assert_mem_eq(a->allowed, b->allowed, (size_t)a->nallowed * sizeof *a->allowed);
    ck_assert_int_eq(a->npalette, b->npalette);
    if (a->npalette)
        ck_assert_mem_eq(a->palette, b->palette, (size_t)a->npalette * sizeof *a->palette);
}

/* read(write(p)) is p, field for field, and writing it again gives the
 * same bytes: 300 random puzzles on each plane lattice. */
START_TEST(plane_round_trip)
{
    static const enum tsr_lattice lat[] = {TSR_LATTICE_TRIANGULAR, TSR_LATTICE_HEXAGONAL};
    for (unsigned seed = 1; seed <= 300; seed++)
        for (int l = 0; l < 2; l++) {
            rnd_state = seed * 2 + (unsigned)l;
            tsr_puzzle *pz = random_plane_puzzle(lat[l]);
            struct sink o;
            ck_assert_int_eq(tsr_write_puzzle_json(sink_open(&o), pz), 0);
            char *text = sink_close(&o);
            tsr_puzzle *back = read_json(text);
            assert_identical(pz, back);
            ck_assert_int_eq(tsr_write_puzzle_json(sink_open(&o), back), 0);
            char *again = sink_close(&o);
            ck_assert_str_eq(text, again);
            free(text);
            free(again);
            tsr_puzzle_free(back);
            tsr_puzzle_free(pz);
        }
}
END_TEST

/* The other formats refuse the plane lattices, saying so. */
START_TEST(plane_refused_elsewhere)
{
    static const enum tsr_lattice lat[] = {TSR_LATTICE_TRIANGULAR, TSR_LATTICE_HEXAGONAL};
    static const char *const polycube[] = {
        "the puzzle is on the triangular lattice: a polycube definition describes polycubes "
        "(the cubic lattice) only",
        "the puzzle is on the hexagonal lattice: a polycube definition describes polycubes "
        "(the cubic lattice) only"};
    static const char *const burr[] = {
        "the puzzle is on the triangular lattice: BurrTools files are written for the cubic "
        "lattice only",
        "the puzzle is on the hexagonal lattice: BurrTools files are written for the cubic "
        "lattice only"};
    for (int l = 0; l < 2; l++) {
        tsr_puzzle *pz = hex_puzzle("A", "B");
        pz->lattice = lat[l];
        validate(pz);
        struct sink o;
        int rc = tsr_write_polycube(sink_open(&o), pz, NULL);
        char *text = sink_close(&o);
        ck_assert_int_eq(rc, TSR_EUNSUPP);
        ck_assert_str_eq(text, ""); /* nothing half-written */
        free(text);
        char *out = NULL;
        size_t len = 0;
        tsr_err err = {""};
        ck_assert_int_eq(tsr_puzzle_write(pz, TSR_FORMAT_POLYCUBE, &out, &len, &err), TSR_EUNSUPP);
        ck_assert_ptr_null(out);
        ck_assert_str_eq(err.msg, polycube[l]);
        ck_assert_int_eq(tsr_puzzle_write(pz, TSR_FORMAT_XMPUZZLE, &out, &len, &err), TSR_EUNSUPP);
        ck_assert_ptr_null(out);
        ck_assert_str_eq(err.msg, burr[l]);
        ck_assert_int_eq(tsr_puzzle_write(pz, TSR_FORMAT_JSON, &out, &len, &err), 0);
        ck_assert_ptr_nonnull(strstr(out, l ? "\"lattice\": \"hexagonal\"" :
                                              "\"lattice\": \"triangular\""));
        free(out);
        tsr_puzzle_free(pz);
    }
}
END_TEST

static Suite *write_suite(void)
{
    Suite *s = suite_create("write");
    TCase *tc = tcase_create("solutions");
    tcase_add_test(tc, text_2d);
    tcase_add_test(tc, text_3d);
    tcase_add_test(tc, solution_json);
    tcase_add_test(tc, bad_solutions);
    suite_add_tcase(s, tc);
    tc = tcase_create("polycube");
    tcase_add_test(tc, polycube_partial_assembly);
    tcase_add_test(tc, polycube_round_trip_files);
    tcase_add_test(tc, polycube_names);
    tcase_add_test(tc, polycube_rotations);
    suite_add_tcase(s, tc);
    tc = tcase_create("puzzle json");
    tcase_add_test(tc, puzzle_json_exact);
    tcase_add_test(tc, puzzle_json_round_trip);
    tcase_add_test(tc, loose_round_trip);
    tcase_add_test(tc, colours_round_trip);
    tcase_add_test(tc, puzzle_json_from_polycube);
    suite_add_tcase(s, tc);
    tc = tcase_create("plane lattices");
    tcase_add_test(tc, text_hexagonal);
    tcase_add_test(tc, text_triangular);
    tcase_add_test(tc, solution_json_plane);
    tcase_add_test(tc, puzzle_json_plane_exact);
    tcase_add_test(tc, plane_round_trip);
    tcase_add_test(tc, plane_refused_elsewhere);
    suite_add_tcase(s, tc);
    return s;
}

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    return write_suite();
}
