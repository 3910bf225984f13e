// SPDX-License-Identifier: Apache-2.0
// Unit tests for deny globs (src/policy/glob.c): the matcher against a table of patterns
// and paths, the static prefix and the patterns that are refused, and the walker on a
// tree generated in a fresh mkdtemp() directory.  (Line comments: the patterns hold the
// characters that end a block comment.)
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/glob.h"
#include "policy/policy.h"
#include "policy/resolve.h"
#include "util/path.h"
#include "util/strv.h"

// ---- the matcher ----------------------------------------------------------------------

typedef struct mcase {
    const char *pattern;
    const char *path; // a trailing '/' marks a directory
    bool want;
} mcase;

static const mcase match_table[] = {
    // '*' stays inside one component, matches the empty string and dot files
    {"/r/*.env", "/r/a.env", true},
    {"/r/*.env", "/r/.env", true},
    {"/r/*.env", "/r/.env.local", false},
    {"/r/*.env", "/r/a.env.bak", false},
    {"/r/*.env", "/r/sub/a.env", false},
    {"/r/*", "/r/.hidden", true},
    {"/r/*", "/r", false},
    {"/r/*", "/r/", false},
    {"/r/a*", "/r/a", true},
    {"/r/*a*b", "/r/xaybzb", true},
    {"/r/*a*b", "/r/xaybz", false},
    {"/r/*.*.*", "/r/a.b.c", true},
    {"/r/*.*.*", "/r/a.b", false},
    // '?' is one character, never '/', a whole UTF-8 sequence where one starts
    {"/r/?.txt", "/r/a.txt", true},
    {"/r/?.txt", "/r/ab.txt", false},
    {"/r/?.txt", "/r/.txt", false},
    {"/r/?.txt", "/r/\xc3\xa9.txt", true},
    {"/r/??.txt", "/r/\xc3\xa9.txt", false},
    {"/r/a?b", "/r/a/b", false},
    // bracket expressions
    {"/r/[abc].txt", "/r/b.txt", true},
    {"/r/[abc].txt", "/r/d.txt", false},
    {"/r/[a-c]x", "/r/bx", true},
    {"/r/[a-c]x", "/r/dx", false},
    {"/r/[!a-c]x", "/r/dx", true},
    {"/r/[!a-c]x", "/r/ax", false},
    {"/r/[^a-c]x", "/r/dx", true},
    {"/r/[^a-c]x", "/r/cx", false},
    {"/r/[]]x", "/r/]x", true},
    {"/r/[]a]x", "/r/ax", true},
    {"/r/[!]]x", "/r/]x", false},
    {"/r/[!]]x", "/r/ax", true},
    {"/r/[a-]x", "/r/-x", true},
    {"/r/[-a]x", "/r/-x", true},
    {"/r/[\\]]x", "/r/]x", true},
    {"/r/[\\!a]x", "/r/!x", true},
    {"/r/[[:digit:]]x", "/r/5x", true},
    {"/r/[[:digit:]]x", "/r/ax", false},
    {"/r/[[:alpha:][:digit:]_]", "/r/_", true},
    {"/r/[![:space:]]", "/r/ ", false},
    {"/r/[[:upper:]]*", "/r/Makefile", true},
    {"/r/[[:upper:]]*", "/r/makefile", false},
    {"/r/[.]env", "/r/.env", true},
    // escapes
    {"/r/\\*", "/r/*", true},
    {"/r/\\*", "/r/a", false},
    {"/r/\\[x\\]", "/r/[x]", true},
    {"/r/a\\?", "/r/a?", true},
    {"/r/a\\?", "/r/ab", false},
    {"/r/\\\\", "/r/\\", true},
    // "**": any number of whole components, zero included
    {"/r/**/x", "/r/x", true},
    {"/r/**/x", "/r/a/x", true},
    {"/r/**/x", "/r/a/b/c/x", true},
    {"/r/**/x", "/r/a/xx", false},
    {"/r/**/x", "/r/x/a", false},
    {"/r/**/x", "/q/x", false},
    {"/r/**", "/r", true},
    {"/r/**", "/r/a", true},
    {"/r/**", "/r/a/b/.c", true},
    {"/r/**", "/rr", false},
    {"/r/**/*.env", "/r/.env", true},
    {"/r/**/*.env", "/r/.git/x.env", true},
    {"/r/**/*.env", "/r/a/b.env/c", false},
    {"/r/**/.env.local", "/r/a/.env.local", true},
    {"/r/**/.env.local", "/r/a/x.env.local", false},
    {"/r/a/**/b/**/c", "/r/a/b/c", true},
    {"/r/a/**/b/**/c", "/r/a/x/b/y/z/c", true},
    {"/r/a/**/b/**/c", "/r/a/b/b/c", true},
    {"/r/a/**/b/**/c", "/r/a/c", false},
    {"/r/**/**/x", "/r/x", true},
    {"/r/**/a/*/b", "/r/q/a/z/b", true},
    {"/r/**/a/*/b", "/r/q/a/b", false},
    // "**" inside a longer component is two '*'
    {"/r/a**b", "/r/axxb", true},
    {"/r/a**b", "/r/ax/b", false},
    {"/r/**.env", "/r/a.env", true},
    {"/r/**.env", "/r/a/b.env", false},
    // trailing slashes: a pattern ending in '/' matches directories only
    {"/r/*/", "/r/a/", true},
    {"/r/*/", "/r/a", false},
    {"/r/**/", "/r/a/b/", true},
    {"/r/**/", "/r/a/b", false},
    {"/r/a", "/r/a/", true},
    {"/r/a/", "/r/a", false},
    // separators and "." are lexical noise
    {"/r//a", "/r/a", true},
    {"/r/./a", "/r/a", true},
    {"/r/*", "/r//a", true},
    // case-sensitive, byte-exact
    {"/r/A", "/r/a", false},
    {"/r/*.ENV", "/r/x.env", false},
};

static void test_match_table(void **state)
{
    (void)state;
    size_t bad = 0;
    for (size_t i = 0; i < sizeof match_table / sizeof *match_table; i++) {
        const mcase *c = &match_table[i];
        bool got = glob_match(c->pattern, c->path);
        if (got != c->want) {
            print_error("glob_match(\"%s\", \"%s\") = %d, want %d\n", c->pattern, c->path, got, c->want);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

// ---- compiling: static prefix, refusals ------------------------------------------------

typedef struct pcase {
    const char *pattern;
    const char *prefix; // NULL: refused
    const char *walk_from;
    const char *why; // part of the refusal message
} pcase;

static const pcase prefix_table[] = {
    {"/r/**/*.env", "/r", "/r", NULL},
    {"/r/s/*.env", "/r/s", "/r/s", NULL},
    {"/r/s/t", "/r/s/t", "/r/s", NULL},
    {"/etc", "/etc", "/", NULL},
    {"/r/\\*x/y*", "/r/*x", "/r/*x", NULL},
    {"/a/b/[c]/d", "/a/b", "/a/b", NULL},
    {"/a//b/./c*/", "/a/b", "/a/b", NULL},
    {"/a/b/**", "/a/b", "/a/b", NULL},
    {"/*.env", NULL, NULL, "no static directory prefix"},
    {"/**/x", NULL, NULL, "no static directory prefix"},
    {"/**", NULL, NULL, "no static directory prefix"},
    {"/[ab]/x", NULL, NULL, "whole file system"},
    {"/", NULL, NULL, "names only '/'"},
    {"//", NULL, NULL, "names only '/'"},
    {"", NULL, NULL, "empty pattern"},
    {"r/*.env", NULL, NULL, "not an absolute pattern"},
    {"**/*.env", NULL, NULL, "not an absolute pattern"},
    {"/r/[abc", NULL, NULL, "without a closing ']'"},
    {"/r/[a/b]", NULL, NULL, "without a closing ']'"},
    {"/r/[]", NULL, NULL, "without a closing ']'"},
    {"/r/[!]", NULL, NULL, "without a closing ']'"},
    {"/r/a\\", NULL, NULL, "escapes nothing"},
    {"/r/a\\/b", NULL, NULL, "cannot be escaped"},
    {"/r/../x/*", NULL, NULL, "'..' is not allowed"},
    {"/r/*/../x", NULL, NULL, "'..' is not allowed"},
    {"/r/[[:foo:]]", NULL, NULL, "unknown character class"},
    {"/r/[z-a]", NULL, NULL, "end comes before its start"},
};

static void test_prefix_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof prefix_table / sizeof *prefix_table; i++) {
        const pcase *c = &prefix_table[i];
        glob_pat *g = NULL;
        cordon_error err = {0};
        int r = glob_compile(c->pattern, &g, &err);
        if (c->prefix) {
            if (r < 0)
                fail_msg("glob_compile(\"%s\") refused: %s", c->pattern, err.message);
            assert_string_equal(glob_pat_prefix(g), c->prefix);
            assert_string_equal(glob_pat_walk_from(g), c->walk_from);
            assert_string_equal(glob_pat_text(g), c->pattern);
            glob_pat_free(g);
        } else {
            if (r == 0)
                fail_msg("glob_compile(\"%s\") accepted, want refused (%s)", c->pattern, c->why);
            assert_null(g);
            assert_int_equal(err.stage, CORDON_STAGE_USAGE);
            if (!strstr(err.message, c->why))
                fail_msg("glob_compile(\"%s\"): \"%s\" does not say \"%s\"", c->pattern, err.message, c->why);
        }
    }
}

static void test_has_magic_and_syntax(void **state)
{
    (void)state;
    assert_true(glob_has_magic("/r/*.env"));
    assert_true(glob_has_magic("a?"));
    assert_true(glob_has_magic("[x"));
    assert_false(glob_has_magic("/plain/path"));
    assert_false(glob_has_magic("/r/\\*"));
    assert_false(glob_has_magic(""));
    cordon_error err = {0};
    // settings syntax is not absolute yet, but its brackets and escapes can be checked
    assert_int_equal(glob_check_syntax("**/*.env", &err), 0);
    assert_int_equal(glob_check_syntax("~/.config/**/token*", &err), 0);
    assert_int_equal(glob_check_syntax("<workspace>/secrets/*", &err), 0);
    assert_int_equal(glob_check_syntax("./a/*", &err), 0);
    assert_int_equal(glob_check_syntax("a/[bc", &err), -1);
    assert_non_null(strstr(err.message, "closing ']'"));
    assert_int_equal(glob_check_syntax("../*", &err), -1);
    assert_int_equal(glob_check_syntax("", &err), -1);
}

// A pattern with many components is refused rather than mis-matched.
static void test_too_many_components(void **state)
{
    (void)state;
    char pat[4096] = "/r";
    for (int i = 0; i < GLOB_MAX_COMPONENTS; i++)
        strcat(pat, "/*");
    glob_pat *g = NULL;
    cordon_error err = {0};
    assert_int_equal(glob_compile(pat, &g, &err), -1);
    assert_non_null(strstr(err.message, "components"));
    pat[strlen(pat) - 2] = '\0';
    assert_int_equal(glob_compile(pat, &g, &err), 0);
    glob_pat_free(g);
}

// ---- the walker -------------------------------------------------------------------------

typedef struct fixture {
    char dir[PATH_MAX]; // canonical
} fixture;

static void mk(const fixture *f, const char *rel)
{
    char *p = path_join(f->dir, rel);
    if (mkdir(p, 0755) < 0)
        fail_msg("mkdir %s: %s", p, strerror(errno));
    free(p);
}

static void touch(const fixture *f, const char *rel)
{
    char *p = path_join(f->dir, rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        fail_msg("create %s: %s", p, strerror(errno));
    close(fd);
    free(p);
}

static void ln(const fixture *f, const char *target, const char *rel)
{
    char *p = path_join(f->dir, rel);
    if (symlink(target, p) < 0)
        fail_msg("symlink %s: %s", p, strerror(errno));
    free(p);
}

//   a.env  .env  keep.txt  .env.local
//   sub/b.env  sub/.env.local  sub/deep/c.env  sub/deep/deeper/d.env
//   dir.env/inner.env            a directory that matches, with a match inside
//   link_dir -> sub              a symlink to a directory: never followed
//   link.env -> sub/b.env        a symlink that matches: its target is reported
//   dangling.env -> nowhere      a symlink that matches, to nothing
//   linkdir.env -> sub           a symlink that matches, to a directory
//   .git/hooks/pre.env           dot directories are walked
static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    const char *tmp = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/cordon-test-glob.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    if (!f || !mkdtemp(tmpl) || !realpath(tmpl, f->dir))
        return -1;
    if (chmod(f->dir, 0755) < 0)
        return -1;
    touch(f, "a.env");
    touch(f, ".env");
    touch(f, ".env.local");
    touch(f, "keep.txt");
    mk(f, "sub");
    touch(f, "sub/b.env");
    touch(f, "sub/.env.local");
    touch(f, "sub/keep.txt");
    mk(f, "sub/deep");
    touch(f, "sub/deep/c.env");
    mk(f, "sub/deep/deeper");
    touch(f, "sub/deep/deeper/d.env");
    mk(f, "dir.env");
    touch(f, "dir.env/inner.env");
    ln(f, "sub", "link_dir");
    ln(f, "sub/b.env", "link.env");
    ln(f, "nowhere", "dangling.env");
    ln(f, "sub", "linkdir.env");
    mk(f, ".git");
    mk(f, ".git/hooks");
    touch(f, ".git/hooks/pre.env");
    *state = f;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    chmod(path, 0755); // tests make directories unreadable; ignored for symlinks' targets
    return remove(path);
}

static int make_removable(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type == FTW_D || type == FTW_DNR)
        chmod(path, 0755);
    (void)st;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    nftw(f->dir, make_removable, 16, FTW_PHYS);
    int r = nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return r;
}

// Expand the patterns (each relative to the fixture: "DIR/" is prepended) and return the
// hits as one string "rel[@pattern][->target-rel] rel ...", relative to the fixture.
static char *expand(const fixture *f, const char *const *rel, size_t n, const glob_walk_opts *o, int *rc,
                    cordon_error *err)
{
    glob_pat **pats = calloc(n, sizeof *pats);
    const char **roots = calloc(n, sizeof *roots);
    for (size_t i = 0; i < n; i++) {
        char *pat = xasprintf("%s/%s", f->dir, rel[i]);
        if (glob_compile(pat, &pats[i], err) < 0)
            fail_msg("glob_compile(%s): %s", pat, err->message);
        roots[i] = glob_pat_walk_from(pats[i]);
        free(pat);
    }
    glob_hits h;
    size_t failed = SIZE_MAX;
    *rc = glob_expand(pats, roots, n, o, &h, &failed, err);
    char *s = xstrdup("");
    size_t dl = strlen(f->dir);
    for (size_t i = 0; *rc == 0 && i < h.n; i++) {
        const glob_hit *x = &h.v[i];
        assert_true(strncmp(x->path, f->dir, dl) == 0);
        char *t = NULL;
        if (x->is_link)
            t = x->target ? xasprintf("->%s%s", strncmp(x->target, f->dir, dl) == 0 ? x->target + dl + 1 : x->target,
                                      x->target_type == FT_MISSING ? "(missing)"
                                      : x->target_type == FT_DIR   ? "(dir)"
                                                                   : "")
                          : xasprintf("->?");
        char *pat = x->pattern ? xasprintf("@%zu", x->pattern) : xstrdup("");
        char *next = xasprintf("%s%s%s%s%s", s, *s ? " " : "", x->path + dl + 1, pat, t ? t : "");
        free(pat);
        free(t);
        free(s);
        s = next;
    }
    if (*rc < 0)
        assert_true(failed < n);
    glob_hits_free(&h);
    for (size_t i = 0; i < n; i++)
        glob_pat_free(pats[i]);
    free(pats);
    free(roots);
    return s;
}

static void expect(const fixture *f, const char *pattern, const glob_walk_opts *o, const char *want)
{
    int rc;
    cordon_error err = {0};
    const char *pats[] = {pattern};
    char *got = expand(f, pats, 1, o, &rc, &err);
    if (rc < 0)
        fail_msg("glob_expand(%s): %s", pattern, err.message);
    if (strcmp(got, want) != 0)
        fail_msg("glob_expand(%s):\n  got  %s\n  want %s", pattern, got, want);
    free(got);
}

static const glob_walk_opts unlimited = {.max_depth = -1};

static void test_walk_starstar(void **state)
{
    fixture *f = *state;
    // dir.env is matched whole (not entered); link_dir is not followed; symlinks that
    // match are matches, with their targets; .git is walked
    expect(f, "**/*.env", &unlimited,
           ".env .git/hooks/pre.env a.env dangling.env->nowhere(missing) dir.env "
           "link.env->sub/b.env linkdir.env->sub(dir) sub/b.env sub/deep/c.env sub/deep/deeper/d.env");
}

static void test_walk_descend_matches(void **state)
{
    fixture *f = *state;
    glob_walk_opts o = {.max_depth = -1, .descend_matches = true};
    int rc;
    cordon_error err = {0};
    const char *pats[] = {"**/*.env"};
    char *got = expand(f, pats, 1, &o, &rc, &err);
    assert_int_equal(rc, 0);
    if (!strstr(got, "dir.env dir.env/inner.env "))
        fail_msg("descend_matches: %s", got);
    free(got);
}

static void test_walk_depth(void **state)
{
    fixture *f = *state;
    glob_walk_opts d1 = {.max_depth = 1}, d2 = {.max_depth = 2}, d3 = {.max_depth = 3};
    expect(f, "**/*.env", &d1,
           ".env a.env dangling.env->nowhere(missing) dir.env link.env->sub/b.env "
           "linkdir.env->sub(dir)");
    expect(f, "**/*.env", &d2,
           ".env a.env dangling.env->nowhere(missing) dir.env link.env->sub/b.env "
           "linkdir.env->sub(dir) sub/b.env");
    expect(f, "**/*.env", &d3,
           ".env .git/hooks/pre.env a.env dangling.env->nowhere(missing) dir.env "
           "link.env->sub/b.env linkdir.env->sub(dir) sub/b.env sub/deep/c.env");
    // the depth counts from the static prefix, not from the walk's first directory
    expect(f, "sub/**/*.env", &d1, "sub/b.env");
    expect(f, "sub/**/*.env", &d2, "sub/b.env sub/deep/c.env");
    // a pattern without any glob character is not limited
    expect(f, "sub/deep/deeper/d.env", &d1, "sub/deep/deeper/d.env");
}

static void test_walk_symlink_dir_not_followed(void **state)
{
    fixture *f = *state;
    // link_dir -> sub: "link_dir/b.env" exists through the link, but the walker never
    // enters a symlink, whatever the pattern
    expect(f, "*/b.env", &unlimited, "sub/b.env");
    expect(f, "*/deep/**", &unlimited, "sub/deep");
    expect(f, "link*", &unlimited, "link.env->sub/b.env link_dir->sub(dir) linkdir.env->sub(dir)");
}

static void test_walk_dir_only(void **state)
{
    fixture *f = *state;
    // a trailing '/': directories, and symlinks to directories
    expect(f, "**/*.env/", &unlimited, "dir.env linkdir.env->sub(dir)");
}

static void test_walk_literal(void **state)
{
    fixture *f = *state;
    expect(f, "sub/deep/c.env", &unlimited, "sub/deep/c.env");
    expect(f, "sub/deep/none.env", &unlimited, "");
    expect(f, "sub/*/c.env", &unlimited, "sub/deep/c.env");
    expect(f, "*/deep/deeper/d.env", &unlimited, "sub/deep/deeper/d.env");
    expect(f, "missing/**/*.env", &unlimited, "");
    expect(f, "keep.txt/*", &unlimited, "");
}

static void test_walk_root_match(void **state)
{
    fixture *f = *state;
    // "**" matches zero components: DIR/sub/** is DIR/sub itself, hidden whole
    expect(f, "sub/**", &unlimited, "sub");
    glob_walk_opts o = {.max_depth = -1, .descend_matches = true};
    expect(f, "sub/deep/**", &o, "sub/deep sub/deep/c.env sub/deep/deeper sub/deep/deeper/d.env");
}

static void test_walk_classes(void **state)
{
    fixture *f = *state;
    expect(f, "[.]env*", &unlimited, ".env .env.local");
    expect(f, "[!.]*.env", &unlimited,
           "a.env dangling.env->nowhere(missing) dir.env link.env->sub/b.env linkdir.env->sub(dir)");
    expect(f, "?.env", &unlimited, "a.env");
}

static void test_walk_two_patterns_one_walk(void **state)
{
    fixture *f = *state;
    int rc;
    cordon_error err = {0};
    const char *pats[] = {"**/*.env", "**/.env.local"};
    char *got = expand(f, pats, 2, &unlimited, &rc, &err);
    assert_int_equal(rc, 0);
    // the second pattern's matches carry its index
    if (!strstr(got, ".env.local@1 ") || !strstr(got, "sub/.env.local@1 ") || !strstr(got, "sub/b.env "))
        fail_msg("two patterns: %s", got);
    free(got);
}

static void test_walk_limit(void **state)
{
    fixture *f = *state;
    glob_walk_opts o = {.max_depth = -1, .max_matches = 3};
    int rc;
    cordon_error err = {0};
    const char *pats[] = {"keep.txt", "**/*.env"};
    char *got = expand(f, pats, 2, &o, &rc, &err);
    assert_int_equal(rc, -1);
    assert_int_equal(err.stage, CORDON_STAGE_RESOLVE);
    if (!strstr(err.message, "/**/*.env'") || !strstr(err.message, "more than 3"))
        fail_msg("limit message: %s", err.message);
    free(got);
    // at the limit exactly, fine
    o.max_matches = 10;
    const char *one[] = {"**/*.env"};
    got = expand(f, one, 1, &o, &rc, &err);
    assert_int_equal(rc, 0);
    free(got);
}

// Run fn in a child as uid/gid 65534 (the walker's permission rules only show without
// root's capabilities); returns the child's exit status.
static int as_nobody(const fixture *f, int (*fn)(const fixture *))
{
    if (geteuid() != 0)
        return fn(f);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
            _exit(90);
        _exit(fn(f));
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int walk_sealed(const fixture *f)
{
    int rc;
    cordon_error err = {0};
    const char *pats[] = {"**/*.env"};
    char *got = expand(f, pats, 1, &unlimited, &rc, &err);
    int ret = rc == 0 && strstr(got, "sub/b.env") && !strstr(got, "sealed") && !strstr(got, "listonly") ? 0 : 1;
    if (ret)
        fprintf(stderr, "walk_sealed: rc %d: %s %s\n", rc, got, err.message);
    free(got);
    return ret;
}

static int walk_searchable(const fixture *f)
{
    int rc;
    cordon_error err = {0};
    const char *pats[] = {"**/*.env"};
    char *got = expand(f, pats, 1, &unlimited, &rc, &err);
    int ret = rc == -1 && strstr(err.message, "search/x") && strstr(err.message, "cannot list") ? 0 : 1;
    if (ret)
        fprintf(stderr, "walk_searchable: rc %d: %s %s\n", rc, got, err.message);
    free(got);
    // a literal name below it is still found without listing
    const char *lit[] = {"search/x/in.env"};
    got = expand(f, lit, 1, &unlimited, &rc, &err);
    if (rc != 0 || strcmp(got, "search/x/in.env") != 0) {
        fprintf(stderr, "walk_searchable literal: rc %d: %s %s\n", rc, got, err.message);
        ret = 1;
    }
    free(got);
    return ret;
}

// A directory nobody but its owner (root) may enter cannot hold anything a command
// running as uid 65534 could read: skipped.  One it may enter but not list could: the
// walk fails closed.
static void test_walk_permissions(void **state)
{
    fixture *f = *state;
    mk(f, "sealed");
    touch(f, "sealed/in.env");
    mk(f, "search");
    mk(f, "search/x");
    touch(f, "search/x/in.env");
    // may list, may not search: the names show, but nothing in it can be opened
    mk(f, "listonly");
    touch(f, "listonly/in.env");
    char *sealed = path_join(f->dir, "sealed"), *search = path_join(f->dir, "search/x");
    char *listonly = path_join(f->dir, "listonly");
    if (geteuid() == 0) {
        // owned by root, so that mode bits decide for uid 65534
        assert_int_equal(chmod(sealed, 0700), 0);
        assert_int_equal(chmod(search, 0711), 0);
        assert_int_equal(chmod(listonly, 0744), 0);
    } else {
        assert_int_equal(chmod(sealed, 0000), 0);
        assert_int_equal(chmod(search, 0100), 0);
        assert_int_equal(chmod(listonly, 0400), 0);
    }
    assert_int_equal(as_nobody(f, walk_searchable), 0);
    assert_int_equal(chmod(search, geteuid() == 0 ? 0700 : 0000), 0);
    assert_int_equal(as_nobody(f, walk_sealed), 0);
    chmod(search, 0755);
    chmod(sealed, 0755);
    chmod(listonly, 0755);
    free(listonly);
    free(sealed);
    free(search);
}

// ---- resolution: globs become deny rules ---------------------------------------------

typedef struct rfix {
    fixture *f;
    struct cordon_policy *p;
    host_info host;
    resolved r;
    bool have_r;
    cordon_error err;
    char *ws, *home;
} rfix;

static rfix *rsetup(fixture *f)
{
    rfix *x = xcalloc(1, sizeof *x);
    x->f = f;
    x->ws = path_join(f->dir, "ws");
    x->home = path_join(f->dir, "home");
    mk(f, "ws");
    mk(f, "home");
    mk(f, "out");
    touch(f, "out/secret");
    touch(f, "ws/a.env");
    mk(f, "ws/sub");
    touch(f, "ws/sub/b.env");
    touch(f, "ws/keep.txt");
    ln(f, "../out/secret", "ws/link.env");
    ln(f, "nowhere", "ws/dangling.env");
    x->p = cordon_policy_new();
    x->p->base = CORDON_BASE_EMPTY;
    assert_int_equal(cordon_policy_set_workspace(x->p, x->ws, &x->err), 0);
    x->host = (host_info){.home = x->home, .cwd = x->ws, .root = "/"};
    return x;
}

static void rteardown(rfix *x)
{
    if (x->have_r)
        resolved_free(&x->r);
    cordon_policy_free(x->p);
    free(x->ws);
    free(x->home);
    free(x);
}

static void deny_glob(rfix *x, const char *rel)
{
    char *pat = path_join(x->f->dir, rel);
    if (cordon_policy_add_deny_glob(x->p, pat, NULL, &x->err) < 0)
        fail_msg("cordon_policy_add_deny_glob(%s): %s", pat, x->err.message);
    free(pat);
}

static void resolve_ok(rfix *x)
{
    if (resolve_policy(x->p, &x->host, &x->r, &x->err) < 0)
        fail_msg("resolve_policy: %s", x->err.message);
    x->have_r = true;
}

// The rule on DIR/rel that won, or NULL.
static const rrule *rule_at(const rfix *x, const char *rel)
{
    char *p = path_join(x->f->dir, rel);
    const rrule *found = NULL;
    for (size_t i = 0; i < x->r.n_rules; i++)
        if (!x->r.rules[i].shadowed && strcmp(x->r.rules[i].path, p) == 0)
            found = &x->r.rules[i];
    free(p);
    return found;
}

static const rnote *note_for(const rfix *x, const char *kind, const char *rel)
{
    char *p = path_join(x->f->dir, rel);
    const rnote *found = NULL;
    for (size_t i = 0; i < x->r.n_notes; i++)
        if (strcmp(x->r.notes[i].kind, kind) == 0 && strcmp(x->r.notes[i].path, p) == 0)
            found = &x->r.notes[i];
    free(p);
    return found;
}

static void test_resolve_globs_become_deny_rules(void **state)
{
    rfix *x = rsetup(*state);
    char *out = path_join(x->f->dir, "out");
    assert_int_equal(cordon_policy_add_path(x->p, out, CORDON_ACCESS_READ, "--allow-ro", &x->err), 0);
    deny_glob(x, "ws/**/*.env");
    resolve_ok(x);
    char *src = xasprintf("deny glob %s/ws/**/*.env", x->f->dir);
    const char *hidden[] = {"ws/a.env", "ws/sub/b.env"};
    for (size_t i = 0; i < 2; i++) {
        const rrule *r = rule_at(x, hidden[i]);
        if (!r)
            fail_msg("no rule on %s", hidden[i]);
        assert_int_equal(r->access, CORDON_ACCESS_NONE);
        assert_int_equal(r->origin, ORIGIN_FLAG);
        assert_int_equal(r->type, FT_FILE);
        assert_string_equal(r->source, src);
        assert_string_equal(r->given, r->path);
    }
    assert_null(rule_at(x, "ws/keep.txt"));
    // the symlink match hides its target, and says through which link
    const rrule *t = rule_at(x, "out/secret");
    assert_non_null(t);
    assert_int_equal(t->access, CORDON_ACCESS_NONE);
    assert_non_null(strstr(t->given, "/ws/link.env"));
    assert_string_equal(t->source, src);
    // the dangling one hides nothing, and explain says so
    const rnote *n = note_for(x, "skip", "ws/dangling.env");
    assert_non_null(n);
    assert_non_null(strstr(n->why, "does not exist"));
    n = note_for(x, "glob", "ws/**/*.env");
    assert_non_null(n);
    assert_non_null(strstr(n->why, "4 matches under "));
    free(src);
    free(out);
    rteardown(x);
}

static void test_resolve_glob_not_visible(void **state)
{
    rfix *x = rsetup(*state);
    // out/ is not shown: the link's target needs no rule
    deny_glob(x, "ws/*.env");
    resolve_ok(x);
    assert_null(rule_at(x, "out/secret"));
    const rnote *n = note_for(x, "skip", "ws/link.env");
    assert_non_null(n);
    assert_non_null(strstr(n->why, "not visible"));
    assert_non_null(rule_at(x, "ws/a.env"));
    // with --no-workspace, nothing is visible at all
    resolved_free(&x->r);
    x->have_r = false;
    assert_int_equal(cordon_policy_set_no_workspace(x->p, true, &x->err), 0);
    resolve_ok(x);
    assert_null(rule_at(x, "ws/a.env"));
    assert_non_null(note_for(x, "skip", "ws/a.env"));
    rteardown(x);
}

static void test_resolve_glob_rule_below_match(void **state)
{
    rfix *x = rsetup(*state);
    mk(x->f, "ws/secrets");
    mk(x->f, "ws/secrets/public");
    touch(x->f, "ws/secrets/public/secret-key");
    touch(x->f, "ws/secrets/public/readme");
    char *pub = path_join(x->f->dir, "ws/secrets/public");
    assert_int_equal(cordon_policy_add_path(x->p, pub, CORDON_ACCESS_READ, "--allow-ro", &x->err), 0);
    deny_glob(x, "ws/**/secret*");
    resolve_ok(x);
    assert_non_null(rule_at(x, "ws/secrets"));
    const rrule *k = rule_at(x, "ws/secrets/public/secret-key");
    assert_non_null(k);
    assert_int_equal(k->access, CORDON_ACCESS_NONE);
    assert_null(rule_at(x, "ws/secrets/public/readme"));
    free(pub);
    rteardown(x);
}

static void test_resolve_glob_settings(void **state)
{
    rfix *x = rsetup(*state);
    char *file = path_join(x->f->dir, "settings.json");
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fputs("{\"sandbox\": {\n  \"deniedPaths\": [\n    \"**/*.env\",\n    \"~/*.key\"]}}\n", fp);
    fclose(fp);
    touch(x->f, "home/id.key");
    assert_int_equal(cordon_policy_load_settings(x->p, file, &x->err), 0);
    resolve_ok(x);
    const rrule *r = rule_at(x, "ws/sub/b.env");
    assert_non_null(r);
    assert_int_equal(r->origin, ORIGIN_SETTINGS);
    char *want = xasprintf("%s:3 (deniedPaths \"**/*.env\")", file);
    assert_string_equal(r->source, want);
    free(want);
    // the home is the sandbox's private HOME: its files need no rule
    assert_null(rule_at(x, "home/id.key"));
    const rnote *n = note_for(x, "skip", "home/id.key");
    assert_non_null(n);
    assert_true(strstr(n->why, "private HOME") || strstr(n->why, "not visible"));
    free(file);
    rteardown(x);
}

static void test_resolve_glob_refusals(void **state)
{
    rfix *x = rsetup(*state);
    // a prefix that is "/" once symlinks are followed
    ln(x->f, "/", "rootlink");
    deny_glob(x, "rootlink/*.env");
    assert_int_equal(resolve_policy(x->p, &x->host, &x->r, &x->err), -1);
    assert_non_null(strstr(x->err.message, "whole file system"));
    assert_non_null(strstr(x->err.message, "deny glob"));
    rteardown(x);

    // the setter refuses what it can see at once
    struct cordon_policy *p = cordon_policy_new();
    cordon_error err = {0};
    assert_int_equal(cordon_policy_add_deny_glob(p, "/*.env", NULL, &err), -1);
    assert_int_equal(err.stage, CORDON_STAGE_USAGE);
    assert_non_null(strstr(err.message, "deny glob '/*.env' has no static directory prefix"));
    assert_int_equal(cordon_policy_add_deny_glob(p, "rel/*.env", "--my-glob", &err), -1);
    assert_non_null(strstr(err.message, "--my-glob: "));
    assert_int_equal(cordon_policy_set_glob_depth(p, 0, &err), -1);
    assert_int_equal(cordon_policy_set_glob_depth(p, 4097, &err), -1);
    assert_int_equal(cordon_policy_set_glob_depth(p, 3, &err), 0);
    assert_int_equal(p->glob_depth, 3);
    assert_int_equal(cordon_policy_set_glob_depth(p, -1, &err), 0);
    assert_int_equal(p->n_globs, 0);
    cordon_policy_free(p);
}

static void test_resolve_glob_depth(void **state)
{
    rfix *x = rsetup(*state);
    deny_glob(x, "ws/**/*.env");
    assert_int_equal(cordon_policy_set_glob_depth(x->p, 1, &x->err), 0);
    resolve_ok(x);
    assert_non_null(rule_at(x, "ws/a.env"));
    assert_null(rule_at(x, "ws/sub/b.env"));
    const rnote *n = note_for(x, "glob", "ws/**/*.env");
    assert_non_null(n);
    assert_non_null(strstr(n->why, "(depth 1)"));
    rteardown(x);
}

static void test_walk_keep_below(void **state)
{
    fixture *f = *state;
    // a rule below a matched directory makes the walk look inside it, and only it
    char *below = path_join(f->dir, "dir.env/x");
    const char *keep[] = {below};
    glob_walk_opts o = {.max_depth = -1, .keep_below = keep, .n_keep = 1};
    int rc;
    cordon_error err = {0};
    const char *pats[] = {"**/*.env"};
    char *got = expand(f, pats, 1, &o, &rc, &err);
    assert_int_equal(rc, 0);
    if (!strstr(got, " dir.env dir.env/inner.env ") || strstr(got, "sub/deep/deeper/d.env") == NULL)
        fail_msg("keep_below: %s", got);
    free(got);
    free(below);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_table),
        cmocka_unit_test(test_prefix_table),
        cmocka_unit_test(test_has_magic_and_syntax),
        cmocka_unit_test(test_too_many_components),
        cmocka_unit_test_setup_teardown(test_walk_starstar, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_descend_matches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_depth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_symlink_dir_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_dir_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_literal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_root_match, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_classes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_two_patterns_one_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_permissions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_keep_below, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_globs_become_deny_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_glob_not_visible, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_glob_rule_below_match, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_glob_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_glob_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_glob_depth, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
