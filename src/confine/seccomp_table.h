/* The seccomp policy as data: which system calls the command may not make, under
 * which modes, with which error, and why.
 *
 * One table drives everything: the build-time generator (seccomp_gen.c, linked with
 * libseccomp) compiles it into one BPF program per combination of modes, `cordon
 * explain` lists it, and doc/seccomp.md explains each row.  A new mode is a bit in
 * sc_mode and the rows that name it; nothing else changes.
 *
 * Pure data: no system calls, no libseccomp (the library does not link it). */
#pragma once
#include <stdint.h>
#include <stddef.h>

/* Modes a run may add to the rules that always apply.  Every combination gets its own
 * program (SC_PROGRAMS of them), so choosing one at run time is an array index. */
typedef enum sc_mode {
    SC_MODE_NO_NESTED = 1u << 0, /* --no-nested: no new user namespaces, no mount API */
    SC_MODE_NO_UNIX = 1u << 1,   /* proxy network without --allow-unix-sockets:
                                    socket(AF_UNIX) refused, socketpair kept */
    SC_MODE_TCP_ONLY = 1u << 2,  /* --isolation landlock with --network none: TCP sockets
                                    only (Landlock refuses their connect and bind) */
} sc_mode;
#define SC_MODE_BITS 3
#define SC_PROGRAMS (1u << SC_MODE_BITS)

/* How a row looks at the call's arguments. */
typedef enum sc_match {
    SC_ANY,        /* the call, whatever its arguments */
    SC_EQ32,       /* (arg & 0xffffffff) == value: the kernel reads an int, so the upper
                      half of the register must not matter (CVE-2019-10063) */
    SC_FLAGS,      /* (arg & value) == value: every flag of value is set */
    SC_ONLY_SMALL, /* arg must be one of the small numbers whose bits are set in value
                      (bit n = number n, n < 64); any other number is refused */
    SC_ONLY_BITS,  /* arg (32 bits) may set only the bits in value; the all-ones
                      query (0xffffffff) is allowed */
    SC_LOW4_ONLY,  /* (arg & 0xf) must be one of the numbers whose bits are set in value
                      (a socket type: the flags above the low four bits do not matter) */
} sc_match;

typedef struct sc_rule {
    const char *syscall; /* libseccomp's name */
    unsigned when;       /* sc_mode bits that must all be set; 0 = always */
    int errnum;          /* EPERM, or ENOSYS where callers must fall back */
    sc_match match;
    unsigned arg;        /* argument index for everything but SC_ANY */
    uint64_t value;
    const char *what;    /* short form for `cordon explain`: "socket(AF_VSOCK)" */
    const char *why;     /* the reason, as in doc/seccomp.md */
} sc_rule;

extern const sc_rule sc_rules[];
extern const size_t sc_n_rules;

/* Does a row apply to a program built for `mode`? */
static inline int sc_rule_applies(const sc_rule *r, unsigned mode)
{
    return (r->when & mode) == r->when;
}
