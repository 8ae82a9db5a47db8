#!/usr/bin/env bash
# What libiorr-preload.so brings into every recorded process: no C++ runtime (issue 3: "never
# pulls a C++ runtime into the program's hook path"). Linked with -static-libstdc++, a single
# reference to it (a range check's throw, as std::string_view::substr has) pulls in its
# exception machinery, std::string and the emergency pool whose initializer allocates about
# 70 KiB from the program's heap as the library loads, in every process, with the page faults
# that come with it (tools/bench/record-processes.sh). Also checks that the library exports
# nothing of zstd or of its own code but the wrappers' entry points (C names, no C++ ones).
# Usage: record_library_test.sh LIBRARY
set -uo pipefail
lib=$1
command -v nm > /dev/null || { echo "skip: no nm (binutils)"; exit 77; }
[[ -r $lib ]] || { echo "FAIL: no library at $lib"; exit 1; }
fail=0
# The runtime's own code (not the header templates the library instantiates): its throw helpers,
# exception classes and machinery, and the emergency pool's initializer.
cxx=$(nm "$lib" | awk '$2 ~ /^[tTwWvVdDbB]$/ {print $3}' |
  grep -E '^_ZSt(19|20|21|24|25)?__throw_|^_ZNSt[0-9]+(logic|runtime|out_of_range|length|invalid_argument)|^__cxa_(throw|allocate_exception|begin_catch)|^__gxx_personality|^_GLOBAL__sub_I_eh_alloc|^_ZNSt7__cxx1112basic_string' |
  head -5)
if [[ -n $cxx ]]; then
  echo "FAIL: the library holds C++ runtime code, e.g.:"
  echo "$cxx" | sed 's/^/  /'
  fail=1
fi
# Undefined references to the C++ runtime would make the loader load libstdc++ itself.
undef=$(nm -D --undefined-only "$lib" | awk '$1 == "U" {print $2}' | grep -E '^_Z|^__cxa_|^__gxx_' | head -5)
if [[ -n $undef ]]; then
  echo "FAIL: the library needs the C++ runtime at load: $undef"
  fail=1
fi
if readelf -d "$lib" | grep -q 'NEEDED.*libstdc++'; then
  echo "FAIL: the library needs libstdc++.so"
  fail=1
fi
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -E '^_Z|^ZSTD_|^HUF_|^FSE_' | head -5)
if [[ -n $exported ]]; then
  echo "FAIL: the library exports more than its wrappers: $exported"
  fail=1
fi
# Nothing relocated in the call table: the loader writes every relocated pointer in each
# recorded process, copying the pages that hold them (trace::CallShape; kCalls' names made 20 KiB
# of .data.rel.ro, five pages, and 354 of the library's 521 relocations).
if [[ $(nm "$lib" | grep -c '_ZN4iorr5trace6kCallsE') != 0 ]]; then
  echo "FAIL: the library holds trace::kCalls (names: pointers the loader relocates in every process)"
  fail=1
fi
relro=$(readelf -S -W "$lib" | awk '$2 == ".data.rel.ro" {print $6}')
relro=$((16#${relro:-0}))
if ((relro > 4096)); then
  echo "FAIL: .data.rel.ro is $relro bytes (more than a page to relocate and copy in each process)"
  fail=1
fi
echo "libiorr-preload.so: $(nm -D --defined-only "$lib" | wc -l) exported symbols," \
  "$(size -A "$lib" | awk '$1 == ".text" {print $2}') bytes of code, $relro bytes of .data.rel.ro," \
  "$(readelf -r "$lib" | grep -c R_X86_64) relocations, no C++ runtime code: $([[ -z $cxx ]] && echo yes || echo no)"
exit $fail
