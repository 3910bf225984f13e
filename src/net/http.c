// SPDX-License-Identifier: Apache-2.0
#include "net/http.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* RFC 9110 token characters (method, header names). */
static bool tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static http_parse fail(http_request *r, int status, const char *why)
{
    r->status = status;
    r->why = why;
    return HTTP_ERROR;
}

/* The end of the head: the index just past the LF of the empty line, or 0. */
static size_t head_end(const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (b[i] != '\n')
            continue;
        if (i + 1 < n && b[i + 1] == '\n')
            return i + 2;
        if (i + 2 < n && b[i + 1] == '\r' && b[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* Split "host:port" (host may be "[v6]") of n bytes; port_required for CONNECT. */
static http_parse parse_authority(http_request *r, const char *a, size_t n, bool port_required)
{
    if (n == 0)
        return fail(r, 400, "the request names no host");
    if (memchr(a, '@', n))
        return fail(r, 400, "user information ('user@') in the request target is not accepted");
    const char *end = a + n, *hend, *colon = NULL;
    if (a[0] == '[') {
        const char *rb = memchr(a, ']', n);
        if (!rb)
            return fail(r, 400, "an IPv6 address in the request target is not closed by ']'");
        hend = rb + 1;
        if (hend < end) {
            if (*hend != ':')
                return fail(r, 400, "something other than ':PORT' follows the IPv6 address");
            colon = hend;
        }
    } else {
        colon = memchr(a, ':', n);
        hend = colon ? colon : end;
        if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
            return fail(r, 400, "an IPv6 address in the request target must be in brackets");
    }
    r->port = 80;
    if (colon) {
        unsigned long p = 0;
        if (colon + 1 == end)
            return fail(r, 400, "the port in the request target is empty");
        for (const char *c = colon + 1; c < end; c++) {
            if (*c < '0' || *c > '9')
                return fail(r, 400, "the port in the request target is not a number");
            p = p * 10 + (unsigned long)(*c - '0');
            if (p > 65535)
                return fail(r, 400, "the port in the request target is not between 1 and 65535");
        }
        if (p == 0)
            return fail(r, 400, "the port in the request target is not between 1 and 65535");
        r->port = (uint16_t)p;
    } else if (port_required) {
        return fail(r, 400, "CONNECT needs host:port");
    }
    const char *why;
    if (net_host_normalize(a, (size_t)(hend - a), r->host, &why) < 0)
        return fail(r, 400, why);
    return HTTP_DONE;
}

static http_parse parse_target(http_request *r, const char *t, size_t n)
{
    if (r->connect)
        return parse_authority(r, t, n, true);
    if (memchr(t, '#', n))
        return fail(r, 400, "a fragment ('#') in the request target");
    if (t[0] == '/' || (n == 1 && t[0] == '*'))
        return fail(r, 400,
                    "this is cordon's filtering proxy: send requests with an absolute URL "
                    "(GET http://host/path) or CONNECT host:port");
    if (n < 7 || strncasecmp(t, "http://", 7) != 0) {
        if (n >= 8 && strncasecmp(t, "https://", 8) == 0)
            return fail(r, 501, "https:// URLs go through CONNECT (set HTTPS_PROXY, which clients use that way)");
        return fail(r, 501, "cordon's proxy forwards http:// URLs and CONNECT only");
    }
    const char *a = t + 7, *end = t + n, *ae = a;
    while (ae < end && *ae != '/' && *ae != '?')
        ae++;
    if (parse_authority(r, a, (size_t)(ae - a), false) == HTTP_ERROR)
        return HTTP_ERROR;
    r->path_off = r->target_off + (size_t)(ae - t);
    r->path_len = (size_t)(end - ae);
    return HTTP_DONE;
}

http_parse http_parse_request(const char *buf, size_t len, http_request *r)
{
    memset(r, 0, sizeof *r);
    /* Refuse what can never become a request line at once, not when a head completes
     * (a binary protocol sent to the proxy would otherwise wait for its timeout). */
    for (size_t i = 0; i < len && buf[i] != '\n'; i++) {
        unsigned char c = (unsigned char)buf[i];
        if ((c < 0x20 && c != '\r') || c >= 0x7f)
            return fail(r, 400, "the request line holds a control character or a non-ASCII byte");
    }
    size_t end = head_end(buf, len);
    if (end == 0)
        return len >= HTTP_HEAD_MAX ? fail(r, 431, "the request head is larger than 16 KiB") : HTTP_NEED_MORE;
    if (end > HTTP_HEAD_MAX)
        return fail(r, 431, "the request head is larger than 16 KiB");
    r->head_len = end;

    bool first = true, te = false, cl = false;
    char cl_value[24] = "";
    int headers = 0;
    for (size_t ls = 0; ls < end;) {
        const char *nl = memchr(buf + ls, '\n', end - ls);
        size_t le = (size_t)(nl - buf); /* the LF */
        size_t ce = le > ls && buf[le - 1] == '\r' ? le - 1 : le;
        const char *l = buf + ls;
        size_t ln = ce - ls;
        if (memchr(l, '\r', ln))
            return fail(r, 400, "a CR that does not end a line");
        if (ln == 0) {
            if (first)
                return fail(r, 400, "the request starts with an empty line");
            break; /* the end of the head */
        }
        if (first) {
            first = false;
            const char *sp1 = memchr(l, ' ', ln);
            const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(l + ln - sp1 - 1)) : NULL;
            if (!sp1 || !sp2 || memchr(sp2 + 1, ' ', (size_t)(l + ln - sp2 - 1)))
                return fail(r, 400, "the request line is not METHOD TARGET HTTP/1.1");
            size_t ml = (size_t)(sp1 - l);
            if (ml == 0 || ml >= sizeof r->method)
                return fail(r, 400, "the method is empty or too long");
            for (size_t i = 0; i < ml; i++)
                if (!tchar((unsigned char)l[i]))
                    return fail(r, 400, "the method holds a character that is not allowed there");
            memcpy(r->method, l, ml);
            r->method[ml] = '\0';
            r->connect = strcmp(r->method, "CONNECT") == 0;
            const char *v = sp2 + 1;
            size_t vl = (size_t)(l + ln - v);
            if (vl == 8 && memcmp(v, "HTTP/1.1", 8) == 0)
                r->minor = 1;
            else if (vl == 8 && memcmp(v, "HTTP/1.0", 8) == 0)
                r->minor = 0;
            else if (vl >= 6 && memcmp(v, "HTTP/", 5) == 0 && v[5] >= '2' && v[5] <= '9')
                return fail(r, 505, "only HTTP/1.0 and HTTP/1.1 requests are accepted");
            else
                return fail(r, 400, "the request line does not end in HTTP/1.0 or HTTP/1.1");
            r->target_off = (size_t)(sp1 + 1 - buf);
            r->target_len = (size_t)(sp2 - sp1 - 1);
            if (r->target_len == 0)
                return fail(r, 400, "the request target is empty");
            for (size_t i = 0; i < r->target_len; i++) {
                unsigned char c = (unsigned char)buf[r->target_off + i];
                if (c < 0x21 || c > 0x7e)
                    return fail(r, 400, "the request target holds a character that is not allowed there");
            }
        } else {
            if (l[0] == ' ' || l[0] == '\t')
                return fail(r, 400, "a header continued on the next line (obsolete line folding)");
            if (++headers > 128)
                return fail(r, 431, "more than 128 header fields");
            const char *colon = memchr(l, ':', ln);
            if (!colon || colon == l)
                return fail(r, 400, "a header line without a name and ':'");
            size_t nl_ = (size_t)(colon - l);
            for (size_t i = 0; i < nl_; i++)
                if (!tchar((unsigned char)l[i]))
                    return fail(r, 400, "a header name holds a character that is not allowed there");
            const char *v = colon + 1, *ve = l + ln;
            for (const char *c = v; c < ve; c++)
                if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
                    return fail(r, 400, "a header value holds a control character");
            while (v < ve && (*v == ' ' || *v == '\t'))
                v++;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            if (nl_ == 17 && strncasecmp(l, "transfer-encoding", 17) == 0) {
                te = true;
            } else if (nl_ == 14 && strncasecmp(l, "content-length", 14) == 0) {
                size_t vl = (size_t)(ve - v);
                if (vl == 0 || vl >= sizeof cl_value)
                    return fail(r, 400, "a Content-Length that is not a number");
                for (const char *c = v; c < ve; c++)
                    if (*c < '0' || *c > '9')
                        return fail(r, 400, "a Content-Length that is not a number");
                if (cl && (strlen(cl_value) != vl || memcmp(cl_value, v, vl) != 0))
                    return fail(r, 400, "two different Content-Length headers");
                memcpy(cl_value, v, vl);
                cl_value[vl] = '\0';
                cl = true;
            }
        }
        ls = le + 1;
    }
    /* Which one the server believes decides where the next request starts (request
     * smuggling): refuse the ambiguity. */
    if (te && cl)
        return fail(r, 400, "both Transfer-Encoding and Content-Length");
    return parse_target(r, buf + r->target_off, r->target_len) == HTTP_ERROR ? HTTP_ERROR : HTTP_DONE;
}

/* Hop-by-hop headers and the proxy's own, never forwarded (RFC 9110, 7.6.1). */
static bool dropped(const char *name, size_t n)
{
    static const char *const drop[] = {
        "host", "connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate",
        "te",   "trailer",    "upgrade"};
    for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
        if (strlen(drop[i]) == n && strncasecmp(drop[i], name, n) == 0)
            return true;
    return false;
}

typedef struct outbuf {
    char *p;
    size_t n, cap;
    bool over;
} outbuf;

static void put(outbuf *o, const char *s, size_t n)
{
    if (o->over || o->n + n >= o->cap) {
        o->over = true;
        return;
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

static void puts_(outbuf *o, const char *s)
{
    put(o, s, strlen(s));
}

ssize_t http_upstream_head(const char *buf, const http_request *r, char *out, size_t cap)
{
    outbuf o = {.p = out, .cap = cap};
    /* The names the client's Connection headers list are hop-by-hop too. */
    struct {
        const char *s;
        size_t n;
    } listed[32];
    size_t n_listed = 0;
    size_t ls = 0;
    bool first = true;
    for (; ls < r->head_len;) {
        const char *nl = memchr(buf + ls, '\n', r->head_len - ls);
        size_t le = (size_t)(nl - buf), ce = le > ls && buf[le - 1] == '\r' ? le - 1 : le;
        const char *l = buf + ls, *colon = memchr(l, ':', ce - ls);
        if (!first && colon && (size_t)(colon - l) == 10 && strncasecmp(l, "connection", 10) == 0) {
            for (const char *c = colon + 1, *e = buf + ce; c < e && n_listed < 32;) {
                while (c < e && (*c == ' ' || *c == '\t' || *c == ','))
                    c++;
                const char *t = c;
                while (c < e && *c != ',' && *c != ' ' && *c != '\t')
                    c++;
                if (c > t)
                    listed[n_listed++].s = t, listed[n_listed - 1].n = (size_t)(c - t);
            }
        }
        first = false;
        ls = le + 1;
    }

    puts_(&o, r->method);
    put(&o, " ", 1);
    if (r->path_len == 0 || buf[r->path_off] != '/')
        put(&o, "/", 1);
    put(&o, buf + r->path_off, r->path_len);
    puts_(&o, r->minor ? " HTTP/1.1\r\nHost: " : " HTTP/1.0\r\nHost: ");
    bool v6 = strchr(r->host, ':') != NULL;
    if (v6)
        put(&o, "[", 1);
    puts_(&o, r->host);
    if (v6)
        put(&o, "]", 1);
    if (r->port != 80) {
        char p[8];
        snprintf(p, sizeof p, ":%u", (unsigned)r->port);
        puts_(&o, p);
    }
    put(&o, "\r\n", 2);
    first = true;
    for (ls = 0; ls < r->head_len;) {
        const char *nl = memchr(buf + ls, '\n', r->head_len - ls);
        size_t le = (size_t)(nl - buf), ce = le > ls && buf[le - 1] == '\r' ? le - 1 : le;
        const char *l = buf + ls, *colon = memchr(l, ':', ce - ls);
        if (!first && colon) {
            size_t name = (size_t)(colon - l);
            bool skip = dropped(l, name);
            for (size_t i = 0; i < n_listed && !skip; i++)
                skip = listed[i].n == name && strncasecmp(listed[i].s, l, name) == 0;
            if (!skip) {
                put(&o, l, ce - ls);
                put(&o, "\r\n", 2);
            }
        }
        first = false;
        ls = le + 1;
    }
    puts_(&o, "Connection: close\r\n\r\n");
    return o.over ? -1 : (ssize_t)o.n;
}

const char *http_reason(int status)
{
    switch (status) {
    case 200: return "Connection Established";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    }
    return "Error";
}

size_t http_response(int status, const char *proxy_error, const char *body, char *out, size_t cap)
{
    if (cap == 0)
        return 0;
    size_t bl = strlen(body);
    int n = snprintf(out, cap,
                     "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n%s%s%s\r\n%s",
                     status, http_reason(status), bl, proxy_error ? "Proxy-Status: cordon; error=" : "",
                     proxy_error ? proxy_error : "", proxy_error ? "\r\n" : "", body);
    if (n < 0)
        return 0;
    return (size_t)n < cap ? (size_t)n : cap - 1;
}
