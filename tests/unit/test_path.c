// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the lexical path helpers (src/util/path.c): no filesystem access. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/path.h"

static void check_norm(const char *in, const char *want)
{
    char *got = path_normalize(in);
    if (!want) {
        if (got)
            fail_msg("path_normalize(\"%s\") = \"%s\", expected NULL", in, got);
        return;
    }
    if (!got)
        fail_msg("path_normalize(\"%s\") = NULL, expected \"%s\"", in, want);
    if (strcmp(got, want) != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "path_normalize(\"%s\") = \"%s\", expected \"%s\"", in, got, want);
        free(got);
        fail_msg("%s", msg);
    }
    free(got);
}

static void test_normalize_plain(void **state)
{
    (void)state;
    check_norm("/", "/");
    check_norm("/a", "/a");
    check_norm("/a/b/c", "/a/b/c");
    check_norm("/a-b.c/d_e", "/a-b.c/d_e");
}

static void test_normalize_slashes(void **state)
{
    (void)state;
    check_norm("//", "/");
    check_norm("///", "/");
    check_norm("/a/", "/a");
    check_norm("/a///", "/a");
    check_norm("//a//b//", "/a/b");
    check_norm("/repo//b", "/repo/b");
}

static void test_normalize_dot(void **state)
{
    (void)state;
    check_norm("/.", "/");
    check_norm("/./", "/");
    check_norm("/a/.", "/a");
    check_norm("/a/./b/./", "/a/b");
    check_norm("/repo//b/.", "/repo/b");
    /* names that merely start with dots are ordinary names */
    check_norm("/a/.b", "/a/.b");
    check_norm("/a/..b", "/a/..b");
    check_norm("/a/...", "/a/...");
    check_norm("/a/b.", "/a/b.");
}

static void test_normalize_dotdot(void **state)
{
    (void)state;
    check_norm("/..", "/");
    check_norm("/../..", "/");
    check_norm("/../a", "/a");
    check_norm("/a/..", "/");
    check_norm("/a/../", "/");
    check_norm("/a/b/..", "/a");
    check_norm("/a/b/../..", "/");
    check_norm("/a/b/../../..", "/");
    check_norm("/a/b/../c", "/a/c");
    check_norm("/repo/a/../b/", "/repo/b");
    check_norm("/abc/def/../../ghi", "/ghi");
    check_norm("/a/./../b/./c/..", "/b");
}

static void test_normalize_relative(void **state)
{
    (void)state;
    check_norm("", NULL);
    check_norm("a", NULL);
    check_norm("a/b", NULL);
    check_norm("./a", NULL);
    check_norm("../a", NULL);
    check_norm("~/a", NULL);
    assert_null(path_normalize(NULL));
}

static void test_has_prefix(void **state)
{
    (void)state;
    assert_true(path_has_prefix("/a", "/a"));
    assert_true(path_has_prefix("/a/b", "/a"));
    assert_true(path_has_prefix("/a/b/c", "/a"));
    assert_true(path_has_prefix("/a/b/c", "/a/b"));
    /* a common string prefix is not a path prefix */
    assert_false(path_has_prefix("/ab", "/a"));
    assert_false(path_has_prefix("/a-b", "/a"));
    assert_false(path_has_prefix("/a.b/c", "/a"));
    /* the parent must not be below the child */
    assert_false(path_has_prefix("/a", "/a/b"));
    assert_false(path_has_prefix("/b", "/a"));
    assert_false(path_has_prefix("/", "/a"));
    /* everything is below "/" */
    assert_true(path_has_prefix("/", "/"));
    assert_true(path_has_prefix("/a", "/"));
    assert_true(path_has_prefix("/proc/self/fd", "/"));
    assert_true(path_has_prefix("/tmp", "/tmp"));
    assert_false(path_has_prefix("/tmpfoo", "/tmp"));
}

static void check_join(const char *a, const char *b, const char *want)
{
    char *got = path_join(a, b);
    assert_non_null(got);
    if (strcmp(got, want) != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "path_join(\"%s\", \"%s\") = \"%s\", expected \"%s\"", a, b, got, want);
        free(got);
        fail_msg("%s", msg);
    }
    free(got);
}

static void test_join(void **state)
{
    (void)state;
    check_join("/a", "b", "/a/b");
    check_join("/a/", "b", "/a/b");
    check_join("/a", "/b", "/a/b");
    check_join("/a//", "//b", "/a/b");
    check_join("/a", "b/c", "/a/b/c");
    check_join("/", "b", "/b");
    check_join("/", "/b", "/b");
    check_join("/", "", "/");
    check_join("/", "/", "/");
    check_join("/a", "", "/a");
    check_join("/a/", "/", "/a");
    check_join("/home/u", "/.cache/pip", "/home/u/.cache/pip");
    /* only the seam is touched */
    check_join("/a//x", "y//z", "/a//x/y//z");
}

static void test_depth(void **state)
{
    (void)state;
    assert_int_equal(path_depth("/"), 0);
    assert_int_equal(path_depth("/a"), 1);
    assert_int_equal(path_depth("/a/b"), 2);
    assert_int_equal(path_depth("/a/b/c"), 3);
    assert_int_equal(path_depth("/usr/share/doc/x"), 4);
    assert_int_equal(path_depth("/a/"), 1);
}

static void check_parent(const char *in, bool ok, const char *out)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", in);
    assert_int_equal(path_to_parent(buf), ok);
    assert_string_equal(buf, out);
}

static void test_to_parent(void **state)
{
    (void)state;
    check_parent("/a/b/c", true, "/a/b");
    check_parent("/a/b", true, "/a");
    check_parent("/a", true, "/");
    check_parent("/", false, "/");
}

static void test_cmp_parent_first(void **state)
{
    (void)state;
    assert_int_equal(path_cmp("/a", "/a"), 0);
    assert_int_equal(path_cmp("/", "/"), 0);
    assert_true(path_cmp("/", "/a") < 0);
    assert_true(path_cmp("/a", "/") > 0);
    assert_true(path_cmp("/a", "/a/b") < 0);
    assert_true(path_cmp("/a/b", "/a") > 0);
    /* '/' sorts before every other byte, so a directory's children come before its
     * siblings that share a string prefix */
    assert_true(path_cmp("/a/b", "/a-b") < 0);
    assert_true(path_cmp("/a-b", "/a/b") > 0);
    assert_true(path_cmp("/a", "/a-b") < 0);
    assert_true(path_cmp("/a/zzz", "/a!") < 0);
    assert_true(path_cmp("/a/b", "/a.b") < 0);
    assert_true(path_cmp("/a/b", "/a b") < 0); /* ' ' (0x20) < '/' (0x2f) in ASCII */
    assert_true(path_cmp("/a", "/b") < 0);
    assert_true(path_cmp("/b", "/a/c") > 0);
    /* bytes above 0x7f compare unsigned */
    assert_true(path_cmp("/a", "/\xc3\xa9") < 0);
}

static int qsort_cmp(const void *a, const void *b)
{
    return path_cmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorting puts every parent before everything below it. */
static void test_cmp_sort(void **state)
{
    (void)state;
    const char *v[] = {"/a-b", "/a/b/c", "/a.b", "/a/b", "/", "/a", "/a b", "/a/b-c", "/a/b/d", "/b"};
    const char *want[] = {"/", "/a", "/a/b", "/a/b/c", "/a/b/d", "/a/b-c", "/a b", "/a-b", "/a.b", "/b"};
    size_t n = sizeof v / sizeof *v;
    qsort(v, n, sizeof *v, qsort_cmp);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(v[i], want[i]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (i != j && path_has_prefix(v[j], v[i]))
                assert_true(i < j);
}

/* The components of a path, one at a time: slashes skipped on both sides, so that the
 * caller can tell the last one (the walks refuse a non-directory before it), and a name
 * longer than NAME_MAX refused rather than cut. */
static void test_next_name(void **state)
{
    (void)state;
    char name[NAME_MAX + 1];
    const char *p = "//a///bc/";
    assert_int_equal(path_next_name(&p, name), 1);
    assert_string_equal(name, "a");
    assert_string_equal(p, "bc/"); /* not the last */
    assert_int_equal(path_next_name(&p, name), 1);
    assert_string_equal(name, "bc");
    assert_string_equal(p, ""); /* the last: only slashes followed */
    assert_int_equal(path_next_name(&p, name), 0);
    p = "/";
    assert_int_equal(path_next_name(&p, name), 0);

    char longer[NAME_MAX + 3];
    longer[0] = '/';
    memset(longer + 1, 'x', NAME_MAX + 1);
    longer[NAME_MAX + 2] = '\0';
    p = longer;
    errno = 0;
    assert_int_equal(path_next_name(&p, name), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    longer[NAME_MAX + 1] = '\0'; /* exactly NAME_MAX: taken whole */
    p = longer;
    assert_int_equal(path_next_name(&p, name), 1);
    assert_int_equal(strlen(name), NAME_MAX);
}

static void check_quote(const char *in, const char *want)
{
    char *got = path_quote(in);
    if (strcmp(got, want) != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "path_quote gave [%s], expected [%s]", got, want);
        free(got);
        fail_msg("%s", msg);
    }
    free(got);
}

/* Positive controls: names a terminal shows as they are stay as they are. */
static void test_quote_plain(void **state)
{
    (void)state;
    check_quote("", "");
    check_quote("f", "f");
    check_quote("dir/sub file.c", "dir/sub file.c");
    check_quote("it's-a ~name~ (1)", "it's-a ~name~ (1)");
    check_quote("caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80", "caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80");
    check_quote("\xc2\xa0nbsp", "\xc2\xa0nbsp"); /* U+00A0: the first after the C1 range */
}

/* What git's C-style quoting does (quote.c: quote_c_style), byte for byte. */
static void test_quote_git(void **state)
{
    (void)state;
    check_quote("a\033[2K\rD\tf", "\"a\\033[2K\\rD\\tf\"");
    check_quote("line\nD\tf", "\"line\\nD\\tf\"");
    check_quote("q\"uote", "\"q\\\"uote\"");
    check_quote("back\\slash", "\"back\\\\slash\"");
    check_quote("\a\b\t\n\v\f\r", "\"\\a\\b\\t\\n\\v\\f\\r\"");
    check_quote("\x01\x1f\x7f", "\"\\001\\037\\177\"");
    check_quote("\"", "\"\\\"\"");
}

/* Bytes a terminal might obey although git leaves them (core.quotePath=false): C1 controls
 * in UTF-8 (U+009B is CSI), and bytes that are not UTF-8 at all. */
static void test_quote_high(void **state)
{
    (void)state;
    check_quote("\xc2\x9b"
                "2J",
                "\"\\302\\233"
                "2J\"");
    check_quote("\x9b"
                "2J",
                "\"\\233"
                "2J\"");
    check_quote("bad\xff", "\"bad\\377\"");
    check_quote("cut\xc3", "\"cut\\303\"");                      /* a truncated sequence */
    check_quote("\xc0\xaf", "\"\\300\\257\"");                   /* overlong '/' */
    check_quote("\xed\xa0\x80", "\"\\355\\240\\200\"");          /* a surrogate */
    check_quote("\xf4\x90\x80\x80", "\"\\364\\220\\200\\200\""); /* past U+10FFFF */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize_plain),
        cmocka_unit_test(test_normalize_slashes),
        cmocka_unit_test(test_normalize_dot),
        cmocka_unit_test(test_normalize_dotdot),
        cmocka_unit_test(test_normalize_relative),
        cmocka_unit_test(test_has_prefix),
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_next_name),
        cmocka_unit_test(test_to_parent),
        cmocka_unit_test(test_cmp_parent_first),
        cmocka_unit_test(test_cmp_sort),
        cmocka_unit_test(test_quote_plain),
        cmocka_unit_test(test_quote_git),
        cmocka_unit_test(test_quote_high),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
