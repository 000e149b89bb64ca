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
    K_COUNT
};

/* One call, described. */
typedef struct {
    const char *op;
    int k;  /* K_*: the (stage-1) kernel */
    int nv; /* vectors, in the kernel's order */
    hisp_vector v[4];
    const char *vn[4];
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

/* Whether the context's backend runs the kernels (else the host path). */
HISPI_LOCAL bool hispi_vec_has_kernels(hisp_context ctx);
/* The call on the device, after check(). */
HISPI_LOCAL hisp_status hispi_vec_run_dev(const vcall *c);

#endif
