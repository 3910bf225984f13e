// Deny globs: the matcher and the walker (see glob.h for the syntax and the rules).
//
// A pattern compiles into components; matching runs them as a small NFA whose state is a
// bit set of "the next name must match component i" (a "**" component keeps its bit
// when it consumes a name, and lends it to the next component without consuming one).
// The same step function drives the pure matcher and the walker, so what the unit tests
// prove of one holds for the other.  (Line comments in this file, because patterns in
// examples hold the characters that end a block comment.)
#include "policy/glob.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

typedef enum gc_kind { GC_LITERAL, GC_WILD, GC_STARSTAR } gc_kind;

typedef struct gcomp {
    gc_kind kind;
    char *text; // LITERAL: the name, unescaped; WILD: the component as written
} gcomp;

struct glob_pat {
    char *text;
    char *prefix;
    char *walk_from;
    gcomp *c;
    size_t n, cap;
    size_t walk;    // index of the first component below walk_from
    bool literal;   // no glob character at all
    bool dir_only;  // a trailing '/'
    uint64_t wild;  // components that need their directory listed
};

#define BIT(i) ((uint64_t)1 << (i))

// ---- character classes and component matching ---------------------------------------

// Named classes, ASCII only and independent of the locale.  Returns 1 (in the class),
// 0 (not), -1 (no such class).
static int named_class(const char *name, size_t len, unsigned char c)
{
#define IS(s) (len == sizeof(s) - 1 && memcmp(name, s, len) == 0)
    bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z', digit = c >= '0' && c <= '9';
    bool graph = c > 0x20 && c < 0x7f;
    if (IS("alnum")) return lower || upper || digit;
    if (IS("alpha")) return lower || upper;
    if (IS("blank")) return c == ' ' || c == '\t';
    if (IS("cntrl")) return c < 0x20 || c == 0x7f;
    if (IS("digit")) return digit;
    if (IS("graph")) return graph;
    if (IS("lower")) return lower;
    if (IS("print")) return graph || c == ' ';
    if (IS("punct")) return graph && !lower && !upper && !digit;
    if (IS("space")) return c == ' ' || (c >= '\t' && c <= '\r');
    if (IS("upper")) return upper;
    if (IS("xdigit")) return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    return -1;
#undef IS
}

// Scan a bracket expression; p points just after '['.  Returns the position after the
// closing ']' and sets *hit to whether byte c is in the set, or returns NULL with *why
// when the expression is malformed.
static const char *scan_class(const char *p, unsigned char c, bool *hit, const char **why)
{
    bool neg = false, found = false;
    if (*p == '!' || *p == '^') {
        neg = true;
        p++;
    }
    for (bool first = true;; first = false) {
        if (*p == '\0') {
            *why = "'[' without a closing ']' (write \\[ for a literal '['; a '/' cannot be inside [...])";
            return NULL;
        }
        if (*p == ']' && !first)
            break;
        if (p[0] == '[' && p[1] == ':') {
            const char *e = p + 2;
            while (*e >= 'a' && *e <= 'z')
                e++;
            if (e[0] == ':' && e[1] == ']') {
                int k = named_class(p + 2, (size_t)(e - p - 2), c);
                if (k < 0) {
                    *why = "unknown character class (known: alnum alpha blank cntrl digit graph lower "
                           "print punct space upper xdigit)";
                    return NULL;
                }
                found |= k == 1;
                p = e + 2;
                continue;
            }
        }
        if (*p == '\\' && *++p == '\0')
            continue; // reported as unterminated above
        unsigned char lo = (unsigned char)*p++, hi = lo;
        if (p[0] == '-' && p[1] != ']' && p[1] != '\0') {
            p++;
            if (*p == '\\' && p[1] != '\0')
                p++;
            hi = (unsigned char)*p++;
            if (hi < lo) {
                *why = "a range in [...] whose end comes before its start";
                return NULL;
            }
        }
        found |= lo <= c && c <= hi;
    }
    *hit = found != neg;
    return p + 1;
}

// Length of the character that starts at s: a whole UTF-8 sequence when a valid one
// starts there, else one byte (so that "?" matches "é" in a UTF-8 file name).
static size_t char_len(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n = c < 0x80 ? 1 : (c >= 0xc2 && c <= 0xdf) ? 2 : (c >= 0xe0 && c <= 0xef) ? 3
             : (c >= 0xf0 && c <= 0xf4) ? 4 : 1;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 1;
    return n;
}

// Match one file name against one validated WILD component.  The classic loop with one
// backtrack point: a later '*' supersedes an earlier one, which is enough because '*'
// never has to cross a '/' here.
static bool match_wild(const char *p, const char *s)
{
    const char *star_p = NULL, *star_s = NULL;
    while (*s) {
        if (*p == '*') {
            while (*p == '*')
                p++;
            if (!*p)
                return true;
            star_p = p;
            star_s = s;
            continue;
        }
        if (*p == '?') {
            s += char_len((const unsigned char *)s);
            p++;
            continue;
        }
        if (*p == '[') {
            bool hit = false;
            const char *why = NULL;
            const char *e = scan_class(p + 1, (unsigned char)*s, &hit, &why);
            if (e && hit) {
                p = e;
                s++;
                continue;
            }
        } else if (*p) {
            const char *q = *p == '\\' ? p + 1 : p;
            if (*q == *s) {
                p = q + 1;
                s++;
                continue;
            }
        }
        if (!star_p)
            return false;
        p = star_p;
        s = ++star_s;
    }
    while (*p == '*')
        p++;
    return !*p;
}

// ---- compiling ----------------------------------------------------------------------

void glob_pat_free(glob_pat *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        free(g->c[i].text);
    free(g->c);
    free(g->text);
    free(g->prefix);
    free(g->walk_from);
    free(g);
}

const char *glob_pat_text(const glob_pat *g) { return g->text; }
const char *glob_pat_prefix(const glob_pat *g) { return g->prefix; }
const char *glob_pat_walk_from(const glob_pat *g) { return g->walk_from; }

// Classify one component [b, b+len) (already free of '/'); fills *out unless out is NULL.
static int classify(const char *pattern, const char *b, size_t len, gcomp *out, cordon_error *err)
{
    if (len == 2 && b[0] == '*' && b[1] == '*') {
        if (out)
            *out = (gcomp){.kind = GC_STARSTAR};
        return 0;
    }
    _cleanup_free_ char *comp = xstrndup(b, len);
    bool magic = false;
    for (const char *p = comp; *p; p++) {
        if (*p == '\\') {
            p++; // the splitter made sure something follows
        } else if (*p == '*' || *p == '?') {
            magic = true;
        } else if (*p == '[') {
            bool hit;
            const char *why = NULL;
            const char *e = scan_class(p + 1, 0, &hit, &why);
            if (!e)
                return err_set(err, CORDON_STAGE_USAGE, 0, "deny glob '%s': %s", pattern, why);
            magic = true;
            p = e - 1;
        }
    }
    if (magic) {
        if (out)
            *out = (gcomp){.kind = GC_WILD, .text = steal_pointer(&comp)};
        return 0;
    }
    char *name = xmalloc(len + 1), *o = name;
    for (const char *p = comp; *p; p++)
        *o++ = *p == '\\' ? *++p : *p;
    *o = '\0';
    if (strcmp(name, "..") == 0) {
        free(name);
        return err_set(err, CORDON_STAGE_USAGE, 0,
                       "deny glob '%s': '..' is not allowed in a glob; name the directory itself", pattern);
    }
    if (strlen(name) > NAME_MAX) {
        free(name);
        return err_set(err, CORDON_STAGE_USAGE, ENAMETOOLONG, "deny glob '%s'", pattern);
    }
    if (out)
        *out = (gcomp){.kind = GC_LITERAL, .text = name};
    else
        free(name);
    return 0;
}

// Split a pattern into components and classify each; "." and empty components are
// dropped, consecutive "**" merged.  g may be NULL (syntax check only).
static int parse(const char *pattern, glob_pat *g, cordon_error *err)
{
    const char *s = pattern;
    bool last_starstar = false;
    while (*s) {
        while (*s == '/')
            s++;
        if (!*s)
            break;
        const char *b = s;
        while (*s && *s != '/') {
            if (*s == '\\') {
                if (s[1] == '\0')
                    return err_set(err, CORDON_STAGE_USAGE, 0,
                                   "deny glob '%s': a '\\' at the end escapes nothing", pattern);
                if (s[1] == '/')
                    return err_set(err, CORDON_STAGE_USAGE, 0,
                                   "deny glob '%s': a '/' cannot be escaped (no file name holds one)", pattern);
                s++;
            }
            s++;
        }
        size_t len = (size_t)(s - b);
        if (len == 1 && b[0] == '.')
            continue;
        gcomp c;
        if (classify(pattern, b, len, g ? &c : NULL, err) < 0)
            return -1;
        if (!g)
            continue;
        bool ss = c.kind == GC_STARSTAR;
        if (ss && last_starstar)
            continue;
        last_starstar = ss;
        if (g->n >= GLOB_MAX_COMPONENTS) {
            free(c.text);
            return err_set(err, CORDON_STAGE_USAGE, 0, "deny glob '%s': more than %d components", pattern,
                           GLOB_MAX_COMPONENTS);
        }
        grow(&g->c, &g->cap, g->n + 1, sizeof *g->c);
        g->c[g->n++] = c;
    }
    return 0;
}

bool glob_has_magic(const char *s)
{
    for (; s && *s; s++) {
        if (*s == '\\' && s[1])
            s++;
        else if (*s == '*' || *s == '?' || *s == '[')
            return true;
    }
    return false;
}

int glob_check_syntax(const char *s, cordon_error *err)
{
    if (!s || !*s)
        return err_set(err, CORDON_STAGE_USAGE, 0, "deny glob: empty pattern");
    return parse(s, NULL, err);
}

static char *join_components(const glob_pat *g, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(g->c[i].text) + 1;
    char *out = xmalloc(len + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        *o++ = '/';
        size_t l = strlen(g->c[i].text);
        memcpy(o, g->c[i].text, l);
        o += l;
    }
    if (o == out)
        *o++ = '/';
    *o = '\0';
    return out;
}

int glob_compile(const char *pattern, glob_pat **out, cordon_error *err)
{
    *out = NULL;
    if (!pattern || !*pattern)
        return err_set(err, CORDON_STAGE_USAGE, 0, "deny glob: empty pattern; give an absolute pattern such as /home/me/project/**/*.env");
    if (pattern[0] != '/')
        return err_set(err, CORDON_STAGE_USAGE, 0,
                       "deny glob '%s': not an absolute pattern; start it with the directory to look in, "
                       "e.g. \"$PWD/%s\"",
                       pattern, pattern);
    if (strlen(pattern) >= PATH_MAX)
        return err_set(err, CORDON_STAGE_USAGE, ENAMETOOLONG, "deny glob '%.64s...'", pattern);
    glob_pat *g = xcalloc(1, sizeof *g);
    g->text = xstrdup(pattern);
    if (parse(pattern, g, err) < 0) {
        glob_pat_free(g);
        return -1;
    }
    if (g->n == 0) {
        glob_pat_free(g);
        return err_set(err, CORDON_STAGE_USAGE, 0, "deny glob '%s' names only '/'; use --deny for whole trees", pattern);
    }
    size_t k = 0;
    while (k < g->n && g->c[k].kind == GC_LITERAL)
        k++;
    g->literal = k == g->n;
    if (k == 0) {
        glob_pat_free(g);
        return err_set(err, CORDON_STAGE_USAGE, 0,
                       "deny glob '%s' has no static directory prefix, so expanding it would scan the "
                       "whole file system; start it with the directory to look in, e.g. "
                       "/home/me/project/**/*.env",
                       pattern);
    }
    g->walk = g->literal ? g->n - 1 : k;
    g->prefix = join_components(g, k);
    g->walk_from = join_components(g, g->walk);
    size_t len = strlen(pattern);
    g->dir_only = len > 1 && pattern[len - 1] == '/';
    for (size_t i = 0; i < g->n; i++)
        if (g->c[i].kind != GC_LITERAL)
            g->wild |= BIT(i);
    *out = g;
    return 0;
}

// ---- the NFA ------------------------------------------------------------------------

// Add the components a "**" can skip to without consuming a name.
static uint64_t closure(const glob_pat *g, uint64_t s)
{
    for (size_t i = 0; i < g->n; i++)
        if ((s & BIT(i)) && g->c[i].kind == GC_STARSTAR)
            s |= BIT(i + 1);
    return s;
}

// The states after consuming one name (NUL-terminated).  BIT(n) set: a match.
static uint64_t step(const glob_pat *g, uint64_t s, const char *name)
{
    uint64_t t = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (!(s & BIT(i)))
            continue;
        const gcomp *c = &g->c[i];
        switch (c->kind) {
        case GC_STARSTAR: t |= BIT(i); break;
        case GC_LITERAL:
            if (strcmp(c->text, name) == 0)
                t |= BIT(i + 1);
            break;
        case GC_WILD:
            if (match_wild(c->text, name))
                t |= BIT(i + 1);
            break;
        }
    }
    return closure(g, t);
}

bool glob_pat_match(const glob_pat *g, const char *path)
{
    if (!g || !path || path[0] != '/')
        return false;
    uint64_t s = closure(g, BIT(0));
    const char *p = path;
    bool any = false;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char name[NAME_MAX + 1];
        if (len > NAME_MAX)
            return false;
        memcpy(name, p, len);
        name[len] = '\0';
        s = step(g, s, name);
        if (!s)
            return false;
        any = true;
        p += len;
    }
    size_t plen = strlen(path);
    bool is_dir = plen > 1 && path[plen - 1] == '/';
    return any && (s & BIT(g->n)) && (!g->dir_only || is_dir);
}

bool glob_match(const char *pattern, const char *path)
{
    glob_pat *g;
    cordon_error e;
    if (glob_compile(pattern, &g, &e) < 0)
        return false;
    bool m = glob_pat_match(g, path);
    glob_pat_free(g);
    return m;
}

// ---- the walker ---------------------------------------------------------------------

void glob_hits_free(glob_hits *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n; i++) {
        free(h->v[i].path);
        free(h->v[i].target);
    }
    free(h->v);
    *h = (glob_hits){0};
}

#define DIRBUF_SIZE (32 * 1024)

struct linux_dirent64 {
    ino64_t d_ino;
    off64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

// Per directory level of the walk: the patterns' states there and a getdents buffer
// (a level's listing is resumed after each of its subdirectories has been walked).
typedef struct level {
    uint64_t *st;
    char *buf;
} level;

typedef struct wpat {
    const glob_pat *g;
    size_t index; // in the caller's array
    size_t count; // matches so far
} wpat;

typedef struct walker {
    wpat *p;
    size_t np;
    const glob_walk_opts *o;
    size_t max_matches;
    glob_hits *out;
    level **lv;
    size_t n_lv, cap_lv;
    char path[PATH_MAX];
    size_t plen;
    size_t *failed;
    cordon_error *err;
} walker;

static level *get_level(walker *w, size_t i)
{
    while (w->n_lv <= i) {
        grow(&w->lv, &w->cap_lv, w->n_lv + 1, sizeof *w->lv);
        level *l = xcalloc(1, sizeof *l);
        l->st = xcalloc(w->np, sizeof *l->st);
        w->lv[w->n_lv++] = l;
    }
    return w->lv[i];
}

static void free_levels(walker *w)
{
    for (size_t i = 0; i < w->n_lv; i++) {
        free(w->lv[i]->st);
        free(w->lv[i]->buf);
        free(w->lv[i]);
    }
    free(w->lv);
}

// Fail closed, naming the first pattern of the walk.
__attribute__((format(printf, 4, 5)))
static int wfail(walker *w, size_t pi, int errnum, const char *fmt, ...)
{
    char msg[sizeof ((cordon_error *)NULL)->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (w->failed)
        *w->failed = w->p[pi].index;
    return err_set(w->err, CORDON_STAGE_RESOLVE, errnum, "deny glob '%s': %s", w->p[pi].g->text, msg);
}

static ftype type_of_mode(mode_t m)
{
    if (S_ISDIR(m))
        return FT_DIR;
    if (S_ISREG(m))
        return FT_FILE;
    return FT_OTHER;
}

// Append "/name" to the walker's path; fails closed when the path would not fit.
static int push_name(walker *w, size_t pi, const char *name, size_t *saved)
{
    size_t l = strlen(name);
    bool root = w->plen == 1;
    if (w->plen + (root ? 0 : 1) + l >= sizeof w->path)
        return wfail(w, pi, ENAMETOOLONG,
                     "%s/%s: the path is longer than PATH_MAX, so cordon cannot hide what lies "
                     "there; narrow the pattern or use --glob-depth",
                     w->path, name);
    *saved = w->plen;
    if (!root)
        w->path[w->plen++] = '/';
    memcpy(w->path + w->plen, name, l + 1);
    w->plen += l;
    return 0;
}

static void pop_name(walker *w, size_t saved)
{
    w->plen = saved;
    w->path[saved] = '\0';
}

// Record the walker's current path as a match of the patterns in `matched` (bit i:
// w->p[i]); st is what fstatat said of it.  Returns 0, or -1 (limit, or a symlink whose
// target cannot be looked at for an unexpected reason).
static int add_hit(walker *w, uint64_t matched, const struct stat *st, glob_hit *pending)
{
    size_t first = SIZE_MAX;
    for (size_t i = 0; i < w->np; i++) {
        if (!(matched & BIT(i)))
            continue;
        if (first == SIZE_MAX)
            first = i;
        if (++w->p[i].count > w->max_matches)
            return wfail(w, i, 0,
                         "matches more than %zu paths (the limit); narrow the pattern, or hide a whole "
                         "directory with --deny",
                         w->max_matches);
    }
    grow(&w->out->v, &w->out->cap, w->out->n + 1, sizeof *w->out->v);
    glob_hit *h = &w->out->v[w->out->n++];
    *h = *pending;
    *pending = (glob_hit){0};
    h->path = xstrdup(w->path);
    h->pattern = w->p[first].index;
    h->type = type_of_mode(st->st_mode);
    h->dev = st->st_dev;
    h->ino = st->st_ino;
    h->is_link = S_ISLNK(st->st_mode);
    return 0;
}

// Resolve the symlink at the walker's current path into *h.
static int resolve_link(walker *w, size_t pi, glob_hit *h)
{
    canon c;
    cordon_error e = {0};
    if (canon_resolve(w->path, &c, &e) < 0) {
        switch (e.errnum) {
        case ELOOP: h->unfollowable = "a symlink loop"; return 0;
        case EACCES: h->unfollowable = "its target cannot be reached (permission denied)"; return 0;
        case ENAMETOOLONG: h->unfollowable = "its target's path is too long"; return 0;
        default: return wfail(w, pi, e.errnum, "cannot follow the symlink %s", w->path);
        }
    }
    h->target = steal_pointer(&c.path);
    h->target_type = c.type;
    h->target_dev = c.dev;
    h->target_ino = c.ino;
    canon_free(&c);
    return 0;
}

static int walk_dir(walker *w, int dfd, size_t lvl, int depth);

static bool pattern_depth_ok(const walker *w, size_t i, int depth)
{
    return w->p[i].g->literal || w->o->max_depth < 0 || depth <= w->o->max_depth;
}

// Could the states `st` (one per pattern) need a listing of the directory they apply to?
static bool needs_listing(const walker *w, const uint64_t *st)
{
    for (size_t i = 0; i < w->np; i++)
        if (st[i] & w->p[i].g->wild)
            return true;
    return false;
}

// One entry `name` of the directory dfd (at `depth`; the entry is at depth+1).  dtype is
// getdents' d_type, or DT_UNKNOWN; `probe`: the name was not listed, only guessed from a
// literal component, so it may not exist.
static int visit(walker *w, int dfd, size_t lvl, int depth, const char *name, unsigned char dtype, bool probe)
{
    const uint64_t *st = w->lv[lvl]->st;
    uint64_t *next = get_level(w, lvl + 1)->st;
    st = w->lv[lvl]->st; // get_level may have moved the array of levels, not the levels
    int d = depth + 1;
    uint64_t matched = 0;
    bool more = false;
    for (size_t i = 0; i < w->np; i++) {
        next[i] = 0;
        if (!st[i] || !pattern_depth_ok(w, i, d))
            continue;
        const glob_pat *g = w->p[i].g;
        uint64_t t = step(g, st[i], name);
        if (t & BIT(g->n))
            matched |= BIT(i);
        if (pattern_depth_ok(w, i, d + 1))
            next[i] = t & ~BIT(g->n);
        more |= next[i] != 0;
    }
    if (!matched && !more)
        return 0;

    // What is it?  getdents said, unless it did not know, or this is a match (whose
    // device and inode go into the rule) or a guess.
    struct stat sb = {0};
    bool is_dir = dtype == DT_DIR;
    if (matched || probe || dtype == DT_UNKNOWN) {
        if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                return 0; // not there (a guess), or gone since it was listed
            if (errno == EACCES && probe)
                return 0; // dfd cannot be searched: no one running as the caller gets below it
            return wfail(w, 0, errno, "cannot look at %s/%s", w->path, name);
        }
        is_dir = S_ISDIR(sb.st_mode);
    }

    size_t saved = 0;
    if (matched) {
        size_t pi = (size_t)__builtin_ctzll(matched);
        if (push_name(w, pi, name, &saved) < 0)
            return -1;
        glob_hit pending = {0};
        if (S_ISLNK(sb.st_mode) && resolve_link(w, pi, &pending) < 0)
            return -1;
        bool to_dir = is_dir || (pending.target && pending.target_type == FT_DIR);
        for (size_t i = 0; i < w->np; i++)
            if ((matched & BIT(i)) && w->p[i].g->dir_only && !to_dir)
                matched &= ~BIT(i);
        int r = matched ? add_hit(w, matched, &sb, &pending) : 0;
        free(pending.target);
        pop_name(w, saved);
        if (r < 0)
            return -1;
        // A matched directory is hidden whole: nothing below it needs a rule of its own,
        // unless the caller says that a rule below may show part of it again.
        if (matched && !w->o->descend_matches)
            return 0;
    }
    if (!more || !is_dir)
        return 0;

    size_t pi = 0;
    while (pi < w->np && !next[pi])
        pi++;
    bool list = needs_listing(w, next);
    int cfd = openat(dfd, name, (list ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR || e == ELOOP)
            return 0; // gone, or replaced by a file or a symlink since it was listed
        if (e == EACCES) {
            // We may not list it.  If we may not search it either, neither may the command
            // (same user, no capabilities): nothing below is reachable, skip it.  If we may
            // search it, the command could open a file in it by a guessed name: fail closed.
            if (faccessat(dfd, name, X_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) < 0 && errno == EACCES)
                return 0;
            return wfail(w, pi, e,
                         "cannot list %s%s%s, which a command running as you could still enter by "
                         "name; make it readable (chmod u+r) or narrow the pattern",
                         w->path, w->plen > 1 ? "/" : "", name);
        }
        if (e == EMFILE || e == ENFILE)
            return wfail(w, pi, e, "too many directories open at once below %s; use --glob-depth", w->path);
        return wfail(w, pi, e, "cannot open %s%s%s", w->path, w->plen > 1 ? "/" : "", name);
    }
    int r = push_name(w, pi, name, &saved);
    if (r == 0) {
        r = walk_dir(w, cfd, lvl + 1, d);
        pop_name(w, saved);
    }
    close(cfd);
    return r;
}

static int walk_dir(walker *w, int dfd, size_t lvl, int depth)
{
    level *l = get_level(w, lvl);
    if (!needs_listing(w, l->st)) {
        // Only literal names can come next: look them up, do not list.  Several patterns
        // may name the same entry; look at each name once.
        for (size_t i = 0; i < w->np; i++) {
            const glob_pat *g = w->p[i].g;
            for (size_t j = 0; j < g->n; j++) {
                if (!(w->lv[lvl]->st[i] & BIT(j)))
                    continue;
                const char *name = g->c[j].text;
                bool seen = false;
                for (size_t i2 = 0; i2 <= i && !seen; i2++) {
                    const glob_pat *g2 = w->p[i2].g;
                    for (size_t j2 = 0; j2 < g2->n && !seen; j2++)
                        if ((i2 < i || j2 < j) && (w->lv[lvl]->st[i2] & BIT(j2)) &&
                            strcmp(g2->c[j2].text, name) == 0)
                            seen = true;
                }
                if (!seen && visit(w, dfd, lvl, depth, name, DT_UNKNOWN, true) < 0)
                    return -1;
            }
        }
        return 0;
    }
    if (!l->buf)
        l->buf = xmalloc(DIRBUF_SIZE);
    for (;;) {
        long n = syscall(SYS_getdents64, dfd, l->buf, DIRBUF_SIZE);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return wfail(w, 0, errno, "cannot list %s", w->path);
        }
        if (n == 0)
            return 0;
        for (long off = 0; off < n;) {
            const struct linux_dirent64 *de = (const struct linux_dirent64 *)(l->buf + off);
            off += de->d_reclen;
            const char *nm = de->d_name;
            if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
                continue;
            if (visit(w, dfd, lvl, depth, nm, de->d_type, false) < 0)
                return -1;
        }
    }
}

static int open_root(walker *w, const char *root, bool list, int *fd_out)
{
    *fd_out = -1;
    // The root is canonical: no component of it may be a symlink now.
    struct open_how how = {
        .flags = (uint64_t)((list ? O_RDONLY : O_PATH) | O_DIRECTORY | O_CLOEXEC),
        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, root, &how, sizeof how);
    if (fd >= 0) {
        *fd_out = fd;
        return 0;
    }
    int e = errno;
    if (e == ENOENT || e == ENOTDIR)
        return 0; // nothing there: nothing to hide
    if (e == ELOOP)
        return wfail(w, 0, e, "%s changed into a symlink while it was being resolved", root);
    if (e == EACCES) {
        if (faccessat(AT_FDCWD, root, X_OK, AT_EACCESS) < 0 && errno == EACCES)
            return 0;
        if (list)
            return wfail(w, 0, e,
                         "cannot list %s, which a command running as you could still enter by name; "
                         "make it readable (chmod u+r) or narrow the pattern",
                         root);
    }
    return wfail(w, 0, e, "cannot open %s", root);
}

// Walk one group of patterns sharing the root `root`.
static int walk_group(walker *w, const char *root)
{
    if (strlen(root) >= sizeof w->path)
        return wfail(w, 0, ENAMETOOLONG, "%s", root);
    strcpy(w->path, root);
    w->plen = strlen(root);
    level *l = get_level(w, 0);
    uint64_t root_match = 0;
    for (size_t i = 0; i < w->np; i++) {
        const glob_pat *g = w->p[i].g;
        l->st[i] = closure(g, BIT(g->walk));
        if (l->st[i] & BIT(g->n)) // e.g. "/r/**" matches /r itself
            root_match |= BIT(i);
        l->st[i] &= ~BIT(g->n);
    }
    int fd;
    if (open_root(w, root, needs_listing(w, l->st), &fd) < 0)
        return -1;
    if (fd < 0)
        return 0;
    int r = 0;
    if (root_match) {
        struct stat sb;
        if (fstat(fd, &sb) < 0) {
            r = wfail(w, 0, errno, "cannot look at %s", root);
        } else {
            glob_hit pending = {0};
            r = add_hit(w, root_match, &sb, &pending);
        }
        if (r == 0 && !w->o->descend_matches) {
            close(fd);
            return 0;
        }
    }
    if (r == 0)
        r = walk_dir(w, fd, 0, 0);
    close(fd);
    return r;
}

static int cmp_hits(const void *a, const void *b)
{
    const glob_hit *x = a, *y = b;
    int c = path_cmp(x->path, y->path);
    if (c)
        return c;
    return (x->pattern > y->pattern) - (x->pattern < y->pattern);
}

int glob_expand(glob_pat *const *pats, const char *const *roots, size_t n, const glob_walk_opts *opts,
                glob_hits *out, size_t *failed, cordon_error *err)
{
    *out = (glob_hits){0};
    glob_walk_opts dflt = {.max_depth = -1};
    if (!opts)
        opts = &dflt;
    _cleanup_free_ bool *done = xcalloc(n ? n : 1, sizeof *done);
    _cleanup_free_ wpat *group = xcalloc(n ? n : 1, sizeof *group);
    int ret = 0;
    for (size_t i = 0; i < n && ret == 0; i++) {
        if (done[i] || !roots[i])
            continue;
        walker w = {
            .p = group,
            .o = opts,
            .max_matches = opts->max_matches ? opts->max_matches : GLOB_MAX_MATCHES,
            .out = out,
            .failed = failed,
            .err = err,
        };
        for (size_t j = i; j < n; j++) {
            if (done[j] || !roots[j] || strcmp(roots[j], roots[i]) != 0)
                continue;
            done[j] = true;
            group[w.np++] = (wpat){.g = pats[j], .index = j};
        }
        ret = walk_group(&w, roots[i]);
        free_levels(&w);
    }
    if (ret < 0) {
        glob_hits_free(out);
        return -1;
    }
    if (out->n > 1) {
        qsort(out->v, out->n, sizeof *out->v, cmp_hits);
        size_t k = 1;
        for (size_t i = 1; i < out->n; i++) {
            if (strcmp(out->v[i].path, out->v[k - 1].path) == 0) {
                free(out->v[i].path);
                free(out->v[i].target);
                continue;
            }
            out->v[k++] = out->v[i];
        }
        out->n = k;
    }
    return 0;
}
