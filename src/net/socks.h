// SPDX-License-Identifier: Apache-2.0
/* SOCKS5 (RFC 1928) as the filtering proxy speaks it: no authentication, CONNECT only,
 * names resolved by the proxy (socks5h://, ATYP 3), IPv4 and IPv6 literals.  Pure, and
 * fuzzed (fuzz/fuzz_socks.c): the input is whatever the sandboxed command sends. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/domain.h"

/* Reply codes (RFC 1928, 6). */
#define SOCKS5_OK               0x00
#define SOCKS5_FAILURE          0x01
#define SOCKS5_NOT_ALLOWED      0x02
#define SOCKS5_NET_UNREACHABLE  0x03
#define SOCKS5_HOST_UNREACHABLE 0x04
#define SOCKS5_REFUSED          0x05
#define SOCKS5_TTL_EXPIRED      0x06
#define SOCKS5_BAD_COMMAND      0x07
#define SOCKS5_BAD_ADDRESS      0x08

/* The greeting: VER=5, NMETHODS, METHODS.  Returns the bytes it takes (> 0), 0 when more
 * are needed, -1 when it is not a SOCKS5 greeting.  *noauth: "no authentication" (0x00)
 * is among the methods offered; if it is not, the proxy answers 0xFF and closes. */
int socks5_greeting(const uint8_t *b, size_t n, bool *noauth);

typedef struct socks5_request {
    uint8_t cmd;             /* 1 CONNECT (the only one accepted), 2 BIND, 3 UDP ASSOCIATE */
    bool domain;             /* ATYP 3: a name for the proxy to resolve */
    char host[NET_HOST_MAX]; /* normalised name, or the literal address as text */
    uint16_t port;
    uint8_t reply;   /* on -1: the reply code to send */
    const char *why; /* on -1: a static phrase */
} socks5_request;

/* The request: VER=5 CMD RSV=0 ATYP DST.ADDR DST.PORT.  Returns the bytes it takes (> 0),
 * 0 when more are needed, -1 with reply and why set. */
int socks5_parse_request(const uint8_t *b, size_t n, socks5_request *r);

/* A reply with BND.ADDR 0.0.0.0:0 (10 bytes written to out). */
size_t socks5_reply(uint8_t code, uint8_t out[10]);
