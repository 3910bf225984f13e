// SPDX-License-Identifier: Apache-2.0
#include "policy/policy.h"

#include <errno.h>
#include <linux/capability.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/glob.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

void policy_add_rule(struct cordon_policy *p, const char *path, cordon_access access, rule_origin origin,
                     const char *source, int line, bool expand)
{
    grow(&p->rules, &p->cap_rules, p->n_rules + 1, sizeof *p->rules);
    p->rules[p->n_rules++] = (policy_rule){
        .path = xstrdup(path),
        .access = access,
        .origin = origin,
        .source = xstrdup(source ? source : ""),
        .line = line,
        .expand = expand,
    };
}

const char *access_name(cordon_access a)
{
    switch (a) {
    case CORDON_ACCESS_NONE: return "deny";
    case CORDON_ACCESS_READ: return "read";
    case CORDON_ACCESS_WRITE: return "write";
    }
    return "?";
}

const char *base_name(cordon_base b)
{
    switch (b) {
    case CORDON_BASE_SYSTEM: return "system";
    case CORDON_BASE_HOST: return "host";
    case CORDON_BASE_EMPTY: return "empty";
    }
    return "?";
}

const char *network_name(cordon_network n)
{
    switch (n) {
    case CORDON_NETWORK_NONE: return "none";
    case CORDON_NETWORK_HOST: return "host";
    case CORDON_NETWORK_PROXY: return "proxy";
    }
    return "?";
}

const char *origin_name(rule_origin o)
{
    switch (o) {
    case ORIGIN_FLAG: return "flag";
    case ORIGIN_SETTINGS: return "settings";
    case ORIGIN_WORKSPACE: return "workspace";
    case ORIGIN_BASE: return "base";
    case ORIGIN_PROTECT: return "protect";
    }
    return "?";
}

/* Every setter: a NULL policy is an error, not a crash. */
#define NEED_POLICY(p, err)                                                            \
    do {                                                                               \
        if (!(p))                                                                      \
            return err_set(err, CORDON_STAGE_USAGE, EINVAL, "no policy given (NULL)"); \
    } while (0)

cordon_policy *cordon_policy_new(void)
{
    struct cordon_policy *p = xcalloc(1, sizeof *p);
    p->base = CORDON_BASE_SYSTEM;
    p->network = CORDON_NETWORK_NONE;
    p->settings_enabled = -1;
    p->settings_tty = -1;
    p->settings_sandboxed = -1;
    p->glob_depth = -1;
    return p;
}

void cordon_policy_free(cordon_policy *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_rules; i++) {
        free(p->rules[i].path);
        free(p->rules[i].source);
    }
    free(p->rules);
    for (size_t i = 0; i < p->n_env; i++) {
        free(p->env[i].name);
        free(p->env[i].value);
    }
    free(p->env);
    free(p->workspace);
    free(p->data_root);
    free(p->cwd);
    free(p->orchestration_isolation);
    free(p->settings_enabled_where);
    free(p->settings_status_json);
    strv_free(&p->protect);
    strv_free(&p->settings_unknown);
    for (size_t i = 0; i < p->n_tmpfs; i++) {
        free(p->tmpfs[i].path);
        free(p->tmpfs[i].target);
        free(p->tmpfs[i].data);
    }
    free(p->hostname);
    free(p->tmpfs);
    for (size_t i = 0; i < p->n_hides; i++) {
        free(p->hides[i].path);
        free(p->hides[i].source);
    }
    free(p->hides);
    for (size_t i = 0; i < p->n_globs; i++) {
        free(p->globs[i].pattern);
        free(p->globs[i].source);
    }
    free(p->globs);
    policy_net_free(&p->net);
    free(p);
}

/* "unknown base 'hots': did you mean 'host'? (use one of system, host, empty)" */
static int unknown_word(cordon_error *err, const char *what, const char *s, const char *const *words, size_t n)
{
    const char *near = closest_word(s, words, n);
    char list[128] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", words[i]);
    if (near)
        return err_set(err, CORDON_STAGE_USAGE, 0, "unknown %s '%s': did you mean '%s'? (one of %s)", what, s, near,
                       list);
    return err_set(err, CORDON_STAGE_USAGE, 0, "unknown %s '%s': use one of %s", what, s ? s : "", list);
}

int cordon_base_from_string(const char *s, cordon_base *out, cordon_error *err)
{
    if (s && strcmp(s, "system") == 0)
        *out = CORDON_BASE_SYSTEM;
    else if (s && strcmp(s, "host") == 0)
        *out = CORDON_BASE_HOST;
    else if (s && strcmp(s, "empty") == 0)
        *out = CORDON_BASE_EMPTY;
    else
        return unknown_word(err, "base", s, (const char *const[]){"system", "host", "empty"}, 3);
    return 0;
}

int cordon_network_from_string(const char *s, cordon_network *out, cordon_error *err)
{
    if (s && strcmp(s, "none") == 0)
        *out = CORDON_NETWORK_NONE;
    else if (s && strcmp(s, "host") == 0)
        *out = CORDON_NETWORK_HOST;
    else if (s && strcmp(s, "proxy") == 0)
        *out = CORDON_NETWORK_PROXY;
    else
        return unknown_word(err, "network mode", s, (const char *const[]){"none", "host", "proxy"}, 3);
    return 0;
}

int cordon_policy_set_base(cordon_policy *p, cordon_base base, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (base != CORDON_BASE_SYSTEM && base != CORDON_BASE_HOST && base != CORDON_BASE_EMPTY)
        return err_set(err, CORDON_STAGE_USAGE, 0, "unknown base %d", (int)base);
    p->base = base;
    p->scalars_set |= POLICY_SET_BASE;
    return 0;
}

/* An absolute, non-empty path, normalised.  `what` prefixes the message (a rule's source,
 * as the caller named it) or is NULL; `option` is the setting (cordon_error.option). */
static char *absolute_arg(const char *path, const char *what, const char *option, cordon_error *err)
{
    const char *sep = what ? ": " : "";
    if (!what)
        what = "";
    if (!path || !*path) {
        err_opt(err, CORDON_STAGE_USAGE, 0, option, "%s%sempty path; give an absolute path", what, sep);
        return NULL;
    }
    if (path[0] != '/') {
        err_opt(err, CORDON_STAGE_USAGE, 0, option,
                "%s%s'%s' is a relative path; give an absolute path (for example \"$PWD/%s\")", what, sep, path, path);
        return NULL;
    }
    /* Kept as written: ".." and symlinks are resolved on the host by canon.c, since a
     * lexical ".." after a symlink would name a different file than the kernel does. */
    return xstrdup(path);
}

int cordon_policy_add_path(cordon_policy *p, const char *path, cordon_access access, const char *source,
                           cordon_error *err)
{
    NEED_POLICY(p, err);
    const char *what = source && *source ? source : "path rule";
    if (access != CORDON_ACCESS_NONE && access != CORDON_ACCESS_READ && access != CORDON_ACCESS_WRITE)
        return err_set(err, CORDON_STAGE_USAGE, 0, "%s: unknown access %d", what, (int)access);
    char *abs = absolute_arg(path, what, NULL, err);
    if (!abs)
        return -1;
    policy_add_rule(p, abs, access, ORIGIN_FLAG, what, 0, false);
    free(abs);
    return 0;
}

int cordon_policy_set_workspace(cordon_policy *p, const char *dir, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (!dir) { /* no workspace (--no-workspace) */
        p->no_workspace = true;
        p->scalars_set |= POLICY_SET_WORKSPACE;
        return 0;
    }
    if (!*dir)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "workspace", "empty path");
    char *abs = NULL;
    if (dir[0] == '/') {
        abs = xstrdup(dir);
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd))
            return err_opt(err, CORDON_STAGE_USAGE, errno, "workspace", "cannot resolve the relative path '%s'", dir);
        abs = path_join(cwd, dir);
    }
    free(p->workspace);
    p->workspace = abs;
    p->no_workspace = false;
    p->scalars_set |= POLICY_SET_WORKSPACE;
    return 0;
}

int cordon_policy_set_data_root(cordon_policy *p, const char *dir, cordon_error *err)
{
    NEED_POLICY(p, err);
    char *abs = absolute_arg(dir, NULL, "dataRoot", err);
    if (!abs)
        return -1;
    free(p->data_root);
    p->data_root = abs;
    p->scalars_set |= POLICY_SET_DATA_ROOT;
    return 0;
}

int cordon_policy_set_read_only(cordon_policy *p, bool ro, cordon_error *err)
{
    NEED_POLICY(p, err);
    (void)err;
    p->read_only = ro;
    p->read_only_set = true;
    return 0;
}

int cordon_policy_set_network(cordon_policy *p, cordon_network net, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (net != CORDON_NETWORK_NONE && net != CORDON_NETWORK_HOST && net != CORDON_NETWORK_PROXY)
        return err_set(err, CORDON_STAGE_USAGE, 0, "unknown network mode %d", (int)net);
    p->network = net;
    p->network_set = true;
    return 0;
}

/* Not empty, no '=', no space or control character (which no shell can name). */
static bool valid_env_name(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '=' || (unsigned char)s[i] <= ' ' || s[i] == 0x7f)
            return false;
    return true;
}

static void push_env(struct cordon_policy *p, env_op_kind kind, char *name, char *value)
{
    grow(&p->env, &p->cap_env, p->n_env + 1, sizeof *p->env);
    p->env[p->n_env++] = (env_op){.kind = kind, .name = name, .value = value};
}

void policy_add_settings_env(struct cordon_policy *p, bool keep, const char *name, const char *value)
{
    grow(&p->env, &p->cap_env, p->n_env + 1, sizeof *p->env);
    size_t at = p->n_env_settings++;
    memmove(&p->env[at + 1], &p->env[at], (p->n_env - at) * sizeof *p->env);
    p->n_env++;
    p->env[at] =
        (env_op){.kind = keep ? ENV_KEEP : ENV_SET, .name = xstrdup(name), .value = keep ? NULL : xstrdup(value)};
}

int cordon_policy_add_env(cordon_policy *p, const char *name_eq_value, cordon_error *err)
{
    NEED_POLICY(p, err);
    const char *eq = name_eq_value ? strchr(name_eq_value, '=') : NULL;
    if (!eq)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "env", "'%s' is not NAME=VALUE", name_eq_value ? name_eq_value : "");
    size_t n = (size_t)(eq - name_eq_value);
    if (!valid_env_name(name_eq_value, n))
        return err_opt(err, CORDON_STAGE_USAGE, 0, "env",
                       "'%s' does not start with a variable name (no spaces or control characters)", name_eq_value);
    push_env(p, ENV_SET, xstrndup(name_eq_value, n), xstrdup(eq + 1));
    return 0;
}

int cordon_policy_add_keep_env(cordon_policy *p, const char *name, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (!name || !valid_env_name(name, strlen(name)))
        return err_opt(err, CORDON_STAGE_USAGE, 0, "keepEnv",
                       "'%s' is not a variable name (not empty; no '=', spaces or control characters)",
                       name ? name : "");
    push_env(p, ENV_KEEP, xstrdup(name), NULL);
    return 0;
}

int cordon_policy_set_clear_env(cordon_policy *p, bool clear, cordon_error *err)
{
    NEED_POLICY(p, err);
    (void)err;
    p->clear_env = clear;
    p->scalars_set |= POLICY_SET_CLEAR_ENV;
    return 0;
}

int cordon_policy_set_cwd(cordon_policy *p, const char *dir, cordon_error *err)
{
    NEED_POLICY(p, err);
    char *abs = absolute_arg(dir, NULL, "chdir", err);
    if (!abs)
        return -1;
    free(p->cwd);
    p->cwd = abs;
    p->scalars_set |= POLICY_SET_CWD;
    return 0;
}

int cordon_policy_set_timeout(cordon_policy *p, double seconds, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (!isfinite(seconds) || seconds < 0 || seconds > 31536000.0)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "timeout", "%g is not a number of seconds between 0 and 31536000",
                       seconds);
    p->timeout = seconds;
    p->scalars_set |= POLICY_SET_TIMEOUT;
    return 0;
}

int cordon_policy_set_timeout_string(cordon_policy *p, const char *s, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (!s || !*s)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "timeout", "empty value; give seconds, e.g. 2.5");
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || !end || *end != '\0' || !isfinite(v) || v <= 0 || s[0] == '-' ||
        strspn(s, "0123456789.") != strlen(s))
        return err_opt(err, CORDON_STAGE_USAGE, 0, "timeout",
                       "'%s' is not a positive number of seconds (e.g. 10 or 2.5)", s);
    if (v > 31536000.0)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "timeout", "'%s' is more than a year (31536000 seconds)", s);
    return cordon_policy_set_timeout(p, v, err);
}

int cordon_policy_set_proc(cordon_policy *p, bool mount_proc, cordon_error *err)
{
    NEED_POLICY(p, err);
    (void)err;
    p->no_proc = !mount_proc;
    p->scalars_set |= POLICY_SET_PROC;
    return 0;
}

int cordon_policy_set_inherit_pid_namespace(cordon_policy *p, bool inherit, cordon_error *err)
{
    (void)err;
    p->inherit_pid_ns = inherit;
    return 0;
}

int cordon_policy_set_private_dirs(cordon_policy *p, bool private_dirs, cordon_error *err)
{
    (void)err;
    p->no_private_dirs = !private_dirs;
    return 0;
}

int cordon_policy_set_nested(cordon_policy *p, bool nested, cordon_error *err)
{
    NEED_POLICY(p, err);
    (void)err;
    p->no_nested = !nested;
    p->scalars_set |= POLICY_SET_NO_NESTED;
    return 0;
}

int cordon_policy_set_toolchains(cordon_policy *p, bool toolchains, cordon_error *err)
{
    NEED_POLICY(p, err);
    (void)err;
    p->toolchains = toolchains;
    p->scalars_set |= POLICY_SET_TOOLCHAINS;
    return 0;
}

int cordon_policy_set_warning_handler(cordon_policy *p, cordon_warning_fn fn, void *ctx, cordon_error *err)
{
    NEED_POLICY(p, err);
    (void)err;
    p->warn_fn = fn;
    p->warn_ctx = fn ? ctx : NULL;
    return 0;
}

int cordon_isolation_from_string(const char *s, cordon_isolation *out, cordon_error *err)
{
    if (s && strcmp(s, "namespaces") == 0)
        *out = CORDON_ISOLATION_NAMESPACES;
    else if (s && strcmp(s, "landlock") == 0)
        *out = CORDON_ISOLATION_LANDLOCK;
    else if (s && strcmp(s, "auto") == 0)
        *out = CORDON_ISOLATION_AUTO;
    else
        return unknown_word(err, "isolation", s, (const char *const[]){"namespaces", "landlock", "auto"}, 3);
    return 0;
}

const char *cordon_isolation_name(cordon_isolation i)
{
    switch (i) {
    case CORDON_ISOLATION_NAMESPACES: return "namespaces";
    case CORDON_ISOLATION_LANDLOCK: return "landlock";
    case CORDON_ISOLATION_AUTO: return "auto";
    }
    return "?";
}

int cordon_policy_set_isolation(cordon_policy *p, cordon_isolation i, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (i != CORDON_ISOLATION_NAMESPACES && i != CORDON_ISOLATION_LANDLOCK && i != CORDON_ISOLATION_AUTO)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "unknown isolation %d", (int)i);
    p->isolation = i;
    p->isolation_set = true;
    return 0;
}

int cordon_policy_add_protected(cordon_policy *p, const char *name, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "protect",
                       "'%s' is not a file name (a single path component such as .vscode)", name ? name : "");
    strv_push(&p->protect, xstrdup(name));
    return 0;
}

void policy_add_hide(struct cordon_policy *p, const char *path, rule_origin origin, const char *source, int line,
                     bool expand)
{
    grow(&p->hides, &p->cap_hides, p->n_hides + 1, sizeof *p->hides);
    p->hides[p->n_hides++] = (policy_rule){
        .path = xstrdup(path),
        .access = CORDON_ACCESS_NONE,
        .origin = origin,
        .source = xstrdup(source ? source : ""),
        .line = line,
        .expand = expand,
    };
}

int cordon_policy_add_hidden(cordon_policy *p, const char *path, cordon_error *err)
{
    NEED_POLICY(p, err);
    char *abs = absolute_arg(path, NULL, "hide", err);
    if (!abs)
        return -1;
    policy_add_hide(p, abs, ORIGIN_FLAG, "--hide", 0, false);
    free(abs);
    return 0;
}

int cordon_policy_set_protections(cordon_policy *p, bool on, cordon_error *err)
{
    NEED_POLICY(p, err);
    p->bare = !on;
    return 0;
}

int policy_set_keep_caps(cordon_policy *p, uint64_t caps, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (caps & ~(1ULL << CAP_SETFCAP))
        return err_set(err, CORDON_STAGE_USAGE, EINVAL,
                       "the command can keep CAP_SETFCAP only; every other capability is dropped");
    p->keep_caps = caps;
    return 0;
}

int cordon_policy_add_tmpfs(cordon_policy *p, const char *path, unsigned mode, unsigned long long size,
                            cordon_error *err)
{
    NEED_POLICY(p, err);
    if (!path || path[0] != '/')
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "a tmpfs needs an absolute path (got %s)",
                       path ? path : "NULL");
    if (mode > 07777)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "tmpfs %s: mode %o is not a file mode", path, mode);
    char *norm = path_normalize(path);
    if (!norm || strcmp(norm, "/") == 0) {
        free(norm);
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "a tmpfs at / is the empty base (--base empty)");
    }
    grow(&p->tmpfs, &p->cap_tmpfs, p->n_tmpfs + 1, sizeof *p->tmpfs);
    p->tmpfs[p->n_tmpfs++] = (policy_tmpfs){.path = norm, .mode = mode, .size = size};
    return 0;
}

int policy_add_file(cordon_policy *p, const char *path, const char *data, unsigned mode, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (!path || path[0] != '/' || !data)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "a file needs an absolute path (got %s) and its content",
                       path ? path : "NULL");
    char *norm = path_normalize(path);
    if (!norm || strcmp(norm, "/") == 0) {
        free(norm);
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "a file cannot be made at /");
    }
    grow(&p->tmpfs, &p->cap_tmpfs, p->n_tmpfs + 1, sizeof *p->tmpfs);
    p->tmpfs[p->n_tmpfs++] = (policy_tmpfs){.path = norm, .mode = mode & 07777, .data = xstrdup(data)};
    return 0;
}

int policy_set_hostname(cordon_policy *p, const char *name, cordon_error *err)
{
    NEED_POLICY(p, err);
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 64)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "a host name of 1 to 64 bytes (got %zu)", n);
    free(p->hostname);
    p->hostname = xstrdup(name);
    return 0;
}

int cordon_policy_add_symlink(cordon_policy *p, const char *path, const char *target, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (!path || path[0] != '/')
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "a symlink needs an absolute path (got %s)",
                       path ? path : "NULL");
    if (!target || !*target)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "symlink %s: an empty target", path);
    char *norm = path_normalize(path);
    if (!norm || strcmp(norm, "/") == 0) {
        free(norm);
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "a symlink cannot be made at /");
    }
    grow(&p->tmpfs, &p->cap_tmpfs, p->n_tmpfs + 1, sizeof *p->tmpfs);
    p->tmpfs[p->n_tmpfs++] = (policy_tmpfs){.path = norm, .target = xstrdup(target)};
    return 0;
}

void policy_add_glob(struct cordon_policy *p, const char *pattern, rule_origin origin, const char *source, int line,
                     bool expand)
{
    grow(&p->globs, &p->cap_globs, p->n_globs + 1, sizeof *p->globs);
    p->globs[p->n_globs++] = (policy_glob){
        .pattern = xstrdup(pattern),
        .origin = origin,
        .source = xstrdup(source ? source : ""),
        .line = line,
        .expand = expand,
    };
}

int cordon_policy_add_deny_glob(cordon_policy *p, const char *pattern, const char *source, cordon_error *err)
{
    NEED_POLICY(p, err);
    const char *what = source && *source ? source : "deny glob";
    /* Compiled now only to refuse a bad pattern at once (no static prefix, an open
     * '[', ...); resolve.c compiles it again at launch and walks the host. */
    glob_pat *g;
    if (glob_compile(pattern, &g, err) < 0)
        return source && *source ? err_wrap(err, "%s", what) : -1;
    glob_pat_free(g);
    policy_add_glob(p, pattern, ORIGIN_FLAG, what, 0, false);
    return 0;
}

int cordon_policy_set_glob_depth(cordon_policy *p, int depth, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (depth != -1 && (depth < 1 || depth > GLOB_MAX_DEPTH))
        return err_opt(err, CORDON_STAGE_USAGE, 0, "globDepth",
                       "%d is not a number of levels between 1 and %d (or -1: unlimited)", depth, GLOB_MAX_DEPTH);
    p->glob_depth = depth;
    p->scalars_set |= POLICY_SET_GLOB_DEPTH;
    return 0;
}

int cordon_policy_settings_sandboxed(const cordon_policy *p)
{
    return p ? p->settings_sandboxed : -1;
}

const char *cordon_policy_settings_status_json(const cordon_policy *p)
{
    return p ? p->settings_status_json : NULL;
}

int cordon_policy_settings_tty(const cordon_policy *p)
{
    return p ? p->settings_tty : -1;
}

int cordon_policy_settings_enabled(const cordon_policy *p)
{
    return p ? p->settings_enabled : -1;
}
