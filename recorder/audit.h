// The layout the audit module (audit.cc, libiorr-audit.so) and the recording library share.
//
// The dynamic loader maps a program's libraries, and their constructors run, before
// libiorr-preload.so's constructor: those calls happen before the library can record anything.
// libiorr-audit.so is an rtld-audit module (LD_AUDIT): the loader loads it before anything else
// and calls its la_version, where it arms Syscall User Dispatch with the whole of its own code
// as the only region allowed to make system calls. Every call until the recording library takes
// over then traps into its SIGSYS handler, which makes the call and keeps a copy (number,
// arguments, result, times, and the memory the recording reads through pointer arguments) in
// an AuditLog of its own. It reports the log's address in place, in the IORR_AUDIT variable's
// digits; the recording library stops the log first thing in its constructor and records
// what it holds, in order, before any call of its own (see preload.cc, RecordLoaderCalls).
//
// Plain C layout (the module is built without a C library).
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

namespace iorr::recorder {

// The largest setxattr value a recording keeps, here and in the library (ACLs are tens of
// bytes; a larger value is stored as NULL, so the event stays well under what a chunk takes).
inline constexpr long kMaxXattrValue = 4096;

// "UDITLOG2": the layout below (a module and a library of different builds must not read each
// other's logs; "UDITLOG1" had no seccomp_installs).
// Static TLS (la_objopen in audit.cc): with an audit module the loader sizes the static TLS
// block before it loads the program's libraries, which then must fit in its surplus (sized by
// the glibc.rtld.optional_static_tls tunable: kAuditTunable in protocol.h). A program whose
// libraries need more (rustc's librustc_driver: 23 KiB) failed to start when recorded ("cannot
// allocate memory in static TLS block", status 127). The module then runs the program again,
// before any of its code has run, with a room its libraries fit in, appending the tunable to
// GLIBC_TUNABLES and telling the new image in this variable ("RESTARTS:ROOM:NEEDED"), which the
// recording library notes and takes out of the environment with the tunable it appended.
inline constexpr const char* kEnvTlsRestarts = "IORR_TLS_RESTARTS";
inline constexpr const char* kTlsTunableName = "glibc.rtld.optional_static_tls";
inline constexpr int kMaxTlsRestarts = 3;

inline constexpr uint64_t kAuditMagic = 0x32474f4c54494455ull;
inline constexpr uint32_t kAuditLogBytes = 256u << 10;

// One caught call: this head, then the copies (8-byte aligned) that `copied` marks; a marked
// argument holds its copy's offset from the head instead of the program's pointer.
struct AuditEntry {
  uint32_t size;    // of the head and its copies, a multiple of 8
  uint16_t copied;  // bit i: args[i] is the offset of a copy
  uint16_t reserved;
  int64_t nr;
  int64_t args[6];
  int64_t ret;
  uint64_t start_tsc, end_tsc;  // time stamp counter readings around the call
};

struct AuditLog {
  uint64_t magic;
  int32_t stop;   // set by the recording library: make calls, keep nothing
  uint32_t used;  // bytes of entries in data
  uint32_t entries;
  uint32_t lost;       // calls not kept (no room)
  int64_t armed_ns;    // CLOCK_MONOTONIC when dispatch was armed (after the module's loading)
  uint64_t armed_tsc;  // the time stamp counter then (entries' times are interpolated)
  int32_t end_reason;  // 0: running or stopped; else the call that ended the log (see audit.cc)
  int32_t old_sigsys_valid;
  uint64_t old_sigsys[4];  // SIGSYS's kernel sigaction before the module's (put back on takeover)
  uint32_t
      seccomp_installs;  // calls that installed a seccomp filter (InstallsSeccomp), kept or not
  uint32_t reserved;
  alignas(16) uint8_t data[kAuditLogBytes];
};

// A call that installs a seccomp filter or strict mode when it succeeds.
inline bool InstallsSeccomp(long nr, const long* a) {
  return (nr == SYS_seccomp &&
          (a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER)) ||
         (nr == SYS_prctl && a[0] == PR_SET_SECCOMP);
}

}  // namespace iorr::recorder
