#!/usr/bin/env bash
# Configures and builds iorr into build/ (binaries in build/bin, libraries in build/lib).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo ${IORR_CMAKE_FLAGS:-} >/dev/null
cmake --build build -j"$(nproc)"
