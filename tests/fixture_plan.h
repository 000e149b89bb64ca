/* Multi-device plans over one target, and runs over MPI ranks
 * (tests/fixture_plan.c): the suites msrep and solver_dist. */
#ifndef HISP_FIXTURE_PLAN_H
#define HISP_FIXTURE_PLAN_H

#include "testutil.h"

#include <stddef.h>

/* Target t's device, listed 8 times for plans of up to 8 parts, with a
 * context on the default backend (a plan places its parts itself). */
typedef struct {
    const test_target *t; /* kind, device, label */
    hisp_device_info info;
    hisp_device_ref refs[8];
    hisp_context ctx;
} test_plan_fx;

test_plan_fx test_plan_fx_make(int target);

/* A real scalar argument (hisp_mspmv's alpha and beta) of type f32 or f64. */
typedef struct {
    union {
        float f;
        double d;
    } v;
} test_real_arg;
test_real_arg test_real_of(hisp_type t, double v);

/* hisp-mpi beside the hisp of this build, when it and mpirun are there
 * (else NULL). */
const char *test_mpi_bin(void);
/* Runs "mpirun -np NP ARGS" (ARGS formatted like printf: the program and
 * its arguments) as root where need be, on the shared-memory transports,
 * without LeakSanitizer (OpenMPI's components leak by design), stopped
 * after 300 s; stdout and stderr go to out (cap bytes). Returns the exit
 * status, -1 when the run did not exit normally. */
int test_mpirun(char *out, size_t cap, int np, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
