// SPDX-License-Identifier: Apache-2.0
/* The one clock for deadlines and waits: CLOCK_MONOTONIC in milliseconds (a system call
 * through the vDSO, nothing allocated: usable in PID 1 and in forked copies too). */
#pragma once
#include <time.h>

static inline long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
