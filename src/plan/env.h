// SPDX-License-Identifier: Apache-2.0
/* The command's environment: a small passlist of the caller's (unless --clear-env),
 * then --keep-env and --env in order, then HOME and TMPDIR pointing at the private
 * directories (unless --env set them).  Pure. */
#pragma once
#include "policy/policy.h"
#include "util/strv.h"

/* Returns a NULL-terminated vector of "NAME=VALUE" strings. */
strv env_build(const struct cordon_policy *p, char *const *host_env, const char *home, const char *tmpdir);
/* Does NAME belong to the default passlist? */
bool env_in_passlist(const char *name, size_t len);
