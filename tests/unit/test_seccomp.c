// SPDX-License-Identifier: Apache-2.0
/* The seccomp programs, run through a classic-BPF interpreter on made-up system calls
 * for every ABI they cover: x86-64 (with 32-bit x86; x32 refused) and AArch64 (with 32-bit
 * ARM), each generated at build time from the same table (tests/meson.build), plus the
 * programs linked into the library.  Also checks the table itself. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "confine/seccomp.h"

extern const sc_program sc_x86_64_programs[SC_PROGRAMS];
extern const sc_program sc_aarch64_programs[SC_PROGRAMS];
extern const sc_program sc_x86_64_cmd_programs[SC_CMD_PROGRAMS];
extern const sc_program sc_aarch64_cmd_programs[SC_CMD_PROGRAMS];
extern const sc_notify_call sc_x86_64_notify_calls[];
extern const size_t sc_x86_64_n_notify_calls;

#define ALLOW   SECCOMP_RET_ALLOW
#define EPERM_  (SECCOMP_RET_ERRNO | EPERM)
#define ENOSYS_ (SECCOMP_RET_ERRNO | ENOSYS)

/* --- a classic BPF interpreter for seccomp programs ------------------------------ */

static uint32_t load_word(const struct seccomp_data *d, uint32_t k)
{
    assert_true(k % 4 == 0 && k + 4 <= sizeof *d);
    uint32_t w;
    memcpy(&w, (const char *)d + k, 4);
    return w;
}

static uint32_t run(const sc_program *p, const struct seccomp_data *d)
{
    uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
    for (unsigned pc = 0; pc < p->len; pc++) {
        const struct sock_filter *f = &p->insns[pc];
        uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;
        switch (BPF_CLASS(f->code)) {
        case BPF_LD:
            if (BPF_MODE(f->code) == BPF_ABS && BPF_SIZE(f->code) == BPF_W)
                a = load_word(d, f->k);
            else if (BPF_MODE(f->code) == BPF_MEM)
                a = mem[f->k % BPF_MEMWORDS];
            else if (BPF_MODE(f->code) == BPF_IMM)
                a = f->k;
            else
                fail_msg("unsupported load 0x%x at %u", f->code, pc);
            break;
        case BPF_LDX:
            if (BPF_MODE(f->code) == BPF_MEM)
                x = mem[f->k % BPF_MEMWORDS];
            else if (BPF_MODE(f->code) == BPF_IMM)
                x = f->k;
            else
                fail_msg("unsupported ldx 0x%x at %u", f->code, pc);
            break;
        case BPF_ST: mem[f->k % BPF_MEMWORDS] = a; break;
        case BPF_STX: mem[f->k % BPF_MEMWORDS] = x; break;
        case BPF_ALU:
            switch (BPF_OP(f->code)) {
            case BPF_AND: a &= src; break;
            case BPF_OR: a |= src; break;
            case BPF_ADD: a += src; break;
            case BPF_SUB: a -= src; break;
            case BPF_LSH: a <<= src; break;
            case BPF_RSH: a >>= src; break;
            case BPF_NEG: a = -a; break;
            default: fail_msg("unsupported alu 0x%x at %u", f->code, pc);
            }
            break;
        case BPF_JMP: {
            unsigned next;
            if (BPF_OP(f->code) == BPF_JA) {
                next = pc + 1 + f->k;
            } else {
                bool t;
                switch (BPF_OP(f->code)) {
                case BPF_JEQ: t = a == src; break;
                case BPF_JGT: t = a > src; break;
                case BPF_JGE: t = a >= src; break;
                case BPF_JSET: t = (a & src) != 0; break;
                default: fail_msg("unsupported jump 0x%x at %u", f->code, pc); return 0;
                }
                next = pc + 1 + (t ? f->jt : f->jf);
            }
            assert_true(next < p->len);
            pc = next - 1;
            break;
        }
        case BPF_RET: return BPF_RVAL(f->code) == BPF_A ? a : f->k;
        case BPF_MISC:
            if (BPF_MISCOP(f->code) == BPF_TAX)
                x = a;
            else
                a = x;
            break;
        default: fail_msg("unsupported instruction 0x%x at %u", f->code, pc);
        }
    }
    fail_msg("the program ran off its end");
    return 0;
}

/* --- ABIs --------------------------------------------------------------------------- */

typedef struct abi {
    const char *name;
    uint32_t arch;
    bool is64;
    int write, ioctl, socket, socketpair, sendto, setsockopt, getsockname, personality, clone, unshare, clone3, fsopen,
        mount, keyctl, io_uring_setup, bpf, socketcall, sendmsg;
} abi;

#define X32 0x40000000
static const abi abis_x86[] = {
    {"x86_64", AUDIT_ARCH_X86_64, true, 1, 16, 41, 53, 44, 54, 51, 135, 56, 272, 435, 430, 165, 250, 425, 321, -1, 46},
    {"i386", AUDIT_ARCH_I386, false, 4, 54, 359, 360, 369, 366, 367, 136, 120, 310, 435, 430, 21, 288, 425, 357, 102,
     370},
};
static const abi abis_arm[] = {
    {"aarch64", AUDIT_ARCH_AARCH64, true, 64, 29, 198, 199, 206, 208, 204, 92, 220, 97, 435, 430, 40, 219, 425, 280, -1,
     211},
    {"arm", AUDIT_ARCH_ARM, false, 4, 54, 281, 288, 290, 294, 286, 136, 120, 337, 435, 430, 21, 311, 425, 386, -1, 296},
};

/* listen(2), by architecture (the rows above are full) */
static int listen_nr(const abi *a)
{
    switch (a->arch) {
    case AUDIT_ARCH_X86_64: return 50;
    case AUDIT_ARCH_I386: return 363;
    case AUDIT_ARCH_AARCH64: return 201;
    case AUDIT_ARCH_ARM: return 284;
    }
    fail_msg("%s: no listen(2) number", a->name);
    return -1;
}

static uint32_t call4(const sc_program *p, const abi *a, int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
    struct seccomp_data d = {.nr = nr, .arch = a->arch, .args = {a0, a1, a2, a3, 0, 0}};
    if (!a->is64) /* a 32-bit task's arguments are 32 bits wide */
        for (int i = 0; i < 6; i++)
            d.args[i] &= 0xffffffffu;
    return run(p, &d);
}

static uint32_t call(const sc_program *p, const abi *a, int nr, uint64_t a0, uint64_t a1)
{
    return call4(p, a, nr, a0, a1, 0, 0);
}

#define EXPECT4(p, a, nr, a0, a1, a2, a3, want)                                                    \
    do {                                                                                           \
        uint32_t got_ = call4(p, a, nr, a0, a1, a2, a3);                                           \
        if (got_ != (uint32_t)(want))                                                              \
            fail_msg("%s: %s(%#llx, %#llx, %#llx, %#llx): got %#x, want %#x", (a)->name, #nr,      \
                     (unsigned long long)(a0), (unsigned long long)(a1), (unsigned long long)(a2), \
                     (unsigned long long)(a3), got_, (uint32_t)(want));                            \
    } while (0)

#define EXPECT(p, a, nr, a0, a1, want)                                                                    \
    do {                                                                                                  \
        uint32_t got_ = call(p, a, nr, a0, a1);                                                           \
        if (got_ != (uint32_t)(want))                                                                     \
            fail_msg("%s: %s(%#llx, %#llx): got %#x, want %#x", (a)->name, #nr, (unsigned long long)(a0), \
                     (unsigned long long)(a1), got_, (uint32_t)(want));                                   \
    } while (0)

#define TIOCSTI_         0x5412
#define TIOCLINUX_       0x541C
#define TCGETS_          0x5401
#define CLONE_NEWUSER_   0x10000000
#define CLONE_NEWCGROUP_ 0x02000000
#define SIGCHLD_         17

static void check_abi(const sc_program progs[SC_PROGRAMS], const abi *a)
{
    for (unsigned mode = 0; mode < SC_PROGRAMS; mode++) {
        const sc_program *p = &progs[mode];
        assert_true(p->len > 0 && p->len <= BPF_MAXINSNS);
        bool nn = mode & SC_MODE_NO_NESTED, nu = mode & SC_MODE_IP_ONLY, tcp = mode & SC_MODE_TCP_ONLY;
        uint64_t hi = a->is64 ? UINT64_C(1) << 32 : 0;

        EXPECT(p, a, a->write, 1, 0, ALLOW);
        /* terminal injection, also with garbage in the upper half (CVE-2019-10063) */
        EXPECT(p, a, a->ioctl, 0, TIOCSTI_, EPERM_);
        EXPECT(p, a, a->ioctl, 0, hi | TIOCSTI_, EPERM_);
        EXPECT(p, a, a->ioctl, 0, TIOCLINUX_, EPERM_);
        EXPECT(p, a, a->ioctl, 0, hi | TIOCLINUX_, EPERM_);
        EXPECT(p, a, a->ioctl, 0, TCGETS_, ALLOW);
        EXPECT(p, a, a->ioctl, 0, 0x5413 /* TIOCGWINSZ */, ALLOW);

        /* socket families */
        static const struct {
            uint64_t family;
            bool ok;
        } fam[] = {
            {1, true},  {2, true},   {10, true},  {16, true},  {0, false},  {3, false},
            {9, false}, {17, false}, {38, false}, {40, false}, {45, false}, {0xffffffff, false},
        };
        for (size_t i = 0; i < sizeof fam / sizeof *fam; i++) {
            bool ok = fam[i].ok && !(nu && fam[i].family != 2 && fam[i].family != 10) &&
                      !(tcp && fam[i].family != 2 && fam[i].family != 10);
            EXPECT(p, a, a->socket, fam[i].family, 1, ok ? ALLOW : EPERM_);
        }
        /* --isolation landlock, --network none: TCP only (Landlock governs its connect) */
        EXPECT4(p, a, a->socket, 2, 1 | 0x80000 /* SOCK_CLOEXEC */, 0, 0, ALLOW);
        EXPECT4(p, a, a->socket, 10, 1 | 0x800 /* SOCK_NONBLOCK */, 6 /* IPPROTO_TCP */, 0, ALLOW);
        EXPECT4(p, a, a->socket, 2, 2 /* SOCK_DGRAM */, 0, 0, tcp ? EPERM_ : ALLOW);
        EXPECT4(p, a, a->socket, 10, 5 /* SOCK_SEQPACKET */, 0, 0, tcp ? EPERM_ : ALLOW);
        EXPECT4(p, a, a->socket, 2, 1, 132 /* IPPROTO_SCTP */, 0, tcp ? EPERM_ : ALLOW);
        EXPECT4(p, a, a->socket, 2, 1, 262 /* IPPROTO_MPTCP */, 0, tcp ? EPERM_ : ALLOW);
        EXPECT4(p, a, a->socket, 1, 1, 0, 0, tcp || nu ? EPERM_ : ALLOW);
        EXPECT4(p, a, a->sendto, 3, 0, 1, 0x20000000 /* MSG_FASTOPEN */, tcp ? EPERM_ : ALLOW);
        EXPECT4(p, a, a->sendto, 3, 0, 1, 0x4000 /* MSG_NOSIGNAL */, ALLOW);
        EXPECT4(p, a, a->sendmsg, 3, 0, 0x20000000, 0, tcp ? EPERM_ : ALLOW);
        EXPECT4(p, a, a->sendmsg, 3, 0, 0x40 /* MSG_DONTWAIT */, 0, ALLOW);
        /* listen(2) autobinds a socket never bound, past Landlock's bind check: the host
         * could connect in (issue 19) */
        EXPECT(p, a, listen_nr(a), 3, 128, tcp ? EPERM_ : ALLOW);
        if (a->is64) {
            EXPECT(p, a, a->socket, hi | 40, 1, EPERM_);    /* AF_VSOCK, upper half set */
            EXPECT(p, a, a->socket, UINT64_MAX, 1, EPERM_); /* -1, sign-extended */
        }
        /* what Python asyncio, Chromium and cargo do on Unix sockets stays allowed */
        EXPECT(p, a, a->socketpair, 1, 1, ALLOW);
        EXPECT(p, a, a->socketpair, 1, 0x80001 /* SOCK_STREAM | SOCK_CLOEXEC */, ALLOW);
        /* a datagram pair could send to a host socket where no supervisor checks it */
        EXPECT(p, a, a->socketpair, 1, 2, tcp ? EPERM_ : ALLOW);
        EXPECT(p, a, a->sendto, 3, 0, ALLOW);
        EXPECT(p, a, a->setsockopt, 3, 1, ALLOW);
        EXPECT(p, a, a->getsockname, 3, 0, ALLOW);
        if (a->socketcall >= 0) {
            /* 32-bit x86: socketcall's arguments are in memory; SYS_SOCKET is refused
             * whatever the family (fail closed), everything else passes */
            EXPECT(p, a, a->socketcall, 1 /* SYS_SOCKET */, 0, EPERM_);
            EXPECT(p, a, a->socketcall, 11 /* SYS_SENDTO */, 0, tcp ? EPERM_ : ALLOW);
            EXPECT(p, a, a->socketcall, 14 /* SYS_SETSOCKOPT */, 0, tcp ? EPERM_ : ALLOW);
            EXPECT(p, a, a->socketcall, 8 /* SYS_SOCKETPAIR */, 0, tcp ? EPERM_ : ALLOW);
        }

        EXPECT(p, a, a->keyctl, 0, 0, EPERM_);
        EXPECT(p, a, a->io_uring_setup, 0, 0, EPERM_);
        EXPECT(p, a, a->bpf, 0, 0, EPERM_);

        /* nesting */
        EXPECT(p, a, a->clone, SIGCHLD_, 0, ALLOW);
        EXPECT(p, a, a->clone, 0x3d0f00 /* pthread_create's flags */, 0, ALLOW);
        EXPECT(p, a, a->clone, CLONE_NEWUSER_ | SIGCHLD_, 0, nn ? EPERM_ : ALLOW);
        EXPECT(p, a, a->unshare, CLONE_NEWUSER_ | 0x20000 /* CLONE_NEWNS */, 0, nn ? EPERM_ : ALLOW);
        EXPECT(p, a, a->unshare, 0x200 /* CLONE_FS */, 0, ALLOW);
        /* clone3's flags are in memory: always ENOSYS, so that libc falls back to clone */
        EXPECT(p, a, a->clone3, 0, 0, ENOSYS_);
        /* no cgroup namespace of the command's own, nesting or not */
        EXPECT(p, a, a->clone, CLONE_NEWCGROUP_ | SIGCHLD_, 0, EPERM_);
        EXPECT(p, a, a->unshare, CLONE_NEWCGROUP_, 0, EPERM_);
        EXPECT(p, a, a->clone, CLONE_NEWUSER_ | 0x20000 | 0x4000000 /* NEWNS|NEWUTS */ | SIGCHLD_, 0,
               nn ? EPERM_ : ALLOW);
        EXPECT(p, a, a->fsopen, 0, 0, nn ? ENOSYS_ : ALLOW);
        EXPECT(p, a, a->mount, 0, 0, nn ? EPERM_ : ALLOW);
    }
}

/* personality: only PER_LINUX32, UNAME26 and ADDR_NO_RANDOMIZE, or the query; the
 * kernel reads 32 bits. */
static void check_personality(const sc_program progs[SC_PROGRAMS], const abi *a)
{
    const uint32_t allowed = 0x0008 | 0x0020000 | 0x0040000;
    const sc_program *p = &progs[0];
    uint32_t seed = 12345;
    for (int i = 0; i < 40000; i++) {
        uint32_t v;
        if (i < 32)
            v = 1u << i;
        else if (i < 32 + 32 * 32)
            v = (1u << ((i - 32) / 32)) | (1u << ((i - 32) % 32));
        else if (i < 2000)
            v = ~(1u << (i % 32));
        else {
            seed = seed * 1103515245u + 12345u;
            v = seed & (i % 3 ? allowed | (1u << (seed >> 27)) : 0xffffffffu);
        }
        bool ok = v == 0xffffffffu || (v & ~allowed) == 0;
        EXPECT(p, a, a->personality, v, 0, ok ? ALLOW : EPERM_);
        if (a->is64)
            EXPECT(p, a, a->personality, (UINT64_C(7) << 32) | v, 0, ok ? ALLOW : EPERM_);
    }
    EXPECT(p, a, a->personality, 0, 0, ALLOW);
    EXPECT(p, a, a->personality, 0xffffffffu, 0, ALLOW);
    EXPECT(p, a, a->personality, 0x0400000 /* READ_IMPLIES_EXEC */, 0, EPERM_);
    EXPECT(p, a, a->personality, 0x0100000 /* MMAP_PAGE_ZERO */, 0, EPERM_);
    EXPECT(p, a, a->personality, 0x60008 | 0x0400000, 0, EPERM_);
    EXPECT(p, a, a->personality, 0x60008, 0, ALLOW);
}

static void test_x86(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof abis_x86 / sizeof *abis_x86; i++) {
        check_abi(sc_x86_64_programs, &abis_x86[i]);
        check_personality(sc_x86_64_programs, &abis_x86[i]);
    }
}

static void test_arm(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof abis_arm / sizeof *abis_arm; i++) {
        check_abi(sc_aarch64_programs, &abis_arm[i]);
        check_personality(sc_aarch64_programs, &abis_arm[i]);
    }
}

/* --isolation landlock (SC_MODE_HOST_IPC): System V IPC and POSIX message queues are the
 * host's, so refused; in every other mode they stay allowed (an IPC namespace). */
typedef struct ipc_abi {
    const abi *a;
    int shmget, shmat, shmctl, msgget, msgsnd, semget, semop, mq_open, mq_timedsend, ipc;
} ipc_abi;

static void check_host_ipc(const sc_program progs[SC_PROGRAMS], const ipc_abi *x)
{
    for (unsigned mode = 0; mode < SC_PROGRAMS; mode++) {
        const sc_program *p = &progs[mode];
        uint32_t want = mode & SC_MODE_HOST_IPC ? EPERM_ : ALLOW;
        const int calls[] = {x->shmget, x->shmat, x->shmctl,  x->msgget,       x->msgsnd,
                             x->semget, x->semop, x->mq_open, x->mq_timedsend, x->ipc};
        for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
            if (calls[i] >= 0)
                EXPECT(p, x->a, calls[i], 0, 0, want);
        EXPECT(p, x->a, x->a->write, 1, 0, ALLOW);
    }
}

static void test_host_ipc(void **state)
{
    (void)state;
    const ipc_abi x86[] = {
        {&abis_x86[0], 29, 30, 31, 68, 69, 64, 65, 240, 242, -1},
        {&abis_x86[1], 395, 397, 396, 399, 400, 393, -1, 277, 279, 117},
    };
    const ipc_abi arm[] = {
        {&abis_arm[0], 194, 196, 195, 186, 189, 190, 193, 180, 182, -1},
        {&abis_arm[1], 307, 305, 308, 303, 301, 299, 298, 274, 276, -1},
    };
    for (size_t i = 0; i < 2; i++) {
        check_host_ipc(sc_x86_64_programs, &x86[i]);
        check_host_ipc(sc_aarch64_programs, &arm[i]);
    }
}

/* A system call of an ABI the programs do not cover is refused, not let through. */
static void test_other_arch_refused(void **state)
{
    (void)state;
    const abi ppc = {.name = "ppc64le", .arch = AUDIT_ARCH_PPC64LE, .is64 = true};
    EXPECT(&sc_x86_64_programs[0], &ppc, 1, 0, 0, EPERM_);
    EXPECT(&sc_aarch64_programs[0], &ppc, 1, 0, 0, EPERM_);
    const abi arm = abis_arm[1];
    EXPECT(&sc_x86_64_programs[0], &arm, 4, 0, 0, EPERM_);
    /* x32: every call, however harmless, is refused */
    const abi x32 = {.name = "x32", .arch = AUDIT_ARCH_X86_64, .is64 = true};
    for (unsigned m = 0; m < SC_PROGRAMS; m++) {
        EXPECT(&sc_x86_64_programs[m], &x32, X32 + 1 /* write */, 1, 0, EPERM_);
        EXPECT(&sc_x86_64_programs[m], &x32, X32 + 60 /* exit */, 0, 0, EPERM_);
        EXPECT(&sc_x86_64_programs[m], &x32, X32 + 514 /* ioctl */, 0, TCGETS_, EPERM_);
    }
}

/* The programs linked into the library are those of this machine's CPU family. */
static void test_linked_programs(void **state)
{
    (void)state;
#if defined(__x86_64__)
    const sc_program *want = sc_x86_64_programs;
#elif defined(__aarch64__)
    const sc_program *want = sc_aarch64_programs;
#else
    const sc_program *want = NULL;
#endif
    if (!want)
        skip();
    for (unsigned m = 0; m < SC_PROGRAMS; m++) {
        assert_int_equal(sc_programs[m].len, want[m].len);
        assert_memory_equal(sc_programs[m].insns, want[m].insns, want[m].len * sizeof(struct sock_filter));
        assert_ptr_equal(seccomp_program(m), &sc_programs[m]);
    }
    assert_string_equal(sc_skipped, "");
}

/* Every row says what and why; ENOSYS only where a fallback is wanted; modes known. */
static void test_table(void **state)
{
    (void)state;
    static const char *const enosys[] = {"clone3",
                                         "fsopen",
                                         "fsconfig",
                                         "fsmount",
                                         "fspick",
                                         "move_mount",
                                         "open_tree",
                                         "mount_setattr",
                                         "openat2",
                                         "landlock_create_ruleset",
                                         "landlock_add_rule",
                                         "landlock_restrict_self"};
    for (size_t i = 0; i < sc_n_rules; i++) {
        const sc_rule *r = &sc_rules[i];
        assert_non_null(r->syscall);
        assert_true(r->what && r->what[0]);
        assert_true(r->why && strlen(r->why) > 10);
        if (r->op != SC_OP_NONE) {
            /* a notify row: the command's filter only */
            assert_int_equal(r->errnum, 0);
            assert_int_equal(r->filter, SC_CMD);
            continue;
        }
        assert_true(r->errnum == EPERM || r->errnum == ENOSYS);
        assert_int_equal(r->when & ~(SC_PROGRAMS - 1), 0);
        if (r->errnum == ENOSYS) {
            bool listed = false;
            for (size_t k = 0; k < sizeof enosys / sizeof *enosys; k++)
                listed |= strcmp(r->syscall, enosys[k]) == 0;
            assert_true(listed);
            /* clone3, openat2 and Landlock always; the mount API only when nesting is refused */
            bool always = strcmp(r->syscall, "clone3") == 0 || r->filter == SC_CMD;
            assert_int_equal(r->when, always ? 0 : SC_MODE_NO_NESTED);
        }
    }
}

#define NOTIFY_   SECCOMP_RET_USER_NOTIF
#define S_ISUID_  04000
#define S_ISGID_  02000
#define O_CREAT_  0100
#define O_WRONLY_ 01
#define O_RDWR_   02
#define O_TRUNC_  01000

/* No set-user-ID or set-group-ID mode, in every deny program (x86-64 and i386 numbers). */
static void test_setid(void **state)
{
    (void)state;
    const abi *x = &abis_x86[0], *i = &abis_x86[1];
    for (unsigned m = 0; m < SC_PROGRAMS; m++) {
        const sc_program *p = &sc_x86_64_programs[m];
        /* chmod 90, fchmod 91, fchmodat 268, fchmodat2 452, mknod 133, open 2, openat 257 */
        EXPECT(p, x, 90, 0, 04755, EPERM_);
        EXPECT(p, x, 90, 0, 02755, EPERM_);
        EXPECT(p, x, 90, 0, 0755, ALLOW); /* positive control */
        EXPECT(p, x, 91, 3, S_ISUID_ | 0700, EPERM_);
        EXPECT(p, x, 91, 3, 0700, ALLOW);
        EXPECT4(p, x, 268, 3, 0, S_ISGID_ | 0755, 0, EPERM_);
        EXPECT4(p, x, 268, 3, 0, 0755, 0, ALLOW);
        EXPECT4(p, x, 452, 3, 0, S_ISUID_ | 0755, 0, EPERM_);
        EXPECT4(p, x, 133, 0, 0100000 | S_ISUID_ | 0755, 0, 0, EPERM_);
        EXPECT4(p, x, 2, 0, O_CREAT_ | O_WRONLY_, S_ISUID_ | 0755, 0, EPERM_);
        EXPECT4(p, x, 257, 3, 0, O_CREAT_ | O_WRONLY_, S_ISGID_ | 0644, EPERM_);
        EXPECT4(p, x, 257, 3, 0, O_CREAT_ | O_WRONLY_, 0644, ALLOW);
        /* i386: chmod 15, fchmodat 306 */
        EXPECT(p, i, 15, 0, 04755, EPERM_);
        EXPECT4(p, i, 306, 3, 0, 06755, 0, EPERM_);
        EXPECT(p, i, 15, 0, 0755, ALLOW);
    }
}

/* The command's filter: creations and writes go to the supervisor, reads do not; under
 * another cordon (nested) nothing is notified; openat2 and Landlock are ENOSYS. */
static void test_cmd_filter(void **state)
{
    (void)state;
    const abi *x = &abis_x86[0], *i = &abis_x86[1], *a64 = &abis_arm[0];
    const sc_program *p = &sc_x86_64_cmd_programs[0], *nested = &sc_x86_64_cmd_programs[SC_CMD_NESTED];
    /* openat(dfd, path, flags, mode): 257 */
    EXPECT4(p, x, 257, 3, 0, 0 /* O_RDONLY */, 0, ALLOW);
    EXPECT4(p, x, 257, 3, 0, 0x80000 /* O_CLOEXEC */, 0, ALLOW);
    EXPECT4(p, x, 257, 3, 0, O_CREAT_ | O_WRONLY_, 0644, NOTIFY_);
    EXPECT4(p, x, 257, 3, 0, O_WRONLY_, 0, NOTIFY_);
    EXPECT4(p, x, 257, 3, 0, O_RDWR_, 0, NOTIFY_);
    EXPECT4(p, x, 257, 3, 0, O_TRUNC_, 0, NOTIFY_);
    EXPECT4(p, x, 2, 0, O_CREAT_, 0644, 0, NOTIFY_); /* open */
    EXPECT4(p, x, 2, 0, 0, 0, 0, ALLOW);
    EXPECT(p, x, 85, 0, 0644, NOTIFY_);          /* creat */
    EXPECT(p, x, 83, 0, 0755, NOTIFY_);          /* mkdir */
    EXPECT4(p, x, 258, 3, 0, 0755, 0, NOTIFY_);  /* mkdirat */
    EXPECT(p, x, 82, 0, 0, NOTIFY_);             /* rename */
    EXPECT4(p, x, 316, 3, 0, 3, 0, NOTIFY_);     /* renameat2 */
    EXPECT4(p, x, 265, 3, 0, 3, 0, NOTIFY_);     /* linkat */
    EXPECT4(p, x, 266, 0, 3, 0, 0, NOTIFY_);     /* symlinkat */
    EXPECT(p, x, 157, CORDON_PRCTL, 1, NOTIFY_); /* prctl(CORDON_PRCTL) */
    EXPECT(p, x, 157, 15 /* PR_SET_NAME */, 0, ALLOW);
    EXPECT(p, x, 437, 3, 0, ENOSYS_);                              /* openat2 */
    EXPECT(p, x, 446, 3, 0, ENOSYS_);                              /* landlock_restrict_self */
    EXPECT(p, x, 0, 3, 0, ALLOW);                                  /* read */
    EXPECT(p, x, 87, 0, 0, ALLOW);                                 /* unlink: removing is not creating */
    EXPECT4(p, i, 295, 3, 0, O_CREAT_ | O_WRONLY_, 0644, NOTIFY_); /* i386 openat */
    EXPECT(p, i, 39, 0, 0755, NOTIFY_);                            /* i386 mkdir */
    EXPECT4(p, i, 295, 3, 0, 0, 0, ALLOW);
    /* nested: the outer cordon's listener gets them */
    EXPECT4(nested, x, 257, 3, 0, O_CREAT_ | O_WRONLY_, 0644, ALLOW);
    EXPECT(nested, x, 83, 0, 0755, ALLOW);
    EXPECT(nested, x, 437, 3, 0, ENOSYS_);
    EXPECT(nested, x, 446, 3, 0, ENOSYS_);
    /* AArch64: openat 56, mkdirat 34 */
    EXPECT4(&sc_aarch64_cmd_programs[0], a64, 56, 3, 0, O_CREAT_ | O_WRONLY_, 0644, NOTIFY_);
    EXPECT4(&sc_aarch64_cmd_programs[0], a64, 56, 3, 0, 0, 0, ALLOW);
    EXPECT4(&sc_aarch64_cmd_programs[0], a64, 34, 3, 0, 0755, 0, NOTIFY_);
    /* the supervisor's table knows every notified call of both x86 ABIs */
    bool open_x = false, mkdir_i = false;
    for (size_t k = 0; k < sc_x86_64_n_notify_calls; k++) {
        open_x |= sc_x86_64_notify_calls[k].arch == AUDIT_ARCH_X86_64 && sc_x86_64_notify_calls[k].nr == 257 &&
                  sc_x86_64_notify_calls[k].op == SC_OP_OPENAT;
        mkdir_i |= sc_x86_64_notify_calls[k].arch == AUDIT_ARCH_I386 && sc_x86_64_notify_calls[k].nr == 39 &&
                   sc_x86_64_notify_calls[k].op == SC_OP_MKDIR;
    }
    assert_true(open_x);
    assert_true(mkdir_i);
}

/* Unix sockets (supervise/sockets.h): connect, bind and sendto with an address that may
 * hold a path, and every sendmsg and sendmmsg, go to the supervisor; an unnamed address
 * (the family alone) does not; on 32-bit x86 the direct calls too, and the supervisor's
 * table knows them. */
static void test_cmd_sockets(void **state)
{
    (void)state;
    const abi *x = &abis_x86[0], *i = &abis_x86[1], *a64 = &abis_arm[0];
    const sc_program *p = &sc_x86_64_cmd_programs[0], *nested = &sc_x86_64_cmd_programs[SC_CMD_NESTED];
    EXPECT(p, x, 42, 3, 0, ALLOW);                        /* connect(fd, NULL, 0) */
    EXPECT4(p, x, 42, 3, 0x1000, 2, 0, ALLOW);            /* connect(AF_UNSPEC: the family alone) */
    EXPECT4(p, x, 42, 3, 0x1000, 3, 0, NOTIFY_);          /* a one-byte path */
    EXPECT4(p, x, 42, 3, 0x1000, 16, 0, NOTIFY_);         /* sockaddr_in, or a path */
    EXPECT4(p, x, 42, 3, 0x1000, 1ull << 32, 0, NOTIFY_); /* the upper half: caught too */
    EXPECT4(p, x, 49, 3, 0x1000, 110, 0, NOTIFY_);        /* bind */
    EXPECT4(p, x, 49, 3, 0x1000, 2, 0, ALLOW);            /* bind(AF_UNIX, 2): autobind */
    EXPECT4(p, x, 44, 3, 0x1000, 10, 0, ALLOW);           /* sendto(fd, buf, len, flags) without address */
    EXPECT(p, x, 46, 3, 0x1000, NOTIFY_);                 /* sendmsg */
    EXPECT(p, x, 307, 3, 0x1000, NOTIFY_);                /* sendmmsg */
    EXPECT(p, x, 1, 3, 0x1000, ALLOW);                    /* write */
    EXPECT4(p, i, 362, 3, 0x1000, 16, 0, NOTIFY_);        /* i386 connect */
    EXPECT(p, i, 370, 3, 0x1000, NOTIFY_);                /* i386 sendmsg */
    /* i386 socketcall(2): its arguments are in memory, out of the supervisor's reach */
    EXPECT(p, i, 102, 3 /* SYS_CONNECT */, 0x1000, EPERM_);
    EXPECT(p, i, 102, 2 /* SYS_BIND */, 0x1000, EPERM_);
    EXPECT(p, i, 102, 11 /* SYS_SENDTO */, 0x1000, EPERM_);
    /* (libseccomp turns sendmsg's and sendmmsg's rows into these: the supervisor, which
     * does not serve socketcall, answers ENOSYS) */
    EXPECT(p, i, 102, 16 /* SYS_SENDMSG */, 0x1000, NOTIFY_);
    EXPECT(p, i, 102, 20 /* SYS_SENDMMSG */, 0x1000, NOTIFY_);
    EXPECT(p, i, 102, 9 /* SYS_SEND */, 0x1000, ALLOW);
    EXPECT(nested, i, 102, 3 /* SYS_CONNECT */, 0x1000, EPERM_);
    EXPECT4(&sc_aarch64_cmd_programs[0], a64, 203, 3, 0x1000, 16, 0, NOTIFY_); /* AArch64 connect */
    EXPECT(&sc_aarch64_cmd_programs[0], a64, 211, 3, 0x1000, NOTIFY_);         /* AArch64 sendmsg */
    EXPECT(nested, x, 46, 3, 0x1000, ALLOW);                                   /* nested: the outer cordon's listener */
    bool connect_i = false, sendmsg_x = false;
    for (size_t k = 0; k < sc_x86_64_n_notify_calls; k++) {
        connect_i |= sc_x86_64_notify_calls[k].arch == AUDIT_ARCH_I386 && sc_x86_64_notify_calls[k].nr == 362 &&
                     sc_x86_64_notify_calls[k].op == SC_OP_CONNECT;
        sendmsg_x |= sc_x86_64_notify_calls[k].arch == AUDIT_ARCH_X86_64 && sc_x86_64_notify_calls[k].nr == 46 &&
                     sc_x86_64_notify_calls[k].op == SC_OP_SENDMSG;
    }
    assert_true(connect_i);
    assert_true(sendmsg_x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_x86),
        cmocka_unit_test(test_arm),
        cmocka_unit_test(test_other_arch_refused),
        cmocka_unit_test(test_host_ipc),
        cmocka_unit_test(test_linked_programs),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_setid),
        cmocka_unit_test(test_cmd_filter),
        cmocka_unit_test(test_cmd_sockets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
