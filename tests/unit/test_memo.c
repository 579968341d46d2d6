/*
 * test_memo.c - FILA's memo (src/engine/memo.h) against a model: a small
 * memo, whose ring wraps thousands of times, must give back for every key
 * it finds exactly the record written for that key.
 *
 * In a search the record of a node is a function of its key; here too:
 * record(key) (its solutions, images and counts) is computed from the key,
 * with a spread of lengths that puts records' ends at every place of the
 * ring (at its very end too), counts that need the wide form, and records
 * longer than the memo keeps.  The engine's side (the same counts, nodes
 * and solutions in the same order at every level of the memo) is in
 * test_engine (memo_changes_nothing) and the differential tests.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memo.h"

#define LEVEL 3
#define KEYS 700

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void key_of(int id, memo_key *k)
{
    memset(k, 0, sizeof *k);
    k->w[0] = (uint32_t)mix((uint64_t)id);
    k->w[1] = (uint32_t)id;
    k->w[2] = (uint32_t)(id % 7);
}

/* The record of key id: its solutions (0 for most, as in a search; a few
 * longer than the memo keeps), image j of solution i, counts of level q. */
static uint32_t nsol_of(int id)
{
    uint64_t h = mix((uint64_t)id * 3 + 1);
    if (h % 5 != 0)
        return 0;
    if (h % 97 == 0)
        return 200; /* 600 words: more than an eighth of the ring */
    return (uint32_t)(h >> 20) % 23;
}

static int image_of(int id, uint32_t i, int j) { return (int)(mix((uint64_t)id << 20 | i << 4 | (uint32_t)j) % 100000); }

static uint64_t count_of(int id, int q, int fits)
{
    uint64_t h = mix((uint64_t)id << 8 | (uint64_t)(q << 1 | fits));
    return h % 11 == 0 ? 70000 + h % 1000 : h % 3000; /* some need 32 bits */
}

/* counted: the records keep their leaves' number instead of their
 * images (a search that only counts) */
static void written_ones_found(bool counted)
{
    memo m;
    memo_init(&m, LEVEL, 16 << 10); /* a ring of 2048 words */
    memo_clear(&m, 3);
    ck_assert_int_eq(m.on, 0); /* nothing allocated yet */
    ck_assert_int_eq(memo_start(&m, counted), 0);
    ck_assert_int_eq(m.on, LEVEL);
    uint64_t rng = 1, hits = 0, kept = 0, laps;
    for (int step = 0; step < 200000; step++) {
        rng = mix(rng);
        int id = (int)(rng % KEYS);
        memo_key k;
        key_of(id, &k);
        uint64_t at = memo_find(&m, &k);
        if (at != 0) {
            uint64_t att[LEVEL + 1] = {0}, fit[LEVEL + 1] = {0};
            const uint32_t *img;
            uint32_t ns = memo_take(&m, at, att, fit, &img);
            ck_assert_uint_eq(ns, nsol_of(id));
            for (uint32_t i = 0; i < ns && !counted; i++)
                for (int j = 0; j < LEVEL; j++)
                    ck_assert_int_eq((int)img[i * LEVEL + (uint32_t)j], image_of(id, i, j));
            for (int q = 1; q <= LEVEL; q++) {
                ck_assert_uint_eq(att[q], count_of(id, q, 0));
                ck_assert_uint_eq(fit[q], count_of(id, q, 1));
            }
            hits++;
            m.looks = 0; /* judged in its own test */
            continue;
        }
        memo_open(&m, &k);
        ck_assert_uint_ne(m.open, 0);
        uint32_t ns = nsol_of(id);
        for (uint32_t i = 0; i < ns; i++) {
            int im[LEVEL];
            for (int j = 0; j < LEVEL; j++)
                im[j] = image_of(id, i, j);
            memo_add(&m, im);
        }
        uint64_t att[LEVEL + 1], fit[LEVEL + 1];
        for (int q = 1; q <= LEVEL; q++) {
            att[q] = count_of(id, q, 0);
            fit[q] = count_of(id, q, 1);
        }
        bool keep = rng % 13 != 0; /* a stopped or cut subtree is dropped */
        memo_close(&m, keep, att, fit);
        kept += keep && (ns < 200 || counted);
        m.looks = 0;
    }
    laps = m.head >> m.rbits;
    ck_assert_msg(laps > (counted ? 100 : 500), "the ring went round %llu times",
                  (unsigned long long)laps);
    ck_assert_msg(hits > 25000 && kept > 5000, "%llu found, %llu kept", (unsigned long long)hits,
                  (unsigned long long)kept);
    /* a record longer than an eighth of the ring is never kept; counted,
     * no record is that long */
    memo_key k;
    int found200 = 0;
    for (int id = 0; id < KEYS; id++)
        if (nsol_of(id) == 200) {
            key_of(id, &k);
            found200 += memo_find(&m, &k) != 0;
        }
    if (!counted)
        ck_assert_int_eq(found200, 0);
    memo_free(&m);
}

START_TEST(found_records_are_the_written_ones) { written_ones_found(false); }
END_TEST

START_TEST(found_counts_are_the_written_ones) { written_ones_found(true); }
END_TEST

/* A search of the other kind (counting where the last reported, or the
 * other way round) finds nothing the last one wrote. */
START_TEST(the_other_kind_empties_the_memo)
{
    memo m;
    memo_init(&m, LEVEL, 16 << 10);
    memo_clear(&m, 3);
    uint64_t zero[LEVEL + 1] = {0};
    memo_key k;
    key_of(1, &k);
    for (int round = 0; round < 4; round++) {
        bool counted = round % 2;
        ck_assert_int_eq(memo_start(&m, counted), 0);
        ck_assert_uint_eq(memo_find(&m, &k), 0);
        memo_open(&m, &k);
        int im[LEVEL] = {1, 2, 3};
        memo_add(&m, im);
        memo_add(&m, im);
        memo_close(&m, true, zero, zero);
        ck_assert_int_eq(memo_start(&m, counted), 0); /* the same kind keeps it */
        uint64_t at = memo_find(&m, &k);
        ck_assert_uint_ne(at, 0);
        const uint32_t *img;
        uint64_t att[LEVEL + 1] = {0}, fit[LEVEL + 1] = {0};
        ck_assert_uint_eq(memo_take(&m, at, att, fit, &img), 2);
        if (!counted)
            ck_assert_uint_eq(img[LEVEL + 2], 3);
    }
    memo_free(&m);
}
END_TEST

START_TEST(a_memo_that_does_not_pay_stops)
{
    memo m;
    memo_init(&m, LEVEL, 16 << 10);
    memo_clear(&m, 3);
    ck_assert_int_eq(memo_start(&m, false), 0);
    uint64_t zero[LEVEL + 1] = {0};
    int step = 0;
    for (; step < 100000 && m.on; step++) { /* every node new: nothing found, nothing saved */
        memo_key k;
        key_of(step, &k);
        ck_assert_uint_eq(memo_find(&m, &k), 0);
        memo_open(&m, &k);
        memo_close(&m, true, zero, zero);
    }
    ck_assert_int_eq(m.on, 0);
    ck_assert_int_lt(step, 10000);
    /* another search of the same build leaves it off; a new build starts
     * it again */
    ck_assert_int_eq(memo_start(&m, false), 0);
    ck_assert_int_eq(m.on, 0);
    memo_clear(&m, 3);
    ck_assert_int_eq(m.on, LEVEL);
    memo_free(&m);
    /* no level, no memory */
    memo_init(&m, 0, 16 << 10);
    memo_clear(&m, 3);
    ck_assert_int_eq(memo_start(&m, true), 0);
    ck_assert_int_eq(m.on, 0);
    ck_assert_ptr_null(m.ring);
    memo_free(&m);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("memo");
    TCase *tc = tcase_create("memo");
    tcase_set_timeout(tc, 120); /* a sanitizer build checks every access */
    tcase_add_test(tc, found_records_are_the_written_ones);
    tcase_add_test(tc, found_counts_are_the_written_ones);
    tcase_add_test(tc, the_other_kind_empties_the_memo);
    tcase_add_test(tc, a_memo_that_does_not_pay_stops);
    suite_add_tcase(s, tc);
    return s;
}
