// SPDX-License-Identifier: Apache-2.0
/* The creation control's decoder (src/supervise/cc_decode.c): what each notified call
 * asks, from its registers alone, against the calls' signatures (man 2 openat, renameat2,
 * symlinkat, fchmodat2, fchownat, chown32, truncate64), on the 64-bit and 32-bit ABIs. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "supervise/cc_decode.h"

#define X64  AUDIT_ARCH_X86_64
#define I386 AUDIT_ARCH_I386
#define ARM  AUDIT_ARCH_ARM

/* AT_FDCWD as a 32-bit register holds it (the upper half zero), and as a 64-bit one. */
#define FDCWD32 ((uint64_t)(uint32_t)AT_FDCWD)
#define FDCWD64 ((uint64_t)(int64_t)AT_FDCWD)

static cc_req dec(sc_op op, uint32_t arch, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
    uint64_t args[6] = {a0, a1, a2, a3, a4, 0};
    cc_req r;
    cc_decode(op, arch, args, &r);
    return r;
}

/* Every call the filter notifies has a row: none falls through to ENOSYS. */
static void test_every_op_has_a_row(void **state)
{
    (void)state;
    for (int op = SC_OP_OPEN; op <= SC_OP_RMDIR; op++) {
        cc_req r = dec((sc_op)op, X64, 0, 0, 0, 0, 0);
        assert_int_not_equal(r.kind, CC_K_NONE);
        assert_non_null(r.what);
        assert_int_not_equal(r.error, ENOSYS);
    }
    /* positive control: a call that is not the supervisor's, and one past the table */
    assert_int_equal(dec(SC_OP_NONE, X64, 0, 0, 0, 0, 0).error, ENOSYS);
    assert_int_equal(dec((sc_op)(SC_OP_RMDIR + 1), X64, 0, 0, 0, 0, 0).error, ENOSYS);
}

static void test_open_family(void **state)
{
    (void)state;
    cc_req r = dec(SC_OP_OPENAT, X64, FDCWD32, 0x1000, O_WRONLY | O_CREAT | O_EXCL, 0644, 0);
    assert_int_equal(r.kind, CC_K_OPEN);
    assert_string_equal(r.what, "openat");
    assert_int_equal(r.dirfd, AT_FDCWD); /* the low 32 bits, signed */
    assert_int_equal(r.path_arg, 1);
    assert_int_equal(r.path_addr, 0x1000);
    assert_int_equal(r.path2_arg, -1);
    assert_int_equal(r.flags, O_WRONLY | O_CREAT | O_EXCL);
    assert_int_equal(r.mode, 0644);
    assert_int_equal(dec(SC_OP_OPENAT, X64, FDCWD64, 0, 0, 0, 0).dirfd, AT_FDCWD);
    assert_int_equal(dec(SC_OP_OPENAT, X64, 7, 0, 0, 0, 0).dirfd, 7);

    r = dec(SC_OP_OPEN, I386, 0x2000, O_RDWR, 0600, 0, 0);
    assert_int_equal(r.dirfd, AT_FDCWD);
    assert_int_equal(r.path_addr, 0x2000);
    assert_int_equal(r.flags, O_RDWR);
    assert_int_equal(r.mode, 0600);

    /* creat(path, mode) is open(path, O_CREAT | O_WRONLY | O_TRUNC, mode) */
    r = dec(SC_OP_CREAT, X64, 0x3000, 0640, 0, 0, 0);
    assert_string_equal(r.what, "creat");
    assert_int_equal(r.flags, O_CREAT | O_WRONLY | O_TRUNC);
    assert_int_equal(r.mode, 0640);
}

static void test_names(void **state)
{
    (void)state;
    cc_req r = dec(SC_OP_MKNODAT, X64, 5, 0x10, 020644, 0x0501, 0);
    assert_int_equal(r.kind, CC_K_MKNOD);
    assert_false(r.dir);
    assert_int_equal(r.dirfd, 5);
    assert_int_equal(r.mode, 020644);
    assert_int_equal(r.dev, 0x0501);
    r = dec(SC_OP_MKDIR, X64, 0x10, 0755, 0, 0, 0);
    assert_true(r.dir);
    assert_int_equal(r.mode, 0755);
    assert_int_equal(r.dirfd, AT_FDCWD);

    /* renameat2(olddirfd, old, newdirfd, new, flags) */
    r = dec(SC_OP_RENAMEAT2, X64, 3, 0x10, 4, 0x20, 2 /* RENAME_EXCHANGE */);
    assert_int_equal(r.kind, CC_K_RENAME);
    assert_int_equal(r.dirfd, 3);
    assert_int_equal(r.path_addr, 0x10);
    assert_int_equal(r.dirfd2, 4);
    assert_int_equal(r.path2_arg, 3);
    assert_int_equal(r.path2_addr, 0x20);
    assert_int_equal(r.flags, 2);
    assert_int_equal(dec(SC_OP_RENAMEAT, X64, 3, 0x10, 4, 0x20, 2).flags, 0); /* no flags argument */

    r = dec(SC_OP_LINKAT, X64, 3, 0x10, 4, 0x20, AT_SYMLINK_FOLLOW);
    assert_int_equal(r.kind, CC_K_LINK);
    assert_int_equal(r.flags, AT_SYMLINK_FOLLOW);

    /* symlinkat(target, newdirfd, new): the target is relative to nothing */
    r = dec(SC_OP_SYMLINKAT, X64, 0x10, 6, 0x20, 0, 0);
    assert_int_equal(r.kind, CC_K_SYMLINK);
    assert_int_equal(r.path_addr, 0x10);
    assert_int_equal(r.dirfd, AT_FDCWD);
    assert_int_equal(r.dirfd2, 6);
    assert_int_equal(r.path2_addr, 0x20);

    assert_string_equal(dec(SC_OP_UNLINKAT, X64, 3, 0x10, AT_REMOVEDIR, 0, 0).what, "rmdir");
    assert_string_equal(dec(SC_OP_UNLINKAT, X64, 3, 0x10, 0, 0, 0).what, "unlink");
    assert_int_equal(dec(SC_OP_RMDIR, X64, 0x10, 0, 0, 0, 0).flags, AT_REMOVEDIR);
}

static void test_meta(void **state)
{
    (void)state;
    cc_req r = dec(SC_OP_FCHMODAT2, X64, 3, 0x10, 0104755, AT_SYMLINK_NOFOLLOW, 0);
    assert_int_equal(r.kind, CC_K_META);
    assert_int_equal(r.error, 0);
    assert_int_equal(r.meta.kind, META_CHMOD);
    assert_int_equal(r.meta.mode, 04755); /* the type bits dropped */
    assert_false(r.follow);
    assert_int_equal(dec(SC_OP_FCHMODAT2, X64, 3, 0x10, 0, AT_REMOVEDIR, 0).error, EINVAL);
    assert_true(dec(SC_OP_FCHMODAT2, X64, 3, 0x10, 0, AT_EMPTY_PATH, 0).empty_is_self);
    assert_true(dec(SC_OP_FCHMODAT, X64, 3, 0x10, 0, AT_SYMLINK_NOFOLLOW, 0).follow); /* no flags argument */

    r = dec(SC_OP_FCHMOD, X64, 9, 0600, 0, 0, 0);
    assert_int_equal(r.dirfd, 9);
    assert_int_equal(r.path_arg, -1);
    assert_true(r.follow);

    /* the 16-bit owners of the 32-bit ABIs: 0xffff is -1 */
    r = dec(SC_OP_CHOWN, I386, 0x10, 0xffff, 0x1234, 0, 0);
    assert_int_equal(r.meta.uid, (uid_t)-1);
    assert_int_equal(r.meta.gid, 0x1234);
    assert_true(r.follow);
    r = dec(SC_OP_LCHOWN, X64, 0x10, 0xffff, 0x1ffff, 0, 0);
    assert_int_equal(r.meta.uid, 0xffff);
    assert_int_equal(r.meta.gid, 0x1ffff);
    assert_false(r.follow);
    r = dec(SC_OP_LCHOWN32, I386, 0x10, 0xffff, 0x10000, 0, 0);
    assert_int_equal(r.meta.uid, 0xffff);
    assert_int_equal(r.meta.gid, 0x10000);
    assert_false(r.follow);
    assert_string_equal(dec(SC_OP_FCHOWN32, I386, 3, 1, 1, 0, 0).what, "fchown");

    r = dec(SC_OP_FCHOWNAT, X64, 3, 0x10, 1000, 1001, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    assert_int_equal(r.meta.uid, 1000);
    assert_int_equal(r.meta.gid, 1001);
    assert_false(r.follow);
    assert_true(r.empty_is_self);
    assert_int_equal(dec(SC_OP_FCHOWNAT, X64, 3, 0x10, 0, 0, 0x8000).error, EINVAL);
}

static void test_truncate(void **state)
{
    (void)state;
    assert_int_equal(dec(SC_OP_TRUNCATE, X64, 0x10, 1ull << 40, 0, 0, 0).meta.len, (off_t)1 << 40);
    assert_int_equal(dec(SC_OP_TRUNCATE, I386, 0x10, 0xffffffffu, 0, 0, 0).meta.len, -1);
    /* truncate64: (path, low, high) on x86, (path, pad, low, high) on arm */
    assert_int_equal(dec(SC_OP_TRUNCATE64, I386, 0x10, 5, 1, 0, 0).meta.len, ((off_t)1 << 32) | 5);
    assert_int_equal(dec(SC_OP_TRUNCATE64, ARM, 0x10, 99, 5, 1, 0).meta.len, ((off_t)1 << 32) | 5);
    assert_int_equal(dec(SC_OP_TRUNCATE64, I386, 0x10, 5, 1, 0, 0).meta.kind, META_TRUNCATE);
}

/* The calls served from their registers by their own code carry no paths. */
static void test_own_code(void **state)
{
    (void)state;
    static const sc_op own[] = {SC_OP_PRCTL,   SC_OP_FSOPEN,  SC_OP_MOUNT,  SC_OP_UMASK,
                                SC_OP_NEWROOT, SC_OP_CONNECT, SC_OP_SENDMSG};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        cc_req r = dec(own[i], X64, 1, 2, 3, 4, 5);
        assert_true(r.kind >= CC_K_PRCTL);
        assert_int_equal(r.path_arg, -1);
        assert_int_equal(r.error, 0);
    }
    assert_int_equal(dec(SC_OP_BIND, X64, 0, 0, 0, 0, 0).kind, CC_K_SOCKET);
    assert_int_equal(dec(SC_OP_UMASK, X64, 0, 0, 0, 0, 0).kind, CC_K_THREAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op_has_a_row),
        cmocka_unit_test(test_open_family),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_meta),
        cmocka_unit_test(test_truncate),
        cmocka_unit_test(test_own_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
