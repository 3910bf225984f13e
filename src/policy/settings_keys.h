// SPDX-License-Identifier: Apache-2.0
/* The top-level keys a settings file may hold (policy/settings.c warns about others). */
#pragma once
#include <stdbool.h>

/* Is KEY one cordon reads, or one of the harness settings files it shares? */
bool settings_is_top_key(const char *key);
/* The known top-level key nearest to KEY (a typo's), or NULL. */
const char *settings_closest_top_key(const char *key);
