/*
 * test_model.c - puzzle construction and tsr_puzzle_validate's boundaries.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/puzzle.h"

/* A 2x2 board with two dominoes. */
static tsr_puzzle *dominoes(void)
{
    tsr_puzzle *pz = tsr_puzzle_new();
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 2; x++)
            ck_assert_int_eq(tsr_puzzle_add_board_cell(pz, (tsr_cell){x, y, 0}), 0);
    tsr_cell d[2] = {{0, 0, 0}, {1, 0, 0}};
    ck_assert_int_eq(tsr_puzzle_add_piece(pz, "D", d, 2, 2, false), 0);
    return pz;
}

static void expect_invalid(const tsr_puzzle *pz, const char *needle)
{
    tsr_err err = {{0}};
    int rc = tsr_puzzle_validate(pz, "t.json", &err);
    ck_assert_int_lt(rc, 0);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "message '%s' lacks '%s'", err.msg, needle);
    ck_assert_msg(strncmp(err.msg, "t.json: ", 8) == 0, "message '%s' lacks the prefix", err.msg);
}

START_TEST(valid_puzzle)
{
    tsr_puzzle *pz = dominoes();
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_puzzle_validate(pz, NULL, &err), 0);
    ck_assert_int_eq(tsr_puzzle_free_volume(pz), 4);
    ck_assert_int_eq(tsr_puzzle_piece_volume(pz), 4);
    ck_assert(tsr_puzzle_is_flat(pz));
    ck_assert_int_eq(pz->rotations, TSR_ROT_ALL);
    ck_assert_int_eq(pz->expected[TSR_UNIQUE_RAW], -1);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(volume_mismatch)
{
    tsr_puzzle *pz = dominoes();
    pz->pieces[0].count = pz->pieces[0].count_min = 3;
    expect_invalid(pz, "cover 6 cells but the board has 4 free cells");
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(fixed_piece_rules)
{
    tsr_puzzle *pz = dominoes();
    pz->pieces[0].count = pz->pieces[0].count_min = 1;
    tsr_cell off[2] = {{0, 1, 0}, {5, 5, 0}};
    ck_assert_int_eq(tsr_puzzle_add_piece(pz, "F", off, 2, 1, true), 1);
    expect_invalid(pz, "is not on the board");
    pz->pieces[1].cells[1] = (tsr_cell){1, 1, 0};
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_puzzle_validate(pz, NULL, &err), 0);
    tsr_cell over[1] = {{1, 1, 0}};
    ck_assert_int_eq(tsr_puzzle_add_piece(pz, "G", over, 1, 1, true), 2);
    expect_invalid(pz, "overlaps another fixed piece");
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(names_and_cells)
{
    tsr_puzzle *pz = dominoes();
    tsr_cell d[2] = {{0, 0, 0}, {0, 0, 0}};
    tsr_puzzle_add_piece(pz, "D", d, 2, 1, false);
    expect_invalid(pz, "name 'D' is used twice");
    free(pz->pieces[1].name);
    pz->pieces[1].name = strdup("E");
    expect_invalid(pz, "is listed twice");
    pz->pieces[1].ncells = 0;
    expect_invalid(pz, "has no cells");
    tsr_puzzle_free(pz);

    pz = dominoes();
    tsr_puzzle_add_board_cell(pz, (tsr_cell){1, 1, 0});
    expect_invalid(pz, "listed twice");
    tsr_puzzle_free(pz);

    pz = tsr_puzzle_new();
    expect_invalid(pz, "no cells");
    tsr_puzzle_free(pz);
}
END_TEST

/* Colours: the setters (all neutral is none; board colours stay parallel
 * to cells added later), the rule, and what validation refuses. */
START_TEST(colours)
{
    tsr_puzzle *pz = dominoes();
    static const unsigned char none[4] = {0, 0, 0, 0}, board[4] = {1, 2, 2, 1}, d[2] = {1, 2};
    ck_assert_int_eq(tsr_puzzle_set_board_colors(pz, none), 0);
    ck_assert_ptr_null(pz->colors);
    ck_assert(!tsr_puzzle_has_colors(pz));
    ck_assert_int_eq(tsr_puzzle_set_board_colors(pz, board), 0);
    ck_assert_int_eq(tsr_puzzle_set_piece_colors(pz, 0, d), 0);
    ck_assert_int_eq(tsr_puzzle_set_piece_colors(pz, 1, d), TSR_EINVAL);
    ck_assert(tsr_puzzle_has_colors(pz));
    /* no pair: colours meet neutral cells only */
    ck_assert(tsr_puzzle_color_allowed(pz, 0, 2) && tsr_puzzle_color_allowed(pz, 2, 0) &&
              !tsr_puzzle_color_allowed(pz, 1, 1));
    ck_assert_int_eq(tsr_puzzle_allow_colors(pz, 1, 1), 0);
    ck_assert_int_eq(tsr_puzzle_allow_colors(pz, 1, 1), 0); /* once */
    ck_assert_int_eq(pz->nallowed, 1);
    ck_assert(tsr_puzzle_color_allowed(pz, 1, 1) && !tsr_puzzle_color_allowed(pz, 2, 2));
    ck_assert_int_eq(tsr_puzzle_allow_colors(pz, 0, 1), TSR_EINVAL);
    ck_assert_int_eq(tsr_puzzle_allow_colors(pz, 1, 64), TSR_EINVAL);
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_puzzle_validate(pz, NULL, &err), 0);
    /* 40 more cells: the colours grow with them, neutral */
    for (int x = 0; x < 40; x++)
        ck_assert_int_eq(tsr_puzzle_add_board_cell(pz, (tsr_cell){x, 5, 0}), 0);
    ck_assert_int_eq(pz->colors[3], 1);
    for (int i = 4; i < pz->ncells; i++)
        ck_assert_int_eq(pz->colors[i], 0);
    tsr_puzzle_free(pz);

    pz = dominoes();
    ck_assert_int_eq(tsr_puzzle_set_board_colors(pz, board), 0);
    pz->colors[2] = 64;
    expect_invalid(pz, "board cell (0,1,0) has colour 64 (colours are 0 to 63)");
    pz->colors[2] = 3;
    uint32_t rgb[2] = {0xFF0000, 0x00FF00};
    ck_assert_int_eq(tsr_puzzle_set_palette(pz, rgb, 2), 0);
    expect_invalid(pz, "board cell (0,1,0) has colour 3 (colours are 0 to 2)");
    pz->colors[2] = 2;
    ck_assert_int_eq(tsr_puzzle_set_piece_colors(pz, 0, (const unsigned char[]){3, 0}), 0);
    expect_invalid(pz, "piece 'D': cell (0,0,0) has colour 3 (colours are 0 to 2)");
    ck_assert_int_eq(tsr_puzzle_set_piece_colors(pz, 0, NULL), 0);
    ck_assert_int_eq(tsr_puzzle_allow_colors(pz, 1, 2), 0);
    ck_assert_int_eq(tsr_puzzle_allow_colors(pz, 2, 1), 0);
    pz->allowed[1] = pz->allowed[0];
    expect_invalid(pz, "allowed colour pair (piece 1 on board 2) is listed twice");
    pz->allowed[1] = (tsr_color_pair){3, 1};
    expect_invalid(pz, "allowed colour pair 2 (piece 3 on board 1): colours are 1 to 2");
    pz->nallowed = 1;
    /* a fixed piece of colour 2 on the board's colour 1 at (0,0) */
    tsr_cell at[1] = {{0, 0, 0}};
    pz->pieces[0].count = pz->pieces[0].count_min = 1;
    int f = tsr_puzzle_add_piece(pz, "F", at, 1, 1, true);
    ck_assert_int_ge(f, 0);
    ck_assert_int_eq(tsr_puzzle_set_piece_colors(pz, f, (const unsigned char[]){2}), 0);
    expect_invalid(pz, "fixed piece 'F': its cell (0,0,0) of colour 2 may not sit on a board cell "
                       "of colour 1");
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(options_defaults)
{
    tsr_options o;
    memset(&o, 0x5a, sizeof o);
    tsr_options_init(&o);
    ck_assert_int_eq(o.unique, TSR_UNIQUE_ROTATIONS);
    ck_assert_int_eq(o.fila, -1);
    ck_assert_int_eq(o.nof, -1);
    ck_assert_int_eq(o.volume, -1);
    ck_assert_int_eq(o.limit, 0);
    ck_assert_str_eq(o.redundancy, "");
    ck_assert_str_eq(o.order, "");
}
END_TEST

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, valid_puzzle);
    tcase_add_test(tc, volume_mismatch);
    tcase_add_test(tc, fixed_piece_rules);
    tcase_add_test(tc, names_and_cells);
    tcase_add_test(tc, options_defaults);
    tcase_add_test(tc, colours);
    suite_add_tcase(s, tc);
    return s;
}
