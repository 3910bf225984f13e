// SPDX-License-Identifier: Apache-2.0
/* libFuzzer harness for the filtering proxy's HTTP side (src/net/http.h): the input is
 * what a sandboxed command sends to the proxy, parsed as it arrives.
 *
 * Invariants beyond the sanitizers':
 *   - a head that parses is not decided differently by more bytes after it (what follows
 *     the head is a body or tunnel data: it must never change the request);
 *   - a prefix of an accepted head never fails (a request split across reads is the
 *     same request);
 *   - an accepted request has a normalised host (lower case, no control character, no
 *     space) and a port in 1..65535; an error has a 4xx/5xx status and a reason;
 *   - the head forwarded upstream fits in head_len + 512 bytes, starts with the method and
 *     an origin-form target, carries no proxy credentials, has CRLF only at line ends and
 *     ends with "Connection: close" and an empty line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_upstream(const char *buf, const http_request *r)
{
    size_t cap = r->head_len + 512;
    char *out = malloc(cap + 1);
    ssize_t n = http_upstream_head(buf, r, out, cap);
    if (n < 0) {
        fprintf(stderr, "the upstream head did not fit in head_len + 512\n");
        __builtin_trap();
    }
    out[n] = '\0';
    size_t ml = strlen(r->method);
    if (strncmp(out, r->method, ml) != 0 || out[ml] != ' ' || out[ml + 1] != '/') {
        fprintf(stderr, "the upstream request line does not start with METHOD /\n");
        __builtin_trap();
    }
    if (n < 4 || strcmp(out + n - 4, "\r\n\r\n") != 0 || !strstr(out, "\r\nConnection: close\r\n\r\n")) {
        fprintf(stderr, "the upstream head does not end with Connection: close and an empty line\n");
        __builtin_trap();
    }
    for (ssize_t i = 0; i < n; i++) {
        if ((out[i] == '\n' && (i == 0 || out[i - 1] != '\r')) || (out[i] == '\r' && out[i + 1] != '\n')) {
            fprintf(stderr, "a bare CR or LF in the upstream head\n");
            __builtin_trap();
        }
        if (out[i] == '\n' && (strncasecmp(out + i + 1, "proxy-authorization:", 20) == 0 ||
                               strncasecmp(out + i + 1, "proxy-connection:", 17) == 0)) {
            fprintf(stderr, "a proxy header was forwarded\n");
            __builtin_trap();
        }
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > HTTP_HEAD_MAX + 64)
        return 0;
    const char *buf = (const char *)data;
    http_request r;
    http_parse st = http_parse_request(buf, size, &r);
    if (st == HTTP_ERROR) {
        if (r.status < 400 || r.status > 599 || !r.why || !r.why[0]) {
            fprintf(stderr, "an error without a status or a reason\n");
            __builtin_trap();
        }
        return 0;
    }
    if (st == HTTP_NEED_MORE)
        return 0;
    if (r.head_len == 0 || r.head_len > size || r.port == 0 || !r.host[0]) {
        fprintf(stderr, "accepted with head_len %zu, port %u, host '%s'\n", r.head_len, r.port, r.host);
        __builtin_trap();
    }
    for (const char *c = r.host; *c; c++)
        if ((unsigned char)*c <= ' ' || (*c >= 'A' && *c <= 'Z') || (unsigned char)*c >= 0x7f) {
            fprintf(stderr, "an accepted host that is not normalised: '%s'\n", r.host);
            __builtin_trap();
        }
    /* more bytes after the head change nothing */
    http_request r2;
    if (http_parse_request(buf, r.head_len, &r2) != HTTP_DONE || r2.head_len != r.head_len || r2.port != r.port ||
        strcmp(r2.host, r.host) != 0 || r2.connect != r.connect) {
        fprintf(stderr, "the bytes after the head changed the request\n");
        __builtin_trap();
    }
    /* every prefix of it is incomplete, not wrong */
    for (size_t k = 0; k < r.head_len; k += 1 + k / 8) {
        http_request r3;
        if (http_parse_request(buf, k, &r3) == HTTP_ERROR) {
            fprintf(stderr, "a prefix of %zu bytes of an accepted head was refused: %s\n", k, r3.why);
            __builtin_trap();
        }
    }
    if (!r.connect)
        check_upstream(buf, &r);
    return 0;
}
