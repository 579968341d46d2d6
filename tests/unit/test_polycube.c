/*
 * test_polycube.c - the polycube definition reader (polycube_read.c) and
 * format detection and file loading (read.c).
 *
 * The Tetris Cube and the hexomino box-in-a-diamond definitions are quoted
 * verbatim from Matt Busche's 2011 article; the box-in-a-diamond one checks
 * graphical layouts, stationary pieces shaping the board and the row order.
 * Malformed inputs are a table: each must fail with its code and a message
 * naming the right line.  Prefix truncations and byte mutations of the real
 * definitions must fail or succeed cleanly (run under the sanitizers).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessera/puzzle.h"

static const char TETRIS_CUBE[] =
    "# Tetris Cube Puzzle Definition\n"
    "D:xDim=4:yDim=4:zDim=4\n"
    "C:name=A:type=M:layout=0 0 2,  1 0 2,  2 0 2,  2 0 1,  2 0 0,  2 1 0  # Blue angle with end-notch\n"
    "C:name=B:type=M:layout=0 0 0,  1 0 0,  2 0 0,  2 1 0,  2 2 0,  2 1 1  # Blue angle with mid-notch\n"
    "C:name=C:type=M:layout=0 0 0,  1 0 0,  1 0 1,  2 0 1,  2 1 1          # Blue angled staircase\n"
    "C:name=D:type=M:layout=0 0 0,  1 0 0,  2 0 0,  2 1 0,  3 1 0          # Blue 2-D serpent\n"
    "C:name=E:type=M:layout=0 0 1,  0 0 0,  1 0 0,  1 1 0,  1 2 0,  2 1 0  # Red dog with tail\n"
    "C:name=F:type=M:layout=0 0 0,  1 0 0,  0 0 1,  1 0 1,  0 1 0          # Red ziggurat\n"
    "C:name=G:type=M:layout=0 2 0,  0 1 0,  0 0 0,  1 0 0,  2 0 0          # Red angle\n"
    "C:name=H:type=M:layout=0 0 0,  1 0 0,  2 0 0,  3 0 0,  2 1 0          # Red line with mid-notch\n"
    "C:name=I:type=M:layout=0 0 1,  1 0 1,  2 0 1,  0 1 1,  0 1 0          # Yellow pole with twisty top\n"
    "C:name=J:type=M:layout=0 0 0,  1 0 0,  1 0 1,  1 1 1,  2 1 1          # Yellow cork-screw\n"
    "C:name=K:type=M:layout=0 0 0,  1 0 0,  2 0 0,  1 1 0,  1 1 1          # Yellow radar dish\n"
    "C:name=L:type=M:layout=0 1 0,  1 1 0,  1 1 1,  2 1 1,  1 0 1,  1 2 1  # Yellow sphinx\n"
    "~D\n";

static const char BOX_IN_A_DIAMOND[] =
    "# Box-in-a-Diamond Hexomino Puzzle Definition\n"
    "D:xDim=23:yDim=23:zDim=1\n"
    "L\n"
    ". . . . . . . . . . . A . . . . . . . . . . . . . . . . . . . . . . . . . . .\n"
    ". . . . . . . . . . . A . B B . C . . D . . . E . . F . . . . . . . . . . . .\n"
    ". . . . . . . . . . . A . B . . C C . D . . E E . . F . . . . . . . . . . . .\n"
    ". . . . . . . . . . . A . B . . C . . D D . E . . F F . . . . . . . . . . . .\n"
    ". . . . . . . . . . . A . B . . C . . D . . E . . F . . . . . . . . . . . . .\n"
    ". . . . . . . . . . . A . B . . C . . D . . E . . F . . . . . . . . . . . . .\n"
    ". . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . .\n"
    ". G G . H H . I I . J . . K . . . L . M M M . N . . . O . . . P . . . Q . . .\n"
    ". G G . H . . I . . J J . K K . L L . M . . . N N N . O . . . P . . . Q . . .\n"
    ". G . . H H . I . . J J . K K . L . . M . . . N . . . O O O . P P . . Q Q Q .\n"
    ". G . . H . . I I . J . . . K . L L . M . . . N . . . . O . . . P P . . . Q .\n"
    ". . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . .\n"
    "R . . . S . . . T . . . U U U . V V . . W W . . X X . . . Y . . . Z . . 1 . .\n"
    "R R R . S S . . T T . . . U . . . V V . . W . . . X . . Y Y Y . Z Z . . 1 1 .\n"
    ". R . . . S S . . T . . . U . . . V . . . W W . . X . . . Y . . . Z Z . . 1 1\n"
    ". R . . . S . . . T T . . U . . . V . . . W . . . X X . . Y . . . Z . . . . 1\n"
    ". . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . .\n"
    ". . . . . 2 2 . 3 . . . 4 . . . 5 . . . 6 . . . 7 7 . . 8 8 . . 9 9 . . . . .\n"
    ". . . . . 2 2 . 3 3 3 . 4 4 . . 5 5 5 . 6 . 6 . 7 7 7 . 8 8 . . . 9 9 . . . .\n"
    ". . . . . 2 2 . 3 3 . . 4 4 4 . 5 . 5 . 6 6 6 . . 7 . . . 8 8 . 9 9 . . . . .\n"
    "~L\n"
    "L:stationary=*\n"
    "* * * * * * * * * * * . * * * * * * * * * * *\n"
    "* * * * * * * * * * . . . * * * * * * * * * *\n"
    "* * * * * * * * * . . . . . * * * * * * * * *\n"
    "* * * * * * * * . . . . . . . * * * * * * * *\n"
    "* * * * * * * . . . . . . . . . * * * * * * *\n"
    "* * * * * * . . . . . . . . . . . * * * * * *\n"
    "* * * * * . . . . . . . . . . . . . * * * * *\n"
    "* * * * . . . . . . . . . . . . . . . * * * *\n"
    "* * * . . . . . . . . . . . . . . . . . * * *\n"
    "* * . . . . * * * * * * * * * * * . . . . * *\n"
    "* . . . . . * * * * * * * * * * * . . . . . *\n"
    ". . . . . . * * * * * * * * * * * . . . . . .\n"
    "* . . . . . * * * * * * * * * * * . . . . . *\n"
    "* * . . . . * * * * * * * * * * * . . . . * *\n"
    "* * * . . . . . . . . . . . . . . . . . * * *\n"
    "* * * * . . . . . . . . . . . . . . . * * * *\n"
    "* * * * * . . . . . . . . . . . . . * * * * *\n"
    "* * * * * * . . . . . . . . . . . * * * * * *\n"
    "* * * * * * * . . . . . . . . . * * * * * * *\n"
    "* * * * * * * * . . . . . . . * * * * * * * *\n"
    "* * * * * * * * * . . . . . * * * * * * * * *\n"
    "* * * * * * * * * * . . . * * * * * * * * * *\n"
    "* * * * * * * * * * * . * * * * * * * * * * *\n"
    "~L\n"
    "~D\n";

static tsr_puzzle *read_ok(const char *text, const char *source)
{
    tsr_puzzle *pz = NULL;
    tsr_err err = {""};
    int rc = tsr_puzzle_read_polycube(text, strlen(text), source, &pz, &err);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, err.msg);
    ck_assert_ptr_nonnull(pz);
    return pz;
}

static const tsr_piece *piece(const tsr_puzzle *pz, const char *name)
{
    for (int i = 0; i < pz->npieces; i++)
        if (strcmp(pz->pieces[i].name, name) == 0)
            return &pz->pieces[i];
    ck_abort_msg("no piece '%s'", name);
    return NULL;
}

static bool has_cell(const tsr_piece *p, int x, int y, int z)
{
    for (int i = 0; i < p->ncells; i++)
        if (p->cells[i].x == x && p->cells[i].y == y && p->cells[i].z == z)
            return true;
    return false;
}

/* ---- well-formed definitions ------------------------------------------- */

START_TEST(tetris_cube)
{
    tsr_puzzle *pz = read_ok(TETRIS_CUBE, "tetris.txt");
    ck_assert_int_eq(pz->ncells, 64);
    ck_assert_int_eq(pz->npieces, 12);
    ck_assert_int_eq(tsr_puzzle_free_volume(pz), 64);
    ck_assert_int_eq(tsr_puzzle_piece_volume(pz), 64);
    ck_assert_int_eq(pz->rotations, TSR_ROT_ALL);
    ck_assert(!pz->mirror);
    ck_assert(!tsr_puzzle_is_flat(pz));
    for (int i = 0; i < 12; i++) {
        ck_assert_int_eq(pz->pieces[i].name[0], 'A' + i); /* definition order */
        ck_assert_int_eq(pz->pieces[i].count, 1);
        ck_assert(!pz->pieces[i].fixed);
    }
    const tsr_piece *a = piece(pz, "A");
    ck_assert_int_eq(a->ncells, 6);
    ck_assert(has_cell(a, 0, 0, 2) && has_cell(a, 2, 0, 0) && has_cell(a, 2, 1, 0));
    ck_assert_int_eq(piece(pz, "L")->ncells, 6);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(box_in_a_diamond)
{
    tsr_puzzle *pz = read_ok(BOX_IN_A_DIAMOND, "diamond.txt");
    ck_assert_int_eq(pz->ncells, 23 * 23);
    ck_assert_int_eq(pz->npieces, 36);
    ck_assert(tsr_puzzle_is_flat(pz));
    ck_assert_int_eq(tsr_puzzle_free_volume(pz), 210);
    ck_assert_int_eq(tsr_puzzle_piece_volume(pz), 35 * 6);
    const tsr_piece *star = piece(pz, "*");
    ck_assert(star->fixed);
    ck_assert_int_eq(star->ncells, 23 * 23 - 210);
    /* the first row of a block is y = yDim-1: the diamond's top point
     * (column 11 of the first row) is open, the corners are not */
    ck_assert(!has_cell(star, 11, 22, 0) && has_cell(star, 0, 22, 0));
    ck_assert(!has_cell(star, 0, 11, 0) && has_cell(star, 0, 12, 0));
    /* mobile pieces keep their drawn coordinates, also beyond the box */
    const tsr_piece *a = piece(pz, "A");
    ck_assert(!a->fixed);
    ck_assert(has_cell(a, 11, 22, 0) && has_cell(a, 11, 17, 0));
    ck_assert(has_cell(piece(pz, "Q"), 37, 13, 0));
    ck_assert(has_cell(piece(pz, "9"), 32, 3, 0));
    for (int i = 0; i < pz->npieces; i++)
        ck_assert_int_eq(pz->pieces[i].ncells, pz->pieces[i].fixed ? 319 : 6);
    tsr_puzzle_free(pz);
}
END_TEST

/* z layers are comma-separated groups of a row; stationary pieces of a
 * layout and of type=S lines are fixed where drawn. */
START_TEST(layers_and_stationary)
{
    tsr_puzzle *pz = read_ok("D:xDim=2:yDim=2:zDim=2\n"
                             "L:stationary=S\n"
                             "S . , . .   # y = 1\n"
                             ". . , . S   # y = 0\n"
                             "~L\n"
                             "C:name=T:type=S:layout=1 1 0\n"
                             "C:name=M:layout=0 0 0, 1 0 0, 0 0 1, 0 1 1, 1 1 1\n"
                             "~D\n",
                             NULL);
    const tsr_piece *s = piece(pz, "S"), *t = piece(pz, "T"), *m = piece(pz, "M");
    ck_assert(s->fixed && t->fixed && !m->fixed);
    ck_assert_int_eq(s->ncells, 2);
    ck_assert(has_cell(s, 0, 1, 0) && has_cell(s, 1, 0, 1));
    ck_assert(has_cell(t, 1, 1, 0));
    ck_assert_int_eq(tsr_puzzle_free_volume(pz), 5);
    tsr_puzzle_free(pz);
}
END_TEST

/* Names longer than one character, blank lines between drawn pieces (they
 * use up no row), CRLF line ends, zDim defaulting to 1, and oneSide. */
START_TEST(names_blank_lines_one_side)
{
    tsr_puzzle *pz = read_ok("D : xDim=3 : yDim=2 : oneSide\r\n"
                             "L\r\n"
                             "P1 P1\r\n"
                             "\r\n"
                             "Q2 Q2\r\n"
                             "~L\r\n"
                             "C:name=long-name_7:layout=0 0 0, 0 1 0\r\n"
                             "~D\r\n",
                             "x");
    ck_assert_int_eq(pz->rotations, TSR_ROT_ONE_SIDED);
    ck_assert_int_eq(pz->ncells, 6);
    const tsr_piece *p = piece(pz, "P1"), *q = piece(pz, "Q2");
    ck_assert(has_cell(p, 0, 1, 0) && has_cell(p, 1, 1, 0));
    ck_assert(has_cell(q, 0, 0, 0) && has_cell(q, 1, 0, 0));
    ck_assert_int_eq(piece(pz, "long-name_7")->ncells, 2);
    tsr_puzzle_free(pz);

    pz = read_ok("D:xDim=2:yDim=1:oneSide=0\nC:name=a:layout=0 0 0\nC:name=b:layout=5 5 5\n~D",
                 NULL);
    ck_assert_int_eq(pz->rotations, TSR_ROT_ALL);
    tsr_puzzle_free(pz);
}
END_TEST

/* Identical shapes stay separate pieces: the format has no counts. */
START_TEST(identical_shapes_stay_separate)
{
    tsr_puzzle *pz = read_ok("D:xDim=2:yDim=1:zDim=1\n"
                             "C:name=a:layout=0 0 0\nC:name=b:layout=0 0 0\n~D\n",
                             NULL);
    ck_assert_int_eq(pz->npieces, 2);
    ck_assert_int_eq(pz->pieces[0].count + pz->pieces[1].count, 2);
    tsr_puzzle_free(pz);
}
END_TEST

/* What tsr_write_polycube writes reads back as the same puzzle. */
START_TEST(written_back)
{
    const char *texts[] = {TETRIS_CUBE, BOX_IN_A_DIAMOND};
    for (int t = 0; t < 2; t++) {
        tsr_puzzle *pz = read_ok(texts[t], NULL);
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        ck_assert_int_eq(tsr_write_polycube(f, pz, NULL), 0);
        fclose(f);
        tsr_puzzle *back = read_ok(text, "written");
        ck_assert_int_eq(back->ncells, pz->ncells);
        ck_assert_int_eq(back->npieces, pz->npieces);
        for (int i = 0; i < pz->npieces; i++) {
            ck_assert_str_eq(back->pieces[i].name, pz->pieces[i].name);
            ck_assert_int_eq(back->pieces[i].ncells, pz->pieces[i].ncells);
            ck_assert_int_eq(back->pieces[i].fixed, pz->pieces[i].fixed);
        }
        if (t == 1) /* the board's shape survives exactly */
            ck_assert_mem_eq(back->pieces[35].cells, pz->pieces[35].cells, 319 * sizeof(tsr_cell));
        tsr_puzzle_free(back);
        tsr_puzzle_free(pz);
        free(text);
    }
}
END_TEST

/* ---- malformed definitions --------------------------------------------- */

#define MONO "C:name=m:layout=0 0 0\n"

static const struct bad_case {
    const char *text;
    int rc;
    int line; /* 0: the message carries no line (a whole-puzzle check) */
    const char *says;
} BAD[] = {
    {"D:xDim=4:yDim=4:zDim=4:foo=1\n~D\n", TSR_EINVAL, 1,
     "unknown attribute 'foo' in D: line"},
    {"# c\nC:name=A:layout=0 0 0\n", TSR_EINVAL, 2, "expected a D: line"},
    {"D:xDim=1:yDim=1\n" MONO, TSR_EINVAL, 2, "missing ~D"},
    {"D:xDim=2:yDim=1\nC:name=A:layout=0 0 0, 1 0\n~D\n", TSR_EINVAL, 2, "layout entry 2"},
    {"D:xDim=2:yDim=1\n" MONO "\nC:name=m:layout=1 0 0\n~D\n", TSR_EINVAL, 4,
     "piece 'm' redefined (first defined on line 2)"},
    {"D:xDim=1:yDim=1\nC:name=m:type=X:layout=0 0 0\n~D\n", TSR_EINVAL, 2, "type must be"},
    {"D:xDim=2:yDim=1\nC:name=s:type=S:layout=2 0 0\n" MONO "~D\n", TSR_EINVAL, 2,
     "lies outside the 2x1x1 box"},
    {"D:xDim=2:yDim=2\nL:stationary=Q\nP P\nP P\n~L\n~D\n", TSR_EINVAL, 5,
     "stationary piece 'Q' (listed on line 2) does not appear"},
    {"D:xDim=2:yDim=1\nL\nP P\n", TSR_EINVAL, 3, "missing ~L"},
    {"D:xDim=0:yDim=1\n", TSR_EINVAL, 1, "xDim must be at least 1"},
    {"D:xDim=4:yDim=x4\n", TSR_EINVAL, 1, "yDim: 'x4' is not an integer"},
    {"D:yDim=4\n", TSR_EINVAL, 1, "needs xDim="},
    {"\n\nD:xDim=1000:yDim=1000:zDim=1\n", TSR_ETOOBIG, 3, "more than 100000 cells"},
    {"D:xDim=100000:yDim=100000:zDim=100000\n", TSR_ETOOBIG, 1, "more than 100000 cells"},
    {"D:xDim=1:yDim=1\nC:name=m:layout=0 0 99999999999999999999\n~D\n", TSR_ETOOBIG, 2,
     "coordinate beyond"},
    {"D:xDim=1:yDim=1\nC:name=m1234567890123456789012345678901234567890123456789012345"
     "6789012345:layout=0 0 0\n~D\n",
     TSR_ETOOBIG, 2, "longer than 64 bytes"},
    {"D:xDim=1:yDim=1\n" MONO "~D\nD:xDim=1:yDim=1\n", TSR_EINVAL, 4, "text after ~D"},
    {"D:xDim=1:yDim=1\nX:name=m\n~D\n", TSR_EINVAL, 2, "unknown line 'X'"},
    {"D:xDim=1:yDim=1\n" MONO "~D:now\n", TSR_EINVAL, 3, "~D takes no attributes"},
    {"D:xDim=1:yDim=1\nC:name=m:layout=0 0 0:name=n\n~D\n", TSR_EINVAL, 2,
     "attribute 'name' given twice"},
    {"D:xDim=1:yDim=1\nC:name=m:layout=0 0 0, 0 0 0\n~D\n", TSR_EINVAL, 2,
     "lists cell (0 0 0) twice"},
    {"D:xDim=1:yDim=1\nL\nm\n~D\n", TSR_EINVAL, 4, "~D inside the layout block opened on line 2"},
    {"D:xDim=2:yDim=1\nL\nP\n~L\nL\nP\n~L\n~D\n", TSR_EINVAL, 6, "piece 'P' redefined"},
    {"D:xDim=2:yDim=1\nL:stationary=S S\nS S\n~L\n~D\n", TSR_EINVAL, 2, "listed twice"},
    {"D:xDim=2:yDim=1\nL:stationary=S\nS S S\n~L\n~D\n", TSR_EINVAL, 3, "outside the 2x1x1 box"},
    {"D:xDim=1:yDim=1\nL:color=red\n", TSR_EINVAL, 2, "unknown attribute 'color' in L: line"},
    {"D:xDim=1:yDim=1\nC:name=a.b:c:layout=0 0 0\n~D\n", TSR_EINVAL, 2,
     "unknown attribute 'c' in C: line"},
    {"D:xDim=1:yDim=1\nC:name=.:layout=0 0 0\n~D\n", TSR_EINVAL, 2, "invalid piece name '.'"},
    {"D:xDim=1:yDim=1\nC:name=m\n~D\n", TSR_EINVAL, 2, "needs layout="},
    {"D:xDim=1:yDim=1\n~L\n", TSR_EINVAL, 2, "~L without an open L block"},
    {"D:xDim=1:yDim=1\nD:xDim=1:yDim=1\n", TSR_EINVAL, 2, "D: line inside a definition"},
    {"D:xDim=1:yDim=1:oneSide=yes\n", TSR_EINVAL, 1, "oneSide takes"},
    {"", TSR_EINVAL, 1, "the text is empty"},
    {" \n\t\n", TSR_EINVAL, 2, "the text is empty"},
    {"# only a comment\n\n", TSR_EINVAL, 2, "no D: line"},
    {"D:xDim=2:yDim=1\n" MONO "~D\n", TSR_EINVAL, 0,
     "the pieces cover 1 cells but the board has 2 free cells"},
};

START_TEST(malformed)
{
    const struct bad_case *b = &BAD[_i];
    tsr_puzzle *pz = (tsr_puzzle *)1;
    tsr_err err = {""};
    int rc = tsr_puzzle_read_polycube(b->text, strlen(b->text), "bad.txt", &pz, &err);
    ck_assert_msg(rc == b->rc, "case %d: rc %d, want %d (%s)", _i, rc, b->rc, err.msg);
    ck_assert_ptr_null(pz);
    char want[64];
    if (b->line)
        snprintf(want, sizeof want, "bad.txt:%d: ", b->line);
    else
        snprintf(want, sizeof want, "bad.txt: ");
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "case %d: '%s' lacks '%s'", _i,
                  err.msg, want);
    ck_assert_msg(strstr(err.msg, b->says), "case %d: '%s' lacks '%s'", _i, err.msg, b->says);
}
END_TEST

START_TEST(nul_byte)
{
    static const char text[] = "D:xDim=1:yDim=1\nC:name=m:layout=0 0 0\0 junk\n~D\n";
    tsr_puzzle *pz;
    tsr_err err;
    ck_assert_int_eq(tsr_puzzle_read_polycube(text, sizeof text - 1, "n", &pz, &err), TSR_EINVAL);
    ck_assert_str_eq(err.msg, "n:2: NUL byte in the text");
}
END_TEST

START_TEST(no_source_name)
{
    tsr_puzzle *pz;
    tsr_err err;
    const char *text = "D:xDim=1:yDim=1\nC:name=m:layout=0 0\n~D\n";
    ck_assert_int_eq(tsr_puzzle_read_polycube(text, strlen(text), NULL, &pz, &err), TSR_EINVAL);
    ck_assert_str_eq(err.msg, "2: layout entry 1 is not three integers 'x y z'");
    /* no err at all is fine too */
    ck_assert_int_eq(tsr_puzzle_read_polycube(text, strlen(text), NULL, &pz, NULL), TSR_EINVAL);
}
END_TEST

/* A definition that parses is written back and read again (write.c). */
static void check_outcome(int rc, tsr_puzzle *pz, const tsr_err *err)
{
    ck_assert(rc == 0 ? pz != NULL : (pz == NULL && err->msg[0]));
    if (rc == 0) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        ck_assert_int_eq(tsr_write_polycube(f, pz, NULL), 0);
        fclose(f);
        tsr_puzzle_free(read_ok(text, "again"));
        free(text);
    }
    tsr_puzzle_free(pz);
}

/* Every prefix and many single-byte mutations of the real definitions must
 * either parse or fail with a message; the sanitizers watch for the rest. */
START_TEST(truncations_and_mutations)
{
    const char *texts[] = {TETRIS_CUBE, BOX_IN_A_DIAMOND};
    const char bytes[] = {'\0', '\n', ' ', ',', ':', '=', '#', '.', '~', '*', '-', '9', 'L',
                          'D', 'S', (char)0xff};
    unsigned seed = 12345;
    for (int t = 0; t < 2; t++) {
        size_t len = strlen(texts[t]);
        char *buf = malloc(len);
        ck_assert_ptr_nonnull(buf);
        for (size_t n = 0; n < len; n += t ? 7 : 1) {
            tsr_puzzle *pz;
            tsr_err err = {""};
            int rc = tsr_puzzle_read_polycube(texts[t], n, "cut", &pz, &err);
            check_outcome(rc, pz, &err);
        }
        for (int m = 0; m < 400; m++) {
            memcpy(buf, texts[t], len);
            seed = seed * 1103515245u + 12345u;
            buf[(seed >> 8) % len] = bytes[(seed >> 20) % sizeof bytes];
            tsr_puzzle *pz;
            tsr_err err = {""};
            int rc = tsr_puzzle_read_polycube(buf, len, "mutant", &pz, &err);
            check_outcome(rc, pz, &err);
        }
        free(buf);
    }
}
END_TEST

/* ---- tsr_puzzle_read and tsr_puzzle_load_file ------------------------------ */

START_TEST(detects_format)
{
    tsr_options opt;
    memset(&opt, 0x55, sizeof opt);
    tsr_puzzle *pz;
    tsr_err err = {""};
    ck_assert_int_eq(tsr_puzzle_read(TETRIS_CUBE, strlen(TETRIS_CUBE), "t", &pz, &opt, &err), 0);
    ck_assert_int_eq(pz->npieces, 12);
    ck_assert_int_eq(opt.unique, TSR_UNIQUE_ROTATIONS); /* defaults */
    ck_assert_int_eq(opt.limit, 0);
    tsr_puzzle_free(pz);

    const char *json = "# leading comment\n  {\"board\": {\"size\": [2, 1]},\n"
                       "   \"pieces\": [{\"name\": \"d\", \"cells\": [[0, 0], [1, 0]]}]}";
    ck_assert_int_eq(tsr_puzzle_read(json + 18, strlen(json + 18), "j", &pz, NULL, &err), 0);
    ck_assert_int_eq(pz->npieces, 1);
    tsr_puzzle_free(pz);
    /* a comment before '{' still means JSON (which then rejects it) */
    ck_assert_int_lt(tsr_puzzle_read(json, strlen(json), "j", &pz, NULL, &err), 0);
    ck_assert_ptr_null(strstr(err.msg, "D: line"));
    /* anything else is polycube */
    ck_assert_int_eq(tsr_puzzle_read("[1]", 3, "j", &pz, NULL, &err), TSR_EINVAL);
    ck_assert_str_eq(err.msg, "j:1: expected a D: line, not '[1]'");
}
END_TEST

static char *temp_file(const char *content, size_t len)
{
    char *path = strdup("/tmp/tessera-test-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, content, len), (ssize_t)len);
    close(fd);
    return path;
}

START_TEST(load_file)
{
    char *path = temp_file(BOX_IN_A_DIAMOND, strlen(BOX_IN_A_DIAMOND));
    tsr_puzzle *pz;
    tsr_options opt;
    tsr_err err = {""};
    ck_assert_int_eq(tsr_puzzle_load_file(path, &pz, &opt, &err), 0);
    ck_assert_int_eq(tsr_puzzle_free_volume(pz), 210);
    tsr_puzzle_free(pz);
    unlink(path);
    free(path);

    /* parse errors are named after the path */
    path = temp_file("D:xDim=1\n", 9);
    ck_assert_int_eq(tsr_puzzle_load_file(path, &pz, NULL, &err), TSR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    ck_assert_ptr_nonnull(strstr(err.msg, ":1: D: line needs yDim="));
    unlink(path);

    ck_assert_int_eq(tsr_puzzle_load_file(path, &pz, NULL, &err), TSR_EIO);
    ck_assert_ptr_null(pz);
    char want[128];
    snprintf(want, sizeof want, "%s: No such file or directory", path);
    ck_assert_str_eq(err.msg, want);
    free(path);

    ck_assert_int_eq(tsr_puzzle_load_file("/tmp", &pz, NULL, &err), TSR_EIO);
    ck_assert_str_eq(err.msg, "/tmp: Is a directory");
}
END_TEST

START_TEST(load_file_too_big)
{
    char *path = temp_file("", 0);
    ck_assert_int_eq(truncate(path, (16 << 20) + 1), 0);
    tsr_puzzle *pz;
    tsr_err err = {""};
    ck_assert_int_eq(tsr_puzzle_load_file(path, &pz, NULL, &err), TSR_ETOOBIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "larger than 16 MiB"));
    ck_assert_int_eq(truncate(path, 16 << 20), 0); /* exactly the cap is read */
    ck_assert_int_eq(tsr_puzzle_load_file(path, &pz, NULL, &err), TSR_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "NUL byte"));
    unlink(path);
    free(path);
}
END_TEST

/* The copies in puzzles/ are the same definitions. */
START_TEST(library_files)
{
#ifdef TSR_SRCDIR
    const char *names[] = {"tetris-cube.txt", "box-in-a-diamond.txt"};
    const char *texts[] = {TETRIS_CUBE, BOX_IN_A_DIAMOND};
    for (int i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/puzzles/polycube/%s", TSR_SRCDIR, names[i]);
        tsr_puzzle *a, *b = read_ok(texts[i], NULL);
        tsr_err err = {""};
        ck_assert_msg(tsr_puzzle_load_file(path, &a, NULL, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(a->npieces, b->npieces);
        ck_assert_int_eq(tsr_puzzle_free_volume(a), tsr_puzzle_free_volume(b));
        tsr_puzzle_free(a);
        tsr_puzzle_free(b);
    }
#endif
}
END_TEST

static Suite *polycube_suite(void)
{
    Suite *s = suite_create("polycube");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, tetris_cube);
    tcase_add_test(tc, box_in_a_diamond);
    tcase_add_test(tc, layers_and_stationary);
    tcase_add_test(tc, names_blank_lines_one_side);
    tcase_add_test(tc, identical_shapes_stay_separate);
    tcase_add_test(tc, written_back);
    tcase_add_loop_test(tc, malformed, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(tc, nul_byte);
    tcase_add_test(tc, no_source_name);
    tcase_add_test(tc, truncations_and_mutations);
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_add_test(tc, detects_format);
    tcase_add_test(tc, load_file);
    tcase_add_test(tc, load_file_too_big);
    tcase_add_test(tc, library_files);
    suite_add_tcase(s, tc);
    return s;
}

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    return polycube_suite();
}
