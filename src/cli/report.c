/* The command line's messages about a run: the library's error as cordon prints it, and
 * what the creation control refused.  main.c, session.c and workspace.c all print them. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* The library's message (its errno spelled out), with the flags for the setting it is
 * about: the library names settings as its API does, the command line by its flags. */
void cli_error_text(const cordon_error *err, char *buf, size_t n)
{
    char text[2048];
    cordon_error_text(err, text, sizeof text);
    if (err->option[0]) {
        char flags[96];
        cli_option_flags(err->option, flags, sizeof flags);
        snprintf(buf, n, "cordon: %s (%s)", text, flags);
    } else {
        snprintf(buf, n, "cordon: %s", text);
    }
}

/* What the creation control refused, once the command has run: the command itself only
 * saw EPERM. */
void cli_print_refusals(const cordon_result *res)
{
    const char *r = res->refusals;
    for (unsigned i = 0; i < res->n_refusals; i++) {
        fprintf(stderr, "cordon: refused %s\n", r);
        r += strlen(r) + 1;
    }
    if (res->refused > res->n_refusals)
        fprintf(stderr, "cordon: ... and %lu more refused calls (see --status-json)\n", res->refused - res->n_refusals);
    /* the network's: each refused host once, with what would allow it */
    r = res->network_refusals;
    for (unsigned i = 0; i < res->n_network_refusals; i++) {
        fprintf(stderr, "cordon: network: refused %s\n", r);
        r += strlen(r) + 1;
    }
    if (res->network_refusals_more)
        fprintf(stderr, "cordon: network: ... and %u more refused hosts (see --network-log)\n",
                res->network_refusals_more);
}

void cli_print_error(const cordon_error *err)
{
    char text[2200];
    cli_error_text(err, text, sizeof text);
    fprintf(stderr, "%s\n", text);
}
