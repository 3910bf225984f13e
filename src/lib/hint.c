// SPDX-License-Identifier: Apache-2.0
/* What the host would run that the sandbox does not show (hint.h). */
#include "lib/hint.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/toolchains.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strv.h"

/* An executable regular file on the host, by its canonical path (NULL: none). */
static char *host_program(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, X_OK) < 0)
        return NULL;
    return realpath(path, NULL);
}

/* The sandbox shows `path` (a host path), and the directory execvp() reaches it through. */
static bool shown(const resolved *r, const char *path, const char *canonical)
{
    if (!resolved_shows(r, canonical))
        return false;
    _cleanup_free_ char *dir = xstrdup(path);
    _cleanup_free_ char *cdir = NULL;
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir)
        *slash = '\0';
    cdir = realpath(dir, NULL);
    return cdir && resolved_shows(r, cdir);
}

/* Why the sandbox does not show path, and the smallest rule that would. */
static char *why_hidden(const resolved *r, const char *path, char **fix)
{
    const rrule *w = resolved_lookup(r, path);
    const char *home = r->home;
    bool in_home = home && strcmp(home, "/") != 0 && path_has_prefix(path, home) && strcmp(path, home) != 0;
    if (in_home) {
        const char *rel = path + strlen(home) + 1;
        size_t len = strcspn(rel, "/");
        /* ~/.local/bin, ~/.local/share/fnm: a directory of ~/.local, not all of it */
        if (len == strlen(".local") && strncmp(rel, ".local", len) == 0 && rel[len] == '/') {
            size_t more = strcspn(rel + len + 1, "/");
            len += 1 + more;
            if (strncmp(rel, ".local/share", len) == 0 && rel[len] == '/')
                len += 1 + strcspn(rel + len + 1, "/");
        }
        bool known = false;
        for (size_t i = 0; i < n_toolchain_dirs; i++)
            known |= strlen(toolchain_dirs[i]) == len && strncmp(rel, toolchain_dirs[i], len) == 0;
        *fix = xasprintf("--allow-ro ~/%.*s%s or --base host", (int)len, rel, known ? ", --toolchains" : ",");
    } else {
        /* the first two components: /opt/go, /snap/bin */
        const char *p = path + 1;
        size_t len = strcspn(p, "/");
        if (p[len] == '/' && strchr(p + len + 1, '/'))
            len += 1 + strcspn(p + len + 1, "/");
        *fix = xasprintf("--allow-ro /%.*s or --base host", (int)len, p);
    }
    if (w && w->access == CORDON_ACCESS_NONE)
        return xasprintf("hidden by %s", w->source);
    if (in_home && (!w || !path_has_prefix(w->path, home)))
        return xstrdup("the home inside is a private, empty one");
    if (!w)
        return xasprintf("no rule shows it: the base %s shows only what it lists (see `cordon explain`)",
                         r->base == CORDON_BASE_EMPTY ? "empty" : "system");
    return xasprintf("under %s", w->source);
}

void cmd_hint_make(const resolved *r, const plan *p, char *const env[], const char *cmd, cmd_hint *h)
{
    *h = (cmd_hint){0};
    if (!cmd || !cmd[0] || p->isolation == CORDON_ISOLATION_LANDLOCK)
        return;
    _cleanup_free_ char *host = NULL;      /* what the host's PATH finds, as execvp() */
    _cleanup_free_ char *host_path = NULL; /* ... by the name execvp() tries */
    _cleanup_free_ char *inside = NULL;    /* the first the sandbox shows */
    if (strchr(cmd, '/')) {
        host_path = cmd[0] == '/' ? path_normalize(cmd) : path_join(p->cwd ? p->cwd : "/", cmd);
        if (!host_path)
            return;
        host = host_program(host_path);
        if (!host || shown(r, host_path, host))
            return;
    } else {
        const char *path = "/bin:/usr/bin"; /* glibc's default */
        for (char *const *e = env; e && *e; e++)
            if (strncmp(*e, "PATH=", 5) == 0)
                path = *e + 5;
        while (*path && !inside) {
            size_t len = strcspn(path, ":");
            if (len > 0 && path[0] == '/') {
                _cleanup_free_ char *f = xasprintf("%.*s/%s", (int)len, path, cmd);
                _cleanup_free_ char *c = host_program(f);
                if (c && shown(r, f, c)) {
                    if (!host)
                        return; /* the host's own is shown: nothing to say */
                    inside = steal_pointer(&f);
                } else if (c && !host) {
                    host = steal_pointer(&c);
                    host_path = steal_pointer(&f);
                }
            }
            path += len + (path[len] == ':');
        }
        if (!host)
            return;
    }
    _cleanup_free_ char *fix = NULL;
    _cleanup_free_ char *why = why_hidden(r, host, &fix);
    _cleanup_free_ char *what = strcmp(host, host_path) == 0 ? xstrdup(host) : xasprintf("%s (%s)", host_path, host);
    if (inside)
        h->warning = xasprintf("%s is %s on the host, which the sandbox does not show (%s): it runs %s instead; "
                               "to run the host's, show it: %s",
                               cmd, what, why, inside, fix);
    else
        h->missing =
            xasprintf("on the host it is %s, which the sandbox does not show (%s); show it: %s", what, why, fix);
}

void cmd_hint_free(cmd_hint *h)
{
    free(h->warning);
    free(h->missing);
    *h = (cmd_hint){0};
}
