#include "util/strv.h"

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
