/*
 * test_wire.c - the cluster's message codec (src/mpi/wire.c), without MPI
 * running: what one rank writes another reads back field for field, and a
 * message that is cut short, corrupted or made up is read as bad, never
 * past its end, and never allocates more than its own length allows.
 *
 * Messages come from other ranks, which may die mid-send or run another
 * build; the reader is their only check before tasks reach the pool.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/wire.h"

static const int img_a[] = {3, 1, 4, 1, 5}, img_b[] = {9};

static void tasks_message(buf *b)
{
    tsr_task t[3] = {{5, (int *)img_a, 0.25}, {0, NULL, 0.5}, {1, (int *)img_b, 0.125}};
    clu_put_tasks(b, t, 3);
}

START_TEST(tasks_round_trip)
{
    buf b = {0};
    tasks_message(&b);
    ck_assert(!b.oom);
    reader r = clu_reader(&b);
    tsr_task *t = NULL;
    int n = 0;
    size_t cap = 0;
    ck_assert_int_eq(clu_get_tasks(&r, &t, &n, &cap), 0);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(t[0].n, 5);
    ck_assert_int_eq(memcmp(t[0].images, img_a, sizeof img_a), 0);
    ck_assert(t[0].weight == 0.25 && t[1].weight == 0.5 && t[2].weight == 0.125);
    ck_assert_int_eq(t[1].n, 0);
    ck_assert_int_eq(t[2].images[0], 9);
    ck_assert_uint_eq(r.pos, r.n); /* every byte read, none past the end */
    clu_free_tasks(t, n);
    base_buf_free(&b.bytes);
}
END_TEST

START_TEST(stats_and_classes_round_trip)
{
    uint64_t at[4] = {1, 2, 3, 4}, fi[4] = {5, 6, 7, 8};
    tsr_stats st = {.levels = 4, .attempts = at, .fits = fi, .nodes = 1234567890123ull,
                    .solutions = 42, .classes = 7, .fraction = 0.375};
    buf b = {0};
    clu_put_stats(&b, &st);
    clu_put_class(&b, img_a, 5, 3);
    reader r = clu_reader(&b);
    tsr_stats got;
    ck_assert_int_eq(clu_alloc_stats(&got, 4), 0);
    clu_get_stats(&r, &got);
    ck_assert(!r.bad);
    for (int p = 0; p < 4; p++)
        ck_assert(got.attempts[p] == at[p] && got.fits[p] == fi[p]);
    ck_assert(got.nodes == st.nodes && got.solutions == 42 && got.classes == 7 &&
              got.fraction == 0.375);
    ck_assert_int_eq(clu_get32(&r), 3);
    int k = clu_get_count(&r, 4, false);
    ck_assert_int_eq(k, 5);
    for (int i = 0; i < k; i++)
        ck_assert_int_eq(clu_get32(&r), img_a[i]);
    ck_assert(!r.bad);
    ck_assert_uint_eq(r.pos, r.n);
    /* a reader with fewer levels keeps what fits and reads the rest past */
    reader r2 = clu_reader(&b);
    tsr_stats small;
    ck_assert_int_eq(clu_alloc_stats(&small, 2), 0);
    clu_get_stats(&r2, &small);
    ck_assert(!r2.bad && small.attempts[1] == 2 && small.nodes == st.nodes);
    free(got.attempts);
    free(got.fits);
    free(small.attempts);
    free(small.fits);
    base_buf_free(&b.bytes);
}
END_TEST

/* Every truncation of a valid message is bad or a shorter valid message,
 * and the reader never reads past the cut. */
START_TEST(truncations)
{
    buf b = {0};
    tasks_message(&b);
    for (size_t cut = 0; cut < b.bytes.len; cut++) {
        reader r = {(const unsigned char *)b.bytes.data, cut, 0, false};
        tsr_task *t = NULL;
        int n = 0;
        size_t cap = 0;
        int rc = clu_get_tasks(&r, &t, &n, &cap);
        ck_assert_msg(rc == TSR_EINVAL, "cut at %zu of %zu read as whole", cut, b.bytes.len);
        ck_assert(r.pos <= cut);
        clu_free_tasks(t, n);
    }
    base_buf_free(&b.bytes);
}
END_TEST

/* Made-up messages: random bytes, and valid ones with one field changed
 * to a hostile value (negative or huge counts).  Never a crash (ASan
 * watches the reads), never a count beyond what the bytes hold. */
START_TEST(hostile_messages)
{
    srand(20261126);
    unsigned char raw[512];
    for (int round = 0; round < 20000; round++) {
        size_t len = (size_t)(rand() % (int)sizeof raw);
        for (size_t i = 0; i < len; i++)
            raw[i] = (unsigned char)rand();
        if (round % 3 == 0 && len >= 8) { /* a plausible small count first */
            int64_t k = rand() % 4;
            memcpy(raw, &k, sizeof k);
        }
        reader r = {raw, len, 0, false};
        tsr_task *t = NULL;
        int n = 0;
        size_t cap = 0;
        int rc = clu_get_tasks(&r, &t, &n, &cap);
        ck_assert(rc == 0 || rc == TSR_EINVAL);
        ck_assert(r.pos <= len);
        long images = 0;
        for (int i = 0; i < n; i++)
            images += t[i].n;
        ck_assert_msg((size_t)images * 4 + (size_t)n * 16 <= len, "%ld images in %zu bytes",
                      images, len);
        clu_free_tasks(t, n);
        reader s = {raw, len, 0, false};
        tsr_stats st;
        ck_assert_int_eq(clu_alloc_stats(&st, 3), 0);
        clu_get_stats(&s, &st);
        ck_assert(s.pos <= len);
        free(st.attempts);
        free(st.fits);
    }
    int64_t huge[2] = {INT64_MAX, -1};
    for (int i = 0; i < 2; i++) {
        reader r = {(const unsigned char *)&huge[i], sizeof huge[i], 0, false};
        ck_assert_int_eq(clu_get_count(&r, 1, true), 0);
        ck_assert(r.bad);
    }
}
END_TEST

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    Suite *s = suite_create("wire");
    TCase *tc = tcase_create("wire");
    tcase_add_test(tc, tasks_round_trip);
    tcase_add_test(tc, stats_and_classes_round_trip);
    tcase_add_test(tc, truncations);
    tcase_add_test(tc, hostile_messages);
    suite_add_tcase(s, tc);
    return s;
}
