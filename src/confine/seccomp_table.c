// SPDX-License-Identifier: Apache-2.0
/* The rows of cordon's seccomp filter.  doc/seccomp.md gives the longer story of each;
 * keep the two in step.  Every refusal is EPERM, except where a caller is expected to
 * fall back to an older call when the new one is missing (ENOSYS), as Flatpak does. */
#include "confine/seccomp_table.h"

#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <fcntl.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

#define BIT(n) (UINT64_C(1) << (n))

/* Socket families a command may create: local sockets, IP (inside its own network
 * namespace unless --network host) and netlink (ip(8), getaddrinfo's interface list).
 * Every other family is refused in every network mode, as Flatpak does: they are not
 * needed by the programs cordon runs, and several load rarely used, historically
 * vulnerable kernel modules on first use (DCCP, RDS, TIPC, AF_ALG, ...). */
#define ALLOWED_FAMILIES (BIT(AF_UNIX) | BIT(AF_INET) | BIT(AF_INET6) | BIT(AF_NETLINK))

/* personality(2) flags a command may set: the 32-bit execution domain (`linux32`),
 * the 2.6-style uname (`setarch --uname-2.6`) and no address randomisation (gdb,
 * `setarch -R`); the query 0xffffffff stays allowed. */
#define ALLOWED_PERSONALITY (PER_LINUX32 | UNAME26 | ADDR_NO_RANDOMIZE)

#define WHY_IO_URING                                                                      \
    "io_uring: a large kernel attack surface with a long list of privilege escalations; " \
    "the operations it queues are not system calls, so seccomp cannot see them"
#define WHY_KEYS                                                                        \
    "kernel keyrings are not namespaced: the user keyring is shared with the caller's " \
    "sessions on the host (Kerberos tickets, fscrypt and ecryptfs keys)"
#define WHY_NUMA                                                                        \
    "NUMA memory policy and page migration: not needed, and a source of kernel memory " \
    "disclosures (as Flatpak and Docker)"
#define WHY_NEST_MOUNT                                                                  \
    "--no-nested: the mount API; ENOSYS so that tools fall back to mount(2), which is " \
    "refused too"
#define WHY_NEST_NS "--no-nested: changing namespaces or the root"
#define WHY_TCP_ONLY                                                                        \
    "--isolation landlock, --network none: without a network namespace, only TCP sockets, " \
    "whose connect and bind Landlock refuses; UDP, raw and other families would reach the " \
    "host's network, and a Unix socket any host service by its path (Landlock does not "    \
    "govern connecting to one); socketpair(2) stays allowed"
#define WHY_SYSV                                                                       \
    "--isolation landlock: no IPC namespace, so System V objects are the host's: the " \
    "caller's other programs' shared memory, queues and semaphores, found by key or id"
#define WHY_MQUEUE                                                                     \
    "--isolation landlock: no IPC namespace, so POSIX message queues are the host's, " \
    "found by name (mq_open does not go through the file system Landlock governs)"
#define WHY_FASTOPEN "--isolation landlock, --network none: TCP Fast Open connects without connect(2)"
#define WHY_LISTEN                                                                             \
    "--isolation landlock, --network none: listen(2) on a socket never bound binds it to a "   \
    "free port on every address of the host (the kernel's autobind does not go through "       \
    "bind(2), so Landlock never sees it) and a host process could connect in; nothing inside " \
    "can connect to it anyway (Landlock refuses connect(2) to every port)"

#define WHY_SETID                                                                          \
    "a set-user-ID or set-group-ID file left in a writable path would give any host user " \
    "who runs it the command's uid or gid (as root: euid 0); refused whatever the file, "  \
    "directories included (mkdir(2) ignores these bits)"
#define SETID(call, arg)                                                                                      \
    {call, 0, EPERM, SC_FLAGS, arg, S_ISUID, call "(mode with S_ISUID)", WHY_SETID, SC_DENY, SC_OP_NONE, 0},  \
    {                                                                                                         \
        call, 0, EPERM, SC_FLAGS, arg, S_ISGID, call "(mode with S_ISGID)", WHY_SETID, SC_DENY, SC_OP_NONE, 0 \
    }

/* The command's filter: the calls that create a name, or open a file for writing, are
 * performed by the supervisor on the command's behalf (supervise/creation.c). */
#define WHY_CREATE                                                                      \
    "creates a name: the supervisor resolves the path itself, refuses protected names " \
    "(agent configuration, new git repositories, git hooks and config), and performs it"
#define WHY_WRITE                                                                          \
    "opens a file for writing: the supervisor refuses git configuration and hooks of any " \
    "repository, and performs the open"
#define NOTIFY(call, op, match, arg, value, value2, what, why)       \
    {                                                                \
        call, 0, 0, match, arg, value, what, why, SC_CMD, op, value2 \
    }
#define WHY_REMOVE                                                                        \
    "--isolation landlock: removes a name; the command's Landlock domain may only read "  \
    "the directories split around a read-only path (the top of the workspace, .git), so " \
    "the supervisor removes there, by the rules of the view"
#define NOTIFY_LL(call, op, what)                                               \
    {                                                                           \
        call, SC_CMD_LANDLOCK, 0, SC_ANY, 0, 0, what, WHY_REMOVE, SC_CMD, op, 0 \
    }
#define OPEN_ROWS(call, op, arg)                                                             \
    NOTIFY(call, op, SC_FLAGS, arg, O_CREAT, 0, call "(O_CREAT)", WHY_CREATE),               \
        NOTIFY(call, op, SC_MASKED, arg, O_ACCMODE, O_WRONLY, call "(O_WRONLY)", WHY_WRITE), \
        NOTIFY(call, op, SC_MASKED, arg, O_ACCMODE, O_RDWR, call "(O_RDWR)", WHY_WRITE),     \
        NOTIFY(call, op, SC_FLAGS, arg, O_TRUNC, 0, call "(O_TRUNC)", WHY_WRITE)
/* mount(2) flags that do not make a new file system (a remount, a bind, a move, a
 * change of propagation): such calls are not notified. */
#define NEW_FS_NOT (MS_REMOUNT | MS_BIND | MS_MOVE | MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE)
#define WHY_NEW_FS                                                                             \
    "a new file system in a nested namespace: the supervisor makes it itself when its type "   \
    "is one nested sandboxes use (tmpfs, proc, devpts, mqueue, cgroup, fuse; never sysfs); a " \
    "kernel overlay would create files in a host directory on the command's behalf, out of "   \
    "the supervisor's sight"
#define WHY_META                                                                            \
    "changes a file's mode, owner or length without opening it: the supervisor refuses it " \
    "on git directories, their configuration and hooks, and performs the rest"
#define WHY_NEWROOT                                                                           \
    "the thread's root may change: the supervisor forgets what it remembers of it (the call " \
    "itself goes on unchanged)"
#define WHY_LANDLOCK                                                                      \
    "the supervisor performs creations with the sandbox's own Landlock domain and could " \
    "not honour one the command adds; ENOSYS, as on a kernel without Landlock, so that "  \
    "tools say so instead of trusting restrictions that would not hold"

#define WHY_CONNECT                                                                        \
    "may reach a host service through its pathname Unix socket: the supervisor reads the " \
    "address once, refuses (EACCES) a pathname socket the sandbox did not bind and "       \
    "--allow-socket does not name, and performs the call itself (other addresses unchanged)"
#define WHY_BIND                                                                              \
    "a pathname Unix socket is a new name: the supervisor makes it after the creation "       \
    "control's decision (agent configuration, .git), and remembers it as the sandbox's own; " \
    "other addresses are bound as asked"
#define WHY_SENDMSG                                                                           \
    "its address is in memory, where a filter cannot look: the supervisor reads the message " \
    "once and sends it itself, refusing (EACCES) a pathname socket the sandbox did not bind"

/* 32-bit x86's socketcall(2) multiplexer hides the address in memory, behind one more
 * pointer: the supervisor cannot serve it, so its address-taking calls are refused (the
 * direct calls of Linux 4.3 are served; socketcall(SYS_SOCKET) is refused already). */
#define SOCKETCALL(n, name)                                                                     \
    {                                                                                           \
        "socketcall", 0, EPERM, SC_EQ32, 0, n, "socketcall(" name ")",                          \
            "32-bit x86: the address is in memory behind socketcall's own argument array, out " \
            "of the supervisor's reach; the direct call (Linux 4.3) is served",                 \
            SC_CMD, SC_OP_NONE, 0                                                               \
    }

const sc_rule sc_rules[] = {
    /* --- always ------------------------------------------------------------------- */
    {"io_uring_setup", 0, EPERM, SC_ANY, 0, 0, "io_uring_setup", WHY_IO_URING},
    {"io_uring_enter", 0, EPERM, SC_ANY, 0, 0, "io_uring_enter", WHY_IO_URING},
    {"io_uring_register", 0, EPERM, SC_ANY, 0, 0, "io_uring_register", WHY_IO_URING},
    {"socket", 0, EPERM, SC_EQ32, 0, AF_VSOCK, "socket(AF_VSOCK)",
     "vsock reaches the hypervisor and other VMs; it is not network-namespaced, so "
     "--network none would not stop it"},
    {"socket", 0, EPERM, SC_ONLY_SMALL, 0, ALLOWED_FAMILIES,
     "socket(family not AF_UNIX, AF_INET, AF_INET6, AF_NETLINK)",
     "other families are not needed, and creating one may load a rarely used, "
     "historically vulnerable kernel module (DCCP, RDS, TIPC, AF_ALG, ...)"},
    {"ioctl", 0, EPERM, SC_EQ32, 1, TIOCSTI, "ioctl(TIOCSTI)",
     "pushes input into a terminal: keystrokes typed into the caller's shell "
     "(CVE-2017-5226); compared on 32 bits, as the kernel reads it (CVE-2019-10063)"},
    {"ioctl", 0, EPERM, SC_EQ32, 1, TIOCLINUX, "ioctl(TIOCLINUX)",
     "the console's selection can be pasted as input, like TIOCSTI (CVE-2023-28100)"},
    {"keyctl", 0, EPERM, SC_ANY, 0, 0, "keyctl", WHY_KEYS},
    {"add_key", 0, EPERM, SC_ANY, 0, 0, "add_key", WHY_KEYS},
    {"request_key", 0, EPERM, SC_ANY, 0, 0, "request_key", WHY_KEYS},
    {"userfaultfd", 0, EPERM, SC_ANY, 0, 0, "userfaultfd",
     "lets a process stall the kernel in the middle of a copy from user memory: the "
     "usual way to win a kernel race in an exploit"},
    {"perf_event_open", 0, EPERM, SC_ANY, 0, 0, "perf_event_open",
     "profiling belongs outside the sandbox; perf has had many vulnerabilities and leaks "
     "kernel addresses and side channels"},
    {"kexec_load", 0, EPERM, SC_ANY, 0, 0, "kexec_load", "loading a new kernel"},
    {"kexec_file_load", 0, EPERM, SC_ANY, 0, 0, "kexec_file_load", "loading a new kernel"},
    {"bpf", 0, EPERM, SC_ANY, 0, 0, "bpf",
     "eBPF programs run in the kernel: the verifier is a frequent source of privilege "
     "escalations"},
    {"syslog", 0, EPERM, SC_ANY, 0, 0, "syslog", "the kernel log shows the host's activity and kernel addresses"},
    {"uselib", 0, EPERM, SC_ANY, 0, 0, "uselib", "obsolete a.out library loading"},
    {"acct", 0, EPERM, SC_ANY, 0, 0, "acct", "process accounting belongs to the host"},
    {"modify_ldt", 0, EPERM, SC_ANY, 0, 0, "modify_ldt",
     "16-bit segments: not needed, and a history of kernel information leaks"},
    {"vm86", 0, EPERM, SC_ANY, 0, 0, "vm86", "16-bit virtual 8086 mode (32-bit x86)"},
    {"vm86old", 0, EPERM, SC_ANY, 0, 0, "vm86old", "16-bit virtual 8086 mode (32-bit x86)"},
    {"quotactl", 0, EPERM, SC_ANY, 0, 0, "quotactl", "disk quotas of the host's file systems"},
    {"quotactl_fd", 0, EPERM, SC_ANY, 0, 0, "quotactl_fd", "disk quotas of the host's file systems"},
    {"move_pages", 0, EPERM, SC_ANY, 0, 0, "move_pages", WHY_NUMA},
    {"migrate_pages", 0, EPERM, SC_ANY, 0, 0, "migrate_pages", WHY_NUMA},
    {"mbind", 0, EPERM, SC_ANY, 0, 0, "mbind", WHY_NUMA},
    {"get_mempolicy", 0, EPERM, SC_ANY, 0, 0, "get_mempolicy", WHY_NUMA},
    {"set_mempolicy", 0, EPERM, SC_ANY, 0, 0, "set_mempolicy", WHY_NUMA},
    {"set_mempolicy_home_node", 0, EPERM, SC_ANY, 0, 0, "set_mempolicy_home_node", WHY_NUMA},
    {"personality", 0, EPERM, SC_ONLY_BITS, 0, ALLOWED_PERSONALITY,
     "personality(flags other than PER_LINUX32, UNAME26, ADDR_NO_RANDOMIZE)",
     "other execution domains and flags (READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, ...) weaken "
     "memory protections and exist for old binaries only"},
    {"open_by_handle_at", 0, EPERM, SC_ANY, 0, 0, "open_by_handle_at",
     "opens files by handle, bypassing the view (the \"shocker\" container escape); the "
     "kernel also requires a capability the sandbox never has"},
    {"init_module", 0, EPERM, SC_ANY, 0, 0, "init_module", "loading kernel modules"},
    {"finit_module", 0, EPERM, SC_ANY, 0, 0, "finit_module", "loading kernel modules"},
    {"delete_module", 0, EPERM, SC_ANY, 0, 0, "delete_module", "unloading kernel modules"},
    {"iopl", 0, EPERM, SC_ANY, 0, 0, "iopl", "direct hardware port access (x86)"},
    {"ioperm", 0, EPERM, SC_ANY, 0, 0, "ioperm", "direct hardware port access (x86)"},

    /* A new cgroup namespace owned by a nested user namespace lets the command mount
     * cgroup2 with its root at the cgroup cordon runs in: for a root caller that is the
     * host's tree (its files are uid 0's), for a user with a delegated cgroup that is
     * their session (cgroup.kill of processes outside the sandbox).  Nested sandboxes
     * share the sandbox's cgroup namespace instead (sandbox/ns.c falls back). */
    {"unshare", 0, EPERM, SC_FLAGS, 0, CLONE_NEWCGROUP, "unshare(CLONE_NEWCGROUP)",
     "a cgroup namespace of the command's own would let it mount and write the cgroup tree "
     "above the sandbox"},
    {"clone", 0, EPERM, SC_FLAGS, 0, CLONE_NEWCGROUP, "clone(CLONE_NEWCGROUP)", "as unshare(CLONE_NEWCGROUP)"},
    {"clone3", 0, ENOSYS, SC_ANY, 0, 0, "clone3",
     "its flags are in memory, where seccomp cannot look; ENOSYS makes libc fall back to "
     "clone(2), which is checked (as Docker's default profile does)"},

    /* --- --no-nested: no sandbox inside the sandbox ------------------------------- */
    {"unshare", SC_MODE_NO_NESTED, EPERM, SC_FLAGS, 0, CLONE_NEWUSER, "unshare(CLONE_NEWUSER)",
     "--no-nested: a new user namespace would give the command capabilities over new "
     "namespaces, and with them the kernel's mount and namespace code"},
    {"clone", SC_MODE_NO_NESTED, EPERM, SC_FLAGS, 0, CLONE_NEWUSER, "clone(CLONE_NEWUSER)",
     "--no-nested: as unshare(CLONE_NEWUSER)"},
    {"setns", SC_MODE_NO_NESTED, EPERM, SC_ANY, 0, 0, "setns", WHY_NEST_NS},
    {"chroot", SC_MODE_NO_NESTED, EPERM, SC_ANY, 0, 0, "chroot", WHY_NEST_NS},
    {"pivot_root", SC_MODE_NO_NESTED, EPERM, SC_ANY, 0, 0, "pivot_root", WHY_NEST_NS},
    {"mount", SC_MODE_NO_NESTED, EPERM, SC_ANY, 0, 0, "mount", "--no-nested: mounting"},
    {"umount", SC_MODE_NO_NESTED, EPERM, SC_ANY, 0, 0, "umount", "--no-nested: unmounting"},
    {"umount2", SC_MODE_NO_NESTED, EPERM, SC_ANY, 0, 0, "umount2", "--no-nested: unmounting"},
    {"fsopen", SC_MODE_NO_NESTED, ENOSYS, SC_ANY, 0, 0, "fsopen", WHY_NEST_MOUNT},
    {"fsconfig", SC_MODE_NO_NESTED, ENOSYS, SC_ANY, 0, 0, "fsconfig", WHY_NEST_MOUNT},
    {"fsmount", SC_MODE_NO_NESTED, ENOSYS, SC_ANY, 0, 0, "fsmount", WHY_NEST_MOUNT},
    {"fspick", SC_MODE_NO_NESTED, ENOSYS, SC_ANY, 0, 0, "fspick", WHY_NEST_MOUNT},
    {"move_mount", SC_MODE_NO_NESTED, ENOSYS, SC_ANY, 0, 0, "move_mount", WHY_NEST_MOUNT},
    {"open_tree", SC_MODE_NO_NESTED, ENOSYS, SC_ANY, 0, 0, "open_tree", WHY_NEST_MOUNT},
    {"mount_setattr", SC_MODE_NO_NESTED, ENOSYS, SC_ANY, 0, 0, "mount_setattr", WHY_NEST_MOUNT},

    /* --- --isolation landlock with --network none: TCP sockets only ---------------- */
    {"socket", SC_MODE_TCP_ONLY, EPERM, SC_ONLY_SMALL, 0, BIT(AF_INET) | BIT(AF_INET6),
     "socket(family not AF_INET, AF_INET6)", WHY_TCP_ONLY},
    {"socket", SC_MODE_TCP_ONLY, EPERM, SC_LOW4_ONLY, 1, BIT(SOCK_STREAM), "socket(type not SOCK_STREAM)",
     WHY_TCP_ONLY},
    {"socket", SC_MODE_TCP_ONLY, EPERM, SC_ONLY_SMALL, 2, BIT(0) | BIT(IPPROTO_TCP),
     "socket(protocol not 0 or IPPROTO_TCP)",
     "--isolation landlock, --network none: SCTP and MPTCP stream sockets are not TCP to Landlock"},
    {"listen", SC_MODE_TCP_ONLY, EPERM, SC_ANY, 0, 0, "listen", WHY_LISTEN},
    {"socketpair", SC_MODE_TCP_ONLY, EPERM, SC_LOW4_ONLY, 1, BIT(SOCK_STREAM), "socketpair(type not SOCK_STREAM)",
     "--isolation landlock, --network none: a datagram or sequenced-packet pair is a Unix socket that "
     "could connect or send to a host service's pathname socket, refused here with every other Unix "
     "socket (a stream pair cannot: it is connected for good)"},
    {"sendto", SC_MODE_TCP_ONLY, EPERM, SC_FLAGS, 3, MSG_FASTOPEN, "sendto(MSG_FASTOPEN)", WHY_FASTOPEN},
    {"sendmsg", SC_MODE_TCP_ONLY, EPERM, SC_FLAGS, 2, MSG_FASTOPEN, "sendmsg(MSG_FASTOPEN)", WHY_FASTOPEN},
    {"sendmmsg", SC_MODE_TCP_ONLY, EPERM, SC_FLAGS, 3, MSG_FASTOPEN, "sendmmsg(MSG_FASTOPEN)", WHY_FASTOPEN},
    {"socketcall", SC_MODE_TCP_ONLY, EPERM, SC_ANY, 0, 0, "socketcall",
     "--isolation landlock, --network none: 32-bit x86's multiplexer hides its arguments, "
     "MSG_FASTOPEN among them"},

    /* --- always: no set-user-ID or set-group-ID file ----------------------------- */
    SETID("chmod", 1),
    SETID("fchmod", 1),
    SETID("fchmodat", 2),
    SETID("fchmodat2", 2),
    SETID("mknod", 1),
    SETID("mknodat", 2),
    SETID("open", 2),
    SETID("openat", 3),
    SETID("creat", 1),

    /* --- the command's filter (SC_CMD) --------------------------------------------- */
    OPEN_ROWS("open", SC_OP_OPEN, 1),
    OPEN_ROWS("openat", SC_OP_OPENAT, 2),
    NOTIFY("creat", SC_OP_CREAT, SC_ANY, 0, 0, 0, "creat", WHY_CREATE),
    NOTIFY("mkdir", SC_OP_MKDIR, SC_ANY, 0, 0, 0, "mkdir", WHY_CREATE),
    NOTIFY("mkdirat", SC_OP_MKDIRAT, SC_ANY, 0, 0, 0, "mkdirat", WHY_CREATE),
    NOTIFY("mknod", SC_OP_MKNOD, SC_ANY, 0, 0, 0, "mknod", WHY_CREATE),
    NOTIFY("mknodat", SC_OP_MKNODAT, SC_ANY, 0, 0, 0, "mknodat", WHY_CREATE),
    NOTIFY("rename", SC_OP_RENAME, SC_ANY, 0, 0, 0, "rename", WHY_CREATE),
    NOTIFY("renameat", SC_OP_RENAMEAT, SC_ANY, 0, 0, 0, "renameat", WHY_CREATE),
    NOTIFY("renameat2", SC_OP_RENAMEAT2, SC_ANY, 0, 0, 0, "renameat2", WHY_CREATE),
    NOTIFY("link", SC_OP_LINK, SC_ANY, 0, 0, 0, "link", WHY_CREATE),
    NOTIFY("linkat", SC_OP_LINKAT, SC_ANY, 0, 0, 0, "linkat", WHY_CREATE),
    NOTIFY("symlink", SC_OP_SYMLINK, SC_ANY, 0, 0, 0, "symlink", WHY_CREATE),
    NOTIFY("symlinkat", SC_OP_SYMLINKAT, SC_ANY, 0, 0, 0, "symlinkat", WHY_CREATE),
    NOTIFY("prctl", SC_OP_PRCTL, SC_EQ32, 0, CORDON_PRCTL, 0, "prctl(CORDON_PRCTL)",
           "a cordon inside the sandbox hands its protections to this one's supervisor "
           "(the kernel allows one listener per process)"),
    NOTIFY("fsopen", SC_OP_FSOPEN, SC_ANY, 0, 0, 0, "fsopen", WHY_NEW_FS),
    NOTIFY("umask", SC_OP_UMASK, SC_ANY, 0, 0, 0, "umask",
           "the supervisor creates files with the thread's umask and keeps a copy of it "
           "(the call itself goes on unchanged)"),
    NOTIFY("chroot", SC_OP_NEWROOT, SC_ANY, 0, 0, 0, "chroot", WHY_NEWROOT),
    NOTIFY("pivot_root", SC_OP_NEWROOT, SC_ANY, 0, 0, 0, "pivot_root", WHY_NEWROOT),
    NOTIFY("setns", SC_OP_NEWROOT, SC_ANY, 0, 0, 0, "setns", WHY_NEWROOT),
    NOTIFY("unshare", SC_OP_NEWROOT, SC_ANY, 0, 0, 0, "unshare", WHY_NEWROOT),
    NOTIFY("mount", SC_OP_MOUNT, SC_NONE_OF, 3, NEW_FS_NOT, 0, "mount(a new file system)", WHY_NEW_FS),
    NOTIFY("chmod", SC_OP_CHMOD, SC_ANY, 0, 0, 0, "chmod", WHY_META),
    NOTIFY("fchmod", SC_OP_FCHMOD, SC_ANY, 0, 0, 0, "fchmod", WHY_META),
    NOTIFY("fchmodat", SC_OP_FCHMODAT, SC_ANY, 0, 0, 0, "fchmodat", WHY_META),
    NOTIFY("fchmodat2", SC_OP_FCHMODAT2, SC_ANY, 0, 0, 0, "fchmodat2", WHY_META),
    NOTIFY("chown", SC_OP_CHOWN, SC_ANY, 0, 0, 0, "chown", WHY_META),
    NOTIFY("lchown", SC_OP_LCHOWN, SC_ANY, 0, 0, 0, "lchown", WHY_META),
    NOTIFY("fchown", SC_OP_FCHOWN, SC_ANY, 0, 0, 0, "fchown", WHY_META),
    NOTIFY("chown32", SC_OP_CHOWN32, SC_ANY, 0, 0, 0, "chown32", WHY_META),
    NOTIFY("lchown32", SC_OP_LCHOWN32, SC_ANY, 0, 0, 0, "lchown32", WHY_META),
    NOTIFY("fchown32", SC_OP_FCHOWN32, SC_ANY, 0, 0, 0, "fchown32", WHY_META),
    NOTIFY("fchownat", SC_OP_FCHOWNAT, SC_ANY, 0, 0, 0, "fchownat", WHY_META),
    NOTIFY_LL("unlink", SC_OP_UNLINK, "unlink"),
    NOTIFY_LL("unlinkat", SC_OP_UNLINKAT, "unlinkat"),
    NOTIFY_LL("rmdir", SC_OP_RMDIR, "rmdir"),
    NOTIFY("truncate", SC_OP_TRUNCATE, SC_ANY, 0, 0, 0, "truncate", WHY_META),
    NOTIFY("truncate64", SC_OP_TRUNCATE64, SC_ANY, 0, 0, 0, "truncate64", WHY_META),
    /* Unix sockets: a pathname socket is reached by connect, sendto and sendmsg, and made by
     * bind.  A filter cannot read the socket's family nor the address (in memory), so
     * the calls whose address may hold a path (longer than the family and one byte) go to
     * the supervisor, which reads the address once and performs the call itself
     * (supervise/sockets.c); sendmsg and sendmmsg carry the address in memory, so all of
     * them do. */
    NOTIFY("connect", SC_OP_CONNECT, SC_ABOVE, 2, 2, 0, "connect(address longer than 2 bytes)", WHY_CONNECT),
    NOTIFY("bind", SC_OP_BIND, SC_ABOVE, 2, 2, 0, "bind(address longer than 2 bytes)", WHY_BIND),
    NOTIFY("sendto", SC_OP_SENDTO, SC_ABOVE, 5, 2, 0, "sendto(address longer than 2 bytes)", WHY_CONNECT),
    NOTIFY("sendmsg", SC_OP_SENDMSG, SC_ANY, 0, 0, 0, "sendmsg", WHY_SENDMSG),
    NOTIFY("sendmmsg", SC_OP_SENDMMSG, SC_ANY, 0, 0, 0, "sendmmsg", WHY_SENDMSG),
    SOCKETCALL(3, "SYS_CONNECT"),
    SOCKETCALL(2, "SYS_BIND"),
    SOCKETCALL(11, "SYS_SENDTO"),
    SOCKETCALL(16, "SYS_SENDMSG"),
    SOCKETCALL(20, "SYS_SENDMMSG"),
    {"openat2", 0, ENOSYS, SC_ANY, 0, 0, "openat2",
     "its flags are in memory, where seccomp cannot look; ENOSYS makes callers fall back to "
     "openat(2), whose creations and writes the supervisor performs",
     SC_CMD, SC_OP_NONE, 0},
    {"landlock_create_ruleset", 0, ENOSYS, SC_ANY, 0, 0, "landlock_create_ruleset", WHY_LANDLOCK, SC_CMD, SC_OP_NONE,
     0},
    {"landlock_add_rule", 0, ENOSYS, SC_ANY, 0, 0, "landlock_add_rule", WHY_LANDLOCK, SC_CMD, SC_OP_NONE, 0},
    {"landlock_restrict_self", 0, ENOSYS, SC_ANY, 0, 0, "landlock_restrict_self", WHY_LANDLOCK, SC_CMD, SC_OP_NONE, 0},

    /* --- --isolation landlock: the host's IPC objects ------------------------------- */
    {"shmget", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "shmget", WHY_SYSV},
    {"shmat", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "shmat", WHY_SYSV},
    {"shmctl", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "shmctl", WHY_SYSV},
    {"msgget", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "msgget", WHY_SYSV},
    {"msgsnd", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "msgsnd", WHY_SYSV},
    {"msgrcv", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "msgrcv", WHY_SYSV},
    {"msgctl", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "msgctl", WHY_SYSV},
    {"semget", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "semget", WHY_SYSV},
    {"semop", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "semop", WHY_SYSV},
    {"semtimedop", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "semtimedop", WHY_SYSV},
    {"semtimedop_time64", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "semtimedop_time64", WHY_SYSV},
    {"semctl", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "semctl", WHY_SYSV},
    {"ipc", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "ipc",
     "--isolation landlock: 32-bit x86's System V multiplexer, as the calls above"},
    {"mq_open", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "mq_open", WHY_MQUEUE},
    {"mq_unlink", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "mq_unlink", WHY_MQUEUE},
    {"mq_timedsend", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "mq_timedsend", WHY_MQUEUE},
    {"mq_timedreceive", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "mq_timedreceive", WHY_MQUEUE},
    {"mq_notify", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "mq_notify", WHY_MQUEUE},
    {"mq_getsetattr", SC_MODE_HOST_IPC, EPERM, SC_ANY, 0, 0, "mq_getsetattr", WHY_MQUEUE},

    /* --- proxy network: the proxy is the only way out (src/net) --------------------- */
    {"socket", SC_MODE_IP_ONLY, EPERM, SC_ONLY_SMALL, 0, BIT(AF_INET) | BIT(AF_INET6),
     "socket(family not AF_INET, AF_INET6)",
     "--network proxy: only IP sockets, inside the sandbox's own network namespace where the "
     "proxies are the only way out; a Unix socket could reach a host service bound into the "
     "view (socketpair(2) stays allowed; --allow-unix-sockets lifts the row)"},
};

const size_t sc_n_rules = sizeof sc_rules / sizeof sc_rules[0];
