#!/usr/bin/env bash
# Fuzzes the trace reader for a bounded time:
#   tests/fuzz/run.sh [seconds]          (default 60)
#
# Configures a separate build directory with clang and -DIORR_FUZZ=ON (the main build may use
# any compiler), builds trace_reader_fuzz and make_corpus there, writes fresh seeds, and runs
# libFuzzer on <build>/fuzz-corpus (kept between runs, so coverage accumulates) plus the seeds.
#
# Environment:
#   IORR_FUZZ_BUILD      build directory (default: <source>/build-fuzz)
#   IORR_FUZZ_ARTIFACTS  where crashing/leaking/slow inputs go (default: <build>/fuzz-artifacts)
#   IORR_FUZZ_JOBS       fuzz with N processes (libFuzzer -fork=N; default 1)
#   IORR_FUZZ_ARGS       extra libFuzzer flags, e.g. "-seed=1 -runs=100000"
#   CXX, CC              used when they name clang; otherwise clang++/clang from PATH
#
# Exit status: 0 nothing found; 1 the fuzzer found a crash, leak, timeout or OOM (the input is in
# the artifacts directory), or the build failed; 77 skipped (no clang++ or no libFuzzer runtime;
# register the CTest with SKIP_RETURN_CODE 77).
set -euo pipefail

secs="${1:-60}"
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
  echo "usage: $0 [seconds]" >&2
  exit 2
fi

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${IORR_FUZZ_BUILD:-$src/build-fuzz}"
artifacts="${IORR_FUZZ_ARTIFACTS:-$build/fuzz-artifacts}"
jobs="${IORR_FUZZ_JOBS:-1}"

skip() {
  echo "SKIP trace_reader_fuzz: $*" >&2
  exit 77
}

# A clang++ (and the matching clang): $CXX if it is clang, else clang++, else clang++-NN.
cxx=""
if [ -n "${CXX:-}" ] && [[ "$(basename "$CXX")" == clang++* ]] && command -v "$CXX" >/dev/null; then
  cxx="$(command -v "$CXX")"
elif command -v clang++ >/dev/null; then
  cxx="$(command -v clang++)"
else
  for v in 20 19 18 17 16 15 14 13 12 11; do
    if command -v "clang++-$v" >/dev/null; then
      cxx="$(command -v "clang++-$v")"
      break
    fi
  done
fi
[ -n "$cxx" ] || skip "clang++ not found (libFuzzer needs clang; install clang and libclang-rt-dev)"
cc="${cxx/%clang++/clang}"
cc="${cc/clang++-/clang-}"
if [ -n "${CC:-}" ] && [[ "$(basename "$CC")" == clang* ]] && command -v "$CC" >/dev/null; then
  cc="$(command -v "$CC")"
fi
command -v "$cc" >/dev/null || skip "$cc not found next to $cxx"
command -v cmake >/dev/null || skip "cmake not found"

# libFuzzer's runtime ships separately from clang on Debian/Ubuntu.
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' \
  >"$probe/p.cc"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cc" -o "$probe/p" 2>"$probe/err"; then
  sed 's/^/  /' "$probe/err" >&2
  skip "$cxx cannot link -fsanitize=fuzzer,address,undefined (install libclang-rt-NN-dev)"
fi

echo "== configuring $build with $cxx"
mkdir -p "$build"
if ! cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
     -DIORR_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/fuzz-configure.log" 2>&1; then
  tail -n 40 "$build/fuzz-configure.log" >&2
  echo "FAIL: cmake configure failed (log: $build/fuzz-configure.log)" >&2
  exit 1
fi
if [ ! -f "$build/tests/fuzz/Makefile" ] && [ ! -d "$build/tests/fuzz/CMakeFiles" ]; then
  echo "FAIL: the build has no tests/fuzz; the root CMakeLists.txt must add it when IORR_FUZZ is ON:" >&2
  echo "  if(IORR_FUZZ) add_subdirectory(tests/fuzz) endif()" >&2
  exit 1
fi

echo "== building trace_reader_fuzz and make_corpus"
if ! cmake --build "$build" --target trace_reader_fuzz make_corpus -j "$(nproc 2>/dev/null || echo 2)" \
     >"$build/fuzz-build.log" 2>&1; then
  tail -n 60 "$build/fuzz-build.log" >&2
  echo "FAIL: build failed (log: $build/fuzz-build.log)" >&2
  exit 1
fi
fuzzer="$build/bin/trace_reader_fuzz"
[ -x "$fuzzer" ] || { echo "FAIL: $fuzzer was not built" >&2; exit 1; }

seeds="$build/fuzz-seeds"
corpus="$build/fuzz-corpus"
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$artifacts"
"$build/bin/make_corpus" "$seeds"
cp "$src/tests/fixtures/v1/rm.iorr" "$seeds/t6_format1_rm.trace"  # an older format's references
cp "$src/tests/fixtures/v2/readlink.iorr" "$seeds/t7_format2_readlink.trace"  # no readlink targets
echo "== $(ls "$seeds" | wc -l) seeds in $seeds, $(ls "$corpus" | wc -l) inputs in $corpus"

dict="$build/trace_reader_fuzz.dict"
cat >"$dict" <<'EOF'
# iorr record frame magic (zstd skippable 0x184D2A5E), other skippable magic, zstd frame magic
"\x5e\x2a\x4d\x18"
"\x50\x2a\x4d\x18"
"\x28\xb5\x2f\xfd"
"IORRTRC\x0a"
"IOFZ"
# record types 1 header, 2 chunk, 3 end, 4 note
"\x01"
"\x02"
"\x03"
"\x04"
# string references: null, new, back-reference
"\x00"
"\x01"
"\x02"
# section count 8 and big varints
"\x08"
"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
"\x80\x80\x80\x80\x10"
EOF

fork=()
[ "$jobs" -gt 1 ] && fork=(-fork="$jobs")
stamp="$build/fuzz-start.stamp"
touch "$stamp"
echo "== fuzzing for ${secs}s (log: $build/fuzz-last.log)"
set +e
# shellcheck disable=SC2086
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  "$fuzzer" "${fork[@]}" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 -dict="$dict" \
  -artifact_prefix="$artifacts/" ${IORR_FUZZ_ARGS:-} "$corpus" "$seeds" 2>&1 | tee "$build/fuzz-last.log"
rc=${PIPESTATUS[0]}
set -e

found="$(find "$artifacts" -maxdepth 1 -type f -newer "$stamp" \
  \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) 2>/dev/null || true)"
if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
  echo "FAIL: trace_reader_fuzz exited with $rc" >&2
  for f in $found; do
    echo "  finding: $f   (reproduce: $fuzzer $f)" >&2
  done
  exit 1  # never 77: that would read as "skipped"
fi
echo "PASS: no crash in ${secs}s"
