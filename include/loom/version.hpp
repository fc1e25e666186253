// SPDX-License-Identifier: MIT
// loom/version.hpp — loom's version, the single source of it: CMakeLists.txt reads these three
// lines for project(VERSION), so the package version and the macros cannot differ.
#pragma once

#define LOOM_VERSION_MAJOR 0
#define LOOM_VERSION_MINOR 1
#define LOOM_VERSION_PATCH 0

/// One number that orders versions: major * 10000 + minor * 100 + patch (0.1.0 -> 100).
#define LOOM_VERSION (LOOM_VERSION_MAJOR * 10000 + LOOM_VERSION_MINOR * 100 + LOOM_VERSION_PATCH)
