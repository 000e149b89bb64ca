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
    "file is tuned from its CSR form. FILE may be gen:fem3x3:N, gen:elastic3d:N,\n"
    "gen:qsurface:N or gen:helmholtz:N (docs/COMPOUND.md).\n"
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

/* hisp tune's command line. */
typedef struct {
    const char *path, *save; /* save: --save FILE, else NULL */
    cli_type ct;
    hisp_op op;
    hisp_tune_search search;
    hisp_backend_kind backend;
    int device, top;
    bool json, no_cache;
} tune_opts;

/* Parses the command line into o; returns CLI_OK, an exit code, or
 * CLI_HELP_SHOWN. */
static int tune_parse(int argc, char **argv, tune_opts *o)
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
    const char *val[T_HELP] = {0};
    memset(o, 0, sizeof *o);
    int rc = cli_parse_command("tune", argc, argv, opts, help, val, &o->path);
    if (rc) return rc;
    if (!o->path) return cli_usage_error("tune", "missing FILE.mtx");
    o->json = val[T_JSON] != NULL;
    cli_progress_enable(o->json);
    o->op = HISP_OP_N;
    o->search = HISP_TUNE_FAST;
    o->backend = HISP_BACKEND_AUTO;
    o->device = -1;
    o->top = 20;
    o->no_cache = val[T_NOCACHE] != NULL;
    o->save = val[T_SAVE];
    rc = cli_parse_type("tune", val, &o->ct);
    if (!rc) rc = cli_parse_transpose("tune", val[T_TRANS], NULL, &o->op);
    if (!rc && val[T_SEARCH]) {
        if (strcasecmp(val[T_SEARCH], "full") == 0)
            o->search = HISP_TUNE_FULL;
        else if (strcasecmp(val[T_SEARCH], "fast") != 0)
            rc = cli_value_error("--search: '%s' is not full or fast", val[T_SEARCH]);
    }
    if (!rc && val[T_BACKEND]) rc = cli_parse_backend("--backend", val[T_BACKEND], &o->backend);
    if (!rc && val[T_DEVICE]) rc = cli_parse_int("--device", val[T_DEVICE], 0, 1 << 20, &o->device);
    if (!rc && val[T_TOP]) rc = cli_parse_int("--top", val[T_TOP], 0, 1 << 30, &o->top);
    return rc;
}

/* What hisp tune found, for its reports. */
typedef struct {
    hisp_device_info dev;
    hisp_matrix_info mi;
    hisp_format_choice ch;
    hisp_format_result form[16];
    int nform;
    hisp_tune_result *res; /* the compound search's variants, best first */
    int count;             /* of them in res */
    hisp_transfer_stats xfer;
    uint64_t xy;  /* bytes of x and y */
    uint64_t csr; /* bytes of A's CSR layout (0: unknown) */
    char name[160];
} tune_result;

/* ctx on the chosen device (*dev), and A in the form the choice starts
 * from (a .hisp file's CSR); --transpose h becomes t for real entries. */
static int tune_load(hisp_context ctx, tune_opts *o, hisp_matrix *A, hisp_device_info *dev)
{
    hisp_status s = hisp_context_set_backend(ctx, o->backend, o->device);
    if (!s) s = hisp_context_get_device(ctx, dev);
    if (s) return cli_fail(ctx, s, NULL);
    int rc = cli_load_matrix(ctx, o->path, &o->ct, A, NULL);
    if (rc) return rc;
    hisp_matrix_info li;
    s = hisp_matrix_get_info(*A, &li);
    if (!s && li.format == HISP_FORMAT_HISPARSE) {
        /* the choice starts from CSR (HiSparse is one of its candidates) */
        hisp_matrix C = NULL;
        s = hisp_matrix_duplicate(*A, HISP_FORMAT_CSR, &C);
        if (!s) {
            hisp_matrix_destroy(A);
            *A = C;
        }
    }
    if (!s && o->op == HISP_OP_H) {
        if (!cli_type_real(li.type))
            return cli_type_unsupported("tune --transpose h", li.type,
                                        "the format choice takes op n, and t for f32 and f64");
        o->op = HISP_OP_T; /* A^H = A^T for real entries */
    }
    return s ? cli_fail(ctx, s, o->path) : CLI_OK;
}

/* The format choice (and --save's plan) into t; then the sizes the
 * reports need. */
static int tune_choose(hisp_context ctx, hisp_matrix A, const tune_opts *o, tune_result *t)
{
    int cap = 1 << 16;
    t->res = calloc((size_t)cap, sizeof *t->res);
    if (!t->res) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    cli_progress("tuning on %s %d: %s", hisp_backend_name(t->dev.backend), t->dev.index,
                 t->dev.name);
    memset(&t->ch, 0, sizeof t->ch);
    hisp_format_options fo = {
        o->search == HISP_TUNE_FULL, o->no_cache, cli_format_progress, NULL, t->res, cap};
    cli_transfers_reset(ctx);
    hisp_status s = hisp_matrix_choose_format(ctx, A, o->op, &fo, t->form, 16, &t->nform, &t->ch);
    cli_transfers_add(ctx, &t->xfer);
    cli_format_progress_end();
    t->count = s || t->ch.variants_tried < cap ? t->ch.variants_tried : cap;
    if (!s && o->save) {
        hisp_tune_plan plan;
        if (o->op != HISP_OP_N)
            return cli_usage_error("tune", "--save writes a compound variant's plan (not with "
                                           "--transpose)");
        s = best_plan(ctx, A, &t->ch, t->res, t->count, o->search, !o->no_cache, &plan);
        if (!s) s = hisp_tune_plan_save(ctx, &plan, o->save);
    }
    if (s) return cli_fail(ctx, s, o->path);
    if (hisp_matrix_get_info(A, &t->mi)) memset(&t->mi, 0, sizeof t->mi);
    hisp_type vt = t->mi.type;
    int per = 1;
    if (hisp_compound_vector_type(t->mi.type, &vt, &per)) per = 1;
    t->xy = (uint64_t)(t->mi.nrows + t->mi.ncols) * (uint64_t)per * hisp_type_size(vt);
    if (hisp_matrix_layout_bytes(A, HISP_OUTER_CSR, &t->csr)) t->csr = 0;
    result_name(&t->ch.best, t->name, sizeof t->name);
    return CLI_OK;
}

/* "layout" and "schedule" of a variant. */
static void json_variant(cli_json *j, const hisp_variant *v)
{
    char lay[64], sch[64];
    variant_names(v, lay, sch);
    json_string(j, "layout", lay);
    json_string(j, "schedule", sch);
}

static void tune_report_json(const tune_opts *o, const tune_result *t)
{
    const hisp_matrix_info *mi = &t->mi;
    const hisp_format_choice *ch = &t->ch;
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_input(&j, o->path);
    json_string(&j, "type", hisp_type_name(mi->type));
    json_bool(&j, "transpose", o->op == HISP_OP_T);
    json_string(&j, "backend", hisp_backend_name(t->dev.backend));
    json_device(&j, "device", &t->dev);
    json_int(&j, "rows", mi->nrows);
    json_int(&j, "cols", mi->ncols);
    json_int(&j, "nnz", mi->nnz);
    json_string(&j, "search", o->search == HISP_TUNE_FULL ? "full" : "fast");
    json_string(&j, "key", ch->key);
    json_bool(&j, "from_cache", ch->from_cache);
    json_int(&j, "tried", ch->variants_tried);
    json_int(&j, "candidates", ch->tried);
    json_double(&j, "tune_ms", ch->tune_ms);
    json_object_begin(&j, "best");
    json_string(&j, "format", cli_choice_kind(&ch->best));
    if (ch->best.kind == HISP_CHOICE_VARIANT) json_variant(&j, &ch->best.variant);
    json_double(&j, "ms", ch->best.ms);
    json_double(&j, "csr_ms", ch->csr_ms);
    json_object_end(&j);
    json_array_begin(&j, "formats");
    for (int i = 0; i < t->nform; i++) {
        const hisp_format_result *r = &t->form[i];
        json_object_begin(&j, NULL);
        json_string(&j, "format", cli_choice_kind(r));
        if (r->kind == HISP_CHOICE_VARIANT) json_variant(&j, &r->variant);
        json_double(&j, "ms", r->ms);
        json_double(&j, "first_ms", r->first_ms);
        json_double(&j, "build_ms", r->build_ms);
        json_double(&j, "rel_error", r->rel_error);
        json_double(&j, "gbps",
                    isfinite(r->ms) && r->ms > 0 ? (double)(r->bytes + t->xy) / (r->ms * 1e6)
                                                 : NAN);
        json_uint(&j, "bytes", r->bytes);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_array_begin(&j, "results");
    for (int i = 0; i < t->count; i++) {
        json_object_begin(&j, NULL);
        json_variant(&j, &t->res[i].v);
        json_double(&j, "ms", t->res[i].ms);
        json_double(&j, "gbps", t->res[i].gbps);
        json_uint(&j, "bytes", t->res[i].bytes);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_transfers(&j, &t->xfer, NULL);
    json_object_end(&j);
    json_finish(&j);
}

/* The text's table of the compound search (its --top rows). */
static void tune_print_variants(const tune_opts *o, const tune_result *t)
{
    char lay[64], sch[64];
    if (t->count > 0) {
        printf("search   %s: %d variants (device time per call)\n",
               o->search == HISP_TUNE_FULL ? "full" : "fast", t->ch.variants_tried);
        printf("\n%4s  %-16s %-16s %10s %9s %11s %8s\n", "rank", "layout", "schedule", "time ms",
               "GB/s", "memory MB", "vs CSR");
        for (int i = 0; i < t->count && (o->top == 0 || i < o->top); i++) {
            const hisp_tune_result *r = &t->res[i];
            variant_names(&r->v, lay, sch);
            printf("%4d  %-16s %-16s %10.4f %9.2f %11.3f %8.2f\n", i + 1, lay, sch, r->ms, r->gbps,
                   (double)r->bytes / 1e6, t->csr ? (double)r->bytes / (double)t->csr : 0.0);
        }
        printf("\n");
    } else if (o->op == HISP_OP_N) {
        printf("search   variants from the compound plan cache (its winner only)\n\n");
    } else {
        printf("search   none (compound variants are op = A only)\n\n");
    }
}

static void tune_report_text(const tune_opts *o, const tune_result *t)
{
    const hisp_matrix_info *mi = &t->mi;
    const hisp_format_choice *ch = &t->ch;
    printf("matrix   %s: %lld x %lld, %lld %s entries\n", o->path, (long long)mi->nrows,
           (long long)mi->ncols, (long long)mi->nnz, hisp_type_name(mi->type));
    printf("device   %s %d: %s (%s)\n", hisp_backend_name(t->dev.backend), t->dev.index,
           t->dev.name, t->dev.platform);
    printf("op       y = %s*x\n", o->op == HISP_OP_T ? "A^T" : "A");
    if (ch->from_cache) {
        printf("choice   from the plan cache (nothing timed): %s, %.4f ms per call when chosen "
               "(CSR %.4f ms)\n",
               t->name, ch->best.ms, ch->csr_ms);
        return;
    }
    tune_print_variants(o, t);
    printf("formats  side by side: wall time per call with a synchronize, median of 15 rounds;\n"
           "         first = the first call (uploads, HiSparse scheduling, kernel builds)\n");
    printf("\n%4s  %-33s %10s %10s %9s %11s %10s\n", "rank", "format", "time ms", "first ms",
           "GB/s", "memory MB", "speed-up");
    for (int i = 0; i < t->nform; i++) {
        const hisp_format_result *r = &t->form[i];
        char nm[160];
        result_name(r, nm, sizeof nm);
        if (!isfinite(r->ms)) {
            printf("%4s  %-33s %10s %10.3f %9s %11.3f %10s\n", "-", nm,
                   r->rel_error > 0 ? "wrong" : "failed", r->first_ms, "-", (double)r->bytes / 1e6,
                   "-");
            continue;
        }
        printf("%4d  %-33s %10.4f %10.3f %9.2f %11.3f %9.2fx\n", i + 1, nm, r->ms, r->first_ms,
               r->ms > 0 ? (double)(r->bytes + t->xy) / (r->ms * 1e6) : 0.0, (double)r->bytes / 1e6,
               r->ms > 0 ? ch->csr_ms / r->ms : 0.0);
    }
    printf("\nbest     %s, %.4f ms per call (CSR %.4f ms in the same table); chosen in %.1f s\n",
           t->name, ch->best.ms, ch->csr_ms, ch->tune_ms / 1e3);
}

int cmd_tune(int argc, char **argv)
{
    tune_opts o;
    int rc = tune_parse(argc, argv, &o);
    if (rc) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    hisp_context ctx = NULL;
    hisp_matrix A = NULL;
    tune_result t;
    memset(&t, 0, sizeof t);
    if ((rc = cli_context(&ctx))) return rc;
    if (!(rc = tune_load(ctx, &o, &A, &t.dev)) && !(rc = tune_choose(ctx, A, &o, &t))) {
        if (o.json)
            tune_report_json(&o, &t);
        else
            tune_report_text(&o, &t);
    }
    free(t.res);
    hisp_matrix_destroy(&A);
    hisp_context_destroy(&ctx);
    return rc;
}

/* ---- hisp spmv --entry ... ---------------------------------------------------- */

/* One hisp spmv run of a compound variant: its inputs, state and results.
 * compound_free releases it. */
typedef struct {
    const char *path;
    hisp_variant v;
    const char *plan_src; /* where v came from, as reported */
    hisp_context ctx, rctx;
    hisp_matrix A, R;
    hisp_vector x, y, rx, ry;
    void *xh, *yh, *yr; /* host x, y (y0 = 0, then the result), the reference's y */
    double *ms;
    hisp_device_info dev;
    hisp_matrix_info mi;
    hisp_type vt; /* the vectors' type */
    int per, comps;
    size_t ss; /* bytes of a scalar component */
    int64_t nx, ny;
    double alpha, beta;
    float af, bf;
    const void *pa, *pb; /* alpha and beta in the vectors' precision */
    int repeat;
    double med, mn, call_ms, err, tol;
    hisp_transfer_stats xfer; /* the timed runs, else the result run */
} compound_run;

/* --plan: the variant from a plan file, or (auto) the plan cache, tuned
 * now on a miss; sets c->v and c->plan_src. */
static int compound_plan(compound_run *c, const char *plan_arg)
{
    hisp_tune_plan p;
    hisp_status s;
    if (strcmp(plan_arg, "auto") == 0) {
        int found = 0;
        s = hisp_tune_plan_lookup(c->ctx, c->A, &p, &found);
        if (!s && !found) {
            cli_progress("no cached plan: tuning (fast search)");
            s = hisp_tune(c->ctx, c->A, HISP_TUNE_FAST, 1, NULL, NULL, NULL, 0, NULL, &p);
            c->plan_src = "tuned now (fast search), cached";
        } else {
            c->plan_src = "plan cache";
        }
    } else {
        s = hisp_tune_plan_load(c->ctx, plan_arg, &p);
        c->plan_src = plan_arg;
    }
    if (s) return cli_fail(c->ctx, s, plan_arg);
    c->v = p.best;
    return CLI_OK;
}

/* Checks alpha and beta for the vectors' type; x (component k = 1/(k % 97
 * + 1)) and y = 0 on the host and the device. */
static int compound_vectors(compound_run *c)
{
    hisp_status s = hisp_matrix_get_info(c->A, &c->mi);
    c->per = 1;
    if (!s) s = hisp_compound_vector_type(c->mi.type, &c->vt, &c->per);
    c->comps = hisp_type_components(c->vt);
    c->ss = hisp_type_size(c->vt) / (size_t)c->comps;
    int rc;
    if (!s && ((rc = cli_check_real("--alpha", c->alpha, c->vt)) ||
               (rc = cli_check_real("--beta", c->beta, c->vt))))
        return rc;
    c->nx = c->mi.ncols * c->per;
    c->ny = c->mi.nrows * c->per;
    c->xh = malloc((size_t)(c->nx + 1) * hisp_type_size(c->vt));
    c->yh = calloc((size_t)(c->ny + 1), hisp_type_size(c->vt));
    c->yr = calloc((size_t)(c->ny + 1), hisp_type_size(c->vt));
    if (!s && (!c->xh || !c->yh || !c->yr)) s = HISP_ERR_OUT_OF_HOST_MEMORY;
    for (int64_t k = 0; !s && k < c->nx * c->comps; k++) {
        double d = 1.0 / (double)(k % 97 + 1);
        if (c->ss == 4)
            ((float *)c->xh)[k] = (float)d;
        else
            ((double *)c->xh)[k] = d;
    }
    c->af = (float)c->alpha;
    c->bf = (float)c->beta;
    c->pa = c->ss == 4 ? (const void *)&c->af : (const void *)&c->alpha;
    c->pb = c->ss == 4 ? (const void *)&c->bf : (const void *)&c->beta;
    if (!s) s = hisp_vector_create(c->ctx, c->vt, c->nx, &c->x);
    if (!s) s = hisp_vector_create(c->ctx, c->vt, c->ny, &c->y);
    if (!s) s = hisp_vector_write(c->x, c->xh);
    if (!s) s = hisp_vector_write(c->y, c->yh);
    return s ? cli_fail(c->ctx, s, c->path) : CLI_OK;
}

/* --repeat N timed runs after 3 warm-up (median and min), then the result
 * run from y0 again, timed as one call with a synchronize; y read back. */
static int compound_time(compound_run *c)
{
    hisp_status s = HISP_SUCCESS;
    int repeat = c->repeat;
    c->med = c->mn = c->call_ms = NAN;
    if (repeat > 0) {
        c->ms = malloc((size_t)repeat * sizeof *c->ms);
        if (!c->ms) s = HISP_ERR_OUT_OF_HOST_MEMORY;
        cli_transfers_reset(c->ctx);
        if (!s)
            s = hisp_spmv_variant_timed(c->ctx, &c->v, c->pa, c->A, c->x, c->pb, c->y, 3, repeat,
                                        c->ms);
        cli_transfers_add(c->ctx, &c->xfer);
        if (!s) s = hisp_vector_write(c->y, c->yh); /* the result run starts from y0 again */
        if (!s) {
            double *ms = c->ms;
            for (int i = 1; i < repeat; i++) /* insertion sort: small n */
                for (int k = i; k > 0 && ms[k - 1] > ms[k]; k--) {
                    double q = ms[k];
                    ms[k] = ms[k - 1];
                    ms[k - 1] = q;
                }
            c->med = ms[repeat / 2];
            c->mn = ms[0];
        }
    }
    if (repeat <= 0) cli_transfers_reset(c->ctx);
    double t0 = 0;
    if (!s) s = hisp_context_synchronize(c->ctx);
    if (!s) t0 = cli_now_ms();
    if (!s) s = hisp_spmv_variant(c->ctx, &c->v, c->pa, c->A, c->x, c->pb, c->y);
    if (!s) s = hisp_context_synchronize(c->ctx);
    if (!s) c->call_ms = cli_now_ms() - t0;
    if (!s) s = hisp_vector_read(c->y, c->yh);
    if (repeat <= 0) cli_transfers_add(c->ctx, &c->xfer);
    return s ? cli_fail(c->ctx, s, c->path) : CLI_OK;
}

/* --check: the default variant on the reference backend; c->err the
 * relative error of the result against it. */
static int compound_check(compound_run *c)
{
    const int64_t *ptr;
    const int32_t *cols;
    const void *vals;
    int rc = cli_context(&c->rctx);
    if (rc) return rc;
    hisp_status s = hisp_matrix_convert(c->A, HISP_FORMAT_CSR);
    if (!s) s = hisp_matrix_host_arrays(c->A, &ptr, NULL, &cols, &vals);
    if (!s)
        s = hisp_matrix_create_csr(c->rctx, c->mi.type, c->mi.nrows, c->mi.ncols, ptr, cols, vals,
                                   &c->R);
    if (!s) s = hisp_vector_create(c->rctx, c->vt, c->nx, &c->rx);
    if (!s) s = hisp_vector_create(c->rctx, c->vt, c->ny, &c->ry);
    if (!s) s = hisp_vector_write(c->rx, c->xh);
    if (!s) s = hisp_spmv(c->rctx, HISP_OP_N, c->pa, c->R, c->rx, c->pb, c->ry);
    if (!s) s = hisp_vector_read(c->ry, c->yr);
    if (s) return cli_fail(c->rctx, s, NULL);
    cli_error e = {0};
    for (int64_t k = 0; k < c->ny * c->comps; k++) {
        double a = c->ss == 4 ? ((float *)c->yh)[k] : ((double *)c->yh)[k];
        double b = c->ss == 4 ? ((float *)c->yr)[k] : ((double *)c->yr)[k];
        cli_error_add(a, b, &e);
    }
    c->err = cli_error_relative(&e);
    return CLI_OK;
}

/* bytes: the layout's and x's and y's (for GB/s). */
static void compound_report_json(const compound_run *c, bool check, uint64_t bytes)
{
    char lay[64], sch[64];
    variant_names(&c->v, lay, sch);
    cli_json j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_input(&j, c->path);
    json_string(&j, "backend", hisp_backend_name(c->dev.backend));
    json_device(&j, "device", &c->dev);
    json_string(&j, "type", hisp_type_name(c->mi.type));
    json_int(&j, "rows", c->mi.nrows);
    json_int(&j, "cols", c->mi.ncols);
    json_int(&j, "nnz", c->mi.nnz);
    json_string(&j, "layout", lay);
    json_string(&j, "schedule", sch);
    json_string(&j, "plan", c->plan_src);
    json_object_begin(&j, "timing");
    json_double(&j, "call_ms", c->call_ms);
    if (c->repeat > 0) {
        json_int(&j, "repeat", c->repeat);
        json_double(&j, "median_ms", c->med);
        json_double(&j, "min_ms", c->mn);
        json_double(&j, "gbps", (double)bytes / (c->med * 1e6));
        json_uint(&j, "bytes", bytes);
    }
    json_object_end(&j);
    if (check) {
        json_check(&j, c->err, c->tol);
    }
    json_transfers(&j, &c->xfer, NULL);
    json_object_end(&j);
    json_finish(&j);
}

/* compound_report_json's arguments; bad: the check failed. */
static void compound_report_text(const compound_run *c, bool check, uint64_t bytes, bool bad)
{
    char lay[64], sch[64];
    variant_names(&c->v, lay, sch);
    printf("matrix     %s: %lld x %lld, %lld %s entries\n", c->path, (long long)c->mi.nrows,
           (long long)c->mi.ncols, (long long)c->mi.nnz, hisp_type_name(c->mi.type));
    printf("variant    %s %s (%s)\n", lay, sch, c->plan_src);
    printf("backend    %s, device %d: %s (%s)\n", hisp_backend_name(c->dev.backend), c->dev.index,
           c->dev.name, c->dev.platform);
    if (c->repeat <= 0)
        printf("time       %.4f ms, one call with a synchronize (the first: uploads and "
               "kernel builds included)\n",
               c->call_ms);
    if (c->repeat > 0)
        printf("time       median %.4f ms, min %.4f ms (%d runs after 3 warm-up), %.2f GB/s "
               "(%llu bytes: layout + x + y)\n",
               c->med, c->mn, c->repeat, (double)bytes / (c->med * 1e6), (unsigned long long)bytes);
    cli_print_transfers("transfers", &c->xfer);
    if (check)
        printf("check      relative error vs reference %.3e (tolerance %.0e): %s\n", c->err, c->tol,
               bad ? "FAILED" : "ok");
}

static void compound_free(compound_run *c)
{
    free(c->xh);
    free(c->yh);
    free(c->yr);
    free(c->ms);
    hisp_vector_destroy(&c->x);
    hisp_vector_destroy(&c->y);
    hisp_vector_destroy(&c->rx);
    hisp_vector_destroy(&c->ry);
    hisp_matrix_destroy(&c->A);
    hisp_matrix_destroy(&c->R);
    hisp_context_destroy(&c->rctx);
    hisp_context_destroy(&c->ctx);
}

int cli_spmv_compound(const char *path, const cli_type *ct, const char *layout,
                      const char *schedule, const char *plan_arg, hisp_backend_kind backend,
                      int device, int repeat, bool check, bool json, double alpha, double beta)
{
    int rc = CLI_OK;
    compound_run c;
    memset(&c, 0, sizeof c);
    c.v = (hisp_variant){{HISP_OUTER_CSR, HISP_AOS, HISP_AOS}, {0, 0, 0}};
    if (!rc && layout && hisp_layout_from_name(layout, &c.v.layout))
        rc = cli_value_error("--layout: '%s' is not OUTER-INNER-VEC (CSR|ELL|SELL16|SELL32, "
                             "AoS|SoA, AoS|SoA)",
                             layout);
    if (!rc && schedule && hisp_schedule_from_name(schedule, &c.v.sched))
        rc = cli_value_error("--schedule: '%s' is not static|dynamic[:NTxNB]", schedule);
    if (rc) return rc;
    c.path = path;
    c.plan_src = "command line";
    c.alpha = alpha;
    c.beta = beta;
    c.repeat = repeat;
    c.err = NAN;
    if ((rc = cli_context(&c.ctx))) return rc;
    hisp_status s = hisp_context_set_backend(c.ctx, backend, device);
    if (!s) s = hisp_context_get_device(c.ctx, &c.dev);
    if (s) {
        rc = cli_fail(c.ctx, s, NULL);
        goto out;
    }
    if ((rc = cli_load_matrix(c.ctx, path, ct, &c.A, NULL))) goto out;
    if (plan_arg && (rc = compound_plan(&c, plan_arg))) goto out;
    if ((rc = compound_vectors(&c)) || (rc = compound_time(&c))) goto out;
    c.tol = c.ss == 4 ? 1e-4 : 1e-10;
    if (check && (rc = compound_check(&c))) goto out;
    uint64_t bytes = 0;
    if (hisp_matrix_layout_bytes(c.A, c.v.layout.outer, &bytes)) bytes = 0;
    bytes += (uint64_t)(c.nx + c.ny) * hisp_type_size(c.vt);
    bool bad = check && !(c.err <= c.tol);
    if (json)
        compound_report_json(&c, check, bytes);
    else
        compound_report_text(&c, check, bytes, bad);
    if (bad) rc = CLI_CHECK;
out:
    compound_free(&c);
    return rc;
}
