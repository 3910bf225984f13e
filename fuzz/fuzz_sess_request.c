// SPDX-License-Identifier: Apache-2.0
/* libFuzzer harness for a session's request decoder (src/session/sess_request.h), which
 * PID 1 runs on the bytes another process sent.  The input is the request as it arrives.
 *
 * Invariants beyond the sanitizers':
 *   - an accepted request's argv and the request's own variables point into the input,
 *     each NUL-ended there; argv[0] is not empty; cwd is NULL or absolute;
 *   - envp holds each of the session's variables unless the request names it, then every
 *     variable of the request, and ends within the pointer array;
 *   - a refused request says why, with -EINVAL or -E2BIG. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/sess_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_PTRS 512

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_sess_request: %s\n", what);
    abort();
}

static void check_in(const char *p, const char *buf, size_t len, const char *what)
{
    if (p < buf || p >= buf + len || !memchr(p, '\0', (size_t)(buf + len - p)))
        fail(what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char env_a[] = "PATH=/usr/bin", env_b[] = "HOME=/h", env_c[] = "A=session";
    char *session_env[] = {env_a, env_b, env_c, NULL};
    /* a copy of its own, so that a read past the input is an ASan error */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    char **ptrs = malloc(N_PTRS * sizeof *ptrs);
    if (!ptrs) {
        free(buf);
        return 0;
    }
    sess_cmd_req out;
    const char *why = NULL;
    int r = sess_req_decode(buf, size, session_env, ptrs, N_PTRS, &out, &why);
    if (r < 0) {
        if ((r != -EINVAL && r != -E2BIG) || !why || !*why)
            fail("refused without a reason");
    } else if (r == 0) {
        if (!out.argv || !out.argv[0] || !out.argv[0][0])
            fail("accepted an empty command");
        if (out.cwd && (out.cwd[0] != '/'))
            fail("accepted a relative working directory");
        if (out.cwd)
            check_in(out.cwd, buf, size, "cwd outside the request");
        size_t n = 0;
        for (; out.argv[n]; n++)
            check_in(out.argv[n], buf, size, "an argument outside the request");
        if (out.envp < ptrs || out.envp >= ptrs + N_PTRS)
            fail("envp outside the pointer array");
        size_t ne = 0;
        for (; out.envp[ne]; ne++) {
            if (out.envp + ne >= ptrs + N_PTRS - 1)
                fail("envp runs past the pointer array");
            const char *e = out.envp[ne];
            bool session = e == env_a || e == env_b || e == env_c;
            if (!session)
                check_in(e, buf, size, "a variable outside the request");
            if (!strchr(e, '=') || e[0] == '=')
                fail("accepted a variable without a name");
        }
        if (out.umask & ~0777u)
            fail("umask beyond the permission bits");
    } else {
        fail("an unknown return value");
    }
    free(ptrs);
    free(buf);
    return 0;
}
