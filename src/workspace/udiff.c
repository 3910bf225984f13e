// SPDX-License-Identifier: Apache-2.0
/* A unified diff of two files, in git's format (so `git apply` takes what `cordon
 * workspace diff` prints): Myers' O(ND) shortest edit script over lines (after the
 * common prefix and suffix are set aside), hunks with three lines of context.  An edit
 * script longer than DIFF_MAX_D falls back to replacing the differing middle whole: a
 * correct diff, if not the shortest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/path.h"
#include "util/strv.h"
#include "workspace/ws.h"

#define CONTEXT    3
#define DIFF_MAX_D 2000

typedef struct line {
    const char *p;
    size_t n; /* with its '\n', if any */
    uint64_t h;
} line;

typedef struct lines {
    line *v;
    size_t n;
} lines;

static uint64_t hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    return h;
}

static lines split(const char *s, size_t len)
{
    lines l = {0};
    size_t cap = 0;
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - s) + 1 : len;
        grow(&l.v, &cap, l.n + 1, sizeof *l.v);
        l.v[l.n++] = (line){.p = s + i, .n = e - i, .h = hash(s + i, e - i)};
        i = e;
    }
    return l;
}

static bool eq(const line *a, const line *b)
{
    return a->h == b->h && a->n == b->n && memcmp(a->p, b->p, a->n) == 0;
}

/* The edit script: per step ' ' (both), '-' (a only), '+' (b only). */
typedef struct script {
    char *op;
    size_t n, cap;
} script;

static void push(script *s, char c)
{
    grow(&s->op, &s->cap, s->n + 1, 1);
    s->op[s->n++] = c;
}

/* Myers over a[0..n) and b[0..m); false when the distance is over the limit. */
static bool myers(const line *a, size_t n, const line *b, size_t m, script *out)
{
    long max = (long)(n + m);
    if (max > 2L * DIFF_MAX_D + 4)
        max = 2L * DIFF_MAX_D + 4;
    long off = max + 1;
    long width = 2 * max + 3;
    long *v = calloc((size_t)width, sizeof *v);
    long **trace = calloc((size_t)max + 2, sizeof *trace);
    if (!v || !trace) {
        free(v);
        free(trace);
        return false;
    }
    long found = -1;
    for (long d = 0; d <= max && d <= DIFF_MAX_D; d++) {
        trace[d] = malloc((size_t)width * sizeof *v);
        if (!trace[d])
            break;
        memcpy(trace[d], v, (size_t)width * sizeof *v);
        for (long k = -d; k <= d; k += 2) {
            long x;
            if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
                x = v[off + k + 1];
            else
                x = v[off + k - 1] + 1;
            long y = x - k;
            while (x < (long)n && y < (long)m && eq(&a[x], &b[y])) {
                x++;
                y++;
            }
            v[off + k] = x;
            if (x >= (long)n && y >= (long)m) {
                found = d;
                break;
            }
        }
        if (found >= 0)
            break;
    }
    bool ok = found >= 0;
    if (ok) {
        /* walk back through the snapshots (trace[d] is V before round d) */
        char *rev = malloc(n + m + 1);
        size_t rn = 0;
        long x = (long)n, y = (long)m;
        for (long d = found; d > 0; d--) {
            long *pv = trace[d];
            long k = x - y;
            long pk = (k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1])) ? k + 1 : k - 1;
            long px = pv[off + pk], py = px - pk;
            while (x > px && y > py) {
                rev[rn++] = ' ';
                x--;
                y--;
            }
            if (x == px)
                rev[rn++] = '+', y--;
            else
                rev[rn++] = '-', x--;
        }
        while (x > 0 && y > 0) {
            rev[rn++] = ' ';
            x--;
            y--;
        }
        for (size_t i = rn; i > 0; i--)
            push(out, rev[i - 1]);
        free(rev);
    }
    for (long d = 0; d <= max + 1 && d < max + 2; d++)
        free(trace[d]);
    free(trace);
    free(v);
    return ok;
}

static script edit_script(const lines *a, const lines *b)
{
    script s = {0};
    size_t pre = 0;
    while (pre < a->n && pre < b->n && eq(&a->v[pre], &b->v[pre]))
        pre++;
    size_t suf = 0;
    while (suf < a->n - pre && suf < b->n - pre && eq(&a->v[a->n - 1 - suf], &b->v[b->n - 1 - suf]))
        suf++;
    for (size_t i = 0; i < pre; i++)
        push(&s, ' ');
    size_t an = a->n - pre - suf, bn = b->n - pre - suf;
    if (!myers(a->v + pre, an, b->v + pre, bn, &s)) {
        for (size_t i = 0; i < an; i++)
            push(&s, '-');
        for (size_t i = 0; i < bn; i++)
            push(&s, '+');
    }
    for (size_t i = 0; i < suf; i++)
        push(&s, ' ');
    return s;
}

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *p, size_t n)
{
    grow(&b->p, &b->cap, b->n + n, 1);
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        sb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void range(sbuf *b, char sign, size_t start, size_t count)
{
    /* a range of 0 lines names the line before it */
    if (count == 1)
        sb_printf(b, "%c%zu", sign, start + 1);
    else
        sb_printf(b, "%c%zu,%zu", sign, count ? start + 1 : start, count);
}

static void emit_line(sbuf *b, char c, const line *l)
{
    sb_put(b, &c, 1);
    sb_put(b, l->p, l->n);
    if (l->n == 0 || l->p[l->n - 1] != '\n')
        sb_put(b, "\n\\ No newline at end of file\n", 29);
}

static char *hunks(const lines *a, const lines *b)
{
    script s = edit_script(a, b);
    sbuf out = {0};
    sb_put(&out, "", 0);
    size_t i = 0;
    while (i < s.n) {
        if (s.op[i] == ' ') {
            i++;
            continue;
        }
        /* a hunk: from CONTEXT before this change to CONTEXT after the last change that
         * is at most 2*CONTEXT equal lines from the next */
        size_t start = i >= CONTEXT ? i - CONTEXT : 0;
        /* the end of the hunk's changes */
        size_t end = i;
        for (size_t j = i; j < s.n; j++) {
            if (s.op[j] != ' ') {
                end = j + 1;
                continue;
            }
            size_t run = 0;
            while (j + run < s.n && s.op[j + run] == ' ')
                run++;
            if (j + run >= s.n || run > 2 * CONTEXT)
                break;
            j += run - 1;
        }
        size_t stop = end + CONTEXT < s.n ? end + CONTEXT : s.n;
        /* line numbers at `start` */
        size_t ai = 0, bi = 0;
        for (size_t k = 0; k < start; k++) {
            if (s.op[k] != '+')
                ai++;
            if (s.op[k] != '-')
                bi++;
        }
        size_t ac = 0, bc = 0;
        for (size_t k = start; k < stop; k++) {
            if (s.op[k] != '+')
                ac++;
            if (s.op[k] != '-')
                bc++;
        }
        sb_put(&out, "@@ ", 3);
        range(&out, '-', ai, ac);
        sb_put(&out, " ", 1);
        range(&out, '+', bi, bc);
        sb_put(&out, " @@\n", 4);
        for (size_t k = start; k < stop; k++) {
            if (s.op[k] == ' ')
                emit_line(&out, ' ', &a->v[ai++]), bi++;
            else if (s.op[k] == '-')
                emit_line(&out, '-', &a->v[ai++]);
            else
                emit_line(&out, '+', &b->v[bi++]);
        }
        i = stop;
    }
    free(s.op);
    return out.p;
}

char *ws_udiff_hunks(const char *a, size_t alen, const char *b, size_t blen)
{
    lines la = split(a ? a : "", a ? alen : 0), lb = split(b ? b : "", b ? blen : 0);
    char *h = hunks(&la, &lb);
    free(la.v);
    free(lb.v);
    return h;
}

static unsigned git_mode(mode_t m)
{
    if (S_ISLNK(m))
        return 0120000;
    return (m & 0100) ? 0100755 : 0100644;
}

static bool binary(const char *p, size_t n)
{
    return p && memchr(p, '\0', n < 8000 ? n : 8000) != NULL;
}

/* "a/" + path as git prints it: quoted whole when the path has to be (util/path.h). */
static char *side(const char *prefix, const char *path)
{
    char *raw = xasprintf("%s%s", prefix, path);
    char *q = path_quote(raw);
    free(raw);
    return q;
}

int ws_udiff_print(FILE *out, const char *path, const char *a, size_t alen, mode_t amode, const char *b, size_t blen,
                   mode_t bmode)
{
    char *qa = side("a/", path), *qb = side("b/", path);
    fprintf(out, "diff --git %s %s\n", qa, qb);
    if (!a)
        fprintf(out, "new file mode %06o\n", git_mode(bmode));
    else if (!b)
        fprintf(out, "deleted file mode %06o\n", git_mode(amode));
    else if (git_mode(amode) != git_mode(bmode))
        fprintf(out, "old mode %06o\nnew mode %06o\n", git_mode(amode), git_mode(bmode));
    bool type_change = a && b && S_ISLNK(amode) != S_ISLNK(bmode);
    if ((a && alen == 0 && !b) || (b && blen == 0 && !a)) {
        /* an empty file added or deleted: no hunk */
    } else if (a && b && alen == blen && memcmp(a, b, alen) == 0 && !type_change) {
        /* a mode change only */
    } else if (binary(a, alen) || binary(b, blen)) {
        fprintf(out, "Binary files %s and %s differ\n", a ? qa : "/dev/null", b ? qb : "/dev/null");
    } else {
        char *h = ws_udiff_hunks(a, alen, b, blen);
        fprintf(out, "--- %s\n+++ %s\n", a ? qa : "/dev/null", b ? qb : "/dev/null");
        fputs(h ? h : "", out);
        free(h);
    }
    free(qa);
    free(qb);
    return 0;
}
