/* The naive atomic SpMV^T for the HiSparse benchmark: one thread per row
 * of a CSR matrix scatters a_ij * x_i into y_j with atomicAdd. The baseline
 * the HiSparse paper compares its transposed SpMV with. */
#include <cuda_runtime.h>
#include <stdint.h>

template <typename T>
__global__ void naive_t(int n, const int *rp, const int *ci, const T *v, const T *x, T *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T xi = x[i];
    for (int k = rp[i]; k < rp[i + 1]; k++)
        atomicAdd(&y[ci[k]], v[k] * xi);
}

/* y must be zeroed by the caller (part of the timed work there). */
extern "C" cudaError_t bench_naive_spmv_t(int f64, int nrows, const int *rp, const int *ci,
                                          const void *v, const void *x, void *y, cudaStream_t s)
{
    unsigned blocks = (unsigned)((nrows + 255) / 256);
    if (!nrows) return cudaSuccess;
    if (f64)
        naive_t<double><<<blocks, 256, 0, s>>>(nrows, rp, ci, (const double *)v, (const double *)x,
                                               (double *)y);
    else
        naive_t<float>
            <<<blocks, 256, 0, s>>>(nrows, rp, ci, (const float *)v, (const float *)x, (float *)y);
    return cudaGetLastError();
}
