/* Large copies between pageable host memory and the device through pinned
 * staging buffers that several host threads fill or drain, the DMA of one
 * buffer overlapping the copy into the next. A pageable cudaMemcpy stages
 * through one host thread, far below the link's bandwidth for large copies
 * such as the addition's pool uploads. */
#include "cuda_stage.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define STAGE_BUFS 3
#define STAGE_CHUNK ((size_t)32 << 20)
#define STAGE_PIECE ((size_t)1 << 20) /* a thread's share of a chunk at a time */

struct hisp_cuda_stage {
    void *buf[STAGE_BUFS];
    cudaEvent_t done[STAGE_BUFS];
};

void hisp_cuda_stage_free(hisp_cuda_stage *s)
{
    if (!s) return;
    for (int i = 0; i < STAGE_BUFS; i++) {
        if (s->done[i]) (void)cudaEventDestroy(s->done[i]);
        if (s->buf[i]) (void)cudaFreeHost(s->buf[i]);
    }
    (void)cudaGetLastError();
    free(s);
}

static hisp_cuda_stage *stage_new(void)
{
    hisp_cuda_stage *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    for (int i = 0; i < STAGE_BUFS; i++)
        if (cudaHostAlloc(&s->buf[i], STAGE_CHUNK, cudaHostAllocDefault) != cudaSuccess ||
            cudaEventCreateWithFlags(&s->done[i], cudaEventDisableTiming) != cudaSuccess) {
            hisp_cuda_stage_free(s);
            return NULL;
        }
    return s;
}

typedef struct {
    char *dst;
    const char *src;
    size_t bytes;
    atomic_size_t next;
} piece_job;

static void *piece_worker(void *arg)
{
    piece_job *j = arg;
    for (size_t o; (o = atomic_fetch_add(&j->next, STAGE_PIECE)) < j->bytes;)
        memcpy(j->dst + o, j->src + o, j->bytes - o < STAGE_PIECE ? j->bytes - o : STAGE_PIECE);
    return NULL;
}

static void copy_threads(void *dst, const void *src, size_t bytes, int threads)
{
    piece_job j = {.dst = dst, .src = src, .bytes = bytes};
    atomic_init(&j.next, 0);
    hispi_parallel(threads, piece_worker, &j);
}

/* The bytes of chunk i of a copy of `bytes`. */
static size_t chunk_bytes(size_t bytes, size_t i)
{
    size_t o = i * STAGE_CHUNK;
    return bytes - o < STAGE_CHUNK ? bytes - o : STAGE_CHUNK;
}

bool hisp_cuda_stage_wanted(size_t bytes)
{
    return bytes >= 2 * STAGE_CHUNK;
}

bool hisp_cuda_stage_copy(hisp_context ctx, hisp_cuda_stage **sp, cudaStream_t stream, void *dst,
                          const void *src, size_t bytes, bool to_device, cudaError_t *err)
{
    if (!*sp && !(*sp = stage_new())) {
        (void)cudaGetLastError();
        return false;
    }
    hisp_cuda_stage *s = *sp;
    int threads = hispi_threads(ctx, (double)bytes);
    if (threads > 8) threads = 8;
    const size_t chunks = (bytes + STAGE_CHUNK - 1) / STAGE_CHUNK;
    const char *in = src;
    char *out = dst;
    cudaError_t e = cudaSuccess;
    if (to_device) {
        for (size_t i = 0; i < chunks && e == cudaSuccess; i++) {
            const int b = (int)(i % STAGE_BUFS);
            const size_t o = i * STAGE_CHUNK, n = chunk_bytes(bytes, i);
            e = cudaEventSynchronize(s->done[b]); /* its last DMA has read it */
            if (e == cudaSuccess) copy_threads(s->buf[b], in + o, n, threads);
            if (e == cudaSuccess)
                e = cudaMemcpyAsync(out + o, s->buf[b], n, cudaMemcpyHostToDevice, stream);
            if (e == cudaSuccess) e = cudaEventRecord(s->done[b], stream);
        }
    } else {
        /* the DMA of the next chunks runs ahead of the copies out */
        size_t issued = 0;
        for (size_t i = 0; i < chunks && e == cudaSuccess; i++) {
            for (; issued < chunks && issued < i + STAGE_BUFS && e == cudaSuccess; issued++) {
                const int b = (int)(issued % STAGE_BUFS);
                const size_t o = issued * STAGE_CHUNK, n = chunk_bytes(bytes, issued);
                e = cudaMemcpyAsync(s->buf[b], in + o, n, cudaMemcpyDeviceToHost, stream);
                if (e == cudaSuccess) e = cudaEventRecord(s->done[b], stream);
            }
            const int b = (int)(i % STAGE_BUFS);
            const size_t o = i * STAGE_CHUNK, n = chunk_bytes(bytes, i);
            if (e == cudaSuccess) e = cudaEventSynchronize(s->done[b]);
            if (e == cudaSuccess) copy_threads(out + o, s->buf[b], n, threads);
        }
    }
    cudaError_t w = cudaStreamSynchronize(stream);
    *err = e != cudaSuccess ? e : w;
    return true;
}
