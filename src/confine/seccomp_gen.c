// SPDX-License-Identifier: Apache-2.0
/* Build-time generator: compile the seccomp table (seccomp_table.c) with libseccomp
 * into one BPF program per combination of modes, and write them as a C file.
 *
 *   seccomp_gen TARGET OUTPUT.c [PREFIX]
 *
 * TARGET is the CPU family the programs are for (meson's host_machine.cpu_family()):
 * x86_64 (programs cover the x86-64 and 32-bit x86 ABIs; x32 is refused), aarch64
 * (AArch64 and 32-bit ARM), or anything else for the build machine's own ABI only.  PREFIX names
 * the generated arrays (default "sc": sc_programs, sc_arches, sc_skipped).
 *
 * Compiling at build time means the sandbox only hands a ready program to the kernel
 * (one seccomp(2) call); libseccomp's compiler never runs at start-up, and the library
 * does not link libseccomp at all. */
#include <errno.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine/seccomp_table.h"

typedef struct target {
    const char *name;
    uint32_t arches[4];
    const char *arch_names;
} target;

static const target targets[] = {
    /* Not x32: almost no kernel enables it and no distribution ships programs for it;
     * its calls (numbers above 0x40000000 under the x86-64 audit arch) are refused as
     * a foreign ABI, which keeps the program a seventh shorter, hence faster to load. */
    {"x86_64", {SCMP_ARCH_X86_64, SCMP_ARCH_X86, 0, 0}, "x86_64 x86"},
    {"aarch64", {SCMP_ARCH_AARCH64, SCMP_ARCH_ARM, 0, 0}, "aarch64 arm"},
};

static __attribute__((noreturn)) void die(const char *what, int rc)
{
    fprintf(stderr, "seccomp_gen: %s%s%s\n", what, rc ? ": " : "", rc ? strerror(-rc) : "");
    exit(1);
}

static int add(scmp_filter_ctx ctx, const sc_rule *r, int nr, unsigned n, const struct scmp_arg_cmp *c)
{
    uint32_t action = r->op != SC_OP_NONE ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO((uint32_t)r->errnum);
    return seccomp_rule_add_array(ctx, action, nr, n, n ? c : NULL);
}

static int add_cmp(scmp_filter_ctx ctx, const sc_rule *r, int nr, enum scmp_compare op, uint64_t a, uint64_t b)
{
    struct scmp_arg_cmp c = {.arg = r->arg, .op = op, .datum_a = a, .datum_b = b};
    return add(ctx, r, nr, 1, &c);
}

/* libseccomp allows one comparison per argument in a rule, and a filter whose default
 * is "allow" cannot have "allow" rules; so "only these bits, or the all-ones query"
 * becomes refusals that each test two bits.  With F the forbidden bit positions in a
 * cycle f0 f1 ... fk: a value with some forbidden bit set and not all ones either has
 * a forbidden bit set whose successor in the cycle is clear (caught by the pair rule),
 * or has every forbidden bit set and some allowed bit clear (caught by f0's rules with
 * each allowed bit).  No rule matches an allowed value (each needs a forbidden bit) or
 * the query (each needs a clear bit).  The masks stay in the low 32 bits: the kernel
 * reads an unsigned int, so the upper half must not matter. */
static int add_only_bits(scmp_filter_ctx ctx, const sc_rule *r, int nr)
{
    unsigned forbidden[32], nf = 0;
    for (unsigned b = 0; b < 32; b++)
        if (!(r->value & (UINT64_C(1) << b)))
            forbidden[nf++] = b;
    if (nf == 0)
        return 0;
    for (unsigned i = 0; i < nf; i++) {
        uint64_t set = UINT64_C(1) << forbidden[i];
        uint64_t clear = UINT64_C(1) << forbidden[(i + 1) % nf];
        if (set == clear)
            continue; /* a single forbidden bit: the allowed-bit rules below cover it */
        int rc = add_cmp(ctx, r, nr, SCMP_CMP_MASKED_EQ, set | clear, set);
        if (rc < 0)
            return rc;
    }
    uint64_t f0 = UINT64_C(1) << forbidden[0];
    for (unsigned b = 0; b < 32; b++) {
        if (!(r->value & (UINT64_C(1) << b)))
            continue;
        int rc = add_cmp(ctx, r, nr, SCMP_CMP_MASKED_EQ, f0 | (UINT64_C(1) << b), f0);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* "Only these small numbers": each other number below the largest allowed one is
 * refused on its own (compared on 32 bits), and everything above by one unsigned
 * 64-bit comparison (which also refuses any value with the upper half set). */
static int add_only_small(scmp_filter_ctx ctx, const sc_rule *r, int nr)
{
    if (r->value == 0)
        return add(ctx, r, nr, 0, NULL);
    unsigned top = 63 - (unsigned)__builtin_clzll(r->value);
    for (unsigned v = 0; v < top; v++) {
        if (r->value & (UINT64_C(1) << v))
            continue;
        int rc = add_cmp(ctx, r, nr, SCMP_CMP_MASKED_EQ, 0xffffffffu, v);
        if (rc < 0)
            return rc;
    }
    return add_cmp(ctx, r, nr, SCMP_CMP_GE, (uint64_t)top + 1, 0);
}

/* "(arg & 0xf) is one of these numbers": every other number is refused on its own. */
static int add_low4_only(scmp_filter_ctx ctx, const sc_rule *r, int nr)
{
    for (uint64_t v = 0; v <= 0xf; v++) {
        if (r->value & (UINT64_C(1) << v))
            continue;
        int rc = add_cmp(ctx, r, nr, SCMP_CMP_MASKED_EQ, 0xf, v);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int add_rule(scmp_filter_ctx ctx, const sc_rule *r, int nr)
{
    switch (r->match) {
    case SC_ANY: return add(ctx, r, nr, 0, NULL);
    case SC_EQ32: return add_cmp(ctx, r, nr, SCMP_CMP_MASKED_EQ, 0xffffffffu, r->value);
    case SC_FLAGS: return add_cmp(ctx, r, nr, SCMP_CMP_MASKED_EQ, r->value, r->value);
    case SC_ONLY_SMALL: return add_only_small(ctx, r, nr);
    case SC_ONLY_BITS: return add_only_bits(ctx, r, nr);
    case SC_LOW4_ONLY: return add_low4_only(ctx, r, nr);
    case SC_MASKED: return add_cmp(ctx, r, nr, SCMP_CMP_MASKED_EQ, r->value, r->value2);
    case SC_NONE_OF: return add_cmp(ctx, r, nr, SCMP_CMP_MASKED_EQ, r->value, 0);
    case SC_ABOVE: return add_cmp(ctx, r, nr, SCMP_CMP_GT, r->value, 0);
    }
    return -EINVAL;
}

static int row_in(const sc_rule *r, sc_filter filter, unsigned mode)
{
    return filter == SC_DENY ? sc_rule_applies(r, mode) : sc_cmd_rule_applies(r, mode);
}

static scmp_filter_ctx build(const target *t, sc_filter filter, unsigned mode, FILE *skipped)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        die("seccomp_init failed", 0);
    /* Every ABI the CPU can run gets the same rules; a system call of any other ABI
     * (none exists on these CPUs) is refused rather than allowed unfiltered. */
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
    if (rc < 0)
        die("cannot set the bad-architecture action", rc);
    /* A binary tree of system call numbers instead of a linear list. */
    if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0)
        fprintf(stderr, "seccomp_gen: this libseccomp cannot sort the filter; keeping a list\n");
    if (t) {
        uint32_t native = seccomp_arch_native();
        int keep_native = 0;
        for (const uint32_t *a = t->arches; *a; a++) {
            keep_native |= *a == native;
            rc = seccomp_arch_add(ctx, *a);
            if (rc < 0 && rc != -EEXIST)
                die("cannot add an architecture", rc);
        }
        if (!keep_native && (rc = seccomp_arch_remove(ctx, native)) < 0)
            die("cannot remove the build machine's architecture", rc);
    }
    for (size_t i = 0; i < sc_n_rules; i++) {
        const sc_rule *r = &sc_rules[i];
        if (!row_in(r, filter, mode))
            continue;
        int nr = seccomp_syscall_resolve_name(r->syscall);
        if (nr == __NR_SCMP_ERROR) {
            if (r->op != SC_OP_NONE)
                die("libseccomp does not know a call the supervisor must see (update libseccomp)", 0);
            if (skipped && filter == SC_DENY && mode == SC_PROGRAMS - 1)
                fprintf(skipped, "%s ", r->syscall);
            fprintf(stderr, "seccomp_gen: warning: libseccomp does not know %s; not filtered\n", r->syscall);
            continue;
        }
        rc = add_rule(ctx, r, nr);
        if (rc < 0) {
            fprintf(stderr, "seccomp_gen: %s (%s)", r->what, r->syscall);
            die("", rc);
        }
    }
    return ctx;
}

/* One program per mode of `filter`, as arrays PREFIX_NAMEi and the table PREFIX_TABLE. */
static void emit_programs(FILE *out, const target *t, sc_filter filter, unsigned n, const char *prefix,
                          const char *name, const char *table, FILE *skipped)
{
    unsigned lens[SC_PROGRAMS > SC_CMD_PROGRAMS ? SC_PROGRAMS : SC_CMD_PROGRAMS];
    for (unsigned mode = 0; mode < n; mode++) {
        scmp_filter_ctx ctx = build(t, filter, mode, skipped);
        FILE *tmp = tmpfile();
        if (!tmp)
            die("tmpfile", -errno);
        int fd = fileno(tmp);
        int rc = seccomp_export_bpf(ctx, fd);
        if (rc < 0)
            die("seccomp_export_bpf", rc);
        seccomp_release(ctx);
        off_t size = lseek(fd, 0, SEEK_END);
        if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 || lseek(fd, 0, SEEK_SET) != 0)
            die("unexpected size of the exported filter", 0);
        lens[mode] = (unsigned)(size / (off_t)sizeof(struct sock_filter));
        if (lens[mode] > BPF_MAXINSNS)
            die("the filter is longer than the kernel accepts", 0);
        fprintf(out, "static const struct sock_filter %s_%s%u[] = {\n", prefix, name, mode);
        struct sock_filter f;
        while (read(fd, &f, sizeof f) == (ssize_t)sizeof f)
            fprintf(out, "    {0x%04x, %u, %u, 0x%08x},\n", f.code, f.jt, f.jf, f.k);
        fprintf(out, "};\n\n");
        fclose(tmp);
    }
    fprintf(out, "extern const sc_program %s_%s[%u];\n", prefix, table, n);
    fprintf(out, "const sc_program %s_%s[%u] = {\n", prefix, table, n);
    for (unsigned mode = 0; mode < n; mode++)
        fprintf(out, "    {%s_%s%u, %u},\n", prefix, name, mode, lens[mode]);
    fprintf(out, "};\n\n");
}

/* 32-bit x86 has each socket call twice: through the socketcall(2) multiplexer, which
 * libseccomp names by a negative pseudo number, and as a direct call (Linux 4.3).  The
 * filter notifies both; the supervisor serves the direct one (socketcall's arguments are
 * in memory: it answers ENOSYS, doc/seccomp.md). */
static int x86_direct_socket_call(const char *name)
{
    static const struct {
        const char *name;
        int nr;
    } calls[] = {{"bind", 361}, {"connect", 362}, {"sendto", 369}, {"sendmsg", 370}, {"sendmmsg", 345}};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (strcmp(name, calls[i].name) == 0)
            return calls[i].nr;
    return -1;
}

/* The (audit arch, number) of every notify row's call on every ABI of the target, so that
 * the supervisor knows which call a notification is about without libseccomp. */
static void emit_notify_calls(FILE *out, const target *t, const char *prefix)
{
    uint32_t native[2] = {seccomp_arch_native(), 0};
    const uint32_t *arches = t ? t->arches : native;
    size_t n = 0;
    fprintf(out, "extern const sc_notify_call %s_notify_calls[];\n", prefix);
    fprintf(out, "const sc_notify_call %s_notify_calls[] = {\n", prefix);
    for (const uint32_t *a = arches; *a; a++) {
        for (size_t i = 0; i < sc_n_rules; i++) {
            const sc_rule *r = &sc_rules[i];
            if (r->filter != SC_CMD || r->op == SC_OP_NONE)
                continue;
            /* the open rows repeat the call: one entry each */
            int dup = 0;
            for (size_t j = 0; j < i; j++)
                dup |= sc_rules[j].filter == SC_CMD && sc_rules[j].op != SC_OP_NONE &&
                       strcmp(sc_rules[j].syscall, r->syscall) == 0;
            if (dup)
                continue;
            int nr = seccomp_syscall_resolve_name_arch(*a, r->syscall);
            if (nr < 0 && nr != __NR_SCMP_ERROR && *a == SCMP_ARCH_X86)
                nr = x86_direct_socket_call(r->syscall);
            if (nr == __NR_SCMP_ERROR || nr < 0)
                continue; /* the call does not exist on this ABI (e.g. open on AArch64) */
            fprintf(out, "    {0x%08xu, %d, %d}, /* %s */\n", *a, nr, (int)r->op, r->syscall);
            n++;
        }
    }
    fprintf(out, "};\nextern const size_t %s_n_notify_calls;\nconst size_t %s_n_notify_calls = %zu;\n\n", prefix,
            prefix, n);
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: seccomp_gen TARGET OUTPUT.c [PREFIX]\n");
        return 2;
    }
    const target *t = NULL;
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (strcmp(argv[1], targets[i].name) == 0)
            t = &targets[i];
    const char *prefix = argc == 4 ? argv[3] : "sc";
    const struct scmp_version *v = seccomp_version();

    char *skipped_text = NULL;
    size_t skipped_len = 0;
    FILE *skipped = open_memstream(&skipped_text, &skipped_len);
    FILE *out = fopen(argv[2], "we");
    if (!out || !skipped)
        die("cannot open the output", -errno);
    fprintf(out,
            "/* Generated at build time by seccomp_gen from src/confine/seccomp_table.c with\n"
            " * libseccomp %u.%u.%u, for %s (%s).  Do not edit. */\n"
            "#include \"confine/seccomp.h\"\n\n",
            v->major, v->minor, v->micro, argv[1], t ? t->arch_names : "the build machine's ABI");
    emit_programs(out, t, SC_DENY, SC_PROGRAMS, prefix, "prog", "programs", skipped);
    emit_programs(out, t, SC_CMD, SC_CMD_PROGRAMS, prefix, "cmd_prog", "cmd_programs", NULL);
    fclose(skipped);
    emit_notify_calls(out, t, prefix);
    fprintf(out, "extern const char %s_arches[];\nconst char %s_arches[] = \"%s\";\n", prefix, prefix,
            t ? t->arch_names : "native");
    size_t sl = skipped_text ? strlen(skipped_text) : 0;
    while (sl > 0 && skipped_text[sl - 1] == ' ')
        skipped_text[--sl] = '\0';
    fprintf(out, "extern const char %s_skipped[];\nconst char %s_skipped[] = \"%s\";\n", prefix, prefix,
            skipped_text ? skipped_text : "");
    free(skipped_text);
    if (fclose(out) != 0)
        die("cannot write the output", -errno);
    return 0;
}
