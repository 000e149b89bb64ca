/* HiSparse SpMV on CUDA, the device-side controller (relocatable module,
 * linked with cudadevrt): one single-thread grid per round, node kernels
 * launched fire-and-forget, the next round by tail launch (the rules in
 * hisparse_nodes.cuh and DESIGN.md). */
#include "hisparse_nodes.cuh"

namespace
{

template <typename T> __global__ void hs_controller(hisp_cuda_hs P)
{
    hisp_cuda_hs_ctl *c = static_cast<hisp_cuda_hs_ctl *>(P.ctl);
    unsigned long long pending[HISP_CUDA_HS_QUEUES];
    bool launch[HISP_CUDA_HS_QUEUES];
    int n = 0;
    for (int q = 0; q < P.nq; q++) {
        pending[q] = (unsigned long long)__ldcg(&P.tails[q]) - __ldcg(&c->head[q]);
        launch[q] = pending[q] > 0 && pending[q] >= P.threshold[q];
        n += launch[q];
    }
    if (!n)
        for (int q = 0; q < P.nq; q++) {
            launch[q] = pending[q] > 0;
            n += launch[q];
        }
    if (!n) return; /* every queue empty: done */
    c->rounds = __ldcg(&c->rounds) + 1;
    bool more = false; /* can the next round find work? */
    for (int q = 0; q < P.nq; q++) {
        more = more || (pending[q] > 0 && !launch[q]) || (launch[q] && P.fn[q] <= 1);
        if (!launch[q]) continue;
        unsigned long long head = __ldcg(&c->head[q]);
        launch_node<T>(P, q, P.base[q] + head, pending[q], cudaStreamFireAndForget);
        c->head[q] = head + pending[q];
        c->nodes[q] = __ldcg(&c->nodes[q]) + pending[q];
        c->launches[q] = __ldcg(&c->launches[q]) + 1;
    }
    /* only inner nodes queue work: after a round of leaves alone, with no
     * queue held back, the next round would find nothing */
    if (more) hs_controller<T><<<1, 1, 0, cudaStreamTailLaunch>>>(P);
}

} // namespace

extern "C" cudaError_t hisp_cuda_hs_controller(const hisp_cuda_hs *P, cudaStream_t stream)
{
    if (P->f64)
        hs_controller<double><<<1, 1, 0, stream>>>(*P);
    else
        hs_controller<float><<<1, 1, 0, stream>>>(*P);
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_cdp_prepare(void)
{
    return prefer_shared_carveout();
}
