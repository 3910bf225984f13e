#pragma once
#include <stdio.h>

#include "plan/plan.h"
#include "util/strv.h"

/* Human-readable: the policy, the resolved rules, the plan, the environment. */
void explain_print(FILE *out, const resolved *r, const plan *p, const strv *env, char *const argv[]);
