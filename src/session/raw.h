// SPDX-License-Identifier: Apache-2.0
/* System calls that touch no state of the C library: no errno, no cancellation
 * bookkeeping (session.h).  A session's PID 1 and the processes it clones into its own
 * address space (a shepherd, a command's process until its exec) share that state, so
 * whichever of them runs beside another that uses the C library makes only these.
 * They return the kernel's value: -errno on failure. */
#pragma once
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define SESS_SHARED_VM 1
static inline long raw6(long n, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
#define SESS_SHARED_VM 1
static inline long raw6(long n, long a, long b, long c, long d, long e, long f)
{
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory", "cc");
    return x0;
}
#else
/* Elsewhere the shepherd gets an address space of its own (a copy, as fork makes), and
 * nothing is shared: the C library's syscall() will do. */
#define SESS_SHARED_VM 0
static inline long raw6(long n, long a, long b, long c, long d, long e, long f)
{
    long r = syscall(n, a, b, c, d, e, f);
    return r < 0 ? -errno : r;
}
#endif

#define RAW(n, ...)                     raw_n(n, __VA_ARGS__, 0, 0, 0, 0, 0, 0)
#define raw_n(n, a, b, c, d, e, f, ...) raw6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

static inline __attribute__((noreturn)) void raw_exit(int code)
{
    for (;;)
        RAW(SYS_exit_group, code);
}
