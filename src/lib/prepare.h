/* What every entry point that runs or explains does first: the policy resolved on the
 * host and compiled into a plan, the isolation chosen, the environment built.  Pure
 * except for reading the host (resolve) and, for --isolation auto, one short probe. */
#pragma once
#include "confine/llonly.h"
#include "plan/plan.h"
#include "policy/resolve.h"
#include "util/strv.h"

typedef struct prepared {
    resolved r;
    plan p;
    strv env;
    const char *isolation_why; /* --isolation auto chose Landlock: why (static), else NULL */
} prepared;

int prepare(const cordon_policy *pol, prepared *x, cordon_error *err);
void prepared_free(prepared *x);
/* For a run: also what --isolation landlock needs (the ruleset, the private HOME and
 * TMPDIR, the environment pointing there); ll is freed by llonly_free() after the run. */
int prepare_run(const cordon_policy *pol, prepared *x, llonly *ll, cordon_error *err);
