/* The format registry and the calls that move a matrix between formats:
 * hisp_matrix_convert, hisp_matrix_duplicate, hisp_matrix_format_bytes and
 * the names. A new format adds one line to `formats` below. */
#include "format/format.h"

#include <string.h>
#include <strings.h>

extern const hispi_format_ops hispi_coo_format, hispi_csr_format, hispi_csc_format;
extern const hispi_format_ops hispi_hisparse_format, hispi_sell_format;

static const hispi_format_ops *const formats[] = {
    [HISP_FORMAT_COO] = &hispi_coo_format,   [HISP_FORMAT_CSR] = &hispi_csr_format,
    [HISP_FORMAT_CSC] = &hispi_csc_format,   [HISP_FORMAT_HISPARSE] = &hispi_hisparse_format,
    [HISP_FORMAT_SELL] = &hispi_sell_format,
};

#define NFORMATS ((int)(sizeof formats / sizeof formats[0]))

const hispi_format_ops *hispi_format_get(hisp_format f)
{
    return (int)f >= 0 && (int)f < NFORMATS ? formats[f] : NULL;
}

int hispi_format_count(void)
{
    return NFORMATS;
}

const hispi_format_ops *hispi_format_of(hisp_matrix A)
{
    return A->fmt ? A->fmt : hispi_format_get(A->host.format);
}

const char *hisp_format_name(hisp_format f)
{
    const hispi_format_ops *o = hispi_format_get(f);
    return o ? o->name : "invalid";
}

hisp_status hisp_format_from_name(const char *name, hisp_format *f)
{
    if (!name || !f) return HISP_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < NFORMATS; i++)
        if (strcasecmp(name, formats[i]->name) == 0) {
            *f = formats[i]->format;
            return HISP_SUCCESS;
        }
    return HISP_ERR_INVALID_ARGUMENT;
}

static hisp_status target(hisp_matrix A, hisp_format format, const hispi_format_ops **to)
{
    *to = hispi_format_get(format);
    if (!*to)
        return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "unknown format %d", (int)format);
    hisp_type t = A->host.type;
    if ((*to)->holds && !(*to)->holds(t))
        return hispi_fail(A->ctx, HISP_ERR_UNSUPPORTED, "the %s format does not hold %s entries",
                          (*to)->name, hisp_type_name(t));
    return hispi_matrix_need_host(A);
}

/* A's entries as a host COO/CSR/CSC: A->host itself for the sparse family,
 * else a copy in *tmp (freed by the caller). */
static hisp_status sparse_of(hisp_matrix A, hispi_sparse *tmp, const hispi_sparse **s)
{
    memset(tmp, 0, sizeof *tmp);
    if (hispi_sparse_family(A->host.format)) {
        *s = &A->host;
        return HISP_SUCCESS;
    }
    HISPI_TRY(hispi_format_of(A)->to_sparse(A, HISP_FORMAT_CSR, tmp));
    *s = tmp;
    return HISP_SUCCESS;
}

hisp_status hisp_matrix_convert(hisp_matrix A, hisp_format format)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    const hispi_format_ops *to;
    HISPI_TRY(target(A, format, &to));
    if (A->host.format == format && (format != HISP_FORMAT_COO || A->host.sorted))
        return HISP_SUCCESS;
    hispi_sparse tmp;
    const hispi_sparse *s;
    HISPI_TRY(sparse_of(A, &tmp, &s));
    hisp_status st = to->build(A, s);
    hispi_sparse_free(&tmp);
    return st;
}

hisp_status hisp_matrix_duplicate(hisp_matrix A, hisp_format format, hisp_matrix *B)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!B) return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "output handle is NULL");
    const hispi_format_ops *to;
    HISPI_TRY(target(A, format, &to));
    if (A->host.format == format && to->duplicate) return to->duplicate(A, B);
    /* a new handle with the sizes and settings of A, then the conversion */
    hispi_sparse tmp;
    const hispi_sparse *s;
    HISPI_TRY(sparse_of(A, &tmp, &s));
    hispi_sparse empty = {.format = HISP_FORMAT_CSR, .type = s->type};
    hisp_status st = hispi_matrix_wrap(A->ctx, &empty, B);
    if (!st) {
        (*B)->node_size = A->node_size;
        st = to->build(*B, s);
        if (st) hisp_matrix_destroy(B);
    }
    hispi_sparse_free(&tmp);
    return st;
}

hisp_status hisp_matrix_format_bytes(hisp_matrix A, hisp_format format, hisp_type type,
                                     uint64_t *bytes)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!bytes || !hispi_type_valid(type))
        return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "bad type or NULL output");
    const hispi_format_ops *f = hispi_format_get(format);
    if (!f) return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "unknown format %d", (int)format);
    HISPI_TRY(hispi_matrix_need_host(A));
    return f->bytes(A, type, bytes);
}

/* A format without an operation of its own: A's entries through CSR (or,
 * for a transpose, read as the CSC of A^T), then the format again. */
static hisp_status via_csr(hisp_matrix A, bool transpose, double a)
{
    const hispi_format_ops *f = hispi_format_of(A);
    hispi_sparse s;
    HISPI_TRY(f->to_sparse(A, HISP_FORMAT_CSR, &s));
    if (transpose) { /* the rows of A are the columns of A^T */
        int64_t t = s.nrows;
        s.nrows = s.ncols;
        s.ncols = t;
        s.colptr = s.rowptr;
        s.rowptr = NULL;
        s.rowind = s.colind;
        s.colind = NULL;
        s.format = HISP_FORMAT_CSC;
    } else {
        hispi_sparse_scale(&s, a);
    }
    hisp_status st = f->build(A, &s);
    hispi_sparse_free(&s);
    return st;
}

hisp_status hisp_matrix_transpose(hisp_matrix A)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    HISPI_TRY(hispi_matrix_need_host(A));
    const hispi_format_ops *f = hispi_format_of(A);
    return f->transpose ? f->transpose(A) : via_csr(A, true, 1);
}

hisp_status hisp_matrix_scale(hisp_matrix A, const void *alpha)
{
    if (!hispi_mat_ok(A)) return HISP_ERR_INVALID_HANDLE;
    if (!alpha) return hispi_fail(A->ctx, HISP_ERR_INVALID_ARGUMENT, "alpha is NULL");
    HISPI_TRY(hispi_matrix_need_host(A));
    double a = hispi_load_real(A->host.type, alpha, 0);
    const hispi_format_ops *f = hispi_format_of(A);
    return f->scale ? f->scale(A, a) : via_csr(A, false, a);
}
