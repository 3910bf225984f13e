// SPDX-License-Identifier: Apache-2.0
// Deny globs, the matcher (see glob.h for the syntax and the rules; globwalk.c walks the
// host's directories with it).  Pure: no system calls.
//
// A pattern compiles into components; matching runs them as a small NFA whose state is a
// bit set of "the next name must match component i" (a "**" component keeps its bit
// when it consumes a name, and lends it to the next component without consuming one).
// The same step function drives the pure matcher and the walker, so what the unit tests
// prove of one holds for the other.  (Line comments in this file, because patterns in
// examples hold the characters that end a block comment.)
#include "policy/glob.h"
#include "policy/glob_nfa.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

// ---- character classes and component matching ---------------------------------------

// Named classes, ASCII only and independent of the locale.  Returns 1 (in the class),
// 0 (not), -1 (no such class).
static int named_class(const char *name, size_t len, unsigned char c)
{
#define IS(s) (len == sizeof(s) - 1 && memcmp(name, s, len) == 0)
    bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z', digit = c >= '0' && c <= '9';
    bool graph = c > 0x20 && c < 0x7f;
    if (IS("alnum"))
        return lower || upper || digit;
    if (IS("alpha"))
        return lower || upper;
    if (IS("blank"))
        return c == ' ' || c == '\t';
    if (IS("cntrl"))
        return c < 0x20 || c == 0x7f;
    if (IS("digit"))
        return digit;
    if (IS("graph"))
        return graph;
    if (IS("lower"))
        return lower;
    if (IS("print"))
        return graph || c == ' ';
    if (IS("punct"))
        return graph && !lower && !upper && !digit;
    if (IS("space"))
        return c == ' ' || (c >= '\t' && c <= '\r');
    if (IS("upper"))
        return upper;
    if (IS("xdigit"))
        return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
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
    size_t n = c < 0x80                   ? 1
               : (c >= 0xc2 && c <= 0xdf) ? 2
               : (c >= 0xe0 && c <= 0xef) ? 3
               : (c >= 0xf0 && c <= 0xf4) ? 4
                                          : 1;
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

const char *glob_pat_text(const glob_pat *g)
{
    return g->text;
}
const char *glob_pat_prefix(const glob_pat *g)
{
    return g->prefix;
}
const char *glob_pat_walk_from(const glob_pat *g)
{
    return g->walk_from;
}
bool glob_pat_literal(const glob_pat *g)
{
    return g->literal;
}

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
                    return err_set(err, CORDON_STAGE_USAGE, 0, "deny glob '%s': a '\\' at the end escapes nothing",
                                   pattern);
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
        return err_set(err, CORDON_STAGE_USAGE, 0,
                       "deny glob: empty pattern; give an absolute pattern such as /home/me/project/**/*.env");
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
        return err_set(err, CORDON_STAGE_USAGE, 0, "deny glob '%s' names only '/'; hide whole trees with a deny rule",
                       pattern);
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

uint64_t glob_closure(const glob_pat *g, uint64_t s)
{
    for (size_t i = 0; i < g->n; i++)
        if ((s & BIT(i)) && g->c[i].kind == GC_STARSTAR)
            s |= BIT(i + 1);
    return s;
}

uint64_t glob_step(const glob_pat *g, uint64_t s, const char *name)
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
    return glob_closure(g, t);
}

bool glob_pat_match(const glob_pat *g, const char *path)
{
    if (!g || !path || path[0] != '/')
        return false;
    uint64_t s = glob_closure(g, BIT(0));
    const char *p = path;
    bool any = false;
    char name[NAME_MAX + 1];
    int got;
    while ((got = path_next_name(&p, name)) > 0) {
        s = glob_step(g, s, name);
        if (!s)
            return false;
        any = true;
    }
    if (got < 0)
        return false; /* a component longer than any name */
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
