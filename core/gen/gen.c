/* Matrix generators.
 *
 * Kinds (square matrices; "random" values are uniform in [-1, 1)):
 *   poisson2d/3d  5-/7-point Laplacian on an n^2 / n^3 grid, natural
 *                 ordering, 4|6 on the diagonal and -1 off it.
 *   banded        row i: the diagonal plus nnz_per_row-1 distinct random
 *                 columns of the window |i-j| <= bandwidth (a fractional
 *                 nnz_per_row rounds up or down at random, clipped to the
 *                 window).
 *   random        Erdos-Renyi-like: row length Binomial(4*nnz_per_row, 1/4)
 *                 (mean nnz_per_row), distinct uniform columns.
 *   rmat          Graph500 R-MAT, a=.57 b=.19 c=.19 d=.05 (15-bit
 *                 resolution per level), edge_factor*2^scale edges;
 *                 repeated edges merged (nnz <= edges), self loops kept,
 *                 vertex labels not permuted (vertex 0 is the hub).
 *   dense         every entry.
 *   circuit       power/ground nets: floor(log2 n)/2 dense rows and the
 *                 columns of the same indices (more when one line would
 *                 exceed half the width; the indices are random), holding
 *                 dense_share of the entries; every other entry follows
 *                 row i: diagonal + Binomial(4*(nnz_per_row-1), 1/4)
 *                 entries, 3/4 of them within +-64 of the diagonal, the rest
 *                 anywhere. A row meets each dense column with probability
 *                 line_len/n, a dense row adds line_len random columns,
 *                 line_len = n*nnz_per_row*share/(1-share)/(2*lines).
 *   blockdiag     dense block x block clusters on the diagonal (the last
 *                 one cut at n); a quarter of the block rows get one more
 *                 dense block 1 or 2 blocks left or right.
 *   aniso3d       poisson3d's pattern, -1 to the x and y neighbours,
 *                 -epsilon to the z ones (stride n^2), 4 + 2 epsilon on the
 *                 diagonal (Dirichlet: a missing neighbour still counts):
 *                 epsilon (Dzz) + (Dyy) + (Dxx) of the unit Laplacians.
 *   jump3d        poisson3d's pattern, the finite-volume diffusion of a
 *                 coefficient k that is 1 or contrast (one chance in two,
 *                 drawn per cube of block^3 cells): -2 k_i k_j / (k_i + k_j)
 *                 between neighbours (the harmonic mean), the diagonal the
 *                 sum of the row's six couplings, a missing neighbour
 *                 coupling k_i (Dirichlet); symmetric positive definite.
 *
 * Determinism: every random draw comes from a counter-based stream keyed by
 * (seed, kind, row or edge index, purpose), built on the splitmix64 mixer, and
 * decisions use integer arithmetic or the exact IEEE operations (+ - * /) only,
 * no libm. So the same params and type give bit-identical output on any
 * machine, compiler and number of threads: rows (rmat: edges) are generated
 * independently, in parallel with pthreads for large sizes.
 *
 * Row-wise kinds run two passes over the rows: pass 1 generates each row's
 * sorted, distinct columns into a scratch buffer and records the length,
 * pass 2 regenerates them into the final arrays (after the prefix sum) and
 * draws the values from a separate per-row stream, so f32 and f64 share the
 * pattern. rmat samples its edge list in parallel, buckets it by row with a
 * counting sort, sorts and merges each row, and gives each distinct entry a
 * value hashed from (seed, row, column) (not the sum over repeated edges).
 *
 * Values: 53 random bits for 8-byte scalars, the top 24 of them for 4-byte
 * scalars (exact in float, so f32 values are the f64 ones truncated).
 *
 * The context's threads option sets the number of threads; the output does
 * not depend on it (the tests check; core/base/threads.c runs them).
 *
 * Files: gen.c the parameters and the dispatch; gen_rows.c the row-wise
 * kinds; gen_diffusion.c the values of aniso3d and jump3d; gen_rmat.c rmat; gen_sample.c sorted samples and the streams that
 * gen_perturb.c shares; gen_internal.h the streams and the state between
 * them.
 */
#include "gen_internal.h"

#include <math.h> /* isfinite only: no libm calls (determinism) */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- parameters --------------------------------------------------------- */

static const char *const kind_names[HISP_GEN_COUNT] = {
    "poisson2d", "poisson3d", "banded",    "random",  "rmat",
    "dense",     "circuit",   "blockdiag", "aniso3d", "jump3d"};

const char *hisp_gen_name(hisp_gen_kind kind)
{
    if ((int)kind < 0 || kind >= HISP_GEN_COUNT) return "unknown";
    return kind_names[kind];
}

hisp_status hisp_gen_from_name(const char *name, hisp_gen_kind *kind)
{
    if (!name || !kind) return HISP_ERR_INVALID_ARGUMENT;
    for (int k = 0; k < HISP_GEN_COUNT; k++)
        if (strcasecmp(name, kind_names[k]) == 0) {
            *kind = (hisp_gen_kind)k;
            return HISP_SUCCESS;
        }
    return HISP_ERR_INVALID_ARGUMENT;
}

void hisp_gen_defaults(hisp_gen_kind kind, hisp_gen_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->seed = 1;
    p->n = 100000;
    p->bandwidth = 8;
    p->nnz_per_row = 8;
    p->scale = 16;
    p->edge_factor = 8;
    p->block = 8;
    p->dense_share = 0.3;
    p->epsilon = 1e-3;
    p->contrast = 1e4;
    switch (kind) {
    case HISP_GEN_POISSON2D:
        p->n = 1000;
        break;
    case HISP_GEN_POISSON3D:
    case HISP_GEN_ANISO3D:
    case HISP_GEN_JUMP3D:
        p->n = 64;
        break;
    case HISP_GEN_BANDED:
        p->nnz_per_row = 16;
        break;
    case HISP_GEN_RMAT:
        p->n = (int64_t)1 << 16;
        break;
    case HISP_GEN_DENSE:
        p->n = 1000;
        break;
    case HISP_GEN_CIRCUIT:
        p->nnz_per_row = 5;
        break;
    default:
        break;
    }
}

/* Refuse sizes this machine cannot hold before spending time on them. */
static hisp_status check_memory(hisp_context ctx, const char *kind, double nnz, double bytes)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double phys = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    if (nnz > 9.2e18 || (phys > 0 && bytes > phys))
        return hispi_fail(ctx, HISP_ERR_OUT_OF_HOST_MEMORY,
                          "%s generator: about %.3g entries (%.3g GiB) exceed this machine's "
                          "memory (%.3g GiB)",
                          kind, nnz, bytes / 1073741824.0, phys / 1073741824.0);
    return HISP_SUCCESS;
}

#define BAD(...) hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, __VA_ARGS__)

hisp_status hispi_generate(hisp_context ctx, const hisp_gen_params *p, hisp_type t,
                           hispi_sparse *out)
{
    if (!p || !out) return BAD("generator: NULL params or output");
    memset(out, 0, sizeof *out);
    if ((int)p->kind < 0 || p->kind >= HISP_GEN_COUNT)
        return BAD("generator: unknown kind %d", (int)p->kind);
    const char *name = kind_names[p->kind];
    if (!hispi_type_valid(t)) return BAD("%s generator: invalid entry type %d", name, (int)t);
    if (t != HISP_F32 && t != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                          "%s generator: entry type %s not supported yet (f32, f64)", name,
                          hisp_type_name(t));
    gen g = {.type = t, .scalar = hispi_type_scalar_size(t), .n = p->n};
    g.key = mix64(p->seed ^ mix64(0x68697370u + (uint64_t)p->kind));
    int64_t n = p->n;
    double npr = p->nnz_per_row;
    if (p->kind != HISP_GEN_RMAT && (n < 0 || n > INT32_MAX))
        return BAD("%s generator: n = %lld is outside 0..2^31-1", name, (long long)n);
    double est = 0; /* expected entries */
    switch (p->kind) {
    case HISP_GEN_POISSON2D:
        if (n > 46340)
            return BAD("%s generator: n = %lld gives more than 2^31-1 rows", name, (long long)n);
        g.side = n;
        g.n = n * n;
        g.row = hispi_gen_row_poisson2d;
        g.diag = 4;
        g.bound = 5;
        est = 5.0 * (double)g.n;
        break;
    case HISP_GEN_POISSON3D:
        if (n > 1290)
            return BAD("%s generator: n = %lld gives more than 2^31-1 rows", name, (long long)n);
        g.side = n;
        g.n = n * n * n;
        g.row = hispi_gen_row_poisson3d;
        g.diag = 6;
        g.bound = 7;
        est = 7.0 * (double)g.n;
        break;
    case HISP_GEN_ANISO3D:
    case HISP_GEN_JUMP3D:
        if (n > 1290)
            return BAD("%s generator: n = %lld gives more than 2^31-1 rows", name, (long long)n);
        if (p->kind == HISP_GEN_ANISO3D && !(p->epsilon > 0 && isfinite(p->epsilon)))
            return BAD("%s generator: epsilon %g must be finite and > 0", name, p->epsilon);
        if (p->kind == HISP_GEN_JUMP3D && !(p->contrast >= 1 && isfinite(p->contrast)))
            return BAD("%s generator: contrast %g must be finite and >= 1", name, p->contrast);
        if (p->kind == HISP_GEN_JUMP3D && p->block < 1)
            return BAD("%s generator: block %d must be >= 1", name, p->block);
        g.side = n;
        g.n = n * n * n;
        g.row = hispi_gen_row_poisson3d;
        g.value = p->kind == HISP_GEN_ANISO3D ? hispi_gen_value_aniso3d : hispi_gen_value_jump3d;
        g.eps = p->epsilon;
        g.contrast = p->contrast;
        g.block = p->block;
        g.bound = 7;
        est = 7.0 * (double)g.n;
        break;
    case HISP_GEN_BANDED:
        if (p->bandwidth < 0)
            return BAD("%s generator: bandwidth %lld < 0", name, (long long)p->bandwidth);
        if (!(npr >= 1) || !isfinite(npr))
            return BAD("%s generator: nnz_per_row %g must be finite and >= 1", name, npr);
        g.bw = n > 0 && p->bandwidth > n - 1 ? n - 1 : p->bandwidth;
        g.npr = npr > 2.0 * (double)g.bw + 1 ? 2.0 * (double)g.bw + 1 : npr;
        g.frac = prob_threshold(g.npr - (double)(int64_t)g.npr);
        g.row = hispi_gen_row_banded;
        g.bound = (int64_t)g.npr + 2;
        est = g.npr * (double)n;
        break;
    case HISP_GEN_RANDOM:
        if (!(npr >= 0) || !isfinite(npr))
            return BAD("%s generator: nnz_per_row %g must be finite and >= 0", name, npr);
        g.npr = npr > (double)n ? (double)n : npr; /* rows hold at most n */
        g.row = hispi_gen_row_random;
        g.bound = (int64_t)(4 * g.npr) + 2;
        if (g.bound > n) g.bound = n;
        est = g.npr * (double)n;
        break;
    case HISP_GEN_DENSE:
        g.row = hispi_gen_row_dense;
        g.bound = n;
        est = (double)n * (double)n;
        break;
    case HISP_GEN_CIRCUIT: {
        double share = p->dense_share;
        if (!(npr >= 1) || !isfinite(npr))
            return BAD("%s generator: nnz_per_row %g must be finite and >= 1", name, npr);
        if (!(share >= 0 && share <= 0.95))
            return BAD("%s generator: dense_share %g must be in [0, 0.95]", name, share);
        if (npr > (double)n && n > 0) npr = (double)n; /* rows hold at most n */
        g.npr = npr;
        g.row = hispi_gen_row_circuit;
        g.near = n - 1 < 64 ? n - 1 : 64;
        g.near_thr = prob_threshold(0.75);
        /* D entries in dense lines next to S = n*npr sparse ones make the
         * share D/(S+D); split over floor(log2 n)/2 rows and as many columns
         * (more when a line would exceed half the matrix width) */
        double dense = (double)n * npr * share / (1 - share);
        int64_t lines = 0;
        if (share > 0 && n > 0) {
            int lg = 0;
            while (((int64_t)1 << (lg + 1)) <= n)
                lg++;
            lines = lg / 2 > 1 ? lg / 2 : 1;
            int64_t need = (int64_t)(dense / (double)n) + 1;
            if (lines < need) lines = need;
            if (lines > n) lines = n;
        }
        g.nlines = lines;
        if (lines > 0) {
            double len = dense / (2.0 * (double)lines);
            g.line_len = len > (double)n ? n : (int64_t)len;
            g.line_thr = prob_threshold((double)g.line_len / (double)n);
        }
        g.bound = 2 + (int64_t)(4 * npr) + lines + g.line_len;
        est = (double)n * npr + 2.0 * (double)lines * (double)g.line_len;
        break;
    }
    case HISP_GEN_BLOCKDIAG:
        if (p->block < 1) return BAD("%s generator: block %d must be >= 1", name, p->block);
        g.block = n > 0 && p->block > n ? n : p->block;
        g.row = hispi_gen_row_blockdiag;
        g.bound = 2 * g.block;
        est = 1.25 * (double)n * (double)g.block;
        break;
    case HISP_GEN_RMAT: {
        if (p->scale < 0 || p->scale > 30)
            return BAD("%s generator: scale %d must be in 0..30", name, p->scale);
        if (p->edge_factor < 0)
            return BAD("%s generator: edge_factor %d must be >= 0", name, p->edge_factor);
        int64_t edges = (int64_t)p->edge_factor << p->scale;
        double e = (double)edges;
        HISPI_TRY(check_memory(ctx, name, e, e * 12 + 16.0 * (double)((int64_t)1 << p->scale)));
        return hispi_gen_rmat(ctx, &g, p->scale, edges, out);
    }
    default:
        return BAD("generator: unknown kind %d", (int)p->kind);
    }
    HISPI_TRY(
        check_memory(ctx, name, est, est * (4.0 + (double)hisp_type_size(t)) + 8.0 * (double)g.n));
    if (p->kind == HISP_GEN_CIRCUIT && g.nlines > 0) {
        HISPI_TRY(hispi_alloc(ctx, (size_t)g.nlines, sizeof *g.lines, (void **)&g.lines));
        rng r = rng_at(g.key, 0, S_LINES);
        hispi_gen_sample_sorted(&r, n, g.nlines, g.lines, NULL);
    }
    hisp_status s = hispi_gen_rows(ctx, &g, est, out);
    free(g.lines);
    return s;
}
