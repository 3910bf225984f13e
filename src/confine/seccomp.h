// SPDX-License-Identifier: Apache-2.0
/* Stage 5: the seccomp filter, installed by PID 1 right before it starts the command,
 * which inherits it.
 *
 * The filter is a blocklist (seccomp_table.c, explained in doc/seccomp.md) compiled
 * at build time by seccomp_gen into one BPF program per combination of modes; at run
 * time the sandbox only hands the chosen program to the kernel.  Refused calls fail
 * with EPERM (ENOSYS where a fallback is wanted); nothing is ever killed. */
#pragma once
#include <linux/filter.h>

#include <stdbool.h>

#include "confine/seccomp_table.h"
#include "cordon.h"

typedef struct sc_program {
    const struct sock_filter *insns;
    unsigned short len;
} sc_program;

/* Generated at build time (seccomp_bpf.c): */
extern const sc_program sc_programs[SC_PROGRAMS];         /* indexed by sc_mode bits */
extern const char sc_arches[];                            /* the ABIs the programs cover */
extern const char sc_skipped[];                           /* rows libseccomp did not know */
extern const sc_program sc_cmd_programs[SC_CMD_PROGRAMS]; /* the command's filter, by sc_cmd_mode */
extern const sc_notify_call sc_notify_calls[];            /* notify rows' calls on every ABI */
extern const size_t sc_n_notify_calls;

static inline const sc_program *seccomp_program(unsigned mode)
{
    return &sc_programs[mode & (SC_PROGRAMS - 1)];
}

static inline const sc_program *seccomp_cmd_program(unsigned cmd_mode)
{
    return &sc_cmd_programs[cmd_mode & (SC_CMD_PROGRAMS - 1)];
}

/* The sc_op of a notification's call, or SC_OP_NONE. */
sc_op seccomp_notify_op(uint32_t arch, int nr);

/* Install the command's filter with a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER):
 * returns the listener's descriptor (close-on-exec), or -1 with err filled; EBUSY when
 * the process already runs under a listener (the kernel allows one per process).
 * `listener` false: the program has no notify rows (SC_CMD_NESTED), returns 0. */
int seccomp_install_cmd(const sc_program *prog, bool listener, cordon_error *err);

/* Install `prog` on the calling thread, which must have no_new_privs set or hold
 * CAP_SYS_ADMIN in its user namespace.  Allocates nothing: safe in the sandbox's
 * processes. */
int seccomp_install(const sc_program *prog, cordon_error *err);

/* A second, small filter for a command that keeps CAP_SETFCAP (policy_set_keep_caps):
 * setxattr and its kin refused with EPERM, so that the capability cannot put file
 * capabilities on a host file; what it still allows is mapping uid 0 into a nested user
 * namespace (Linux 5.12).  (io_uring, whose SETXATTR operation would be the other road,
 * is refused by the main filter.)  Needs no_new_privs. */
int seccomp_refuse_setxattr(cordon_error *err);
