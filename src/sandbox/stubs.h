/* Stubs: holding a missing name in a writable host directory for the length of a run.
 *
 * Some paths must not be created by the command although their parent is writable:
 * .codex, .cordon, .agents, .git/hooks where missing, a --deny of a path that does not
 * exist yet.  A mount can only cover a name that exists, so cordon creates an empty
 * directory there (the stub), mounts an empty read-only directory over it inside, and
 * removes the stub when the run is over — also when cordon is killed with SIGKILL (a
 * janitor process outside the sandbox does it then).
 *
 * Ownership lives in the stub itself: each run using it keeps a marker file
 * ".cordon-stub.PID.STARTTIME" inside (hidden from the command by the mount over it) and
 * takes flock() on the directory to change it.  A run removes its own marker and removes
 * the directory only when no live run's marker remains and nothing else is in it, so
 * concurrent runs never remove each other's stubs, and a directory a person made is never
 * removed. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "plan/plan.h"

typedef struct stub {
    int parent_fd; /* the parent directory, opened without following symlinks */
    int fd;        /* the stub directory */
    char name[256];
    char marker[64];
    bool ours; /* a stub (ours, maybe shared), as opposed to a directory that appeared */
} stub;

typedef struct stubs {
    stub *v;
    size_t n;
    pid_t janitor;
    int janitor_fd; /* write end: one byte means "released normally", EOF means cordon died */
} stubs;

/* Before clone3: create (or join) every stub the plan asks for. */
int stubs_create(const plan *p, stubs *s, cordon_error *err);
/* After clone3: start the janitor that cleans up if cordon dies (pidfd: PID 1's). */
int stubs_start_janitor(stubs *s, int pidfd, cordon_error *err);
/* Once the sandbox's processes are gone: remove what is ours, stop the janitor. */
void stubs_release(stubs *s);
