/* HiSparse SpMV on CUDA: node kernels and the device-side controller of the
 * dynamic scheduler (core/hisparse_sched.h; docs/FORMAT.md for the bytes).
 *
 * Node kernels: a block of G threads takes G / tpn consecutive entries of
 * one queue, tpn threads per node. Inner nodes queue their children
 * (atomicAdd on the queue's fill counter; the slots were sized at upload,
 * each node is queued once per SpMV); leaves add alpha * a_ij * x_j into y
 * with atomicAdd (native float and double atomics).
 *
 * Controller (CDP2, CUDA 12+): no device-side synchronize exists, and a
 * child launched into cudaStreamFireAndForget need not start before its
 * parent ends. So a round is one single-thread grid: it reads the fill
 * counters, picks the queues (the rule of hispi_sched_pick), launches one
 * node kernel per picked queue (fire-and-forget), and launches itself into
 * cudaStreamTailLaunch, which runs after this grid and all its children have
 * finished; a round that finds every queue empty launches nothing and the
 * chain ends. Queue entries and counters written by another grid are read
 * with L1-bypassing loads (__ldcg), which DESIGN.md records as necessary
 * when grids overlap; here grid boundaries already order them, the loads
 * keep it safe if a variant ever overlaps rounds. */
#include "cuda/cuda_hisparse.h"

#include <cstdint>

namespace
{

constexpr int FEW = 32;

struct entry_t { /* hispi_sched_entry */
    unsigned long long ref;
    unsigned row, col, depth, pad;
};
static_assert(sizeof(entry_t) == 24, "entry layout");

__device__ __forceinline__ entry_t load_entry(const entry_t *p)
{
    entry_t e;
    e.ref = __ldcg(&p->ref);
    e.row = __ldcg(&p->row);
    e.col = __ldcg(&p->col);
    e.depth = __ldcg(&p->depth);
    e.pad = 0;
    return e;
}

__device__ __forceinline__ unsigned long long coo_payload(unsigned n, unsigned s)
{
    unsigned x = n == 1 ? 1 : n == 2 ? 2 : 4;
    unsigned np = (n + x - 1) / x * x;
    unsigned a = x * s < 16 ? x * s : 16;
    return (4 + 2 * np + a - 1) / a * a;
}

__device__ void push(const hisp_cuda_hs &P, unsigned long long c, unsigned row, unsigned col,
                     unsigned depth)
{
    int t = (int)(c & 15);
    int q;
    if (t == 1 || t == 5) {
        q = 3;
    } else {
        unsigned n = *reinterpret_cast<const unsigned *>(P.pool + (c & ~15ull));
        q = n <= 1 ? 0 : n <= FEW ? 1 : 2;
    }
    if (t >= 5) q += 4;
    unsigned slot = atomicAdd(&P.tails[q], 1u);
    entry_t *e = static_cast<entry_t *>(P.entries) + P.base[q] + slot;
    e->ref = c;
    e->row = row;
    e->col = col;
    e->depth = depth;
    e->pad = 0;
}

template <typename T> __device__ __forceinline__ bool nonzero_bits(T v);
template <> __device__ __forceinline__ bool nonzero_bits<float>(float v)
{
    return __float_as_uint(v) != 0;
}
template <> __device__ __forceinline__ bool nonzero_bits<double>(double v)
{
    return __double_as_longlong(v) != 0;
}

template <typename T>
__global__ void __launch_bounds__(256)
    hs_node(hisp_cuda_hs P, int q, unsigned long long first, unsigned long long count)
{
    const unsigned tpn = (unsigned)P.tpn[q];
    const unsigned per = blockDim.x / tpn;
    const unsigned long long node = (unsigned long long)blockIdx.x * per + threadIdx.x / tpn;
    const unsigned t = threadIdx.x % tpn;
    if (node >= count) return;
    const entry_t e = load_entry(static_cast<const entry_t *>(P.entries) + first + node);
    const unsigned char *nd = P.pool + (e.ref & ~15ull);
    const unsigned log2d = (unsigned)P.log2d, d = 1u << log2d;
    const unsigned sh = log2d * ((unsigned)P.depth - 1 - e.depth);
    const T *x = static_cast<const T *>(P.x);
    T *y = static_cast<T *>(P.y);
    const T alpha = (T)P.alpha;
    const bool tr = P.tr != 0;
    switch (P.fn[q]) {
    case 0: { /* inner COO */
        unsigned n = *reinterpret_cast<const unsigned *>(nd);
        const unsigned long long *pay =
            reinterpret_cast<const unsigned long long *>(nd + coo_payload(n, 8));
        for (unsigned k = t; k < n; k += tpn)
            push(P, pay[k], e.row + ((unsigned)nd[4 + 2 * k] << sh),
                 e.col + ((unsigned)nd[5 + 2 * k] << sh), e.depth + 1);
        break;
    }
    case 1: { /* inner dense */
        const unsigned long long *slot = reinterpret_cast<const unsigned long long *>(nd);
        for (unsigned s = t; s < d * d; s += tpn) {
            unsigned long long c = slot[s];
            if (c)
                push(P, c, e.row + ((s >> log2d) << sh), e.col + ((s & (d - 1)) << sh),
                     e.depth + 1);
        }
        break;
    }
    case 2: { /* leaf COO: a contiguous run per thread, one atomic per output */
        unsigned n = *reinterpret_cast<const unsigned *>(nd);
        const T *val = reinterpret_cast<const T *>(nd + coo_payload(n, sizeof(T)));
        unsigned chunk = (n + tpn - 1) / tpn;
        unsigned k = t * chunk, k1 = min(n, k + chunk);
        if (k >= k1) break;
        unsigned key = tr ? e.col + nd[5 + 2 * k] : e.row + nd[4 + 2 * k];
        T sum = 0;
        for (; k < k1; k++) {
            unsigned r = e.row + nd[4 + 2 * k], c = e.col + nd[5 + 2 * k];
            unsigned yi = tr ? c : r, xi = tr ? r : c;
            if (yi != key) {
                atomicAdd(&y[key], alpha * sum);
                sum = 0;
                key = yi;
            }
            sum += val[k] * x[xi];
        }
        atomicAdd(&y[key], alpha * sum);
        break;
    }
    default: { /* leaf dense: a row (transposed: a column) per thread */
        const T *val = reinterpret_cast<const T *>(nd);
        for (unsigned i = t; i < d; i += tpn) {
            T sum = 0;
            bool any = false;
            for (unsigned j = 0; j < d; j++) {
                T v = tr ? val[j * d + i] : val[i * d + j];
                if (nonzero_bits(v)) {
                    sum += v * x[(tr ? e.row : e.col) + j];
                    any = true;
                }
            }
            if (any) atomicAdd(&y[(tr ? e.col : e.row) + i], alpha * sum);
        }
    }
    }
}

template <typename T> __global__ void hs_scale(long long n, T beta, T *y)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = beta == (T)0 ? (T)0 : beta * y[i];
}

__global__ void hs_init(hisp_cuda_hs P)
{
    int q = threadIdx.x;
    hisp_cuda_hs_ctl *c = static_cast<hisp_cuda_hs_ctl *>(P.ctl);
    if (q < HISP_CUDA_HS_QUEUES) {
        P.tails[q] = q == P.root_queue ? 1u : 0u;
        c->head[q] = c->nodes[q] = c->launches[q] = 0;
    }
    if (q == 0) {
        c->rounds = 0;
        entry_t *e = static_cast<entry_t *>(P.entries) + P.base[P.root_queue];
        e->ref = P.root;
        e->row = e->col = e->depth = e->pad = 0;
    }
}

__device__ __forceinline__ dim3 grid_for(const hisp_cuda_hs &P, int q, unsigned long long count)
{
    unsigned per = (unsigned)(P.group[q] / P.tpn[q]);
    return dim3((unsigned)((count + per - 1) / per));
}

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
    for (int q = 0; q < P.nq; q++) {
        if (!launch[q]) continue;
        unsigned long long head = __ldcg(&c->head[q]);
        hs_node<T><<<grid_for(P, q, pending[q]), P.group[q], 0, cudaStreamFireAndForget>>>(
            P, q, P.base[q] + head, pending[q]);
        c->head[q] = head + pending[q];
        c->nodes[q] = __ldcg(&c->nodes[q]) + pending[q];
        c->launches[q] = __ldcg(&c->launches[q]) + 1;
    }
    hs_controller<T><<<1, 1, 0, cudaStreamTailLaunch>>>(P);
}

} // namespace

extern "C" cudaError_t hisp_cuda_hs_scale(int f64, int64_t n, double beta, void *y,
                                          cudaStream_t stream)
{
    if (n <= 0) return cudaSuccess;
    unsigned blocks = (unsigned)((n + 255) / 256);
    if (f64)
        hs_scale<double><<<blocks, 256, 0, stream>>>(n, beta, static_cast<double *>(y));
    else
        hs_scale<float><<<blocks, 256, 0, stream>>>(n, (float)beta, static_cast<float *>(y));
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_init(const hisp_cuda_hs *P, cudaStream_t stream)
{
    hs_init<<<1, HISP_CUDA_HS_QUEUES, 0, stream>>>(*P);
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_controller(const hisp_cuda_hs *P, cudaStream_t stream)
{
    if (P->f64)
        hs_controller<double><<<1, 1, 0, stream>>>(*P);
    else
        hs_controller<float><<<1, 1, 0, stream>>>(*P);
    return cudaGetLastError();
}

extern "C" cudaError_t hisp_cuda_hs_node(const hisp_cuda_hs *P, int q, uint64_t first,
                                         uint64_t count, cudaStream_t stream)
{
    unsigned per = (unsigned)(P->group[q] / P->tpn[q]);
    dim3 grid((unsigned)((count + per - 1) / per));
    if (P->f64)
        hs_node<double><<<grid, P->group[q], 0, stream>>>(*P, q, first, count);
    else
        hs_node<float><<<grid, P->group[q], 0, stream>>>(*P, q, first, count);
    return cudaGetLastError();
}
