// SPDX-License-Identifier: Apache-2.0
#include "util/strv.h"

#include <ctype.h>

#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
    static const char msg[] = "cordon: out of memory\n";
    (void)!write(2, msg, sizeof msg - 1);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom();
    return q;
}

char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        oom();
    return d;
}

char *xstrndup(const char *s, size_t n)
{
    char *d = strndup(s, n);
    if (!d)
        oom();
    return d;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0)
        oom();
    return s;
}

void grow(void *arr, size_t *cap, size_t n, size_t size)
{
    void **a = arr;
    if (n + 1 <= *cap)
        return;
    size_t nc = *cap ? *cap * 2 : 8;
    while (nc < n + 1)
        nc *= 2;
    *a = xrealloc(*a, nc * size);
    *cap = nc;
}

void strv_push(strv *s, char *owned)
{
    grow(&s->v, &s->cap, s->n + 1, sizeof *s->v);
    s->v[s->n++] = owned;
    s->v[s->n] = NULL;
}

void strv_free(strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

bool strv_contains(const strv *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return true;
    return false;
}

/* Optimal string alignment distance (insertions, deletions, substitutions, transposed
 * neighbours), case-insensitive; words longer than 63 bytes count as far. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return (size_t)-1;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

const char *closest_word(const char *word, const char *const *choices, size_t n)
{
    if (!word || !*word)
        return NULL;
    size_t len = strlen(word), best_d = (size_t)-1;
    const char *best = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t dist = edit_distance(word, choices[i]);
        if (dist < best_d) {
            best_d = dist;
            best = choices[i];
        }
    }
    /* close enough to be a typo: at most one edit in 4 letters, and never a rewrite */
    size_t allowed = len < 4 ? 1 : len / 4 + 1;
    return best && best_d > 0 && best_d <= allowed && best_d < len ? best : NULL;
}
