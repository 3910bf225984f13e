// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the pure parts of the network (src/net): host names and domain patterns,
 * address classes and the two-step decision, proxy URLs, the HTTP request parser and the
 * head it forwards, SOCKS5, the network plan and the environment it rewrites, the log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/dnsmsg.h"
#include "net/domain.h"
#include "net/hostconf.h"
#include "net/http.h"
#include "net/netlog.h"
#include "net/netplan.h"
#include "net/socks.h"
#include "net/url.h"
#include "policy/policy.h"
#include "util/strv.h"

#define assert_has(hay, needle)                                          \
    do {                                                                 \
        if (!strstr((hay), (needle)))                                    \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle)); \
    } while (0)

/* ---- hosts and patterns ---------------------------------------------------------------- */

static const char *norm(const char *in)
{
    static char out[NET_HOST_MAX];
    const char *why;
    return net_host_normalize(in, strlen(in), out, &why) == 0 ? out : NULL;
}

static void test_host_normalize(void **state)
{
    (void)state;
    assert_string_equal(norm("Example.COM."), "example.com");
    assert_string_equal(norm("localhost"), "localhost");
    assert_string_equal(norm("a-b_c.d9.test"), "a-b_c.d9.test");
    assert_string_equal(norm("127.0.0.1"), "127.0.0.1");
    assert_string_equal(norm("[::1]"), "::1");
    assert_string_equal(norm("[0:0::1]"), "::1");
    assert_string_equal(norm("FE80::1"), "fe80::1");
    assert_string_equal(norm("::ffff:127.0.0.1"), "::ffff:127.0.0.1");
    /* refused: empty labels, bad characters, numeric forms that are not a dotted quad */
    const char *bad[] = {"",       ".",         "a..b",           ".a",         "a b",   "a/b",        "a:b",
                         "[::1",   "[1.2.3.4]", "[fe80::1%eth0]", "0x7f.1",     "127.1", "2130706433", "1.2.3.4.5",
                         "a.0x10", "01.2.3.4",  "a\x01.b",        "\xc3\xa9.fr"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (norm(bad[i]))
            fail_msg("'%s' was accepted as '%s'", bad[i], norm(bad[i]));
    char big[300];
    memset(big, 'a', sizeof big);
    big[64] = '\0';
    assert_null(norm(big)); /* a 64-byte label */
    big[63] = '\0';
    assert_non_null(norm(big));
}

static char *pat(const char *in, cordon_error *e)
{
    *e = (cordon_error){.size = sizeof *e};
    return net_pattern_normalize(in, "allowDomain", e);
}

static void test_patterns(void **state)
{
    (void)state;
    cordon_error e;
    char *p;
    assert_string_equal(p = pat("*.Example.com", &e), "*.example.com");
    free(p);
    assert_string_equal(p = pat("registry.npmjs.org.", &e), "registry.npmjs.org");
    free(p);
    assert_string_equal(p = pat("10.0.0.5", &e), "10.0.0.5");
    free(p);
    assert_string_equal(p = pat("[::1]", &e), "::1");
    free(p);
    assert_null(pat("*", &e));
    assert_has(e.message, "would match every domain");
    assert_string_equal(e.option, "allowDomain");
    assert_int_equal(e.stage, CORDON_STAGE_USAGE);
    assert_null(pat("*.com", &e));
    assert_has(e.message, "would match a whole top-level domain");
    assert_has(e.message, "'*.example.com'");
    assert_null(pat("https://example.com", &e));
    assert_has(e.message, "without a scheme");
    assert_null(pat("example.com:443", &e));
    assert_has(e.message, "no port");
    assert_null(pat("a.*.example.com", &e));
    assert_null(pat("*example.com", &e));
    assert_null(pat("*.*.example.com", &e));
    assert_null(pat("*.10.0.0.1", &e));
    assert_null(pat("", &e));
    assert_null(pat(NULL, &e));
}

static void test_match(void **state)
{
    (void)state;
    assert_int_equal(net_pattern_match("*.example.com", "a.example.com"), NET_MATCH_WILDCARD);
    assert_int_equal(net_pattern_match("*.example.com", "a.b.example.com"), NET_MATCH_WILDCARD);
    assert_int_equal(net_pattern_match("*.example.com", "example.com"), NET_MATCH_NONE);
    assert_int_equal(net_pattern_match("*.example.com", "badexample.com"), NET_MATCH_NONE);
    assert_int_equal(net_pattern_match("*.example.com", "example.com.evil"), NET_MATCH_NONE);
    assert_int_equal(net_pattern_match("example.com", "example.com"), NET_MATCH_EXACT);
    assert_int_equal(net_pattern_match("example.com", "a.example.com"), NET_MATCH_NONE);
}

static struct sockaddr_storage sa_of(const char *ip)
{
    struct sockaddr_storage ss;
    assert_true(net_host_is_ip(ip, &ss, NULL));
    return ss;
}

static net_addr_class cls(const char *ip)
{
    struct sockaddr_storage ss = sa_of(ip);
    return net_addr_classify((struct sockaddr *)&ss);
}

static void test_address_classes(void **state)
{
    (void)state;
    assert_int_equal(cls("93.184.216.34"), NET_ADDR_PUBLIC);
    assert_int_equal(cls("8.8.8.8"), NET_ADDR_PUBLIC);
    assert_int_equal(cls("127.0.0.1"), NET_ADDR_LOOPBACK);
    assert_int_equal(cls("127.255.0.9"), NET_ADDR_LOOPBACK);
    assert_int_equal(cls("169.254.169.254"), NET_ADDR_LINK_LOCAL);
    assert_int_equal(cls("10.1.2.3"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("172.16.0.1"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("172.31.255.255"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("172.32.0.1"), NET_ADDR_PUBLIC);
    assert_int_equal(cls("192.168.0.1"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("100.64.0.1"), NET_ADDR_SHARED);
    assert_int_equal(cls("224.0.0.251"), NET_ADDR_MULTICAST);
    assert_int_equal(cls("255.255.255.255"), NET_ADDR_MULTICAST);
    assert_int_equal(cls("0.0.0.0"), NET_ADDR_UNSPECIFIED);
    assert_int_equal(cls("192.0.2.1"), NET_ADDR_RESERVED);
    assert_int_equal(cls("240.0.0.1"), NET_ADDR_RESERVED);
    assert_int_equal(cls("::1"), NET_ADDR_LOOPBACK);
    assert_int_equal(cls("::"), NET_ADDR_UNSPECIFIED);
    assert_int_equal(cls("fe80::1"), NET_ADDR_LINK_LOCAL);
    assert_int_equal(cls("fd00::1"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("ff02::1"), NET_ADDR_MULTICAST);
    assert_int_equal(cls("2001:db8::1"), NET_ADDR_RESERVED);
    assert_int_equal(cls("2606:4700::1111"), NET_ADDR_PUBLIC);
    /* IPv4 carried in IPv6 is judged by the IPv4 address */
    assert_int_equal(cls("::ffff:127.0.0.1"), NET_ADDR_LOOPBACK);
    assert_int_equal(cls("::ffff:169.254.169.254"), NET_ADDR_LINK_LOCAL);
    assert_int_equal(cls("64:ff9b::a9fe:a9fe"), NET_ADDR_LINK_LOCAL);
    assert_int_equal(cls("2002:a9fe:a9fe::1"), NET_ADDR_LINK_LOCAL);
    assert_int_equal(cls("::ffff:8.8.8.8"), NET_ADDR_PUBLIC);
    /* IPv4-translated (SIIT, RFC 2765): once counted as a public IPv6 address (issue 19) */
    assert_int_equal(cls("::ffff:0:127.0.0.1"), NET_ADDR_LOOPBACK);
    assert_int_equal(cls("::ffff:0:169.254.169.254"), NET_ADDR_LINK_LOCAL);
    assert_int_equal(cls("::ffff:0:10.0.0.1"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("::ffff:0:0.0.0.0"), NET_ADDR_UNSPECIFIED);
    assert_int_equal(cls("0:0:0:0:ffff:0:7f00:1"), NET_ADDR_LOOPBACK);
    assert_int_equal(cls("::ffff:0:8.8.8.8"), NET_ADDR_PUBLIC);
    /* the NAT64 well-known prefix (RFC 6052) and 6to4 (RFC 3056) by their IPv4 address */
    assert_int_equal(cls("64:ff9b::127.0.0.1"), NET_ADDR_LOOPBACK);
    assert_int_equal(cls("64:ff9b::10.1.2.3"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("64:ff9b::8.8.8.8"), NET_ADDR_PUBLIC);
    assert_int_equal(cls("2002:7f00:1::1"), NET_ADDR_LOOPBACK);
    assert_int_equal(cls("2002:c0a8:101::1"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("2002:808:808::1"), NET_ADDR_PUBLIC);
    /* special whatever they carry: local-use NAT64 (RFC 8215, the IPv4 address may sit
     * anywhere in it), IPv4-compatible (deprecated), Teredo */
    assert_int_equal(cls("64:ff9b:1::7f00:1"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("64:ff9b:1:7f00:1::"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("64:ff9b:1::8.8.8.8"), NET_ADDR_PRIVATE);
    assert_int_equal(cls("::127.0.0.1"), NET_ADDR_RESERVED);
    assert_int_equal(cls("::8.8.8.8"), NET_ADDR_RESERVED);
    assert_int_equal(cls("2001::1"), NET_ADDR_RESERVED);
    /* positive controls: IPv6 addresses near those prefixes stay public */
    assert_int_equal(cls("2a00:1450::ffff:0:7f00:1"), NET_ADDR_PUBLIC);
    assert_int_equal(cls("64:ff9b:2::1"), NET_ADDR_PUBLIC);
    assert_int_equal(cls("2003::7f00:1"), NET_ADDR_PUBLIC);
    assert_int_equal(cls("2a00:1450:4001:82a::200e"), NET_ADDR_PUBLIC);
}

static void test_decide(void **state)
{
    (void)state;
    char a0[] = "*.example.com", a1[] = "api.test", a2[] = "10.0.0.5", d0[] = "bad.example.com", d1[] = "93.184.216.34";
    char *allow[] = {a0, a1, a2, NULL};
    char *deny[] = {d0, d1, NULL};
    net_rules r = {.allow = allow, .n_allow = 3, .deny = deny, .n_deny = 2};
    net_verdict v = net_decide_host(&r, "a.example.com");
    assert_int_equal(v.reason, NET_OK);
    assert_false(v.exact);
    assert_string_equal(v.rule, "*.example.com");
    v = net_decide_host(&r, "bad.example.com");
    assert_int_equal(v.reason, NET_DENIED);
    assert_string_equal(v.rule, "bad.example.com");
    assert_int_equal(net_decide_host(&r, "example.com").reason, NET_NOT_ALLOWED);
    assert_int_equal(net_decide_host(&r, "other.test").reason, NET_NOT_ALLOWED);

    /* a wildcard: public addresses pass, special ones only when the address is named */
    struct sockaddr_storage pub = sa_of("93.184.216.1"), lo = sa_of("127.0.0.1"), named = sa_of("10.0.0.5"),
                            denied = sa_of("93.184.216.34"), mapped = sa_of("::ffff:93.184.216.34");
    v = net_decide_host(&r, "a.example.com");
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&pub, true), NET_OK);
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&lo, true), NET_SPECIAL_ADDR);
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&named, true), NET_OK);
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&denied, true), NET_DENIED_ADDR);
    assert_string_equal(v.rule, "93.184.216.34");
    v = net_decide_host(&r, "a.example.com");
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&mapped, true), NET_DENIED_ADDR);
    struct sockaddr_storage translated = sa_of("::ffff:0:93.184.216.34"), lo_tr = sa_of("::ffff:0:127.0.0.1");
    v = net_decide_host(&r, "a.example.com");
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&translated, true), NET_DENIED_ADDR);
    v = net_decide_host(&r, "a.example.com");
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&lo_tr, true), NET_SPECIAL_ADDR);
    /* an exact name may lead to a special address (an internal registry) through
     * --add-host or /etc/hosts, never through DNS alone (rebinding) */
    v = net_decide_host(&r, "api.test");
    assert_true(v.exact);
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&lo, true), NET_OK);
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&lo, false), NET_SPECIAL_ADDR);
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&named, false), NET_OK); /* the address is named */
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&pub, false), NET_OK);
    /* an address named as the host */
    v = net_decide_host(&r, "10.0.0.5");
    assert_int_equal(v.reason, NET_OK);
    assert_int_equal(net_decide_addr(&r, &v, (struct sockaddr *)&named, true), NET_OK);
    assert_int_equal(net_decide_host(&r, "169.254.169.254").reason, NET_NOT_ALLOWED);
}

/* ---- proxy URLs -------------------------------------------------------------------------- */

static void test_proxy_url(void **state)
{
    (void)state;
    proxy_url u;
    const char *why;
    assert_int_equal(proxy_url_parse("http://127.0.0.1:3128", &u, &why), 0);
    assert_string_equal(u.scheme, "http");
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 3128);
    assert_true(u.loopback);
    assert_int_equal(proxy_url_parse(" HTTPS://user:p%40ss@LocalHost:8443/path?q=1 \n", &u, &why), 0);
    assert_string_equal(u.scheme, "https");
    assert_string_equal(u.host, "localhost");
    assert_true(u.loopback);
    char *rw = proxy_url_rewrite(" HTTPS://user:p%40ss@LocalHost:8443/path?q=1 \n", &u, 9000);
    assert_string_equal(rw, "https://user:p%40ss@127.0.0.1:9000/path?q=1");
    free(rw);
    assert_int_equal(proxy_url_parse("localhost:3128", &u, &why), 0);
    assert_string_equal(u.scheme, "");
    rw = proxy_url_rewrite("localhost:3128", &u, 3128);
    assert_string_equal(rw, "127.0.0.1:3128");
    free(rw);
    assert_int_equal(proxy_url_parse("socks5h://[::1]:1080", &u, &why), 0);
    assert_string_equal(u.host, "::1");
    assert_true(u.loopback);
    /* default ports, as the Codex helper assumes them */
    assert_int_equal(proxy_url_parse("http://127.0.0.1", &u, &why), 0);
    assert_int_equal(u.port, 80);
    assert_int_equal(proxy_url_parse("https://127.0.0.1/", &u, &why), 0);
    assert_int_equal(u.port, 443);
    assert_int_equal(proxy_url_parse("socks5://127.0.0.1", &u, &why), 0);
    assert_int_equal(u.port, 1080);
    assert_int_equal(proxy_url_parse("http://proxy.corp:8080", &u, &why), 0);
    assert_false(u.loopback);
    assert_int_equal(proxy_url_parse("http://127.5.6.7:1", &u, &why), 0);
    assert_true(u.loopback);
    const char *bad[] = {"",
                         "   ",
                         "ftp2://127.0.0.1:1",
                         "http://",
                         "http://:80",
                         "http://127.0.0.1:",
                         "http://127.0.0.1:0",
                         "http://127.0.0.1:65536",
                         "http://127.0.0.1:8x",
                         "http://[::1",
                         "http://[::1]x",
                         "http://a b:1",
                         "://127.0.0.1:1",
                         "http://0x7f.1:1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (proxy_url_parse(bad[i], &u, &why) == 0)
            fail_msg("'%s' was accepted", bad[i]);
    assert_true(proxy_var_name("https_proxy", 11));
    assert_true(proxy_var_name("Npm_Config_Https_Proxy", 22));
    assert_false(proxy_var_name("NO_PROXY", 8));
    assert_false(proxy_var_name("HTTP_PROXYX", 11));
}

/* ---- HTTP ----------------------------------------------------------------------------------- */

static http_parse parse(const char *s, http_request *r)
{
    return http_parse_request(s, strlen(s), r);
}

static void test_http_parse(void **state)
{
    (void)state;
    http_request r;
    assert_int_equal(parse("GET http://Example.com:8080/a/b?c=d HTTP/1.1\r\nHost: x\r\n\r\nBODY", &r), HTTP_DONE);
    assert_false(r.connect);
    assert_string_equal(r.method, "GET");
    assert_string_equal(r.host, "example.com");
    assert_int_equal(r.port, 8080);
    assert_int_equal(r.minor, 1);
    assert_int_equal(r.head_len, strlen("GET http://Example.com:8080/a/b?c=d HTTP/1.1\r\nHost: x\r\n\r\n"));
    assert_int_equal(parse("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", &r), HTTP_DONE);
    assert_true(r.connect);
    assert_string_equal(r.host, "2001:db8::1");
    assert_int_equal(r.port, 443);
    assert_int_equal(parse("GET http://a.test HTTP/1.0\n\n", &r), HTTP_DONE); /* bare LF, no path */
    assert_int_equal(r.port, 80);
    assert_int_equal(r.minor, 0);
    /* incomplete, not wrong */
    assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nHost: a", &r), HTTP_NEED_MORE);
    assert_int_equal(parse("", &r), HTTP_NEED_MORE);
    assert_int_equal(parse("GE", &r), HTTP_NEED_MORE);
    /* wrong at once, without waiting for the end of the head */
    assert_int_equal(parse("\x16\x03\x01\x02", &r), HTTP_ERROR);
    assert_int_equal(r.status, 400);

    static const struct {
        const char *req;
        int status;
        const char *why;
    } bad[] = {
        {"GET / HTTP/1.1\r\n\r\n", 400, "absolute URL"},
        {"GET * HTTP/1.1\r\n\r\n", 400, "absolute URL"},
        {"GET https://a.test/ HTTP/1.1\r\n\r\n", 501, "CONNECT"},
        {"GET ftp://a.test/ HTTP/1.1\r\n\r\n", 501, "http:// URLs and CONNECT only"},
        {"GET http://a.test/ HTTP/2.0\r\n\r\n", 505, "HTTP/1.0 and HTTP/1.1"},
        {"GET http://a.test/ HTTP/1.2x\r\n\r\n", 400, "HTTP/1.0 or HTTP/1.1"},
        {"GET http://a.test/\r\n\r\n", 400, "METHOD TARGET"},
        {"GET  http://a.test/ HTTP/1.1\r\n\r\n", 400, "METHOD TARGET"},
        {"G(T http://a.test/ HTTP/1.1\r\n\r\n", 400, "method"},
        {"GET http://u@a.test/ HTTP/1.1\r\n\r\n", 400, "user information"},
        {"GET http://a.test#x HTTP/1.1\r\n\r\n", 400, "fragment"},
        {"GET http://a.test:0/ HTTP/1.1\r\n\r\n", 400, "port"},
        {"GET http://a.test:99999/ HTTP/1.1\r\n\r\n", 400, "port"},
        {"GET http://:80/ HTTP/1.1\r\n\r\n", 400, "the host is empty"},
        {"GET http://a..test/ HTTP/1.1\r\n\r\n", 400, "empty label"},
        {"GET http://2130706433/ HTTP/1.1\r\n\r\n", 400, "numeric"},
        {"CONNECT a.test HTTP/1.1\r\n\r\n", 400, "host:port"},
        {"CONNECT a.test:443:1 HTTP/1.1\r\n\r\n", 400, "brackets"},
        {"GET http://a.test/ HTTP/1.1\r\n folded\r\n\r\n", 400, "folding"},
        {"GET http://a.test/ HTTP/1.1\r\nNo colon\r\n\r\n", 400, "without a name"},
        {"GET http://a.test/ HTTP/1.1\r\nBad Name: x\r\n\r\n", 400, "header name"},
        {"GET http://a.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n", 400, "CR"},
        {"GET http://a.test/ HTTP/1.1\r\nX: a\x01\r\n\r\n", 400, "control"},
        {"POST http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "two different"},
        {"POST http://a.test/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "not a number"},
        {"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400, "both"},
        {"\r\nGET http://a.test/ HTTP/1.1\r\n\r\n", 400, "empty line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (parse(bad[i].req, &r) != HTTP_ERROR)
            fail_msg("accepted: %s", bad[i].req);
        if (r.status != bad[i].status || !strstr(r.why, bad[i].why))
            fail_msg("%s: %d %s (expected %d ... %s)", bad[i].req, r.status, r.why, bad[i].status, bad[i].why);
    }
    /* the same Content-Length twice is fine */
    assert_int_equal(parse("POST http://a.test/ HTTP/1.1\r\nContent-Length: 2\r\ncontent-length:2\r\n\r\n", &r),
                     HTTP_DONE);
    /* 16 KiB at most */
    size_t n = HTTP_HEAD_MAX + 10;
    char *big = malloc(n + 1);
    memset(big, 'a', n);
    memcpy(big, "GET http://a.test/ HTTP/1.1\r\nX: ", 32);
    big[n] = '\0';
    assert_int_equal(http_parse_request(big, n, &r), HTTP_ERROR);
    assert_int_equal(r.status, 431);
    free(big);
}

static void test_http_upstream_head(void **state)
{
    (void)state;
    const char *req = "POST http://Api.Test:8080/v1/x?y=1 HTTP/1.1\r\n"
                      "Host: evil.test\r\n"
                      "User-Agent: t\r\n"
                      "Proxy-Authorization: Basic abc\r\n"
                      "Proxy-Connection: keep-alive\r\n"
                      "Connection: keep-alive, X-Hop\r\n"
                      "X-Hop: 1\r\n"
                      "Keep-Alive: 300\r\n"
                      "Content-Length: 4\r\n"
                      "\r\n"
                      "body";
    http_request r;
    assert_int_equal(parse(req, &r), HTTP_DONE);
    char out[1024];
    ssize_t n = http_upstream_head(req, &r, out, sizeof out);
    assert_true(n > 0);
    out[n] = '\0';
    assert_string_equal(out, "POST /v1/x?y=1 HTTP/1.1\r\n"
                             "Host: api.test:8080\r\n"
                             "User-Agent: t\r\n"
                             "Content-Length: 4\r\n"
                             "Connection: close\r\n\r\n");
    const char *v6 = "GET http://[2001:db8::1]? HTTP/1.0\n\n";
    assert_int_equal(parse(v6, &r), HTTP_DONE);
    n = http_upstream_head(v6, &r, out, sizeof out);
    out[n] = '\0';
    assert_string_equal(out, "GET /? HTTP/1.0\r\nHost: [2001:db8::1]\r\nConnection: close\r\n\r\n");
    assert_int_equal(http_upstream_head(v6, &r, out, 20), -1);

    char resp[512];
    size_t rl = http_response(403, "http_request_denied", "no\n", resp, sizeof resp);
    assert_int_equal(rl, strlen(resp));
    assert_string_equal(resp, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
                              "Content-Length: 3\r\nConnection: close\r\n"
                              "Proxy-Status: cordon; error=http_request_denied\r\n\r\nno\n");
}

/* ---- SOCKS5 -------------------------------------------------------------------------------- */

static void test_socks5(void **state)
{
    (void)state;
    bool noauth;
    assert_int_equal(socks5_greeting((const uint8_t *)"", 0, &noauth), 0);
    assert_int_equal(socks5_greeting((const uint8_t *)"\x05", 1, &noauth), 0);
    assert_int_equal(socks5_greeting((const uint8_t *)"\x05\x02\x02", 3, &noauth), 0);
    assert_int_equal(socks5_greeting((const uint8_t *)"\x05\x02\x02\x00", 4, &noauth), 4);
    assert_true(noauth);
    assert_int_equal(socks5_greeting((const uint8_t *)"\x05\x01\x02", 3, &noauth), 3);
    assert_false(noauth);
    assert_int_equal(socks5_greeting((const uint8_t *)"\x04\x01", 2, &noauth), -1);
    assert_int_equal(socks5_greeting((const uint8_t *)"\x05\x00", 2, &noauth), -1);

    socks5_request r;
    static const uint8_t dom[] = {5, 1, 0, 3, 8, 'A', 'p', 'i', '.', 't', 'e', 's', 't', 0x01, 0xbb};
    for (size_t k = 0; k < sizeof dom; k++)
        assert_int_equal(socks5_parse_request(dom, k, &r), 0); /* every prefix: more needed */
    assert_int_equal(socks5_parse_request(dom, sizeof dom, &r), (int)sizeof dom);
    assert_true(r.domain);
    assert_string_equal(r.host, "api.test");
    assert_int_equal(r.port, 443);
    static const uint8_t v4[] = {5, 1, 0, 1, 127, 0, 0, 1, 0, 80, 'x'};
    assert_int_equal(socks5_parse_request(v4, sizeof v4, &r), 10);
    assert_string_equal(r.host, "127.0.0.1");
    static const uint8_t v6[] = {5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 22};
    assert_int_equal(socks5_parse_request(v6, sizeof v6, &r), (int)sizeof v6);
    assert_string_equal(r.host, "::1");
    static const uint8_t bind[] = {5, 2, 0, 1, 127, 0, 0, 1, 0, 80};
    assert_int_equal(socks5_parse_request(bind, sizeof bind, &r), -1);
    assert_int_equal(r.reply, SOCKS5_BAD_COMMAND);
    static const uint8_t atyp[] = {5, 1, 0, 9, 0, 0};
    assert_int_equal(socks5_parse_request(atyp, sizeof atyp, &r), -1);
    assert_int_equal(r.reply, SOCKS5_BAD_ADDRESS);
    static const uint8_t nul[] = {5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80};
    assert_int_equal(socks5_parse_request(nul, sizeof nul, &r), -1);
    static const uint8_t port0[] = {5, 1, 0, 1, 1, 2, 3, 4, 0, 0};
    assert_int_equal(socks5_parse_request(port0, sizeof port0, &r), -1);
    static const uint8_t ver[] = {4, 1, 0};
    assert_int_equal(socks5_parse_request(ver, sizeof ver, &r), -1);
    uint8_t rep[10];
    assert_int_equal(socks5_reply(SOCKS5_NOT_ALLOWED, rep), 10);
    assert_memory_equal(rep, "\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00", 10);
}

/* ---- the plan ----------------------------------------------------------------------------------- */

static strv env_of(const char *const *vars)
{
    strv e = {0};
    strv_push(&e, NULL);
    e.n = 0;
    for (; *vars; vars++)
        strv_push(&e, xstrdup(*vars));
    return e;
}

static const char *getv(const strv *e, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->v[i], name, n) == 0 && e->v[i][n] == '=')
            return e->v[i] + n + 1;
    return NULL;
}

static void test_plan_bridges(void **state)
{
    (void)state;
    cordon_policy *p = cordon_policy_new();
    cordon_error e;
    assert_int_equal(cordon_policy_set_network(p, CORDON_NETWORK_PROXY, &e), 0);
    assert_int_equal(cordon_policy_forward_port(p, 3128, &e), 0);
    const char *vars[] = {"PATH=/bin",
                          "HTTP_PROXY=http://127.0.0.1:3128",
                          "https_proxy=http://localhost:3128/",
                          "ALL_PROXY=socks5h://[::1]:1080",
                          "NO_PROXY=x",
                          NULL};
    strv env = env_of(vars);
    net_plan np;
    assert_int_equal(net_plan_build(p, &env, &np, &e), 0);
    assert_true(np.active);
    assert_true(np.proxy);
    /* 127.0.0.1:3128 and localhost:3128 are one bridge, moved off the forwarded 3128 */
    assert_int_equal(np.n_listen, 3);
    assert_int_equal(np.listen[0].kind, NET_LISTEN_BRIDGE);
    assert_int_equal(np.listen[0].port, 30000);
    assert_string_equal(np.listen[0].what, "HTTP_PROXY https_proxy");
    assert_int_equal(np.listen[0].to.n, 2); /* localhost: 127.0.0.1, then ::1 */
    assert_int_equal(np.listen[1].kind, NET_LISTEN_BRIDGE);
    assert_int_equal(np.listen[1].port, 1080);
    assert_int_equal(np.listen[1].to.addr[0].ss_family, AF_INET6);
    assert_int_equal(np.listen[2].kind, NET_LISTEN_FORWARD);
    assert_int_equal(np.listen[2].port, 3128);
    assert_string_equal(getv(&env, "HTTP_PROXY"), "http://127.0.0.1:30000");
    assert_string_equal(getv(&env, "https_proxy"), "http://127.0.0.1:30000/");
    assert_string_equal(getv(&env, "ALL_PROXY"), "socks5h://127.0.0.1:1080");
    assert_string_equal(getv(&env, "NO_PROXY"), "x");
    net_plan_free(&np);
    strv_free(&env);

    /* nothing to bridge */
    const char *none[] = {"PATH=/bin", "HTTP_PROXY=", NULL};
    env = env_of(none);
    assert_int_equal(net_plan_build(p, &env, &np, &e), -1);
    assert_has(e.message, "no proxy variable");
    strv_free(&env);
    const char *remote[] = {"HTTPS_PROXY=http://proxy.corp:3128", NULL};
    env = env_of(remote);
    assert_int_equal(net_plan_build(p, &env, &np, &e), -1);
    assert_has(e.message, "not on this host's loopback");
    strv_free(&env);
    cordon_policy_free(p);
}

static void test_plan_proxy(void **state)
{
    (void)state;
    cordon_policy *p = cordon_policy_new();
    cordon_error e;
    assert_int_equal(cordon_policy_allow_domain(p, "*.example.com", &e), 0);
    assert_int_equal(p->network, CORDON_NETWORK_PROXY); /* implied */
    assert_int_equal(cordon_policy_deny_domain(p, "bad.example.com", &e), 0);
    assert_int_equal(cordon_policy_add_host(p, "Db.Example.com=10.0.0.5", &e), 0);
    assert_int_equal(cordon_policy_add_host(p, "db.example.com=10.0.0.6", &e), -1);
    assert_has(e.message, "given twice");
    assert_int_equal(cordon_policy_add_host(p, "x=notanip", &e), -1);
    assert_int_equal(cordon_policy_publish_port_string(p, "127.0.0.1:8000:3000", &e), 0);
    assert_int_equal(cordon_policy_publish_port_string(p, "3001", &e), 0);
    assert_int_equal(cordon_policy_publish_port_string(p, "localhost:8000:3002", &e), -1);
    assert_has(e.message, "host port 8000 is used twice");
    const char *vars[] = {"PATH=/bin", "FTP_PROXY=http://10.1.1.1:1", "all_proxy=http://x:1", NULL};
    strv env = env_of(vars);
    net_plan np;
    assert_int_equal(net_plan_build(p, &env, &np, &e), 0);
    assert_int_equal(np.n_listen, 1);
    assert_int_equal(np.listen[0].kind, NET_LISTEN_PROXY);
    assert_int_equal(np.listen[0].port, NET_PROXY_PORT);
    assert_int_equal(np.n_publish, 2);
    assert_int_equal(np.publish[0].inside, 3000);
    assert_int_equal(np.publish[0].host, 8000);
    assert_int_equal(np.publish[1].host, 3001);
    assert_int_equal(np.allow.n, 1);
    assert_int_equal(np.n_hosts, 1);
    assert_string_equal(np.hosts[0].name, "db.example.com");
    assert_string_equal(getv(&env, "FTP_PROXY"), "http://127.0.0.1:3128");
    assert_string_equal(getv(&env, "all_proxy"), "socks5h://127.0.0.1:3128");
    assert_string_equal(getv(&env, "HTTPS_PROXY"), "http://127.0.0.1:3128");
    assert_string_equal(getv(&env, "npm_config_https_proxy"), "http://127.0.0.1:3128");
    assert_string_equal(getv(&env, "no_proxy"), "localhost,127.0.0.1,::1");
    net_plan_free(&np);
    strv_free(&env);
    /* an explicit --network none conflicts */
    assert_int_equal(cordon_policy_set_network(p, CORDON_NETWORK_NONE, &e), 0);
    env = env_of(vars);
    assert_int_equal(net_plan_build(p, &env, &np, &e), -1);
    assert_has(e.message, "allowed domains need the proxy network");
    assert_string_equal(e.option, "allowDomain"); /* the command line names its flag */
    strv_free(&env);
    cordon_policy_free(p);
}

static void test_port_setters(void **state)
{
    (void)state;
    cordon_policy *p = cordon_policy_new();
    cordon_error e;
    const char *bad[] = {"0",
                         "65536",
                         "-1",
                         "",
                         "1x",
                         "1:",
                         ":1",
                         "1:0",
                         "1:2:3",
                         "123456",
                         "3000:8000", /* Docker's HOST:CONTAINER or cordon's old PORT:HOSTPORT? refused */
                         "0.0.0.0:8000:3000",
                         "127.0.0.1:8000",
                         "127.0.0.1::3000",
                         "127.0.0.1:8000:"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (cordon_policy_publish_port_string(p, bad[i], &e) == 0)
            fail_msg("--publish-port '%s' accepted", bad[i]);
        assert_int_equal(e.stage, CORDON_STAGE_USAGE);
    }
    /* the ambiguous form names both readings and the unambiguous spellings */
    assert_int_equal(cordon_policy_publish_port_string(p, "3000:8000", &e), -1);
    assert_has(e.message, "'3000:8000' is ambiguous");
    assert_has(e.message, "'127.0.0.1:3000:8000' (the host's 3000 to the command's 8000)");
    assert_string_equal(e.option, "publishPort");
    /* the forms that mean one thing: PORT, PORT:PORT, 127.0.0.1:HOSTPORT:PORT */
    assert_int_equal(cordon_policy_publish_port_string(p, "4000:4000", &e), 0);
    assert_int_equal(cordon_policy_publish_port_string(p, "127.0.0.1:9000:4001", &e), 0);
    assert_int_equal(p->net.n_publish, 2);
    assert_int_equal(p->net.publish[1].inside, 4001);
    assert_int_equal(p->net.publish[1].host, 9000);
    assert_int_equal(cordon_policy_forward_port_string(p, "5432", &e), 0);
    assert_int_equal(cordon_policy_forward_port_string(p, "5432", &e), -1);
    assert_int_equal(cordon_policy_publish_port(p, 5432, 0, &e), -1);
    assert_has(e.message, "one port cannot carry both");
    assert_int_equal(cordon_policy_forward_port(p, 0, &e), -1);
    assert_int_equal(cordon_policy_forward_port(p, 70000, &e), -1);
    assert_int_equal(cordon_policy_set_network_log(p, "", &e), -1);
    cordon_policy_free(p);
}

/* ---- the resolver ------------------------------------------------------------------------------- */

/* A response to (id, name, qtype) with answers appended (raw records). */
static size_t response(uint8_t *out, uint16_t id, uint16_t flags, const char *name, uint16_t qtype, int ancount,
                       const uint8_t *answers, size_t alen)
{
    uint8_t q[512];
    int ql = dns_build_query(q, sizeof q, id, name, qtype);
    assert_true(ql > 0);
    size_t qlen = (size_t)ql - 11; /* without the OPT record */
    memcpy(out, q, qlen);
    out[2] = (uint8_t)(flags >> 8);
    out[3] = (uint8_t)flags;
    out[6] = 0;
    out[7] = (uint8_t)ancount;
    out[10] = out[11] = 0;
    if (alen > 0)
        memcpy(out + qlen, answers, alen);
    return qlen + alen;
}

static void test_dns_messages(void **state)
{
    (void)state;
    uint8_t q[512];
    int ql = dns_build_query(q, sizeof q, 0xbeef, "a.example.com", DNS_TYPE_AAAA);
    static const uint8_t want[] = {0xbe, 0xef, 0x01, 0x00, 0,   1,   0,    0,    0, 0,   0,   1,   1, 'a',
                                   7,    'e',  'x',  'a',  'm', 'p', 'l',  'e',  3, 'c', 'o', 'm', 0, 0,
                                   28,   0,    1,    0,    0,   41,  0x04, 0xd0, 0, 0,   0,   0,   0, 0};
    assert_int_equal(ql, (int)sizeof want);
    assert_memory_equal(q, want, sizeof want);
    char big[300];
    memset(big, 'a', 64);
    big[64] = '\0';
    assert_int_equal(dns_build_query(q, sizeof q, 1, big, DNS_TYPE_A), -1); /* a 64-byte label */
    assert_int_equal(dns_build_query(q, sizeof q, 1, "a..b", DNS_TYPE_A), -1);
    assert_int_equal(dns_build_query(q, 10, 1, "a.b", DNS_TYPE_A), -1);

    /* a CNAME chain, answered out of order, with compression */
    uint8_t ans[256], msg[1024];
    size_t al = 0;
    /* svc.cdn.test A 1.2.3.4 (the name spelled out: offset of it recorded for later) */
    static const uint8_t rec_a[] = {3, 's', 'v', 'c', 3, 'c', 'd', 'n', 4, 't', 'e', 's', 't', 0,
                                    0, 1,   0,   1,   0, 0,   0,   60,  0, 4,   1,   2,   3,   4};
    memcpy(ans + al, rec_a, sizeof rec_a);
    al += sizeof rec_a;
    /* the question's name (offset 12) CNAME -> svc.cdn.test (a pointer into the record above) */
    size_t qlen = (size_t)dns_build_query(q, sizeof q, 7, "registry.example.com", DNS_TYPE_A) - 11;
    uint16_t at = (uint16_t)qlen; /* where rec_a starts in the message */
    const uint8_t rec_c[] = {0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 2, (uint8_t)(0xc0 | at >> 8), (uint8_t)at};
    memcpy(ans + al, rec_c, sizeof rec_c);
    al += sizeof rec_c;
    /* an A record of an unrelated name: not taken */
    static const uint8_t rec_x[] = {1, 'x', 0, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 9, 9, 9, 9};
    memcpy(ans + al, rec_x, sizeof rec_x);
    al += sizeof rec_x;
    size_t ml = response(msg, 7, 0x8180, "registry.example.com", DNS_TYPE_A, 3, ans, al);
    struct sockaddr_storage out[4];
    int n;
    const char *why;
    assert_int_equal(dns_parse_answer(msg, ml, 7, "registry.example.com", DNS_TYPE_A, out, 4, &n, &why), DNS_ANSWER);
    assert_int_equal(n, 1);
    char a[64];
    assert_string_equal(net_addr_str((struct sockaddr *)&out[0], a, sizeof a), "1.2.3.4");
    /* the wrong ID, name or type, a query instead of a response: not for us */
    assert_int_equal(dns_parse_answer(msg, ml, 8, "registry.example.com", DNS_TYPE_A, out, 4, &n, &why), DNS_BOGUS);
    assert_int_equal(dns_parse_answer(msg, ml, 7, "registry.example.org", DNS_TYPE_A, out, 4, &n, &why), DNS_BOGUS);
    assert_int_equal(dns_parse_answer(msg, ml, 7, "registry.example.com", DNS_TYPE_AAAA, out, 4, &n, &why), DNS_BOGUS);
    ml = response(msg, 7, 0x0100, "registry.example.com", DNS_TYPE_A, 0, NULL, 0);
    assert_int_equal(dns_parse_answer(msg, ml, 7, "registry.example.com", DNS_TYPE_A, out, 4, &n, &why), DNS_BOGUS);
    /* errors */
    ml = response(msg, 7, 0x8183, "registry.example.com", DNS_TYPE_A, 0, NULL, 0);
    assert_int_equal(dns_parse_answer(msg, ml, 7, "registry.example.com", DNS_TYPE_A, out, 4, &n, &why), DNS_NXDOMAIN);
    ml = response(msg, 7, 0x8182, "registry.example.com", DNS_TYPE_A, 0, NULL, 0);
    assert_int_equal(dns_parse_answer(msg, ml, 7, "registry.example.com", DNS_TYPE_A, out, 4, &n, &why), DNS_FAILED);
    assert_has(why, "SERVFAIL");
    /* a pointer loop, a record past the end, a label with a dot in it */
    /* the answer's owner is a pointer to itself (the answers start after the 22-byte name
     * and the type and class, at 38) */
    static const uint8_t loop[] = {0xc0, 38, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 1, 1, 1, 1};
    ml = response(msg, 7, 0x8180, "registry.example.com", DNS_TYPE_A, 1, loop, sizeof loop);
    assert_int_equal(dns_parse_answer(msg, ml, 7, "registry.example.com", DNS_TYPE_A, out, 4, &n, &why), DNS_BOGUS);
    static const uint8_t cut[] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 40, 1, 1};
    ml = response(msg, 7, 0x8180, "registry.example.com", DNS_TYPE_A, 1, cut, sizeof cut);
    assert_int_equal(dns_parse_answer(msg, ml, 7, "registry.example.com", DNS_TYPE_A, out, 4, &n, &why), DNS_BOGUS);
    static const uint8_t dotted[] = {3, 'a', '.', 'b', 0, 0, 5, 0, 1, 0, 0, 0, 60, 0, 2, 0xc0, 12};
    ml = response(msg, 7, 0x8180, "registry.example.com", DNS_TYPE_A, 1, dotted, sizeof dotted);
    assert_int_equal(dns_parse_answer(msg, ml, 7, "registry.example.com", DNS_TYPE_A, out, 4, &n, &why), DNS_ANSWER);
    assert_int_equal(n, 0);
}

static void test_hostconf(void **state)
{
    (void)state;
    hostconf c = {0};
    const char *rc = "# comment\nsearch example.com\nnameserver 10.0.0.2\nnameserver  ::1 # local\n"
                     "nameserver bogus\nnameserver 1.1.1.1\nnameserver 8.8.8.8\n";
    hostconf_parse_resolv(&c, rc, strlen(rc));
    assert_int_equal(c.n_ns, 3);
    char a[64];
    assert_string_equal(net_addr_str((struct sockaddr *)&c.ns[0], a, sizeof a), "10.0.0.2");
    assert_string_equal(net_addr_str((struct sockaddr *)&c.ns[1], a, sizeof a), "::1");
    assert_int_equal(ntohs(((struct sockaddr_in *)&c.ns[2])->sin_port), 53);
    hostconf e = {0};
    hostconf_parse_resolv(&e, "", 0);
    assert_int_equal(e.n_ns, 1); /* glibc's default: 127.0.0.1 */
    const char *hosts = "127.0.0.1\tlocalhost\n::1 localhost ip6-localhost\n# 1.2.3.4 hidden\n"
                        "10.1.2.3 Db.Internal db # the database\nnot-an-ip name\n10.9.9.9\n";
    hostconf_parse_hosts(&c, hosts, strlen(hosts));
    assert_int_equal(c.n_hosts, 5);
    assert_string_equal(c.hosts[3].name, "db.internal");
    assert_string_equal(net_addr_str((struct sockaddr *)&c.hosts[3].addr, a, sizeof a), "10.1.2.3");
    assert_string_equal(c.hosts[4].name, "db");
    hostconf_free(&c);
    hostconf_free(&e);
}

static void test_dns_server_setter(void **state)
{
    (void)state;
    cordon_policy *p = cordon_policy_new();
    cordon_error e;
    assert_int_equal(cordon_policy_add_dns_server(p, "127.0.0.1:5353", &e), 0);
    assert_int_equal(cordon_policy_add_dns_server(p, "[::1]:53", &e), 0);
    assert_int_equal(cordon_policy_add_dns_server(p, "2001:db8::53", &e), 0);
    assert_string_equal(p->net.dns.v[0], "127.0.0.1 5353");
    assert_string_equal(p->net.dns.v[1], "::1 53");
    assert_string_equal(p->net.dns.v[2], "2001:db8::53 53");
    assert_int_equal(cordon_policy_add_dns_server(p, "9.9.9.9", &e), -1);
    assert_has(e.message, "at most three");
    cordon_policy_free(p);
    p = cordon_policy_new();
    const char *bad[] = {"", "dns.example", "1.2.3.4:", "1.2.3.4:0", "1.2.3.4:70000", "[::1", "[::1]x", "1.2.3.4:x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (cordon_policy_add_dns_server(p, bad[i], &e) == 0)
            fail_msg("--dns-server '%s' accepted", bad[i]);
    cordon_policy_free(p);
}

/* ---- settings ------------------------------------------------------------------------------------ */

static void test_settings_keys(void **state)
{
    (void)state;
    cordon_policy *p = cordon_policy_new();
    cordon_error e;
    assert_int_equal(cordon_policy_forward_port(p, 5432, &e), 0);
    assert_int_equal(cordon_policy_set_allow_unix_sockets(p, false, &e), 0);
    const char *doc = "{\"sandbox\": {\"allowedDomains\": [\"*.npmjs.org\", \"github.com\"],\n"
                      " \"deniedDomains\": [\"evil.npmjs.org\"], \"addHosts\": [\"db.test=10.0.0.5\"],\n"
                      " \"forwardPorts\": [5432, \"6379\"], \"publishPorts\": [3000, \"127.0.0.1:8001:3001\"],\n"
                      " \"allowUnixSockets\": true, \"networkLog\": \"/tmp/n.log\"}}";
    assert_int_equal(settings_load_buffer(p, "s.json", doc, strlen(doc), &e), 0);
    assert_int_equal(p->network, CORDON_NETWORK_PROXY);
    assert_int_equal(p->net.allow.n, 2);
    assert_string_equal(p->net.allow.v[0], "*.npmjs.org");
    assert_int_equal(p->net.deny.n, 1);
    assert_int_equal(p->net.hosts.n, 1);
    assert_int_equal(p->net.n_forward, 2); /* 5432 from the flag is not added twice */
    assert_int_equal(p->net.n_publish, 2);
    assert_int_equal(p->net.publish[1].host, 8001);
    assert_false(p->net.allow_unix); /* the setter's choice wins */
    assert_string_equal(p->net.log, "/tmp/n.log");
    cordon_policy_free(p);

    static const struct {
        const char *doc, *msg;
    } bad[] = {
        {"{\"sandbox\": {\"allowedDomains\": [\"*\"]}}",
         "s.json:1: \"sandbox.allowedDomains[0]\": '*' would match every domain"},
        {"{\"sandbox\": {\"allowedDomains\": \"a.test\"}}", "must be an array"},
        {"{\"sandbox\": {\"deniedDomains\": [\"ok.test\",\n 7]}}",
         "s.json:2: \"sandbox.deniedDomains[1]\": must be a string"},
        {"{\"sandbox\": {\"forwardPorts\": [0]}}", "port 0 is not between 1 and 65535"},
        {"{\"sandbox\": {\"publishPorts\": [\"80:x\"]}}", "is not a port"},
        {"{\"sandbox\": {\"addHosts\": [\"a.test\"]}}", "is not NAME=ADDRESS"},
        {"{\"sandbox\": {\"allowUnixSockets\": 1}}", "must be true or false"},
        {"{\"sandbox\": {\"networkLog\": \"\"}}", "must be a file name"},
        {"{\"sandbox\": {\"network\": \"wide\"}}", "is \"wide\": use true, false, \"none\", \"host\" or \"proxy\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        p = cordon_policy_new();
        if (settings_load_buffer(p, "s.json", bad[i].doc, strlen(bad[i].doc), &e) == 0)
            fail_msg("accepted: %s", bad[i].doc);
        assert_has(e.message, bad[i].msg);
        assert_int_equal(e.stage, CORDON_STAGE_SETTINGS);
        assert_int_equal(p->net.allow.n + p->net.n_forward + p->net.n_publish, 0); /* nothing applied */
        cordon_policy_free(p);
    }
    p = cordon_policy_new();
    const char *mode = "{\"sandbox\": {\"network\": \"proxy\"}}";
    assert_int_equal(settings_load_buffer(p, "s.json", mode, strlen(mode), &e), 0);
    assert_int_equal(p->network, CORDON_NETWORK_PROXY);
    cordon_policy_free(p);
}

/* ---- the log ---------------------------------------------------------------------------------- */

static void test_netlog(void **state)
{
    (void)state;
    char buf[512];
    netlog_entry en = {.kind = "connect",
                       .host = "a\"b\\c\n\x01\xff",
                       .port = 443,
                       .decision = "refused",
                       .reason = "no --allow-domain matches"};
    size_t n = netlog_format(&en, 1700000000123LL, buf, sizeof buf);
    assert_int_equal(n, strlen(buf));
    assert_string_equal(buf, "{\"time\":\"2023-11-14T22:13:20.123Z\",\"kind\":\"connect\",\"host\":\"a\\\"b\\\\c\\u000a"
                             "\\u0001\\ufffd\",\"port\":443,\"decision\":\"refused\",\"reason\":\"no --allow-domain "
                             "matches\",\"rule\":null,\"address\":null}\n");
    char small[40];
    n = netlog_format(&en, 0, small, sizeof small);
    assert_true(n < sizeof small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_normalize),
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_address_classes),
        cmocka_unit_test(test_decide),
        cmocka_unit_test(test_proxy_url),
        cmocka_unit_test(test_http_parse),
        cmocka_unit_test(test_http_upstream_head),
        cmocka_unit_test(test_socks5),
        cmocka_unit_test(test_plan_bridges),
        cmocka_unit_test(test_plan_proxy),
        cmocka_unit_test(test_port_setters),
        cmocka_unit_test(test_netlog),
        cmocka_unit_test(test_settings_keys),
        cmocka_unit_test(test_dns_messages),
        cmocka_unit_test(test_hostconf),
        cmocka_unit_test(test_dns_server_setter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
