/* The backend contract moved to core/backend/backend.h; this path is kept
 * for files being rewritten meanwhile (core/matrix/spmv.c, matrix.c). */
#include "../core/backend/backend.h"
