// SPDX-License-Identifier: Apache-2.0
/* The JSON values of the helper's command line, read as Codex's serde definitions read
 * them: tagged enums by "type" (and "kind" for special paths), unknown fields ignored
 * except where Codex denies them (the older untagged profile shape), "none" an alias of
 * "deny", "current_working_directory" an alias of "project_roots".  Anything else is a
 * usage error (exit 2) that names the key and what is accepted. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "codex/codex.h"
#include "util/err.h"
#include "util/strv.h"

#define USAGE(err, ...) err_set((err), CORDON_STAGE_USAGE, 0, __VA_ARGS__)

void cx_profile_free(cx_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_entries; i++) {
        free(p->entries[i].path);
        free(p->entries[i].subpath);
    }
    free(p->entries);
    *p = (cx_profile){0};
}

void cx_netctx_free(cx_netctx *n)
{
    if (!n)
        return;
    free(n->ports);
    strv_free(&n->unix_sockets);
    *n = (cx_netctx){0};
}

static cx_entry *add_entry(cx_profile *p, cx_path_kind kind, cx_access access)
{
    grow(&p->entries, &p->cap_entries, p->n_entries + 1, sizeof *p->entries);
    cx_entry *e = &p->entries[p->n_entries++];
    *e = (cx_entry){.kind = kind, .access = access};
    return e;
}

static void add_special(cx_profile *p, cx_special sp, cx_access access)
{
    add_entry(p, CX_SPECIAL, access)->special = sp;
}

static void add_path(cx_profile *p, const char *path, cx_access access)
{
    add_entry(p, CX_PATH, access)->path = xstrdup(path);
}

/* Parse `text` into an object; `what` names the option. */
static json_t *load(const char *text, const char *what, cordon_error *err)
{
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        USAGE(err, "%s: invalid JSON at line %d, column %d: %s", what, je.line, je.column, je.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        USAGE(err, "%s: the value must be a JSON object ({\"type\": ...})", what);
        return NULL;
    }
    return root;
}

/* A string member, or NULL with err filled (`required`), or NULL without error (absent
 * or null when optional).  Embedded NUL bytes are refused: no path can hold one. */
static const char *get_string(json_t *obj, const char *key, const char *where, bool required, bool *bad,
                              cordon_error *err)
{
    json_t *v = json_object_get(obj, key);
    *bad = false;
    if (!v || json_is_null(v)) {
        if (required) {
            *bad = true;
            USAGE(err, "%s: missing field \"%s\"", where, key);
        }
        return NULL;
    }
    if (!json_is_string(v)) {
        *bad = true;
        USAGE(err, "%s.%s: expected a string", where, key);
        return NULL;
    }
    if (strlen(json_string_value(v)) != json_string_length(v)) {
        *bad = true;
        USAGE(err, "%s.%s: the string holds a NUL character", where, key);
        return NULL;
    }
    return json_string_value(v);
}

/* An optional boolean member (absent: `dflt`); -1 with err on a wrong type. */
static int get_bool(json_t *obj, const char *key, const char *where, bool dflt, bool *out, cordon_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return 0;
    }
    if (!json_is_boolean(v))
        return USAGE(err, "%s.%s: expected true or false", where, key);
    *out = json_is_true(v);
    return 0;
}

static int check_absolute(const char *path, const char *where, cordon_error *err)
{
    if (!*path)
        return USAGE(err, "%s: an empty path; give an absolute path", where);
    if (path[0] != '/')
        return USAGE(err, "%s: \"%s\" is not an absolute path", where, path);
    return 0;
}

static int parse_network_policy(json_t *obj, const char *key, const char *where, bool *enabled, cordon_error *err)
{
    bool bad;
    const char *s = get_string(obj, key, where, true, &bad, err);
    if (bad)
        return -1;
    if (strcmp(s, "restricted") == 0)
        *enabled = false;
    else if (strcmp(s, "enabled") == 0)
        *enabled = true;
    else
        return USAGE(err, "%s.%s: unknown value \"%s\"; expected \"restricted\" or \"enabled\"", where, key, s);
    return 0;
}

static int parse_access(json_t *entry, const char *where, cx_access *out, cordon_error *err)
{
    bool bad;
    const char *s = get_string(entry, "access", where, true, &bad, err);
    if (bad)
        return -1;
    if (strcmp(s, "read") == 0)
        *out = CX_READ;
    else if (strcmp(s, "write") == 0)
        *out = CX_WRITE;
    else if (strcmp(s, "deny") == 0 || strcmp(s, "none") == 0)
        *out = CX_DENY;
    else
        return USAGE(err, "%s.access: unknown access \"%s\"; expected \"read\", \"write\", \"deny\" or \"none\"", where,
                     s);
    return 0;
}

static int parse_special(json_t *value, const char *where, cx_entry *e, cordon_error *err)
{
    if (!json_is_object(value))
        return USAGE(err, "%s: expected an object {\"kind\": ...}", where);
    bool bad;
    const char *kind = get_string(value, "kind", where, true, &bad, err);
    if (bad)
        return -1;
    static const struct {
        const char *name;
        cx_special sp;
    } kinds[] = {
        {"root", CX_SP_ROOT},
        {"minimal", CX_SP_MINIMAL},
        {"project_roots", CX_SP_PROJECT_ROOTS},
        {"current_working_directory", CX_SP_PROJECT_ROOTS},
        {"tmpdir", CX_SP_TMPDIR},
        {"slash_tmp", CX_SP_SLASH_TMP},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        if (strcmp(kind, kinds[i].name) != 0)
            continue;
        e->special = kinds[i].sp;
        if (e->special == CX_SP_PROJECT_ROOTS) {
            const char *sub = get_string(value, "subpath", where, false, &bad, err);
            if (bad)
                return -1;
            e->subpath = sub ? xstrdup(sub) : NULL;
        }
        return 0;
    }
    return USAGE(err,
                 "%s.kind: unknown special path \"%s\"; expected root, minimal, project_roots, "
                 "current_working_directory, tmpdir or slash_tmp",
                 where, kind);
}

static int parse_entry(json_t *entry, const char *where, cx_profile *p, cordon_error *err)
{
    if (!json_is_object(entry))
        return USAGE(err, "%s: expected an object {\"path\": ..., \"access\": ...}", where);
    cx_access access = CX_READ;
    if (parse_access(entry, where, &access, err) < 0)
        return -1;
    bool bad;
    const char *mpb = get_string(entry, "missing_path_behavior", where, false, &bad, err);
    if (bad)
        return -1;
    if (mpb && strcmp(mpb, "skip") != 0)
        return USAGE(err, "%s.missing_path_behavior: unknown value \"%s\"; the only one is \"skip\"", where, mpb);
    json_t *path = json_object_get(entry, "path");
    if (!path)
        return USAGE(err, "%s: missing field \"path\"", where);
    char pwhere[160];
    snprintf(pwhere, sizeof pwhere, "%s.path", where);
    if (!json_is_object(path))
        return USAGE(err, "%s: expected an object {\"type\": \"path\"|\"glob_pattern\"|\"special\", ...}", pwhere);
    const char *type = get_string(path, "type", pwhere, true, &bad, err);
    if (bad)
        return -1;
    cx_entry *e;
    if (strcmp(type, "path") == 0) {
        const char *s = get_string(path, "path", pwhere, true, &bad, err);
        if (bad || check_absolute(s, pwhere, err) < 0)
            return -1;
        e = add_entry(p, CX_PATH, access);
        e->path = xstrdup(s);
    } else if (strcmp(type, "glob_pattern") == 0) {
        const char *s = get_string(path, "pattern", pwhere, true, &bad, err);
        if (bad)
            return -1;
        e = add_entry(p, CX_GLOB, access);
        e->path = xstrdup(s);
    } else if (strcmp(type, "special") == 0) {
        json_t *value = json_object_get(path, "value");
        char vwhere[192];
        snprintf(vwhere, sizeof vwhere, "%s.value", pwhere);
        if (!value)
            return USAGE(err, "%s: missing field \"value\"", pwhere);
        cx_entry tmp = {.kind = CX_SPECIAL, .access = access};
        if (parse_special(value, vwhere, &tmp, err) < 0)
            return -1;
        e = add_entry(p, CX_SPECIAL, access);
        *e = tmp;
    } else {
        return USAGE(err, "%s.type: unknown path type \"%s\"; expected \"path\", \"glob_pattern\" or \"special\"",
                     pwhere, type);
    }
    e->skip_missing = mpb != NULL;
    return 0;
}

static int parse_entries(json_t *arr, const char *where, cx_profile *p, cordon_error *err)
{
    if (!json_is_array(arr))
        return USAGE(err, "%s: expected an array of entries", where);
    size_t i;
    json_t *entry;
    json_array_foreach(arr, i, entry)
    {
        char ew[128];
        snprintf(ew, sizeof ew, "%s[%zu]", where, i);
        if (parse_entry(entry, ew, p, err) < 0)
            return -1;
    }
    return 0;
}

static int parse_depth(json_t *obj, const char *where, int *out, cordon_error *err)
{
    json_t *v = json_object_get(obj, "glob_scan_max_depth");
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return USAGE(err, "%s.glob_scan_max_depth: expected a positive integer", where);
    json_int_t d = json_integer_value(v);
    *out = d > CORDON_GLOB_MAX_DEPTH ? CORDON_GLOB_MAX_DEPTH : (int)d;
    return 0;
}

/* Refuse members other than `allowed` (serde's deny_unknown_fields); `hint` ends the
 * message. */
static int deny_unknown(json_t *obj, const char *where, const char *const *allowed, const char *hint, cordon_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        bool ok = false;
        for (size_t i = 0; allowed[i]; i++)
            ok |= strcmp(key, allowed[i]) == 0;
        if (!ok)
            return USAGE(err, "%s: unknown field \"%s\"%s", where, key, hint);
    }
    return 0;
}

static int parse_path_list(json_t *obj, const char *key, const char *where, cx_access access, cx_profile *p,
                           cordon_error *err)
{
    json_t *arr = json_object_get(obj, key);
    if (!arr || json_is_null(arr))
        return 0;
    if (!json_is_array(arr))
        return USAGE(err, "%s.%s: expected an array of absolute paths", where, key);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        char w[128];
        snprintf(w, sizeof w, "%s.%s[%zu]", where, key, i);
        if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
            return USAGE(err, "%s: expected a string", w);
        if (check_absolute(json_string_value(v), w, err) < 0)
            return -1;
        add_path(p, json_string_value(v), access);
    }
    return 0;
}

/* The untagged shape written before profiles said who enforces them. */
static int parse_untagged(json_t *root, cx_profile *p, cordon_error *err)
{
    static const char *const top[] = {"network", "file_system", NULL};
    if (deny_unknown(root, "--permission-profile", top,
                     " (a profile is {\"type\": \"managed\"|\"disabled\"|\"external\", ...}, or the older "
                     "{\"network\": ..., \"file_system\": ...})",
                     err) < 0)
        return -1;
    *p = (cx_profile){.kind = CX_MANAGED, .fs_restricted = true};
    json_t *net = json_object_get(root, "network");
    if (net && !json_is_null(net)) {
        if (!json_is_object(net))
            return USAGE(err, "--permission-profile.network: expected an object {\"enabled\": true|false}");
        if (get_bool(net, "enabled", "--permission-profile.network", false, &p->network_enabled, err) < 0)
            return -1;
    }
    json_t *fs = json_object_get(root, "file_system");
    if (!fs || json_is_null(fs))
        return 0;
    const char *w = "--permission-profile.file_system";
    if (!json_is_object(fs))
        return USAGE(err, "%s: expected an object", w);
    static const char *const canonical[] = {"entries", "glob_scan_max_depth", NULL};
    static const char *const rw[] = {"read", "write", NULL};
    cordon_error ignored = {0};
    if (deny_unknown(fs, w, canonical, "", &ignored) == 0) {
        json_t *entries = json_object_get(fs, "entries");
        if (entries && parse_entries(entries, "--permission-profile.file_system.entries", p, err) < 0)
            return -1;
        return parse_depth(fs, w, &p->glob_depth, err);
    }
    if (deny_unknown(fs, w, rw, " (expected {\"entries\": [...]} or {\"read\": [...], \"write\": [...]})", err) < 0)
        return -1;
    if (parse_path_list(fs, "read", w, CX_READ, p, err) < 0)
        return -1;
    return parse_path_list(fs, "write", w, CX_WRITE, p, err);
}

int cx_profile_parse(const char *json, cx_profile *out, cordon_error *err)
{
    *out = (cx_profile){0};
    json_t *root = load(json, "--permission-profile", err);
    if (!root)
        return -1;
    int ret = -1;
    const char *w = "--permission-profile";
    json_t *type = json_object_get(root, "type");
    if (!type) {
        ret = parse_untagged(root, out, err);
        goto out;
    }
    if (!json_is_string(type)) {
        USAGE(err, "%s.type: expected a string", w);
        goto out;
    }
    const char *t = json_string_value(type);
    if (strcmp(t, "disabled") == 0) {
        out->kind = CX_DISABLED;
        out->network_enabled = true;
        ret = 0;
    } else if (strcmp(t, "external") == 0) {
        out->kind = CX_EXTERNAL;
        ret = parse_network_policy(root, "network", w, &out->network_enabled, err);
    } else if (strcmp(t, "managed") == 0) {
        out->kind = CX_MANAGED;
        json_t *fs = json_object_get(root, "file_system");
        const char *fw = "--permission-profile.file_system";
        if (!fs) {
            USAGE(err, "%s: missing field \"file_system\"", w);
            goto out;
        }
        if (!json_is_object(fs)) {
            USAGE(err, "%s: expected an object {\"type\": \"restricted\"|\"unrestricted\", ...}", fw);
            goto out;
        }
        bool bad;
        const char *ft = get_string(fs, "type", fw, true, &bad, err);
        if (bad)
            goto out;
        if (strcmp(ft, "restricted") == 0) {
            out->fs_restricted = true;
            json_t *entries = json_object_get(fs, "entries");
            if (!entries) {
                USAGE(err, "%s: missing field \"entries\"", fw);
                goto out;
            }
            if (parse_entries(entries, "--permission-profile.file_system.entries", out, err) < 0 ||
                parse_depth(fs, fw, &out->glob_depth, err) < 0)
                goto out;
        } else if (strcmp(ft, "unrestricted") != 0) {
            USAGE(err, "%s.type: unknown file system type \"%s\"; expected \"restricted\" or \"unrestricted\"", fw, ft);
            goto out;
        }
        ret = parse_network_policy(root, "network", w, &out->network_enabled, err);
    } else {
        USAGE(err, "%s.type: unknown profile type \"%s\"; expected \"managed\", \"disabled\" or \"external\"", w, t);
    }
out:
    json_decref(root);
    if (ret < 0)
        cx_profile_free(out);
    return ret;
}

/* ReadOnlyAccess of the legacy policy: the whole disk (default), or chosen roots. */
static int legacy_read_access(json_t *root, const char *key, const char *where, cx_profile *p, cordon_error *err)
{
    json_t *a = json_object_get(root, key);
    if (!a || json_is_null(a)) {
        add_special(p, CX_SP_ROOT, CX_READ);
        return 0;
    }
    char w[96];
    snprintf(w, sizeof w, "%s.%s", where, key);
    if (!json_is_object(a))
        return USAGE(err, "%s: expected an object {\"type\": \"full-access\"|\"restricted\", ...}", w);
    bool bad;
    const char *t = get_string(a, "type", w, true, &bad, err);
    if (bad)
        return -1;
    if (strcmp(t, "full-access") == 0) {
        add_special(p, CX_SP_ROOT, CX_READ);
        return 0;
    }
    if (strcmp(t, "restricted") != 0)
        return USAGE(err, "%s.type: unknown value \"%s\"; expected \"full-access\" or \"restricted\"", w, t);
    bool platform = true;
    if (get_bool(a, "include_platform_defaults", w, true, &platform, err) < 0)
        return -1;
    if (platform)
        add_special(p, CX_SP_MINIMAL, CX_READ);
    return parse_path_list(a, "readable_roots", w, CX_READ, p, err);
}

int cx_legacy_policy_parse(const char *json, cx_profile *out, cordon_error *err)
{
    *out = (cx_profile){0};
    const char *w = "--sandbox-policy";
    json_t *root = load(json, w, err);
    if (!root)
        return -1;
    int ret = -1;
    bool bad;
    const char *t = get_string(root, "type", w, true, &bad, err);
    if (bad)
        goto out;
    if (strcmp(t, "danger-full-access") == 0) {
        out->kind = CX_DISABLED;
        out->network_enabled = true;
        ret = 0;
    } else if (strcmp(t, "external-sandbox") == 0) {
        out->kind = CX_EXTERNAL;
        const char *na = get_string(root, "network_access", w, false, &bad, err);
        if (bad)
            goto out;
        if (na && strcmp(na, "enabled") != 0 && strcmp(na, "restricted") != 0) {
            USAGE(err, "%s.network_access: unknown value \"%s\"; expected \"restricted\" or \"enabled\"", w, na);
            goto out;
        }
        out->network_enabled = na && strcmp(na, "enabled") == 0;
        ret = 0;
    } else if (strcmp(t, "read-only") == 0) {
        *out = (cx_profile){.kind = CX_MANAGED, .fs_restricted = true};
        if (get_bool(root, "network_access", w, false, &out->network_enabled, err) < 0 ||
            legacy_read_access(root, "access", w, out, err) < 0)
            goto out;
        ret = 0;
    } else if (strcmp(t, "workspace-write") == 0) {
        *out = (cx_profile){.kind = CX_MANAGED, .fs_restricted = true};
        bool no_tmpdir = false, no_slash_tmp = false;
        if (get_bool(root, "network_access", w, false, &out->network_enabled, err) < 0 ||
            get_bool(root, "exclude_tmpdir_env_var", w, false, &no_tmpdir, err) < 0 ||
            get_bool(root, "exclude_slash_tmp", w, false, &no_slash_tmp, err) < 0 ||
            legacy_read_access(root, "read_only_access", w, out, err) < 0)
            goto out;
        add_special(out, CX_SP_PROJECT_ROOTS, CX_WRITE);
        if (!no_slash_tmp)
            add_special(out, CX_SP_SLASH_TMP, CX_WRITE);
        if (!no_tmpdir)
            add_special(out, CX_SP_TMPDIR, CX_WRITE);
        if (parse_path_list(root, "writable_roots", w, CX_WRITE, out, err) < 0)
            goto out;
        ret = 0;
    } else {
        USAGE(err,
              "%s.type: unknown policy type \"%s\"; expected \"read-only\", \"workspace-write\", "
              "\"danger-full-access\" or \"external-sandbox\"",
              w, t);
    }
out:
    json_decref(root);
    if (ret < 0)
        cx_profile_free(out);
    return ret;
}

int cx_netctx_parse(const char *json, cx_netctx *out, cordon_error *err)
{
    *out = (cx_netctx){0};
    const char *w = "--managed-network";
    json_t *root = load(json, w, err);
    if (!root)
        return -1;
    int ret = -1;
    json_t *ports = json_object_get(root, "loopbackPorts");
    if (ports && !json_is_null(ports)) {
        if (!json_is_array(ports)) {
            USAGE(err, "%s.loopbackPorts: expected an array of port numbers", w);
            goto out;
        }
        out->ports = xcalloc(json_array_size(ports) + 1, sizeof *out->ports);
        size_t i;
        json_t *v;
        json_array_foreach(ports, i, v)
        {
            if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 65535) {
                USAGE(err, "%s.loopbackPorts[%zu]: expected a port number (0 to 65535)", w, i);
                goto out;
            }
            out->ports[out->n_ports++] = (unsigned)json_integer_value(v);
        }
    }
    json_t *socks = json_object_get(root, "allowUnixSockets");
    if (socks && !json_is_null(socks)) {
        if (!json_is_array(socks)) {
            USAGE(err, "%s.allowUnixSockets: expected an array of paths", w);
            goto out;
        }
        size_t i;
        json_t *v;
        json_array_foreach(socks, i, v)
        {
            if (!json_is_string(v)) {
                USAGE(err, "%s.allowUnixSockets[%zu]: expected a string", w, i);
                goto out;
            }
            strv_push(&out->unix_sockets, xstrdup(json_string_value(v)));
        }
    }
    if (get_bool(root, "allowLocalBinding", w, false, &out->allow_local_binding, err) < 0 ||
        get_bool(root, "dangerouslyAllowAllUnixSockets", w, false, &out->allow_all_unix_sockets, err) < 0)
        goto out;
    ret = 0;
out:
    json_decref(root);
    if (ret < 0)
        cx_netctx_free(out);
    return ret;
}
