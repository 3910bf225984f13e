#include "policy/gitconfig.h"

#include <ctype.h>
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
#define MAX_FILE (1 << 20)

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

static void paths_file(const gitconfig_ctx *ctx, const char *file, int depth, strv *out)
{
    if (depth > MAX_DEPTH)
        return;
    _cleanup_fd_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE)
        return;
    _cleanup_free_ char *buf = xmalloc((size_t)st.st_size + 1);
    ssize_t n = read(fd, buf, (size_t)st.st_size);
    if (n < 0)
        return;
    _cleanup_free_ char *dir = dirname_of(file);
    gitconfig_paths_buffer(ctx, dir, buf, (size_t)n, depth, out);
}

void gitconfig_paths_buffer(const gitconfig_ctx *ctx, const char *dir, const char *buf, size_t len, int depth,
                            strv *out)
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
            if (parse_header(&ps))
                continue;
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
        if (!ps.section[0])
            continue;
        bool include = (strcmp(ps.section, "include") == 0 && !ps.subsection[0]) ||
                       strcmp(ps.section, "includeif") == 0;
        if (include && strcmp(name, "path") == 0) {
            char *target = expand(ctx, dir, value);
            if (target) {
                bool seen = strv_contains(out, target);
                char *copy = xstrdup(target);
                push_unique(out, target);
                if (!seen)
                    paths_file(ctx, copy, depth + 1, out);
                free(copy);
            }
        } else if (strcmp(ps.section, "core") == 0 && !ps.subsection[0] && strcmp(name, "hookspath") == 0) {
            push_unique(out, expand(ctx, ctx->worktree, value));
        } else if (strcmp(ps.section, "core") == 0 && !ps.subsection[0] && strcmp(name, "fsmonitor") == 0 &&
                   !is_bool_word(value) && strchr(value, '/')) {
            /* a program: its first word, when it is a path */
            char prog[4096];
            size_t w = strcspn(value, " \t");
            if (w < sizeof prog) {
                memcpy(prog, value, w);
                prog[w] = '\0';
                push_unique(out, expand(ctx, ctx->worktree, prog));
            }
        }
    }
}

void gitconfig_paths(const gitconfig_ctx *ctx, const char *file, strv *out)
{
    paths_file(ctx, file, 0, out);
}
