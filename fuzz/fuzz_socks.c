// SPDX-License-Identifier: Apache-2.0
/* libFuzzer harness for the filtering proxy's SOCKS5 side (src/net/socks.h): the input is
 * what a sandboxed command sends, a greeting then a request, as the proxy reads them.
 *
 * Invariants beyond the sanitizers':
 *   - what is taken is never more than what is there, and every shorter prefix of an
 *     accepted greeting or request asks for more bytes (never refuses, never accepts);
 *   - an accepted request is a CONNECT with a port in 1..65535 and a normalised host (no
 *     upper case, no control character, no space: a name a --allow-domain can be matched
 *     against); a refused one carries a reply code (1..8) and a reason. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "net/socks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    bool noauth;
    int g = socks5_greeting(data, size, &noauth);
    if (g > (int)size) {
        fprintf(stderr, "the greeting took %d of %zu bytes\n", g, size);
        __builtin_trap();
    }
    for (int k = 0; g > 0 && k < g; k++) {
        bool na;
        if (socks5_greeting(data, (size_t)k, &na) != 0) {
            fprintf(stderr, "a %d-byte prefix of a %d-byte greeting did not ask for more\n", k, g);
            __builtin_trap();
        }
    }
    /* the request: after the greeting when there is one, else the whole input */
    const uint8_t *q = g > 0 ? data + g : data;
    size_t qn = g > 0 ? size - (size_t)g : size;
    socks5_request r;
    int n = socks5_parse_request(q, qn, &r);
    if (n > (int)qn) {
        fprintf(stderr, "the request took %d of %zu bytes\n", n, qn);
        __builtin_trap();
    }
    if (n < 0) {
        if (r.reply < 1 || r.reply > 8 || !r.why || !r.why[0]) {
            fprintf(stderr, "a refusal without a reply code or a reason\n");
            __builtin_trap();
        }
        return 0;
    }
    if (n == 0)
        return 0;
    if (r.cmd != 1 || r.port == 0 || !r.host[0]) {
        fprintf(stderr, "accepted cmd %u port %u host '%s'\n", r.cmd, r.port, r.host);
        __builtin_trap();
    }
    for (const char *c = r.host; *c; c++)
        if ((unsigned char)*c <= ' ' || (*c >= 'A' && *c <= 'Z') || (unsigned char)*c >= 0x7f) {
            fprintf(stderr, "an accepted host that is not normalised: '%s'\n", r.host);
            __builtin_trap();
        }
    for (int k = 0; k < n; k++) {
        socks5_request r2;
        if (socks5_parse_request(q, (size_t)k, &r2) != 0) {
            fprintf(stderr, "a %d-byte prefix of a %d-byte request did not ask for more\n", k, n);
            __builtin_trap();
        }
    }
    return 0;
}
