/* MPI helpers of hisp-mpi's commands (cli/mpi/): byte transfers in chunks
 * that fit an int count, and the agreement on a failure. */
#ifndef HISP_CLI_MPI_UTIL_H
#define HISP_CLI_MPI_UTIL_H

#include <mpi.h>
#include <stddef.h>

#define MPI_UTIL_CHUNK ((size_t)1 << 30)

static inline void send_bytes(const void *p, size_t n, int to)
{
    for (size_t off = 0; off < n || off == 0; off += MPI_UTIL_CHUNK) {
        size_t c = n - off < MPI_UTIL_CHUNK ? n - off : MPI_UTIL_CHUNK;
        MPI_Send((const char *)p + off, (int)c, MPI_BYTE, to, 7, MPI_COMM_WORLD);
        if (n == 0) break;
    }
}

static inline void recv_bytes(void *p, size_t n, int from)
{
    for (size_t off = 0; off < n || off == 0; off += MPI_UTIL_CHUNK) {
        size_t c = n - off < MPI_UTIL_CHUNK ? n - off : MPI_UTIL_CHUNK;
        MPI_Recv((char *)p + off, (int)c, MPI_BYTE, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (n == 0) break;
    }
}

static inline void bcast_bytes(void *p, size_t n)
{
    for (size_t off = 0; off < n; off += MPI_UTIL_CHUNK) {
        size_t c = n - off < MPI_UTIL_CHUNK ? n - off : MPI_UTIL_CHUNK;
        MPI_Bcast((char *)p + off, (int)c, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}

/* Every rank learns whether any rank failed (the largest exit code). */
static inline int agree(int rc)
{
    int all = rc;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

#endif
