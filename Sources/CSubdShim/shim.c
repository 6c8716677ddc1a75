#define _GNU_SOURCE
#include "CSubdShim.h"
#include <limits.h>
#include <sched.h>
#include <unistd.h>

int subd_accept_nonblocking(int fd, struct sockaddr *addr, socklen_t *len) {
    return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int subd_iov_max(void) {
#ifdef IOV_MAX
    return IOV_MAX;
#else
    return 1024;
#endif
}

int subd_available_cores(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) return count;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}
