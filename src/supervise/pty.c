// SPDX-License-Identifier: Apache-2.0
#include "supervise/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/err.h"
#include "util/fdutil.h"
#include "util/time.h"

void pty_prepare(launch_pty *t, bool stderr_too)
{
    *t = (launch_pty){.on = true, .stderr_too = stderr_too, .sock = -1, .slave = -1};
    t->winsize = (struct winsize){.ws_row = 24, .ws_col = 80};
    for (int fd = 0; fd < 3; fd++) {
        struct termios tio;
        if (tcgetattr(fd, &tio) < 0)
            continue;
        t->termios = tio;
        t->have_termios = true;
        struct winsize ws;
        if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
            t->winsize = ws;
        break;
    }
}

int pty_open_sandbox(launch_pty *t, const char *ptmx, cordon_error *err)
{
    int master = open(ptmx, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot open %s for the command's terminal", ptmx);
    int unlock = 0;
    if (ioctl(master, TIOCSPTLCK, &unlock) < 0) {
        int e = errno;
        close(master);
        return err_set(err, CORDON_STAGE_ROOT, e, "cannot unlock the command's terminal (TIOCSPTLCK)");
    }
    /* The slave through the master, not by name: it is this terminal's, whatever
     * /dev/pts holds. */
    t->slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (t->slave < 0) {
        int e = errno;
        close(master);
        return err_set(err, CORDON_STAGE_ROOT, e, "cannot open the command's terminal (TIOCGPTPEER)");
    }
    if (t->slave < 3) { /* a caller with 0, 1 or 2 closed: keep clear of them */
        int high = fcntl(t->slave, F_DUPFD_CLOEXEC, 3);
        int e = errno;
        close(t->slave);
        t->slave = high;
        if (high < 0) {
            close(master);
            return err_set(err, CORDON_STAGE_ROOT, e, "cannot open the command's terminal");
        }
    }
    if ((t->have_termios && tcsetattr(t->slave, TCSANOW, &t->termios) < 0) ||
        ioctl(t->slave, TIOCSWINSZ, &t->winsize) < 0) {
        int e = errno;
        close(master);
        return err_set(err, CORDON_STAGE_ROOT, e, "cannot set up the command's terminal");
    }
    char byte = 'T';
    int n = send_fds(t->sock, &byte, 1, &master, 1, MSG_NOSIGNAL);
    int e = errno;
    close(master);
    close(t->sock);
    t->sock = -1;
    if (n < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, e, "cannot hand the command's terminal to cordon");
    return 0;
}

int pty_attach(launch_pty *t, cordon_error *err)
{
    for (int fd = 0; fd < (t->stderr_too ? 3 : 2); fd++)
        if (dup2(t->slave, fd) < 0)
            return err_set(err, CORDON_STAGE_EXEC, errno, "cannot give the command its terminal");
    /* (t is PID 1's memory, shared until the exec: PID 1 closes its own copy) */
    close(t->slave);
    /* setsid() made the command a session leader without a terminal: this one becomes
     * its controlling terminal, with the command's process group in the foreground. */
    if (ioctl(0, TIOCSCTTY, 0) < 0)
        return err_set(err, CORDON_STAGE_EXEC, errno, "cannot make the terminal the command's controlling terminal");
    return 0;
}

int pty_lead(launch_pty *t, cordon_error *err)
{
    if (setsid() < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot start the terminal's session");
    if (ioctl(t->slave, TIOCSCTTY, 0) < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot make the command's terminal controlling");
    return 0;
}

int pty_join(launch_pty *t, cordon_error *err)
{
    if (setpgid(0, 0) < 0)
        return err_set(err, CORDON_STAGE_EXEC, errno, "cannot give the command a process group");
    for (int fd = 0; fd < (t->stderr_too ? 3 : 2); fd++)
        if (dup2(t->slave, fd) < 0)
            return err_set(err, CORDON_STAGE_EXEC, errno, "cannot give the command its terminal");
    close(t->slave); /* (PID 1's memory, shared until the exec: PID 1 closes its own copy) */
    return pty_foreground(0, err);
}

int pty_foreground(int fd, cordon_error *err)
{
    /* from a background group of the terminal, which SIGTTOU would stop: blocked meanwhile */
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    if (sigprocmask(SIG_BLOCK, &ttou, &old) < 0)
        return err_set(err, CORDON_STAGE_EXEC, errno, "sigprocmask");
    int r = tcsetpgrp(fd, getpid());
    int e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (r < 0)
        return err_set(err, CORDON_STAGE_EXEC, e, "cannot put the command in the foreground of its terminal");
    return 0;
}

void pty_close_slave(launch_pty *t)
{
    if (t->slave >= 0)
        close(t->slave);
    t->slave = -1;
}

int pty_receive(int sock, int pidfd, long long deadline_ms)
{
    for (;;) {
        int wait_ms = -1;
        if (deadline_ms >= 0) {
            long long left = deadline_ms - now_ms();
            if (left <= 0)
                return -1;
            wait_ms = left > 1000000 ? 1000000 : (int)left;
        }
        struct pollfd fds[2] = {{.fd = sock, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
        int n = poll(fds, 2, wait_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (fds[0].revents) {
            char byte;
            char ctl[CMSG_SPACE(sizeof(int))];
            struct iovec iov = {&byte, 1};
            struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
            ssize_t r;
            do
                r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
            while (r < 0 && errno == EINTR);
            if (r != 1)
                return -1; /* PID 1 closed its end without sending: it failed */
            int fd = -1;
            for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
                    cm->cmsg_len == CMSG_LEN(sizeof(int)))
                    memcpy(&fd, CMSG_DATA(cm), sizeof(int));
            return fd;
        }
        if (fds[1].revents)
            return -1; /* PID 1 is gone */
    }
}
