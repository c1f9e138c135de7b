/* backends/cuda/emu/emu_memory.cc - the emulated GPU's memory: device
 * allocations and page-locked host buffers are host allocations listed in
 * one registry, so that every copy, every library call and every kernel's
 * pointer arguments can be checked against what was allocated.
 *
 * Each allocation is 256-byte aligned (as cudaMalloc's), starts filled with
 * 0xff bytes (NaN as floats: a real allocation is not zeroed either) and has
 * 64 guard bytes on each side, checked after each kernel that was given a
 * pointer into it and when it is freed: a write past either end is a fault
 * with the kernel's name, in builds without AddressSanitizer too. */
#include "emu_internal.h"

#include <stdlib.h>
#include <string.h>

namespace nn_emu {

namespace {

const size_t LEAD = 256;          /* alignment, with the front guard at its end */
const size_t GUARD = 64;
const unsigned char GUARD_BYTE = 0xa5;
const unsigned char FRESH_BYTE = 0xff;
const size_t DEVICE_MEMORY = (size_t)16 << 30;   /* what the emulated device has */

struct registry {
    std::map<uintptr_t, region> regions;     /* by base */
    size_t device_used = 0;
};

registry &reg()
{
    static registry *r = new registry;       /* never destroyed, as lock() */
    return *r;
}

/* The region whose [base, base + bytes] holds p (the end too: an empty range
 * at the end is in it), or NULL. */
const region *region_at(const void *p)
{
    registry &r = reg();
    auto it = r.regions.upper_bound((uintptr_t)p);
    if (it == r.regions.begin())
        return nullptr;
    --it;
    const region &g = it->second;
    return (const char *)p <= g.base + g.bytes ? &g : nullptr;
}

const char *kind_name(int kind)
{
    return kind == MEM_DEVICE ? "device memory" : "page-locked host memory";
}

void *allocate(size_t bytes, int kind, unsigned flags)
{
    void *raw = nullptr;
    if (bytes > ((size_t)1 << 48) || posix_memalign(&raw, LEAD, LEAD + bytes + GUARD) != 0)
        return nullptr;
    char *base = (char *)raw + LEAD;
    memset(base - GUARD, GUARD_BYTE, GUARD);
    memset(base, FRESH_BYTE, bytes);
    memset(base + bytes, GUARD_BYTE, GUARD);
    reg().regions[(uintptr_t)base] = region{ base, bytes, kind, flags };
    if (kind == MEM_DEVICE)
        reg().device_used += bytes;
    return base;
}

/* Frees the allocation that starts at p, of kind; -1 if there is none. */
int release(void *p, int kind, std::string *why)
{
    registry &r = reg();
    auto it = r.regions.find((uintptr_t)p);
    if (it == r.regions.end() || it->second.kind != kind) {
        const region *g = region_at(p);
        *why = g ? format("%p is inside an allocation of %s at %p, not its start", p,
                          kind_name(g->kind), (void *)g->base)
                 : format("%p was not allocated by the emulated device (or is freed)", p);
        return -1;
    }
    std::string guard_why;
    if (check_guards(p, &guard_why) != 0)
        fault(cudaErrorIllegalAddress, guard_why + " (found when freeing it)");
    if (kind == MEM_DEVICE)
        r.device_used -= it->second.bytes;
    free(it->second.base - LEAD);
    r.regions.erase(it);
    return 0;
}

} /* namespace */

const region *find_region(const void *p, size_t bytes, int kinds)
{
    const region *g = region_at(p);
    if (!g || !(g->kind & kinds))
        return nullptr;
    size_t offset = (size_t)((const char *)p - g->base);
    return bytes <= g->bytes - offset ? g : nullptr;
}

int check_range(const void *p, size_t bytes, int kinds, const char *what, std::string *why)
{
    if (find_region(p, bytes, kinds))
        return 0;
    const region *g = region_at(p);
    if (!p)
        *why = format("%s is NULL", what);
    else if (!g)
        *why = format("%s (%p, %zu bytes) is not memory of the emulated device (a host pointer, "
                      "or freed)", what, p, bytes);
    else if (!(g->kind & kinds))
        *why = format("%s (%p) is %s, not %s", what, p, kind_name(g->kind),
                      kinds == MEM_DEVICE ? "device memory" : "memory the device can reach");
    else
        *why = format("%s: %zu bytes from %p run %zu bytes past the end of the allocation of "
                      "%zu bytes at %p", what, bytes, p,
                      (size_t)((const char *)p + bytes - (g->base + g->bytes)), g->bytes,
                      (void *)g->base);
    return -1;
}

int check_guards(const void *p, std::string *why)
{
    const region *g = region_at(p);
    if (!g)
        return 0;
    for (size_t i = 0; i < GUARD; i++) {
        if ((unsigned char)g->base[-1 - (ptrdiff_t)i] != GUARD_BYTE) {
            *why = format("%zu bytes before the allocation of %zu bytes at %p were overwritten",
                          i + 1, g->bytes, (void *)g->base);
            return -1;
        }
        if ((unsigned char)g->base[g->bytes + i] != GUARD_BYTE) {
            *why = format("byte %zu past the end of the allocation of %zu bytes at %p was "
                          "overwritten", i, g->bytes, (void *)g->base);
            return -1;
        }
    }
    return 0;
}

} /* namespace nn_emu */

using namespace nn_emu;

size_t emu_device_memory(void)
{
    return DEVICE_MEMORY;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    guard g(lock());
    if (!p)
        return record(cudaErrorInvalidValue);
    *p = nullptr;
    if (sticky())
        return record(sticky());
    if (cudaError_t e = unsafe_during_capture("cudaMalloc"))
        return record(e);
    if (bytes == 0)
        return cudaSuccess;
    if (bytes > DEVICE_MEMORY - reg().device_used || !(*p = allocate(bytes, MEM_DEVICE, 0)))
        return record(cudaErrorMemoryAllocation);
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    guard g(lock());
    if (!p)
        return sticky();
    if (cudaError_t e = unsafe_during_capture("cudaFree"))
        return record(e);
    run_all();              /* cudaFree waits for the device */
    std::string why;
    if (release(p, MEM_DEVICE, &why) != 0) {
        diag("cudaFree: %s", why.c_str());
        return record(cudaErrorInvalidValue);
    }
    return record(sticky());
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    guard g(lock());
    if (!free_bytes || !total_bytes)
        return record(cudaErrorInvalidValue);
    *total_bytes = DEVICE_MEMORY;
    *free_bytes = DEVICE_MEMORY - reg().device_used;
    return record(sticky());
}

cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags)
{
    guard g(lock());
    if (!p)
        return record(cudaErrorInvalidValue);
    *p = nullptr;
    if (flags & ~(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined))
        return record(cudaErrorInvalidValue);
    if (sticky())
        return record(sticky());
    if (cudaError_t e = unsafe_during_capture("cudaHostAlloc"))
        return record(e);
    if (!(*p = allocate(bytes ? bytes : 1, MEM_PINNED, flags)))
        return record(cudaErrorMemoryAllocation);
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p)
{
    guard g(lock());
    if (!p)
        return sticky();
    if (cudaError_t e = unsafe_during_capture("cudaFreeHost"))
        return record(e);
    run_all();              /* as cudaFree: the device may still be reading it */
    std::string why;
    if (release(p, MEM_PINNED, &why) != 0) {
        diag("cudaFreeHost: %s", why.c_str());
        return record(cudaErrorInvalidValue);
    }
    return record(sticky());
}

/* With unified addressing (every 64-bit system), a page-locked buffer has
 * the same address on the device. */
cudaError_t cudaHostGetDevicePointer(void **dev, void *host, unsigned int flags)
{
    guard g(lock());
    if (!dev || flags != 0)
        return record(cudaErrorInvalidValue);
    *dev = nullptr;
    if (!find_region(host, 0, MEM_PINNED))
        return record(cudaErrorInvalidValue);
    *dev = host;
    return record(sticky());
}
