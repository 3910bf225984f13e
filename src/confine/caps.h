/* Stage 5: confinement of the command: every capability dropped (the bounding and
 * ambient sets too, so that not even an exec as uid 0 gets one back) and
 * no_new_privs set. */
#pragma once
#include "cordon.h"

int caps_drop_all(cordon_error *err);
int set_no_new_privs(cordon_error *err);
