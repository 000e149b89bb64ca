/* hisp tune (the format choice with its tables), its progress lines, and
 * the compound-entry path of hisp spmv (--entry, --layout, --schedule,
 * --plan). */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char help[] =
    "usage: hisp tune FILE.mtx|FILE.hisp|gen:KIND[:N[:SEED]] [options]\n"
    "\n"
    "Chooses the fastest format for y = op(A)*x on one device, as hisp spmv\n"
    "--format auto does, and shows the tables. First the compound search ranks\n"
    "the layouts (outer CSR, ELL, SELL16, SELL32 x entry AoS|SoA x vector\n"
    "AoS|SoA) and schedules (static or dynamic, threads per work-group x\n"
    "work-groups per compute unit) by device time (op = A only). Then its\n"
    "leaders, hisp's CSR kernel (the default; always in the table) and a copy\n"
    "in every other format that offers itself (HiSparse and SELL-C-sigma for\n"
    "f32, f64; HiSparse's first call schedules, later calls replay) are timed\n"
    "side by side: wall time per call with a synchronize, median of 15 interleaved\n"
    "rounds, each result checked against CSR's. Another format replaces CSR only\n"
    "when it is at least 3 % faster. The winner is kept in the plan\n"
    "cache (option cache_dir, else $XDG_CACHE_HOME/hisp, else ~/.cache/hisp)\n"
    "under (backend, device, driver, entry type, op, matrix structure): a later\n"
    "tune or spmv --format auto of this matrix on this device times nothing.\n"
    "The compound search's winner is cached too, for similar matrices. A .hisp\n"
    "file is tuned from its CSR form. FILE may be gen:fem3x3:N, gen:qsurface:N\n"
    "or gen:helmholtz:N (docs/COMPOUND.md).\n"
    "Progress goes to stderr: one line rewritten on a terminal, else a line at\n"
    "most every second (per 10 % of a stage or 10 s), with the best so far and\n"
    "an estimate of the time left.\n"
    "\n"
    "options:\n"
    "  --transpose [n|t]    choose for y = A^T*x (CSR and HiSparse; f32, f64; h is\n"
    "                       t for these real entries)\n"
    "  --search full|fast   full: the joint search, every layout x schedule;\n"
    "                       fast: tune n_t*n_b, factor it, then the layouts\n"
    "                       (default fast)\n"
    "  --no-cache           neither read nor write the plan cache\n"
    "  --save FILE          also write the compound search's best variant as a\n"
    "                       plan file (for spmv --plan FILE)\n"
    "  --top N              rows of the variants table (default 20; 0 = all)\n" CLI_TYPE_HELP
        CLI_BACKEND_HELP CLI_DEVICE_HELP
    "  --json               machine-readable output: \"backend\", \"device\", \"type\",\n"
    "                       the choice, every timed format and variant, "
    "\"transfers\"\n" CLI_HELP_HELP "\n" CLI_TRANSFERS_HELP
    "Here: the whole choice (every candidate's upload and timed runs).\n"
    "\n"
    "exit status: 0 success, 1 usage, 2 input, 3 backend or device error\n";

const char *cli_choice_kind(const hisp_format_result *r)
{
    return r->kind == HISP_CHOICE_FORMAT    ? hisp_format_name(r->format)
           : r->kind == HISP_CHOICE_VARIANT ? "variant"
                                            : "csr";
}

/* ---- progress ------------------------------------------------------------- */

static struct {
    int tty;   /* 0 unknown, 1 terminal, 2 not */
    bool open; /* a terminal line waits for its newline */
    double last_ms, last_frac;
    char stage[16];
} prog;

static void fmt_left(double ms, char *buf, size_t size)
{
    if (!(ms >= 0) || !isfinite(ms))
        snprintf(buf, size, "?");
    else if (ms < 60e3)
        snprintf(buf, size, "%.0f s", ms / 1e3 + 0.5);
    else
        snprintf(buf, size, "%.1f min", ms / 60e3);
}

void cli_format_progress(void *user, const hisp_format_progress_info *p)
{
    (void)user;
    if (!prog.tty) prog.tty = isatty(STDERR_FILENO) ? 1 : 2;
    double now = cli_now_ms();
    int total = p->total > p->done ? p->total : p->done;
    double frac = total > 0 ? (double)p->done / total : 1;
    bool new_stage = strcmp(prog.stage, p->stage) != 0;
    bool last = p->done >= total;
    if (prog.tty == 1) {
        if (!new_stage && !last && now - prog.last_ms < 200) return;
    } else if (!new_stage && (now - prog.last_ms < 1000 ||
                              (frac - prog.last_frac < 0.1 && now - prog.last_ms < 10e3))) {
        return;
    }
    snprintf(prog.stage, sizeof prog.stage, "%s", p->stage);
    prog.last_ms = now;
    prog.last_frac = frac;
    char best[200] = "none yet", name[160], left[32];
    if (p->best && isfinite(p->best_ms)) {
        if (hisp_format_result_name(p->best, name, sizeof name)) snprintf(name, sizeof name, "?");
        snprintf(best, sizeof best, "%.4f ms (%s)", p->best_ms, name);
    }
    fmt_left(p->left_ms, left, sizeof left);
    fprintf(stderr, "%shisp: tune: %s %d/%s%d, best %s, about %s left%s", prog.tty == 1 ? "\r" : "",
            p->stage, p->done, p->total > p->done ? "~" : "", total, best, left,
            prog.tty == 1 ? "\033[K" : "\n");
    prog.open = prog.tty == 1;
    fflush(stderr);
}

void cli_format_progress_end(void)
{
    if (prog.open) fprintf(stderr, "\n");
    prog.open = false;
    prog.stage[0] = 0;
    prog.last_ms = prog.last_frac = 0;
}

/* ---- hisp tune ---------------------------------------------------------------- */

static void variant_names(const hisp_variant *v, char *lay, char *sch)
{
    if (hisp_layout_name(&v->layout, lay, 64)) snprintf(lay, 64, "?");
    if (hisp_schedule_name(&v->sched, sch, 64)) snprintf(sch, 64, "?");
}

static void result_name(const hisp_format_result *r, char *buf, size_t size)
{
    if (hisp_format_result_name(r, buf, size)) snprintf(buf, size, "?");
}

/* The compound search's best as a plan (--save): from this search, else the
 * compound plan cache (tuned there on a miss). */
static hisp_status best_plan(hisp_context ctx, hisp_matrix A, const hisp_format_choice *c,
                             const hisp_tune_result *res, int count, hisp_tune_search search,
                             bool cache, hisp_tune_plan *p)
{
    if (c->variants_tried > 0 && count > 0) {
        memset(p, 0, sizeof *p);
        hisp_status s = hisp_tune_plan_key(ctx, A, p->key, sizeof p->key);
        if (s) return s;
        p->best = res[0].v;
        p->ms = res[0].ms;
        p->tried = c->variants_tried;
        return HISP_SUCCESS;
    }
    return hisp_tune(ctx, A, search, cache, NULL, NULL, NULL, 0, NULL, p);
}

enum {
    T_TYPE, /* CLI_TYPE_OPTS */
    T_ENTRY,
    T_PREC,
    T_TRANS,
    T_SEARCH,
    T_BACKEND,
    T_DEVICE,
    T_NOCACHE,
    T_SAVE,
    T_TOP,
    T_JSON,
    T_HELP
};

int cmd_tune(int argc, char **argv)
{
    static const cli_opt opts[] = {CLI_TYPE_OPTS,
                                   CLI_TRANSPOSE_OPT,
                                   {"--search", true},
                                   {"--backend", true},
                                   {"--device", true},
                                   {"--no-cache", false},
                                   {"--save", true},
                                   {"--top", true},
                                   {"--json", false},
                                   CLI_HELP_OPTS,
                                   {0, 0}};
    const char *val[T_HELP] = {0}, *path = NULL;
    int prc = cli_parse_command("tune", argc, argv, opts, help, val, &path);
    if (prc) return prc == CLI_HELP_SHOWN ? CLI_OK : prc;
    if (!path) return cli_usage_error("tune", "missing FILE.mtx");
    bool json = val[T_JSON] != NULL;
    cli_progress_enable(json);
    cli_type ct;
    hisp_op op = HISP_OP_N;
    hisp_tune_search search = HISP_TUNE_FAST;
    hisp_backend_kind backend = HISP_BACKEND_AUTO;
    int device = -1, top = 20, rc = cli_parse_type("tune", val, &ct);
    if (!rc) rc = cli_parse_transpose("tune", val[T_TRANS], NULL, &op);
    if (!rc && val[T_SEARCH]) {
        if (strcasecmp(val[T_SEARCH], "full") == 0)
            search = HISP_TUNE_FULL;
        else if (strcasecmp(val[T_SEARCH], "fast") != 0)
            rc = cli_value_error("--search: '%s' is not full or fast", val[T_SEARCH]);
    }
    if (!rc && val[T_BACKEND]) rc = cli_parse_backend("--backend", val[T_BACKEND], &backend);
    if (!rc && val[T_DEVICE]) rc = cli_parse_int("--device", val[T_DEVICE], 0, 1 << 20, &device);
    if (!rc && val[T_TOP]) rc = cli_parse_int("--top", val[T_TOP], 0, 1 << 30, &top);
    if (rc) return rc;
    hisp_context ctx = NULL;
    hisp_matrix A = NULL;
    hisp_tune_result *res = NULL;
    int cap = 1 << 16, nform = 0;
    hisp_format_result form[16];
    if ((rc = cli_context(&ctx))) return rc;
    hisp_status s = hisp_context_set_backend(ctx, backend, device);
    hisp_device_info dev;
    if (!s) s = hisp_context_get_device(ctx, &dev);
    if (s) {
        rc = cli_fail(ctx, s, NULL);
        goto out;
    }
    if ((rc = cli_load_matrix(ctx, path, &ct, &A, NULL))) goto out;
    hisp_matrix_info li;
    s = hisp_matrix_get_info(A, &li);
    if (!s && li.format == HISP_FORMAT_HISPARSE) {
        /* the choice starts from CSR (HiSparse is one of its candidates) */
        hisp_matrix C = NULL;
        s = hisp_matrix_duplicate(A, HISP_FORMAT_CSR, &C);
        if (!s) {
            hisp_matrix_destroy(&A);
            A = C;
        }
    }
    if (!s && op == HISP_OP_H) {
        if (!cli_type_real(li.type)) {
            rc = cli_type_unsupported("tune --transpose h", li.type,
                                      "the format choice takes op n, and t for f32 and f64");
            goto out;
        }
        op = HISP_OP_T; /* A^H = A^T for real entries */
    }
    if (s) {
        rc = cli_fail(ctx, s, path);
        goto out;
    }
    res = calloc((size_t)cap, sizeof *res);
    if (!res) {
        rc = cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
        goto out;
    }
    cli_progress("tuning on %s %d: %s", hisp_backend_name(dev.backend), dev.index, dev.name);
    hisp_transfer_stats xfer = {0};
    hisp_format_choice ch;
    memset(&ch, 0, sizeof ch);
    hisp_format_options fo = {
        search == HISP_TUNE_FULL, val[T_NOCACHE] != NULL, cli_format_progress, NULL, res, cap};
    cli_transfers_reset(ctx);
    s = hisp_matrix_choose_format(ctx, A, op, &fo, form, 16, &nform, &ch);
    cli_transfers_add(ctx, &xfer);
    cli_format_progress_end();
    int count = s || ch.variants_tried < cap ? ch.variants_tried : cap;
    if (!s && val[T_SAVE]) {
        hisp_tune_plan plan;
        if (op != HISP_OP_N) {
            rc = cli_usage_error("tune", "--save writes a compound variant's plan (not with "
                                         "--transpose)");
            goto out;
        }
        s = best_plan(ctx, A, &ch, res, count, search, !val[T_NOCACHE], &plan);
        if (!s) s = hisp_tune_plan_save(ctx, &plan, val[T_SAVE]);
    }
    if (s) {
        rc = cli_fail(ctx, s, path);
        goto out;
    }
    hisp_matrix_info mi;
    if (hisp_matrix_get_info(A, &mi)) memset(&mi, 0, sizeof mi);
    hisp_type vt = mi.type;
    int per = 1;
    if (hisp_compound_vector_type(mi.type, &vt, &per)) per = 1;
    uint64_t xy = (uint64_t)(mi.nrows + mi.ncols) * (uint64_t)per * hisp_type_size(vt);
    char lay[64], sch[64], name[160];
    uint64_t csr = 0;
    if (hisp_matrix_layout_bytes(A, HISP_OUTER_CSR, &csr)) csr = 0;
    result_name(&ch.best, name, sizeof name);
    if (json) {
        cli_json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_input(&j, path);
        json_string(&j, "type", hisp_type_name(mi.type));
        json_bool(&j, "transpose", op == HISP_OP_T);
        json_string(&j, "backend", hisp_backend_name(dev.backend));
        json_device(&j, "device", &dev);
        json_int(&j, "rows", mi.nrows);
        json_int(&j, "cols", mi.ncols);
        json_int(&j, "nnz", mi.nnz);
        json_string(&j, "search", search == HISP_TUNE_FULL ? "full" : "fast");
        json_string(&j, "key", ch.key);
        json_bool(&j, "from_cache", ch.from_cache);
        json_int(&j, "tried", ch.variants_tried);
        json_int(&j, "candidates", ch.tried);
        json_double(&j, "tune_ms", ch.tune_ms);
        json_object_begin(&j, "best");
        json_string(&j, "format", cli_choice_kind(&ch.best));
        if (ch.best.kind == HISP_CHOICE_VARIANT) {
            variant_names(&ch.best.variant, lay, sch);
            json_string(&j, "layout", lay);
            json_string(&j, "schedule", sch);
        }
        json_double(&j, "ms", ch.best.ms);
        json_double(&j, "csr_ms", ch.csr_ms);
        json_object_end(&j);
        json_array_begin(&j, "formats");
        for (int i = 0; i < nform; i++) {
            const hisp_format_result *r = &form[i];
            json_object_begin(&j, NULL);
            json_string(&j, "format", cli_choice_kind(r));
            if (r->kind == HISP_CHOICE_VARIANT) {
                variant_names(&r->variant, lay, sch);
                json_string(&j, "layout", lay);
                json_string(&j, "schedule", sch);
            }
            json_double(&j, "ms", r->ms);
            json_double(&j, "first_ms", r->first_ms);
            json_double(&j, "build_ms", r->build_ms);
            json_double(&j, "rel_error", r->rel_error);
            json_double(&j, "gbps",
                        isfinite(r->ms) && r->ms > 0 ? (double)(r->bytes + xy) / (r->ms * 1e6)
                                                     : NAN);
            json_uint(&j, "bytes", r->bytes);
            json_object_end(&j);
        }
        json_array_end(&j);
        json_array_begin(&j, "results");
        for (int i = 0; i < count; i++) {
            variant_names(&res[i].v, lay, sch);
            json_object_begin(&j, NULL);
            json_string(&j, "layout", lay);
            json_string(&j, "schedule", sch);
            json_double(&j, "ms", res[i].ms);
            json_double(&j, "gbps", res[i].gbps);
            json_uint(&j, "bytes", res[i].bytes);
            json_object_end(&j);
        }
        json_array_end(&j);
        json_transfers(&j, &xfer, NULL);
        json_object_end(&j);
        json_finish(&j);
        goto out;
    }
    printf("matrix   %s: %lld x %lld, %lld %s entries\n", path, (long long)mi.nrows,
           (long long)mi.ncols, (long long)mi.nnz, hisp_type_name(mi.type));
    printf("device   %s %d: %s (%s)\n", hisp_backend_name(dev.backend), dev.index, dev.name,
           dev.platform);
    printf("op       y = %s*x\n", op == HISP_OP_T ? "A^T" : "A");
    if (ch.from_cache) {
        printf("choice   from the plan cache (nothing timed): %s, %.4f ms per call when chosen "
               "(CSR %.4f ms)\n",
               name, ch.best.ms, ch.csr_ms);
        goto out;
    }
    if (count > 0) {
        printf("search   %s: %d variants (device time per call)\n",
               search == HISP_TUNE_FULL ? "full" : "fast", ch.variants_tried);
        printf("\n%4s  %-16s %-16s %10s %9s %11s %8s\n", "rank", "layout", "schedule", "time ms",
               "GB/s", "memory MB", "vs CSR");
        for (int i = 0; i < count && (top == 0 || i < top); i++) {
            variant_names(&res[i].v, lay, sch);
            printf("%4d  %-16s %-16s %10.4f %9.2f %11.3f %8.2f\n", i + 1, lay, sch, res[i].ms,
                   res[i].gbps, (double)res[i].bytes / 1e6,
                   csr ? (double)res[i].bytes / (double)csr : 0.0);
        }
        printf("\n");
    } else if (op == HISP_OP_N) {
        printf("search   variants from the compound plan cache (its winner only)\n\n");
    } else {
        printf("search   none (compound variants are op = A only)\n\n");
    }
    printf("formats  side by side: wall time per call with a synchronize, median of 15 rounds;\n"
           "         first = the first call (uploads, HiSparse scheduling, kernel builds)\n");
    printf("\n%4s  %-33s %10s %10s %9s %11s %10s\n", "rank", "format", "time ms", "first ms",
           "GB/s", "memory MB", "speed-up");
    for (int i = 0; i < nform; i++) {
        const hisp_format_result *r = &form[i];
        char nm[160];
        result_name(r, nm, sizeof nm);
        if (!isfinite(r->ms)) {
            printf("%4s  %-33s %10s %10.3f %9s %11.3f %10s\n", "-", nm,
                   r->rel_error > 0 ? "wrong" : "failed", r->first_ms, "-", (double)r->bytes / 1e6,
                   "-");
            continue;
        }
        printf("%4d  %-33s %10.4f %10.3f %9.2f %11.3f %9.2fx\n", i + 1, nm, r->ms, r->first_ms,
               r->ms > 0 ? (double)(r->bytes + xy) / (r->ms * 1e6) : 0.0, (double)r->bytes / 1e6,
               r->ms > 0 ? ch.csr_ms / r->ms : 0.0);
    }
    printf("\nbest     %s, %.4f ms per call (CSR %.4f ms in the same table); chosen in %.1f s\n",
           name, ch.best.ms, ch.csr_ms, ch.tune_ms / 1e3);
out:
    free(res);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    return rc;
}

/* ---- hisp spmv --entry ... ---------------------------------------------------- */

int cli_spmv_compound(const char *path, const cli_type *ct, const char *layout,
                      const char *schedule, const char *plan_arg, hisp_backend_kind backend,
                      int device, int repeat, bool check, bool json, double alpha, double beta)
{
    int rc = CLI_OK;
    hisp_variant v = {{HISP_OUTER_CSR, HISP_AOS, HISP_AOS}, {0, 0, 0}};
    if (!rc && layout && hisp_layout_from_name(layout, &v.layout))
        rc = cli_value_error("--layout: '%s' is not OUTER-INNER-VEC (CSR|ELL|SELL16|SELL32, "
                             "AoS|SoA, AoS|SoA)",
                             layout);
    if (!rc && schedule && hisp_schedule_from_name(schedule, &v.sched))
        rc = cli_value_error("--schedule: '%s' is not static|dynamic[:NTxNB]", schedule);
    if (rc) return rc;
    hisp_context ctx = NULL, rctx = NULL;
    hisp_matrix A = NULL, R = NULL;
    hisp_vector x = NULL, y = NULL, rx = NULL, ry = NULL;
    void *xh = NULL, *yh = NULL, *yr = NULL;
    double *ms = NULL;
    if ((rc = cli_context(&ctx))) return rc;
    hisp_status s = hisp_context_set_backend(ctx, backend, device);
    hisp_device_info dev;
    if (!s) s = hisp_context_get_device(ctx, &dev);
    if (s) {
        rc = cli_fail(ctx, s, NULL);
        goto out;
    }
    if ((rc = cli_load_matrix(ctx, path, ct, &A, NULL))) goto out;
    const char *plan_src = "command line";
    if (plan_arg) {
        hisp_tune_plan p;
        if (strcmp(plan_arg, "auto") == 0) {
            int found = 0;
            s = hisp_tune_plan_lookup(ctx, A, &p, &found);
            if (!s && !found) {
                cli_progress("no cached plan: tuning (fast search)");
                s = hisp_tune(ctx, A, HISP_TUNE_FAST, 1, NULL, NULL, NULL, 0, NULL, &p);
                plan_src = "tuned now (fast search), cached";
            } else {
                plan_src = "plan cache";
            }
        } else {
            s = hisp_tune_plan_load(ctx, plan_arg, &p);
            plan_src = plan_arg;
        }
        if (s) {
            rc = cli_fail(ctx, s, plan_arg);
            goto out;
        }
        v = p.best;
    }
    hisp_matrix_info mi;
    hisp_type vt;
    int per = 1;
    s = hisp_matrix_get_info(A, &mi);
    if (!s) s = hisp_compound_vector_type(mi.type, &vt, &per);
    int comps = hisp_type_components(vt);
    size_t ss = hisp_type_size(vt) / (size_t)comps;
    if (!s &&
        ((rc = cli_check_real("--alpha", alpha, vt)) || (rc = cli_check_real("--beta", beta, vt))))
        goto out;
    int64_t nx = mi.ncols * per, ny = mi.nrows * per;
    xh = malloc((size_t)(nx + 1) * hisp_type_size(vt));
    yh = calloc((size_t)(ny + 1), hisp_type_size(vt));
    yr = calloc((size_t)(ny + 1), hisp_type_size(vt));
    if (!s && (!xh || !yh || !yr)) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    for (int64_t k = 0; !s && k < nx * comps; k++) {
        double d = 1.0 / (double)(k % 97 + 1);
        if (ss == 4)
            ((float *)xh)[k] = (float)d;
        else
            ((double *)xh)[k] = d;
    }
    float af = (float)alpha, bf = (float)beta;
    const void *pa = ss == 4 ? (const void *)&af : (const void *)&alpha;
    const void *pb = ss == 4 ? (const void *)&bf : (const void *)&beta;
    if (!s) s = hisp_vector_create(ctx, vt, nx, &x);
    if (!s) s = hisp_vector_create(ctx, vt, ny, &y);
    if (!s) s = hisp_vector_write(x, xh);
    if (!s) s = hisp_vector_write(y, yh);
    double med = NAN, mn = NAN;
    hisp_transfer_stats xfer = {0}; /* the timed runs, else the result run */
    if (!s && repeat > 0) {
        ms = malloc((size_t)repeat * sizeof *ms);
        if (!ms) s = HISP_ERR_OUT_OF_HOST_MEMORY;
        cli_transfers_reset(ctx);
        if (!s) s = hisp_spmv_variant_timed(ctx, &v, pa, A, x, pb, y, 3, repeat, ms);
        cli_transfers_add(ctx, &xfer);
        if (!s) s = hisp_vector_write(y, yh); /* the result run starts from y0 again */
        if (!s) {
            for (int i = 1; i < repeat; i++) /* insertion sort: small n */
                for (int k = i; k > 0 && ms[k - 1] > ms[k]; k--) {
                    double q = ms[k];
                    ms[k] = ms[k - 1];
                    ms[k - 1] = q;
                }
            med = ms[repeat / 2];
            mn = ms[0];
        }
    }
    if (repeat <= 0) cli_transfers_reset(ctx);
    double call_ms = NAN, t0 = 0;
    if (!s) s = hisp_context_synchronize(ctx);
    if (!s) t0 = cli_now_ms();
    if (!s) s = hisp_spmv_variant(ctx, &v, pa, A, x, pb, y);
    if (!s) s = hisp_context_synchronize(ctx);
    if (!s) call_ms = cli_now_ms() - t0;
    if (!s) s = hisp_vector_read(y, yh);
    if (repeat <= 0) cli_transfers_add(ctx, &xfer);
    if (s) {
        rc = cli_fail(ctx, s, path);
        goto out;
    }
    double err = NAN, tol = ss == 4 ? 1e-4 : 1e-10;
    if (check) { /* the default variant on the reference backend */
        const int64_t *ptr;
        const int32_t *cols;
        const void *vals;
        if ((rc = cli_context(&rctx))) goto out;
        s = hisp_matrix_convert(A, HISP_FORMAT_CSR);
        if (!s) s = hisp_matrix_host_arrays(A, &ptr, NULL, &cols, &vals);
        if (!s) s = hisp_matrix_create_csr(rctx, mi.type, mi.nrows, mi.ncols, ptr, cols, vals, &R);
        if (!s) s = hisp_vector_create(rctx, vt, nx, &rx);
        if (!s) s = hisp_vector_create(rctx, vt, ny, &ry);
        if (!s) s = hisp_vector_write(rx, xh);
        if (!s) s = hisp_spmv(rctx, HISP_OP_N, pa, R, rx, pb, ry);
        if (!s) s = hisp_vector_read(ry, yr);
        if (s) {
            rc = cli_fail(rctx, s, NULL);
            goto out;
        }
        cli_error e = {0};
        for (int64_t k = 0; k < ny * comps; k++) {
            double a = ss == 4 ? ((float *)yh)[k] : ((double *)yh)[k];
            double b = ss == 4 ? ((float *)yr)[k] : ((double *)yr)[k];
            cli_error_add(a, b, &e);
        }
        err = cli_error_relative(&e);
    }
    uint64_t bytes = 0;
    if (hisp_matrix_layout_bytes(A, v.layout.outer, &bytes)) bytes = 0;
    bytes += (uint64_t)(nx + ny) * hisp_type_size(vt);
    char lay[64], sch[64];
    variant_names(&v, lay, sch);
    bool bad = check && !(err <= tol);
    if (json) {
        cli_json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_input(&j, path);
        json_string(&j, "backend", hisp_backend_name(dev.backend));
        json_device(&j, "device", &dev);
        json_string(&j, "type", hisp_type_name(mi.type));
        json_int(&j, "rows", mi.nrows);
        json_int(&j, "cols", mi.ncols);
        json_int(&j, "nnz", mi.nnz);
        json_string(&j, "layout", lay);
        json_string(&j, "schedule", sch);
        json_string(&j, "plan", plan_src);
        json_object_begin(&j, "timing");
        json_double(&j, "call_ms", call_ms);
        if (repeat > 0) {
            json_int(&j, "repeat", repeat);
            json_double(&j, "median_ms", med);
            json_double(&j, "min_ms", mn);
            json_double(&j, "gbps", (double)bytes / (med * 1e6));
            json_uint(&j, "bytes", bytes);
        }
        json_object_end(&j);
        if (check) {
            json_check(&j, err, tol);
        }
        json_transfers(&j, &xfer, NULL);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("matrix     %s: %lld x %lld, %lld %s entries\n", path, (long long)mi.nrows,
               (long long)mi.ncols, (long long)mi.nnz, hisp_type_name(mi.type));
        printf("variant    %s %s (%s)\n", lay, sch, plan_src);
        printf("backend    %s, device %d: %s (%s)\n", hisp_backend_name(dev.backend), dev.index,
               dev.name, dev.platform);
        if (repeat <= 0)
            printf("time       %.4f ms, one call with a synchronize (the first: uploads and "
                   "kernel builds included)\n",
                   call_ms);
        if (repeat > 0)
            printf("time       median %.4f ms, min %.4f ms (%d runs after 3 warm-up), %.2f GB/s "
                   "(%llu bytes: layout + x + y)\n",
                   med, mn, repeat, (double)bytes / (med * 1e6), (unsigned long long)bytes);
        cli_print_transfers("transfers", &xfer);
        if (check)
            printf("check      relative error vs reference %.3e (tolerance %.0e): %s\n", err, tol,
                   bad ? "FAILED" : "ok");
    }
    if (bad) rc = CLI_CHECK;
out:
    free(xh);
    free(yh);
    free(yr);
    free(ms);
    hisp_vector_destroy(&x);
    hisp_vector_destroy(&y);
    hisp_vector_destroy(&rx);
    hisp_vector_destroy(&ry);
    hisp_matrix_destroy(&A);
    hisp_matrix_destroy(&R);
    hisp_context_destroy(&rctx);
    hisp_context_destroy(&ctx);
    return rc;
}
