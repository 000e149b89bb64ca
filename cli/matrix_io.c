/* Matrix files of the CLI: Matrix Market (.mtx) and HiSparse (.hisp). */
#include "cli.h"

#include <string.h>

bool cli_is_hisp_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char magic[8] = {0};
    size_t n = fread(magic, 1, 8, f);
    fclose(f);
    return n == 8 && memcmp(magic, "HISPARSE", 8) == 0;
}

int cli_read_matrix(hisp_context ctx, const char *path, hisp_type type, hisp_matrix *A)
{
    cli_progress("reading %s", path);
    hisp_status s = cli_is_hisp_file(path) ? hisp_matrix_load(ctx, path, A)
                                           : hisp_matrix_read_mtx(ctx, path, type, A, NULL);
    return s ? cli_fail(ctx, s, path) : CLI_OK;
}

int cli_write_matrix(hisp_context ctx, hisp_matrix A, const char *path)
{
    size_t n = strlen(path);
    bool hisp = n >= 5 && strcmp(path + n - 5, ".hisp") == 0;
    cli_progress("writing %s", path);
    hisp_status s = hisp ? hisp_matrix_save(A, path) : hisp_matrix_write_mtx(A, path);
    return s ? cli_fail(ctx, s, path) : CLI_OK;
}
