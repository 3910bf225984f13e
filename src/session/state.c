// SPDX-License-Identifier: Apache-2.0
/* Where published sessions live, and how a client reaches one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "session/session.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"

int sess_check_name(const char *name, cordon_error *err)
{
    size_t n = name ? strlen(name) : 0;
    bool ok = n >= 1 && n <= 64 && name[0] != '.';
    for (size_t i = 0; ok && i < n; i++) {
        char c = name[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
             c == '-';
    }
    if (!ok)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL,
                       "bad session name '%s': 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.'",
                       name ? name : "(null)");
    return 0;
}

/* Make (when `create`) and check one directory of the path: ours, not a symlink, and
 * (strict) closed to everyone else. */
static int own_dir(const char *path, bool create, bool strict, cordon_error *err)
{
    if (create && mkdir(path, 0700) < 0 && errno != EEXIST)
        return err_set(err, CORDON_STAGE_SETTINGS, errno, "cannot make the sessions directory %s", path);
    struct stat st;
    if (lstat(path, &st) < 0)
        return err_set(err, CORDON_STAGE_SETTINGS, errno, "cannot use the sessions directory %s", path);
    if (!S_ISDIR(st.st_mode))
        return err_set(err, CORDON_STAGE_SETTINGS, ENOTDIR, "%s is not a directory (sessions live there)", path);
    if (st.st_uid != geteuid())
        return err_set(err, CORDON_STAGE_SETTINGS, EPERM,
                       "%s belongs to uid %u, not to you: sessions will not live there (set "
                       "XDG_RUNTIME_DIR to a directory of your own)",
                       path, (unsigned)st.st_uid);
    if (strict && (st.st_mode & 077))
        return err_set(err, CORDON_STAGE_SETTINGS, EPERM,
                       "%s is open to other users (mode %04o): sessions will not live there (chmod 700 it)", path,
                       (unsigned)(st.st_mode & 07777));
    return 0;
}

int sess_state_dir(char *buf, size_t n, bool create, cordon_error *err)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    char base[PATH_MAX];
    uid_t uid = geteuid();
    struct stat st;
    bool xdg_ok = xdg && xdg[0] == '/', tmp = false;
    snprintf(base, sizeof base, "/run/user/%u", (unsigned)uid);
    if (xdg_ok) {
        if (snprintf(base, sizeof base, "%s", xdg) >= (int)sizeof base)
            return err_set(err, CORDON_STAGE_SETTINGS, ENAMETOOLONG, "XDG_RUNTIME_DIR is too long");
        if (own_dir(base, false, false, err) < 0)
            return -1;
    } else if (stat(base, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid) {
        /* a login session's runtime directory, its variable lost (sudo, su, cron) */
    } else if (uid == 0) {
        snprintf(base, sizeof base, "/run");
    } else {
        snprintf(base, sizeof base, "/tmp/cordon-%u", (unsigned)uid);
        tmp = true;
        if (own_dir(base, create, true, err) < 0)
            return -1;
    }
    char dir[PATH_MAX];
    if (!tmp &&
        (snprintf(dir, sizeof dir, "%s/cordon", base) >= (int)sizeof dir || own_dir(dir, create, true, err) < 0))
        return -1;
    if (snprintf(dir, sizeof dir, tmp ? "%s/sessions" : "%s/cordon/sessions", base) >= (int)sizeof dir ||
        own_dir(dir, create, true, err) < 0)
        return -1;
    if (snprintf(buf, n, "%s", dir) >= (int)n)
        return err_set(err, CORDON_STAGE_USAGE, ENAMETOOLONG, "the sessions directory %s is too long", dir);
    return 0;
}

int sess_socket_path(const char *name, char *buf, size_t n, bool create, cordon_error *err)
{
    if (name && strchr(name, '/')) {
        if (snprintf(buf, n, "%s", name) >= (int)n)
            return err_set(err, CORDON_STAGE_USAGE, ENAMETOOLONG, "the session's path is too long: %s", name);
        return 0;
    }
    if (sess_check_name(name, err) < 0)
        return -1;
    char dir[PATH_MAX];
    if (sess_state_dir(dir, sizeof dir, create, err) < 0)
        return -1;
    if (snprintf(buf, n, "%s/%s", dir, name) >= (int)n || strlen(buf) >= sizeof((struct sockaddr_un *)0)->sun_path)
        return err_set(err, CORDON_STAGE_USAGE, ENAMETOOLONG,
                       "the session's socket path %s/%s is too long for a socket (set XDG_RUNTIME_DIR to a "
                       "shorter directory)",
                       dir, name);
    return 0;
}

/* The name of a session for messages: its last component. */
static const char *short_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int sess_connect(const char *path, uint32_t kind, cordon_error *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return err_set(err, CORDON_STAGE_USAGE, ENAMETOOLONG, "the session's path is too long: %s", path);
    strcpy(sa.sun_path, path);
    _cleanup_fd_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot make a socket");
    int r;
    do
        r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        int e = errno;
        if (e == ENOENT)
            return err_set(err, CORDON_STAGE_USAGE, ENOENT, "there is no session '%s' (see `cordon session list`)",
                           short_name(path));
        if (e == ECONNREFUSED) {
            /* nothing listens: what held it died (and its janitor too); clean up */
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == geteuid())
                (void)unlink(path);
            return err_set(err, CORDON_STAGE_USAGE, ECONNREFUSED,
                           "session '%s' is not running any more (what held it is gone)", short_name(path));
        }
        if (e == EACCES || e == EPERM)
            return err_set(err, CORDON_STAGE_USAGE, e, "session '%s' is not yours: only its own user can use it",
                           short_name(path));
        return err_set(err, CORDON_STAGE_SUPERVISE, e, "cannot reach session '%s' (%s)", short_name(path), path);
    }
    struct ucred cred = {.uid = (uid_t)-1};
    socklen_t cl = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != geteuid())
        return err_set(err, CORDON_STAGE_USAGE, EPERM,
                       "session '%s' is held by another user (uid %u): refusing to hand it a command", short_name(path),
                       (unsigned)cred.uid);
    /* The proofs (session.h): our user namespace, which a process in any cordon sandbox
     * cannot open (it is an ancestor of its own), and the session directory opened for
     * reading, which a Landlock-only sandbox can open only where its rules let it list
     * the directory.  Neither holds in every mode: the holder also refuses a client more
     * confined than itself (owner.c, peer_confined). */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    _cleanup_fd_ int ns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    _cleanup_fd_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (ns < 0 || dfd < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot open %s for the session",
                       ns < 0 ? "/proc/self/ns/user" : dir);
    sess_hello h = {.magic = SESS_MAGIC, .version = SESS_VERSION, .kind = kind};
    int fds[2] = {ns, dfd};
    if (send_fds(fd, &h, sizeof h, fds, 2, MSG_NOSIGNAL) < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot talk to session '%s'", short_name(path));
    return steal_fd(&fd);
}
