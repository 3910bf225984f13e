#include "util/path.h"

#include <errno.h>
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
