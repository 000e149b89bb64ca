/* The values of the diffusion kinds aniso3d and jump3d (gen.c describes
 * both): functions of the entry's position on the n^3 grid, with exact
 * IEEE operations only, so that they are the same bits everywhere. */
#include "gen_internal.h"

double hispi_gen_value_aniso3d(const gen *g, int64_t i, int64_t j)
{
    int64_t d = i > j ? i - j : j - i;
    if (d == 0) return 4 + 2 * g->eps;
    return d == g->side * g->side ? -g->eps : -1.0;
}

/* k of the cell at (x, y, z): 1 or contrast, one draw per cube of cells. */
static double coef(const gen *g, int64_t x, int64_t y, int64_t z)
{
    int64_t b = g->block, nb = (g->side + b - 1) / b;
    uint64_t cube = (uint64_t)(((z / b) * nb + y / b) * nb + x / b);
    rng r = rng_at(g->key, cube, S_BLOCK);
    return next(&r) >> 63 ? g->contrast : 1.0;
}

/* The coupling of cells with coefficients a and b: their harmonic mean. */
static double couple(double a, double b)
{
    return 2 * a * b / (a + b);
}

double hispi_gen_value_jump3d(const gen *g, int64_t i, int64_t j)
{
    int64_t s = g->side, x = i % s, y = (i / s) % s, z = i / (s * s);
    double k = coef(g, x, y, z);
    if (i != j) return -couple(k, coef(g, j % s, (j / s) % s, j / (s * s)));
    /* the six couplings in a fixed order: -z, -y, -x, +x, +y, +z */
    static const int dx[6] = {0, 0, -1, 1, 0, 0}, dy[6] = {0, -1, 0, 0, 1, 0},
                     dz[6] = {-1, 0, 0, 0, 0, 1};
    double sum = 0;
    for (int q = 0; q < 6; q++) {
        int64_t a = x + dx[q], b = y + dy[q], c = z + dz[q];
        bool in = a >= 0 && a < s && b >= 0 && b < s && c >= 0 && c < s;
        sum += in ? couple(k, coef(g, a, b, c)) : k;
    }
    return sum;
}
