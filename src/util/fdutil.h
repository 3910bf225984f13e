// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <dirent.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Write/read all of buf, retrying on EINTR and short transfers. */
int write_all(int fd, const void *buf, size_t n);
ssize_t read_all(int fd, void *buf, size_t n);
/* Close every descriptor >= 3 except those in keep[] (n <= CLOSE_FDS_MAX entries; more
 * is EINVAL).  System calls and the stack only.  0, or -1 with errno. */
#define CLOSE_FDS_MAX 256
int close_fds_except(const int *keep, size_t n);
/* Become a janitor (a process that cleans up after a run, also when cordon is killed):
 * a session of its own, so that a signal to cordon's process group does not reach it,
 * nothing open but keep[] (n <= CLOSE_FDS_MAX), and /dev/null as 0, 1 and 2; a janitor
 * that cannot be made so exits (status 1) at once. */
void detach_janitor(const int *keep, size_t n);
/* Remove `name` in the directory `at` and everything below it, never following a
 * symlink (directories the caller may not list are made listable first).  System calls
 * and the stack only: usable in a forked copy of a threaded process.  0 when it is gone
 * (or never was), -1 with errno (ENOTEMPTY while something still writes there). */
int remove_tree_at(int at, const char *name);
/* Mark every descriptor >= 3 close-on-exec. */
int cloexec_all_fds(void);
/* open(path, flags) of a canonical absolute path, failing with ELOOP where any component
 * is a symlink (and never following a magic link): openat2(RESOLVE_NO_SYMLINKS), or where
 * the kernel (before 5.6), a tool such as valgrind or an outer sandbox's seccomp filter
 * refuses openat2 with ENOSYS, the same walk done by hand from "/" with O_NOFOLLOW. */
int open_no_symlinks(const char *path, int flags);

/* A directory stream over a duplicate of the directory fd, from its first entry (the
 * duplicate shares the fd's offset), leaving fd itself open; NULL with errno on error. */
DIR *opendir_dup(int fd);

/* Descriptors passed with a message (SCM_RIGHTS).  fd_msg_init fills mh for one message
 * of len bytes at buf carrying fds[0..n) (n <= FD_MSG_MAX), with iov and ctl (at least
 * FD_MSG_CTL bytes, aligned as a struct cmsghdr) as its parts: ready for sendmsg (or for
 * a raw system call, in a process that must not use the C library).  send_fds sends one
 * such message: 0, or -1 with errno (EINTR retried; a short send is EMSGSIZE). */
#define FD_MSG_MAX 8
#define FD_MSG_CTL (CMSG_SPACE(FD_MSG_MAX * sizeof(int)))
struct msghdr;
struct iovec;
void fd_msg_init(struct msghdr *mh, struct iovec *iov, const void *buf, size_t len, char *ctl, const int *fds,
                 size_t n);
int send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n, int flags);
/* Receive one such message into buf[0..len): its descriptors into fds[0..max) (max <=
 * FD_MSG_MAX), those beyond closed, *nfds how many were kept, *msg_flags the message's
 * (MSG_TRUNC, MSG_CTRUNC).  The bytes received, or -1 with errno (EINTR retried). */
ssize_t recv_fds(int sock, void *buf, size_t len, int *fds, size_t max, size_t *nfds, int *msg_flags, int flags);
