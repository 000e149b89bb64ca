/* NUMA placement of MSREP parts through hwloc (build option hwloc=auto|yes|
 * no: whether the hwloc.h header is there; the library is loaded at run
 * time). A GPU's node is the node of its PCI bridge; a CPU device spans the
 * machine (-1). Without hwloc, or on a one-node machine, everything is
 * node -1 and nothing is bound. */
#include "backend/backend.h"
#include "hispi.h"
#include "hispi_msrep.h"

#ifdef HISP_HAVE_HWLOC
/* hwloc is loaded at run time (dlopen of libhwloc.so.15, the soname of every
 * hwloc 2.x): the programs built here must start on machines without it,
 * where everything is one node. hwloc.h gives only types and constants; the
 * header's inline helpers are not used (they would link to libhwloc). */
#include <dlfcn.h>
#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>

static struct {
    int (*topology_init)(hwloc_topology_t *);
    int (*set_io_types_filter)(hwloc_topology_t, enum hwloc_type_filter_e);
    int (*topology_load)(hwloc_topology_t);
    void (*topology_destroy)(hwloc_topology_t);
    int (*get_type_depth)(hwloc_topology_t, hwloc_obj_type_t);
    unsigned (*get_nbobjs_by_depth)(hwloc_topology_t, int);
    hwloc_obj_t (*get_obj_by_depth)(hwloc_topology_t, int, unsigned);
    int (*bitmap_first)(hwloc_const_bitmap_t);
    int (*bitmap_weight)(hwloc_const_bitmap_t);
    int (*bitmap_iszero)(hwloc_const_bitmap_t);
    int (*set_cpubind)(hwloc_topology_t, hwloc_const_cpuset_t, int);
    int (*set_area_membind)(hwloc_topology_t, const void *, size_t, hwloc_const_bitmap_t,
                            hwloc_membind_policy_t, int);
} H;

static hwloc_topology_t topo;
static int topo_nodes = 1;
static pthread_once_t topo_once = PTHREAD_ONCE_INIT;

static bool load_hwloc(void)
{
    void *lib = dlopen("libhwloc.so.15", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        hispi_debug("msrep: no libhwloc.so.15 (%s): one NUMA node assumed", dlerror());
        return false;
    }
#define SYM(field, name)                                                                           \
    if (!(*(void **)&H.field = dlsym(lib, name))) return false;
    SYM(topology_init, "hwloc_topology_init")
    SYM(set_io_types_filter, "hwloc_topology_set_io_types_filter")
    SYM(topology_load, "hwloc_topology_load")
    SYM(topology_destroy, "hwloc_topology_destroy")
    SYM(get_type_depth, "hwloc_get_type_depth")
    SYM(get_nbobjs_by_depth, "hwloc_get_nbobjs_by_depth")
    SYM(get_obj_by_depth, "hwloc_get_obj_by_depth")
    SYM(bitmap_first, "hwloc_bitmap_first")
    SYM(bitmap_weight, "hwloc_bitmap_weight")
    SYM(bitmap_iszero, "hwloc_bitmap_iszero")
    SYM(set_cpubind, "hwloc_set_cpubind")
    SYM(set_area_membind, "hwloc_set_area_membind")
#undef SYM
    return true; /* the library stays loaded for the process */
}

static void topo_init(void)
{
    topo = NULL;
    if (!load_hwloc() || H.topology_init(&topo) != 0) {
        topo = NULL;
        return;
    }
    /* PCI devices are filtered out by default */
    H.set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (H.topology_load(topo) != 0) {
        H.topology_destroy(topo);
        topo = NULL;
        return;
    }
    int d = H.get_type_depth(topo, HWLOC_OBJ_NUMANODE);
    int n = (int)H.get_nbobjs_by_depth(topo, d);
    topo_nodes = n > 1 ? n : 1;
    hispi_debug("msrep: hwloc sees %d NUMA node(s)", topo_nodes);
}

static hwloc_topology_t topology(void)
{
    pthread_once(&topo_once, topo_init);
    return topo;
}

int hispi_numa_nodes(void)
{
    return topology() ? topo_nodes : 1;
}

int hispi_numa_device_node(hisp_context ctx, hisp_backend_kind kind, int device)
{
    hwloc_topology_t t = topology();
    if (!t || topo_nodes < 2 || (int)kind < 0 || kind >= HISP_BACKEND_COUNT) return -1;
    const hisp_backend_ops *o = hispi_backends[kind];
    char busid[64] = "";
    if (!o || !HISPI_BE_HAS_ON(o, device_pci) ||
        HISPI_BE_ON(ctx, o, device_pci, device, busid, sizeof busid) != HISP_SUCCESS) {
        hispi_clear_error(ctx);
        return -1;
    }
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    if (sscanf(busid, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) return -1;
    int depth = H.get_type_depth(t, HWLOC_OBJ_PCI_DEVICE);
    unsigned n = H.get_nbobjs_by_depth(t, depth);
    hwloc_obj_t obj = NULL;
    for (unsigned i = 0; i < n && !obj; i++) {
        hwloc_obj_t p = H.get_obj_by_depth(t, depth, i);
        if (p && p->attr && p->attr->pcidev.domain == dom && p->attr->pcidev.bus == bus &&
            p->attr->pcidev.dev == dev && p->attr->pcidev.func == fn)
            obj = p;
    }
    while (obj && !obj->cpuset)
        obj = obj->parent; /* the first non-I/O ancestor */
    if (!obj || !obj->nodeset) return -1;
    int node = H.bitmap_first(obj->nodeset);
    /* a bridge under the machine object spans every node: no locality */
    if (H.bitmap_weight(obj->nodeset) != 1) node = -1;
    hispi_debug("msrep: %s device %d at %s: NUMA node %d", o->name, device, busid, node);
    return node;
}

static hwloc_obj_t node_obj(int node)
{
    hwloc_topology_t t = topology();
    if (!t || topo_nodes < 2 || node < 0) return NULL;
    int depth = H.get_type_depth(t, HWLOC_OBJ_NUMANODE);
    unsigned n = H.get_nbobjs_by_depth(t, depth);
    for (unsigned i = 0; i < n; i++) {
        hwloc_obj_t o = H.get_obj_by_depth(t, depth, i);
        if (o && o->os_index == (unsigned)node) return o;
    }
    return NULL;
}

void hispi_numa_bind_thread(int node)
{
    hwloc_obj_t o = node_obj(node);
    if (o && o->cpuset && !H.bitmap_iszero(o->cpuset))
        (void)H.set_cpubind(topology(), o->cpuset, HWLOC_CPUBIND_THREAD);
}

void hispi_numa_bind_memory(void *p, size_t bytes, int node)
{
    hwloc_obj_t o = node_obj(node);
    if (o && p && bytes)
        (void)H.set_area_membind(topology(), p, bytes, o->nodeset, HWLOC_MEMBIND_BIND,
                                 HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_MIGRATE);
}

#else /* no hwloc: one node */

int hispi_numa_nodes(void)
{
    return 1;
}

int hispi_numa_device_node(hisp_context ctx, hisp_backend_kind kind, int device)
{
    (void)ctx;
    (void)kind;
    (void)device;
    return -1;
}

void hispi_numa_bind_thread(int node)
{
    (void)node;
}

void hispi_numa_bind_memory(void *p, size_t bytes, int node)
{
    (void)p;
    (void)bytes;
    (void)node;
}

#endif

int hisp_numa_nodes(void)
{
    return hispi_numa_nodes();
}
