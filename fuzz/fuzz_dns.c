// SPDX-License-Identifier: Apache-2.0
/* libFuzzer harness for the filtering proxy's resolver (src/net/dnsmsg.h): the input is a
 * DNS message as it might arrive on the resolver's socket, read as the answer to an A and
 * to an AAAA query for a fixed name.  The first two bytes of the input choose the query ID
 * (so that the fuzzer reaches past the ID check).
 *
 * Invariants beyond the sanitizers':
 *   - never more addresses than asked for, each of the family asked for;
 *   - an answer accepted for one name is not accepted for another (the question is checked);
 *   - a query that dns_build_query() writes is refused as an answer (it is no response). */
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "net/dnsmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 4096)
        return 0;
    uint16_t id = (uint16_t)(data[0] << 8 | data[1]);
    static const uint16_t types[] = {DNS_TYPE_A, DNS_TYPE_AAAA};
    for (int t = 0; t < 2; t++) {
        struct sockaddr_storage out[4];
        int n = -1;
        const char *why = NULL;
        dns_status st = dns_parse_answer(data, size, id, "registry.npmjs.org", types[t], out, 4, &n, &why);
        if (n < 0 || n > 4 || (st != DNS_ANSWER && n != 0) || ((st == DNS_FAILED || st == DNS_BOGUS) && !why)) {
            fprintf(stderr, "status %d with %d addresses\n", (int)st, n);
            __builtin_trap();
        }
        for (int i = 0; i < n; i++)
            if (out[i].ss_family != (types[t] == DNS_TYPE_A ? AF_INET : AF_INET6)) {
                fprintf(stderr, "an address of the wrong family\n");
                __builtin_trap();
            }
        if (st == DNS_ANSWER) {
            int m = -1;
            if (dns_parse_answer(data, size, id, "registry.npmjs.com", types[t], out, 4, &m, &why) != DNS_BOGUS) {
                fprintf(stderr, "an answer accepted for two names\n");
                __builtin_trap();
            }
        }
    }
    uint8_t q[512];
    int ql = dns_build_query(q, sizeof q, id, "registry.npmjs.org", DNS_TYPE_A);
    struct sockaddr_storage out[1];
    int n;
    const char *why;
    if (ql <= 0 ||
        dns_parse_answer(q, (size_t)ql, id, "registry.npmjs.org", DNS_TYPE_A, out, 1, &n, &why) != DNS_BOGUS) {
        fprintf(stderr, "a query was taken for an answer\n");
        __builtin_trap();
    }
    return 0;
}
