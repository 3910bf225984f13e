/* The minimal /dev: null zero full random urandom tty bound from the host, a private
 * devpts instance, a private /dev/shm, and the fd/stdin/stdout/stderr links. */
#pragma once
#include "sandbox/root.h"

#define DEV_NODES 6
typedef struct dev_sources {
    int fds[DEV_NODES]; /* cloned host device nodes, opened before the pivot */
} dev_sources;

int dev_open_sources(dev_sources *d, cordon_error *err);
int dev_build(int root_fd, root_scratch *s, dev_sources *d, cordon_error *err);
