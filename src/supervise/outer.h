/* Stage 6: cordon's side of a run: clone the sandbox, forward signals, enforce the
 * timeout, collect what the sandbox reports, and turn it into a cordon_result. */
#pragma once
#include "plan/plan.h"

int outer_run(const plan *p, char *const argv[], char **envp, double timeout,
              cordon_result *result, cordon_error *err);
