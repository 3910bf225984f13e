// SPDX-License-Identifier: Apache-2.0
/* kernel: interfaces that bypass the namespaces or widen the kernel's attack surface.
 *
 *   kernel
 *
 * io_uring_setup (its operations are not system calls: seccomp cannot see them),
 * socket(AF_VSOCK) stream and datagram (vsock reaches the hypervisor and other VMs and
 * is not network-namespaced). Positive controls: socket(AF_UNIX) and socket(AF_INET)
 * work. */
#include "esc.h"

#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/socket.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static void try_socket(const char *label, int family, int type)
{
    int s = socket(family, type | SOCK_CLOEXEC, 0);
    report(label, s);
    if (s >= 0)
        close(s);
}

int main(void)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    long fd = syscall(SYS_io_uring_setup, 4, &p);
    report("io_uring_setup", fd);
    if (fd >= 0)
        close((int)fd);
    try_socket("vsock_stream", AF_VSOCK, SOCK_STREAM);
    try_socket("vsock_dgram", AF_VSOCK, SOCK_DGRAM);
    try_socket("control_unix", AF_UNIX, SOCK_STREAM);
    try_socket("control_inet", AF_INET, SOCK_STREAM);
    return 0;
}
