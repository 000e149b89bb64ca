/* The halo exchange of hisp-mpi solve: see halo.h. */
#include "halo.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { HALO_TAG = 11 };

/* Owned entries peers need are read from the device in contiguous segments;
 * two runs closer than this many entries are read as one. An extra copy
 * costs a latency worth about this many entries' bytes over PCIe: a banded
 * or stencil matrix reads its few boundary blocks, a matrix with columns
 * everywhere (rmat) reads its owned x in one piece. */
#define HALO_GAP 16384

/* Every rank learns whether any failed (the lowest, i.e. a failing status). */
static hisp_status agree_status(hisp_status s)
{
    int v = (int)s, all = v;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return (hisp_status)all;
}

static void *alloc0(size_t n, size_t es)
{
    return calloc(n ? n : 1, es);
}

/* apply_dot's ghost part: x^T (Ao g) = g^T (Ao^T x), so Bt = Ao^T (ghosts x
 * lrows, made from Ao's triplets) gives it from x and g in a pass over Ao's
 * entries and the ghosts, not over all rows; parts holds the two local dots,
 * summed into the solver's result by a dot with ones. */
static hisp_status ghost_dot_setup(halo *h, const int64_t *optr, const int32_t *oidx,
                                   const void *oval)
{
    int64_t on = optr[h->lrows];
    int32_t *orow = alloc0((size_t)on, sizeof *orow);
    if (!orow) return HISP_ERR_OUT_OF_HOST_MEMORY;
    for (int64_t i = 0; i < h->lrows; i++)
        for (int64_t k = optr[i]; k < optr[i + 1]; k++)
            orow[k] = (int32_t)i;
    hisp_status s =
        hisp_matrix_create_coo(h->ctx, h->type, h->ghosts, h->lrows, on, oidx, orow, oval, &h->Bt);
    free(orow);
    if (!s) s = hisp_matrix_convert(h->Bt, HISP_FORMAT_CSR);
    if (!s) s = hisp_vector_create(h->ctx, h->type, h->ghosts, &h->w);
    if (!s) s = hisp_vector_create(h->ctx, h->type, 2, &h->parts);
    if (!s) s = hisp_vector_create(h->ctx, h->type, 2, &h->ones);
    double one[2] = {1, 1};
    float onef[2] = {1, 1};
    if (!s) s = hisp_vector_write(h->ones, h->type == HISP_F32 ? (void *)onef : (void *)one);
    return s;
}

/* Ad (owned columns, local numbers) and Ao (ghost columns, compacted), and
 * the sorted global ghost list *gl. A bitmap over the n columns marks the
 * ghosts; a ghost's compact number is the marks before it (a prefix count
 * per 64-bit word and a popcount): O(nnz + n / 64), no sort. */
static hisp_status split(halo *h, int64_t n, int64_t s0, const int64_t *lptr, const int32_t *lidx,
                         const void *lval, int32_t **gl)
{
    int64_t s1 = s0 + h->lrows, lnnz = lptr[h->lrows], words = (n + 63) / 64, ng = 0, nd = 0;
    uint64_t *bits = alloc0((size_t)words, sizeof *bits);
    uint32_t *pre = alloc0((size_t)words, sizeof *pre);
    int64_t *dptr = malloc(((size_t)h->lrows + 1) * sizeof *dptr);
    int64_t *optr = malloc(((size_t)h->lrows + 1) * sizeof *optr);
    int32_t *didx = NULL, *oidx = NULL;
    char *dval = NULL, *oval = NULL;
    hisp_status s = HISP_ERR_OUT_OF_HOST_MEMORY;
    if (!bits || !pre || !dptr || !optr) goto out;
    for (int64_t k = 0; k < lnnz; k++) {
        int64_t c = lidx[k];
        if (c < s0 || c >= s1)
            bits[c >> 6] |= 1ull << (c & 63);
        else
            nd++;
    }
    for (int64_t w = 0; w < words; w++) {
        pre[w] = (uint32_t)ng;
        ng += __builtin_popcountll(bits[w]);
    }
    h->ghosts = ng;
    *gl = alloc0((size_t)ng, sizeof **gl);
    didx = alloc0((size_t)nd, sizeof *didx);
    oidx = alloc0((size_t)(lnnz - nd), sizeof *oidx);
    dval = alloc0((size_t)nd, h->es);
    oval = alloc0((size_t)(lnnz - nd), h->es);
    if (!*gl || !didx || !oidx || !dval || !oval) goto out;
    for (int64_t w = 0, j = 0; w < words; w++)
        for (uint64_t b = bits[w]; b; b &= b - 1)
            (*gl)[j++] = (int32_t)(w * 64 + __builtin_ctzll(b));
    int64_t kd = 0, ko = 0;
    for (int64_t i = 0; i < h->lrows; i++) {
        dptr[i] = kd;
        optr[i] = ko;
        for (int64_t k = lptr[i]; k < lptr[i + 1]; k++) {
            int64_t c = lidx[k];
            const char *v = (const char *)lval + (size_t)k * h->es;
            if (c >= s0 && c < s1) {
                didx[kd] = (int32_t)(c - s0);
                memcpy(dval + (size_t)kd++ * h->es, v, h->es);
            } else {
                uint64_t below = bits[c >> 6] & ((1ull << (c & 63)) - 1);
                oidx[ko] = (int32_t)(pre[c >> 6] + (uint32_t)__builtin_popcountll(below));
                memcpy(oval + (size_t)ko++ * h->es, v, h->es);
            }
        }
    }
    dptr[h->lrows] = kd;
    optr[h->lrows] = ko;
    s = hisp_matrix_create_csr(h->ctx, h->type, h->lrows, h->lrows, dptr, didx, dval, &h->Ad);
    if (!s) s = hisp_matrix_create_csr(h->ctx, h->type, h->lrows, ng, optr, oidx, oval, &h->Ao);
    if (!s) s = hisp_vector_create(h->ctx, h->type, ng, &h->g);
    if (!s) s = ghost_dot_setup(h, optr, oidx, oval);
out:
    free(bits);
    free(pre);
    free(dptr);
    free(optr);
    free(didx);
    free(oidx);
    free(dval);
    free(oval);
    return s;
}

/* Append the segment [start, last] of x. */
static hisp_status push_segment(halo *h, int *cap, int64_t start, int64_t last)
{
    if (h->nseg == *cap) {
        int c = *cap ? 2 * *cap : 8;
        int64_t *g = realloc(h->seg, (size_t)c * 2 * sizeof *g);
        if (!g) return HISP_ERR_OUT_OF_HOST_MEMORY;
        h->seg = g;
        *cap = c;
    }
    h->seg[2 * h->nseg] = start;
    h->seg[2 * h->nseg + 1] = last + 1 - start;
    h->nseg++;
    h->mirror_n += last + 1 - start;
    return HISP_SUCCESS;
}

/* The segments of x to read (runs of needed entries, gaps up to HALO_GAP
 * closed) and each sent entry's place in the mirror. sloc: the needed local
 * entries, sorted per peer. */
static hisp_status segments(halo *h, const int32_t *sloc)
{
    int64_t words = (h->lrows + 63) / 64, start = -1, last = -1;
    uint64_t *bits = alloc0((size_t)words, sizeof *bits);
    if (!bits) return HISP_ERR_OUT_OF_HOST_MEMORY;
    for (int64_t j = 0; j < h->sends; j++)
        bits[sloc[j] >> 6] |= 1ull << (sloc[j] & 63);
    int cap = 0;
    hisp_status s = HISP_SUCCESS;
    for (int64_t w = 0; !s && w < words; w++)
        for (uint64_t b = bits[w]; !s && b; b &= b - 1) {
            int64_t i = w * 64 + __builtin_ctzll(b);
            if (start >= 0 && i - last > HALO_GAP) {
                s = push_segment(h, &cap, start, last);
                start = -1;
            }
            if (start < 0) start = i;
            last = i;
        }
    if (!s && start >= 0) s = push_segment(h, &cap, start, last);
    free(bits);
    if (s) return s;
    h->mirror = alloc0((size_t)h->mirror_n, h->es);
    if (!h->mirror) return HISP_ERR_OUT_OF_HOST_MEMORY;
    /* each peer's list is sorted: walk the segments along it */
    for (int q = 0; q < h->size; q++) {
        int k = 0;
        int64_t base = 0;
        for (int64_t j = h->sdispl[q]; j < (int64_t)h->sdispl[q] + h->scount[q]; j++) {
            while (sloc[j] >= h->seg[2 * k] + h->seg[2 * k + 1])
                base += h->seg[2 * k + 1], k++;
            h->spos[j] = (int32_t)(base + sloc[j] - h->seg[2 * k]);
        }
    }
    return HISP_SUCCESS;
}

hisp_status halo_build(halo *h, hisp_context ctx, hisp_type type, const int64_t *own, int rank,
                       int size, const int64_t *lptr, const int32_t *lidx, const void *lval)
{
    memset(h, 0, sizeof *h);
    h->ctx = ctx;
    h->type = type;
    h->dt = type == HISP_F32 ? MPI_FLOAT : MPI_DOUBLE;
    h->es = hisp_type_size(type);
    h->size = size;
    h->lrows = own[rank + 1] - own[rank];
    int32_t *gl = NULL, *sloc = NULL;
    h->rcount = alloc0((size_t)size, sizeof(int));
    h->rdispl = alloc0((size_t)size, sizeof(int));
    h->scount = alloc0((size_t)size, sizeof(int));
    h->sdispl = alloc0((size_t)size, sizeof(int));
    h->req = alloc0(2 * (size_t)size, sizeof *h->req);
    hisp_status s = h->rcount && h->rdispl && h->scount && h->sdispl && h->req
                        ? HISP_SUCCESS
                        : HISP_ERR_OUT_OF_HOST_MEMORY;
    if (!s) s = split(h, own[size], own[rank], lptr, lidx, lval, &gl);
    if ((s = agree_status(s))) goto out;
    /* ghosts per owner (gl is sorted, ranks own ascending row blocks) */
    for (int64_t j = 0, q = 0; j < h->ghosts; j++) {
        while (gl[j] >= own[q + 1])
            q++;
        h->rcount[q]++;
    }
    MPI_Alltoall(h->rcount, 1, MPI_INT, h->scount, 1, MPI_INT, MPI_COMM_WORLD);
    int64_t sends = 0;
    for (int q = 0; q < size; q++) {
        h->rdispl[q] = q ? h->rdispl[q - 1] + h->rcount[q - 1] : 0;
        h->sdispl[q] = (int)(sends < INT_MAX ? sends : INT_MAX);
        sends += h->scount[q];
        h->peers_in += h->rcount[q] > 0;
        h->peers_out += h->scount[q] > 0;
    }
    h->sends = sends;
    s = sends > INT_MAX ? HISP_ERR_UNSUPPORTED : HISP_SUCCESS; /* MPI's int displacements */
    if (!s) {
        sloc = alloc0((size_t)sends, sizeof *sloc);
        h->spos = alloc0((size_t)sends, sizeof *h->spos);
        h->sbuf = alloc0((size_t)sends, h->es);
        h->gbuf = alloc0((size_t)h->ghosts, h->es);
        if (!sloc || !h->spos || !h->sbuf || !h->gbuf) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    }
    if ((s = agree_status(s))) goto out;
    /* each owner learns which of its entries a peer needs, once */
    MPI_Alltoallv(gl, h->rcount, h->rdispl, MPI_INT32_T, sloc, h->scount, h->sdispl, MPI_INT32_T,
                  MPI_COMM_WORLD);
    for (int64_t j = 0; j < sends; j++)
        sloc[j] -= (int32_t)own[rank];
    s = agree_status(segments(h, sloc));
out:
    free(gl);
    free(sloc);
    return s;
}

/* Posts the receives, reads the owned entries peers need from x and posts
 * the sends; *nr: the requests. A failed read still sends (garbage) so that
 * no peer waits forever. */
static hisp_status halo_start(halo *h, hisp_vector x, int *nreq)
{
    int nr = 0;
    for (int q = 0; q < h->size; q++)
        if (h->rcount[q])
            MPI_Irecv((char *)h->gbuf + (size_t)h->rdispl[q] * h->es, h->rcount[q], h->dt, q,
                      HALO_TAG, MPI_COMM_WORLD, &h->req[nr++]);
    hisp_status s = HISP_SUCCESS;
    for (int64_t k = 0, at = 0; !s && k < h->nseg; at += h->seg[2 * k + 1], k++)
        s = hisp_vector_read_range(x, h->seg[2 * k], h->seg[2 * k + 1],
                                   (char *)h->mirror + (size_t)at * h->es);
    if (h->type == HISP_F32)
        for (int64_t j = 0; j < h->sends; j++)
            ((float *)h->sbuf)[j] = ((const float *)h->mirror)[h->spos[j]];
    else
        for (int64_t j = 0; j < h->sends; j++)
            ((double *)h->sbuf)[j] = ((const double *)h->mirror)[h->spos[j]];
    for (int q = 0; q < h->size; q++)
        if (h->scount[q])
            MPI_Isend((char *)h->sbuf + (size_t)h->sdispl[q] * h->es, h->scount[q], h->dt, q,
                      HALO_TAG, MPI_COMM_WORLD, &h->req[nr++]);
    *nreq = nr;
    return s;
}

/* 1 or 0 as hisp_spmv's alpha and beta for the halo's type. */
static const void *unit(const halo *h, int v)
{
    static const double d[2] = {0, 1};
    static const float f[2] = {0, 1};
    return h->type == HISP_F32 ? (const void *)&f[v] : (const void *)&d[v];
}

hisp_status halo_apply(halo *h, hisp_vector x, hisp_vector y)
{
    int nr = 0;
    hisp_status s = halo_start(h, x, &nr);
    const void *a1 = unit(h, 1);
    /* the owned block while the ghosts travel (queued on a device backend) */
    if (!s) s = hisp_spmv(h->ctx, HISP_OP_N, a1, h->Ad, x, unit(h, 0), y);
    MPI_Waitall(nr, h->req, MPI_STATUSES_IGNORE);
    if (!s && h->ghosts) s = hisp_vector_write(h->g, h->gbuf);
    if (!s && h->ghosts) s = hisp_spmv(h->ctx, HISP_OP_N, a1, h->Ao, h->g, a1, y);
    return s;
}

hisp_status halo_apply_dot(halo *h, hisp_vector x, hisp_vector y, hisp_result r)
{
    int nr = 0;
    hisp_status s = halo_start(h, x, &nr);
    const void *a1 = unit(h, 1), *b0 = unit(h, 0);
    /* no ghosts: the owned block's fused product and dot are all of it */
    hisp_result r0 = h->ghosts ? hisp_result_entry(h->parts, 0) : r;
    if (!s) s = hisp_spmv_dot(h->ctx, h->Ad, x, y, r0);
    MPI_Waitall(nr, h->req, MPI_STATUSES_IGNORE);
    if (!s && h->ghosts) s = hisp_vector_write(h->g, h->gbuf);
    if (!s && h->ghosts) s = hisp_spmv(h->ctx, HISP_OP_N, a1, h->Ao, h->g, a1, y);
    if (!s && h->ghosts) s = hisp_spmv(h->ctx, HISP_OP_N, a1, h->Bt, x, b0, h->w);
    if (!s && h->ghosts) s = hisp_vector_dot(h->g, h->w, hisp_result_entry(h->parts, 1));
    if (!s && h->ghosts) s = hisp_vector_dot(h->ones, h->parts, r);
    return s;
}

void halo_free(halo *h)
{
    hisp_matrix_destroy(&h->Bt);
    hisp_vector_destroy(&h->w);
    hisp_vector_destroy(&h->parts);
    hisp_vector_destroy(&h->ones);
    hisp_matrix_destroy(&h->Ad);
    hisp_matrix_destroy(&h->Ao);
    hisp_vector_destroy(&h->g);
    free(h->gbuf);
    free(h->rcount);
    free(h->rdispl);
    free(h->scount);
    free(h->sdispl);
    free(h->spos);
    free(h->sbuf);
    free(h->seg);
    free(h->mirror);
    free(h->req);
    memset(h, 0, sizeof *h);
}
