// SPDX-License-Identifier: Apache-2.0
/* Stage 2: the policy's rule paths resolved on the host.
 *
 * Expands settings syntax (~, <workspace>, <data-root>, relative paths), the base and
 * rules on "/" into concrete rules; resolves every path to its canonical form (canon.c)
 * and records what it is (type, device, inode) so that setup can check it opens the
 * same thing; then decides, per path, the winning rule: at equal path deny > write >
 * read (longest path wins happens naturally: deeper rules are mounted on top). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "policy/rules.h"

/* What the resolver needs to know about the caller; tests fill it by hand. */
typedef struct host_info {
    const char *home;        /* $HOME, or NULL */
    const char *cwd;         /* the current directory (absolute) */
    const char *root;        /* the host root to list for --base host; "/" except in tests */
    const char *runtime_dir; /* $XDG_RUNTIME_DIR, or NULL: hidden under --base host */
} host_info;

int resolve_policy(const struct cordon_policy *p, const host_info *host, resolved *out, cordon_error *err);
