/* `cordon run --tty`: the command runs on a terminal of the sandbox's own
 * (CORDON_SPAWN_PTY), and this relays it to cordon's: keystrokes in, output out, the
 * window size across, with cordon's terminal in raw mode meanwhile so that ^C, ^Z and ^\
 * reach the terminal inside as bytes and its line discipline signals the command's
 * foreground job there.
 *
 * cordon's terminal is put back as it was on every way out: the run ending, an error,
 * a signal that stops cordon (restored until SIGCONT) or ends it (restored, then the
 * signal's default action).  Only SIGKILL cannot be caught; `stty sane` then. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
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

static void relay_loop(relay *r, cordon_proc *c)
{
    int exit_fd = cordon_proc_exit_fd(c);
    while (!r->master_done) {
        struct pollfd fds[3] = {
            {.fd = r->in_done || r->in_len ? -1 : STDIN_FILENO, .events = POLLIN},
            {.fd = r->master, .events = (short)(POLLIN | (r->in_len ? POLLOUT : 0))},
            {.fd = exit_fd, .events = POLLIN},
        };
        int n = poll(fds, 3, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
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

int cli_run_tty(const cordon_policy *pol, char **command, cordon_result *res, cordon_error *err)
{
    install_handlers();
    for (int fd = 0; fd < 3 && size_fd < 0; fd++)
        if (isatty(fd))
            size_fd = fd;
    cordon_proc *c;
    if (cordon_spawn(pol, command, CORDON_SPAWN_PTY, &c, err) < 0)
        return -1;
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
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (w < 0)
        return -1;
    return res->started || res->timed_out ? 0 : -1;
}
