/* SpGEMM C = op(A)*op(B) on the device (core/ops/spgemm_dev.c), one source for
 * OpenCL C (after common.cl) and CUDA (NVRTC). Row-wise, in the manner of
 * nsparse and cuSPARSE's hash SpGEMM, each row by the means its size calls
 * for: a merge by one work-item, a hash table in local or global memory, or
 * a bitmap of C's row in local memory. The operands arrive in CSR
 * orientation (aptr/acol/aval, bptr/bcol/bval; a transposed operand's
 * values already gathered and conjugated by the host). Also X^T (the end
 * of the file). Defines:
 *   VALUE_T, IS_DOUBLE  the scalar;  NC  scalars per entry (1 real, 2 complex)
 *   GS    work-items per work-group (a power of two)
 *   SUB   work-items per entry of A's row in the insertion (divides GS)
 *   TS, TL  slots of the small and large local hash tables (powers of two)
 *   MNA, MPROD  the merge's rows: at most MNA entries of A, MPROD products
 *   GBIG  products past which a row takes the large work-group
 *   NBW   words of the bitmap kernels' rows (B's columns / 32 at most)
 *   BLV   entries of C's row whose values a bitmap kernel sums in local memory
 *   TSORT entries of X^T's rows sorted in local memory
 *
 * The hash kernels (the host runs them in this order):
 *   sg_count_l / sg_count_g   one work-group per listed row: its distinct
 *                columns (cnt[i]) by inserting every product's column into
 *                an open-addressing table of tsize(bound[i]) slots (at least
 *                twice the bound, so at most half full): in local memory
 *                where that fits TL (_l), else in the row's slice of global
 *                scratch (_g, the slices laid out by the host from the bounds).
 *   sg_fill_s/_l / sg_fill_g  the same insertion (tables sized by cnt[i]),
 *                then the row's distinct columns compacted and sorted (a
 *                bitonic sort of (column, slot) pairs), written to C's
 *                colind; each slot learns its column's position; then the
 *                values: A's row entries one after the other (a barrier
 *                between them), the work-items taking the entries of B's
 *                row, each adding x*y into its column's value (in local
 *                memory for _s/_l, written once at the end). B's row has
 *                distinct columns, so no two work-items add to one value at
 *                once, and every value receives its products in the host's
 *                order (A's row, then B's), starting from -0 -- with no
 *                contraction into fused multiply-adds (FP_CONTRACT OFF;
 *                __fmul_rn/__dmul_rn on CUDA), the host phases' bits exactly
 *                (core/ops/spgemm_row_t.h).
 * Rows without products are in no list (their count is 0). */

#if defined(__CUDACC__)
#define KERNEL extern "C" __global__ void __launch_bounds__(GS)
#define FN static __device__ __forceinline__
#define LQ
#define GQ
#define GROUP ((i64)blockIdx.x)
#define GLOBAL_ID ((i64)blockIdx.x * blockDim.x + threadIdx.x)
/* __syncthreads orders the block's global memory accesses too */
#define BARRIER_G() __syncthreads()
#define CAS_L(p, c, v) atomicCAS((p), (c), (v))
#define CAS_G(p, c, v) atomicCAS((p), (c), (v))
#define ADD_L(p, v) atomicAdd((p), (v))
#define ADD_G(p, v) atomicAdd((p), (v))
#if IS_DOUBLE
#define MUL(x, y) __dmul_rn((x), (y))
#else
#define MUL(x, y) __fmul_rn((x), (y))
#endif
#else
#pragma OPENCL FP_CONTRACT OFF
#define KERNEL __kernel __attribute__((reqd_work_group_size(GS, 1, 1))) void
#define FN static inline
#define LQ __local
#define GQ __global
#define GROUP ((i64)get_group_id(0))
#define GLOBAL_ID ((i64)get_global_id(0))
#define BARRIER_G() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define CAS_L(p, c, v) atomic_cmpxchg((volatile __local uint *)(p), (c), (v))
#define CAS_G(p, c, v) atomic_cmpxchg((volatile __global uint *)(p), (c), (v))
#define ADD_L(p, v) atomic_add((volatile __local uint *)(p), (v))
#define ADD_G(p, v) atomic_add((volatile __global uint *)(p), (v))
#define MUL(x, y) ((x) * (y))
#endif

#define EMPTY 0xffffffffu

/* Slots of a row's table: a power of two, at least 32 and twice the bound
 * (the host's table_slots in spgemm_dev.c is the same function). */
FN u32 tsize(i64 bound)
{
    u32 t = 32;
    while ((i64)t < 2 * bound)
        t <<= 1;
    return t;
}

FN u32 pow2_at_least(u32 n)
{
    u32 p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

FN u32 hash0(u32 c)
{
    u32 h = c * 0x9E3779B1u;
    return h ^ (h >> 15);
}

/* s += x * y (the complex product for NC == 2): the host's operations. */
#define PROD_ADD(s, x0, x1, y0, y1)                                                                \
    do {                                                                                           \
        if (NC == 1) {                                                                             \
            (s)[0] = (s)[0] + MUL(x0, y0);                                                         \
        } else {                                                                                   \
            (s)[0] = (s)[0] + (MUL(x0, y0) - MUL(x1, y1));                                         \
            (s)[NC - 1] = (s)[NC - 1] + (MUL(x0, y1) + MUL(x1, y0));                               \
        }                                                                                          \
    } while (0)

/* The values of a row in the host's order: A's row [a0, a1) one entry after
 * the other (a barrier between them), the work-items taking the entries of
 * B's row there. B's row has distinct columns, so no two work-items add to
 * one value at once, and every value receives its products in the host's
 * order. A hub row's entries were a chain of dependent loads each (A's
 * column, B's row span, B's entry, then the sum): about 3 us an entry on an
 * H200, ca-CondMat's whole product spent on its longest rows. So A's
 * entries are staged STG at a time in local memory (st: their B spans and
 * values, loaded at once), and each work-item loads its first product of
 * the next entry before it adds those of this one. P: the value's address
 * (in address space Q) for the product's column bc. Needs acol, aval,
 * bptr, bcol, bval in scope. */
#define STG (GS < 64 ? GS : 64)
typedef struct {
    i64 b0, b1;
    real x0, x1;
} stage_t;
#define ROW_PRODUCTS(st, a0, a1, Q, P)                                                             \
    for (i64 k0 = (a0); k0 < (a1); k0 += STG) {                                                    \
        const int ns = (int)((a1) - k0 < STG ? (a1) - k0 : STG);                                   \
        if (LID < ns) {                                                                            \
            const int r_ = acol[k0 + LID];                                                         \
            st[LID].b0 = bptr[r_];                                                                 \
            st[LID].b1 = bptr[r_ + 1];                                                             \
            st[LID].x0 = aval[(k0 + LID) * NC];                                                    \
            st[LID].x1 = NC == 2 ? aval[(k0 + LID) * NC + NC - 1] : (real)0;                       \
        }                                                                                          \
        BARRIER();                                                                                 \
        int nbc = 0;                                                                               \
        real ny0 = 0, ny1 = 0;                                                                     \
        i64 nk = st[0].b0 + LID;                                                                   \
        if (nk < st[0].b1) {                                                                       \
            nbc = bcol[nk], ny0 = bval[nk * NC];                                                   \
            ny1 = NC == 2 ? bval[nk * NC + NC - 1] : (real)0;                                      \
        }                                                                                          \
        for (int e = 0; e < ns; e++) {                                                             \
            const i64 kb0 = st[e].b0 + LID, b1 = st[e].b1;                                         \
            const real x0 = st[e].x0, x1 = st[e].x1;                                               \
            int bc = nbc;                                                                          \
            real y0 = ny0, y1 = ny1;                                                               \
            if (e + 1 < ns && (nk = st[e + 1].b0 + LID) < st[e + 1].b1) {                          \
                nbc = bcol[nk], ny0 = bval[nk * NC];                                               \
                ny1 = NC == 2 ? bval[nk * NC + NC - 1] : (real)0;                                  \
            }                                                                                      \
            for (i64 kb = kb0; kb < b1; kb += GS) {                                                \
                if (kb != kb0) {                                                                   \
                    bc = bcol[kb], y0 = bval[kb * NC];                                             \
                    y1 = NC == 2 ? bval[kb * NC + NC - 1] : (real)0;                               \
                }                                                                                  \
                Q real *s_ = (P);                                                                  \
                PROD_ADD(s_, x0, x1, y0, y1);                                                      \
            }                                                                                      \
            BARRIER_G();                                                                           \
        }                                                                                          \
    }

/* Row i's products' columns into the table (keys, mask + 1 slots): SUB
 * work-items per entry of A's row, each taking every SUB-th entry of B's
 * row there. Returns how many columns this work-item inserted first. The
 * helpers are made twice, for a table in local (_l) and in global (_g)
 * memory: OpenCL 1.2 has no generic address space. */
#define TABLE_FNS(SP, Q, CAS)                                                                      \
    FN u32 insert_##SP(Q u32 *keys, u32 mask, u32 col)                                             \
    {                                                                                              \
        u32 h = hash0(col) & mask;                                                                 \
        for (;;) {                                                                                 \
            u32 old = CAS(keys + h, EMPTY, col);                                                   \
            if (old == EMPTY) return 1;                                                            \
            if (old == col) return 0;                                                              \
            h = (h + 1) & mask;                                                                    \
        }                                                                                          \
    }                                                                                              \
    FN u32 find_##SP(Q const u32 *keys, u32 mask, u32 col)                                         \
    {                                                                                              \
        u32 h = hash0(col) & mask;                                                                 \
        while (keys[h] != col)                                                                     \
            h = (h + 1) & mask;                                                                    \
        return h;                                                                                  \
    }                                                                                              \
    FN u32 insert_row_##SP(Q u32 *keys, u32 t, i64 a0, i64 a1, GLOBAL const int *acol,             \
                           GLOBAL const i64 *bptr, GLOBAL const int *bcol)                         \
    {                                                                                              \
        for (u32 s = LID; s < t; s += GS)                                                          \
            keys[s] = EMPTY;                                                                       \
        BARRIER_G();                                                                               \
        u32 mine = 0;                                                                              \
        for (i64 ka = a0 + LID / SUB; ka < a1; ka += GS / SUB) {                                   \
            const int r = acol[ka];                                                                \
            const i64 b1 = bptr[r + 1];                                                            \
            for (i64 kb = bptr[r] + LID % SUB; kb < b1; kb += SUB)                                 \
                mine += insert_##SP(keys, t - 1, (u32)bcol[kb]);                                   \
        }                                                                                          \
        BARRIER_G();                                                                               \
        return mine;                                                                               \
    }                                                                                              \
    /* bitonic sort of s[0..n), n a power of two, by the work-group */                             \
    FN void bitonic_##SP(Q u64 *s, u32 n)                                                          \
    {                                                                                              \
        for (u32 k = 2; k <= n; k <<= 1)                                                           \
            for (u32 j = k >> 1; j > 0; j >>= 1) {                                                 \
                for (u32 q = LID; q < n; q += GS) {                                                \
                    const u32 p = q ^ j;                                                           \
                    if (p > q) {                                                                   \
                        const u64 x = s[q], y = s[p];                                              \
                        if ((x > y) == ((q & k) == 0)) {                                           \
                            s[q] = y;                                                              \
                            s[p] = x;                                                              \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
                BARRIER_G();                                                                       \
            }                                                                                      \
    }                                                                                              \
    /* C's row from the filled table: the c distinct columns sorted into                           \
     * ccol[0..c), pos[slot] = the position of the slot's column, values set                       \
     * to -0 (the host's start); *n (0 on entry) counts the compaction */                          \
    FN void emit_##SP(Q const u32 *keys, u32 t, Q u32 *pos, Q u64 *sb, LQ u32 *n, u32 c,           \
                      GLOBAL int *ccol, Q real *acc)                                               \
    {                                                                                              \
        for (u32 s = LID; s < t; s += GS)                                                          \
            if (keys[s] != EMPTY) sb[ADD_L(n, 1u)] = ((u64)keys[s] << 32) | s;                     \
        const u32 p2 = pow2_at_least(c);                                                           \
        BARRIER_G();                                                                               \
        for (u32 q = c + LID; q < p2; q += GS)                                                     \
            sb[q] = ~(u64)0;                                                                       \
        BARRIER_G();                                                                               \
        bitonic_##SP(sb, p2);                                                                      \
        for (u32 q = LID; q < c; q += GS) {                                                        \
            const u64 v = sb[q];                                                                   \
            pos[(u32)v] = q;                                                                       \
            ccol[q] = (int)(v >> 32);                                                              \
            for (int e = 0; e < NC; e++)                                                           \
                acc[(i64)q * NC + e] = -(real)0;                                                   \
        }                                                                                          \
        BARRIER_G();                                                                               \
    }                                                                                              \
    /* the values, in the host's order (ROW_PRODUCTS) */                                          \
    FN void values_##SP(Q const u32 *keys, u32 mask, Q const u32 *pos, LQ stage_t *st, i64 a0,     \
                        i64 a1, GLOBAL const int *acol, GLOBAL const real *aval,                   \
                        GLOBAL const i64 *bptr, GLOBAL const int *bcol, GLOBAL const real *bval,   \
                        Q real *acc)                                                               \
    {                                                                                              \
        ROW_PRODUCTS(st, a0, a1, Q, acc + (i64)pos[find_##SP(keys, mask, (u32)bc)] * NC);          \
    }

TABLE_FNS(l, LQ, CAS_L)
TABLE_FNS(g, GQ, CAS_G)

KERNEL sg_bound(const i64 m, const i64 n, GLOBAL const i64 *aptr, GLOBAL const int *acol,
                GLOBAL const i64 *bptr, GLOBAL i64 *bound)
{
    const i64 i = GLOBAL_ID;
    if (i >= m) return;
    i64 s = 0;
    for (i64 ka = aptr[i]; ka < aptr[i + 1]; ka++)
        s += bptr[acol[ka] + 1] - bptr[acol[ka]];
    bound[i] = s < n ? s : n;
}

/* Rows rows[g] (bound at most TL / 2): the table in local memory. */
KERNEL sg_count_l(GLOBAL const int *rows, GLOBAL const i64 *aptr, GLOBAL const int *acol,
                  GLOBAL const i64 *bptr, GLOBAL const int *bcol, GLOBAL const i64 *bound,
                  GLOBAL i64 *cnt)
{
    LOCAL_DECL(u32, keys[TL]);
    LOCAL_DECL(u32, n);
    const int i = rows[GROUP];
    if (LID == 0) n = 0;
    const u32 mine = insert_row_l(keys, tsize(bound[i]), aptr[i], aptr[i + 1], acol, bptr, bcol);
    if (mine) ADD_L(&n, mine);
    BARRIER();
    if (LID == 0) cnt[i] = n;
}

/* Rows rows[g] with their tables at keys + off[g] (tsize(bound) slots). */
KERNEL sg_count_g(GLOBAL const int *rows, GLOBAL const i64 *off, GLOBAL const i64 *aptr,
                  GLOBAL const int *acol, GLOBAL const i64 *bptr, GLOBAL const int *bcol,
                  GLOBAL const i64 *bound, GLOBAL i64 *cnt, GLOBAL u32 *keys)
{
    LOCAL_DECL(u32, n);
    const int i = rows[GROUP];
    if (LID == 0) n = 0;
    const u32 mine =
        insert_row_g(keys + off[GROUP], tsize(bound[i]), aptr[i], aptr[i + 1], acol, bptr, bcol);
    if (mine) ADD_L(&n, mine);
    BARRIER();
    if (LID == 0) cnt[i] = n;
}

/* Rows rows[g] of at most T / 2 entries (cnt): the table, the sort and
 * the values in local memory, C's row written once. Two sizes, so that
 * short rows keep many work-groups on a compute unit (sg_fill_l's 32 KiB
 * would allow 7 on an H200's). */
#define FILL_LOCAL(NAME, T)                                                                        \
    KERNEL NAME(GLOBAL const int *rows, GLOBAL const i64 *aptr, GLOBAL const int *acol,            \
                GLOBAL const real *aval, GLOBAL const i64 *bptr, GLOBAL const int *bcol,           \
                GLOBAL const real *bval, GLOBAL const i64 *cnt, GLOBAL const i64 *cptr,            \
                GLOBAL int *ccol, GLOBAL real *cval)                                               \
    {                                                                                              \
        LOCAL_DECL(u32, keys[T]);                                                                  \
        LOCAL_DECL(u32, pos[T]);                                                                   \
        LOCAL_DECL(u64, sb[T / 2]); /* c <= t / 2 */                                               \
        LOCAL_DECL(real, lv[T / 2 * NC]);                                                          \
        LOCAL_DECL(stage_t, st[STG]);                                                              \
        LOCAL_DECL(u32, n);                                                                        \
        const int i = rows[GROUP];                                                                 \
        const i64 a0 = aptr[i], a1 = aptr[i + 1], c0 = cptr[i];                                    \
        const u32 t = tsize(cnt[i]), c = (u32)(cptr[i + 1] - c0);                                  \
        if (LID == 0) n = 0;                                                                       \
        insert_row_l(keys, t, a0, a1, acol, bptr, bcol);                                           \
        emit_l(keys, t, pos, sb, &n, c, ccol + c0, lv);                                            \
        values_l(keys, t - 1, pos, st, a0, a1, acol, aval, bptr, bcol, bval, lv);                  \
        for (u32 q = LID; q < c * NC; q += GS)                                                     \
            cval[c0 * NC + q] = lv[q];                                                             \
    }
FILL_LOCAL(sg_fill_s, TS)
FILL_LOCAL(sg_fill_l, TL)

/* Global tables: keys and pos at off[g], the sort's pairs at sb + off[g] / 2
 * (every slice is a power of two of at least 32 slots, so off is even). */
KERNEL sg_fill_g(GLOBAL const int *rows, GLOBAL const i64 *off, GLOBAL const i64 *aptr,
                 GLOBAL const int *acol, GLOBAL const real *aval, GLOBAL const i64 *bptr,
                 GLOBAL const int *bcol, GLOBAL const real *bval, GLOBAL const i64 *bound,
                 GLOBAL const i64 *cptr, GLOBAL int *ccol, GLOBAL real *cval, GLOBAL u32 *keys,
                 GLOBAL u32 *pos, GLOBAL u64 *sb)
{
    LOCAL_DECL(stage_t, st[STG]);
    LOCAL_DECL(u32, n);
    const int i = rows[GROUP];
    const i64 a0 = aptr[i], a1 = aptr[i + 1], c0 = cptr[i], o = off[GROUP];
    const u32 t = tsize(bound[i]), c = (u32)(cptr[i + 1] - c0);
    if (LID == 0) n = 0;
    insert_row_g(keys + o, t, a0, a1, acol, bptr, bcol);
    emit_g(keys + o, t, pos + o, sb + o / 2, &n, c, ccol + c0, cval + c0 * NC);
    values_g(keys + o, t - 1, pos + o, st, a0, a1, acol, aval, bptr, bcol, bval, cval + c0 * NC);
}

/* ---- the product in one pass over all rows (spgemm_dev.c's fast path) ----
 *
 * The rows are classed on the device by their products (prod), their
 * bound (prod, at most n) and A's row length (na): 0 none; 1 a merge by
 * one work-item (na <= MNA and prod <= MPROD: the short rows of stencils,
 * meshes and bands); 4 a long row worked by a large work-group (prod >
 * GBIG: the hubs of power-law graphs, the dense rows of circuits; the host
 * launches kernels of a program built with GS = its large group); 2 a
 * local table (bound <= TL / 2); 3 a long row (a bitmap or a global
 * table, as the host chose for the product). sg_class counts each class,
 * sg_scatter lists the rows of each (their order within a list is the
 * device's: every row is computed alone, so C does not depend on it). */
FN int row_class(i64 na, i64 prod, i64 bound)
{
    if (!prod) return 0;
    if (na <= MNA && prod <= MPROD) return 1;
    if (prod > GBIG) return 4;
    return bound <= TL / 2 ? 2 : 3;
}

FN i64 row_bound(i64 i, GLOBAL const i64 *aptr, GLOBAL const int *acol, GLOBAL const i64 *bptr)
{
    i64 s = 0;
    for (i64 ka = aptr[i]; ka < aptr[i + 1]; ka++)
        s += bptr[acol[ka] + 1] - bptr[acol[ka]];
    return s;
}

/* bound[i] and cls[i] (the row's class) for every row, ncls[c] += the
 * rows of class c (c = 1 .. 4; counted in local memory first: one global
 * atomic per class and group) */
KERNEL sg_class(const i64 m, const i64 n, GLOBAL const i64 *aptr, GLOBAL const int *acol,
                GLOBAL const i64 *bptr, GLOBAL i64 *bound, GLOBAL int *cls, GLOBAL u32 *ncls)
{
    LOCAL_DECL(u32, lc[5]);
    const i64 i = GLOBAL_ID;
    if (LID < 5) lc[LID] = 0;
    BARRIER();
    if (i < m) {
        const i64 s = row_bound(i, aptr, acol, bptr), b = s < n ? s : n;
        bound[i] = b;
        const int c = row_class(aptr[i + 1] - aptr[i], s, b);
        cls[i] = c;
        if (c) ADD_L(lc + c, 1u);
    }
    BARRIER();
    if (LID > 0 && LID < 5 && lc[LID]) ADD_G(ncls + LID, lc[LID]);
}

/* Row i of class c (1 .. 4; 0 none) appended to list l<c> at fill[c]
 * (zeroed by the host) in one reservation per class and group, bound[i]
 * beside it in b<c> for classes 3 and 4 (no class 4 where l4 is null).
 * lc, base: 5 words of the group's local memory each. */
FN void scatter_rows(const i64 i, const int c, GLOBAL const i64 *bound, GLOBAL u32 *fill,
                     GLOBAL int *l1, GLOBAL int *l2, GLOBAL int *l3, GLOBAL i64 *b3,
                     GLOBAL int *l4, GLOBAL i64 *b4, LQ u32 *lc, LQ u32 *base)
{
    if (LID < 5) lc[LID] = 0;
    BARRIER();
    const u32 mine = c ? ADD_L(lc + c, 1u) : 0;
    BARRIER();
    if (LID > 0 && LID < 5 && lc[LID]) base[LID] = ADD_G(fill + LID, lc[LID]);
    BARRIER();
    if (c == 1) l1[base[1] + mine] = (int)i;
    if (c == 2) l2[base[2] + mine] = (int)i;
    if (c == 3) {
        l3[base[3] + mine] = (int)i;
        b3[base[3] + mine] = bound[i];
    }
    if (c == 4 && l4) {
        l4[base[4] + mine] = (int)i;
        b4[base[4] + mine] = bound[i];
    }
}

/* The count's lists: mrows (class 1), lrows (2), grows with gbound (3),
 * hrows with hbound (4). */
KERNEL sg_scatter(const i64 m, GLOBAL const int *cls, GLOBAL const i64 *bound, GLOBAL u32 *fill,
                  GLOBAL int *mrows, GLOBAL int *lrows, GLOBAL int *grows, GLOBAL i64 *gbound,
                  GLOBAL int *hrows, GLOBAL i64 *hbound)
{
    LOCAL_DECL(u32, lc[5]);
    LOCAL_DECL(u32, base[5]);
    const i64 i = GLOBAL_ID;
    scatter_rows(i, i < m ? cls[i] : 0, bound, fill, mrows, lrows, grows, gbound, hrows, hbound,
                 lc, base);
}

/* The fill's classes of the hashed rows (2, 3) by their counts now: 1 a
 * small local table (cnt <= TS / 2), 2 a large one (<= TL / 2), 3 a global
 * table; nf[c] += the rows of each. */
FN int fill_class(const int c, const i64 k)
{
    if (c != 2 && c != 3) return 0;
    return k <= TS / 2 ? 1 : k <= TL / 2 ? 2 : 3;
}

KERNEL sg_fclass(const i64 m, GLOBAL const int *cls, GLOBAL const i64 *cnt, GLOBAL u32 *nf,
                 GLOBAL const i64 *ptr)
{
    LOCAL_DECL(u32, lc[4]);
    const i64 i = GLOBAL_ID;
    if (i == 0) *(GLOBAL i64 *)(nf + 4) = ptr[m]; /* C's size, read with the classes */
    if (LID < 4) lc[LID] = 0;
    BARRIER();
    const int f = i < m ? fill_class(cls[i], cnt[i]) : 0;
    if (f) ADD_L(lc + f, 1u);
    BARRIER();
    if (LID > 0 && LID < 4 && lc[LID]) ADD_G(nf + LID, lc[LID]);
}

/* The fill's lists of the hashed rows: srows (small tables), lrows
 * (large), grows with their counts in gcnt (global tables). */
KERNEL sg_fscatter(const i64 m, GLOBAL const int *cls, GLOBAL const i64 *cnt, GLOBAL u32 *fill,
                   GLOBAL int *srows, GLOBAL int *lrows, GLOBAL int *grows, GLOBAL i64 *gcnt)
{
    LOCAL_DECL(u32, lc[5]);
    LOCAL_DECL(u32, base[5]);
    const i64 i = GLOBAL_ID;
    const int f = i < m ? fill_class(cls[i], cnt[i]) : 0;
    scatter_rows(i, f, cnt, fill, srows, lrows, grows, gcnt, (GLOBAL int *)0, (GLOBAL i64 *)0, lc,
                 base);
}

/* cnt[i] = the entries of C's row i from its pointers (a product computed
 * again into its C: spgemm_dev.c's refill). */
KERNEL sg_sizes(const i64 m, GLOBAL const i64 *ptr, GLOBAL i64 *cnt)
{
    const i64 i = GLOBAL_ID;
    if (i < m) cnt[i] = ptr[i + 1] - ptr[i];
}

/* dst[k] = src[rows[k]] for k < n (the long rows' counts, which size their
 * tables in the fill). */
KERNEL sg_gather(const i64 n, GLOBAL const int *rows, GLOBAL const i64 *src, GLOBAL i64 *dst)
{
    const i64 k = GLOBAL_ID;
    if (k < n) dst[k] = src[rows[k]];
}

/* Row i's merge state: one cursor per entry of A's row into its row of B
 * (cur), the entries left there (left) and the column under the cursor
 * (head; NONE past the end, and for the MNA - na entries past A's row).
 * B's rows are sorted, so the smallest head is C's next column; every
 * cursor on it advances. The loops run over all MNA entries, unrolled, so
 * that the state lives in registers (indexed by a variable, it went to
 * local memory, which the H200 spilled to L2: banded's merge took 26 ms). */
#define NONE 0x7fffffff
#define UNROLL _Pragma("unroll")
#define MERGE_OPEN()                                                                               \
    i64 cur[MNA];                                                                                  \
    u32 left[MNA];                                                                                 \
    int head[MNA];                                                                                 \
    const i64 a0 = aptr[i];                                                                        \
    const int na = (int)(aptr[i + 1] - a0);                                                        \
    UNROLL for (int j = 0; j < MNA; j++)                                                           \
    {                                                                                              \
        const int r = j < na ? acol[a0 + j] : 0;                                                   \
        cur[j] = j < na ? bptr[r] : 0;                                                             \
        left[j] = j < na ? (u32)(bptr[r + 1] - cur[j]) : 0;                                        \
        head[j] = left[j] ? bcol[cur[j]] : NONE;                                                   \
    }
#define MERGE_MIN(mn)                                                                              \
    int mn = NONE;                                                                                 \
    UNROLL for (int j = 0; j < MNA; j++) mn = head[j] < mn ? head[j] : mn;
#define MERGE_STEP(j)                                                                              \
    do {                                                                                           \
        cur[j]++;                                                                                  \
        head[j] = --left[j] ? bcol[cur[j]] : NONE;                                                 \
    } while (0)

/* Class 1's counts: one work-item per listed row. */
KERNEL sg_count_m(const i64 n, GLOBAL const int *rows, GLOBAL const i64 *aptr,
                  GLOBAL const int *acol, GLOBAL const i64 *bptr, GLOBAL const int *bcol,
                  GLOBAL i64 *cnt)
{
    const i64 g = GLOBAL_ID;
    if (g >= n) return;
    const int i = rows[g];
    MERGE_OPEN();
    i64 c = 0;
    for (;;) {
        MERGE_MIN(mn);
        if (mn == NONE) break;
        c++;
        UNROLL for (int j = 0; j < MNA; j++) if (head[j] == mn) MERGE_STEP(j);
    }
    cnt[i] = c;
}

/* Class 1's columns and values: each column's products summed in A's row
 * order from -0, the host's order and bits (the header). A work-item
 * stages its entries in local memory and writes them 8 at a time, aligned
 * to 8 entries of C: one at a time, the stores of a group's rows leave
 * partly written sectors across the whole L2 (the H200 then read and wrote
 * memory 20 times the size of C). */
#define STAGE 8
/* (only in the programs of small groups: a large group's program, built
 * for class 4's kernels, could not declare the staging) */
#if STAGE * GS * (4 + NC * (IS_DOUBLE ? 8 : 4)) <= 16384
FN void flush_m(LQ const int *sc, LQ const real *sv, i64 q0, i64 q1, GLOBAL int *ccol,
                GLOBAL real *cval)
{
    for (i64 k = q0; k < q1; k++) {
        const int s = (int)(k - q0);
        ccol[k] = sc[s * GS + LID];
        for (int e = 0; e < NC; e++)
            cval[k * NC + e] = sv[(s * NC + e) * GS + LID];
    }
}

KERNEL sg_fill_m(const i64 n, GLOBAL const int *rows, GLOBAL const i64 *aptr,
                 GLOBAL const int *acol, GLOBAL const real *aval, GLOBAL const i64 *bptr,
                 GLOBAL const int *bcol, GLOBAL const real *bval, GLOBAL const i64 *cptr,
                 GLOBAL int *ccol, GLOBAL real *cval)
{
    LOCAL_DECL(int, sc[STAGE * GS]);
    LOCAL_DECL(real, sv[STAGE * GS * NC]);
    const i64 g = GLOBAL_ID;
    if (g >= n) return;
    const int i = rows[g];
    MERGE_OPEN();
    i64 q = cptr[i], q0 = q;
    for (;; q++) {
        MERGE_MIN(mn);
        if (mn == NONE) break;
        real v0 = -(real)0, v1 = -(real)0;
        UNROLL for (int j = 0; j < MNA; j++)
        {
            if (head[j] != mn) continue;
            const real x0 = aval[(a0 + j) * NC], y0 = bval[cur[j] * NC];
            if (NC == 1) {
                v0 = v0 + MUL(x0, y0);
            } else {
                const real x1 = aval[(a0 + j) * NC + NC - 1], y1 = bval[cur[j] * NC + NC - 1];
                v0 = v0 + (MUL(x0, y0) - MUL(x1, y1));
                v1 = v1 + (MUL(x0, y1) + MUL(x1, y0));
            }
            MERGE_STEP(j);
        }
        const int st = (int)(q - q0);
        sc[st * GS + LID] = mn;
        sv[st * NC * GS + LID] = v0;
        if (NC == 2) sv[(st * NC + 1) * GS + LID] = v1;
        if (((q + 1) & (STAGE - 1)) == 0) {
            flush_m(sc, sv, q0, q + 1, ccol, cval);
            q0 = q + 1;
        }
    }
    flush_m(sc, sv, q0, q, ccol, cval);
}
#endif

/* ---- the plan's numeric re-computation (hispi_spgemm_dev_numeric) ----------
 *
 * The short rows are merged again by sg_fill_m (their columns come out as
 * they are). For the others C's structure is known (cptr, ccol: each row's
 * columns sorted), so only the values are summed: every product's column is
 * found in C's row by a
 * binary search (from the last position found for the same entry of A's
 * row, since B's row is sorted), and each value receives its products in
 * the host's order from -0, without contraction, as in values_l/_g above:
 * the host's and the fresh product's bits. Only rows with products are
 * listed (rows without have no entries in C). */

/* flag[w] = 1 where the n words at x and y differ (an operand read in
 * place on the device against the plan's copy of its pattern). */
KERNEL sg_differ(const i64 n, GLOBAL const u32 *x, GLOBAL const u32 *y, GLOBAL u32 *flag,
                 const i64 w)
{
    const i64 k = GLOBAL_ID;
    if (k < n && x[k] != y[k]) flag[w] = 1;
}

/* The position of col in cc[lo..n) (present: the plan's pattern). */
FN u32 cpos(GLOBAL const int *cc, u32 lo, u32 n, int col)
{
    u32 hi = n;
    while (lo < hi) {
        const u32 mid = (lo + hi) >> 1;
        if (cc[mid] < col)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One work-group per listed row (rows[group]): the values as values_l/_g
 * sum them (ROW_PRODUCTS), each product's place by a binary search. */
KERNEL sg_num_group(GLOBAL const int *rows, GLOBAL const i64 *aptr, GLOBAL const int *acol,
                    GLOBAL const real *aval, GLOBAL const i64 *bptr, GLOBAL const int *bcol,
                    GLOBAL const real *bval, GLOBAL const i64 *cptr, GLOBAL const int *ccol,
                    GLOBAL real *cval)
{
    LOCAL_DECL(stage_t, st[STG]);
    const int i = rows[GROUP];
    const i64 c0 = cptr[i];
    const u32 c = (u32)(cptr[i + 1] - c0);
    GLOBAL const int *cc = ccol + c0;
    GLOBAL real *cv = cval + c0 * NC;
    for (u32 q = LID; q < c * NC; q += GS)
        cv[q] = -(real)0;
    BARRIER_G();
    ROW_PRODUCTS(st, aptr[i], aptr[i + 1], GLOBAL, cv + (i64)cpos(cc, 0, c, bc) * NC);
}

/* ---- the plan's map: C's values as gathers ---------------------------------
 *
 * Where the plan can keep it, its first execution lists for every entry of
 * C its products in the host's order: mp[e] ends entry e's products, which
 * start at mp[e - 1] (0 for the first). A product is a 32-bit word where
 * the plan's counts allow (bb > 0: the entry of A as its place in A's row i
 * above bb bits, the entry of B as its place in B's row below; er[e] = i),
 * else a pair (entry of A, entry of B). Every execution is then one
 * work-item per entry of C summing its products from -0 (sg_num_map,
 * sg_num_pk): the host's bits, no table, no barrier, all of C's entries at
 * once, hub rows as fast as the rest. The products are found by the
 * numeric traversals (a merge row by one work-item, C's columns in order;
 * the other rows A's row one entry after the other, a barrier between
 * them, so no two work-items touch one entry of C at once), first counted
 * (mode 0: cnt[e]), then placed (mode 1) by cursors mp[e] that the host
 * set to the products' starts (a scan of the counts) and that end at their
 * ends; sg_map_ends gives the words' ends in 32 bits. */
typedef struct {
    GLOBAL u32 *cnt;
    GLOBAL i64 *mp;
    GLOBAL u32 *pr;
    GLOBAL u32 *er;
    i64 mode, bb;
} map_out;

FN void map_put(const map_out o, const i64 q, const int i, const i64 ka, const i64 kb,
                GLOBAL const i64 *aptr, GLOBAL const int *acol, GLOBAL const i64 *bptr)
{
    if (o.mode == 0) {
        o.cnt[q]++;
        return;
    }
    const i64 s = o.mp[q]++;
    if (o.bb) {
        o.pr[s] = (u32)(((ka - aptr[i]) << o.bb) | (kb - bptr[acol[ka]]));
        o.er[q] = (u32)i;
    } else {
        o.pr[2 * s] = (u32)ka;
        o.pr[2 * s + 1] = (u32)kb;
    }
}

#define MAP_OUT() const map_out o = {cnt, mp, pr, er, mode, bb}

/* The merge rows rows[0..n) (one work-item each). */
KERNEL sg_map_m(const i64 mode, const i64 bb, const i64 n, GLOBAL const int *rows,
                GLOBAL const i64 *aptr, GLOBAL const int *acol, GLOBAL const i64 *bptr,
                GLOBAL const int *bcol, GLOBAL const i64 *cptr, GLOBAL u32 *cnt, GLOBAL i64 *mp,
                GLOBAL u32 *pr, GLOBAL u32 *er)
{
    const i64 g = GLOBAL_ID;
    if (g >= n) return;
    MAP_OUT();
    const int i = rows[g];
    MERGE_OPEN();
    for (i64 q = cptr[i];; q++) {
        MERGE_MIN(mn);
        if (mn == NONE) break;
        UNROLL for (int j = 0; j < MNA; j++)
        {
            if (head[j] != mn) continue;
            map_put(o, q, i, a0 + j, cur[j], aptr, acol, bptr);
            MERGE_STEP(j);
        }
    }
}

/* The rows rows[group], a work-group each. */
KERNEL sg_map_group(const i64 mode, const i64 bb, GLOBAL const int *rows, GLOBAL const i64 *aptr,
                    GLOBAL const int *acol, GLOBAL const i64 *bptr, GLOBAL const int *bcol,
                    GLOBAL const i64 *cptr, GLOBAL const int *ccol, GLOBAL u32 *cnt,
                    GLOBAL i64 *mp, GLOBAL u32 *pr, GLOBAL u32 *er)
{
    MAP_OUT();
    const int i = rows[GROUP];
    const i64 c0 = cptr[i];
    const u32 c = (u32)(cptr[i + 1] - c0);
    for (i64 ka = aptr[i]; ka < aptr[i + 1]; ka++) {
        const int r = acol[ka];
        for (i64 kb = bptr[r] + LID; kb < bptr[r + 1]; kb += GS)
            map_put(o, c0 + cpos(ccol + c0, 0, c, bcol[kb]), i, ka, kb, aptr, acol, bptr);
        BARRIER_G();
    }
}

/* The words' ends in 32 bits (their count fits). */
KERNEL sg_map_ends(const i64 n, GLOBAL const i64 *mp, GLOBAL u32 *end)
{
    const i64 e = GLOBAL_ID;
    if (e < n) end[e] = (u32)mp[e];
}

/* One product's factors: A's entry ka, B's entry kb. */
typedef struct {
    real x0, x1, y0, y1;
} factors;

FN factors load_factors(const i64 ka, const i64 kb, GLOBAL const real *aval,
                        GLOBAL const real *bval)
{
    factors f = {aval[ka * NC], aval[ka * NC + NC - 1], bval[kb * NC], bval[kb * NC + NC - 1]};
    return f;
}

/* The entries of A and B of the map's product p: a pair, or a word (A's
 * place above bb bits in A's row from a0, B's below in B's row, which
 * starts at bst[ka]). */
#define PAIR_FACTORS(p) load_factors(pr[2 * (p)], pr[2 * (p) + 1], aval, bval)
#define WORD_FACTORS(p)                                                                                load_factors(a0 + (pr[p] >> bb), bst[a0 + (pr[p] >> bb)] + (pr[p] & mask), aval, bval)
#define ADD_FACTORS(s, f) PROD_ADD(s, (f).x0, (f).x1, (f).y0, (f).y1)

/* s = the sum of products [p, q) in order, four loaded at a time (the
 * latency of one product's loads hidden behind the next ones'). */
#define SUM_PRODUCTS(s, p, q, FACTORS)                                                                 do {                                                                                                   for (; (p) + 4 <= (q); (p) += 4) {                                                                     const factors f0 = FACTORS(p), f1 = FACTORS((p) + 1), f2 = FACTORS((p) + 2),                                    f3 = FACTORS((p) + 3);                                                               ADD_FACTORS(s, f0);                                                                                ADD_FACTORS(s, f1);                                                                                ADD_FACTORS(s, f2);                                                                                ADD_FACTORS(s, f3);                                                                            }                                                                                                  for (; (p) < (q); (p)++) {                                                                             const factors f0 = FACTORS(p);                                                                     ADD_FACTORS(s, f0);                                                                            }                                                                                              } while (0)

/* C's n values from pairs; nothing where flag says an operand's pattern
 * differs from the plan's. */
KERNEL sg_num_map(const i64 n, GLOBAL const u32 *flag, GLOBAL const i64 *mp,
                  GLOBAL const u32 *pr, GLOBAL const real *aval, GLOBAL const real *bval,
                  GLOBAL real *cval)
{
    const i64 e = GLOBAL_ID;
    if (e >= n || (flag[0] | flag[1])) return;
    real s[NC];
    for (int k = 0; k < NC; k++)
        s[k] = -(real)0;
    i64 p = e ? mp[e - 1] : 0;
    const i64 q = mp[e];
    SUM_PRODUCTS(s, p, q, PAIR_FACTORS);
    for (int k = 0; k < NC; k++)
        cval[e * NC + k] = s[k];
}

/* C's n values from words (bb bits for B's place; bst[ka]: where the row
 * of B that A's entry ka multiplies starts); as sg_num_map. */
KERNEL sg_num_pk(const i64 n, GLOBAL const u32 *flag, GLOBAL const u32 *end,
                 GLOBAL const u32 *er, GLOBAL const u32 *pr, const i64 bb, GLOBAL const i64 *aptr,
                 GLOBAL const u32 *bst, GLOBAL const real *aval, GLOBAL const real *bval,
                 GLOBAL real *cval)
{
    const i64 e = GLOBAL_ID;
    if (e >= n || (flag[0] | flag[1])) return;
    const i64 a0 = aptr[er[e]];
    const u32 mask = ((u32)1 << bb) - 1;
    real s[NC];
    for (int k = 0; k < NC; k++)
        s[k] = -(real)0;
    u32 p = e ? end[e - 1] : 0;
    const u32 q = end[e];
    SUM_PRODUCTS(s, p, q, WORD_FACTORS);
    for (int k = 0; k < NC; k++)
        cval[e * NC + k] = s[k];
}

/* ---- rows of many entries when B has at most 32 * NBW columns ------------
 *
 * Instead of a global hash table, a bitmap of C's row over all of B's
 * columns in local memory (NBW words, a power of two the host picks from
 * B's columns; at most 8192: 32 KiB of bits and 8 KiB of positions): no
 * table to size, no probing, no sort -- the columns come out in order from
 * a scan of the words, and a column's position in C's row is the count of
 * the bits before it (pre: the count before each group of 4 words). The
 * values are summed as values_l/_g sum them (A's row one entry after the
 * other, from -0, in C), so they keep the host's bits. */
#if defined(__CUDACC__)
#define OR_L(p, v) atomicOr((p), (v))
#define POPC(x) __popc(x)
#else
#define OR_L(p, v) atomic_or((volatile __local uint *)(p), (v))
#define POPC(x) popcount(x)
#endif

/* Row [a0, a1)'s product columns set in bits (words words, cleared first). */
FN void bits_insert(LQ u32 *bits, u32 words, i64 a0, i64 a1, GLOBAL const int *acol,
                    GLOBAL const i64 *bptr, GLOBAL const int *bcol)
{
    for (u32 w = LID; w < words; w += GS)
        bits[w] = 0;
    BARRIER();
    for (i64 ka = a0 + LID / SUB; ka < a1; ka += GS / SUB) {
        const int r = acol[ka];
        const i64 b1 = bptr[r + 1];
        for (i64 kb = bptr[r] + LID % SUB; kb < b1; kb += SUB) {
            const u32 c = (u32)bcol[kb];
            OR_L(bits + (c >> 5), 1u << (c & 31));
        }
    }
    BARRIER();
}

/* Rows rows[g]' counts; n: B's columns. */
KERNEL sg_count_b(const i64 n, GLOBAL const int *rows, GLOBAL const i64 *aptr,
                  GLOBAL const int *acol, GLOBAL const i64 *bptr, GLOBAL const int *bcol,
                  GLOBAL i64 *cnt)
{
    LOCAL_DECL(u32, bits[NBW]);
    LOCAL_DECL(u32, tot);
    const int i = rows[GROUP];
    const u32 words = (u32)((n + 31) >> 5);
    if (LID == 0) tot = 0;
    bits_insert(bits, words, aptr[i], aptr[i + 1], acol, bptr, bcol);
    u32 mine = 0;
    for (u32 w = LID; w < words; w += GS)
        mine += POPC(bits[w]);
    if (mine) ADD_L(&tot, mine);
    BARRIER();
    if (LID == 0) cnt[i] = tot;
}

/* The bitmap's positions: each work-item takes a run of words (whole
 * groups of 4), their bits counted, the runs' counts scanned across the
 * group (part), pre[g] the position of the first column of group g of 4
 * words. Returns the work-item's run [*w0, *w1) and its first position. */
FN u32 bits_scan(LQ const u32 *bits, LQ u32 *pre, LQ u32 *part, u32 words, u32 *w0, u32 *w1)
{
    const u32 per = (((words + GS - 1) / GS) + 3) & ~3u;
    *w0 = min((u32)LID * per, words), *w1 = min(*w0 + per, words);
    u32 s = 0;
    for (u32 w = *w0; w < *w1; w++)
        s += POPC(bits[w]);
    part[LID] = s;
    BARRIER();
    for (u32 d = 1; d < GS; d <<= 1) { /* inclusive scan of the runs' counts */
        const u32 v = (u32)LID >= d ? part[LID - d] : 0;
        BARRIER();
        part[LID] += v;
        BARRIER();
    }
    const u32 q0 = part[LID] - s;
    u32 q = q0;
    for (u32 w = *w0; w < *w1; w++) {
        if (!(w & 3)) pre[w >> 2] = q;
        q += POPC(bits[w]);
    }
    BARRIER();
    return q0;
}

/* Column c's position in the row from the bitmap (bits_scan's pre). */
FN u32 bits_pos(LQ const u32 *bits, LQ const u32 *pre, u32 c)
{
    const u32 w = c >> 5;
    u32 p = pre[w >> 2] + POPC(bits[w] & ((1u << (c & 31)) - 1u));
    for (u32 v = w & ~3u; v < w; v++)
        p += POPC(bits[v]);
    return p;
}

/* Row [a0, a1)'s values (c entries) into cv, as values_l/_g sum them, each
 * product's place from the bitmap: in local memory (lv) where the row has
 * at most BLV entries (a sum in global memory waits for L2 at every entry
 * of A's row), written once. */
FN void bits_sum(LQ const u32 *bits, LQ const u32 *pre, LQ stage_t *st, LQ real *lv, i64 a0,
                 i64 a1, GLOBAL const int *acol, GLOBAL const real *aval, GLOBAL const i64 *bptr,
                 GLOBAL const int *bcol, GLOBAL const real *bval, GLOBAL real *cv, u32 c)
{
    if (c <= BLV) {
        for (u32 q = LID; q < c * NC; q += GS)
            lv[q] = -(real)0;
        BARRIER();
        ROW_PRODUCTS(st, a0, a1, LQ, lv + (i64)bits_pos(bits, pre, (u32)bc) * NC);
        for (u32 q = LID; q < c * NC; q += GS)
            cv[q] = lv[q];
        return;
    }
    for (u32 q = LID; q < c * NC; q += GS)
        cv[q] = -(real)0;
    BARRIER_G();
    ROW_PRODUCTS(st, a0, a1, GLOBAL, cv + (i64)bits_pos(bits, pre, (u32)bc) * NC);
}

/* Rows rows[g]' columns (each work-item those of its run) and values. */
KERNEL sg_fill_b(const i64 n, GLOBAL const int *rows, GLOBAL const i64 *aptr,
                 GLOBAL const int *acol, GLOBAL const real *aval, GLOBAL const i64 *bptr,
                 GLOBAL const int *bcol, GLOBAL const real *bval, GLOBAL const i64 *cptr,
                 GLOBAL int *ccol, GLOBAL real *cval)
{
    LOCAL_DECL(u32, bits[NBW]);
    LOCAL_DECL(u32, pre[NBW / 4]);
    LOCAL_DECL(u32, part[GS]);
    LOCAL_DECL(stage_t, st[STG]);
    LOCAL_DECL(real, lv[BLV * NC]);
    const int i = rows[GROUP];
    const i64 a0 = aptr[i], a1 = aptr[i + 1], c0 = cptr[i];
    const u32 words = (u32)((n + 31) >> 5);
    u32 w0, w1;
    bits_insert(bits, words, a0, a1, acol, bptr, bcol);
    u32 q = bits_scan(bits, pre, part, words, &w0, &w1);
    GLOBAL int *cc = ccol + c0;
    GLOBAL real *cv = cval + c0 * NC;
    for (u32 w = w0; w < w1; w++)
        for (u32 x = bits[w]; x; x &= x - 1, q++)
            cc[q] = (int)(w * 32 + POPC((x & (0u - x)) - 1u));
    bits_sum(bits, pre, st, lv, a0, a1, acol, aval, bptr, bcol, bval, cv,
             (u32)(cptr[i + 1] - c0));
}

/* The plan's numeric pass of rows rows[g] (C's structure known): the
 * bitmap from C's row, the values as sg_fill_b sums them. */
KERNEL sg_num_b(const i64 n, GLOBAL const int *rows, GLOBAL const i64 *aptr,
                GLOBAL const int *acol, GLOBAL const real *aval, GLOBAL const i64 *bptr,
                GLOBAL const int *bcol, GLOBAL const real *bval, GLOBAL const i64 *cptr,
                GLOBAL const int *ccol, GLOBAL real *cval)
{
    LOCAL_DECL(u32, bits[NBW]);
    LOCAL_DECL(u32, pre[NBW / 4]);
    LOCAL_DECL(u32, part[GS]);
    LOCAL_DECL(stage_t, st[STG]);
    LOCAL_DECL(real, lv[BLV * NC]);
    const int i = rows[GROUP];
    const i64 c0 = cptr[i], c1 = cptr[i + 1];
    const u32 words = (u32)((n + 31) >> 5);
    u32 w0, w1;
    for (u32 w = LID; w < words; w += GS)
        bits[w] = 0;
    BARRIER();
    for (i64 q = c0 + LID; q < c1; q += GS) {
        const u32 c = (u32)ccol[q];
        OR_L(bits + (c >> 5), 1u << (c & 31));
    }
    BARRIER();
    bits_scan(bits, pre, part, words, &w0, &w1);
    bits_sum(bits, pre, st, lv, aptr[i], aptr[i + 1], acol, aval, bptr, bcol, bval, cval + c0 * NC,
             (u32)(c1 - c0));
}

/* ---- X^T on the device (core/ops/transpose_dev.c): m rows of X, counts
 * per column, the entries placed by atomic cursors, then each row of X^T
 * sorted by its columns (X's rows): a bitonic sort in local memory of rows
 * of at most TSORT entries, a heap sort by one work-item of longer ones */
#if defined(__CUDACC__)
#define INC_G(p) atomicAdd((p), 1u)
#else
#define INC_G(p) atomic_inc((volatile __global uint *)(p))
#endif

KERNEL sg_tcount(const i64 m, GLOBAL const i64 *ptr, GLOBAL const int *col, GLOBAL u32 *cnt)
{
    const i64 i = GLOBAL_ID;
    if (i >= m) return;
    for (i64 k = ptr[i]; k < ptr[i + 1]; k++)
        INC_G(&cnt[col[k]]);
}

KERNEL sg_tfill(const i64 m, GLOBAL const i64 *ptr, GLOBAL const int *col,
                GLOBAL const real *val, GLOBAL const i64 *rptr, GLOBAL u32 *fill,
                GLOBAL int *rcol, GLOBAL real *rval)
{
    const i64 i = GLOBAL_ID;
    if (i >= m) return;
    for (i64 k = ptr[i]; k < ptr[i + 1]; k++) {
        const i64 q = rptr[col[k]] + INC_G(&fill[col[k]]);
        rcol[q] = (int)i;
        for (int e = 0; e < NC; e++)
            rval[q * NC + e] = val[k * NC + e];
    }
}

#define KEY_MAX 0x7fffffff

FN void swap_entry(GLOBAL int *c, GLOBAL real *v, i64 a, i64 b)
{
    const int tc = c[a];
    c[a] = c[b], c[b] = tc;
    for (int e = 0; e < NC; e++) {
        const real tv = v[a * NC + e];
        v[a * NC + e] = v[b * NC + e], v[b * NC + e] = tv;
    }
}

FN void sift(GLOBAL int *c, GLOBAL real *v, i64 root, i64 end)
{
    while (2 * root + 1 < end) {
        i64 ch = 2 * root + 1;
        if (ch + 1 < end && c[ch + 1] > c[ch]) ch++;
        if (c[root] >= c[ch]) return;
        swap_entry(c, v, root, ch);
        root = ch;
    }
}

FN void heap_sort(GLOBAL int *c, GLOBAL real *v, i64 len)
{
    for (i64 k = len / 2; k-- > 0;)
        sift(c, v, k, len);
    for (i64 end = len - 1; end > 0; end--) {
        swap_entry(c, v, 0, end);
        sift(c, v, 0, end);
    }
}

/* A work-group per row of X^T (rows' pointers rptr). */
KERNEL sg_tsort(GLOBAL const i64 *rptr, GLOBAL int *rcol, GLOBAL real *rval)
{
    LOCAL_DECL(int, sk[TSORT]);
    LOCAL_DECL(real, sv[TSORT * NC]);
    const i64 r = GROUP, a = rptr[r], len = rptr[r + 1] - a;
    if (len <= 1) return; /* the whole group */
    if (len > TSORT) {
        if (LID == 0) heap_sort(rcol + a, rval + a * NC, len);
        return;
    }
    int np = 2;
    while (np < len)
        np <<= 1;
    for (int k = LID; k < np; k += GS) {
        sk[k] = k < len ? rcol[a + k] : KEY_MAX;
        for (int e = 0; e < NC; e++)
            sv[k * NC + e] = k < len ? rval[(a + k) * NC + e] : (real)0;
    }
    BARRIER();
    for (int size = 2; size <= np; size <<= 1)
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int k = LID; k < np; k += GS) {
                const int q = k ^ stride;
                if (q > k && (sk[k] > sk[q]) == ((k & size) == 0)) {
                    const int tc = sk[k];
                    sk[k] = sk[q], sk[q] = tc;
                    for (int e = 0; e < NC; e++) {
                        const real tv = sv[k * NC + e];
                        sv[k * NC + e] = sv[q * NC + e], sv[q * NC + e] = tv;
                    }
                }
            }
            BARRIER();
        }
    for (int k = LID; k < len; k += GS) {
        rcol[a + k] = sk[k];
        for (int e = 0; e < NC; e++)
            rval[(a + k) * NC + e] = sv[k * NC + e];
    }
}
