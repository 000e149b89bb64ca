/* hisp info: backends compiled in and their devices; the context's options. */
#include "cli.h"

#include <inttypes.h>
#include <string.h>

static const char help[] =
    "usage: hisp info [options]\n"
    "\n"
    "Lists every backend (reference, opencl, cuda): whether it is compiled into\n"
    "this build and the devices it finds (platform, name, type, compute units,\n"
    "memory, fp64). A compiled backend without a device shows the reason. The\n"
    "device index shown is what --device takes in the other commands.\n"
    "\n"
    "options:\n"
    "  --options            list the library's options instead: name, type, default,\n"
    "                       current value (after HISP_OPTIONS=\"name=value,...\" from\n"
    "                       the environment) and meaning\n"
    "  --backend B          list this backend only: reference, opencl or cuda\n"
    "                       (default auto: every backend)\n"
    "  --json               machine-readable output: {\"version\", \"backends\":\n"
    "                       [{\"name\", \"compiled\", \"devices\": [...], \"note\"}]};\n"
    "                       with --options {\"options\": [{\"name\", \"type\",\n"
    "                       \"default\", \"value\", \"meaning\"}]}\n" CLI_HELP_HELP;

/* hisp info --options */
static int list_options(hisp_context ctx, bool json)
{
    cli_json j;
    if (json) {
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_array_begin(&j, "options");
    } else {
        printf("%-12s %-7s %-10s %-12s %s\n", "option", "type", "default", "value", "meaning");
    }
    for (int i = 0; i < hisp_option_count(); i++) {
        hisp_option_info o;
        char value[1024];
        if (hisp_option_describe(i, &o) ||
            hisp_context_get_option(ctx, o.name, value, sizeof value))
            return cli_fail(ctx, HISP_ERR_INVALID_ARGUMENT, NULL);
        if (json) {
            json_object_begin(&j, NULL);
            json_string(&j, "name", o.name);
            json_string(&j, "type", hisp_option_type_name(o.type));
            json_string(&j, "default", o.default_value);
            json_string(&j, "value", value);
            json_string(&j, "meaning", o.meaning);
            json_object_end(&j);
        } else {
            printf("%-12s %-7s %-10s %-12s %s\n", o.name, hisp_option_type_name(o.type),
                   o.default_value[0] ? o.default_value : "\"\"", value[0] ? value : "\"\"",
                   o.meaning);
        }
    }
    if (json) {
        json_array_end(&j);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("\nSet them with HISP_OPTIONS=\"name=value,name=value\" in the environment,\n"
               "or hisp_context_set_option(ctx, name, value) in a program.\n");
    }
    return CLI_OK;
}

static const char *dev_type(const hisp_device_info *d)
{
    return d->is_gpu ? "gpu" : d->is_cpu ? "cpu" : "other";
}

int cmd_info(int argc, char **argv)
{
    static const cli_opt opts[] = {
        {"--json", false}, {"--options", false}, {"--backend", true}, CLI_HELP_OPTS, {0, 0}};
    const char *val[5] = {0};
    int prc = cli_parse_command("info", argc, argv, opts, help, val, NULL);
    if (prc) return prc == CLI_HELP_SHOWN ? CLI_OK : prc;
    bool json = val[0] != NULL;
    hisp_backend_kind only = HISP_BACKEND_AUTO;
    if (val[2] && (prc = cli_parse_backend("--backend", val[2], &only))) return prc;

    hisp_context ctx = NULL;
    int rc = cli_context(&ctx);
    if (rc) return rc;
    if (val[1]) {
        rc = list_options(ctx, json);
        hisp_context_destroy(&ctx);
        return rc;
    }
    cli_json j;
    if (json) {
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_string(&j, "version", hisp_version_string());
        json_array_begin(&j, "backends");
    } else {
        printf("hisp %s\n", hisp_version_string());
    }
    int ndev_total = 0;
    for (int b = 0; b < HISP_BACKEND_COUNT; b++) {
        hisp_backend_kind kind = (hisp_backend_kind)b;
        if (only != HISP_BACKEND_AUTO && kind != only) continue;
        bool compiled = hisp_backend_compiled(kind);
        int n = 0;
        char note[512] = "";
        if (!compiled) {
            snprintf(note, sizeof note, "not compiled into this build");
        } else {
            hisp_status s = hisp_backend_device_count(ctx, kind, &n);
            hisp_error_info e = {0};
            if ((s != HISP_SUCCESS || n == 0) && hisp_context_last_error(ctx, &e) == HISP_SUCCESS)
                snprintf(note, sizeof note, "%s",
                         e.message && e.message[0] ? e.message : hisp_status_string(s));
            if (s != HISP_SUCCESS) n = 0;
            if (n == 0 && !note[0]) snprintf(note, sizeof note, "no device found");
        }
        if (json) {
            json_object_begin(&j, NULL);
            json_string(&j, "name", hisp_backend_name(kind));
            json_bool(&j, "compiled", compiled);
            json_array_begin(&j, "devices");
        } else {
            if (!compiled)
                printf("\n%s: not compiled in\n", hisp_backend_name(kind));
            else
                printf("\n%s: %d device%s\n", hisp_backend_name(kind), n, n == 1 ? "" : "s");
            if (compiled && n == 0) printf("  %s\n", note);
        }
        for (int d = 0; d < n; d++) {
            hisp_device_info di;
            memset(&di, 0, sizeof di);
            hisp_status s = hisp_backend_device_info(ctx, kind, d, &di);
            if (s != HISP_SUCCESS) {
                hisp_error_info e = {0};
                const char *m = hisp_context_last_error(ctx, &e) == HISP_SUCCESS && e.message
                                    ? e.message
                                    : hisp_status_string(s);
                if (json) {
                    json_object_begin(&j, NULL);
                    json_int(&j, "index", d);
                    json_string(&j, "error", m);
                    json_object_end(&j);
                } else {
                    printf("  [%d] (device info failed: %s)\n", d, m);
                }
                continue;
            }
            ndev_total++;
            if (json) {
                json_object_begin(&j, NULL);
                json_int(&j, "index", d);
                json_string(&j, "platform", di.platform);
                json_string(&j, "name", di.name);
                json_string(&j, "vendor", di.vendor);
                json_string(&j, "type", dev_type(&di));
                json_int(&j, "compute_units", di.compute_units);
                json_uint(&j, "global_mem_bytes", di.global_mem);
                json_bool(&j, "fp64", di.fp64 != 0);
                json_string(&j, "driver", di.driver);
                json_object_end(&j);
            } else {
                printf("  [%d] %s\n", d, di.name);
                printf("      platform: %s%s%s\n", di.platform, di.vendor[0] ? ", vendor " : "",
                       di.vendor);
                printf("      type %s, %d compute units, %.1f GiB, fp64 %s%s%s\n", dev_type(&di),
                       di.compute_units, (double)di.global_mem / (1024.0 * 1024.0 * 1024.0),
                       di.fp64 ? "yes" : "no", di.driver[0] ? ", driver " : "", di.driver);
            }
        }
        if (json) {
            json_array_end(&j);
            if (note[0])
                json_string(&j, "note", note);
            else
                json_null(&j, "note");
            json_object_end(&j);
        }
    }
    if (json) {
        json_array_end(&j);
        json_int(&j, "device_count", ndev_total);
        json_object_end(&j);
        json_finish(&j);
    }
    hisp_context_destroy(&ctx);
    return CLI_OK;
}
