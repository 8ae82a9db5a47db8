#!/usr/bin/env bash
# Set-up, build with warnings as errors, and run every test. Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
IORR_CMAKE_FLAGS="-DIORR_WERROR=ON ${IORR_CMAKE_FLAGS:-}" bash tools/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 900
