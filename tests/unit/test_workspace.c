// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the pure parts of the copy-on-write workspaces: the unified diff
 * (udiff.c: its hunks, applied back to the old text, must give the new one), workspace
 * names and backends, the settings' orchestration.isolation, and the plan of a
 * workspace run (plan/view.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "util/path.h"
#include "util/strv.h"
#include "workspace/ws.h"

/* Apply unified hunks to `a`; NULL when they do not fit. */
static char *apply_hunks(const char *a, const char *hunks)
{
    /* the old text as lines */
    strv al = {0};
    for (const char *p = a; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
        strv_push(&al, xstrndup(p, n));
        p += n;
    }
    char *out = xstrdup("");
    size_t ai = 0; /* next old line to copy */
    const char *h = hunks;
    bool ok = true;
    while (ok && *h) {
        unsigned long as, ac = 1, bs, bc = 1;
        if (strncmp(h, "@@ -", 4) != 0) {
            ok = false;
            break;
        }
        char *q;
        as = strtoul(h + 4, &q, 10);
        if (*q == ',')
            ac = strtoul(q + 1, &q, 10);
        if (strncmp(q, " +", 2) != 0) {
            ok = false;
            break;
        }
        bs = strtoul(q + 2, &q, 10);
        if (*q == ',')
            bc = strtoul(q + 1, &q, 10);
        (void)bs;
        (void)bc;
        h = strchr(h, '\n') + 1;
        size_t start = ac ? as - 1 : as;
        while (ai < start && ai < al.n) {
            char *t = xasprintf("%s%s", out, al.v[ai++]);
            free(out);
            out = t;
        }
        while (*h && *h != '@') {
            const char *e = strchr(h, '\n');
            size_t n = e ? (size_t)(e - h) + 1 : strlen(h);
            char *line = xstrndup(h + 1, n - 1);
            /* "\ No newline at end of file" takes the newline off what came before */
            bool no_nl = strncmp(h + n, "\\ No newline", 12) == 0;
            if (no_nl && line[strlen(line) - 1] == '\n')
                line[strlen(line) - 1] = '\0';
            if (h[0] == ' ' || h[0] == '-') {
                if (ai >= al.n || strcmp(al.v[ai], line) != 0)
                    ok = false;
                ai++;
            }
            if (h[0] == ' ' || h[0] == '+') {
                char *t = xasprintf("%s%s", out, line);
                free(out);
                out = t;
            }
            free(line);
            h += n;
            if (no_nl)
                h = strchr(h, '\n') + 1;
        }
    }
    while (ok && ai < al.n) {
        char *t = xasprintf("%s%s", out, al.v[ai++]);
        free(out);
        out = t;
    }
    strv_free(&al);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

static void check_diff(const char *a, const char *b)
{
    char *h = ws_udiff_hunks(a, strlen(a), b, strlen(b));
    assert_non_null(h);
    if (strcmp(a, b) == 0)
        assert_string_equal(h, "");
    char *r = apply_hunks(a, h);
    if (!r || strcmp(r, b) != 0)
        fail_msg("the hunks\n%s\ndo not turn\n%s\ninto\n%s\n(got %s)", h, a, b, r ? r : "(no fit)");
    free(r);
    free(h);
}

static void test_udiff_known(void **state)
{
    (void)state;
    char *h = ws_udiff_hunks("a\nb\nc\n", 6, "a\nB\nc\n", 6);
    assert_string_equal(h, "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    free(h);
    h = ws_udiff_hunks("", 0, "x\ny\n", 4);
    assert_string_equal(h, "@@ -0,0 +1,2 @@\n+x\n+y\n");
    free(h);
    h = ws_udiff_hunks("x\n", 2, "", 0);
    assert_string_equal(h, "@@ -1 +0,0 @@\n-x\n");
    free(h);
    h = ws_udiff_hunks("x", 1, "x\n", 2);
    assert_string_equal(h, "@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n");
    free(h);
    /* far apart: two hunks; close together: one */
    h = ws_udiff_hunks("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", 27, "0\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n13\n", 27);
    assert_int_equal(strstr(h, "@@ -1,4 +1,4 @@") == h, 1);
    assert_non_null(strstr(h, "@@ -9,4 +9,4 @@"));
    free(h);
}

static void test_udiff_roundtrip(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"", ""},
        {"same\n", "same\n"},
        {"a\nb\nc\nd\ne\nf\ng\n", "a\nc\nd\nX\ne\nf\ng\nh\n"},
        {"no newline", "no newline either"},
        {"l1\nl2\n", "l0\nl1\nl2\nl3"},
        {"x\nx\nx\nx\n", "x\nx\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_diff(cases[i][0], cases[i][1]);
    /* random edits of a 200-line text */
    srand(42);
    for (int round = 0; round < 200; round++) {
        char a[4096] = "", b[4096] = "";
        int n = 1 + rand() % 200;
        for (int i = 0; i < n; i++) {
            char line[16];
            snprintf(line, sizeof line, "%d\n", rand() % 8);
            strcat(a, line);
            int r = rand() % 10;
            if (r == 0)
                continue; /* deleted */
            if (r == 1)
                snprintf(line, sizeof line, "new%d\n", rand() % 4);
            strcat(b, line);
            if (r == 2)
                strcat(b, "added\n");
        }
        check_diff(a, b);
    }
}

static void test_names(void **state)
{
    (void)state;
    cordon_error err = {0};
    const char *good[] = {"w", "w1", "feature-x", "a.b_c", "0"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_int_equal(ws_check_name(good[i], &err), 0);
    const char *bad[] = {
        "",     ".hidden", "-x",     "a/b",    "..",
        "a..b", "x.",      "x.lock", "sp ace", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err = (cordon_error){0};
        assert_int_equal(ws_check_name(bad[i], &err), -1);
        assert_int_equal(err.stage, CORDON_STAGE_USAGE);
        assert_contains(err.message, "not a workspace name");
    }
    assert_int_equal(ws_check_name(NULL, &err), -1);
}

static void test_backends(void **state)
{
    (void)state;
    cordon_error err = {0};
    cordon_ws_backend b;
    const char *names[] = {"auto", "kernel", "fuse", "copy", "worktree", "none"};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(cordon_ws_backend_from_string(names[i], &b, &err), 0);
        assert_int_equal(b, (cordon_ws_backend)i);
        assert_string_equal(cordon_ws_backend_name(b), names[i]);
    }
    assert_int_equal(cordon_ws_backend_from_string("overlayfs", &b, &err), 0);
    assert_int_equal(b, CORDON_WS_AUTO);
    assert_int_equal(cordon_ws_backend_from_string("zfs", &b, &err), -1);
    assert_contains(err.message, "unknown workspace backend");
    assert_int_equal(ws_protected_name(".codex/config.toml"), true);
    assert_int_equal(ws_protected_name(".vscode"), true);
    assert_int_equal(ws_protected_name("src/.vscode"), false);
    assert_int_equal(ws_protected_name(".codexx"), false);
}

static int fx_setup(void **state)
{
    return fixture_setup(state, "workspace", FX_WS | FX_HOME | FX_W | FX_POLICY);
}

static void test_settings_isolation(void **state)
{
    fixture *f = *state;
    cordon_error err = {0};
    cordon_ws_backend b = CORDON_WS_COPY;
    char *p = fx(f, "s.json");
    write_file(f, "s.json", "{\"sandbox\": {}, \"orchestration\": {\"isolation\": \"worktree\"}}");
    assert_int_equal(cordon_settings_workspace_backend(p, &b, &err), 1);
    assert_int_equal(b, CORDON_WS_WORKTREE);
    unlink(p);
    write_file(f, "s.json", "{\"orchestration\": {\"isolation\": \"overlayfs\"}}");
    assert_int_equal(cordon_settings_workspace_backend(p, &b, &err), 1);
    assert_int_equal(b, CORDON_WS_AUTO);
    unlink(p);
    write_file(f, "s.json", "{\"sandbox\": {\"enabled\": true}}");
    b = CORDON_WS_COPY;
    assert_int_equal(cordon_settings_workspace_backend(p, &b, &err), 0);
    assert_int_equal(b, CORDON_WS_COPY);
    unlink(p);
    write_file(f, "s.json", "{\n\"orchestration\": {\n  \"isolation\": 3\n}}");
    assert_int_equal(cordon_settings_workspace_backend(p, &b, &err), -1);
    assert_int_equal(err.stage, CORDON_STAGE_SETTINGS);
    assert_contains(err.message, "s.json:3:");
    unlink(p);
    write_file(f, "s.json", "{\"orchestration\": ");
    assert_int_equal(cordon_settings_workspace_backend(p, &b, &err), -1);
    assert_contains(err.message, "malformed");
    free(p);
}

/* The plan of a kernel-overlay workspace run: the workspace's bind becomes the overlay,
 * binds below it come from the view, no stub is made below it. */
static void test_plan_kernel_view(void **state)
{
    fixture *f = *state;
    mk(f, "ws/.git");
    mk(f, "ws/.git/hooks");
    write_file(f, "ws/.git/config", "");
    write_file(f, "ws/.git/HEAD", "ref: refs/heads/main\n");
    policy_view v = {.name = "t", .source = f->ws, .upper = "/state/upper", .work = "/state/work"};
    f->p->view = &v;
    plan_ok(f);
    const plan_op *top = op_at(&f->pl, PLAN_OVERLAY, f->ws);
    assert_string_equal(top->src, f->ws);
    assert_string_equal(top->upper, "/state/upper");
    assert_string_equal(top->work, "/state/work");
    assert_null(op_find(&f->pl, PLAN_BIND, f->ws));
    const plan_op *hooks = op_rel(f, PLAN_BIND, "ws/.git/hooks");
    assert_true(hooks->in_view);
    assert_true(hooks->read_only);
    /* a missing protected name stays the creation control's, inside the view */
    char *codex = xasprintf("%s/.codex", f->ws);
    assert_non_null(cc_find(&f->pl, PLAN_NOCREATE, codex));
    free(codex);
    f->p->view = NULL;
}

/* A host-directory view (fuse, copy, worktree): everything at or below it moves to the
 * source's path, sources stay the view. */
static void test_plan_host_view(void **state)
{
    fixture *f = *state;
    mk(f, "w/.git");
    mk(f, "w/.git/hooks");
    write_file(f, "w/.git/config", "");
    char *src = fx(f, "src");
    mk(f, "src");
    policy_view v = {.name = "t", .source = src, .host_dir = f->w};
    free(f->p->workspace);
    f->p->workspace = xstrdup(f->w);
    free(f->p->cwd);
    f->p->cwd = xstrdup(f->w);
    f->p->view = &v;
    plan_ok(f);
    const plan_op *top = op_at(&f->pl, PLAN_BIND, src);
    assert_string_equal(top->src, f->w);
    assert_false(top->read_only);
    char *hooks = xasprintf("%s/.git/hooks", src);
    const plan_op *h = op_at(&f->pl, PLAN_BIND, hooks);
    char *hsrc = xasprintf("%s/.git/hooks", f->w);
    assert_string_equal(h->src, hsrc);
    assert_null(op_find(&f->pl, PLAN_BIND, f->w));
    assert_string_equal(f->pl.cwd, src);
    for (size_t i = 0; i < f->pl.n_ops; i++) {
        /* nothing is left at the view's host path: all of it moved */
        assert_false(path_has_prefix(f->pl.ops[i].dest, f->w));
        if (i > 0) /* still in plan order: parents first */
            assert_true(path_cmp(f->pl.ops[i - 1].dest, f->pl.ops[i].dest) <= 0);
    }
    char *codex = xasprintf("%s/.codex", src);
    assert_non_null(cc_find(&f->pl, PLAN_NOCREATE, codex));
    free(codex);
    free(hooks);
    free(hsrc);
    free(src);
    f->p->view = NULL;
}

/* ws_exec hands the kept descriptors (a workspace's locks) over as 3, 4, ... in their
 * order, whatever numbers they had (here 3 and 4 swapped: placing one must not overwrite
 * the other), skips -1, and closes every other one; without keep the program has none. */
static void test_exec_keep(void **state)
{
    (void)state;
    int a = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int b = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    int extra = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    assert_true(a >= 0 && b >= 0 && extra >= 0);
    const char *sh[] = {"sh", "-c", "for f in 3 4 5 6; do readlink /proc/$$/fd/$f || echo none; done", NULL};
    int keep[] = {b, -1, a};
    ws_cmd c = {.argv = sh, .capture = true, .timeout_ms = 10000, .keep = keep, .n_keep = 3};
    ws_out o;
    cordon_error err;
    /* three are more than a command may keep */
    assert_int_equal(ws_exec(&c, &o, &err), -1);
    assert_non_null(strstr(err.message, "at most"));
    int keep2[] = {b, a};
    c.keep = keep2;
    c.n_keep = 2;
    assert_int_equal(ws_exec(&c, &o, &err), 0);
    char *want = xasprintf("/proc/%d/stat\n/dev/null\nnone\nnone\n", (int)getpid());
    assert_string_equal(o.out, want);
    free(want);
    ws_out_free(&o);
    int keep3[] = {-1, a};
    c.keep = keep3;
    assert_int_equal(ws_exec(&c, &o, &err), 0);
    assert_string_equal(o.out, "/dev/null\nnone\nnone\nnone\n");
    ws_out_free(&o);
    c.keep = NULL;
    c.n_keep = 0;
    assert_int_equal(ws_exec(&c, &o, &err), 0);
    assert_string_equal(o.out, "none\nnone\nnone\nnone\n");
    ws_out_free(&o);
    close(a);
    close(b);
    close(extra);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_udiff_known),
        cmocka_unit_test(test_udiff_roundtrip),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_backends),
        cmocka_unit_test(test_exec_keep),
        cmocka_unit_test_setup_teardown(test_settings_isolation, fx_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_plan_kernel_view, fx_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_plan_host_view, fx_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
