// SPDX-License-Identifier: Apache-2.0
/* `cordon run --tty`: the command runs on a terminal of the sandbox's own
 * (CORDON_SPAWN_PTY), and this relays it to cordon's: keystrokes in, output out, the
 * window size across, with cordon's terminal in raw mode meanwhile so that ^C, ^Z and ^\
 * reach the terminal inside as bytes and its line discipline signals the command's
 * foreground job there.
 *
 * cordon's terminal is put back as it was on every way out: the run ending, an error,
 * a signal that stops cordon (restored until SIGCONT) or ends it (restored, then the
 * signal's default action).  Only SIGKILL cannot be caught; `stty sane` then.
 *
 * Job control reaches the caller's shell as it would without a sandbox: when the command
 * itself stops (^Z to `cordon run -- vim x`, or to `cordon session exec NAME -- vim x`,
 * whose relay this is too: the foreground job inside is the command's
 * own process group, and it is stopped), cordon stops too, with its terminal restored, so
 * the shell gets its prompt back; `fg` continues cordon, which puts raw mode back and
 * continues the job inside.  A job of a shell inside (`bash -i`) stopping is that shell's
 * business: its process group is not the command's. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"

/* What the signal handlers need: as in main.c, globals, because a handler has no other
 * way to reach them; written before the handlers are installed or with signals blocked. */
static cordon_proc *volatile relay_proc;
static volatile int relay_master = -1;
static volatile sig_atomic_t relay_pending;
static int term_fd = -1;          /* cordon's terminal whose mode is changed (stdin), or -1 */
static int size_fd = -1;          /* where the window size comes from */
static struct termios term_saved; /* its mode before the run */
static volatile sig_atomic_t raw_wanted, raw_on;

static void raw_set(void)
{
    struct termios t = term_saved;
    t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF);
    t.c_oflag &= ~(tcflag_t)OPOST;
    t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB);
    t.c_cflag |= CS8;
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    if (tcsetattr(term_fd, TCSANOW, &t) == 0)
        raw_on = 1;
}

static void raw_restore(int when)
{
    if (raw_on && tcsetattr(term_fd, when, &term_saved) == 0)
        raw_on = 0;
}

static void copy_window_size(void)
{
    struct winsize ws;
    int m = relay_master;
    if (m >= 0 && size_fd >= 0 && ioctl(size_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        (void)ioctl(m, TIOCSWINSZ, &ws); /* the kernel sends SIGWINCH inside */
}

static void to_command(int sig)
{
    cordon_proc *c = relay_proc;
    if (c)
        cordon_proc_kill(c, sig, NULL);
    else
        relay_pending = sig;
}

static void on_signal(int sig)
{
    int saved = errno;
    int m = relay_master;
    switch (sig) {
    case SIGWINCH: copy_window_size(); break;
    case SIGINT:
    case SIGQUIT:
        /* as the terminal would: to the foreground job inside, not only the command */
        if (m < 0 || ioctl(m, TIOCSIG, sig) < 0)
            to_command(sig);
        break;
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
        /* cordon itself is stopped (kill -TSTP, or it runs in the background): its
         * terminal as it was until it continues; the sandbox runs on */
        raw_restore(TCSANOW);
        raise(SIGSTOP);
        break;
    case SIGCONT:
        if (raw_wanted && !raw_on)
            raw_set();
        copy_window_size();
        /* the command's whole process group, which ^Z stopped with cordon (follow_stop):
         * PID 1 continues the group (TIOCSIG on the master sends SIGINT, SIGQUIT and
         * SIGTSTP only) */
        to_command(sig);
        break;
    default: /* SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 */ to_command(sig); break;
    }
    errno = saved;
}

/* A signal that would end cordon: the terminal first, then the default action. */
static void on_fatal(int sig)
{
    raw_restore(TCSANOW);
    signal(sig, SIG_DFL);
    raise(sig);
}

static const int relayed[] = {SIGINT,   SIGTERM, SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
                              SIGWINCH, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU};
static const int fatal[] = {SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGIO,   SIGPWR,
                            SIGSYS,  SIGSEGV,   SIGBUS,  SIGILL,  SIGFPE,  SIGABRT, SIGTRAP};

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof relayed / sizeof *relayed; i++)
        sigaction(relayed[i], &sa, NULL);
    sa.sa_handler = on_fatal;
    sa.sa_flags = SA_RESTART | SA_NODEFER | SA_RESETHAND;
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
        sigaction(fatal[i], &sa, NULL);
    /* a closed stdout shows as EPIPE: the output is dropped, the run goes on */
    signal(SIGPIPE, SIG_IGN);
}

static void block_all(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, old);
}

#define OUT_CAP (256 * 1024)
#define IN_CAP  4096

typedef struct relay {
    int master;
    bool master_done; /* EIO: every process inside has closed the terminal */
    bool in_done;     /* stdin at its end (or unreadable) */
    bool out_dead;    /* stdout is gone: output is dropped */
    char in[IN_CAP];
    size_t in_len, in_off;
    char *out;
} relay;

static void put_out(relay *r, size_t n)
{
    if (r->out_dead || n == 0)
        return;
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(STDOUT_FILENO, r->out + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            r->out_dead = true;
            return;
        }
        off += (size_t)w;
    }
}

/* What the master holds, until it is empty (EAGAIN) or ends (EIO), out to stdout. */
static void drain_master(relay *r)
{
    for (;;) {
        size_t len = 0;
        bool more = true;
        while (len < OUT_CAP) {
            ssize_t n = read(r->master, r->out + len, OUT_CAP - len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n > 0) {
                len += (size_t)n;
                continue;
            }
            if (n == 0 || errno != EAGAIN)
                r->master_done = true;
            more = false;
            break;
        }
        put_out(r, len);
        if (!more)
            return;
    }
}

/* stdin's end: a terminal in canonical mode inside is told as a terminal would be (its
 * end-of-file character); one in raw mode is left alone. */
static void input_ended(relay *r)
{
    r->in_done = true;
    struct termios t;
    if (tcgetattr(r->master, &t) == 0 && (t.c_lflag & ICANON)) {
        char eof = (char)t.c_cc[VEOF];
        if (write(r->master, &eof, 1) < 0) {
            /* the command is gone or not reading: nothing to tell */
        }
    }
}

/* The command itself stopped: the terminal's foreground process group inside is the
 * command's (its leader is a child of the session's leader: PID 1, src/supervise/pty.h, or
 * a session command's shepherd, src/session/shepherd.c; no shell inside gave the terminal
 * to a job of its own) and that process is stopped.  Its pid as cordon sees it (TIOCGPGRP
 * on the master answers in cordon's PID namespace, as /proc does), or 0. */
static pid_t command_stopped(int master)
{
    pid_t pg;
    if (ioctl(master, TIOCGPGRP, &pg) < 0 || pg <= 0)
        return 0;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pg);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* after the name, which may hold anything */
    char state;
    int ppid, pgrp, sid;
    if (!p || sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4)
        return 0;
    return state == 'T' && pgrp == (int)pg && ppid == sid ? pg : 0;
}

/* When the command stopped, stop cordon as a shell's job stops (SIGTSTP's default action,
 * which the kernel discards in an orphaned process group, as it would for the command
 * itself), with the terminal restored; once continued, raw mode again and the command's
 * process group continued (the SIGCONT handler), and no second stop until the command has
 * run again. */
static void follow_stop(relay *r, bool *stopped)
{
    if (!raw_wanted)
        return;
    pid_t pg = command_stopped(r->master);
    if (*stopped) {
        *stopped = pg != 0;
        return;
    }
    if (!pg)
        return;
    *stopped = true;
    drain_master(r); /* what it wrote before it stopped (a full-screen program's restore) */
    sigset_t old;
    block_all(&old);
    raw_restore(TCSADRAIN);
    struct sigaction dfl = {.sa_handler = SIG_DFL}, saved;
    sigaction(SIGTSTP, &dfl, &saved);
    sigprocmask(SIG_SETMASK, &old, NULL);
    raise(SIGTSTP);
    block_all(&old);
    sigaction(SIGTSTP, &saved, NULL);
    if (!raw_on)
        raw_set();
    copy_window_size();
    sigprocmask(SIG_SETMASK, &old, NULL);
    /* (the command continued too: the SIGCONT handler, which ran on the way out of raise) */
}

static void relay_loop(relay *r, cordon_proc *c)
{
    int exit_fd = cordon_proc_exit_fd(c);
    bool stopped = false;
    while (!r->master_done) {
        struct pollfd fds[3] = {
            {.fd = r->in_done || r->in_len ? -1 : STDIN_FILENO, .events = POLLIN},
            {.fd = r->master, .events = (short)(POLLIN | (r->in_len ? POLLOUT : 0))},
            {.fd = exit_fd, .events = POLLIN},
        };
        /* under a terminal, a look at the command's state now and then (follow_stop) */
        int n = poll(fds, 3, raw_wanted ? 200 : -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        follow_stop(r, &stopped);
        if (fds[1].revents & (POLLIN | POLLHUP | POLLERR))
            drain_master(r);
        if (fds[0].revents) {
            ssize_t got = read(STDIN_FILENO, r->in, sizeof r->in);
            if (got > 0) {
                r->in_len = (size_t)got;
                r->in_off = 0;
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                input_ended(r);
            }
        }
        if (r->in_len) {
            ssize_t w = write(r->master, r->in + r->in_off, r->in_len);
            if (w > 0) {
                r->in_off += (size_t)w;
                r->in_len -= (size_t)w;
            } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                r->in_len = 0;
            }
        }
        if (fds[2].revents) {
            /* the whole sandbox is gone: what the terminal still holds is all there is */
            drain_master(r);
            break;
        }
    }
}

bool cli_tty_wanted(int tty)
{
    if (tty >= 0)
        return tty == 1;
    /* by default only in the foreground of its terminal: `cordon run -- make &` from a
     * shell keeps running (a terminal of its own would stop it at its first read or mode
     * change, as it stops any terminal program in the background) */
    return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

void cli_tty_prepare(void)
{
    install_handlers();
    for (int fd = 0; fd < 3 && size_fd < 0; fd++)
        if (isatty(fd))
            size_fd = fd;
}

int cli_tty_relay(cordon_proc *c, cordon_result *res, cordon_error *err)
{
    int master = cordon_proc_pty(c);
    if (master >= 0)
        fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    sigset_t old;
    block_all(&old);
    relay_proc = c;
    relay_master = master;
    if (master >= 0 && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &term_saved) == 0) {
        term_fd = STDIN_FILENO;
        raw_wanted = 1;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (relay_pending)
        cordon_proc_kill(c, relay_pending, NULL);
    if (raw_wanted) {
        block_all(&old);
        raw_set();
        sigprocmask(SIG_SETMASK, &old, NULL);
    }
    if (master >= 0) {
        copy_window_size(); /* changed since the terminal was made? */
        relay r = {.master = master, .out = malloc(OUT_CAP)};
        if (r.out) {
            relay_loop(&r, c);
            free(r.out);
        }
    }
    int w = cordon_proc_wait(c, -1, res, err);
    if (master >= 0) {
        /* every process of the sandbox is dead: the rest of its output */
        relay r = {.master = master, .out = malloc(OUT_CAP)};
        if (r.out) {
            drain_master(&r);
            free(r.out);
        }
    }
    block_all(&old);
    raw_wanted = 0;
    raw_restore(TCSADRAIN);
    relay_master = -1;
    relay_proc = NULL;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return w;
}

int cli_run_tty(const cordon_policy *pol, char **command, cordon_result *res, cordon_error *err)
{
    cli_tty_prepare();
    cordon_proc *c;
    if (cordon_spawn(pol, command, CORDON_SPAWN_PTY, &c, err) < 0)
        return -1;
    int w = cli_tty_relay(c, res, err);
    cordon_proc_free(c); /* (all of it has ended: the result is res's own) */
    if (w < 0)
        return -1;
    return res->started || res->timed_out ? 0 : -1;
}
