// SPDX-License-Identifier: Apache-2.0
/* keys: the kernel keyrings, which are not namespaced by a mount or PID namespace.
 *
 *   keys host DESC SECRET -- COMMAND...
 *       (on the host) join a new session keyring, add a "user" key DESC=SECRET to it and
 *       run COMMAND in that session, as a login session with a Kerberos ticket or an
 *       fscrypt key would; exits with COMMAND's status
 *   keys attack DESC SECRET
 *       read the session and user keyrings, search them for DESC, request_key it, read
 *       what was found; "secret FOUND" or "secret absent" at the end
 */
#include "esc.h"

#include <linux/keyctl.h>
#include <sys/wait.h>

static long keyctl(int op, unsigned long a, unsigned long b, unsigned long c, unsigned long d)
{
    return syscall(SYS_keyctl, op, a, b, c, d);
}

static bool found;
static const char *secret;

static void read_key(const char *label, long id)
{
    char buf[4096 + 1];
    long n = keyctl(KEYCTL_READ, (unsigned long)id, (unsigned long)buf, 4096, 0);
    report(label, n);
    if (n > 0 && n < (long)sizeof buf) {
        buf[n] = '\0';
        if (memmem(buf, (size_t)n, secret, strlen(secret)))
            found = true;
    }
}

int main(int argc, char **argv)
{
    if (argc >= 6 && !strcmp(argv[1], "host") && !strcmp(argv[4], "--")) {
        if (keyctl(KEYCTL_JOIN_SESSION_KEYRING, (unsigned long)"cordon-escape-test", 0, 0, 0) < 0) {
            perror("keys: KEYCTL_JOIN_SESSION_KEYRING");
            return 125;
        }
        if (syscall(SYS_add_key, "user", argv[2], argv[3], strlen(argv[3]), KEY_SPEC_SESSION_KEYRING) < 0) {
            perror("keys: add_key");
            return 125;
        }
        pid_t pid = fork();
        if (pid == 0) {
            execvp(argv[5], argv + 5);
            _exit(127);
        }
        int st;
        waitpid(pid, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    if (argc != 4 || strcmp(argv[1], "attack")) {
        fprintf(stderr, "usage: keys host DESC SECRET -- COMMAND... | keys attack DESC SECRET\n");
        return 2;
    }
    const char *desc = argv[2];
    secret = argv[3];
    report("get_session_keyring", keyctl(KEYCTL_GET_KEYRING_ID, (unsigned long)KEY_SPEC_SESSION_KEYRING, 0, 0, 0));
    read_key("read_session_keyring", KEY_SPEC_SESSION_KEYRING);
    read_key("read_user_keyring", KEY_SPEC_USER_KEYRING);
    read_key("read_user_session_keyring", KEY_SPEC_USER_SESSION_KEYRING);
    long k =
        keyctl(KEYCTL_SEARCH, (unsigned long)KEY_SPEC_SESSION_KEYRING, (unsigned long)"user", (unsigned long)desc, 0);
    report("search_session", k);
    if (k >= 0)
        read_key("read_found_in_session", k);
    k = keyctl(KEYCTL_SEARCH, (unsigned long)KEY_SPEC_USER_KEYRING, (unsigned long)"user", (unsigned long)desc, 0);
    report("search_user", k);
    if (k >= 0)
        read_key("read_found_in_user", k);
    k = syscall(SYS_request_key, "user", desc, NULL, 0);
    report("request_key", k);
    if (k >= 0)
        read_key("read_requested", k);
    report("add_key", syscall(SYS_add_key, "user", "cordon-escape-inside", "x", 1, KEY_SPEC_SESSION_KEYRING));
    printf("secret %s\n", found ? "FOUND" : "absent");
    return 0;
}
