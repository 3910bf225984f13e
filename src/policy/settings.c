// SPDX-License-Identifier: Apache-2.0
/* The settings-file reader (README, "Settings file").
 *
 * A settings file is checked in full before any of it reaches the policy: a file with
 * an error changes nothing, so a caller that reports the error and goes on (a harness
 * using the library) still holds exactly the policy it built.  Every message starts with
 * "FILE:LINE:" and names the key, because the person reading it has to fix that file. */
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/glob.h"
#include "policy/jsonpos.h"
#include "policy/settings_keys.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"

/* Settings files are a few lines; anything this big is the wrong file. */
#define SETTINGS_MAX_BYTES ((size_t)1024 * 1024)

static const char sandbox_keys[] =
    "enabled, network, readOnly, allowedPaths, deniedPaths, limitPids, limitMemory, limitCpu, "
    "isolation, hiddenPaths, allowedDomains, deniedDomains, addHosts, dnsServers, allowUnixSockets, "
    "forwardPorts, publishPorts, networkLog, allowedSockets, base, workspace, noWorkspace, readOnlyPaths, deniedGlobs, "
    "globDepth, protect, dataRoot, env, keepEnv, clearEnv, chdir, timeout, statusJson, noProc, noNested, toolchains, "
    "tty, "
    "strictSettings";

/* Our own rather than jansson's json_auto_t, which only exists from jansson 2.11 on. */
static void cleanup_jsonp(json_t **j)
{
    json_decref(*j);
}
#define _cleanup_json_ __attribute__((cleanup(cleanup_jsonp)))

typedef struct settings_ctx {
    const char *file; /* as the caller gave it: messages start with it */
    const char *text; /* the raw document, for jsonpos */
    size_t len;
    cordon_error *err;
} settings_ctx;

/* What one file says, validated completely before it is applied. */
typedef struct settings {
    int enabled, network, read_only;    /* -1 = not given, else 0/1 */
    json_t *allowed, *denied;           /* borrowed from the document, or NULL */
    json_t *hidden;                     /* hiddenPaths (--hide), borrowed, or NULL */
    unsigned long long limit[LIMITS_N]; /* limitPids, limitMemory, limitCpu; 0 = not given */
    int isolation;                      /* -1 = not given, else a cordon_isolation */
    int sandboxed;                      /* orchestration.sandboxed: -1 = not given, else 0/1 */
    const char *orch_isolation;         /* orchestration.isolation (borrowed), or NULL */
    /* the network (src/net) */
    json_t *allowed_domains, *denied_domains, *add_hosts, *dns_servers, *forward_ports, *publish_ports,
        *allowed_sockets;
    int allow_unix; /* -1 = not given, else 0/1 */
    const char *network_log;
    /* the other run options (apply_run) */
    int base;                                                         /* -1 = not given, else a cordon_base */
    char *workspace, *data_root, *chdir;                              /* owned (~ expanded), or NULL */
    const char *status_json;                                          /* borrowed, or NULL */
    int no_workspace, clear_env, no_proc, no_nested, tty, toolchains; /* -1 = not given */
    double timeout;                                                   /* 0 = not given */
    int glob_depth;
    bool glob_depth_set;
    json_t *env, *keep_env, *protect, *ro_paths, *denied_globs; /* borrowed, or NULL */
    int strict;                                                 /* strictSettings: -1 not given, else 0/1 */
    strv unknown;                                               /* unknown top-level keys (borrowed) */
} settings;

/* A copy of s fit for a one-line message: control bytes become \xNN (a key or path
 * must not be able to move the cursor or forge a second line of output), and inside a
 * quoted context '"' and '\' are escaped too. */
static char *printable(const char *s, size_t n, bool quoted)
{
    char *out = xmalloc(4 * n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (quoted && (ch == '"' || ch == '\\')) {
            *o++ = '\\';
            *o++ = (char)ch;
        } else if (ch < 0x20 || ch == 0x7f) {
            o += sprintf(o, "\\x%02x", ch);
        } else {
            *o++ = (char)ch;
        }
    }
    *o = '\0';
    return out;
}

static const char *type_phrase(const json_t *v)
{
    if (!v)
        return "nothing"; /* never today: every caller has a value (json_is_* also says no to NULL) */
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "an unknown JSON type";
}

static int line_of(const settings_ctx *ctx, const jsonpos_step *path, size_t n)
{
    return jsonpos_line(ctx->text, ctx->len, path, n);
}

/* Fill the error as "FILE:LINE: message" (or "FILE: message" when the line is unknown). */
__attribute__((format(printf, 3, 4))) static int fail(const settings_ctx *ctx, int line, const char *fmt, ...)
{
    char msg[sizeof((cordon_error *)NULL)->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0)
        return err_set(ctx->err, CORDON_STAGE_SETTINGS, 0, "%s:%d: %s", ctx->file, line, msg);
    return err_set(ctx->err, CORDON_STAGE_SETTINGS, 0, "%s: %s", ctx->file, msg);
}

/* Read the whole file ourselves (not json_load_file) so that jsonpos has the text. */
static int read_settings(const char *file, char **text, size_t *len, cordon_error *err)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it;
     * O_NOCTTY: a terminal given by mistake must not become our controlling tty. */
    _cleanup_fd_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return err_set(err, CORDON_STAGE_SETTINGS, errno, "settings file %s: cannot read", file);
    struct stat st;
    if (fstat(fd, &st) < 0)
        return err_set(err, CORDON_STAGE_SETTINGS, errno, "settings file %s: cannot read", file);
    if (!S_ISREG(st.st_mode))
        return err_set(err, CORDON_STAGE_SETTINGS, 0, "settings file %s: not a regular file; give a JSON file", file);
    /* Not st_size, which may be stale (the file can grow) or 0 (/proc): read one byte
     * past the limit to notice a file that is too large. */
    _cleanup_free_ char *buf = xmalloc(SETTINGS_MAX_BYTES + 1);
    ssize_t got = read_all(fd, buf, SETTINGS_MAX_BYTES + 1);
    if (got < 0)
        return err_set(err, CORDON_STAGE_SETTINGS, errno, "settings file %s: cannot read", file);
    if ((size_t)got > SETTINGS_MAX_BYTES)
        return err_set(err, CORDON_STAGE_SETTINGS, 0,
                       "settings file %s: larger than the 1 MiB limit; refusing to read it", file);
    *len = (size_t)got;
    *text = steal_pointer(&buf);
    return 0;
}

static int malformed(const char *file, const json_error_t *jerr, cordon_error *err)
{
    /* jansson quotes the offending input in its text; keep it on one line. */
    _cleanup_free_ char *why = printable(jerr->text, strlen(jerr->text), false);
    if (jerr->line > 0 && jerr->column > 0)
        return err_set(err, CORDON_STAGE_SETTINGS, 0, "%s:%d:%d: malformed JSON: %s", file, jerr->line, jerr->column,
                       why);
    if (jerr->line > 0)
        return err_set(err, CORDON_STAGE_SETTINGS, 0, "%s:%d: malformed JSON: %s", file, jerr->line, why);
    return err_set(err, CORDON_STAGE_SETTINGS, 0, "%s: malformed JSON: %s", file, why);
}

/* `prefix` is the dotted path of the enclosing object ("" or "sandbox."). */
static int unknown_key(const settings_ctx *ctx, const jsonpos_step *path, size_t n, const char *prefix, const char *key,
                       const char *known)
{
    _cleanup_free_ char *shown = printable(key, strlen(key), true);
    /* a typo of a known key is said first */
    char words[2048];
    const char *list[64];
    size_t nw = 0;
    snprintf(words, sizeof words, "%s", known);
    for (char *w = strtok(words, ", "); w && nw < 64; w = strtok(NULL, ", "))
        list[nw++] = w;
    const char *near = closest_word(key, list, nw);
    if (near)
        return fail(ctx, line_of(ctx, path, n), "unknown key \"%s%s\": did you mean \"%s%s\"? (known keys: %s)", prefix,
                    shown, prefix, near, known);
    return fail(ctx, line_of(ctx, path, n), "unknown key \"%s%s\"; known keys: %s", prefix, shown, known);
}

static int get_bool(const settings_ctx *ctx, const char *key, const json_t *v, int *out)
{
    if (!json_is_boolean(v)) {
        jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key)};
        return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\" must be true or false, not %s", key, type_phrase(v));
    }
    *out = json_is_true(v) ? 1 : 0;
    return 0;
}

/* "namespaces", "landlock" or "auto", as --isolation. */
static int get_isolation(const settings_ctx *ctx, const char *key, const json_t *v, int *out)
{
    jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key)};
    cordon_isolation i;
    if (!json_is_string(v) || cordon_isolation_from_string(json_string_value(v), &i, NULL) < 0) {
        _cleanup_free_ char *shown =
            json_is_string(v) ? printable(json_string_value(v), json_string_length(v), true) : NULL;
        if (shown)
            return fail(ctx, line_of(ctx, at, 2),
                        "key \"sandbox.%s\" is \"%s\": use one of \"namespaces\", \"landlock\", \"auto\"", key, shown);
        return fail(ctx, line_of(ctx, at, 2),
                    "key \"sandbox.%s\" must be one of \"namespaces\", \"landlock\", \"auto\", not %s", key,
                    type_phrase(v));
    }
    *out = (int)i;
    return 0;
}

/* deniedPaths entries holding one of these are deny globs (policy/glob.h). */
static bool is_glob(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/* Paths stay raw here ("~", "<workspace>/x", relative...): resolve.c expands them. */
static int check_path(const settings_ctx *ctx, const char *key, size_t i, const json_t *e, bool deny)
{
    jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key), JSONPOS_INDEX(i)};
    if (!json_is_string(e))
        return fail(ctx, line_of(ctx, at, 3), "\"sandbox.%s[%zu]\" must be a non-empty path string, not %s", key, i,
                    type_phrase(e));
    const char *s = json_string_value(e);
    size_t n = json_string_length(e);
    if (n == 0)
        return fail(ctx, line_of(ctx, at, 3), "\"sandbox.%s[%zu]\" must be a non-empty path string", key, i);
    /* "\u0000" would cut the path short at the NUL: refuse rather than guess. */
    if (strlen(s) != n)
        return fail(ctx, line_of(ctx, at, 3),
                    "\"sandbox.%s[%zu]\" contains a NUL byte (\\u0000), which no path can hold", key, i);
    /* A deny entry with a glob character is a deny glob (expanded at launch by resolve.c,
     * where its prefix is checked once ~ and <workspace> are known); its syntax is checked
     * now, so that a typo fails here, naming the line, and never silently hides nothing. */
    cordon_error gerr;
    if (deny && is_glob(s) && glob_check_syntax(s, &gerr) < 0) {
        _cleanup_free_ char *shown = printable(s, n, true);
        _cleanup_free_ char *why = printable(gerr.message, strlen(gerr.message), false);
        return fail(ctx, line_of(ctx, at, 3), "\"sandbox.%s[%zu]\" is \"%s\": %s", key, i, shown, why);
    }
    return 0;
}

static int check_paths(const settings_ctx *ctx, const char *key, json_t *v, bool deny)
{
    if (!json_is_array(v)) {
        jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key)};
        return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\" must be an array of path strings, not %s", key,
                    type_phrase(v));
    }
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) if (check_path(ctx, key, i, e, deny) < 0) return -1;
    return 0;
}

/* limitPids and limitCpu: a positive JSON integer; limitMemory: that (bytes) or a size
 * string as on the command line ("512M"). */
static int get_limit(const settings_ctx *ctx, const char *key, cordon_limit which, const json_t *v, settings *s)
{
    jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key)};
    const char *what = which == CORDON_LIMIT_PIDS     ? "a whole number of processes (e.g. 100)"
                       : which == CORDON_LIMIT_MEMORY ? "a size in bytes or a string such as \"512M\""
                                                      : "a whole number of CPU seconds (e.g. 60)";
    cordon_error e = {0};
    unsigned long long n = 0;
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i <= 0)
            return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\" must be at least 1, not %lld", key, (long long)i);
        n = (unsigned long long)i;
        if (limit_check(which, n, &e) == 0) {
            s->limit[which] = n;
            return 0;
        }
    } else if (which == CORDON_LIMIT_MEMORY && json_is_string(v)) {
        if (strlen(json_string_value(v)) != json_string_length(v))
            return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\" contains a NUL byte (\\u0000)", key);
        if (limit_parse(which, json_string_value(v), &n, &e) == 0) {
            s->limit[which] = n;
            return 0;
        }
    } else {
        return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\" must be %s, not %s", key, what, type_phrase(v));
    }
    /* limit.c's message names no option: the key is the context here */
    const char *msg = e.message;
    _cleanup_free_ char *shown = printable(msg, strlen(msg), false);
    return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\": %s", key, shown);
}

/* "network": true (host), false (none), or "none", "host", "proxy" as --network. */
static int get_network(const settings_ctx *ctx, const char *key, const json_t *v, int *out)
{
    if (json_is_boolean(v)) {
        *out = json_is_true(v) ? CORDON_NETWORK_HOST : CORDON_NETWORK_NONE;
        return 0;
    }
    cordon_network n;
    if (json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v) &&
        cordon_network_from_string(json_string_value(v), &n, NULL) == 0) {
        *out = (int)n;
        return 0;
    }
    jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key)};
    if (json_is_string(v)) {
        _cleanup_free_ char *shown = printable(json_string_value(v), json_string_length(v), true);
        return fail(ctx, line_of(ctx, at, 2),
                    "key \"sandbox.%s\" is \"%s\": use true, false, \"none\", \"host\" or \"proxy\"", key, shown);
    }
    return fail(ctx, line_of(ctx, at, 2),
                "key \"sandbox.%s\" must be true, false, \"none\", \"host\" or \"proxy\", not %s", key, type_phrase(v));
}

/* ---- the network's keys (src/net), checked here with the setters' own rules on a
 * scratch policy, applied by apply_net() ------------------------------------------------- */

static bool is_net_key(const char *key)
{
    static const char *const keys[] = {"allowedDomains", "deniedDomains",    "addHosts",
                                       "dnsServers",     "allowUnixSockets", "forwardPorts",
                                       "publishPorts",   "networkLog",       "allowedSockets"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

/* One entry through the setter the key stands for. */
static int net_entry(cordon_policy *p, const char *key, const json_t *e, cordon_error *err)
{
    if (json_is_integer(e) && (strcmp(key, "forwardPorts") == 0 || strcmp(key, "publishPorts") == 0)) {
        json_int_t port = json_integer_value(e);
        unsigned u = port < 0 || port > 65535 ? 0 : (unsigned)port;
        return key[0] == 'f' ? cordon_policy_forward_port(p, u, err) : cordon_policy_publish_port(p, u, 0, err);
    }
    if (!json_is_string(e) || strlen(json_string_value(e)) != json_string_length(e))
        return err_set(err, CORDON_STAGE_SETTINGS, 0, "must be %s",
                       key[0] == 'f'   ? "a port number (or a \"PORT\" string)"
                       : key[0] == 'p' ? "a port number (or a \"PORT\" or \"127.0.0.1:HOSTPORT:PORT\" string)"
                                       : "a string without NUL bytes");
    const char *v = json_string_value(e);
    if (strcmp(key, "allowedDomains") == 0)
        return cordon_policy_allow_domain(p, v, err);
    if (strcmp(key, "deniedDomains") == 0)
        return cordon_policy_deny_domain(p, v, err);
    if (strcmp(key, "addHosts") == 0)
        return cordon_policy_add_host(p, v, err);
    if (strcmp(key, "dnsServers") == 0)
        return cordon_policy_add_dns_server(p, v, err);
    if (strcmp(key, "forwardPorts") == 0)
        return cordon_policy_forward_port_string(p, v, err);
    if (strcmp(key, "allowedSockets") == 0)
        return cordon_policy_allow_socket(p, v, err);
    return cordon_policy_publish_port_string(p, v, err);
}

static int parse_net_key(const settings_ctx *ctx, const char *key, json_t *v, settings *s)
{
    jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key), JSONPOS_INDEX(0)};
    if (strcmp(key, "allowUnixSockets") == 0)
        return get_bool(ctx, key, v, &s->allow_unix);
    if (strcmp(key, "networkLog") == 0) {
        if (!json_is_string(v) || json_string_length(v) == 0 || strlen(json_string_value(v)) != json_string_length(v))
            return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\" must be a file name, not %s", key,
                        json_is_string(v) ? "that string" : type_phrase(v));
        s->network_log = json_string_value(v);
        return 0;
    }
    if (!json_is_array(v))
        return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\" must be an array, not %s", key, type_phrase(v));
    cordon_policy *scratch = cordon_policy_new();
    size_t i;
    json_t *e;
    int r = 0;
    json_array_foreach(v, i, e)
    {
        cordon_error err = {0};
        if (net_entry(scratch, key, e, &err) < 0) {
            at[2] = (jsonpos_step)JSONPOS_INDEX(i);
            _cleanup_free_ char *why = printable(err.message, strlen(err.message), false);
            r = fail(ctx, line_of(ctx, at, 3), "\"sandbox.%s[%zu]\": %s", key, i, why);
            break;
        }
    }
    cordon_policy_free(scratch);
    if (r == 0) {
        json_t **slot = strcmp(key, "allowedDomains") == 0   ? &s->allowed_domains
                        : strcmp(key, "deniedDomains") == 0  ? &s->denied_domains
                        : strcmp(key, "addHosts") == 0       ? &s->add_hosts
                        : strcmp(key, "dnsServers") == 0     ? &s->dns_servers
                        : strcmp(key, "forwardPorts") == 0   ? &s->forward_ports
                        : strcmp(key, "allowedSockets") == 0 ? &s->allowed_sockets
                                                             : &s->publish_ports;
        *slot = v;
    }
    return r;
}

/* Cannot fail: checked above.  What a flag gave already (a port, a host) is not added
 * twice; a flag's allowUnixSockets and networkLog win. */
static void apply_net(const settings *s, cordon_policy *p)
{
    const struct {
        const char *key;
        json_t *v;
    } lists[] = {{"allowedDomains", s->allowed_domains},
                 {"deniedDomains", s->denied_domains},
                 {"addHosts", s->add_hosts},
                 {"dnsServers", s->dns_servers},
                 {"forwardPorts", s->forward_ports},
                 {"publishPorts", s->publish_ports},
                 {"allowedSockets", s->allowed_sockets}};
    for (size_t k = 0; k < sizeof lists / sizeof *lists; k++) {
        size_t i;
        json_t *e;
        if (!lists[k].v)
            continue;
        json_array_foreach(lists[k].v, i, e)
        {
            cordon_error err;
            (void)net_entry(p, lists[k].key, e, &err);
        }
    }
    if (s->allow_unix >= 0 && !p->net.allow_unix_set)
        p->net.allow_unix = s->allow_unix != 0;
    if (s->network_log && !p->net.log)
        p->net.log = xstrdup(s->network_log);
}

/* ---- the rest of the run options (README, "Settings file": every `cordon run` flag has
 * a key, the camelCase of the flag), checked with the setters' own rules on a scratch
 * policy, applied by apply_run().  --settings itself (the file) and --help have none. - */

static const char *const run_keys[] = {
    "base",    "workspace",  "noWorkspace", "readOnlyPaths", "deniedGlobs", "globDepth",
    "protect", "dataRoot",   "env",         "keepEnv",       "clearEnv",    "chdir",
    "timeout", "statusJson", "noProc",      "noNested",      "tty",         "toolchains",
};

static bool is_run_key(const char *key)
{
    for (size_t i = 0; i < sizeof run_keys / sizeof *run_keys; i++)
        if (strcmp(key, run_keys[i]) == 0)
            return true;
    return false;
}

/* A path value: absolute, or ~ / ~/... (the caller's home, $HOME). */
static int get_abs_path(const settings_ctx *ctx, const char *key, const json_t *v, char **out)
{
    jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key)};
    const char *str = json_string_value(v);
    if (!str || !*str || strlen(str) != json_string_length(v))
        return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\" must be a path string, not %s", key,
                    json_is_string(v) ? "that string" : type_phrase(v));
    if (str[0] == '~' && (str[1] == '\0' || str[1] == '/')) {
        const char *home = getenv("HOME");
        if (!home || home[0] != '/')
            return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\" uses ~ but HOME is not set to an absolute path",
                        key);
        *out = path_join(home, str + 1);
        return 0;
    }
    if (str[0] != '/') {
        _cleanup_free_ char *shown = printable(str, strlen(str), true);
        return fail(ctx, line_of(ctx, at, 2),
                    "key \"sandbox.%s\" is \"%s\": give an absolute path, or one starting "
                    "with ~/",
                    key, shown);
    }
    *out = xstrdup(str);
    return 0;
}

/* An array of strings, each through `check` on a scratch policy (NULL: paths). */
static int check_strings(const settings_ctx *ctx, const char *key, const json_t *v,
                         int (*check)(cordon_policy *, const char *, cordon_error *))
{
    jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key), JSONPOS_INDEX(0)};
    if (!json_is_array(v))
        return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.%s\" must be an array of strings, not %s", key,
                    type_phrase(v));
    cordon_policy *scratch = cordon_policy_new();
    size_t i;
    json_t *e;
    int r = 0;
    json_array_foreach(v, i, e)
    {
        at[2] = (jsonpos_step)JSONPOS_INDEX(i);
        if (!json_is_string(e) || strlen(json_string_value(e)) != json_string_length(e)) {
            r = fail(ctx, line_of(ctx, at, 3), "\"sandbox.%s[%zu]\" must be a string without NUL bytes, not %s", key, i,
                     json_is_string(e) ? "that string" : type_phrase(e));
            break;
        }
        cordon_error err = {0};
        if (check(scratch, json_string_value(e), &err) < 0) {
            _cleanup_free_ char *why = printable(err.message, strlen(err.message), false);
            r = fail(ctx, line_of(ctx, at, 3), "\"sandbox.%s[%zu]\": %s", key, i, why);
            break;
        }
    }
    cordon_policy_free(scratch);
    return r;
}

static int keep_env_check(cordon_policy *p, const char *s, cordon_error *err)
{
    return cordon_policy_keep_env(p, s, err);
}

static int protect_check(cordon_policy *p, const char *s, cordon_error *err)
{
    return cordon_policy_protect(p, s, err);
}

static int parse_run_key(const settings_ctx *ctx, const char *key, json_t *v, settings *s)
{
    jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key)};
    if (strcmp(key, "base") == 0) {
        cordon_base b;
        cordon_error e = {0};
        if (!json_is_string(v) || cordon_base_from_string(json_string_value(v), &b, &e) < 0) {
            if (!json_is_string(v))
                return fail(ctx, line_of(ctx, at, 2),
                            "key \"sandbox.base\" must be \"system\", \"host\" or \"empty\", "
                            "not %s",
                            type_phrase(v));
            _cleanup_free_ char *why = printable(e.message, strlen(e.message), false);
            return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.base\": %s", why);
        }
        s->base = (int)b;
        return 0;
    }
    if (strcmp(key, "workspace") == 0)
        return get_abs_path(ctx, key, v, &s->workspace);
    if (strcmp(key, "dataRoot") == 0)
        return get_abs_path(ctx, key, v, &s->data_root);
    if (strcmp(key, "chdir") == 0)
        return get_abs_path(ctx, key, v, &s->chdir);
    if (strcmp(key, "statusJson") == 0) {
        const char *str = json_string_value(v);
        if (!str || !*str || strlen(str) != json_string_length(v))
            return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.statusJson\" must be a file name, not %s",
                        json_is_string(v) ? "that string" : type_phrase(v));
        s->status_json = str;
        return 0;
    }
    if (strcmp(key, "noWorkspace") == 0)
        return get_bool(ctx, key, v, &s->no_workspace);
    if (strcmp(key, "clearEnv") == 0)
        return get_bool(ctx, key, v, &s->clear_env);
    if (strcmp(key, "noProc") == 0)
        return get_bool(ctx, key, v, &s->no_proc);
    if (strcmp(key, "noNested") == 0)
        return get_bool(ctx, key, v, &s->no_nested);
    if (strcmp(key, "toolchains") == 0)
        return get_bool(ctx, key, v, &s->toolchains);
    if (strcmp(key, "tty") == 0)
        return get_bool(ctx, key, v, &s->tty);
    if (strcmp(key, "timeout") == 0) {
        cordon_policy *scratch = cordon_policy_new();
        cordon_error e = {0};
        int r = json_is_number(v) && json_number_value(v) > 0
                    ? cordon_policy_set_timeout(scratch, json_number_value(v), &e)
                    : -1;
        cordon_policy_free(scratch);
        if (r < 0)
            return fail(ctx, line_of(ctx, at, 2),
                        "key \"sandbox.timeout\" must be a positive number of seconds "
                        "(at most a year), not %s",
                        json_is_number(v) ? "that number" : type_phrase(v));
        s->timeout = json_number_value(v);
        return 0;
    }
    if (strcmp(key, "globDepth") == 0) {
        json_int_t d = json_is_integer(v) ? json_integer_value(v) : 0;
        if (!json_is_integer(v) || (d != -1 && (d < 1 || d > 4096)))
            return fail(ctx, line_of(ctx, at, 2),
                        "key \"sandbox.globDepth\" must be a whole number of levels from 1 "
                        "to 4096 (or -1: unlimited), not %s",
                        json_is_integer(v) ? "that number" : type_phrase(v));
        s->glob_depth = (int)d;
        s->glob_depth_set = true;
        return 0;
    }
    if (strcmp(key, "env") == 0) {
        if (!json_is_object(v))
            return fail(ctx, line_of(ctx, at, 2), "key \"sandbox.env\" must be an object of NAME: \"VALUE\", not %s",
                        type_phrase(v));
        cordon_policy *scratch = cordon_policy_new();
        const char *name;
        json_t *val;
        int r = 0;
        json_object_foreach(v, name, val)
        {
            jsonpos_step vat[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY("env"), JSONPOS_KEY(name)};
            _cleanup_free_ char *shown = printable(name, strlen(name), true);
            if (!json_is_string(val) || strlen(json_string_value(val)) != json_string_length(val)) {
                r = fail(ctx, line_of(ctx, vat, 3), "\"sandbox.env.%s\" must be a string without NUL bytes, not %s",
                         shown, json_is_string(val) ? "that string" : type_phrase(val));
                break;
            }
            _cleanup_free_ char *pair = xasprintf("%s=%s", name, json_string_value(val));
            cordon_error e = {0};
            if (strchr(name, '=') || cordon_policy_set_env(scratch, pair, &e) < 0) {
                r = fail(ctx, line_of(ctx, vat, 3), "\"sandbox.env\": \"%s\" is not a variable name", shown);
                break;
            }
        }
        cordon_policy_free(scratch);
        if (r == 0)
            s->env = v;
        return r;
    }
    if (strcmp(key, "keepEnv") == 0) {
        int r = check_strings(ctx, key, v, keep_env_check);
        s->keep_env = v;
        return r;
    }
    if (strcmp(key, "protect") == 0) {
        int r = check_strings(ctx, key, v, protect_check);
        s->protect = v;
        return r;
    }
    if (strcmp(key, "readOnlyPaths") == 0) {
        int r = check_paths(ctx, key, v, false);
        s->ro_paths = v;
        return r;
    }
    /* deniedGlobs */
    int r = check_paths(ctx, key, v, true);
    s->denied_globs = v;
    return r;
}

static int parse_sandbox(const settings_ctx *ctx, json_t *sandbox, settings *s)
{
    const char *key;
    json_t *v;
    json_object_foreach(sandbox, key, v)
    {
        int r;
        if (strcmp(key, "enabled") == 0) {
            r = get_bool(ctx, key, v, &s->enabled);
        } else if (strcmp(key, "network") == 0) {
            r = get_network(ctx, key, v, &s->network);
        } else if (strcmp(key, "readOnly") == 0) {
            r = get_bool(ctx, key, v, &s->read_only);
        } else if (strcmp(key, "allowedPaths") == 0) {
            r = check_paths(ctx, key, v, false);
            s->allowed = v;
        } else if (strcmp(key, "deniedPaths") == 0) {
            r = check_paths(ctx, key, v, true);
            s->denied = v;
        } else if (strcmp(key, "limitPids") == 0) {
            r = get_limit(ctx, key, CORDON_LIMIT_PIDS, v, s);
        } else if (strcmp(key, "limitMemory") == 0) {
            r = get_limit(ctx, key, CORDON_LIMIT_MEMORY, v, s);
        } else if (strcmp(key, "limitCpu") == 0) {
            r = get_limit(ctx, key, CORDON_LIMIT_CPU, v, s);
        } else if (strcmp(key, "isolation") == 0) {
            r = get_isolation(ctx, key, v, &s->isolation);
        } else if (strcmp(key, "hiddenPaths") == 0) {
            r = check_paths(ctx, key, v, false);
            s->hidden = v;
        } else if (strcmp(key, "strictSettings") == 0) {
            r = get_bool(ctx, key, v, &s->strict);
        } else if (is_net_key(key)) {
            r = parse_net_key(ctx, key, v, s);
        } else if (is_run_key(key)) {
            r = parse_run_key(ctx, key, v, s);
        } else {
            jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key)};
            r = unknown_key(ctx, at, 2, "sandbox.", key, sandbox_keys);
        }
        if (r < 0)
            return -1;
    }
    return 0;
}

/* A harness's "orchestration" section: cordon reads "sandboxed" (whether the harness
 * confines its subagents, which the library reports) and "isolation" (the default backend
 * of `cordon workspace create`); anything else in it is the harness's. */
static int parse_orchestration(const settings_ctx *ctx, json_t *o, settings *s)
{
    jsonpos_step top[] = {JSONPOS_KEY("orchestration")};
    if (!json_is_object(o))
        return fail(ctx, line_of(ctx, top, 1), "key \"orchestration\" must be an object, not %s", type_phrase(o));
    json_t *v = json_object_get(o, "sandboxed");
    if (v) {
        jsonpos_step at[] = {JSONPOS_KEY("orchestration"), JSONPOS_KEY("sandboxed")};
        if (!json_is_boolean(v))
            return fail(ctx, line_of(ctx, at, 2), "key \"orchestration.sandboxed\" must be true or false, not %s",
                        type_phrase(v));
        s->sandboxed = json_is_true(v) ? 1 : 0;
    }
    v = json_object_get(o, "isolation");
    if (v) {
        jsonpos_step at[] = {JSONPOS_KEY("orchestration"), JSONPOS_KEY("isolation")};
        const char *str = json_string_value(v);
        if (!str || (strcmp(str, "worktree") != 0 && strcmp(str, "overlayfs") != 0 && strcmp(str, "none") != 0)) {
            _cleanup_free_ char *shown = str ? printable(str, json_string_length(v), true) : NULL;
            if (str)
                return fail(ctx, line_of(ctx, at, 2),
                            "key \"orchestration.isolation\" is \"%s\"; it must be \"worktree\", \"overlayfs\" or "
                            "\"none\"",
                            shown);
            return fail(ctx, line_of(ctx, at, 2),
                        "key \"orchestration.isolation\" must be \"worktree\", \"overlayfs\" or \"none\", not %s",
                        type_phrase(v));
        }
        s->orch_isolation = str;
    }
    return 0;
}

/* "FILE:LINE: unknown top-level key "K" (did you mean "sandbox"?)": what the warning and
 * strictSettings's error say about an unknown top-level key. */
static char *top_key_message(const settings_ctx *ctx, const char *key)
{
    _cleanup_free_ char *shown = printable(key, strlen(key), true);
    jsonpos_step at[] = {JSONPOS_KEY(key)};
    int line = line_of(ctx, at, 1);
    _cleanup_free_ char *where = line > 0 ? xasprintf("%s:%d", ctx->file, line) : xstrdup(ctx->file);
    const char *near = settings_closest_top_key(key);
    if (near)
        return xasprintf("%s: unknown top-level key \"%s\" (did you mean \"%s\"?)", where, shown, near);
    return xasprintf("%s: unknown top-level key \"%s\" (cordon reads \"sandbox\" and \"orchestration\")", where, shown);
}

static int parse_root(const settings_ctx *ctx, json_t *root, settings *s)
{
    if (!json_is_object(root))
        return fail(ctx, line_of(ctx, NULL, 0), "the top level must be an object like {\"sandbox\": {...}}, not %s",
                    type_phrase(root));
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        jsonpos_step at[] = {JSONPOS_KEY(key)};
        if (strcmp(key, "orchestration") == 0) {
            if (parse_orchestration(ctx, v, s) < 0)
                return -1;
            continue;
        }
        if (strcmp(key, "sandbox") != 0) {
            /* a harness's own settings file holds much else; anything else is said */
            if (!settings_is_top_key(key))
                strv_push(&s->unknown, (char *)key);
            continue;
        }
        if (!json_is_object(v))
            return fail(ctx, line_of(ctx, at, 1), "key \"sandbox\" must be an object, not %s", type_phrase(v));
        if (parse_sandbox(ctx, v, s) < 0)
            return -1;
    }
    return 0;
}

static void add_rules(const settings_ctx *ctx, struct cordon_policy *p, const char *key, const json_t *array,
                      cordon_access access)
{
    if (!array)
        return;
    size_t n = json_array_size(array);
    _cleanup_free_ int *lines = xcalloc(n, sizeof *lines);
    jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY(key)};
    jsonpos_array_lines(ctx->text, ctx->len, at, 2, lines, n);
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(array, i));
        if (access == CORDON_ACCESS_NONE && is_glob(s))
            policy_add_glob(p, s, ORIGIN_SETTINGS, ctx->file, lines[i], true);
        else
            policy_add_rule(p, s, access, ORIGIN_SETTINGS, ctx->file, lines[i], true);
    }
}

/* hiddenPaths: like --hide, in settings syntax (~, <workspace>, relative). */
static void add_hides(const settings_ctx *ctx, struct cordon_policy *p, const json_t *array)
{
    if (!array)
        return;
    size_t n = json_array_size(array);
    _cleanup_free_ int *lines = xcalloc(n, sizeof *lines);
    jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY("hiddenPaths")};
    jsonpos_array_lines(ctx->text, ctx->len, at, 2, lines, n);
    for (size_t i = 0; i < n; i++)
        policy_add_hide(p, json_string_value(json_array_get(array, i)), ORIGIN_SETTINGS, ctx->file, lines[i], true);
}

/* Cannot fail: checked above.  A setter's choice (a flag) wins over the scalars; lists add. */
static void apply_run(const settings_ctx *ctx, settings *s, cordon_policy *p)
{
    unsigned set = p->scalars_set;
    if (s->base >= 0 && !(set & POLICY_SET_BASE))
        p->base = (cordon_base)s->base;
    if (!(set & POLICY_SET_WORKSPACE)) {
        if (s->workspace) {
            free(p->workspace);
            p->workspace = steal_pointer(&s->workspace);
            p->no_workspace = false;
        }
        if (s->no_workspace >= 0)
            p->no_workspace = s->no_workspace != 0;
    }
    if (s->data_root && !(set & POLICY_SET_DATA_ROOT)) {
        free(p->data_root);
        p->data_root = steal_pointer(&s->data_root);
    }
    if (s->chdir && !(set & POLICY_SET_CWD)) {
        free(p->cwd);
        p->cwd = steal_pointer(&s->chdir);
    }
    if (s->timeout > 0 && !(set & POLICY_SET_TIMEOUT))
        p->timeout = s->timeout;
    if (s->clear_env >= 0 && !(set & POLICY_SET_CLEAR_ENV))
        p->clear_env = s->clear_env != 0;
    if (s->no_proc >= 0 && !(set & POLICY_SET_PROC))
        p->no_proc = s->no_proc != 0;
    if (s->no_nested >= 0 && !(set & POLICY_SET_NO_NESTED))
        p->no_nested = s->no_nested != 0;
    if (s->toolchains >= 0 && !(set & POLICY_SET_TOOLCHAINS))
        p->toolchains = s->toolchains != 0;
    if (s->glob_depth_set && !(set & POLICY_SET_GLOB_DEPTH))
        p->glob_depth = s->glob_depth;
    if (s->status_json) {
        free(p->settings_status_json);
        p->settings_status_json = xstrdup(s->status_json);
    }
    if (s->tty >= 0)
        p->settings_tty = s->tty;
    const char *name;
    json_t *val;
    if (s->env)
        json_object_foreach(s->env, name, val) policy_add_settings_env(p, false, name, json_string_value(val));
    size_t i;
    json_t *e;
    if (s->keep_env)
        json_array_foreach(s->keep_env, i, e) policy_add_settings_env(p, true, json_string_value(e), NULL);
    if (s->protect)
        json_array_foreach(s->protect, i, e) cordon_policy_protect(p, json_string_value(e), NULL);
    add_rules(ctx, p, "readOnlyPaths", s->ro_paths, CORDON_ACCESS_READ);
    add_rules(ctx, p, "deniedGlobs", s->denied_globs, CORDON_ACCESS_NONE);
}

/* Cannot fail: everything was checked by parse_root(). */
static void apply(const settings_ctx *ctx, settings *s, struct cordon_policy *p)
{
    if (s->enabled >= 0) {
        p->settings_enabled = s->enabled;
        jsonpos_step at[] = {JSONPOS_KEY("sandbox"), JSONPOS_KEY("enabled")};
        int line = line_of(ctx, at, 2);
        free(p->settings_enabled_where);
        p->settings_enabled_where = line > 0 ? xasprintf("%s:%d", ctx->file, line) : xstrdup(ctx->file);
    }
    if (s->sandboxed >= 0)
        p->settings_sandboxed = s->sandboxed;
    if (s->orch_isolation) {
        free(p->orchestration_isolation);
        p->orchestration_isolation = xstrdup(s->orch_isolation);
    }
    /* An explicit setter (a command-line flag) wins over any settings file. */
    if (s->network >= 0 && !p->network_set)
        p->network = (cordon_network)s->network;
    if (s->read_only >= 0 && !p->read_only_set)
        p->read_only = s->read_only != 0;
    for (int i = 0; i < LIMITS_N; i++)
        if (s->limit[i] && !(p->limits_set & (1u << i)))
            p->limits.v[i] = s->limit[i];
    if (s->isolation >= 0 && !p->isolation_set)
        p->isolation = (cordon_isolation)s->isolation;
    add_rules(ctx, p, "allowedPaths", s->allowed, CORDON_ACCESS_WRITE);
    add_rules(ctx, p, "deniedPaths", s->denied, CORDON_ACCESS_NONE);
    add_hides(ctx, p, s->hidden);
    apply_net(s, p);
    apply_run(ctx, s, p);
}

int settings_load(struct cordon_policy *p, const char *file, cordon_error *err)
{
    if (!file || !*file)
        return err_set(err, CORDON_STAGE_SETTINGS, 0, "settings file: no file name given");
    _cleanup_free_ char *text = NULL;
    size_t len = 0;
    if (read_settings(file, &text, &len, err) < 0)
        return -1;
    return settings_load_buffer(p, file, text, len, err);
}

int cordon_policy_set_strict_settings(cordon_policy *p, bool strict, cordon_error *err)
{
    if (!p)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "no policy given (NULL)");
    /* a settings file may have asked for it already: the setter turns it on, never off */
    if (!strict)
        return 0;
    p->strict_settings = true;
    if (p->settings_unknown.n > 0)
        return err_opt(err, CORDON_STAGE_SETTINGS, 0, "strictSettings",
                       "strictSettings refuses a settings file read before it: %s", p->settings_unknown.v[0]);
    return 0;
}

/* The public entry point (policy.c holds the other setters; the settings file calls them,
 * so this one lives here, with the loader it calls). */
int cordon_policy_load_settings(cordon_policy *p, const char *file, cordon_error *err)
{
    if (!p)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "no policy given (NULL)");
    return settings_load(p, file, err);
}

int settings_load_buffer(struct cordon_policy *p, const char *file, const char *text, size_t len, cordon_error *err)
{
    if (!file || !*file)
        file = "(settings)";
    if (len > SETTINGS_MAX_BYTES)
        return err_set(err, CORDON_STAGE_SETTINGS, 0,
                       "settings file %s: larger than the 1 MiB limit; refusing to read it", file);
    /* JSON_ALLOW_NUL lets check_path() name the key holding a "\u0000" instead of
     * jansson reporting a bare syntax error; keys with NUL are still refused by jansson. */
    json_error_t jerr;
    _cleanup_json_ json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root)
        return malformed(file, &jerr, err);
    settings_ctx ctx = {.file = file, .text = text, .len = len, .err = err};
    settings s = {.enabled = -1,
                  .network = -1,
                  .read_only = -1,
                  .isolation = -1,
                  .sandboxed = -1,
                  .allow_unix = -1,
                  .base = -1,
                  .no_workspace = -1,
                  .clear_env = -1,
                  .no_proc = -1,
                  .no_nested = -1,
                  .toolchains = -1,
                  .tty = -1,
                  .strict = -1};
    int r = parse_root(&ctx, root, &s);
    if (r == 0 && s.unknown.n > 0 && (p->strict_settings || s.strict == 1)) {
        _cleanup_free_ char *m = top_key_message(&ctx, s.unknown.v[0]);
        r = err_opt(err, CORDON_STAGE_SETTINGS, 0, "strictSettings",
                    "%s: strictSettings refuses a top-level key that neither cordon nor the harnesses it shares "
                    "settings with know; fix the key or remove it",
                    m);
    }
    if (r == 0) {
        apply(&ctx, &s, p);
        /* strictSettings: true turns it on; nothing turns it off again (fail closed) */
        if (s.strict == 1)
            p->strict_settings = true;
        for (size_t i = 0; i < s.unknown.n; i++)
            strv_push(&p->settings_unknown, top_key_message(&ctx, s.unknown.v[i]));
    }
    free(s.unknown.v); /* the keys are the document's */
    free(s.workspace);
    free(s.data_root);
    free(s.chdir);
    return r;
}
