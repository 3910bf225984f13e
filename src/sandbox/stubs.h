/* Stubs: holding a missing name in a writable host directory for the length of a run.
 *
 * Some paths must not be created by the command although their parent is writable:
 * .codex, .cordon, .agents, .git/hooks where missing, a --deny of a path that does not
 * exist yet.  A mount can only cover a name that exists, so cordon creates an empty
 * directory there (the stub), mounts an empty read-only directory over it inside, and
 * removes the stub when the run is over — also when cordon is killed with SIGKILL (a
 * janitor process outside the sandbox does it then).
 *
 * A stub is an empty directory of mode 0400 (nothing can be made in it). Every run
 * that uses it holds a shared flock() on it for as long as it runs — its janitor keeps
 * the lock if cordon is killed — and removes it only if it can turn that lock into an
 * exclusive one, that is when no other run holds it: concurrent runs never remove each
 * other's stubs.  A directory that appeared meanwhile and is not an empty 0400 one (a
 * directory a person made) is hidden all the same but never * removed. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "plan/plan.h"

typedef struct stub {
    int parent_fd; /* the parent directory, opened without following symlinks */
    int fd;        /* the stub directory */
    char name[256];
    bool ours; /* a stub (ours, maybe shared), as opposed to a directory that appeared */
    bool held; /* false: the caller may not create it (EACCES, EROFS), so neither can the
                * command: nothing to hold, nothing to mount */
} stub;

typedef struct stubs {
    stub *v;
    size_t n;
    pid_t janitor;
    int janitor_fd; /* unused: -1 */
} stubs;

/* Create (or join) every stub the plan asks for; status[i] is 'y' or 'n' (held) for
 * the i-th stub op in plan order. */
int stubs_create(const plan *p, stubs *s, char *status, cordon_error *err);
/* A stub left by a run whose every process, janitor included, was killed at once (a
 * cgroup kill): an empty mode-0400 directory of the caller's that no run holds.  Remove
 * it and return true, so that this run holds the name anew and cleans up after itself.
 * Called while resolving rules, before anything else touches the host. */
bool stubs_reap_stale(const char *path);

/* After clone3: start the janitor, which waits for PID 1 (pidfd) to end and then
 * releases the stubs again — a no-op when cordon already did, the cleanup when cordon
 * was killed. */
int stubs_start_janitor(stubs *s, int pidfd, cordon_error *err);

/* The same janitor, started before the first stub is made, so that cordon killed at
 * any moment leaves none behind (a janitor forked after stubs_create() misses a kill
 * between the first mkdir and the fork).  cordon hands it the stubs once they are made
 * (stubs_janitor_hand_over); if cordon dies before, the janitor removes what cordon
 * made of the plan's stubs, as stubs_reap_stale() does. */
typedef struct stubs_janitor {
    pid_t pid;
    int sock; /* cordon's end of the hand-over socket */
} stubs_janitor;
/* After clone3, before stubs_create(): fork the janitor (nothing when the plan has no
 * stub).  j must start as {-1, -1}. */
int stubs_janitor_start(const plan *p, int pidfd, stubs_janitor *j, cordon_error *err);
/* After stubs_create(): pass the stubs' descriptors (and so their locks) to the
 * janitor, which becomes s's janitor. */
int stubs_janitor_hand_over(stubs_janitor *j, stubs *s, cordon_error *err);
/* stubs_create() failed or was never reached: let the janitor clean up and reap it. */
void stubs_janitor_abandon(stubs_janitor *j);
/* Once the sandbox's processes are gone: remove what is ours; reap the janitor when
 * wait_janitor (a caller that exits right after leaves it to finish on its own). */
void stubs_release(stubs *s, bool wait_janitor);
