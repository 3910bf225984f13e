// SPDX-License-Identifier: Apache-2.0
/* The sweep of a session's PID 1 (sess_pid1.h): PID 1's children that are not its own.
 * Raw system calls only (raw.h): it also runs while a command's process may be using the
 * C library in PID 1's memory. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/raw.h"
#include "session/sess_pid1.h"

/* Everything dies (kill(-1) from PID 1 reaches every other process of the namespace):
 * the owner is gone, or the session can no longer be run safely. */
void sess_end(launch *l, report_kind why)
{
    /* raw first: this may be called while a command's process uses the C library in
     * PID 1's memory (the sweep gave up); once everything is dead, nothing is shared */
    RAW(SYS_kill, -1, SIGKILL);
    long w;
    while ((w = RAW(SYS_wait4, -1, 0, __WALL, 0)) > 0 || w == -EINTR)
        ;
    if (why)
        report_send(l->report_fd, why, NULL, 0, NULL);
    _exit(why ? 0 : CORDON_EXIT_SETUP);
}

/* The decimal numbers in buf[0..len). */
static int parse_pids(const char *buf, size_t len, pid_t *out, int max)
{
    int k = 0;
    long v = -1;
    for (size_t i = 0; i <= len && k < max; i++) {
        char c = i < len ? buf[i] : ' ';
        if (c >= '0' && c <= '9') {
            v = (v < 0 ? 0 : v * 10) + (c - '0');
        } else if (v >= 0) {
            out[k++] = (pid_t)v;
            v = -1;
        }
    }
    return k;
}

static long read_file_raw(int dir, const char *name, char *buf, size_t size)
{
    long fd = RAW(SYS_openat, dir, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fd;
    size_t have = 0;
    long n;
    while (have < size && ((n = RAW(SYS_read, fd, buf + have, size - have)) > 0 || n == -EINTR))
        if (n > 0)
            have += (size_t)n;
    RAW(SYS_close, fd);
    return (long)have;
}

static int read_children(sess_mem *m)
{
    int max = (int)(sizeof m->kids / sizeof m->kids[0]);
    long n = read_file_raw(m->proc_fd, "1/task/1/children", m->scratch, sizeof m->scratch);
    if (n >= 0)
        return parse_pids(m->scratch, (size_t)n, m->kids, max);
    /* without CONFIG_PROC_CHILDREN: every process whose parent is 1 */
    long dfd = RAW(SYS_openat, m->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int k = 0;
    _Alignas(8) char dents[4096];
    long nread;
    while (k < max && (nread = RAW(SYS_getdents64, dfd, dents, sizeof dents)) > 0) {
        for (long off = 0; off < nread && k < max;) {
            struct raw_dirent {
                uint64_t d_ino;
                int64_t d_off;
                unsigned short d_reclen;
                unsigned char d_type;
                char d_name[];
            } *d = (struct raw_dirent *)(dents + off);
            off += d->d_reclen;
            if (d->d_name[0] < '1' || d->d_name[0] > '9')
                continue;
            char path[32];
            size_t l = 0;
            for (; l < 20 && d->d_name[l]; l++)
                path[l] = d->d_name[l];
            for (const char *t = "/stat"; *t; t++)
                path[l++] = *t;
            path[l] = '\0';
            long r = read_file_raw(m->proc_fd, path, m->scratch, sizeof m->scratch);
            if (r <= 0)
                continue;
            /* "pid (comm) S ppid ...": comm may hold anything, the last ')' ends it */
            long rp = -1;
            for (long i = 0; i < r; i++)
                if (m->scratch[i] == ')')
                    rp = i;
            pid_t v[2];
            if (rp < 0 || rp + 4 >= r || parse_pids(m->scratch + rp + 4, (size_t)(r - rp - 4), &v[1], 1) != 1 ||
                v[1] != 1 || parse_pids(m->scratch, (size_t)rp, &v[0], 1) != 1)
                continue;
            m->kids[k++] = v[0];
        }
    }
    RAW(SYS_close, dfd);
    return k;
}

static bool known_child(const launch *l, const sess_mem *m, pid_t pid)
{
    if (m->spare.shep > 0 && m->spare.shep == pid)
        return true;
    for (int i = 0; i < SESS_SLOTS; i++)
        if (m->slots[i].state != SLOT_FREE && m->slots[i].shep == pid)
            return true;
    if (l->cc)
        for (size_t i = 0; i < l->cc->n_workers; i++)
            if (l->cc->workers[i].pid == pid)
                return true;
    return false;
}

/* A process PID 1 reaped: the command's own process of a slot whose shepherd died? */
void sess_note_leader(sess_mem *m, pid_t pid, int status)
{
    for (int i = 0; i < SESS_SLOTS; i++) {
        sess_slot *s = &m->slots[i];
        if (s->state != SLOT_FREE && s->leader == pid && !s->have_status) {
            s->status = status;
            s->have_status = true;
        }
    }
}

/* Kill every child of PID 1 that is neither a live shepherd nor a creation-control
 * worker: the trees of shepherds that died (killed by PID 1 for a kill or a timeout, or
 * by someone else), generation by generation.  What cannot be killed this way (a
 * process tree that forks faster than it dies) ends the whole session. */
void sess_sweep(launch *l, sess_mem *m)
{
    for (int round = 0; round < 1000; round++) {
        int n = read_children(m);
        if (n < 0)
            sess_end(l, 0); /* cannot tell who is whose: fail closed */
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (known_child(l, m, m->kids[i]))
                continue;
            RAW(SYS_kill, m->kids[i], SIGKILL);
            m->kids[k++] = m->kids[i];
        }
        if (k == 0)
            return;
        for (int i = 0; i < k; i++) {
            int status = 0;
            long w;
            do
                w = RAW(SYS_wait4, m->kids[i], &status, __WALL, 0);
            while (w == -EINTR);
            if (w > 0)
                sess_note_leader(m, (pid_t)w, status);
        }
    }
    sess_end(l, 0);
}
