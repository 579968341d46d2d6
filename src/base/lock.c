/*
 * lock.c - the mutex every thread-shared structure of Tessera's daemon
 * uses, and the one way to wait on a condition with a deadline (base.h).
 *
 * base_mutex is a pthread mutex that also records which thread holds it,
 * so that a function whose contract says "called with mu held" can check
 * it (BASE_HELD, in a debug build).  The owner is an atomic word: another
 * thread may read it at any time (that is when the check is false), and
 * only the holder writes it, with relaxed stores that cost nothing next to
 * the lock itself.  The record is kept in every build, so that the
 * structure is the same whatever a file's flags.
 *
 * Every condition variable waits on CLOCK_MONOTONIC (base_cond_init), so a
 * deadline is a base_now() time like every other duration here, and a
 * change of the wall clock never stretches or cuts a wait.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <time.h>

#include "base/base.h"

void base_mutex_init(base_mutex *m)
{
    pthread_mutex_init(&m->mu, NULL);
    atomic_init(&m->owner, 0);
}

void base_mutex_destroy(base_mutex *m)
{
    pthread_mutex_destroy(&m->mu);
}

void base_lock(base_mutex *m)
{
    pthread_mutex_lock(&m->mu);
    atomic_store_explicit(&m->owner, (unsigned long)pthread_self(), memory_order_relaxed);
}

void base_unlock(base_mutex *m)
{
    atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&m->mu);
}

bool base_holds(base_mutex *m)
{
    if (m == NULL) /* nothing to hold */
        return true;
    return atomic_load_explicit(&m->owner, memory_order_relaxed) ==
           (unsigned long)pthread_self();
}

void base_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

int base_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *mu, double deadline)
{
    if (!(deadline < 4e9)) /* none, or absurdly far: wait without one */
        return pthread_cond_wait(cv, mu);
    double whole = floor(deadline);
    struct timespec until = {(time_t)whole, (long)((deadline - whole) * 1e9)};
    if (until.tv_nsec >= 1000000000L)
        until = (struct timespec){until.tv_sec + 1, 0};
    return pthread_cond_timedwait(cv, mu, &until);
}

int base_cond_wait(pthread_cond_t *cv, base_mutex *m, double deadline)
{
    atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
    int rc = base_cond_timedwait(cv, &m->mu, deadline);
    atomic_store_explicit(&m->owner, (unsigned long)pthread_self(), memory_order_relaxed);
    return rc;
}
