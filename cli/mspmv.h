/* hisp mspmv: options and setup shared by the one-process command
 * (cmd_mspmv.c, mspmv_setup.c, mspmv_report.c) and its MPI form in hisp-mpi
 * (cli/mpi/mspmv_mpi.c). */
#ifndef HISP_CLI_MSPMV_H
#define HISP_CLI_MSPMV_H

#include "cli.h"

typedef struct {
    const char *path;   /* FILE or gen:KIND[:N[:SEED]], or NULL with gen */
    bool gen;           /* --gen KIND */
    hisp_gen_params gp; /* its parameters */
    hisp_partition_kind kind;
    hisp_backend_kind backend; /* AUTO resolved by mspmv_devices */
    int devices;               /* 0 = all */
    int device;                /* --device I: every part on device I; -1: parts cycle over all */
    hisp_type type;
    bool type_given; /* --type: else the input's */
    hisp_op op;
    double alpha, beta;
    const char *xpath, *ypath, *out;
    int repeat, warmup;
    bool json, check, mpi, no_numa;
    bool hisparse;   /* --format hisparse */
    bool subdevices; /* --subdevices */
    bool cusparse;   /* --kernel cusparse */
    bool device_ptr; /* --device-ptr (p*-opt) */
    bool resident;   /* --resident: x and y on the first device (hisp_mspmv_vec) */
    bool host_merge; /* --host-merge */
    bool dist;       /* --distributed: x replicated, y split by rows (hisp_mspmv_dist) */
    bool align;      /* --align (HISP_MPLAN_ALIGN) */
    double row_cost; /* --row-cost W, or the fitted one */
    bool fit;        /* --row-cost auto */
} mspmv_opts;

/* What "transfers" of hisp mspmv covers: the plan's per-device contexts
 * are not reachable through the public API. */
#define MSPMV_XFER_COVERS                                                                          \
    "the caller's contexts only (the vectors' device with --resident, rank 0's with --mpi); the "  \
    "plan's per-device contexts (parts, x and partial results) are not visible"

/* The device list of a plan: `devices` entries cycling over the backend's
 * devices (AUTO: CUDA, then OpenCL, then the reference backend, the first
 * with a device). *shared is set when entries repeat a device. Prints on
 * failure and returns the exit code. */
int mspmv_devices(hisp_context ctx, mspmv_opts *o, hisp_device_ref **refs, int *n, bool *shared);
/* hisp_mplan_create flags of the options. */
unsigned mspmv_flags(const mspmv_opts *o);
/* Reads or generates the matrix; prints on failure. */
int mspmv_matrix(hisp_context ctx, const mspmv_opts *o, hisp_matrix *A);
/* x of length n: --x file or x_j = 1/(j+1). */
int mspmv_x(hisp_context ctx, const mspmv_opts *o, int64_t n, void **x);
/* A vector of length n from a Matrix Market file (path NULL: x_j = 1/(j+1)). */
int mspmv_vector(hisp_context ctx, const mspmv_opts *o, const char *path, int64_t n,
                 const char *what, void **x);
/* Reference result y = alpha*op(A)*x + beta*y0 (y0 NULL: zeros) on ctx's
 * reference backend; *rel the relative 2-norm error of y against it. */
int mspmv_check(hisp_context ctx, hisp_matrix A, const mspmv_opts *o, const void *x, const void *y0,
                const void *y, int64_t m, double *rel);
int mspmv_write_y(hisp_context ctx, const mspmv_opts *o, const void *y, int64_t m);
double mspmv_median(double *v, int n);
/* Pieces of both reports (mspmv_report.c): --check's tolerance for the
 * matrix's type, the matrix line, the check line, the JSON object's first
 * members, and the verdict (a warning and CLI_CHECK above the tolerance). */
double mspmv_tolerance(hisp_type t);
void mspmv_print_matrix(const mspmv_opts *o, const hisp_matrix_info *mi);
void mspmv_print_check(const mspmv_opts *o, double rel, double tol);
void mspmv_json_head(cli_json *j, const mspmv_opts *o);
int mspmv_verdict(const mspmv_opts *o, double rel, double tol);
/* The report of a run (mspmv_report.c): the table, or the --json object;
 * dev_ms: each device's kernel time, rel and tol: --check's error and bound. */
void mspmv_print_table(const mspmv_opts *o, const hisp_matrix_info *mi,
                       const hisp_mplan_breakdown *bd, bool shared, const double *dev_ms,
                       double rel, double tol, const hisp_transfer_stats *xfer);
void mspmv_print_json(const mspmv_opts *o, const hisp_matrix_info *mi,
                      const hisp_mplan_breakdown *bd, bool shared, const double *dev_ms, double rel,
                      double tol, const hisp_transfer_stats *xfer);

#ifdef HISP_CLI_MPI
/* The --mpi run (hisp-mpi only). */
int mspmv_mpi(mspmv_opts *o, int argc, char **argv);
#endif

#endif
