#include "policy/canon.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

#define MAX_SYMLINKS 40

const char *ftype_name(ftype t)
{
    switch (t) {
    case FT_MISSING: return "missing";
    case FT_DIR: return "dir";
    case FT_FILE: return "file";
    case FT_OTHER: return "special";
    }
    return "?";
}

void canon_free(canon *c)
{
    if (!c)
        return;
    free(c->path);
    free(c->symlink);
    free(c->first_missing);
    c->path = c->symlink = c->first_missing = NULL;
    strv_free(&c->crossed);
}

static ftype type_of(mode_t m)
{
    if (S_ISDIR(m))
        return FT_DIR;
    if (S_ISREG(m))
        return FT_FILE;
    return FT_OTHER;
}

/* Pop the last component of an absolute path in place ("/" stays "/"). */
static void pop_component(char *p)
{
    char *s = strrchr(p, '/');
    if (s == p)
        p[1] = '\0';
    else if (s)
        *s = '\0';
}

int canon_resolve(const char *in, canon *out, cordon_error *err)
{
    *out = (canon){0};
    if (!in || in[0] != '/')
        return err_set(err, CORDON_STAGE_RESOLVE, 0, "'%s' is not an absolute path", in ? in : "");
    if (strlen(in) >= PATH_MAX)
        return err_set(err, CORDON_STAGE_RESOLVE, ENAMETOOLONG, "'%.64s...'", in);

    int ret = 0;
    char resolved[PATH_MAX] = "/";
    /* `rest` holds what is still to walk; symlink targets are spliced in front. */
    char *rest = xstrdup(in);
    char *first_link = NULL;
    int links = 0;
    bool missing = false;
    struct stat st = {0};
    bool have_st = false;

    char *cur = rest;
    while (*cur) {
        while (*cur == '/')
            cur++;
        if (!*cur)
            break;
        char *end = strchr(cur, '/');
        size_t n = end ? (size_t)(end - cur) : strlen(cur);
        char comp[NAME_MAX + 1];
        if (n > NAME_MAX) {
            ret = err_set(err, CORDON_STAGE_RESOLVE, ENAMETOOLONG, "'%s'", in);
            goto fail;
        }
        memcpy(comp, cur, n);
        comp[n] = '\0';
        cur += n;
        have_st = false;

        if (strcmp(comp, ".") == 0)
            continue;
        if (strcmp(comp, "..") == 0) {
            /* Below a missing component (or a file) the kernel would stop with ENOENT
             * (ENOTDIR); popping lexically only guesses what the path will mean. */
            if (missing)
                out->dotdot_after_missing = true;
            pop_component(resolved);
            continue;
        }
        size_t rl = strlen(resolved);
        if (rl + 1 + n >= PATH_MAX) {
            ret = err_set(err, CORDON_STAGE_RESOLVE, ENAMETOOLONG, "'%s'", in);
            goto fail;
        }
        if (rl > 1)
            resolved[rl++] = '/';
        memcpy(resolved + rl, comp, n + 1);
        if (missing)
            continue; /* below a missing component everything is lexical */

        if (lstat(resolved, &st) < 0) {
            if (errno == ENOENT || errno == ENOTDIR) {
                missing = true;
                out->first_missing = xstrdup(resolved);
                continue;
            }
            ret = err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot look at '%s' (resolving '%s')", resolved, in);
            goto fail;
        }
        if (!S_ISLNK(st.st_mode)) {
            have_st = true;
            if (!S_ISDIR(st.st_mode) && *cur) {
                /* a file used as a directory: nothing below it can exist */
                missing = true;
                out->missing_under_file = true;
                out->first_missing = xstrdup(resolved);
            }
            continue;
        }
        if (++links > MAX_SYMLINKS) {
            ret = err_set(err, CORDON_STAGE_RESOLVE, ELOOP, "resolving '%s'", in);
            goto fail;
        }
        char target[PATH_MAX];
        ssize_t tl = readlink(resolved, target, sizeof target - 1);
        if (tl < 0) {
            ret = err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot read symlink '%s'", resolved);
            goto fail;
        }
        target[tl] = '\0';
        if (!first_link)
            first_link = xstrdup(resolved);
        strv_push(&out->crossed, xstrdup(resolved));
        pop_component(resolved);
        if (target[0] == '/')
            strcpy(resolved, "/");
        char *next = xasprintf("%s%s", target, cur); /* cur is "" or starts with "/" */
        free(rest);
        rest = next;
        cur = rest;
    }
    free(rest);
    rest = NULL;

    out->path = xstrdup(resolved);
    out->symlink = first_link;
    if (missing) {
        out->type = FT_MISSING;
        return 0;
    }
    if (!have_st && lstat(resolved, &st) < 0) {
        if (errno == ENOENT) {
            out->type = FT_MISSING;
            return 0;
        }
        int e = errno;
        canon_free(out);
        return err_set(err, CORDON_STAGE_RESOLVE, e, "cannot look at '%s'", resolved);
    }
    out->type = type_of(st.st_mode);
    out->dev = st.st_dev;
    out->ino = st.st_ino;
    return 0;

fail:
    free(rest);
    free(first_link);
    strv_free(&out->crossed);
    free(out->first_missing);
    out->first_missing = NULL;
    return ret;
}
