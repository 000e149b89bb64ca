/* HiSparse SpMV on CUDA, the host-launched kernels (whole-program module):
 * the begin kernel and the node kernels the host-polled controller
 * launches. The node kernels are in hisparse_nodes.cuh; the device-side
 * controller is in hisparse_cdp.cu. */
#include "hisparse_nodes.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace
{

/* y = beta*y, and block 0 resets the queues and puts the root in its queue. */
template <typename T> __global__ void hs_begin(hisp_cuda_hs P, long long n, T beta)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    T *y = static_cast<T *>(P.y);
    if (i < n) y[i] = beta == (T)0 ? (T)0 : beta * y[i];
    if (blockIdx.x) return;
    hisp_cuda_hs_ctl *c = static_cast<hisp_cuda_hs_ctl *>(P.ctl);
    unsigned q = threadIdx.x;
    if (q < HISP_CUDA_HS_QUEUES) {
        P.tails[q] = (int)q == P.root_queue && P.root ? 1u : 0u;
        c->head[q] = c->nodes[q] = c->launches[q] = 0;
    }
    if (q == 0) {
        c->rounds = 0;
        entry_t *e = static_cast<entry_t *>(P.entries) + P.base[P.root_queue];
        e->ref = P.root;
        e->row = e->col = e->depth = e->pad = 0;
    }
}

__global__ void hs_sort_keys(const entry_t *e, unsigned n, int tr, unsigned long long *key,
                             unsigned *idx)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long r = e[i].row, c = e[i].col;
    key[i] = tr ? c << 32 | r : r << 32 | c;
    idx[i] = i;
}

__global__ void hs_gather(const entry_t *in, const unsigned *idx, unsigned n, entry_t *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[idx[i]];
}

} // namespace

extern "C" cudaError_t hisp_cuda_hs_sort_entries(void *entries, uint64_t n, int tr,
                                                 cudaStream_t stream)
{
    if (n < 2) return cudaSuccess;
    if (n >= (1ull << 31)) return cudaErrorInvalidValue;
    int m = (int)n;
    unsigned long long *k0 = nullptr, *k1 = nullptr;
    unsigned *i0 = nullptr, *i1 = nullptr;
    entry_t *copy = nullptr;
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    cudaError_t e =
        cub::DeviceRadixSort::SortPairs(nullptr, tmp_bytes, k0, k1, i0, i1, m, 0, 64, stream);
    if (e == cudaSuccess) e = cudaMalloc(&k0, 2 * n * sizeof *k0);
    if (e == cudaSuccess) e = cudaMalloc(&i0, 2 * n * sizeof *i0);
    if (e == cudaSuccess) e = cudaMalloc(&copy, n * sizeof *copy);
    if (e == cudaSuccess) e = cudaMalloc(&tmp, tmp_bytes ? tmp_bytes : 1);
    unsigned blocks = (unsigned)((n + 255) / 256);
    entry_t *ent = static_cast<entry_t *>(entries);
    if (e == cudaSuccess) {
        k1 = k0 + n;
        i1 = i0 + n;
        hs_sort_keys<<<blocks, 256, 0, stream>>>(ent, (unsigned)n, tr, k0, i0);
        e = cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, k0, k1, i0, i1, m, 0, 64, stream);
    }
    if (e == cudaSuccess) {
        hs_gather<<<blocks, 256, 0, stream>>>(ent, i1, (unsigned)n, copy);
        e = cudaMemcpyAsync(ent, copy, n * sizeof *copy, cudaMemcpyDeviceToDevice, stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream); /* before the frees */
    void *bufs[] = {k0, i0, copy, tmp};
    for (void *b : bufs)
        if (b) (void)cudaFree(b);
    return e != cudaSuccess ? e : cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_begin(const hisp_cuda_hs *P, int64_t n, double beta,
                                          cudaStream_t stream)
{
    unsigned blocks = n > 0 ? (unsigned)((n + 255) / 256) : 1;
    if (P->f64)
        hs_begin<double><<<blocks, 256, 0, stream>>>(*P, n, beta);
    else
        hs_begin<float><<<blocks, 256, 0, stream>>>(*P, n, (float)beta);
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_node(const hisp_cuda_hs *P, int q, uint64_t first,
                                         uint64_t count, cudaStream_t stream)
{
    if (P->f64)
        launch_node<double>(*P, q, first, count, stream);
    else
        launch_node<float>(*P, q, first, count, stream);
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_cdp_prepare(void);

extern "C" cudaError_t hisp_cuda_hs_prepare(int cdp)
{
    cudaError_t a = prefer_shared_carveout(), b = cdp ? hisp_cuda_hs_cdp_prepare() : cudaSuccess;
    return a != cudaSuccess ? a : b;
}
