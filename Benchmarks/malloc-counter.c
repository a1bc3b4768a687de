// Counts the allocations of the process it is preloaded into (malloc, calloc, realloc, memalign, posix_memalign,
// aligned_alloc) and writes the count to the file named by BLUEBONNET_MALLOC_COUNT_FILE when the process exits.
// Built by Benchmarks/instructions.sh: cc -shared -fPIC -O2 -o malloc-counter.so malloc-counter.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_ullong allocations;
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_memalign)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);

// dlsym may call calloc before real_calloc is known: serve it from a small static buffer.
static char bootstrap[4096];
static size_t bootstrap_used;

static void resolve(void) {
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_memalign = dlsym(RTLD_NEXT, "memalign");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
}

void *malloc(size_t size) {
    if (!real_malloc) resolve();
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return real_malloc(size);
}

void *calloc(size_t count, size_t size) {
    if (!real_calloc) {
        size_t total = count * size;
        if (bootstrap_used + total <= sizeof bootstrap) {
            void *pointer = bootstrap + bootstrap_used;
            bootstrap_used += (total + 15) & ~(size_t)15;
            return pointer;
        }
        resolve();
    }
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return real_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (!real_realloc) resolve();
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return real_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    if (!real_memalign) resolve();
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return real_memalign(alignment, size);
}

int posix_memalign(void **pointer, size_t alignment, size_t size) {
    if (!real_posix_memalign) resolve();
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return real_posix_memalign(pointer, alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (!real_aligned_alloc) resolve();
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return real_aligned_alloc(alignment, size);
}

void free(void *pointer) {
    static void (*real_free)(void *);
    if ((char *)pointer >= bootstrap && (char *)pointer < bootstrap + sizeof bootstrap) return;
    if (!real_free) real_free = dlsym(RTLD_NEXT, "free");
    real_free(pointer);
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("BLUEBONNET_MALLOC_COUNT_FILE");
    if (!path) return;
    FILE *file = fopen(path, "w");
    if (!file) return;
    fprintf(file, "%llu\n", (unsigned long long)atomic_load(&allocations));
    fclose(file);
}
