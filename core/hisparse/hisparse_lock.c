/* The family lock (core/hisparse/hispi_hisparse.h): a pthread rwlock in the pool.
 * Each thread keeps the locks it holds in a small table of its own, so a
 * call made under a lock of its own family (a duplicate inside an addition,
 * a wrap's failure path freeing a tree) counts a level instead of taking
 * the lock again (pthread rwlocks are not recursive). */
#include "hispi_hisparse.h"

#include <errno.h>
#include <sched.h>

enum { HELD_MAX = 8 }; /* a call holds two families at most (an addition) */
static _Thread_local struct {
    hispi_pool *p;
    int depth;
    bool write;
} held[HELD_MAX];

static int held_find(const hispi_pool *p)
{
    for (int i = 0; i < HELD_MAX; i++)
        if (held[i].p == p) return i;
    return -1;
}

void hispi_family_lock(hispi_pool *p, bool write)
{
    if (!p) return;
    int i = held_find(p);
    if (i >= 0) { /* held by this thread: one level more (a reader never asks to write) */
        held[i].depth++;
        return;
    }
    if (write)
        pthread_rwlock_wrlock(&p->lock);
    else
        while (pthread_rwlock_rdlock(&p->lock) == EAGAIN) /* too many readers: wait a turn */
            sched_yield();
    i = held_find(NULL);
    if (i >= 0) held[i].p = p, held[i].depth = 1, held[i].write = write;
}

void hispi_family_unlock(hispi_pool *p)
{
    if (!p) return;
    int i = held_find(p);
    if (i >= 0 && --held[i].depth > 0) return;
    if (i >= 0) held[i].p = NULL;
    pthread_rwlock_unlock(&p->lock);
}

void hispi_family_lock_host(const struct hispi_hisparse *h)
{
    hispi_pool *p = h->pool;
    if (!p) return;
    hispi_family_lock(p, false);
    int i = held_find(p);
    if ((i >= 0 && (held[i].write || held[i].depth > 1)) || !h->root || !p->nreg ||
        !hispi_pool_region_of(p, HISPI_REF_OFF(h->root)))
        return; /* nested (the outer call settled or holds it exclusively), or nothing to settle */
    /* the host copy must be settled (hispi_hisparse_host writes the pool):
     * exclusive for this call */
    hispi_family_unlock(p);
    hispi_family_lock(p, true);
}

void hispi_family_lock2(hispi_pool *a, hispi_pool *b)
{
    if (a && b && b < a) {
        hispi_pool *t = a;
        a = b;
        b = t;
    }
    if (a) hispi_family_lock(a, true);
    if (b && b != a) hispi_family_lock(b, true);
}

void hispi_family_unlock2(hispi_pool *a, hispi_pool *b)
{
    if (b && b != a) hispi_family_unlock(b);
    if (a) hispi_family_unlock(a);
}
