// SPDX-License-Identifier: Apache-2.0
/* --network-log: one JSON object per line for every decision of the network helper. */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef struct netlog_entry {
    const char *kind;     /* "http", "connect", "socks5", "bridge", "forward", "publish" */
    const char *host;     /* as the request named it, or NULL */
    unsigned port;        /* 0: none */
    const char *decision; /* "allowed", "refused" (by cordon's rules or a bad request), "failed" */
    const char *reason;   /* why, in words */
    const char *rule;     /* the flag and pattern that decided ("--allow-domain *.example.com"), or NULL */
    const char *address;  /* the address connected to or refused, or NULL */
} netlog_entry;

/* Format one line (with its newline) into buf; returns its length (< n). */
size_t netlog_format(const netlog_entry *e, long long unix_ms, char *buf, size_t n);
/* Append one line to fd (one write, O_APPEND: lines of concurrent runs never interleave);
 * nothing when fd < 0. */
void netlog_write(int fd, const netlog_entry *e);
