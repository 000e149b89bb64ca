/* The cost breakdown of an MSREP plan (hisp_mplan_breakdown): the workers'
 * per-call times collected, read back, and the row cost fitted to them
 * (hisp_mplan_create_weighted). */
#include "msrep_plan.h"

void hispi_msrep_collect(hisp_mplan plan)
{
    hisp_mplan_breakdown *bd = &plan->bd;
    bd->x_ms = bd->compute_ms = bd->gather_ms = bd->merge_ms = 0;
    for (int k = 0; k < plan->nd; k++) {
        worker *w = &plan->w[k];
        bd->dev[k].x_ms = w->x_ms;
        bd->dev[k].compute_ms = w->compute_ms;
        bd->dev[k].gather_ms = w->gather_ms;
        if (w->x_ms > bd->x_ms) bd->x_ms = w->x_ms;
        if (w->compute_ms > bd->compute_ms) bd->compute_ms = w->compute_ms;
        if (w->gather_ms > bd->gather_ms) bd->gather_ms = w->gather_ms;
        if (w->merge_ms > bd->merge_ms) bd->merge_ms = w->merge_ms;
    }
}

hisp_status hisp_mplan_fit_row_cost(hisp_mplan plan, const double *ms, double *row_cost)
{
    if (!hispi_handle_live(plan, HISPI_H_MPLAN)) return HISP_ERR_INVALID_HANDLE;
    if (!row_cost) return hispi_fail(plan->home, HISP_ERR_INVALID_ARGUMENT, "row_cost is NULL");
    /* least squares of t_k = a * nnz_k + b * rows_k over the nonempty parts
     * (no intercept: a launch is microseconds against the milliseconds of a
     * part); the normal equations of the two unknowns */
    double snn = 0, snr = 0, srr = 0, snt = 0, srt = 0;
    int used = 0;
    for (int k = 0; k < plan->nd; k++) {
        const hisp_part *p = &plan->parts[k];
        double t = ms ? ms[k] : plan->bd.dev[k].compute_ms;
        double nz = (double)(p->nnz_end - p->nnz_begin), r = (double)(p->end - p->start);
        if (nz <= 0 || !(t > 0)) continue;
        snn += nz * nz, snr += nz * r, srr += r * r, snt += nz * t, srt += r * t;
        used++;
    }
    double det = snn * srr - snr * snr;
    *row_cost = plan->row_cost;
    if (used < 2 || !(det > 1e-9 * snn * srr)) /* the parts' row/nnz ratios barely differ */
        return HISP_SUCCESS;
    double a = (snt * srr - srt * snr) / det, b = (snn * srt - snr * snt) / det;
    if (a > 0) *row_cost = b > 0 ? b / a : 0;
    if (*row_cost > 1e9) *row_cost = 1e9;
    return HISP_SUCCESS;
}

hisp_status hisp_mplan_get_breakdown(hisp_mplan plan, hisp_mplan_breakdown *b)
{
    if (!hispi_handle_live(plan, HISPI_H_MPLAN)) return HISP_ERR_INVALID_HANDLE;
    if (!b) return hispi_fail(plan->home, HISP_ERR_INVALID_ARGUMENT, "breakdown is NULL");
    *b = plan->bd;
    return HISP_SUCCESS;
}
