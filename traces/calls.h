// The call table (syscalls.def) as C++: call ids, argument kinds and per-call specs.
// Everything here is constexpr and immutable, so safe from any thread, and usable from the
// recorder (no exceptions, no allocation).
#pragma once

#include <sys/syscall.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace iorr::trace {

// How an argument is stored and printed. Values are internal (not in the file format).
enum class ArgKind : uint8_t {
  kBuf,              // not stored: data buffers and out-structures
  kFd,               // file descriptor
  kDirFd,            // directory fd of *at calls (AT_FDCWD)
  kPath,             // path name, interned per chunk
  kStr,              // other string (symlink target, xattr name)
  kOpenFlags,        // O_*
  kOpenHow,          // openat2's struct open_how: its flags field is stored
  kMode,             // permission and type bits, octal
  kSize,             // byte count
  kOffset,           // file offset or length, signed
  kOffsetPtr,        // pointer to an offset: -1 stands for NULL
  kIovec,            // iovec array: the sum of its lengths is stored
  kWhence,           // SEEK_*
  kAtFlags,          // AT_*
  kAccessMode,       // F_OK, R_OK, W_OK, X_OK
  kFcntlCmd,         // F_*
  kRwfFlags,         // RWF_*
  kRenameFlags,      // RENAME_*
  kXattrFlags,       // XATTR_*
  kInotifyMask,      // IN_* (inotify_add_watch's mask)
  kFallocMode,       // FALLOC_FL_*
  kSyncRangeFlags,   // SYNC_FILE_RANGE_*
  kMsyncFlags,       // MS_*
  kCloseRangeFlags,  // CLOSE_RANGE_*
  kStatxMask,        // STATX_*
  kAdvice,           // POSIX_FADV_*
  kIoctlReq,         // ioctl request number
  kFlockOp,          // LOCK_*
  kProt,             // PROT_*
  kMapFlags,         // MAP_*
  kCloneFlags,       // CLONE_*
  kAddr,             // user address, hex
  kDev,              // device number
  kId,               // uid or gid
  kFdPair,           // two fds filled in by the call (pipe, socketpair): low 32 bits first
  kSysNr,            // syscall number (x86_64), printed by name
  kBlockPhase,       // BLK_QUEUE, BLK_ISSUE, BLK_COMPLETE (traces/block.h)
  kBlockOp,          // BLK_* operation and flag bits, as blktrace's rwbs (traces/block.h)
  kInt,              // any other integer
  kLinkTarget,       // readlink's buffer: the target, as many bytes as the call returned
                     // (format version 3; not stored before)
  kXattrValue,       // setxattr's value: `size` bytes (the next argument) when the call
                     // succeeded (format version 3; not stored before)
  kCloneSize,        // ioctl's: the bytes a FICLONE that succeeded gave the destination (the
                     // source's size just after the call), -1 for any other request, a failure
                     // or a size the recorder could not take (format version 4; -1 before)
};

// What a call does; the replayer and the model dispatch on this.
// clang-format off
enum class Effect : uint8_t {
  kRead, kWrite, kSeek, kCopy, kOpen, kClose, kSync, kTruncate, kHint, kRemove, kRename,
  kCreate, kLookup, kReadDir, kSetAttr, kFdTable, kCwd, kControl, kMap, kNotFile, kProcess,
  kEscape, kState, kOther,  // kState: what the recorder saw of the file system, not a call
  kBlock,                   // a block request seen in the kernel during a replay, not a call
};
// clang-format on

// How a call's return value reads.
enum class Ret : uint8_t {
  kCount,  // a byte count, usually equal to the request (stored as the difference)
  kFd,     // a new fd
  kZero,   // 0 on success
  kInt,    // any integer
  kMode,   // a mode (umask)
  kAddr,   // an address (mmap)
  kPid,    // a pid or tid (fork, clone)
};

inline constexpr int kMaxArgs = 6;

struct ArgSpec {
  ArgKind kind = ArgKind::kBuf;
  std::string_view name;
};

struct CallSpec {
  uint16_t tag = 0;  // the call's number in the trace (syscalls.def)
  std::string_view name;
  int nr = -1;  // x86_64 syscall number, -1 for pseudo-calls
  Effect effect = Effect::kOther;
  Ret ret = Ret::kInt;
  uint8_t nargs = 0;
  ArgSpec args[kMaxArgs] = {};
};

#define A(kind, name) \
  ArgSpec { ArgKind::k##kind, #name }

// Call ids are the table's tags.
enum class CallId : uint16_t {
  kInvalid = 0,
#define IORR_CALL(tag, name, effect, ret, ...) name = tag,
#define IORR_PSEUDO IORR_CALL
#include "traces/syscalls.def"
#undef IORR_PSEUDO
#undef IORR_CALL
};

namespace detail {
template <typename... Args>
constexpr CallSpec MakeSpec(uint16_t tag, std::string_view name, int nr, Effect effect, Ret ret,
                            Args... args) {
  static_assert(sizeof...(Args) <= kMaxArgs, "raise kMaxArgs");
  CallSpec spec{tag, name, nr, effect, ret, static_cast<uint8_t>(sizeof...(Args)), {args...}};
  return spec;
}
}  // namespace detail

// All calls, in table order.
inline constexpr CallSpec kCalls[] = {
#define IORR_CALL(tag, name, effect, ret, ...)                 \
  detail::MakeSpec(tag, #name, __NR_##name, Effect::k##effect, \
                   Ret::k##ret __VA_OPT__(, ) __VA_ARGS__),
#define IORR_PSEUDO(tag, name, effect, ret, ...) \
  detail::MakeSpec(tag, #name, -1, Effect::k##effect, Ret::k##ret __VA_OPT__(, ) __VA_ARGS__),
#include "traces/syscalls.def"
#undef IORR_PSEUDO
#undef IORR_CALL
};
#undef A

inline constexpr size_t kNumCalls = sizeof(kCalls) / sizeof(kCalls[0]);
inline constexpr uint16_t kMaxTag = 255;

namespace detail {
struct TagIndex {
  int16_t index[kMaxTag + 1];
};
constexpr TagIndex BuildTagIndex() {
  TagIndex t{};
  for (auto& i : t.index) i = -1;
  for (size_t i = 0; i < kNumCalls; ++i) t.index[kCalls[i].tag] = static_cast<int16_t>(i);
  return t;
}
constexpr bool TagsUniqueAndInRange() {
  for (size_t i = 0; i < kNumCalls; ++i) {
    if (kCalls[i].tag == 0 || kCalls[i].tag > kMaxTag) return false;
    for (size_t j = 0; j < i; ++j)
      if (kCalls[i].tag == kCalls[j].tag || kCalls[i].name == kCalls[j].name) return false;
  }
  return true;
}
constexpr bool ArgNamesUnique() {
  for (const auto& c : kCalls)
    for (int i = 0; i < c.nargs; ++i)
      for (int j = 0; j < i; ++j)
        if (c.args[i].name == c.args[j].name) return false;
  return true;
}
inline constexpr TagIndex kTagIndex = BuildTagIndex();
}  // namespace detail

static_assert(detail::TagsUniqueAndInRange(),
              "syscalls.def: tags and names must be unique, 1..255");
static_assert(detail::ArgNamesUnique(), "syscalls.def: argument names must be unique per call");
static_assert(__NR_openat == 257 && __NR_read == 0, "syscall numbers are x86_64's");

// The spec of a tag, or nullptr for a tag the table does not have.
constexpr const CallSpec* SpecOf(uint16_t tag) {
  if (tag > kMaxTag) return nullptr;
  int16_t i = detail::kTagIndex.index[tag];
  return i < 0 ? nullptr : &kCalls[i];
}
constexpr const CallSpec* SpecOf(CallId id) { return SpecOf(static_cast<uint16_t>(id)); }
constexpr const CallSpec& Spec(CallId id) { return *SpecOf(id); }

// The same table without its names: nothing in it is a pointer, so where it is loaded (the
// recording library, in every recorded process) the loader relocates nothing in it. kCalls'
// names made it 20 KiB of .data.rel.ro that the loader wrote to in each process, copying five
// pages; the library and the encoder use these instead (tests/recorder/record_library_test.sh).
struct ArgShape {
  ArgKind kind = ArgKind::kBuf;
};
struct CallShape {
  uint16_t tag = 0;
  int16_t nr = -1;
  Effect effect = Effect::kOther;
  Ret ret = Ret::kInt;
  uint8_t nargs = 0;
  ArgShape args[kMaxArgs] = {};
};

namespace detail {
struct Shapes {
  CallShape at[kNumCalls];
};
constexpr Shapes BuildShapes() {
  Shapes t{};
  for (size_t i = 0; i < kNumCalls; ++i) {
    const CallSpec& c = kCalls[i];
    CallShape& s = t.at[i];
    s.tag = c.tag;
    s.nr = static_cast<int16_t>(c.nr);
    s.effect = c.effect;
    s.ret = c.ret;
    s.nargs = c.nargs;
    for (int a = 0; a < kMaxArgs; ++a) s.args[a].kind = c.args[a].kind;
  }
  return t;
}
inline constexpr Shapes kShapes = BuildShapes();

constexpr size_t NameBytes() {
  size_t n = 0;
  for (const auto& c : kCalls) n += c.name.size() + 1;
  return n;
}
struct Names {
  char bytes[NameBytes()];
  uint16_t at[kNumCalls];
};
constexpr Names BuildNames() {
  Names t{};
  size_t p = 0;
  for (size_t i = 0; i < kNumCalls; ++i) {
    t.at[i] = static_cast<uint16_t>(p);
    for (char ch : kCalls[i].name) t.bytes[p++] = ch;
    t.bytes[p++] = 0;
  }
  return t;
}
inline constexpr Names kNames = BuildNames();
constexpr bool NumbersFitShapes() {
  for (const auto& c : kCalls)
    if (c.nr < -1 || c.nr > 32767) return false;
  return true;
}
static_assert(NumbersFitShapes(), "CallShape::nr is an int16_t");
static_assert(NameBytes() <= 65535, "Names::at holds uint16_t offsets");
}  // namespace detail

// The shape of a tag, or nullptr for a tag the table does not have.
constexpr const CallShape* ShapeOf(uint16_t tag) {
  if (tag > kMaxTag) return nullptr;
  int16_t i = detail::kTagIndex.index[tag];
  return i < 0 ? nullptr : &detail::kShapes.at[i];
}
constexpr const CallShape* ShapeOf(CallId id) { return ShapeOf(static_cast<uint16_t>(id)); }
constexpr const CallShape& Shape(CallId id) { return *ShapeOf(id); }
// A call's name (NUL-terminated), or nullptr, from a table without pointers.
constexpr const char* NameOf(CallId id) {
  auto tag = static_cast<uint16_t>(id);
  if (tag > kMaxTag) return nullptr;
  int16_t i = detail::kTagIndex.index[tag];
  return i < 0 ? nullptr : detail::kNames.bytes + detail::kNames.at[i];
}

// The spec of a kernel call name (as strace prints it), or nullptr.
constexpr const CallSpec* SpecByName(std::string_view name) {
  for (const auto& c : kCalls)
    if (c.name == name) return &c;
  return nullptr;
}

// True when an argument kind is stored as a string.
constexpr bool IsString(ArgKind k) {
  return k == ArgKind::kPath || k == ArgKind::kStr || k == ArgKind::kLinkTarget ||
         k == ArgKind::kXattrValue;
}
// Kinds a format before version 3 did not store (they were kBuf then): their readers see NULL.
constexpr bool StoredSinceVersion3(ArgKind k) {
  return k == ArgKind::kLinkTarget || k == ArgKind::kXattrValue;
}
// Kinds a format before version 4 did not store: their readers see -1 (unknown).
constexpr bool StoredSinceVersion4(ArgKind k) { return k == ArgKind::kCloneSize; }
// True when an argument kind is stored at all.
constexpr bool IsStored(ArgKind k) { return k != ArgKind::kBuf; }

// Index of the argument whose value a Ret::kCount result is predicted from, or -1.
template <typename Spec>  // CallSpec or CallShape
constexpr int CountArgIndex(const Spec& c) {
  for (int i = 0; i < c.nargs; ++i)
    if (c.args[i].kind == ArgKind::kSize || c.args[i].kind == ArgKind::kIovec) return i;
  return -1;
}

}  // namespace iorr::trace
