/* Private declarations of the OpenCL backend (OpenCL 1.2 host API, ICD
 * loader only). */
#ifndef HISP_CL_BACKEND_H
#define HISP_CL_BACKEND_H

#include "cl_dl.h" /* CL/cl.h, and every clFoo(...) through the loader opened at run time */

/* A built program, cached in the instance by (source, options). */
typedef struct hisp_cl_prog {
    struct hisp_cl_prog *next;
    const char *src; /* embedded source (static storage: compared by address) */
    char *options;
    cl_program program;
} hisp_cl_prog;

/* One opened device. */
typedef struct {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue; /* in order, profiling enabled (the caller's: maybe not) */
    int user_queue;         /* queue (and context) are the caller's (hisp_context_set_stream) */
    int is_gpu, is_cpu;
    int fp64;          /* double precision */
    int int64_atomics; /* cl_khr_int64_base_atomics (f64 transposed) */
    cl_uint compute_units;
    cl_ulong max_alloc;
    size_t max_wg;
    int host_timing;    /* marker events carry no timestamps: time on the host */
    unsigned vector_ls; /* work-group size of the vector kernels (power of 2) */
    size_t local_mem;   /* CL_DEVICE_LOCAL_MEM_SIZE */
    int nv_asm;         /* inline PTX level of csr_block.cl: 2 on NVIDIA's platform,
                           lowered when a build with it fails */
    int nv_opts;        /* cl_nv_compiler_options (-cl-nv-maxrregcount) */
    char name[256], driver[128], platform_name[256];
    hisp_cl_prog *progs;
    cl_device_id sub; /* a sub-device this instance created (MSREP), or NULL */
} hisp_cl_be;

/* Discovery: the flat device list (GPUs first, then others, each in
 * platform/device order). *n = 0 without failing when there is no platform;
 * the reason is noted on the context. */
HISPI_LOCAL hisp_status hisp_cl_devices(hisp_context ctx, cl_device_id **devs, int *n);

/* Record an OpenCL failure of `call` with the status it maps to. */
HISPI_LOCAL hisp_status hisp_cl_fail(hisp_context ctx, cl_int err, const char *call);
HISPI_LOCAL const char *hisp_cl_error_name(cl_int err);

/* Device properties as strings (always NUL-terminated; "" on failure). */
HISPI_LOCAL void hisp_cl_device_string(cl_device_id d, cl_device_info what, char *out, size_t size);
HISPI_LOCAL int hisp_cl_has_extension(cl_device_id d, const char *ext);

/* A kernel from the embedded source `src` built with `options` (cached in
 * the instance; the returned kernel is the caller's to release). */
HISPI_LOCAL hisp_status hisp_cl_kernel(hisp_context ctx, hisp_cl_be *be, const char *src,
                                       const char *options, const char *name, cl_kernel *k);
HISPI_LOCAL void hisp_cl_programs_release(hisp_cl_be *be);

/* Ops implemented in the buffer and SpMV files. */
HISPI_LOCAL hisp_status hisp_cl_buf_alloc(hisp_context ctx, void *be, size_t bytes, void **buf);
HISPI_LOCAL void hisp_cl_buf_free(void *be, void *buf);
HISPI_LOCAL hisp_status hisp_cl_buf_write(hisp_context ctx, void *be, void *buf, size_t offset,
                                          const void *src, size_t bytes);
HISPI_LOCAL hisp_status hisp_cl_buf_read(hisp_context ctx, void *be, const void *buf, size_t offset,
                                         void *dst, size_t bytes);
/* buf_read of control words (scheduler counters): counted as HISPI_CONTROL. */
HISPI_LOCAL hisp_status hisp_cl_ctl_read(hisp_context ctx, void *be, const void *buf, size_t offset,
                                         void *dst, size_t bytes);
HISPI_LOCAL hisp_status hisp_cl_buf_copy(hisp_context ctx, void *be, void *dst, const void *src,
                                         size_t bytes);
HISPI_LOCAL hisp_status hisp_cl_mark_create(hisp_context ctx, void *be, void **mark);
HISPI_LOCAL hisp_status hisp_cl_mark_record(hisp_context ctx, void *be, void *mark);
HISPI_LOCAL hisp_status hisp_cl_mark_elapsed(hisp_context ctx, void *be, void *start, void *stop,
                                             double *ms);
HISPI_LOCAL void hisp_cl_mark_destroy(void *be, void *mark);

HISPI_LOCAL hisp_status hisp_cl_csr_upload(hisp_context ctx, void *be, const hispi_csr_view *A,
                                           void **dev);
HISPI_LOCAL hisp_status hisp_cl_csr_upload_opts(hisp_context ctx, void *be, const hispi_csr_view *A,
                                                const hispi_csr_opts *o, void **dev);
HISPI_LOCAL void hisp_cl_csr_free(void *be, void *dev);
/* The device copy's arrays (csr_arrays). */
HISPI_LOCAL hisp_status hisp_cl_csr_arrays(hisp_context ctx, void *be, void *dev,
                                           hispi_csr_ext *ext);
HISPI_LOCAL hisp_status hisp_cl_csr_wrap(hisp_context ctx, void *be, const hispi_csr_view *A,
                                         const hispi_csr_ext *ext, void **dev);
HISPI_LOCAL hisp_status hisp_cl_csr_spmv(hisp_context ctx, void *be, void *dev, hisp_op op,
                                         double alpha, const void *x, double beta, void *y);
HISPI_LOCAL hisp_status hisp_cl_csr_spmm(hisp_context ctx, void *be, void *dev, hisp_op op,
                                         double alpha, const void *x, int xrow, double beta,
                                         void *y, int yrow, int64_t k);

/* HiSparse (cl_hisparse.c). */
HISPI_LOCAL hisp_status hisp_cl_hs_upload(hisp_context ctx, void *be, const hispi_hs_view *A,
                                          void **dev);
HISPI_LOCAL void hisp_cl_hs_free(void *be, void *dev);
HISPI_LOCAL hisp_status hisp_cl_hs_spmv(hisp_context ctx, void *be, void *dev,
                                        const hispi_sched_args *a, const void *x, void *y,
                                        hisp_sched_counts *counts);

/* Run-time kernels of the compound SpMV variants (cl_kern.c). */
HISPI_LOCAL hisp_status hisp_cl_kern_caps(hisp_context ctx, void *be, hispi_kcaps *caps);
HISPI_LOCAL hisp_status hisp_cl_kern_get(hisp_context ctx, void *be, int prog, const char *opts,
                                         const char *name, void **k);
HISPI_LOCAL void hisp_cl_kern_free(void *be, void *k);
HISPI_LOCAL hisp_status hisp_cl_kern_launch(hisp_context ctx, void *be, void *k,
                                            const hispi_karg *args, int nargs, size_t groups,
                                            size_t group_size);
HISPI_LOCAL hisp_status hisp_cl_buf_zero(hisp_context ctx, void *be, void *buf, size_t off,
                                         size_t bytes);

#endif
