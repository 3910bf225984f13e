/* Stage 5: the seccomp filter, installed by PID 1 right before it starts the command,
 * which inherits it.
 *
 * The filter is a blocklist (seccomp_table.c, explained in doc/seccomp.md) compiled
 * at build time by seccomp_gen into one BPF program per combination of modes; at run
 * time the sandbox only hands the chosen program to the kernel.  Refused calls fail
 * with EPERM (ENOSYS where a fallback is wanted); nothing is ever killed. */
#pragma once
#include <linux/filter.h>

#include "confine/seccomp_table.h"
#include "cordon.h"

typedef struct sc_program {
    const struct sock_filter *insns;
    unsigned short len;
} sc_program;

/* Generated at build time (seccomp_bpf.c): */
extern const sc_program sc_programs[SC_PROGRAMS]; /* indexed by sc_mode bits */
extern const char sc_arches[];                    /* the ABIs the programs cover */
extern const char sc_skipped[];                   /* rows libseccomp did not know */

static inline const sc_program *seccomp_program(unsigned mode)
{
    return &sc_programs[mode & (SC_PROGRAMS - 1)];
}

/* Install `prog` on the calling thread, which must have no_new_privs set or hold
 * CAP_SYS_ADMIN in its user namespace.  Allocates nothing: safe in the sandbox's
 * processes. */
int seccomp_install(const sc_program *prog, cordon_error *err);
