#!/usr/bin/env bash
# Fuzzes the trace reader for a bounded time:
#   tests/fuzz/run.sh [seconds]          (default 60)
# or, with --importers, the text importers (import_fuzz.cc: strace logs and JSON lines):
#   tests/fuzz/run.sh --importers [seconds]
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

target=trace_reader_fuzz
if [ "${1:-}" = --importers ]; then
  target=import_fuzz
  shift
fi
secs="${1:-60}"
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
  echo "usage: $0 [--importers] [seconds]" >&2
  exit 2
fi

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${IORR_FUZZ_BUILD:-$src/build-fuzz}"
artifacts="${IORR_FUZZ_ARTIFACTS:-$build/fuzz-artifacts}"
jobs="${IORR_FUZZ_JOBS:-1}"

skip() {
  echo "SKIP $target: $*" >&2
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

echo "== building $target and make_corpus"
if ! cmake --build "$build" --target "$target" make_corpus -j "$(nproc 2>/dev/null || echo 2)" \
     >"$build/fuzz-build.log" 2>&1; then
  tail -n 60 "$build/fuzz-build.log" >&2
  echo "FAIL: build failed (log: $build/fuzz-build.log)" >&2
  exit 1
fi
fuzzer="$build/bin/$target"
[ -x "$fuzzer" ] || { echo "FAIL: $fuzzer was not built" >&2; exit 1; }

seeds="$build/fuzz-seeds"
corpus="$build/fuzz-corpus"
if [ "$target" = import_fuzz ]; then
  seeds="$build/import-fuzz-seeds"
  corpus="$build/import-fuzz-corpus"
fi
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$artifacts"
if [ "$target" = import_fuzz ]; then
  # First byte: even for a strace log, odd for JSON lines (see import_fuzz.cc).
  { printf '\000'
    cat <<'LOG'
4121  1796012969.804430 openat(AT_FDCWD</w>, "a/b", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3</w/a/b> <0.000038>
4121  1796012969.804500 write(3</w/a/b>, "hello\n", 6) = 6 <0.000010>
4122  1796012969.804510 read(0, "x", 4096 <unfinished ...>
4121  1796012969.804520 renameat2(AT_FDCWD, "a/b", AT_FDCWD, "a/c", RENAME_NOREPLACE) = 0
4122  1796012969.804530 <... read resumed>"", 4096) = 0
4121  1796012969.804540 readlink("/proc/self/exe", "/usr/bin/tar", 4096) = 12
4121  1796012969.804550 setxattr("a/c", "user.k", "v\0w", 3, 0) = 0
4121  1796012969.804560 getdents64(4, 0x55d0 /* 3 entries */, 32768) = 72
4121  1796012969.804570 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED} ---
4121  1796012969.804580 close(3</w/a/c>) = -1 EBADF (Bad file descriptor)
4122  1796012969.804590 +++ exited with 0 +++
4123  1796012969.804600 openat(AT_FDCWD, "a/d",  <unfinished ...>
4124  1796012969.804610 open(<unfinished ...>
LOG
  } > "$seeds/strace-hand"
  if command -v strace >/dev/null; then
    { printf '\000'
      strace -f -ttt -y -s 64 -o /dev/stdout sh -c 'cat /etc/hostname >/dev/null; ls / >/dev/null' 2>/dev/null |
        head -n 400
    } > "$seeds/strace-live" || true
  fi
  { printf '\001'
    cat <<'JSONL'
{"iorr_header":{"version":3,"time_unit_ns":1000,"start_mono_ns":0,"start_wall_ns":0,"fields":[["cwd","/w"]]}}
{"pid":1,"tid":1,"call":"openat","start_ns":1000,"end_ns":2000,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/a\u00ff","flags":"O_WRONLY|O_CREAT","mode":"0644"}}
{"pid":1,"tid":2,"call":"pwrite64","start_ns":3000,"ret":-1,"errno":"ENOSPC","args":{"fd":3,"count":4096,"offset":8192}}
{"pid":1,"tid":1,"call":"readlinkat","start_ns":4000,"end_ns":4100,"ret":3,"errno":null,"args":{"dirfd":-100,"path":"l","buf":"abc","bufsiz":64}}
{"pid":1,"call":"syscall_999","start_ns":5000,"ret":"0x10"}
{"iorr_note":"escape 1: io_uring_setup: I/O submitted through it is not recorded"}
JSONL
  } > "$seeds/jsonl-hand"
else
  "$build/bin/make_corpus" "$seeds"
  cp "$src/tests/fixtures/v1/rm.iorr" "$seeds/t6_format1_rm.trace"  # an older format's references
  cp "$src/tests/fixtures/v2/readlink.iorr" "$seeds/t7_format2_readlink.trace"  # no readlink targets
fi
echo "== $(ls "$seeds" | wc -l) seeds in $seeds, $(ls "$corpus" | wc -l) inputs in $corpus"

dict="$build/$target.dict"
if [ "$target" = import_fuzz ]; then
  cat >"$dict" <<'EOF'
"<unfinished ...>"
"<... "
" resumed>"
"+++ exited with "
"--- SIG"
" = -1 E"
"AT_FDCWD"
"O_RDONLY|O_CLOEXEC"
"\\x"
"\\u00"
"\"args\":{"
"\"iorr_header\""
"\"iorr_note\""
"\"errno\":"
"null"
EOF
else
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
fi

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
  echo "FAIL: $target exited with $rc" >&2
  for f in $found; do
    echo "  finding: $f   (reproduce: $fuzzer $f)" >&2
  done
  exit 1  # never 77: that would read as "skipped"
fi
echo "PASS: no crash in ${secs}s"
