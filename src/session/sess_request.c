// SPDX-License-Identifier: Apache-2.0
/* The pure decoder of a session command's request (sess_request.h). */
#include "session/sess_request.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "session/wire.h"

#define MALFORMED     "malformed request to the session"
#define MALFORMED_ENV "malformed environment in the request to the session"

/* The next NUL-terminated string of the request, or NULL. */
static const char *next_str(const char **p, const char *end)
{
    const char *s = *p;
    const char *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
    if (!nul)
        return NULL;
    *p = nul + 1;
    return s;
}

/* Does env entry e (NAME=...) name the same variable as one of v[0..n)? */
static bool env_overridden(const char *e, char *const *v, size_t n)
{
    const char *eq = strchr(e, '=');
    size_t len = eq ? (size_t)(eq - e) : strlen(e);
    for (size_t i = 0; i < n; i++)
        if (strncmp(v[i], e, len) == 0 && v[i][len] == '=')
            return true;
    return false;
}

static int fail(const char **why, const char *text, int errnum)
{
    *why = text;
    return -errnum;
}

/* The fixed part: its magic, version, known flags (a detached command is kept and has
 * no terminal), at least one argument. */
static bool header_ok(const sess_req *rq)
{
    return rq->magic == SESS_MAGIC && rq->version == SESS_VERSION && !(rq->flags & ~SESS_REQ_FLAGS) && rq->argc >= 1 &&
           (!(rq->flags & SESS_REQ_DETACH) || (rq->flags & (SESS_REQ_KEEP | SESS_REQ_TTY)) == SESS_REQ_KEEP);
}

/* The request's variables (each NAME=..., NAME not empty) over the session's, in envp. */
static int decode_env(const char **p, const char *end, const sess_req *rq, char *const *session_env, size_t envc0,
                      char **envp, const char **why)
{
    char **req_env = envp + envc0;
    for (uint32_t k = 0; k < rq->envc; k++) {
        const char *e = next_str(p, end);
        if (!e || !strchr(e, '=') || e[0] == '=')
            return fail(why, MALFORMED_ENV, EINVAL);
        req_env[k] = (char *)e;
    }
    size_t ne = 0;
    for (size_t k = 0; k < envc0; k++)
        if (!env_overridden(session_env[k], req_env, rq->envc))
            envp[ne++] = session_env[k];
    memmove(envp + ne, req_env, rq->envc * sizeof *envp);
    ne += rq->envc;
    envp[ne] = NULL;
    return 0;
}

int sess_req_decode(const char *buf, size_t len, char *const *session_env, char **ptrs, size_t n_ptrs,
                    sess_cmd_req *out, const char **why)
{
    sess_req rq;
    if (len < sizeof rq)
        return fail(why, MALFORMED, EINVAL);
    memcpy(&rq, buf, sizeof rq); /* (buf need not be aligned for it) */
    if (!header_ok(&rq))
        return fail(why, MALFORMED, EINVAL);
    const char *p = buf + sizeof rq, *end = buf + len;
    const char *cwd = next_str(&p, end);
    size_t envc0 = 0;
    while (session_env[envc0])
        envc0++;
    /* (argc and envc are 32 bits: their sum with envc0 does not overflow a size_t) */
    if (!cwd || (size_t)rq.argc + rq.envc + envc0 + 2 > n_ptrs)
        return fail(why, MALFORMED, E2BIG);
    char **argv = ptrs, **envp = ptrs + rq.argc + 1;
    for (uint32_t k = 0; k < rq.argc; k++)
        if (!(argv[k] = (char *)next_str(&p, end)))
            return fail(why, MALFORMED, EINVAL);
    argv[rq.argc] = NULL;
    int r = decode_env(&p, end, &rq, session_env, envc0, envp, why);
    if (r < 0)
        return r;
    if (!argv[0][0] || (cwd[0] && cwd[0] != '/'))
        return fail(why, MALFORMED, EINVAL);
    *out = (sess_cmd_req){.flags = rq.flags,
                          .umask = (mode_t)(rq.umask & 0777),
                          .sigmask = rq.sigmask,
                          .timeout_ms = rq.timeout_ms,
                          .ws_row = rq.ws_row,
                          .ws_col = rq.ws_col,
                          .ws_xpixel = rq.ws_xpixel,
                          .ws_ypixel = rq.ws_ypixel,
                          .cwd = cwd[0] ? cwd : NULL,
                          .argv = argv,
                          .envp = envp};
    return 0;
}
