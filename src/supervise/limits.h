// SPDX-License-Identifier: Apache-2.0
/* Resource limits (--limit-pids, --limit-memory, --limit-cpu): how a run enforces them.
 *
 * In order of preference, decided once per run before clone3:
 *   cgroup2  the caller has a delegated cgroup v2: cordon makes a cgroup of the run's own
 *            under it (pids.max, memory.max; CPU seconds watched through cpu.stat) with a
 *            leaf below it, and PID 1 is cloned into the leaf (CLONE_INTO_CGROUP); the
 *            sandbox's cgroup namespace is rooted at the leaf, so nothing inside can reach
 *            the files that hold the limits;
 *   cgroup1  the caller can write its own cgroup v1 directories (root on a hybrid host):
 *            the same with pids.max, memory.limit_in_bytes and cpuacct.usage; PID 1 joins
 *            them itself before it starts anything;
 *   rlimit   RLIMIT_NPROC, RLIMIT_AS and RLIMIT_CPU set in the command's process before
 *            exec: per process (memory, CPU) and per uid in the sandbox's user namespace
 *            (processes, Linux 5.14 and later), and RLIMIT_NPROC does not bind uid 0: as
 *            root, --limit-pids without a cgroup fails closed instead.
 * A cgroup of the run's own is removed after the run, and by a janitor process when
 * cordon itself is killed.  Everything PID 1 and the command use is prepared here, in
 * the parent: after clone3 they only make system calls. */
#pragma once
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "policy/policy.h"

typedef enum limits_kind {
    LIMITS_NONE = 0,
    LIMITS_CGROUP2,
    LIMITS_CGROUP1,
    LIMITS_RLIMIT,
} limits_kind;

#define LIMITS_DIRS 4 /* cgroups one run makes: v2 run + leaf, or one per v1 hierarchy */

typedef struct limits_dir {
    int parent_fd; /* the caller's cgroup directory the run's one was made in */
    char name[96]; /* relative to parent_fd ("cordon-123-ab12cd34" or ".../sandbox") */
} limits_dir;

typedef struct limits_run {
    limits_kind kind;
    limit_values want;
    cordon_error why;             /* LIMITS_RLIMIT: why no cgroup could be used */
    char where[512];              /* the cgroup(s) made, for messages */
    limits_dir dirs[LIMITS_DIRS]; /* in removal order: children first */
    size_t n_dirs;
    int into_fd;           /* cgroup2: the leaf, for CLONE_INTO_CGROUP; else -1 */
    int join_fd[LIMITS_N]; /* cgroup1: cgroup.procs that PID 1 writes "0" to; -1 */
    int dir_fd[LIMITS_N];  /* the cgroup holding each limit: its *.events tell it was hit,
                           * cpu.stat or cpuacct.usage the CPU time used; -1 */
    long ncpu;             /* how fast CPU time can grow, for the next look at cpu_fd */
    int cpu_fd;            /* PID 1's open cpu.stat / cpuacct.usage (limits_enter), or -1 */
    pid_t janitor;
    int janitor_wfd;   /* closing it tells the janitor to remove the cgroups */
    bool cpu_exceeded; /* cordon killed the sandbox for its CPU time */
    unsigned hit;      /* 1u << cordon_limit */
} limits_run;

/* Before clone3: choose the mechanism for `want` and make the cgroups.  Returns -1 only
 * when a limit cannot be enforced at all (--limit-pids as root without a cgroup). */
int limits_prepare(limits_run *l, const limit_values *want, cordon_error *err);
/* clone3 into l->into_fd failed: drop the cgroups and use rlimits instead. */
int limits_fallback(limits_run *l, const cordon_error *why, cordon_error *err);
/* In PID 1, first thing: join the cgroup1 directories, open the CPU-time file PID 1
 * watches (cpu_fd), and (any cgroup) root a new cgroup namespace at the run's cgroup, so
 * the command cannot see or write its limits. */
int limits_enter(limits_run *l, cordon_error *err);
/* In the command's process, just before exec: the rlimits (LIMITS_RLIMIT). */
int limits_apply_rlimits(const limits_run *l, cordon_error *err);
/* The outer loop's CPU watch: milliseconds until CPU time should be looked at again
 * (-1: never), and whether the CPU limit is used up (then kill the sandbox). */
int limits_next_check_ms(const limits_run *l);
bool limits_cpu_used_up(limits_run *l);
/* In PID 1, under rlimits with a process limit: count the sandbox's processes (proc_fd:
 * its procfs) and note the limit hit when they reached it (nothing else would tell). */
void limits_sample_pids(limits_run *l, int proc_fd);
/* Once the command and what it left are dead: note which limits were hit. */
void limits_collect(limits_run *l);
/* After the run: note which limits were hit, remove the cgroups (the janitor finishes
 * what cannot be removed yet), close everything; reap the janitor when `wait`. */
void limits_finish(limits_run *l, bool wait);
/* "cgroup2", "cgroup1", "rlimit", or NULL for LIMITS_NONE. */
const char *limits_kind_name(limits_kind k);

/* For `cordon check`: how limits on processes, memory and CPU together would be
 * enforced here (LIMITS_CGROUP2, _CGROUP1 or _RLIMIT), where (the cgroup(s) a run's own
 * would be made under), or why no cgroup can be used.  Looks only; makes nothing. */
limits_kind limits_probe(char *where, size_t n, cordon_error *why);
/* For `cordon explain`: each limit and how it would be enforced. */
void limits_explain(FILE *out, const limit_values *want);
