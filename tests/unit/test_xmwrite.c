/*
 * test_xmwrite.c - the BurrTools writer (src/puzzle/xmwrite.c) and the
 * conversions between formats (src/puzzle/convert.c).
 *
 * Round trips through the real reader: library puzzles written as
 * BurrTools files (really gzip: the magic bytes, and inflating gives the
 * XML) read back to the same board, optional cells, pieces (up to
 * translation) and counts or ranges, and count the same solutions; fixed
 * pieces come back carved out of the board with the same count.  What
 * BurrTools cannot express is refused with a message naming the piece and
 * the rule, and nothing is written: one-sided and unturned pieces, mirror
 * images of chiral 3D pieces; what makes no difference (mirror images of
 * achiral pieces, flat pieces turned over) is written.  Names that need
 * escaping survive; names XML cannot carry are refused.  The polycube
 * conversion says why it refuses ranges, optional cells and "none".
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "geom/geom.h"
#include "tessera/engine.h"
#include "tessera/puzzle.h"

static tsr_puzzle *load(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/puzzles/%s", TSR_SRCDIR, name);
    tsr_puzzle *pz = NULL;
    tsr_err err = {{0}};
    ck_assert_msg(tsr_puzzle_load_file(path, &pz, NULL, &err) == 0, "%s", err.msg);
    return pz;
}

/* pz written by tsr_write_xmpuzzle into a new buffer; the return code. */
static int write_xm(const tsr_puzzle *pz, bool gzip, char **buf, size_t *len, tsr_err *err)
{
    FILE *f = open_memstream(buf, len);
    ck_assert_ptr_nonnull(f);
    int rc = tsr_write_xmpuzzle(f, pz, gzip, err);
    fclose(f);
    return rc;
}

/* pz through a BurrTools file and back. */
static tsr_puzzle *round_trip(const tsr_puzzle *pz)
{
    char *buf = NULL;
    size_t len = 0;
    tsr_err err = {{0}};
    ck_assert_msg(write_xm(pz, true, &buf, &len, &err) == 0, "%s", err.msg);
    tsr_puzzle *back = NULL;
    ck_assert_msg(tsr_puzzle_read_xmpuzzle(buf, len, "out.xmpuzzle", NULL, &back, &err) == 0, "%s",
                  err.msg);
    free(buf);
    return back;
}

static long long count(const tsr_puzzle *pz, enum tsr_unique mode)
{
    tsr_options o;
    tsr_options_init(&o);
    o.unique = mode;
    o.threads = 1;
    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    ck_assert_msg(tsr_solver_new(pz, &o, &s, &err) == 0, "%s", err.msg);
    tsr_callbacks cb = {0};
    tsr_stats st;
    ck_assert_int_eq(tsr_solver_run(s, NULL, 0, &cb, &st), 0);
    long long n = (long long)st.solutions;
    tsr_stats_free(&st);
    tsr_solver_free(s);
    return n;
}

/* Are the cell sets a and b equal as sets, after moving each to the origin? */
static bool same_shape(const tsr_cell *a, int na, const tsr_cell *b, int nb)
{
    if (na != nb)
        return false;
    if (na == 0)
        return true; /* and the lists may be NULL */
    tsr_cell *x = malloc((size_t)na * sizeof *x), *y = malloc((size_t)nb * sizeof *y);
    memcpy(x, a, (size_t)na * sizeof *x);
    memcpy(y, b, (size_t)nb * sizeof *y);
    geo_normalize(x, na);
    geo_normalize(y, nb);
    bool same = memcmp(x, y, (size_t)na * sizeof *x) == 0;
    free(x);
    free(y);
    return same;
}

/* Are the cell sets equal where they are (sorted copies compared)? */
static bool same_cells(const tsr_cell *a, int na, const tsr_cell *b, int nb)
{
    if (na != nb)
        return false;
    if (na == 0)
        return true; /* and the lists may be NULL */
    tsr_cell *x = malloc((size_t)(na + 1) * sizeof *x), *y = malloc((size_t)(nb + 1) * sizeof *y);
    memcpy(x, a, (size_t)na * sizeof *x);
    memcpy(y, b, (size_t)nb * sizeof *y);
    qsort(x, (size_t)na, sizeof *x, geo_cell_cmp);
    qsort(y, (size_t)nb, sizeof *y, geo_cell_cmp);
    bool same = memcmp(x, y, (size_t)na * sizeof *x) == 0;
    free(x);
    free(y);
    return same;
}

/* The board, optional cells and mobile pieces of a and b agree (b read
 * back from a's file, so without a's fixed pieces and with their cells
 * carved out of its board). */
static void assert_same_model(const tsr_puzzle *a, const tsr_puzzle *b)
{
    tsr_cell *board = malloc((size_t)a->ncells * sizeof *board);
    int n = 0;
    for (int i = 0; i < a->ncells; i++) {
        bool under_fixed = false;
        for (int k = 0; k < a->npieces && !under_fixed; k++)
            for (int c = 0; a->pieces[k].fixed && c < a->pieces[k].ncells; c++)
                under_fixed |= memcmp(&a->pieces[k].cells[c], &a->cells[i], sizeof(tsr_cell)) == 0;
        if (!under_fixed)
            board[n++] = a->cells[i];
    }
    /* the library's boards start at the origin: the file keeps them there */
    ck_assert(same_cells(board, n, b->cells, b->ncells));
    ck_assert(same_cells(a->optional, a->noptional, b->optional, b->noptional));
    free(board);
    int k = 0;
    for (int i = 0; i < a->npieces; i++) {
        const tsr_piece *p = &a->pieces[i];
        if (p->fixed)
            continue;
        ck_assert_int_lt(k, b->npieces);
        const tsr_piece *q = &b->pieces[k++];
        ck_assert_str_eq(p->name, q->name);
        ck_assert(same_shape(p->cells, p->ncells, q->cells, q->ncells));
        ck_assert_int_eq(p->count, q->count);
        ck_assert_int_eq(p->count_min, q->count_min);
        ck_assert(!q->fixed);
    }
    ck_assert_int_eq(k, b->npieces);
    ck_assert_int_eq(b->rotations, TSR_ROT_ALL);
    ck_assert(!b->mirror);
}

START_TEST(gzip_really_produced)
{
    tsr_puzzle *pz = load("soma-cube.json");
    char *buf = NULL;
    size_t len = 0;
    tsr_err err = {{0}};
    ck_assert_msg(write_xm(pz, true, &buf, &len, &err) == 0, "%s", err.msg);
    ck_assert((unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b);
    /* inflated, it is the plain XML the writer gives without gzip */
    char *plain = NULL;
    size_t plen = 0;
    ck_assert_int_eq(write_xm(pz, false, &plain, &plen, &err), 0);
    ck_assert(strncmp(plain, "<?xml version=\"1.0\"?>\n<puzzle version=\"2\">", 42) == 0);
    ck_assert_ptr_null(memchr(plain, '\0', plen)); /* text, no stray byte */
    unsigned char *xml = malloc(plen + 1);
    uLongf got = (uLongf)plen + 1;
    z_stream z = {0};
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (unsigned char *)buf;
    z.avail_in = (uInt)len;
    z.next_out = xml;
    z.avail_out = (uInt)got;
    ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
    ck_assert_uint_eq(z.total_out, plen);
    inflateEnd(&z);
    ck_assert(memcmp(xml, plain, plen) == 0);
    ck_assert(strstr(plain, "<voxel x=\"3\" y=\"3\" z=\"3\" name=\"Board\" type=\"0\">"
                            "###########################</voxel>") != NULL);
    ck_assert(strstr(plain, "<problem name=\"Soma cube\" state=\"0\">") != NULL);
    ck_assert(strstr(plain, "<result id=\"7\"/>") != NULL);
    /* the description: an apostrophe escaped */
    ck_assert(strstr(plain, "<comment>Piet Hein&apos;s Soma cube") != NULL);
    free(xml);
    free(plain);
    free(buf);
    tsr_puzzle_free(pz);
}
END_TEST

/* Library puzzles, with their counts in every mode. */
static const struct {
    const char *file;
    long long raw, rotations, mirror;
} trips[] = {
    {"soma-cube.json", 11520, 480, 240},
    {"pentominoes-3x20.json", 8, 2, 2},
    {"pentominoes-any5-5x5.json", 856, 107, 107},                /* ranges */
    {"pentominoes-any7-6x6-optional-centre.json", 9080, 1135, 1135}, /* and an optional cell */
    {"dominoes-6x6.json", 6728, 930, 930},                       /* a count of 18 */
    {"l-trominoes-fixed-4x3.json", 2, 2, 2},                     /* a fixed piece */
};

START_TEST(round_trip_same_model_same_counts)
{
    tsr_puzzle *pz = load(trips[_i].file);
    tsr_puzzle *back = round_trip(pz);
    assert_same_model(pz, back);
    /* named "FILE: PROBLEM" as the reader names it, the problem after the
     * puzzle (cut to a BurrTools name's length) */
    ck_assert(strncmp(back->name, "out.xmpuzzle: ", 14) == 0);
    ck_assert(strncmp(back->name + 14, pz->name, strlen(back->name + 14)) == 0);
    ck_assert_int_eq(count(back, TSR_UNIQUE_RAW), trips[_i].raw);
    ck_assert_int_eq(count(back, TSR_UNIQUE_ROTATIONS), trips[_i].rotations);
    ck_assert_int_eq(count(back, TSR_UNIQUE_MIRROR), trips[_i].mirror);
    ck_assert_int_eq(count(pz, TSR_UNIQUE_ROTATIONS), trips[_i].rotations);
    tsr_puzzle_free(back);
    tsr_puzzle_free(pz);
}
END_TEST

/* A 2x2x2 box of two V-trominoes and an I-domino, built by hand. */
static tsr_puzzle *small_box(enum tsr_rotations rot, bool mirror, const char *name)
{
    tsr_puzzle *pz = tsr_puzzle_new();
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 2; x++)
                ck_assert_int_eq(tsr_puzzle_add_board_cell(pz, (tsr_cell){x, y, z}), 0);
    tsr_cell v[] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, d[] = {{0, 0, 0}, {0, 0, 1}};
    ck_assert_int_ge(tsr_puzzle_add_piece(pz, name, v, 3, 2, false), 0);
    ck_assert_int_ge(tsr_puzzle_add_piece(pz, "I", d, 2, 1, false), 0);
    pz->rotations = rot;
    pz->mirror = mirror;
    return pz;
}

START_TEST(names_are_escaped)
{
    tsr_puzzle *pz = small_box(TSR_ROT_ALL, false, "<V & \"W\">");
    ck_assert_int_eq(tsr_puzzle_set_name(pz, "a 'box' <2x2x2>"), 0);
    tsr_puzzle *back = round_trip(pz);
    assert_same_model(pz, back);
    ck_assert_str_eq(back->name, "out.xmpuzzle: a 'box' <2x2x2>");
    ck_assert_int_eq(count(back, TSR_UNIQUE_RAW), count(pz, TSR_UNIQUE_RAW));
    tsr_puzzle_free(back);
    tsr_puzzle_free(pz);
}
END_TEST

/* A refusal: the code, words in the message, and no byte written. */
static void assert_refused(const tsr_puzzle *pz, int code, const char *words)
{
    char *buf = NULL;
    size_t len = 0;
    tsr_err err = {{0}};
    ck_assert_int_eq(write_xm(pz, true, &buf, &len, &err), code);
    ck_assert_msg(strstr(err.msg, words) != NULL, "'%s' lacks '%s'", err.msg, words);
    ck_assert_uint_eq(len, 0);
    free(buf);
}

START_TEST(what_burrtools_cannot_express_is_refused)
{
    /* one-sided in space: the V may not turn over */
    tsr_puzzle *pz = small_box(TSR_ROT_ONE_SIDED, false, "V");
    assert_refused(pz, TSR_EUNSUPP, "piece V: \"rotations\": \"one-sided\" gives it 4 orientations");
    tsr_puzzle_free(pz);
    pz = small_box(TSR_ROT_NONE, false, "V");
    assert_refused(pz, TSR_EUNSUPP, "piece V: \"rotations\": \"none\" gives it 1 orientation");
    tsr_puzzle_free(pz);
    /* the one-sided pentominoes on a flat board: F cannot turn over */
    pz = load("onesided-pentominoes-3x30.json");
    assert_refused(pz, TSR_EUNSUPP, "piece F: \"rotations\": \"one-sided\" gives it 4 orientations "
                                    "on this board where BurrTools");
    tsr_puzzle_free(pz);
    /* mirror images of a chiral 3D piece (the Soma cube's A) */
    pz = load("soma-cube.json");
    pz->mirror = true;
    assert_refused(pz, TSR_EUNSUPP, "piece A: \"mirror\": true lets it be placed as its mirror image");
    tsr_puzzle_free(pz);
    /* a name XML cannot carry; a count past what the reader takes back */
    pz = small_box(TSR_ROT_ALL, false, "V\001");
    assert_refused(pz, TSR_EUNSUPP, "piece 1: its name is not text a BurrTools file can carry");
    pz->pieces[0].name[1] = '\0';
    pz->pieces[0].count = 9000;
    assert_refused(pz, TSR_ETOOBIG, "piece V: 9000 copies");
    tsr_puzzle_free(pz);
}
END_TEST

/* Colours go out as BurrTools' own (docs/puzzle-format.md, "Colours"):
 * read back, the board and the pieces have their colours, the problem its
 * pairs, the file as many colours as used (the palette's), and the
 * counts are the same.  BurrTools' assembler counts such files alike
 * (`make check-burrtools`: 42 for this one, 84 for DraculasDentalDesaster
 * read and written back). */
static const char COLOURED[] =
    "{\"colors\": {\"allow\": [{\"piece\": 1, \"board\": 1},"
    " {\"piece\": 2, \"board\": 1}]},"
    " \"board\": {\"layers\": [[\"12\", \"21\"], [\"21\", \"12\"], [\"12\", \"21\"]]},"
    " \"pieces\": [{\"name\": \"D\", \"rows\": [\"1#\"], \"count\": 3},"
    " {\"name\": \"L\", \"rows\": [\"##\", \"#.\"], \"count\": 2}]}";

START_TEST(colours_round_trip)
{
    tsr_puzzle *pz = NULL;
    tsr_err err = {{0}};
    ck_assert_msg(tsr_puzzle_read_json(COLOURED, strlen(COLOURED), "c.json", &pz, NULL, &err) == 0,
                  "%s", err.msg);
    tsr_puzzle *back = round_trip(pz);
    assert_same_model(pz, back);
    /* the board at the origin as it was: cell by cell the same colours */
    ck_assert_ptr_nonnull(back->colors);
    for (int i = 0; i < pz->ncells; i++)
        for (int j = 0; j < back->ncells; j++)
            if (memcmp(&pz->cells[i], &back->cells[j], sizeof pz->cells[i]) == 0)
                ck_assert_int_eq(back->colors[j], pz->colors[i]);
    /* D's one coloured cell (its own box, the same place), L neutral */
    ck_assert_ptr_nonnull(back->pieces[0].colors);
    ck_assert_int_eq(back->pieces[0].colors[0] + back->pieces[0].colors[1], 1);
    ck_assert_ptr_null(back->pieces[1].colors);
    ck_assert_int_eq(back->nallowed, 2);
    ck_assert_mem_eq(back->allowed, pz->allowed, 2 * sizeof *pz->allowed);
    /* colours 1 and 2 used and no palette: BurrTools gets display colours */
    ck_assert_int_eq(back->npalette, 2);
    ck_assert_uint_ne(back->palette[0], back->palette[1]);
    /* a palette goes out as it is */
    uint32_t rgb[2] = {0xFF0000u, 0x0000FFu};
    ck_assert_int_eq(tsr_puzzle_set_palette(pz, rgb, 2), 0);
    tsr_puzzle_free(back);
    back = round_trip(pz);
    ck_assert_int_eq(back->npalette, 2);
    ck_assert_mem_eq(back->palette, rgb, sizeof rgb);
    static const long long want[3] = {336, 84, 42};
    for (int m = 0; m < 3; m++) {
        ck_assert_int_eq(count(pz, (enum tsr_unique)m), want[m]);
        ck_assert_int_eq(count(back, (enum tsr_unique)m), want[m]);
    }
    tsr_puzzle_free(back);
    tsr_puzzle_free(pz);
    /* a tripod is its own mirror image, but not with its arms coloured 1,
     * 2, 3: "mirror" would place its mirror image, which BurrTools never does */
    static const tsr_cell tripod[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    static const unsigned char arms[4] = {0, 1, 2, 3};
    pz = tsr_puzzle_new();
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(tsr_puzzle_add_board_cell(pz, (tsr_cell){i & 1, i >> 1 & 1, i >> 2}), 0);
    ck_assert_int_eq(tsr_puzzle_add_piece(pz, "T", tripod, 4, 2, false), 0);
    pz->mirror = true;
    char *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(write_xm(pz, true, &buf, &len, &err), 0); /* neutral: mirror changes nothing */
    free(buf);
    ck_assert_int_eq(tsr_puzzle_set_piece_colors(pz, 0, arms), 0);
    assert_refused(pz, TSR_EUNSUPP, "piece T: \"mirror\": true lets it be placed as its mirror image");
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(rules_that_change_nothing_are_written)
{
    /* the V-tromino and the domino are their own mirror images */
    tsr_puzzle *pz = small_box(TSR_ROT_ALL, true, "V");
    tsr_puzzle *back = round_trip(pz);
    ck_assert_int_eq(count(back, TSR_UNIQUE_RAW), count(pz, TSR_UNIQUE_RAW));
    tsr_puzzle_free(back);
    tsr_puzzle_free(pz);
    /* flat: turning a pentomino over is a rotation in space, so mirror adds nothing */
    pz = load("pentominoes-3x20.json");
    pz->mirror = true;
    back = round_trip(pz);
    ck_assert_int_eq(count(back, TSR_UNIQUE_RAW), 8);
    tsr_puzzle_free(back);
    tsr_puzzle_free(pz);
    /* flat, one-sided but with mirror images: every pentomino turns all ways */
    pz = load("pentominoes-3x20.json");
    pz->rotations = TSR_ROT_ONE_SIDED;
    pz->mirror = true;
    back = round_trip(pz);
    ck_assert_int_eq(count(back, TSR_UNIQUE_RAW), 8);
    tsr_puzzle_free(back);
    tsr_puzzle_free(pz);
}
END_TEST

/* tsr_puzzle_write: each format, and the polycube refusals in words. */
START_TEST(convert_formats_and_refusals)
{
    tsr_puzzle *pz = load("pentominoes-3x20.json");
    for (int f = 0; tsr_format_names[f] != NULL; f++) {
        char *buf = NULL;
        size_t len = 0;
        tsr_err err = {{0}};
        ck_assert_int_eq(tsr_format_parse(tsr_format_names[f]), f);
        ck_assert_msg(tsr_puzzle_write(pz, f, &buf, &len, &err) == 0, "%s", err.msg);
        tsr_puzzle *back = NULL;
        ck_assert_msg(tsr_puzzle_read(buf, len, "converted", &back, NULL, &err) == 0, "%s",
                      err.msg);
        ck_assert_int_eq(back->npieces, 12);
        ck_assert_int_eq(count(back, TSR_UNIQUE_RAW), 8);
        tsr_puzzle_free(back);
        free(buf);
    }
    tsr_puzzle_free(pz);
    ck_assert_int_eq(tsr_format_of_path("a/b.xmpuzzle"), TSR_FORMAT_XMPUZZLE);
    ck_assert_int_eq(tsr_format_of_path("b.txt"), TSR_FORMAT_POLYCUBE);
    ck_assert_int_eq(tsr_format_of_path("b.json"), TSR_FORMAT_JSON);
    ck_assert_int_eq(tsr_format_of_path("dir.json/b"), -1);
    ck_assert_int_eq(tsr_format_parse("burrtools"), -1);

    static const struct {
        const char *file;
        const char *words;
    } polycube_refuses[] = {
        {"pentominoes-any5-5x5.json", "the count range [0, 1]: a polycube definition has no ranges"},
        {"pentominoes-any7-6x6-optional-centre.json", "4 optional board cells: a polycube"},
        {"dominoes-6x6.json", "piece D: 18 copies: a polycube definition has no counts"},
    };
    for (size_t i = 0; i < sizeof polycube_refuses / sizeof *polycube_refuses; i++) {
        pz = load(polycube_refuses[i].file);
        if (i == 1) /* its ranges would be refused first: make them counts */
            for (int k = 0; k < pz->npieces; k++)
                pz->pieces[k].count_min = pz->pieces[k].count;
        char *buf = (char *)1;
        size_t len = 1;
        tsr_err err = {{0}};
        ck_assert_int_eq(tsr_puzzle_write(pz, TSR_FORMAT_POLYCUBE, &buf, &len, &err), TSR_EUNSUPP);
        ck_assert_msg(strstr(err.msg, polycube_refuses[i].words), "%s", err.msg);
        ck_assert_ptr_null(buf);
        tsr_puzzle_free(pz);
    }
    pz = small_box(TSR_ROT_NONE, false, "V");
    char *buf = NULL;
    size_t len = 0;
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_puzzle_write(pz, TSR_FORMAT_POLYCUBE, &buf, &len, &err), TSR_EUNSUPP);
    ck_assert_msg(strstr(err.msg, "\"rotations\": \"none\": a polycube definition"), "%s", err.msg);
    tsr_puzzle_free(pz);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("xmwrite");
    TCase *tc = tcase_create("xmwrite");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, gzip_really_produced);
    tcase_add_loop_test(tc, round_trip_same_model_same_counts, 0,
                        (int)(sizeof trips / sizeof trips[0]));
    tcase_add_test(tc, names_are_escaped);
    tcase_add_test(tc, what_burrtools_cannot_express_is_refused);
    tcase_add_test(tc, colours_round_trip);
    tcase_add_test(tc, rules_that_change_nothing_are_written);
    tcase_add_test(tc, convert_formats_and_refusals);
    suite_add_tcase(s, tc);
    return s;
}
