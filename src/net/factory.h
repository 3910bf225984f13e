// SPDX-License-Identifier: Apache-2.0
/* The network helper's socket factory for --publish-port (net/helper.c asks it for
 * sockets): a process in the sandbox's user and network namespaces that makes
 * unconnected TCP sockets there and passes them back. */
#pragma once

/* Start the factory, entering the namespaces USERNS and NETNS (proc_fork: *pidfd gets its
 * pidfd).  Returns the helper's end of its socket, or -1.  Write '4' or '6' (the family)
 * there; each byte is answered with an int32_t errno (0) and, on success, a socket. */
int net_factory_spawn(int userns, int netns, int *pidfd);
/* Before the helper goes: the factory too (it ends at EOF on its socket *fd), reaped here
 * so that it is never re-parented to the caller's subreaper with a SIGCHLD. */
void net_factory_stop(int *fd, int *pidfd);
