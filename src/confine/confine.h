/* Stage 5, as one step for the supervisor: what confines the command beyond its
 * namespaces and capabilities (Landlock, then seccomp last), prepared by the parent
 * before clone3 and applied by the sandbox's processes without allocating. */
#pragma once
#include <stdbool.h>
#include <stdio.h>

#include "confine/landlock.h"
#include "confine/seccomp.h"
#include "plan/plan.h"

typedef struct confine_prep {
    bool enabled;             /* false only in a -Dconfine=false build (benchmarks) */
    unsigned seccomp_mode;    /* sc_mode bits */
    const sc_program *seccomp;
    landlock_prep landlock;
} confine_prep;

/* In the parent. */
void confine_prepare(confine_prep *c, const plan *p);
void confine_prep_free(confine_prep *c);

/* The command's process, after pivot_root, capabilities and no_new_privs, right before
 * exec: Landlock, then the seccomp filter. */
int confine_command(const confine_prep *c, cordon_error *err);
/* PID 1, once the command started: the seccomp filter. */
int confine_reaper(const confine_prep *c, cordon_error *err);

/* `cordon explain`: the confinement section. */
void confine_explain(FILE *out, const plan *p);
