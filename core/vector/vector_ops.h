/* Vector algebra's internals (core/vector/): the kernels of
 * kernels/vector.cl and the description of one call, shared by the checks
 * and host path (vector_ops.c) and the device path (vector_dev.c). */
#ifndef HISP_VECTOR_OPS_H
#define HISP_VECTOR_OPS_H

#include "backend/backend.h"
#include "hispi.h"

enum {
    K_FILL,
    K_COPY,
    K_SCALE,
    K_AXPBY,
    K_AXPBYPCZ,
    K_MUL,
    K_DIV,
    K_DOT,
    K_NRM2,
    K_AXPBY_DOT,
    K_DOT2,
    K_DIV_DOT,
    K_SCALAR,
    K_REDUCE,
    K_SMUL,
    K_AXPBY2,
    K_AXPBY_DIV_DOT2,
    K_MDOT,
    K_REDUCE_N,
    K_BUPDATE,
    K_AXPBY_DOT2_ACC,
    K_COUNT
};

/* One call, described. */
typedef struct {
    const char *op;
    int k;  /* K_*: the (stage-1) kernel */
    int nv; /* vectors, in the kernel's order */
    hisp_vector v[6];
    const char *vn[6];
    unsigned out, read; /* bit i: v[i] is written / read */
    int ns;             /* scalars, in the kernel's order */
    const hisp_scalar *s[4];
    const char *sn[4];
    int nr; /* results */
    const hisp_result *r[2];
    const char *rn[2];
    int real_result; /* nrm2: one real of the component type */
    int hasw;        /* axpby_dot: the kernel's hasw argument */
    int64_t oi;      /* smul: the entry of v[0] written */
    /* filled by check() */
    hisp_context ctx;
    hisp_type t;
    int64_t n;
} vcall;

/* The build options of kernels/vector.cl for type t on a device as
 * vstate() describes it (the CUDA build compiles the GPU ones ahead:
 * tools/kernels_prebuild.c). */
HISPI_LOCAL void hispi_vector_kopts(char *opts, size_t size, hisp_type t, bool is_cpu, int ls,
                                    bool acc_double);
/* Whether the context's backend runs the kernels (else the host path). */
HISPI_LOCAL bool hispi_vec_has_kernels(hisp_context ctx);
/* The call on the device, after check(). */
HISPI_LOCAL hisp_status hispi_vec_run_dev(const vcall *c);

/* A basis on the device (vector_block.c): q columns of n entries of type t,
 * column c at entry off + c*stride of buf. */
typedef struct {
    hisp_context ctx;
    hisp_type t;
    int64_t n;
    void *buf;
    int64_t off, stride;
    int q;
} vblock;

/* out[oi + k*q + c] = dot(Q_c, R_k), k < nr (1 or 2; R[1] unused for 1). */
HISPI_LOCAL hisp_status hispi_vec_mdot_dev(const vblock *b, int nr, const hisp_vector *R,
                                           hisp_vector out, int64_t oi);
/* hispi_vector_bupdate on the device; coef: 2q+3 entries of the type. */
HISPI_LOCAL hisp_status hispi_vec_bupdate_dev(const vblock *b, hisp_vector y0, hisp_vector y1,
                                              const void *coef);

#endif
