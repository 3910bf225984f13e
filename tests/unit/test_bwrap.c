// SPDX-License-Identifier: Apache-2.0
/* Unit tests for bubblewrap compatibility (src/bwrap/): bwrap's command line, and the
 * mount operations in bwrap's order as cordon rules.  Pure: the host is a table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwrap/bwrap.h"

/* argv tables are string literals (const under -Wwrite-strings); nothing writes them. */
#pragma GCC diagnostic ignored "-Wdiscarded-qualifiers"

static bw_src_type host_type(const char *path, void *ctx)
{
    (void)ctx;
    if (strcmp(path, "/dev/null") == 0)
        return BW_SRC_DEVNULL;
    if (strcmp(path, "/empty") == 0)
        return BW_SRC_EMPTY_DIR;
    if (strncmp(path, "/missing", 8) == 0)
        return BW_SRC_MISSING;
    return BW_SRC_OTHER;
}
static const bw_host host = {.src_type = host_type};

#define ARGC(a) ((int)(sizeof(a) / sizeof *(a)) - 1)

/* Parse and map; returns 0 or -1 with msg. */
static int map(int argc, char **argv, bw_args *a, bw_plan *p, char *msg, size_t n)
{
    if (bw_parse_args(argc, argv, a, msg, n) < 0)
        return -1;
    int r = bw_map(a, &host, p, msg, n);
    return r;
}

/* The access of the rule at `path`, or -1 when there is none; -2 for a tmpfs. */
static int access_at(const bw_plan *p, const char *path)
{
    for (size_t i = 0; i < p->n_rules; i++)
        if (strcmp(p->rules[i].path, path) == 0)
            return p->rules[i].tmpfs ? -2 : (int)p->rules[i].access;
    return -1;
}

static void parse_refuses(void **state)
{
    (void)state;
    char msg[256];
    bw_args a;
    char *unknown[] = {"bwrap", "--frobnicate", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(unknown), unknown, &a, msg, sizeof msg), -1);
    assert_string_equal(msg, "Unknown option --frobnicate");
    char *refused[] = {"bwrap", "--dev-bind", "/a", "/b", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(refused), refused, &a, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "--dev-bind is not supported"));
    char *perms[] = {"bwrap", "--perms", "700", "--bind", "/a", "/a", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(perms), perms, &a, msg, sizeof msg), -1);
    assert_string_equal(msg, "--perms must be followed by an option that creates a file");
    char *size[] = {"bwrap", "--size", "12", "--perms", "700", "--bind", "/a", "/a", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(size), size, &a, msg, sizeof msg), -1);
    assert_string_equal(msg, "--perms must be followed by an option that creates a file");
    char *size2[] = {"bwrap", "--size", "-1", "--tmpfs", "/t", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(size2), size2, &a, msg, sizeof msg), -1);
    assert_string_equal(msg, "--size takes a non-zero number of bytes");
    /* a blank before a negative number: strtoull wraps it round to nearly 2^64 */
    char *size3[] = {"bwrap", "--size", " -1", "--tmpfs", "/t", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(size3), size3, &a, msg, sizeof msg), -1);
    assert_string_equal(msg, "--size takes a non-zero number of bytes");
    char *size4[] = {"bwrap", "--size", "4096", "--tmpfs", "/t", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(size4), size4, &a, msg, sizeof msg), 0);
    assert_int_equal(a.n_ops, 1);
    assert_true(a.ops[0].size == 4096);
    bw_args_free(&a);
    char *perms2[] = {"bwrap", "--perms", " 755", "--tmpfs", "/t", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(perms2), perms2, &a, msg, sizeof msg), -1);
    assert_string_equal(msg, "--perms takes an octal argument");
    char *perms3[] = {"bwrap", "--perms", "0750", "--tmpfs", "/t", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(perms3), perms3, &a, msg, sizeof msg), 0);
    assert_int_equal(a.ops[0].perms, 0750);
    bw_args_free(&a);
    char *fd[] = {"bwrap", "--info-fd", "+3", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(fd), fd, &a, msg, sizeof msg), -1);
    assert_string_equal(msg, "Invalid fd: +3");
    char *fd2[] = {"bwrap", "--info-fd", "3", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(fd2), fd2, &a, msg, sizeof msg), 0);
    assert_int_equal(a.info_fd, 3);
    bw_args_free(&a);
    char *short_[] = {"bwrap", "--setenv", "A", NULL};
    assert_int_equal(bw_parse_args(ARGC(short_), short_, &a, msg, sizeof msg), -1);
    assert_string_equal(msg, "--setenv takes two arguments");
    char *nocmd[] = {"bwrap", "--unshare-net", NULL};
    assert_int_equal(bw_parse_args(ARGC(nocmd), nocmd, &a, msg, sizeof msg), -1);
    assert_string_equal(msg, "No command specified");
}

static void parse_command(void **state)
{
    (void)state;
    char msg[256];
    bw_args a;
    char *argv[] = {"bwrap", "--unshare-net", "--", "--not-an-option", "x", NULL};
    assert_int_equal(bw_parse_args(ARGC(argv), argv, &a, msg, sizeof msg), 0);
    assert_true(a.unshare_net);
    assert_string_equal(a.command[0], "--not-an-option");
    bw_args_free(&a);
    char *plain[] = {"bwrap", "--ro-bind", "/", "/", "sh", "-c", "x", NULL};
    assert_int_equal(bw_parse_args(ARGC(plain), plain, &a, msg, sizeof msg), 0);
    assert_string_equal(a.command[0], "sh");
    assert_int_equal(a.n_ops, 1);
    bw_args_free(&a);
}

/* --args FD: the arguments read from FD parsed in place of the option. */
static void parse_args_fd(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    static const char data[] = "--unshare-net\0--chdir\0/usr\0--ro-bind\0/\0/"; /* the last without its NUL */
    assert_int_equal(write(p[1], data, sizeof data - 1), (ssize_t)(sizeof data - 1));
    close(p[1]);
    char fd[16];
    snprintf(fd, sizeof fd, "%d", p[0]);
    char msg[256];
    bw_args a;
    char *argv[] = {"bwrap", "--setenv", "A", "1", "--args", fd, "--proc", "/proc", "echo", "hi", NULL};
    assert_int_equal(bw_parse_args(ARGC(argv), argv, &a, msg, sizeof msg), 0);
    close(p[0]);
    assert_true(a.unshare_net);
    assert_string_equal(a.chdir, "/usr");
    assert_int_equal(a.n_ops, 2);
    assert_string_equal(a.ops[0].src, "/");
    assert_int_equal(a.ops[1].kind, BW_PROC);
    assert_int_equal(a.n_env, 1);
    assert_string_equal(a.command[0], "echo");
    assert_string_equal(a.command[1], "hi");
    assert_null(a.command[2]);
    bw_args_free(&a);
    char *bad[] = {"bwrap", "--args", "x", "true", NULL};
    assert_int_equal(bw_parse_args(ARGC(bad), bad, &a, msg, sizeof msg), -1);
    assert_string_equal(msg, "Invalid fd: x");
}

/* A later mount covers what earlier ones put at its path or below. */
static void order_covers(void **state)
{
    (void)state;
    char msg[256];
    bw_args a;
    bw_plan p;
    char *argv[] = {"bwrap", "--tmpfs",   "/",      "--ro-bind", "/w/sub", "/w/sub", "--bind", "/w",
                    "/w",    "--ro-bind", "/w/ro",  "/w/ro",     "--bind", "/x",     "/x",     "--ro-bind",
                    "/x",    "/x",        "--proc", "/proc",     "true",   NULL};
    assert_int_equal(map(ARGC(argv), argv, &a, &p, msg, sizeof msg), 0);
    assert_int_equal(p.base, CORDON_BASE_EMPTY);
    assert_int_equal(access_at(&p, "/w/sub"), -1); /* covered by the later /w */
    assert_int_equal(access_at(&p, "/w"), CORDON_ACCESS_WRITE);
    assert_int_equal(access_at(&p, "/w/ro"), CORDON_ACCESS_READ);
    assert_int_equal(access_at(&p, "/x"), CORDON_ACCESS_READ); /* the last at one path */
    assert_true(p.proc);
    assert_int_equal(p.network, CORDON_NETWORK_HOST);
    bw_plan_free(&p);
    bw_args_free(&a);
}

/* Codex's --perms N --tmpfs P --remount-ro P: an empty, read-only directory; srt's
 * --ro-bind /dev/null P: hidden; a writable --tmpfs: a tmpfs of that mode. */
static void peers(void **state)
{
    (void)state;
    char msg[256];
    bw_args a;
    bw_plan p;
    char *argv[] = {"bwrap",     "--ro-bind",   "/",         "/",          "--bind",        "/ws",        "/ws",
                    "--perms",   "555",         "--tmpfs",   "/ws/.codex", "--remount-ro",  "/ws/.codex", "--ro-bind",
                    "/dev/null", "/ws/.vscode", "--ro-bind", "/empty",     "/ws/.claude",   "--perms",    "700",
                    "--size",    "4096",        "--tmpfs",   "/etc/x",     "--unshare-all", "true",       NULL};
    assert_int_equal(map(ARGC(argv), argv, &a, &p, msg, sizeof msg), 0);
    assert_int_equal(p.base, CORDON_BASE_HOST);
    assert_int_equal(access_at(&p, "/ws/.codex"), CORDON_ACCESS_NONE);
    assert_int_equal(access_at(&p, "/ws/.vscode"), CORDON_ACCESS_NONE);
    assert_int_equal(access_at(&p, "/ws/.claude"), CORDON_ACCESS_NONE);
    assert_int_equal(access_at(&p, "/etc/x"), -2);
    for (size_t i = 0; i < p.n_rules; i++)
        if (strcmp(p.rules[i].path, "/etc/x") == 0)
            assert_true(p.rules[i].mode == 0700 && p.rules[i].size == 4096);
    assert_int_equal(access_at(&p, "/tmp"), CORDON_ACCESS_READ); /* the host's, as bwrap */
    assert_int_equal(p.network, CORDON_NETWORK_NONE);
    assert_false(p.proc);
    bw_plan_free(&p);
    bw_args_free(&a);
}

/* A symlink is made, not mounted: it covers nothing, and a later mount above it does. */
static void symlinks(void **state)
{
    (void)state;
    char msg[256];
    bw_args a;
    bw_plan p;
    char *argv[] = {"bwrap",     "--tmpfs", "/",    "--ro-bind", "/a", "/a", "--symlink", "t", "/a/l",
                    "--symlink", "u",       "/b/l", "--bind",    "/b", "/b", "true",      NULL};
    assert_int_equal(map(ARGC(argv), argv, &a, &p, msg, sizeof msg), 0);
    size_t links = 0;
    for (size_t i = 0; i < p.n_rules; i++)
        if (p.rules[i].target) {
            links++;
            assert_string_equal(p.rules[i].path, "/a/l");
            assert_string_equal(p.rules[i].target, "t");
        }
    assert_int_equal(links, 1); /* /b/l: covered by the later --bind /b */
    assert_int_equal(access_at(&p, "/a"), CORDON_ACCESS_READ);
    bw_plan_free(&p);
    bw_args_free(&a);
}

static void map_refuses(void **state)
{
    (void)state;
    char msg[256];
    bw_args a;
    bw_plan p;
    char *other[] = {"bwrap", "--ro-bind", "/etc", "/x", "true", NULL};
    assert_int_equal(map(ARGC(other), other, &a, &p, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "--ro-bind /etc /x"));
    bw_args_free(&a);
    char *rwroot[] = {"bwrap", "--bind", "/", "/", "true", NULL};
    assert_int_equal(map(ARGC(rwroot), rwroot, &a, &p, msg, sizeof msg), -1);
    bw_args_free(&a);
    char *missing[] = {"bwrap", "--ro-bind", "/missing", "/m", "true", NULL};
    assert_int_equal(map(ARGC(missing), missing, &a, &p, msg, sizeof msg), -1);
    assert_string_equal(msg, "Can't find source path /missing: No such file or directory");
    bw_args_free(&a);
    char *try_[] = {"bwrap", "--ro-bind-try", "/missing", "/m", "true", NULL};
    assert_int_equal(map(ARGC(try_), try_, &a, &p, msg, sizeof msg), 0);
    assert_int_equal(p.n_rules, 0);
    bw_plan_free(&p);
    bw_args_free(&a);
    char *rootsize[] = {"bwrap", "--size", "4096", "--tmpfs", "/", "true", NULL};
    assert_int_equal(map(ARGC(rootsize), rootsize, &a, &p, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "--size 4096 --tmpfs /"));
    bw_args_free(&a);
    char *root[] = {"bwrap", "--perms", "755", "--tmpfs", "/", "true", NULL};
    assert_int_equal(map(ARGC(root), root, &a, &p, msg, sizeof msg), 0);
    assert_int_equal(p.base, CORDON_BASE_EMPTY);
    bw_plan_free(&p);
    bw_args_free(&a);
    char *remount[] = {"bwrap", "--remount-ro", "/usr", "true", NULL};
    assert_int_equal(map(ARGC(remount), remount, &a, &p, msg, sizeof msg), -1);
    bw_args_free(&a);
    char *rel[] = {"bwrap", "--ro-bind", "relative", "/r", "true", NULL};
    assert_int_equal(map(ARGC(rel), rel, &a, &p, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "absolute source"));
    bw_args_free(&a);
    char *proc[] = {"bwrap", "--proc", "/p", "true", NULL};
    assert_int_equal(map(ARGC(proc), proc, &a, &p, msg, sizeof msg), -1);
    bw_args_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_refuses), cmocka_unit_test(parse_command), cmocka_unit_test(parse_args_fd),
        cmocka_unit_test(order_covers),  cmocka_unit_test(peers),         cmocka_unit_test(symlinks),
        cmocka_unit_test(map_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
