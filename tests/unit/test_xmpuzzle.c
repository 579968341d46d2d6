/*
 * test_xmpuzzle.c - the BurrTools reader (src/puzzle/xmpuzzle.c).
 *
 * The Soma cube written as BurrTools writes it (gzip-compressed and as
 * plain XML) reads as puzzles/soma-cube.json does and counts the published
 * 11520 / 480 / 240; problems are chosen by number and by name; counts and
 * ranges become counts and ranges, '+' result voxels optional cells.
 * Hostile input is a table that must fail with its code and a message
 * naming the trouble: a zip bomb, a huge voxel box, a cut gzip stream,
 * malformed XML, bad voxel strings, a problem out of range, another grid,
 * colours the file does not define.  Colours and colour constraints, in a
 * file written as BurrTools writes it, count as worked out by hand (see
 * COLOURS); with TSR_BURRTOOLS_EXAMPLES naming BurrTools' examples/
 * directory, its cube-grid examples count as BurrTools records them
 * (docs/puzzle-format.md, "BurrTools files").
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tessera/engine.h"
#include "tessera/puzzle.h"

#define SOMA_SHAPES                                                                        \
    "  <shapes>\n"                                                                         \
    "    <voxel x=\"2\" y=\"2\" z=\"1\" name=\"V\" type=\"0\">###_</voxel>\n"              \
    "    <voxel x=\"3\" y=\"2\" z=\"1\" name=\"L\" type=\"0\">####__</voxel>\n"            \
    "    <voxel x=\"2\" y=\"3\" z=\"1\" name=\"T\" type=\"0\">#_###_</voxel>\n"            \
    "    <voxel x=\"2\" y=\"3\" z=\"1\" name=\"Z\" type=\"0\">_####_</voxel>\n"            \
    "    <voxel x=\"2\" y=\"2\" z=\"2\" name=\"A\" type=\"0\">###__#__</voxel>\n"          \
    "    <voxel x=\"2\" y=\"2\" z=\"2\" name=\"B\" type=\"0\">_#__###_</voxel>\n"          \
    "    <voxel x=\"2\" y=\"2\" z=\"2\" name=\"P\" type=\"0\">###_#___</voxel>\n"          \
    "    <voxel x=\"3\" y=\"3\" z=\"3\" type=\"0\">###########################</voxel>\n" \
    "    <voxel x=\"3\" y=\"3\" z=\"1\" type=\"0\">####+####</voxel>\n"                    \
    "  </shapes>\n"

static const char SOMA[] =
    "<?xml version=\"1.0\"?>\n"
    "<puzzle version=\"2\">\n"
    "  <gridType type=\"0\"/>\n"
    "  <colors/>\n" SOMA_SHAPES
    "  <problems>\n"
    "    <problem name=\"Cube\">\n"
    "      <shapes>\n"
    "        <shape id=\"0\" count=\"1\"/> <shape id=\"1\" count=\"1\"/> <shape id=\"2\" count=\"1\"/>\n"
    "        <shape id=\"3\" count=\"1\"/> <shape id=\"4\" count=\"1\"/> <shape id=\"5\" count=\"1\"/>\n"
    "        <shape id=\"6\" count=\"1\"/>\n"
    "      </shapes>\n"
    "      <result id=\"7\"/>\n"
    "      <bitmap/>\n"
    "    </problem>\n"
    "    <problem name=\"Square\">\n"
    "      <shapes><shape id=\"0\" min=\"0\" max=\"3\"/><shape id=\"8\" count=\"0\"/></shapes>\n"
    "      <result id=\"8\"/>\n"
    "    </problem>\n"
    "  </problems>\n"
    "</puzzle>\n";

/* The text gzip-compressed, as BurrTools saves it. */
static unsigned char *gz(const void *text, size_t len, size_t *outlen)
{
    z_stream z = {0};
    ck_assert_int_eq(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)len);
    unsigned char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    z.next_in = (unsigned char *)text;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    *outlen = cap - z.avail_out;
    deflateEnd(&z);
    return out;
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

START_TEST(soma_counts_as_published)
{
    size_t n;
    unsigned char *z = gz(SOMA, strlen(SOMA), &n);
    ck_assert(tsr_is_xmpuzzle(z, n) && tsr_is_xmpuzzle(SOMA, strlen(SOMA)));
    for (int plain = 0; plain < 2; plain++) {
        tsr_puzzle *pz = NULL;
        tsr_err err = {{0}};
        /* through the format detection of tsr_puzzle_read, as the CLI reads files */
        int rc = plain ? tsr_puzzle_read(SOMA, strlen(SOMA), "soma.xmpuzzle", &pz, NULL, &err)
                       : tsr_puzzle_read((const char *)z, n, "soma.xmpuzzle", &pz, NULL, &err);
        ck_assert_msg(rc == 0, "%s", err.msg);
        ck_assert_int_eq(pz->ncells, 27);
        ck_assert_int_eq(pz->npieces, 7);
        ck_assert_str_eq(pz->pieces[4].name, "A");
        ck_assert_str_eq(pz->name, "soma.xmpuzzle: Cube");
        ck_assert_int_eq(pz->rotations, TSR_ROT_ALL);
        ck_assert(!pz->mirror);
        ck_assert_int_eq(count(pz, TSR_UNIQUE_RAW), 11520);
        ck_assert_int_eq(count(pz, TSR_UNIQUE_ROTATIONS), 480);
        ck_assert_int_eq(count(pz, TSR_UNIQUE_MIRROR), 240);
        tsr_puzzle_free(pz);
    }
    free(z);
}
END_TEST

/* Colours as BurrTools writes them: the board a 2x2 square coloured as a
 * checkerboard (colours 1 and 2, "#1#2#2#1": (0,0) and (1,1) colour 1) or
 * neutral, and two dominoes with one end of each colour ("#1#2").
 *  - Checker (pairs 1 on 1, 2 on 2): each domino lies with its colour-1
 *    end on the colour-1 cell, one way on each pair of cells; the two
 *    tilings (two across, two down) are each other's image under the
 *    diagonal flip, which keeps the colouring (a quarter turn does not):
 *    2 / 1 / 1.
 *  - Bare (the checker without a <bitmap>): coloured cells on coloured
 *    cells need a pair, so no domino fits anywhere: 0.
 *  - Neutral board: any colour goes, but the colours are part of the
 *    dominoes: each of the 2 tilings has each domino either way round, 8
 *    tilings; the square's symmetries keep the two across and turn them
 *    down, and within the across ones identify LL with RR and LR with RL
 *    (L: colour 1 on the left): 8 / 2 / 2.
 * BurrTools' own assembler (tests/burrtools/load, built from its source)
 * counts this file's problems 1, 0 and 2 assemblies: the rotations counts. */
static const char COLOURS[] =
    "<?xml version=\"1.0\"?>\n"
    "<puzzle version=\"2\">\n"
    "  <gridType type=\"0\"/>\n"
    "  <colors>\n"
    "    <color red=\"255\" green=\"0\" blue=\"0\"/>\n"
    "    <color red=\"0\" green=\"0\" blue=\"255\"/>\n"
    "  </colors>\n"
    "  <shapes>\n"
    "    <voxel x=\"2\" y=\"1\" z=\"1\" name=\"D\" type=\"0\">#1#2</voxel>\n"
    "    <voxel x=\"2\" y=\"2\" z=\"1\" type=\"0\">#1#2#2#1</voxel>\n"
    "    <voxel x=\"2\" y=\"2\" z=\"1\" type=\"0\">####</voxel>\n"
    "  </shapes>\n"
    "  <problems>\n"
    "    <problem name=\"Checker\">\n"
    "      <shapes><shape id=\"0\" count=\"2\"/></shapes>\n"
    "      <result id=\"1\"/>\n"
    "      <bitmap><pair piece=\"0\" result=\"0\"/><pair piece=\"1\" result=\"1\"/></bitmap>\n"
    "    </problem>\n"
    "    <problem name=\"Bare\">\n"
    "      <shapes><shape id=\"0\" count=\"2\"/></shapes>\n"
    "      <result id=\"1\"/>\n"
    "    </problem>\n"
    "    <problem name=\"Neutral\">\n"
    "      <shapes><shape id=\"0\" count=\"2\"/></shapes>\n"
    "      <result id=\"2\"/>\n"
    "      <bitmap/>\n"
    "    </problem>\n"
    "  </problems>\n"
    "</puzzle>\n";

START_TEST(colours_count_as_worked_out)
{
    static const struct {
        const char *problem;
        long long counts[3];
    } want[] = {{"Checker", {2, 1, 1}}, {"Bare", {0, 0, 0}}, {"Neutral", {8, 2, 2}}};
    size_t n;
    unsigned char *z = gz(COLOURS, strlen(COLOURS), &n);
    for (int k = 0; k < 3; k++) {
        tsr_puzzle *pz = NULL;
        tsr_err err = {{0}};
        ck_assert_msg(tsr_puzzle_read_xmpuzzle(z, n, "colours.xmpuzzle", want[k].problem, &pz, &err) == 0,
                      "%s", err.msg);
        /* the model: colours on the cells, the pairs 1-based, the palette */
        ck_assert_int_eq(pz->npieces, 1);
        ck_assert_ptr_nonnull(pz->pieces[0].colors);
        ck_assert(pz->pieces[0].colors[0] == 1 && pz->pieces[0].colors[1] == 2);
        ck_assert_int_eq(pz->npalette, 2);
        ck_assert_uint_eq(pz->palette[0], 0xFF0000u);
        ck_assert_uint_eq(pz->palette[1], 0x0000FFu);
        if (k < 2) {
            ck_assert_ptr_nonnull(pz->colors);
            ck_assert(pz->colors[0] == 1 && pz->colors[1] == 2 && pz->colors[2] == 2 &&
                      pz->colors[3] == 1);
        } else {
            ck_assert_ptr_null(pz->colors);
        }
        ck_assert_int_eq(pz->nallowed, k == 0 ? 2 : 0);
        if (k == 0)
            ck_assert(pz->allowed[0].piece == 1 && pz->allowed[0].board == 1 &&
                      pz->allowed[1].piece == 2 && pz->allowed[1].board == 2);
        for (int m = 0; m < 3; m++)
            ck_assert_msg(count(pz, (enum tsr_unique)m) == want[k].counts[m], "%s, mode %d: %lld",
                          want[k].problem, m, count(pz, (enum tsr_unique)m));
        /* the placement diagnostics count what the colours leave: 4 on the
         * checkerboard (each pair of cells one way), none bare, 8 on the
         * neutral board (each pair of cells both ways) */
        tsr_fit fit;
        int rc = tsr_puzzle_fits(pz, NULL, 0, NULL, &fit, &err);
        ck_assert_int_eq(fit.placements, k == 0 ? 4 : k == 1 ? 0 : 8);
        ck_assert_int_eq(rc, k == 1 ? TSR_EINVAL : 0);
        if (k == 1)
            ck_assert_msg(strstr(err.msg, "piece D fits nowhere on this 2x2 board with its colours"),
                          "%s", err.msg);
        tsr_puzzle_free(pz);
    }
    free(z);
}
END_TEST

/* BurrTools' own cube-grid examples, when TSR_BURRTOOLS_EXAMPLES names
 * its examples/ directory: the assemblies BurrTools records in each file
 * are Tessera's `rotations` count (docs/puzzle-format.md).  The files are
 * BurrTools' (GPL), so they are read from its checkout, never copied here. */
START_TEST(burrtools_examples_count_as_recorded)
{
    const char *dir = getenv("TSR_BURRTOOLS_EXAMPLES");
    if (dir == NULL || *dir == '\0')
        return;
    static const struct {
        const char *file;
        long long assemblies;
    } ex[] = {{"DraculasDentalDesaster", 84}, {"PelikanBurr", 12}, {"AlPackino", 1},
              {"CubeInCage", 96}};
    for (size_t k = 0; k < sizeof ex / sizeof ex[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.xmpuzzle", dir, ex[k].file);
        tsr_puzzle *pz = NULL;
        tsr_err err = {{0}};
        ck_assert_msg(tsr_puzzle_load_file(path, &pz, NULL, &err) == 0, "%s", err.msg);
        ck_assert_msg(count(pz, TSR_UNIQUE_ROTATIONS) == ex[k].assemblies, "%s", ex[k].file);
        tsr_puzzle_free(pz);
    }
}
END_TEST

START_TEST(problems_by_number_and_name)
{
    static const char *const specs[] = {"2", "Square"};
    for (int i = 0; i < 2; i++) {
        tsr_puzzle *pz = NULL;
        tsr_err err = {{0}};
        ck_assert_msg(tsr_puzzle_read_xmpuzzle(SOMA, strlen(SOMA), "soma.xmpuzzle", specs[i], &pz,
                                               &err) == 0,
                      "%s", err.msg);
        /* a 3x3 square with an optional centre; V in 0..3 copies; a shape
         * of count 0 is no piece */
        ck_assert_int_eq(pz->ncells, 9);
        ck_assert_int_eq(pz->noptional, 1);
        ck_assert(pz->optional[0].x == 1 && pz->optional[0].y == 1);
        ck_assert_int_eq(pz->npieces, 1);
        ck_assert_int_eq(pz->pieces[0].count_min, 0);
        ck_assert_int_eq(pz->pieces[0].count, 3);
        /* three V-trominoes would have to cover all nine cells, but each
         * lies in a 2x2 block, which holds one corner of the 3x3: four
         * corners cannot go to three pieces */
        ck_assert_int_eq(count(pz, TSR_UNIQUE_RAW), 0);
        tsr_puzzle_free(pz);
    }
}
END_TEST

/* A long name in another script is cut where a character starts, so the
 * puzzle it names can still be written as JSON. */
START_TEST(long_names_cut_between_characters)
{
    char name[200] = "a", *xml = strdup(SOMA);
    ck_assert_ptr_nonnull(xml);
    for (int i = 0; i < 45; i++)
        strcat(name, "\xc3\xa9"); /* 'a' and 45 e-acutes: 91 bytes, 64 would end mid-character */
    const char *at = strstr(xml, "name=\"V\"");
    ck_assert_ptr_nonnull(at);
    char *big = malloc(strlen(xml) + sizeof name);
    ck_assert_ptr_nonnull(big);
    sprintf(big, "%.*sname=\"%s\"%s", (int)(at - xml), xml, name, at + strlen("name=\"V\""));
    tsr_puzzle *pz = NULL;
    tsr_err err = {{0}};
    ck_assert_msg(tsr_puzzle_read_xmpuzzle(big, strlen(big), "long.xmpuzzle", NULL, &pz, &err) == 0,
                  "%s", err.msg);
    const char *got = NULL;
    for (int i = 0; i < pz->npieces; i++)
        if (pz->pieces[i].name[0] == 'a')
            got = pz->pieces[i].name;
    ck_assert_ptr_nonnull(got);
    ck_assert_int_eq(strlen(got), 63); /* 'a' and 31 whole characters of TSR_MAX_NAME's 64 bytes */
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    ck_assert_int_eq(tsr_write_puzzle_json(f, pz), 0);
    fclose(f);
    free(out);
    tsr_puzzle_free(pz);
    free(big);
    free(xml);
}
END_TEST

/* The part of SOMA after its <shapes> block, swapped for `problems`. */
static char *with_problems(const char *problems)
{
    const char *head = "<?xml version=\"1.0\"?>\n<puzzle version=\"2\">\n<gridType type=\"0\"/>\n" SOMA_SHAPES;
    char *s = malloc(strlen(head) + strlen(problems) + 32);
    ck_assert_ptr_nonnull(s);
    sprintf(s, "%s%s</puzzle>\n", head, problems);
    return s;
}

static const struct {
    const char *xml; /* NULL: see the test */
    const char *problem;
    int code;
    const char *needle;
} bad[] = {
    {"<puzzle><shapes>", NULL, TSR_EINVAL, "not well-formed XML"},
    {"<foo/>", NULL, TSR_EINVAL, "not a BurrTools puzzle"},
    {"<puzzle version=\"2\"><gridType type=\"1\"/></puzzle>", NULL, TSR_EINVAL, "triangular prisms"},
    {"<puzzle version=\"2\"><shapes/></puzzle>", NULL, TSR_EINVAL, "no problem"},
    {"<puzzle><shapes><voxel x=\"100000\" y=\"100000\" z=\"100000\" type=\"0\">#</voxel></shapes></puzzle>",
     NULL, TSR_ETOOBIG, "more than 16777216 voxels"},
    {"<puzzle><shapes><voxel x=\"-1\" y=\"1\" z=\"1\" type=\"0\">#</voxel></shapes></puzzle>", NULL,
     TSR_EINVAL, "expected a whole number"},
    {"<puzzle><shapes><voxel y=\"1\" z=\"1\">#</voxel></shapes></puzzle>", NULL, TSR_EINVAL,
     "needs a 'x' attribute"},
    {"<puzzle><shapes><voxel x=\"2\" y=\"1\" z=\"1\">"
     "##########################################################################</voxel>"
     "</shapes></puzzle>",
     NULL, TSR_EINVAL, "longer than its 2x1x1 box"},
    {"<puzzle><shapes><voxel x=\"2\" y=\"1\" z=\"1\">###</voxel></shapes><problems><problem>"
     "<shapes><shape id=\"0\"/></shapes><result id=\"0\"/></problem></problems></puzzle>",
     NULL, TSR_EINVAL, "more voxels than its 2x1x1 box holds"},
    {"<puzzle><shapes><voxel x=\"2\" y=\"1\" z=\"1\">##</voxel><voxel x=\"3\" y=\"1\" z=\"1\">#x#</voxel>"
     "</shapes><problems><problem><shapes><shape id=\"0\"/></shapes><result id=\"1\"/></problem>"
     "</problems></puzzle>",
     NULL, TSR_EINVAL, "'x' in the voxel string"},
    {"<puzzle><shapes><voxel x=\"2\" y=\"1\" z=\"1\">##</voxel><voxel x=\"3\" y=\"1\" z=\"1\">##</voxel>"
     "</shapes><problems><problem><shapes><shape id=\"0\"/></shapes><result id=\"1\"/></problem>"
     "</problems></puzzle>",
     NULL, TSR_EINVAL, "2 voxels for a 3x1x1 box of 3"},
    {"<puzzle><shapes><voxel x=\"1\" y=\"1\" z=\"1\">1#</voxel></shapes><problems><problem>"
     "<shapes><shape id=\"0\"/></shapes><result id=\"0\"/></problem></problems></puzzle>",
     NULL, TSR_EINVAL, "starts with a colour digit"},
    {"<puzzle><shapes><voxel x=\"1\" y=\"1\" z=\"1\">#</voxel></shapes><problems><problem>"
     "<shapes><shape id=\"0\" min=\"2\" max=\"1\"/></shapes><result id=\"0\"/></problem></problems></puzzle>",
     NULL, TSR_EINVAL, "min 2 is above max 1"},
    {"<puzzle><shapes><voxel x=\"1\" y=\"1\" z=\"1\">#</voxel></shapes><problems><problem>"
     "<shapes><shape id=\"5\"/></shapes><result id=\"0\"/></problem></problems></puzzle>",
     NULL, TSR_EINVAL, "shape id 5 is not a shape of the file"},
    {"<puzzle><shapes><voxel x=\"1\" y=\"1\" z=\"1\">#</voxel></shapes><problems><problem>"
     "<shapes><shape id=\"0\"/></shapes></problem></problems></puzzle>",
     NULL, TSR_EINVAL, "no result shape"},
    {"<puzzle><colors><color red=\"1\" green=\"2\" blue=\"3\"/></colors><shapes>"
     "<voxel x=\"1\" y=\"1\" z=\"1\">#2</voxel><voxel x=\"1\" y=\"1\" z=\"1\">#1</voxel></shapes>"
     "<problems><problem><shapes><shape id=\"0\"/></shapes><result id=\"1\"/></problem></problems>"
     "</puzzle>",
     NULL, TSR_EINVAL, "shape 1: voxel 1 has colour 2, but the file defines 1 colour"},
    {"<puzzle><shapes><voxel x=\"1\" y=\"1\" z=\"1\">#1</voxel></shapes><problems><problem>"
     "<shapes><shape id=\"0\"/></shapes><result id=\"0\"/></problem></problems></puzzle>",
     NULL, TSR_EINVAL, "has colour 1, but the file defines 0 colours"},
    {"<puzzle><shapes><voxel x=\"2\" y=\"1\" z=\"1\">_64#</voxel></shapes><problems><problem>"
     "<shapes><shape id=\"0\"/></shapes><result id=\"0\"/></problem></problems></puzzle>",
     NULL, TSR_EINVAL, "has colour 64"},
    {"<puzzle><colors><color red=\"1\" green=\"2\" blue=\"3\"/></colors><shapes>"
     "<voxel x=\"1\" y=\"1\" z=\"1\">#1</voxel></shapes><problems><problem><shapes>"
     "<shape id=\"0\"/></shapes><result id=\"0\"/><bitmap><pair piece=\"0\" result=\"1\"/>"
     "</bitmap></problem></problems></puzzle>",
     NULL, TSR_EINVAL, "the file defines 1 colour (pairs count them from 0)"},
    {"<puzzle><colors><color red=\"300\" green=\"2\" blue=\"3\"/></colors></puzzle>",
     NULL, TSR_EINVAL, "<color red=\"300\">: expected a whole number from 0 to 255"},
    {NULL, "3", TSR_EINVAL, "the file has 2 problems"},
    {NULL, "Pyramid", TSR_EINVAL, "no problem is named 'Pyramid'"},
};

START_TEST(hostile_input_is_refused_by_name)
{
    const char *xml = bad[_i].xml ? bad[_i].xml : SOMA;
    tsr_puzzle *pz = NULL;
    tsr_err err = {{0}};
    int rc = tsr_puzzle_read_xmpuzzle(xml, strlen(xml), "bad.xmpuzzle", bad[_i].problem, &pz, &err);
    ck_assert_msg(rc == bad[_i].code, "case %d: code %d, want %d (%s)", _i, rc, bad[_i].code, err.msg);
    ck_assert_ptr_null(pz);
    ck_assert_msg(strstr(err.msg, bad[_i].needle) != NULL && strncmp(err.msg, "bad.xmpuzzle", 12) == 0,
                  "case %d: '%s' lacks '%s'", _i, err.msg, bad[_i].needle);
}
END_TEST

START_TEST(zip_bomb_and_cut_streams)
{
    /* 80 MiB of blanks in a few tens of kilobytes: refused at 64 MiB */
    size_t big = 80u << 20, n;
    char *blank = malloc(big);
    ck_assert_ptr_nonnull(blank);
    memset(blank, ' ', big);
    unsigned char *z = gz(blank, big, &n);
    free(blank);
    ck_assert_uint_lt(n, 1u << 20);
    tsr_puzzle *pz = NULL;
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_puzzle_read_xmpuzzle(z, n, "bomb.xmpuzzle", NULL, &pz, &err), TSR_ETOOBIG);
    ck_assert_msg(strstr(err.msg, "inflates to more than 64 MiB") != NULL, "%s", err.msg);
    free(z);
    /* every prefix of a real file fails cleanly, never reads past its end */
    z = gz(SOMA, strlen(SOMA), &n);
    for (size_t k = 0; k < n; k += 7) {
        err.msg[0] = '\0';
        ck_assert_int_ne(tsr_puzzle_read_xmpuzzle(z, k, "cut.xmpuzzle", NULL, &pz, &err), 0);
        ck_assert_ptr_null(pz);
        ck_assert(err.msg[0] != '\0');
    }
    free(z);
    /* and a problem that names colours no voxel of it uses is read */
    char *x = with_problems("<colors><color red=\"1\" green=\"1\" blue=\"1\"/></colors>"
                            "<problems><problem><shapes><shape id=\"0\" count=\"3\"/></shapes>"
                            "<result id=\"8\"/></problem></problems>\n");
    ck_assert_int_eq(tsr_puzzle_read_xmpuzzle(x, strlen(x), "ok.xmpuzzle", NULL, &pz, &err), 0);
    tsr_puzzle_free(pz);
    free(x);
}
END_TEST

/* The job form the daemon takes: {"xmpuzzle": XML, "problem": ..., "options": ...}. */
START_TEST(job_documents_carry_the_xml)
{
    json_t *doc = json_pack("{s:s, s:s, s:{s:s}}", "xmpuzzle", SOMA, "problem", "Square", "options",
                            "unique", "raw");
    char *text = json_dumps(doc, 0);
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    ck_assert_msg(tsr_puzzle_read_json(text, strlen(text), "job.json", &pz, &opt, &err) == 0, "%s",
                  err.msg);
    ck_assert_str_eq(pz->name, "Square"); /* the problem's name, not the request's place */
    ck_assert_int_eq(pz->ncells, 9);
    ck_assert_int_eq(opt.unique, TSR_UNIQUE_RAW);
    tsr_puzzle_free(pz);
    free(text);
    json_object_set_new(doc, "problem", json_real(1.5));
    text = json_dumps(doc, 0);
    ck_assert_int_eq(tsr_puzzle_read_json(text, strlen(text), "job.json", &pz, &opt, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "$.problem") && strstr(err.msg, "number from 1, or its name"), "%s",
                  err.msg);
    free(text);
    json_object_set_new(doc, "problem", json_integer(9));
    text = json_dumps(doc, 0);
    ck_assert_int_eq(tsr_puzzle_read_json(text, strlen(text), "job.json", &pz, &opt, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "job.json: $.xmpuzzle: problem 9: the file has 2 problems"), "%s",
                  err.msg);
    free(text);
    json_decref(doc);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("xmpuzzle");
    TCase *tc = tcase_create("xmpuzzle");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, soma_counts_as_published);
    tcase_add_test(tc, problems_by_number_and_name);
    tcase_add_test(tc, long_names_cut_between_characters);
    tcase_add_test(tc, colours_count_as_worked_out);
    tcase_add_test(tc, burrtools_examples_count_as_recorded);
    tcase_add_loop_test(tc, hostile_input_is_refused_by_name, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, zip_bomb_and_cut_streams);
    tcase_add_test(tc, job_documents_carry_the_xml);
    suite_add_tcase(s, tc);
    return s;
}
