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
 * colour constraints (refused, never solved without them).
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
     "<voxel x=\"1\" y=\"1\" z=\"1\">#1</voxel><voxel x=\"1\" y=\"1\" z=\"1\">#1</voxel></shapes>"
     "<problems><problem><shapes><shape id=\"0\"/></shapes><result id=\"1\"/><bitmap>"
     "<pair piece=\"0\" result=\"0\"/></bitmap></problem></problems></puzzle>",
     NULL, TSR_EINVAL, "colour constraints"},
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
    tcase_add_loop_test(tc, hostile_input_is_refused_by_name, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, zip_bomb_and_cut_streams);
    tcase_add_test(tc, job_documents_carry_the_xml);
    suite_add_tcase(s, tc);
    return s;
}
