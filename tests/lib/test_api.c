// SPDX-License-Identifier: Apache-2.0
/* The public API, call by call, on the happy path and on each failure (issue 10): every
 * function of include/cordon.h through the header alone, the runs for real (namespaces:
 * as root and as uid 65534, meson test --suite lib).  Each case asserts what
 * would break if the call did; bad input must give an error value and a clear message,
 * never a crash and never a child left behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cordon.h"
#include "libtest.h"

#define assert_contains(hay, needle)                                     \
    do {                                                                 \
        if (!strstr((hay), (needle)))                                    \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle)); \
    } while (0)

/* `sh -c SCRIPT` */
#define SH(script) ((char *[]){(char *)"sh", (char *)"-c", (char *)(script), NULL})

/* ---- names, versions, errors ---------------------------------------------------------- */

static void test_names_and_parsers(void **state)
{
    (void)state;
    assert_true(strlen(cordon_version()) > 0);
    /* the header's compile-time version is the library's */
    assert_string_equal(cordon_version(), CORDON_VERSION_STRING);
    assert_true(CORDON_CHECK_VERSION(CORDON_VERSION_MAJOR, CORDON_VERSION_MINOR, CORDON_VERSION_MICRO));
    assert_true(CORDON_CHECK_VERSION(0, 1, 9));
    assert_false(CORDON_CHECK_VERSION(CORDON_VERSION_MAJOR, CORDON_VERSION_MINOR, CORDON_VERSION_MICRO + 1));
    assert_false(CORDON_CHECK_VERSION(CORDON_VERSION_MAJOR + 1, 0, 0));
    assert_string_equal(cordon_stage_name(CORDON_STAGE_SETTINGS), "settings");
    assert_string_equal(cordon_stage_name(CORDON_STAGE_NAMESPACES), "namespaces");
    assert_string_equal(cordon_stage_name((cordon_stage)999), "unknown");
    assert_string_equal(cordon_isolation_name(CORDON_ISOLATION_LANDLOCK), "landlock");
    cordon_error e = {0};
    cordon_base b;
    assert_int_equal(cordon_base_from_string("host", &b, &e), 0);
    assert_int_equal(b, CORDON_BASE_HOST);
    assert_int_equal(cordon_base_from_string("chroot", &b, &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_USAGE);
    assert_true(strlen(e.message) > 0);
    cordon_network n;
    assert_int_equal(cordon_network_from_string("none", &n, &e), 0);
    assert_int_equal(n, CORDON_NETWORK_NONE);
    assert_int_equal(cordon_network_from_string("everywhere", &n, &e), -1);
    cordon_isolation i;
    assert_int_equal(cordon_isolation_from_string("auto", &i, &e), 0);
    assert_int_equal(i, CORDON_ISOLATION_AUTO);
    assert_int_equal(cordon_isolation_from_string("vm", &i, &e), -1);
}

static void test_error_text(void **state)
{
    (void)state;
    cordon_error e = CORDON_ERROR_INIT;
    snprintf(e.message, sizeof e.message, "cannot open /x");
    e.errnum = ENOENT;
    char buf[256];
    int n = cordon_error_text(&e, buf, sizeof buf);
    assert_string_equal(buf, "cannot open /x: No such file or directory");
    assert_int_equal(n, (int)strlen(buf));
    /* too small: cut, NUL-terminated, and the whole length returned */
    char small[8];
    assert_int_equal(cordon_error_text(&e, small, sizeof small), n);
    assert_int_equal(strlen(small), 7);
    e.errnum = 0;
    cordon_error_text(&e, buf, sizeof buf);
    assert_string_equal(buf, "cannot open /x");
}

/* The errno is apart from the text: a missing settings file says ENOENT in errnum and
 * not in the message. */
static void test_errno_apart(void **state)
{
    (void)state;
    cordon_policy *p = cordon_policy_new();
    cordon_error e = {0};
    assert_int_equal(cordon_policy_load_settings(p, "/nonexistent/cordon-settings.json", &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_SETTINGS);
    assert_int_equal(e.errnum, ENOENT);
    assert_contains(e.message, "/nonexistent/cordon-settings.json");
    assert_null(strstr(e.message, strerror(ENOENT)));
    cordon_policy_free(p);
}

/* A long message is cut visibly, never silently. */
static void test_error_truncation_marked(void **state)
{
    (void)state;
    char path[2000];
    memset(path, 'a', sizeof path);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    cordon_policy *p = cordon_policy_new();
    cordon_error e = {0};
    assert_int_equal(cordon_policy_load_settings(p, path, &e), -1);
    assert_true(e.truncated);
    assert_true(strlen(e.message) < sizeof e.message);
    assert_string_equal(e.message + strlen(e.message) - 3, "...");
    cordon_policy_free(p);
}

/* A caller compiled against a later, larger cordon_error / cordon_result: the library
 * writes its own layout and never beyond it. */
static void test_structs_growable(void **state)
{
    (void)state;
    struct {
        cordon_error e;
        unsigned char future[64];
    } big;
    memset(&big, 0xAB, sizeof big);
    big.e.size = (unsigned)sizeof big;
    cordon_policy *p = cordon_policy_new();
    assert_int_equal(cordon_policy_load_settings(p, "/nonexistent/x.json", &big.e), -1);
    assert_int_equal(big.e.size, sizeof big);
    assert_int_equal(big.e.errnum, ENOENT);
    for (size_t i = 0; i < sizeof big.future; i++)
        assert_int_equal(big.future[i], 0xAB);
    struct {
        cordon_result r;
        unsigned char future[64];
    } bigr;
    memset(&bigr, 0xCD, sizeof bigr);
    bigr.r.size = (unsigned)sizeof bigr;
    cordon_policy *t = test_policy(0);
    cordon_error e = {0};
    assert_int_equal(cordon_run(t, (char *[]){(char *)"true", NULL}, &bigr.r, &e), 0);
    assert_int_equal(bigr.r.exit_code, 0);
    assert_int_equal(bigr.r.size, sizeof bigr);
    for (size_t i = 0; i < sizeof bigr.future; i++)
        assert_int_equal(bigr.future[i], 0xCD);
    /* a size smaller than the struct (a binding that lags behind): nothing beyond it */
    struct {
        cordon_result r;
        unsigned char after[8];
    } small;
    memset(&small, 0xEF, sizeof small);
    small.r.size = (unsigned)offsetof(cordon_result, wall_seconds);
    assert_int_equal(cordon_run(t, (char *[]){(char *)"true", NULL}, &small.r, &e), 0);
    assert_int_equal(small.r.exit_code, 0);
    const unsigned char *tail = (const unsigned char *)&small.r.wall_seconds;
    for (size_t i = 0; i < sizeof small.r.wall_seconds; i++)
        assert_int_equal(tail[i], 0xEF);
    /* and size 0, a zero-initialised struct, is this layout */
    cordon_result r0 = {0};
    assert_int_equal(cordon_run(t, (char *[]){(char *)"false", NULL}, &r0, &e), 0);
    assert_int_equal(r0.exit_code, 1);
    assert_true(r0.wall_seconds > 0);
    cordon_policy_free(t);
    cordon_policy_free(p);
}

/* cordon_workspace_run fills the caller's result as cordon_run does (it assigned a whole
 * struct over it: past an older caller's smaller one, and its size reset, so the run
 * filled the first layout only and the network counts were dropped). */
static void test_workspace_result_growable(void **state)
{
    (void)state;
    char here[4096], root[4200], src[4200];
    assert_non_null(getcwd(here, sizeof here));
    snprintf(root, sizeof root, "%s/wsroot.XXXXXX", here);
    snprintf(src, sizeof src, "%s/wssrc.XXXXXX", here);
    assert_non_null(mkdtemp(root));
    assert_non_null(mkdtemp(src));
    cordon_error e = CORDON_ERROR_INIT;
    cordon_workspace *ws = NULL;
    if (cordon_workspace_create(root, "abi", src, CORDON_WS_COPY, &ws, &e) < 0)
        fail_msg("workspace: %s", e.message);
    cordon_policy *p = cordon_policy_new();
    assert_int_equal(cordon_policy_allow_domain(p, "example.com", &e), 0);
    /* positive control: the whole struct gets the network fields */
    cordon_result full = CORDON_RESULT_INIT;
    full.network_counted = false;
    if (cordon_workspace_run(ws, p, (char *[]){(char *)"true", NULL}, &full, &e) < 0)
        fail_msg("run: %s", e.message);
    assert_int_equal(full.exit_code, 0);
    assert_int_equal(full.size, sizeof full);
    assert_true(full.network_counted);
    /* a caller compiled against an older layout that ended before the network fields:
     * nothing written beyond it, its size kept */
    struct {
        cordon_result r;
        unsigned char after[8];
    } small;
    memset(&small, 0xEF, sizeof small);
    unsigned old = (unsigned)offsetof(cordon_result, network_counted);
    small.r.size = old;
    if (cordon_workspace_run(ws, p, (char *[]){(char *)"false", NULL}, &small.r, &e) < 0)
        fail_msg("run: %s", e.message);
    assert_int_equal(small.r.exit_code, 1);
    assert_int_equal(small.r.size, old);
    const unsigned char *tail = (const unsigned char *)&small.r + old;
    for (size_t i = 0; i < sizeof small.r - old + sizeof small.after; i++)
        assert_int_equal(tail[i], 0xEF);
    /* a setup failure too (a bad policy: the workspace run refuses another workspace) */
    memset(&small, 0xEF, sizeof small);
    small.r.size = old;
    cordon_policy *bad = cordon_policy_new();
    assert_int_equal(cordon_policy_set_no_workspace(bad, true, &e), 0);
    assert_int_equal(cordon_workspace_run(ws, bad, (char *[]){(char *)"true", NULL}, &small.r, &e), -1);
    assert_int_equal(small.r.exit_code, CORDON_EXIT_SETUP);
    assert_int_equal(small.r.size, old);
    for (size_t i = 0; i < sizeof small.r - old + sizeof small.after; i++)
        assert_int_equal(tail[i], 0xEF);
    cordon_policy_free(bad);
    cordon_policy_free(p);
    cordon_workspace_free(ws);
    assert_int_equal(cordon_workspace_remove(root, "abi", &e), 0);
    rmdir(root);
    rmdir(src);
}

/* ---- policies ------------------------------------------------------------------------- */

static void test_policy_setters(void **state)
{
    (void)state;
    cordon_policy *p = cordon_policy_new();
    assert_non_null(p);
    cordon_error e = {0};
    assert_int_equal(cordon_policy_set_base(p, CORDON_BASE_EMPTY, &e), 0);
    assert_int_equal(cordon_policy_set_base(p, (cordon_base)42, &e), -1);
    assert_int_equal(cordon_policy_add_path(p, "/usr", CORDON_ACCESS_READ, "test", &e), 0);
    assert_int_equal(cordon_policy_add_path(p, "relative", CORDON_ACCESS_READ, "test", &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_USAGE);
    assert_int_equal(cordon_policy_set_workspace(p, "/tmp", &e), 0);
    assert_int_equal(cordon_policy_set_workspace(p, "", &e), -1);
    assert_int_equal(cordon_policy_set_no_workspace(p, true, &e), 0);
    assert_int_equal(cordon_policy_set_data_root(p, "/tmp", &e), 0);
    assert_int_equal(cordon_policy_set_read_only(p, true, &e), 0);
    assert_int_equal(cordon_policy_set_network(p, CORDON_NETWORK_HOST, &e), 0);
    assert_int_equal(cordon_policy_set_env(p, "A=b", &e), 0);
    assert_int_equal(cordon_policy_set_env(p, "no-equals", &e), -1);
    assert_int_equal(cordon_policy_keep_env(p, "TERM", &e), 0);
    assert_int_equal(cordon_policy_keep_env(p, "bad name", &e), -1);
    assert_int_equal(cordon_policy_set_clear_env(p, true, &e), 0);
    assert_int_equal(cordon_policy_set_cwd(p, "/", &e), 0);
    assert_int_equal(cordon_policy_set_cwd(p, "rel", &e), -1);
    assert_int_equal(cordon_policy_set_timeout(p, 1.5, &e), 0);
    assert_int_equal(cordon_policy_set_timeout(p, -1, &e), -1);
    assert_int_equal(cordon_policy_set_timeout_string(p, "2.5", &e), 0);
    assert_int_equal(cordon_policy_set_timeout_string(p, "soon", &e), -1);
    assert_int_equal(cordon_policy_set_proc(p, false, &e), 0);
    assert_int_equal(cordon_policy_set_no_nested(p, true, &e), 0);
    assert_int_equal(cordon_policy_protect(p, ".vscode", &e), 0);
    assert_int_equal(cordon_policy_protect(p, "a/b", &e), -1);
    assert_int_equal(cordon_policy_set_limit(p, CORDON_LIMIT_PIDS, 64, &e), 0);
    assert_int_equal(cordon_policy_set_limit_string(p, CORDON_LIMIT_MEMORY, "512M", &e), 0);
    assert_int_equal(cordon_policy_set_limit_string(p, CORDON_LIMIT_MEMORY, "lots", &e), -1);
    assert_int_equal(cordon_policy_add_deny_glob(p, "/tmp/**/*.env", NULL, &e), 0);
    assert_int_equal(cordon_policy_add_deny_glob(p, "*.env", NULL, &e), -1);
    assert_int_equal(cordon_policy_set_glob_depth(p, 3, &e), 0);
    assert_int_equal(cordon_policy_set_glob_depth(p, 0, &e), -1);
    assert_int_equal(cordon_policy_set_isolation(p, CORDON_ISOLATION_AUTO, &e), 0);
    assert_int_equal(cordon_policy_settings_enabled(p), -1);
    cordon_policy_free(p);
    cordon_policy_free(NULL);
}

static char *write_tmp(const char *text)
{
    char *path = strdup("/tmp/cordon-libtest-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write_str(fd, text));
    close(fd);
    return path;
}

static void test_settings_and_enabled(void **state)
{
    (void)state;
    char *f = write_tmp("{\"sandbox\": {\"enabled\": true, \"network\": false}}");
    cordon_policy *p = test_policy(0);
    cordon_error e = {0};
    assert_int_equal(cordon_policy_load_settings(p, f, &e), 0);
    assert_int_equal(cordon_policy_settings_enabled(p), 1);
    cordon_policy_free(p);
    unlink(f);
    free(f);
    /* enabled: false is reported, and a run under it is refused: it never runs unconfined */
    f = write_tmp("{\"sandbox\": {\"enabled\": false}}");
    p = test_policy(0);
    assert_int_equal(cordon_policy_load_settings(p, f, &e), 0);
    assert_int_equal(cordon_policy_settings_enabled(p), 0);
    cordon_result r = {0};
    assert_int_equal(cordon_run(p, (char *[]){(char *)"true", NULL}, &r, &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_SETTINGS);
    assert_int_equal(r.exit_code, CORDON_EXIT_SETUP);
    assert_false(r.started);
    cordon_policy_free(p);
    unlink(f);
    free(f);
    f = write_tmp("{\"sandbox\": {\"allowedPaths\": 3}}");
    p = test_policy(0);
    assert_int_equal(cordon_policy_load_settings(p, f, &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_SETTINGS);
    assert_contains(e.message, "allowedPaths");
    cordon_policy_free(p);
    unlink(f);
    free(f);
}

static void test_explain(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    cordon_error e = {0};
    char *buf = NULL;
    assert_int_equal(cordon_explain(p, (char *[]){(char *)"true", NULL}, 0, &buf, &e), 0);
    assert_contains(buf, "/usr");
    cordon_free(buf);
    buf = NULL;
    assert_int_equal(cordon_explain(p, (char *[]){(char *)"true", NULL}, CORDON_EXPLAIN_JSON, &buf, &e), 0);
    json_error_t je;
    json_t *o = json_loads(buf, 0, &je);
    assert_non_null(o);
    assert_non_null(json_object_get(o, "plan"));
    json_decref(o);
    cordon_free(buf);
    assert_int_equal(cordon_explain(p, NULL, 0, NULL, &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_USAGE);
    buf = (char *)"unchanged";
    assert_int_equal(cordon_explain(p, NULL, 0x80, &buf, &e), -1);
    assert_null(buf); /* set to NULL on failure */
    assert_contains(e.message, "unknown flags");
    cordon_policy_free(p);
}

static void test_check(void **state)
{
    (void)state;
    char *doc = NULL;
    cordon_error e = {0};
    int works = cordon_check(&doc, &e);
    assert_true(works == 0 || works == 1);
    json_error_t je;
    json_t *o = json_loads(doc, 0, &je);
    assert_non_null(o);
    assert_int_equal(json_is_true(json_object_get(o, "default_sandbox")), works);
    json_t *c = json_object_get(json_object_get(o, "checks"), "user_namespaces");
    assert_non_null(c);
    assert_true(json_is_boolean(json_object_get(c, "ok")));
    assert_true(json_is_string(json_object_get(c, "title")));
    json_decref(o);
    cordon_free(doc);
    assert_int_equal(cordon_check(NULL, &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_USAGE);
}

static void test_status_json(void **state)
{
    (void)state;
    char *f = write_tmp("");
    cordon_result r = {.exit_code = 3, .status_code = 3, .started = true, .wall_seconds = 0.25};
    cordon_error e = {0};
    assert_int_equal(cordon_write_status_json(f, &r, NULL, &e), 0);
    json_error_t je;
    json_t *o = json_load_file(f, 0, &je);
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "exit_code")), 3);
    assert_true(json_real_value(json_object_get(o, "wall_seconds")) > 0.2);
    json_decref(o);
    /* a setup failure: the stage, the message with its errno spelled out, the errno */
    cordon_result fr = {.exit_code = 125, .status_code = -1};
    cordon_error se = {.stage = CORDON_STAGE_ROOT, .errnum = EACCES};
    snprintf(se.message, sizeof se.message, "cannot bind /x");
    assert_int_equal(cordon_write_status_json(f, &fr, &se, &e), 0);
    o = json_load_file(f, 0, &je);
    assert_string_equal(json_string_value(json_object_get(o, "stage")), "root");
    assert_contains(json_string_value(json_object_get(o, "error")), "cannot bind /x: Permission denied");
    assert_int_equal(json_integer_value(json_object_get(o, "errno")), EACCES);
    json_decref(o);
    unlink(f);
    free(f);
    assert_int_equal(cordon_write_status_json("/nonexistent/dir/status.json", &r, NULL, &e), -1);
    assert_int_equal(e.errnum, ENOENT);

    /* in two steps: checked before, written after; a link put at FILE meanwhile is
     * replaced, not followed; a file that cannot be written fails at open */
    char dir[] = "/tmp/cordon-libtest-status.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], victim[256];
    snprintf(path, sizeof path, "%s/s.json", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    cordon_status_file *sf = NULL;
    assert_int_equal(cordon_status_file_open(path, &sf, &e), 0);
    assert_non_null(sf);
    assert_int_equal(symlink(victim, path), 0);
    assert_int_equal(cordon_status_file_write(sf, &r, NULL, &e), 0);
    cordon_status_file_free(sf);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(access(victim, F_OK), -1);
    assert_int_equal(cordon_status_file_open(dir, &sf, &e), -1); /* a directory */
    assert_null(sf);
    assert_int_equal(e.errnum, EISDIR);
    assert_int_equal(cordon_status_file_open("", &sf, &e), -1);
    assert_int_equal(cordon_status_file_open(path, NULL, &e), -1);
    assert_int_equal(cordon_status_file_write(NULL, &r, NULL, &e), -1);
    cordon_status_file_free(NULL);
    unlink(path);
    assert_int_equal(rmdir(dir), 0); /* nothing else was left in it */
}

/* ---- cordon_run ----------------------------------------------------------------------- */

static void test_run_exit_codes(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    cordon_result r = {0};
    cordon_error e = {0};
    assert_int_equal(cordon_run(p, (char *[]){(char *)"true", NULL}, &r, &e), 0);
    assert_int_equal(r.exit_code, 0);
    assert_true(r.started);
    assert_int_equal(e.stage, CORDON_STAGE_NONE);
    assert_int_equal(cordon_run(p, SH("exit 7"), &r, &e), 0);
    assert_int_equal(r.exit_code, 7);
    assert_int_equal(r.status_code, 7);
    assert_int_equal(cordon_run(p, SH("kill -TERM $$"), &r, &e), 0);
    assert_int_equal(r.signal, SIGTERM);
    assert_int_equal(r.exit_code, 128 + SIGTERM);
    assert_int_equal(r.status_code, -1);
    /* not found: 127, stage exec, and -1 */
    assert_int_equal(cordon_run(p, (char *[]){(char *)"cordon-no-such-command", NULL}, &r, &e), -1);
    assert_int_equal(r.exit_code, CORDON_EXIT_NOTFOUND);
    assert_int_equal(e.stage, CORDON_STAGE_EXEC);
    assert_int_equal(e.errnum, ENOENT);
    assert_contains(e.message, "cordon-no-such-command");
    assert_false(r.started);
    /* found but not executable: 126 */
    assert_int_equal(cordon_run(p, (char *[]){(char *)"/etc/passwd", NULL}, &r, &e), -1);
    assert_int_equal(r.exit_code, CORDON_EXIT_NOEXEC);
    assert_int_equal(e.errnum, EACCES);
    cordon_policy_free(p);
}

static void test_run_bad_input(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    cordon_result r = {0};
    cordon_error e = {0};
    int children = count_children();
    assert_int_equal(cordon_run(p, NULL, &r, &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_USAGE);
    assert_contains(e.message, "no command");
    assert_int_equal(r.exit_code, CORDON_EXIT_SETUP);
    assert_int_equal(cordon_run(p, (char *[]){NULL}, &r, &e), -1);
    assert_int_equal(cordon_run(p, (char *[]){(char *)"", NULL}, &r, &e), -1);
    assert_int_equal(cordon_run(NULL, (char *[]){(char *)"true", NULL}, &r, &e), -1);
    assert_contains(e.message, "policy");
    /* a policy that fails validation: the working directory does not exist */
    cordon_policy *bad = cordon_policy_new();
    assert_int_equal(cordon_policy_set_cwd(bad, "/nonexistent-cordon-dir", &e), 0);
    assert_int_equal(cordon_policy_set_no_workspace(bad, true, &e), 0);
    assert_int_equal(cordon_run(bad, (char *[]){(char *)"true", NULL}, &r, &e), -1);
    assert_int_not_equal(e.stage, CORDON_STAGE_NONE);
    assert_contains(e.message, "/nonexistent-cordon-dir");
    assert_int_equal(r.exit_code, CORDON_EXIT_SETUP);
    assert_int_equal(count_children(), children);
    cordon_policy_free(bad);
    cordon_policy_free(p);
}

/* ---- cordon_run_output ---------------------------------------------------------------- */

static void test_run_output_merged(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    collected c = {0};
    cordon_result r = {0};
    cordon_error e = {0};
    assert_int_equal(cordon_run_output(p, SH("echo out; echo err >&2; cat; echo done"), collect, &c, &r, &e), 0);
    assert_int_equal(r.exit_code, 0);
    /* both streams, in order, and stdin is /dev/null (cat returned at once) */
    assert_string_equal(output(&c), "out\nerr\ndone\n");
    collected_free(&c);
    /* every byte of a large output */
    assert_int_equal(cordon_run_output(p, SH("head -c 10485760 /dev/zero; echo end >&2"), collect, &c, &r, &e), 0);
    output(&c);
    assert_int_equal(c.len, 10485760 + 4);
    assert_string_equal(c.data + 10485760, "end\n");
    collected_free(&c);
    assert_int_equal(cordon_run_output(p, (char *[]){(char *)"true", NULL}, NULL, NULL, &r, &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_USAGE);
    assert_int_equal(cordon_run_output(p, (char *[]){(char *)"cordon-no-such", NULL}, collect, &c, &r, &e), -1);
    assert_int_equal(r.exit_code, CORDON_EXIT_NOTFOUND);
    collected_free(&c);
    cordon_policy_free(p);
}

/* Output arrives as it is written, not at the end. */
static void test_run_output_streams(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    collected c = {0};
    cordon_result r = {0};
    cordon_error e = {0};
    long long t0 = mono_ms();
    assert_int_equal(cordon_run_output(p, SH("echo first; sleep 1.5; echo second"), collect, &c, &r, &e), 0);
    long long t1 = mono_ms();
    assert_string_equal(output(&c), "first\nsecond\n");
    assert_true(c.first_ms - t0 < 1000);
    assert_true(t1 - t0 >= 1500);
    collected_free(&c);
    cordon_policy_free(p);
}

/* A callback that returns non-zero stops the run: the whole sandbox is killed. */
static void test_run_output_stop(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    collected c = {.stop_after = 1};
    cordon_result r = {0};
    cordon_error e = {0};
    char marker[64], cmd[256];
    snprintf(marker, sizeof marker, "sleep 100.%d1", (int)getpid()); /* a unique sleeper */
    snprintf(cmd, sizeof cmd, "%s & yes", marker);
    long long t0 = mono_ms();
    assert_int_equal(cordon_run_output(p, SH(cmd), collect, &c, &r, &e), 0);
    assert_true(mono_ms() - t0 < 5000);
    assert_int_equal(r.signal, SIGKILL);
    assert_int_equal(r.exit_code, 128 + SIGKILL);
    assert_true(c.len >= 1);
    assert_int_equal(count_marked(marker), 0);
    collected_free(&c);
    cordon_policy_free(p);
}

static void test_run_output_timeout(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0.3);
    collected c = {0};
    cordon_result r = {0};
    cordon_error e = {0};
    long long t0 = mono_ms();
    assert_int_equal(cordon_run_output(p, SH("echo before; sleep 30"), collect, &c, &r, &e), 0);
    long long took = mono_ms() - t0;
    assert_true(r.timed_out);
    assert_int_equal(r.exit_code, CORDON_EXIT_TIMEOUT);
    assert_string_equal(output(&c), "before\n");
    assert_true(took >= 300 && took < 3000);
    collected_free(&c);
    cordon_policy_free(p);
}

/* ---- cordon_spawn and cordon_proc_* ---------------------------------------------------- */

static void test_spawn_cat(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    cordon_proc *c = NULL;
    cordon_error e = {0};
    assert_int_equal(
        cordon_spawn(p, (char *[]){(char *)"cat", NULL}, CORDON_SPAWN_STDIN_PIPE | CORDON_SPAWN_STDOUT_PIPE, &c, &e),
        0);
    int in = cordon_proc_stdin(c), out = cordon_proc_stdout(c);
    assert_true(in >= 0 && out >= 0);
    assert_int_equal(cordon_proc_stderr(c), -1);
    assert_true(fcntl(in, F_GETFD) & FD_CLOEXEC);
    assert_true(fcntl(out, F_GETFD) & FD_CLOEXEC);
    assert_true(fcntl(cordon_proc_exit_fd(c), F_GETFD) & FD_CLOEXEC);
    assert_true(write_str(in, "hello\nworld\n"));
    assert_int_equal(cordon_proc_close_stdin(c, NULL), 0);
    assert_int_equal(cordon_proc_stdin(c), -1);
    cordon_error ce = CORDON_ERROR_INIT;
    assert_int_equal(cordon_proc_close_stdin(c, &ce), -1);
    assert_int_equal(ce.errnum, EBADF); /* in the error, as every call reports */
    assert_int_equal(ce.stage, CORDON_STAGE_USAGE);
    assert_contains(ce.message, "not a pipe");
    char *got = read_all_fd(out);
    assert_string_equal(got, "hello\nworld\n");
    free(got);
    cordon_result r = {0};
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    assert_int_equal(r.exit_code, 0);
    assert_true(r.started);
    /* once ended: the same answer every time, and the exit descriptor is readable */
    cordon_result again = {0};
    assert_int_equal(cordon_proc_wait(c, 0, &again, &e), 0);
    assert_int_equal(again.exit_code, 0);
    struct pollfd pf = {.fd = cordon_proc_exit_fd(c), .events = POLLIN};
    assert_int_equal(poll(&pf, 1, 5000), 1);
    cordon_proc_free(c);
    cordon_policy_free(p);
}

static void test_spawn_streams(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    cordon_proc *c;
    cordon_error e = {0};
    cordon_result r = {0};
    /* separate stdout and stderr */
    assert_int_equal(
        cordon_spawn(p, SH("echo o; echo e >&2"), CORDON_SPAWN_STDOUT_PIPE | CORDON_SPAWN_STDERR_PIPE, &c, &e), 0);
    char *o = read_all_fd(cordon_proc_stdout(c)), *er = read_all_fd(cordon_proc_stderr(c));
    assert_string_equal(o, "o\n");
    assert_string_equal(er, "e\n");
    free(o);
    free(er);
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    cordon_proc_free(c);
    /* merged */
    assert_int_equal(
        cordon_spawn(p, SH("echo o; echo e >&2"), CORDON_SPAWN_STDOUT_PIPE | CORDON_SPAWN_MERGE_STDERR, &c, &e), 0);
    assert_int_equal(cordon_proc_stderr(c), -1);
    o = read_all_fd(cordon_proc_stdout(c));
    assert_string_equal(o, "o\ne\n");
    free(o);
    cordon_proc_free(c);
    /* no stdin pipe: /dev/null */
    assert_int_equal(cordon_spawn(p, SH("cat; echo eof"), CORDON_SPAWN_STDOUT_PIPE, &c, &e), 0);
    o = read_all_fd(cordon_proc_stdout(c));
    assert_string_equal(o, "eof\n");
    free(o);
    assert_int_equal(cordon_proc_wait(c, 10000, &r, &e), 0);
    cordon_proc_free(c);
    cordon_policy_free(p);
}

/* Read the terminal's master until it ends (EIO once every process inside has closed it). */
static char *read_pty(int fd)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1024 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return buf;
}

/* CORDON_SPAWN_PTY: a terminal of the sandbox's own as the command's 0, 1, 2 and its
 * controlling terminal; the caller writes input to the master, reads output from it, sets
 * the window size on it and signals the foreground job through it. */
static void test_spawn_pty(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(30);
    cordon_proc *c = NULL;
    cordon_error e = {0};
    cordon_result r = {0};
    int fds = count_fds();
    assert_int_equal(cordon_spawn(p,
                                  SH("test -t 0 && test -t 1 && test -t 2 && echo terminal; "
                                     "exec 3</dev/tty && echo controlling; stty size; read line; echo got $line"),
                                  CORDON_SPAWN_PTY, &c, &e),
                     0);
    int m = cordon_proc_pty(c);
    assert_true(m >= 0);
    assert_true(fcntl(m, F_GETFD) & FD_CLOEXEC);
    assert_int_equal(cordon_proc_stdin(c), -1);
    assert_int_equal(cordon_proc_stdout(c), -1);
    /* the terminal turns \n into \r\n; no caller terminal here: 24 rows of 80 columns.
     * The input only once that is out: the terminal echoes it as it comes, which on a
     * loaded machine could land between the lines. */
    char head[256];
    size_t hlen = 0;
    while (hlen < sizeof head - 1 && !memmem(head, hlen, "24 80\r\n", 7)) {
        ssize_t n = read(m, head + hlen, sizeof head - 1 - hlen);
        assert_true(n > 0);
        hlen += (size_t)n;
    }
    head[hlen] = '\0';
    assert_contains(head, "terminal\r\ncontrolling\r\n24 80\r\n");
    assert_true(write_str(m, "typed\n"));
    char *got = read_pty(m);
    assert_contains(got, "got typed\r\n");
    free(got);
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    assert_int_equal(r.exit_code, 0);
    cordon_proc_free(c);

    /* the window size and ^C through the master: SIGWINCH and SIGINT reach the command's
     * foreground job inside */
    assert_int_equal(cordon_spawn(p,
                                  SH("trap 'stty size' WINCH; trap 'echo interrupted; exit 7' INT; "
                                     "echo ready; while :; do sleep 0.05; done"),
                                  CORDON_SPAWN_PTY | CORDON_SPAWN_STDERR_PIPE, &c, &e),
                     0);
    m = cordon_proc_pty(c);
    assert_true(cordon_proc_stderr(c) >= 0);
    char buf[256];
    size_t len = 0;
    while (len < sizeof buf - 1 && !memmem(buf, len, "ready", 5)) {
        ssize_t n = read(m, buf + len, sizeof buf - 1 - len);
        assert_true(n > 0);
        len += (size_t)n;
    }
    struct winsize ws = {.ws_row = 40, .ws_col = 132};
    assert_int_equal(ioctl(m, TIOCSWINSZ, &ws), 0);
    len = 0;
    while (len < sizeof buf - 1 && !memmem(buf, len, "40 132", 6)) {
        ssize_t n = read(m, buf + len, sizeof buf - 1 - len);
        assert_true(n > 0);
        len += (size_t)n;
    }
    assert_int_equal(ioctl(m, TIOCSIG, SIGINT), 0);
    got = read_pty(m);
    assert_contains(got, "interrupted");
    free(got);
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    assert_int_equal(r.exit_code, 7);
    cordon_proc_free(c);
    assert_int_equal(count_fds(), fds);
    cordon_policy_free(p);
}

static void test_spawn_bad_input(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    cordon_proc *c = (cordon_proc *)(uintptr_t)1;
    cordon_error e = {0};
    int children = count_children(), fds = count_fds();
    char *const ok[] = {(char *)"true", NULL};
    static const unsigned bad_flags[] = {
        0x100,
        0x80000000u,
        CORDON_SPAWN_MERGE_STDERR,
        CORDON_SPAWN_STDOUT_PIPE | CORDON_SPAWN_STDERR_PIPE | CORDON_SPAWN_MERGE_STDERR,
        CORDON_SPAWN_STDIN_PIPE | CORDON_SPAWN_STDIN_INHERIT,
        CORDON_SPAWN_PTY | CORDON_SPAWN_STDIN_PIPE,
        CORDON_SPAWN_PTY | CORDON_SPAWN_STDOUT_PIPE,
        CORDON_SPAWN_PTY | CORDON_SPAWN_STDIN_INHERIT,
        CORDON_SPAWN_PTY | CORDON_SPAWN_STDOUT_PIPE | CORDON_SPAWN_MERGE_STDERR,
    };
    for (size_t i = 0; i < sizeof bad_flags / sizeof *bad_flags; i++) {
        e = (cordon_error){0};
        assert_int_equal(cordon_spawn(p, ok, bad_flags[i], &c, &e), -1);
        assert_null(c);
        assert_int_equal(e.stage, CORDON_STAGE_USAGE);
        assert_contains(e.message, "cordon_spawn");
        c = (cordon_proc *)(uintptr_t)1;
    }
    assert_int_equal(cordon_spawn(p, NULL, 0, &c, &e), -1);
    assert_contains(e.message, "no command");
    assert_int_equal(cordon_spawn(p, (char *[]){NULL}, 0, &c, &e), -1);
    assert_int_equal(cordon_spawn(p, (char *[]){(char *)"", NULL}, 0, &c, &e), -1);
    assert_int_equal(cordon_spawn(NULL, ok, 0, &c, &e), -1);
    assert_contains(e.message, "policy");
    assert_int_equal(cordon_spawn(p, ok, 0, NULL, &e), -1);
    /* a policy that fails validation: nothing is started */
    cordon_policy *bad = cordon_policy_new();
    assert_int_equal(cordon_policy_add_path(bad, "/nonexistent-cordon/../x", CORDON_ACCESS_WRITE, "test", &e), 0);
    assert_int_equal(cordon_policy_set_cwd(bad, "/nonexistent-cordon-cwd", &e), 0);
    assert_int_equal(cordon_spawn(bad, ok, CORDON_SPAWN_STDOUT_PIPE, &c, &e), -1);
    assert_null(c);
    assert_int_not_equal(e.stage, CORDON_STAGE_NONE);
    cordon_policy_free(bad);
    /* and a NULL err is fine */
    assert_int_equal(cordon_spawn(p, NULL, 0, &c, NULL), -1);
    assert_int_equal(count_children(), children);
    assert_int_equal(count_fds(), fds);
    cordon_policy_free(p);
}

/* A closed or foreign cordon_proc: an error value, never a crash. */
static void test_foreign_proc(void **state)
{
    (void)state;
    uint64_t fake[64];
    memset(fake, 0, sizeof fake);
    cordon_proc *f = (cordon_proc *)fake;
    cordon_error e = {0};
    cordon_result r = {0};
    assert_int_equal(cordon_proc_wait(f, 0, &r, &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_USAGE);
    assert_contains(e.message, "not a process");
    assert_int_equal(cordon_proc_wait(NULL, 0, &r, &e), -1);
    assert_contains(e.message, "NULL");
    errno = 0;
    assert_int_equal(cordon_proc_kill(f, SIGKILL, NULL), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(cordon_proc_kill(NULL, SIGTERM, NULL), -1);
    assert_int_equal(cordon_proc_stdin(f), -1);
    assert_int_equal(cordon_proc_stdout(NULL), -1);
    assert_int_equal(cordon_proc_stderr(f), -1);
    assert_int_equal(cordon_proc_exit_fd(f), -1);
    assert_int_equal(cordon_proc_close_stdin(f, NULL), -1);
    cordon_proc_free(f); /* ignored */
    cordon_proc_free(NULL);
    /* a bad timeout */
    cordon_policy *p = test_policy(0);
    cordon_proc *c;
    assert_int_equal(cordon_spawn(p, (char *[]){(char *)"true", NULL}, 0, &c, &e), 0);
    assert_int_equal(cordon_proc_wait(c, -5, &r, &e), -1);
    assert_int_equal(e.stage, CORDON_STAGE_USAGE);
    assert_int_equal(cordon_proc_wait(c, -1, NULL, NULL), 0);
    cordon_proc_free(c);
    cordon_policy_free(p);
}

/* cordon_spawn_cmd: a command's own directory, environment and timeout over one policy,
 * which stays as it was (the next plain spawn has the policy's). */
static void test_spawn_cmd(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    cordon_error e = CORDON_ERROR_INIT;
    assert_int_equal(cordon_policy_add_env(p, "FROM_POLICY=p", &e), 0);
    cordon_cmd cmd = CORDON_CMD_INIT;
    cmd.cwd = "/usr";
    cmd.env = (char *[]){(char *)"FROM_CMD=c", (char *)"FROM_POLICY=overridden", NULL};
    cordon_proc *c = NULL;
    assert_int_equal(
        cordon_spawn_cmd(p, SH("echo \"$PWD $FROM_CMD $FROM_POLICY\""), CORDON_SPAWN_STDOUT_PIPE, &cmd, &c, &e), 0);
    char *got = read_all_fd(cordon_proc_stdout(c));
    assert_string_equal(got, "/usr c overridden\n");
    free(got);
    cordon_result r = CORDON_RESULT_INIT;
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    assert_int_equal(r.exit_code, 0);
    cordon_proc_free(c);
    /* the policy itself is unchanged (positive control for the override above) */
    assert_int_equal(
        cordon_spawn(p, SH("echo \"$PWD ${FROM_CMD-unset} $FROM_POLICY\""), CORDON_SPAWN_STDOUT_PIPE, &c, &e), 0);
    got = read_all_fd(cordon_proc_stdout(c));
    assert_string_equal(got, "/ unset p\n");
    free(got);
    cordon_proc_free(c);
    /* a timeout of the command's own */
    cmd = (cordon_cmd)CORDON_CMD_INIT;
    cmd.has_timeout = true;
    cmd.timeout = 0.2;
    assert_int_equal(cordon_spawn_cmd(p, (char *[]){(char *)"sleep", (char *)"30", NULL}, 0, &cmd, &c, &e), 0);
    assert_int_equal(cordon_proc_wait(c, 20000, &r, &e), 0);
    assert_true(r.timed_out);
    assert_int_equal(r.exit_code, CORDON_EXIT_TIMEOUT);
    cordon_proc_free(c);
    /* refused at once: relative cwd, bad env, negative timeout, a session's keep */
    cmd = (cordon_cmd)CORDON_CMD_INIT;
    cmd.cwd = "rel";
    assert_int_equal(cordon_spawn_cmd(p, (char *[]){(char *)"true", NULL}, 0, &cmd, &c, &e), -1);
    assert_string_equal(e.option, "chdir");
    assert_null(c);
    cmd = (cordon_cmd)CORDON_CMD_INIT;
    cmd.env = (char *[]){(char *)"=x", NULL};
    assert_int_equal(cordon_spawn_cmd(p, (char *[]){(char *)"true", NULL}, 0, &cmd, &c, &e), -1);
    assert_string_equal(e.option, "env");
    cmd = (cordon_cmd)CORDON_CMD_INIT;
    cmd.has_timeout = true;
    cmd.timeout = -1;
    assert_int_equal(cordon_spawn_cmd(p, (char *[]){(char *)"true", NULL}, 0, &cmd, &c, &e), -1);
    assert_string_equal(e.option, "timeout");
    cmd = (cordon_cmd)CORDON_CMD_INIT;
    cmd.keep = true;
    assert_int_equal(cordon_spawn_cmd(p, (char *[]){(char *)"true", NULL}, 0, &cmd, &c, &e), -1);
    assert_string_equal(e.option, "keep");
    cordon_policy_free(p);
}

/* The creation control's refusals are the caller's copy, freed with cordon_result_free;
 * a caller whose layout ends before them gets none and leaks none (LeakSanitizer). */
static void test_result_refusals(void **state)
{
    (void)state;
    char here[4096];
    assert_non_null(getcwd(here, sizeof here));
    cordon_policy *p = cordon_policy_new();
    cordon_error e = CORDON_ERROR_INIT;
    assert_int_equal(cordon_policy_set_workspace(p, here, &e), 0);
    cordon_result r = CORDON_RESULT_INIT;
    assert_int_equal(cordon_run(p, SH("mkdir .codex 2>/dev/null; true"), &r, &e), 0);
    assert_true(r.n_refusals >= 1);
    assert_non_null(r.refusals);
    assert_contains(r.refusals, ".codex");
    cordon_result_free(&r);
    assert_null(r.refusals);
    assert_null(r.network_refusals);
    cordon_result_free(&r); /* twice is fine */
    cordon_result_free(NULL);
    struct {
        cordon_result r;
        unsigned char after[8];
    } small;
    memset(&small, 0xEF, sizeof small);
    small.r.size = (unsigned)offsetof(cordon_result, refusals);
    assert_int_equal(cordon_run(p, SH("mkdir .codex 2>/dev/null; true"), &small.r, &e), 0);
    assert_true(small.r.n_refusals >= 1);
    const unsigned char *tail = (const unsigned char *)&small.r.refusals;
    for (size_t i = 0; i < sizeof small.r.refusals; i++)
        assert_int_equal(tail[i], 0xEF);
    cordon_result_free(&small.r); /* touches nothing beyond its size */
    for (size_t i = 0; i < sizeof small.r.refusals; i++)
        assert_int_equal(tail[i], 0xEF);
    cordon_policy_free(p);
    rmdir(".codex");
}

static void test_wait_timeout_and_kill(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    cordon_proc *c;
    cordon_error e = {0};
    cordon_result r = {0};
    assert_int_equal(cordon_spawn(p, (char *[]){(char *)"sleep", (char *)"30", NULL}, 0, &c, &e), 0);
    long long t0 = mono_ms();
    assert_int_equal(cordon_proc_wait(c, 200, &r, &e), 1);
    long long took = mono_ms() - t0;
    assert_true(took >= 190 && took < 2000);
    assert_int_equal(cordon_proc_wait(c, 0, &r, &e), 1);
    struct pollfd pf = {.fd = cordon_proc_exit_fd(c), .events = POLLIN};
    assert_int_equal(poll(&pf, 1, 0), 0);
    assert_int_equal(cordon_proc_kill(c, 0, NULL), 0); /* alive */
    cordon_error ke = CORDON_ERROR_INIT;
    assert_int_equal(cordon_proc_kill(c, SIGSTOP, &ke), -1);
    assert_int_equal(ke.errnum, EINVAL);
    assert_contains(ke.message, "does not deliver");
    assert_int_equal(cordon_proc_kill(c, 999, NULL), -1);
    assert_int_equal(cordon_proc_kill(c, -1, NULL), -1);
    assert_int_equal(cordon_proc_kill(c, SIGTERM, NULL), 0);
    assert_int_equal(cordon_proc_wait(c, 10000, &r, &e), 0);
    assert_int_equal(r.signal, SIGTERM);
    assert_int_equal(r.exit_code, 128 + SIGTERM);
    assert_int_equal(poll(&pf, 1, 5000), 1);
    errno = 0;
    assert_int_equal(cordon_proc_kill(c, SIGTERM, &ke), -1);
    assert_int_equal(ke.errnum, ESRCH);
    assert_contains(ke.message, "ended");
    assert_int_equal(errno, ESRCH);
    cordon_proc_free(c);
    cordon_policy_free(p);
}

/* SIGKILL ends the whole sandbox at once, what the command left included. */
static void test_kill_whole_sandbox(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    char marker[64], cmd[256];
    snprintf(marker, sizeof marker, "sleep 100.%d2", (int)getpid());
    snprintf(cmd, sizeof cmd, "%s & %s & echo up; wait", marker, marker);
    cordon_proc *c;
    cordon_error e = {0};
    assert_int_equal(cordon_spawn(p, SH(cmd), CORDON_SPAWN_STDOUT_PIPE, &c, &e), 0);
    char buf[8];
    assert_int_equal(read(cordon_proc_stdout(c), buf, 3), 3);
    /* the two sleepers and the shell whose command line names them (up to 10 s: a
     * loaded machine may take more than one to start the second) */
    assert_int_equal(await_marked(marker, 3, 10000), 3);
    assert_int_equal(cordon_proc_kill(c, SIGKILL, NULL), 0);
    cordon_result r = {0};
    assert_int_equal(cordon_proc_wait(c, 5000, &r, &e), 0);
    assert_int_equal(r.signal, SIGKILL);
    assert_int_equal(count_marked(marker), 0);
    cordon_proc_free(c);
    cordon_policy_free(p);
}

/* cordon_proc_free of a running process kills and reaps it. */
static void test_free_running(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    char marker[64], cmd[128];
    snprintf(marker, sizeof marker, "sleep 100.%d3", (int)getpid());
    snprintf(cmd, sizeof cmd, "%s", marker);
    int children = count_children(), fds = count_fds();
    cordon_proc *c;
    cordon_error e = {0};
    assert_int_equal(cordon_spawn(p, SH(cmd), CORDON_SPAWN_STDIN_PIPE | CORDON_SPAWN_STDOUT_PIPE, &c, &e), 0);
    for (int i = 0; i < 100 && count_marked(marker) < 1; i++)
        usleep(10000);
    long long t0 = mono_ms();
    cordon_proc_free(c);
    assert_true(mono_ms() - t0 < 2000);
    assert_int_equal(count_marked(marker), 0);
    assert_int_equal(count_children(), children);
    assert_int_equal(count_fds(), fds);
    cordon_policy_free(p);
}

/* A setup failure inside the sandbox shows in the wait's result. */
static void test_spawn_exec_failure(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    cordon_proc *c;
    cordon_error e = {0};
    assert_int_equal(cordon_spawn(p, (char *[]){(char *)"cordon-no-such-command", NULL}, 0, &c, &e), 0);
    cordon_result r = {0};
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    assert_false(r.started);
    assert_int_equal(r.exit_code, CORDON_EXIT_NOTFOUND);
    assert_int_equal(e.stage, CORDON_STAGE_EXEC);
    assert_int_equal(e.errnum, ENOENT);
    cordon_proc_free(c);
    cordon_policy_free(p);
}

/* The policy's timeout holds for a spawned child whose owner never waits: the sandbox
 * keeps it itself. */
static void test_timeout_without_wait(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0.3);
    cordon_proc *c;
    cordon_error e = {0};
    assert_int_equal(cordon_spawn(p, (char *[]){(char *)"sleep", (char *)"30", NULL}, 0, &c, &e), 0);
    struct pollfd pf = {.fd = cordon_proc_exit_fd(c), .events = POLLIN};
    long long t0 = mono_ms();
    assert_int_equal(poll(&pf, 1, 5000), 1); /* nobody waited: the sandbox ended itself */
    assert_true(mono_ms() - t0 < 3000);
    cordon_result r = {0};
    assert_int_equal(cordon_proc_wait(c, 0, &r, &e), 0);
    assert_true(r.timed_out);
    assert_int_equal(r.exit_code, CORDON_EXIT_TIMEOUT);
    cordon_proc_free(c);
    cordon_policy_free(p);
}

/* The environment of the policy applies to spawned children too. */
static void test_spawn_policy_env(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    cordon_error e = {0};
    assert_int_equal(cordon_policy_set_env(p, "CORDON_TEST_VAR=v42", &e), 0);
    cordon_proc *c;
    assert_int_equal(
        cordon_spawn(p, SH("echo $CORDON_TEST_VAR; ls /proc/self/fd | wc -l"), CORDON_SPAWN_STDOUT_PIPE, &c, &e), 0);
    char *o = read_all_fd(cordon_proc_stdout(c));
    /* the variable, and only 0, 1, 2 (and ls's own) open inside */
    assert_string_equal(o, "v42\n4\n");
    free(o);
    cordon_proc_free(c);
    cordon_policy_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_parsers),
        cmocka_unit_test(test_error_text),
        cmocka_unit_test(test_errno_apart),
        cmocka_unit_test(test_error_truncation_marked),
        cmocka_unit_test(test_structs_growable),
        cmocka_unit_test(test_workspace_result_growable),
        cmocka_unit_test(test_policy_setters),
        cmocka_unit_test(test_settings_and_enabled),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_status_json),
        cmocka_unit_test(test_run_exit_codes),
        cmocka_unit_test(test_run_bad_input),
        cmocka_unit_test(test_run_output_merged),
        cmocka_unit_test(test_run_output_streams),
        cmocka_unit_test(test_run_output_stop),
        cmocka_unit_test(test_run_output_timeout),
        cmocka_unit_test(test_spawn_cat),
        cmocka_unit_test(test_spawn_streams),
        cmocka_unit_test(test_spawn_pty),
        cmocka_unit_test(test_spawn_bad_input),
        cmocka_unit_test(test_foreign_proc),
        cmocka_unit_test(test_wait_timeout_and_kill),
        cmocka_unit_test(test_kill_whole_sandbox),
        cmocka_unit_test(test_free_running),
        cmocka_unit_test(test_spawn_exec_failure),
        cmocka_unit_test(test_timeout_without_wait),
        cmocka_unit_test(test_spawn_policy_env),
        cmocka_unit_test(test_spawn_cmd),
        cmocka_unit_test(test_result_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
