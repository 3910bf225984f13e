/* Unit tests for stubs (src/sandbox/stubs.c): holding a missing name in a writable host
 * directory for a run, on plans built by hand (PLAN_HIDE operations with stub set).
 *
 * A stub is an empty directory of mode 0400 owned by the caller; every run using it
 * holds a shared flock() on it for as long as it runs (its janitor keeps that lock if
 * cordon dies); a run removes it only when it can turn its lock into an exclusive one,
 * that is when it is the last one out.  A second stubs_create() on the same plan, in
 * this process, opens the stub again and so takes a lock of its own: it stands for a
 * concurrent run.  A directory that is not an empty 0400 one of ours (a person made it)
 * is hidden all the same and never removed.  A stub is 0400 whatever the umask; where
 * the caller may not create the name, nothing is held (status 'n').
 *
 * Fixtures live in a fresh mkdtemp() directory (canonicalised) and are removed
 * afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan/plan.h"
#include "sandbox/stubs.h"
#include "util/path.h"
#include "util/strv.h"

#include "fixture.h"

static int setup(void **state)
{
    return fixture_setup(state, "stubs", FX_W);
}

static plan_op *add_op(plan *pl, plan_kind kind, const char *dest, bool is_stub)
{
    grow(&pl->ops, &pl->cap_ops, pl->n_ops + 1, sizeof *pl->ops);
    plan_op *op = &pl->ops[pl->n_ops++];
    *op = (plan_op){
        .kind = kind,
        .dest = xstrdup(dest),
        .src = kind == PLAN_BIND ? xstrdup(dest) : NULL,
        .is_dir = true,
        .stub = is_stub,
        .why = xasprintf("test rule on %s", dest),
    };
    return op;
}

/* A stub hide at DIR/rel. */
static void hold(fixture *f, const char *rel)
{
    char *p = fx(f, rel);
    add_op(&f->pl, PLAN_HIDE, p, true);
    free(p);
}

static void create_ok(fixture *f, stubs *s)
{
    memset(f->status, '?', sizeof f->status);
    if (stubs_create(&f->pl, s, f->status, &f->err) < 0)
        fail_msg("stubs_create: %s", f->err.message);
    /* here the caller may create every name: every stub op is held */
    for (size_t i = 0; i < s->n; i++) {
        if (f->status[i] != 'y')
            fail_msg("stub %zu (%s): status '%c', expected 'y'", i, s->v[i].name, f->status[i]);
        assert_true(s->v[i].held);
        assert_true(s->v[i].fd >= 0);
    }
    assert_int_equal(f->status[s->n], '?'); /* one byte per stub op, no more */
}

static void create_fails(fixture *f, stubs *s)
{
    if (stubs_create(&f->pl, s, f->status, &f->err) == 0) {
        stubs_release(s, true);
        fail_msg("stubs_create succeeded, expected a failure");
    }
    assert_int_equal(f->err.stage, CORDON_STAGE_ROOT);
    /* a failed create leaves nothing to release */
    assert_null(s->v);
    assert_int_equal(s->n, 0);
}

/* Entries of DIR/rel (without "." and ".."); -1 when it cannot be listed. */
static int entries(const fixture *f, const char *rel)
{
    char *p = fx(f, rel);
    DIR *d = opendir(p);
    free(p);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

static bool exists(const fixture *f, const char *rel)
{
    char *p = fx(f, rel);
    struct stat st;
    bool r = lstat(p, &st) == 0;
    free(p);
    return r;
}

/* A stub: an empty directory, mode 0400, ours. */
static void assert_stub(const fixture *f, const char *rel)
{
    char *p = fx(f, rel);
    struct stat st;
    if (lstat(p, &st) < 0)
        fail_msg("no stub at %s: %s", p, strerror(errno));
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0400);
    assert_int_equal(st.st_uid, geteuid());
    free(p);
    assert_int_equal(entries(f, rel), 0);
}

/* Only `n` entries in DIR/w: no temporary names left behind. */
static void assert_w_holds(const fixture *f, int n)
{
    assert_int_equal(entries(f, "w"), n);
}

/* Is someone else holding a lock on DIR/rel?  (A fresh open file description asks.) */
static bool locked_by_someone(const fixture *f, const char *rel)
{
    char *p = fx(f, rel);
    int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(p);
    if (fd < 0)
        fail_msg("open %s: %s", rel, strerror(errno));
    bool busy = flock(fd, LOCK_EX | LOCK_NB) < 0;
    close(fd);
    return busy;
}

/* ---- create and release ----------------------------------------------------------- */

static void test_create_and_release(void **state)
{
    fixture *f = *state;
    hold(f, "w/.codex");
    /* only stub hides count */
    char *other = fx(f, "w/other");
    add_op(&f->pl, PLAN_HIDE, other, false);
    add_op(&f->pl, PLAN_BIND, f->w, false);
    add_op(&f->pl, PLAN_NOTE, other, true);
    free(other);
    stubs s;
    create_ok(f, &s);
    assert_int_equal(s.n, 1);
    assert_true(s.v[0].ours);
    assert_string_equal(s.v[0].name, ".codex");
    assert_true(s.v[0].fd >= 0 && s.v[0].parent_fd >= 0);
    assert_int_equal(s.janitor, -1);
    assert_stub(f, "w/.codex");
    assert_false(exists(f, "w/other"));
    assert_w_holds(f, 1);
    /* held for the run: a lock on it */
    assert_true(locked_by_someone(f, "w/.codex"));
    stubs_release(&s, true);
    assert_false(exists(f, "w/.codex"));
    assert_w_holds(f, 0);
    assert_null(s.v);
    assert_int_equal(s.n, 0);
    stubs_release(&s, true); /* twice is fine */
}

static void test_several_stubs(void **state)
{
    fixture *f = *state;
    mk_mode(f, "w/.git", 0755);
    hold(f, "w/.codex");
    hold(f, "w/.git/hooks");
    hold(f, "w/.cordon");
    stubs s;
    create_ok(f, &s);
    assert_int_equal(s.n, 3);
    assert_stub(f, "w/.codex");
    assert_stub(f, "w/.git/hooks");
    assert_stub(f, "w/.cordon");
    stubs_release(&s, true);
    assert_false(exists(f, "w/.codex"));
    assert_false(exists(f, "w/.git/hooks"));
    assert_false(exists(f, "w/.cordon"));
    assert_int_equal(entries(f, "w/.git"), 0);
}

static void test_no_stub_in_plan(void **state)
{
    fixture *f = *state;
    stubs s;
    create_ok(f, &s); /* an empty plan */
    assert_int_equal(s.n, 0);
    assert_null(s.v);
    char *p = fx(f, "w/x");
    add_op(&f->pl, PLAN_HIDE, p, false);
    free(p);
    create_ok(f, &s);
    assert_int_equal(s.n, 0);
    assert_w_holds(f, 0);
    /* no janitor without stubs */
    assert_int_equal(stubs_start_janitor(&s, -1, &f->err), 0);
    assert_int_equal(s.janitor, -1);
    stubs_release(&s, true);
}

/* The mode is what marks a stub: whatever the caller's umask, a stub is made 0400 (not
 * 0000 under umask 0477, which would never be taken for a stub again), joined as one by
 * a concurrent run, and removed by the last one out. */
static void test_stub_mode_whatever_the_umask(void **state)
{
    fixture *f = *state;
    static const mode_t masks[] = {0477, 0777, 0, 022, 0400};
    hold(f, "w/.codex");
    hold(f, "w/.agents");
    for (size_t i = 0; i < sizeof masks / sizeof *masks; i++) {
        mode_t old = umask(masks[i]);
        stubs a, b;
        int ra = stubs_create(&f->pl, &a, f->status, &f->err);
        int rb = ra == 0 ? stubs_create(&f->pl, &b, f->status, &f->err) : -1;
        umask(old);
        if (ra < 0 || rb < 0) {
            if (ra == 0)
                stubs_release(&a, true);
            fail_msg("umask %04o: stubs_create: %s", (unsigned)masks[i], f->err.message);
        }
        assert_stub(f, "w/.codex");
        assert_stub(f, "w/.agents");
        assert_true(a.v[0].ours && a.v[1].ours);
        assert_true(b.v[0].ours && b.v[1].ours); /* joined: recognised as stubs */
        stubs_release(&a, true);
        assert_stub(f, "w/.codex"); /* b still runs */
        umask(masks[i]);
        stubs_release(&b, true);
        umask(old);
        if (exists(f, "w/.codex") || exists(f, "w/.agents"))
            fail_msg("umask %04o: a stub was left behind", (unsigned)masks[i]);
        assert_w_holds(f, 0);
    }
}

/* In a directory the caller may not write, the command (same credentials, no
 * capabilities) cannot create the name either: nothing is held ('n'), nothing made,
 * stubs_create succeeds.  As root (who may write anyway) a child checks it as uid
 * 65534; the child reports by its exit status: 0 is right. */
static int not_writable_child(fixture *f)
{
    stubs s;
    memset(f->status, '?', sizeof f->status);
    if (stubs_create(&f->pl, &s, f->status, &f->err) < 0)
        return 10;
    int rc = 0;
    if (s.n != 2)
        rc = 11;
    else if (memcmp(f->status, "nn?", 3) != 0)
        rc = 12;
    else if (s.v[0].held || s.v[1].held || s.v[0].ours || s.v[1].ours)
        rc = 13;
    else if (s.v[0].fd >= 0 || s.v[1].fd >= 0)
        rc = 14;
    stubs_release(&s, true);
    return rc;
}

static void test_not_writable_not_held(void **state)
{
    fixture *f = *state;
    hold(f, "w/.codex");
    hold(f, "w/.agents");
    assert_int_equal(chmod(f->w, 0555), 0);
    int rc;
    if (geteuid() != 0) {
        rc = not_writable_child(f);
    } else {
        assert_int_equal(chmod(f->dir, 0755), 0); /* mkdtemp's 0700: let uid 65534 in */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                _exit(20);
            _exit(not_writable_child(f));
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        rc = WEXITSTATUS(st);
    }
    if (rc != 0)
        fail_msg("in a directory the caller may not write: check %d failed (10: stubs_create failed, 11: "
                 "count, 12: status not \"nn\", 13: taken as held or ours, 14: descriptors kept, 20: "
                 "cannot switch to uid 65534)",
                 rc);
    assert_int_equal(chmod(f->w, 0755), 0);
    assert_w_holds(f, 0);
}

/* ---- concurrent runs ------------------------------------------------------------------- */

/* A second run on the same plan joins the stub instead of failing; the first one out
 * keeps it for the other; the last one out removes it. */
static void test_concurrent_runs(void **state)
{
    fixture *f = *state;
    hold(f, "w/.codex");
    stubs a, b;
    create_ok(f, &a);
    create_ok(f, &b);
    assert_true(a.v[0].ours);
    assert_true(b.v[0].ours); /* joined, not a person's directory */
    assert_stub(f, "w/.codex");
    assert_w_holds(f, 1);
    stubs_release(&a, true);
    assert_stub(f, "w/.codex"); /* b still runs */
    assert_true(locked_by_someone(f, "w/.codex"));
    stubs_release(&b, true);
    assert_false(exists(f, "w/.codex"));

    /* the other order */
    create_ok(f, &a);
    create_ok(f, &b);
    stubs_release(&b, true);
    assert_stub(f, "w/.codex");
    /* a third run joins while the first still holds it */
    stubs c;
    create_ok(f, &c);
    stubs_release(&a, true);
    assert_stub(f, "w/.codex");
    stubs_release(&c, true);
    assert_false(exists(f, "w/.codex"));
    assert_w_holds(f, 0);
}

/* A stub left by a run that is gone for good (its janitor too, e.g. the machine
 * crashed) is an empty 0400 directory nobody locks: the next run adopts it and, last
 * out, removes it. */
static void test_stale_stub_adopted(void **state)
{
    fixture *f = *state;
    mk_mode(f, "w/.codex", 0400);
    hold(f, "w/.codex");
    assert_false(locked_by_someone(f, "w/.codex"));
    stubs s;
    create_ok(f, &s);
    assert_true(s.v[0].ours);
    stubs_release(&s, true);
    assert_false(exists(f, "w/.codex"));
}

/* ---- what is not ours ---------------------------------------------------------------- */

/* A directory a person made: hidden all the same (stubs_create succeeds) but never
 * removed, and never locked. */
static void test_person_directory_never_removed(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *what;
        mode_t mode;
        bool with_file;
        bool other_owner;
    } dirs[] = {
        {"empty, mode 0755", 0755, false, false},
        {"empty, mode 0700", 0700, false, false},
        {"empty, mode 0500", 0500, false, false},
        {"mode 0400 but not empty", 0400, true, false},
        {"mode 0400, empty, someone else's", 0400, false, true},
    };
    hold(f, "w/.codex");
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        mk_mode(f, "w/.codex", 0700);
        if (dirs[i].with_file)
            touch(f, "w/.codex/notes");
        char *p = fx(f, "w/.codex");
        assert_int_equal(chmod(p, dirs[i].mode), 0);
        if (dirs[i].other_owner && chown(p, 65534, 65534) < 0)
            fail_msg("chown %s: %s (the test runs as uid %d)", p, strerror(errno), (int)geteuid());
        stubs s;
        if (stubs_create(&f->pl, &s, f->status, &f->err) < 0)
            fail_msg("%s: stubs_create: %s", dirs[i].what, f->err.message);
        if (s.v[0].ours)
            fail_msg("%s: taken for a stub", dirs[i].what);
        assert_false(locked_by_someone(f, "w/.codex"));
        stubs_release(&s, true);
        struct stat st;
        if (lstat(p, &st) < 0)
            fail_msg("%s: removed", dirs[i].what);
        assert_int_equal(st.st_mode & 07777, dirs[i].mode);
        assert_int_equal(entries(f, "w/.codex"), dirs[i].with_file ? 1 : 0);
        /* and a run that does make the stub cannot be fooled into removing it later */
        assert_int_equal(chmod(p, 0700), 0);
        if (dirs[i].with_file) {
            char *n = fx(f, "w/.codex/notes");
            assert_int_equal(unlink(n), 0);
            free(n);
        }
        assert_int_equal(rmdir(p), 0);
        free(p);
    }
}

/* Something that is not a directory at the name: refused, left alone. */
static void test_not_a_directory_refused(void **state)
{
    fixture *f = *state;
    mk_mode(f, "elsewhere", 0755);
    ln(f, "../elsewhere", "w/.codex");
    hold(f, "w/.codex");
    stubs s;
    create_fails(f, &s);
    char *p = fx(f, "w/.codex");
    assert_contains(f->err.message, p);
    assert_contains(f->err.message, "test rule on");
    free(p);
    assert_int_equal(entries(f, "elsewhere"), 0);
    char target[64];
    char *l = fx(f, "w/.codex");
    assert_int_equal(readlink(l, target, sizeof target), (ssize_t)strlen("../elsewhere"));
    assert_int_equal(unlink(l), 0);
    free(l);

    touch(f, "w/.codex");
    create_fails(f, &s);
    struct stat st;
    char *file = fx(f, "w/.codex");
    assert_int_equal(lstat(file, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    free(file);
}

/* ---- symlinks and bad paths ------------------------------------------------------------ */

static void test_symlink_in_parent_fails(void **state)
{
    fixture *f = *state;
    mk_mode(f, "real", 0755);
    mk_mode(f, "real/sub", 0755);
    ln(f, "real", "link");
    char *real = fx(f, "real");
    ln(f, real, "abslink");
    free(real);
    static const char *const via[] = {"link/.codex", "link/sub/.codex", "abslink/.codex"};
    for (size_t i = 0; i < 3; i++) {
        plan_free(&f->pl);
        hold(f, via[i]);
        stubs s;
        create_fails(f, &s);
        assert_contains(f->err.message, "without following symlinks");
        assert_contains(f->err.message, "test rule on");
        char *p = fx(f, via[i]);
        *strrchr(p, '/') = '\0';
        assert_contains(f->err.message, p); /* the parent it would not open */
        free(p);
        assert_int_equal(f->err.errnum, ELOOP);
    }
    /* nothing was made through the links */
    assert_int_equal(entries(f, "real"), 1);
    assert_int_equal(entries(f, "real/sub"), 0);
}

/* One stub that cannot be made: those made before it are released. */
static void test_failure_releases_the_others(void **state)
{
    fixture *f = *state;
    mk_mode(f, "real", 0755);
    ln(f, "real", "link");
    hold(f, "w/.codex");
    hold(f, "w/.cordon");
    hold(f, "link/.agents");
    stubs s;
    create_fails(f, &s);
    assert_w_holds(f, 0);
    assert_int_equal(entries(f, "real"), 0);

    /* a missing parent */
    plan_free(&f->pl);
    hold(f, "w/.codex");
    hold(f, "nope/.codex");
    create_fails(f, &s);
    assert_int_equal(f->err.errnum, ENOENT);
    assert_w_holds(f, 0);
}

static void test_bad_paths(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = {"relative", "/ends/with/slash/", ""};
    for (size_t i = 0; i < 3; i++) {
        plan_free(&f->pl);
        add_op(&f->pl, PLAN_HIDE, bad[i], true);
        stubs s;
        create_fails(f, &s);
    }
    /* a name too long for a directory entry */
    plan_free(&f->pl);
    char name[300];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    char *p = path_join(f->w, name);
    add_op(&f->pl, PLAN_HIDE, p, true);
    free(p);
    stubs s;
    create_fails(f, &s);
    assert_w_holds(f, 0);
}

static void test_too_many(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 25; i++) {
        char rel[32];
        snprintf(rel, sizeof rel, "w/s%02d", i);
        hold(f, rel);
    }
    stubs s;
    create_fails(f, &s);
    assert_contains(f->err.message, "25");
    assert_contains(f->err.message, "24");
    assert_w_holds(f, 0);
    /* 24 are fine */
    f->pl.n_ops--;
    free(f->pl.ops[f->pl.n_ops].dest);
    free(f->pl.ops[f->pl.n_ops].why);
    create_ok(f, &s);
    assert_int_equal(s.n, 24);
    assert_w_holds(f, 24);
    stubs_release(&s, true);
    assert_w_holds(f, 0);
}

/* ---- the janitor ------------------------------------------------------------------- */

/* A stand-in for the sandbox's PID 1: a child that ends when `*release` is closed. */
static pid_t start_pid1(int *release, int *pidfd)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[1]);
        char c;
        while (read(p[0], &c, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(p[0]);
    *release = p[1];
    *pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (*pidfd < 0)
        fail_msg("pidfd_open: %s", strerror(errno));
    return pid;
}

static void end_pid1(pid_t pid, int release, int pidfd)
{
    close(release);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    close(pidfd);
}

static void reap(pid_t pid)
{
    int st;
    pid_t r;
    while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    assert_int_equal(r, pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* cordon released the stubs itself: the janitor's late release is a no-op, even when
 * another run has made a stub of the same name meanwhile. */
static void test_janitor_after_normal_release(void **state)
{
    fixture *f = *state;
    hold(f, "w/.codex");
    int release, pidfd;
    pid_t pid1 = start_pid1(&release, &pidfd);
    stubs s;
    create_ok(f, &s);
    assert_int_equal(stubs_start_janitor(&s, pidfd, &f->err), 0);
    pid_t janitor = s.janitor;
    assert_true(janitor > 0);
    stubs_release(&s, false); /* the janitor still holds the same lock: no other run */
    assert_false(exists(f, "w/.codex"));
    stubs other;
    create_ok(f, &other); /* a new run, a new stub */
    assert_stub(f, "w/.codex");
    end_pid1(pid1, release, pidfd);
    reap(janitor);
    assert_stub(f, "w/.codex"); /* not the janitor's to remove */
    stubs_release(&other, true);
    assert_false(exists(f, "w/.codex"));
}

/* cordon died (here: its descriptors closed without a release): the janitor keeps the
 * run's lock until PID 1 is gone, so another run's release leaves the stub alone; then
 * the janitor removes it. */
static void test_janitor_when_cordon_dies(void **state)
{
    fixture *f = *state;
    hold(f, "w/.codex");
    hold(f, "w/.agents");
    int release, pidfd;
    pid_t pid1 = start_pid1(&release, &pidfd);
    stubs s;
    create_ok(f, &s);
    assert_int_equal(stubs_start_janitor(&s, pidfd, &f->err), 0);
    pid_t janitor = s.janitor;
    for (size_t i = 0; i < s.n; i++) {
        close(s.v[i].fd);
        close(s.v[i].parent_fd);
        s.v[i].fd = s.v[i].parent_fd = -1;
    }
    s.janitor = -1;
    stubs_release(&s, false); /* frees; there is nothing left to release here */
    assert_stub(f, "w/.codex");
    assert_true(locked_by_someone(f, "w/.codex"));
    /* a concurrent run comes and goes */
    stubs other;
    create_ok(f, &other);
    stubs_release(&other, true);
    assert_stub(f, "w/.codex");
    assert_stub(f, "w/.agents");
    /* PID 1 ends: the janitor cleans up */
    end_pid1(pid1, release, pidfd);
    reap(janitor);
    assert_false(exists(f, "w/.codex"));
    assert_false(exists(f, "w/.agents"));
    assert_w_holds(f, 0);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_create_and_release),
        T(test_several_stubs),
        T(test_no_stub_in_plan),
        T(test_stub_mode_whatever_the_umask),
        T(test_not_writable_not_held),
        T(test_concurrent_runs),
        T(test_stale_stub_adopted),
        T(test_person_directory_never_removed),
        T(test_not_a_directory_refused),
        T(test_symlink_in_parent_fails),
        T(test_failure_releases_the_others),
        T(test_bad_paths),
        T(test_too_many),
        T(test_janitor_after_normal_release),
        T(test_janitor_when_cordon_dies),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
