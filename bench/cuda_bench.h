/* Helpers shared by the CUDA benchmark programs (bench/bench_*_cuda.c):
 * error checks, the double-precision host reference of CSR SpMV, random
 * inputs, timed hisp runs, timed cuSPARSE SpMV, and result rows. Linked
 * only into the CUDA programs. */
#ifndef HISP_BENCH_CUDA_BENCH_H
#define HISP_BENCH_CUDA_BENCH_H

#include "common.h"

#include <cuda_runtime_api.h>
#define DISABLE_CUSPARSE_DEPRECATED /* the header marks its legacy API */
#include <cusparse.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)
#define CKS(call)                                                                                  \
    do {                                                                                           \
        cusparseStatus_t e_ = (call);                                                              \
        if (e_ != CUSPARSE_STATUS_SUCCESS) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                    cusparseGetErrorString(e_));                                                   \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

/* For the programs that include cublas_v2.h. */
#define CKB(call)                                                                                  \
    do {                                                                                           \
        cublasStatus_t e_ = (call);                                                                \
        if (e_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                    cublasGetStatusString(e_));                                                    \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct {
    hisp_type type;
    int64_t nrows, ncols, nnz;
    const int64_t *rowptr;
    const int32_t *colind;
    const void *val;
} cb_csr;

typedef struct {
    const cb_csr *A;
    hisp_matrix M;
    const void *x_n, *x_t, *y0_n, *y0_t; /* inputs (x for op N has ncols entries) */
    const double *ref_n, *ref_t;         /* alpha = 1, beta = 0 */
    const double *ref2_n, *ref2_t;       /* alpha = 1.5, beta = -0.5, y0 */
} cb_problem;

typedef struct {
    int ok;
    cudaStream_t stream;
    cusparseHandle_t h;
    cudaEvent_t e0, e1;
} cb_cusp;

/* cuSPARSE on device 0: a non-blocking stream, a handle on it, two events;
 * C->ok = 1. Returns cuSPARSE's version (major * 1000 + minor * 100 +
 * patch). cb_cusp_close releases them. */
int cb_cusp_open(cb_cusp *C);
void cb_cusp_close(cb_cusp *C);
/* A new context on CUDA device 0 (*info its description): 0, or 3 where
 * there is none ("nothing to measure" printed, no context left). */
int cb_cuda_context(hisp_context *ctx, hisp_device_info *info);
/* Exits with status 3 and the context's last error when s fails. */
void cb_hk(hisp_context ctx, hisp_status s, const char *what);
/* Entry i of an f32/f64 array as a double; store v there. */
double cb_at(hisp_type t, const void *a, int64_t i);
void cb_put(hisp_type t, void *a, int64_t i, double v);
/* ref = alpha*op(A)*x + beta*y0 in double (beta == 0: y0 not read). */
void cb_reference(const cb_csr *A, hisp_op op, double alpha, const void *x, double beta,
                  const void *y0, double *ref);
/* ||y - ref|| / ||ref|| (2-norms; NaN anywhere gives NaN). */
double cb_rel_err(hisp_type t, const void *y, const double *ref, int64_t n);
uint64_t cb_rng_next(uint64_t *s);
double cb_rng_uniform(uint64_t *s); /* [-1, 1) */
void *cb_random_array(hisp_type t, int64_t n, uint64_t *seed);
void cb_nan_fill(hisp_type t, void *a, int64_t n);
/* Times op on the context's backend with P->M (hisp_spmv_timed: device
 * events), y starting as NaN with beta = 0; errors against P's references;
 * err2 (when not NULL) from one more run with alpha 1.5, beta -0.5. */
void cb_hisp_run(hisp_context ctx, const cb_problem *P, hisp_op op, int warmup, int repeat,
                 double *ms, double *err, double *err2);
/* cusparseSpMV with alg and op, alpha = 1, beta = 0, CUDA events. */
void cb_cusparse_run(cb_cusp *C, const cb_problem *P, cusparseOperation_t opA,
                     cusparseSpMVAlg_t alg, int warmup, int repeat, double *ms, double *err);
/* The same with the wall time of each run (host clock around the call and a
 * stream synchronize) in wall[repeat]. */
void cb_cusparse_run_wall(cb_cusp *C, const cb_problem *P, cusparseOperation_t opA,
                          cusparseSpMVAlg_t alg, int warmup, int repeat, double *ms, double *wall,
                          double *err);
/* The first OpenCL GPU (want_gpu) or CPU device, its name; -1 if none. */
int cb_find_opencl(hisp_context ctx, int want_gpu, char *name, size_t len);
/* Appends a result row (CSR byte model) and prints it. */
void cb_add(bench_results *rs, const char *matrix, hisp_type t, const char *op, const char *impl,
            const char *dev, const cb_csr *A, const double *ms, int rep, double err,
            double copy_bw);
const bench_result *cb_find(const bench_results *rs, const char *m, const char *p, const char *op,
                            const char *impl);
double cb_med(const bench_result *r); /* median ms, NaN for NULL */

/* One suite matrix generated on ctx's reference backend, with random
 * inputs and double references: P.ref_* for alpha 1, beta 0; P.ref2_* for
 * alpha 1.5, beta -0.5 and P.y0_*. P.A points into c. */
typedef struct {
    cb_csr A;
    cb_problem P;
} cb_case;
void cb_case_make(hisp_context ctx, const bench_matrix_def *def, hisp_type t, uint64_t seed,
                  cb_case *c);
void cb_case_free(cb_case *c);

#endif
