// SPDX-License-Identifier: Apache-2.0
/* Why an exec said "not found" when the command is there: its #! interpreter or its ELF
 * loader is not in the sandbox (a script under /opt whose /usr/local/bin/python3 is not
 * shown, `--base empty --allow-ro /usr` without the /lib64 loader link).  Runs in the
 * command's process right after execvp() failed with ENOENT: system calls and stack
 * buffers only. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* A description of what is missing ("its interpreter /x (named on its #! line) is not in
 * the sandbox"), or "" when cmd itself is missing or nothing else explains it. */
void exec_explain(const char *cmd, char *const envp[], char *out, size_t n);
