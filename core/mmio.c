/* Matrix Market reader and writer.
 *
 * The reader parses a whole file held in memory, one line at a time with
 * explicit end pointers (the data need not be NUL-terminated). Indices are
 * parsed by hand; values take an exact fast path (Clinger: an integer
 * mantissa below 2^53 scaled by an exact power of ten is one correctly
 * rounded operation) and fall back to strtod_l in the C locale, so the
 * result never depends on the caller's locale. Every failure names the
 * 1-based line. Storage is sized by the declared counts only after checking
 * that the remaining bytes could hold that many entries.
 *
 * Numbers: whatever strtod accepts as one whole token in the C locale is a
 * number, so "nan", "inf", "-inf", "infinity" and hex floats are accepted
 * (the writer prints non-finite values that way, so they round-trip).
 * Integer-field values must be [+-]digits.
 */
#include "hispi_compound.h"

#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ---- C locale for strtod_l / the writer --------------------------------- */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static locale_t get_c_locale(void)
{
    pthread_once(&c_locale_once, c_locale_init);
    return c_locale;
}

/* ---- reader state and helpers ------------------------------------------- */

typedef enum { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW, SYM_HERMITIAN } mtx_symmetry;
typedef enum { FIELD_REAL, FIELD_INTEGER, FIELD_COMPLEX, FIELD_PATTERN, FIELD_QUAT } mtx_field;

typedef struct {
    hisp_context ctx;
    const char *name;
    const char *cur, *end; /* unread data */
    int64_t line;          /* 1-based number of the current line */
    const char *ls, *le;   /* the current line, without its '\n' */
} reader;

static hisp_status bad(reader *r, int64_t line, const char *fmt, ...) HISPI_PRINTF(3, 4);

static hisp_status bad(reader *r, int64_t line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hispi_fail_at(r->ctx, r->name, line, "%s", msg);
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

static bool next_line(reader *r)
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
    const char *p = skip_ws(*pp, r->le);
    if (p == r->le) return bad(r, r->line, "missing %s index", what);
    const char *q = tok_end(p, r->le);
    uint64_t v;
    if (!parse_digits(p, q, &v))
        return bad(r, r->line, "%s index '%s' is not a positive integer", what, quote(qb, p, q));
    if (v == 0) return bad(r, r->line, "%s index 0 (Matrix Market indices start at 1)", what);
    if (v > (uint64_t)bound)
        return bad(r, r->line, "%s index %s out of range 1..%lld", what, quote(qb, p, q),
                   (long long)bound);
    *out = (int32_t)(v - 1);
    *pp = q;
    return HISP_SUCCESS;
}

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Exact fast path for [+-]digits[.digits][(e|E)[+-]digits]; false when the
 * token has another shape or is out of the exact range (then strtod). */
static inline bool fast_double(const char *p, const char *q, bool integer_only, double *out)
{
    bool neg = false;
    if (p < q && (*p == '+' || *p == '-')) {
        neg = *p == '-';
        p++;
    }
    uint64_t m = 0;
    int ndig = 0, scale = 0;
    bool any = false;
    for (; p < q && (unsigned)(*p - '0') <= 9; p++, any = true) {
        if (m == 0 && *p == '0') continue; /* leading zeros */
        if (++ndig > 19) return false;
        m = m * 10 + (uint64_t)(*p - '0');
    }
    if (p < q && *p == '.' && !integer_only) {
        for (p++; p < q && (unsigned)(*p - '0') <= 9; p++, any = true) {
            scale--;
            if (m == 0 && *p == '0') continue;
            if (++ndig > 19) return false;
            m = m * 10 + (uint64_t)(*p - '0');
        }
    }
    if (!any) return false;
    if (p < q && (*p == 'e' || *p == 'E') && !integer_only) {
        p++;
        bool eneg = false;
        if (p < q && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p == q) return false;
        int e = 0;
        for (; p < q && (unsigned)(*p - '0') <= 9; p++)
            if ((e = e * 10 + (*p - '0')) > 10000) return false;
        scale += eneg ? -e : e;
    }
    if (p != q) return false;
    double v;
    if (m == 0)
        v = 0.0;
    else if (m >= (1ull << 53) || scale < -22 || scale > 22)
        return false;
    else
        v = scale < 0 ? (double)m / pow10_exact[-scale] : (double)m * pow10_exact[scale];
    *out = neg ? -v : v;
    return true;
}

/* One value token at *pp; `integer` requires [+-]digits. */
static inline hisp_status parse_value(reader *r, const char **pp, bool integer, const char *what,
                                      double *out)
{
    char qb[48];
    const char *p = skip_ws(*pp, r->le);
    if (p == r->le) return bad(r, r->line, "missing %s", what);
    const char *q = tok_end(p, r->le);
    *pp = q;
    if (fast_double(p, q, integer, out)) return HISP_SUCCESS;
    if (integer) { /* must be [+-]digits; big ones go to strtod for rounding */
        const char *s = p + (*p == '+' || *p == '-');
        uint64_t dummy;
        if (!parse_digits(s, q, &dummy))
            return bad(r, r->line, "%s '%s' is not an integer (the file's field is integer)", what,
                       quote(qb, p, q));
    }
    char small[128], *buf = small; /* strtod needs a NUL: a copy; long ones on the heap */
    size_t n = (size_t)(q - p);
    if (n >= sizeof small && hispi_alloc(r->ctx, n + 1, 1, (void **)&buf))
        return HISP_ERR_OUT_OF_HOST_MEMORY;
    memcpy(buf, p, n);
    buf[n] = 0;
    char *endp = NULL;
    locale_t loc = get_c_locale();
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

/* ---- the parser --------------------------------------------------------- */

static hisp_status parse(hisp_context ctx, const char *data, size_t size, const char *name,
                         hisp_type type, hispi_sparse *out, hisp_mtx_header *header,
                         int64_t *size_line_out);

hisp_status hispi_mtx_parse(hisp_context ctx, const char *data, size_t size, const char *name,
                            hisp_type type, hispi_sparse *out, hisp_mtx_header *header)
{
    memset(out, 0, sizeof *out);
    if (!hispi_type_valid(type))
        return hispi_fail(ctx, HISP_ERR_INVALID_ARGUMENT, "invalid entry type %d", (int)type);
    if (type != HISP_B3X3_F32 && type != HISP_B3X3_F64)
        return parse(ctx, data, size, name, type, out, header, NULL);
    /* 3x3 blocks: any real file, blocked by 3 */
    hispi_sparse real;
    int64_t size_line = 0;
    HISPI_TRY(parse(ctx, data, size, name, HISP_F64, &real, header, &size_line));
    if (real.nrows % 3 || real.ncols % 3) {
        hispi_sparse_free(&real);
        return hispi_fail_at(ctx, name ? name : "<buffer>", size_line,
                             "3x3 blocks need dimensions divisible by 3, this matrix is %lld x "
                             "%lld",
                             (long long)real.nrows, (long long)real.ncols);
    }
    hisp_status s = hispi_block3_from_real(ctx, name, &real, type, out);
    hispi_sparse_free(&real);
    return s;
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

static hisp_status parse(hisp_context ctx, const char *data, size_t size, const char *name,
                         hisp_type type, hispi_sparse *out, hisp_mtx_header *header,
                         int64_t *size_line_out)
{
    memset(out, 0, sizeof *out);
    bool cplx_type = type == HISP_C32 || type == HISP_C64;
    bool quat_type = type == HISP_Q32 || type == HISP_Q64;
    reader r = {ctx, name ? name : "<buffer>", data, data, 0, data, data};
    char qb[48];
    if (!data || size == 0) return bad(&r, 1, "empty file: missing %%%%MatrixMarket banner");
    r.end = data + size;

    /* NUL bytes: binary data, never part of a text file */
    const char *nul = memchr(data, 0, size);
    if (nul) {
        int64_t line = 1;
        for (const char *s = data; s < nul; s++)
            line += *s == '\n';
        return bad(&r, line, "NUL byte in the file (binary data?)");
    }

    /* banner: %%MatrixMarket matrix coordinate|array field symmetry */
    next_line(&r);
    const char *p = r.ls;
    if (p + 3 <= r.le && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB &&
        (unsigned char)p[2] == 0xBF)
        p += 3; /* UTF-8 byte order mark */
    static const char magic[] = "%%MatrixMarket";
    const size_t mlen = sizeof magic - 1;
    if ((size_t)(r.le - p) < mlen || strncasecmp(p, magic, mlen) != 0 ||
        (p + mlen < r.le && !is_ws(p[mlen])))
        return bad(&r, 1, "missing %%%%MatrixMarket banner on the first line");
    p += mlen;
    const char *t[4][2];
    static const char *const what[4] = {"object", "format", "field", "symmetry"};
    for (int i = 0; i < 4; i++) {
        p = skip_ws(p, r.le);
        if (p == r.le)
            return bad(&r, 1,
                       "banner: missing %s (expected: %%%%MatrixMarket matrix "
                       "coordinate|array field symmetry)",
                       what[i]);
        t[i][0] = p;
        p = t[i][1] = tok_end(p, r.le);
    }
    p = skip_ws(p, r.le);
    if (p < r.le)
        return bad(&r, 1, "banner: unexpected '%s' after the symmetry", quote(qb, p, r.le));
    static const char *const obj_names[] = {"matrix"};
    static const char *const fmt_names[] = {"coordinate", "array"};
    if (keyword(t[0][0], t[0][1], obj_names, 1) < 0)
        return bad(&r, 1, "banner: unknown object '%s' (only 'matrix' is defined)",
                   quote(qb, t[0][0], t[0][1]));
    int fmt = keyword(t[1][0], t[1][1], fmt_names, 2);
    if (fmt < 0)
        return bad(&r, 1, "banner: unknown format '%s' (coordinate or array)",
                   quote(qb, t[1][0], t[1][1]));
    int fi = keyword(t[2][0], t[2][1], field_names, 6);
    if (fi < 0)
        return bad(&r, 1,
                   "banner: unknown field '%s' (real, double, integer, complex, pattern or "
                   "quaternion)",
                   quote(qb, t[2][0], t[2][1]));
    int si = keyword(t[3][0], t[3][1], sym_names, 4);
    if (si < 0)
        return bad(&r, 1,
                   "banner: unknown symmetry '%s' (general, symmetric, skew-symmetric or "
                   "hermitian)",
                   quote(qb, t[3][0], t[3][1]));
    bool is_array = fmt == 1;
    mtx_field field = field_kinds[fi];
    mtx_symmetry sym = (mtx_symmetry)si;
    if (field == FIELD_PATTERN && is_array)
        return bad(&r, 1, "banner: an array file cannot have the pattern field");
    if (field == FIELD_PATTERN && (sym == SYM_SKEW || sym == SYM_HERMITIAN))
        return bad(&r, 1, "banner: a pattern file cannot be %s", sym_names[si]);
    if (sym == SYM_HERMITIAN && field != FIELD_COMPLEX && field != FIELD_QUAT)
        sym = SYM_SYMMETRIC; /* conj(x) = x */
    if (field == FIELD_COMPLEX && !cplx_type && !quat_type)
        return hispi_fail_at(ctx, r.name, 1,
                             "complex file: read it with type c32 or c64 (or q32, q64), not %s",
                             hisp_type_name(type));
    if (field == FIELD_QUAT && !quat_type)
        return hispi_fail_at(ctx, r.name, 1,
                             "quaternion file: read it with type q32 or q64 (not %s)",
                             hisp_type_name(type));
    if (header) {
        memset(header, 0, sizeof *header);
        copy_name(header->field, sizeof header->field, field_names[fi]);
        copy_name(header->symmetry, sizeof header->symmetry, sym_names[si]);
        header->is_array = is_array;
    }

    /* size line */
    if (!next_content(&r, &p))
        return bad(&r, eof_line(&r), "missing size line (%s)",
                   is_array ? "rows cols" : "rows cols entries");
    int64_t size_line = r.line, m = 0, n = 0, nnz = 0;
    if (size_line_out) *size_line_out = size_line;
    HISPI_TRY(parse_size(&r, &p, "row count", &m));
    HISPI_TRY(parse_size(&r, &p, "column count", &n));
    if (!is_array) HISPI_TRY(parse_size(&r, &p, "entry count", &nnz));
    p = skip_ws(p, r.le);
    if (p < r.le)
        return bad(&r, r.line, "size line: unexpected '%s' (expected %s)", quote(qb, p, r.le),
                   is_array ? "rows cols" : "rows cols entries");
    if (m > INT32_MAX || n > INT32_MAX)
        return bad(&r, r.line, "size line: %s count above 2^31-1 (the limit of 32-bit indices)",
                   m > INT32_MAX ? "row" : "column");
    int64_t dim_limit = HISPI_FILE_DIM_LIMIT(size);
    if (m > dim_limit || n > dim_limit)
        return bad(&r, r.line,
                   "size line: %lld x %lld is too large for a %zu-byte file (at most "
                   "2^20 + 8 x the file size = %lld rows and columns)",
                   (long long)m, (long long)n, size, (long long)dim_limit);
    if (sym != SYM_GENERAL && m != n)
        return bad(&r, r.line, "a %s matrix must be square, this one is %lld x %lld", sym_names[si],
                   (long long)m, (long long)n);
    int nvals = field == FIELD_PATTERN   ? 0
                : field == FIELD_COMPLEX ? 2
                : field == FIELD_QUAT    ? 4
                                         : 1;
    if (is_array) { /* entries stored: all, lower triangle, or strictly lower */
        if (sym == SYM_GENERAL)
            nnz = m * n;
        else if (sym == SYM_SKEW)
            nnz = m * (m - 1) / 2;
        else
            nnz = m * (m + 1) / 2;
    }
    /* the smallest entry line is "1 1\n" (+ "1 " per value), or "1\n" per value
     * for arrays; the last line may lack its '\n' */
    int64_t per = is_array ? 2 * nvals : 4 + 2 * nvals;
    int64_t room = (int64_t)(((uint64_t)(r.end - r.cur) + 1) / (uint64_t)per);
    if (nnz > room)
        return bad(&r, size_line,
                   "the size line declares %lld entries but the remaining %lld bytes can hold "
                   "at most %lld",
                   (long long)nnz, (long long)(r.end - r.cur), (long long)room);
    if (header) header->nnz_stored = nnz;
    int64_t cap;
    if (is_array)
        cap = sym == SYM_GENERAL ? nnz : sym == SYM_SKEW ? 2 * nnz : m * m;
    else
        cap = sym == SYM_GENERAL ? nnz : 2 * nnz;

    hispi_sparse s;
    HISPI_TRY(hispi_sparse_alloc(ctx, &s, HISP_FORMAT_COO, type, m, n, cap));
    s.sorted = false;
    int32_t *ri = s.rowind, *ci = s.colind;
    void *val = s.val;
    bool integer = field == FIELD_INTEGER;
    int64_t k = 0, cnt = 0;
    hisp_status st = HISP_SUCCESS;
    int32_t ai = 0, aj = 0; /* array: next position (column-major) */
    if (is_array && sym == SYM_SKEW) ai = 1;
    for (k = 0; k < nnz; k++) {
        if (!next_content(&r, &p)) {
            st = bad(&r, eof_line(&r),
                     "the file ends after %lld of the %lld entries declared on "
                     "line %lld",
                     (long long)k, (long long)nnz, (long long)size_line);
            goto fail;
        }
        int32_t i = 0, j = 0;
        if (is_array) {
            i = ai;
            j = aj;
            if (++ai == m) { /* next column: from the top, or from the diagonal */
                aj++;
                ai = sym == SYM_GENERAL ? 0 : sym == SYM_SKEW ? aj + 1 : aj;
            }
        } else {
            if ((st = parse_index(&r, &p, m, "row", &i))) goto fail;
            if ((st = parse_index(&r, &p, n, "column", &j))) goto fail;
            if (sym != SYM_GENERAL && j > i) {
                st = bad(&r, r.line,
                         "entry (%d, %d) lies above the diagonal: a %s file stores only the "
                         "lower triangle",
                         i + 1, j + 1, sym_names[si]);
                goto fail;
            }
            if (sym == SYM_SKEW && i == j) {
                st = bad(&r, r.line, "diagonal entry (%d, %d) in a skew-symmetric file", i + 1,
                         j + 1);
                goto fail;
            }
        }
        double v[4] = {1.0, 0.0, 0.0, 0.0};
        static const char *const part[2][4] = {{"real part", "imaginary part", "", ""},
                                               {"w", "x", "y", "z"}};
        for (int c = 0; c < nvals; c++)
            if ((st = parse_value(&r, &p, integer, nvals == 1 ? "value" : part[nvals == 4][c],
                                  &v[c])))
                goto fail;
        p = skip_ws(p, r.le);
        if (p < r.le) {
            st = bad(&r, r.line, "unexpected '%s' after the entry (%s file: %d value%s per entry)",
                     quote(qb, p, r.le), field_names[fi], nvals, nvals == 1 ? "" : "s");
            goto fail;
        }
        ri[cnt] = i;
        ci[cnt] = j;
        put(type, val, cnt++, v);
        if (sym != SYM_GENERAL && i != j) {
            ri[cnt] = j;
            ci[cnt] = i;
            double w[4] = {v[0], v[1], v[2], v[3]};
            for (int c = sym == SYM_HERMITIAN ? 1 : 0; c < 4 && sym != SYM_SYMMETRIC; c++)
                w[c] = -w[c]; /* skew: -a; hermitian: conj(a) */
            put(type, val, cnt++, w);
        }
    }
    if (next_content(&r, &p)) {
        st = bad(&r, r.line, "more entries than the %lld declared on line %lld", (long long)nnz,
                 (long long)size_line);
        goto fail;
    }
    if (cnt < cap) { /* symmetric: fewer mirrors than the bound; shrinking may fail harmlessly */
        size_t c = (size_t)(cnt ? cnt : 1), es = hisp_type_size(type);
        void *q;
        if ((q = realloc(s.rowind, c * sizeof(int32_t)))) s.rowind = q;
        if ((q = realloc(s.colind, c * sizeof(int32_t)))) s.colind = q;
        if ((q = realloc(s.val, c * es))) s.val = q;
    }
    s.nnz = cnt;
    *out = s;
    return HISP_SUCCESS;
fail:
    hispi_sparse_free(&s);
    return st;
}

/* ---- files -------------------------------------------------------------- */

hisp_status hispi_read_file(hisp_context ctx, const char *path, const char *magic, char **data,
                            size_t *size)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return hispi_fail_native(ctx, HISP_ERR_IO, e, "cannot open %s: %s", path, strerror(e));
    }
    /* regular files: exact size (+2 so that the first short read ends it);
     * pipes and devices grow the buffer up to HISPI_STREAM_LIMIT */
    struct stat sb;
    size_t cap = 1 << 16, limit = HISPI_STREAM_LIMIT;
    bool stream = true;
    if (fstat(fileno(f), &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            fclose(f);
            return hispi_fail_native(ctx, HISP_ERR_IO, EISDIR, "cannot read %s: %s", path,
                                     strerror(EISDIR));
        }
        if (S_ISREG(sb.st_mode) && sb.st_size >= 0 && (uint64_t)sb.st_size < SIZE_MAX - 2) {
            cap = (size_t)sb.st_size + 2;
            limit = SIZE_MAX / 2; /* a file that grows while read */
            stream = false;
        }
    }
    char *buf = NULL;
    size_t len = 0;
    bool sniffed = !stream || !magic;
    hisp_status s = hispi_alloc(ctx, cap, 1, (void **)&buf);
    while (!s) {
        if (len + 1 >= cap) {
            if (cap >= limit) {
                s = hispi_fail(ctx, HISP_ERR_INPUT_FORMAT,
                               "%s: more than %zu MiB from a pipe or device (the limit for "
                               "inputs that are not regular files)",
                               path, limit >> 20);
                break;
            }
            cap *= 2;
            if ((s = hispi_realloc(ctx, (void **)&buf, cap, 1))) break;
        }
        size_t want = cap - 1 - len, got = fread(buf + len, 1, want, f);
        len += got;
        if (got < want) {
            if (ferror(f)) {
                int e = errno;
                s = hispi_fail_native(ctx, HISP_ERR_IO, e, "cannot read %s: %s", path, strerror(e));
            }
            break;
        }
        if (!sniffed) { /* not the format: the parser names the problem from these bytes */
            sniffed = true;
            size_t m = strlen(magic);
            if (len >= m && strncasecmp(buf, magic, m) != 0) break;
        }
    }
    fclose(f);
    if (s) {
        free(buf);
        return s;
    }
    buf[len] = 0;
    *data = buf;
    *size = len;
    return HISP_SUCCESS;
}

/* Writer: C locale for the decimal point, errors at any step → HISP_ERR_IO;
 * the target rule of file_out.c. */
typedef struct {
    hisp_context ctx;
    const char *path;
    hispi_out out;
    FILE *f;
    locale_t old;
    bool switched;
    char *buf;
} writer;

static hisp_status w_open(hisp_context ctx, const char *path, writer *w)
{
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->path = path;
    const char *why;
    int e = hispi_out_open(path, &w->out, &why);
    if (e) return hispi_out_fail(ctx, path, e, why);
    w->f = w->out.f;
    w->buf = malloc(1 << 20); /* optional: a large buffer makes writing faster */
    if (w->buf) setvbuf(w->f, w->buf, _IOFBF, 1 << 20);
    locale_t c = get_c_locale();
    if (c) {
        w->old = uselocale(c);
        w->switched = true;
    }
    return HISP_SUCCESS;
}

static hisp_status w_close(writer *w)
{
    int e = hispi_out_close(&w->out, w->path, true);
    free(w->buf);
    if (w->switched) uselocale(w->old);
    return e ? hispi_out_fail(w->ctx, w->path, e, NULL) : HISP_SUCCESS;
}

static void w_value(FILE *f, hisp_type t, const void *val, int64_t k)
{
    switch (t) {
    case HISP_Q32:
        fprintf(f, "%.9g %.9g %.9g %.9g\n", (double)((const float *)val)[4 * k],
                (double)((const float *)val)[4 * k + 1], (double)((const float *)val)[4 * k + 2],
                (double)((const float *)val)[4 * k + 3]);
        break;
    case HISP_Q64:
        fprintf(f, "%.17g %.17g %.17g %.17g\n", ((const double *)val)[4 * k],
                ((const double *)val)[4 * k + 1], ((const double *)val)[4 * k + 2],
                ((const double *)val)[4 * k + 3]);
        break;
    case HISP_F32:
        fprintf(f, "%.9g\n", (double)((const float *)val)[k]);
        break;
    case HISP_F64:
        fprintf(f, "%.17g\n", ((const double *)val)[k]);
        break;
    case HISP_C32:
        fprintf(f, "%.9g %.9g\n", (double)((const float *)val)[2 * k],
                (double)((const float *)val)[2 * k + 1]);
        break;
    default:
        fprintf(f, "%.17g %.17g\n", ((const double *)val)[2 * k], ((const double *)val)[2 * k + 1]);
        break;
    }
}

static hisp_status writable_type(hisp_context ctx, hisp_type t)
{
    if (hispi_type_valid(t) && t != HISP_B3X3_F32 && t != HISP_B3X3_F64) return HISP_SUCCESS;
    return hispi_fail(ctx, HISP_ERR_UNSUPPORTED,
                      "Matrix Market vector files hold f32, f64, c32, c64, q32 or q64 entries, "
                      "not %s",
                      hisp_type_name(t));
}

static const char *field_of(hisp_type t)
{
    return t == HISP_C32 || t == HISP_C64   ? "complex"
           : t == HISP_Q32 || t == HISP_Q64 ? "quaternion"
                                            : "real";
}

/* A 3x3 block matrix as a real file of 3m x 3n with all 9 scalars of every
 * block (zeros inside a block included, so the blocks read back alike). */
static hisp_status write_blocks(hisp_context ctx, const hispi_sparse *s, const char *path)
{
    hispi_sparse c;
    HISPI_TRY(hispi_sparse_convert(ctx, s, HISP_FORMAT_CSR, &c));
    writer w;
    hisp_status st = w_open(ctx, path, &w);
    if (st) {
        hispi_sparse_free(&c);
        return st;
    }
    FILE *f = w.f;
    bool f32 = s->type == HISP_B3X3_F32;
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%% written by hisp %s (%s)\n",
            hisp_version_string(), hisp_type_name(s->type));
    fprintf(f, "%lld %lld %lld\n", (long long)c.nrows * 3, (long long)c.ncols * 3,
            (long long)c.nnz * 9);
    for (int64_t i = 0; i < c.nrows; i++)
        for (int r = 0; r < 3; r++)
            for (int64_t k = c.rowptr[i]; k < c.rowptr[i + 1]; k++)
                for (int q = 0; q < 3; q++) {
                    int64_t e = k * 9 + r * 3 + q;
                    if (f32)
                        fprintf(f, "%lld %lld %.9g\n", (long long)i * 3 + r + 1,
                                (long long)c.colind[k] * 3 + q + 1, (double)((float *)c.val)[e]);
                    else
                        fprintf(f, "%lld %lld %.17g\n", (long long)i * 3 + r + 1,
                                (long long)c.colind[k] * 3 + q + 1, ((double *)c.val)[e]);
                }
    hispi_sparse_free(&c);
    return w_close(&w);
}

hisp_status hispi_mtx_write(hisp_context ctx, const hispi_sparse *s, const char *path)
{
    if (s->type == HISP_B3X3_F32 || s->type == HISP_B3X3_F64) return write_blocks(ctx, s, path);
    HISPI_TRY(writable_type(ctx, s->type));
    writer w;
    HISPI_TRY(w_open(ctx, path, &w));
    FILE *f = w.f;
    fprintf(f, "%%%%MatrixMarket matrix coordinate %s general\n%% written by hisp %s\n",
            field_of(s->type), hisp_version_string());
    fprintf(f, "%lld %lld %lld\n", (long long)s->nrows, (long long)s->ncols, (long long)s->nnz);
    if (s->format == HISP_FORMAT_COO) {
        for (int64_t k = 0; k < s->nnz; k++) {
            fprintf(f, "%d %d ", s->rowind[k] + 1, s->colind[k] + 1);
            w_value(f, s->type, s->val, k);
        }
    } else if (s->format == HISP_FORMAT_CSR) {
        for (int64_t i = 0; i < s->nrows; i++)
            for (int64_t k = s->rowptr[i]; k < s->rowptr[i + 1]; k++) {
                fprintf(f, "%lld %d ", (long long)i + 1, s->colind[k] + 1);
                w_value(f, s->type, s->val, k);
            }
    } else {
        for (int64_t j = 0; j < s->ncols; j++)
            for (int64_t k = s->colptr[j]; k < s->colptr[j + 1]; k++) {
                fprintf(f, "%d %lld ", s->rowind[k] + 1, (long long)j + 1);
                w_value(f, s->type, s->val, k);
            }
    }
    return w_close(&w);
}

hisp_status hispi_mtx_write_vector(hisp_context ctx, hisp_type t, int64_t n, const void *vals,
                                   const char *path)
{
    HISPI_TRY(writable_type(ctx, t));
    writer w;
    HISPI_TRY(w_open(ctx, path, &w));
    fprintf(w.f, "%%%%MatrixMarket matrix array %s general\n%% written by hisp %s\n%lld 1\n",
            field_of(t), hisp_version_string(), (long long)n);
    for (int64_t k = 0; k < n; k++)
        w_value(w.f, t, vals, k);
    return w_close(&w);
}

hisp_status hisp_matrix_write_mtx(hisp_matrix A, const char *path)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!path) return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "path is NULL");
    HISPI_TRY(hispi_matrix_need_host(A));
    if (!A->hs) return hispi_mtx_write(A->ctx, &A->host, path);
    hispi_sparse tmp; /* HiSparse: write the matrix as shown */
    HISPI_TRY(hispi_matrix_sparse_copy(A, HISP_FORMAT_COO, &tmp));
    hisp_status s = hispi_mtx_write(A->ctx, &tmp, path);
    hispi_sparse_free(&tmp);
    return s;
}
