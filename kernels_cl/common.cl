/* Prelude of every hisp OpenCL program: the backend passes it to
 * clCreateProgramWithSource before the program's own source.
 *
 * Every program is built with VALUE_T float | double, IS_DOUBLE 0 | 1 and
 * ATOM64 (1 when cl_khr_int64_base_atomics is available); NV_ASM >= 2 (the
 * block family on NVIDIA) selects the hardware's float atomics. */
#if IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#if ATOM64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#endif

typedef VALUE_T real;

/* Atomic *p += v. HAVE_ATOMIC_ADD is defined where the device can do it:
 * OpenCL 1.2 (and PoCL 3.1) have no float atomics, so it is a compare-
 * exchange loop on the bit pattern (64-bit ones need ATOM64). */
#if defined(NV_ASM) && NV_ASM >= 2
/* NVIDIA: red.global.add (sm_60+) */
void atomic_add_real(__global real *p, real v)
{
#if IS_DOUBLE
    asm volatile("red.global.add.f64 [%0], %1;" ::"l"(p), "d"(v) : "memory");
#else
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
#endif
}
#define HAVE_ATOMIC_ADD 1
#elif IS_DOUBLE
#if ATOM64
void atomic_add_real(volatile __global real *p, real v)
{
    volatile __global ulong *u = (volatile __global ulong *)p;
    ulong old = *u, seen;
    for (;;) {
        seen = atom_cmpxchg(u, old, as_ulong(as_double(old) + v));
        if (seen == old) break;
        old = seen;
    }
}
#define HAVE_ATOMIC_ADD 1
#endif
#else
void atomic_add_real(volatile __global real *p, real v)
{
    volatile __global uint *u = (volatile __global uint *)p;
    uint old = *u, seen;
    for (;;) {
        seen = atomic_cmpxchg(u, old, as_uint(as_float(old) + v));
        if (seen == old) break;
        old = seen;
    }
}
#define HAVE_ATOMIC_ADD 1
#endif
