// SPDX-License-Identifier: Apache-2.0
/* Unit tests for Codex compatibility (src/codex/): the helper's command line, the
 * permission profile and legacy policy JSON, --managed-network, the proxy variables, and
 * the mapping of a profile onto cordon rules.  Pure: the host is a table of paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codex/codex.h"
#include "policy/policy.h"
#include "util/strv.h"

/* argv and environ tables are written as string literals (const under -Wwrite-strings);
 * nothing here writes through them. */
#pragma GCC diagnostic ignored "-Wdiscarded-qualifiers"

#define CWD        "/work/proj"
#define ROOT_READ  "{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"root\"}},\"access\":\"read\"}"
#define PROJ_WRITE "{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"project_roots\"}},\"access\":\"write\"}"
#define MANAGED(entries)                                                                   \
    "{\"type\":\"managed\",\"file_system\":{\"type\":\"restricted\",\"entries\":[" entries \
    "]},\"network\":\"restricted\"}"

/* ---- the host: a list of existing paths (directories end in '/') ---------------------- */

static const char *const host_paths[] = {
    "/tmp/",           "/home/u/",      "/work/proj/", "/work/proj/.git/",
    "/work/proj/src/", "/work/proj/a/", "/work/wt/",   "/work/wt/.git",
    "/nix/store/",     "/var/tmp/",     NULL,
};

static const char *host_find(const char *path)
{
    for (size_t i = 0; host_paths[i]; i++) {
        size_t n = strlen(host_paths[i]);
        size_t pn = strlen(path);
        if ((pn == n && strcmp(path, host_paths[i]) == 0) ||
            (n == pn + 1 && host_paths[i][pn] == '/' && strncmp(path, host_paths[i], pn) == 0))
            return host_paths[i];
    }
    return NULL;
}

static bool t_exists(const char *path, void *ctx)
{
    (void)ctx;
    return host_find(path) != NULL;
}

static bool t_is_dir(const char *path, void *ctx)
{
    (void)ctx;
    const char *p = host_find(path);
    return p && p[strlen(p) - 1] == '/';
}

static char *t_gitdir_of(const char *dotgit, void *ctx)
{
    (void)ctx;
    return strcmp(dotgit, "/work/wt/.git") == 0 ? strdup("/work/proj/.git/worktrees/wt") : NULL;
}

static cx_host test_host(const char *tmpdir)
{
    return (cx_host){.policy_cwd = CWD,
                     .tmpdir = tmpdir,
                     .home = "/home/u",
                     .exists = t_exists,
                     .is_dir = t_is_dir,
                     .gitdir_of = t_gitdir_of};
}

/* ---- helpers ------------------------------------------------------------------------- */

static void parse_ok(const char *json, cx_profile *p)
{
    cordon_error err = {0};
    if (cx_profile_parse(json, p, &err) < 0)
        fail_msg("cx_profile_parse(%s): %s", json, err.message);
}

static void parse_bad(const char *json, const char *needle)
{
    cx_profile p;
    cordon_error err = {0};
    if (cx_profile_parse(json, &p, &err) == 0)
        fail_msg("cx_profile_parse(%s) accepted it", json);
    assert_int_equal(err.stage, CORDON_STAGE_USAGE);
    if (!strstr(err.message, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, needle);
}

static void map_ok(const char *json, const char *tmpdir, bool proxy, cx_plan *plan)
{
    cx_profile p;
    parse_ok(json, &p);
    cx_host h = test_host(tmpdir);
    cordon_error err = {0};
    int r = cx_map(&p, &h, proxy, plan, &err);
    cx_profile_free(&p);
    if (r < 0)
        fail_msg("cx_map(%s): %s", json, err.message);
}

/* The access of the plan's rule at `path`, or -1. */
static int rule_at(const cx_plan *plan, const char *path)
{
    int found = -1;
    for (size_t i = 0; i < plan->n_rules; i++)
        if (strcmp(plan->rules[i].path, path) == 0) {
            if (found >= 0)
                fail_msg("two rules at %s", path);
            found = (int)plan->rules[i].access;
        }
    return found;
}

/* ---- the command line ------------------------------------------------------------------ */

static void args_observed_call(void **state)
{
    (void)state;
    /* what Codex 0.169 passes its helper for every command */
    char *argv[] = {"codex-linux-sandbox",
                    "--sandbox-policy-cwd",
                    "/p",
                    "--command-cwd",
                    "/p",
                    "--permission-profile",
                    "{}",
                    "--",
                    "sh",
                    "-c",
                    "echo --no-proc",
                    NULL};
    cx_args a;
    cordon_error err = {0};
    assert_int_equal(cx_parse_args(11, argv, &a, &err), 0);
    assert_string_equal(a.policy_cwd, "/p");
    assert_string_equal(a.command_cwd, "/p");
    assert_string_equal(a.permission_profile, "{}");
    assert_false(a.no_proc); /* after --: the command's */
    assert_string_equal(a.command[0], "sh");
    assert_string_equal(a.command[2], "echo --no-proc");
    assert_null(a.command[3]);
}

static void args_forms(void **state)
{
    (void)state;
    char *argv[] = {"x",
                    "--sandbox-policy-cwd=/p",
                    "--no-proc",
                    "--inherit-pid-namespace",
                    "--managed-network",
                    "{}",
                    "--use-legacy-landlock",
                    "true",
                    "--no-proc",
                    NULL};
    cx_args a;
    cordon_error err = {0};
    assert_int_equal(cx_parse_args(9, argv, &a, &err), 0);
    assert_string_equal(a.policy_cwd, "/p");
    assert_true(a.no_proc && a.inherit_pid_namespace && a.use_legacy_landlock);
    assert_string_equal(a.managed_network, "{}");
    /* the first word that is no option starts the command; what follows is its own */
    assert_string_equal(a.command[0], "true");
    assert_string_equal(a.command[1], "--no-proc");
}

static void args_rejected(void **state)
{
    (void)state;
    static const struct {
        int argc;
        char *argv[6];
        const char *needle;
    } rows[] = {
        {4, {"x", "--sandbox-policy-cwd", "/p", "--bogus"}, "unexpected argument '--bogus'"},
        {4, {"x", "--sandbox-policy-cwd", "/p", "-x"}, "unexpected argument '-x'"},
        {3, {"x", "--permission-profile", "{}"}, "--sandbox-policy-cwd"},
        {2, {"x", "--sandbox-policy-cwd"}, "a value is required"},
        {5, {"x", "--sandbox-policy-cwd", "/p", "--no-proc", "--no-proc"}, "multiple times"},
        {4, {"x", "--sandbox-policy-cwd", "/p", "--no-proc=1"}, "switch"},
        {5, {"x", "--sandbox-policy-cwd", "/p", "--sandbox-policy-cwd", "/q"}, "multiple times"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char *argv[7] = {0};
        memcpy(argv, rows[i].argv, sizeof rows[i].argv);
        cx_args a;
        cordon_error err = {0};
        if (cx_parse_args(rows[i].argc, argv, &a, &err) == 0)
            fail_msg("row %zu accepted", i);
        assert_int_equal(err.stage, CORDON_STAGE_USAGE);
        if (!strstr(err.message, rows[i].needle))
            fail_msg("row %zu: \"%s\" lacks \"%s\"", i, err.message, rows[i].needle);
    }
}

/* ---- the profile ------------------------------------------------------------------------ */

static void profile_managed(void **state)
{
    (void)state;
    cx_profile p;
    parse_ok("{\"type\":\"managed\",\"unknown\":1,\"file_system\":{\"type\":\"restricted\",\"glob_scan_max_depth\":3,"
             "\"entries\":[" ROOT_READ ","
             "{\"path\":{\"type\":\"path\",\"path\":\"/x\"},\"access\":\"none\",\"missing_path_behavior\":\"skip\"},"
             "{\"path\":{\"type\":\"glob_pattern\",\"pattern\":\"**/*.env\"},\"access\":\"deny\",\"extra\":true},"
             "{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"current_working_directory\",\"subpath\":\"s\"}},"
             "\"access\":\"write\"}]},\"network\":\"enabled\"}",
             &p);
    assert_int_equal(p.kind, CX_MANAGED);
    assert_true(p.fs_restricted && p.network_enabled);
    assert_int_equal(p.glob_depth, 3);
    assert_int_equal(p.n_entries, 4);
    assert_int_equal(p.entries[0].kind, CX_SPECIAL);
    assert_int_equal(p.entries[0].special, CX_SP_ROOT);
    assert_int_equal(p.entries[1].access, CX_DENY); /* "none" is "deny" */
    assert_true(p.entries[1].skip_missing);
    assert_string_equal(p.entries[1].path, "/x");
    assert_int_equal(p.entries[2].kind, CX_GLOB);
    assert_string_equal(p.entries[2].path, "**/*.env");
    assert_int_equal(p.entries[3].special, CX_SP_PROJECT_ROOTS); /* an alias */
    assert_string_equal(p.entries[3].subpath, "s");
    cx_profile_free(&p);
}

static void profile_other_kinds(void **state)
{
    (void)state;
    cx_profile p;
    parse_ok("{\"type\":\"disabled\"}", &p);
    assert_int_equal(p.kind, CX_DISABLED);
    assert_true(p.network_enabled);
    cx_profile_free(&p);
    parse_ok("{\"type\":\"external\",\"network\":\"restricted\"}", &p);
    assert_int_equal(p.kind, CX_EXTERNAL);
    assert_false(p.network_enabled);
    cx_profile_free(&p);
    parse_ok("{\"type\":\"managed\",\"file_system\":{\"type\":\"unrestricted\"},\"network\":\"restricted\"}", &p);
    assert_false(p.fs_restricted);
    cx_profile_free(&p);
    /* the older untagged shapes */
    parse_ok("{}", &p);
    assert_true(p.fs_restricted);
    assert_int_equal(p.n_entries, 0);
    cx_profile_free(&p);
    parse_ok("{\"network\":{\"enabled\":true},\"file_system\":{\"entries\":[" ROOT_READ "]}}", &p);
    assert_true(p.network_enabled);
    assert_int_equal(p.n_entries, 1);
    cx_profile_free(&p);
    parse_ok("{\"file_system\":{\"read\":[\"/r\"],\"write\":[\"/w\"]}}", &p);
    assert_int_equal(p.n_entries, 2);
    assert_int_equal(p.entries[0].access, CX_READ);
    assert_int_equal(p.entries[1].access, CX_WRITE);
    assert_string_equal(p.entries[1].path, "/w");
    cx_profile_free(&p);
}

static void profile_rejected(void **state)
{
    (void)state;
    parse_bad("{", "invalid JSON at line 1");
    parse_bad("[]", "must be a JSON object");
    parse_bad("{\"type\":\"bogus\"}", "unknown profile type \"bogus\"");
    parse_bad("{\"type\":\"external\"}", "missing field \"network\"");
    parse_bad("{\"type\":\"managed\",\"network\":\"restricted\"}", "missing field \"file_system\"");
    parse_bad("{\"type\":\"managed\",\"file_system\":{\"type\":\"restricted\"},\"network\":\"restricted\"}",
              "missing field \"entries\"");
    parse_bad("{\"type\":\"managed\",\"file_system\":{\"type\":\"external\"},\"network\":\"restricted\"}",
              "unknown file system type");
    parse_bad("{\"type\":\"managed\",\"file_system\":{\"type\":\"unrestricted\"},\"network\":\"full\"}",
              "unknown value \"full\"");
    parse_bad(MANAGED("{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"bogus\"}},\"access\":\"read\"}"),
              "unknown special path \"bogus\"");
    parse_bad(MANAGED("{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"root\"}},\"access\":\"all\"}"),
              "unknown access \"all\"");
    parse_bad(MANAGED("{\"path\":{\"type\":\"path\",\"path\":\"rel/x\"},\"access\":\"read\"}"),
              "\"rel/x\" is not an absolute path");
    parse_bad(MANAGED("{\"path\":{\"type\":\"path\",\"path\":\"\"},\"access\":\"read\"}"), "an empty path");
    parse_bad(MANAGED("{\"path\":{\"type\":\"path\",\"path\":\"/a\\u0000b\"},\"access\":\"read\"}"), "NUL");
    parse_bad(MANAGED("{\"path\":{\"type\":\"url\",\"url\":\"/a\"},\"access\":\"read\"}"), "unknown path type");
    parse_bad(MANAGED("{\"path\":{\"type\":\"path\",\"path\":\"/a\"},\"access\":\"read\",\"missing_path_behavior\":"
                      "\"fail\"}"),
              "the only one is \"skip\"");
    parse_bad(MANAGED("{\"access\":\"read\"}"), "missing field \"path\"");
    parse_bad(
        "{\"type\":\"managed\",\"file_system\":{\"type\":\"restricted\",\"entries\":[],\"glob_scan_max_depth\":0},"
        "\"network\":\"restricted\"}",
        "positive integer");
    parse_bad("{\"file_system\":{\"entries\":[]},\"bogus\":1}", "unknown field \"bogus\"");
    parse_bad("{\"type\":\"managed\",\"type\":\"disabled\"}", "invalid JSON");
}

static void legacy_policy(void **state)
{
    (void)state;
    cx_profile p;
    cordon_error err = {0};
    assert_int_equal(cx_legacy_policy_parse("{\"type\":\"workspace-write\",\"writable_roots\":[\"/extra\"],"
                                            "\"network_access\":true,\"exclude_slash_tmp\":true}",
                                            &p, &err),
                     0);
    assert_true(p.network_enabled && p.fs_restricted);
    /* root read, project_roots write, tmpdir write (not /tmp), /extra write */
    assert_int_equal(p.n_entries, 4);
    assert_int_equal(p.entries[0].special, CX_SP_ROOT);
    assert_int_equal(p.entries[1].special, CX_SP_PROJECT_ROOTS);
    assert_int_equal(p.entries[2].special, CX_SP_TMPDIR);
    assert_string_equal(p.entries[3].path, "/extra");
    cx_profile_free(&p);
    assert_int_equal(cx_legacy_policy_parse("{\"type\":\"read-only\"}", &p, &err), 0);
    assert_int_equal(p.n_entries, 1);
    assert_false(p.network_enabled);
    cx_profile_free(&p);
    assert_int_equal(cx_legacy_policy_parse("{\"type\":\"danger-full-access\"}", &p, &err), 0);
    assert_int_equal(p.kind, CX_DISABLED);
    cx_profile_free(&p);
    assert_int_equal(cx_legacy_policy_parse("{\"type\":\"sandbox\"}", &p, &err), -1);
    assert_non_null(strstr(err.message, "unknown policy type"));
    assert_int_equal(cx_legacy_policy_parse("{\"type\":\"workspace-write\",\"writable_roots\":[\"rel\"]}", &p, &err),
                     -1);
    assert_non_null(strstr(err.message, "not an absolute path"));
}

static void managed_network(void **state)
{
    (void)state;
    cx_netctx n;
    cordon_error err = {0};
    assert_int_equal(cx_netctx_parse("{\"loopbackPorts\":[3128,1080],\"allowLocalBinding\":true,\"allowUnixSockets\":"
                                     "[\"/s\"],\"dangerouslyAllowAllUnixSockets\":true,\"other\":1}",
                                     &n, &err),
                     0);
    assert_int_equal(n.n_ports, 2);
    assert_int_equal(n.ports[1], 1080);
    assert_true(n.allow_local_binding && n.allow_all_unix_sockets);
    assert_int_equal(n.unix_sockets.n, 1);
    cx_netctx_free(&n);
    assert_int_equal(cx_netctx_parse("{}", &n, &err), 0);
    cx_netctx_free(&n);
    assert_int_equal(cx_netctx_parse("{\"loopbackPorts\":[70000]}", &n, &err), -1);
    assert_int_equal(cx_netctx_parse("{\"loopbackPorts\":3128}", &n, &err), -1);
    assert_int_equal(cx_netctx_parse("{\"dangerouslyAllowAllUnixSockets\":\"yes\"}", &n, &err), -1);
    assert_int_equal(cx_netctx_parse("{", &n, &err), -1);
}

static void proxy_urls(void **state)
{
    (void)state;
    static const struct {
        const char *url;
        bool ok, loopback;
        unsigned port;
    } rows[] = {
        {"http://127.0.0.1:3128", true, true, 3128}, {"http://user:pw@localhost:8080/", true, true, 8080},
        {"socks5h://127.0.0.1", true, true, 1080},   {"https://[::1]:8443", true, true, 8443},
        {"127.0.0.1:3128", true, true, 3128},        {"http://127.0.0.1", true, true, 80},
        {"http://10.0.0.1:3128", true, false, 3128}, {"http://127.evil.com:1", true, false, 1},
        {"http://:3128", false, false, 0},           {"http://127.0.0.1:99999", false, false, 0},
        {"http://127.0.0.1:x", false, false, 0},     {"http://[::1", false, false, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        bool lo;
        unsigned port;
        bool ok = cx_proxy_url(rows[i].url, &lo, &port);
        if (ok != rows[i].ok || (ok && (lo != rows[i].loopback || port != rows[i].port)))
            fail_msg("%s: ok=%d loopback=%d port=%u", rows[i].url, ok, lo, port);
    }
}

static void proxy_env(void **state)
{
    (void)state;
    cordon_error err = {0};
    char *good[] = {"PATH=/bin", "https_proxy=http://127.0.0.1:3128", "ALL_PROXY=socks5h://127.0.0.1:1080",
                    "NO_PROXY=localhost", NULL};
    assert_int_equal(cx_check_proxy_env(good, NULL, &err), 0);
    unsigned ports[] = {3128};
    cx_netctx only = {.ports = ports, .n_ports = 1};
    assert_int_equal(cx_check_proxy_env(good, &only, &err), -1); /* 1080 is not listed */
    assert_non_null(strstr(err.message, "ALL_PROXY"));
    char *none[] = {"PATH=/bin", "NO_PROXY=*", "HTTP_PROXY=", NULL};
    assert_int_equal(cx_check_proxy_env(none, NULL, &err), -1);
    assert_non_null(strstr(err.message, "none is set"));
    char *remote[] = {"HTTP_PROXY=http://proxy.corp:3128", NULL};
    assert_int_equal(cx_check_proxy_env(remote, NULL, &err), -1);
    assert_non_null(strstr(err.message, "HTTP_PROXY"));
}

/* ---- the mapping ------------------------------------------------------------------------ */

static void map_workspace_write(void **state)
{
    (void)state;
    cx_plan plan;
    map_ok(MANAGED(ROOT_READ
                   "," PROJ_WRITE
                   ",{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"slash_tmp\"}},\"access\":\"write\"}"
                   ",{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"tmpdir\"}},\"access\":\"write\"}"),
           "/var/tmp/", false, &plan);
    assert_int_equal(plan.mode, CX_RUN_SANDBOX);
    assert_int_equal(plan.base, CORDON_BASE_HOST);
    assert_int_equal(plan.network, CORDON_NETWORK_NONE);
    assert_true(plan.fs_restricted);
    assert_int_equal(rule_at(&plan, CWD), CORDON_ACCESS_WRITE);
    assert_int_equal(rule_at(&plan, "/tmp"), CORDON_ACCESS_WRITE);     /* slash_tmp: no extra read rule */
    assert_int_equal(rule_at(&plan, "/var/tmp"), CORDON_ACCESS_WRITE); /* TMPDIR, its trailing / gone */
    assert_int_equal(rule_at(&plan, "/home/u"), -1);                   /* the base shows the home as it is */
    assert_int_equal(rule_at(&plan, CWD "/.git"), CORDON_ACCESS_READ); /* wholly read-only */
    assert_int_equal(rule_at(&plan, "/"), -1);                         /* the base shows it */
    cx_plan_free(&plan);
}

static void map_read_only(void **state)
{
    (void)state;
    cx_plan plan;
    map_ok(MANAGED(ROOT_READ), NULL, false, &plan);
    assert_int_equal(plan.base, CORDON_BASE_HOST);
    assert_int_equal(rule_at(&plan, "/tmp"), CORDON_ACCESS_READ); /* the host's /tmp, read-only */
    assert_int_equal(rule_at(&plan, CWD), -1);
    assert_int_equal(rule_at(&plan, CWD "/.git"), -1); /* no writable root: nothing to protect */
    cx_plan_free(&plan);
}

static void map_carveouts_and_missing(void **state)
{
    (void)state;
    cx_plan plan;
    map_ok(MANAGED(ROOT_READ "," PROJ_WRITE
                             ",{\"path\":{\"type\":\"path\",\"path\":\"/work/proj/a\"},\"access\":\"deny\"}"
                             ",{\"path\":{\"type\":\"path\",\"path\":\"/work/proj/a/b\"},\"access\":\"write\"}"
                             ",{\"path\":{\"type\":\"path\",\"path\":\"/work/proj/gone\"},\"access\":\"read\"}"
                             ",{\"path\":{\"type\":\"path\",\"path\":\"/work/proj/skipped\"},\"access\":\"read\","
                             "\"missing_path_behavior\":\"skip\"}"
                             ",{\"path\":{\"type\":\"path\",\"path\":\"/work/proj/newroot\"},\"access\":\"write\"}"),
           NULL, false, &plan);
    assert_int_equal(rule_at(&plan, "/work/proj/a"), CORDON_ACCESS_NONE);
    assert_int_equal(rule_at(&plan, "/work/proj/a/b"), CORDON_ACCESS_WRITE); /* cordon says it does not exist */
    /* a missing read-only carve-out is kept from being created, as Codex does */
    assert_int_equal(rule_at(&plan, "/work/proj/gone"), CORDON_ACCESS_NONE);
    assert_int_equal(rule_at(&plan, "/work/proj/skipped"), -1);
    assert_int_equal(rule_at(&plan, "/work/proj/newroot"), CORDON_ACCESS_WRITE);
    cx_plan_free(&plan);
}

static void map_specials(void **state)
{
    (void)state;
    cx_plan plan;
    map_ok(MANAGED("{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"minimal\"}},\"access\":\"read\"},"
                   "{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"project_roots\",\"subpath\":\"src\"}},"
                   "\"access\":\"write\"},"
                   "{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"project_roots\",\"subpath\":\"/var/tmp\"}},"
                   "\"access\":\"read\"},"
                   "{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"tmpdir\"}},\"access\":\"write\"}"),
           "relative/tmp", false, &plan);
    assert_int_equal(plan.base, CORDON_BASE_SYSTEM);
    assert_int_equal(rule_at(&plan, "/nix/store"), CORDON_ACCESS_READ);
    assert_int_equal(rule_at(&plan, "/run/current-system/sw"), -1); /* not on this host */
    assert_int_equal(rule_at(&plan, CWD "/src"), CORDON_ACCESS_WRITE);
    assert_int_equal(rule_at(&plan, "/var/tmp"), CORDON_ACCESS_READ); /* an absolute subpath replaces */
    assert_int_equal(rule_at(&plan, "/tmp"), -1);                     /* --base system: private /tmp */
    assert_int_equal(rule_at(&plan, "relative/tmp"), -1);             /* a relative TMPDIR names nothing */
    assert_int_equal(plan.n_rules, 3);
    cx_plan_free(&plan);
}

static void map_globs(void **state)
{
    (void)state;
    cx_plan plan;
    map_ok("{\"type\":\"managed\",\"file_system\":{\"type\":\"restricted\",\"glob_scan_max_depth\":2,\"entries\":"
           "[" ROOT_READ "," PROJ_WRITE
           ",{\"path\":{\"type\":\"glob_pattern\",\"pattern\":\"**/*.env\"},\"access\":\"deny\"},"
           "{\"path\":{\"type\":\"glob_pattern\",\"pattern\":\"/work/proj/**/*.key\"},\"access\":\"none\"},"
           "{\"path\":{\"type\":\"glob_pattern\",\"pattern\":\"/work/proj/*.txt\"},\"access\":\"read\"}]},"
           "\"network\":\"restricted\"}",
           NULL, false, &plan);
    assert_int_equal(plan.deny_globs.n, 2); /* a glob that does not deny is ignored, as by Codex */
    assert_string_equal(plan.deny_globs.v[0], CWD "/**/*.env");
    assert_string_equal(plan.deny_globs.v[1], CWD "/**/*.key");
    assert_int_equal(plan.glob_depth, 2);
    cx_plan_free(&plan);
    /* an empty pattern is the project root itself: refused (exit 1) */
    cx_profile p;
    parse_ok(MANAGED(ROOT_READ ",{\"path\":{\"type\":\"glob_pattern\",\"pattern\":\"\"},\"access\":\"deny\"}"), &p);
    cx_host h = test_host(NULL);
    cordon_error err = {0};
    assert_int_equal(cx_map(&p, &h, false, &plan, &err), -1);
    assert_non_null(strstr(err.message, "cannot be safely expanded"));
    cx_profile_free(&p);
}

static void map_full_disk(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        bool proxy;
        cx_run_mode mode;
        cordon_network net;
    } rows[] = {
        {"{\"type\":\"disabled\"}", false, CX_RUN_DIRECT, CORDON_NETWORK_HOST},
        {"{\"type\":\"disabled\"}", true, CX_RUN_SANDBOX, CORDON_NETWORK_PROXY},
        {"{\"type\":\"external\",\"network\":\"enabled\"}", false, CX_RUN_DIRECT, CORDON_NETWORK_HOST},
        {"{\"type\":\"external\",\"network\":\"restricted\"}", false, CX_RUN_SANDBOX, CORDON_NETWORK_NONE},
        {"{\"type\":\"managed\",\"file_system\":{\"type\":\"unrestricted\"},\"network\":\"restricted\"}", false,
         CX_RUN_SANDBOX, CORDON_NETWORK_NONE},
        {MANAGED("{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"root\"}},\"access\":\"write\"}," ROOT_READ),
         false, CX_RUN_SANDBOX, CORDON_NETWORK_NONE},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        cx_plan plan;
        map_ok(rows[i].json, NULL, rows[i].proxy, &plan);
        if (plan.mode != rows[i].mode || plan.network != rows[i].net)
            fail_msg("row %zu: mode %d network %d", i, plan.mode, plan.network);
        assert_false(plan.fs_restricted);
        if (plan.mode == CX_RUN_SANDBOX)
            assert_int_equal(rule_at(&plan, "/"), CORDON_ACCESS_WRITE);
        cx_plan_free(&plan);
    }
    /* a narrowed root write stays filesystem-restricted */
    cx_plan plan;
    map_ok(MANAGED("{\"path\":{\"type\":\"special\",\"value\":{\"kind\":\"root\"}},\"access\":\"write\"},"
                   "{\"path\":{\"type\":\"path\",\"path\":\"/work/proj/a\"},\"access\":\"read\"}"),
           NULL, false, &plan);
    assert_true(plan.fs_restricted);
    assert_int_equal(rule_at(&plan, "/"), CORDON_ACCESS_WRITE);
    assert_int_equal(rule_at(&plan, "/work/proj/a"), CORDON_ACCESS_READ);
    cx_plan_free(&plan);
}

static void map_worktree_gitdir(void **state)
{
    (void)state;
    cx_plan plan;
    map_ok(MANAGED(ROOT_READ ",{\"path\":{\"type\":\"path\",\"path\":\"/work/wt\"},\"access\":\"write\"}"), NULL, false,
           &plan);
    assert_int_equal(rule_at(&plan, "/work/wt/.git"), CORDON_ACCESS_READ);
    assert_int_equal(rule_at(&plan, "/work/proj/.git/worktrees/wt"), CORDON_ACCESS_READ);
    cx_plan_free(&plan);
}

static void map_applied(void **state)
{
    (void)state;
    cx_plan plan;
    map_ok(MANAGED(ROOT_READ "," PROJ_WRITE ",{\"path\":{\"type\":\"glob_pattern\",\"pattern\":\"**/*.env\"},"
                             "\"access\":\"deny\"}"),
           NULL, false, &plan);
    cordon_policy *p = cordon_policy_new();
    cx_args a = {.no_proc = true};
    char *env[] = {"PATH=/bin", "SECRET=1", "HOME=/home/u", "bad name=x", "NOEQ", NULL};
    cordon_error err = {0};
    assert_int_equal(cx_apply(&plan, &a, env, p, &err), 0);
    assert_true(p->no_workspace);
    assert_int_equal(p->base, CORDON_BASE_HOST);
    assert_true(p->no_proc);
    assert_true(p->no_private_dirs); /* HOME and TMPDIR as Codex's environment has them */
    assert_true(strv_contains(&p->protect, ".aws"));
    assert_int_equal(p->n_globs, 1);
    /* the whole environment, as the helper passes it */
    size_t kept = 0;
    for (size_t i = 0; i < p->n_env; i++)
        kept += p->env[i].kind == ENV_KEEP;
    assert_int_equal(kept, 3);
    cordon_policy_free(p);
    cx_plan_free(&plan);
}

static void wsl(void **state)
{
    (void)state;
    assert_true(cx_is_wsl1("Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com)", "4.4.0-19041-Microsoft"));
    assert_false(cx_is_wsl1("Linux version 5.15.90.1-microsoft-standard-WSL2", "5.15.90.1-microsoft-standard-WSL2"));
    assert_false(cx_is_wsl1("Linux version 6.18.0 (gcc)", "6.18.0"));
    assert_false(cx_is_wsl1(NULL, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(args_observed_call),
        cmocka_unit_test(args_forms),
        cmocka_unit_test(args_rejected),
        cmocka_unit_test(profile_managed),
        cmocka_unit_test(profile_other_kinds),
        cmocka_unit_test(profile_rejected),
        cmocka_unit_test(legacy_policy),
        cmocka_unit_test(managed_network),
        cmocka_unit_test(proxy_urls),
        cmocka_unit_test(proxy_env),
        cmocka_unit_test(map_workspace_write),
        cmocka_unit_test(map_read_only),
        cmocka_unit_test(map_carveouts_and_missing),
        cmocka_unit_test(map_specials),
        cmocka_unit_test(map_globs),
        cmocka_unit_test(map_full_disk),
        cmocka_unit_test(map_worktree_gitdir),
        cmocka_unit_test(map_applied),
        cmocka_unit_test(wsl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
