/* Matrix Market internals shared by core/io/mmio*.c. */
#ifndef HISPI_MMIO_H
#define HISPI_MMIO_H

#include "hispi.h"

#include <locale.h>

/* The C locale (NULL if it cannot be made): strtod_l, the writer. */
HISPI_LOCAL locale_t hispi_c_locale(void);

/* [+-]digits[.digits][(e|E)[+-]digits] at p (before e), correctly rounded;
 * *end = the first byte after the number. False: another shape or more
 * than 19 significant digits (then strtod_l decides). */
HISPI_LOCAL bool hispi_mmio_parse_double(const char *p, const char *e, const char **end,
                                         double *out);
/* [+-]digits at p: 0 and the value, 1 no digits, 2 outside int64. */
HISPI_LOCAL int hispi_mmio_parse_int64(const char *p, const char *e, const char **end,
                                       int64_t *out);

/* v at p, digits that read back to v exactly (Grisu2; at most 24 bytes,
 * "nan", "inf", "-inf" for the others); returns the end. */
HISPI_LOCAL char *hispi_mmio_dtoa(char *p, double v);

/* Compressed inputs: gzip (zlib) and bzip2 (libbz2), recognised by their
 * magic bytes. *kind names it ("gzip", "bzip2") or is NULL for plain data. */
HISPI_LOCAL const char *hispi_compressed_kind(const char *data, size_t size);
/* Decompresses data into a fresh NUL-terminated buffer, level by level where
 * the output is compressed again (at most HISPI_DECOMPRESS_LEVELS levels),
 * the outputs of all levels together at most hispi_decompress_limit(size)
 * bytes (beyond: HISP_ERR_INPUT_FORMAT). */
enum { HISPI_DECOMPRESS_LEVELS = 3 };
HISPI_LOCAL hisp_status hispi_decompress(hisp_context ctx, const char *name, const char *data,
                                         size_t size, char **out, size_t *out_size);
HISPI_LOCAL size_t hispi_decompress_limit(size_t compressed);
/* The first bytes only: at most max decompressed bytes of every level, from
 * data that may be a file's first bytes (a stream cut short is no error). */
HISPI_LOCAL hisp_status hispi_decompress_head(hisp_context ctx, const char *name, const char *data,
                                              size_t size, size_t max, char **out,
                                              size_t *out_size);

/* A byte sink for the writer: plain, gzip or bzip2 by the path's suffix. */
typedef struct hispi_sink hispi_sink;
HISPI_LOCAL hisp_status hispi_sink_open(hisp_context ctx, const char *path, hispi_sink **out);
HISPI_LOCAL hisp_status hispi_sink_write(hispi_sink *s, const void *p, size_t n);
/* Flushes and closes; ok = false discards (the target stays as it was). */
HISPI_LOCAL hisp_status hispi_sink_close(hispi_sink *s, bool ok);

#endif
