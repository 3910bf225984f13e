// SPDX-License-Identifier: Apache-2.0
/* Stage 5, as two steps for the supervisor: what confines the command beyond its
 * namespaces and capabilities, prepared by the parent before clone3 and applied by the
 * sandbox's processes without allocating.  PID 1 installs the seccomp filter once the
 * root is built, right before it starts the command, which inherits it (one filter
 * object: the kernel compiles and checks it once per run, not twice); the command's
 * process applies Landlock last, after its capabilities and no_new_privs, before exec. */
#pragma once
#include <stdbool.h>
#include <stdio.h>

#include "confine/landlock.h"
#include "confine/seccomp.h"
#include "plan/plan.h"

typedef struct confine_prep {
    bool enabled;          /* false only in a -Dconfine=false build (benchmarks) */
    unsigned seccomp_mode; /* sc_mode bits */
    const sc_program *seccomp;
    landlock_prep landlock;
} confine_prep;

/* In the parent. */
void confine_prepare(confine_prep *c, const plan *p);
void confine_prep_free(confine_prep *c);

/* PID 1, after pivot_root, right before it starts the command: the seccomp filter. */
int confine_filter(const confine_prep *c, cordon_error *err);
/* The command's process, after its capabilities and no_new_privs, right before exec:
 * Landlock. */
int confine_command(const confine_prep *c, cordon_error *err);

/* `cordon explain`: the confinement section. */
/* verbose: every call the seccomp filter refuses (else how many, and where to look). */
void confine_explain(FILE *out, const plan *p, bool verbose);
/* The same as a JSON object: capabilities, nesting, seccomp (its instructions and every
 * refused call), landlock (its description and rules). */
struct json_t;
struct json_t *confine_json(const plan *p);
