/* HiSparse on the host: bytes per nonzero against COO and CSR, construction
 * time against COO->CSR conversion, copy-on-write edit cost against a
 * rebuild. Self-contained (public API only).
 *
 *   bench_hisparse_host [--bytes] [--build] [--edit] [--matrices DIR] [--node-size d]
 *                       [--quick]
 * (no section flag = all three). Prints markdown tables. */
#include "hisp.h"

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
            n = k == HISP_GEN_POISSON3D                          ? 30
                : k == HISP_GEN_DENSE || k == HISP_GEN_POISSON2D ? 300
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

int main(int argc, char **argv)
{
    bool bytes = false, build = false, edit = false, quick = false;
    const char *dir = "../shared/matrices";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bytes"))
            bytes = true;
        else if (!strcmp(argv[i], "--build"))
            build = true;
        else if (!strcmp(argv[i], "--edit"))
            edit = true;
        else if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--matrices") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--node-size") && i + 1 < argc)
            node_size = atoi(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: %s [--bytes] [--build] [--edit] [--matrices DIR] "
                    "[--node-size d] [--quick]\n",
                    argv[0]);
            return 1;
        }
    }
    if (!bytes && !build && !edit) bytes = build = edit = true;
    if (hisp_context_create(&ctx)) return 1;
    if (bytes) section_bytes(dir, quick);
    if (build) section_build(quick);
    if (edit) section_edit(quick);
    hisp_context_destroy(&ctx);
    return 0;
}
