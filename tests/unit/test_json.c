/*
 * test_json.c - unit tests of the Puzzle JSON version 1 reader.
 *
 * Good documents check the parsed model (cells, counts, flags, options);
 * bad ones check the return code, that nothing is returned, and that the
 * message names the source and the JSON path of the offending value.
 * JSON is written inline with ' for " (see q()) to keep it readable.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/puzzle.h"

/* The document with every ' turned into ", in a static buffer. */
static const char *q(const char *s)
{
    static char buf[8192];
    size_t n = strlen(s);
    ck_assert_uint_lt(n, sizeof buf);
    for (size_t i = 0; i <= n; i++)
        buf[i] = s[i] == '\'' ? '"' : s[i];
    return buf;
}

static tsr_puzzle *read_ok(const char *json, tsr_options *opt)
{
    tsr_puzzle *pz = NULL;
    tsr_err err = {{0}};
    const char *doc = q(json);
    int rc = tsr_puzzle_read_json(doc, strlen(doc), "t.json", &pz, opt, &err);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, err.msg);
    ck_assert_ptr_nonnull(pz);
    return pz;
}

/* Read raw text (not passed through q) expecting failure. */
static void read_bad_raw(const char *doc, size_t len, const char *source, int code,
                         const char *needle)
{
    tsr_puzzle *pz = (tsr_puzzle *)&pz; /* must be reset to NULL */
    tsr_err err = {{0}};
    int rc = tsr_puzzle_read_json(doc, len, source, &pz, NULL, &err);
    ck_assert_msg(rc == code, "rc %d, want %d: %s", rc, code, err.msg);
    ck_assert_ptr_null(pz);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "message \"%s\" lacks \"%s\"", err.msg,
                  needle);
}

static void read_bad(const char *json, int code, const char *needle)
{
    const char *doc = q(json);
    read_bad_raw(doc, strlen(doc), "t.json", code, needle);
}

static bool has_cell(const tsr_cell *cells, int n, int x, int y, int z)
{
    for (int i = 0; i < n; i++)
        if (cells[i].x == x && cells[i].y == y && cells[i].z == z)
            return true;
    return false;
}

/* ---- board forms ----------------------------------------------------------- */

START_TEST(board_size_2d)
{
    tsr_puzzle *pz = read_ok("{'board': {'size': [3, 2]},"
                             " 'pieces': [{'name': 'I', 'cells': [[0,0],[1,0],[2,0]], 'count': 2}]}",
                             NULL);
    ck_assert_int_eq(pz->ncells, 6);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++)
            ck_assert(has_cell(pz->cells, pz->ncells, x, y, 0));
    ck_assert_int_eq(pz->npieces, 1);
    ck_assert_str_eq(pz->pieces[0].name, "I");
    ck_assert_int_eq(pz->pieces[0].count, 2);
    ck_assert(!pz->pieces[0].fixed);
    ck_assert(tsr_puzzle_is_flat(pz));
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(board_size_3d)
{
    tsr_puzzle *pz = read_ok("{'board': {'size': [2, 3, 4]},"
                             " 'pieces': [{'name': 'c', 'cells': [[0,0,0]], 'count': 24}]}",
                             NULL);
    ck_assert_int_eq(pz->ncells, 24);
    ck_assert(has_cell(pz->cells, pz->ncells, 1, 2, 3));
    ck_assert(!has_cell(pz->cells, pz->ncells, 2, 0, 0));
    ck_assert(!tsr_puzzle_is_flat(pz));
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(board_rows)
{
    /* first row is y = 0; '#' and ' ' are holes */
    tsr_puzzle *pz = read_ok("{'board': {'rows': ['..#', '. .']},"
                             " 'pieces': [{'name': 'm', 'cells': [[0,0]], 'count': 4}]}",
                             NULL);
    ck_assert_int_eq(pz->ncells, 4);
    ck_assert(has_cell(pz->cells, pz->ncells, 0, 0, 0));
    ck_assert(has_cell(pz->cells, pz->ncells, 1, 0, 0));
    ck_assert(has_cell(pz->cells, pz->ncells, 0, 1, 0));
    ck_assert(has_cell(pz->cells, pz->ncells, 2, 1, 0));
    ck_assert(!has_cell(pz->cells, pz->ncells, 2, 0, 0));
    ck_assert(!has_cell(pz->cells, pz->ncells, 1, 1, 0));
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(board_layers)
{
    tsr_puzzle *pz = read_ok("{'board': {'layers': [['..', '..'], ['..', '#.']]},"
                             " 'pieces': [{'name': 'm', 'cells': [[0,0,0]], 'count': 7}]}",
                             NULL);
    ck_assert_int_eq(pz->ncells, 7);
    ck_assert(has_cell(pz->cells, pz->ncells, 1, 1, 0));
    ck_assert(has_cell(pz->cells, pz->ncells, 1, 1, 1));
    ck_assert(!has_cell(pz->cells, pz->ncells, 0, 1, 1));
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(board_cells)
{
    tsr_puzzle *pz = read_ok("{'board': {'cells': [[0,0], [1,0,0], [5,-3,2]]},"
                             " 'pieces': [{'name': 'm', 'cells': [[0,0]], 'count': 3}]}",
                             NULL);
    ck_assert_int_eq(pz->ncells, 3);
    ck_assert(has_cell(pz->cells, pz->ncells, 0, 0, 0));
    ck_assert(has_cell(pz->cells, pz->ncells, 1, 0, 0));
    ck_assert(has_cell(pz->cells, pz->ncells, 5, -3, 2));
    tsr_puzzle_free(pz);
}
END_TEST

/* ---- piece forms, counts, fixed pieces ------------------------------------ */

START_TEST(piece_forms)
{
    tsr_puzzle *pz = read_ok(
        "{'board': {'size': [3, 3, 2]}, 'pieces': ["
        " {'name': 'L', 'rows': ['##', '#.'], 'count': 2},"
        " {'name': 'T', 'layers': [['###', ' # '], ['', ' # ']]},"
        " {'name': 'P', 'cells': [[0,0,0], [0,0,1], [1,0]], 'count': 2},"
        " {'name': 'i', 'cells': [[0,0]]}]}",
        NULL);
    ck_assert_int_eq(pz->npieces, 4);
    const tsr_piece *L = &pz->pieces[0], *T = &pz->pieces[1], *P = &pz->pieces[2];
    ck_assert_str_eq(L->name, "L");
    ck_assert_int_eq(L->ncells, 3);
    ck_assert_int_eq(L->count, 2);
    ck_assert(has_cell(L->cells, 3, 0, 0, 0) && has_cell(L->cells, 3, 1, 0, 0) &&
              has_cell(L->cells, 3, 0, 1, 0));
    ck_assert_int_eq(T->ncells, 5);
    ck_assert_int_eq(T->count, 1);
    ck_assert(has_cell(T->cells, 5, 2, 0, 0) && has_cell(T->cells, 5, 1, 1, 0) &&
              has_cell(T->cells, 5, 1, 1, 1));
    ck_assert(!has_cell(T->cells, 5, 0, 1, 0));
    ck_assert_int_eq(P->ncells, 3);
    ck_assert(has_cell(P->cells, 3, 0, 0, 1) && has_cell(P->cells, 3, 1, 0, 0));
    ck_assert_str_eq(pz->pieces[3].name, "i");
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(fixed_pieces)
{
    /* art coordinates are used as-is: X sits at x = 2 */
    tsr_puzzle *pz = read_ok("{'board': {'size': [4, 1]}, 'pieces': ["
                             " {'name': 'X', 'rows': ['..#'], 'fixed': true},"
                             " {'name': 'Y', 'cells': [[3, 0]], 'fixed': true, 'count': 1},"
                             " {'name': 'D', 'cells': [[0,0],[1,0]], 'fixed': false}]}",
                             NULL);
    ck_assert(pz->pieces[0].fixed);
    ck_assert_int_eq(pz->pieces[0].ncells, 1);
    ck_assert_int_eq(pz->pieces[0].cells[0].x, 2);
    ck_assert(pz->pieces[1].fixed);
    ck_assert_int_eq(pz->pieces[1].cells[0].x, 3);
    ck_assert(!pz->pieces[2].fixed);
    ck_assert_int_eq(tsr_puzzle_free_volume(pz), 2);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(puzzle_fields)
{
    tsr_options opt;
    memset(&opt, 0x55, sizeof opt);
    tsr_puzzle *pz = read_ok("{'version': 1, 'name': 'Domino pair',"
                             " 'description': 'two dominoes\\nin a square',"
                             " 'board': {'size': [2, 2]},"
                             " 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'count': 2}],"
                             " 'rotations': 'one-sided', 'mirror': true,"
                             " 'expected': {'raw': 2, 'mirror': 0}}",
                             &opt);
    ck_assert_str_eq(pz->name, "Domino pair");
    ck_assert_str_eq(pz->description, "two dominoes\nin a square");
    ck_assert_int_eq(pz->rotations, TSR_ROT_ONE_SIDED);
    ck_assert(pz->mirror);
    ck_assert_int_eq(pz->expected[TSR_UNIQUE_RAW], 2);
    ck_assert_int_eq(pz->expected[TSR_UNIQUE_ROTATIONS], -1);
    ck_assert_int_eq(pz->expected[TSR_UNIQUE_MIRROR], 0);
    /* a bare puzzle leaves the options at their defaults */
    tsr_options def;
    tsr_options_init(&def);
    ck_assert(memcmp(&opt, &def, sizeof opt) == 0);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(puzzle_defaults)
{
    tsr_puzzle *pz = read_ok("{'board': {'size': [1, 1]}, 'pieces': [{'name': 'm', 'rows': ['#']}],"
                             " 'rotations': 'none'}",
                             NULL);
    ck_assert_ptr_null(pz->name);
    ck_assert_ptr_null(pz->description);
    ck_assert_int_eq(pz->rotations, TSR_ROT_NONE);
    ck_assert(!pz->mirror);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pz->expected[i], -1);
    tsr_puzzle_free(pz);
    pz = read_ok("{'board': {'size': [1, 1]}, 'pieces': [{'name': 'm', 'rows': ['#']}]}", NULL);
    ck_assert_int_eq(pz->rotations, TSR_ROT_ALL);
    tsr_puzzle_free(pz);
}
END_TEST

/* ---- jobs and options ----------------------------------------------------- */

#define SMALL "{'board': {'size': [2, 1]}, 'pieces': [{'name': 'F', 'cells': [[0,0],[1,0]]}]}"

START_TEST(job_all_options)
{
    tsr_options opt;
    tsr_puzzle *pz = read_ok("{'puzzle': " SMALL ", 'options': {"
                             " 'unique': 'mirror', 'limit': 5, 'threads': 4, 'priority': -3,"
                             " 'fila': 6, 'order': 'e=11:f=3', 'nof': true, 'volume': 'once',"
                             " 'parity': true, 'redundancy': 'F'}}",
                             &opt);
    ck_assert_str_eq(pz->pieces[0].name, "F");
    ck_assert_int_eq(opt.unique, TSR_UNIQUE_MIRROR);
    ck_assert_int_eq(opt.limit, 5);
    ck_assert_int_eq(opt.threads, 4);
    ck_assert_int_eq(opt.priority, -3);
    ck_assert_int_eq(opt.fila, 6);
    ck_assert_str_eq(opt.order, "e=11:f=3");
    ck_assert_int_eq(opt.nof, 1);
    ck_assert_int_eq(opt.volume, -2);
    ck_assert_int_eq(opt.parity, 1);
    ck_assert_str_eq(opt.redundancy, "F");
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(job_other_option_values)
{
    tsr_options opt;
    tsr_puzzle *pz = read_ok("{'options': {'unique': 'raw', 'nof': false, 'volume': false,"
                             " 'parity': false, 'redundancy': false, 'fila': 0, 'limit': 0},"
                             " 'puzzle': " SMALL "}",
                             &opt);
    ck_assert_int_eq(opt.unique, TSR_UNIQUE_RAW);
    ck_assert_int_eq(opt.nof, 0);
    ck_assert_int_eq(opt.volume, 0);
    ck_assert_int_eq(opt.parity, 0);
    ck_assert_str_eq(opt.redundancy, "off");
    ck_assert_int_eq(opt.fila, 0);
    tsr_puzzle_free(pz);

    pz = read_ok("{'puzzle': " SMALL ", 'options': {'volume': 7, 'parity': 3, 'vtrigger': 4,"
                 " 'pfilter': 5, 'fit': true, 'goal': 1,"
                 " 'redundancy': true, 'unique': 'rotations', 'threads': 0, 'priority': 100}}",
                 &opt);
    ck_assert_int_eq(opt.volume, 7);
    ck_assert_int_eq(opt.parity, 3);
    ck_assert_int_eq(opt.vtrigger, 4);
    ck_assert_int_eq(opt.pfilter, 5);
    ck_assert_int_eq(opt.fit, 1);
    ck_assert_int_eq(opt.goal, 1);
    ck_assert_str_eq(opt.redundancy, "");
    ck_assert_int_eq(opt.unique, TSR_UNIQUE_ROTATIONS);
    ck_assert_int_eq(opt.priority, 100);
    ck_assert_int_eq(opt.nof, -1); /* absent: automatic */
    ck_assert_int_eq(opt.fila, -1);
    tsr_puzzle_free(pz);
}
END_TEST

/* store: "all" (-1, also when absent), "none" (0), or the first N (0 is
 * "none" spelled as a number). */
START_TEST(job_store_option)
{
    static const struct {
        const char *value;
        long long store;
    } cases[] = {{"'all'", -1}, {"'none'", 0}, {"0", 0}, {"1000", 1000},
                 {"9007199254740993", 9007199254740993LL}};
    tsr_options opt;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char doc[256];
        snprintf(doc, sizeof doc, "{'puzzle': " SMALL ", 'options': {'store': %s}}",
                 cases[i].value);
        tsr_puzzle *pz = read_ok(doc, &opt);
        ck_assert_msg(opt.store == cases[i].store, "store %s read as %lld", cases[i].value,
                      opt.store);
        tsr_puzzle_free(pz);
    }
    tsr_puzzle *pz = read_ok("{'puzzle': " SMALL "}", &opt);
    ck_assert_int_eq(opt.store, -1);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(job_without_options)
{
    /* a job without options, and a job read with opt == NULL */
    tsr_options opt;
    tsr_puzzle *pz = read_ok("{'puzzle': " SMALL "}", &opt);
    ck_assert_int_eq(opt.unique, TSR_UNIQUE_ROTATIONS);
    ck_assert_int_eq(opt.volume, -1);
    tsr_puzzle_free(pz);
    pz = read_ok("{'puzzle': " SMALL ", 'options': {'limit': 1}}", NULL);
    ck_assert_int_eq(pz->ncells, 2);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(bad_options_leave_defaults)
{
    tsr_options opt;
    tsr_puzzle *pz = NULL;
    tsr_err err;
    const char *doc = q("{'puzzle': " SMALL ", 'options': {'limit': 9, 'threads': -1}}");
    int rc = tsr_puzzle_read_json(doc, strlen(doc), NULL, &pz, &opt, &err);
    ck_assert_int_eq(rc, TSR_EINVAL);
    ck_assert_ptr_null(pz);
    ck_assert_int_eq(opt.limit, 0);
    /* no source: the message starts with the path */
    ck_assert_str_eq(err.msg, "$.options.threads: expected an integer from 0 to 1024, got -1");
}
END_TEST

/* ---- bad documents -------------------------------------------------------------- */

#define BOARD2 "'board': {'size': [2, 1]}"
#define DOMINO "{'name': 'D', 'cells': [[0,0],[1,0]]}"

static const struct bad_case {
    const char *json;
    int code;
    const char *needle;
} bad_cases[] = {
    {"{'board': }", TSR_EINVAL, "t.json:1:11: JSON syntax error: "},
    {"{'board': {}, 'board': {}}", TSR_EINVAL, "JSON syntax error: duplicate object key"},
    {"", TSR_EINVAL, "t.json:1:0: JSON syntax error"},
    {"{'name': 'a\\u0000b'}", TSR_EINVAL, "JSON syntax error"},
    /* a forgotten comma reads as one, not as "'}' expected" */
    {"{'board': {'size': [2, 2]} 'pieces': []}", TSR_EINVAL,
     "t.json:1:35: JSON syntax error: missing ',' before \"pieces\" (or a '}' to close the object)"},
    {"{'pieces': [{'name': 'a'} {'name': 'b'}]}", TSR_EINVAL, "missing ',' before { (or a ']' to close the array)"},
    {"[1, 2]", TSR_EINVAL, "t.json: $: expected an object (a puzzle or a job), got an array"},
    {"{" BOARD2 ", 'pieces': [" DOMINO "], 'boards': 1}", TSR_EINVAL,
     "t.json: $.boards: unknown key; expected one of \"version\", \"name\""},
    {"{'version': 2, " BOARD2 ", 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.version: expected 1 (the only version), got 2"},
    {"{'version': '1', " BOARD2 ", 'pieces': [" DOMINO "]}", TSR_EINVAL, "$.version: "},
    {"{'name': 7, " BOARD2 ", 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.name: expected a string, got 7"},
    {"{'pieces': [" DOMINO "]}", TSR_EINVAL, "t.json: $: missing required key \"board\""},
    {"{" BOARD2 "}", TSR_EINVAL, "$: missing required key \"pieces\""},
    {"{'board': [], 'pieces': [" DOMINO "]}", TSR_EINVAL, "$.board: expected an object"},
    {"{'board': {'size': [2,1], 'rows': ['..']}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board: expected exactly one of \"size\", \"rows\", \"layers\", \"cells\""},
    {"{'board': {}, 'pieces': [" DOMINO "]}", TSR_EINVAL, "$.board: expected exactly one of"},
    {"{'board': {'size': [2,1], 'colour': 'red'}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.colour: unknown key"},
    {"{'board': {'size': [2, 0]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.size[1]: expected an integer >= 1, got 0"},
    {"{'board': {'size': [2]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.size: expected an array of 2 or 3 positive integers, got an array of 1 elements"},
    {"{'board': {'size': [2, 1.5]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.size[1]: expected an integer >= 1, got 1.5"},
    {"{'board': {'size': [1000, 1000]}, 'pieces': [" DOMINO "]}", TSR_ETOOBIG,
     "$.board.size: the board would have more than 100000 cells"},
    {"{'board': {'size': [4611686018427387904, 4611686018427387904, 8]}, 'pieces': [" DOMINO
     "]}",
     TSR_ETOOBIG, "$.board.size: the board would have more than 100000 cells"},
    {"{'board': {'rows': ['..', '.x.']}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.rows[1]: invalid character 'x' at column 1; expected '.' for a cell"},
    {"{'board': {'rows': ['.\xc3\xa9']}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.rows[0]: invalid character \\xc3 at column 1"},
    {"{'board': {'rows': ['..', 3]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.rows[1]: expected a string, got 3"},
    {"{'board': {'rows': ['##', '  ']}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.rows: the board has no cells"},
    {"{'board': {'layers': [['..'], ['.', '#', '.o']]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.layers[1][2]: invalid character 'o' at column 1"},
    {"{'board': {'layers': ['..']}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.layers[0]: expected an array of strings, got \"..\""},
    {"{'board': {'cells': [[0,0], [1,0], [0,0,0]]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.cells[2]: duplicate cell [0, 0, 0], already at index 0"},
    {"{'board': {'cells': [[0,0], [1,0,0,0]]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.cells[1]: expected an array of 2 or 3 integers, got an array of 4 elements"},
    {"{'board': {'cells': [[0,0], [1,200000]]}, 'pieces': [" DOMINO "]}", TSR_ETOOBIG,
     "$.board.cells[1][1]: coordinate 200000 is outside -100000..100000"},
    {"{" BOARD2 ", 'pieces': []}", TSR_EINVAL,
     "$.pieces: expected a non-empty array of pieces, got an array of 0 elements"},
    {"{" BOARD2 ", 'pieces': {'name': 'D'}}", TSR_EINVAL,
     "$.pieces: expected a non-empty array of pieces, got an object"},
    {"{" BOARD2 ", 'pieces': [" DOMINO ", 'E']}", TSR_EINVAL,
     "$.pieces[1]: expected a piece object, got \"E\""},
    {"{" BOARD2 ", 'pieces': [{'cells': [[0,0],[1,0]]}]}", TSR_EINVAL,
     "$.pieces[0]: missing required key \"name\""},
    /* colours */
    {"{'board': {'size': [2, 1], 'colors': [1, 1]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "t.json: $.board.colors: \"colors\" goes with \"cells\"; in \"size\", draw a coloured cell"},
    {"{'board': {'cells': [[0,0],[1,0]], 'colors': [1]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.colors: expected an array of 2 colours (0 to 63), one per cell, got an array of 1"},
    {"{'board': {'cells': [[0,0],[1,0]], 'colors': [1, 64]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.board.colors[1]: expected an integer from 0 to 63, got 64"},
    {"{'colors': {'palette': ['#ff0000']}, 'board': {'rows': ['12']}, 'pieces': [" DOMINO "]}",
     TSR_EINVAL, "$.board.rows[0]: colour 2 at column 1, but the palette has 1 colour"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'rows': ['#0']}]}", TSR_EINVAL,
     "$.pieces[0].rows[0]: invalid character '0' at column 1; expected '#' for a cell, '.' or ' ' "
     "for none, or a digit 1-9 for a cell of that colour"},
    {"{'colors': {'palette': ['ff0000']}, " BOARD2 ", 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.colors.palette[0]: expected a colour \"#rrggbb\", got \"ff0000\""},
    {"{'colors': {'palette': []}, " BOARD2 ", 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.colors.palette: expected an array of 1 to 63 colours"},
    {"{'colors': {'allow': [{'piece': 1}]}, " BOARD2 ", 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.colors.allow[0]: missing required key \"board\""},
    {"{'colors': {'allow': [{'piece': 1, 'board': 0}]}, " BOARD2 ", 'pieces': [" DOMINO "]}",
     TSR_EINVAL, "$.colors.allow[0].board: expected an integer from 1 to 63, got 0"},
    {"{'colors': {'allow': [{'piece': 1, 'board': 2}, {'board': 2, 'piece': 1}]}, " BOARD2
     ", 'pieces': [" DOMINO "]}",
     TSR_EINVAL, "$.colors.allow[1]: the pair (piece 1, board 2) is listed twice"},
    {"{'colors': {'allow': [], 'pairs': []}, " BOARD2 ", 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "$.colors.pairs: unknown key; expected one of \"palette\", \"allow\""},
    {"{'board': {'rows': ['12']}, 'pieces': [{'name': 'D', 'rows': ['#'], 'fixed': true,"
     " 'cells': [[0, 0]], 'colors': [1]}, {'name': 'M', 'rows': ['#']}]}",
     TSR_EINVAL, "expected exactly one of"},
    {"{'board': {'rows': ['12']}, 'pieces': [{'name': 'F', 'rows': ['1'], 'fixed': true},"
     " {'name': 'M', 'rows': ['#']}]}",
     TSR_EINVAL, "t.json: fixed piece 'F': its cell (0,0,0) of colour 1 may not sit on a board cell "
     "of colour 1"},
    {"{" BOARD2 ", 'pieces': [{'name': '', 'cells': [[0,0],[1,0]]}]}", TSR_EINVAL,
     "$.pieces[0].name: expected a non-empty string of at most 64 bytes"},
    {"{" BOARD2 ", 'pieces': [{'name': "
     "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', "
     "'cells': [[0,0],[1,0]]}]}",
     TSR_EINVAL, "$.pieces[0].name: expected a non-empty string of at most 64 bytes"},
    {"{'board': {'size': [4, 1]}, 'pieces': [" DOMINO ", " DOMINO "]}", TSR_EINVAL,
     "$.pieces[1].name: duplicate piece name \"D\", already used by piece 0"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'shape': 'I'}]}",
     TSR_EINVAL, "$.pieces[0].shape: unknown key"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D'}]}", TSR_EINVAL,
     "$.pieces[0]: expected exactly one of \"cells\", \"rows\", \"layers\""},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'size': [2, 1]}]}", TSR_EINVAL,
     "$.pieces[0].size: unknown key"},
    {"{'board': {'size': [4, 1]}, 'pieces': [" DOMINO ", {'name': 'E', 'cells': [[0,0],[1,0],"
     " [2]]}]}",
     TSR_EINVAL, "$.pieces[1].cells[2]: expected an array of 2 or 3 integers"},
    {"{'board': {'size': [4, 1]}, 'pieces': [" DOMINO ", {'name': 'E', 'cells': [[0,0], [1,"
     " 'a']]}]}",
     TSR_EINVAL, "$.pieces[1].cells[1]: expected an array of 2 or 3 integers; element 1 is"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0],[0,0]]}]}", TSR_EINVAL,
     "$.pieces[0].cells[2]: duplicate cell [0, 0, 0], already at index 0"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'rows': ['#.', '.+']}]}", TSR_EINVAL,
     "$.pieces[0].rows[1]: invalid character '+' at column 1; expected '#' for a cell"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'rows': ['. .']}]}", TSR_EINVAL,
     "$.pieces[0].rows: the piece has no cells"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'count': 0}]}",
     TSR_EINVAL, "$.pieces[0].count: expected an integer from 1 to 100000, got 0"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'count': '2'}]}",
     TSR_EINVAL, "$.pieces[0].count: expected an integer from 1 to 100000 or a range [min, max], got \"2\""},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'count': [2, 1]}]}",
     TSR_EINVAL, "$.pieces[0].count: range [2, 1]: min exceeds max"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'count': [-1, 1]}]}",
     TSR_EINVAL, "$.pieces[0].count[0]: expected an integer from 0 to 100000, got -1"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'count': [0, 1.5]}]}",
     TSR_EINVAL, "$.pieces[0].count[1]: expected an integer from 1 to 100000, got 1.5"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'count': [1, 2, 3]}]}",
     TSR_EINVAL, "$.pieces[0].count: expected a range [min, max] of 2 integers"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'count': [0, 0]}]}",
     TSR_EINVAL, "$.pieces[0].count[1]: expected an integer from 1 to 100000, got 0"},
    {"{'board': {'size': [4, 1]}, 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]],"
     " 'fixed': true, 'count': [0, 1]}]}",
     TSR_EINVAL, "$.pieces[0].count: a fixed piece must have count 1"},
    {"{'board': {'size': [2, 1], 'optional': [[0,0], [0,0]]}, 'pieces': [" DOMINO "]}",
     TSR_EINVAL, "$.board.optional[1]: duplicate cell [0, 0, 0], already at index 0"},
    {"{'board': {'size': [2, 1], 'optional': [[0]]}, 'pieces': [" DOMINO "]}",
     TSR_EINVAL, "$.board.optional[0]: expected an array of 2 or 3 integers"},
    {"{'board': {'size': [2, 1], 'optional': 3}, 'pieces': [" DOMINO "]}",
     TSR_EINVAL, "$.board.optional: expected an array of cells"},
    {"{'board': {'size': [2, 1], 'optional': [[5,0]]}, 'pieces': [" DOMINO "]}",
     TSR_EINVAL, "optional cell (5,0,0) is not on the board"},
    {"{'board': {'rows': ['...+']}, 'pieces': [" DOMINO "]}",
     TSR_EINVAL, "the pieces cover at most 2 cells but the board has 3 required cells (1 short)"},
    {"{'board': {'rows': ['....+']}, 'pieces': [{'name': 'I', 'rows': ['###'], 'count': [0, 2]}]}",
     TSR_EINVAL, "no choice of counts covers the 4 required cells within the 5 free cells: the "
     "largest volume that fits is 3 (1 short)"},
    {"{'board': {'rows': ['..+']}, 'pieces': [{'name': 'D', 'rows': ['##'], 'count': [2, 3]}]}",
     TSR_EINVAL, "the pieces cover at least 4 cells but the board has 3 free cells (1 too many)"},
    {"{'board': {'rows': ['.....']}, 'pieces': [{'name': 'D', 'rows': ['##'], 'count': [0, 2]}]}",
     TSR_EINVAL, "the pieces cover at most 4 cells but the board has 5 required cells (1 short)"},
    {"{" BOARD2 ", 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'fixed': 1}]}",
     TSR_EINVAL, "$.pieces[0].fixed: expected true or false, got 1"},
    {"{'board': {'size': [4, 1]}, 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]],"
     " 'fixed': true, 'count': 2}]}",
     TSR_EINVAL, "$.pieces[0].count: a fixed piece must have count 1"},
    {"{" BOARD2 ", 'pieces': [" DOMINO "], 'rotations': 'some'}", TSR_EINVAL,
     "$.rotations: expected one of \"all\", \"one-sided\", \"none\", got \"some\""},
    {"{" BOARD2 ", 'pieces': [" DOMINO "], 'mirror': 'yes'}", TSR_EINVAL,
     "$.mirror: expected true or false"},
    {"{" BOARD2 ", 'pieces': [" DOMINO "], 'expected': {'raw': -1}}", TSR_EINVAL,
     "$.expected.raw: expected an integer >= 0, got -1"},
    {"{" BOARD2 ", 'pieces': [" DOMINO "], 'expected': {'all': 1}}", TSR_EINVAL,
     "$.expected.all: unknown key; expected one of \"raw\", \"rotations\", \"mirror\""},
    {"{" BOARD2 ", 'pieces': [" DOMINO "], 'expected': 3}", TSR_EINVAL,
     "$.expected: expected an object, got 3"},
    /* jobs */
    {"{'puzzle': " SMALL ", 'extra': 1}", TSR_EINVAL,
     "$.extra: unknown key; expected one of \"puzzle\", \"options\""},
    {"{'puzzle': []}", TSR_EINVAL, "$.puzzle: expected a puzzle object, got an array"},
    {"{'puzzle': {'board': {'size': [2, 1]}, 'pieces': [{'name': 'F', 'cells': [[0,0],[0,0]]}]}}",
     TSR_EINVAL, "$.puzzle.pieces[0].cells[1]: duplicate cell"},
    {"{'puzzle': " SMALL ", 'options': 5}", TSR_EINVAL,
     "$.options: expected an options object, got 5"},
    {"{'puzzle': " SMALL ", 'options': {'speed': 5}}", TSR_EINVAL,
     "$.options.speed: unknown key; expected one of \"unique\""},
    {"{'puzzle': " SMALL ", 'options': {'unique': 'all'}}", TSR_EINVAL,
     "$.options.unique: expected one of \"raw\", \"rotations\", \"mirror\", got \"all\""},
    {"{'puzzle': " SMALL ", 'options': {'store': -1}}", TSR_EINVAL,
     "$.options.store: expected \"all\", \"none\" or an integer >= 0, got -1"},
    {"{'puzzle': " SMALL ", 'options': {'store': 'some'}}", TSR_EINVAL,
     "$.options.store: expected \"all\", \"none\" or an integer >= 0, got \"some\""},
    {"{'puzzle': " SMALL ", 'options': {'store': 'ALL'}}", TSR_EINVAL,
     "$.options.store: expected \"all\", \"none\" or an integer >= 0, got \"ALL\""},
    {"{'puzzle': " SMALL ", 'options': {'store': 2.5}}", TSR_EINVAL,
     "$.options.store: expected \"all\", \"none\" or an integer >= 0, got 2.5"},
    {"{'puzzle': " SMALL ", 'options': {'store': 1e3}}", TSR_EINVAL,
     "$.options.store: expected \"all\", \"none\" or an integer >= 0"},
    {"{'puzzle': " SMALL ", 'options': {'store': true}}", TSR_EINVAL,
     "$.options.store: expected \"all\", \"none\" or an integer >= 0, got true"},
    {"{'puzzle': " SMALL ", 'options': {'store': null}}", TSR_EINVAL,
     "$.options.store: expected \"all\", \"none\" or an integer >= 0, got null"},
    {"{'puzzle': " SMALL ", 'options': {'limit': -1}}", TSR_EINVAL,
     "$.options.limit: expected an integer >= 0, got -1"},
    {"{'puzzle': " SMALL ", 'options': {'threads': 1025}}", TSR_EINVAL,
     "$.options.threads: expected an integer from 0 to 1024, got 1025"},
    {"{'puzzle': " SMALL ", 'options': {'priority': -101}}", TSR_EINVAL,
     "$.options.priority: expected an integer from -100 to 100"},
    {"{'puzzle': " SMALL ", 'options': {'fila': true}}", TSR_EINVAL,
     "$.options.fila: expected an integer from 0 to 2147483647, got true"},
    {"{'puzzle': " SMALL ", 'options': {'order': 'E=1'}}", TSR_EINVAL,
     "$.options.order: invalid character at offset 0; expected [a-z0-9=:@.,-]"},
    {"{'puzzle': " SMALL ", 'options': {'order': "
     "'ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss"
     "ssssssssssssssssssssssssssssssssssssssssssssssss'}}",
     TSR_EINVAL, "$.options.order: longer than 127 bytes"},
    {"{'puzzle': " SMALL ", 'options': {'nof': 'on'}}", TSR_EINVAL,
     "$.options.nof: expected true or false, got \"on\""},
    {"{'puzzle': " SMALL ", 'options': {'volume': true}}", TSR_EINVAL,
     "$.options.volume: expected false, \"once\" or an integer from 0 to 2147483647, got true"},
    {"{'puzzle': " SMALL ", 'options': {'volume': -2}}", TSR_EINVAL,
     "$.options.volume: expected false"},
    {"{'puzzle': " SMALL ", 'options': {'parity': 'auto'}}", TSR_EINVAL,
     "$.options.parity: expected true, false or an integer from 0 to 2147483647, got \"auto\""},
    {"{'puzzle': " SMALL ", 'options': {'redundancy': 'Q'}}", TSR_EINVAL,
     "$.options.redundancy: no piece is named \"Q\""},
    {"{'puzzle': " SMALL ", 'options': {'redundancy': 1}}", TSR_EINVAL,
     "$.options.redundancy: expected true, false or a piece name, got 1"},
    /* what only tsr_puzzle_validate sees */
    {"{'board': {'size': [3, 1]}, 'pieces': [" DOMINO "]}", TSR_EINVAL,
     "t.json: the pieces cover 2 cells but the board has 3 free cells"},
    {"{'board': {'size': [3, 1]}, 'pieces': [" DOMINO ", {'name': 'X', 'cells': [[5, 0]],"
     " 'fixed': true}]}",
     TSR_EINVAL, "t.json: fixed piece 'X': cell (5,0,0) is not on the board"},
};

/* Colours: digits in art, "colors" beside "cells", the palette and the
 * allowed pairs (docs/puzzle-format.md, "Colours"). */
START_TEST(colours)
{
    tsr_puzzle *pz = read_ok("{'colors': {'palette': ['#ff0000', '#00ff00'],"
                             " 'allow': [{'piece': 1, 'board': 2}]},"
                             " 'board': {'rows': ['1.2', '+2.'], 'optional': [[1, 1]]},"
                             " 'pieces': [{'name': 'L', 'layers': [['1#'], ['2']]},"
                             " {'name': 'M', 'cells': [[5, 5]], 'colors': [2]}]}", NULL);
    ck_assert_int_eq(pz->ncells, 6);
    static const unsigned char board[] = {1, 0, 2, 0, 2, 0}; /* reading order of the art */
    ck_assert_mem_eq(pz->colors, board, 6);
    ck_assert_int_eq(pz->noptional, 2);
    ck_assert_int_eq(pz->pieces[0].ncells, 3);
    static const unsigned char l[] = {1, 0, 2};
    ck_assert_mem_eq(pz->pieces[0].colors, l, 3);
    ck_assert_int_eq(pz->pieces[1].colors[0], 2);
    ck_assert_int_eq(pz->nallowed, 1);
    ck_assert(pz->allowed[0].piece == 1 && pz->allowed[0].board == 2);
    ck_assert_int_eq(pz->npalette, 2);
    ck_assert_uint_eq(pz->palette[1], 0x00FF00u);
    ck_assert(tsr_puzzle_color_allowed(pz, 1, 2) && !tsr_puzzle_color_allowed(pz, 2, 1) &&
              tsr_puzzle_color_allowed(pz, 0, 1) && tsr_puzzle_color_allowed(pz, 2, 0));
    tsr_puzzle_free(pz);
    /* all neutral is no colours; without a palette colours go to 63 */
    pz = read_ok("{'board': {'cells': [[0,0],[1,0]], 'colors': [0, 63]},"
                 " 'pieces': [{'name': 'D', 'cells': [[0,0],[1,0]], 'colors': [0, 0]}]}", NULL);
    ck_assert_ptr_null(pz->pieces[0].colors);
    ck_assert_int_eq(pz->colors[1], 63);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(bad_documents)
{
    read_bad(bad_cases[_i].json, bad_cases[_i].code, bad_cases[_i].needle);
}
END_TEST

/* ---- caps --------------------------------------------------------------------- */

/* A growing buffer for generated documents. */
typedef struct text {
    char *s;
    size_t len;
} text;

static void put(text *t, const char *s)
{
    size_t n = strlen(s);
    t->s = realloc(t->s, t->len + n + 1);
    ck_assert_ptr_nonnull(t->s);
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

static void put_repeat(text *t, char c, size_t n)
{
    t->s = realloc(t->s, t->len + n + 1);
    ck_assert_ptr_nonnull(t->s);
    memset(t->s + t->len, c, n);
    t->len += n;
    t->s[t->len] = '\0';
}

START_TEST(too_big_document)
{
    size_t n = ((size_t)16 << 20) + 1;
    char *doc = malloc(n);
    ck_assert_ptr_nonnull(doc);
    memset(doc, ' ', n);
    doc[0] = '{';
    doc[n - 1] = '}';
    read_bad_raw(doc, n, "big.json", TSR_ETOOBIG, "big.json: $: the document is 16777217 bytes");
    free(doc);
}
END_TEST

START_TEST(too_deep)
{
    text t = {0};
    put(&t, "{\"board\": {\"size\": [2, 1]}, \"pieces\": [{\"name\": \"D\", \"cells\": ");
    put_repeat(&t, '[', 40);
    put_repeat(&t, ']', 40);
    put(&t, "}]}");
    /* the 33rd bracket opens at column 92 */
    read_bad_raw(t.s, t.len, "deep.json", TSR_EINVAL, "deep.json:1:92: nesting deeper than 32");
    /* brackets inside strings do not count */
    free(t.s);
    t = (text){0};
    put(&t, "{\"board\": {\"size\": [2, 1]}, \"name\": \"");
    put_repeat(&t, '[', 40);
    put(&t, "\\\"{{{{\", \"pieces\": [{\"name\": \"D\", \"cells\": [[0,0],[1,0]]}]}");
    tsr_puzzle *pz;
    tsr_err err;
    ck_assert_int_eq(tsr_puzzle_read_json(t.s, t.len, NULL, &pz, NULL, &err), 0);
    ck_assert_uint_eq(strlen(pz->name), 45);
    tsr_puzzle_free(pz);
    free(t.s);
}
END_TEST

START_TEST(too_many_board_cells)
{
    text t = {0};
    put(&t, "{\"board\": {\"rows\": [\"");
    put_repeat(&t, '.', TSR_MAX_CELLS / 2);
    put(&t, "\", \"");
    put_repeat(&t, '.', TSR_MAX_CELLS / 2 + 1);
    put(&t, "\"]}, \"pieces\": [{\"name\": \"m\", \"cells\": [[0,0]], \"count\": 5}]}");
    read_bad_raw(t.s, t.len, "t.json", TSR_ETOOBIG,
                 "t.json: $.board.rows[1]: the board has more than 100000 cells");
    free(t.s);
}
END_TEST

START_TEST(exactly_max_board_cells)
{
    text t = {0};
    char buf[128];
    put(&t, "{\"board\": {\"size\": [500, 200]}, \"pieces\": [{\"name\": \"m\", \"cells\": [[0,0]],");
    snprintf(buf, sizeof buf, " \"count\": %d}]}", TSR_MAX_CELLS);
    put(&t, buf);
    tsr_puzzle *pz;
    tsr_err err;
    int rc = tsr_puzzle_read_json(t.s, t.len, NULL, &pz, NULL, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_int_eq(pz->ncells, TSR_MAX_CELLS);
    tsr_puzzle_free(pz);
    free(t.s);
}
END_TEST

START_TEST(too_many_piece_cells)
{
    text t = {0};
    put(&t, "{\"board\": {\"size\": [2, 1]}, \"pieces\": [{\"name\": \"P\", \"rows\": [\"");
    put_repeat(&t, '#', TSR_MAX_PIECE_CELLS + 1);
    put(&t, "\"]}]}");
    read_bad_raw(t.s, t.len, "t.json", TSR_ETOOBIG,
                 "$.pieces[0].rows[0]: the piece has more than 1000 cells");
    free(t.s);
}
END_TEST

START_TEST(art_beyond_max_coord)
{
    text t = {0};
    put(&t, "{\"board\": {\"size\": [2, 1]}, \"pieces\": [{\"name\": \"P\", \"rows\": [\"");
    put_repeat(&t, ' ', TSR_MAX_COORD + 1);
    put(&t, "#\"]}]}");
    read_bad_raw(t.s, t.len, "t.json", TSR_ETOOBIG,
                 "$.pieces[0].rows[0]: cell at column 100001 is beyond coordinate 100000");
    free(t.s);
}
END_TEST

START_TEST(too_many_pieces)
{
    text t = {0};
    put(&t, "{\"board\": {\"size\": [2, 1]}, \"pieces\": [");
    for (int i = 0; i <= TSR_MAX_PIECES; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s{\"name\": \"p%d\", \"cells\": [[0,0]]}", i ? "," : "", i);
        put(&t, buf);
    }
    put(&t, "]}");
    read_bad_raw(t.s, t.len, "t.json", TSR_ETOOBIG, "t.json: $.pieces: more than 10000 pieces");
    free(t.s);
}
END_TEST

START_TEST(null_source_and_long_key)
{
    const char *doc = q("{'board': {'size': [2, 1]}, 'pieces': [" DOMINO "],"
                        " 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n': 1}");
    tsr_puzzle *pz;
    tsr_err err;
    ck_assert_int_eq(tsr_puzzle_read_json(doc, strlen(doc), NULL, &pz, NULL, &err), TSR_EINVAL);
    ck_assert_str_eq(err.msg, "$.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...: unknown key;"
                              " expected one of \"version\", \"name\", \"description\","
                              " \"lattice\", \"board\", \"pieces\", \"rotations\", \"mirror\", \"expected\","
                              " \"colors\"");
    doc = "{\"board\": \n  {\"size\": [2, 1]]}";
    ck_assert_int_eq(tsr_puzzle_read_json(doc, strlen(doc), NULL, &pz, NULL, &err), TSR_EINVAL);
    ck_assert_msg(strncmp(err.msg, "2:", 2) == 0, "%s", err.msg);
}
END_TEST

/* {"polycube": "...", "options": ...}: the text is read as a polycube file,
 * its errors name the line inside the string. */
START_TEST(job_with_polycube_text)
{
    tsr_options opt;
    tsr_puzzle *pz = read_ok("{'polycube': 'D:xDim=2:yDim=1:zDim=1\\nC:name=A:type=M:layout=0 0 0\\n"
                             "C:name=B:type=M:layout=0 0 0\\n~D\\n',"
                             " 'options': {'unique': 'raw'}}", &opt);
    ck_assert_int_eq(pz->ncells, 2);
    ck_assert_int_eq(opt.unique, TSR_UNIQUE_RAW);
    tsr_puzzle_free(pz);
    read_bad("{'polycube': 'D:xDim=2:yDim=1:zDim=1\\nC:name=A:bogus\\n'}", TSR_EINVAL, "t.json: $.polycube:2:");
    read_bad("{'polycube': 5}", TSR_EINVAL, "$.polycube");
    read_bad("{'polycube': 'D:xDim=1:yDim=1:zDim=1\\n', 'puzzle': {}}", TSR_EINVAL, "unknown key");
}
END_TEST

/* The options writer and the options reader agree on every field. */
START_TEST(options_round_trip)
{
    tsr_puzzle *pz = read_ok("{'board': {'size': [2, 1]}, 'pieces': [{'name': 'D', 'rows': "
                             "['##']}]}", NULL);
    tsr_options a, b;
    tsr_options_init(&a);
    for (int round = 0; round < 4; round++) {
        tsr_options_init(&a);
        a.unique = (enum tsr_unique)(round % 3);
        a.limit = round * 7;
        a.threads = round;
        a.priority = -round;
        a.fila = round - 1;
        strcpy(a.order, round ? "e=11:f=3" : "");
        a.nof = round % 2 ? -1 : round / 2;
        a.volume = round == 0 ? -2 : round == 1 ? 0 : round == 2 ? -1 : 5;
        a.parity = round - 1;
        a.vtrigger = round;
        a.pfilter = 2 * round;
        a.fit = round == 3 ? 1 : -1;
        a.goal = round == 2;
        strcpy(a.redundancy, round == 0 ? "" : round == 1 ? "off" : "D");
        char *doc = tsr_options_write_json(&a);
        tsr_err err = {{0}};
        ck_assert_int_eq(tsr_options_read_json(doc, strlen(doc), "o", pz, &b, &err), 0);
        ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "round %d: %s reads back differently "
                      "(parity %d/%d nof %d/%d fit %d/%d volume %d/%d)", round, doc, a.parity,
                      b.parity, a.nof, b.nof, a.fit, b.fit, a.volume, b.volume);
        free(doc);
    }
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_options_read_json("{\"redundancy\": \"Q\"}", 19, "o", pz, &b, &err),
                     TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "o: $.redundancy") != NULL, "%s", err.msg);
    tsr_puzzle_free(pz);
}
END_TEST

/* ---- the plane lattices ----------------------------------------------------- */

/* Refused, with exactly this message (after "t.json: "). */
static void read_bad_exact(const char *json, int code, const char *msg)
{
    const char *doc = q(json);
    tsr_puzzle *pz = NULL;
    tsr_err err = {{0}};
    int rc = tsr_puzzle_read_json(doc, strlen(doc), "t.json", &pz, NULL, &err);
    ck_assert_msg(rc == code, "rc %d, want %d: %s", rc, code, err.msg);
    ck_assert_ptr_null(pz);
    ck_assert_msg(strncmp(err.msg, "t.json: ", 8) == 0 && strcmp(err.msg + 8, msg) == 0,
                  "message\n  \"%s\"\nwanted\n  \"t.json: %s\"", err.msg, msg);
}

/* The piece's cells moved to the origin and sorted, as "x,y,z;...". */
static char *shape_key(const tsr_cell *cells, int n)
{
    tsr_cell *v = malloc((size_t)n * sizeof *v);
    char *key = malloc((size_t)n * 40 + 1), *at = key;
    memcpy(v, cells, (size_t)n * sizeof *v);
    tsr_cell lo = v[0];
    for (int i = 1; i < n; i++)
        lo.x = v[i].x < lo.x ? v[i].x : lo.x, lo.y = v[i].y < lo.y ? v[i].y : lo.y;
    for (int i = 0; i < n; i++) /* translations move x and y only: z is a kind */
        v[i].x -= lo.x, v[i].y -= lo.y;
    for (int i = 0; i < n; i++) /* sort, small n */
        for (int j = i + 1; j < n; j++)
            if (v[j].y < v[i].y || (v[j].y == v[i].y && (v[j].x < v[i].x ||
                                                        (v[j].x == v[i].x && v[j].z < v[i].z)))) {
                tsr_cell c = v[i];
                v[i] = v[j], v[j] = c;
            }
    *at = '\0';
    for (int i = 0; i < n; i++)
        at += sprintf(at, "%d,%d,%d;", v[i].x, v[i].y, v[i].z);
    free(v);
    return key;
}

START_TEST(lattice_key)
{
    /* absent, or "cubic": the cubic lattice, as before */
    tsr_puzzle *pz = read_ok("{'board': {'size': [2, 1]}, 'pieces': [" DOMINO "]}", NULL);
    ck_assert_int_eq(pz->lattice, TSR_LATTICE_CUBIC);
    tsr_puzzle_free(pz);
    pz = read_ok("{'lattice': 'cubic', 'board': {'size': [2, 1]}, 'pieces': [" DOMINO "]}", NULL);
    ck_assert_int_eq(pz->lattice, TSR_LATTICE_CUBIC);
    tsr_puzzle_free(pz);
    /* read before the board, wherever it is written */
    pz = read_ok("{'board': {'cells': [[0, 0], [1, 0]]}, 'pieces': [{'name': 'D', 'cells':"
                 " [[0, 0], [0, 1]]}], 'lattice': 'hexagonal'}", NULL);
    ck_assert_int_eq(pz->lattice, TSR_LATTICE_HEXAGONAL);
    tsr_puzzle_free(pz);
    read_bad_exact("{'lattice': 'square', 'board': {'size': [2, 1]}, 'pieces': [" DOMINO "]}",
                   TSR_EINVAL, "$.lattice: expected one of \"cubic\", \"triangular\", "
                   "\"hexagonal\", got \"square\"");
    read_bad_exact("{'puzzle': {'lattice': 6, 'board': {'size': [2, 1]}, 'pieces': [" DOMINO "]}}",
                   TSR_EINVAL, "$.puzzle.lattice: expected one of \"cubic\", \"triangular\", "
                   "\"hexagonal\", got 6");
}
END_TEST

START_TEST(plane_cell_lists)
{
    tsr_puzzle *pz = read_ok("{'lattice': 'triangular', 'board': {'cells': [[0, 0, 0], [0, 0, 1],"
                             " [-1, 3, 1]], 'optional': [[-1, 3, 1]]}, 'pieces': [{'name': 'R',"
                             " 'cells': [[5, 5, 1], [6, 5, 0]]}, {'name': 'm', 'cells':"
                             " [[0, 0, 1]], 'count': [0, 1]}]}", NULL);
    ck_assert_int_eq(pz->lattice, TSR_LATTICE_TRIANGULAR);
    ck_assert(has_cell(pz->cells, 3, -1, 3, 1) && has_cell(pz->pieces[0].cells, 2, 6, 5, 0));
    tsr_puzzle_free(pz);
    pz = read_ok("{'lattice': 'hexagonal', 'board': {'cells': [[0, 0], [1, -1]]},"
                 " 'pieces': [{'name': 'I2', 'cells': [[0, 0], [1, 0]]}]}", NULL);
    ck_assert(has_cell(pz->cells, 2, 1, -1, 0));
    tsr_puzzle_free(pz);

    read_bad_exact("{'lattice': 'hexagonal', 'board': {'size': [2, 1]}, 'pieces': [{'name': "
                   "'I2', 'cells': [[0, 0], [1, 0]]}, {'name': 'J', 'cells': [[0, 0], [1, 0],"
                   " [1, 1, 0]]}]}", TSR_EINVAL,
                   "$.pieces[1].cells[2]: a cell of the hexagonal lattice is [x, y]: a hexagon "
                   "has no third coordinate");
    read_bad_exact("{'lattice': 'hexagonal', 'board': {'size': [2, 1], 'optional': [[0, 0, 0]]},"
                   " 'pieces': [" DOMINO "]}", TSR_EINVAL,
                   "$.board.optional[0]: a cell of the hexagonal lattice is [x, y]: a hexagon "
                   "has no third coordinate");
    read_bad_exact("{'lattice': 'hexagonal', 'board': {'cells': [[0, 0], [1]]}, 'pieces': ["
                   DOMINO "]}", TSR_EINVAL,
                   "$.board.cells[1]: expected a hexagon [x, y] of 2 integers, got an array of 1 "
                   "elements");
    read_bad_exact("{'lattice': 'triangular', 'board': {'size': [2, 1]}, 'pieces': [{'name':"
                   " 'R', 'cells': [[0, 0, 0], [0, 0]]}]}", TSR_EINVAL,
                   "$.pieces[0].cells[1]: a cell of the triangular lattice is [x, y, z]: z is 0 "
                   "for the triangle pointing up, 1 for the one pointing down");
    read_bad_exact("{'lattice': 'triangular', 'board': {'size': [3, 1]}, 'pieces': ["
                   "{'name': 'a', 'cells': [[0, 0, 0]]}, {'name': 'b', 'cells': [[0, 0, 0]]},"
                   " {'name': 'c', 'cells': [[0, 0, 1], [1, 0, 0], [1, 0, 1], [2, 0, 0],"
                   " [2, 0, 2]]}]}", TSR_EINVAL,
                   "$.pieces[2].cells[4]: z is 2; on the triangular lattice z is 0 for the "
                   "triangle pointing up (corners (x, y), (x+1, y), (x, y+1)) and 1 for the one "
                   "pointing down (corners (x+1, y), (x+1, y+1), (x, y+1))");
    read_bad_exact("{'lattice': 'triangular', 'board': {'cells': [[0, 0, 0], [0, 0, 'up']]},"
                   " 'pieces': [" DOMINO "]}", TSR_EINVAL,
                   "$.board.cells[1]: expected a triangle [x, y, z] of 3 integers; element 2 is "
                   "\"up\"");
    read_bad_exact("{'lattice': 'triangular', 'board': {'cells': 5}, 'pieces': [" DOMINO "]}",
                   TSR_EINVAL, "$.board.cells: expected an array of cells [x, y, z], got 5");
}
END_TEST

START_TEST(plane_size)
{
    tsr_puzzle *pz = read_ok("{'lattice': 'hexagonal', 'board': {'size': [3, 2]},"
                             " 'pieces': [{'name': 'I3', 'rows': ['# # #'], 'count': 2}]}", NULL);
    ck_assert_int_eq(pz->ncells, 6);
    ck_assert(has_cell(pz->cells, 6, 2, 1, 0) && !has_cell(pz->cells, 6, 3, 0, 0));
    tsr_puzzle_free(pz);
    /* W x H rhombi: both triangles of each */
    pz = read_ok("{'lattice': 'triangular', 'board': {'size': [3, 2]},"
                 " 'pieces': [{'name': 'I6', 'rows': ['######'], 'count': 2}]}", NULL);
    ck_assert_int_eq(pz->ncells, 12);
    ck_assert(has_cell(pz->cells, 12, 2, 1, 1) && has_cell(pz->cells, 12, 0, 0, 0));
    tsr_puzzle_free(pz);
    read_bad_exact("{'lattice': 'hexagonal', 'board': {'size': [2, 2, 2]}, 'pieces': ["
                   DOMINO "]}", TSR_EINVAL,
                   "$.board.size: expected [W, H] on the hexagonal lattice: the parallelogram of "
                   "W x H hexagons, got an array of 3 elements");
    read_bad_exact("{'lattice': 'triangular', 'board': {'size': [400, 400]}, 'pieces': ["
                   DOMINO "]}", TSR_ETOOBIG, "$.board.size: the board would have more than "
                   "100000 cells");
    read_bad_exact("{'lattice': 'triangular', 'board': {'layers': [['...']]}, 'pieces': ["
                   DOMINO "]}", TSR_EINVAL,
                   "$.board.layers: the triangular lattice is a plane: draw it with \"rows\" (or "
                   "list \"cells\")");
}
END_TEST

/* The hexagon of side 3 drawn as a board and the 7 tetrahexes as pieces
 * (any 4 of them and monohexes fill it): y up (the last row is y = 0),
 * hexagon (x, y) at column 2x + y. */
#define ANY "'count': [0, 1]"
START_TEST(hexagonal_art)
{
    tsr_puzzle *pz = read_ok("{'lattice': 'hexagonal',"
                             " 'board': {'rows': ['  . . .',"
                             "                    ' . . . .',"
                             "                    '. . + . .',"
                             "                    ' . . . .',"
                             "                    '  . . .']},"
                             " 'pieces': [{'name': 'I4', 'rows': ['# # # #'], " ANY "},"
                             "  {'name': 'J4', 'rows': ['     #', '# # #'], " ANY "},"
                             "  {'name': 'O4', 'rows': [' # #', '# #'], " ANY "},"
                             "  {'name': 'P4', 'rows': ['   #', '# # #'], " ANY "},"
                             "  {'name': 'S4', 'rows': ['   # #', '# #'], " ANY "},"
                             "  {'name': 'U4', 'rows': ['# #', '   #', '  #'], " ANY "},"
                             "  {'name': 'Y4', 'rows': ['    #', ' # #', '    #'], " ANY "},"
                             "  {'name': 'm', 'rows': ['#'], 'count': [0, 3]}]}", NULL);
    ck_assert_int_eq(pz->ncells, 19);
    /* x = (column - y) / 2, so the drawing's left corner is x = -1 */
    static const int hexagon[19][2] = {{-1, 4}, {0, 4}, {1, 4}, {-1, 3}, {0, 3}, {1, 3}, {2, 3},
                                       {-1, 2}, {0, 2}, {1, 2}, {2, 2}, {3, 2}, {0, 1}, {1, 1},
                                       {2, 1}, {3, 1}, {1, 0}, {2, 0}, {3, 0}};
    for (int i = 0; i < 19; i++)
        ck_assert_msg(has_cell(pz->cells, 19, hexagon[i][0], hexagon[i][1], 0), "cell %d", i);
    ck_assert_int_eq(pz->noptional, 1);
    ck_assert(pz->optional[0].x == 1 && pz->optional[0].y == 2);
    /* Polyform Puzzler's tetrahexes (tests/fixtures/lattices), up to translation */
    static const char *const puzzler[] = {
        "0,0,0;1,0,0;2,0,0;3,0,0;", "0,0,0;1,0,0;2,0,0;2,1,0;", "0,0,0;1,0,0;0,1,0;1,1,0;",
        "0,0,0;1,0,0;2,0,0;1,1,0;", "0,0,0;1,0,0;1,1,0;2,1,0;", "2,0,0;2,1,0;0,2,0;1,2,0;",
        "2,0,0;0,1,0;1,1,0;1,2,0;"};
    for (int k = 0; k < 7; k++) {
        char *key = shape_key(pz->pieces[k].cells, pz->pieces[k].ncells);
        ck_assert_msg(strcmp(key, puzzler[k]) == 0, "%s: %s", pz->pieces[k].name, key);
        free(key);
    }
    tsr_puzzle_free(pz);

    /* a drawing one column over is the same shape: the first cell sets the
     * parity, x = (column - y) / 2 rounded down */
    pz = read_ok("{'lattice': 'hexagonal', 'board': {'rows': [' . .', '. . .', ' . .']},"
                 " 'pieces': [{'name': 'm', 'rows': ['#'], 'count': 7}]}", NULL);
    tsr_puzzle *same = read_ok("{'lattice': 'hexagonal', 'board': {'rows': ['  . .', ' . . .',"
                               " '  . .']}, 'pieces': [{'name': 'm', 'rows': ['#'], 'count': 7}]}",
                               NULL);
    ck_assert_int_eq(pz->ncells, 7);
    for (int i = 0; i < 7; i++)
        ck_assert(pz->cells[i].x + 1 == same->cells[i].x && pz->cells[i].y == same->cells[i].y);
    ck_assert(pz->cells[0].x == -1 && pz->cells[0].y == 2); /* column 1 - y 2 = -1: x -1 */
    tsr_puzzle_free(same);
    tsr_puzzle_free(pz);

    read_bad_exact("{'lattice': 'hexagonal', 'board': {'rows': [' . .', '. . .', '. .']},"
                   " 'pieces': [{'name': 'm', 'rows': ['#'], 'count': 7}]}", TSR_EINVAL,
                   "$.board.rows[2]: '.' at column 0 is between two hexagons: each row is "
                   "shifted half a hexagon (one column) from the next, and the first cell drawn "
                   "(rows[0], column 1) puts this row's hexagons at odd columns");
    read_bad_exact("{'lattice': 'hexagonal', 'board': {'size': [2, 1]}, 'pieces': [{'name':"
                   " 'D', 'rows': ['##']}]}", TSR_EINVAL,
                   "$.pieces[0].rows[0]: '#' at column 1 is between two hexagons: each row is "
                   "shifted half a hexagon (one column) from the next, and the first cell drawn "
                   "(rows[0], column 0) puts this row's hexagons at even columns");
    read_bad_exact("{'lattice': 'hexagonal', 'board': {'size': [2, 1]}, 'pieces': [{'name':"
                   " 'D', 'rows': ['^ v']}]}", TSR_EINVAL,
                   "$.pieces[0].rows[0]: '^' at column 0: '^' and 'v' draw the triangles of the "
                   "triangular lattice; on the hexagonal lattice the art has '#' for a cell, "
                   "'.' or ' ' for none");
}
END_TEST

/* The 12 hexiamonds drawn with '^' and 'v' (and with '#'), y up, triangle
 * (x, y, z) at column 2x + y + z: Polyform Puzzler's pieces. */
START_TEST(triangular_art)
{
    static const char *const art[12][2] = {
        {"I", "['^v^v^v']"},           {"P", "[' ^', '^v^v^']"},
        {"J", "[' ^v^v^', '     v']"}, {"E", "[' ^v^v^', '   v']"},
        {"V", "[' ^v', '^v^v']"},      {"H", "[' ^v^v', '   v^']"},
        {"S", "['    ^', ' ^v^v', ' v']"}, {"X", "['  ^', ' ^v^v', '   v']"},
        {"C", "['   ^v', '^v^v']"},    {"G", "['  v^', '^v^v']"},
        {"F", "[' ^ ^', '^v^v']"},     {"O", "[' ^v^', ' v^v']"}};
    /* tests/fixtures/lattices/make_fixtures.py's HEXIAMONDS, normalised */
    static const char *const puzzler[12] = {
        "0,0,0;0,0,1;1,0,0;1,0,1;2,0,0;2,0,1;", "0,0,0;0,0,1;1,0,0;1,0,1;2,0,0;0,1,0;",
        "2,0,1;0,1,0;0,1,1;1,1,0;1,1,1;2,1,0;", "1,0,1;0,1,0;0,1,1;1,1,0;1,1,1;2,1,0;",
        "0,0,0;0,0,1;1,0,0;1,0,1;0,1,0;0,1,1;", "1,0,1;2,0,0;0,1,0;0,1,1;1,1,0;1,1,1;",
        "0,0,1;0,1,0;0,1,1;1,1,0;1,1,1;1,2,0;", "1,0,1;0,1,0;0,1,1;1,1,0;1,1,1;0,2,0;",
        "0,0,0;0,0,1;1,0,0;1,0,1;1,1,0;1,1,1;", "0,0,0;0,0,1;1,0,0;1,0,1;0,1,1;1,1,0;",
        "0,0,0;0,0,1;1,0,0;1,0,1;0,1,0;1,1,0;", "0,0,1;1,0,0;1,0,1;0,1,0;0,1,1;1,1,0;"};
    for (int hash = 0; hash < 2; hash++) {
        char doc[2048] = "{'lattice': 'triangular', 'board': {'size': [9, 4]}, 'pieces': [";
        for (int k = 0; k < 12; k++) {
            char piece[96], rows[64];
            snprintf(rows, sizeof rows, "%s", art[k][1]);
            for (char *c = rows; hash && *c; c++) /* '#' draws any triangle */
                *c = *c == '^' || *c == 'v' ? '#' : *c;
            snprintf(piece, sizeof piece, "%s{'name': '%s', 'rows': %s}", k ? ", " : "",
                     art[k][0], rows);
            strcat(doc, piece);
        }
        strcat(doc, "]}");
        tsr_puzzle *pz = read_ok(doc, NULL);
        ck_assert_int_eq(pz->ncells, 72);
        for (int k = 0; k < 12; k++) {
            char *key = shape_key(pz->pieces[k].cells, pz->pieces[k].ncells);
            ck_assert_msg(strcmp(key, puzzler[k]) == 0, "%s: %s", art[k][0], key);
            free(key);
        }
        tsr_puzzle_free(pz);
    }
    /* kinds by column: in the last row (y = 0) up at even columns */
    tsr_puzzle *pz = read_ok("{'lattice': 'triangular', 'board': {'rows': ['.+', '...']},"
                             " 'pieces': [{'name': 'm', 'rows': ['#'], 'count': [4, 5]}]}", NULL);
    static const int cells[5][3] = {{-1, 1, 1}, {0, 1, 0}, {0, 0, 0}, {0, 0, 1}, {1, 0, 0}};
    for (int i = 0; i < 5; i++)
        ck_assert_msg(pz->cells[i].x == cells[i][0] && pz->cells[i].y == cells[i][1] &&
                      pz->cells[i].z == cells[i][2], "cell %d", i);
    ck_assert(pz->noptional == 1 && pz->optional[0].x == 0 && pz->optional[0].z == 0);
    tsr_puzzle_free(pz);
    read_bad_exact("{'lattice': 'triangular', 'board': {'size': [2, 1]}, 'pieces': [{'name':"
                   " 'R', 'rows': ['^', 'v^']}]}", TSR_EINVAL,
                   "$.pieces[0].rows[0]: '^' at column 0 is where a triangle points down: in "
                   "this row (y = 1, the last row being y = 0) the triangles pointing up are at "
                   "odd columns, those pointing down at even ones");
    read_bad_exact("{'lattice': 'triangular', 'board': {'rows': ['v..']}, 'pieces': ["
                   DOMINO "]}", TSR_EINVAL,
                   "$.board.rows[0]: 'v' at column 0 is where a triangle points up: in this row "
                   "(y = 0, the last row being y = 0) the triangles pointing up are at even "
                   "columns, those pointing down at odd ones");
    read_bad_exact("{'lattice': 'triangular', 'board': {'rows': ['x..']}, 'pieces': ["
                   DOMINO "]}", TSR_EINVAL,
                   "$.board.rows[0]: invalid character 'x' at column 0; expected '.' for a "
                   "cell, '+' for an optional cell, '#' or ' ' for none, '^' or 'v' for a cell "
                   "pointing up or down, or a digit 1-9 for a cell of that colour");
}
END_TEST

/* The lattice fixtures of issue 24 (tests/fixtures/lattices) read. */
START_TEST(lattice_fixtures)
{
    static const char *const files[] = {"hexiamonds-9x4", "hexiamonds-6x6", "hexiamonds-12x3",
                                        "hexiamonds-ring", "hexiamonds-ring-offset",
                                        "tetrahexes-7x4", "polyhexes-34-hexagon",
                                        "polyhexes-1234-diamond-ring"};
    for (int i = 0; i < 8; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/fixtures/lattices/%s.json", TSR_SRCDIR, files[i]);
        tsr_puzzle *pz = NULL;
        tsr_err err = {{0}};
        ck_assert_msg(tsr_puzzle_load_file(path, &pz, NULL, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(pz->lattice, i < 5 ? TSR_LATTICE_TRIANGULAR : TSR_LATTICE_HEXAGONAL);
        ck_assert_int_eq(pz->ncells, i < 5 ? 72 : i == 5 ? 28 : i == 6 ? 37 : 40);
        tsr_puzzle_free(pz);
    }
}
END_TEST

static Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("good");
    tcase_add_test(tc, board_size_2d);
    tcase_add_test(tc, colours);
    tcase_add_test(tc, board_size_3d);
    tcase_add_test(tc, board_rows);
    tcase_add_test(tc, board_layers);
    tcase_add_test(tc, board_cells);
    tcase_add_test(tc, piece_forms);
    tcase_add_test(tc, fixed_pieces);
    tcase_add_test(tc, puzzle_fields);
    tcase_add_test(tc, puzzle_defaults);
    tcase_add_test(tc, job_all_options);
    tcase_add_test(tc, job_other_option_values);
    tcase_add_test(tc, job_store_option);
    tcase_add_test(tc, job_without_options);
    tcase_add_test(tc, job_with_polycube_text);
    tcase_add_test(tc, options_round_trip);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad");
    tcase_add_loop_test(tc, bad_documents, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, bad_options_leave_defaults);
    tcase_add_test(tc, null_source_and_long_key);
    suite_add_tcase(s, tc);

    tc = tcase_create("caps");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, too_big_document);
    tcase_add_test(tc, too_deep);
    tcase_add_test(tc, too_many_board_cells);
    tcase_add_test(tc, exactly_max_board_cells);
    tcase_add_test(tc, too_many_piece_cells);
    tcase_add_test(tc, art_beyond_max_coord);
    tcase_add_test(tc, too_many_pieces);
    suite_add_tcase(s, tc);

    tc = tcase_create("plane lattices");
    tcase_add_test(tc, lattice_key);
    tcase_add_test(tc, plane_cell_lists);
    tcase_add_test(tc, plane_size);
    tcase_add_test(tc, hexagonal_art);
    tcase_add_test(tc, triangular_art);
    tcase_add_test(tc, lattice_fixtures);
    suite_add_tcase(s, tc);
    return s;
}

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    return json_suite();
}
