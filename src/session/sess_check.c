// SPDX-License-Identifier: Apache-2.0
/* A session's policy check (sess_pid1.h): before every command, is every mount still
 * where the root put it, and every hidden or protected name that was missing still missing? */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "session/sess_pid1.h"
#include "util/fdutil.h"

/* Once the root is built: what every command checks again before it starts. */
void sess_record_checks(const launch *l, sess_mem *m)
{
    const plan *p = l->plan;
    m->n_checks = 0;
    for (size_t i = 0; i < p->n_cc_rules; i++) {
        struct stat st;
        const char *dest = p->cc_rules[i].path;
        if (p->cc_rules[i].kind == PLAN_NOCREATE && fstatat(AT_FDCWD, dest, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
            errno == ENOENT)
            m->checks[m->n_checks++] = (sess_check){.dest = dest, .kind = SESS_CHECK_ABSENT};
    }
    for (size_t i = 0; i < p->n_ops; i++) {
        const plan_op *op = &p->ops[i];
        struct stat st;
        int r = fstatat(AT_FDCWD, op->dest, &st, AT_SYMLINK_NOFOLLOW);
        sess_check *c = &m->checks[m->n_checks];
        if (plan_op_mounts(op) && r == 0) {
            *c = (sess_check){.dest = op->dest,
                              .why = op->why ? op->why : "protected",
                              .dev = st.st_dev,
                              .ino = st.st_ino,
                              .kind = op->kind == PLAN_BIND ? SESS_CHECK_BIND : SESS_CHECK_MOUNT,
                              .holdable = op->kind == PLAN_HIDE || (op->kind == PLAN_BIND && op->read_only)};
        } else {
            continue; /* shadowed by a later mount, or nothing to hold */
        }
        m->n_checks++;
    }
}

/* A read-only or hiding mount whose file the host removed: the mount went with it (the
 * kernel detaches a mount whose mount point is removed in another namespace), and the
 * name is missing inside now.  Held as a missing name from then on: the creation control
 * refuses it in its directory, and the check becomes SESS_CHECK_ABSENT.  false when it
 * cannot be (no creation control, the directory gone, no room for the rule). */
static bool hold_as_missing(launch *l, sess_mem *m, sess_check *c)
{
    const char *slash = strrchr(c->dest, '/');
    size_t n = slash ? (size_t)(slash - c->dest) : 0;
    struct stat st;
    if (!l->cc || !slash || !slash[1] || n >= sizeof m->scratch)
        return false;
    memcpy(m->scratch, c->dest, n);
    m->scratch[n ? n : 1] = '\0';
    if (n == 0)
        m->scratch[0] = '/';
    /* the directory the name was in, with no symlink on the way (dest was canonical at the
     * start: a component the host has made a symlink since is not followed, and the
     * check fails closed) */
    int dfd = open_no_symlinks(m->scratch, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int r = dfd < 0 ? -1 : fstat(dfd, &st);
    if (dfd >= 0)
        close(dfd);
    if (r < 0 || cc_add_name(l->cc, st.st_dev, st.st_ino, slash + 1, c->why) < 0)
        return false;
    c->kind = SESS_CHECK_ABSENT;
    return true;
}

/* Can this command run with the session's policy?  Every mount must still be on the file
 * the root put there, and every protected or hidden name that was missing must still be
 * missing.
 *  - A name missing at the start that the host has made since (an editor's .vscode) has
 *    no mount: the session only kept it from being created, and a command could change
 *    or read it now.  Each command is refused while it is there (m->check_why); once the
 *    host removed it, the policy holds again.
 *  - A read-only or hiding mount whose file the host removed (the mount went with it):
 *    held as a missing name from then on (hold_as_missing), as above; one whose file the
 *    host replaced is refused while the new one is there, and held once it is gone.
 *  - Any other mount the host took away (a writable one, a bind source deleted) never
 *    comes back: every command is refused from then on (m->broken). */
bool sess_policy_holds(launch *l, sess_mem *m)
{
    if (m->broken)
        return false;
    for (size_t i = 0; i < m->n_checks; i++) {
        sess_check *c = &m->checks[i];
        struct stat st;
        int r = fstatat(AT_FDCWD, c->dest, &st, AT_SYMLINK_NOFOLLOW);
        int e = errno;
        const char *why = NULL;
        if (c->kind != SESS_CHECK_ABSENT && c->holdable && r < 0 && e == ENOENT && hold_as_missing(l, m, c))
            continue; /* (missing: holds) */
        if (c->kind == SESS_CHECK_ABSENT) {
            if (r == 0 || e != ENOENT) {
                snprintf(m->check_why, sizeof m->check_why,
                         "%s was created on the host after the session started, and the session cannot hold its "
                         "policy there (the name is hidden or protected from being created, and a command could "
                         "now change or read it): remove it on the host and run the command again, or stop the "
                         "session and start it again to protect it as it is now",
                         c->dest);
                return false;
            }
        } else if (r < 0) {
            why = "is gone: the host removed what the session's mount there stood on";
        } else if (st.st_dev != c->dev || st.st_ino != c->ino) {
            if (c->holdable && l->cc) {
                snprintf(m->check_why, sizeof m->check_why,
                         "%s was replaced on the host after the session started: the session's mount on it went "
                         "with the old one, and a command could change or read the new one: remove it on the host "
                         "and run the command again (the name is then kept from being created), or stop the "
                         "session and start it again to protect it as it is now",
                         c->dest);
                return false;
            }
            why = "was removed or replaced on the host: the session's mount there is gone";
        } else if (c->kind == SESS_CHECK_BIND && st.st_nlink == 0) {
            why = "was deleted on the host";
        }
        if (why) {
            snprintf(m->broken_why, sizeof m->broken_why,
                     "the session can no longer be held to its policy: %s %s; stop the session and start it again",
                     c->dest, why);
            m->broken = true;
            return false;
        }
    }
    return true;
}
