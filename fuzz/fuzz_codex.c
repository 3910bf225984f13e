// SPDX-License-Identifier: Apache-2.0
/* libFuzzer harness for the JSON values of Codex's helper command line (src/codex/): the
 * permission profile, the legacy sandbox policy and --managed-network, chosen by the
 * first byte; an accepted profile is then mapped onto cordon rules against a made-up host.
 *
 * Invariants beyond the sanitizers': a refused value fails at the usage stage with a
 * message that names the option; an accepted profile holds only absolute paths and known
 * access modes, and its mapping never yields a relative rule. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codex/codex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool fz_exists(const char *path, void *ctx)
{
    (void)ctx;
    return strlen(path) % 3 != 0; /* some paths exist, some do not */
}

static bool fz_is_dir(const char *path, void *ctx)
{
    (void)ctx;
    return strlen(path) % 2 == 0;
}

static char *fz_gitdir(const char *dotgit, void *ctx)
{
    (void)ctx;
    return strlen(dotgit) % 5 == 0 ? strdup("/repo/.git/worktrees/w") : NULL;
}

static void check_error(const cordon_error *err, const char *option)
{
    if (err->stage != CORDON_STAGE_USAGE || strncmp(err->message, option, strlen(option)) != 0) {
        fprintf(stderr, "refused without naming %s: stage %d, \"%s\"\n", option, (int)err->stage, err->message);
        __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    cordon_error err = {0};
    switch (data[0] % 3) {
    case 0:
    case 1: {
        cx_profile p;
        bool legacy = data[0] % 3 == 1;
        int r = legacy ? cx_legacy_policy_parse(text, &p, &err) : cx_profile_parse(text, &p, &err);
        if (r < 0) {
            check_error(&err, legacy ? "--sandbox-policy" : "--permission-profile");
            break;
        }
        for (size_t i = 0; i < p.n_entries; i++) {
            const cx_entry *e = &p.entries[i];
            if ((e->kind == CX_PATH && (!e->path || e->path[0] != '/')) || e->access > CX_DENY) {
                fprintf(stderr, "accepted a bad entry %zu\n", i);
                __builtin_trap();
            }
        }
        cx_host h = {.policy_cwd = "/work/proj",
                     .tmpdir = "/var/tmp",
                     .home = "/home/u",
                     .exists = fz_exists,
                     .is_dir = fz_is_dir,
                     .gitdir_of = fz_gitdir};
        cx_plan plan;
        cordon_error e2 = {0};
        if (cx_map(&p, &h, data[0] & 0x80, &plan, &e2) == 0) {
            for (size_t i = 0; i < plan.n_rules; i++)
                if (plan.rules[i].path[0] != '/') {
                    fprintf(stderr, "mapped a relative rule %s\n", plan.rules[i].path);
                    __builtin_trap();
                }
            cx_plan_free(&plan);
        }
        cx_profile_free(&p);
        break;
    }
    case 2: {
        cx_netctx n;
        if (cx_netctx_parse(text, &n, &err) < 0)
            check_error(&err, "--managed-network");
        else
            cx_netctx_free(&n);
        break;
    }
    }
    free(text);
    return 0;
}
