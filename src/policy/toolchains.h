// SPDX-License-Identifier: Apache-2.0
/* --toolchains (doc/guide-run.md, "Toolchains in the home"): the usual per-user tool
 * directories of the home shown read-only, and the hint when a command the host has is
 * not in the view. */
#pragma once
#include <stddef.h>

#include "policy/rules.h"

/* The directories, relative to the home, that --toolchains shows where they exist. */
extern const char *const toolchain_dirs[];
extern const size_t n_toolchain_dirs;

/* Add a read-only rule (source "--toolchains") for each of them that is a directory in
 * the canonical home r->home; nothing without a home.  0, or -1 with err set. */
int toolchains_add(resolved *r, cordon_error *err);
