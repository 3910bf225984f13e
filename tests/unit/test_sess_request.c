// SPDX-License-Identifier: Apache-2.0
// Unit tests for a session's request decoder (src/session/sess_request.c), the pure
// function PID 1 runs on another process's input, and for the table that moves a
// session's slots (src/session/sess_slot.c).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "session/sess_pid1.h"
#include "session/sess_request.h"
#include "session/wire.h"

typedef struct reqbuf {
    char buf[4096];
    size_t len;
} reqbuf;

static void put_str(reqbuf *b, const char *s)
{
    size_t n = strlen(s) + 1;
    assert_true(b->len + n <= sizeof b->buf);
    memcpy(b->buf + b->len, s, n);
    b->len += n;
}

// A request: header, then cwd, argv[argc], env[envc].
static void build(reqbuf *b, const sess_req *rq, const char *cwd, const char *const *argv, const char *const *env)
{
    memcpy(b->buf, rq, sizeof *rq);
    b->len = sizeof *rq;
    put_str(b, cwd);
    for (uint32_t i = 0; argv && argv[i]; i++)
        put_str(b, argv[i]);
    for (uint32_t i = 0; env && env[i]; i++)
        put_str(b, env[i]);
}

static sess_req header(uint32_t argc, uint32_t envc)
{
    return (sess_req){.magic = SESS_MAGIC, .version = SESS_VERSION, .argc = argc, .envc = envc, .umask = 0022};
}

static char env_path[] = "PATH=/usr/bin", env_home[] = "HOME=/home/u", env_lang[] = "LANG=C";
static char *session_env[] = {env_path, env_home, env_lang, NULL};

static int decode(const reqbuf *b, sess_cmd_req *out, const char **why)
{
    static char *ptrs[64];
    return sess_req_decode(b->buf, b->len, session_env, ptrs, 64, out, why);
}

static void t_decodes(void **state)
{
    (void)state;
    reqbuf b;
    sess_req rq = header(2, 2);
    rq.flags = SESS_REQ_KEEP | SESS_REQ_TTY;
    rq.umask = 07777;
    rq.timeout_ms = 1500;
    rq.sigmask = 1u << (SIGUSR1 - 1);
    rq.ws_row = 24;
    rq.ws_col = 80;
    build(&b, &rq, "/work", (const char *[]){"echo", "hi", NULL}, (const char *[]){"HOME=/tmp", "X=1", NULL});
    sess_cmd_req out;
    const char *why = NULL;
    assert_int_equal(decode(&b, &out, &why), 0);
    assert_int_equal(out.flags, SESS_REQ_KEEP | SESS_REQ_TTY);
    assert_int_equal(out.umask, 0777); // only the permission bits
    assert_int_equal(out.timeout_ms, 1500);
    assert_int_equal(out.sigmask, 1u << (SIGUSR1 - 1));
    assert_int_equal(out.ws_row, 24);
    assert_int_equal(out.ws_col, 80);
    assert_string_equal(out.cwd, "/work");
    assert_string_equal(out.argv[0], "echo");
    assert_string_equal(out.argv[1], "hi");
    assert_null(out.argv[2]);
    // the session's variables, HOME replaced by the request's, then the request's
    const char *want[] = {"PATH=/usr/bin", "LANG=C", "HOME=/tmp", "X=1", NULL};
    for (int i = 0; want[i]; i++)
        assert_string_equal(out.envp[i], want[i]);
    assert_null(out.envp[4]);
    // the strings stay in the request's buffer
    assert_true(out.argv[0] >= b.buf && out.argv[0] < b.buf + b.len);
}

static void t_session_cwd(void **state)
{
    (void)state;
    reqbuf b;
    sess_req rq = header(1, 0);
    build(&b, &rq, "", (const char *[]){"true", NULL}, NULL);
    sess_cmd_req out;
    const char *why = NULL;
    assert_int_equal(decode(&b, &out, &why), 0);
    assert_null(out.cwd);
    assert_int_equal(out.envp[0] != NULL, 1);
    assert_null(out.envp[3]);
}

// Each request is refused with the given errno and message.
static void expect_refused(const reqbuf *b, int errnum, const char *text)
{
    sess_cmd_req out;
    const char *why = NULL;
    assert_int_equal(decode(b, &out, &why), -errnum);
    assert_non_null(why);
    assert_string_equal(why, text);
}

static void t_refuses_header(void **state)
{
    (void)state;
    reqbuf b;
    const char *argv[] = {"true", NULL};
    sess_req bad[] = {header(1, 0), header(1, 0), header(1, 0), header(0, 0), header(1, 0), header(1, 0)};
    bad[0].magic ^= 1;
    bad[1].version = SESS_VERSION + 1;
    bad[2].flags = 0x80;
    bad[4].flags = SESS_REQ_DETACH;                                // detached but not kept
    bad[5].flags = SESS_REQ_DETACH | SESS_REQ_KEEP | SESS_REQ_TTY; // detached with a terminal
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        build(&b, &bad[i], "/", argv, NULL);
        expect_refused(&b, EINVAL, "malformed request to the session");
    }
    // positive control: detached and kept
    sess_req ok = header(1, 0);
    ok.flags = SESS_REQ_DETACH | SESS_REQ_KEEP;
    build(&b, &ok, "/", argv, NULL);
    sess_cmd_req out;
    const char *why;
    assert_int_equal(decode(&b, &out, &why), 0);
    // shorter than the header
    b.len = sizeof(sess_req) - 1;
    expect_refused(&b, EINVAL, "malformed request to the session");
}

static void t_refuses_body(void **state)
{
    (void)state;
    reqbuf b;
    sess_req rq = header(2, 0);
    build(&b, &rq, "/", (const char *[]){"only-one", NULL}, NULL); // argc 2, one string
    expect_refused(&b, EINVAL, "malformed request to the session");
    rq = header(1, 0);
    build(&b, &rq, "relative", (const char *[]){"true", NULL}, NULL);
    expect_refused(&b, EINVAL, "malformed request to the session");
    build(&b, &rq, "/", (const char *[]){"", NULL}, NULL); // an empty command
    expect_refused(&b, EINVAL, "malformed request to the session");
    build(&b, &rq, "/", (const char *[]){"true", NULL}, NULL);
    b.len--; // its last string not NUL-ended
    expect_refused(&b, EINVAL, "malformed request to the session");
    b.len = sizeof rq + 2; // the cwd "/", then no argument
    expect_refused(&b, EINVAL, "malformed request to the session");
    b.len = sizeof rq + 1; // the cwd not NUL-ended
    expect_refused(&b, E2BIG, "malformed request to the session");
    b.len = sizeof rq; // no cwd at all
    expect_refused(&b, E2BIG, "malformed request to the session");
    rq = header(1, 1);
    const char *bad_env[] = {"NOEQUALS", "=value", NULL};
    for (int i = 0; bad_env[i]; i++) {
        build(&b, &rq, "/", (const char *[]){"true", NULL}, (const char *[]){bad_env[i], NULL});
        expect_refused(&b, EINVAL, "malformed environment in the request to the session");
    }
    rq = header(1, 2); // one variable sent of two
    build(&b, &rq, "/", (const char *[]){"true", NULL}, (const char *[]){"A=1", NULL});
    expect_refused(&b, EINVAL, "malformed environment in the request to the session");
}

static void t_refuses_too_many(void **state)
{
    (void)state;
    reqbuf b;
    // more pointers than the array holds: refused before a string is read
    sess_req rq = header(40, 30);
    build(&b, &rq, "/", (const char *[]){"true", NULL}, NULL);
    expect_refused(&b, E2BIG, "malformed request to the session");
    rq = header(UINT32_MAX, UINT32_MAX);
    build(&b, &rq, "/", (const char *[]){"true", NULL}, NULL);
    expect_refused(&b, E2BIG, "malformed request to the session");
    // positive control: exactly as many as fit (argc + 1 + envc0 + envc + 1 == 64)
    rq = header(59, 0);
    const char *argv[60];
    for (int i = 0; i < 59; i++)
        argv[i] = "a";
    argv[59] = NULL;
    build(&b, &rq, "/", argv, NULL);
    sess_cmd_req out;
    const char *why;
    assert_int_equal(decode(&b, &out, &why), 0);
    rq = header(60, 0);
    build(&b, &rq, "/", argv, NULL);
    expect_refused(&b, E2BIG, "malformed request to the session");
}

// The slot table: every state and event, against the list of allowed moves.
static void t_slot_table(void **state)
{
    (void)state;
    struct {
        int from;
        sess_slot_event ev;
        int to;
    } allowed[] = {
        {SLOT_FREE, SLOT_EV_CONNECT, SLOT_PENDING},  {SLOT_PENDING, SLOT_EV_REFUSE, SLOT_FREE},
        {SLOT_PENDING, SLOT_EV_START, SLOT_RUNNING}, {SLOT_RUNNING, SLOT_EV_KEEP, SLOT_KEPT},
        {SLOT_RUNNING, SLOT_EV_REAPED, SLOT_FREE},   {SLOT_KEPT, SLOT_EV_REAPED, SLOT_FREE},
    };
    int n_allowed = 0;
    for (int st = SLOT_FREE; st <= SLOT_KEPT; st++)
        for (int ev = 0; ev < SLOT_EV_COUNT; ev++) {
            int want = -1;
            for (size_t k = 0; k < sizeof allowed / sizeof allowed[0]; k++)
                if (allowed[k].from == st && (int)allowed[k].ev == ev)
                    want = allowed[k].to;
            assert_int_equal(sess_slot_next(st, (sess_slot_event)ev), want);
            n_allowed += want >= 0;
        }
    assert_int_equal(n_allowed, 6);
    assert_int_equal(sess_slot_next(SLOT_KEPT + 1, SLOT_EV_CONNECT), -1);
    assert_int_equal(sess_slot_next(SLOT_FREE, SLOT_EV_COUNT), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_decodes),      cmocka_unit_test(t_session_cwd),      cmocka_unit_test(t_refuses_header),
        cmocka_unit_test(t_refuses_body), cmocka_unit_test(t_refuses_too_many), cmocka_unit_test(t_slot_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
