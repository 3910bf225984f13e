// SPDX-License-Identifier: Apache-2.0
/* `cordon install-bwrap DIR`: cordon's bwrap (doc/bwrap.md) as DIR/bwrap for the current
 * user, a file of its own (a hard link to this program, else a copy), never a symbolic
 * link: Codex resolves a link and runs what it points to with --help, which cordon then
 * answers as cordon, and Codex quietly takes its bundled bubblewrap (doc/codex.md).
 * Nothing but DIR/bwrap is touched, and a DIR/bwrap that is not cordon (the system's
 * bubblewrap) is left alone. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define SELF "/proc/self/exe"
/* a string only a cordon binary holds (the switch of its bwrap personality) */
#define MARK "CORDON_BWRAP_EXACT"

/* Does the file at `fd` hold `mark`? */
static bool holds_mark(int fd)
{
    char buf[65536 + sizeof MARK];
    size_t keep = 0;
    for (;;) {
        ssize_t r = read(fd, buf + keep, sizeof buf - keep);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        size_t n = keep + (size_t)r;
        if (memmem(buf, n, MARK, sizeof MARK - 1))
            return true;
        keep = n < sizeof MARK - 1 ? n : sizeof MARK - 1;
        memmove(buf, buf + n - keep, keep);
    }
}

/* What is at DIR/bwrap: 0 nothing, 1 a cordon (a link to it, a copy of any version), -1
 * something else (its description in `what`). */
static int existing(int dir, char *what, size_t n)
{
    struct stat st;
    if (fstatat(dir, "bwrap", &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : (snprintf(what, n, "cannot be read (%s)", strerror(errno)), -1);
    if (S_ISLNK(st.st_mode)) {
        struct stat self, to;
        if (stat(SELF, &self) == 0 && fstatat(dir, "bwrap", &to, 0) == 0 && to.st_dev == self.st_dev &&
            to.st_ino == self.st_ino)
            return 1; /* the symbolic link of earlier instructions: replaced */
        snprintf(what, n, "is a symbolic link to something that is not this cordon");
        return -1;
    }
    if (!S_ISREG(st.st_mode))
        return snprintf(what, n, "is not a regular file"), -1;
    int fd = openat(dir, "bwrap", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    bool mine = fd >= 0 && holds_mark(fd);
    if (fd >= 0)
        (void)close(fd); /* (read only) */
    if (!mine)
        return snprintf(what, n, "is not cordon (bubblewrap itself?)"), -1;
    return 1;
}

/* A copy of this program at dir/name (mode 0755), synced. */
static int copy_self(int dir, const char *name)
{
    int in = open(SELF, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
    if (out < 0) {
        int e = errno;
        (void)close(in);
        return errno = e, -1;
    }
    char buf[65536];
    int rc = 0;
    for (;;) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -1;
            break;
        }
        if (r == 0)
            break;
        for (ssize_t w = 0; w < r;) {
            ssize_t k = write(out, buf + w, (size_t)(r - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0) {
                rc = -1;
                break;
            }
            w += k;
        }
        if (rc < 0)
            break;
    }
    int e = errno;
    if (rc == 0 && (fchmod(out, 0755) < 0 || fsync(out) < 0))
        rc = -1, e = errno;
    if (close(out) < 0 && rc == 0)
        rc = -1, e = errno;
    (void)close(in); /* (read only) */
    errno = e;
    return rc;
}

/* mkdir -p DIR: make each missing directory of DIR (0755); FIRST: the shallowest one this
 * call made ("" when none).  -1 with errno set on failure. */
static int make_dirs(const char *dir, char *first, size_t n)
{
    char path[PATH_MAX];
    first[0] = '\0';
    if (strlen(dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(path, dir);
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0755) == 0) {
            if (!first[0])
                snprintf(first, n, "%s", path);
        } else if (errno != EEXIST) {
            return -1;
        }
        *p = c;
        if (c == '\0')
            return 0;
    }
}

/* Undo make_dirs: remove DIR and its parents up to FIRST, those that are empty. */
static void unmake_dirs(const char *dir, const char *first)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", dir);
    size_t stop = strlen(first);
    while (stop && strlen(path) >= stop && rmdir(path) == 0) {
        char *slash = strrchr(path, '/');
        if (!slash || slash == path)
            break;
        *slash = '\0';
    }
}

int cmd_install_bwrap(int argc, char **argv)
{
    if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        help_install_bwrap(stdout);
        return 0;
    }
    if (argc != 1 || argv[0][0] == '\0' || argv[0][0] == '-') {
        fprintf(stderr, "cordon: install-bwrap takes one directory, e.g. `cordon install-bwrap ~/.local/bin`\n");
        return CORDON_EXIT_SETUP;
    }
    const char *dirname = argv[0];
    char real[PATH_MAX], first[PATH_MAX];
    if (make_dirs(dirname, first, sizeof first) < 0) {
        fprintf(stderr, "cordon: install-bwrap: cannot make the directory %s: %s\n", dirname, strerror(errno));
        return CORDON_EXIT_SETUP;
    }
    if (!realpath(dirname, real)) {
        fprintf(stderr, "cordon: install-bwrap: %s: %s\n", dirname, strerror(errno));
        return CORDON_EXIT_SETUP;
    }
    /* Codex skips a bwrap under /tmp (doc/codex.md) */
    if (strcmp(real, "/tmp") == 0 || strncmp(real, "/tmp/", 5) == 0) {
        if (first[0])
            unmake_dirs(dirname, first); /* (what this call made, empty) */
        fprintf(stderr,
                "cordon: install-bwrap: %s is under /tmp, where Codex never looks for bwrap; choose a directory "
                "such as ~/.local/bin\n",
                real);
        return CORDON_EXIT_SETUP;
    }
    int dir = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        fprintf(stderr, "cordon: install-bwrap: cannot open %s: %s\n", real, strerror(errno));
        return CORDON_EXIT_SETUP;
    }
    char what[256];
    if (existing(dir, what, sizeof what) < 0) {
        fprintf(stderr,
                "cordon: install-bwrap: %s/bwrap %s: cordon leaves it alone; choose another directory (one "
                "before it on PATH), e.g. ~/.local/bin\n",
                real, what);
        (void)close(dir);
        return CORDON_EXIT_SETUP;
    }
    /* a hard link where the file systems allow it (it follows cordon's upgrades in place
     * no better than a copy, but costs nothing), else a copy; then renamed over */
    const char *tmp = ".bwrap.cordon-new";
    (void)unlinkat(dir, tmp, 0);
    bool linked = linkat(AT_FDCWD, SELF, dir, tmp, AT_SYMLINK_FOLLOW) == 0;
    if (!linked && copy_self(dir, tmp) < 0) {
        int e = errno;
        (void)unlinkat(dir, tmp, 0);
        fprintf(stderr, "cordon: install-bwrap: cannot write %s/bwrap: %s\n", real, strerror(e));
        (void)close(dir);
        return CORDON_EXIT_SETUP;
    }
    if (renameat(dir, tmp, dir, "bwrap") < 0) {
        int e = errno;
        (void)unlinkat(dir, tmp, 0);
        fprintf(stderr, "cordon: install-bwrap: cannot put %s/bwrap in place: %s\n", real, strerror(e));
        (void)close(dir);
        return CORDON_EXIT_SETUP;
    }
    (void)close(dir); /* (O_PATH) */
    printf("installed %s/bwrap (%s this cordon)\n", real, linked ? "a hard link to" : "a copy of");
    if (!linked)
        printf("a copy does not follow an upgrade of cordon: run `cordon install-bwrap %s` again after one "
               "(`cordon check` says when it is out of date)\n",
               real);
    printf("`cordon check` says whether it is the first bwrap on PATH, as Codex and sandbox-runtime look it up\n");
    return 0;
}
