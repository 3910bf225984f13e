// SPDX-License-Identifier: Apache-2.0
/* The creation control's decoder: one row per notified call (cc_decode.h). */
#include "supervise/cc_decode.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <string.h>

/* Where a call's arguments are: A(n) is register n; 0 (a field left out) is none. */
#define A(n) ((signed char)((n) + 1))

typedef struct cc_row {
    cc_kind kind;
    const char *what;
    signed char dirfd, path, dirfd2, path2; /* no dirfd: AT_FDCWD */
    signed char flags;                      /* none: fixed_flags */
    int fixed_flags;
    unsigned valid_flags; /* with a flags argument: any other bit is EINVAL (0: any) */
    signed char mode, dev, uid, gid;
    bool id16;   /* the owner is 16 bits wide on the 32-bit ABIs (chown, lchown, fchown) */
    bool dir;    /* mkdir */
    bool follow; /* CC_K_META: follows a final symlink unless AT_SYMLINK_NOFOLLOW */
    meta_kind meta;
} cc_row;

#define AT_META  (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)
#define OPEN     .kind = CC_K_OPEN
#define MKNOD    .kind = CC_K_MKNOD
#define RENAME   .kind = CC_K_RENAME
#define LINK     .kind = CC_K_LINK
#define SYMLINK  .kind = CC_K_SYMLINK
#define UNLINK   .kind = CC_K_UNLINK
#define CHMOD    .kind = CC_K_META, .meta = META_CHMOD, .follow = true
#define CHOWN    .kind = CC_K_META, .meta = META_CHOWN, .uid = A(1), .gid = A(2)
#define FCHOWNAT .kind = CC_K_META, .meta = META_CHOWN, .uid = A(2), .gid = A(3)
#define TRUNCATE .kind = CC_K_META, .meta = META_TRUNCATE, .follow = true, .path = A(0)

/* Rows by sc_op; seccomp_table.h's comments on sc_op give each call's signature. */
static const cc_row rows[] = {
    [SC_OP_NONE] = {.kind = CC_K_NONE},
    [SC_OP_OPEN] = {OPEN, .what = "open", .path = A(0), .flags = A(1), .mode = A(2)},
    [SC_OP_OPENAT] = {OPEN, .what = "openat", .dirfd = A(0), .path = A(1), .flags = A(2), .mode = A(3)},
    [SC_OP_CREAT] = {OPEN, .what = "creat", .path = A(0), .fixed_flags = O_CREAT | O_WRONLY | O_TRUNC, .mode = A(1)},
    [SC_OP_MKDIR] = {MKNOD, .what = "mkdir", .path = A(0), .mode = A(1), .dir = true},
    [SC_OP_MKDIRAT] = {MKNOD, .what = "mkdir", .dirfd = A(0), .path = A(1), .mode = A(2), .dir = true},
    [SC_OP_MKNOD] = {MKNOD, .what = "mknod", .path = A(0), .mode = A(1), .dev = A(2)},
    [SC_OP_MKNODAT] = {MKNOD, .what = "mknod", .dirfd = A(0), .path = A(1), .mode = A(2), .dev = A(3)},
    [SC_OP_RENAME] = {RENAME, .what = "rename", .path = A(0), .path2 = A(1)},
    [SC_OP_RENAMEAT] = {RENAME, .what = "rename", .dirfd = A(0), .path = A(1), .dirfd2 = A(2), .path2 = A(3)},
    [SC_OP_RENAMEAT2] = {RENAME, .what = "rename", .dirfd = A(0), .path = A(1), .dirfd2 = A(2), .path2 = A(3),
                         .flags = A(4)},
    [SC_OP_LINK] = {LINK, .what = "link", .path = A(0), .path2 = A(1)},
    [SC_OP_LINKAT] = {LINK, .what = "link", .dirfd = A(0), .path = A(1), .dirfd2 = A(2), .path2 = A(3), .flags = A(4)},
    [SC_OP_SYMLINK] = {SYMLINK, .what = "symlink", .path = A(0), .path2 = A(1)},
    [SC_OP_SYMLINKAT] = {SYMLINK, .what = "symlink", .path = A(0), .dirfd2 = A(1), .path2 = A(2)},
    [SC_OP_UNLINK] = {UNLINK, .what = "unlink", .path = A(0)},
    [SC_OP_UNLINKAT] = {UNLINK, .what = "unlink", .dirfd = A(0), .path = A(1), .flags = A(2)},
    [SC_OP_RMDIR] = {UNLINK, .what = "rmdir", .path = A(0), .fixed_flags = AT_REMOVEDIR},
    [SC_OP_CHMOD] = {CHMOD, .what = "chmod", .path = A(0), .mode = A(1)},
    [SC_OP_FCHMOD] = {CHMOD, .what = "fchmod", .dirfd = A(0), .mode = A(1)},
    [SC_OP_FCHMODAT] = {CHMOD, .what = "chmod", .dirfd = A(0), .path = A(1), .mode = A(2)},
    [SC_OP_FCHMODAT2] = {CHMOD, .what = "chmod", .dirfd = A(0), .path = A(1), .mode = A(2), .flags = A(3),
                         .valid_flags = AT_META},
    [SC_OP_CHOWN] = {CHOWN, .what = "chown", .path = A(0), .id16 = true, .follow = true},
    [SC_OP_LCHOWN] = {CHOWN, .what = "chown", .path = A(0), .id16 = true},
    [SC_OP_FCHOWN] = {CHOWN, .what = "fchown", .dirfd = A(0), .id16 = true, .follow = true},
    [SC_OP_CHOWN32] = {CHOWN, .what = "chown", .path = A(0), .follow = true},
    [SC_OP_LCHOWN32] = {CHOWN, .what = "chown", .path = A(0)},
    [SC_OP_FCHOWN32] = {CHOWN, .what = "fchown", .dirfd = A(0), .follow = true},
    [SC_OP_FCHOWNAT] = {FCHOWNAT, .what = "chown", .dirfd = A(0), .path = A(1), .flags = A(4), .valid_flags = AT_META,
                        .follow = true},
    [SC_OP_TRUNCATE] = {TRUNCATE, .what = "truncate"},
    [SC_OP_TRUNCATE64] = {TRUNCATE, .what = "truncate"},
    [SC_OP_PRCTL] = {.kind = CC_K_PRCTL, .what = "prctl"},
    [SC_OP_FSOPEN] = {.kind = CC_K_NEWFS, .what = "fsopen"},
    [SC_OP_MOUNT] = {.kind = CC_K_NEWFS, .what = "mount"},
    [SC_OP_UMASK] = {.kind = CC_K_THREAD, .what = "umask"},
    [SC_OP_NEWROOT] = {.kind = CC_K_THREAD, .what = "chroot"},
    [SC_OP_CONNECT] = {.kind = CC_K_SOCKET, .what = "connect"},
    [SC_OP_BIND] = {.kind = CC_K_SOCKET, .what = "bind"},
    [SC_OP_SENDTO] = {.kind = CC_K_SOCKET, .what = "sendto"},
    [SC_OP_SENDMSG] = {.kind = CC_K_SOCKET, .what = "sendmsg"},
    [SC_OP_SENDMMSG] = {.kind = CC_K_SOCKET, .what = "sendmmsg"},
};

/* Register `a` of the call (a row's A(n)), which must be one. */
#define REG(args, a) ((args)[(a)-1])

static bool compat_abi(uint32_t arch)
{
    return arch != AUDIT_ARCH_X86_64 && arch != AUDIT_ARCH_AARCH64;
}

/* An owner as the call passed it: the 16-bit calls of the 32-bit ABIs mean -1 by 0xffff. */
static uint32_t owner(uint32_t arch, uint64_t arg, bool id16)
{
    uint32_t v = (uint32_t)arg;
    if (id16 && compat_abi(arch)) {
        v &= 0xffff;
        if (v == 0xffff)
            v = (uint32_t)-1;
    }
    return v;
}

/* truncate's length: truncate64 splits it over two registers (path, low, high) on x86,
 * (path, pad, low, high) on arm; the 32-bit ABIs' truncate passes a signed 32-bit one. */
static off_t truncate_len(sc_op op, uint32_t arch, const uint64_t args[6])
{
    uint64_t len = args[1];
    if (op == SC_OP_TRUNCATE64)
        len = arch == AUDIT_ARCH_I386 ? ((args[1] & 0xffffffffu) | (args[2] << 32))
                                      : ((args[2] & 0xffffffffu) | (args[3] << 32));
    else if (compat_abi(arch))
        len = (uint64_t)(int64_t)(int32_t)(uint32_t)len;
    return (off_t)len;
}

static void decode_meta(const cc_row *row, sc_op op, uint32_t arch, const uint64_t args[6], cc_req *out)
{
    out->follow = row->follow && !(out->flags & AT_SYMLINK_NOFOLLOW);
    out->empty_is_self = out->flags & AT_EMPTY_PATH;
    out->meta.kind = row->meta;
    switch (row->meta) {
    case META_CHMOD: out->meta.mode = (mode_t)(REG(args, row->mode) & 07777); break;
    case META_CHOWN:
        out->meta.uid = owner(arch, REG(args, row->uid), row->id16);
        out->meta.gid = owner(arch, REG(args, row->gid), row->id16);
        break;
    case META_TRUNCATE: out->meta.len = truncate_len(op, arch, args); break;
    }
}

void cc_decode(sc_op op, uint32_t arch, const uint64_t args[6], cc_req *out)
{
    memset(out, 0, sizeof *out);
    out->op = op;
    out->path_arg = out->path2_arg = -1;
    out->dirfd = out->dirfd2 = AT_FDCWD;
    const cc_row *row = (unsigned)op < sizeof rows / sizeof rows[0] ? &rows[op] : &rows[SC_OP_NONE];
    out->kind = row->kind;
    out->what = row->what;
    if (row->kind == CC_K_NONE) {
        out->error = ENOSYS;
        return;
    }
    if (row->what == NULL || row->kind >= CC_K_PRCTL)
        return; /* served from the registers by its own code */
    out->flags = row->flags ? (int)REG(args, row->flags) : row->fixed_flags;
    if (row->valid_flags && ((unsigned)out->flags & ~row->valid_flags)) {
        out->error = EINVAL;
        return;
    }
    if (row->dirfd)
        out->dirfd = cc_arg_fd(REG(args, row->dirfd));
    if (row->dirfd2)
        out->dirfd2 = cc_arg_fd(REG(args, row->dirfd2));
    out->path_arg = row->path - 1;
    out->path2_arg = row->path2 - 1;
    out->path_addr = row->path ? REG(args, row->path) : 0;
    out->path2_addr = row->path2 ? REG(args, row->path2) : 0;
    out->dir = row->dir;
    if (row->kind == CC_K_META) {
        decode_meta(row, op, arch, args, out);
        return;
    }
    if (row->mode)
        out->mode = (mode_t)REG(args, row->mode);
    if (row->dev)
        out->dev = (dev_t)REG(args, row->dev);
    if (op == SC_OP_UNLINKAT && (out->flags & AT_REMOVEDIR))
        out->what = "rmdir";
}
