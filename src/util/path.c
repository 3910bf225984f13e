// SPDX-License-Identifier: Apache-2.0
#include "util/path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strv.h"

int path_next_name(const char **p, char name[NAME_MAX + 1])
{
    const char *s = *p;
    while (*s == '/')
        s++;
    if (!*s) {
        *p = s;
        return 0;
    }
    size_t n = strcspn(s, "/");
    if (n > NAME_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(name, s, n);
    name[n] = '\0';
    s += n;
    while (*s == '/')
        s++;
    *p = s;
    return 1;
}

char *path_normalize(const char *in)
{
    if (!in || in[0] != '/')
        return NULL;
    size_t len = strlen(in);
    char *out = xmalloc(len + 2);
    size_t o = 0;
    const char *p = in;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 1 && p[0] == '.') {
            /* skip */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--; /* drop the slash too */
        } else {
            out[o++] = '/';
            memcpy(out + o, p, n);
            o += n;
        }
        p += n;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    return out;
}

bool path_has_prefix(const char *child, const char *parent)
{
    if (strcmp(parent, "/") == 0)
        return child[0] == '/';
    size_t n = strlen(parent);
    return strncmp(child, parent, n) == 0 && (child[n] == '\0' || child[n] == '/');
}

bool path_to_parent(char *p)
{
    char *slash = strrchr(p, '/');
    if (!slash || strcmp(p, "/") == 0)
        return false;
    if (slash == p)
        slash[1] = '\0';
    else
        *slash = '\0';
    return true;
}

char *path_join(const char *a, const char *b)
{
    size_t la = strlen(a);
    while (la > 0 && a[la - 1] == '/')
        la--;
    while (*b == '/')
        b++;
    if (!*b)
        return la ? xstrndup(a, la) : xstrdup("/");
    return xasprintf("%.*s/%s", (int)la, a, b);
}

size_t path_depth(const char *p)
{
    size_t d = 0;
    for (; *p; p++)
        if (*p == '/' && p[1] != '\0')
            d++;
    return d;
}

int path_cmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        unsigned char ca = (unsigned char)*a, cb = (unsigned char)*b;
        if (ca == cb) {
            if (!ca)
                return 0;
            continue;
        }
        if (!ca)
            return -1;
        if (!cb)
            return 1;
        if (ca == '/')
            return -1;
        if (cb == '/')
            return 1;
        return ca < cb ? -1 : 1;
    }
}

/* The length of the valid UTF-8 sequence at s (1 to 4) that encodes neither a C1 control
 * nor a surrogate, or 0: such bytes are escaped one by one. */
static size_t utf8_ok(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        if (c == 0xc2)
            lo = 0xa0; /* U+0080..U+009F: C1 controls */
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        else if (c == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        else if (c == 0xf4)
            hi = 0x8f; /* past U+10FFFF */
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

char *path_quote(const char *name)
{
    static const char letter[] = {
        ['\a'] = 'a', ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\v'] = 'v', ['\f'] = 'f', ['\r'] = 'r'};
    size_t len = strlen(name);
    /* at most four bytes out per byte in ("\ooo"), the quotes and the NUL */
    char *out = xmalloc(4 * len + 3);
    size_t o = 0;
    bool quoted = false;
    out[o++] = '"';
    for (const unsigned char *s = (const unsigned char *)name; *s;) {
        if (*s >= 0x80) {
            size_t n = utf8_ok(s);
            if (n) {
                memcpy(out + o, s, n);
                o += n;
                s += n;
                continue;
            }
        } else if (*s >= 0x20 && *s != 0x7f && *s != '"' && *s != '\\') {
            out[o++] = (char)*s++;
            continue;
        }
        quoted = true;
        out[o++] = '\\';
        if (*s == '"' || *s == '\\')
            out[o++] = (char)*s;
        else if (*s < sizeof letter && letter[*s])
            out[o++] = letter[*s];
        else
            o += (size_t)snprintf(out + o, 4, "%03o", *s);
        s++;
    }
    if (!quoted) {
        free(out);
        return xstrdup(name);
    }
    out[o++] = '"';
    out[o] = '\0';
    return out;
}
