/* The thread runner of the host-side work split over threads: generators,
 * Matrix Market parsing and writing, file reads, HiSparse walks, staged
 * copies, kernel pre-builds (how many threads: hispi_threads, the context's
 * threads option; a result never depends on the count). */
#include "hispi.h"

#include <pthread.h>

/* Run fn(arg) on `threads` threads (the caller included); a thread that
 * cannot be started leaves its share to the others (the work is shared
 * through an atomic counter), so the result does not change. */
static void run_parallel(int threads, void *(*fn)(void *), void *arg)
{
    pthread_t tid[16];
    int started = 0;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&tid[started], NULL, fn, arg) == 0) started++;
    fn(arg);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

void hispi_parallel(int threads, void *(*fn)(void *), void *arg)
{
    run_parallel(threads, fn, arg);
}
