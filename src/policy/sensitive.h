// SPDX-License-Identifier: Apache-2.0
/* The tables of what in a home directory cordon treats specially, whatever the rules say
 * (README, "The home and the host"): one entry per path, relative to the home, with
 * what it holds.  Extending a table is adding a line to sensitive.c; protect.c applies
 * them, `cordon explain` names the entry behind each rule it adds, and doc/cordon.1
 * lists them.
 *
 * - credential stores: hidden wherever the caller's home is visible (--base host, a rule
 *   that shows the home or a directory above an entry), unless a rule names the entry's
 *   path exactly;
 * - start-up files: programs that run, or configure what runs, the next time the caller
 *   logs in, opens a shell or uses a tool outside the sandbox.  Read-only wherever the
 *   home is writable (a workspace that is the home, --allow ~), unless a rule grants
 *   write on exactly that path; where missing (and their parent directory exists), they
 *   cannot be created (the creation control refuses the name). */
#pragma once
#include <stddef.h>

typedef struct home_entry {
    const char *path; /* relative to the home, no leading or trailing '/' */
    const char *what; /* for explain and messages */
} home_entry;

extern const home_entry credential_stores[];
extern const size_t n_credential_stores;
extern const home_entry startup_files[];
extern const size_t n_startup_files;
