// SPDX-License-Identifier: Apache-2.0
/* The library's own child processes (the sandbox's PID 1, janitors, probes) are cloned
 * with no exit signal and a pidfd: the caller's SIGCHLD handler never runs for them, its
 * waitpid(-1) never reaps them (a child that sends no SIGCHLD is a "clone" child, which
 * only __WCLONE/__WALL waits see), and SIGCHLD ignored by the caller does not reap them
 * behind cordon's back.  Each is reaped through its pidfd (or its pid with __WALL). */
#pragma once
#include <signal.h>
#include <sys/types.h>

/* Like fork(), without an exit signal; *pidfd gets a close-on-exec pidfd when pidfd is
 * not NULL.  The child is a copy of a possibly multi-threaded process: only system calls
 * there (no malloc, no stdio).  -1 with errno on failure. */
pid_t proc_fork(int *pidfd);
/* Wait for the child of proc_fork() behind pidfd to end and reap it (EINTR retried);
 * info may be NULL.  -1 with errno. */
int proc_reap(int pidfd, siginfo_t *info);
/* The same by pid, for children whose pidfd is not kept. */
int proc_reap_pid(pid_t pid);
/* pidfd_send_signal(2): async-signal-safe. */
int proc_signal(int pidfd, int sig);
/* A "Name:\tvalue" file of /proc (/proc/PID/status, a pidfd's /proc/self/fdinfo/FD) into
 * buf, NUL-terminated (no symlink followed at its last component): its length, or -1
 * with errno. */
ssize_t proc_status_read(const char *path, char *buf, size_t n);
/* The number after "name:" in such a text, in `base` (10, or 8 for Umask); -1 when there
 * is no such line. */
long proc_status_field(const char *text, const char *name, int base);
