/* NUMA placement of MSREP parts through hwloc (build option hwloc=auto|yes|
 * no). A GPU's node is the node of its PCI bridge; a CPU device spans the
 * machine (-1). Without hwloc, or on a one-node machine, everything is
 * node -1 and nothing is bound. */
#include "../backends/backend.h"
#include "hispi_msrep.h"

#ifdef HISP_HAVE_HWLOC
#include <hwloc.h>
#include <pthread.h>

static hwloc_topology_t topo;
static int topo_nodes = 1;
static pthread_once_t topo_once = PTHREAD_ONCE_INIT;

static void topo_init(void)
{
    if (hwloc_topology_init(&topo) != 0) {
        topo = NULL;
        return;
    }
    /* PCI devices are filtered out by default */
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        topo = NULL;
        return;
    }
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
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
    if (!o || !o->device_pci || o->device_pci(ctx, device, busid, sizeof busid) != HISP_SUCCESS) {
        hispi_clear_error(ctx);
        return -1;
    }
    hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(t, busid);
    hwloc_obj_t anc = pci ? hwloc_get_non_io_ancestor_obj(t, pci) : NULL;
    if (!anc || !anc->nodeset) return -1;
    int node = hwloc_bitmap_first(anc->nodeset);
    /* a bridge under the machine object spans every node: no locality */
    if (hwloc_bitmap_weight(anc->nodeset) != 1) node = -1;
    hispi_debug("msrep: %s device %d at %s: NUMA node %d", o->name, device, busid, node);
    return node;
}

static hwloc_obj_t node_obj(int node)
{
    hwloc_topology_t t = topology();
    if (!t || topo_nodes < 2 || node < 0) return NULL;
    return hwloc_get_numanode_obj_by_os_index(t, (unsigned)node);
}

void hispi_numa_bind_thread(int node)
{
    hwloc_obj_t o = node_obj(node);
    if (o && o->cpuset && !hwloc_bitmap_iszero(o->cpuset))
        (void)hwloc_set_cpubind(topology(), o->cpuset, HWLOC_CPUBIND_THREAD);
}

void hispi_numa_bind_memory(void *p, size_t bytes, int node)
{
    hwloc_obj_t o = node_obj(node);
    if (o && p && bytes)
        (void)hwloc_set_area_membind(topology(), p, bytes, o->nodeset, HWLOC_MEMBIND_BIND,
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
