/* SPDX-License-Identifier: MIT */
/* TOPOTUNE_VERSION comes from CMake's project(VERSION) for this file alone. */
#include "util/version.h"

const char *util_version(void)
{
    return TOPOTUNE_VERSION;
}
