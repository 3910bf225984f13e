// SPDX-License-Identifier: Apache-2.0
/* The HTTP side of the filtering proxy: parsing a request head as a client sends it to a
 * proxy (absolute-form `GET http://host/path HTTP/1.1`, or `CONNECT host:port HTTP/1.1`),
 * the head forwarded upstream, and the responses cordon makes itself.  Pure, and fuzzed
 * (fuzz/fuzz_http.c): the input is whatever the sandboxed command sends.
 *
 * One request per client connection: the forwarded head asks the server to close the
 * connection after its response (`Connection: close`), so a second request on the same
 * connection can never reach a host that was not checked. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/domain.h"

/* A request head larger than this gets 431 (curl and browsers send well under 8 KiB). */
#define HTTP_HEAD_MAX 16384

typedef enum http_parse {
    HTTP_NEED_MORE = 0, /* no complete head yet, nothing wrong so far */
    HTTP_DONE = 1,      /* a complete, valid head */
    HTTP_ERROR = -1,    /* status and why say what is wrong */
} http_parse;

typedef struct http_request {
    bool connect; /* CONNECT host:port */
    char method[24];
    char host[NET_HOST_MAX]; /* normalised */
    uint16_t port;
    size_t target_off, target_len; /* the request target in the buffer */
    size_t path_off, path_len;     /* absolute-form: path and query ("" means "/") */
    int minor;                     /* HTTP/1.minor */
    size_t head_len;               /* through the empty line that ends the head */
    int status;                    /* HTTP_ERROR: 400, 431, 501 or 505 */
    const char *why;               /* HTTP_ERROR: a static phrase */
} http_request;

http_parse http_parse_request(const char *buf, size_t len, http_request *r);

/* The head sent to the server for an absolute-form request: an origin-form request line,
 * Host from the request target (never the client's own Host header), the hop-by-hop and
 * proxy headers dropped, `Connection: close`.  Returns its length, or -1 when it does not
 * fit in cap bytes (head_len + 512 always suffices). */
ssize_t http_upstream_head(const char *buf, const http_request *r, char *out, size_t cap);

/* A complete response of cordon's own: status line, plain-text body, Connection: close
 * and, when proxy_error is set, a Proxy-Status header (RFC 9209) with that error type.
 * Returns its length (truncated to cap - 1 bytes at most). */
size_t http_response(int status, const char *proxy_error, const char *body, char *out, size_t cap);

/* The reason phrase of a status cordon sends. */
const char *http_reason(int status);
