// SPDX-License-Identifier: Apache-2.0
/* The creation control's decoder: what a notified system call asks, read from its
 * registers alone (no memory, no system call), one row per call.
 *
 * The command's filter (confine/seccomp_table.c, the SC_CMD rows) names each notified
 * call by an sc_op; the table of cc_decode.c says, for each, which arguments are the
 * directory descriptors, the paths (their addresses: the supervisor reads the strings
 * once, after decoding), the flags, the mode, the device or the owner, and which of the
 * supervisor's operations performs it.  A pure function, so that a unit test
 * (tests/unit/test_ccdecode.c) drives it without a kernel. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "confine/seccomp_table.h"

/* Which of the supervisor's operations performs the call (cc_perform.c). */
typedef enum cc_kind {
    CC_K_NONE = 0, /* not a call the supervisor serves: ENOSYS */
    CC_K_OPEN,     /* open, openat, creat */
    CC_K_MKNOD,    /* mkdir*, mknod* */
    CC_K_RENAME,
    CC_K_LINK,
    CC_K_UNLINK, /* unlink, unlinkat, rmdir (--isolation landlock) */
    CC_K_SYMLINK,
    CC_K_META,   /* chmod, chown, truncate and their variants */
    CC_K_PRCTL,  /* a nested cordon's prctl(CORDON_PRCTL) */
    CC_K_NEWFS,  /* fsopen, mount of a new file system */
    CC_K_THREAD, /* umask, chroot, pivot_root, setns, unshare: remembered, then CONTINUE */
    CC_K_SOCKET, /* connect, bind, sendto, sendmsg, sendmmsg: supervise/sockets.c */
} cc_kind;

typedef enum meta_kind { META_CHMOD, META_CHOWN, META_TRUNCATE } meta_kind;

/* A change of mode, owner or length. */
typedef struct meta_req {
    meta_kind kind;
    mode_t mode;
    uid_t uid;
    gid_t gid;
    off_t len;
} meta_req;

/* One call, decoded. */
typedef struct cc_req {
    sc_op op;
    cc_kind kind;
    const char *what; /* the call's name in a refusal ("openat", "rename", ...) */
    int error;        /* > 0: the call fails with this errno before anything is read */
    /* the paths: the arguments holding their addresses (-1: none), relative to dirfd
     * and dirfd2; for rename and link, path is the old name and path2 the new; for
     * symlink, path is the target (relative to nothing) and path2 the new name.  A
     * refusal names path2 when there is one, else path. */
    int path_arg, path2_arg;
    uint64_t path_addr, path2_addr;
    int dirfd, dirfd2;  /* the thread's descriptor numbers, or AT_FDCWD */
    int flags;          /* open(2) flags, AT_* flags, RENAME_* flags */
    mode_t mode;        /* open's and mkdir's and mknod's mode */
    dev_t dev;          /* mknod's device */
    bool dir;           /* CC_K_MKNOD: a directory (mkdir) */
    bool follow;        /* CC_K_META: a symlink as the last component is followed */
    bool empty_is_self; /* CC_K_META: an empty path means dirfd itself (AT_EMPTY_PATH) */
    meta_req meta;      /* CC_K_META */
} cc_req;

/* Decode the call `op` of ABI `arch` (an AUDIT_ARCH_*) from its six registers. */
void cc_decode(sc_op op, uint32_t arch, const uint64_t args[6], cc_req *out);

/* A descriptor argument as the kernel reads it: the low 32 bits, signed. */
static inline int cc_arg_fd(uint64_t a)
{
    return (int)(int32_t)(uint32_t)a;
}
