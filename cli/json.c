/* A tiny streaming JSON writer (pretty-printed, 2-space indent). */
#include "cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

void json_init(cli_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->first[0] = true;
}

static void indent(cli_json *j)
{
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

static void escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Separator, newline, indent and "key": for the next value. */
static void member(cli_json *j, const char *key)
{
    if (j->depth > 0) {
        fputs(j->first[j->depth] ? "\n" : ",\n", j->f);
        indent(j);
    }
    j->first[j->depth] = false;
    if (key) {
        escaped(j->f, key);
        fputs(": ", j->f);
    }
}

static void begin(cli_json *j, const char *key, char c)
{
    member(j, key);
    fputc(c, j->f);
    if (j->depth + 1 < CLI_JSON_DEPTH) j->depth++;
    j->first[j->depth] = true;
}

static void end(cli_json *j, char c)
{
    bool empty = j->first[j->depth];
    if (j->depth > 0) j->depth--;
    if (!empty) {
        fputc('\n', j->f);
        indent(j);
    }
    fputc(c, j->f);
}

void json_object_begin(cli_json *j, const char *key)
{
    begin(j, key, '{');
}

void json_object_end(cli_json *j)
{
    end(j, '}');
}

void json_array_begin(cli_json *j, const char *key)
{
    begin(j, key, '[');
}

void json_array_end(cli_json *j)
{
    end(j, ']');
}

void json_string(cli_json *j, const char *key, const char *s)
{
    member(j, key);
    escaped(j->f, s);
}

void json_int(cli_json *j, const char *key, int64_t v)
{
    member(j, key);
    fprintf(j->f, "%" PRId64, v);
}

void json_uint(cli_json *j, const char *key, uint64_t v)
{
    member(j, key);
    fprintf(j->f, "%" PRIu64, v);
}

/* v with `digits` significant digits; null where it is not finite */
static void number(cli_json *j, const char *key, double v, int digits)
{
    member(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.*g", digits, v);
    else
        fputs("null", j->f);
}

void json_double(cli_json *j, const char *key, double v)
{
    number(j, key, v, 10);
}

void json_exact(cli_json *j, const char *key, double v)
{
    number(j, key, v, 17);
}

void json_bool(cli_json *j, const char *key, bool v)
{
    member(j, key);
    fputs(v ? "true" : "false", j->f);
}

void json_null(cli_json *j, const char *key)
{
    member(j, key);
    fputs("null", j->f);
}

void json_finish(cli_json *j)
{
    fputc('\n', j->f);
    fflush(j->f);
}

/* ---- transfers ------------------------------------------------------------ */

void cli_transfers_reset(hisp_context ctx)
{
    /* a context that cannot be reset (NULL) reports nothing anyway */
    if (ctx && hisp_context_reset_transfers(ctx) != HISP_SUCCESS) {
    }
}

void cli_transfers_add(hisp_context ctx, hisp_transfer_stats *sum)
{
    hisp_transfer_stats t;
    if (!ctx || hisp_context_transfers(ctx, &t) != HISP_SUCCESS) return;
    sum->h2d_bytes += t.h2d_bytes;
    sum->d2h_bytes += t.d2h_bytes;
    sum->h2d_calls += t.h2d_calls;
    sum->d2h_calls += t.d2h_calls;
    sum->control_bytes += t.control_bytes;
}

void json_transfers(cli_json *j, const hisp_transfer_stats *t, const char *covers)
{
    json_object_begin(j, "transfers");
    json_uint(j, "h2d_bytes", t->h2d_bytes);
    json_uint(j, "d2h_bytes", t->d2h_bytes);
    json_uint(j, "control_bytes", t->control_bytes);
    if (covers) json_string(j, "covers", covers);
    json_object_end(j);
}

void json_input(cli_json *j, const char *spec)
{
    json_string(j, cli_is_gen_spec(spec) ? "generator" : "file", spec);
}

void json_check(cli_json *j, double rel_error, double tolerance)
{
    json_object_begin(j, "check");
    json_double(j, "rel_error", rel_error);
    json_double(j, "tolerance", tolerance);
    json_bool(j, "ok", rel_error <= tolerance);
    json_object_end(j);
}

void json_transfers_of(cli_json *j, hisp_context ctx)
{
    hisp_transfer_stats t = {0};
    cli_transfers_add(ctx, &t);
    json_transfers(j, &t, NULL);
}

void cli_print_transfers(const char *label, const hisp_transfer_stats *t)
{
    printf("%-10s %llu bytes to the device, %llu from it, %llu control bytes\n", label,
           (unsigned long long)t->h2d_bytes, (unsigned long long)t->d2h_bytes,
           (unsigned long long)t->control_bytes);
}

/* ---- kernel builds -------------------------------------------------------- */

static atomic_bool noticed;

void cli_build_notice(void *user, const hisp_build_event *e)
{
    (void)user;
    if (!isatty(STDERR_FILENO) || atomic_exchange(&noticed, true)) return;
    if (e->cache_dir)
        fprintf(stderr,
                "hisp: first use of %s (%s): building its kernels, which takes a while once; "
                "they are then cached in %s\n",
                e->device, hisp_backend_name(e->backend), e->cache_dir);
    else
        fprintf(stderr,
                "hisp: building the kernels of %s (%s), which takes a while; the disk cache is "
                "off (option cache_dir), so every run builds them again\n",
                e->device, hisp_backend_name(e->backend));
}

hisp_build_stats cli_builds(hisp_context ctx)
{
    hisp_build_stats b = {0};
    if (ctx && hisp_context_builds(ctx, &b) != HISP_SUCCESS) memset(&b, 0, sizeof b);
    return b;
}

double cli_builds_ms(const hisp_build_stats *a, const hisp_build_stats *b)
{
    double ms = (b->build_ms - a->build_ms) + (b->load_ms - a->load_ms);
    return ms > 0 ? ms : 0;
}

void cli_builds_add(hisp_build_stats *sum, const hisp_build_stats *a, const hisp_build_stats *b)
{
    sum->built += b->built - a->built;
    sum->loaded += b->loaded - a->loaded;
    sum->build_ms += b->build_ms - a->build_ms;
    sum->load_ms += b->load_ms - a->load_ms;
}

void json_builds(cli_json *j, const hisp_build_stats *b)
{
    json_object_begin(j, "kernels");
    json_uint(j, "programs_built", b->built);
    json_double(j, "build_ms", b->build_ms);
    json_uint(j, "programs_loaded", b->loaded);
    json_double(j, "load_ms", b->load_ms);
    json_object_end(j);
}

void cli_print_builds(const char *label, const hisp_build_stats *b)
{
    if (!b->built && !b->loaded) return;
    printf("%-10s ", label);
    if (b->built)
        printf("%llu program%s built in %.1f ms", (unsigned long long)b->built,
               b->built == 1 ? "" : "s", b->build_ms);
    if (b->built && b->loaded) printf(", ");
    if (b->loaded)
        printf("%llu loaded from the disk cache in %.1f ms", (unsigned long long)b->loaded,
               b->load_ms);
    printf("\n");
}

const char *cli_device_kind(const hisp_device_info *d)
{
    return d->is_gpu ? "gpu" : d->is_cpu ? "cpu" : "other";
}

void json_device(cli_json *j, const char *key, const hisp_device_info *d)
{
    json_object_begin(j, key);
    json_string(j, "backend", hisp_backend_name(d->backend));
    json_int(j, "index", d->index);
    json_string(j, "name", d->name);
    json_string(j, "platform", d->platform);
    json_string(j, "type", cli_device_kind(d));
    json_object_end(j);
}

void json_context_device(cli_json *j, hisp_context ctx)
{
    hisp_device_info d;
    memset(&d, 0, sizeof d);
    if (!ctx || hisp_context_get_device(ctx, &d) != HISP_SUCCESS) {
        json_null(j, "backend");
        json_null(j, "device");
        return;
    }
    json_string(j, "backend", hisp_backend_name(d.backend));
    json_device(j, "device", &d);
}
