// SPDX-License-Identifier: Apache-2.0
/* Start-up phase timing for bench/ (meson -Dtrace_timing=true): each TRACE() prints
 * "cordon-trace: NAME MICROSECONDS" (CLOCK_MONOTONIC) to stderr.  Compiled out by default. */
#pragma once
#ifdef CORDON_TRACE_TIMING
#include <stdio.h>
#include <time.h>
static inline void trace_mark(const char *name)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    fprintf(stderr, "cordon-trace: %s %lld\n", name, (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000);
}
#define TRACE(name) trace_mark(name)
#else
#define TRACE(name) ((void)0)
#endif
