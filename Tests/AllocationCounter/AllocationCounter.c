// An LD_PRELOAD malloc and reference-count interposer for the allocation guard (AllocationBudgetTests): test tooling,
// not part of subd.
//
// Every allocation call of the process (malloc, calloc, realloc other than a free, posix_memalign, aligned_alloc,
// memalign, valloc, pvalloc, reallocarray) adds one to a global counter and is forwarded to the next definition
// (glibc's), found with dlsym(RTLD_NEXT). free is forwarded and not counted.
//
// The Swift runtime's reference counting entry points (swift_retain, swift_release, their _n forms and the
// bridgeObject ones) are counted the same way, as retains and releases, and forwarded to libswiftCore's. Only calls
// that go through the dynamic linker are seen: those of subd's code and of the other libraries, which call them through
// the PLT; libswiftCore's calls to itself are not (they are the standard library's business, not our command path).
//
// When SUBD_ALLOCATION_COUNT_FILE names a file, SIGUSR2 makes the process write the three counts there (allocations,
// retains, releases), as decimal numbers separated by spaces and followed by a newline. The handler uses only async-signal-safe calls (open, write, close, rename): it writes PATH.tmp and
// renames it to PATH, so a reader that removed PATH before sending the signal sees the whole line at once, and
// nothing in it allocates (so reading the count does not change it).
#define _GNU_SOURCE
#include "AllocationCounter.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>  // rename
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Relaxed: nothing is ordered by the counts; a reader only needs every increment to land once.
static atomic_ulong allocations;
static atomic_ulong retains;
static atomic_ulong releases;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);

// dlsym itself may call calloc/malloc (for its error state) before real_calloc is known: those few early blocks
// come from this arena and are never freed (free ignores them). Not counted.
static alignas(max_align_t) unsigned char arena[4096];
static atomic_size_t arena_used;

static void *arena_alloc(size_t size) {
    size = (size + 15) & ~(size_t)15;
    size_t offset = atomic_fetch_add_explicit(&arena_used, size, memory_order_relaxed);
    if (offset + size > sizeof arena) return NULL;
    return arena + offset;
}

static int in_arena(const void *pointer) {
    return (const unsigned char *)pointer >= arena && (const unsigned char *)pointer < arena + sizeof arena;
}

// Set while resolve() runs, so allocations made by dlsym come from the arena. A plain global: the first allocation,
// which resolves, happens while the process starts, before it has a second thread.
static int resolving;

static void resolve(void) {
    if (real_free) return;
    resolving = 1;
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    real_valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
    real_pvalloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "pvalloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");  // last: it marks resolve() as done
    resolving = 0;
}

static inline void count(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

unsigned long subd_allocation_count(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }

unsigned long subd_retain_count(void) { return atomic_load_explicit(&retains, memory_order_relaxed); }

unsigned long subd_release_count(void) { return atomic_load_explicit(&releases, memory_order_relaxed); }

void *malloc(size_t size) {
    if (resolving) return arena_alloc(size);
    resolve();
    count();
    return real_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    if (resolving) {
        if (size && count_ > SIZE_MAX / size) return NULL;
        return arena_alloc(count_ * size);  // static storage: already zero
    }
    resolve();
    count();
    return real_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    if (resolving) return arena_alloc(size);  // never happens in practice; a copy would need the old size
    resolve();
    if (in_arena(pointer)) {  // move an arena block into a real one (its size is unknown: copy up to the arena's end)
        void *moved = real_malloc(size);
        size_t available = (size_t)(arena + sizeof arena - (unsigned char *)pointer);
        if (moved) memcpy(moved, pointer, size < available ? size : available);
        count();
        return moved;
    }
    if (pointer && size == 0) {  // realloc(p, 0) frees p: not an allocation
        return real_realloc(pointer, size);
    }
    count();
    return real_realloc(pointer, size);
}

void *reallocarray(void *pointer, size_t count_, size_t size) {
    if (size && count_ > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(pointer, count_ * size);
}

void free(void *pointer) {
    if (!pointer || in_arena(pointer)) return;
    resolve();
    real_free(pointer);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    resolve();
    count();
    return real_posix_memalign(result, alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    resolve();
    count();
    return real_aligned_alloc(alignment, size);
}

void *memalign(size_t alignment, size_t size) {
    resolve();
    count();
    return real_memalign(alignment, size);
}

void *valloc(size_t size) {
    resolve();
    count();
    return real_valloc(size);
}

void *pvalloc(size_t size) {
    resolve();
    count();
    return real_pvalloc(size);
}

// MARK: the Swift runtime's reference counting

// Resolved at the first call (the runtime is loaded by then: it is what calls us). Two threads resolving at once
// store the same pointer. The object pointers are opaque here: they are only passed on.
#define FORWARD_RETAIN(name, counter)                                                                              \
    void *name(void *object) {                                                                                     \
        static void *(*real)(void *);                                                                              \
        if (!real) real = (void *(*)(void *))dlsym(RTLD_NEXT, #name);                                              \
        atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);                                              \
        return real(object);                                                                                       \
    }
#define FORWARD_RETAIN_N(name, counter)                                                                            \
    void *name(void *object, uint32_t n) {                                                                         \
        static void *(*real)(void *, uint32_t);                                                                    \
        if (!real) real = (void *(*)(void *, uint32_t))dlsym(RTLD_NEXT, #name);                                    \
        atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);                                              \
        return real(object, n);                                                                                    \
    }
#define FORWARD_RELEASE(name, counter)                                                                             \
    void name(void *object) {                                                                                      \
        static void (*real)(void *);                                                                               \
        if (!real) real = (void (*)(void *))dlsym(RTLD_NEXT, #name);                                               \
        atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);                                              \
        real(object);                                                                                              \
    }
#define FORWARD_RELEASE_N(name, counter)                                                                           \
    void name(void *object, uint32_t n) {                                                                          \
        static void (*real)(void *, uint32_t);                                                                     \
        if (!real) real = (void (*)(void *, uint32_t))dlsym(RTLD_NEXT, #name);                                     \
        atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);                                              \
        real(object, n);                                                                                           \
    }

FORWARD_RETAIN(swift_retain, retains)
FORWARD_RETAIN_N(swift_retain_n, retains)
FORWARD_RETAIN(swift_bridgeObjectRetain, retains)
FORWARD_RETAIN_N(swift_bridgeObjectRetain_n, retains)
FORWARD_RELEASE(swift_release, releases)
FORWARD_RELEASE_N(swift_release_n, releases)
FORWARD_RELEASE(swift_bridgeObjectRelease, releases)
FORWARD_RELEASE_N(swift_bridgeObjectRelease_n, releases)

// MARK: reporting on SIGUSR2

static char report_path[4096];
static char report_temporary[4096 + 4];

// Appends `value` in decimal to `text` at `*length` (async-signal-safe: no allocation, no stdio).
static void append_decimal(char *text, size_t *length, unsigned long value) {
    char digits[24];
    size_t digit_count = 0;
    do {
        digits[digit_count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    while (digit_count) text[(*length)++] = digits[--digit_count];
}

static void report(int signal_number) {
    (void)signal_number;
    int saved_errno = errno;  // the interrupted code may be about to read errno
    char text[80];
    size_t length = 0;
    append_decimal(text, &length, subd_allocation_count());
    text[length++] = ' ';
    append_decimal(text, &length, subd_retain_count());
    text[length++] = ' ';
    append_decimal(text, &length, subd_release_count());
    text[length++] = '\n';
    int fd = open(report_temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ssize_t written = write(fd, text, length);
        close(fd);
        if (written == (ssize_t)length) rename(report_temporary, report_path);
    }
    errno = saved_errno;
}

__attribute__((constructor)) static void install_report_handler(void) {
    const char *path = getenv("SUBD_ALLOCATION_COUNT_FILE");
    if (!path || !*path || strlen(path) >= sizeof report_path) return;
    strcpy(report_path, path);
    strcpy(report_temporary, path);
    strcat(report_temporary, ".tmp");
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = report;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &action, NULL);
}
