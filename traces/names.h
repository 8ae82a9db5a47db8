// Symbolic names of argument values, errnos and x86_64 syscalls, spelled the way strace prints
// them, in both directions. Everything here is stateless over constant tables: safe from any
// thread, no exceptions, and AppendArg allocates nothing beyond growing its output string.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "traces/calls.h"

namespace iorr::trace {

// Appends v formatted as strace prints an argument of kind k, e.g. kOpenFlags 0x241 ->
// "O_WRONLY|O_CREAT|O_TRUNC", kDirFd -100 -> "AT_FDCWD", kMode 0644 -> "0644", kDev ->
// "makedev(0x8, 0x1)", kFdPair -> "[3, 4]", kOffsetPtr -> "[5]" or "NULL" (-1).
// Flag bits without a name are appended as "|0x..."; a value of an enumeration without a name
// is printed in hex. Unlike strace no "/* X_??? */" comment follows unknown values (ParseArg
// accepts and ignores such comments). kIovec prints the stored sum of lengths in decimal;
// kSize is unsigned, kOffset and kInt signed decimal. The string kinds (kPath, kStr) and kBuf
// are the callers' business; they print here as plain decimal.
// For every kind, ParseArg(k, text AppendArg appended) gives v back, except kId, where both
// -1 and 4294967295 print as "-1".
void AppendArg(std::string& out, ArgKind k, int64_t v);

// Parses one argument token as strace prints it: the inverse of AppendArg plus strace's other
// spellings. Accepted everywhere: surrounding blanks, a trailing "/* ... */" comment, a leading
// "name=" (strace's clone(flags=...)), C integer literals (decimal, 0x hex, 0 octal, signed).
// Per kind: "3</tmp/x>" and "AT_FDCWD</cwd>" (strace -y) for kFd and kDirFd; "NULL" for
// pointers; "[5]" and "[5 => 10]" for kOffsetPtr; "[3, 4]" for kFdPair; "makedev(0x8, 0x1)";
// flag expressions such as "O_RDONLY|O_CLOEXEC|0x40000000" or "S_IFREG|S_ISUID|0755";
// "MAP_PRIVATE|21<<MAP_HUGE_SHIFT"; clone's "CLONE_VM|...|SIGCHLD" and clone3's
// "{flags=CLONE_VM, exit_signal=SIGCHLD, ...}" (flags plus the signal in the low byte);
// openat2's "{flags=O_RDONLY, resolve=...}" (its flags); readv's iovec array
// "[{iov_base=..., iov_len=10}, ...]" (the sum of iov_len); ioctl names, "A or B" and
// "_IOC(_IOC_READ, 0x66, 0x1, 0x8)"; a syscall name or "syscall_0x1f4" for kSysNr. For kInt
// the constants strace prints in integer slots (AF_*, SOCK_*, O_*, FD_CLOEXEC, EFD_*, ...) are
// understood too. Returns std::nullopt when the token does not parse (always for kBuf, kPath
// and kStr).
std::optional<int64_t> ParseArg(ArgKind k, std::string_view token);

// A C integer literal: optional sign, then decimal, 0x hex or 0 octal; blanks around it are
// ignored. Values up to 2^64-1 are accepted and wrap into int64_t. std::nullopt otherwise.
std::optional<int64_t> ParseInteger(std::string_view token);

// Errno names and messages: ErrnoName(2) == "ENOENT", ErrnoFromName("ENOENT") == 2,
// ErrnoMessage(2) == "No such file or directory". Covers the userspace errnos and the
// kernel-internal ones strace can show (ERESTARTSYS 512 ... ENOGRACE 531). ErrnoFromName also
// knows the aliases EWOULDBLOCK, EDEADLOCK and ENOTSUP. Unknown: "", 0 and "".
std::string_view ErrnoName(int err);
int ErrnoFromName(std::string_view name);
std::string_view ErrnoMessage(int err);

// Signal names as strace prints them: SignalName(17) == "SIGCHLD"; "" for 0, real-time and
// unknown signals.
std::string_view SignalName(int sig);

// x86_64 syscall numbers and names, for every syscall the kernel headers know.
std::string_view SyscallName(int nr);      // "" if unknown
int SyscallNumber(std::string_view name);  // -1 if unknown

}  // namespace iorr::trace
