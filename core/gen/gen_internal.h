/* The generators' shared internals (core/gen/): the counter-based random
 * streams (gen.c says how they keep the output deterministic), the state of
 * a row-wise generator, and the calls between the generator files. */
#ifndef HISP_GEN_INTERNAL_H
#define HISP_GEN_INTERNAL_H

#include "hispi.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- random numbers ----------------------------------------------------- */

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef hispi_rng rng;

/* Stream purposes, so that a row's columns and values never share draws. */
enum { S_COLS = 1, S_VALS, S_LINES, S_BLOCK, S_EDGE, S_ENTRY };

static inline rng rng_at(uint64_t key, uint64_t index, uint64_t purpose)
{
    rng r = {mix64(key ^ mix64(index * 0x9e3779b97f4a7c15ull + purpose))};
    return r;
}

static inline uint64_t next(rng *r)
{
    return mix64(r->s += 0x9e3779b97f4a7c15ull);
}

/* High 64 bits of a 64x64 product (the same on every platform). */
static inline uint64_t mulhi64(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t p0 = al * bl, p1 = al * bh, p2 = ah * bl, p3 = ah * bh;
    uint64_t mid = (p0 >> 32) + (uint32_t)p1 + (uint32_t)p2;
    return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
#endif
}

/* Uniform in [0, m), 0 < m < 2^32 (multiply-shift; bias below 2^-32). */
static inline int64_t below(rng *r, int64_t m)
{
    return (int64_t)mulhi64(next(r), (uint64_t)m);
}

/* Probability p as a threshold on 53-bit draws. */
static inline uint64_t prob_threshold(double p)
{
    if (!(p > 0)) return 0;
    if (p >= 1) return (uint64_t)1 << 53;
    return (uint64_t)(p * 9007199254740992.0);
}

static inline bool chance(rng *r, uint64_t thr)
{
    return (next(r) >> 11) < thr;
}

/* Portable popcount (no libgcc call without -mpopcnt). */
static inline int64_t popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (int64_t)((x * 0x0101010101010101ull) >> 56);
}

/* Uniform value in [-1, 1) for an entry of type t. */
static inline double uval(size_t scalar, uint64_t x)
{
    if (scalar == 4) return (double)((int64_t)(x >> 40) - ((int64_t)1 << 23)) * 0x1p-23;
    return (double)((int64_t)(x >> 11) - ((int64_t)1 << 52)) * 0x1p-52;
}

static inline void put(hisp_type t, void *val, int64_t k, double v)
{
    if (t == HISP_F64)
        ((double *)val)[k] = v;
    else if (t == HISP_F32)
        ((float *)val)[k] = (float)v;
    else
        hispi_store_real(t, val, k, v);
}

/* ---- generator state ---------------------------------------------------- */

typedef struct gen gen;
/* Writes row i's sorted distinct columns into buf (at most g->bound of
 * them, possibly with repeats before the final unique step) and returns how
 * many. */
typedef int64_t (*row_fn)(const gen *g, int64_t i, int32_t *buf, int32_t *tmp);
/* The value of entry (i, j) of a kind whose values follow from the position. */
typedef double (*value_fn)(const gen *g, int64_t i, int64_t j);

struct gen {
    hisp_type type;
    size_t scalar;
    uint64_t key;
    int64_t n;     /* rows = columns */
    int64_t side;  /* poisson grid side */
    int64_t bw;    /* banded */
    double npr;    /* banded, random, circuit */
    uint64_t frac; /* banded: threshold for the extra entry */
    int64_t block; /* blockdiag */
    /* circuit */
    int64_t nlines, line_len, near;
    int32_t *lines;    /* sorted indices of the dense rows and columns */
    uint64_t line_thr; /* chance that a row meets a dense column */
    uint64_t near_thr; /* chance that a sparse entry is near the diagonal */
    double diag;       /* Laplacian diagonal; 0 = random values (or value's) */
    double eps;        /* aniso3d */
    double contrast;   /* jump3d (its cubes' side: block) */
    int64_t bound;     /* scratch entries one row may need */
    row_fn row;
    value_fn value; /* or NULL */
};

/* Rows of the row-wise kinds (gen_rows.c): row i's sorted distinct columns
 * into c, returning how many (the row_fn contract). */
HISPI_LOCAL int64_t hispi_gen_row_poisson2d(const gen *g, int64_t i, int32_t *c, int32_t *tmp);
HISPI_LOCAL int64_t hispi_gen_row_poisson3d(const gen *g, int64_t i, int32_t *c, int32_t *tmp);
HISPI_LOCAL int64_t hispi_gen_row_banded(const gen *g, int64_t i, int32_t *c, int32_t *tmp);
HISPI_LOCAL int64_t hispi_gen_row_random(const gen *g, int64_t i, int32_t *c, int32_t *tmp);
HISPI_LOCAL int64_t hispi_gen_row_dense(const gen *g, int64_t i, int32_t *c, int32_t *tmp);
HISPI_LOCAL int64_t hispi_gen_row_circuit(const gen *g, int64_t i, int32_t *c, int32_t *tmp);
HISPI_LOCAL int64_t hispi_gen_row_blockdiag(const gen *g, int64_t i, int32_t *c, int32_t *tmp);

/* Values of the diffusion kinds (gen_diffusion.c). */
HISPI_LOCAL double hispi_gen_value_aniso3d(const gen *g, int64_t i, int64_t j);
HISPI_LOCAL double hispi_gen_value_jump3d(const gen *g, int64_t i, int64_t j);

/* Both passes of a row-wise kind over its rows, in threads (gen_rows.c). */
HISPI_LOCAL hisp_status hispi_gen_rows(hisp_context ctx, const gen *g, double est_nnz,
                                       hispi_sparse *out);
/* R-MAT: 2^scale rows from `edges` sampled edges (gen_rmat.c). */
HISPI_LOCAL hisp_status hispi_gen_rmat(hisp_context ctx, const gen *g, int scale, int64_t edges,
                                       hispi_sparse *out);

/* Sorted samples (gen_sample.c): sort a[0..n) and drop repeats, returning
 * the count (tmp: radix scratch of n entries, or NULL to sort in place);
 * k distinct sorted values of [0, m) drawn from r into out. */
HISPI_LOCAL int64_t hispi_gen_sort_unique(int32_t *a, int64_t n, int32_t *tmp);
HISPI_LOCAL void hispi_gen_sample_sorted(rng *r, int64_t m, int64_t k, int32_t *out, int32_t *tmp);

#endif
