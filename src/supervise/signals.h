#pragma once
#include <signal.h>
/* The signals cordon forwards to the command: what a terminal or a supervisor sends. */
void signals_forwarded(sigset_t *set);
