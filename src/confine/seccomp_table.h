// SPDX-License-Identifier: Apache-2.0
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
    SC_MODE_IP_ONLY = 1u << 1,   /* proxy network without --allow-unix-sockets: only
                                    AF_INET/AF_INET6 sockets, socketpair kept (src/net) */
    SC_MODE_TCP_ONLY = 1u << 2,  /* --isolation landlock with --network none: TCP sockets
                                    only (Landlock refuses their connect and bind) */
    SC_MODE_HOST_IPC = 1u << 3,  /* --isolation landlock: no IPC namespace, so System V IPC
                                    and POSIX message queues (the host's) refused */
} sc_mode;
#define SC_MODE_BITS 4
#define SC_PROGRAMS  (1u << SC_MODE_BITS)

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
    SC_MASKED,     /* (arg & value) == value2 */
    SC_NONE_OF,    /* (arg & value) == 0: none of the flags of value is set */
    SC_ABOVE,      /* arg > value, unsigned on 64 bits (a length the kernel reads as an
                      int: a value with the upper half set is above too, so it is caught) */
} sc_match;

/* Which of the two filters a row belongs to.  The deny filter is installed by PID 1 and
 * inherited by the command; the command's own filter (installed in the command's process
 * right before exec, with a listener: SECCOMP_FILTER_FLAG_NEW_LISTENER) sends the calls
 * that create or write files to PID 1, which performs them itself on a descriptor it
 * resolved (supervise/creation.c), and refuses what must not be done. */
typedef enum sc_filter {
    SC_DENY = 0,
    SC_CMD = 1,
} sc_filter;

/* Modes of the command's filter. */
typedef enum sc_cmd_mode {
    SC_CMD_NESTED = 1u << 0,   /* the sandbox runs inside another cordon, whose listener
                                serves the calls (the kernel allows one listener per
                                process): no notify rows */
    SC_CMD_LANDLOCK = 1u << 1, /* --isolation landlock: removals go to the supervisor too
                                  (the command's Landlock domain may not remove at the top
                                  of a split directory: confine/llonly.h) */
} sc_cmd_mode;
#define SC_CMD_PROGRAMS 4u

/* What a notify row's call is, for the supervisor (one value per argument layout). */
typedef enum sc_op {
    SC_OP_NONE = 0,
    SC_OP_OPEN,      /* open(path, flags, mode) */
    SC_OP_OPENAT,    /* openat(dirfd, path, flags, mode) */
    SC_OP_CREAT,     /* creat(path, mode) */
    SC_OP_MKDIR,     /* mkdir(path, mode) */
    SC_OP_MKDIRAT,   /* mkdirat(dirfd, path, mode) */
    SC_OP_MKNOD,     /* mknod(path, mode, dev) */
    SC_OP_MKNODAT,   /* mknodat(dirfd, path, mode, dev) */
    SC_OP_RENAME,    /* rename(old, new) */
    SC_OP_RENAMEAT,  /* renameat(olddirfd, old, newdirfd, new) */
    SC_OP_RENAMEAT2, /* renameat2(olddirfd, old, newdirfd, new, flags) */
    SC_OP_LINK,      /* link(old, new) */
    SC_OP_LINKAT,    /* linkat(olddirfd, old, newdirfd, new, flags) */
    SC_OP_SYMLINK,   /* symlink(target, new) */
    SC_OP_SYMLINKAT, /* symlinkat(target, newdirfd, new) */
    SC_OP_PRCTL,     /* prctl(CORDON_PRCTL, request, buffer, length): a nested cordon */
    SC_OP_FSOPEN,    /* fsopen(fsname, flags) */
    SC_OP_MOUNT,     /* mount(source, target, fstype, flags, data) of a new file system */
    SC_OP_UMASK,     /* umask(mask): the supervisor's copy of the thread's umask */
    SC_OP_NEWROOT,   /* chroot, pivot_root, setns, unshare: the thread's root may change */
    SC_OP_CHMOD,     /* chmod(path, mode) */
    SC_OP_FCHMOD,    /* fchmod(fd, mode) */
    SC_OP_FCHMODAT,  /* fchmodat(dirfd, path, mode) */
    SC_OP_FCHMODAT2, /* fchmodat2(dirfd, path, mode, flags) */
    SC_OP_CHOWN,     /* chown(path, uid, gid): 16-bit ids on the 32-bit ABIs */
    SC_OP_LCHOWN,    /* lchown(path, uid, gid): likewise */
    SC_OP_FCHOWN,    /* fchown(fd, uid, gid): likewise */
    SC_OP_CHOWN32,   /* chown32, lchown32, fchown32 (32-bit ABIs): 32-bit ids */
    SC_OP_LCHOWN32,
    SC_OP_FCHOWN32,
    SC_OP_FCHOWNAT,   /* fchownat(dirfd, path, uid, gid, flags) */
    SC_OP_TRUNCATE,   /* truncate(path, length) */
    SC_OP_TRUNCATE64, /* truncate64 (32-bit ABIs): the length in two registers */
    SC_OP_CONNECT,    /* connect(fd, addr, addrlen): supervise/sockets.c */
    SC_OP_BIND,       /* bind(fd, addr, addrlen) */
    SC_OP_SENDTO,     /* sendto(fd, buf, len, flags, addr, addrlen) */
    SC_OP_SENDMSG,    /* sendmsg(fd, msg, flags) */
    SC_OP_SENDMMSG,   /* sendmmsg(fd, msgvec, vlen, flags) */
    SC_OP_UNLINK,     /* unlink(path): SC_CMD_LANDLOCK only */
    SC_OP_UNLINKAT,   /* unlinkat(dirfd, path, flags) */
    SC_OP_RMDIR,      /* rmdir(path) */
} sc_op;

/* prctl(2) option a cordon inside a cordon uses to hand its protections to the outer
 * supervisor (supervise/creation.h); any kernel answers EINVAL. */
#define CORDON_PRCTL 0x434f5244u /* "CORD" */

/* The generated table mapping (audit arch, call number) to an sc_op. */
typedef struct sc_notify_call {
    uint32_t arch;
    int32_t nr;
    sc_op op;
} sc_notify_call;

typedef struct sc_rule {
    const char *syscall; /* libseccomp's name */
    unsigned when;       /* sc_mode bits that must all be set; 0 = always */
    int errnum;          /* EPERM, or ENOSYS where callers must fall back */
    sc_match match;
    unsigned arg; /* argument index for everything but SC_ANY */
    uint64_t value;
    const char *what; /* short form for `cordon explain`: "socket(AF_VSOCK)" */
    const char *why;  /* the reason, as in doc/seccomp.md */
    sc_filter filter; /* SC_DENY unless noted */
    sc_op op;         /* notify rows (errnum 0): what the supervisor does */
    uint64_t value2;  /* SC_MASKED: the expected value */
} sc_rule;

extern const sc_rule sc_rules[];
extern const size_t sc_n_rules;

/* Does a row apply to a deny program built for `mode`? */
static inline int sc_rule_applies(const sc_rule *r, unsigned mode)
{
    return r->filter == SC_DENY && (r->when & mode) == r->when;
}
/* Does a row apply to a command program built for `cmd_mode`? */
static inline int sc_cmd_rule_applies(const sc_rule *r, unsigned cmd_mode)
{
    if (r->filter != SC_CMD || (r->when & cmd_mode) != r->when) /* `when`: sc_cmd_mode bits here */
        return 0;
    if (r->op != SC_OP_NONE && (cmd_mode & SC_CMD_NESTED))
        return 0;
    return 1;
}
