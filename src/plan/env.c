// SPDX-License-Identifier: Apache-2.0
#include "plan/env.h"

#include <stdlib.h>
#include <string.h>

static const char *const passlist[] = {"PATH", "TERM", "LANG", "TZ", "USER", "LOGNAME"};

bool env_in_passlist(const char *name, size_t len)
{
    if (len > 3 && strncmp(name, "LC_", 3) == 0)
        return true;
    for (size_t i = 0; i < sizeof passlist / sizeof *passlist; i++)
        if (strlen(passlist[i]) == len && strncmp(passlist[i], name, len) == 0)
            return true;
    return false;
}

static const char *lookup(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; env && *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

static void set(strv *e, const char *name, const char *value)
{
    size_t n = strlen(name);
    char *entry = xasprintf("%s=%s", name, value);
    for (size_t i = 0; i < e->n; i++) {
        if (strncmp(e->v[i], name, n) == 0 && e->v[i][n] == '=') {
            free(e->v[i]);
            e->v[i] = entry;
            return;
        }
    }
    strv_push(e, entry);
}

strv env_build(const struct cordon_policy *p, char *const *host_env, const char *home, const char *tmpdir)
{
    strv e = {0};
    strv_push(&e, NULL);
    e.n = 0; /* an empty vector is still NULL-terminated */
    if (!p->clear_env) {
        for (char *const *v = host_env; v && *v; v++) {
            const char *eq = strchr(*v, '=');
            if (eq && env_in_passlist(*v, (size_t)(eq - *v)))
                strv_push(&e, xstrdup(*v));
        }
    }
    bool home_set = false, tmpdir_set = false;
    for (size_t i = 0; i < p->n_env; i++) {
        const env_op *op = &p->env[i];
        const char *value = op->kind == ENV_SET ? op->value : lookup(host_env, op->name);
        if (!value)
            continue;
        set(&e, op->name, value);
        home_set |= strcmp(op->name, "HOME") == 0;
        tmpdir_set |= strcmp(op->name, "TMPDIR") == 0;
    }
    if (!home_set && home)
        set(&e, "HOME", home);
    if (!tmpdir_set && tmpdir)
        set(&e, "TMPDIR", tmpdir);
    return e;
}
