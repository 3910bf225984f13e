// SPDX-License-Identifier: Apache-2.0
/* What every entry point that runs or explains does first: the policy resolved on the
 * host and compiled into a plan, the isolation chosen, the environment and the network
 * put into the plan, and the plan sealed (plan.h, plan_seal): what a run executes is
 * exactly this plan, and `cordon explain --json` prints it.  Pure except for reading the
 * host (resolve) and, for --isolation auto, one short probe. */
#pragma once
#include <stdio.h>

#include "confine/llonly.h"
#include "plan/plan.h"
#include "policy/resolve.h"
#include "util/strv.h"

typedef struct prepared {
    resolved r;
    plan p;                    /* sealed: nothing changes it */
    const char *isolation_why; /* --isolation auto chose Landlock: why (static), else NULL */
} prepared;

int prepare(const cordon_policy *pol, prepared *x, cordon_error *err);
void prepared_free(prepared *x);
/* For a run: also what --isolation landlock needs (the ruleset, the private HOME and
 * TMPDIR, made before the plan is sealed, so that its environment points there); ll is
 * freed by llonly_free() after the run (on failure here: already freed). */
int prepare_run(const cordon_policy *pol, prepared *x, llonly *ll, cordon_error *err);
/* `cordon explain --json`: the sealed plan as data, with what the host adds (lib/api.c). */
int prepared_json(const cordon_policy *pol, const prepared *x, char *const argv[], FILE *out, cordon_error *err);
/* CORDON_DEBUG_PLAN_JSON=FILE (HACKING.md): a run writes the plan it executes there, as
 * `cordon explain --json` prints it, so that a test can compare the two.  0 when unset. */
int prepared_dump(const cordon_policy *pol, const prepared *x, char *const argv[], cordon_error *err);
