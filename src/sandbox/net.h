#pragma once
#include "cordon.h"
/* Bring up loopback in the new network namespace. */
int net_loopback_up(cordon_error *err);
