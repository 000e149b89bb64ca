/* Matrix Market reader.
 *
 * The reader parses a whole file held in memory with explicit end pointers
 * (the data need not be NUL-terminated); gzip and bzip2 data are
 * decompressed first (core/io/mmio_compress.c). The header is read line by
 * line; the data section is split at line boundaries into chunks parsed in
 * parallel: a first pass counts each chunk's entry lines (and lines, for the
 * line numbers), a second parses each chunk into its slots. Indices are
 * parsed by hand; values are correctly rounded (core/io/mmio_float.c) with
 * strtod_l in the C locale for what that cannot decide, so the result never
 * depends on the caller's locale. Every failure names the 1-based line; of
 * several, the first in the file. Storage is sized by the declared counts
 * only after checking that the remaining bytes could hold that many entries.
 *
 * Accepted as the peers (fast_matrix_market, scipy) accept them: blank lines
 * before the banner and indented lines; in symmetric, skew-symmetric and
 * Hermitian files, entries on either side of the diagonal, each mirrored
 * (a file holding both (i,j) and (j,i) gets both mirrored, so duplicates
 * add up, as in the peers), and diagonal entries of skew-symmetric files
 * (kept, not mirrored). Numbers: whatever strtod accepts as one whole token
 * in the C locale is a number ("nan", "inf", "infinity", hex floats; the
 * writer prints non-finite values that way, so they round-trip). Integer
 * values must be [+-]digits within int64.
 */
#include "compound/hispi_compound.h"
#include "hispi_mmio.h"

#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- C locale for strtod_l / the writer --------------------------------- */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

locale_t hispi_c_locale(void)
{
    pthread_once(&c_locale_once, c_locale_init);
    return c_locale;
}

/* ---- reader state and helpers ------------------------------------------- */

typedef enum { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW, SYM_HERMITIAN } mtx_symmetry;
typedef enum { FIELD_REAL, FIELD_INTEGER, FIELD_COMPLEX, FIELD_PATTERN, FIELD_QUAT } mtx_field;

/* A cursor over lines; failures are kept here (threads never touch the
 * context) and recorded by the caller. */
typedef struct {
    const char *cur, *end; /* unread data */
    int64_t line;          /* 1-based number of the current line */
    const char *ls, *le;   /* the current line, without its '\n' */
    hisp_status st;        /* first failure: status, line, message */
    int64_t err_line;
    bool too_large; /* the failure: sizes above the input's limit */
    char msg[512];
} reader;

static hisp_status bad(reader *r, int64_t line, const char *fmt, ...) HISPI_PRINTF(3, 4);

static hisp_status bad(reader *r, int64_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->err_line = line;
    return r->st = HISP_ERR_INPUT_FORMAT;
}

static hisp_status oom(reader *r)
{
    snprintf(r->msg, sizeof r->msg, "out of host memory");
    return r->st = HISP_ERR_OUT_OF_HOST_MEMORY;
}

static inline bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline const char *skip_ws(const char *p, const char *e)
{
    while (p < e && is_ws(*p))
        p++;
    return p;
}

static inline const char *tok_end(const char *p, const char *e)
{
    while (p < e && !is_ws(*p))
        p++;
    return p;
}

/* A token made printable and bounded, for messages. */
static const char *quote(char buf[48], const char *p, const char *q)
{
    size_t n = (size_t)(q - p), i;
    bool cut = n > 32;
    if (cut) n = 32;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        buf[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (cut)
        memcpy(buf + i, "...", 4);
    else
        buf[i] = 0;
    return buf;
}

static inline bool next_line(reader *r)
{
    if (r->cur >= r->end) return false;
    const char *nl = memchr(r->cur, '\n', (size_t)(r->end - r->cur));
    r->ls = r->cur;
    r->le = nl ? nl : r->end;
    r->cur = nl ? nl + 1 : r->end;
    r->line++;
    return true;
}

/* Next line that is neither blank nor a comment; *p = its first token. */
static inline bool next_content(reader *r, const char **p)
{
    while (next_line(r)) {
        const char *s = skip_ws(r->ls, r->le);
        if (s < r->le && *s != '%') {
            *p = s;
            return true;
        }
    }
    return false;
}

/* The line after the last one: where a missing line was expected. */
static int64_t eof_line(const reader *r)
{
    return r->line + 1;
}

/* Unsigned decimal token (saturating far above 2^31); false if not digits. */
static inline bool parse_digits(const char *p, const char *q, uint64_t *v)
{
    uint64_t x = 0;
    if (p == q) return false;
    for (; p < q; p++) {
        unsigned d = (unsigned)(unsigned char)*p - '0';
        if (d > 9) return false;
        if (x < (1ull << 58)) x = x * 10 + d;
    }
    *v = x;
    return true;
}

/* Row or column index in 1..bound at *pp; advances *pp past it. */
static inline hisp_status parse_index(reader *r, const char **pp, int64_t bound, const char *what,
                                      int32_t *out)
{
    char qb[48];
    const char *p = skip_ws(*pp, r->le), *q = p;
    uint64_t v = 0;
    for (; q < r->le && (unsigned)(unsigned char)*q - '0' <= 9; q++)
        if (v < (1ull << 58)) v = v * 10 + (unsigned)(*q - '0');
    if (q == p || (q < r->le && !is_ws(*q))) {
        if (p == r->le) return bad(r, r->line, "missing %s index", what);
        q = tok_end(p, r->le);
        return bad(r, r->line, "%s index '%s' is not a positive integer", what, quote(qb, p, q));
    }
    if (v == 0) return bad(r, r->line, "%s index 0 (Matrix Market indices start at 1)", what);
    if (v > (uint64_t)bound)
        return bad(r, r->line, "%s index %s out of range 1..%lld", what, quote(qb, p, q),
                   (long long)bound);
    *out = (int32_t)(v - 1);
    *pp = q;
    return HISP_SUCCESS;
}

/* One value token at *pp; `integer` requires [+-]digits within int64. */
static inline hisp_status parse_value(reader *r, const char **pp, bool integer, const char *what,
                                      double *out)
{
    char qb[48];
    const char *p = skip_ws(*pp, r->le), *end = p;
    if (p == r->le) return bad(r, r->line, "missing %s", what);
    if (integer) {
        int64_t x = 0;
        int e = hispi_mmio_parse_int64(p, r->le, &end, &x);
        if (e == 0 && (end == r->le || is_ws(*end))) {
            *pp = end;
            *out = (double)x;
            return HISP_SUCCESS;
        }
        const char *q = tok_end(p, r->le);
        if (e == 2 && end == q)
            return bad(r, r->line,
                       "%s %s does not fit a 64-bit integer (the file's field is integer)", what,
                       quote(qb, p, q));
        return bad(r, r->line, "%s '%s' is not an integer (the file's field is integer)", what,
                   quote(qb, p, q));
    }
    if (hispi_mmio_parse_double(p, r->le, &end, out) && (end == r->le || is_ws(*end))) {
        *pp = end;
        return HISP_SUCCESS;
    }
    const char *q = tok_end(p, r->le);
    *pp = q;
    char small[128], *buf = small; /* strtod needs a NUL: a copy; long ones on the heap */
    size_t n = (size_t)(q - p);
    if (n >= sizeof small && !(buf = malloc(n + 1))) return oom(r);
    memcpy(buf, p, n);
    buf[n] = 0;
    char *endp = NULL;
    locale_t loc = hispi_c_locale();
    double v = loc ? strtod_l(buf, &endp, loc) : strtod(buf, &endp);
    bool ok = n > 0 && endp == buf + n;
    if (buf != small) free(buf);
    if (!ok) return bad(r, r->line, "%s '%s' is not a number", what, quote(qb, p, q));
    *out = v;
    return HISP_SUCCESS;
}

/* Rows, columns or entries on the size line. */
static hisp_status parse_size(reader *r, const char **pp, const char *what, int64_t *out)
{
    char qb[48];
    const char *p = skip_ws(*pp, r->le);
    if (p == r->le) return bad(r, r->line, "size line: missing %s", what);
    const char *q = tok_end(p, r->le);
    uint64_t v;
    if (*p == '-' && parse_digits(p + 1, q, &v) && v)
        return bad(r, r->line, "size line: negative %s %s", what, quote(qb, p, q));
    if (!parse_digits(p, q, &v))
        return bad(r, r->line, "size line: %s '%s' is not a non-negative integer", what,
                   quote(qb, p, q));
    *out = (int64_t)v; /* saturated below 2^63 by parse_digits */
    *pp = q;
    return HISP_SUCCESS;
}

/* Store an entry of up to 4 components (real, complex, quaternion; the
 * missing ones are 0). */
static inline void put(hisp_type t, void *val, int64_t k, const double *v)
{
    switch (t) {
    case HISP_F32:
        ((float *)val)[k] = (float)v[0];
        break;
    case HISP_F64:
        ((double *)val)[k] = v[0];
        break;
    case HISP_C32:
        ((float *)val)[2 * k] = (float)v[0];
        ((float *)val)[2 * k + 1] = (float)v[1];
        break;
    case HISP_C64:
        ((double *)val)[2 * k] = v[0];
        ((double *)val)[2 * k + 1] = v[1];
        break;
    case HISP_Q32:
        for (int q = 0; q < 4; q++)
            ((float *)val)[4 * k + q] = (float)v[q];
        break;
    default:
        for (int q = 0; q < 4; q++)
            ((double *)val)[4 * k + q] = v[q];
        break;
    }
}

/* Keyword tables: canonical (lowercase) spellings. */
static const char *const field_names[] = {"real",    "double",  "integer",
                                          "complex", "pattern", "quaternion"};
static const mtx_field field_kinds[] = {FIELD_REAL,    FIELD_REAL,    FIELD_INTEGER,
                                        FIELD_COMPLEX, FIELD_PATTERN, FIELD_QUAT};
static const char *const sym_names[] = {"general", "symmetric", "skew-symmetric", "hermitian"};

static int keyword(const char *p, const char *q, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == (size_t)(q - p) && strncasecmp(p, names[i], (size_t)(q - p)) == 0)
            return i;
    return -1;
}

static void copy_name(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src);
}

/* ---- the data section, in parallel chunks -------------------------------- */

typedef struct {
    const char *b, *e;        /* whole lines */
    int64_t content, lines;   /* pass 1: entry lines, lines */
    int64_t k0, line0, limit; /* first entry's slot, first line's number, entries to parse */
    reader r;                 /* pass 2: the failure, if any */
} chunk;

typedef struct {
    chunk *ch;
    int nch, pass;
    atomic_int next, first_bad;
    /* the file */
    bool is_array, integer;
    mtx_symmetry sym;
    int nvals;
    int64_t m, n;
    const char *field_name;
    /* the output */
    hisp_type type;
    int32_t *ri, *ci;
    void *val;
} data_job;

static inline bool content_start(unsigned char c)
{
    return c > ' ' && c != '%';
}

static inline unsigned popcount16(unsigned x) /* no popcnt instruction assumed */
{
    x = x - ((x >> 1) & 0x5555u);
    x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
    x = (x + (x >> 4)) & 0x0F0Fu;
    return (x + (x >> 8)) & 0x1Fu;
}

/* Pass 1: entry lines and line starts of [b, e). A line is an entry when
 * its first byte is neither blank nor '%'; lines starting with a blank
 * other than '\n' are rare (indented files) and take the exact loop. */
static void count_chunk(chunk *c)
{
    const unsigned char *p = (const unsigned char *)c->b;
    size_t len = (size_t)(c->e - c->b), i = 0;
    c->content = c->lines = 0;
    if (!len) return;
    /* per '\n' (not the last byte): the next line is skipped (starts with
     * '%' or '\n') or maybe skipped (another blank) */
    uint64_t nl = 0, skip = !content_start(p[0]), maybe = p[0] <= ' ' && p[0] != '\n';
#ifdef __SSE2__
    const __m128i vnl = _mm_set1_epi8('\n'), vpc = _mm_set1_epi8('%'), vsp = _mm_set1_epi8(' ');
    for (; i + 17 <= len; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(p + i));
        __m128i x = _mm_loadu_si128((const __m128i *)(p + i + 1));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, vnl));
        if (!m) continue;
        __m128i xnl = _mm_cmpeq_epi8(x, vnl);
        __m128i low = _mm_cmpeq_epi8(_mm_min_epu8(x, vsp), x); /* x <= ' ' */
        unsigned sk = (unsigned)_mm_movemask_epi8(_mm_or_si128(xnl, _mm_cmpeq_epi8(x, vpc)));
        unsigned mb = (unsigned)_mm_movemask_epi8(_mm_andnot_si128(xnl, low));
        nl += popcount16(m);
        skip += popcount16(m & sk);
        maybe += popcount16(m & mb);
    }
#endif
    for (; i + 1 < len; i++) {
        unsigned char a = p[i], x = p[i + 1];
        nl += a == '\n';
        skip += (a == '\n') & ((x == '%') | (x == '\n'));
        maybe += (a == '\n') & (x <= ' ') & (x != '\n');
    }
    c->lines = 1 + (int64_t)nl;
    if (!maybe) {
        c->content = c->lines - (int64_t)skip;
        return;
    }
    reader r = {.cur = c->b, .end = c->e};
    const char *s;
    while (next_content(&r, &s))
        c->content++;
}

/* (i, j) of the k-th stored entry of an array file (column-major; the
 * lower triangle, or the strictly lower one for skew-symmetric files). */
static void array_position(const data_job *j, int64_t k, int32_t *ai, int32_t *aj)
{
    if (j->sym == SYM_GENERAL) {
        *aj = (int32_t)(k / j->m);
        *ai = (int32_t)(k % j->m);
        return;
    }
    int64_t col = 0, skew = j->sym == SYM_SKEW;
    for (;;) {
        int64_t len = j->m - col - skew;
        if (k < len) break;
        k -= len;
        col++;
    }
    *aj = (int32_t)col;
    *ai = (int32_t)(col + skew + k);
}

static const char *const part[2][4] = {{"real part", "imaginary part", "", ""},
                                       {"w", "x", "y", "z"}};

/* The common coordinate line, "i j [values]\n" with single blanks and
 * plain numbers, read without finding the line's end first; anything else
 * (and every error) goes to the general path, which reads the line again.
 * Returns the byte after the line, or NULL. */
static inline const char *fast_line(const data_job *j, const char *p, const char *e, int32_t *i,
                                    int32_t *jj, double *v)
{
    uint64_t x = 0, y = 0;
    const char *q = p;
    for (; q < e && (unsigned)(unsigned char)*q - '0' <= 9 && q - p < 10; q++)
        x = x * 10 + (unsigned)(*q - '0');
    if (q == p || q >= e || *q != ' ') return NULL;
    p = ++q;
    for (; q < e && (unsigned)(unsigned char)*q - '0' <= 9 && q - p < 10; q++)
        y = y * 10 + (unsigned)(*q - '0');
    if (q == p || x - 1 >= (uint64_t)j->m || y - 1 >= (uint64_t)j->n) return NULL;
    for (int c = 0; c < j->nvals; c++) {
        if (q >= e || *q != ' ') return NULL;
        q++;
        if (j->integer) {
            int64_t z;
            if (hispi_mmio_parse_int64(q, e, &q, &z)) return NULL;
            v[c] = (double)z;
        } else if (!hispi_mmio_parse_double(q, e, &q, &v[c])) {
            return NULL;
        }
    }
    if (q < e && *q == '\r') q++;
    if (q < e && *q != '\n') return NULL;
    *i = (int32_t)(x - 1);
    *jj = (int32_t)(y - 1);
    return q < e ? q + 1 : e;
}

/* Pass 2: the chunk's first `limit` entries into slots k0... */
static void parse_chunk(data_job *j, chunk *c)
{
    reader *r = &c->r;
    *r = (reader){.cur = c->b, .end = c->e, .line = c->line0 - 1};
    int32_t ai = 0, aj = 0;
    if (j->is_array && c->limit) array_position(j, c->k0, &ai, &aj);
    const char *p;
    char qb[48];
    int nv = j->nvals;
    for (int64_t k = c->k0, kend = c->k0 + c->limit; k < kend; k++) {
        int32_t i = 0, jj = 0;
        double v[4] = {1.0, 0.0, 0.0, 0.0};
        const char *nx;
        if (!j->is_array && (nx = fast_line(j, r->cur, r->end, &i, &jj, v))) {
            r->cur = nx;
            r->line++;
            goto store;
        }
        if (!next_content(r, &p)) return; /* cannot happen: pass 1 counted them */
        if (j->is_array) {
            i = ai;
            jj = aj;
            if (++ai == j->m) { /* next column: from the top, or from the diagonal */
                aj++;
                ai = j->sym == SYM_GENERAL ? 0 : j->sym == SYM_SKEW ? aj + 1 : aj;
            }
        } else {
            if (parse_index(r, &p, j->m, "row", &i)) return;
            if (parse_index(r, &p, j->n, "column", &jj)) return;
        }
        for (int q = 0; q < nv; q++)
            if (parse_value(r, &p, j->integer, nv == 1 ? "value" : part[nv == 4][q], &v[q])) return;
        p = skip_ws(p, r->le);
        if (p < r->le) {
            bad(r, r->line, "unexpected '%s' after the entry (%s file: %d value%s per entry)",
                quote(qb, p, r->le), j->field_name, nv, nv == 1 ? "" : "s");
            return;
        }
    store:
        j->ri[k] = i;
        j->ci[k] = jj;
        if (j->type == HISP_F64)
            ((double *)j->val)[k] = v[0];
        else
            put(j->type, j->val, k, v);
    }
}

static void *data_worker(void *arg)
{
    data_job *j = arg;
    for (;;) {
        int c = atomic_fetch_add(&j->next, 1);
        if (c >= j->nch) break;
        if (j->pass == 1) {
            count_chunk(&j->ch[c]);
        } else if (c < atomic_load(&j->first_bad)) { /* later chunks' errors would not show */
            parse_chunk(j, &j->ch[c]);
            if (j->ch[c].r.st) {
                int fb = atomic_load(&j->first_bad);
                while (c < fb && !atomic_compare_exchange_weak(&j->first_bad, &fb, c)) {
                }
            }
        }
    }
    return NULL;
}

static void run_pass(data_job *j, int threads, int pass)
{
    j->pass = pass;
    atomic_store(&j->next, 0);
    hispi_parallel(threads, data_worker, j);
}

/* Off-diagonal entries mirrored after the stored ones: symmetric a, skew
 * -a, Hermitian conj(a). Returns the new count. */
static int64_t mirror(const data_job *j, int64_t nnz)
{
    size_t es = hisp_type_size(j->type);
    int comps = j->type == HISP_C32 || j->type == HISP_C64   ? 2
                : j->type == HISP_Q32 || j->type == HISP_Q64 ? 4
                                                             : 1;
    bool f32 = j->type == HISP_F32 || j->type == HISP_C32 || j->type == HISP_Q32;
    int neg0 = j->sym == SYM_SKEW ? 0 : j->sym == SYM_HERMITIAN ? 1 : comps;
    int64_t cnt = nnz;
    char *val = j->val;
    for (int64_t k = 0; k < nnz; k++) {
        if (j->ri[k] == j->ci[k]) continue;
        j->ri[cnt] = j->ci[k];
        j->ci[cnt] = j->ri[k];
        char *d = val + (size_t)cnt * es;
        memcpy(d, val + (size_t)k * es, es);
        for (int q = neg0; q < comps; q++) {
            if (f32)
                ((float *)d)[q] = -((float *)d)[q];
            else
                ((double *)d)[q] = -((double *)d)[q];
        }
        cnt++;
    }
    return cnt;
}

/* Pass 1 over [b, e) (whole lines): the chunks in j (j->ch, j->nch) and
 * their entry lines; *content: all of them. */
static hisp_status piece_count(hisp_context ctx, const char *b, const char *e, data_job *j,
                               int *threads_out, int64_t *content)
{
    size_t bytes = (size_t)(e - b);
    int threads = hispi_threads(ctx, (double)bytes / 16);
    int nch = threads == 1 ? 1 : threads * 8;
    if ((size_t)nch > bytes / 65536 + 1) nch = (int)(bytes / 65536 + 1);
    chunk *ch;
    HISPI_TRY(hispi_alloc(ctx, (size_t)nch, sizeof *ch, (void **)&ch));
    const char *from = b;
    for (int c = 0; c < nch; c++) { /* split at line starts */
        const char *t = c == nch - 1 ? e : b + (size_t)((double)bytes * (c + 1) / nch);
        if (t < from) t = from;
        if (t < e && t > b && t[-1] != '\n') {
            const char *nl = memchr(t, '\n', (size_t)(e - t));
            t = nl ? nl + 1 : e;
        }
        ch[c].b = from;
        ch[c].e = t;
        from = t;
    }
    j->ch = ch;
    j->nch = nch;
    run_pass(j, threads, 1);
    *content = 0;
    for (int c = 0; c < nch; c++)
        *content += ch[c].content;
    *threads_out = threads;
    return HISP_SUCCESS;
}

/* Pass 2 over the chunks piece_count made (and frees): their entries into
 * slots *k...; *k and *line (the first line's number) advance. A piece
 * ending the data (final) must complete the declared count. */
static hisp_status piece_fill(hisp_context ctx, const char *name, data_job *j, int threads,
                              int64_t nnz, int64_t size_line, bool final, int64_t *kio,
                              int64_t *lineio)
{
    chunk *ch = j->ch;
    int nch = j->nch;
    atomic_store(&j->first_bad, nch);
    /* slots and line numbers; entries beyond the declared count are not parsed */
    int64_t k = *kio, line = *lineio, over_chunk = -1;
    for (int c = 0; c < nch; c++) {
        ch[c].k0 = k;
        ch[c].line0 = line;
        ch[c].limit = ch[c].content < nnz - k ? ch[c].content : nnz - k;
        if (ch[c].content > ch[c].limit && over_chunk < 0) over_chunk = c;
        k += ch[c].limit;
        line += ch[c].lines;
    }
    run_pass(j, threads, 2);
    hisp_status st = HISP_SUCCESS;
    int fb = atomic_load(&j->first_bad);
    if (fb < nch) {
        reader *r = &ch[fb].r;
        st = r->st == HISP_ERR_INPUT_FORMAT ? hispi_fail_at(ctx, name, r->err_line, "%s", r->msg)
                                            : hispi_fail(ctx, r->st, "%s: %s", name, r->msg);
    } else if (over_chunk >= 0) { /* the line of the first entry too many */
        reader x = {
            .cur = ch[over_chunk].b, .end = ch[over_chunk].e, .line = ch[over_chunk].line0 - 1};
        const char *p;
        for (int64_t n = 0; n <= ch[over_chunk].limit; n++)
            next_content(&x, &p);
        st = hispi_fail_at(ctx, name, x.line, "more entries than the %lld declared on line %lld",
                           (long long)nnz, (long long)size_line);
    } else if (final && k < nnz) {
        st = hispi_fail_at(ctx, name, line,
                           "the file ends after %lld of the %lld entries declared on line %lld",
                           (long long)k, (long long)nnz, (long long)size_line);
    }
    free(ch);
    j->ch = NULL;
    *kio = k;
    *lineio = line;
    return st;
}

/* The entries of [b, e) (whole lines; the first is line *line) into
 * slots *k...: piece_count, then piece_fill. */
static hisp_status parse_piece(hisp_context ctx, const char *name, const char *b, const char *e,
                               data_job *j, int64_t nnz, int64_t size_line, bool final,
                               int64_t *kio, int64_t *lineio)
{
    int threads;
    int64_t content;
    HISPI_TRY(piece_count(ctx, b, e, j, &threads, &content));
    return piece_fill(ctx, name, j, threads, nnz, size_line, final, kio, lineio);
}

/* ---- the parser --------------------------------------------------------- */

/* input: the bytes of the input as given (compressed: before
 * decompression), which bound the dimensions a file may declare */
typedef struct {
    uint64_t bytes;
    bool compressed;
} input_size;

static hisp_status parse(hisp_context ctx, const char *data, size_t size, input_size in,
                         const char *name, hisp_type type, hispi_sparse *out,
                         hisp_mtx_header *header, hispi_mtx_where *where);

static hisp_status compressed_head(hisp_context ctx, const char *data, size_t size,
                                   const char *name);

static hisp_status parse_plain(hisp_context ctx, const char *data, size_t size, input_size in,
                               const char *name, hisp_type type, hispi_sparse *out,
                               hisp_mtx_header *header, hispi_mtx_where *where)
{
    if (type != HISP_B3X3_F32 && type != HISP_B3X3_F64)
        return parse(ctx, data, size, in, name, type, out, header, where);
    /* 3x3 blocks: any real file, blocked by 3 */
    hispi_sparse real;
    hispi_mtx_where w = {0};
    HISPI_TRY(parse(ctx, data, size, in, name, HISP_F64, &real, header, &w));
    if (where) *where = w;
    if (real.nrows % 3 || real.ncols % 3) {
        hispi_sparse_free(&real);
        return hispi_fail_at(ctx, name ? name : "<buffer>", w.size_line,
                             "3x3 blocks need dimensions divisible by 3, this matrix is %lld x "
                             "%lld",
                             (long long)real.nrows, (long long)real.ncols);
    }
    hisp_status s = hispi_block3_from_real(ctx, name, &real, type, out);
    hispi_sparse_free(&real);
    return s;
}

hisp_status hispi_mtx_parse(hisp_context ctx, const char *data, size_t size, const char *name,
                            hisp_type type, hispi_sparse *out, hisp_mtx_header *header,
                            hispi_mtx_where *where)
{
    memset(out, 0, sizeof *out);
    if (!hispi_type_valid(type))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "invalid entry type %d", (int)type);
    if (data && hispi_compressed_kind(data, size)) {
        HISPI_TRY(compressed_head(ctx, data, size, name)); /* sizes before the whole */
        char *plain;
        size_t n;
        HISPI_TRY(hispi_decompress(ctx, name, data, size, &plain, &n));
        hisp_status s =
            parse_plain(ctx, plain, n, (input_size){size, true}, name, type, out, header, where);
        free(plain);
        return s;
    }
    return parse_plain(ctx, data, size, (input_size){size, false}, name, type, out, header, where);
}

hisp_status hispi_block3_from_real(hisp_context ctx, const char *name, const hispi_sparse *r,
                                   hisp_type t, hispi_sparse *out)
{
    (void)name;
    /* one block per scalar entry, the others zero; the sorted conversion
     * sums the blocks of one position component-wise */
    hispi_sparse b;
    HISPI_TRY(hispi_sparse_alloc(ctx, &b, HISP_FORMAT_COO, t, r->nrows / 3, r->ncols / 3, r->nnz));
    b.sorted = false;
    memset(b.val, 0, (size_t)r->nnz * hisp_type_size(t));
    for (int64_t k = 0; k < r->nnz; k++) {
        int32_t i = r->rowind[k], j = r->colind[k];
        double v = ((const double *)r->val)[k];
        b.rowind[k] = i / 3;
        b.colind[k] = j / 3;
        int q = (i % 3) * 3 + j % 3;
        if (t == HISP_B3X3_F32)
            ((float *)b.val)[k * 9 + q] = (float)v;
        else
            ((double *)b.val)[k * 9 + q] = v;
    }
    hisp_status s = hispi_sparse_convert(ctx, &b, HISP_FORMAT_COO, out);
    hispi_sparse_free(&b);
    return s;
}

/* The banner and size line; the data section is left in r. */
typedef struct {
    bool is_array;
    mtx_field field;
    int fi, si;
    mtx_symmetry sym;
    int64_t m, n, nnz, size_line;
} mtx_head;

/* probe: the header only (hisp_matrix_read_mtx_info): no entry type to
 * check against, and the data may be the file's first bytes (no room check). */
static hisp_status parse_head(reader *r, const char *data, size_t size, input_size in,
                              size_t beyond, hisp_type type, bool probe, mtx_head *h)
{
    char qb[48];
    bool cplx_type = type == HISP_C32 || type == HISP_C64;
    bool quat_type = type == HISP_Q32 || type == HISP_Q64;
    if (!data || size == 0) return bad(r, 1, "empty file: missing %%%%MatrixMarket banner");

    /* NUL bytes: binary data, never part of a text file */
    const char *nul = memchr(data, 0, (size_t)(r->end - data));
    if (nul) {
        int64_t line = 1;
        for (const char *s = data; s < nul; s++)
            line += *s == '\n';
        return bad(r, line, "NUL byte in the file (binary data?)");
    }

    /* banner: %%MatrixMarket matrix coordinate|array field symmetry, after
     * blank lines and blanks if any */
    const char *p = NULL;
    while (next_line(r)) {
        p = r->ls;
        if (r->line == 1 && p + 3 <= r->le && (unsigned char)p[0] == 0xEF &&
            (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
            p += 3; /* UTF-8 byte order mark */
        p = skip_ws(p, r->le);
        if (p < r->le) break;
    }
    int64_t bl = r->line;
    static const char magic[] = "%%MatrixMarket";
    const size_t mlen = sizeof magic - 1;
    if (!p || p == r->le || (size_t)(r->le - p) < mlen || strncasecmp(p, magic, mlen) != 0 ||
        (p + mlen < r->le && !is_ws(p[mlen])))
        return bad(r, p && p < r->le ? bl : 1, "missing %%%%MatrixMarket banner on the first line");
    p += mlen;
    const char *t[4][2];
    static const char *const what[4] = {"object", "format", "field", "symmetry"};
    for (int i = 0; i < 4; i++) {
        p = skip_ws(p, r->le);
        if (p == r->le)
            return bad(r, bl,
                       "banner: missing %s (expected: %%%%MatrixMarket matrix "
                       "coordinate|array field symmetry)",
                       what[i]);
        t[i][0] = p;
        p = t[i][1] = tok_end(p, r->le);
    }
    p = skip_ws(p, r->le);
    if (p < r->le)
        return bad(r, bl, "banner: unexpected '%s' after the symmetry", quote(qb, p, r->le));
    static const char *const obj_names[] = {"matrix"};
    static const char *const fmt_names[] = {"coordinate", "array"};
    if (keyword(t[0][0], t[0][1], obj_names, 1) < 0)
        return bad(r, bl, "banner: unknown object '%s' (only 'matrix' is defined)",
                   quote(qb, t[0][0], t[0][1]));
    int fmt = keyword(t[1][0], t[1][1], fmt_names, 2);
    if (fmt < 0)
        return bad(r, bl, "banner: unknown format '%s' (coordinate or array)",
                   quote(qb, t[1][0], t[1][1]));
    int fi = keyword(t[2][0], t[2][1], field_names, 6);
    if (fi < 0)
        return bad(r, bl,
                   "banner: unknown field '%s' (real, double, integer, complex, pattern or "
                   "quaternion)",
                   quote(qb, t[2][0], t[2][1]));
    int si = keyword(t[3][0], t[3][1], sym_names, 4);
    if (si < 0)
        return bad(r, bl,
                   "banner: unknown symmetry '%s' (general, symmetric, skew-symmetric or "
                   "hermitian)",
                   quote(qb, t[3][0], t[3][1]));
    h->is_array = fmt == 1;
    h->field = field_kinds[fi];
    h->fi = fi;
    h->si = si;
    h->sym = (mtx_symmetry)si;
    if (h->field == FIELD_PATTERN && h->is_array)
        return bad(r, bl, "banner: an array file cannot have the pattern field");
    if (h->field == FIELD_PATTERN && h->sym == SYM_SKEW)
        return bad(r, bl, "banner: a pattern file cannot be %s", sym_names[si]);
    if (h->sym == SYM_HERMITIAN && h->field != FIELD_COMPLEX && h->field != FIELD_QUAT)
        h->sym = SYM_SYMMETRIC; /* conj(x) = x; the peers read pattern hermitian so too */
    if (!probe && h->field == FIELD_COMPLEX && !cplx_type && !quat_type)
        return bad(r, bl, "complex file: read it with type c32 or c64 (or q32, q64), not %s",
                   hisp_type_name(type));
    if (!probe && h->field == FIELD_QUAT && !quat_type)
        return bad(r, bl, "quaternion file: read it with type q32 or q64 (not %s)",
                   hisp_type_name(type));

    /* size line */
    bool is_array = h->is_array;
    if (!next_content(r, &p))
        return bad(r, eof_line(r), "missing size line (%s)",
                   is_array ? "rows cols" : "rows cols entries");
    h->size_line = r->line;
    HISPI_TRY(parse_size(r, &p, "row count", &h->m));
    HISPI_TRY(parse_size(r, &p, "column count", &h->n));
    h->nnz = 0;
    if (!is_array) HISPI_TRY(parse_size(r, &p, "entry count", &h->nnz));
    p = skip_ws(p, r->le);
    if (p < r->le)
        return bad(r, r->line, "size line: unexpected '%s' (expected %s)", quote(qb, p, r->le),
                   is_array ? "rows cols" : "rows cols entries");
    int64_t m = h->m, n = h->n;
    if (m > INT32_MAX || n > INT32_MAX)
        return bad(r, r->line, "size line: %s count above 2^31-1 (the limit of 32-bit indices)",
                   m > INT32_MAX ? "row" : "column");
    int64_t dim_limit = HISPI_FILE_DIM_LIMIT(in.bytes);
    r->too_large = m > dim_limit || n > dim_limit;
    if (r->too_large)
        return bad(r, r->line,
                   "size line: %lld x %lld is too large for a %llu-byte%s file (at most "
                   "2^20 + 8 x the file size = %lld rows and columns)",
                   (long long)m, (long long)n, (unsigned long long)in.bytes,
                   in.compressed ? " compressed" : "", (long long)dim_limit);
    if (h->sym != SYM_GENERAL && m != n)
        return bad(r, r->line, "a %s matrix must be square, this one is %lld x %lld", sym_names[si],
                   (long long)m, (long long)n);
    if (is_array) { /* entries stored: all, lower triangle, or strictly lower */
        if (h->sym == SYM_GENERAL)
            h->nnz = m * n;
        else if (h->sym == SYM_SKEW)
            h->nnz = m * (m - 1) / 2;
        else
            h->nnz = m * (m + 1) / 2;
    }
    /* the smallest entry line is "1 1\n" (+ "1 " per value), or "1\n" per value
     * for arrays; the last line may lack its '\n' */
    int nvals = h->field == FIELD_PATTERN   ? 0
                : h->field == FIELD_COMPLEX ? 2
                : h->field == FIELD_QUAT    ? 4
                                            : 1;
    int64_t per = is_array ? 2 * nvals : 4 + 2 * nvals;
    uint64_t rest = (uint64_t)(r->end - r->cur) + beyond;
    int64_t room = (int64_t)((rest + 1) / (uint64_t)per);
    if (!probe && h->nnz > room)
        return bad(r, h->size_line,
                   "the size line declares %lld entries but the remaining %lld bytes can hold "
                   "at most %lld",
                   (long long)h->nnz, (long long)rest, (long long)room);
    return HISP_SUCCESS;
}

enum { INFO_HEAD = 1 << 20 }; /* the bytes a header is looked for in */

static hisp_status head_fail(hisp_context ctx, const char *name, const reader *r);

/* A compressed input's banner and size line from its first decompressed
 * bytes: sizes too large for the compressed size are refused before the
 * whole input is expanded. Any other failure is left to the whole input's
 * decompression and parse (which name damaged data first). */
static hisp_status compressed_head(hisp_context ctx, const char *data, size_t size,
                                   const char *name)
{
    name = name ? name : "<buffer>";
    char *head = NULL;
    size_t n = 0;
    HISPI_TRY(hispi_decompress_head(ctx, name, data, size, INFO_HEAD, &head, &n));
    reader r = {.cur = head, .end = head + n};
    mtx_head h;
    hisp_status st = parse_head(&r, head, n, (input_size){size, true}, 0, HISP_F64, true, &h);
    st = st && r.too_large ? head_fail(ctx, name, &r) : HISP_SUCCESS;
    free(head);
    return st;
}

/* After the head: the header for the caller, storage, the job. */
static hisp_status begin(hisp_context ctx, const mtx_head *h, int64_t room, hisp_type type,
                         hisp_mtx_header *header, hispi_sparse *s, data_job *j)
{
    if (header) {
        memset(header, 0, sizeof *header);
        copy_name(header->field, sizeof header->field, field_names[h->fi]);
        copy_name(header->symmetry, sizeof header->symmetry, sym_names[h->si]);
        header->is_array = h->is_array;
        header->nnz_stored = h->nnz;
    }
    int64_t cap = h->sym == SYM_GENERAL ? room : 2 * room;
    HISPI_TRY(hispi_sparse_alloc(ctx, s, HISP_FORMAT_COO, type, h->m, h->n, cap));
    s->sorted = false;
    hispi_huge_pages(s->rowind, (size_t)cap * sizeof(int32_t));
    hispi_huge_pages(s->colind, (size_t)cap * sizeof(int32_t));
    hispi_huge_pages(s->val, (size_t)cap * hisp_type_size(type));
    chunk *ch = j->ch; /* pass 1's chunks, if counted already */
    int nch = j->nch;
    *j = (data_job){.ch = ch,
                    .nch = nch,
                    .is_array = h->is_array,
                    .integer = h->field == FIELD_INTEGER,
                    .sym = h->sym,
                    .nvals = h->field == FIELD_PATTERN   ? 0
                             : h->field == FIELD_COMPLEX ? 2
                             : h->field == FIELD_QUAT    ? 4
                                                         : 1,
                    .m = h->m,
                    .n = h->n,
                    .field_name = field_names[h->fi],
                    .type = type,
                    .ri = s->rowind,
                    .ci = s->colind,
                    .val = s->val};
    return HISP_SUCCESS;
}

/* Mirrors, then gives back the unused room. */
static void finish(const mtx_head *h, const data_job *j, hispi_sparse *s, int64_t cnt)
{
    int64_t cap = s->nnz; /* the entries begin() made room for */
    if (h->sym != SYM_GENERAL) cnt = mirror(j, cnt);
    if (cnt < cap) { /* symmetric: fewer mirrors than the bound; shrinking may fail harmlessly */
        size_t c = (size_t)(cnt ? cnt : 1), es = hisp_type_size(s->type);
        void *q;
        if ((q = realloc(s->rowind, c * sizeof(int32_t)))) s->rowind = q;
        if ((q = realloc(s->colind, c * sizeof(int32_t)))) s->colind = q;
        if ((q = realloc(s->val, c * es))) s->val = q;
    }
    s->nnz = cnt;
}

static hisp_status head_fail(hisp_context ctx, const char *name, const reader *r)
{
    return r->st == HISP_ERR_INPUT_FORMAT ? hispi_fail_at(ctx, name, r->err_line, "%s", r->msg)
                                          : hispi_fail(ctx, r->st, "%s: %s", name, r->msg);
}

static hisp_status parse(hisp_context ctx, const char *data, size_t size, input_size in,
                         const char *name, hisp_type type, hispi_sparse *out,
                         hisp_mtx_header *header, hispi_mtx_where *where)
{
    memset(out, 0, sizeof *out);
    name = name ? name : "<buffer>";
    reader r = {.cur = data, .end = data ? data + size : data};
    mtx_head h;
    if (parse_head(&r, data, size, in, 0, type, false, &h)) return head_fail(ctx, name, &r);
    if (where) *where = (hispi_mtx_where){h.size_line, in.bytes};
    /* the entry lines present, counted before the storage is allocated: a
     * file that declares more entries than it holds (blanks, say, that a
     * compressed input expands to) costs no more than what it holds */
    data_job j = {0};
    int threads;
    int64_t content;
    HISPI_TRY(piece_count(ctx, r.cur, r.end, &j, &threads, &content));
    hispi_sparse s;
    hisp_status st = begin(ctx, &h, content < h.nnz ? content : h.nnz, type, header, &s, &j);
    if (st) {
        free(j.ch);
        return st;
    }
    int64_t cnt = 0, line = r.line + 1;
    st = piece_fill(ctx, name, &j, threads, h.nnz, h.size_line, true, &cnt, &line);
    if (st) {
        hispi_sparse_free(&s);
        return st;
    }
    finish(&h, &j, &s, cnt);
    *out = s;
    return HISP_SUCCESS;
}

/* Fills buf up to n bytes from fd; the bytes read (fewer: the end). */
static size_t read_full(int fd, char *buf, size_t n, int *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) *err = errno;
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

enum { PIECE = 32 << 20 };

/* A large plain regular file parsed in pieces of PIECE bytes as it is read
 * (the memory of a whole-file copy, and the kernel's zeroing of it, are
 * more than its parsing costs). *fallback: not this path (small,
 * compressed, 3x3 blocks, or a head that does not fit the first piece):
 * nothing was recorded, the caller reads the whole file. */
static hisp_status parse_file(hisp_context ctx, int fd, size_t fsize, const char *name,
                              hisp_type type, hispi_sparse *out, hisp_mtx_header *header,
                              hispi_mtx_where *where, bool *fallback)
{
    *fallback = true;
    if (fsize <= 2 * (size_t)PIECE || type == HISP_B3X3_F32 || type == HISP_B3X3_F64)
        return HISP_SUCCESS;
    size_t cap = PIECE + 1, len = 0;
    char *buf;
    HISPI_TRY(hispi_alloc(ctx, cap, 1, (void **)&buf));
    int err = 0;
    len = read_full(fd, buf, PIECE, &err);
    bool eof = len < PIECE;
    reader r = {.cur = buf, .end = buf + len};
    mtx_head h;
    if (err || hispi_compressed_kind(buf, len) ||
        parse_head(&r, buf, fsize, (input_size){fsize, false}, fsize - len, type, false, &h) ||
        r.le >= r.end) { /* the size line must end inside the piece */
        free(buf);
        return HISP_SUCCESS;
    }
    *fallback = false;
    if (where) *where = (hispi_mtx_where){h.size_line, fsize};
    hispi_sparse s;
    data_job j = {0};
    hisp_status st = begin(ctx, &h, h.nnz, type, header, &s, &j);
    if (st) {
        free(buf);
        return st;
    }
    int64_t cnt = 0, line = r.line + 1;
    const char *cur = r.cur;
    for (;;) {
        const char *end = buf + len;
        if (!eof) { /* whole lines only; a longer line grows the piece */
            const char *nl = cur < end ? memrchr(cur, '\n', (size_t)(end - cur)) : NULL;
            end = nl ? nl + 1 : cur;
        }
        const char *nul = memchr(cur, 0, (size_t)(end - cur));
        if (nul) {
            int64_t l = line;
            for (const char *q = cur; q < nul; q++)
                l += *q == '\n';
            st = hispi_fail_at(ctx, name, l, "NUL byte in the file (binary data?)");
            break;
        }
        if (end > cur &&
            (st = parse_piece(ctx, name, cur, end, &j, h.nnz, h.size_line, eof, &cnt, &line)))
            break;
        if (eof) {
            if (end == cur && cnt < h.nnz)
                st = hispi_fail_at(ctx, name, line,
                                   "the file ends after %lld of the %lld entries declared on line "
                                   "%lld",
                                   (long long)cnt, (long long)h.nnz, (long long)h.size_line);
            break;
        }
        size_t carry = (size_t)(buf + len - end);
        memmove(buf, end, carry);
        len = carry;
        if (end == cur && len + PIECE / 2 > cap - 1) { /* one line longer than the piece */
            if ((st = hispi_realloc(ctx, (void **)&buf, cap * 2, 1))) break;
            cap *= 2;
        }
        size_t want = cap - 1 - len, got = read_full(fd, buf + len, want, &err);
        if (err) {
            st =
                hispi_fail_native(ctx, HISP_ERR_IO, err, "cannot read %s: %s", name, strerror(err));
            break;
        }
        len += got;
        eof = got < want;
        cur = buf;
    }
    free(buf);
    if (st) {
        hispi_sparse_free(&s);
        return st;
    }
    finish(&h, &j, &s, cnt);
    *out = s;
    return HISP_SUCCESS;
}

hisp_status hispi_mtx_read_file(hisp_context ctx, const char *path, hisp_type type,
                                hispi_sparse *out, hisp_mtx_header *header, hispi_mtx_where *where)
{
    memset(out, 0, sizeof *out);
    if (!hispi_type_valid(type))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "invalid entry type %d", (int)type);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
        bool fallback;
        hisp_status st =
            parse_file(ctx, fd, (size_t)sb.st_size, path, type, out, header, where, &fallback);
        if (!fallback) {
            close(fd);
            return st;
        }
    }
    if (fd >= 0) close(fd);
    char *data = NULL;
    size_t size = 0;
    HISPI_TRY(hispi_read_file(ctx, path, "%%MatrixMarket", &data, &size));
    hisp_status st = hispi_mtx_parse(ctx, data, size, path, type, out, header, where);
    free(data);
    return st;
}

/* ---- the header alone (hisp_matrix_read_mtx_info) --------------------------------- */

/* data: the file's first bytes (at most INFO_HEAD used); whole: its size
 * where known (the size line's bound), else 0. */
static hisp_status read_info(hisp_context ctx, const char *data, size_t size, uint64_t whole,
                             const char *name, hisp_mtx_info *info)
{
    char *plain = NULL;
    bool compressed = data && hispi_compressed_kind(data, size);
    if (compressed) {
        size_t n = 0;
        HISPI_TRY(hispi_decompress_head(ctx, name, data, size, INFO_HEAD, &plain, &n));
        data = plain;
        size = n;
    } else if (size > INFO_HEAD) {
        size = INFO_HEAD;
    }
    if (!whole) whole = HISPI_STREAM_LIMIT; /* a pipe: read up to the stream limit */
    reader r = {.cur = data, .end = data ? data + size : data};
    mtx_head h;
    hisp_status st =
        parse_head(&r, data, (size_t)whole, (input_size){whole, compressed}, 0, HISP_F64, true, &h);
    free(plain);
    if (st) return head_fail(ctx, name, &r);
    memset(info, 0, sizeof *info);
    info->nrows = h.m;
    info->ncols = h.n;
    copy_name(info->header.field, sizeof info->header.field, field_names[h.fi]);
    copy_name(info->header.symmetry, sizeof info->header.symmetry, sym_names[h.si]);
    info->header.is_array = h.is_array;
    info->header.nnz_stored = h.nnz;
    info->type = h.field == FIELD_COMPLEX ? HISP_C64 : h.field == FIELD_QUAT ? HISP_Q64 : HISP_F64;
    return HISP_SUCCESS;
}

static hisp_status info_args(hisp_context ctx, const void *p, hisp_mtx_info *info)
{
    if (!hispi_ctx_ok(ctx)) return HISP_ERR_INVALID_HANDLE;
    if (!p) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL path or data");
    if (!info) return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "NULL info");
    return HISP_SUCCESS;
}

hisp_status hisp_matrix_read_mtx_info_buffer(hisp_context ctx, const char *data, size_t size,
                                             const char *name, hisp_mtx_info *info)
{
    HISPI_TRY(info_args(ctx, data, info));
    return read_info(ctx, data, size, size, name ? name : "<buffer>", info);
}

hisp_status hisp_matrix_read_mtx_info(hisp_context ctx, const char *path, hisp_mtx_info *info)
{
    HISPI_TRY(info_args(ctx, path, info));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return hispi_fail_native(ctx, HISP_ERR_IO, e, "cannot open %s: %s", path, strerror(e));
    }
    struct stat sb;
    uint64_t whole = 0;
    if (fstat(fd, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            close(fd);
            return hispi_fail_native(ctx, HISP_ERR_IO, EISDIR, "cannot read %s: %s", path,
                                     strerror(EISDIR));
        }
        if (S_ISREG(sb.st_mode) && sb.st_size >= 0) whole = (uint64_t)sb.st_size;
    }
    char *buf = NULL;
    hisp_status st = hispi_alloc(ctx, INFO_HEAD + 1, 1, (void **)&buf);
    int err = 0;
    size_t len = st ? 0 : read_full(fd, buf, INFO_HEAD, &err);
    close(fd);
    if (!st && err)
        st = hispi_fail_native(ctx, HISP_ERR_IO, err, "cannot read %s: %s", path, strerror(err));
    if (!st) {
        buf[len] = 0;
        st = read_info(ctx, buf, len, whole, path, info);
    }
    free(buf);
    return st;
}
