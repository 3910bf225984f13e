// SPDX-License-Identifier: Apache-2.0
/* The minimal /dev (plan.h's plan_dev_nodes bound from the host, a private devpts
 * instance, a private /dev/shm, and the fd/stdin/stdout/stderr links). */
#pragma once
#include "plan/plan.h"
#include "sandbox/mount.h"

typedef struct dev_sources {
    int fds[PLAN_DEV_NODES]; /* cloned host device nodes, opened before the pivot */
} dev_sources;

int dev_open_sources(dev_sources *d, cordon_error *err);
int dev_build(int root_fd, root_scratch *s, dev_sources *d, cordon_error *err);
