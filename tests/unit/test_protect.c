/* Unit tests for what cordon protects by itself (src/policy/protect.c), through
 * resolve_policy() and plan_build():
 *
 * - atop every writable directory: .git/hooks, .git/config, .git/config.worktree (also
 *   through a .git file's gitdir: and its commondir, and in .git/modules/...), .cordon,
 *   .codex, .agents and the --protect names; existing ones become read-only rules,
 *   missing ones hidden rules that the plan holds with a stub; config.worktree is not
 *   held where missing; a user rule granting write on exactly the path lifts it;
 * - under --base host, when a rule shows the real home: the credential stores are hidden
 *   unless a rule names them; every other user's home is hidden unless a rule names it
 *   (or /home).
 *
 * The workspace fixtures are a table (one test per row, built in a fresh mkdtemp()
 * directory, canonicalised, removed afterwards); "{D}" in a file's content or a link's
 * target stands for that directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/plan.h"
#include "policy/policy.h"
#include "policy/resolve.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

#define assert_contains(hay, needle)                                                       \
    do {                                                                                   \
        if (!strstr((hay), (needle)))                                                      \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));                   \
    } while (0)

/* ---- the table -------------------------------------------------------------------- */

typedef enum fkind { F_END = 0, F_DIR, F_FILE, F_LINK } fkind;
typedef struct fent {
    fkind kind;
    const char *path; /* relative to the fixture directory */
    const char *text; /* F_FILE: content; F_LINK: target ({D} = the fixture directory) */
} fent;

typedef enum xkind {
    X_END = 0,
    X_HELD,    /* a protect rule hiding a missing path; the plan holds it with a stub */
    X_RO,      /* a protect rule keeping an existing path read-only; a read-only bind */
    X_NOTHING, /* no protect rule at the path */
} xkind;

/* What resolved_lookup() gives at the path (checked for X_NOTHING; the others imply it). */
typedef enum lk { LK_ANY = 0, LK_WRITE, LK_READ, LK_HIDDEN, LK_UNCOVERED } lk;

typedef struct expect {
    xkind kind;
    const char *path; /* relative */
    lk lookup;
} expect;

typedef struct pcase {
    const char *name;
    fent files[20];
    const char *allow[4];    /* writable rules, relative */
    const char *allow_ro[4]; /* read-only rules */
    const char *deny[4];
    const char *protect[4];  /* --protect NAME */
    bool read_only;
    expect ex[24];
    int n_protect;           /* exact number of protect rules; -1: not checked */
    const char *fails[3];    /* resolve fails and the message holds these */
} pcase;

#define WS_NAMES_HELD                                                                      \
    {X_HELD, "ws/.cordon", 0}, {X_HELD, "ws/.codex", 0}, { X_HELD, "ws/.agents", 0 }

static const pcase cases[] = {
    {
        .name = "plain .git directory",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "ws/.git/hooks", 0}, {F_FILE, "ws/.git/config", "[core]\n"},
                  {F_FILE, "ws/.git/HEAD", "ref: refs/heads/main\n"}, {F_DIR, "ws/.git/objects", 0}},
        .ex = {{X_RO, "ws/.git/hooks", 0},
               {X_RO, "ws/.git/config", 0},
               {X_NOTHING, "ws/.git/config.worktree", LK_WRITE}, /* missing: not held */
               {X_NOTHING, "ws/.git/HEAD", LK_WRITE},            /* git commit still works */
               {X_NOTHING, "ws/.git/objects/ab", LK_WRITE},
               {X_NOTHING, "ws/src", LK_WRITE},
               WS_NAMES_HELD},
        .n_protect = 5,
    },
    {
        .name = ".git without hooks: the name is held",
        .files = {{F_DIR, "ws/.git", 0}, {F_FILE, "ws/.git/config", ""}},
        .ex = {{X_HELD, "ws/.git/hooks", 0}, {X_RO, "ws/.git/config", 0},
               {X_NOTHING, "ws/.git/config.worktree", LK_WRITE}, WS_NAMES_HELD},
        .n_protect = 5,
    },
    {
        .name = ".git with config.worktree, without config",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "ws/.git/hooks", 0}, {F_FILE, "ws/.git/config.worktree", ""}},
        .ex = {{X_RO, "ws/.git/hooks", 0}, {X_HELD, "ws/.git/config", 0}, {X_RO, "ws/.git/config.worktree", 0},
               WS_NAMES_HELD},
        .n_protect = 6,
    },
    {
        /* a worktree: ws/.git names its git directory, whose commondir names the
         * repository's; the repository's .git is writable (commits write objects there) */
        .name = ".git file: gitdir (relative) and commondir",
        .files = {{F_FILE, "ws/.git", "gitdir: ../real/.git/worktrees/x\n"},
                  {F_DIR, "real", 0}, {F_DIR, "real/.git", 0}, {F_DIR, "real/.git/hooks", 0},
                  {F_FILE, "real/.git/config", ""}, {F_DIR, "real/.git/worktrees", 0},
                  {F_DIR, "real/.git/worktrees/x", 0}, {F_FILE, "real/.git/worktrees/x/commondir", "../..\n"},
                  {F_FILE, "real/.git/worktrees/x/HEAD", ""}, {F_FILE, "real/.git/worktrees/x/config.worktree", ""}},
        .allow = {"real/.git"},
        .ex = {{X_HELD, "real/.git/worktrees/x/hooks", 0},
               {X_HELD, "real/.git/worktrees/x/config", 0},
               {X_RO, "real/.git/worktrees/x/config.worktree", 0},
               {X_RO, "real/.git/hooks", 0},
               {X_RO, "real/.git/config", 0},
               {X_NOTHING, "real/.git/config.worktree", LK_WRITE},
               {X_NOTHING, "real/.git/worktrees/x/HEAD", LK_WRITE},
               {X_NOTHING, "real/.git/objects", LK_WRITE},
               {X_HELD, "real/.git/.codex", 0}, /* real/.git is a writable directory too */
               WS_NAMES_HELD},
        .n_protect = 5 + 3 + 3,
    },
    {
        .name = ".git file: absolute gitdir, commondir absolute, no trailing newline",
        .files = {{F_FILE, "ws/.git", "gitdir:   {D}/gd/wt"},
                  {F_DIR, "gd", 0}, {F_DIR, "gd/wt", 0}, {F_DIR, "gd/wt/hooks", 0},
                  {F_FILE, "gd/wt/commondir", "{D}/gd/common"},
                  {F_DIR, "gd/common", 0}, {F_FILE, "gd/common/config", ""}},
        .allow = {"gd"},
        .ex = {{X_RO, "gd/wt/hooks", 0}, {X_HELD, "gd/wt/config", 0},
               {X_HELD, "gd/common/hooks", 0}, {X_RO, "gd/common/config", 0},
               {X_NOTHING, "gd/common/config.worktree", LK_WRITE},
               {X_HELD, "gd/.codex", 0}, WS_NAMES_HELD},
        .n_protect = 4 + 3 + 3,
    },
    {
        /* the git directory is not writable anyway: nothing to add there */
        .name = ".git file: gitdir outside every writable path",
        .files = {{F_FILE, "ws/.git", "gitdir: {D}/ro/.git"},
                  {F_DIR, "ro", 0}, {F_DIR, "ro/.git", 0}, {F_DIR, "ro/.git/hooks", 0},
                  {F_FILE, "ro/.git/config", ""}},
        .allow_ro = {"ro"},
        .ex = {{X_NOTHING, "ro/.git/hooks", LK_READ}, {X_NOTHING, "ro/.git/config", LK_READ}, WS_NAMES_HELD},
        .n_protect = 3,
    },
    {
        .name = ".git file without gitdir: nothing",
        .files = {{F_FILE, "ws/.git", "not a git file\n"}},
        .ex = {{X_NOTHING, "ws/.git/hooks", LK_WRITE}, WS_NAMES_HELD},
        .n_protect = 3,
    },
    {
        .name = "submodules: .git/modules/a and .git/modules/a/modules/b",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "ws/.git/hooks", 0}, {F_FILE, "ws/.git/config", ""},
                  {F_DIR, "ws/.git/modules", 0}, {F_FILE, "ws/.git/modules/README", ""},
                  {F_DIR, "ws/.git/modules/a", 0}, {F_DIR, "ws/.git/modules/a/hooks", 0},
                  {F_FILE, "ws/.git/modules/a/config", ""}, {F_DIR, "ws/.git/modules/a/modules", 0},
                  {F_DIR, "ws/.git/modules/a/modules/b", 0}, {F_FILE, "ws/.git/modules/a/modules/b/config", ""},
                  {F_FILE, "ws/.git/modules/a/modules/b/config.worktree", ""}},
        .ex = {{X_RO, "ws/.git/hooks", 0},
               {X_RO, "ws/.git/config", 0},
               {X_RO, "ws/.git/modules/a/hooks", 0},
               {X_RO, "ws/.git/modules/a/config", 0},
               {X_NOTHING, "ws/.git/modules/a/config.worktree", LK_WRITE},
               {X_HELD, "ws/.git/modules/a/modules/b/hooks", 0},
               {X_RO, "ws/.git/modules/a/modules/b/config", 0},
               {X_RO, "ws/.git/modules/a/modules/b/config.worktree", 0},
               {X_NOTHING, "ws/.git/modules/README", LK_WRITE},
               {X_NOTHING, "ws/.git/modules/a/objects", LK_WRITE},
               WS_NAMES_HELD},
        .n_protect = 2 + 2 + 3 + 3,
    },
    {
        .name = "agent metadata: existing directory and file, missing name",
        .files = {{F_DIR, "ws/.codex", 0}, {F_FILE, "ws/.cordon", "x"}, {F_DIR, "ws/.codex/sub", 0}},
        .ex = {{X_RO, "ws/.codex", 0}, {X_RO, "ws/.cordon", 0}, {X_HELD, "ws/.agents", 0},
               {X_NOTHING, "ws/.codex/sub", LK_READ}, {X_NOTHING, "ws/.codexx", LK_WRITE}},
        .n_protect = 3,
    },
    {
        .name = "--protect names atop every writable directory",
        .files = {{F_DIR, "ws/.vscode", 0}, {F_DIR, "w", 0}, {F_FILE, "w/.idea", ""}},
        .allow = {"w"},
        .protect = {".vscode", ".idea"},
        .ex = {{X_RO, "ws/.vscode", 0}, {X_HELD, "ws/.idea", 0}, {X_HELD, "w/.vscode", 0}, {X_RO, "w/.idea", 0},
               {X_HELD, "w/.codex", 0}, WS_NAMES_HELD},
        .n_protect = 5 + 5,
    },
    {
        .name = "a user rule granting write on exactly the path lifts the protection",
        .files = {{F_DIR, "ws/.codex", 0}, {F_DIR, "ws/.git", 0}, {F_DIR, "ws/.git/hooks", 0},
                  {F_FILE, "ws/.git/config", ""}},
        .allow = {"ws/.codex", "ws/.git/hooks", "ws/.agents"},
        .ex = {{X_NOTHING, "ws/.codex", LK_WRITE},
               {X_NOTHING, "ws/.git/hooks", LK_WRITE},
               {X_NOTHING, "ws/.agents", LK_WRITE},
               {X_RO, "ws/.git/config", 0}, /* only the exact path */
               {X_HELD, "ws/.cordon", 0},
               {X_HELD, "ws/.codex/.codex", 0}, /* itself a writable directory */
               {X_HELD, "ws/.git/hooks/.cordon", 0}},
        .n_protect = 2 + 3 + 3,
    },
    {
        /* write on a directory above (here .git) is not write on exactly the path */
        .name = "a writable .git does not lift hooks and config",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "ws/.git/hooks", 0}, {F_FILE, "ws/.git/config", ""}},
        .allow = {"ws/.git"},
        .ex = {{X_RO, "ws/.git/hooks", 0}, {X_RO, "ws/.git/config", 0}, {X_HELD, "ws/.git/.codex", 0},
               WS_NAMES_HELD},
        .n_protect = 2 + 3 + 3,
    },
    {
        /* read-only or hidden already: nothing to add, and a hidden .git is not
         * re-exposed by read-only rules on what is inside it */
        .name = "--deny .git, --allow-ro .codex, --deny .agents",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "ws/.git/hooks", 0}, {F_FILE, "ws/.git/config", ""},
                  {F_DIR, "ws/.git/modules", 0}, {F_DIR, "ws/.git/modules/a", 0},
                  {F_DIR, "ws/.git/modules/a/hooks", 0}, {F_DIR, "ws/.codex", 0}},
        .allow_ro = {"ws/.codex"},
        .deny = {"ws/.git", "ws/.agents"},
        .ex = {{X_NOTHING, "ws/.git/hooks", LK_HIDDEN}, {X_NOTHING, "ws/.git/config", LK_HIDDEN},
               {X_NOTHING, "ws/.git/modules/a/hooks", LK_HIDDEN}, {X_NOTHING, "ws/.codex", LK_READ},
               {X_NOTHING, "ws/.agents", LK_HIDDEN}, {X_HELD, "ws/.cordon", 0}},
        .n_protect = 1,
    },
    {
        .name = "read-only workspace: nothing added",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "ws/.git/hooks", 0}, {F_FILE, "ws/.git/config", ""},
                  {F_DIR, "w", 0}},
        .allow = {"w"},
        .protect = {".vscode"},
        .read_only = true,
        .ex = {{X_NOTHING, "ws/.git/hooks", LK_READ}, {X_NOTHING, "ws/.codex", LK_READ},
               {X_NOTHING, "ws/.vscode", LK_READ}, {X_NOTHING, "w/.codex", LK_READ}},
        .n_protect = 0,
    },
    {
        .name = "read-only and missing writable rules: nothing added",
        .files = {{F_DIR, "r", 0}, {F_DIR, "r/.git", 0}, {F_DIR, "r/.git/hooks", 0}},
        .allow_ro = {"r"},
        .allow = {"nope"},
        .ex = {{X_NOTHING, "r/.git/hooks", LK_READ}, {X_NOTHING, "r/.codex", LK_READ},
               {X_NOTHING, "nope/.codex", LK_WRITE}, WS_NAMES_HELD},
        .n_protect = 3,
    },
    {
        .name = "a symlinked .git/hooks in the writable workspace fails closed",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "elsewhere", 0}, {F_LINK, "ws/.git/hooks", "../../elsewhere"}},
        .fails = {"{D}/ws/.git/hooks", "symlink", "protected git hooks"},
    },
    {
        .name = "a symlinked .git in the writable workspace fails closed",
        .files = {{F_DIR, "gitreal", 0}, {F_DIR, "gitreal/hooks", 0}, {F_LINK, "ws/.git", "../gitreal"}},
        .fails = {"{D}/ws/.git", "symlink", "{D}/gitreal"},
    },
    {
        .name = "a symlinked .codex in the writable workspace fails closed",
        .files = {{F_DIR, "elsewhere", 0}, {F_LINK, "ws/.codex", "{D}/elsewhere"}},
        .fails = {"{D}/ws/.codex", "symlink"},
    },
};

/* ---- fixture -------------------------------------------------------------------------- */

typedef struct fixture {
    char dir[PATH_MAX]; /* canonical */
    char *ws;           /* DIR/ws: the workspace and the current directory */
    char *home;         /* DIR/home */
    struct cordon_policy *p;
    host_info host;
    resolved r;
    bool have_r;
    plan pl;
    bool have_pl;
    cordon_error err;
    const pcase *c; /* the row, for table tests */
} fixture;

static char *fx(const fixture *f, const char *rel)
{
    return path_join(f->dir, rel);
}

/* `s` with every "{D}" replaced by the fixture directory. */
static char *subst(const fixture *f, const char *s)
{
    size_t cap = strlen(s) + 1, n = 0;
    for (const char *q = s; (q = strstr(q, "{D}")) != NULL; q += 3)
        cap += strlen(f->dir);
    char *out = xmalloc(cap);
    while (*s) {
        if (strncmp(s, "{D}", 3) == 0) {
            memcpy(out + n, f->dir, strlen(f->dir));
            n += strlen(f->dir);
            s += 3;
        } else {
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
    return out;
}

static void make(const fixture *f, const fent *e)
{
    char *p = fx(f, e->path);
    char *text = e->text ? subst(f, e->text) : NULL;
    switch (e->kind) {
    case F_DIR:
        if (mkdir(p, 0755) < 0)
            fail_msg("mkdir %s: %s", p, strerror(errno));
        break;
    case F_FILE: {
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
            fail_msg("create %s: %s", p, strerror(errno));
        size_t len = text ? strlen(text) : 0;
        if (len && write(fd, text, len) != (ssize_t)len)
            fail_msg("write %s: %s", p, strerror(errno));
        close(fd);
        break;
    }
    case F_LINK:
        if (symlink(text, p) < 0)
            fail_msg("symlink %s: %s", p, strerror(errno));
        break;
    case F_END:
        break;
    }
    free(text);
    free(p);
}

static int setup(void **state)
{
    fixture *f = xcalloc(1, sizeof *f);
    f->c = *state; /* the row, or NULL */
    const char *tmp = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/cordon-test-protect.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    if (!mkdtemp(tmpl) || !realpath(tmpl, f->dir)) {
        free(f);
        return -1;
    }
    f->ws = path_join(f->dir, "ws");
    f->home = path_join(f->dir, "home");
    if (mkdir(f->ws, 0755) < 0 || mkdir(f->home, 0755) < 0)
        return -1;
    f->p = cordon_policy_new();
    f->p->base = CORDON_BASE_EMPTY;
    f->host = (host_info){.home = f->home, .cwd = f->ws, .root = "/"};
    *state = f;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path);
}

static void drop_results(fixture *f)
{
    if (f->have_pl)
        plan_free(&f->pl);
    if (f->have_r)
        resolved_free(&f->r);
    f->have_pl = f->have_r = false;
}

static int teardown(void **state)
{
    fixture *f = *state;
    drop_results(f);
    cordon_policy_free(f->p);
    int r = nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f->ws);
    free(f->home);
    free(f);
    return r;
}

static void fresh_policy(fixture *f, cordon_base base)
{
    drop_results(f);
    cordon_policy_free(f->p);
    f->p = cordon_policy_new();
    f->p->base = base;
}

static void rule_abs(fixture *f, const char *path, cordon_access a)
{
    const char *src = a == CORDON_ACCESS_NONE ? "--deny" : a == CORDON_ACCESS_READ ? "--allow-ro" : "--allow";
    if (cordon_policy_add_path(f->p, path, a, src, &f->err) < 0)
        fail_msg("add %s: %s", path, f->err.message);
}

static void rule(fixture *f, const char *rel, cordon_access a)
{
    char *p = fx(f, rel);
    rule_abs(f, p, a);
    free(p);
}

static void resolve_ok(fixture *f)
{
    drop_results(f);
    if (resolve_policy(f->p, &f->host, &f->r, &f->err) < 0)
        fail_msg("resolve_policy: %s", f->err.message);
    f->have_r = true;
}

static void build_ok(fixture *f)
{
    resolve_ok(f);
    if (plan_build(&f->r, &f->pl, &f->err) < 0)
        fail_msg("plan_build: %s", f->err.message);
    f->have_pl = true;
}

/* The winning rule exactly at `path`, or NULL. */
static const rrule *winner_at(const fixture *f, const char *path)
{
    for (size_t i = 0; i < f->r.n_rules; i++)
        if (!f->r.rules[i].shadowed && strcmp(f->r.rules[i].path, path) == 0)
            return &f->r.rules[i];
    return NULL;
}

/* The protect rule at `path`, or NULL; fails when there are two. */
static const rrule *protect_at(const fixture *f, const char *path)
{
    const rrule *w = NULL;
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        if (x->origin != ORIGIN_PROTECT || strcmp(x->path, path) != 0)
            continue;
        if (w)
            fail_msg("two protect rules at %s", path);
        w = x;
    }
    return w;
}

static size_t n_protect(const fixture *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->r.n_rules; i++)
        n += f->r.rules[i].origin == ORIGIN_PROTECT;
    return n;
}

static const plan_op *plan_op_at(const plan *pl, plan_kind kind, const char *dest)
{
    const plan_op *w = NULL;
    for (size_t i = 0; i < pl->n_ops; i++)
        if (pl->ops[i].kind == kind && strcmp(pl->ops[i].dest, dest) == 0) {
            if (w)
                fail_msg("two %s operations at %s", plan_kind_name(kind), dest);
            w = &pl->ops[i];
        }
    return w;
}

static const char *lk_name(lk l)
{
    switch (l) {
    case LK_ANY: return "any";
    case LK_WRITE: return "writable";
    case LK_READ: return "read-only";
    case LK_HIDDEN: return "hidden";
    case LK_UNCOVERED: return "not covered";
    }
    return "?";
}

static void check_lookup(const fixture *f, const char *path, lk want)
{
    if (want == LK_ANY)
        return;
    const rrule *x = resolved_lookup(&f->r, path);
    lk got = !x ? LK_UNCOVERED
             : x->access == CORDON_ACCESS_WRITE ? LK_WRITE
             : x->access == CORDON_ACCESS_READ  ? LK_READ
                                                : LK_HIDDEN;
    if (got != want)
        fail_msg("%s: %s, expected %s (rule %s from %s)", path, lk_name(got), lk_name(want), x ? x->path : "-",
                 x ? x->source : "-");
}

static void dump_protect(const fixture *f)
{
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        if (x->origin == ORIGIN_PROTECT)
            print_message("  protect %s %s (%s)\n", access_name(x->access), x->path, x->source);
    }
}

static void check_expect(fixture *f, const expect *e)
{
    char *p = fx(f, e->path);
    const rrule *x = protect_at(f, p);
    switch (e->kind) {
    case X_HELD: {
        if (!x) {
            dump_protect(f);
            fail_msg("%s is not held", p);
        }
        assert_ptr_equal(winner_at(f, p), x);
        assert_int_equal(x->access, CORDON_ACCESS_NONE);
        assert_int_equal(x->type, FT_MISSING);
        assert_contains(x->source, "protected");
        /* the plan holds it (its first missing component: here itself) with a stub */
        assert_string_equal(x->first_missing, p);
        const plan_op *h = plan_op_at(&f->pl, PLAN_HIDE, p);
        if (!h)
            fail_msg("no hide operation holds %s", p);
        assert_true(h->stub);
        assert_true(h->is_dir);
        assert_string_equal(h->why, x->source);
        check_lookup(f, p, LK_HIDDEN);
        break;
    }
    case X_RO: {
        if (!x) {
            dump_protect(f);
            fail_msg("%s is not kept read-only", p);
        }
        assert_ptr_equal(winner_at(f, p), x);
        assert_int_equal(x->access, CORDON_ACCESS_READ);
        assert_true(x->type == FT_DIR || x->type == FT_FILE);
        struct stat st;
        assert_int_equal(lstat(p, &st), 0);
        assert_true(x->dev == st.st_dev && x->ino == st.st_ino);
        assert_contains(x->source, "protected");
        const plan_op *b = plan_op_at(&f->pl, PLAN_BIND, p);
        if (!b)
            fail_msg("no bind of %s", p);
        assert_true(b->read_only);
        assert_int_equal(b->is_dir, x->type == FT_DIR);
        assert_false(b->stub);
        assert_null(plan_op_at(&f->pl, PLAN_HIDE, p));
        check_lookup(f, p, LK_READ);
        break;
    }
    case X_NOTHING:
        if (x)
            fail_msg("%s: unexpected protect rule (%s, %s)", p, access_name(x->access), x->source);
        check_lookup(f, p, e->lookup);
        break;
    case X_END:
        break;
    }
    free(p);
}

static void test_case(void **state)
{
    fixture *f = *state;
    const pcase *c = f->c;
    for (size_t i = 0; i < sizeof c->files / sizeof *c->files && c->files[i].kind != F_END; i++)
        make(f, &c->files[i]);
    for (size_t i = 0; i < 4 && c->allow[i]; i++)
        rule(f, c->allow[i], CORDON_ACCESS_WRITE);
    for (size_t i = 0; i < 4 && c->allow_ro[i]; i++)
        rule(f, c->allow_ro[i], CORDON_ACCESS_READ);
    for (size_t i = 0; i < 4 && c->deny[i]; i++)
        rule(f, c->deny[i], CORDON_ACCESS_NONE);
    for (size_t i = 0; i < 4 && c->protect[i]; i++)
        assert_int_equal(cordon_policy_protect(f->p, c->protect[i], &f->err), 0);
    if (c->read_only)
        assert_int_equal(cordon_policy_set_read_only(f->p, true, &f->err), 0);

    if (c->fails[0]) {
        resolved r;
        if (resolve_policy(f->p, &f->host, &r, &f->err) == 0) {
            resolved_free(&r);
            fail_msg("%s: resolve_policy succeeded, expected it to fail closed", c->name);
        }
        assert_int_equal(f->err.stage, CORDON_STAGE_RESOLVE);
        for (size_t i = 0; i < 3 && c->fails[i]; i++) {
            char *want = subst(f, c->fails[i]);
            assert_contains(f->err.message, want);
            free(want);
        }
        return;
    }
    build_ok(f);
    for (size_t i = 0; i < sizeof c->ex / sizeof *c->ex && c->ex[i].kind != X_END; i++)
        check_expect(f, &c->ex[i]);
    if (c->n_protect >= 0 && n_protect(f) != (size_t)c->n_protect) {
        dump_protect(f);
        fail_msg("%s: %zu protect rules, expected %d", c->name, n_protect(f), c->n_protect);
    }
    /* every protect rule is either a read-only rule on something that exists or a
     * hidden rule on something missing (cordon never adds a write or hides what is
     * there, atop writable paths) */
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        if (x->origin != ORIGIN_PROTECT)
            continue;
        assert_true((x->access == CORDON_ACCESS_READ) == (x->type != FT_MISSING));
        assert_int_not_equal(x->access, CORDON_ACCESS_WRITE);
    }
}

/* ---- --protect NAME --------------------------------------------------------------- */

static void test_protect_names_refused(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = {"a/b", "", ".", "..", "/abs", "x/", "/"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err_clear(&f->err);
        if (cordon_policy_protect(f->p, bad[i], &f->err) == 0)
            fail_msg("--protect '%s' accepted", bad[i]);
        assert_int_equal(f->err.stage, CORDON_STAGE_USAGE);
        assert_contains(f->err.message, "--protect");
        char *quoted = xasprintf("'%s'", bad[i]);
        assert_contains(f->err.message, quoted);
        free(quoted);
    }
    assert_int_equal(cordon_policy_protect(f->p, NULL, &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_USAGE);
    assert_int_equal(f->p->protect.n, 0);
    /* a single component, even an odd one, is a name */
    static const char *const good[] = {".vscode", "...", ".env", "a b", "-x"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_int_equal(cordon_policy_protect(f->p, good[i], &f->err), 0);
    assert_int_equal(f->p->protect.n, sizeof good / sizeof *good);
    assert_string_equal(f->p->protect.v[2], ".env");
    /* they apply: "..." is held atop the workspace */
    build_ok(f);
    char *p = fx(f, "ws/...");
    assert_non_null(protect_at(f, p));
    assert_true(plan_op_at(&f->pl, PLAN_HIDE, p)->stub);
    free(p);
}

/* A rule on a missing path below a protected one: both held by one stub. */
static void test_protect_and_deny_below_share_a_stub(void **state)
{
    fixture *f = *state;
    rule(f, "ws/.codex/secret", CORDON_ACCESS_NONE);
    build_ok(f);
    char *codex = fx(f, "ws/.codex");
    char *secret = fx(f, "ws/.codex/secret");
    const plan_op *h = plan_op_at(&f->pl, PLAN_HIDE, codex);
    assert_non_null(h);
    assert_true(h->stub);
    assert_null(plan_op_at(&f->pl, PLAN_HIDE, secret));
    assert_ptr_equal(plan_covering(&f->pl, secret), h);
    free(codex);
    free(secret);
}

/* ---- --base host: credential stores ------------------------------------------------ */

static const char *const stores[] = {
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".netrc",
    ".git-credentials", ".config/gh", ".pypirc", ".npmrc",
};

static const rrule *store_rule(const fixture *f, const char *store)
{
    char *p = path_join(f->home, store);
    const rrule *x = protect_at(f, p);
    free(p);
    return x;
}

static void make_home(fixture *f)
{
    static const fent files[] = {
        {F_DIR, "home/.ssh", 0}, {F_FILE, "home/.ssh/id_ed25519", "k"}, {F_DIR, "home/.aws", 0},
        {F_FILE, "home/.netrc", "machine x"}, {F_DIR, "home/.config", 0}, {F_DIR, "home/.config/gcloud", 0},
        {F_DIR, "home/.docker", 0}, {F_FILE, "home/.npmrc", ""}, {F_DIR, "home/.config/other", 0},
        {F_FILE, "home/.bashrc", ""},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        make(f, &files[i]);
}

static void test_credential_stores(void **state)
{
    fixture *f = *state;
    make_home(f);
    fresh_policy(f, CORDON_BASE_HOST);
    rule(f, "home", CORDON_ACCESS_READ);           /* the real home is shown */
    rule(f, "home/.aws", CORDON_ACCESS_READ);      /* named exactly: shown */
    rule(f, "home/.docker", CORDON_ACCESS_NONE);   /* named exactly: the user's own deny */
    build_ok(f);
    static const char *const hidden[] = {".ssh", ".netrc", ".config/gcloud", ".npmrc"};
    for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++) {
        const rrule *x = store_rule(f, hidden[i]);
        if (!x)
            fail_msg("credential store ~/%s is not hidden", hidden[i]);
        char *p = path_join(f->home, hidden[i]);
        assert_ptr_equal(winner_at(f, p), x);
        assert_int_equal(x->access, CORDON_ACCESS_NONE);
        assert_string_equal(x->source, "credential store (--base host)");
        const plan_op *h = plan_op_at(&f->pl, PLAN_HIDE, p);
        assert_non_null(h);
        assert_false(h->stub);
        assert_int_equal(h->is_dir, x->type == FT_DIR);
        char *below = path_join(p, "x");
        assert_ptr_equal(plan_covering(&f->pl, below), h);
        free(below);
        free(p);
    }
    /* named by a rule: not touched */
    assert_null(store_rule(f, ".aws"));
    char *aws = path_join(f->home, ".aws");
    assert_int_equal(resolved_lookup(&f->r, aws)->access, CORDON_ACCESS_READ);
    free(aws);
    assert_null(store_rule(f, ".docker"));
    char *docker = path_join(f->home, ".docker");
    assert_int_equal(winner_at(f, docker)->origin, ORIGIN_FLAG);
    assert_int_equal(winner_at(f, docker)->access, CORDON_ACCESS_NONE);
    free(docker);
    /* missing ones: nothing (the home is read-only, nothing to hold) */
    static const char *const missing[] = {".gnupg", ".azure", ".kube", ".git-credentials", ".config/gh", ".pypirc"};
    for (size_t i = 0; i < sizeof missing / sizeof *missing; i++)
        assert_null(store_rule(f, missing[i]));
    /* the rest of the home stays visible */
    char *other = path_join(f->home, ".config/other");
    assert_int_equal(resolved_lookup(&f->r, other)->access, CORDON_ACCESS_READ);
    free(other);
    /* nothing else in the home is protected */
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        if (x->origin != ORIGIN_PROTECT || !path_has_prefix(x->path, f->home))
            continue;
        bool known = false;
        for (size_t k = 0; k < sizeof stores / sizeof *stores; k++) {
            char *p = path_join(f->home, stores[k]);
            known |= strcmp(p, x->path) == 0;
            free(p);
        }
        if (!known)
            fail_msg("unexpected protect rule %s in the home", x->path);
    }
}

static void test_credential_stores_writable_home(void **state)
{
    fixture *f = *state;
    make_home(f);
    fresh_policy(f, CORDON_BASE_HOST);
    rule(f, "home", CORDON_ACCESS_WRITE);
    build_ok(f);
    assert_non_null(store_rule(f, ".ssh"));
    assert_non_null(store_rule(f, ".netrc"));
    assert_null(store_rule(f, ".gnupg")); /* missing stores are not held */
    /* the writable home is a writable directory like any other */
    char *codex = path_join(f->home, ".codex");
    assert_true(plan_op_at(&f->pl, PLAN_HIDE, codex)->stub);
    free(codex);
    /* a rule above the home counts as showing it */
    fresh_policy(f, CORDON_BASE_HOST);
    rule_abs(f, f->dir, CORDON_ACCESS_READ);
    build_ok(f);
    assert_non_null(store_rule(f, ".ssh"));
}

/* The home replaced by a private one, or another base: no credential rules. */
static void test_credential_stores_not_shown(void **state)
{
    fixture *f = *state;
    make_home(f);
    /* --base host, no rule shows the home */
    fresh_policy(f, CORDON_BASE_HOST);
    build_ok(f);
    for (size_t i = 0; i < sizeof stores / sizeof *stores; i++)
        assert_null(store_rule(f, stores[i]));
    /* a rule inside the home is not the home */
    fresh_policy(f, CORDON_BASE_HOST);
    rule(f, "home/.config/other", CORDON_ACCESS_READ);
    build_ok(f);
    for (size_t i = 0; i < sizeof stores / sizeof *stores; i++)
        assert_null(store_rule(f, stores[i]));
    /* --base system and empty: the host is not shown, nothing to hide */
    for (int b = 0; b < 2; b++) {
        fresh_policy(f, b ? CORDON_BASE_SYSTEM : CORDON_BASE_EMPTY);
        rule(f, "home", CORDON_ACCESS_READ);
        build_ok(f);
        for (size_t i = 0; i < sizeof stores / sizeof *stores; i++)
            assert_null(store_rule(f, stores[i]));
    }
    /* no HOME at all */
    fresh_policy(f, CORDON_BASE_HOST);
    f->host.home = NULL;
    rule(f, "home", CORDON_ACCESS_READ);
    resolve_ok(f);
    for (size_t i = 0; i < sizeof stores / sizeof *stores; i++)
        assert_null(store_rule(f, stores[i]));
    f->host.home = f->home;
}

/* ---- --base host: other users' homes -------------------------------------------------- */

/* What the host has: every directory in /home, and /root (data-driven: this machine
 * has /home/cloudsdk and /root). */
static void other_homes(strv *out)
{
    *out = (strv){0};
    DIR *d = opendir("/home");
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            char *p = path_join("/home", de->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                strv_push(out, p);
            else
                free(p);
        }
        closedir(d);
    }
    struct stat st;
    if (lstat("/root", &st) == 0 && S_ISDIR(st.st_mode))
        strv_push(out, xstrdup("/root"));
}

static void assert_home_hidden(const fixture *f, const char *h, bool hidden)
{
    const rrule *x = protect_at(f, h);
    if (hidden) {
        if (!x)
            fail_msg("%s is not hidden", h);
        assert_ptr_equal(winner_at(f, h), x);
        assert_int_equal(x->access, CORDON_ACCESS_NONE);
        assert_string_equal(x->source, "another user's home (--base host)");
        const plan_op *op = plan_op_at(&f->pl, PLAN_HIDE, h);
        assert_non_null(op);
        assert_true(op->is_dir);
        assert_false(op->stub);
    } else if (x) {
        fail_msg("%s hidden (%s)", h, x->source);
    }
}

static void test_other_homes(void **state)
{
    fixture *f = *state;
    strv homes;
    other_homes(&homes);
    if (homes.n == 0)
        fail_msg("neither /root nor a directory in /home: nothing to check on this host");

    /* the caller's home elsewhere: all of them hidden */
    fresh_policy(f, CORDON_BASE_HOST);
    build_ok(f);
    for (size_t i = 0; i < homes.n; i++)
        assert_home_hidden(f, homes.v[i], true);

    /* one named exactly by a rule is shown; the others stay hidden */
    fresh_policy(f, CORDON_BASE_HOST);
    rule_abs(f, homes.v[0], CORDON_ACCESS_READ);
    build_ok(f);
    assert_home_hidden(f, homes.v[0], false);
    assert_int_equal(resolved_lookup(&f->r, homes.v[0])->access, CORDON_ACCESS_READ);
    for (size_t i = 1; i < homes.n; i++)
        assert_home_hidden(f, homes.v[i], true);

    /* a rule on /home shows every /home/X (not /root) */
    struct stat st;
    if (lstat("/home", &st) == 0 && S_ISDIR(st.st_mode)) {
        fresh_policy(f, CORDON_BASE_HOST);
        rule_abs(f, "/home", CORDON_ACCESS_READ);
        build_ok(f);
        for (size_t i = 0; i < homes.n; i++)
            assert_home_hidden(f, homes.v[i], strcmp(homes.v[i], "/root") == 0);
    }

    /* the caller's own home is not another user's */
    fresh_policy(f, CORDON_BASE_HOST);
    f->host.home = homes.v[0];
    build_ok(f);
    assert_home_hidden(f, homes.v[0], false);
    for (size_t i = 1; i < homes.n; i++)
        assert_home_hidden(f, homes.v[i], true);
    f->host.home = f->home;

    /* other bases do not show them in the first place */
    fresh_policy(f, CORDON_BASE_SYSTEM);
    build_ok(f);
    for (size_t i = 0; i < homes.n; i++) {
        assert_home_hidden(f, homes.v[i], false);
        assert_null(resolved_lookup(&f->r, homes.v[i]));
    }
    strv_free(&homes);
}

int main(void)
{
    enum { N = sizeof cases / sizeof *cases };
    struct CMUnitTest tests[N + 8];
    for (size_t i = 0; i < N; i++)
        tests[i] = (struct CMUnitTest){
            .name = cases[i].name,
            .test_func = test_case,
            .setup_func = setup,
            .teardown_func = teardown,
            .initial_state = (void *)&cases[i],
        };
    size_t n = N;
#define T(fn)                                                                              \
    tests[n++] = (struct CMUnitTest){.name = #fn, .test_func = fn, .setup_func = setup, .teardown_func = teardown}
    T(test_protect_names_refused);
    T(test_protect_and_deny_below_share_a_stub);
    T(test_credential_stores);
    T(test_credential_stores_writable_home);
    T(test_credential_stores_not_shown);
    T(test_other_homes);
#undef T
    return _cmocka_run_group_tests("protect", tests, n, NULL, NULL);
}
