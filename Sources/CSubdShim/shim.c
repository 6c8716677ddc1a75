#define _GNU_SOURCE
#include "CSubdShim.h"
#include <limits.h>

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
