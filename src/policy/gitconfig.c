// SPDX-License-Identifier: Apache-2.0
#include "policy/gitconfig.h"

#include <ctype.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/strv.h"

#define MAX_DEPTH 16
#define MAX_FILE  (1 << 20)

typedef struct parser {
    const char *p, *end;
    char section[256];    /* lower case; "includeif" */
    char subsection[512]; /* as written */
} parser;

static int peek(const parser *ps)
{
    return ps->p < ps->end ? (unsigned char)*ps->p : -1;
}

static void skip_line(parser *ps)
{
    while (ps->p < ps->end && *ps->p != '\n')
        ps->p++;
    if (ps->p < ps->end)
        ps->p++;
}

static void skip_blank(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r'))
        ps->p++;
}

/* "[section]", "[section \"sub\"]" or the old "[section.sub]". false on a malformed one
 * (the rest of the line is skipped and the section is forgotten). */
static bool parse_header(parser *ps)
{
    ps->p++; /* '[' */
    size_t n = 0;
    ps->section[0] = ps->subsection[0] = '\0';
    while (ps->p < ps->end && (isalnum((unsigned char)*ps->p) || *ps->p == '-' || *ps->p == '.')) {
        if (n + 1 < sizeof ps->section)
            ps->section[n++] = (char)tolower((unsigned char)*ps->p);
        ps->p++;
    }
    ps->section[n] = '\0';
    char *dot = strchr(ps->section, '.');
    if (dot) { /* [section.subsection]: the subsection is lower case */
        *dot = '\0';
        strncpy(ps->subsection, dot + 1, sizeof ps->subsection - 1);
        ps->subsection[sizeof ps->subsection - 1] = '\0';
    }
    skip_blank(ps);
    if (peek(ps) == '"') {
        ps->p++;
        size_t k = 0;
        while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\n') {
            char c = *ps->p++;
            if (c == '\\' && ps->p < ps->end && *ps->p != '\n')
                c = *ps->p++;
            if (k + 1 < sizeof ps->subsection)
                ps->subsection[k++] = c;
        }
        ps->subsection[k] = '\0';
        if (peek(ps) != '"') {
            ps->section[0] = '\0';
            skip_line(ps);
            return false;
        }
        ps->p++;
    }
    skip_blank(ps);
    if (peek(ps) != ']') {
        ps->section[0] = '\0';
        skip_line(ps);
        return false;
    }
    ps->p++;
    return true; /* a variable may follow on the same line */
}

/* A value, after '=': quotes, escapes, comments, continuation lines (git-config(1)). */
static void parse_value(parser *ps, char *out, size_t size)
{
    size_t n = 0, keep = 0; /* keep: length without trailing blanks outside quotes */
    bool quoted = false;
    skip_blank(ps);
    while (ps->p < ps->end) {
        char c = *ps->p++;
        if (c == '\n') {
            if (quoted) /* an unterminated quote: git fails; take what there is */
                break;
            break;
        }
        if (!quoted && (c == '#' || c == ';')) {
            skip_line(ps);
            break;
        }
        if (c == '"') {
            quoted = !quoted;
            keep = n;
            continue;
        }
        if (c == '\\') {
            if (ps->p >= ps->end)
                break;
            char e = *ps->p++;
            if (e == '\n')
                continue; /* continuation */
            if (e == '\r' && ps->p < ps->end && *ps->p == '\n') {
                ps->p++;
                continue;
            }
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'b' ? '\b' : e;
            if (n + 1 < size)
                out[n++] = c;
            keep = n;
            continue;
        }
        if (n + 1 < size)
            out[n++] = c;
        if (quoted || (c != ' ' && c != '\t' && c != '\r'))
            keep = n;
    }
    out[keep < size ? keep : size - 1] = '\0';
}

static char *expand(const gitconfig_ctx *ctx, const char *base, const char *v)
{
    if (!v[0])
        return NULL;
    if (v[0] == '~' && (v[1] == '/' || v[1] == '\0')) {
        if (!ctx->home)
            return NULL;
        char *j = path_join(ctx->home, v[1] ? v + 2 : "");
        char *n = path_normalize(j);
        free(j);
        return n;
    }
    if (strncmp(v, "%(prefix)/", 10) == 0)
        return NULL; /* git's installation prefix: not a writable path */
    if (v[0] == '/')
        return path_normalize(v);
    if (!base)
        return NULL;
    char *j = path_join(base, v);
    char *n = path_normalize(j);
    free(j);
    return n;
}

static void push_unique(strv *out, char *owned)
{
    if (!owned)
        return;
    if (strv_contains(out, owned)) {
        free(owned);
        return;
    }
    strv_push(out, owned);
}

static bool is_bool_word(const char *v)
{
    static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "1", "0", ""};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcasecmp(v, words[i]) == 0)
            return true;
    return false;
}

static char *dirname_of(const char *file)
{
    const char *slash = strrchr(file, '/');
    if (!slash)
        return NULL;
    if (slash == file)
        return xstrdup("/");
    return xstrndup(file, (size_t)(slash - file));
}

/* A file's text, when it is a regular file of at most MAX_FILE bytes; NULL otherwise. */
static char *read_config(const gitconfig_ctx *ctx, const char *file, size_t *len)
{
    _cleanup_fd_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (ctx->unread && (errno == EACCES || errno == EPERM) && !strv_contains(ctx->unread, file))
            strv_push(ctx->unread, xstrdup(file));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    if (st.st_size > MAX_FILE) {
        /* git reads it all: what it names past our limit would go unprotected */
        if (ctx->too_large && !strv_contains(ctx->too_large, file))
            strv_push(ctx->too_large, xstrdup(file));
        return NULL;
    }
    char *buf = xmalloc((size_t)st.st_size + 1);
    ssize_t n = read(fd, buf, (size_t)st.st_size);
    if (n < 0) {
        free(buf);
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

/* Every variable of a document in order: fn(section, subsection, name (lower case), value). */
typedef void (*var_fn)(const parser *ps, const char *name, const char *value, void *arg);

static void walk(const char *buf, size_t len, var_fn fn, void *arg)
{
    parser ps = {.p = buf, .end = buf + len};
    char name[128], value[4096];
    while (ps.p < ps.end) {
        skip_blank(&ps);
        int c = peek(&ps);
        if (c == -1)
            break;
        if (c == '\n') {
            ps.p++;
            continue;
        }
        if (c == '#' || c == ';') {
            skip_line(&ps);
            continue;
        }
        if (c == '[') {
            parse_header(&ps);
            continue;
        }
        if (!isalpha(c)) {
            skip_line(&ps);
            continue;
        }
        size_t k = 0;
        while (ps.p < ps.end && (isalnum((unsigned char)*ps.p) || *ps.p == '-')) {
            if (k + 1 < sizeof name)
                name[k++] = (char)tolower((unsigned char)*ps.p);
            ps.p++;
        }
        name[k] = '\0';
        skip_blank(&ps);
        if (peek(&ps) == '=') {
            ps.p++;
            parse_value(&ps, value, sizeof value);
        } else {
            value[0] = '\0'; /* a boolean "true" */
            skip_line(&ps);
        }
        if (ps.section[0])
            fn(&ps, name, value, arg);
    }
}

/* A configuration file to walk at `depth` of includes: its text and its directory (what
 * relative include paths are relative to); false when too deep or unreadable. */
static bool load_config(const gitconfig_ctx *ctx, const char *file, int depth, char **buf, size_t *len, char **dir)
{
    if (depth > MAX_DEPTH)
        return false;
    *buf = read_config(ctx, file, len);
    if (!*buf)
        return false;
    *dir = dirname_of(file);
    return true;
}

static void paths_file(const gitconfig_ctx *ctx, const char *file, int depth, strv *out)
{
    _cleanup_free_ char *buf = NULL, *dir = NULL;
    size_t len = 0;
    if (!load_config(ctx, file, depth, &buf, &len, &dir))
        return;
    gitconfig_paths_buffer(ctx, dir, buf, len, depth, out);
}

typedef struct paths_walk {
    const gitconfig_ctx *ctx;
    const char *dir;
    int depth;
    strv *out;
} paths_walk;

static void paths_var(const parser *ps, const char *name, const char *value, void *arg)
{
    paths_walk *w = arg;
    const gitconfig_ctx *ctx = w->ctx;
    strv *out = w->out;
    bool include = (strcmp(ps->section, "include") == 0 && !ps->subsection[0]) || strcmp(ps->section, "includeif") == 0;
    if (include && strcmp(name, "path") == 0) {
        char *target = expand(ctx, w->dir, value);
        if (target) {
            bool seen = strv_contains(out, target);
            char *copy = xstrdup(target);
            push_unique(out, target);
            if (!seen)
                paths_file(ctx, copy, w->depth + 1, out);
            free(copy);
        }
    } else if (strcmp(ps->section, "core") == 0 && !ps->subsection[0] && strcmp(name, "hookspath") == 0) {
        push_unique(out, expand(ctx, ctx->worktree, value));
    } else if (strcmp(ps->section, "core") == 0 && !ps->subsection[0] && strcmp(name, "fsmonitor") == 0 &&
               !is_bool_word(value) && strchr(value, '/')) {
        /* a program: its first word, when it is a path */
        char prog[4096];
        size_t wl = strcspn(value, " \t");
        if (wl < sizeof prog) {
            memcpy(prog, value, wl);
            prog[wl] = '\0';
            push_unique(out, expand(ctx, ctx->worktree, prog));
        }
    }
}

void gitconfig_paths_buffer(const gitconfig_ctx *ctx, const char *dir, const char *buf, size_t len, int depth,
                            strv *out)
{
    paths_walk w = {.ctx = ctx, .dir = dir, .depth = depth, .out = out};
    walk(buf, len, paths_var, &w);
}

/* ---- the identity: user.name and user.email, nothing else ---------------------------- */

typedef struct identity_walk {
    const gitconfig_ctx *ctx;
    const char *dir;
    int depth;
    gitconfig_identity *id;
} identity_walk;

static void identity_file(const gitconfig_ctx *ctx, const char *file, int depth, gitconfig_identity *id);

static void identity_var(const parser *ps, const char *name, const char *value, void *arg)
{
    identity_walk *w = arg;
    if (strcmp(ps->section, "user") == 0 && !ps->subsection[0]) {
        if (strcmp(name, "name") == 0)
            snprintf(w->id->name, sizeof w->id->name, "%s", value);
        else if (strcmp(name, "email") == 0)
            snprintf(w->id->email, sizeof w->id->email, "%s", value);
    } else if (strcmp(ps->section, "include") == 0 && !ps->subsection[0] && strcmp(name, "path") == 0) {
        /* (includeIf is not followed: its condition names repositories this may not be) */
        _cleanup_free_ char *target = expand(w->ctx, w->dir, value);
        if (target)
            identity_file(w->ctx, target, w->depth + 1, w->id);
    }
}

static void identity_file(const gitconfig_ctx *ctx, const char *file, int depth, gitconfig_identity *id)
{
    _cleanup_free_ char *buf = NULL, *dir = NULL;
    size_t len = 0;
    if (!load_config(ctx, file, depth, &buf, &len, &dir))
        return;
    identity_walk w = {.ctx = ctx, .dir = dir, .depth = depth, .id = id};
    walk(buf, len, identity_var, &w);
}

void gitconfig_identity_buffer(const gitconfig_ctx *ctx, const char *buf, size_t len, gitconfig_identity *id)
{
    identity_walk w = {.ctx = ctx, .dir = NULL, .depth = 0, .id = id};
    walk(buf, len, identity_var, &w);
}

void gitconfig_read_identity(const gitconfig_ctx *ctx, gitconfig_identity *id)
{
    *id = (gitconfig_identity){0};
    /* in git's order, each overriding the one before: the system's, then the global
     * ones (XDG, then ~/.gitconfig; or $GIT_CONFIG_GLOBAL alone) */
    const char *sys = getenv("GIT_CONFIG_SYSTEM");
    if (!getenv("GIT_CONFIG_NOSYSTEM"))
        identity_file(ctx, sys && *sys ? sys : "/etc/gitconfig", 0, id);
    const char *global = getenv("GIT_CONFIG_GLOBAL");
    if (global && *global) {
        identity_file(ctx, global, 0, id);
        return;
    }
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && xdg[0] == '/') {
        _cleanup_free_ char *x = path_join(xdg, "git/config");
        identity_file(ctx, x, 0, id);
    } else if (ctx->home) {
        _cleanup_free_ char *x = path_join(ctx->home, ".config/git/config");
        identity_file(ctx, x, 0, id);
    }
    if (ctx->home) {
        _cleanup_free_ char *g = path_join(ctx->home, ".gitconfig");
        identity_file(ctx, g, 0, id);
    }
}

void gitconfig_paths(const gitconfig_ctx *ctx, const char *file, strv *out)
{
    paths_file(ctx, file, 0, out);
}
