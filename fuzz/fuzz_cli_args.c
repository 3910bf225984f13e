// SPDX-License-Identifier: Apache-2.0
/* libFuzzer harness for the command line: parse_run_args() (src/cli/args.c) on an argv
 * built from the input.  Byte 0 says whether a command is required (run) or not
 * (explain); the rest is split at NUL bytes into at most 64 arguments.
 *
 * Every option setter runs, with the policy freed after each input, so leaks and
 * out-of-bounds accesses in the setters show (ASan, UBSan, LeakSanitizer).  Arguments
 * naming --settings are left out: reading files is fuzz_settings' job, and a fuzzer
 * must not wander through the file system.  Invariants: a refused argv leaves a message
 * (the CLI prints it after "cordon: "), an accepted one a command inside argv. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    bool command_required = data[0] & 1;
    size_t n = size - 1;
    char *buf = malloc(n + 1);
    if (!buf)
        return 0;
    memcpy(buf, data + 1, n);
    buf[n] = '\0';

    char *argv[MAX_ARGS + 1];
    int argc = 0;
    for (size_t off = 0; off < n + 1 && argc < MAX_ARGS;) {
        char *arg = buf + off;
        if (strncmp(arg, "--settings", 10) == 0) {
            free(buf);
            return 0;
        }
        argv[argc++] = arg;
        off += strlen(arg) + 1;
        if (off > n)
            break;
    }
    argv[argc] = NULL;

    run_args a = {.pol = cordon_policy_new()};
    cordon_error err = {0};
    int r = parse_run_args(argc, argv, &a, command_required, &err);
    if (r < 0 && (err.message[0] == '\0' || err.stage == CORDON_STAGE_NONE)) {
        fprintf(stderr, "parse_run_args failed without a message or a stage\n");
        __builtin_trap();
    }
    if (r == 0 && a.command && (a.command < argv || a.command >= argv + argc)) {
        fprintf(stderr, "the command does not point into argv\n");
        __builtin_trap();
    }
    if (r == 0 && command_required && !a.help && !a.command) {
        fprintf(stderr, "no command, yet parse_run_args succeeded\n");
        __builtin_trap();
    }
    cordon_policy_free(a.pol);
    free(buf);
    return 0;
}
