/* MSREP device-side merge on CUDA: copies between the instances' buffers
 * (cudaMemcpyPeerAsync; peer access enabled once per pair of devices where
 * cudaDeviceCanAccessPeer allows it, else the driver stages the copy through
 * the host) and the axpby kernel of kernels_cuda/msrep.cu. */
#include "cuda_err.h"
#include "cuda_hisparse.h"
#include "cuda_msrep.h"

#include <pthread.h>
#include <stdatomic.h>

#define PEER_MAX 64
/* 0: not tried, 1: enabled, 2: not possible (pairs of devices, one process) */
static _Atomic int peer_state[PEER_MAX][PEER_MAX];
static pthread_mutex_t peer_mu = PTHREAD_MUTEX_INITIALIZER;

/* Let `from` access `to`'s memory where the hardware allows it. Failure to
 * enable is not an error: cudaMemcpyPeerAsync then stages through the
 * host. */
static void peer_enable(int from, int to)
{
    if (from == to || from < 0 || to < 0 || from >= PEER_MAX || to >= PEER_MAX) return;
    if (atomic_load(&peer_state[from][to])) return;
    pthread_mutex_lock(&peer_mu);
    if (!atomic_load(&peer_state[from][to])) {
        int can = 0, st = 2;
        if (cudaDeviceCanAccessPeer(&can, from, to) == cudaSuccess && can &&
            cudaSetDevice(from) == cudaSuccess) {
            cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
            if (e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled) st = 1;
        }
        (void)cudaGetLastError();
        hispi_debug("cuda: peer access %d -> %d %s", from, to,
                    st == 1 ? "enabled" : "not possible");
        atomic_store(&peer_state[from][to], st);
    }
    pthread_mutex_unlock(&peer_mu);
}

hisp_status hisp_cuda_peer_copy(hisp_context ctx, void *q, void *dst_be, void *dst, size_t dst_off,
                                void *src_be, const void *src, size_t src_off, size_t bytes)
{
    int dd = 0, sd = 0, qd = 0;
    cudaStream_t ds, ss, qs;
    hisp_cuda_be_stream(dst_be, &dd, &ds);
    hisp_cuda_be_stream(src_be, &sd, &ss);
    hisp_cuda_be_stream(q, &qd, &qs);
    if (!bytes) return HISP_SUCCESS;
    peer_enable(sd, dd);
    peer_enable(dd, sd);
    cudaError_t e = cudaSetDevice(qd);
    if (e == cudaSuccess)
        e = dd == sd ? cudaMemcpyAsync((char *)dst + dst_off, (const char *)src + src_off, bytes,
                                       cudaMemcpyDeviceToDevice, qs)
                     : cudaMemcpyPeerAsync((char *)dst + dst_off, dd, (const char *)src + src_off,
                                           sd, bytes, qs);
    if (e != cudaSuccess) return hisp_cuda_fail(ctx, e, "peer copy");
    return HISP_SUCCESS;
}

hisp_status hisp_cuda_axpby(hisp_context ctx, void *be, hisp_type t, int64_t n, double a,
                            const void *x, int64_t xoff, double b, void *y, int64_t yoff)
{
    if (t != HISP_F32 && t != HISP_F64)
        return hispi_fail(ctx, HISP_ERR_UNSUPPORTED, "axpby on %s entries", hisp_type_name(t));
    int dev = 0;
    cudaStream_t st;
    hisp_cuda_be_stream(be, &dev, &st);
    size_t es = hisp_type_size(t);
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess)
        e = hisp_cuda_launch_axpby(t == HISP_F64, n, a,
                                   x ? (const char *)x + (size_t)xoff * es : NULL, b,
                                   (char *)y + (size_t)yoff * es, st);
    if (e != cudaSuccess) return hisp_cuda_fail(ctx, e, "axpby kernel launch");
    return HISP_SUCCESS;
}
