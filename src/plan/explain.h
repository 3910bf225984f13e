// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <jansson.h>
#include <stdio.h>

#include "plan/plan.h"
#include "policy/policy.h"
#include "util/strv.h"

/* Human-readable: the policy, the resolved rules, the plan, the environment. */
void explain_print(FILE *out, const struct cordon_policy *pol, const resolved *r, const plan *p, char *const argv[]);
/* The same as data: {"policy", "rules", "globs", "plan", "warnings", "environment",
 * "command"} (lib/api.c adds the confinement, the limits and the home overlay). */
json_t *explain_json(const struct cordon_policy *pol, const resolved *r, const plan *p, char *const argv[]);
