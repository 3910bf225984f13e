// SPDX-License-Identifier: Apache-2.0
/* libFuzzer harness for the settings reader: settings_load_buffer() (the JSON document as
 * settings_load() reads it from a file, without the file) into a fresh policy.
 *
 * Invariants beyond the sanitizers': a refused document leaves a message that starts
 * with the file's name (the user has to find the file) and the settings stage, and
 * changes nothing in the policy; an accepted one leaves limits in range. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define NAME "fuzz.json"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    cordon_policy *p = cordon_policy_new();
    cordon_error err = {0};
    int r = settings_load_buffer(p, NAME, (const char *)data, size, &err);
    if (r < 0) {
        if (err.stage != CORDON_STAGE_SETTINGS || strncmp(err.message, NAME, strlen(NAME)) != 0) {
            fprintf(stderr, "refused without naming the file: stage %d, \"%s\"\n", (int)err.stage, err.message);
            __builtin_trap();
        }
        if (p->n_rules || p->n_globs || p->settings_enabled != -1 || p->read_only || p->limits.v[0] || p->limits.v[1] ||
            p->limits.v[2]) {
            fprintf(stderr, "a refused settings document changed the policy\n");
            __builtin_trap();
        }
    } else {
        for (int i = 0; i < LIMITS_N; i++) {
            cordon_error e2 = {0};
            if (limit_check((cordon_limit)i, p->limits.v[i], &e2) < 0) {
                fprintf(stderr, "accepted an out-of-range limit: %s\n", e2.message);
                __builtin_trap();
            }
        }
    }
    cordon_policy_free(p);
    return 0;
}
