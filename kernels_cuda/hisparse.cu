/* HiSparse SpMV on CUDA, the host-launched kernels (whole-program module):
 * the begin kernel and the node kernels the host-polled controller
 * launches. The node kernels are in hisparse_nodes.cuh; the device-side
 * controller is in hisparse_cdp.cu. */
#include "hisparse_nodes.cuh"

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

} // namespace

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
