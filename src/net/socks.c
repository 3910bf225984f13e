// SPDX-License-Identifier: Apache-2.0
#include "net/socks.h"

#include <arpa/inet.h>
#include <string.h>

int socks5_greeting(const uint8_t *b, size_t n, bool *noauth)
{
    *noauth = false;
    if (n < 1)
        return 0;
    if (b[0] != 5)
        return -1;
    if (n < 2)
        return 0;
    if (b[1] == 0)
        return -1; /* no method at all */
    size_t need = 2 + (size_t)b[1];
    if (n < need)
        return 0;
    for (size_t i = 2; i < need; i++)
        *noauth |= b[i] == 0x00;
    return (int)need;
}

static int bad(socks5_request *r, uint8_t reply, const char *why)
{
    r->reply = reply;
    r->why = why;
    return -1;
}

int socks5_parse_request(const uint8_t *b, size_t n, socks5_request *r)
{
    memset(r, 0, sizeof *r);
    if (n >= 1 && b[0] != 5)
        return bad(r, SOCKS5_FAILURE, "not a SOCKS5 request (version byte is not 5)");
    if (n >= 3 && b[2] != 0)
        return bad(r, SOCKS5_FAILURE, "the reserved byte of the request is not 0");
    if (n < 5)
        return 0;
    r->cmd = b[1];
    size_t need;
    switch (b[3]) {
    case 1: need = 4 + 4 + 2; break;
    case 4: need = 4 + 16 + 2; break;
    case 3:
        if (b[4] == 0)
            return bad(r, SOCKS5_BAD_ADDRESS, "an empty host name");
        need = 4 + 1 + (size_t)b[4] + 2;
        break;
    default: return bad(r, SOCKS5_BAD_ADDRESS, "an address type other than IPv4, IPv6 or a name");
    }
    if (n < need)
        return 0;
    if (r->cmd != 1)
        return bad(r, SOCKS5_BAD_COMMAND, "only CONNECT is supported (not BIND or UDP ASSOCIATE)");
    r->port = (uint16_t)(b[need - 2] << 8 | b[need - 1]);
    if (r->port == 0)
        return bad(r, SOCKS5_BAD_ADDRESS, "port 0");
    if (b[3] == 1) {
        inet_ntop(AF_INET, b + 4, r->host, sizeof r->host);
    } else if (b[3] == 4) {
        inet_ntop(AF_INET6, b + 4, r->host, sizeof r->host);
    } else {
        r->domain = true;
        const char *why;
        if (net_host_normalize((const char *)b + 5, b[4], r->host, &why) < 0)
            return bad(r, SOCKS5_BAD_ADDRESS, why);
    }
    return (int)need;
}

size_t socks5_reply(uint8_t code, uint8_t out[10])
{
    static const uint8_t tail[] = {0x00, 0x01, 0, 0, 0, 0, 0, 0};
    out[0] = 5;
    out[1] = code;
    memcpy(out + 2, tail, sizeof tail);
    return 10;
}
