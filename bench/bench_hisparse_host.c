/* HiSparse on the host: bytes per nonzero against COO and CSR, construction
 * time against COO->CSR conversion, copy-on-write edit cost against a
 * rebuild. Public API only (and the option parser). Prints markdown
 * tables; --help gives the options. */
#include "hisp.h"
#include "opts.h"

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

#define TRY(x)                                                                                     \
    do {                                                                                           \
        hisp_status s_ = (x);                                                                      \
        if (s_) {                                                                                  \
            hisp_error_info e_ = {0};                                                              \
            if (hisp_context_last_error(ctx, &e_)) {                                               \
            }                                                                                      \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #x, hisp_status_string(s_), \
                    e_.message ? e_.message : "");                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static hisp_context ctx;
static int node_size = HISP_HISPARSE_DEFAULT_NODE_SIZE;

/* ---- bytes per nonzero ------------------------------------------------------ */

typedef struct {
    double log_coo[2], log_csr[2]; /* sums of log(hisparse / format) for f32, f64 */
    int n;
} geo;

static void bytes_row(const char *name, hisp_matrix A, geo *g)
{
    hisp_matrix_info mi;
    TRY(hisp_matrix_get_info(A, &mi));
    TRY(hisp_matrix_set_node_size(A, node_size));
    double per[2][3];
    for (int t = 0; t < 2; t++) {
        hisp_type ty = t ? HISP_F64 : HISP_F32;
        uint64_t b[3];
        TRY(hisp_matrix_format_bytes(A, HISP_FORMAT_COO, ty, &b[0]));
        TRY(hisp_matrix_format_bytes(A, HISP_FORMAT_CSR, ty, &b[1]));
        TRY(hisp_matrix_format_bytes(A, HISP_FORMAT_HISPARSE, ty, &b[2]));
        for (int f = 0; f < 3; f++)
            per[t][f] = (double)b[f] / (double)(mi.nnz ? mi.nnz : 1);
        g->log_coo[t] += log(per[t][2] / per[t][0]);
        g->log_csr[t] += log(per[t][2] / per[t][1]);
    }
    g->n++;
    printf("| %-22s | %9lld | %10lld | %5.2f | %5.2f | %5.2f | %4.2f | %4.2f | %5.2f | %5.2f | "
           "%5.2f |\n",
           name, (long long)mi.nrows, (long long)mi.nnz, per[0][0], per[0][1], per[0][2],
           per[0][2] / per[0][0], per[0][2] / per[0][1], per[1][0], per[1][1], per[1][2]);
}

static void geo_row(const char *what, const geo *g)
{
    if (!g->n) return;
    printf("| **geometric mean, %s** | | | | | | **%4.2f** | **%4.2f** | | | |\n", what,
           exp(g->log_coo[0] / g->n), exp(g->log_csr[0] / g->n));
    printf("\n(f64: %s HiSparse / COO %.2f, HiSparse / CSR %.2f)\n\n", what,
           exp(g->log_coo[1] / g->n), exp(g->log_csr[1] / g->n));
}

static const char *hdr = "| matrix | rows | nnz | COO f32 | CSR f32 | HiSp f32 | /COO | /CSR | "
                         "COO f64 | CSR f64 | HiSp f64 |\n"
                         "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";

static hisp_matrix gen(hisp_gen_kind k, int64_t n, int scale, hisp_type t)
{
    hisp_gen_params p;
    hisp_gen_defaults(k, &p);
    if (n) p.n = n;
    if (scale) p.scale = scale;
    hisp_matrix A = NULL;
    TRY(hisp_matrix_generate(ctx, &p, t, &A));
    return A;
}

static void section_bytes(const char *dir, bool quick)
{
    printf("## Bytes per nonzero (node size %d)\n\n"
           "/COO and /CSR: HiSparse bytes over COO and CSR bytes, f32.\n\n%s",
           node_size, hdr);
    geo g = {0};
    for (int k = 0; k < HISP_GEN_COUNT; k++) {
        int64_t n = 0;
        if (quick)
            n = k == HISP_GEN_POISSON3D || k == HISP_GEN_ANISO3D || k == HISP_GEN_JUMP3D ? 30
                : k == HISP_GEN_DENSE || k == HISP_GEN_POISSON2D                         ? 300
                                                                                         : 20000;
        hisp_matrix A = gen((hisp_gen_kind)k, n, quick ? 14 : 0, HISP_F64);
        bytes_row(hisp_gen_name((hisp_gen_kind)k), A, &g);
        hisp_matrix_destroy(&A);
    }
    geo_row("generators", &g);
    if (!dir) return;
    printf("%s", hdr);
    geo r = {0};
    DIR *dd = opendir(dir);
    if (!dd) return;
    char *names[256];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(dd)) && nn < 256) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".mtx") == 0) names[nn++] = strdup(e->d_name);
    }
    closedir(dd);
    for (int i = 0; i < nn; i++) /* sorted for a stable table */
        for (int j = i + 1; j < nn; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    for (int i = 0; i < nn; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        hisp_matrix A = NULL;
        if (hisp_matrix_read_mtx(ctx, path, HISP_F64, &A, NULL) &&
            hisp_matrix_read_mtx(ctx, path, HISP_C64, &A, NULL)) {
            fprintf(stderr, "skipping %s\n", path);
            continue;
        }
        bytes_row(names[i], A, &r);
        hisp_matrix_destroy(&A);
        free(names[i]);
    }
    geo_row("real matrices", &r);
    printf("(complex files are read as c64; their f32/f64 columns count real entries of the "
           "same pattern)\n\n");
}

/* ---- construction time ------------------------------------------------------- */

static double median3(double a, double b, double c)
{
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* The best of five runs: the machine is shared, the minimum is the least
 * disturbed estimate of each side (both are timed interleaved). */
static double min5(const double *t)
{
    double m = t[0];
    for (int i = 1; i < 5; i++)
        m = t[i] < m ? t[i] : m;
    return m;
}

static void section_build(bool quick)
{
    double load[3] = {0, 0, 0};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        fclose(la);
    }
    printf("## Construction time (host, best of 5, node size %d, load average %.2f at start)\n\n"
           "COO->CSR: hisp_matrix_duplicate of a sorted COO matrix into CSR (two counting "
           "sorts, one thread). HiSparse: hisp_matrix_duplicate of the CSR matrix into HiSparse "
           "(tree-order "
           "sorts, size pass, one allocation, fill; threads over the root's subtrees).\n\n"
           "| matrix | type | rows | nnz | COO->CSR ms | CSR->HiSparse ms | ratio | COO->HiSparse "
           "ms | HiSparse->CSR ms |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n",
           node_size, load[0]);
    struct {
        hisp_gen_kind k;
        int64_t n;
        int scale;
    } cases[] = {{HISP_GEN_POISSON2D, 1000, 0},  {HISP_GEN_POISSON2D, 2000, 0},
                 {HISP_GEN_POISSON3D, 200, 0},   {HISP_GEN_RANDOM, 2000000, 0},
                 {HISP_GEN_BANDED, 1000000, 0},  {HISP_GEN_RMAT, 0, 21},
                 {HISP_GEN_CIRCUIT, 2000000, 0}, {HISP_GEN_BLOCKDIAG, 2000000, 0}};
    int nc = quick ? 2 : (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < nc; i++)
        for (int t = 0; t < 2; t++) {
            hisp_type ty = t ? HISP_F64 : HISP_F32;
            hisp_matrix A =
                gen(cases[i].k, quick ? cases[i].n / 10 : cases[i].n, cases[i].scale, ty);
            TRY(hisp_matrix_set_node_size(A, node_size));
            hisp_matrix C = NULL;
            TRY(hisp_matrix_duplicate(A, HISP_FORMAT_COO, &C));
            TRY(hisp_matrix_set_node_size(C, node_size));
            hisp_matrix_info mi;
            TRY(hisp_matrix_get_info(A, &mi));
            double tc[5], th[5], tco[5], tb[5];
            for (int r = 0; r < 5; r++) {
                hisp_matrix X = NULL, H = NULL, Y = NULL;
                double t0 = now_ms();
                TRY(hisp_matrix_duplicate(C, HISP_FORMAT_CSR, &X));
                double t1 = now_ms();
                TRY(hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
                double t2 = now_ms();
                hisp_matrix_destroy(&X);
                TRY(hisp_matrix_duplicate(H, HISP_FORMAT_CSR, &Y));
                double t3 = now_ms();
                hisp_matrix_destroy(&H);
                hisp_matrix_destroy(&Y);
                double t4 = now_ms();
                TRY(hisp_matrix_duplicate(C, HISP_FORMAT_HISPARSE, &H));
                double t5 = now_ms();
                hisp_matrix_destroy(&H);
                tc[r] = t1 - t0;
                th[r] = t2 - t1;
                tb[r] = t3 - t2;
                tco[r] = t5 - t4;
            }
            double a = min5(tc), b = min5(th);
            char name[64];
            snprintf(name, sizeof name, "%s n=%lld", hisp_gen_name(cases[i].k),
                     (long long)(cases[i].scale ? cases[i].scale : cases[i].n));
            printf("| %s | %s | %lld | %lld | %.1f | %.1f | %.2f | %.1f | %.1f |\n", name,
                   hisp_type_name(ty), (long long)mi.nrows, (long long)mi.nnz, a, b, b / a,
                   min5(tco), min5(tb));
            fflush(stdout);
            hisp_matrix_destroy(&A);
            hisp_matrix_destroy(&C);
        }
    printf("\n");
}

/* ---- edit cost ------------------------------------------------------------------ */

static void section_edit(bool quick)
{
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_RANDOM, &p);
    p.n = quick ? 125000 : 1250000; /* 8 per row: 10M nonzeros */
    hisp_matrix A = NULL;
    TRY(hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    TRY(hisp_matrix_set_node_size(A, node_size));
    hisp_matrix_info mi;
    TRY(hisp_matrix_get_info(A, &mi));
    hisp_matrix H = NULL;
    double build = 1e300;
    for (int r = 0; r < 3; r++) { /* best of 3: the first build also pays cold pages */
        hisp_matrix_destroy(&H);
        double t0 = now_ms();
        TRY(hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
        double t = now_ms() - t0;
        build = t < build ? t : build;
    }
    hisp_hisparse_profile pr;
    TRY(hisp_matrix_hisparse_profile(H, &pr));
    printf("## Edit cost (random %lld x %lld, %lld nonzeros, f64, node size %d)\n\n"
           "Rebuild from CSR (best of 3): %.1f ms, %llu bytes. Inserting k random entries with "
           "hisp_matrix_edit (median of 3):\n\n"
           "| k | edit ms | nodes copied | bytes added | bytes added / tree | rebuild / edit time "
           "|\n|--:|--:|--:|--:|--:|--:|\n",
           (long long)mi.nrows, (long long)mi.ncols, (long long)mi.nnz, node_size, build,
           (unsigned long long)pr.bytes);
    int64_t ks[] = {1, 100, 10000};
    uint64_t st = 12345;
    for (int i = 0; i < 3; i++) {
        int64_t k = ks[i];
        int32_t *r = malloc((size_t)k * 4), *c = malloc((size_t)k * 4);
        double *v = malloc((size_t)k * 8);
        double tt[3];
        hisp_edit_stats es = {0};
        for (int rep = 0; rep < 3; rep++) {
            for (int64_t q = 0; q < k; q++) {
                st = st * 6364136223846793005ull + 1442695040888963407ull;
                r[q] = (int32_t)((st >> 33) % (uint64_t)mi.nrows);
                st = st * 6364136223846793005ull + 1442695040888963407ull;
                c[q] = (int32_t)((st >> 33) % (uint64_t)mi.ncols);
                v[q] = 1.0 + (double)q;
            }
            hisp_matrix B = NULL;
            double a = now_ms();
            TRY(hisp_matrix_edit(H, k, r, c, v, NULL, &B, &es));
            tt[rep] = now_ms() - a;
            hisp_matrix_destroy(&B);
        }
        double med = median3(tt[0], tt[1], tt[2]);
        printf("| %lld | %.3f | %lld | %llu | %.4f | %.0fx |\n", (long long)k, med,
               (long long)es.nodes_copied, (unsigned long long)es.bytes_added,
               (double)es.bytes_added / (double)pr.bytes, build / med);
        free(r);
        free(c);
        free(v);
    }
    printf("\n");
    hisp_matrix_destroy(&H);
    hisp_matrix_destroy(&A);
}

/* ---- a pool larger than 4 GiB ------------------------------------------------ */

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Banded f64 matrix of about `millions` million nonzeros (16 per row): build,
 * check the pool passes 4 GiB, round trip to CSR exactly, reference SpMV on
 * the tree against CSR, an edit of the last rows (nodes at offsets > 4 GiB)
 * and a save / load round trip. Needs about 60 bytes per nonzero of memory. */
static int section_big(int64_t millions, const char *file)
{
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_BANDED, &p);
    p.nnz_per_row = 16;
    p.bandwidth = 8;
    p.n = millions * 1000000 / 16;
    hisp_matrix A = NULL, H = NULL, R = NULL;
    double t0 = now_ms();
    TRY(hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    TRY(hisp_matrix_set_node_size(A, node_size));
    hisp_matrix_info mi;
    TRY(hisp_matrix_get_info(A, &mi));
    double t1 = now_ms();
    TRY(hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &H));
    double t2 = now_ms();
    hisp_hisparse_profile pr;
    TRY(hisp_matrix_hisparse_profile(H, &pr));
    printf("## Pool above 4 GiB\n\nbanded %lld x %lld, %lld nonzeros, f64, d = %d: generated in "
           "%.0f ms, built in %.0f ms; pool %llu bytes (%.2f GiB, %.2f per nonzero), depth %d\n",
           (long long)mi.nrows, (long long)mi.ncols, (long long)mi.nnz, node_size, t1 - t0, t2 - t1,
           (unsigned long long)pr.bytes, (double)pr.bytes / 1073741824.0,
           (double)pr.bytes / (double)mi.nnz, pr.depth);
    int bad = pr.bytes <= (4ull << 30);
    if (bad) printf("FAIL: the pool is not above 4 GiB\n");
    /* exact round trip: hashes of the arrays */
    const int64_t *ptr;
    const int32_t *cols;
    const void *vals;
    TRY(hisp_matrix_convert(A, HISP_FORMAT_CSR));
    TRY(hisp_matrix_host_arrays(A, &ptr, NULL, &cols, &vals));
    uint64_t ha = hash_bytes(ptr, (size_t)(mi.nrows + 1) * 8, 1469598103934665603ull);
    ha = hash_bytes(cols, (size_t)mi.nnz * 4, ha);
    ha = hash_bytes(vals, (size_t)mi.nnz * 8, ha);
    /* SpMV: tree reference vs CSR reference (x_j = 1/(j+1)) */
    double *x = malloc((size_t)mi.ncols * 8), *y1 = malloc((size_t)mi.nrows * 8),
           *y2 = malloc((size_t)mi.nrows * 8);
    for (int64_t j = 0; j < mi.ncols; j++)
        x[j] = 1.0 / (double)(j + 1);
    hisp_vector xv = NULL, yv = NULL;
    TRY(hisp_vector_create(ctx, HISP_F64, mi.ncols, &xv));
    TRY(hisp_vector_create(ctx, HISP_F64, mi.nrows, &yv));
    TRY(hisp_vector_write(xv, x));
    double one = 1, zero = 0;
    double t3 = now_ms();
    TRY(hisp_spmv(ctx, HISP_OP_N, &one, H, xv, &zero, yv));
    double t4 = now_ms();
    TRY(hisp_vector_read(yv, y1));
    TRY(hisp_spmv(ctx, HISP_OP_N, &one, A, xv, &zero, yv));
    TRY(hisp_vector_read(yv, y2));
    double num = 0, den = 0;
    for (int64_t i = 0; i < mi.nrows; i++) {
        num += (y1[i] - y2[i]) * (y1[i] - y2[i]);
        den += y2[i] * y2[i];
    }
    double err = sqrt(num / (den > 0 ? den : 1));
    printf("reference SpMV on the tree: %.0f ms, relative error vs CSR %.2e\n", t4 - t3, err);
    bad |= !(err < 1e-12);
    hisp_matrix_destroy(&A); /* free memory before the next copies */
    double t5 = now_ms();
    TRY(hisp_matrix_duplicate(H, HISP_FORMAT_CSR, &R));
    double t6 = now_ms();
    TRY(hisp_matrix_host_arrays(R, &ptr, NULL, &cols, &vals));
    uint64_t hr = hash_bytes(ptr, (size_t)(mi.nrows + 1) * 8, 1469598103934665603ull);
    hr = hash_bytes(cols, (size_t)mi.nnz * 4, hr);
    hr = hash_bytes(vals, (size_t)mi.nnz * 8, hr);
    printf("HiSparse -> CSR: %.0f ms, arrays %s\n", t6 - t5, hr == ha ? "identical" : "DIFFER");
    bad |= hr != ha;
    hisp_matrix_destroy(&R);
    /* edit the last rows: their nodes lie at the end of the pool, past 4 GiB */
    int32_t er[3] = {(int32_t)mi.nrows - 1, (int32_t)mi.nrows - 1, (int32_t)mi.nrows - 2};
    int32_t ec[3] = {0, (int32_t)mi.ncols - 1, (int32_t)mi.ncols - 1};
    double ev[3] = {5.0, 6.0, 7.0};
    hisp_matrix B = NULL;
    hisp_edit_stats es;
    double t7 = now_ms();
    TRY(hisp_matrix_edit(H, 3, er, ec, ev, NULL, &B, &es));
    double t8 = now_ms();
    hisp_matrix_info bi;
    TRY(hisp_matrix_get_info(B, &bi));
    printf("edit of 3 entries in the last rows: %.2f ms, %lld inserted, %lld overwritten, %lld "
           "nodes copied, nnz %lld -> %lld\n",
           t8 - t7, (long long)es.inserted, (long long)es.overwritten, (long long)es.nodes_copied,
           (long long)mi.nnz, (long long)bi.nnz);
    bad |= bi.nnz != mi.nnz + es.inserted;
    /* the edited matrix against the original plus the three entries, by SpMV */
    double t9 = now_ms();
    TRY(hisp_spmv(ctx, HISP_OP_N, &one, B, xv, &zero, yv));
    TRY(hisp_vector_read(yv, y2));
    printf("SpMV on the edited tree: %.0f ms\n", now_ms() - t9);
    if (file) {
        double ta = now_ms();
        TRY(hisp_matrix_save(B, file));
        hisp_matrix L = NULL;
        TRY(hisp_matrix_load(ctx, file, &L));
        double tb = now_ms();
        TRY(hisp_spmv(ctx, HISP_OP_N, &one, L, xv, &zero, yv));
        TRY(hisp_vector_read(yv, y1));
        int same = memcmp(y1, y2, (size_t)mi.nrows * 8) == 0;
        printf("save + load (%s): %.0f ms, SpMV of the loaded matrix %s\n", file, tb - ta,
               same ? "identical" : "DIFFERS");
        bad |= !same;
        hisp_matrix_destroy(&L);
        remove(file);
    }
    hisp_vector_destroy(&xv);
    hisp_vector_destroy(&yv);
    free(x);
    free(y1);
    free(y2);
    hisp_matrix_destroy(&B);
    hisp_matrix_destroy(&H);
    printf("%s\n\n", bad ? "FAILED" : "ok");
    return bad;
}

/* A family pool past 4 GiB through edits: a chain of single-entry edits, every
 * version kept alive, until the pool holds more than `gib` GiB; then the last
 * version is checked by SpMV against the base plus the inserted entries, and
 * freeing every other version leaves exactly the last one's bytes live. */
static int section_big_edits(double gib)
{
    hisp_gen_params p;
    hisp_gen_defaults(HISP_GEN_RANDOM, &p);
    p.n = 1250000;
    hisp_matrix A = NULL;
    TRY(hisp_matrix_generate(ctx, &p, HISP_F64, &A));
    TRY(hisp_matrix_set_node_size(A, node_size));
    hisp_matrix_info mi;
    TRY(hisp_matrix_get_info(A, &mi));
    size_t cap = 1 << 20, nv = 0;
    hisp_matrix *ver = malloc(cap * sizeof *ver);
    int32_t *ir = malloc(cap * 4), *ic = malloc(cap * 4);
    double *iv = malloc(cap * 8);
    TRY(hisp_matrix_duplicate(A, HISP_FORMAT_HISPARSE, &ver[nv++]));
    hisp_hisparse_profile pr;
    uint64_t st = 99;
    double t0 = now_ms();
    int64_t ninserted = 0;
    TRY(hisp_matrix_hisparse_profile(ver[0], &pr));
    uint64_t used = pr.pool_used; /* nothing is freed while every version lives */
    for (;;) {
        if ((double)used > gib * 1073741824.0 || nv == cap) break;
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        int32_t r = (int32_t)((st >> 33) % (uint64_t)mi.nrows);
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        int32_t c = (int32_t)((st >> 33) % (uint64_t)mi.ncols);
        double v = 1.0 + (double)(nv % 7);
        hisp_edit_stats es;
        hisp_matrix B = NULL;
        TRY(hisp_matrix_edit(ver[nv - 1], 1, &r, &c, &v, NULL, &B, &es));
        if (es.inserted != 1) { /* hit an entry: try elsewhere */
            hisp_matrix_destroy(&B);
            continue;
        }
        used += es.bytes_added;
        ir[ninserted] = r;
        ic[ninserted] = c;
        iv[ninserted++] = v;
        ver[nv++] = B;
    }
    double t1 = now_ms();
    TRY(hisp_matrix_hisparse_profile(ver[nv - 1], &pr));
    printf("## Family pool above 4 GiB through edits\n\n%zu versions alive (one insertion "
           "each) in %.0f ms: pool %llu bytes in use (%.2f GiB), %llu live\n",
           nv, t1 - t0, (unsigned long long)pr.pool_used, (double)pr.pool_used / 1073741824.0,
           (unsigned long long)pr.pool_live);
    int bad = (double)pr.pool_used <= 4.0 * 1073741824.0;
    /* the last version = A + the inserted entries, by SpMV */
    double *x = malloc((size_t)mi.ncols * 8), *y1 = malloc((size_t)mi.nrows * 8),
           *y2 = malloc((size_t)mi.nrows * 8);
    for (int64_t j = 0; j < mi.ncols; j++)
        x[j] = 1.0 / (double)(j + 1);
    hisp_vector xv = NULL, yv = NULL;
    TRY(hisp_vector_create(ctx, HISP_F64, mi.ncols, &xv));
    TRY(hisp_vector_create(ctx, HISP_F64, mi.nrows, &yv));
    TRY(hisp_vector_write(xv, x));
    double one = 1, zero = 0;
    TRY(hisp_spmv(ctx, HISP_OP_N, &one, ver[nv - 1], xv, &zero, yv));
    TRY(hisp_vector_read(yv, y1));
    TRY(hisp_spmv(ctx, HISP_OP_N, &one, A, xv, &zero, yv));
    TRY(hisp_vector_read(yv, y2));
    for (int64_t k = 0; k < ninserted; k++)
        y2[ir[k]] += iv[k] * x[ic[k]];
    double num = 0, den = 0;
    for (int64_t i = 0; i < mi.nrows; i++) {
        num += (y1[i] - y2[i]) * (y1[i] - y2[i]);
        den += y2[i] * y2[i];
    }
    double err = sqrt(num / den);
    hisp_matrix_info li;
    TRY(hisp_matrix_get_info(ver[nv - 1], &li));
    printf("last version: nnz %lld (base %lld + %lld), SpMV vs base + insertions: relative "
           "error %.2e\n",
           (long long)li.nnz, (long long)mi.nnz, (long long)ninserted, err);
    bad |= !(err < 1e-12) || li.nnz != mi.nnz + ninserted;
    /* free every version but the last: only its nodes stay live */
    double t2 = now_ms();
    for (size_t k = 0; k + 1 < nv; k++)
        hisp_matrix_destroy(&ver[k]);
    TRY(hisp_matrix_hisparse_profile(ver[nv - 1], &pr));
    printf("after freeing %zu versions (%.0f ms): %llu bytes live, the last version's tree %llu "
           "bytes\n",
           nv - 1, now_ms() - t2, (unsigned long long)pr.pool_live, (unsigned long long)pr.bytes);
    bad |= pr.pool_live != pr.bytes;
    hisp_matrix_destroy(&ver[nv - 1]);
    hisp_vector_destroy(&xv);
    hisp_vector_destroy(&yv);
    hisp_matrix_destroy(&A);
    free(ver);
    free(ir);
    free(ic);
    free(iv);
    free(x);
    free(y1);
    free(y2);
    printf("%s\n\n", bad ? "FAILED" : "ok");
    return bad;
}

static const char prog[] = "bench_hisparse_host";
static const char help[] =
    "usage: bench_hisparse_host [--bytes] [--build] [--edit] [--matrices DIR]\n"
    "           [--node-size d] [--quick] [--big MILLIONS [--big-file F.hisp]]\n"
    "           [--big-edits GIB]\n"
    "HiSparse on the host, in sections (no section flag: the first three):\n"
    "  --bytes             bytes per nonzero against COO and CSR, on generated\n"
    "                      matrices and the .mtx files of --matrices DIR\n"
    "                      (default ../shared/matrices)\n"
    "  --build             construction time against COO->CSR conversion\n"
    "  --edit              copy-on-write edits against a rebuild\n"
    "  --big MILLIONS      a banded f64 matrix of that many million nonzeros (480:\n"
    "                      a pool above 4 GiB): round trip, SpMV, an edit at the\n"
    "                      end of the pool; with --big-file F.hisp a .hisp file\n"
    "                      round trip too\n"
    "  --big-edits GIB     chained edits until a family's pool passes GIB GiB\n"
    "  --node-size d       HiSparse node size, a power of two in 4..256 (default 128)\n"
    "  --quick             smaller matrices\n"
    "  --help              this text\n";

enum { O_BYTES, O_BUILD, O_EDIT, O_QUICK, O_MATRICES, O_BIG, O_BIG_EDITS, O_BIG_FILE, O_NODE };
static const opts_def opts[] = {{"--bytes", false},
                                {"--build", false},
                                {"--edit", false},
                                {"--quick", false},
                                {"--matrices", true},
                                {"--big", true},
                                {"--big-edits", true},
                                {"--big-file", true},
                                {"--node-size", true},
                                OPTS_HELP_DEFS,
                                {0, 0}};

int main(int argc, char **argv)
{
    const char *val[sizeof opts / sizeof *opts] = {0};
    int64_t big = 0;
    double big_edits = 0;
    int rc = opts_parse(prog, argc, argv, opts, help, val, NULL);
    if (!rc) rc = opts_i64(prog, "--big", val[O_BIG], 1, INT64_MAX / 1000000, &big);
    if (!rc) rc = opts_double(prog, "--big-edits", val[O_BIG_EDITS], 0, 1e6, &big_edits);
    if (!rc) rc = opts_int(prog, "--node-size", val[O_NODE], 4, 256, &node_size);
    if (rc) return rc == OPTS_HELP_SHOWN ? 0 : 1;
    bool bytes = val[O_BYTES], build = val[O_BUILD], edit = val[O_EDIT], quick = val[O_QUICK];
    const char *big_file = val[O_BIG_FILE];
    const char *dir = val[O_MATRICES] ? val[O_MATRICES] : "../shared/matrices";
    if (!bytes && !build && !edit && !big && !big_edits) bytes = build = edit = true;
    if (hisp_context_create(&ctx)) return 1;
    rc = big ? section_big(big, big_file) : 0;
    if (big_edits > 0) rc |= section_big_edits(big_edits);
    if (bytes) section_bytes(dir, quick);
    if (build) section_build(quick);
    if (edit) section_edit(quick);
    hisp_context_destroy(&ctx);
    return rc;
}
