/* MSREP p*-opt (issue 7): a part's local row pointers made on the device
 * from its slice of the global ones, l[i] = clamp(g[i], base, base + nnz) -
 * base, narrowed to PTR_T (uint or ulong). Built with VALUE_T float (the
 * prelude needs one). */
__kernel void msrep_local_ptr(__global const long *g, ulong n, long base, long nnz,
                              __global PTR_T *l)
{
    size_t i = get_global_id(0);
    if (i >= n) return;
    long v = g[i];
    v = v < base ? base : (v > base + nnz ? base + nnz : v);
    l[i] = (PTR_T)(v - base);
}
