/* SPDX-License-Identifier: MIT */
/* The one version string: CMake's project(VERSION), in every --version, JSON and file header. */
#ifndef UTIL_VERSION_H
#define UTIL_VERSION_H

/* "0.1.0": a static string. */
const char *util_version(void);

#endif
