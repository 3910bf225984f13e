// SPDX-License-Identifier: Apache-2.0
/* The command's terminal (CORDON_SPAWN_PTY, `cordon run --tty`): a pseudo-terminal of the
 * sandbox's own devpts, made by PID 1 once the root is built.  PID 1 keeps the slave for
 * the command's 0, 1 and 2 (its controlling terminal, in a session that PID 1 leads with
 * the command's process group in the foreground, so job control works inside: pty_lead)
 * and hands the master to cordon's side over a socket;
 * the caller relays it (the command line to its own terminal, a harness to whatever it
 * drives).  The caller's terminal never reaches the sandbox, so TIOCSTI into it stays
 * impossible (and seccomp refuses TIOCSTI and TIOCLINUX on any terminal). */
#pragma once
#include <stdbool.h>
#include <termios.h>
#include <sys/ioctl.h>

#include "cordon.h"

typedef struct launch_pty {
    bool on;
    bool stderr_too;   /* the pty is the command's stderr as well (it is not piped) */
    int sock;          /* PID 1's end of the socket the master goes through, or -1 */
    int slave;         /* in PID 1, from pty_open_sandbox() until the command runs */
    bool have_termios; /* the caller's terminal settings, copied to the new one */
    struct termios termios;
    struct winsize winsize; /* its window size (24x80 when the caller has no terminal) */
} launch_pty;

/* In the parent, before the clone: what the new terminal starts as, from the first of
 * the caller's 0, 1, 2 that is a terminal (its settings and window size), else the
 * kernel's defaults and 24 rows of 80 columns. */
void pty_prepare(launch_pty *t, bool stderr_too);

/* In PID 1 (or --isolation landlock's supervisor), after the root is built: open a new
 * terminal on `ptmx` (inside the new root: its own devpts), give it the caller's settings,
 * send the master to cordon's side and keep the slave.  -1 with err filled. */
int pty_open_sandbox(launch_pty *t, const char *ptmx, cordon_error *err);

/* In the command's process, after setsid(): the slave becomes 0, 1 (and 2) and the
 * controlling terminal. */
int pty_attach(launch_pty *t, cordon_error *err);

/* A run's terminal, so that job control reaches the command itself (^Z to `cordon run --
 * vim x` stops it, and cordon's relay, src/cli/tty.c, stops with it): PID 1, before it
 * starts the command, leads a new session whose controlling terminal is the slave
 * (pty_lead), and the command's process makes a process group of its own in that session,
 * the terminal's foreground one, and takes the slave as 0, 1 (and 2) (pty_join).  A
 * command that led its own session would be alone in a process group without a parent in
 * its session, an orphaned one, to which the kernel does not deliver the terminal's
 * SIGTSTP.  -1 with err filled. */
int pty_lead(launch_pty *t, cordon_error *err);
int pty_join(launch_pty *t, cordon_error *err);
/* The calling process's group, already one of its own in the session of fd's terminal,
 * becomes that terminal's foreground one (pty_join; a session command's terminal, whose
 * session its shepherd leads: src/session/shepherd.c).  -1 with err filled. */
int pty_foreground(int fd, cordon_error *err);

/* In PID 1 once the command's process exists: PID 1's copy of the slave goes, so that
 * the master sees the end (EIO) when the command and all it started have closed theirs. */
void pty_close_slave(launch_pty *t);

/* On cordon's side: wait for the master on `sock` while PID 1 (`pidfd`) lives, at most
 * until `deadline_ms` (CLOCK_MONOTONIC, -1: no limit).  Returns the master (close-on-exec),
 * or -1 when PID 1 ended (or gave up) before sending one: its report says why. */
int pty_receive(int sock, int pidfd, long long deadline_ms);
