// SPDX-License-Identifier: Apache-2.0
/* `cordon check [--json]`: the library's cordon_check() document, printed as it is or as
 * text.  The probes themselves are the library's (src/lib/check.c). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *str_or(json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

static void print_text(json_t *doc)
{
    bool works = json_is_true(json_object_get(doc, "default_sandbox"));
    printf("default sandbox: %s\n", works ? "works" : "does not work here");
    json_t *ll = json_object_get(json_object_get(doc, "checks"), "landlock_isolation");
    if (!works)
        printf("  %s\n%s", str_or(doc, "error", "(no reason given)"),
               json_is_true(json_object_get(ll, "ok"))
                   ? "  --isolation auto runs here, under Landlock without namespaces (weaker: doc/security.md)\n"
                   : "");
    else
        printf("  mode: %s: %s\n", str_or(doc, "mode", "?"), str_or(doc, "mode_detail", ""));
    const char *mode_fix = json_string_value(json_object_get(doc, "mode_fix"));
    if (mode_fix)
        printf("  fix: %s\n", mode_fix);
    const char *key;
    json_t *c;
    json_object_foreach(json_object_get(doc, "checks"), key, c)
    {
        bool ok = json_is_true(json_object_get(c, "ok"));
        bool required = json_is_true(json_object_get(c, "required"));
        printf("  %-5s %-22s %s\n",
               ok         ? "ok"
               : required ? "FAIL"
                          : "no",
               str_or(c, "title", key), str_or(c, "detail", ""));
        const char *fix = json_string_value(json_object_get(c, "fix"));
        if (fix)
            printf("  %-5s %-22s fix: %s\n", "", "", fix);
    }
}

int cmd_check(int argc, char **argv)
{
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help_check(stdout);
            return 0;
        } else {
            fprintf(stderr, "cordon: check: unknown option '%s'; see `cordon help check`\n", argv[i]);
            return CORDON_EXIT_SETUP;
        }
    }
    char *text = NULL;
    cordon_error err = CORDON_ERROR_INIT;
    int works = cordon_check(&text, &err);
    if (works < 0) {
        char msg[2048];
        cordon_error_text(&err, msg, sizeof msg);
        fprintf(stderr, "cordon: check: %s\n", msg);
        return CORDON_EXIT_SETUP;
    }
    int code = works ? 0 : 1;
    if (json) {
        printf("%s\n", text);
    } else {
        json_error_t jerr;
        json_t *doc = json_loads(text, 0, &jerr);
        if (!doc) {
            fprintf(stderr, "cordon: check: the library's document does not parse (%s)\n", jerr.text);
            code = CORDON_EXIT_SETUP;
        } else {
            print_text(doc);
            json_decref(doc);
        }
    }
    cordon_free(text);
    return code;
}
