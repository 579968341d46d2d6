/*
 * test_base.c - the lock that knows its holder and the waits on the one
 * clock (src/base/lock.c).
 *
 * What the daemon's "(under mu)" checks rest on: base_holds is true for
 * the thread that locked, false for any other thread meanwhile and for
 * everyone after the unlock, and a condition wait gives the lock up and
 * takes it back with its holder.  A timed wait ends at its deadline on the
 * monotonic clock, at once when the deadline has passed, and not before.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>

#include "base/base.h"

static base_mutex mu;
static pthread_cond_t cv;
static int seen = -1;

static void *other_asks(void *arg)
{
    (void)arg;
    seen = base_holds(&mu);
    return NULL;
}

START_TEST(holds_is_the_holders)
{
    base_mutex_init(&mu);
    ck_assert(!base_holds(&mu));
    base_lock(&mu);
    ck_assert(base_holds(&mu));
    pthread_t t;
    pthread_create(&t, NULL, other_asks, NULL);
    pthread_join(t, NULL);
    ck_assert_int_eq(seen, 0); /* another thread does not hold it */
    base_unlock(&mu);
    ck_assert(!base_holds(&mu));
    ck_assert(base_holds(NULL)); /* nothing to hold */
    base_mutex_destroy(&mu);
}
END_TEST

static void *signal_later(void *arg)
{
    (void)arg;
    base_lock(&mu);
    seen = base_holds(&mu); /* the waiter gave the lock up, so this thread holds it */
    pthread_cond_signal(&cv);
    base_unlock(&mu);
    return NULL;
}

START_TEST(waits_keep_the_holder)
{
    base_mutex_init(&mu);
    base_cond_init(&cv);
    base_lock(&mu);
    pthread_t t;
    pthread_create(&t, NULL, signal_later, NULL);
    ck_assert_int_eq(base_cond_wait(&cv, &mu, base_now() + 10), 0);
    ck_assert(base_holds(&mu));
    base_unlock(&mu);
    pthread_join(t, NULL);
    ck_assert_int_eq(seen, 1);
    pthread_cond_destroy(&cv);
    base_mutex_destroy(&mu);
}
END_TEST

START_TEST(timed_waits_end_at_their_deadline)
{
    base_mutex_init(&mu);
    base_cond_init(&cv);
    base_lock(&mu);
    double t0 = base_now();
    ck_assert_int_eq(base_cond_wait(&cv, &mu, t0 + 0.2), ETIMEDOUT);
    double took = base_now() - t0;
    ck_assert_msg(took >= 0.2 && took < 2.0, "a 0.2 s wait took %.3f s", took);
    t0 = base_now();
    ck_assert_int_eq(base_cond_wait(&cv, &mu, t0 - 5), ETIMEDOUT); /* already past */
    ck_assert_msg(base_now() - t0 < 0.1, "a past deadline waited %.3f s", base_now() - t0);
    ck_assert(base_holds(&mu));
    base_unlock(&mu);
    pthread_cond_destroy(&cv);
    base_mutex_destroy(&mu);
}
END_TEST

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("base");
    tcase_add_test(tc, holds_is_the_holders);
    tcase_add_test(tc, waits_keep_the_holder);
    tcase_add_test(tc, timed_waits_end_at_their_deadline);
    suite_add_tcase(s, tc);
    return s;
}
