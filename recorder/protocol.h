// What `iorr record` (the launcher) and libiorr-preload.so (in every recorded process) agree on:
// the environment variables and the layout of the shared state page. Plain data, no code; the
// shared state is used with atomics from every thread of every recorded process.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>

namespace iorr::recorder {

// Environment set by the launcher (and kept alive across exec by the library).
inline constexpr const char* kEnvTraceFd = "IORR_FD";          // fd of the trace, O_WRONLY|O_APPEND
inline constexpr const char* kEnvSharedFd = "IORR_SHM_FD";     // memfd holding SharedState
inline constexpr const char* kEnvTimeUnit = "IORR_TIME_UNIT";  // ns: 1, 10, 100 or 1000
inline constexpr const char* kEnvStartNs = "IORR_START_NS";    // CLOCK_MONOTONIC of the header
inline constexpr const char* kEnvLib = "IORR_LIB";             // absolute path of the library
// Internal: set by the library when it had to put itself back into a child's environment
// ("1"), and the CLOCK_MONOTONIC time an execve started (the new image records the call).
inline constexpr const char* kEnvReinjected = "IORR_REINJECTED";
inline constexpr const char* kEnvExecStart = "IORR_EXEC_START";
// Internal: "FD:ENTRY:PID", the fd holding process entry ENTRY's liveness lock, handed to the
// image PID execs (the fd stays open across exec, so does the lock).
inline constexpr const char* kEnvLock = "IORR_LOCK";
// Internal: "1" when the image that exec'd was traced after PTRACE_TRACEME (a debugger's
// inferior): the new image, still traced, records through its wrappers only (every trap of
// Syscall User Dispatch would be a signal stop for the tracer).
inline constexpr const char* kEnvTraced = "IORR_TRACED";
// Internal: "1" when the library put the audit module (audit.h) back into LD_AUDIT for an exec
// whose environment lacked it; the new image takes it out of its environ again.
inline constexpr const char* kEnvAuditAdded = "IORR_AUDIT_ADDED";
// What goes in front of GLIBC_TUNABLES with the audit module: with an audit module glibc sizes
// the static TLS block before the program's libraries load, so theirs (and the library's) must
// fit in its optional part (512 bytes by default; the library's alone takes 336 bytes). The room
// is not free: every thread's static TLS is carved from its stack, and pthread_create refuses
// (EINVAL) a stack smaller than the static TLS block plus 2 KiB. 6 KiB keeps a thread of
// PTHREAD_STACK_MIN (16 KiB) possible beside 4.5 KiB of the program's own TLS (at 11 KiB and
// more, such a thread failed even without any; behaviour test), and leaves 4.6 KiB for other
// libraries' initial-exec TLS (libgomp 136 bytes, scudo 11 KiB, liblsan 56 KiB, libtsan 786 KiB).
inline constexpr const char* kAuditTunable = "glibc.rtld.optional_static_tls=6144";

// Exit codes of the launcher for its own failures (as env and timeout use them).
inline constexpr int kExitRecorderError = 125;
inline constexpr int kExitCannotRun = 126;
inline constexpr int kExitNotFound = 127;

inline constexpr uint64_t kSharedMagic = 0x3453524f5252494full;  // "IORRSRS4"
inline constexpr uint32_t kSharedSlots = 4096;
inline constexpr int kRecorderZstdLevel = 3;  // the writer threads compress off the program's core
inline constexpr uint32_t kSharedProcs = 4096;  // process entries (liveness)
inline constexpr int64_t kNever = INT64_MAX;

// One per live recorded thread. A chunk's watermark is the minimum, over all slots, of
// unflushed_min and in_call_since (and the current time): every event not yet written starts
// at or after it. The thread only lowers unflushed_min; its process's writer raises it once
// events are written, inside a window (raise_seq odd) during which readers also take
// raise_from, the value it replaced: an event the thread published while the raise went on is
// covered by neither field until the writer has looked at the ring again (preload.cc).
struct ThreadSlot {
  std::atomic<uint32_t> tid;  // 0: free
  std::atomic<uint32_t> pid;
  std::atomic<int64_t> unflushed_min;  // earliest start of this thread's unwritten events
  std::atomic<int64_t> in_call_since;  // start of the call in progress, or kNever
  std::atomic<uint32_t> proc;          // 1 + the process entry of its process, 0: none
  std::atomic<uint32_t> raise_seq;     // odd: the writer is raising unflushed_min
  std::atomic<int64_t> raise_from;     // unflushed_min before the raise under way
};

// A slot whose tid is kSpawnWindowTid (no kernel tid: pid_max is at most 2^22) is no thread's:
// it holds the watermark at in_call_since for a child that glibc spawns from inside libc
// (system, popen, wordexp), whose exec no wrapper sees and so no environment announces (see
// kEnvExecStart). pid and proc are the spawning process's, raise_from the window's id (its
// raise_seq stays even). The child's image finds the window by its parent's pid and takes the
// slot over as its own thread's, its in_call_since unmoved; any writer frees one older than a
// second (a child that was not recorded, or whose exec failed), the spawner its own at exit.
// The two tids below it are a window being opened and a slot being freed or taken over
// (preload.cc).
inline constexpr uint32_t kSpawnWindowTid = 0xfffffffeu;

// Process entries: a recorded process holds an open-file-description lock (F_OFD_SETLK) on
// byte ENTRY of the shared state's memfd, through an fd of its own that survives exec and
// closes only when the process ends. A lock that is gone means the process is gone, however it
// ended (SIGKILL included): its thread slots, which would hold every later watermark back, can
// be freed (see the library's Watermark).

// What the library learned of a loaded object's system call sites (recorder/patch.cc), so that
// only the first process of a recording to load an object decodes it. An object is known by
// its build ID and the layout of its segments; sites are offsets from its load address, with a
// checksum of the bytes each one overwrites, checked before they are used (an object without a
// build ID is decoded by every process). An entry is claimed by moving state 0 -> 1 and
// published with 2; a process that finds an entry being filled decodes the object itself.
inline constexpr uint32_t kPatchObjects = 64;
inline constexpr uint32_t kPatchSites = 8192;
struct PatchSite {
  uint32_t from, at, to;  // the bytes overwritten [from, to), the syscall at `at`
  uint32_t sum;           // checksum of the bytes [from, to) and the two at `at`
  uint8_t keeps_syscall;
  uint8_t reserved[3];
};
struct PatchObject {
  std::atomic<uint32_t> state;  // 0: free, 1: being filled, 2: ready
  uint32_t patchable;           // 0: the process must keep dispatch (why says why)
  uint8_t build_id[32];
  uint32_t build_id_len;
  uint32_t skipped;                     // system calls of no interest, left alone
  uint64_t map_size, text_lo, text_hi;  // the layout: all segments, the executable span
  uint32_t first, count;                // its sites in PatchCache::site
  char why[88];
};
struct PatchCache {
  std::atomic<uint32_t> next_site;
  uint32_t reserved;
  PatchObject object[kPatchObjects];
  PatchSite site[kPatchSites];
};

struct SharedState {
  uint64_t magic;
  uint32_t version;
  uint32_t slots;
  std::atomic<uint64_t> next_stream;  // stream ids, unique across the recording
  std::atomic<uint64_t> events;       // events written (for the end record)
  std::atomic<uint64_t> chunks;
  std::atomic<uint64_t> dropped_events;  // events lost: a write failed (disk full, ...)
  std::atomic<uint32_t> write_errors;
  std::atomic<uint32_t> processes;  // processes that loaded the library
  std::atomic<uint32_t> escapes;    // escapes noted (static/setuid exec, io_uring, ...)
  // ns per TSC tick x 2^32, measured by the launcher when the kernel's clocksource is the TSC
  // (0: use clock_gettime). Hooks then read the TSC instead of calling clock_gettime twice.
  uint64_t tsc_ns_q32;
  // 1: pidfd_getfd works here (the launcher's probe); each writer thread then takes the
  // library's fds into a table of its own (preload.cc, PrivateFdTable).
  uint32_t pidfd_getfd;
  // Every slot ever taken lies below this (raised before a slot is taken): the scans of the
  // slots stop here instead of reading all kSharedSlots (160 KiB) at each exec, flush and exit.
  std::atomic<uint32_t> slots_used;
  // The compressor's workspace size at kRecorderZstdLevel, and the zstd version (its header's
  // ZSTD_VERSION_NUMBER) it was computed with, by iorr record: a library built with the same
  // version maps it without running zstd's cold code in every process (0: compute it).
  uint32_t zstd_workspace_bytes;
  uint32_t zstd_version;
  // Signal handlers the library could not put behind its entry (iorr_handler_entry, dispatch.cc)
  // or whose entry could not watch them: their libc calls inside a recorded call go natively,
  // unrecorded. iorr record notes each count as an escape at the end.
  std::atomic<uint32_t> unwatched_handler_runs;  // inside a call, on an alternate stack with
                                                 // too little room for a caught call
  std::atomic<uint32_t> unentered_handlers;      // installed past the library's 256 entries
  // The launcher closed the trace while processes of the tree still ran (iorr record --linger,
  // or Ctrl-C once the command had exited): their writers append nothing more (a record one of
  // them began before it saw this lands in the file the launcher has by then renamed away from
  // the trace's name), and a process that starts after it records nothing.
  std::atomic<uint32_t> closed;
  // Under a file size limit (ulimit -f) a process's check that its record fits below the limit
  // and its write are one step for every process (WriteAll in preload.cc): the pid of the
  // process taking it, 0 when free.
  std::atomic<uint32_t> append_lock;
  // Calls of signal handlers that came while the library was at work on their thread (writing
  // an event, an exec, a spawn): counted among dropped_events too, and named in a note.
  std::atomic<uint32_t> handler_calls_lost;
  uint32_t reserved[4];
  ThreadSlot slot[kSharedSlots];
  std::atomic<uint32_t> proc_pid[kSharedProcs];  // 0: free entry
  PatchCache patch;
};

static_assert(std::atomic<int64_t>::is_always_lock_free, "shared atomics must be lock-free");

}  // namespace iorr::recorder
