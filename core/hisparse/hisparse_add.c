/* C = op_a(A) + op_b(B) on HiSparse trees: the public entry, and the device
 * addition (issue 5) run by a host-polled controller through the backends'
 * run-time kernel ops (kernels/hisparse_add.cl: OpenCL, or CUDA through
 * NVRTC), so one controller serves both backends.
 *
 * Stored trees: op(A) composed with A's transposed flag gives tA (likewise
 * tB). C is stored in A's orientation with C's flag = tA, so A + B and
 * A^T + B^T are the same traversal; when tA != tB, B is first copied
 * transposed on the device (each node transposed locally, a counting sort
 * of its keys) into a scratch pool. C's scale is A's, so the stored values
 * are a + (sB / sA) * b and A's one-operand subtrees are shared as they are;
 * B's are shared when B is of A's family, sB == sA and no transpose is
 * needed, and copied (scaled) otherwise. New nodes are written into the
 * device copy of A's family pool after the host pool's end and stay there
 * (a device-only range with the operands' roots pinned: core/hisparse/hisparse_resid.c).
 * The reference backend (and a zero scale) runs hispi_matrix_add_ref. */
#include "backend/backend.h"
#include "hispi.h"
#include "hispi_hisparse.h"
#include "hisparse_sched.h"

#include <stdio.h>
#include <stdlib.h>

/* ctrl words, as kernels/hisparse_add.cl */
enum {
    C_USED = 0,
    C_ROOT = 1,
    C_NODES = 2,
    C_SHARED = 3,
    C_COPIED = 4,
    C_COMMON = 5,
    C_ERROR = 6,
    C_REDO = 7,
    C_FILL = 8,
    C_START = 16,
    C_CAP = 24,
    C_WORDS = 32
};
#define ENTRY_BYTES 32
/* Offsets of the transposed copy of B: an address space of its own (its
 * nodes are read on the device only, never stored). */
#define TMP_BASE ((uint64_t)1 << 60)

typedef struct {
    uint64_t a, b, slot;
    uint32_t flags, pad;
} add_entry;

/* ---- the device traversal ---------------------------------------------- */

typedef struct {
    hisp_context ctx;
    void *be;
    hispi_sched_policy pol;
    void *kern[6]; /* pair, seq, one, one_seq, leaf, pair of the dense leaf queue */
    int depth;
    int gs;     /* work-items per work-group: 256 on GPUs, 64 on CPUs */
    int kgs[6]; /* work-items per work-group of each kernel */
    int lp;     /* leaf pairs per work-group of hs_add_leaf */
    bool dbl;
    hispi_astate *c; /* the context's scratch: control words, queues, scratch pool */
    uint64_t hi;     /* a pass's writes end here (bytes of its out buffer) */
    hisp_add_stats *st;
} adder;

/* One traversal: from `root` (queued in root_q at level 0) through the
 * levels, writing nodes into *out (absolute offsets from out_base, *cap
 * bytes, grown when a round overflows), the queue segments of level k at
 * seg[k * HISPI_AQ_ADD + q] with capacities caps[...]. */
typedef struct {
    void **poolA, **poolB; /* where the buffers are (a growing family pool moves) */
    uint64_t baseA, baseB;
    void **out;
    hispi_pool *fam; /* out is this family's device pool (grown there), or NULL */
    uint64_t out_base, *cap;
    uint64_t used0; /* the first node's offset from out_base / 16 */
    double ca, cb;
    int share;
    bool seq_leaf_copies; /* copies at the leaf level never transpose: a work-item each */
    add_entry root;
    int root_q;
    const uint64_t *caps; /* [depth][HISPI_AQ_ADD] */
    int64_t *written;     /* optional [depth]: nodes written at level k (new and shared) */
} pass;

static hisp_status grow(adder *ad, const pass *ps, uint64_t need, uint64_t keep)
{
    if (ps->fam) { /* the family's device pool: moved on the device */
        HISPI_TRY(hispi_pool_dev_reserve(ad->ctx, ps->fam, need + 16, keep));
        *ps->cap = ps->fam->dev_cap - 16;
        ad->st->pool_retries++;
        return HISP_SUCCESS;
    }
    uint64_t cap = *ps->cap * 2;
    if (cap < need + need / 4) cap = need + need / 4;
    cap = hispi_round_up(cap, 16);
    void *nb = NULL;
    HISPI_TRY(hispi_dev_alloc(ad->ctx, cap, &nb));
    hisp_status s = HISPI_BE(ad->ctx, buf_zero, nb, (size_t)keep, (size_t)(cap - keep));
    if (!s && keep) s = HISPI_BE(ad->ctx, buf_copy, nb, *ps->out, (size_t)keep);
    if (s) {
        HISPI_BE_VOID(ad->ctx, buf_free, nb);
        return s;
    }
    HISPI_BE_VOID(ad->ctx, buf_free, *ps->out);
    *ps->out = nb;
    *ps->cap = cap;
    ad->st->pool_retries++;
    return HISP_SUCCESS;
}

/* The queue arrays for capacities caps (before the timed traversal): the
 * context's, grown when too small. */
static hisp_status reserve_queues(adder *ad, const uint64_t *caps)
{
    uint64_t total = 0;
    for (int i = 0; i < ad->depth * HISPI_AQ_ADD; i++)
        total += caps[i];
    return hispi_add_cache_queues(ad->ctx, ad->c, total * ENTRY_BYTES);
}

/* The pass from ps->root: *root_ref gets the root of the result; *root_n
 * (optional) the count of a COO inner root (the children its level queued
 * and shared: each cell of the union is one), or -1. */
static hisp_status run_pass(adder *ad, const pass *ps, uint64_t *root_ref, int64_t *root_n,
                            uint64_t *ctl)
{
    hisp_context ctx = ad->ctx;
    int L = ad->depth, NQ = HISPI_AQ_ADD;
    uint64_t *seg = NULL;
    HISPI_TRY(hispi_alloc(ctx, (size_t)L * (size_t)NQ, sizeof *seg, (void **)&seg));
    uint64_t total = 0;
    for (int i = 0; i < L * NQ; i++) {
        seg[i] = total;
        total += ps->caps[i];
    }
    (void)total;
    ad->hi = ps->used0 * 16;
    hisp_status s = reserve_queues(ad, ps->caps);
    if (!s)
        s = hispi_ctl_write(ctx, ad->be, ad->c->queues, (size_t)(seg[ps->root_q] * ENTRY_BYTES),
                            &ps->root, sizeof ps->root);
    /* the control words go up with the first round's */
    memset(ctl, 0, C_WORDS * sizeof *ctl);
    ctl[C_USED] = ps->used0;
    if (root_n) *root_n = -1;
    uint64_t cnt[HISPI_AQ_ADD] = {0};
    cnt[ps->root_q] = 1;
    int careful = 0; /* 4: check for zero sums before writing a dense leaf */
    for (int k = 0; !s && k < L; k++) {
        bool launch[HISPI_AQ_ADD];
        if (!hispi_sched_pick(&ad->pol, cnt, launch)) break;
        uint64_t keep[C_FILL];
        ctl[C_REDO] = 0;
        memcpy(keep, ctl, sizeof keep);
        for (int q = 0; q < NQ; q++) {
            ctl[C_FILL + q] = 0;
            ctl[C_START + q] = k + 1 < L ? seg[(k + 1) * NQ + q] : 0;
            ctl[C_CAP + q] = k + 1 < L ? ps->caps[(k + 1) * NQ + q] : 0;
        }
        for (;;) { /* the round, redone after growing the pool */
            s = hispi_ctl_write(ctx, ad->be, ad->c->ctrl, 0, ctl, C_WORDS * sizeof *ctl);
            int real = ad->dbl ? HISPI_KARG_F64 : HISPI_KARG_F32;
            for (int q = 0; !s && q < NQ; q++) {
                if (!launch[q]) continue;
                int fn = ad->pol.q[q].fn;
                bool one_seq = fn == HISPI_NF_ADD_ONE && k == L - 1 && ps->seq_leaf_copies;
                hispi_karg a[13] = {
                    {HISPI_KARG_BUF, *ps->poolA, 0, 0},
                    {HISPI_KARG_I64, NULL, (int64_t)ps->baseA, 0},
                    {HISPI_KARG_BUF, *ps->poolB, 0, 0},
                    {HISPI_KARG_I64, NULL, (int64_t)ps->baseB, 0},
                    {HISPI_KARG_BUF, *ps->out, 0, 0},
                    {HISPI_KARG_I64, NULL, (int64_t)ps->out_base, 0},
                    {HISPI_KARG_I64, NULL, (int64_t)(*ps->cap / 16), 0},
                    {HISPI_KARG_BUF, ad->c->ctrl, 0, 0},
                    {HISPI_KARG_BUF, ad->c->queues, 0, 0},
                    {HISPI_KARG_I64, NULL, (int64_t)seg[k * NQ + q], 0},
                };
                int n = 10;
                bool counted = fn == HISPI_NF_ADD_SEQ || fn == HISPI_NF_ADD_LEAF || one_seq;
                if (counted) a[n++] = (hispi_karg){HISPI_KARG_I64, NULL, (int64_t)cnt[q], 0};
                a[n++] = (hispi_karg){real, NULL, 0, ps->ca};
                a[n++] = (hispi_karg){real, NULL, 0, ps->cb};
                if (fn == HISPI_NF_ADD_PAIR)
                    a[n++] = (hispi_karg){HISPI_KARG_I32, NULL, ps->share | careful, 0};
                int ki = one_seq                   ? 3
                         : fn == HISPI_NF_ADD_PAIR ? (q == HISPI_AQ_LEAF_DENSE ? 5 : 0)
                         : fn == HISPI_NF_ADD_SEQ  ? 1
                         : fn == HISPI_NF_ADD_LEAF ? 4
                                                   : 2;
                uint64_t per = ki == 1 || ki == 3 ? (uint64_t)ad->kgs[ki]
                               : ki == 4          ? (uint64_t)ad->lp
                                                  : 1;
                size_t groups = (size_t)((cnt[q] + per - 1) / per);
                s = HISPI_BE(ctx, kern_launch, ad->kern[ki], a, n, groups, (size_t)ad->kgs[ki]);
                ad->st->launches++;
            }
            if (!s) s = hispi_ctl_read(ctx, ad->be, ad->c->ctrl, 0, ctl, C_WORDS * sizeof *ctl);
            bool over = ctl[C_USED] > *ps->cap / 16, zero = ctl[C_REDO] && !careful;
            if (!s) { /* the round wrote below its end (and nothing past the capacity) */
                uint64_t end = over ? *ps->cap : ctl[C_USED] * 16;
                if (end > ad->hi) ad->hi = end;
            }
            if (s || (!over && !zero)) break;
            /* the pool was too small (nothing of this round was written past
             * the old end: grow it), or a leaf written dense had a union too
             * small for one (check first); restore the counters, redo the round */
            if (over) s = grow(ad, ps, ctl[C_USED] * 16, keep[C_USED] * 16);
            /* without a regrowth the round's bytes are still there: zeroed,
             * as a dense leaf's empty cells are the zeros it finds */
            if (!s && !over && zero)
                s = HISPI_BE(ctx, buf_zero, *ps->out, (size_t)(keep[C_USED] * 16),
                             (size_t)((ctl[C_USED] - keep[C_USED]) * 16));
            if (zero) {
                careful = 4;
                ad->st->zero_retries++;
            }
            for (int q = 0; q < NQ; q++)
                ctl[C_FILL + q] = 0;
            memcpy(ctl, keep, sizeof keep);
            if (s) break;
        }
        if (s) break;
        if (ctl[C_ERROR]) {
            s = hispi_fail(ctx, HISP_ERR_BACKEND,
                           "addition: a scheduler queue overflowed (capacities wrong)");
            break;
        }
        ad->st->rounds++;
        if (root_n && k == 0 && L > 1) {
            *root_n = (int64_t)(ctl[C_SHARED] - keep[C_SHARED]);
            for (int q = 0; q < NQ; q++)
                *root_n += (int64_t)ctl[C_FILL + q];
        }
        if (ps->written) { /* level k's new nodes; the shared children are at k + 1 */
            ps->written[k] += (int64_t)(ctl[C_NODES] - keep[C_NODES]);
            if (k + 1 < L) ps->written[k + 1] += (int64_t)(ctl[C_SHARED] - keep[C_SHARED]);
        }
        for (int q = 0; q < NQ; q++)
            cnt[q] = ctl[C_FILL + q];
    }
    free(seg);
    if (!s) *root_ref = ctl[C_ROOT];
    return s;
}

/* Capacities per level and queue: the pairs of level k are at most the
 * nodes of the sparser operand there; the one-operand copies at most all;
 * the work-group leaf queue takes the pairs with a dense leaf and those of
 * more than `many` entries (one of the two leaves holds over many / 2, so
 * at most big = nnz(A) + nnz(B) over many / 2 + 1 of them). */
static void pass_caps(const hispi_census *a, const hispi_census *b, int L, uint64_t big,
                      uint64_t *caps)
{
    for (int k = 0; k < L; k++) {
        uint64_t *c = caps + (size_t)k * HISPI_AQ_ADD;
        uint64_t na = (uint64_t)a->nodes[k], nb = b ? (uint64_t)b->nodes[k] : 0;
        uint64_t mn = na < nb ? na : nb;
        memset(c, 0, HISPI_AQ_ADD * sizeof *c);
        c[HISPI_AQ_ONE] = k ? na + nb : 0;
        if (!b) continue;
        if (k + 1 < L) {
            c[HISPI_AQ_INNER] = mn;
        } else {
            uint64_t dn = (uint64_t)(a->dense_leaves + b->dense_leaves) + big;
            c[HISPI_AQ_LEAF_FEW] = c[HISPI_AQ_LEAF_MANY] = mn;
            c[HISPI_AQ_LEAF_DENSE] = dn < mn ? dn : mn;
        }
    }
}

static hisp_status root_queue(hisp_context ctx, const hispi_hisparse *a, const hispi_hisparse *b,
                              uint64_t many, int *q)
{
    int ta = HISPI_REF_TYPE(a->root), tb = HISPI_REF_TYPE(b->root);
    uint32_t na = 0, nb = 0;
    *q = HISPI_AQ_INNER;
    if (!hispi_node_is_leaf(ta)) return HISP_SUCCESS;
    *q = HISPI_AQ_LEAF_DENSE;
    if (hispi_node_is_dense(ta) || hispi_node_is_dense(tb)) return HISP_SUCCESS;
    HISPI_TRY(hispi_hisparse_root_count(ctx, a, &na));
    HISPI_TRY(hispi_hisparse_root_count(ctx, b, &nb));
    uint64_t n = (uint64_t)na + nb;
    *q = n <= HISPI_ADD_FEW ? HISPI_AQ_LEAF_FEW
         : n <= many        ? HISPI_AQ_LEAF_MANY
                            : HISPI_AQ_LEAF_DENSE;
    return HISP_SUCCESS;
}

/* Leaf pairs per work-group of the entry-major leaf kernel: each pair keeps
 * two cell bitmaps and three 16-bit word prefixes (14 bytes per 32-cell
 * word, and a pad word per run of words one work-item scans: the kernel's
 * NWP) in local memory; as many pairs as fit 32 KiB, a power of two,
 * segments of at least 32 work-items (whole warps: its CUDA mark step needs
 * them). */
static uint64_t leaf_local_bytes(int gs, int d, int lp)
{
    uint64_t words = ((uint64_t)d * (uint64_t)d + 31) / 32, sg = (uint64_t)(gs / lp);
    uint64_t per = (words + sg - 1) / sg;
    return 14 * (words + words / per + 1) * (uint64_t)lp;
}

static int leaf_pairs_per_group(int gs, int d)
{
    int lp = 1;
    while (lp * 2 <= gs / 32 && leaf_local_bytes(gs, d, lp * 2) <= 32768)
        lp *= 2;
    return lp;
}

/* The program's build options for entries of type t, nodes of d = 2^log2d,
 * work-groups of g, lp leaf pairs per group and leaves of `many` entries. */
static void add_opts(char *opts, size_t size, hisp_type t, int d, int log2d, int g, int lp,
                     uint64_t many)
{
    int dbl = hispi_type_scalar_size(t) == 8;
    snprintf(opts, size,
             "-DVALUE_T=%s -DIS_DOUBLE=%d -DATOM64=1 -DNCOMP=%d -DD=%d -DLOG2D=%d -DGS=%d "
             "-DLP=%d -DMANY=%llu",
             dbl ? "double" : "float", dbl, hisp_type_components(t), d, log2d, g, lp,
             (unsigned long long)many);
}

void hispi_add_kopts_gpu(hisp_type t, char opts[2][320])
{
    /* as hispi_matrix_add chooses on a GPU: groups of 256 (the leaf
     * kernel's 64), one leaf pair a group */
    for (int k = 0; k < 2; k++)
        add_opts(opts[k], 320, t, 128, 7, k ? 64 : 256, 1, HISPI_ADD_MANY);
}

/* The device addition of stored trees a (orientation tA) and b: mixed when
 * tA != tB. C joins a's family: its nodes are written into the family's
 * device pool after the host pool's end and stay there (a device-only
 * range, core/hisparse/hisparse_resid.c); the host pool only reserves their offsets. */
static hisp_status add_device(hisp_context ctx, hispi_hisparse *a, hispi_hisparse *b, bool mixed,
                              bool tA, hisp_add_stats *st, hisp_matrix *C)
{
    adder ad = {.ctx = ctx, .be = ctx->be, .depth = a->depth, .st = st};
    hispi_sched_add_policy(&ad.pol);
    int sz = hispi_type_scalar_size(a->type);
    ad.dbl = sz == 8;
    uint64_t *caps = NULL, *capt = NULL, cap = 0, ctl[C_WORDS];
    void *pa = NULL, *pb = NULL;
    int64_t written[HISPI_MAX_DEPTH] = {0};
    double ms = 0, tp[8] = {hispi_now_ms()}; /* phase marks, logged with the debug option */
    hisp_status s = hispi_hisparse_census(ctx, a);
    if (!s) s = hispi_hisparse_census(ctx, b);
    const hispi_census *ca = &a->census, *cb = &b->census;
    tp[1] = hispi_now_ms();
    if (!s) s = hispi_alloc(ctx, (size_t)a->depth * HISPI_AQ_ADD, sizeof *caps, (void **)&caps);
    if (!s) s = hispi_alloc(ctx, (size_t)a->depth * HISPI_AQ_ADD, sizeof *capt, (void **)&capt);
    /* the context's scratch, kernels and device limits (made at its first
     * addition on the backend) */
    if (!s) s = hispi_add_cache(ctx, &ad.c);
    hispi_kcaps kc = {0};
    if (!s) kc.max_group = ad.c->max_group, kc.simd = ad.c->simd;
    ad.gs = !s && kc.simd >= 32 && kc.max_group >= 256 ? 256 : 64;
    int hg = hispi_hs_hook.add_group; /* tests run 64 and 256 everywhere */
    if (hg == 64 || (hg == 256 && !s && kc.max_group >= 256)) ad.gs = hg;
    /* Work-group sizes on GPUs (the fastest measured, BENCHMARKS: HiSparse
     * addition):
     * - hs_add_leaf: 64, one pair each. Groups of several pairs held their
     *   slots until the largest pair was done (on banded most warps sat
     *   idle); the block scheduler balances single pairs.
     * - the rest 256 (hs_add_seq at 256 beat 64); hs_add_pair with launch
     *   bounds for 5 groups per SM (the kernel source's KERNEL_PAIR).
     * - hs_add_pair on the dense leaf queue: 256 too. 1024 (fewer pairs in
     *   flight) let a dense operand's second read hit L2 (fewer DRAM
     *   bytes), but the kernel was slower.
     * On CPUs every kernel gets 64, and the leaf kernel as many pairs per
     * group as its local memory holds. */
    bool gpu = ad.gs == 256;
    ad.kgs[0] = ad.kgs[1] = ad.kgs[2] = ad.kgs[3] = ad.kgs[5] = ad.gs;
    ad.kgs[4] = gpu ? 64 : ad.gs;
    ad.lp = gpu ? 1 : leaf_pairs_per_group(ad.kgs[4], a->d);
    uint64_t many = HISPI_ADD_MANY;
    if (hispi_hs_hook.add_leaf_max) many = hispi_hs_hook.add_leaf_max;
    if (many < HISPI_ADD_FEW) many = HISPI_ADD_FEW;
    static const char *names[6] = {"hs_add_pair",    "hs_add_seq",  "hs_add_one",
                                   "hs_add_one_seq", "hs_add_leaf", "hs_add_pair"};
    for (int i = 0; i < 6 && !s; i++) {
        /* a program per group size (the kernel cache keeps each); LP is
         * only the leaf kernel's, but every program gets it, so a CPU, where
         * every size is 64, builds one program (PoCL takes seconds a build) */
        char opts[320];
        add_opts(opts, sizeof opts, a->type, a->d, a->log2d, ad.kgs[i], ad.lp, many);
        s = hispi_add_cache_kernel(ctx, ad.c, i, names[i], opts, &ad.kern[i]);
    }
    tp[2] = hispi_now_ms();
    hispi_pool *fam = a->pool;
    hispi_pool_trim(fam); /* C's nodes go at its end: free ranges there first */
    /* the operands' families resident on the device: only bytes the device
     * lacks go up (none after the first call) */
    double t0 = hispi_now_ms();
    if (!s) s = hispi_pool_device(ctx, fam, &pa);
    if (!s && b->pool != fam) s = hispi_pool_device(ctx, b->pool, &pb);
    st->upload_ms = hispi_now_ms() - t0;
    uint64_t base = fam->used;
    /* room after the family's end: A's and B's bytes bound C's in practice;
     * the pool grows on the device when they do not (the test hook
     * hispi_hs_hook.add_pool_bytes sets the first room); 16 bytes stay
     * spare for CUDA's whole-node loads (hispi_pool_device) */
    uint64_t room = ca->bytes + cb->bytes + 4096;
    if (hispi_hs_hook.add_pool_bytes) room = hispi_hs_hook.add_pool_bytes + 16;
    if (!s) s = hispi_pool_dev_reserve(ctx, fam, hispi_round_up(base + room, 16) + 16, base);
    if (!s) cap = fam->dev_cap - 16;
    /* the kernels find zeros where they write (a dense leaf's empty cells):
     * only bytes an earlier write left there need it (a destroyed result's) */
    if (!s && fam->dev_clean > base) {
        s = HISPI_BE(ctx, buf_zero, fam->dev, (size_t)base, (size_t)(fam->dev_clean - base));
        if (!s) fam->dev_clean = base;
    }
    /* everything allocated before the timed traversal (as csrgeam2's C) */
    if (!s) {
        uint64_t big = (uint64_t)(a->nnz + b->nnz) / (many / 2 + 1);
        pass_caps(ca, cb, a->depth, big, caps);
        pass_caps(cb, NULL, a->depth, 0, capt);
        s = reserve_queues(&ad, caps);
        if (!s && mixed) s = reserve_queues(&ad, capt);
    }
    if (!s && mixed) s = hispi_add_cache_tmp(ctx, ad.c, hispi_round_up(cb->bytes + 16, 16));
    tp[3] = hispi_now_ms();
    void *m0 = s ? NULL : ad.c->mark[0], *m1 = s ? NULL : ad.c->mark[1];
    if (!s) s = HISPI_BE(ctx, mark_record, m0);
    void **srca = &fam->dev, **srcb = b->pool == fam ? &fam->dev : &b->pool->dev;
    uint64_t baseb = 0, rootb = b->root;
    double coefb = a->scale != 0 ? b->scale / a->scale : 0;
    if (!s && mixed) { /* B^T into the scratch pool first, scaled there */
        pass pt = {.poolA = srcb,
                   .poolB = srcb,
                   .out = &ad.c->tmp,
                   .out_base = TMP_BASE,
                   .cap = &ad.c->tbytes,
                   .ca = 1,
                   .cb = coefb,
                   .root = {b->root, 0, 0, 3, 0},
                   .root_q = HISPI_AQ_ONE,
                   .caps = capt};
        if (!s) s = run_pass(&ad, &pt, &rootb, NULL, ctl);
        ad.c->tclean = s ? ad.c->tbytes : ad.hi; /* zeroed before its next use */
        srcb = &ad.c->tmp, baseb = TMP_BASE, coefb = 1;
        st->nodes_new = 0;
    }
    uint64_t root = 0;
    int64_t root_n = -1;
    int share = 1 | (!mixed && b->pool == fam && coefb == 1 ? 2 : 0);
    if (!s) {
        pass pm = {.poolA = srca,
                   .poolB = srcb,
                   .baseA = 0,
                   .baseB = baseb,
                   .out = &fam->dev,
                   .fam = fam,
                   .out_base = 0,
                   .cap = &cap,
                   .used0 = base / 16,
                   .ca = 1,
                   .cb = coefb,
                   .share = share,
                   .seq_leaf_copies = true,
                   .root = {a->root, rootb, 0, 0, 0},
                   .caps = caps,
                   .written = written};
        /* the root pair's queue (B^T's root has B's root's type and count) */
        s = root_queue(ctx, a, b, many, &pm.root_q);
        if (!s) {
            s = run_pass(&ad, &pm, &root, &root_n, ctl);
            /* what it wrote is zeroed before the next addition writes there;
             * after a failure, where it wrote is unknown */
            uint64_t hi = s ? fam->dev_cap : ad.hi;
            if (hi > fam->dev_clean) fam->dev_clean = hi;
        }
    }
    if (!s) s = HISPI_BE(ctx, mark_record, m1);
    if (!s) s = HISPI_BE(ctx, mark_elapsed, m0, m1, &ms);
    tp[4] = hispi_now_ms();
    st->device_ms = ms;
    st->bytes_reserved = (s ? 0 : cap - base) + (mixed && ad.c ? ad.c->tbytes : 0);
    uint64_t bytes = s ? 0 : ctl[C_USED] * 16 - base, off = 0;
    hispi_census cc = {.known = true, .root_n = -1};
    if (!s) {
        st->nodes_new += (int64_t)ctl[C_NODES];
        st->subtrees_copied = (int64_t)ctl[C_COPIED];
        st->subtrees_shared = (int64_t)ctl[C_SHARED];
        st->bytes_new = bytes;
        st->nnz = a->nnz + b->nnz - (int64_t)ctl[C_COMMON];
        /* C's census from the kernels' counts: dense leaves at most its new
         * leaves and the operands' dense ones */
        memcpy(cc.nodes, written, sizeof written);
        int64_t dl = written[a->depth - 1], dn = ca->dense_leaves + cb->dense_leaves;
        cc.dense_leaves = dl < dn ? dl : dn;
        cc.bytes =
            ca->bytes + cb->bytes < fam->live + bytes ? ca->bytes + cb->bytes : fam->live + bytes;
        /* the host pool reserves C's offsets; its bytes stay on the device */
        t0 = hispi_now_ms();
        s = hispi_pool_append(ctx, fam, bytes, &off);
        if (!s && off != base) s = hispi_fail(ctx, HISP_ERR_BACKEND, "addition: pool moved");
        if (s && off == base) { /* give the tail back */
            fam->used = base;
            fam->live -= bytes;
        }
        st->download_ms = hispi_now_ms() - t0;
    }
    tp[5] = hispi_now_ms();
    if (!s) { /* the operands' roots held for C: its shared subtrees live */
        uint64_t pins[2] = {a->root, share & 2 ? b->root : 0};
        struct hispi_region r = {
            base, base + bytes, root, {pins[0], pins[1]}, 0, (uint32_t)hisp_type_size(a->type),
            a->d, a->depth};
        s = hispi_node_incref(ctx, fam, pins[0]);
        if (!s) {
            s = hispi_node_incref(ctx, fam, pins[1]);
            if (s) hispi_node_decref(fam, pins[0], r.s, r.d);
        }
        if (!s) {
            s = hispi_pool_region_add(ctx, fam, &r);
            if (s) {
                hispi_node_decref(fam, pins[1], r.s, r.d);
                hispi_node_decref(fam, pins[0], r.s, r.d);
            }
        }
        if (s) {
            fam->used = base;
            fam->live -= bytes;
        } else if (fam->dev_valid >= base) {
            fam->dev_valid = base + bytes;
        }
    }
    if (!s && !hispi_node_is_dense(HISPI_REF_TYPE(root))) {
        /* the root's count, for the SpMV's root queue: from the first
         * round's counters, or for a leaf root a control read */
        uint32_t n = (uint32_t)root_n;
        if (root_n < 0 || hispi_node_is_leaf(HISPI_REF_TYPE(root)))
            s = hispi_ctl_read(ctx, ctx->be, fam->dev, (size_t)HISPI_REF_OFF(root), &n, sizeof n);
        cc.root_n = n;
        if (s) hispi_node_decref(fam, root, hisp_type_size(a->type), a->d); /* frees the range */
    }
    tp[6] = hispi_now_ms();
    if (!s) {
        hispi_hisparse hc = *a;
        hc.root = root;
        hc.nnz = st->nnz;
        hc.transposed = tA;
        hc.census = cc;
        fam->handles++;
        s = hispi_hisparse_wrap(ctx, &hc, C);
        if (s) hispi_pool_trim(fam); /* C's nodes were freed: they end the pool */
    }
    free(caps);
    free(capt);
    tp[7] = hispi_now_ms();
    hispi_debug("add: census %.1f ms, kernels %.1f, trim + residency + allocations %.1f, "
                "traversal %.1f (device %.1f), host reservation %.1f, pins + root %.1f, frees %.1f",
                tp[1] - tp[0], tp[2] - tp[1], tp[3] - tp[2], tp[4] - tp[3], ms, tp[5] - tp[4],
                tp[6] - tp[5], tp[7] - tp[6]);
    return s;
}

/* A HiSparse tree of M with node size d: M's own, or a temporary one (as
 * shown: transposed flag and scale applied) in *tmp. */
static hisp_status tree_of(hisp_matrix M, int d, hispi_hisparse **h, hispi_hisparse *tmp,
                           bool *owned)
{
    *owned = false;
    if (M->hs && M->hs->d == d) {
        *h = M->hs;
        return HISP_SUCCESS;
    }
    if (!M->hs) {
        HISPI_TRY(hispi_hisparse_build(M->ctx, &M->host, d, tmp));
    } else {
        hispi_sparse sp;
        HISPI_TRY(hispi_hisparse_to_sparse(M->ctx, M->hs, HISP_FORMAT_CSR, &sp));
        hisp_status s = hispi_hisparse_build(M->ctx, &sp, d, tmp);
        hispi_sparse_free(&sp);
        HISPI_TRY(s);
    }
    *owned = true;
    *h = tmp;
    return HISP_SUCCESS;
}

static bool device_capable(hisp_context ctx)
{
    return HISPI_BE_HAS(ctx, kern_get) && HISPI_BE_HAS(ctx, kern_launch) &&
           HISPI_BE_HAS(ctx, kern_free) && HISPI_BE_HAS(ctx, buf_zero) &&
           HISPI_BE_HAS(ctx, buf_copy) && HISPI_BE_HAS(ctx, mark_create);
}

/* C shows one operand (the other is empty): its tree shared. */
static hisp_status share_one(hisp_context ctx, const hispi_hisparse *h, bool t, hisp_add_stats *st,
                             hisp_matrix *C)
{
    hispi_hisparse hc;
    HISPI_TRY(hispi_hisparse_share(ctx, h, &hc));
    hc.transposed = t;
    st->nnz = h->nnz;
    st->subtrees_shared = h->root != 0;
    return hispi_hisparse_wrap(ctx, &hc, C);
}

static hisp_status matrix_add(hisp_op op_a, hisp_matrix A, hisp_op op_b, hisp_matrix B,
                              hisp_matrix *C);

hisp_status hisp_matrix_add(hisp_op op_a, hisp_matrix A, hisp_op op_b, hisp_matrix B,
                            hisp_matrix *C)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_CLAIMED(A->ctx, matrix_add(op_a, A, op_b, B, C));
}

static hisp_status matrix_add(hisp_op op_a, hisp_matrix A, hisp_op op_b, hisp_matrix B,
                              hisp_matrix *C)
{
    hisp_context ctx = A->ctx;
    if (!hispi_mat_ok(B) || B->ctx != ctx)
        return hispi_fail(ctx, HISP_ERR_INVALID_HANDLE, "B is invalid or of another context");
    if (!C) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    *C = NULL;
    HISPI_TRY(hispi_matrix_need_host(A));
    HISPI_TRY(hispi_matrix_need_host(B));
    if ((op_a != HISP_OP_N && op_a != HISP_OP_T) || (op_b != HISP_OP_N && op_b != HISP_OP_T))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "unknown op");
    if (A->host.type != B->host.type)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "entry types differ: %s and %s",
                          hisp_type_name(A->host.type), hisp_type_name(B->host.type));
    int64_t am = op_a ? A->host.ncols : A->host.nrows, an = op_a ? A->host.nrows : A->host.ncols;
    int64_t bm = op_b ? B->host.ncols : B->host.nrows, bn = op_b ? B->host.nrows : B->host.ncols;
    if (am != bm || an != bn)
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT,
                          "op(A) is %lld x %lld, op(B) is %lld x %lld", (long long)am,
                          (long long)an, (long long)bm, (long long)bn);
    hisp_add_stats *st = &ctx->add;
    memset(st, 0, sizeof *st);
    HISPI_TRY(hispi_sched_settle(ctx));
    if (!device_capable(ctx)) {
        HISPI_TRY(hispi_matrix_add_ref(op_a, A, op_b, B, C));
        st->nnz = (*C)->host.nnz;
        return HISP_SUCCESS;
    }
    int d = A->hs ? A->hs->d : A->node_size ? A->node_size : HISP_HISPARSE_DEFAULT_NODE_SIZE;
    /* exclusive on both families: C's nodes go into A's family's device
     * copy, and both are made resident */
    hispi_pool *pa = A->hs ? A->hs->pool : NULL, *pb = B->hs ? B->hs->pool : NULL;
    hispi_family_lock2(pa, pb);
    hispi_hisparse *a = NULL, *b = NULL;
    hispi_hisparse ta, tb;
    bool oa = false, ob = false;
    hisp_status s = tree_of(A, d, &a, &ta, &oa);
    if (!s) s = tree_of(B, d, &b, &tb, &ob);
    if (!s) {
        bool tA = (op_a == HISP_OP_T) != a->transposed, tB = (op_b == HISP_OP_T) != b->transposed;
        if (!b->root)
            s = share_one(ctx, a, tA, st, C);
        else if (!a->root)
            s = share_one(ctx, b, tB, st, C);
        else if (a->scale == 0 || b->scale == 0) /* C's scale could share neither side */
            s = hispi_matrix_add_ref(op_a, A, op_b, B, C);
        else
            s = add_device(ctx, a, b, tA != tB, tA, st, C);
        if (!s && !st->nnz) st->nnz = (*C)->host.nnz;
    }
    if (oa) hispi_hisparse_free(&ta);
    if (ob) hispi_hisparse_free(&tb);
    hispi_family_unlock2(pa, pb);
    return s;
}

hisp_status hisp_context_add_stats(hisp_context ctx, hisp_add_stats *st)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!st) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "stats is NULL");
    *st = ctx->add;
    return HISP_SUCCESS;
}
