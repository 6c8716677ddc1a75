#ifndef CSUBDSHIM_H
#define CSUBDSHIM_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC; Swift's Glibc module does not export accept4's flags usably.
int subd_accept_nonblocking(int fd, struct sockaddr *addr, socklen_t *len);

/// The kernel's IOV_MAX for writev batches.
int subd_iov_max(void);

/// The cores this process may run on: its CPU affinity (sched_getaffinity, as nproc counts them), else the
/// cores online; at least 1.
int subd_available_cores(void);

#endif
