/* Generators of compound-entry matrices, deterministic from a seed.
 *
 *   fem3x3     an n^3 mesh of nodes, each coupled to its 27-point neighbourhood
 *              with a 3x3 block (a linear-FEM-like elasticity stencil):
 *              off-diagonal blocks -(I + S_ij)/26 with S_ij a random symmetric
 *              block (|s| < 1/4) shared by (i,j) and (j,i), the diagonal block
 *              2I + the row's absolute off-diagonal sums (diagonally dominant).
 *   qsurface   a torus, 2n x n vertices (jittered by the seed), each quad of
 *              the grid split into two triangles (6 neighbours per vertex):
 *              the quaternionic Dirac-like operator of conformal deformation
 *              (Crane et al.) on its vertices, A_ij = -1 + e_ij/2 for an edge
 *              with e_ij = p_j - p_i as an imaginary quaternion, A_ji =
 *              conj(A_ij) = -1 - e_ij/2, A_ii = 6 + rho_i (rho_i in [0, 1) from
 *              the seed): a quaternion-Hermitian matrix.
 *   helmholtz  n x n 5-point Laplacian shifted by -(k^2(x) + i*0.1*k0^2), k0^2
 *              = 2, k^2(x) = k0^2 (1 + 0.1 u(x)) with u(x) in [-1, 1) from the
 *              seed: the complex shifted Laplacian of Helmholtz preconditioning.
 *   elastic3d  3D linear elasticity (E = 1, nu = 0.3) on unit trilinear
 *              hexahedra (Q1) between the grid points (x, y, z), x in 0..n,
 *              y and z in 0..n-1; the plane x = 0 is clamped, so the
 *              unknowns are the n^3 nodes x >= 1, node (x, y, z) row
 *              (z*n + y)*n + x - 1, its 3 displacements one 3x3 block row.
 *              Block (I, J) sums the element stiffness's (I, J) sub-block
 *              over the elements holding both nodes: symmetric positive
 *              definite, no random part (the seed is ignored).
 * Values come from splitmix64 hashes of (seed, row, column, component) or,
 * for elastic3d, from sums in a fixed order, so the output does not depend
 * on the number of threads; rows are filled in parallel (pthreads) for
 * large sizes. */
#include "hispi_compound.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *const cgen_names[HISP_CGEN_COUNT] = {"fem3x3", "qsurface", "helmholtz",
                                                        "elastic3d"};

const char *hisp_cgen_name(hisp_cgen_kind k)
{
    return (int)k >= 0 && k < HISP_CGEN_COUNT ? cgen_names[k] : "invalid";
}

hisp_status hisp_cgen_from_name(const char *name, hisp_cgen_kind *k)
{
    if (!name || !k) return HISP_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < HISP_CGEN_COUNT; i++)
        if (strcasecmp(name, cgen_names[i]) == 0) {
            *k = (hisp_cgen_kind)i;
            return HISP_SUCCESS;
        }
    return HISP_ERR_INVALID_ARGUMENT;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform in [-1, 1) from (seed, a, b, c). */
static double hrand(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = mix(mix(mix(seed ^ 0x636f6d70ull) ^ a) ^ b * 0x100000001B3ull) ^ c;
    h = mix(h);
    return (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

typedef struct {
    hisp_cgen_kind kind;
    int64_t n, nrows;
    uint64_t seed;
    hispi_sparse *s;
    int ec;
    size_t ss;
    double (*pos)[3];       /* qsurface vertex positions */
    const double (*ke)[24]; /* elastic3d element stiffness */
} cgen;

static inline void put(const cgen *g, int64_t k, int q, double v)
{
    if (g->ss == 4)
        ((float *)g->s->val)[k * g->ec + q] = (float)v;
    else
        ((double *)g->s->val)[k * g->ec + q] = v;
}

/* Neighbour list of row i in column order; returns the count. */
static int neighbours(const cgen *g, int64_t i, int32_t *nb)
{
    int64_t n = g->n;
    int c = 0;
    if (g->kind == HISP_CGEN_FEM3X3 || g->kind == HISP_CGEN_ELASTIC3D) {
        int64_t x = i % n, y = (i / n) % n, z = i / (n * n);
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int64_t X = x + dx, Y = y + dy, Z = z + dz;
                    if (X < 0 || Y < 0 || Z < 0 || X >= n || Y >= n || Z >= n) continue;
                    nb[c++] = (int32_t)((Z * n + Y) * n + X);
                }
        return c;
    }
    if (g->kind == HISP_CGEN_HELMHOLTZ) {
        int64_t x = i % n, y = i / n;
        if (y > 0) nb[c++] = (int32_t)(i - n);
        if (x > 0) nb[c++] = (int32_t)(i - 1);
        nb[c++] = (int32_t)i;
        if (x < n - 1) nb[c++] = (int32_t)(i + 1);
        if (y < n - 1) nb[c++] = (int32_t)(i + n);
        return c;
    }
    /* torus: nu = 2n columns (u), nv = n rows (v); triangles split each
     * quad along the (+1, +1) diagonal: neighbours (+-1,0) (0,+-1) (+1,+1)
     * (-1,-1) */
    int64_t nu = 2 * n, nv = n, u = i % nu, v = i / nu;
    static const int du[7] = {0, -1, 1, 0, 1, -1, 0}, dv[7] = {0, 0, 0, -1, 1, -1, 1};
    int32_t tmp[7];
    for (int d = 0; d < 7; d++) {
        int64_t U = (u + du[d] + nu) % nu, V = (v + dv[d] + nv) % nv;
        tmp[d] = (int32_t)(V * nu + U);
    }
    /* sort, drop duplicates (tiny tori wrap onto themselves) */
    for (int a = 1; a < 7; a++)
        for (int b = a; b > 0 && tmp[b - 1] > tmp[b]; b--) {
            int32_t t = tmp[b];
            tmp[b] = tmp[b - 1];
            tmp[b - 1] = t;
        }
    for (int d = 0; d < 7; d++)
        if (!c || nb[c - 1] != tmp[d]) nb[c++] = tmp[d];
    return c;
}

/* Off-diagonal fem block entry (r, q) of the pair (i, j): symmetric in the
 * pair and in (r, q). */
static double fem_off(const cgen *g, int64_t i, int64_t j, int r, int q)
{
    int64_t a = i < j ? i : j, b = i < j ? j : i;
    int lo = r < q ? r : q, hi = r < q ? q : r;
    double s = 0.25 * hrand(g->seed, (uint64_t)a, (uint64_t)b, (uint64_t)(lo * 3 + hi));
    return -((r == q ? 1.0 : 0.0) + s) / 26.0;
}

/* The Q1 element stiffness of the unit cube, E = 1, nu = 0.3: K = the
 * integral of B^T D B by 2x2x2 Gauss quadrature (exact here), B the 6 x 24
 * strain-displacement matrix (strains xx, yy, zz, and the engineering
 * shears xy, yz, zx), D the isotropic elasticity matrix. Local node
 * a = ax + 2 ay + 4 az sits at the corner (ax, ay, az); K[3a + r][3b + q]
 * couples displacement r of node a with displacement q of node b. The upper
 * triangle is computed and mirrored, so K is symmetric exactly. */
static void elastic_ke(double ke[24][24])
{
    const double E = 1.0, nu = 0.3;
    const double lam = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
    double D[6][6] = {{0}};
    for (int r = 0; r < 3; r++) {
        for (int q = 0; q < 3; q++)
            D[r][q] = lam + (r == q ? 2 * mu : 0);
        D[3 + r][3 + r] = mu;
    }
    const double h = 0.5 / __builtin_sqrt(3.0), gp[2] = {0.5 - h, 0.5 + h}, w = 0.125;
    memset(ke, 0, 24 * sizeof *ke);
    for (int gi = 0; gi < 8; gi++) {
        const double xi[3] = {gp[gi & 1], gp[(gi >> 1) & 1], gp[gi >> 2]};
        double B[6][24] = {{0}}, DB[6][24];
        for (int a = 0; a < 8; a++) {
            double dn[3]; /* the gradient of the shape function of node a */
            for (int d = 0; d < 3; d++) {
                dn[d] = 1;
                for (int e = 0; e < 3; e++) {
                    int on = (a >> e) & 1;
                    dn[d] *= e == d ? (on ? 1.0 : -1.0) : (on ? xi[e] : 1 - xi[e]);
                }
            }
            for (int d = 0; d < 3; d++)
                B[d][3 * a + d] = dn[d];
            B[3][3 * a] = dn[1], B[3][3 * a + 1] = dn[0];
            B[4][3 * a + 1] = dn[2], B[4][3 * a + 2] = dn[1];
            B[5][3 * a] = dn[2], B[5][3 * a + 2] = dn[0];
        }
        for (int r = 0; r < 6; r++)
            for (int q = 0; q < 24; q++) {
                DB[r][q] = 0;
                for (int t = 0; t < 6; t++)
                    DB[r][q] += D[r][t] * B[t][q];
            }
        for (int p = 0; p < 24; p++)
            for (int q = p; q < 24; q++) {
                double v = 0;
                for (int r = 0; r < 6; r++)
                    v += B[r][p] * DB[r][q];
                ke[p][q] += w * v;
            }
    }
    for (int p = 0; p < 24; p++)
        for (int q = 0; q < p; q++)
            ke[p][q] = ke[q][p];
}

/* Row i of elastic3d: the sub-blocks of the up to 8 elements around node i,
 * each element's contribution added in one global order (elements by
 * their lowest corner), which makes block (j, i) the exact transpose of
 * block (i, j). */
static void fill_elastic(const cgen *g, int64_t i, const int32_t *nb, int c)
{
    int64_t n = g->n, x = i % n + 1, y = (i / n) % n, z = i / (n * n);
    double blk[27][9] = {{0}}; /* by (dz, dy, dx) + 1 in base 3 */
    for (int ez = 0; ez < 2; ez++)
        for (int ey = 0; ey < 2; ey++)
            for (int ex = 0; ex < 2; ex++) {
                int64_t X0 = x - 1 + ex, Y0 = y - 1 + ey, Z0 = z - 1 + ez; /* lowest corner */
                if (X0 > n - 1 || Y0 < 0 || Y0 > n - 2 || Z0 < 0 || Z0 > n - 2) continue;
                int a = (1 - ex) + 2 * (1 - ey) + 4 * (1 - ez);
                for (int b = 0; b < 8; b++) {
                    int bx = b & 1, by = (b >> 1) & 1, bz = b >> 2;
                    if (X0 + bx == 0) continue; /* clamped */
                    int slot =
                        (int)((Z0 + bz - z + 1) * 9 + (Y0 + by - y + 1) * 3 + (X0 + bx - x + 1));
                    for (int r = 0; r < 3; r++)
                        for (int q = 0; q < 3; q++)
                            blk[slot][r * 3 + q] += g->ke[3 * a + r][3 * b + q];
                }
            }
    int64_t k0 = g->s->rowptr[i];
    for (int t = 0; t < c; t++) {
        int64_t j = nb[t], X = j % n + 1, Y = (j / n) % n, Z = j / (n * n);
        int slot = (int)((Z - z + 1) * 9 + (Y - y + 1) * 3 + (X - x + 1));
        g->s->colind[k0 + t] = (int32_t)j;
        for (int q = 0; q < 9; q++)
            put(g, k0 + t, q, blk[slot][q]);
    }
}

static void fill_row(const cgen *g, int64_t i)
{
    int32_t nb[27];
    int c = neighbours(g, i, nb);
    if (g->kind == HISP_CGEN_ELASTIC3D) {
        fill_elastic(g, i, nb, c);
        return;
    }
    int64_t k0 = g->s->rowptr[i];
    for (int t = 0; t < c; t++) {
        int64_t j = nb[t], k = k0 + t;
        g->s->colind[k] = (int32_t)j;
        if (g->kind == HISP_CGEN_FEM3X3) {
            for (int q = 0; q < 9; q++) {
                int r = q / 3, cc = q % 3;
                double v;
                if (j != i) {
                    v = fem_off(g, i, j, r, cc);
                } else {
                    v = 0;
                    if (r == cc) { /* 2 + absolute row sums of the off-diagonal blocks */
                        v = 2.0;
                        for (int u = 0; u < c; u++)
                            if (nb[u] != i)
                                for (int w = 0; w < 3; w++) {
                                    double o = fem_off(g, i, nb[u], r, w);
                                    v += o < 0 ? -o : o;
                                }
                    }
                }
                put(g, k, q, v);
            }
        } else if (g->kind == HISP_CGEN_HELMHOLTZ) {
            double k02 = 2.0;
            if (j == i) {
                double k2 = k02 * (1.0 + 0.1 * hrand(g->seed, (uint64_t)i, 0, 0));
                put(g, k, 0, 4.0 - k2);
                put(g, k, 1, -0.1 * k02);
            } else {
                put(g, k, 0, -1.0);
                put(g, k, 1, 0.0);
            }
        } else {
            if (j == i) {
                put(g, k, 0, 6.0 + 0.5 * (1.0 + hrand(g->seed, (uint64_t)i, 1, 0)));
                put(g, k, 1, 0);
                put(g, k, 2, 0);
                put(g, k, 3, 0);
            } else {
                put(g, k, 0, -1.0);
                for (int d = 0; d < 3; d++)
                    put(g, k, 1 + d, 0.5 * (g->pos[j][d] - g->pos[i][d]));
            }
        }
    }
}

typedef struct {
    const cgen *g;
    int64_t r0, r1;
} job;

static void *worker(void *p)
{
    job *j = p;
    for (int64_t i = j->r0; i < j->r1; i++)
        fill_row(j->g, i);
    return NULL;
}

hisp_status hisp_matrix_generate_compound(hisp_context ctx, hisp_cgen_kind kind, int64_t n,
                                          uint64_t seed, hisp_type type, hisp_matrix *A)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!A) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *A = NULL;
    if ((int)kind < 0 || kind >= HISP_CGEN_COUNT)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown compound generator %d",
                          (int)kind);
    static const hisp_type fam[HISP_CGEN_COUNT][2] = {{HISP_B3X3_F32, HISP_B3X3_F64},
                                                      {HISP_Q32, HISP_Q64},
                                                      {HISP_C32, HISP_C64},
                                                      {HISP_B3X3_F32, HISP_B3X3_F64}};
    if (type != fam[kind][0] && type != fam[kind][1])
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "%s generates %s or %s, not %s",
                          cgen_names[kind], hisp_type_name(fam[kind][0]),
                          hisp_type_name(fam[kind][1]), hisp_type_name(type));
    double rows = kind == HISP_CGEN_QSURFACE    ? 2.0 * n * n
                  : kind == HISP_CGEN_HELMHOLTZ ? (double)n * n
                                                : (double)n * n * n;
    if (kind == HISP_CGEN_ELASTIC3D && n < 2)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "elastic3d: n = %lld, needs n >= 2 (the mesh is n x (n-1) x (n-1) "
                          "elements)",
                          (long long)n);
    if (n < 1 || rows > INT32_MAX)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "%s: n = %lld out of range (n >= %d, at most 2^31 - 1 rows)",
                          cgen_names[kind], (long long)n, kind == HISP_CGEN_ELASTIC3D ? 2 : 1);
    cgen g = {kind,
              n,
              (int64_t)rows,
              seed ? seed : 1,
              NULL,
              hisp_type_components(type),
              hispi_type_scalar_size(type),
              NULL,
              NULL};
    double ke[24][24];
    if (kind == HISP_CGEN_ELASTIC3D) {
        elastic_ke(ke);
        g.ke = (const double(*)[24])ke;
    }
    if (kind == HISP_CGEN_QSURFACE) { /* torus R = 2, r = 1, jittered */
        HISPI_TRY(hispi_alloc(ctx, (size_t)g.nrows, sizeof *g.pos, (void **)&g.pos));
        int64_t nu = 2 * n, nv = n;
        const double tau = 6.283185307179586;
        for (int64_t i = 0; i < g.nrows; i++) {
            double a =
                tau * ((double)(i % nu) + 0.2 * hrand(g.seed, (uint64_t)i, 2, 0)) / (double)nu;
            double b =
                tau * ((double)(i / nu) + 0.2 * hrand(g.seed, (uint64_t)i, 3, 0)) / (double)nv;
            double ca = __builtin_cos(a), sa = __builtin_sin(a);
            double cb = __builtin_cos(b), sb = __builtin_sin(b);
            g.pos[i][0] = (2.0 + cb) * ca;
            g.pos[i][1] = (2.0 + cb) * sa;
            g.pos[i][2] = sb;
        }
    }
    hispi_sparse s;
    int32_t nb[27];
    int64_t nnz = 0;
    for (int64_t i = 0; i < g.nrows; i++)
        nnz += neighbours(&g, i, nb);
    hisp_status st = hispi_sparse_alloc(ctx, &s, HISP_FORMAT_CSR, type, g.nrows, g.nrows, nnz);
    if (st) {
        free(g.pos);
        return st;
    }
    s.rowptr[0] = 0;
    for (int64_t i = 0; i < g.nrows; i++)
        s.rowptr[i + 1] = s.rowptr[i] + neighbours(&g, i, nb);
    g.s = &s;
    int nt = g.nrows > 20000 ? hispi_threads(ctx, 1e300) : 1; /* the threads option */
    pthread_t th[16];
    job jobs[16];
    int started = 0;
    for (int t = 0; t < nt; t++) {
        jobs[t] = (job){&g, g.nrows * t / nt, g.nrows * (t + 1) / nt};
        if (t > 0 && pthread_create(&th[t], NULL, worker, &jobs[t]) == 0)
            started |= 1 << t;
        else if (t > 0)
            worker(&jobs[t]); /* no thread: do it here */
    }
    worker(&jobs[0]);
    for (int t = 1; t < nt; t++)
        if (started & (1 << t)) pthread_join(th[t], NULL);
    free(g.pos);
    return hispi_matrix_wrap(ctx, &s, A);
}
