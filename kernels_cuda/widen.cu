/* 32-bit row pointers widened to hisp's 64-bit ones (a cuSPARSE C made by
 * backends/cuda/cuda_spgemm.c). */
#include <cstdint>
#include <cuda_runtime.h>

__global__ static void widen(const int32_t *__restrict__ s, int64_t n, int64_t *__restrict__ d)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        d[i] = s[i];
}

extern "C" cudaError_t hisp_cuda_launch_widen(const int32_t *s, int64_t n, int64_t *d,
                                              cudaStream_t stream)
{
    if (n <= 0) return cudaSuccess;
    int64_t blocks = (n + 255) / 256;
    if (blocks > 65536) blocks = 65536;
    widen<<<(unsigned)blocks, 256, 0, stream>>>(s, n, d);
    return cudaGetLastError();
}
