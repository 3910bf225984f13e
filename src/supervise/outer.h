/* Stage 6: cordon's side of a run: clone the sandbox, forward signals, enforce the
 * timeout, collect what the sandbox reports, and turn it into a cordon_result. */
#pragma once
#include "plan/plan.h"

#include <stdbool.h>

/* wait_teardown false: return once PID 1 reports that the command and every process
 * it left are dead, without waiting for PID 1 itself (CORDON_RUN_EXITING).
 * ll_ruleset_fd: with p->isolation landlock, the ruleset confine/llonly.c built. */
int outer_run(const plan *p, char *const argv[], char **envp, double timeout, bool wait_teardown,
              int ll_ruleset_fd, cordon_result *result, cordon_error *err);
