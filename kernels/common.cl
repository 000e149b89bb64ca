/* The portable prelude of every run-time program in kernels/, on both
 * backends: OpenCL passes it to clCreateProgramWithSource before the
 * program's source (backends/opencl/cl_program.c); CUDA puts it before the
 * source it gives NVRTC (backends/cuda/cuda_kern.c). Which programs CUDA
 * compiles too is the cuda column of HISPI_PROGRAMS (core/backend/backend.h):
 * compound_spmv.cl, hisparse_add.cl, vector.cl, sell_spmv.cl, spgemm.cl, scan.cl,
 * amg.cl; csr_spmv.cl, csr_block.cl,
 * hisparse_spmv.cl and msrep.cl are OpenCL only (CUDA runs kernels_cuda/).
 *
 * Every program is built with VALUE_T float | double, IS_DOUBLE 0 | 1 and
 * ATOM64 (1 when cl_khr_int64_base_atomics is available); NV_ASM >= 2 (the
 * block family on NVIDIA) selects the hardware's float atomics.
 *
 * The names it gives both languages:
 *   real, cs_t        the scalar (VALUE_T)
 *   i64, u64, u32, u16, u8   fixed-width integers
 *   GLOBAL            the global-memory qualifier of a pointer
 *   LOCAL_DECL(t, n)  a work-group (shared memory) array or variable
 *   LID               the work-item's index in its work-group (int)
 *   BARRIER()         the work-group barrier (local memory)
 *   ONE(name)         `#if ONE(name)` around a kernel: 1 where it is built. The
 *                     OpenCL backend builds a program holding such guards one
 *                     kernel at a time (-DONE_KERNEL=1 -DONLY_<name>=1), so a
 *                     first use compiles only the kernels it runs; elsewhere
 *                     every kernel is built. */
#define ONE(name) (!ONE_KERNEL || ONLY_##name)
#if defined(__CUDACC__)
/* ---- CUDA (NVRTC) ---- */
typedef VALUE_T real;
typedef long long i64;
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;
#define GLOBAL
#define LOCAL_DECL(type, name) __shared__ type name
#define LID ((int)threadIdx.x)
#define BARRIER() __syncthreads()
#else
/* ---- OpenCL C ---- */
#if IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#if ATOM64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#endif

typedef VALUE_T real;
typedef long i64;
typedef ulong u64;
typedef uint u32;
typedef ushort u16;
typedef uchar u8;
#define GLOBAL __global
#define LOCAL_DECL(type, name) __local type name
#define LID ((int)get_local_id(0))
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)

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
#endif
typedef real cs_t;
