/* The handle registry: every public object's address, kind and owner, so
 * that a handle is checked before it is dereferenced (a destroyed or
 * foreign handle never reads freed memory).
 *
 * An open-addressing table (linear probing, backward-shift deletion, at
 * most half full) written under a mutex and read without one: writers
 * bracket each change with a sequence counter (odd while they write), and a
 * reader that saw the counter move retries, then takes the mutex. Tables
 * only grow; a grown-out table is kept (readers may still probe it), so all
 * the tables together take less than twice the last one.
 *
 * Ownership: destroying an owner (a context; a plan for its mvectors)
 * orphans what it owns, recursively: an orphan fails every check but its
 * own destroy, and keeps its memory (and its address) until then.
 *
 * Quarantine: a destroyed object's memory is freed only after QUARANTINE
 * later destroys, so the allocator cannot hand its address to a new object
 * while the stale handle is recent (a registry of addresses cannot tell a
 * new object at an old address from the old one). */
#include "hispi.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define ORPHAN ((uintptr_t)1 << 8)
#define QUARANTINE 64
#define FIRST_CAP 256

typedef struct {
    _Atomic uintptr_t key;   /* the object's address; 0: empty */
    _Atomic uintptr_t state; /* its hispi_handle_kind, | ORPHAN */
    const void *owner;       /* read and written under the mutex only */
} slot;

typedef struct table {
    size_t cap; /* a power of two */
    unsigned shift;
    struct table *older; /* grown-out tables, kept for readers */
    slot s[];
} table;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(table *) cur;
static _Atomic unsigned long seq; /* odd while a writer changes the table */
static size_t used;               /* entries (live and orphaned) */
static void *quar[QUARANTINE];    /* destroyed objects, oldest at qhead */
static size_t qhead, qcount;

static size_t home(const table *t, uintptr_t p)
{
    return (size_t)(((uint64_t)p >> 4) * 0x9E3779B97F4A7C15ull >> t->shift);
}

/* The state of p in t (0: absent). Bounded even on a torn read. */
static uintptr_t find(const table *t, uintptr_t p)
{
    size_t m = t->cap - 1;
    for (size_t i = home(t, p), n = 0; n < t->cap; i = (i + 1) & m, n++) {
        uintptr_t k = atomic_load_explicit(&t->s[i].key, memory_order_acquire);
        if (k == p) return atomic_load_explicit(&t->s[i].state, memory_order_acquire);
        if (!k) return 0;
    }
    return 0;
}

static uintptr_t state_of(const void *obj)
{
    if (!obj) return 0;
    for (int tries = 0; tries < 8; tries++) {
        unsigned long s1 = atomic_load_explicit(&seq, memory_order_acquire);
        if (s1 & 1) continue;
        const table *t = atomic_load_explicit(&cur, memory_order_acquire);
        uintptr_t st = t ? find(t, (uintptr_t)obj) : 0;
        if (atomic_load_explicit(&seq, memory_order_acquire) == s1) return st;
    }
    pthread_mutex_lock(&mu); /* a writer kept changing the table */
    const table *t = atomic_load_explicit(&cur, memory_order_relaxed);
    uintptr_t st = t ? find(t, (uintptr_t)obj) : 0;
    pthread_mutex_unlock(&mu);
    return st;
}

bool hispi_handle_live(const void *obj, hispi_handle_kind kind)
{
    return state_of(obj) == (uintptr_t)kind;
}

bool hispi_handle_known(const void *obj, hispi_handle_kind kind)
{
    return (state_of(obj) & ~ORPHAN) == (uintptr_t)kind;
}

/* ---- writers (under mu, between write_begin and write_end) --------------- */

/* The entries are stored with release stores (no standalone fences: the
 * thread sanitizer does not model them), so none moves before seq's odd
 * value. */
static void write_begin(void)
{
    unsigned long s = atomic_load_explicit(&seq, memory_order_relaxed);
    atomic_store_explicit(&seq, s + 1, memory_order_seq_cst);
}

static void write_end(void)
{
    unsigned long s = atomic_load_explicit(&seq, memory_order_relaxed);
    atomic_store_explicit(&seq, s + 1, memory_order_release);
}

static void put(table *t, uintptr_t p, uintptr_t state, const void *owner)
{
    size_t i = home(t, p), m = t->cap - 1;
    while (atomic_load_explicit(&t->s[i].key, memory_order_relaxed))
        i = (i + 1) & m;
    atomic_store_explicit(&t->s[i].state, state, memory_order_release);
    t->s[i].owner = owner;
    atomic_store_explicit(&t->s[i].key, p, memory_order_release);
}

/* Room for one more entry at most half full; false when out of memory. */
static bool reserve(void)
{
    table *t = atomic_load_explicit(&cur, memory_order_relaxed);
    if (t && 2 * (used + 1) <= t->cap) return true;
    size_t cap = t ? 2 * t->cap : FIRST_CAP;
    table *n = calloc(1, sizeof *n + cap * sizeof(slot));
    if (!n) return false;
    n->cap = cap;
    n->shift = 64;
    for (size_t c = cap; c > 1; c >>= 1)
        n->shift--;
    n->older = t;
    for (size_t i = 0; t && i < t->cap; i++) {
        uintptr_t k = atomic_load_explicit(&t->s[i].key, memory_order_relaxed);
        if (k) put(n, k, atomic_load_explicit(&t->s[i].state, memory_order_relaxed), t->s[i].owner);
    }
    atomic_store_explicit(&cur, n, memory_order_release);
    return true;
}

static void orphan_owned(table *t, const void *owner)
{
    for (size_t i = 0; i < t->cap; i++) {
        uintptr_t k = atomic_load_explicit(&t->s[i].key, memory_order_relaxed);
        if (!k || t->s[i].owner != owner) continue;
        uintptr_t st = atomic_load_explicit(&t->s[i].state, memory_order_relaxed);
        atomic_store_explicit(&t->s[i].state, st | ORPHAN, memory_order_release);
        t->s[i].owner = NULL;
        orphan_owned(t, (const void *)k); /* a context's plan's mvectors */
    }
}

/* Remove p; later entries of its run move back into the hole. */
static void take_out(table *t, uintptr_t p)
{
    size_t m = t->cap - 1, i = home(t, p);
    while (atomic_load_explicit(&t->s[i].key, memory_order_relaxed) != p) {
        if (!atomic_load_explicit(&t->s[i].key, memory_order_relaxed)) return;
        i = (i + 1) & m;
    }
    for (size_t j = (i + 1) & m;; j = (j + 1) & m) {
        uintptr_t k = atomic_load_explicit(&t->s[j].key, memory_order_relaxed);
        if (!k) break;
        size_t h = home(t, k);
        /* k stays where its home lies cyclically in (i, j] */
        if (i <= j ? (h > i && h <= j) : (h > i || h <= j)) continue;
        atomic_store_explicit(&t->s[i].state,
                              atomic_load_explicit(&t->s[j].state, memory_order_relaxed),
                              memory_order_relaxed);
        t->s[i].owner = t->s[j].owner;
        atomic_store_explicit(&t->s[i].key, k, memory_order_release);
        i = j;
    }
    atomic_store_explicit(&t->s[i].key, 0, memory_order_release);
    t->s[i].owner = NULL;
    used--;
}

hisp_status hispi_handle_add(const void *obj, hispi_handle_kind kind, const void *owner)
{
    pthread_mutex_lock(&mu);
    write_begin();
    bool ok = reserve();
    if (ok) {
        put(atomic_load_explicit(&cur, memory_order_relaxed), (uintptr_t)obj, (uintptr_t)kind,
            owner);
        used++;
    }
    write_end();
    pthread_mutex_unlock(&mu);
    return ok ? HISP_SUCCESS : HISP_ERR_OUT_OF_HOST_MEMORY;
}

void hispi_handle_free(void *obj)
{
    if (!obj) return;
    void *gone = NULL;
    pthread_mutex_lock(&mu);
    table *t = atomic_load_explicit(&cur, memory_order_relaxed);
    if (t) {
        write_begin();
        take_out(t, (uintptr_t)obj);
        orphan_owned(t, obj);
        write_end();
    }
    if (qcount == QUARANTINE) {
        gone = quar[qhead];
        quar[qhead] = obj;
        qhead = (qhead + 1) % QUARANTINE;
    } else {
        quar[(qhead + qcount++) % QUARANTINE] = obj;
    }
    pthread_mutex_unlock(&mu);
    free(gone);
}
