/* The per-row loops of the host SpGEMM for one entry type, included by
 * core/ops/spgemm_ref.c with T (float | double), NC (components: 1 real,
 * 2 complex) and F(name) (name suffixed). The fill and the numeric
 * re-computation add the products of a row in the same order with the same
 * helper (madd) from the same start (-0.0, the additive identity: -0 + x is
 * x, bit for bit, for every x), so the two give the same bits. */

static inline void F(load)(const hispi_spgemm_operand *o, int64_t k, T e[2])
{
    const T *v = (const T *)o->val;
    int64_t p = o->perm ? o->perm[k] : k;
    e[0] = v[p * NC];
    e[1] = NC == 2 ? (o->conj ? -v[p * NC + 1] : v[p * NC + 1]) : 0;
}

/* s += x*y (complex product when NC == 2) */
static inline void F(madd)(T *s, const T x[2], const T y[2])
{
    if (NC == 1) {
        s[0] += x[0] * y[0];
    } else {
        s[0] += x[0] * y[0] - x[1] * y[1];
        s[NC - 1] += x[0] * y[1] + x[1] * y[0];
    }
}

/* Row i of C: columns into cols (sorted, *n of them), values into vals;
 * mark[j] == i marks the columns met in this row; set (empty) sorts. */
static void F(fill_row)(const hispi_spgemm_args *g, int32_t i, int32_t *mark, colset *set,
                        void *accv, int32_t *cols, void *valsv)
{
    const hispi_spgemm_operand *a = &g->a, *b = &g->b;
    T *acc = (T *)accv, *vals = (T *)valsv;
    int64_t n = 0;
    int32_t lo = INT32_MAX, hi = -1;
    for (int64_t ka = a->rowptr[i]; ka < a->rowptr[i + 1]; ka++) {
        T x[2];
        F(load)(a, ka, x);
        int32_t r = a->colind[ka];
        for (int64_t kb = b->rowptr[r]; kb < b->rowptr[r + 1]; kb++) {
            T y[2];
            F(load)(b, kb, y);
            int32_t j = b->colind[kb];
            T *s = acc + (size_t)j * NC;
            if (mark[j] != i) {
                mark[j] = i;
                for (int c = 0; c < NC; c++)
                    s[c] = -(T)0;
                cols[n++] = j;
                lo = j < lo ? j : lo;
                hi = j > hi ? j : hi;
            }
            F(madd)(s, x, y);
        }
    }
    sort_row(cols, n, set, lo, hi);
    for (int64_t p = 0; p < n; p++)
        for (int c = 0; c < NC; c++)
            vals[p * NC + c] = acc[(size_t)cols[p] * NC + c];
}

/* Row i's values over its known columns cols[0..n). */
static void F(numeric_row)(const hispi_spgemm_args *g, int32_t i, void *accv, const int32_t *cols,
                           int64_t n, void *valsv)
{
    const hispi_spgemm_operand *a = &g->a, *b = &g->b;
    T *acc = (T *)accv, *vals = (T *)valsv;
    for (int64_t p = 0; p < n; p++)
        for (int c = 0; c < NC; c++)
            acc[(size_t)cols[p] * NC + c] = -(T)0;
    for (int64_t ka = a->rowptr[i]; ka < a->rowptr[i + 1]; ka++) {
        T x[2];
        F(load)(a, ka, x);
        int32_t r = a->colind[ka];
        for (int64_t kb = b->rowptr[r]; kb < b->rowptr[r + 1]; kb++) {
            T y[2];
            F(load)(b, kb, y);
            F(madd)(acc + (size_t)b->colind[kb] * NC, x, y);
        }
    }
    for (int64_t p = 0; p < n; p++)
        for (int c = 0; c < NC; c++)
            vals[p * NC + c] = acc[(size_t)cols[p] * NC + c];
}
