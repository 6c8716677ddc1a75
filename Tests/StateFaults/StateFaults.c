/*
 * Test tooling, preloaded into subd (LD_PRELOAD): makes the system calls on the state log fail with EIO on demand,
 * so the tests see what a real failing disk does to a real daemon (docs/STATE.md, "If saving fails").
 *
 * With SUBD_STATE_FAULTS=DIR in the environment, a file DIR/write makes write(2) to the log fail, DIR/sync makes
 * fdatasync(2) of it fail, DIR/truncate makes ftruncate(2) of it fail. A file that holds "always" fails every such
 * call while it is there; any other file fails the next call only, and is removed by it. "The log" is a descriptor
 * whose path ends in /subd-state.log; every other call goes to the C library untouched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* True when fd is open on a file named subd-state.log. */
static int is_state_log(int fd) {
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = 0;
    static const char suffix[] = "/subd-state.log";
    size_t length = sizeof suffix - 1;
    return (size_t)n >= length && strcmp(target + n - length, suffix) == 0;
}

/* True when the call named `call` on fd is to fail now (the control file is there); a one-shot file is removed. */
static int should_fail(const char *call, int fd) {
    const char *dir = getenv("SUBD_STATE_FAULTS");
    if (dir == NULL) return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, call);
    int control = open(path, O_RDONLY | O_CLOEXEC);
    if (control < 0) return 0;
    char mode[16] = {0};
    ssize_t got = read(control, mode, sizeof mode - 1);
    close(control);
    if (!is_state_log(fd)) return 0;
    if (got < 6 || strncmp(mode, "always", 6) != 0) unlink(path);
    return 1;
}

ssize_t write(int fd, const void *bytes, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (real == NULL) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (should_fail("write", fd)) {
        errno = EIO;
        return -1;
    }
    return real(fd, bytes, count);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    if (should_fail("sync", fd)) {
        errno = EIO;
        return -1;
    }
    return real(fd);
}

int ftruncate(int fd, off_t length) {
    static int (*real)(int, off_t);
    if (real == NULL) real = (int (*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate");
    if (should_fail("truncate", fd)) {
        errno = EIO;
        return -1;
    }
    return real(fd, length);
}
