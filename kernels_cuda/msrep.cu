/* MSREP device-side merge (issue 7): y = a*x + b*y over a range, the one
 * kernel the merges on the result's GPU need (row segments with beta, shared
 * boundary rows, sums of partial vectors). Grid-stride, 64-bit indices. */
#include "cuda/cuda_msrep.h"

template <typename T>
__global__ void axpby(int64_t n, T a, const T *__restrict__ x, T b, T *__restrict__ y)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        T v = x ? a * x[i] : T(0);
        if (b != T(0)) v += b * y[i]; /* b == 0: y is not read (NaN does not spread) */
        y[i] = v;
    }
}

extern "C" cudaError_t hisp_cuda_launch_axpby(int f64, int64_t n, double a, const void *x, double b,
                                              void *y, cudaStream_t stream)
{
    if (n <= 0) return cudaSuccess;
    int64_t blocks = (n + 255) / 256;
    if (blocks > 65536) blocks = 65536;
    if (f64)
        axpby<double><<<(unsigned)blocks, 256, 0, stream>>>(n, a, static_cast<const double *>(x), b,
                                                            static_cast<double *>(y));
    else
        axpby<float><<<(unsigned)blocks, 256, 0, stream>>>(
            n, (float)a, static_cast<const float *>(x), (float)b, static_cast<float *>(y));
    return cudaGetLastError();
}

/* p*-opt: a part's local row pointers from its slice of the global ones. */
template <typename I>
__global__ void local_ptr(const int64_t *__restrict__ g, int64_t n, int64_t base, int64_t nnz,
                          I *__restrict__ l)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t v = g[i];
        v = v < base ? base : v > base + nnz ? base + nnz : v;
        l[i] = (I)(v - base);
    }
}

extern "C" cudaError_t hisp_cuda_launch_local_ptr(const int64_t *g, int64_t n, int64_t base,
                                                  int64_t nnz, int wide, void *l,
                                                  cudaStream_t stream)
{
    if (n <= 0) return cudaSuccess;
    int64_t blocks = (n + 255) / 256;
    if (blocks > 65536) blocks = 65536;
    if (wide)
        local_ptr<int64_t>
            <<<(unsigned)blocks, 256, 0, stream>>>(g, n, base, nnz, static_cast<int64_t *>(l));
    else
        local_ptr<int32_t>
            <<<(unsigned)blocks, 256, 0, stream>>>(g, n, base, nnz, static_cast<int32_t *>(l));
    return cudaGetLastError();
}
