/* libFuzzer target for the tune plan file parser (hispi_tune_plan_parse,
 * behind hisp_tune_plan_load and the plan cache): any byte string must
 * give a plan whose names print and parse back, or HISP_ERR_INPUT_FORMAT
 * with a line number from 1 to 7; never a crash, a hang or a leak. Each
 * input is parsed as it is and with its checksum line fixed up, so
 * mutations reach the field parsers instead of stopping at the checksum. */
#include "hispi.h"
#include "compound/hispi_compound.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static hisp_context ctx;

static void parse(const char *buf, size_t size)
{
    hisp_tune_plan p;
    hisp_status s = hispi_tune_plan_parse(ctx, buf, size, "fuzz", &p);
    if (s == HISP_SUCCESS) {
        char lay[64], sch[64];
        hisp_variant v;
        if (memchr(p.key, 0, sizeof p.key) == NULL) abort();
        if (hisp_layout_name(&p.best.layout, lay, sizeof lay) ||
            hisp_schedule_name(&p.best.sched, sch, sizeof sch))
            abort();
        if (hisp_layout_from_name(lay, &v.layout) || hisp_schedule_from_name(sch, &v.sched) ||
            memcmp(&v.layout, &p.best.layout, sizeof v.layout) ||
            memcmp(&v.sched, &p.best.sched, sizeof v.sched))
            abort();
    } else {
        hisp_error_info e;
        if (s != HISP_ERR_INPUT_FORMAT) abort();
        if (hisp_context_last_error(ctx, &e) != HISP_SUCCESS) abort();
        if (e.line < 1 || e.line > 7 || !e.message[0]) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx && hisp_context_create(&ctx) != HISP_SUCCESS) abort();
    char *buf = malloc(size ? size : 1); /* unterminated, as ASan sees it */
    if (!buf) return 0;
    memcpy(buf, data, size);
    parse(buf, size);
    /* the sixth line's checksum made right for the five before it */
    size_t at = 0;
    for (int nl = 0; at < size && nl < 5; at++)
        nl += buf[at] == '\n';
    if (at + 6 + 16 <= size && !memcmp(buf + at, "check ", 6)) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx",
                 (unsigned long long)hispi_hash(buf, at, 0x636865636bull));
        memcpy(buf + at + 6, hex, 16);
        parse(buf, size);
    }
    free(buf);
    return 0;
}
