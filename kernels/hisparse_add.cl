/* HiSparse addition, the device side of core/hisparse/hisparse_add.c: one source for
 * OpenCL C (after common.cl) and CUDA (NVRTC). C = ca*A + cb*B on stored
 * trees of equal node size and depth, level by level (docs/FORMAT.md has the
 * node bytes). Defines:
 *   IS_DOUBLE 0|1   scalar float | double;  NCOMP scalars per entry
 *   D, LOG2D        node size;  GS work-items per work-group (64)
 *
 * A queue entry is a pair of nodes at the same position (a from A, b from
 * B; one of them 0 in the "one" queue, which copies a subtree of one
 * operand, scaled and optionally transposed) and the absolute pool offset
 * of the parent's child slot that the new node's reference goes into (0:
 * the root cell of ctrl). Output nodes come from a pool with an atomic
 * counter in 16-byte units; a request past the capacity is not written and
 * the host, which sees the counter past the capacity, grows the pool and
 * redoes the round (never a silent overflow). */

/* real, u64..u8, GLOBAL and LID come from the prelude (common.cl); BARRIER
 * here also fences global memory on OpenCL */
#undef BARRIER
#if defined(__CUDACC__)
#if IS_DOUBLE
#define ZBITS(v) (__double_as_longlong(v) == 0)
#define NEG_ZERO __longlong_as_double((long long)0x8000000000000000ull)
#define RBITS(v) ((u64)__double_as_longlong(v))
#else
#define ZBITS(v) (__float_as_uint(v) == 0)
#define NEG_ZERO __uint_as_float(0x80000000u)
#define RBITS(v) ((u64)__float_as_uint(v))
#endif
#define STORE16(p, a, b, c, d) (*(uint4 *)(p) = make_uint4((a), (b), (c), (d)))
#define KERNEL extern "C" __global__ void __launch_bounds__(GS)
/* Blocks per SM a kernel's registers must allow, the fastest measured
 * (BENCHMARKS: HiSparse addition): hs_add_pair in groups of 256 for 5;
 * hs_add_leaf for 24, a little faster than none; hs_add_seq none (8 or 6
 * were slower; an explicit 1 gave hs_add_pair more registers: slower). */
#if GS == 256
#define KERNEL_PAIR extern "C" __global__ void __launch_bounds__(GS, 5)
#else
#define KERNEL_PAIR KERNEL
#endif
#define KERNEL_LEAF extern "C" __global__ void __launch_bounds__(GS, 24)
#define FN static __device__ inline
#define LOCAL __shared__
#define LPTR
#define GROUP ((u64)blockIdx.x)
#define BARRIER() __syncthreads()
#define ATOM_ADD64(p, v) atomicAdd((unsigned long long *)(p), (unsigned long long)(v))
#define LATOM_ADD(p, v) atomicAdd((p), (v))
#define LATOM_OR(p, v) atomicOr((p), (v))
#define POPC(x) ((u32)__popc(x))
#define CTZ(x) ((u32)(__ffs((int)(x)) - 1))
#else
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#if IS_DOUBLE
#define ZBITS(v) (as_ulong(v) == 0)
#define NEG_ZERO as_double((ulong)0x8000000000000000ul)
#define RBITS(v) as_ulong(v)
#else
#define ZBITS(v) (as_uint(v) == 0)
#define NEG_ZERO as_float(0x80000000u)
#define RBITS(v) ((u64)as_uint(v))
#endif
#define STORE16(p, a, b, c, d) (*(__global uint4 *)(p) = (uint4)((a), (b), (c), (d)))
#define KERNEL __kernel __attribute__((reqd_work_group_size(GS, 1, 1))) void
#define KERNEL_PAIR KERNEL
#define KERNEL_LEAF KERNEL
#define FN static inline
#define LOCAL __local
#define LPTR __local
#define GROUP ((u64)get_group_id(0))
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define ATOM_ADD64(p, v) atom_add((volatile __global ulong *)(p), (ulong)(v))
#define LATOM_ADD(p, v) atomic_add((p), (v))
#define LATOM_OR(p, v) atomic_or((p), (v))
#define POPC(x) ((u32)popcount((u32)(x)))
#define CTZ(x) ((u32)(31 - clz((u32)(x) & (0u - (u32)(x)))))
#endif

#define DD ((u32)D * (u32)D)
#define NW ((DD + 31) / 32) /* words of a node's cell bitmap */
#define ES ((u32)NCOMP * (u32)sizeof(real))
#define NONE 0xffffffffu
#define NQ 5
enum { Q_IP = 0, Q_LFEW = 1, Q_LMANY = 2, Q_LDENSE = 3, Q_ONE = 4 }; /* pair queues: 2 bits */
#define FEW 64 /* a leaf pair of at most FEW entries together: one work-item */
#ifndef MANY   /* more than MANY: a whole work-group (from the host: HISPI_ADD_MANY) */
#define MANY 8192
#endif

/* ctrl (64-bit words), shared with core/hisparse/hisparse_add.c */
enum {
    C_USED = 0,   /* pool bytes / 16 requested so far (past cap16: overflow) */
    C_ROOT = 1,   /* the root's reference */
    C_NODES = 2,  /* nodes written */
    C_SHARED = 3, /* child references into an operand's tree */
    C_COPIED = 4, /* one-operand subtrees queued for copying */
    C_COMMON = 5, /* leaf entries present in both operands */
    C_ERROR = 6,  /* a queue past its capacity (a scheduler bug) */
    C_REDO = 7,   /* a union too small for the dense leaf written: redo the round checking first */
    C_FILL = 8,   /* [8 + q]: entries queued for the next round */
    C_START = 16, /* [16 + q]: index of the next round's segment of queue q */
    C_CAP = 24    /* [24 + q]: its capacity */
};

typedef struct {
    u64 a, b, slot;
    u32 flags; /* ONE: bit 0 = from B, bit 1 = transpose */
    u32 pad;
} hs_entry;

typedef struct {
    GLOBAL const u8 *p; /* the node's bytes */
    int type;           /* 1..8, docs/FORMAT.md */
    u32 n;              /* COO: entries; dense: 0 */
    u32 P;              /* COO: payload offset */
} nview;

FN int is_leaf(int t)
{
    return t >= 5;
}
FN int is_dense(int t)
{
    return t == 1 || t == 5;
}
FN u32 rup(u32 v, u32 m)
{
    return (v + m - 1) / m * m;
}
FN u32 coo_x(u32 n)
{
    return n == 1 ? 1 : n == 2 ? 2 : 4;
}
FN u32 coo_payload(u32 n, u32 s)
{
    u32 x = coo_x(n), np = rup(n, x), a = x * s < 16 ? x * s : 16;
    return rup(4 + 2 * np, a);
}
FN u64 coo_bytes(u32 n, u32 s)
{
    u32 x = coo_x(n);
    return (u64)rup(coo_payload(n, s) + rup(n, x) * s, 16);
}
FN u64 dense_bytes(u32 s)
{
    return ((u64)DD * s + 15) / 16 * 16;
}
FN int dense_fits(u32 s, u32 n)
{
    return dense_bytes(s) <= coo_bytes(n, s);
}
FN int node_type(int leaf, int dense, u32 n)
{
    u32 x = coo_x(n);
    if (dense) return leaf ? 5 : 1;
    return (leaf ? 6 : 2) + (x == 1 ? 0 : x == 2 ? 1 : 2);
}
FN u32 rd32(GLOBAL const u8 *p)
{
    return *(GLOBAL const u32 *)p;
}

FN nview view(GLOBAL const u8 *pool, u64 base, u64 ref)
{
    nview v;
    v.p = pool + ((ref & ~(u64)15) - base);
    v.type = (int)(ref & 15);
    v.n = 0;
    v.P = 0;
    if (!is_dense(v.type)) {
        v.n = rd32(v.p);
        v.P = coo_payload(v.n, is_leaf(v.type) ? ES : 8);
    }
    return v;
}
/* A COO entry's coordinates (row byte, column byte) as one 16-bit word:
 * loaded, compared and copied whole (devices are little-endian: the row is
 * the low byte; CUDA always, OpenCL where __ENDIAN_LITTLE__). */
#if defined(__CUDACC__) || defined(__ENDIAN_LITTLE__)
FN u32 coo_raw(nview v, u32 i)
{
    return *(GLOBAL const u16 *)(v.p + 4 + 2 * i);
}
FN u32 raw_key(u32 r)
{
    return (r & 255u) * D + (r >> 8);
}
FN void put_raw(GLOBAL u8 *node, u32 i, u32 r)
{
    *(GLOBAL u16 *)(node + 4 + 2 * i) = (u16)r;
}
#else
FN u32 coo_raw(nview v, u32 i)
{
    return (u32)v.p[4 + 2 * i] | (u32)v.p[5 + 2 * i] << 8;
}
FN u32 raw_key(u32 r)
{
    return (r & 255u) * D + (r >> 8);
}
FN void put_raw(GLOBAL u8 *node, u32 i, u32 r)
{
    node[4 + 2 * i] = (u8)r;
    node[5 + 2 * i] = (u8)(r >> 8);
}
#endif
/* Keys i and i + 1 (i even) of a node being written: one 32-bit word. */
FN void put_raw2(GLOBAL u8 *node, u32 i, u32 r0, u32 r1)
{
#if defined(__CUDACC__) || defined(__ENDIAN_LITTLE__)
    *(GLOBAL u32 *)(node + 4 + 2 * i) = r0 | r1 << 16;
#else
    put_raw(node, i, r0);
    put_raw(node, i + 1, r1);
#endif
}
FN u32 coo_key(nview v, u32 i)
{
    return raw_key(coo_raw(v, i));
}
FN int cell_set(nview v, u32 c)
{
    GLOBAL const u8 *q = v.p + (u64)c * (is_leaf(v.type) ? ES : 8);
    if (!is_leaf(v.type)) return *(GLOBAL const u64 *)q != 0;
    for (u32 k = 0; k < NCOMP; k++)
        if (!ZBITS(((GLOBAL const real *)q)[k])) return 1;
    return 0;
}
/* out[k] = (a ? ca*a[k] : 0) + (b ? cb*b[k] : 0); returns 1 when every
 * component is zero bits (a dense cell could not hold it). */
FN int combine(GLOBAL const u8 *a, GLOBAL const u8 *b, real ca, real cb, real *out)
{
    int z = 1;
    for (u32 k = 0; k < NCOMP; k++) {
        real v = 0;
        if (a && b)
            v = ca * ((GLOBAL const real *)a)[k] + cb * ((GLOBAL const real *)b)[k];
        else if (a)
            v = ca * ((GLOBAL const real *)a)[k];
        else
            v = cb * ((GLOBAL const real *)b)[k];
        out[k] = v;
        if (!ZBITS(v)) z = 0;
    }
    return z;
}
/* The queue of a pair of child nodes: Q_LDENSE (hs_add_pair, a work-group
 * per pair) also takes COO pairs too large for a segment of hs_add_leaf
 * (one such pair alone kept a segment busy long after the others). */
FN int pair_queue(nview a, nview b)
{
    if (!is_leaf(a.type)) return Q_IP;
    if (is_dense(a.type) || is_dense(b.type)) return Q_LDENSE;
    return a.n + b.n <= FEW ? Q_LFEW : a.n + b.n <= MANY ? Q_LMANY : Q_LDENSE;
}
FN void put_ref(GLOBAL u8 *out, u64 out_base, GLOBAL u64 *ctrl, u64 slot, u64 ref)
{
    if (slot)
        *(GLOBAL u64 *)(out + (slot - out_base)) = ref;
    else
        ctrl[C_ROOT] = ref;
}
FN void put_key(GLOBAL u8 *node, u32 i, u32 key)
{
    put_raw(node, i, key / D | (key % D) << 8);
}
FN void put_entry(GLOBAL hs_entry *q, GLOBAL u64 *ctrl, int qi, u64 idx, u64 a, u64 b, u64 slot,
                  u32 flags)
{
    if (idx >= ctrl[C_CAP + qi]) { /* capacities are counted exactly: never */
        ctrl[C_ERROR] = 1;
        return;
    }
    GLOBAL hs_entry *e = q + ctrl[C_START + qi] + idx;
    /* two 16-byte stores: one sector per entry in L2 instead of five */
#if defined(__CUDACC__)
    ((GLOBAL ulonglong2 *)e)[0] = make_ulonglong2(a, b);
    ((GLOBAL ulonglong2 *)e)[1] = make_ulonglong2(slot, (u64)flags);
#elif defined(__ENDIAN_LITTLE__)
    ((GLOBAL ulong2 *)e)[0] = (ulong2)(a, b);
    ((GLOBAL ulong2 *)e)[1] = (ulong2)(slot, (ulong)flags);
#else
    e->a = a;
    e->b = b;
    e->slot = slot;
    e->flags = flags;
    e->pad = 0;
#endif
}

/* Local exclusive scans of NS values per work-item over segments of seg
 * consecutive work-items (seg a power of two dividing GS; seg = GS: the
 * whole group): v[c] becomes the sum over the segment's work-items before
 * this one, tot[c] the segment's sum. Every work-item of the group calls it
 * (barriers; none on CUDA when seg <= 32, so sc is not touched then).
 * CUDA: warp shuffles, then the warps' sums through sc (two barriers);
 * OpenCL: Hillis-Steele in sc (NS * GS words, log2(seg) steps). */
#define NS 4
#if defined(__CUDACC__)
FN void seg_scan4(LPTR u32 *sc, u32 *v, u32 *tot, int seg)
{
    int lane = LID & 31, wid = LID >> 5, wseg = seg < 32 ? 1 : seg >> 5;
    int sl = LID & ((seg < 32 ? seg : 32) - 1); /* index in the warp's part of the segment */
    u32 x[NS];
    for (int c = 0; c < NS; c++) {
        x[c] = v[c];
        for (int off = 1; off < 32 && off < seg; off <<= 1) {
            u32 t = __shfl_up_sync(0xffffffffu, x[c], off);
            if (sl >= off) x[c] += t;
        }
    }
    if (seg <= 32) { /* the segment is within a warp: its last lane holds the sum */
        for (int c = 0; c < NS; c++) {
            tot[c] = __shfl_sync(0xffffffffu, x[c], (lane | (seg - 1)));
            v[c] = x[c] - v[c];
        }
        return;
    }
    if (lane == 31)
        for (int c = 0; c < NS; c++)
            sc[c * (GS / 32) + wid] = x[c];
    BARRIER();
    int w0 = wid & ~(wseg - 1); /* the segment's first warp */
    for (int c = 0; c < NS; c++) {
        u32 before = 0, all = 0;
        for (int w = w0; w < w0 + wseg; w++) {
            u32 t = sc[c * (GS / 32) + w];
            before += w < wid ? t : 0;
            all += t;
        }
        tot[c] = all;
        v[c] = before + x[c] - v[c];
    }
    BARRIER();
}
#else
FN void seg_scan4(LPTR u32 *sc, u32 *v, u32 *tot, int seg)
{
    int sl = LID & (seg - 1);
    for (int c = 0; c < NS; c++)
        sc[c * GS + LID] = v[c];
    BARRIER();
    for (int off = 1; off < seg; off <<= 1) {
        u32 t[NS];
        for (int c = 0; c < NS; c++)
            t[c] = sl >= off ? sc[c * GS + LID - off] : 0;
        BARRIER();
        for (int c = 0; c < NS; c++)
            sc[c * GS + LID] += t[c];
        BARRIER();
    }
    for (int c = 0; c < NS; c++) {
        tot[c] = sc[c * GS + (LID | (seg - 1))];
        v[c] = sc[c * GS + LID] - v[c];
    }
    BARRIER();
}
#endif
FN void group_scan4(LPTR u32 *sc, u32 *v, u32 *tot)
{
    seg_scan4(sc, v, tot, GS);
}
FN u32 group_scan(LPTR u32 *sc, u32 v, u32 *total)
{
    u32 x[NS] = {v, 0, 0, 0}, t[NS];
    group_scan4(sc, x, t);
    *total = t[0];
    return x[0];
}

/* ORs m into bits[w] where `in`; every work-item of a warp calls it (on
 * CUDA). Keys are sorted, so the lanes of a warp that hit one word are
 * neighbours: a segmented OR over shuffles leaves a run's bits in its first
 * lane, one atomic per word instead of one per entry (same-address atomics
 * serialize: a dense leaf's 16 K cells cost 32-way waits). Elsewhere an
 * atomic per entry. */
#if defined(__CUDACC__)
FN void or_bits(LPTR u32 *bits, u32 w, u32 m, int in)
{
    const u32 all = 0xffffffffu;
    u32 wl = (u32)LID & 31;
    if (!in) w = all, m = 0;
    for (u32 off = 1; off < 32; off <<= 1) {
        u32 um = __shfl_down_sync(all, m, off), uw = __shfl_down_sync(all, w, off);
        if (wl + off < 32 && uw == w) m |= um;
    }
    u32 pw = __shfl_up_sync(all, w, 1);
    if (in && (wl == 0 || pw != w)) atomicOr(&bits[w], m);
}
#else
FN void or_bits(LPTR u32 *bits, u32 w, u32 m, int in)
{
    if (in) LATOM_OR(&bits[w], m);
}
#endif
/* One pair (a, b) per work-group: inner pairs, leaf pairs with many entries
 * or a dense node. Each operand becomes a bitmap of its occupied cells in
 * local memory (COO keys are sorted, so a COO entry's index is the count of
 * bits before its cell; a dense node's is the cell), read with coalesced
 * loads; the union is the OR, the output index of a cell the count of union
 * bits before it. The work-items visit the union (UNION_BEGIN's modes): pass
 * 1 counts (inner nodes classify their child pairs; with share bit 2, the
 * careful redo, a leaf that could be dense is checked for zero sums and kept
 * COO if it has one), the group allocates the
 * node, pass 2 writes it. Inner cells present in both operands queue a child
 * pair; in one only, the child is shared (share bit 0: A's, bit 1: B's) or
 * queued for copying. mark's loops are uniform over the group (GS is a
 * multiple of the warp size). */
FN void mark(nview v, LPTR u32 *bits)
{
    if (is_dense(v.type)) {
        for (u32 c0 = 0; c0 < DD; c0 += GS) {
            u32 c = c0 + (u32)LID;
            int in = c < DD && cell_set(v, c);
#if defined(__CUDACC__)
            /* a warp's cells are one word (c0 and GS are multiples of 32) */
            u32 m = __ballot_sync(0xffffffffu, in);
            if ((LID & 31) == 0 && c < DD) bits[c >> 5] = m;
#else
            or_bits(bits, c >> 5, 1u << (c & 31), in);
#endif
        }
    } else {
        for (u32 k0 = 0; k0 < v.n; k0 += GS) {
            u32 k = k0 + (u32)LID, c = k < v.n ? coo_key(v, k) : 0;
            or_bits(bits, c >> 5, 1u << (c & 31), k < v.n);
        }
    }
}
/* Visits the union's cells (word w, bit) that work-item LID owns, by mode:
 * 1 cell-major (cells LID, LID + GS, ...: neighbouring work-items read
 * neighbouring cells of a dense payload), 0 word-major (words LID, LID + GS,
 * ...), 2 listed (union cells LID, LID + GS, ... of ulist, the n union
 * cells in order). vi numbers the cells a work-item can visit (below
 * 32 * CLSW / 2). Pass 2 of an inner pair must visit what pass 1 did (the
 * children's queue slots, and the child pairs' queues that pass 1 keeps in
 * cls: 2 bits per vi). */
#define CLSW (2 * ((NW + GS - 1) / GS))
/* ulist: an inner pair of at most LISTMAX children (d = 256: 1024, so the
 * kernel's local memory stays within 48 KiB) */
#define LISTMAX (NW > 1024 ? 1024 : 2048)
#define UNION_BEGIN(mode)                                                                          \
    for (u32 it_ = (u32)LID; it_ < ((mode) == 2 ? n : (mode) ? DD : NW); it_ += GS) {              \
        u32 c_ = (mode) == 2 ? (u32)ulist[it_] : it_;                                              \
        u32 w = (mode) ? c_ >> 5 : c_;                                                             \
        u32 wb_ = (bA[w] | bB[w]) & ((mode) ? 1u << (c_ & 31) : 0xffffffffu);                      \
        while (wb_) {                                                                              \
            u32 bit = CTZ(wb_);                                                                    \
            u32 vi = (it_ - (u32)LID) / GS * ((mode) ? 1u : 32u) + ((mode) ? 0u : bit);            \
            wb_ &= wb_ - 1;
#define UNION_END                                                                                  \
    }                                                                                              \
    }

/* Index in v's payload of cell key (bit of word w), from the prefix counts. */
FN u32 slot_of(nview v, LPTR const u32 *bits, LPTR const u32 *pre, u32 w, u32 bit)
{
    if (is_dense(v.type)) return w * 32 + bit;
    return pre[w] + POPC(bits[w] & ((1u << bit) - 1u));
}

/* A leaf pair with a dense operand, not careful (share bit 2 clear): the
 * result is a dense leaf, since a dense node holds enough cells for dense
 * to be the smaller type (the construction's rule) and the union holds
 * them. So it is allocated at once and every cell written (absent: zero),
 * in one read of each operand: a dense operand is not marked, its cells are
 * tested as they are read, DENSE_U cells in flight per work-item. A zero
 * sum, or a union too small for a dense leaf (a node that breaks the rule),
 * asks the host to redo the round checking first. The operands' bitmaps
 * and prefix counts are hs_add_pair's local arrays. */
#define DENSE_U 4
FN void cell_value(nview v, LPTR const u32 *bits, LPTR const u32 *pre, u32 c, real *x, int *in)
{
    GLOBAL const real *q;
    if (is_dense(v.type)) {
        q = (GLOBAL const real *)(v.p + (u64)c * ES);
    } else {
        u32 w = c >> 5;
        *in = (bits[w] >> (c & 31)) & 1;
        q = (GLOBAL const real *)(v.p + v.P +
                                  (u64)(*in ? slot_of(v, bits, pre, w, c & 31) : 0) * ES);
    }
    int nz = 0;
    for (u32 k = 0; k < NCOMP; k++) {
        x[k] = is_dense(v.type) || *in ? q[k] : (real)0;
        nz |= !ZBITS(x[k]);
    }
    if (is_dense(v.type)) *in = nz;
}
FN void dense_sum(nview a, nview b, LPTR u32 *bA, LPTR u32 *bB, LPTR u32 *pA, LPTR u32 *pB,
                  LPTR u32 *sc, LPTR u64 *node_off, LPTR int *ok, GLOBAL u8 *out, u64 out_base,
                  u64 cap16, GLOBAL u64 *ctrl, u64 slot, real ca, real cb)
{
    for (u32 w = (u32)LID; w < NW; w += GS)
        bA[w] = bB[w] = 0;
    BARRIER();
    if (!is_dense(a.type)) mark(a, bA);
    if (!is_dense(b.type)) mark(b, bB);
    BARRIER();
    u32 per = (NW + GS - 1) / GS, w0 = (u32)LID * per, w1 = w0 + per;
    if (w0 > NW) w0 = NW;
    if (w1 > NW) w1 = NW;
    u32 na = 0, nb = 0;
    for (u32 w = w0; w < w1; w++) {
        na += POPC(bA[w]);
        nb += POPC(bB[w]);
    }
    u32 sv[NS] = {na, nb, 0, 0}, st[NS];
    group_scan4(sc, sv, st);
    for (u32 w = w0, oa = sv[0], ob = sv[1]; w < w1; w++) {
        pA[w] = oa;
        pB[w] = ob;
        oa += POPC(bA[w]);
        ob += POPC(bB[w]);
    }
    if (LID == 0) {
        u64 o = ATOM_ADD64(&ctrl[C_USED], dense_bytes(ES) / 16);
        *ok = o + dense_bytes(ES) / 16 <= cap16;
        *node_off = out_base + o * 16;
    }
    BARRIER();
    u32 nu = 0, nc = 0;
    if (*ok) {
        GLOBAL real *node = (GLOBAL real *)(out + (*node_off - out_base));
        for (u32 c0 = 0; c0 < DD; c0 += DENSE_U * GS) {
            real xa[DENSE_U][NCOMP], xb[DENSE_U][NCOMP];
            int ia[DENSE_U], ib[DENSE_U];
#pragma unroll
            for (u32 u = 0; u < DENSE_U; u++) { /* the loads first: DENSE_U in flight */
                u32 c = c0 + u * GS + (u32)LID;
                ia[u] = ib[u] = 0;
                if (c < DD) {
                    cell_value(a, bA, pA, c, xa[u], &ia[u]);
                    cell_value(b, bB, pB, c, xb[u], &ib[u]);
                }
            }
#pragma unroll
            for (u32 u = 0; u < DENSE_U; u++) {
                u32 c = c0 + u * GS + (u32)LID;
                if (c >= DD) continue;
                real v[NCOMP];
                int z = 1;
                for (u32 k = 0; k < NCOMP; k++) { /* as combine() */
                    v[k] = ia[u] && ib[u] ? ca * xa[u][k] + cb * xb[u][k]
                           : ia[u]        ? ca * xa[u][k]
                           : ib[u]        ? cb * xb[u][k]
                                          : (real)0;
                    z &= ZBITS(v[k]);
                }
                if (z && (ia[u] | ib[u])) v[0] = NEG_ZERO; /* an entry, not an empty cell */
                for (u32 k = 0; k < NCOMP; k++)
                    node[(u64)c * NCOMP + k] = v[k];
                nu += (u32)(ia[u] | ib[u]);
                nc += (u32)(ia[u] & ib[u]);
            }
        }
    }
    u32 rv[NS] = {nu, nc, 0, 0}, rt[NS];
    group_scan4(sc, rv, rt);
    if (*ok && LID == 0) {
        if (!dense_fits(ES, rt[0])) ctrl[C_REDO] = 1; /* a union too small (a file's node) */
        ATOM_ADD64(&ctrl[C_NODES], 1);
        if (rt[1]) ATOM_ADD64(&ctrl[C_COMMON], rt[1]);
        put_ref(out, out_base, ctrl, slot, *node_off | (u64)node_type(1, 1, rt[0]));
    }
}

KERNEL_PAIR hs_add_pair(GLOBAL const u8 *poolA, u64 baseA, GLOBAL const u8 *poolB, u64 baseB,
                        GLOBAL u8 *out, u64 out_base, u64 cap16, GLOBAL u64 *ctrl,
                        GLOBAL hs_entry *queues, u64 first, real ca, real cb, int share)
{
    LOCAL u32 bA[NW], bB[NW], pA[NW], pB[NW], pU[NW];
    LOCAL u16 ulist[LISTMAX];
    LOCAL u32 sc[NS * GS];
    LOCAL u32 lq[NQ], lcount[2]; /* queue slots; shared and copied children */
    LOCAL u64 gq[NQ];
    LOCAL u64 node_off;
    LOCAL int ok;
    hs_entry E = queues[first + GROUP];
    nview a = view(poolA, baseA, E.a), b = view(poolB, baseB, E.b);
    int leaf = is_leaf(a.type);
    u32 es = leaf ? ES : 8;
    int careful = (share >> 2) & 1;
    if (leaf && !careful && (is_dense(a.type) || is_dense(b.type))) {
        dense_sum(a, b, bA, bB, pA, pB, sc, &node_off, &ok, out, out_base, cap16, ctrl, E.slot, ca,
                  cb);
    } else {
        for (u32 w = (u32)LID; w < NW; w += GS)
            bA[w] = bB[w] = 0;
        if (LID < NQ) lq[LID] = 0;
        if (LID < 2) lcount[LID] = 0;
        BARRIER();
        mark(a, bA);
        mark(b, bB);
        BARRIER();
        /* prefix counts: work-item l scans the words [l, l + 1) * per */
        u32 per = (NW + GS - 1) / GS, w0 = (u32)LID * per, w1 = w0 + per;
        if (w0 > NW) w0 = NW;
        if (w1 > NW) w1 = NW;
        u32 na = 0, nb = 0, nu = 0, nc = 0;
        for (u32 w = w0; w < w1; w++) {
            na += POPC(bA[w]);
            nb += POPC(bB[w]);
            nu += POPC(bA[w] | bB[w]);
            nc += POPC(bA[w] & bB[w]);
        }
        u32 sv[NS] = {na, nb, nu, nc}, st[NS];
        group_scan4(sc, sv, st);
        u32 oa = sv[0], ob = sv[1], ou = sv[2], n = st[2], comtot = st[3];
        for (u32 w = w0; w < w1; w++) {
            pA[w] = oa;
            pB[w] = ob;
            pU[w] = ou;
            oa += POPC(bA[w]);
            ob += POPC(bB[w]);
            ou += POPC(bA[w] | bB[w]);
        }
        BARRIER();
        /* An inner pair of few children lists the union's cells in order, so
         * the children's reads spread evenly over the work-items: a clustered
         * node fills a few words, which word-major gave to a few work-items in
         * turn (rmat: waits at barriers); cell-major cost more bitmap tests than
         * it saved (both measured on a GPU, BENCHMARKS: HiSparse addition). */
        int listed = !leaf && n <= LISTMAX;
        if (listed) {
            for (u32 w = w0; w < w1; w++)
                for (u32 all = bA[w] | bB[w], o = pU[w]; all; all &= all - 1)
                    ulist[o++] = (u16)(w * 32 + CTZ(all));
            BARRIER();
        }
        /* A result that could be a dense leaf is written dense at once, one
         * read of the operands; an exact zero sum there is stored as -0.0 (a
         * dense cell whose bits are all zero is empty). The careful redo
         * (share bit 2, asked for by hs_add_pair's dense_sum when a union is
         * too small for a dense leaf: a file's rule-breaking node) checks the
         * sums first and keeps a leaf with a zero sum COO. */
        int zcheck = leaf && careful && dense_fits(ES, n);
        u32 qc[NQ] = {0, 0, 0, 0, 0};
        u32 cls[CLSW];
        for (int k = 0; k < CLSW; k++)
            cls[k] = 0;
        u32 zero = 0;
        /* a dense result (or operand) is walked cell by cell: coalesced payloads */
        int cells1 = leaf ? is_dense(a.type) || is_dense(b.type) : dense_fits(8, n);
        if (zcheck || !leaf) {
            UNION_BEGIN(listed ? 2 : cells1)
            int ina = (bA[w] >> bit) & 1, inb = (bB[w] >> bit) & 1;
            u32 ia = ina ? slot_of(a, bA, pA, w, bit) : 0;
            u32 ib = inb ? slot_of(b, bB, pB, w, bit) : 0;
            GLOBAL const u8 *qa = ina ? a.p + (is_dense(a.type) ? 0 : a.P) + (u64)ia * es : 0;
            GLOBAL const u8 *qb = inb ? b.p + (is_dense(b.type) ? 0 : b.P) + (u64)ib * es : 0;
            if (leaf) {
                real v[NCOMP];
                zero |= (u32)combine(qa, qb, ca, cb, v);
            } else if (ina && inb) { /* the child pair's queue, kept for pass 2 */
                int q = pair_queue(view(poolA, baseA, *(GLOBAL const u64 *)qa),
                                   view(poolB, baseB, *(GLOBAL const u64 *)qb));
                qc[q]++;
                cls[vi >> 4] |= (u32)q << (2 * (vi & 15));
            } else if (!(share & (ina ? 1 : 2))) {
                qc[Q_ONE]++;
            }
            UNION_END
        }
        u32 zany = 0;
        if (zcheck) /* uniform over the group */
            (void)group_scan(sc, zero, &zany);
        u32 qoff[NQ];
        if (!leaf)
            for (int q = 0; q < NQ; q++)
                qoff[q] = qc[q] ? LATOM_ADD(&lq[q], qc[q]) : 0;
        BARRIER();
        int dense = leaf ? dense_fits(ES, n) && !zany : dense_fits(8, n);
        int type = node_type(leaf, dense, n);
        u64 bytes = dense ? dense_bytes(es) : coo_bytes(n, es);
        if (LID == 0) {
            u64 o = ATOM_ADD64(&ctrl[C_USED], bytes / 16);
            ok = o + bytes / 16 <= cap16;
            node_off = out_base + o * 16;
            if (ok) {
                ATOM_ADD64(&ctrl[C_NODES], 1);
                if (leaf && comtot) ATOM_ADD64(&ctrl[C_COMMON], comtot);
                for (int q = 0; q < NQ; q++)
                    gq[q] = lq[q] ? ATOM_ADD64(&ctrl[C_FILL + q], lq[q]) : 0;
            }
        }
        BARRIER();
        /* no early return: a barrier follows (PoCL needs every work-item there) */
        GLOBAL u8 *node = out + (node_off - out_base);
        u32 P = dense ? 0 : coo_payload(n, es);
        if (ok && !dense && LID == 0) *(GLOBAL u32 *)node = n;
        u32 nshared = 0, ncopied = 0;
        /* inner children keep pass 1's cells per work-item (their queue slots) */
        if (ok) {
            UNION_BEGIN(listed ? 2 : dense)
            u32 all = bA[w] | bB[w];
            u32 key = w * 32 + bit;
            int ina = (bA[w] >> bit) & 1, inb = (bB[w] >> bit) & 1;
            u32 ia = ina ? slot_of(a, bA, pA, w, bit) : 0;
            u32 ib = inb ? slot_of(b, bB, pB, w, bit) : 0;
            GLOBAL const u8 *qa = ina ? a.p + (is_dense(a.type) ? 0 : a.P) + (u64)ia * es : 0;
            GLOBAL const u8 *qb = inb ? b.p + (is_dense(b.type) ? 0 : b.P) + (u64)ib * es : 0;
            u32 i = pU[w] + POPC(all & ((1u << bit) - 1u));
            GLOBAL u8 *pay = dense ? node + (u64)key * es : node + P + (u64)i * es;
            if (!dense) {
                put_key(node, i, key);
                if (i == n - 1) /* padding repeats the last key */
                    for (u32 j = n; j < rup(n, coo_x(n)); j++)
                        put_key(node, j, key);
            }
            if (leaf) {
                real v[NCOMP];
                if (combine(qa, qb, ca, cb, v) && dense) v[0] = NEG_ZERO;
                for (u32 k = 0; k < NCOMP; k++)
                    ((GLOBAL real *)pay)[k] = v[k];
            } else {
                u64 slot = node_off + (u64)(pay - node);
                if (ina && inb) {
                    u64 ra = *(GLOBAL const u64 *)qa, rb = *(GLOBAL const u64 *)qb;
                    int q = (int)(cls[vi >> 4] >> (2 * (vi & 15))) & 3;
                    put_entry(queues, ctrl, q, gq[q] + qoff[q]++, ra, rb, slot, 0);
                } else {
                    u64 r = *(GLOBAL const u64 *)(ina ? qa : qb);
                    if (share & (ina ? 1 : 2)) {
                        *(GLOBAL u64 *)pay = r;
                        nshared++;
                    } else {
                        put_entry(queues, ctrl, Q_ONE, gq[Q_ONE] + qoff[Q_ONE]++, r, 0, slot,
                                  ina ? 0u : 1u);
                        ncopied++;
                    }
                }
            }
            UNION_END
        }
        /* one global atomic per group: a power-law matrix shares millions of
         * children, and same-address atomics serialize */
        if (nshared) LATOM_ADD(&lcount[0], nshared);
        if (ncopied) LATOM_ADD(&lcount[1], ncopied);
        BARRIER();
        if (ok && LID == 0) {
            if (lcount[0]) ATOM_ADD64(&ctrl[C_SHARED], lcount[0]);
            if (lcount[1]) ATOM_ADD64(&ctrl[C_COPIED], lcount[1]);
            put_ref(out, out_base, ctrl, E.slot, node_off | (u64)type);
        }
    }
}

/* Write combining for a node that one work-item writes: its 32-bit words go
 * out as whole 16-byte stores, offsets increasing, instead of a store per
 * key pair and per value, each a partial L2 sector write (rmat's seq kernel
 * wrote 2.97 GB of L2 sectors for 1.08 GB of DRAM). Bytes of a chunk not
 * put are written as zeros. Little-endian devices (the words' byte order). */
#if defined(__CUDACC__) || defined(__ENDIAN_LITTLE__)
#define WCOMB 1
typedef struct {
    u32 ch; /* the 16-byte chunk held (NONE: none) */
    u32 w0, w1, w2, w3;
} wcomb;
FN void wc_flush(GLOBAL u8 *node, wcomb *c)
{
    if (c->ch != NONE) STORE16(node + 16 * (u64)c->ch, c->w0, c->w1, c->w2, c->w3);
}
FN void wc_put(GLOBAL u8 *node, wcomb *c, u32 off, u32 word)
{
    u32 ch = off >> 4, k = (off >> 2) & 3;
    if (ch != c->ch) {
        wc_flush(node, c);
        c->ch = ch;
        c->w0 = c->w1 = c->w2 = c->w3 = 0;
    }
    c->w0 = k == 0 ? word : c->w0; /* selects: no indexed registers */
    c->w1 = k == 1 ? word : c->w1;
    c->w2 = k == 2 ? word : c->w2;
    c->w3 = k == 3 ? word : c->w3;
}
FN void wc_real(GLOBAL u8 *node, wcomb *c, u32 off, real v)
{
    u64 bits = RBITS(v);
    wc_put(node, c, off, (u32)bits);
    if (sizeof(real) == 8) wc_put(node, c, off + 4, (u32)(bits >> 32));
}
#else
#define WCOMB 0
#endif

/* Leaf pairs of at most FEW entries together, both COO: a work-item each,
 * a sequential merge; the group allocates its nodes with one atomic. */
KERNEL hs_add_seq(GLOBAL const u8 *poolA, u64 baseA, GLOBAL const u8 *poolB, u64 baseB,
                  GLOBAL u8 *out, u64 out_base, u64 cap16, GLOBAL u64 *ctrl, GLOBAL hs_entry *queues,
                  u64 first, u64 count, real ca, real cb)
{
    LOCAL u32 sc[NS * GS];
    LOCAL u64 goff;
    LOCAL int ok;
    u64 e = GROUP * GS + (u64)LID;
    int live = e < count;
    hs_entry E;
    nview a, b;
    u32 n = 0, common = 0;
    int zero = 0;
    u64 bytes = 0;
    if (live) {
        E = queues[first + e];
        a = view(poolA, baseA, E.a);
        b = view(poolB, baseB, E.b);
        int zcheck = dense_fits(ES, a.n + b.n);
        u32 i = 0, j = 0;
        while (i < a.n || j < b.n) {
            u32 ka = i < a.n ? coo_key(a, i) : NONE, kb = j < b.n ? coo_key(b, j) : NONE;
            int ina = ka <= kb, inb = kb <= ka;
            if (zcheck) {
                real v[NCOMP];
                zero |= combine(ina ? a.p + a.P + (u64)i * ES : 0,
                                inb ? b.p + b.P + (u64)j * ES : 0, ca, cb, v);
            }
            n++;
            common += ina && inb;
            i += ina;
            j += inb;
        }
    }
    int dense = live && dense_fits(ES, n) && !zero;
    if (live) bytes = dense ? dense_bytes(ES) : coo_bytes(n, ES);
    u32 sv[NS] = {(u32)(bytes / 16), common, (u32)live, 0}, st[NS];
    group_scan4(sc, sv, st);
    u32 my16 = sv[0], tot16 = st[0], comtot = st[1], ntot = st[2];
    if (LID == 0) {
        u64 o = ATOM_ADD64(&ctrl[C_USED], tot16);
        ok = o + tot16 <= cap16;
        goff = o;
        if (ok) {
            ATOM_ADD64(&ctrl[C_NODES], ntot);
            if (comtot) ATOM_ADD64(&ctrl[C_COMMON], comtot);
        }
    }
    BARRIER();
    if (!ok || !live) return;
    u64 node_off = out_base + (goff + my16) * 16;
    GLOBAL u8 *node = out + (node_off - out_base);
    u32 P = dense ? 0 : coo_payload(n, ES);
    u32 i = 0, j = 0, o = 0, held = 0, last = 0;
#if WCOMB
    if (!dense) {
        /* the header and keys through kc, the values through vc: each
         * stream's offsets increase, and they share a chunk only when the
         * node is one chunk (P not a multiple of 16 means a 16-byte node) */
        wcomb kc = {NONE, 0, 0, 0, 0}, vc = {NONE, 0, 0, 0, 0};
        wc_put(node, &kc, 0, n);
        while (i < a.n || j < b.n) {
            u32 ra = i < a.n ? coo_raw(a, i) : 0, rb = j < b.n ? coo_raw(b, j) : 0;
            u32 ka = i < a.n ? raw_key(ra) : NONE, kb = j < b.n ? raw_key(rb) : NONE;
            int ina = ka <= kb, inb = kb <= ka;
            u32 r = ina ? ra : rb;
            if (o & 1) wc_put(node, &kc, 4 + 2 * (o - 1), held | r << 16);
            held = last = r;
            real v[NCOMP];
            combine(ina ? a.p + a.P + (u64)i * ES : 0, inb ? b.p + b.P + (u64)j * ES : 0, ca, cb,
                    v);
            for (u32 k = 0; k < NCOMP; k++)
                wc_real(node, &vc, P + o * ES + k * (u32)sizeof(real), v[k]);
            o++;
            i += ina;
            j += inb;
        }
        for (u32 k = n & ~1u; k < rup(n, coo_x(n)); k += 2) /* the odd last key, padding */
            wc_put(node, &kc, 4 + 2 * k, last | last << 16);
        if (kc.ch == vc.ch) {
            kc.w0 |= vc.w0;
            kc.w1 |= vc.w1;
            kc.w2 |= vc.w2;
            kc.w3 |= vc.w3;
            vc.ch = NONE;
        }
        wc_flush(node, &kc);
        wc_flush(node, &vc);
        put_ref(out, out_base, ctrl, E.slot, node_off | (u64)node_type(1, 0, n));
        return;
    }
#endif
    if (!dense) *(GLOBAL u32 *)node = n;
    while (i < a.n || j < b.n) {
        u32 ra = i < a.n ? coo_raw(a, i) : 0, rb = j < b.n ? coo_raw(b, j) : 0;
        u32 ka = i < a.n ? raw_key(ra) : NONE, kb = j < b.n ? raw_key(rb) : NONE;
        int ina = ka <= kb, inb = kb <= ka;
        u32 key = ina ? ka : kb, r = ina ? ra : rb;
        GLOBAL u8 *pay = dense ? node + (u64)key * ES : node + P + (u64)o * ES;
        if (!dense && (o & 1)) put_raw2(node, o - 1, held, r);
        held = r;
        real v[NCOMP];
        combine(ina ? a.p + a.P + (u64)i * ES : 0, inb ? b.p + b.P + (u64)j * ES : 0, ca, cb, v);
        for (u32 k = 0; k < NCOMP; k++)
            ((GLOBAL real *)pay)[k] = v[k];
        last = r;
        o++;
        i += ina;
        j += inb;
    }
    if (!dense) /* the odd last key, and padding that repeats it */
        for (u32 k = n & ~1u; k < rup(n, coo_x(n)); k += 2)
            put_raw2(node, k, last, last);
    put_ref(out, out_base, ctrl, E.slot, node_off | (u64)node_type(1, dense, n));
}

/* Leaf pairs of two COO nodes with more than FEW entries together: LP pairs
 * per work-group (LP from the host: as many as local memory holds), a
 * segment of SG = GS / LP work-items each. Entry-major: each operand
 * becomes a bitmap of its cells with 16-bit prefix counts per word (of A,
 * of B and of B's cells not in A: D), so a rank among an operand's keys is
 * a prefix and a popcount. A cell's output index is rank_A + rank_D: entry
 * k of A goes to k + rank_D(key) (B's value, if any, at rank_B(key)), an
 * entry of B not in A to rank_A(key) + rank_D(key). Neighbouring
 * work-items read and write neighbouring entries (coalesced), keys are
 * copied as 16-bit words, and A's and B's entries are taken in step (step
 * t: the t-th of T equal slices of each), so both halves of an output
 * region are written close in time (apart, a large leaf's partly written
 * sectors left L2 between its A and B passes: many more DRAM bytes). */
#ifndef LP
#define LP 1
#endif
#define SG (GS / LP)
/* Work-item `lane` scans the words [lane, lane + 1) * PER; one pad word
 * per PER words puts those runs on distinct banks (WI: padded index). */
#define PER ((NW + SG - 1) / SG)
#define LOG2PER                                                                                    \
    (PER >= 128  ? 7                                                                               \
     : PER >= 64 ? 6                                                                               \
     : PER >= 32 ? 5                                                                               \
     : PER >= 16 ? 4                                                                               \
     : PER >= 8  ? 3                                                                               \
     : PER >= 4  ? 2                                                                               \
     : PER >= 2  ? 1                                                                               \
                 : 0)
#define WI(w) ((w) + ((w) >> LOG2PER))
#define NWP (NW + NW / PER + 1)

/* Marks v's cells in bits (work-items lane, lane + SG, ...; SG is a
 * multiple of 32, so the loop is uniform over each warp). */
FN void mark_coo(nview v, LPTR u32 *bits, u32 lane)
{
    for (u32 k0 = 0; k0 < v.n; k0 += SG) {
        u32 k = k0 + lane, c = k < v.n ? coo_key(v, k) : 0;
        or_bits(bits, WI(c >> 5), 1u << (c & 31), k < v.n);
    }
}
FN u32 below(u32 c)
{
    return (1u << (c & 31)) - 1u;
}
/* Rank of cell c among the cells set in bits (pre: counts before each word). */
FN u32 rank_of(LPTR const u32 *bits, LPTR const u16 *pre, u32 c)
{
    u32 w = WI(c >> 5);
    return (u32)pre[w] + POPC(bits[w] & below(c));
}
/* Rank of c among B's cells not in A. */
FN u32 rank_d(LPTR const u32 *bA, LPTR const u32 *bB, LPTR const u16 *pD, u32 c)
{
    u32 w = WI(c >> 5);
    return (u32)pD[w] + POPC(bB[w] & ~bA[w] & below(c));
}
FN int has_cell(LPTR const u32 *bits, u32 c)
{
    return (bits[WI(c >> 5)] >> (c & 31)) & 1;
}
/* Writes output entry i (cell c, coordinates r) of value v. */
FN void leaf_put(GLOBAL u8 *node, int dense, u32 P, u32 n, u32 np, u32 i, u32 c, u32 r,
                 const real *v)
{
    GLOBAL real *pay = (GLOBAL real *)(dense ? node + (u64)c * ES : node + P + (u64)i * ES);
    for (u32 q = 0; q < NCOMP; q++)
        pay[q] = v[q];
    if (!dense)
        for (u32 t = i; t < (i == n - 1 ? np : i + 1); t++) /* padding repeats the last key */
            put_raw(node, t, r);
}

KERNEL_LEAF hs_add_leaf(GLOBAL const u8 *poolA, u64 baseA, GLOBAL const u8 *poolB, u64 baseB,
                        GLOBAL u8 *out, u64 out_base, u64 cap16, GLOBAL u64 *ctrl,
                        GLOBAL hs_entry *queues, u64 first, u64 count, real ca, real cb)
{
    LOCAL u32 bits[LP * 2 * NWP];
    LOCAL u16 pre[LP * 3 * NWP];
    LOCAL u32 sc[NS * GS];
    LOCAL u32 zf[LP];
    LOCAL u64 goff;
    LOCAL int ok;
    u32 lane = (u32)LID % SG, pr = (u32)LID / SG;
    u64 e = GROUP * LP + pr;
    int live = e < count;
    LPTR u32 *bA = bits + pr * 2 * NWP, *bB = bA + NWP;
    LPTR u16 *pA = pre + pr * 3 * NWP, *pB = pA + NWP, *pD = pB + NWP;
    hs_entry E;
    nview a, b;
    a.n = b.n = 0;
    a.p = b.p = poolA;
    a.P = b.P = 0;
    a.type = b.type = 6;
    if (live) {
        E = queues[first + e];
        a = view(poolA, baseA, E.a);
        b = view(poolB, baseB, E.b);
    }
    for (u32 w = lane; w < NWP; w += SG)
        bA[w] = bB[w] = 0;
    if (lane == 0) zf[pr] = 0;
    BARRIER();
    mark_coo(a, bA, lane);
    mark_coo(b, bB, lane);
    BARRIER();
    /* prefix counts: lane l scans the words [l, l + 1) * PER */
    u32 w0 = lane * PER, w1 = w0 + PER;
    if (w0 > NW) w0 = NW;
    if (w1 > NW) w1 = NW;
    u32 na = 0, nb = 0, nd = 0;
    for (u32 w = WI(w0); w < WI(w0) + (w1 - w0); w++) {
        na += POPC(bA[w]);
        nb += POPC(bB[w]);
        nd += POPC(bB[w] & ~bA[w]);
    }
    u32 sv[NS] = {na, nb, nd, 0}, st[NS];
    seg_scan4(sc, sv, st, (int)SG);
    u32 oa = sv[0], ob = sv[1], od = sv[2];
    for (u32 w = WI(w0); w < WI(w0) + (w1 - w0); w++) {
        pA[w] = (u16)oa;
        pB[w] = (u16)ob;
        pD[w] = (u16)od;
        oa += POPC(bA[w]);
        ob += POPC(bB[w]);
        od += POPC(bB[w] & ~bA[w]);
    }
    u32 n = a.n + st[2], common = b.n - st[2];
    BARRIER();
    /* a result that could be a dense leaf: any sum of zero bits keeps it COO */
    int zcheck = live && dense_fits(ES, n);
    if (zcheck) {
        u32 z = 0;
        for (u32 k = lane; k < a.n; k += SG) {
            u32 c = coo_key(a, k);
            real v[NCOMP];
            z |= (u32)combine(a.p + a.P + (u64)k * ES,
                              has_cell(bB, c) ? b.p + b.P + (u64)rank_of(bB, pB, c) * ES : 0, ca,
                              cb, v);
        }
        for (u32 j = lane; j < b.n; j += SG) {
            real v[NCOMP];
            if (!has_cell(bA, coo_key(b, j)))
                z |= (u32)combine(0, b.p + b.P + (u64)j * ES, ca, cb, v);
        }
        if (z) LATOM_OR(&zf[pr], 1u);
    }
    BARRIER();
    int dense = zcheck && !zf[pr];
    u32 b16 = live ? (u32)((dense ? dense_bytes(ES) : coo_bytes(n, ES)) / 16) : 0;
    u32 gv[NS] = {lane == 0 ? b16 : 0, lane == 0 ? (u32)live : 0, lane == 0 ? common : 0, 0},
        gt[NS];
    group_scan4(sc, gv, gt);
    u32 my16 = gv[0] - (lane ? b16 : 0);
    if (LID == 0) {
        u64 o = ATOM_ADD64(&ctrl[C_USED], gt[0]);
        ok = o + gt[0] <= cap16;
        goff = o;
        if (ok) {
            if (gt[1]) ATOM_ADD64(&ctrl[C_NODES], gt[1]);
            if (gt[2]) ATOM_ADD64(&ctrl[C_COMMON], gt[2]);
        }
    }
    BARRIER();
    if (!ok || !live) return;
    u64 node_off = out_base + (goff + my16) * 16;
    GLOBAL u8 *node = out + (node_off - out_base);
    u32 P = dense ? 0 : coo_payload(n, ES), np = rup(n, coo_x(n));
    if (!dense && lane == 0) *(GLOBAL u32 *)node = n;
    /* step t takes A's entries [t, t + 1) * SA and B's [t, t + 1) * SB */
    u32 T = ((a.n > b.n ? a.n : b.n) + SG - 1) / SG + (a.n + b.n == 0);
    u32 SA = (a.n + T - 1) / T, SB = (b.n + T - 1) / T;
    for (u32 t = 0; t < T; t++) {
        u32 k = t * SA + lane, j = t * SB + lane;
        if (lane < SA && k < a.n) {
            u32 r = coo_raw(a, k), c = raw_key(r);
            real v[NCOMP];
            combine(a.p + a.P + (u64)k * ES,
                    has_cell(bB, c) ? b.p + b.P + (u64)rank_of(bB, pB, c) * ES : 0, ca, cb, v);
            leaf_put(node, dense, P, n, np, k + rank_d(bA, bB, pD, c), c, r, v);
        }
        if (lane < SB && j < b.n) {
            u32 r = coo_raw(b, j), c = raw_key(r);
            if (!has_cell(bA, c)) {
                real v[NCOMP];
                combine(0, b.p + b.P + (u64)j * ES, ca, cb, v);
                leaf_put(node, dense, P, n, np, rank_of(bA, pA, c) + rank_d(bA, bB, pD, c), c, r,
                         v);
            }
        }
    }
    if (lane == 0) put_ref(out, out_base, ctrl, E.slot, node_off | (u64)node_type(1, dense, n));
}

/* A node of one operand copied (flags bit 0: from B, scaled by cb, else
 * from A by ca; bit 1: transposed locally, keys (r, c) -> (c, r)), a
 * work-group each; an inner node queues its children for copying the
 * same way. A transposed COO node is reordered by a counting sort over
 * its columns (work-item l owns the columns = l mod GS). */
KERNEL hs_add_one(GLOBAL const u8 *poolA, u64 baseA, GLOBAL const u8 *poolB, u64 baseB,
                  GLOBAL u8 *out, u64 out_base, u64 cap16, GLOBAL u64 *ctrl,
                  GLOBAL hs_entry *queues, u64 first, real ca, real cb)
{
    LOCAL u32 start[D];
    LOCAL u32 sc[NS * GS];
    LOCAL u64 node_off, gbase;
    LOCAL int ok;
    hs_entry E = queues[first + GROUP];
    int fromb = E.flags & 1, tr = (E.flags >> 1) & 1;
    nview v = fromb ? view(poolB, baseB, E.a) : view(poolA, baseA, E.a);
    real c = fromb ? cb : ca;
    int leaf = is_leaf(v.type), dense = is_dense(v.type);
    u32 es = leaf ? ES : 8, n = v.n;
    u64 bytes = dense ? dense_bytes(es) : coo_bytes(n, es);
    /* children this work-item queues (inner nodes) */
    u32 mine = 0;
    if (!leaf) {
        if (dense) {
            for (u32 k = (u32)LID; k < DD; k += GS)
                mine += cell_set(v, k);
        } else if (tr) {
            for (u32 k = 0; k < n; k++)
                mine += (v.p[5 + 2 * k] % GS) == (u32)LID;
        } else {
            for (u32 k = (u32)LID; k < n; k += GS)
                mine++;
        }
    }
    u32 tot, myq = group_scan(sc, mine, &tot);
    if (LID == 0) {
        u64 o = ATOM_ADD64(&ctrl[C_USED], bytes / 16);
        ok = o + bytes / 16 <= cap16;
        node_off = out_base + o * 16;
        if (ok) {
            ATOM_ADD64(&ctrl[C_NODES], 1);
            gbase = tot ? ATOM_ADD64(&ctrl[C_FILL + Q_ONE], tot) : 0;
        }
    }
    BARRIER();
    /* no early return: barriers follow (PoCL needs every work-item there) */
    int good = ok;
    GLOBAL u8 *node = out + (node_off - out_base);
    u64 qi = gbase + myq;
    if (dense && good) {
        for (u32 k = (u32)LID; k < DD; k += GS) {
            if (!cell_set(v, k)) continue;
            u32 t = tr ? (k % D) * D + k / D : k;
            GLOBAL const u8 *src = v.p + (u64)k * es;
            GLOBAL u8 *dst = node + (u64)t * es;
            if (leaf)
                for (u32 q = 0; q < NCOMP; q++)
                    ((GLOBAL real *)dst)[q] = c * ((GLOBAL const real *)src)[q];
            else
                put_entry(queues, ctrl, Q_ONE, qi++, *(GLOBAL const u64 *)src, 0,
                          node_off + (u64)t * 8, E.flags);
        }
    }
    if (!dense) {
        u32 P = v.P, np = rup(n, coo_x(n));
        if (good && LID == 0) *(GLOBAL u32 *)node = n;
        if (tr) {
            for (u32 k = (u32)LID; k < D; k += GS)
                start[k] = 0;
            BARRIER();
            for (u32 k = 0; k < n; k++) { /* column histogram, owner-written */
                u32 col = v.p[5 + 2 * k];
                if (col % GS == (u32)LID) start[col]++;
            }
            BARRIER();
            if (LID == 0) {
                u32 s = 0;
                for (u32 k = 0; k < D; k++) {
                    u32 t = start[k];
                    start[k] = s;
                    s += t;
                }
            }
            BARRIER();
        }
        for (u32 k = tr ? 0 : (u32)LID; good && k < n; k += tr ? 1 : GS) {
            u32 r = coo_raw(v, k), o = k;
            if (tr) {
                if ((r >> 8) % GS != (u32)LID) continue;
                o = start[r >> 8]++;
                r = r >> 8 | (r & 255u) << 8; /* (row, col) -> (col, row) */
            }
            put_raw(node, o, r);
            GLOBAL const u8 *src = v.p + P + (u64)k * es;
            GLOBAL u8 *dst = node + P + (u64)o * es;
            if (leaf)
                for (u32 q = 0; q < NCOMP; q++)
                    ((GLOBAL real *)dst)[q] = c * ((GLOBAL const real *)src)[q];
            else
                put_entry(queues, ctrl, Q_ONE, qi++, *(GLOBAL const u64 *)src, 0,
                          node_off + P + (u64)o * 8, E.flags);
        }
        BARRIER();
        if (good && LID == 0)
            for (u32 k = n; k < np; k++) {
                node[4 + 2 * k] = node[4 + 2 * (n - 1)];
                node[5 + 2 * k] = node[5 + 2 * (n - 1)];
            }
    }
    if (good && LID == 0) put_ref(out, out_base, ctrl, E.slot, node_off | (u64)v.type);
}

/* Leaves of one operand copied without a transpose (the last level of the
 * addition's "one" queue): a work-item per leaf sizes it and the group
 * allocates its leaves with one atomic (a work-group per leaf of a few
 * entries left most of its work-items idle). The group's output range is
 * contiguous, so its work-items then copy it together in 16-byte chunks,
 * chunk g from the leaf whose range holds it (a binary search): coalesced,
 * and a leaf of a thousand entries is no longer one work-item's loop.
 * Values are scaled on the way (a dense leaf's empty cells stay zero). */
#if IS_DOUBLE
typedef double2 chunk16;
#else
typedef float4 chunk16;
#endif
FN real scale_at(real x, real c, u32 o, u32 lo, u32 hi, int dense)
{
    return o >= lo && o < hi && !(dense && ZBITS(x)) ? c * x : x;
}
KERNEL hs_add_one_seq(GLOBAL const u8 *poolA, u64 baseA, GLOBAL const u8 *poolB, u64 baseB,
                      GLOBAL u8 *out, u64 out_base, u64 cap16, GLOBAL u64 *ctrl,
                      GLOBAL hs_entry *queues, u64 first, u64 count, real ca, real cb)
{
    LOCAL u32 sc[NS * GS];
    LOCAL u32 at16[GS], vlo[GS], vhi[GS]; /* leaf t: first chunk; its values' bytes */
    LOCAL u64 src[GS];                    /* leaf t: pool offset | from B (bit 63) */
    LOCAL u64 goff;
    LOCAL int ok;
    u64 e = GROUP * GS + (u64)LID;
    int live = e < count;
    hs_entry E;
    nview v;
    u64 bytes = 0;
    if (live) {
        E = queues[first + e];
        int fromb = E.flags & 1;
        v = fromb ? view(poolB, baseB, E.a) : view(poolA, baseA, E.a);
        int dense = is_dense(v.type);
        bytes = dense ? dense_bytes(ES) : coo_bytes(v.n, ES);
        src[LID] = ((E.a & ~(u64)15) - (fromb ? baseB : baseA)) | (u64)fromb << 63;
        vlo[LID] = dense ? 0 : v.P;
        vhi[LID] = (dense ? DD * ES : v.P + v.n * ES) | (u32)dense << 31;
    }
    u32 sv[NS] = {(u32)(bytes / 16), (u32)live, 0, 0}, st[NS];
    group_scan4(sc, sv, st);
    u32 my16 = sv[0], tot16 = st[0], ntot = st[1];
    at16[LID] = my16;
    if (LID == 0) {
        u64 o = ATOM_ADD64(&ctrl[C_USED], tot16);
        ok = o + tot16 <= cap16;
        goff = o;
        if (ok && ntot) ATOM_ADD64(&ctrl[C_NODES], ntot);
    }
    BARRIER();
    if (!ok) return;
    GLOBAL chunk16 *dst = (GLOBAL chunk16 *)(out + goff * 16);
    for (u32 g = (u32)LID; g < tot16; g += GS) {
        u32 lo = 0, hi = GS - 1; /* the last leaf t with at16[t] <= g */
        while (lo < hi) {
            u32 mid = (lo + hi + 1) / 2;
            if (at16[mid] <= g)
                lo = mid;
            else
                hi = mid - 1;
        }
        u64 so = src[lo];
        int fromb = (int)(so >> 63), dense = (int)(vhi[lo] >> 31);
        u32 off = (g - at16[lo]) * 16, b0 = vlo[lo], b1 = vhi[lo] & 0x7fffffffu;
        GLOBAL const u8 *p = (fromb ? poolB : poolA) + (so & ~((u64)1 << 63)) + off;
        chunk16 x = *(GLOBAL const chunk16 *)p;
        real c = fromb ? cb : ca;
        if (c != (real)1) {
            const u32 rs = (u32)sizeof(real);
            x.x = scale_at(x.x, c, off, b0, b1, dense);
            x.y = scale_at(x.y, c, off + rs, b0, b1, dense);
#if !IS_DOUBLE
            x.z = scale_at(x.z, c, off + 2 * rs, b0, b1, dense);
            x.w = scale_at(x.w, c, off + 3 * rs, b0, b1, dense);
#endif
        }
        dst[g] = x;
    }
    if (live) put_ref(out, out_base, ctrl, E.slot, (out_base + (goff + my16) * 16) | (u64)v.type);
}
