// SPDX-License-Identifier: Apache-2.0
/* Stage 5: confinement of the command: every capability dropped (the bounding and
 * ambient sets too, so that not even an exec as uid 0 gets one back) and
 * no_new_privs set. */
#pragma once
#include "cordon.h"

#include <stdint.h>

int caps_drop_all(cordon_error *err);
/* The same, keeping `permitted` (1 << CAP_*) in the permitted set only (not effective):
 * the supervisor's CAP_SYS_PTRACE, raised for its reads of the command's memory. */
int caps_drop_all_but(uint64_t permitted, cordon_error *err);
/* The command's capabilities: none but `keep` (1 << CAP_*, policy_set_keep_caps), which
 * stays effective, inheritable and ambient across exec; the securebits locked, so that
 * root gets no other back and no ambient capability can be raised. */
int caps_keep_ambient(uint64_t keep, cordon_error *err);
int set_no_new_privs(cordon_error *err);
