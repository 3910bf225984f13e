// SPDX-License-Identifier: Apache-2.0
/* --status-json: the document (api.c) and the file it goes to (status.c). */
#pragma once
#include "cordon.h"

/* The document for a run's result (and its setup error), as text ending in '\n', to be
 * freed with free(); NULL with err filled when it cannot be made. */
char *status_document(const cordon_result *res, const cordon_error *setup_err, cordon_error *err);
