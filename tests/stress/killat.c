// SPDX-License-Identifier: Apache-2.0
/* killat N COMMAND [ARG...]: run COMMAND, and SIGKILL it on entry to its Nth system call
 * after its exec (counted in its main thread only: the processes it starts are not
 * traced, so they run at their own pace, as they would). Exits 0 when it killed the
 * command there, 3 when the command ended before making N system calls, 2 on a usage or
 * tracing error.
 *
 * For the kill -9 sweep of tests/stress/test_faults.sh: N = 1, 2, ... puts the kill at
 * every point of cordon's own code, deterministically, where random delays would only
 * sample them (a window of a few microseconds between two system calls is hit once in
 * thousands of random trials, and every time here). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: killat N COMMAND [ARG...]\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
            _exit(126);
        raise(SIGSTOP);
        execvp(argv[2], argv + 2);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st))
        return 2;
    /* TRACESYSGOOD tells syscall stops from signals; EXITKILL: never leave it running */
    ptrace(PTRACE_SETOPTIONS, pid, NULL,
           (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC));
    long count = 0;
    int entering = 1, execd = 0, sig = 0;
    for (;;) {
        if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) < 0)
            return 2;
        sig = 0;
        if (waitpid(pid, &st, 0) < 0)
            return 2;
        if (WIFEXITED(st) || WIFSIGNALED(st))
            return 3;
        if (!WIFSTOPPED(st))
            continue;
        int s = WSTOPSIG(st);
        if (s == (SIGTRAP | 0x80)) {
            if (entering && execd && ++count == n) {
                kill(pid, SIGKILL);
                waitpid(pid, &st, 0);
                return 0;
            }
            entering = !entering;
        } else if (s == SIGTRAP && (st >> 16) == PTRACE_EVENT_EXEC) {
            execd = 1; /* count from the exec on; the next stop ends execve */
            entering = 0;
        } else if (s != SIGTRAP && s != SIGSTOP) {
            sig = s; /* deliver the command's own signals */
        }
    }
}
