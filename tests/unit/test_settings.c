// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the settings-file reader (settings.c) and its line locator (jsonpos.c).
 * Fixtures are written into a fresh mkdtemp() directory and removed afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/jsonpos.h"
#include "policy/policy.h"
#include "util/strv.h"

#define SANDBOX_KEYS                                                                                                  \
    "enabled, network, readOnly, allowedPaths, deniedPaths, limitPids, limitMemory, limitCpu, isolation, "            \
    "hiddenPaths, allowedDomains, deniedDomains, addHosts, dnsServers, allowUnixSockets, forwardPorts, "              \
    "publishPorts, networkLog, allowedSockets, base, workspace, noWorkspace, readOnlyPaths, deniedGlobs, globDepth, " \
    "protect, "                                                                                                       \
    "dataRoot, env, keepEnv, clearEnv, chdir, timeout, statusJson, noProc, noNested, toolchains, tty, strictSettings"

typedef struct fixture {
    char dir[PATH_MAX];
    struct cordon_policy *p;
    cordon_error err;
} fixture;

static int setup(void **state)
{
    fixture *f = xcalloc(1, sizeof *f);
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/cordon-test-settings.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    f->p = cordon_policy_new();
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

static int teardown(void **state)
{
    fixture *f = *state;
    cordon_policy_free(f->p);
    int r = nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return r;
}

/* Write `len` bytes of `content` to DIR/name; returns the path (caller frees). */
static char *write_bytes(const fixture *f, const char *name, const char *content, size_t len)
{
    char *path = xasprintf("%s/%s", f->dir, name);
    FILE *fp = fopen(path, "we");
    assert_non_null(fp);
    assert_int_equal(fwrite(content, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
    return path;
}

static char *write_fixture(const fixture *f, const char *name, const char *content)
{
    return write_bytes(f, name, content, strlen(content));
}

#define assert_contains(hay, needle)                                     \
    do {                                                                 \
        if (!strstr((hay), (needle)))                                    \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle)); \
    } while (0)

/* Load content from DIR/name and expect failure with exactly "DIR/name" + suffix. */
static void expect_error(fixture *f, const char *name, const char *content, const char *suffix)
{
    char *path = write_fixture(f, name, content);
    char *want = xasprintf("%s%s", path, suffix);
    assert_int_equal(settings_load(f->p, path, &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_SETTINGS);
    assert_string_equal(f->err.message, want);
    /* A rejected file changes nothing. */
    assert_int_equal(f->p->n_rules, 0);
    assert_int_equal(f->p->settings_enabled, -1);
    free(want);
    free(path);
}

/* Load content from DIR/name and expect success; the file's path (free it). */
static char *load_ok(fixture *f, const char *name, const char *content)
{
    char *path = write_fixture(f, name, content);
    assert_int_equal(settings_load(f->p, path, &f->err), 0);
    return path;
}

static void assert_rule(const policy_rule *r, const char *path, cordon_access access, const char *source, int line)
{
    assert_string_equal(r->path, path);
    assert_int_equal(r->access, access);
    assert_int_equal(r->origin, ORIGIN_SETTINGS);
    assert_string_equal(r->source, source);
    assert_int_equal(r->line, line);
    assert_true(r->expand);
}

static void test_full_file(void **state)
{
    fixture *f = *state;
    char *path = load_ok(f, "settings.json",
                         "{\n"
                         "  \"sandbox\": {\n"
                         "    \"enabled\": true,\n"
                         "    \"network\": true,\n"
                         "    \"readOnly\": true,\n"
                         "    \"allowedPaths\": [\"<workspace>\", \"<data-root>\",\n"
                         "                     \"~/.cache/pip\"],\n"
                         "    \"deniedPaths\": [\n"
                         "      \"<workspace>/secrets\",\n"
                         "      \"rel/dir\"\n"
                         "    ]\n"
                         "  }\n"
                         "}\n");
    assert_int_equal(f->p->settings_enabled, 1);
    assert_int_equal(f->p->network, CORDON_NETWORK_HOST);
    assert_true(f->p->read_only);
    assert_false(f->p->network_set);
    assert_false(f->p->read_only_set);
    assert_int_equal(f->p->n_rules, 5);
    assert_rule(&f->p->rules[0], "<workspace>", CORDON_ACCESS_WRITE, path, 6);
    assert_rule(&f->p->rules[1], "<data-root>", CORDON_ACCESS_WRITE, path, 6);
    assert_rule(&f->p->rules[2], "~/.cache/pip", CORDON_ACCESS_WRITE, path, 7);
    assert_rule(&f->p->rules[3], "<workspace>/secrets", CORDON_ACCESS_NONE, path, 9);
    assert_rule(&f->p->rules[4], "rel/dir", CORDON_ACCESS_NONE, path, 10);
    free(path);
}

static void test_false_values(void **state)
{
    fixture *f = *state;
    char *path = write_fixture(f, "s.json",
                               "{\"sandbox\": {\"enabled\": false, \"network\": false, "
                               "\"readOnly\": false}}");
    f->p->network = CORDON_NETWORK_HOST; /* the file must set it back to none */
    f->p->read_only = true;
    assert_int_equal(settings_load(f->p, path, &f->err), 0);
    assert_int_equal(f->p->settings_enabled, 0);
    assert_int_equal(f->p->network, CORDON_NETWORK_NONE);
    assert_false(f->p->read_only);
    assert_int_equal(f->p->n_rules, 0);
    assert_int_equal(cordon_policy_settings_enabled(f->p), 0);
    free(path);
}

static void test_empty_documents(void **state)
{
    fixture *f = *state;
    char *a = write_fixture(f, "a.json", "{}");
    char *b = write_fixture(f, "b.json", "{\"sandbox\": {\"allowedPaths\": []}}");
    assert_int_equal(settings_load(f->p, a, &f->err), 0);
    assert_int_equal(settings_load(f->p, b, &f->err), 0);
    assert_int_equal(f->p->settings_enabled, -1); /* no file said */
    assert_int_equal(f->p->n_rules, 0);
    free(a);
    free(b);
}

/* Escaped quotes, brackets and braces inside strings must not confuse the line walker,
 * and escaped key names are keys like any other. */
static void test_lines_with_escapes(void **state)
{
    fixture *f = *state;
    char *path = load_ok(f, "esc.json",
                         "{\n"
                         "  \"sandbox\": {\n"
                         "    \"readOnly\": false,\n"
                         "    \"allowedPaths\": [\n"
                         "      \"a\\\"],{ \\\\\\\" [\",\n"
                         "      \"b\\\\\",\n"
                         "      \"\\u00e9t\\u00e9/\\ud83d\\ude00\"\n"
                         "    ],\n"
                         "    \"deni\\u0065dPaths\": [\"x\"\n"
                         "    ]\n"
                         "  }\n"
                         "}\n");
    assert_int_equal(f->p->n_rules, 4);
    assert_rule(&f->p->rules[0], "a\"],{ \\\" [", CORDON_ACCESS_WRITE, path, 5);
    assert_rule(&f->p->rules[1], "b\\", CORDON_ACCESS_WRITE, path, 6);
    assert_rule(&f->p->rules[2], "\xc3\xa9t\xc3\xa9/\xf0\x9f\x98\x80", CORDON_ACCESS_WRITE, path, 7);
    assert_rule(&f->p->rules[3], "x", CORDON_ACCESS_NONE, path, 9);
    free(path);
}

static void test_missing_file(void **state)
{
    fixture *f = *state;
    char *path = xasprintf("%s/nope.json", f->dir);
    char *want = xasprintf("settings file %s: cannot read", path); /* errno apart: errnum */
    assert_int_equal(settings_load(f->p, path, &f->err), -1);
    assert_string_equal(f->err.message, want);
    assert_int_equal(f->err.stage, CORDON_STAGE_SETTINGS);
    assert_int_equal(f->err.errnum, ENOENT);
    free(want);
    free(path);
}

static void test_unreadable_file(void **state)
{
    fixture *f = *state;
    char *path = write_fixture(f, "secret.json", "{}");
    char *below = xasprintf("%s/x", path);
    char *want = xasprintf("settings file %s: cannot read", below);
    assert_int_equal(settings_load(f->p, below, &f->err), -1);
    assert_string_equal(f->err.message, want);
    assert_int_equal(f->err.errnum, ENOTDIR);
    free(want);
    free(below);

    /* Root reads mode-000 files; cmocka's skip() would print "not ok # SKIP", which
     * meson counts as a failure, so this part simply does not apply there. */
    if (geteuid() != 0) {
        assert_int_equal(chmod(path, 0), 0);
        want = xasprintf("settings file %s: cannot read: %s", path, strerror(EACCES));
        assert_int_equal(settings_load(f->p, path, &f->err), -1);
        assert_string_equal(f->err.message, want);
        assert_int_equal(f->err.errnum, EACCES);
        free(want);
    }
    free(path);
}

static void test_no_file_name(void **state)
{
    fixture *f = *state;
    assert_int_equal(settings_load(f->p, NULL, &f->err), -1);
    assert_string_equal(f->err.message, "settings file: no file name given");
    assert_int_equal(settings_load(f->p, "", &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_SETTINGS);
}

static void test_not_regular(void **state)
{
    fixture *f = *state;
    char *want = xasprintf("settings file %s: not a regular file; give a JSON file", f->dir);
    assert_int_equal(settings_load(f->p, f->dir, &f->err), -1);
    assert_string_equal(f->err.message, want);
    free(want);

    /* A FIFO is refused at once rather than waiting for a writer (if open() blocked,
     * SIGALRM would end the test run with a failure instead of hanging it). */
    char *fifo = xasprintf("%s/fifo", f->dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    want = xasprintf("settings file %s: not a regular file; give a JSON file", fifo);
    alarm(10);
    assert_int_equal(settings_load(f->p, fifo, &f->err), -1);
    alarm(0);
    assert_string_equal(f->err.message, want);
    free(want);
    free(fifo);
}

static void test_size_limit(void **state)
{
    fixture *f = *state;
    const size_t limit = 1024 * 1024;
    char *buf = xmalloc(limit + 1);
    static const char doc[] = "{\"sandbox\": {\"enabled\": true}}";
    memcpy(buf, doc, sizeof doc - 1);
    memset(buf + sizeof doc - 1, ' ', limit + 1 - (sizeof doc - 1));

    char *exact = write_bytes(f, "exact.json", buf, limit);
    assert_int_equal(settings_load(f->p, exact, &f->err), 0);
    assert_int_equal(f->p->settings_enabled, 1);

    char *big = write_bytes(f, "big.json", buf, limit + 1);
    char *want = xasprintf("settings file %s: larger than the 1 MiB limit; refusing to read it", big);
    assert_int_equal(settings_load(f->p, big, &f->err), -1);
    assert_string_equal(f->err.message, want);
    free(want);
    free(big);
    free(exact);
    free(buf);
}

static void test_malformed(void **state)
{
    fixture *f = *state;
    char *path = write_fixture(f, "bad.json",
                               "{\n"
                               "  \"sandbox\": {\n"
                               "    \"network\": tru\n"
                               "  }\n"
                               "}\n");
    char *want = xasprintf("%s:3:18: malformed JSON: ", path);
    assert_int_equal(settings_load(f->p, path, &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_SETTINGS);
    assert_true(strncmp(f->err.message, want, strlen(want)) == 0);
    assert_contains(f->err.message, "invalid token");
    free(want);
    free(path);
}

static void test_malformed_variants(void **state)
{
    fixture *f = *state;
    struct {
        const char *doc, *line_col, *why;
    } cases[] = {
        {"{\"sandbox\": {\"network\": true,\n \"network\": false}}", ":2:", "duplicate object key"},
        {"", ":", "end of file"},
        {"{\"sandbox\": {}} trailing", ":1:", "end of file expected"},
        {"{\"sandbox\": {\"enabled\": true,}}", ":1:", ""},
        {"{\"sandbox\": {\"a\\u0000b\": true}}", ":1:", "NUL"},
        {"{\"sandbox\": {\"allowedPaths\": [\"\x1b[2J\xff\"]}}", ":1:", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = write_fixture(f, "m.json", cases[i].doc);
        char *want = xasprintf("%s%s", path, cases[i].line_col);
        assert_int_equal(settings_load(f->p, path, &f->err), -1);
        assert_true(strncmp(f->err.message, want, strlen(want)) == 0);
        assert_contains(f->err.message, "malformed JSON: ");
        assert_contains(f->err.message, cases[i].why);
        /* jansson quotes the input: no raw control byte may reach the message */
        for (const char *c = f->err.message; *c; c++)
            assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
        assert_int_equal(f->p->n_rules, 0);
        free(want);
        free(path);
    }
}

static void test_unknown_key(void **state)
{
    expect_error(*state, "settings.json",
                 "{\n"
                 "  \"sandbox\": {\n"
                 "    \"network\": false,\n"
                 "    \"netwrk\": true\n"
                 "  }\n"
                 "}\n",
                 ":4: unknown key \"sandbox.netwrk\": did you mean \"sandbox.network\"? (known keys: " SANDBOX_KEYS
                 ")");
}

/* The walker must skip nested values and must not mistake a string value for a key. */
static void test_unknown_key_after_nesting(void **state)
{
    expect_error(*state, "nested.json",
                 "{\"sandbox\": {\n"
                 "  \"allowedPaths\": [\"netwrk\", \"{\\\"netwrk\\\": 1}\"],\n"
                 "  \"deniedPaths\": [\n"
                 "  ],\n"
                 "  \"netwrk\": {\"x\": [1, {\"y\": \"}]\"}],\n"
                 "             \"z\": null}\n"
                 "}}\n",
                 ":5: unknown key \"sandbox.netwrk\": did you mean \"sandbox.network\"? (known keys: " SANDBOX_KEYS
                 ")");
}

/* A harness's settings file holds much else: other top-level keys are its own. */
static void test_unknown_top_level_key(void **state)
{
    fixture *f = *state;
    char *path = load_ok(f, "top.json",
                         "{\n"
                         "  \"sandbox\": {\"enabled\": true},\n"
                         "  \"permissions\": {\"x\": 1},\n"
                         "  \"model\": \"big\"\n"
                         "}\n");
    assert_int_equal(f->p->settings_enabled, 1);
    /* pi's and Claude Code's own keys are theirs: nothing said */
    assert_int_equal(f->p->settings_unknown.n, 0);
    free(path);
}

/* A top-level key nobody knows is said, with the nearest known key: a misspelt "sandbox"
 * drops every rule in it.  strictSettings (a key, or the setter before or after the file)
 * refuses it instead, and a refused file changes nothing. */
static void test_unknown_top_level_typo(void **state)
{
    fixture *f = *state;
    char *path = load_ok(f, "typo.json",
                         "{\n"
                         "  \"sanbox\": {\"deniedPaths\": [\"/x\"]},\n"
                         "  \"permissions\": {},\n"
                         "  \"zzqq\": 1\n"
                         "}\n");
    assert_int_equal(f->p->n_rules, 0);
    assert_int_equal(f->p->settings_unknown.n, 2);
    char *want = xasprintf("%s:2: unknown top-level key \"sanbox\" (did you mean \"sandbox\"?)", path);
    assert_string_equal(f->p->settings_unknown.v[0], want);
    free(want);
    want = xasprintf("%s:4: unknown top-level key \"zzqq\" (cordon reads \"sandbox\" and \"orchestration\")", path);
    assert_string_equal(f->p->settings_unknown.v[1], want);
    free(want);
    /* the setter after the file: refused at once, and on from now on */
    assert_int_equal(cordon_policy_set_strict_settings(f->p, true, &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_SETTINGS);
    assert_string_equal(f->err.option, "strictSettings");
    assert_contains(f->err.message, "\"sanbox\" (did you mean \"sandbox\"?)");
    assert_true(f->p->strict_settings);
    /* false never turns it off */
    assert_int_equal(cordon_policy_set_strict_settings(f->p, false, &f->err), 0);
    assert_true(f->p->strict_settings);
    free(path);
}

static void test_strict_settings(void **state)
{
    fixture *f = *state;
    /* the key, after the typo in the same file */
    expect_error(f, "s1.json", "{\"sanbox\": {},\n \"sandbox\": {\"strictSettings\": true}}",
                 ":1: unknown top-level key \"sanbox\" (did you mean \"sandbox\"?): strictSettings refuses a "
                 "top-level key that neither cordon nor the harnesses it shares settings with know; fix the key or "
                 "remove it");
    assert_string_equal(f->err.option, "strictSettings");
    assert_false(f->p->strict_settings);
    /* the setter before the file */
    assert_int_equal(cordon_policy_set_strict_settings(f->p, true, &f->err), 0);
    expect_error(f, "s2.json", "{\"sandbox\": {\"deniedPaths\": [\"/x\"]}, \"sandbx\": {}}",
                 ":1: unknown top-level key \"sandbx\" (did you mean \"sandbox\"?): strictSettings refuses a "
                 "top-level key that neither cordon nor the harnesses it shares settings with know; fix the key or "
                 "remove it");
    assert_int_equal(f->p->settings_unknown.n, 0);
    /* a known file still loads under it; the key's type is checked */
    char *path = load_ok(f, "ok.json", "{\"sandbox\": {\"strictSettings\": true}, \"model\": \"m\"}");
    free(path);
    expect_error(f, "s3.json", "{\"sandbox\": {\"strictSettings\": 1}}",
                 ":1: key \"sandbox.strictSettings\" must be true or false, not a number");
}

/* orchestration.sandboxed and .isolation are read and checked; the rest of it is the
 * harness's. */
static void test_orchestration(void **state)
{
    fixture *f = *state;
    char *path = write_fixture(f, "orch.json",
                               "{\"orchestration\": {\"sandboxed\": true, \"isolation\": \"overlayfs\", "
                               "\"maxAgents\": 4}}");
    assert_int_equal(f->p->settings_sandboxed, -1);
    assert_int_equal(settings_load(f->p, path, &f->err), 0);
    assert_int_equal(f->p->settings_sandboxed, 1);
    assert_string_equal(f->p->orchestration_isolation, "overlayfs");
    free(path);
    expect_error(*state, "o1.json", "{\"orchestration\": {\n\"sandboxed\": \"yes\"}}",
                 ":2: key \"orchestration.sandboxed\" must be true or false, not a string");
    expect_error(*state, "o2.json", "{\"orchestration\": {\"isolation\": \"vm\"}}",
                 ":1: key \"orchestration.isolation\" is \"vm\"; it must be \"worktree\", \"overlayfs\" or \"none\"");
    expect_error(*state, "o3.json", "{\"orchestration\": []}",
                 ":1: key \"orchestration\" must be an object, not an array");
}

/* A key is quoted in the message with control bytes escaped: it cannot forge output. */
static void test_unknown_key_is_escaped(void **state)
{
    expect_error(*state, "ctl.json", "{\"sandbox\": {\n\"a\\u001b[31m\\n\\\"b\": 1}}",
                 ":2: unknown key \"sandbox.a\\x1b[31m\\x0a\\\"b\"; known keys: " SANDBOX_KEYS);
}

static void test_wrong_types(void **state)
{
    fixture *f = *state;
    expect_error(f, "t1.json",
                 "{\n"
                 "  \"sandbox\": {\n"
                 "    \"network\": \"yes\"\n"
                 "  }\n"
                 "}\n",
                 ":3: key \"sandbox.network\" is \"yes\": use true, false, \"none\", \"host\" or \"proxy\"");
    expect_error(f, "t2.json", "{\"sandbox\": {\n\"enabled\": 1}}",
                 ":2: key \"sandbox.enabled\" must be true or false, not a number");
    expect_error(f, "t3.json", "{\"sandbox\": {\"readOnly\":\n null}}",
                 ":1: key \"sandbox.readOnly\" must be true or false, not null");
    expect_error(f, "t4.json", "{\n\"sandbox\": [true]}", ":2: key \"sandbox\" must be an object, not an array");
    expect_error(f, "t5.json", "{\"sandbox\": {\n\n\"allowedPaths\": \"/tmp\"}}",
                 ":3: key \"sandbox.allowedPaths\" must be an array of path strings, not a string");
    expect_error(f, "t6.json", "{\"sandbox\": {\"deniedPaths\": {\"a\": 1}}}",
                 ":1: key \"sandbox.deniedPaths\" must be an array of path strings, not an object");
    expect_error(f, "t7.json", "\n[{\"sandbox\": {}}]",
                 ":2: the top level must be an object like {\"sandbox\": {...}}, not an array");
}

static void test_bad_elements(void **state)
{
    fixture *f = *state;
    expect_error(f, "e1.json",
                 "{\n"
                 "  \"sandbox\": {\n"
                 "    \"readOnly\": false,\n"
                 "    \"allowedPaths\": [\n"
                 "      \"/ok\",\n"
                 "      42\n"
                 "    ]\n"
                 "  }\n"
                 "}\n",
                 ":6: \"sandbox.allowedPaths[1]\" must be a non-empty path string, not a number");
    expect_error(f, "e2.json", "{\"sandbox\": {\"deniedPaths\": [\"/a\",\n\n \"\"]}}",
                 ":3: \"sandbox.deniedPaths[1]\" must be a non-empty path string");
    expect_error(f, "e3.json", "{\"sandbox\": {\"allowedPaths\": [\n[\"/nested\"]]}}",
                 ":2: \"sandbox.allowedPaths[0]\" must be a non-empty path string, not an array");
    expect_error(f, "e4.json", "{\"sandbox\": {\"allowedPaths\": [\"/a\",\n\"/b\\u0000/c\"]}}",
                 ":2: \"sandbox.allowedPaths[1]\" contains a NUL byte (\\u0000), which no path "
                 "can hold");
}

/* A deniedPaths entry with a glob character is a deny glob, kept raw (resolve.c expands
 * ~ and <workspace> and walks the host), with its line for messages. */
static void test_glob_in_denied_paths(void **state)
{
    fixture *f = *state;
    char *path = load_ok(f, "g1.json",
                         "{\"sandbox\": {\n"
                         "  \"allowedPaths\": [\"/ok\"], \"deniedPaths\": [\"/fine\",\n"
                         "  \"<workspace>/**/*.pem\", \"a?b\",\n"
                         "  \"~/.config/*/token\"]\n"
                         "}}\n");
    free(path);
    assert_int_equal(f->p->n_rules, 2); /* /ok and /fine */
    assert_int_equal(f->p->n_globs, 3);
    assert_string_equal(f->p->globs[0].pattern, "<workspace>/**/*.pem");
    assert_int_equal(f->p->globs[0].line, 3);
    assert_int_equal(f->p->globs[0].origin, ORIGIN_SETTINGS);
    assert_true(f->p->globs[0].expand);
    assert_non_null(strstr(f->p->globs[0].source, "g1.json"));
    assert_string_equal(f->p->globs[1].pattern, "a?b");
    assert_int_equal(f->p->globs[1].line, 3);
    assert_string_equal(f->p->globs[2].pattern, "~/.config/*/token");
    assert_int_equal(f->p->globs[2].line, 4);
}

/* A malformed deny glob is refused, naming the file, the line and what is wrong, and
 * nothing of the file applies: dropping it would expose what it meant to hide. */
static void test_bad_glob_in_denied_paths(void **state)
{
    fixture *f = *state;
    expect_error(f, "g1.json",
                 "{\"sandbox\": {\n"
                 "  \"network\": true,\n"
                 "  \"allowedPaths\": [\"/ok\"], \"deniedPaths\": [\"/fine\",\n"
                 "  \"<workspace>/[ab.pem\"]\n"
                 "}}\n",
                 ":4: \"sandbox.deniedPaths[1]\" is \"<workspace>/[ab.pem\": deny glob "
                 "'<workspace>/[ab.pem': '[' without a closing ']' (write \\[ for a literal '['; a '/' "
                 "cannot be inside [...])");
    assert_int_equal(f->p->network, CORDON_NETWORK_NONE);
    assert_int_equal(f->p->n_rules, 0);
    assert_int_equal(f->p->n_globs, 0);
    expect_error(f, "g2.json", "{\"sandbox\": {\"deniedPaths\": [\"../*.env\"]}}",
                 ":1: \"sandbox.deniedPaths[0]\" is \"../*.env\": deny glob '../*.env': '..' is not "
                 "allowed in a glob; name the directory itself");
    char *bad = write_fixture(f, "g3.json", "{\"sandbox\": {\"deniedPaths\": [\"x/*\\\\\"]}}");
    assert_int_equal(settings_load(f->p, bad, &f->err), -1);
    assert_non_null(strstr(f->err.message, ":1: \"sandbox.deniedPaths[0]\""));
    assert_non_null(strstr(f->err.message, "escapes nothing"));
    assert_int_equal(f->p->n_globs, 0);
    free(bad);

    /* allowedPaths has no glob semantics: such a name is an ordinary path. */
    char *path = load_ok(f, "g4.json", "{\"sandbox\": {\"allowedPaths\": [\"/odd*name\"]}}");
    assert_int_equal(f->p->n_rules, 1);
    assert_string_equal(f->p->rules[0].path, "/odd*name");
    free(path);
}

/* Explicit setters (command-line flags) win over settings files. */
static void test_setters_win(void **state)
{
    fixture *f = *state;
    char *path = write_fixture(f, "s.json", "{\"sandbox\": {\"network\": true, \"readOnly\": true}}");
    assert_int_equal(cordon_policy_set_network(f->p, CORDON_NETWORK_NONE, &f->err), 0);
    assert_int_equal(cordon_policy_set_read_only(f->p, false, &f->err), 0);
    assert_int_equal(cordon_policy_load_settings(f->p, path, &f->err), 0);
    assert_int_equal(f->p->network, CORDON_NETWORK_NONE);
    assert_false(f->p->read_only);
    free(path);
}

/* "isolation": as --isolation; a setter wins; anything else names the file and line. */
static void test_isolation(void **state)
{
    fixture *f = *state;
    char *path = load_ok(f, "i.json", "{\"sandbox\": {\"isolation\": \"landlock\"}}");
    assert_int_equal(f->p->isolation, CORDON_ISOLATION_LANDLOCK);
    assert_int_equal(cordon_policy_set_isolation(f->p, CORDON_ISOLATION_AUTO, &f->err), 0);
    assert_int_equal(settings_load(f->p, path, &f->err), 0);
    assert_int_equal(f->p->isolation, CORDON_ISOLATION_AUTO);
    free(path);
    cordon_policy_free(f->p);
    f->p = cordon_policy_new();
    expect_error(f, "bad.json", "{\"sandbox\": {\n  \"isolation\": \"chroot\"\n}}",
                 ":2: key \"sandbox.isolation\" is \"chroot\": use one of \"namespaces\", \"landlock\", \"auto\"");
    expect_error(f, "type.json", "{\"sandbox\": {\"isolation\": true}}",
                 ":1: key \"sandbox.isolation\" must be one of \"namespaces\", \"landlock\", \"auto\", not a boolean");
}

static void test_two_files_accumulate(void **state)
{
    fixture *f = *state;
    char *a = write_fixture(f, "a.json",
                            "{\"sandbox\": {\"enabled\": true, \"network\": true,\n"
                            "\"allowedPaths\": [\"~/a\"]}}");
    char *b = write_fixture(f, "b.json",
                            "{\"sandbox\": {\n"
                            "\"network\": false,\n"
                            "\"allowedPaths\": [\"~/b\"],\n"
                            "\"deniedPaths\": [\"~/b/secret\"]}}");
    assert_int_equal(settings_load(f->p, a, &f->err), 0);
    assert_int_equal(settings_load(f->p, b, &f->err), 0);
    assert_int_equal(f->p->n_rules, 3);
    assert_rule(&f->p->rules[0], "~/a", CORDON_ACCESS_WRITE, a, 2);
    assert_rule(&f->p->rules[1], "~/b", CORDON_ACCESS_WRITE, b, 3);
    assert_rule(&f->p->rules[2], "~/b/secret", CORDON_ACCESS_NONE, b, 4);
    assert_int_equal(f->p->network, CORDON_NETWORK_NONE); /* the later file wins */
    assert_int_equal(f->p->settings_enabled, 1);          /* b did not say */
    free(a);
    free(b);
}

/* A rejected second file leaves the first file's rules alone. */
static void test_error_after_good_file(void **state)
{
    fixture *f = *state;
    char *a = write_fixture(f, "a.json", "{\"sandbox\": {\"allowedPaths\": [\"/a\"]}}");
    char *b = write_fixture(f, "b.json", "{\"sandbox\": {\"allowedPaths\": [\"/b\", 1]}}");
    assert_int_equal(settings_load(f->p, a, &f->err), 0);
    assert_int_equal(settings_load(f->p, b, &f->err), -1);
    assert_int_equal(f->p->n_rules, 1);
    assert_string_equal(f->p->rules[0].path, "/a");
    free(a);
    free(b);
}

static void test_null_error_pointer(void **state)
{
    fixture *f = *state;
    char *path = write_fixture(f, "n.json", "{\"sandbox\": {\"bogus\": 1}}");
    assert_int_equal(settings_load(f->p, path, NULL), -1);
    free(path);
}

/* jsonpos on its own */

static const char doc[] = "{\n"
                          "  \"a\": [\n"
                          "    [1, 2],\n"
                          "    {\"b\": [3,\n"
                          "           4]},\n"
                          "    \"x\"\n"
                          "  ],\n"
                          "  \"k\\\"ey\": {\"\\ud83d\\ude00\": true},\n"
                          "  \"s\": \"\\\\\"\n"
                          "}\n";

static int line_at(const jsonpos_step *path, size_t n)
{
    return jsonpos_line(doc, sizeof doc - 1, path, n);
}

static void test_jsonpos_paths(void **state)
{
    (void)state;
    assert_int_equal(line_at(NULL, 0), 1);
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_KEY("a")}, 1), 2);
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_KEY("a"), JSONPOS_INDEX(0)}, 2), 3);
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_KEY("a"), JSONPOS_INDEX(2)}, 2), 6);
    assert_int_equal(
        line_at((jsonpos_step[]){JSONPOS_KEY("a"), JSONPOS_INDEX(1), JSONPOS_KEY("b"), JSONPOS_INDEX(1)}, 4), 5);
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_KEY("k\"ey"), JSONPOS_KEY("\xf0\x9f\x98\x80")}, 2), 8);
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_KEY("s")}, 1), 9);
}

static void test_jsonpos_not_found(void **state)
{
    (void)state;
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_KEY("b")}, 1), 0);  /* nested only */
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_KEY("k")}, 1), 0);  /* prefix of k"ey */
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_KEY("ss")}, 1), 0); /* "s" is a prefix */
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_KEY("a"), JSONPOS_INDEX(3)}, 2), 0);
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_INDEX(0)}, 1), 0); /* not an array */
    assert_int_equal(line_at((jsonpos_step[]){JSONPOS_KEY("s"), JSONPOS_KEY("x")}, 2), 0);
    assert_int_equal(jsonpos_line("", 0, NULL, 0), 0);
    assert_int_equal(jsonpos_line(NULL, 5, (jsonpos_step[]){JSONPOS_KEY("a")}, 1), 0);
}

static void test_jsonpos_array_lines(void **state)
{
    (void)state;
    int lines[5] = {-1, -1, -1, -1, -1};
    assert_int_equal(jsonpos_array_lines(doc, sizeof doc - 1, (jsonpos_step[]){JSONPOS_KEY("a")}, 1, lines, 5), 3);
    assert_int_equal(lines[0], 3);
    assert_int_equal(lines[1], 4);
    assert_int_equal(lines[2], 6);
    assert_int_equal(lines[3], 0);
    assert_int_equal(lines[4], 0);
    assert_int_equal(jsonpos_array_lines(doc, sizeof doc - 1, (jsonpos_step[]){JSONPOS_KEY("a")}, 1, lines, 2), 2);
    assert_int_equal(jsonpos_array_lines(doc, sizeof doc - 1, (jsonpos_step[]){JSONPOS_KEY("s")}, 1, lines, 2), 0);
    assert_int_equal(jsonpos_array_lines("[]", 2, NULL, 0, lines, 2), 0);
    assert_int_equal(jsonpos_array_lines("[1]", 3, NULL, 0, lines, 0), 0);
}

/* Truncated input (every prefix of the document) is never read out of bounds; the
 * copies are exact-size heap blocks so that ASan sees any overrun. */
static void test_jsonpos_truncated(void **state)
{
    (void)state;
    for (size_t n = 0; n < sizeof doc - 1; n++) {
        char *copy = xmalloc(n ? n : 1);
        memcpy(copy, doc, n);
        int lines[4];
        (void)jsonpos_line(copy, n,
                           (jsonpos_step[]){JSONPOS_KEY("a"), JSONPOS_INDEX(1), JSONPOS_KEY("b"), JSONPOS_INDEX(1)}, 4);
        (void)jsonpos_line(copy, n, (jsonpos_step[]){JSONPOS_KEY("s")}, 1);
        (void)jsonpos_array_lines(copy, n, (jsonpos_step[]){JSONPOS_KEY("a")}, 1, lines, 4);
        free(copy);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_full_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_false_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_documents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lines_with_escapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_file_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
        cmocka_unit_test_setup_teardown(test_size_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_variants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_key_after_nesting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_top_level_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_top_level_typo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strict_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orchestration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_key_is_escaped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_elements, setup, teardown),
        cmocka_unit_test_setup_teardown(test_glob_in_denied_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_glob_in_denied_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_setters_win, setup, teardown),
        cmocka_unit_test_setup_teardown(test_isolation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_files_accumulate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_after_good_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_error_pointer, setup, teardown),
        cmocka_unit_test(test_jsonpos_paths),
        cmocka_unit_test(test_jsonpos_not_found),
        cmocka_unit_test(test_jsonpos_array_lines),
        cmocka_unit_test(test_jsonpos_truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
