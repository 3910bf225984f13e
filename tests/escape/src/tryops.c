// SPDX-License-Identifier: Apache-2.0
/* tryops: a sequence of single file-system and socket attempts, one report line each.
 *
 *   tryops OP LABEL ARG... [OP LABEL ARG...]...
 *
 *   read LABEL PATH          open O_RDONLY and read; "LABEL ok <first line>"
 *   openw LABEL PATH         open O_WRONLY (nothing is written)
 *   write LABEL PATH TEXT    open O_WRONLY|O_CREAT|O_TRUNC and write TEXT
 *   append LABEL PATH TEXT   open O_WRONLY|O_APPEND and write TEXT
 *   link LABEL FROM TO       link(2)
 *   linkat LABEL FROM TO     linkat(AT_FDCWD, FROM, AT_FDCWD, TO, AT_SYMLINK_FOLLOW)
 *   ls LABEL DIR             "LABEL ok n=<entries> <names>" (without . and ..)
 *   mkdir LABEL PATH         mkdir(2)
 *   unlink LABEL PATH        unlink(2)
 *   connect LABEL ADDR       AF_UNIX stream connect; ADDR "@name" is abstract; on
 *                            success "LABEL ok <first line the server sent>"
 *   loopback LABEL NAME      an abstract socket of our own: listen on @NAME, connect to
 *                            it, pass a line through (the positive control for connect)
 *   ownstream LABEL PATH     a pathname stream socket of our own: bind PATH, listen,
 *                            connect to it, pass a line through
 *   owndgram LABEL PATH      a pathname datagram socket of our own: bind PATH, send to it
 *                            with sendto and sendmsg, receive both
 *   pair LABEL               socketpair(2): a line through a stream pair, and a descriptor
 *                            (SCM_RIGHTS) through a datagram pair
 *   sendto LABEL PATH        sendto(2) a datagram to the socket at PATH
 *   sendmsg LABEL PATH       the same datagram by sendmsg(2), the address in the msghdr
 *   sendmmsg LABEL PATH      the same by sendmmsg(2), one message; "ok" when it was sent
 *   connectfd LABEL PATH     open PATH with O_PATH and connect to /proc/self/fd/N
 *   fdlist LABEL             the open descriptors, from /proc/self/fd, without the one
 *                            used to list them: "LABEL ok 0 1 2"
 *   fdread LABEL N           read from descriptor N
 *   fdopenat LABEL N NAME    openat(N, NAME) and read
 *   environ LABEL PATH NAME  read PATH (an environ file); "LABEL ok present|absent" for
 *                            NAME= among its entries
 *   status LABEL FIELD       the value of FIELD in /proc/self/status
 *   ids LABEL                "LABEL ok uid=R/E/S gid=R/E/S"
 *   landlock_abi LABEL       the kernel's Landlock ABI version
 */
#include "esc.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static void first_line(const char *label, int fd)
{
    char buf[4096];
    ssize_t n = read_some(fd, buf, sizeof buf);
    if (n < 0) {
        report(label, -1);
        return;
    }
    buf[strcspn(buf, "\n")] = '\0';
    reportf(label, "%s", buf);
}

static int op_read(const char *label, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return (int)report(label, -1);
    first_line(label, fd);
    close(fd);
    return 0;
}

static int op_write(const char *label, const char *path, const char *text, int flags)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, 0644);
    if (fd < 0)
        return (int)report(label, -1);
    ssize_t n = text ? write(fd, text, strlen(text)) : 0;
    close(fd);
    return (int)report(label, n);
}

static int op_ls(const char *label, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return (int)report(label, -1);
    char names[4096] = "";
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        n++;
        if (strlen(names) + strlen(de->d_name) + 2 < sizeof names) {
            strcat(names, " ");
            strcat(names, de->d_name);
        }
    }
    closedir(d);
    reportf(label, "n=%d%s", n, names);
    return 0;
}

static int op_connect(const char *label, const char *addr)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len;
    size_t n = strlen(addr);
    if (addr[0] == '@') {
        if (n > sizeof sa.sun_path)
            n = sizeof sa.sun_path;
        memcpy(sa.sun_path + 1, addr + 1, n - 1);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    } else {
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", addr);
        len = sizeof sa;
    }
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return (int)report(label, -1);
    if (connect(s, (struct sockaddr *)&sa, len) < 0) {
        report(label, -1);
        close(s);
        return -1;
    }
    struct timeval tv = {.tv_sec = 3};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    first_line(label, s);
    close(s);
    return 0;
}

static socklen_t path_addr(struct sockaddr_un *sa, const char *path)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    snprintf(sa->sun_path, sizeof sa->sun_path, "%s", path);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(sa->sun_path) + 1);
}

static int op_ownstream(const char *label, const char *path)
{
    struct sockaddr_un sa;
    socklen_t len = path_addr(&sa, path);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&sa, len) < 0 || listen(l, 1) < 0 ||
        connect(c, (struct sockaddr *)&sa, len) < 0)
        return (int)report(label, -1);
    int a = accept(l, NULL, NULL);
    char buf[8] = "";
    long r = a < 0 ? -1 : write(a, "hi", 2) == 2 && read(c, buf, sizeof buf) == 2 ? 0 : -1;
    if (a >= 0)
        close(a);
    close(l);
    close(c);
    return (int)report(label, r);
}

static int op_owndgram(const char *label, const char *path)
{
    struct sockaddr_un sa;
    socklen_t len = path_addr(&sa, path);
    int srv = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int c = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (srv < 0 || c < 0 || bind(srv, (struct sockaddr *)&sa, len) < 0 ||
        sendto(c, "one", 3, 0, (struct sockaddr *)&sa, len) != 3)
        return (int)report(label, -1);
    struct iovec iov = {(void *)"two", 3};
    struct msghdr mh = {.msg_name = &sa, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1};
    if (sendmsg(c, &mh, 0) != 3)
        return (int)report(label, -1);
    char a[8] = "", b[8] = "";
    long r =
        recv(srv, a, sizeof a, 0) == 3 && recv(srv, b, sizeof b, 0) == 3 && !memcmp(a, "one", 3) && !memcmp(b, "two", 3)
            ? 0
            : (errno = EIO, -1);
    close(srv);
    close(c);
    return (int)report(label, r);
}

static int op_pair(const char *label)
{
    int s[2], d[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) < 0 ||
        socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, d) < 0)
        return (int)report(label, -1);
    char buf[8] = "";
    if (write(s[0], "hi", 2) != 2 || read(s[1], buf, sizeof buf) != 2)
        return (int)report(label, -1);
    /* a descriptor through sendmsg: the read end of a pipe holding "fd" */
    int p[2];
    if (pipe(p) < 0 || write(p[1], "fd", 2) != 2)
        return (int)report(label, -1);
    _Alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = {(void *)"x", 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &p[0], sizeof(int));
    if (sendmsg(d[0], &mh, 0) != 1)
        return (int)report(label, -1);
    close(p[0]);
    char x;
    struct iovec riov = {&x, 1};
    memset(ctl, 0, sizeof ctl);
    struct msghdr rh = {.msg_iov = &riov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    if (recvmsg(d[1], &rh, 0) != 1 || !(cm = CMSG_FIRSTHDR(&rh)) || cm->cmsg_type != SCM_RIGHTS)
        return (int)report(label, (errno = EIO, -1));
    int got;
    memcpy(&got, CMSG_DATA(cm), sizeof got);
    memset(buf, 0, sizeof buf);
    long r = read(got, buf, sizeof buf) == 2 && !memcmp(buf, "fd", 2) ? 0 : (errno = EIO, -1);
    return (int)report(label, r);
}

static int op_sendto(const char *label, const char *path)
{
    struct sockaddr_un sa;
    socklen_t len = path_addr(&sa, path);
    int c = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (c < 0)
        return (int)report(label, -1);
    long r = sendto(c, "from-inside", 11, 0, (struct sockaddr *)&sa, len) == 11 ? 0 : -1;
    report(label, r);
    close(c);
    return 0;
}

/* sendmsg (mmsg false) or sendmmsg (true) of "from-inside" to the socket at PATH */
static int op_sendmsg(const char *label, const char *path, bool mmsg)
{
    struct sockaddr_un sa;
    socklen_t len = path_addr(&sa, path);
    int c = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (c < 0)
        return (int)report(label, -1);
    struct iovec iov = {(void *)"from-inside", 11};
    struct mmsghdr mm = {.msg_hdr = {.msg_name = &sa, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1}};
    long r =
        mmsg ? (sendmmsg(c, &mm, 1, 0) == 1 && mm.msg_len == 11 ? 0 : -1) : (sendmsg(c, &mm.msg_hdr, 0) == 11 ? 0 : -1);
    report(label, r);
    close(c);
    return 0;
}

/* connect to the socket file at PATH through /proc/self/fd/N of an O_PATH descriptor */
static int op_connectfd(const char *label, const char *path)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return (int)report(label, -1);
    char via[64];
    snprintf(via, sizeof via, "/proc/self/fd/%d", fd);
    int r = op_connect(label, via);
    close(fd);
    return r;
}

static int op_loopback(const char *label, const char *name)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    if (n + 1 > sizeof sa.sun_path)
        n = sizeof sa.sun_path - 1;
    memcpy(sa.sun_path + 1, name, n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&sa, len) < 0 || listen(l, 1) < 0 ||
        connect(c, (struct sockaddr *)&sa, len) < 0)
        return (int)report(label, -1);
    int a = accept(l, NULL, NULL);
    char buf[8] = "";
    long r = a < 0 ? -1 : write(a, "hi", 2) == 2 && read(c, buf, sizeof buf) == 2 ? 0 : -1;
    if (a >= 0)
        close(a);
    close(l);
    close(c);
    return (int)report(label, r);
}

static int op_fdlist(const char *label)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return (int)report(label, -1);
    int self = dirfd(d);
    int fds[256], n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 256) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        int fd = atoi(de->d_name);
        if (fd != self)
            fds[n++] = fd;
    }
    closedir(d);
    /* readdir of /proc/self/fd is in order, but be sure */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
            int t = fds[j];
            fds[j] = fds[j - 1];
            fds[j - 1] = t;
        }
    char out[2048] = "";
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%d", i ? " " : "", fds[i]);
    reportf(label, "%s", out);
    return 0;
}

static int op_environ(const char *label, const char *path, const char *name)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return (int)report(label, -1);
    static char buf[1 << 20];
    ssize_t n = read_some(fd, buf, sizeof buf);
    close(fd);
    if (n < 0)
        return (int)report(label, -1);
    size_t nl = strlen(name);
    bool found = false;
    for (ssize_t off = 0; off < n;) {
        const char *e = buf + off;
        size_t el = strnlen(e, (size_t)(n - off));
        if (el > nl && !strncmp(e, name, nl) && e[nl] == '=')
            found = true;
        off += (ssize_t)el + 1;
    }
    reportf(label, "%s bytes=%zd", found ? "present" : "absent", n);
    return 0;
}

static int op_status(const char *label, const char *field)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return (int)report(label, -1);
    char line[512];
    size_t fl = strlen(field);
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, field, fl) && line[fl] == ':') {
            char *v = line + fl + 1;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = '\0';
            reportf(label, "%s", v);
            fclose(f);
            return 0;
        }
    }
    fclose(f);
    errno = ENOENT;
    return (int)report(label, -1);
}

int main(int argc, char **argv)
{
    int i = 1;
    while (i < argc) {
        const char *op = argv[i];
        int left = argc - i - 1;
#define NEED(k)                                                          \
    do {                                                                 \
        if (left < (k)) {                                                \
            fprintf(stderr, "tryops: %s needs %d arguments\n", op, (k)); \
            return 2;                                                    \
        }                                                                \
    } while (0)
        const char *a = left > 0 ? argv[i + 1] : NULL, *b = left > 1 ? argv[i + 2] : NULL,
                   *c = left > 2 ? argv[i + 3] : NULL, *d = left > 3 ? argv[i + 4] : NULL;
        if (!strcmp(op, "read")) {
            NEED(2);
            op_read(a, b);
            i += 3;
        } else if (!strcmp(op, "openw")) {
            NEED(2);
            op_write(a, b, NULL, 0);
            i += 3;
        } else if (!strcmp(op, "write")) {
            NEED(3);
            op_write(a, b, c, O_CREAT | O_TRUNC);
            i += 4;
        } else if (!strcmp(op, "append")) {
            NEED(3);
            op_write(a, b, c, O_APPEND);
            i += 4;
        } else if (!strcmp(op, "link")) {
            NEED(3);
            report(a, link(b, c));
            i += 4;
        } else if (!strcmp(op, "linkat")) {
            NEED(3);
            report(a, linkat(AT_FDCWD, b, AT_FDCWD, c, AT_SYMLINK_FOLLOW));
            i += 4;
        } else if (!strcmp(op, "ls")) {
            NEED(2);
            op_ls(a, b);
            i += 3;
        } else if (!strcmp(op, "mkdir")) {
            NEED(2);
            report(a, mkdir(b, 0755));
            i += 3;
        } else if (!strcmp(op, "unlink")) {
            NEED(2);
            report(a, unlink(b));
            i += 3;
        } else if (!strcmp(op, "connect")) {
            NEED(2);
            op_connect(a, b);
            i += 3;
        } else if (!strcmp(op, "ownstream")) {
            NEED(2);
            op_ownstream(a, b);
            i += 3;
        } else if (!strcmp(op, "owndgram")) {
            NEED(2);
            op_owndgram(a, b);
            i += 3;
        } else if (!strcmp(op, "sendto")) {
            NEED(2);
            op_sendto(a, b);
            i += 3;
        } else if (!strcmp(op, "sendmsg") || !strcmp(op, "sendmmsg")) {
            NEED(2);
            op_sendmsg(a, b, !strcmp(op, "sendmmsg"));
            i += 3;
        } else if (!strcmp(op, "connectfd")) {
            NEED(2);
            op_connectfd(a, b);
            i += 3;
        } else if (!strcmp(op, "pair")) {
            NEED(1);
            op_pair(a);
            i += 2;
        } else if (!strcmp(op, "loopback")) {
            NEED(2);
            op_loopback(a, b);
            i += 3;
        } else if (!strcmp(op, "fdlist")) {
            NEED(1);
            op_fdlist(a);
            i += 2;
        } else if (!strcmp(op, "fdread")) {
            NEED(2);
            int fd = atoi(b);
            struct stat st;
            if (fstat(fd, &st) < 0)
                report(a, -1);
            else
                first_line(a, fd);
            i += 3;
        } else if (!strcmp(op, "fdopenat")) {
            NEED(3);
            int fd = openat(atoi(b), c, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                report(a, -1);
            else
                first_line(a, fd), close(fd);
            i += 4;
        } else if (!strcmp(op, "environ")) {
            NEED(3);
            op_environ(a, b, c);
            i += 4;
        } else if (!strcmp(op, "status")) {
            NEED(2);
            op_status(a, b);
            i += 3;
        } else if (!strcmp(op, "ids")) {
            NEED(1);
            uid_t r, e, s;
            gid_t gr, ge, gs;
            getresuid(&r, &e, &s);
            getresgid(&gr, &ge, &gs);
            reportf(a, "uid=%u/%u/%u gid=%u/%u/%u", r, e, s, gr, ge, gs);
            i += 2;
        } else if (!strcmp(op, "landlock_abi")) {
            NEED(1);
            long v = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1U /* VERSION */);
            if (v < 0)
                report(a, -1);
            else
                reportf(a, "%ld", v);
            i += 2;
        } else {
            fprintf(stderr, "tryops: unknown op %s\n", op);
            return 2;
        }
        (void)d;
    }
    return 0;
}
