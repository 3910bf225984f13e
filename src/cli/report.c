// SPDX-License-Identifier: Apache-2.0
/* The command line's messages about a run: the library's error as cordon prints it, and
 * what the creation control refused.  main.c, session.c and workspace.c all print them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Would the text act on a terminal: a C0 control (ESC, CR, a newline), DEL, or a C1 control
 * in UTF-8 (U+0080..U+009F, which some terminals obey like ESC [)? */
static bool acts_on_terminal(const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c < 0x20 || *c == 0x7f || (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f))
            return true;
    return false;
}

char *cli_safe_text(const char *s)
{
    char *q = acts_on_terminal(s) ? cordon_quote_path(s) : NULL; /* the library's: cordon_free */
    const char *t = q ? q : s;
    size_t n = strlen(t) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, t, n);
    cordon_free(q);
    return copy;
}

/* The library's message (its errno spelled out), with the flags for the setting it is
 * about: the library names settings as its API does, the command line by its flags.  A
 * message may name a file the command chose (a workspace's change that cannot be read):
 * one that would act on the terminal is printed quoted whole, as names are. */
void cli_error_text(const cordon_error *err, char *buf, size_t n)
{
    char text[2048];
    cordon_error_text(err, text, sizeof text);
    if (acts_on_terminal(text)) {
        char *q = cordon_quote_path(text);
        snprintf(text, sizeof text, "%s", q ? q : "(a message that cannot be shown)");
        cordon_free(q);
    }
    if (err->option[0]) {
        char flags[96];
        cli_option_flags(err->option, flags, sizeof flags);
        snprintf(buf, n, "cordon: %s (%s)", text, flags);
    } else {
        snprintf(buf, n, "cordon: %s", text);
    }
}

/* One refusal, "OPERATION PATH: WHY" (include/cordon.h), with the path quoted as git quotes
 * names: the command chose it, and an ESC or a newline in it would otherwise reach the
 * terminal.  OPERATION is one word; the path may hold ": ", and so may WHY (cordon's own
 * text, with no control character, '"' or '\\').  So the path ends at the first ": " after
 * the last byte that quoting could change: every such byte of the path is inside the quotes
 * (with a ": " of its own after them, some of the path is printed outside them, harmless). */
static void print_refusal(const char *r)
{
    const char *sp = strchr(r, ' ');
    const char *rest = sp ? sp + 1 : r;
    const char *last = NULL;
    for (const char *c = rest; *c; c++) {
        unsigned char u = (unsigned char)*c;
        if (u < 0x20 || u == 0x7f || u >= 0x80 || u == '"' || u == '\\')
            last = c;
    }
    if (!last) { /* nothing to quote */
        fprintf(stderr, "cordon: refused %s\n", r);
        return;
    }
    const char *why = strstr(last, ": ");
    size_t n = why ? (size_t)(why - rest) : strlen(rest);
    char path[1024];
    snprintf(path, sizeof path, "%.*s", (int)(n < sizeof path ? n : sizeof path - 1), rest);
    char *q = cordon_quote_path(path);
    fprintf(stderr, "cordon: refused %.*s%s%s\n", (int)(rest - r), r, q, why ? why : "");
    cordon_free(q);
}

/* What the creation control refused, once the command has run: the command itself only
 * saw EPERM. */
void cli_print_refusals(const cordon_result *res)
{
    const char *r = res->refusals;
    for (unsigned i = 0; i < res->n_refusals; i++) {
        print_refusal(r);
        r += strlen(r) + 1;
    }
    if (res->refused > res->n_refusals)
        fprintf(stderr, "cordon: ... and %lu more refused calls (see --status-json)\n", res->refused - res->n_refusals);
    /* the network's: each refused host once, with what would allow it */
    r = res->network_refusals;
    for (unsigned i = 0; i < res->n_network_refusals; i++) {
        /* the host is the command's (the proxy blanks C0 controls, not a UTF-8 C1 one) */
        char *line = cli_safe_text(r);
        fprintf(stderr, "cordon: network: refused %s\n", line ? line : "(a host that cannot be shown)");
        free(line);
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
