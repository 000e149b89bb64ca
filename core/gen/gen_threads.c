/* The generators' threads: how many a size is worth, and running a worker
 * on them (the output never depends on the count: gen.c). */
#include "hispi.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static int thread_count(double work)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int t = cpus < 1 ? 1 : cpus > 16 ? 16 : (int)cpus;
    const char *env = getenv("HISP_GEN_THREADS");
    if (env && atoi(env) >= 1 && atoi(env) < t) t = atoi(env);
    if (work < 2e5) t = 1;
    return t;
}

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

int hispi_gen_threads(double work)
{
    return thread_count(work);
}

void hispi_gen_parallel(int threads, void *(*fn)(void *), void *arg)
{
    run_parallel(threads, fn, arg);
}
