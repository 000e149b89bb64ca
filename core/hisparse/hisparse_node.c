/* The node codec shared by construction, edits (and the addition to come):
 * which node type n cells take, and a node's cells to and from (row-major
 * local key, payload) arrays (docs/FORMAT.md). */
#include "hispi_hisparse.h"

#include <string.h>

bool hispi_node_dense_fits(int d, size_t es, uint64_t n)
{
    return hispi_dense_bytes(d, es) <= hispi_coo_bytes(n, es);
}

int hispi_node_type(bool leaf, bool dense, uint64_t n)
{
    if (dense) return leaf ? HISPI_LEAF_DENSE : HISPI_INNER_DENSE;
    int x = hispi_coo_x(n);
    return (leaf ? HISPI_LEAF_COO1 : HISPI_INNER_COO1) + (x == 1 ? 0 : x == 2 ? 1 : 2);
}

uint64_t hispi_node_type_bytes(int type, int d, size_t es, uint64_t n)
{
    return hispi_node_is_dense(type) ? hispi_dense_bytes(d, es) : hispi_coo_bytes(n, es);
}

uint64_t hispi_node_decode(const unsigned char *node, int type, int d, size_t es, uint32_t *keys,
                           unsigned char *pay)
{
    uint64_t n = 0, dd = (uint64_t)d * (uint64_t)d;
    if (hispi_node_is_dense(type)) {
        for (uint64_t k = 0; k < dd; k++)
            if (!hispi_bytes_zero(node + k * es, es)) {
                keys[n] = (uint32_t)k;
                memcpy(pay + n * es, node + k * es, es);
                n++;
            }
        return n;
    }
    n = hispi_rd32(node);
    uint64_t np, p = hispi_coo_payload(n, es, &np);
    for (uint64_t k = 0; k < n; k++) {
        keys[k] = node[4 + 2 * k] * (uint32_t)d + node[5 + 2 * k];
        memcpy(pay + k * es, node + p + k * es, es);
    }
    return n;
}

void hispi_node_encode(unsigned char *node, int type, int d, size_t es, uint64_t n,
                       const uint32_t *keys, const unsigned char *pay)
{
    if (hispi_node_is_dense(type)) {
        for (uint64_t k = 0; k < n; k++)
            memcpy(node + keys[k] * es, pay + k * es, es);
        return;
    }
    uint64_t np, p = hispi_coo_payload(n, es, &np);
    uint32_t n32 = (uint32_t)n;
    memcpy(node, &n32, 4);
    for (uint64_t k = 0; k < np; k++) { /* padding repeats the last pair */
        uint32_t key = keys[k < n ? k : n - 1];
        node[4 + 2 * k] = (unsigned char)(key / (uint32_t)d);
        node[5 + 2 * k] = (unsigned char)(key % (uint32_t)d);
    }
    memcpy(node + p, pay, n * es);
}
