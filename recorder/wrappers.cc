// The libc functions libiorr-preload.so interposes. Each one calls the real function and
// records the system call the kernel saw (glibc 2.36 on x86_64: open() is openat, fstat() is
// newfstatat(fd, "", AT_EMPTY_PATH), utimes() is utimensat, ...), with the arguments in the
// table's (kernel) order. Failed calls are recorded too. See preload.h for the rules.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <unistd.h>
#include <utime.h>
#include <wordexp.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include "recorder/elf_next.h"
#include "recorder/preload.h"
#include "recorder/raw_syscall.h"

extern char** environ;

using iorr::recorder::AtDeath;
using iorr::recorder::BeginCall;
using iorr::recorder::Call;
using iorr::recorder::CallId;
using iorr::recorder::EndCall;
using iorr::recorder::KernelRet;
using iorr::recorder::ProgramErrno;
using iorr::recorder::RawSyscall6;

#define IORR_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

template <typename T>
long L(T v) {
  if constexpr (std::is_pointer_v<T>)
    return reinterpret_cast<long>(v);
  else
    return static_cast<long>(v);
}

template <typename Fn>
Fn Resolve(Fn* slot, const char* name) {
  Fn f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (f == nullptr) {
    f = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
  }
  return f;
}

#define REAL(name) Resolve(&real_##name, #name)

// Every real function is looked up once at load (ResolveAllReals), so that no dlsym, which
// takes the loader's lock, runs later in a child cloned from a multi-threaded parent.
struct RealSlot {
  void** slot;
  const char* name;
};
RealSlot g_reals[192];
int g_nreals = 0;
struct RegisterReal {
  RegisterReal(void** slot, const char* name) {
    // More wrappers than room: a build mistake, which every recorded program would show at
    // once (the ones left out would be looked up later, under the loader's lock).
    if (g_nreals >= 192) __builtin_trap();
    g_reals[g_nreals++] = {slot, name};
  }
};
// The registrations run before the library's constructor (Init, priority 102), which resolves
// them all before the first recorded call.
#define DECLARE_REAL(ret, name, ...)         \
  ret (*real_##name)(__VA_ARGS__) = nullptr; \
  __attribute__((init_priority(101)))        \
  RegisterReal register_##name(reinterpret_cast<void**>(&real_##name), #name)

// Records one call: R is the libc result type, EXPR the real call, ID the kernel call, then
// the kernel arguments in table order. A fatal signal at the return of a system call of ID's
// number in EXPR writes the call from the registers (AtDeath::kDecode).
#define RECORD(R, EXPR, ID, ...)                                        \
  do {                                                                  \
    Call c_(AtDeath::kDecode, CallId::ID);                              \
    bool on_ = BeginNestableCall(&c_);                                  \
    R r_ = EXPR;                                                        \
    if (on_) {                                                          \
      long k_[6] = {__VA_ARGS__};                                       \
      EndCallOf<CallId::ID>(&c_, k_, KernelRet(L(r_), ProgramErrno())); \
    }                                                                   \
    return r_;                                                          \
  } while (0)

bool NeedsMode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

constexpr long kAtFdcwd = AT_FDCWD;
constexpr long kForkFlags = 0x01200011;  // CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD

DECLARE_REAL(int, open, const char*, int, ...);
DECLARE_REAL(int, open64, const char*, int, ...);
DECLARE_REAL(int, __open_2, const char*, int);
DECLARE_REAL(int, system, const char*);
DECLARE_REAL(FILE*, popen, const char*, const char*);
DECLARE_REAL(int, wordexp, const char*, wordexp_t*, int);
DECLARE_REAL(int, setuid, uid_t);
DECLARE_REAL(int, setgid, gid_t);
DECLARE_REAL(int, seteuid, uid_t);
DECLARE_REAL(int, setegid, gid_t);
DECLARE_REAL(int, setreuid, uid_t, uid_t);
DECLARE_REAL(int, setregid, gid_t, gid_t);
DECLARE_REAL(int, setresuid, uid_t, uid_t, uid_t);
DECLARE_REAL(int, setresgid, gid_t, gid_t, gid_t);
DECLARE_REAL(int, setgroups, size_t, const gid_t*);
DECLARE_REAL(int, initgroups, const char*, gid_t);
DECLARE_REAL(int, __open64_2, const char*, int);
DECLARE_REAL(int, openat, int, const char*, int, ...);
DECLARE_REAL(int, openat64, int, const char*, int, ...);
DECLARE_REAL(int, __openat_2, int, const char*, int);
DECLARE_REAL(int, __openat64_2, int, const char*, int);
DECLARE_REAL(int, creat, const char*, mode_t);
DECLARE_REAL(int, creat64, const char*, mode_t);
DECLARE_REAL(int, close, int);
DECLARE_REAL(ssize_t, read, int, void*, size_t);
DECLARE_REAL(ssize_t, __read_chk, int, void*, size_t, size_t);
DECLARE_REAL(ssize_t, write, int, const void*, size_t);
DECLARE_REAL(ssize_t, pread, int, void*, size_t, off_t);
DECLARE_REAL(ssize_t, pread64, int, void*, size_t, off_t);
DECLARE_REAL(ssize_t, __pread_chk, int, void*, size_t, off_t, size_t);
DECLARE_REAL(ssize_t, __pread64_chk, int, void*, size_t, off_t, size_t);
DECLARE_REAL(ssize_t, pwrite, int, const void*, size_t, off_t);
DECLARE_REAL(ssize_t, pwrite64, int, const void*, size_t, off_t);
DECLARE_REAL(ssize_t, readv, int, const struct iovec*, int);
DECLARE_REAL(ssize_t, writev, int, const struct iovec*, int);
DECLARE_REAL(ssize_t, preadv, int, const struct iovec*, int, off_t);
DECLARE_REAL(ssize_t, preadv64, int, const struct iovec*, int, off_t);
DECLARE_REAL(ssize_t, pwritev, int, const struct iovec*, int, off_t);
DECLARE_REAL(ssize_t, pwritev64, int, const struct iovec*, int, off_t);
DECLARE_REAL(ssize_t, preadv2, int, const struct iovec*, int, off_t, int);
DECLARE_REAL(ssize_t, preadv64v2, int, const struct iovec*, int, off_t, int);
DECLARE_REAL(ssize_t, pwritev2, int, const struct iovec*, int, off_t, int);
DECLARE_REAL(ssize_t, pwritev64v2, int, const struct iovec*, int, off_t, int);
DECLARE_REAL(off_t, lseek, int, off_t, int);
DECLARE_REAL(off_t, lseek64, int, off_t, int);
DECLARE_REAL(ssize_t, copy_file_range, int, off64_t*, int, off64_t*, size_t, unsigned);
DECLARE_REAL(ssize_t, sendfile, int, int, off_t*, size_t);
DECLARE_REAL(ssize_t, sendfile64, int, int, off_t*, size_t);
DECLARE_REAL(int, fsync, int);
DECLARE_REAL(int, fdatasync, int);
DECLARE_REAL(void, sync);
DECLARE_REAL(int, syncfs, int);
DECLARE_REAL(int, sync_file_range, int, off64_t, off64_t, unsigned);
DECLARE_REAL(int, msync, void*, size_t, int);
DECLARE_REAL(int, ftruncate, int, off_t);
DECLARE_REAL(int, ftruncate64, int, off_t);
DECLARE_REAL(int, truncate, const char*, off_t);
DECLARE_REAL(int, truncate64, const char*, off_t);
DECLARE_REAL(int, fallocate, int, int, off_t, off_t);
DECLARE_REAL(int, fallocate64, int, int, off_t, off_t);
DECLARE_REAL(int, posix_fallocate, int, off_t, off_t);
DECLARE_REAL(int, posix_fallocate64, int, off_t, off_t);
DECLARE_REAL(int, posix_fadvise, int, off_t, off_t, int);
DECLARE_REAL(int, posix_fadvise64, int, off_t, off_t, int);
DECLARE_REAL(int, unlink, const char*);
DECLARE_REAL(int, unlinkat, int, const char*, int);
DECLARE_REAL(int, rmdir, const char*);
DECLARE_REAL(int, rename, const char*, const char*);
DECLARE_REAL(int, renameat, int, const char*, int, const char*);
DECLARE_REAL(int, renameat2, int, const char*, int, const char*, unsigned);
DECLARE_REAL(int, mkdir, const char*, mode_t);
DECLARE_REAL(int, mkdirat, int, const char*, mode_t);
DECLARE_REAL(int, link, const char*, const char*);
DECLARE_REAL(int, linkat, int, const char*, int, const char*, int);
DECLARE_REAL(int, symlink, const char*, const char*);
DECLARE_REAL(int, symlinkat, const char*, int, const char*);
DECLARE_REAL(int, mknod, const char*, mode_t, dev_t);
DECLARE_REAL(int, mknodat, int, const char*, mode_t, dev_t);
DECLARE_REAL(int, stat, const char*, struct stat*);
DECLARE_REAL(int, stat64, const char*, struct stat64*);
DECLARE_REAL(int, lstat, const char*, struct stat*);
DECLARE_REAL(int, lstat64, const char*, struct stat64*);
DECLARE_REAL(int, fstat, int, struct stat*);
DECLARE_REAL(int, fstat64, int, struct stat64*);
DECLARE_REAL(int, fstatat, int, const char*, struct stat*, int);
DECLARE_REAL(int, fstatat64, int, const char*, struct stat64*, int);
DECLARE_REAL(int, statx, int, const char*, int, unsigned, struct statx*);
DECLARE_REAL(int, access, const char*, int);
DECLARE_REAL(int, faccessat, int, const char*, int, int);
DECLARE_REAL(ssize_t, readlink, const char*, char*, size_t);
DECLARE_REAL(ssize_t, readlinkat, int, const char*, char*, size_t);
DECLARE_REAL(int, statfs, const char*, struct statfs*);
DECLARE_REAL(int, statfs64, const char*, struct statfs64*);
DECLARE_REAL(int, fstatfs, int, struct statfs*);
DECLARE_REAL(int, fstatfs64, int, struct statfs64*);
DECLARE_REAL(int, statvfs, const char*, struct statvfs*);
DECLARE_REAL(int, statvfs64, const char*, struct statvfs64*);
DECLARE_REAL(int, fstatvfs, int, struct statvfs*);
DECLARE_REAL(int, fstatvfs64, int, struct statvfs64*);
DECLARE_REAL(int, mkfifo, const char*, mode_t);
DECLARE_REAL(int, mkfifoat, int, const char*, mode_t);
DECLARE_REAL(ssize_t, getdents64, int, void*, size_t);
DECLARE_REAL(ssize_t, getxattr, const char*, const char*, void*, size_t);
DECLARE_REAL(ssize_t, lgetxattr, const char*, const char*, void*, size_t);
DECLARE_REAL(ssize_t, fgetxattr, int, const char*, void*, size_t);
DECLARE_REAL(ssize_t, listxattr, const char*, char*, size_t);
DECLARE_REAL(ssize_t, llistxattr, const char*, char*, size_t);
DECLARE_REAL(ssize_t, flistxattr, int, char*, size_t);
DECLARE_REAL(int, setxattr, const char*, const char*, const void*, size_t, int);
DECLARE_REAL(int, lsetxattr, const char*, const char*, const void*, size_t, int);
DECLARE_REAL(int, fsetxattr, int, const char*, const void*, size_t, int);
DECLARE_REAL(int, removexattr, const char*, const char*);
DECLARE_REAL(int, lremovexattr, const char*, const char*);
DECLARE_REAL(int, fremovexattr, int, const char*);
DECLARE_REAL(int, chmod, const char*, mode_t);
DECLARE_REAL(int, fchmod, int, mode_t);
DECLARE_REAL(int, fchmodat, int, const char*, mode_t, int);
DECLARE_REAL(int, chown, const char*, uid_t, gid_t);
DECLARE_REAL(int, fchown, int, uid_t, gid_t);
DECLARE_REAL(int, lchown, const char*, uid_t, gid_t);
DECLARE_REAL(int, fchownat, int, const char*, uid_t, gid_t, int);
DECLARE_REAL(int, utimensat, int, const char*, const struct timespec*, int);
DECLARE_REAL(int, futimens, int, const struct timespec*);
DECLARE_REAL(int, utimes, const char*, const struct timeval*);
DECLARE_REAL(int, lutimes, const char*, const struct timeval*);
DECLARE_REAL(int, futimes, int, const struct timeval*);
DECLARE_REAL(int, utime, const char*, const struct utimbuf*);
DECLARE_REAL(int, dup, int);
DECLARE_REAL(int, dup2, int, int);
DECLARE_REAL(int, dup3, int, int, int);
DECLARE_REAL(int, fcntl, int, int, ...);
DECLARE_REAL(int, fcntl64, int, int, ...);
DECLARE_REAL(int, chdir, const char*);
DECLARE_REAL(int, fchdir, int);
DECLARE_REAL(mode_t, umask, mode_t);
DECLARE_REAL(int, ioctl, int, unsigned long, ...);
DECLARE_REAL(int, flock, int, int);
DECLARE_REAL(void*, mmap, void*, size_t, int, int, int, off_t);
DECLARE_REAL(void*, mmap64, void*, size_t, int, int, int, off_t);
DECLARE_REAL(int, munmap, void*, size_t);
DECLARE_REAL(int, pipe, int*);
DECLARE_REAL(int, pipe2, int*, int);
DECLARE_REAL(int, socket, int, int, int);
DECLARE_REAL(int, socketpair, int, int, int, int*);
DECLARE_REAL(int, accept, int, struct sockaddr*, socklen_t*);
DECLARE_REAL(int, accept4, int, struct sockaddr*, socklen_t*, int);
DECLARE_REAL(int, eventfd, unsigned, int);
DECLARE_REAL(int, memfd_create, const char*, unsigned);
DECLARE_REAL(int, bind, int, const struct sockaddr*, socklen_t);
DECLARE_REAL(int, unshare, int);
DECLARE_REAL(int, inotify_init);
DECLARE_REAL(int, inotify_init1, int);
DECLARE_REAL(int, inotify_add_watch, int, const char*, uint32_t);
DECLARE_REAL(char*, getcwd, char*, size_t);
DECLARE_REAL(char*, __getcwd_chk, char*, size_t, size_t);
DECLARE_REAL(int, epoll_create1, int);
DECLARE_REAL(pid_t, fork);
DECLARE_REAL(int, execve, const char*, char* const*, char* const*);
DECLARE_REAL(int, execveat, int, const char*, char* const*, char* const*, int);
DECLARE_REAL(void, _exit, int);
DECLARE_REAL(long, syscall, long, ...);
DECLARE_REAL(int, pthread_create, pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
DECLARE_REAL(int, pthread_setattr_default_np, const pthread_attr_t*);
DECLARE_REAL(void, pthread_exit, void*);
DECLARE_REAL(long, ptrace, enum __ptrace_request, ...);

}  // namespace

// ---- open, close ----

#define OPEN_MODE(flags)                         \
  mode_t mode = 0;                               \
  if (NeedsMode(flags)) {                        \
    va_list ap;                                  \
    va_start(ap, flags);                         \
    mode = static_cast<mode_t>(va_arg(ap, int)); \
    va_end(ap);                                  \
  }

IORR_EXPORT int open(const char* path, int flags, ...) {
  OPEN_MODE(flags);
  RECORD(int, REAL(open)(path, flags, mode), openat, kAtFdcwd, L(path), flags, mode);
}
IORR_EXPORT int open64(const char* path, int flags, ...) {
  OPEN_MODE(flags);
  RECORD(int, REAL(open64)(path, flags, mode), openat, kAtFdcwd, L(path), flags, mode);
}
IORR_EXPORT int __open_2(const char* path, int flags) {
  RECORD(int, REAL(__open_2)(path, flags), openat, kAtFdcwd, L(path), flags, 0);
}
IORR_EXPORT int __open64_2(const char* path, int flags) {
  RECORD(int, REAL(__open64_2)(path, flags), openat, kAtFdcwd, L(path), flags, 0);
}
IORR_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  OPEN_MODE(flags);
  RECORD(int, REAL(openat)(dirfd, path, flags, mode), openat, dirfd, L(path), flags, mode);
}
IORR_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  OPEN_MODE(flags);
  RECORD(int, REAL(openat64)(dirfd, path, flags, mode), openat, dirfd, L(path), flags, mode);
}
IORR_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  RECORD(int, REAL(__openat_2)(dirfd, path, flags), openat, dirfd, L(path), flags, 0);
}
IORR_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  RECORD(int, REAL(__openat64_2)(dirfd, path, flags), openat, dirfd, L(path), flags, 0);
}
IORR_EXPORT int creat(const char* path, mode_t mode) {
  RECORD(int, REAL(creat)(path, mode), creat, L(path), mode);
}
IORR_EXPORT int creat64(const char* path, mode_t mode) {
  RECORD(int, REAL(creat64)(path, mode), creat, L(path), mode);
}

IORR_EXPORT int close(int fd) {
  // The trace's own fds stay open: the program is told they were closed.
  if (iorr::recorder::IsOwnFd(fd)) RECORD(int, 0, close, fd);
  RECORD(int, REAL(close)(fd), close, fd);
}

// Not a call of the table: the writer leaves the program's fd table before the program does
// (OwnWriterTable). A raw unshare system call is not seen.
IORR_EXPORT int unshare(int flags) {
  if ((flags & CLONE_FILES) && !iorr::recorder::ForeignTask()) iorr::recorder::OwnWriterTable();
  return REAL(unshare)(flags);
}
IORR_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  return iorr::recorder::CloseRangeKeepingOwn(first, last, flags);
}
IORR_EXPORT void closefrom(int lowfd) {
  int saved = errno;
  iorr::recorder::CloseRangeKeepingOwn(static_cast<unsigned>(lowfd), UINT_MAX, 0);
  errno = saved;
}

// ---- data ----

IORR_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  RECORD(ssize_t, REAL(read)(fd, buf, n), read, fd, L(buf), L(n));
}
IORR_EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  RECORD(ssize_t, REAL(__read_chk)(fd, buf, n, buflen), read, fd, L(buf), L(n));
}
IORR_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  RECORD(ssize_t, REAL(write)(fd, buf, n), write, fd, L(buf), L(n));
}
IORR_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  RECORD(ssize_t, REAL(pread)(fd, buf, n, off), pread64, fd, L(buf), L(n), off);
}
IORR_EXPORT ssize_t pread64(int fd, void* buf, size_t n, off_t off) {
  RECORD(ssize_t, REAL(pread64)(fd, buf, n, off), pread64, fd, L(buf), L(n), off);
}
IORR_EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  RECORD(ssize_t, REAL(__pread_chk)(fd, buf, n, off, buflen), pread64, fd, L(buf), L(n), off);
}
IORR_EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  RECORD(ssize_t, REAL(__pread64_chk)(fd, buf, n, off, buflen), pread64, fd, L(buf), L(n), off);
}
IORR_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  RECORD(ssize_t, REAL(pwrite)(fd, buf, n, off), pwrite64, fd, L(buf), L(n), off);
}
IORR_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  RECORD(ssize_t, REAL(pwrite64)(fd, buf, n, off), pwrite64, fd, L(buf), L(n), off);
}
IORR_EXPORT ssize_t readv(int fd, const struct iovec* iov, int cnt) {
  RECORD(ssize_t, REAL(readv)(fd, iov, cnt), readv, fd, L(iov), cnt);
}
IORR_EXPORT ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  RECORD(ssize_t, REAL(writev)(fd, iov, cnt), writev, fd, L(iov), cnt);
}
IORR_EXPORT ssize_t preadv(int fd, const struct iovec* iov, int cnt, off_t off) {
  RECORD(ssize_t, REAL(preadv)(fd, iov, cnt, off), preadv, fd, L(iov), cnt, off);
}
IORR_EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int cnt, off_t off) {
  RECORD(ssize_t, REAL(preadv64)(fd, iov, cnt, off), preadv, fd, L(iov), cnt, off);
}
IORR_EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  RECORD(ssize_t, REAL(pwritev)(fd, iov, cnt, off), pwritev, fd, L(iov), cnt, off);
}
IORR_EXPORT ssize_t pwritev64(int fd, const struct iovec* iov, int cnt, off_t off) {
  RECORD(ssize_t, REAL(pwritev64)(fd, iov, cnt, off), pwritev, fd, L(iov), cnt, off);
}
IORR_EXPORT ssize_t preadv2(int fd, const struct iovec* iov, int cnt, off_t off, int fl) {
  RECORD(ssize_t, REAL(preadv2)(fd, iov, cnt, off, fl), preadv2, fd, L(iov), cnt, off, fl);
}
IORR_EXPORT ssize_t preadv64v2(int fd, const struct iovec* iov, int cnt, off_t off, int fl) {
  RECORD(ssize_t, REAL(preadv64v2)(fd, iov, cnt, off, fl), preadv2, fd, L(iov), cnt, off, fl);
}
IORR_EXPORT ssize_t pwritev2(int fd, const struct iovec* iov, int cnt, off_t off, int fl) {
  RECORD(ssize_t, REAL(pwritev2)(fd, iov, cnt, off, fl), pwritev2, fd, L(iov), cnt, off, fl);
}
IORR_EXPORT ssize_t pwritev64v2(int fd, const struct iovec* iov, int cnt, off_t off, int fl) {
  RECORD(ssize_t, REAL(pwritev64v2)(fd, iov, cnt, off, fl), pwritev2, fd, L(iov), cnt, off, fl);
}
IORR_EXPORT off_t lseek(int fd, off_t off, int whence) {
  RECORD(off_t, REAL(lseek)(fd, off, whence), lseek, fd, off, whence);
}
IORR_EXPORT off_t lseek64(int fd, off_t off, int whence) {
  RECORD(off_t, REAL(lseek64)(fd, off, whence), lseek, fd, off, whence);
}
IORR_EXPORT ssize_t copy_file_range(int in, off64_t* offin, int out, off64_t* offout, size_t n,
                                    unsigned fl) {
  RECORD(ssize_t, REAL(copy_file_range)(in, offin, out, offout, n, fl), copy_file_range, in,
         L(offin), out, L(offout), L(n), fl);
}
IORR_EXPORT ssize_t sendfile(int out, int in, off_t* off, size_t n) {
  RECORD(ssize_t, REAL(sendfile)(out, in, off, n), sendfile, out, in, L(off), L(n));
}
IORR_EXPORT ssize_t sendfile64(int out, int in, off_t* off, size_t n) {
  RECORD(ssize_t, REAL(sendfile64)(out, in, off, n), sendfile, out, in, L(off), L(n));
}

// ---- durability, size ----

IORR_EXPORT int fsync(int fd) { RECORD(int, REAL(fsync)(fd), fsync, fd); }
IORR_EXPORT int fdatasync(int fd) { RECORD(int, REAL(fdatasync)(fd), fdatasync, fd); }
IORR_EXPORT void sync() {
  Call c;
  bool on = BeginCall(&c);
  REAL(sync)();
  if (on) EndCall(&c, CallId::sync, nullptr, 0);
}
IORR_EXPORT int syncfs(int fd) { RECORD(int, REAL(syncfs)(fd), syncfs, fd); }
IORR_EXPORT int sync_file_range(int fd, off64_t off, off64_t n, unsigned fl) {
  RECORD(int, REAL(sync_file_range)(fd, off, n, fl), sync_file_range, fd, off, n, fl);
}
IORR_EXPORT int msync(void* addr, size_t n, int fl) {
  RECORD(int, REAL(msync)(addr, n, fl), msync, L(addr), L(n), fl);
}
IORR_EXPORT int ftruncate(int fd, off_t n) {
  RECORD(int, REAL(ftruncate)(fd, n), ftruncate, fd, n);
}
IORR_EXPORT int ftruncate64(int fd, off_t n) {
  RECORD(int, REAL(ftruncate64)(fd, n), ftruncate, fd, n);
}
IORR_EXPORT int truncate(const char* p, off_t n) {
  RECORD(int, REAL(truncate)(p, n), truncate, L(p), n);
}
IORR_EXPORT int truncate64(const char* p, off_t n) {
  RECORD(int, REAL(truncate64)(p, n), truncate, L(p), n);
}
IORR_EXPORT int fallocate(int fd, int mode, off_t off, off_t n) {
  RECORD(int, REAL(fallocate)(fd, mode, off, n), fallocate, fd, mode, off, n);
}
IORR_EXPORT int fallocate64(int fd, int mode, off_t off, off_t n) {
  RECORD(int, REAL(fallocate64)(fd, mode, off, n), fallocate, fd, mode, off, n);
}

// posix_fallocate and posix_fadvise return an error number instead of setting errno.
#define RECORD_ERRNO_RESULT(EXPR, ID, ...)                    \
  do {                                                        \
    Call c_;                                                  \
    bool on_ = BeginNestableCall(&c_);                        \
    int r_ = EXPR;                                            \
    if (on_) {                                                \
      long k_[6] = {__VA_ARGS__};                             \
      EndCallOf<CallId::ID>(&c_, k_, -static_cast<long>(r_)); \
    }                                                         \
    return r_;                                                \
  } while (0)

IORR_EXPORT int posix_fallocate(int fd, off_t off, off_t n) {
  RECORD_ERRNO_RESULT(REAL(posix_fallocate)(fd, off, n), fallocate, fd, 0, off, n);
}
IORR_EXPORT int posix_fallocate64(int fd, off_t off, off_t n) {
  RECORD_ERRNO_RESULT(REAL(posix_fallocate64)(fd, off, n), fallocate, fd, 0, off, n);
}
IORR_EXPORT int posix_fadvise(int fd, off_t off, off_t n, int adv) {
  RECORD_ERRNO_RESULT(REAL(posix_fadvise)(fd, off, n, adv), fadvise64, fd, off, n, adv);
}
IORR_EXPORT int posix_fadvise64(int fd, off_t off, off_t n, int adv) {
  RECORD_ERRNO_RESULT(REAL(posix_fadvise64)(fd, off, n, adv), fadvise64, fd, off, n, adv);
}

// ---- namespace ----

IORR_EXPORT int unlink(const char* p) { RECORD(int, REAL(unlink)(p), unlink, L(p)); }
IORR_EXPORT int unlinkat(int d, const char* p, int fl) {
  RECORD(int, REAL(unlinkat)(d, p, fl), unlinkat, d, L(p), fl);
}
IORR_EXPORT int rmdir(const char* p) { RECORD(int, REAL(rmdir)(p), rmdir, L(p)); }
IORR_EXPORT int rename(const char* a, const char* b) {
  RECORD(int, REAL(rename)(a, b), rename, L(a), L(b));
}
IORR_EXPORT int renameat(int da, const char* a, int db, const char* b) {
  RECORD(int, REAL(renameat)(da, a, db, b), renameat, da, L(a), db, L(b));
}
IORR_EXPORT int renameat2(int da, const char* a, int db, const char* b, unsigned fl) {
  RECORD(int, REAL(renameat2)(da, a, db, b, fl), renameat2, da, L(a), db, L(b), fl);
}
IORR_EXPORT int mkdir(const char* p, mode_t m) { RECORD(int, REAL(mkdir)(p, m), mkdir, L(p), m); }
IORR_EXPORT int mkdirat(int d, const char* p, mode_t m) {
  RECORD(int, REAL(mkdirat)(d, p, m), mkdirat, d, L(p), m);
}
IORR_EXPORT int link(const char* a, const char* b) {
  RECORD(int, REAL(link)(a, b), link, L(a), L(b));
}
IORR_EXPORT int linkat(int da, const char* a, int db, const char* b, int fl) {
  RECORD(int, REAL(linkat)(da, a, db, b, fl), linkat, da, L(a), db, L(b), fl);
}
IORR_EXPORT int symlink(const char* t, const char* p) {
  RECORD(int, REAL(symlink)(t, p), symlink, L(t), L(p));
}
IORR_EXPORT int symlinkat(const char* t, int d, const char* p) {
  RECORD(int, REAL(symlinkat)(t, d, p), symlinkat, L(t), d, L(p));
}
IORR_EXPORT int mknod(const char* p, mode_t m, dev_t dev) {
  RECORD(int, REAL(mknod)(p, m, dev), mknodat, kAtFdcwd, L(p), m, L(dev));
}
// mkfifo is mknodat with S_IFIFO (tar imports mkfifoat).
IORR_EXPORT int mkfifo(const char* p, mode_t m) {
  RECORD(int, REAL(mkfifo)(p, m), mknodat, kAtFdcwd, L(p), m | S_IFIFO, 0);
}
IORR_EXPORT int mkfifoat(int d, const char* p, mode_t m) {
  RECORD(int, REAL(mkfifoat)(d, p, m), mknodat, d, L(p), m | S_IFIFO, 0);
}
IORR_EXPORT int mknodat(int d, const char* p, mode_t m, dev_t dev) {
  RECORD(int, REAL(mknodat)(d, p, m, dev), mknodat, d, L(p), m, L(dev));
}

// ---- metadata ----

IORR_EXPORT int stat(const char* p, struct stat* st) {
  RECORD(int, REAL(stat)(p, st), newfstatat, kAtFdcwd, L(p), L(st), 0);
}
IORR_EXPORT int stat64(const char* p, struct stat64* st) {
  RECORD(int, REAL(stat64)(p, st), newfstatat, kAtFdcwd, L(p), L(st), 0);
}
IORR_EXPORT int lstat(const char* p, struct stat* st) {
  RECORD(int, REAL(lstat)(p, st), newfstatat, kAtFdcwd, L(p), L(st), AT_SYMLINK_NOFOLLOW);
}
IORR_EXPORT int lstat64(const char* p, struct stat64* st) {
  RECORD(int, REAL(lstat64)(p, st), newfstatat, kAtFdcwd, L(p), L(st), AT_SYMLINK_NOFOLLOW);
}
IORR_EXPORT int fstat(int fd, struct stat* st) {
  RECORD(int, REAL(fstat)(fd, st), newfstatat, fd, L(""), L(st), AT_EMPTY_PATH);
}
IORR_EXPORT int fstat64(int fd, struct stat64* st) {
  RECORD(int, REAL(fstat64)(fd, st), newfstatat, fd, L(""), L(st), AT_EMPTY_PATH);
}
IORR_EXPORT int fstatat(int d, const char* p, struct stat* st, int fl) {
  RECORD(int, REAL(fstatat)(d, p, st, fl), newfstatat, d, L(p), L(st), fl);
}
IORR_EXPORT int fstatat64(int d, const char* p, struct stat64* st, int fl) {
  RECORD(int, REAL(fstatat64)(d, p, st, fl), newfstatat, d, L(p), L(st), fl);
}
IORR_EXPORT int statx(int d, const char* p, int fl, unsigned mask, struct statx* st) {
  RECORD(int, REAL(statx)(d, p, fl, mask, st), statx, d, L(p), fl, mask, L(st));
}
IORR_EXPORT int access(const char* p, int m) { RECORD(int, REAL(access)(p, m), access, L(p), m); }
IORR_EXPORT int faccessat(int d, const char* p, int m, int fl) {
  RECORD(int, REAL(faccessat)(d, p, m, fl), faccessat2, d, L(p), m, fl);
}
IORR_EXPORT ssize_t readlink(const char* p, char* buf, size_t n) {
  RECORD(ssize_t, REAL(readlink)(p, buf, n), readlink, L(p), L(buf), L(n));
}
IORR_EXPORT ssize_t readlinkat(int d, const char* p, char* buf, size_t n) {
  RECORD(ssize_t, REAL(readlinkat)(d, p, buf, n), readlinkat, d, L(p), L(buf), L(n));
}
IORR_EXPORT int statfs(const char* p, struct statfs* b) {
  RECORD(int, REAL(statfs)(p, b), statfs, L(p), L(b));
}
IORR_EXPORT int statfs64(const char* p, struct statfs64* b) {
  RECORD(int, REAL(statfs64)(p, b), statfs, L(p), L(b));
}
IORR_EXPORT int fstatfs(int fd, struct statfs* b) {
  RECORD(int, REAL(fstatfs)(fd, b), fstatfs, fd, L(b));
}
IORR_EXPORT int fstatfs64(int fd, struct statfs64* b) {
  RECORD(int, REAL(fstatfs64)(fd, b), fstatfs, fd, L(b));
}
// statvfs: glibc's is one statfs (a kernel that reports the mount flags, as every 2.6.36 on
// does), as python3's os.statvfs uses.
IORR_EXPORT int statvfs(const char* p, struct statvfs* b) {
  RECORD(int, REAL(statvfs)(p, b), statfs, L(p), L(b));
}
IORR_EXPORT int statvfs64(const char* p, struct statvfs64* b) {
  RECORD(int, REAL(statvfs64)(p, b), statfs, L(p), L(b));
}
IORR_EXPORT int fstatvfs(int fd, struct statvfs* b) {
  RECORD(int, REAL(fstatvfs)(fd, b), fstatfs, fd, L(b));
}
IORR_EXPORT int fstatvfs64(int fd, struct statvfs64* b) {
  RECORD(int, REAL(fstatvfs64)(fd, b), fstatfs, fd, L(b));
}
IORR_EXPORT ssize_t getdents64(int fd, void* buf, size_t n) {
  RECORD(ssize_t, REAL(getdents64)(fd, buf, n), getdents64, fd, L(buf), L(n));
}
IORR_EXPORT ssize_t getxattr(const char* p, const char* nm, void* v, size_t n) {
  RECORD(ssize_t, REAL(getxattr)(p, nm, v, n), getxattr, L(p), L(nm), L(v), L(n));
}
IORR_EXPORT ssize_t lgetxattr(const char* p, const char* nm, void* v, size_t n) {
  RECORD(ssize_t, REAL(lgetxattr)(p, nm, v, n), lgetxattr, L(p), L(nm), L(v), L(n));
}
IORR_EXPORT ssize_t fgetxattr(int fd, const char* nm, void* v, size_t n) {
  RECORD(ssize_t, REAL(fgetxattr)(fd, nm, v, n), fgetxattr, fd, L(nm), L(v), L(n));
}
IORR_EXPORT ssize_t listxattr(const char* p, char* l, size_t n) {
  RECORD(ssize_t, REAL(listxattr)(p, l, n), listxattr, L(p), L(l), L(n));
}
IORR_EXPORT ssize_t llistxattr(const char* p, char* l, size_t n) {
  RECORD(ssize_t, REAL(llistxattr)(p, l, n), llistxattr, L(p), L(l), L(n));
}
IORR_EXPORT ssize_t flistxattr(int fd, char* l, size_t n) {
  RECORD(ssize_t, REAL(flistxattr)(fd, l, n), flistxattr, fd, L(l), L(n));
}
IORR_EXPORT int setxattr(const char* p, const char* nm, const void* v, size_t n, int fl) {
  RECORD(int, REAL(setxattr)(p, nm, v, n, fl), setxattr, L(p), L(nm), L(v), L(n), fl);
}
IORR_EXPORT int lsetxattr(const char* p, const char* nm, const void* v, size_t n, int fl) {
  RECORD(int, REAL(lsetxattr)(p, nm, v, n, fl), lsetxattr, L(p), L(nm), L(v), L(n), fl);
}
IORR_EXPORT int fsetxattr(int fd, const char* nm, const void* v, size_t n, int fl) {
  RECORD(int, REAL(fsetxattr)(fd, nm, v, n, fl), fsetxattr, fd, L(nm), L(v), L(n), fl);
}
IORR_EXPORT int removexattr(const char* p, const char* nm) {
  RECORD(int, REAL(removexattr)(p, nm), removexattr, L(p), L(nm));
}
IORR_EXPORT int lremovexattr(const char* p, const char* nm) {
  RECORD(int, REAL(lremovexattr)(p, nm), lremovexattr, L(p), L(nm));
}
IORR_EXPORT int fremovexattr(int fd, const char* nm) {
  RECORD(int, REAL(fremovexattr)(fd, nm), fremovexattr, fd, L(nm));
}
IORR_EXPORT int chmod(const char* p, mode_t m) { RECORD(int, REAL(chmod)(p, m), chmod, L(p), m); }
IORR_EXPORT int fchmod(int fd, mode_t m) { RECORD(int, REAL(fchmod)(fd, m), fchmod, fd, m); }
IORR_EXPORT int fchmodat(int d, const char* p, mode_t m, int fl) {
  if (fl == AT_SYMLINK_NOFOLLOW) {
    // glibc 2.36 emulates this with an O_PATH open, a check that it is not a symlink and a
    // chmod through /proc; the same calls here are recorded as the kernel sees them.
    int pathfd = openat(d, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (pathfd < 0) return -1;
    struct stat st;
    if (fstatat(pathfd, "", &st, AT_EMPTY_PATH) != 0) {
      int e = errno;
      close(pathfd);
      errno = e;
      return -1;
    }
    if (S_ISLNK(st.st_mode)) {
      close(pathfd);
      errno = EOPNOTSUPP;
      return -1;
    }
    char proc[32];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pathfd);
    int r = chmod(proc, m);
    int e = (r != 0 && errno == ENOENT) ? EOPNOTSUPP : errno;
    close(pathfd);
    errno = e;
    return r;
  }
  RECORD(int, REAL(fchmodat)(d, p, m, fl), fchmodat, d, L(p), m);
}
IORR_EXPORT int chown(const char* p, uid_t u, gid_t g) {
  RECORD(int, REAL(chown)(p, u, g), chown, L(p), static_cast<int>(u), static_cast<int>(g));
}
IORR_EXPORT int fchown(int fd, uid_t u, gid_t g) {
  RECORD(int, REAL(fchown)(fd, u, g), fchown, fd, static_cast<int>(u), static_cast<int>(g));
}
IORR_EXPORT int lchown(const char* p, uid_t u, gid_t g) {
  RECORD(int, REAL(lchown)(p, u, g), lchown, L(p), static_cast<int>(u), static_cast<int>(g));
}
IORR_EXPORT int fchownat(int d, const char* p, uid_t u, gid_t g, int fl) {
  RECORD(int, REAL(fchownat)(d, p, u, g, fl), fchownat, d, L(p), static_cast<int>(u),
         static_cast<int>(g), fl);
}
IORR_EXPORT int utimensat(int d, const char* p, const struct timespec* t, int fl) {
  RECORD(int, REAL(utimensat)(d, p, t, fl), utimensat, d, L(p), L(t), fl);
}
IORR_EXPORT int futimens(int fd, const struct timespec* t) {
  RECORD(int, REAL(futimens)(fd, t), utimensat, fd, 0, L(t), 0);
}
IORR_EXPORT int utimes(const char* p, const struct timeval* t) {
  RECORD(int, REAL(utimes)(p, t), utimensat, kAtFdcwd, L(p), L(t), 0);
}
IORR_EXPORT int lutimes(const char* p, const struct timeval* t) {
  RECORD(int, REAL(lutimes)(p, t), utimensat, kAtFdcwd, L(p), L(t), AT_SYMLINK_NOFOLLOW);
}
IORR_EXPORT int futimes(int fd, const struct timeval* t) {
  RECORD(int, REAL(futimes)(fd, t), utimensat, fd, 0, L(t), 0);
}
IORR_EXPORT int utime(const char* p, const struct utimbuf* t) {
  RECORD(int, REAL(utime)(p, t), utimensat, kAtFdcwd, L(p), L(t), 0);
}

// ---- fd table, cwd ----

// The library's fds are not the program's: unrecorded those numbers are not open, and a call
// on one gets EBADF (bash probes an fd with F_GETFD before it redirects onto it, and saved and
// restored what it found there: `exec 4066>b.txt; echo two >&4066` wrote into the recorder's
// file, found by stop 39's sweep). Besides close (told it closed: see close) and these, a call
// on them still acts on the library's file.
int OwnFdRefused() {
  errno = EBADF;
  return -1;
}
IORR_EXPORT int dup(int fd) {
  if (iorr::recorder::IsOwnFd(fd)) RECORD(int, OwnFdRefused(), dup, fd);
  RECORD(int, REAL(dup)(fd), dup, fd);
}
IORR_EXPORT int dup2(int a, int b) {
  if (iorr::recorder::IsOwnFd(a)) RECORD(int, OwnFdRefused(), dup2, a, b);
  if (a != b && !iorr::recorder::VacateFd(b)) {
    errno = EBUSY;
    return -1;
  }
  RECORD(int, REAL(dup2)(a, b), dup2, a, b);
}
IORR_EXPORT int dup3(int a, int b, int fl) {
  if (iorr::recorder::IsOwnFd(a)) RECORD(int, OwnFdRefused(), dup3, a, b, fl);
  if (!iorr::recorder::VacateFd(b)) {
    errno = EBUSY;
    return -1;
  }
  RECORD(int, REAL(dup3)(a, b, fl), dup3, a, b, fl);
}

#define VA_POINTER(last)     \
  void* arg = nullptr;       \
  {                          \
    va_list ap;              \
    va_start(ap, last);      \
    arg = va_arg(ap, void*); \
    va_end(ap);              \
  }

// (The library's fds: EBADF, as for dup above; they stay open across exec whatever the program
// marks.)
IORR_EXPORT int fcntl(int fd, int cmd, ...) {
  VA_POINTER(cmd);
  if (iorr::recorder::IsOwnFd(fd)) RECORD(int, OwnFdRefused(), fcntl, fd, cmd, L(arg));
  RECORD(int, REAL(fcntl)(fd, cmd, arg), fcntl, fd, cmd, L(arg));
}
IORR_EXPORT int fcntl64(int fd, int cmd, ...) {
  VA_POINTER(cmd);
  if (iorr::recorder::IsOwnFd(fd)) RECORD(int, OwnFdRefused(), fcntl, fd, cmd, L(arg));
  RECORD(int, REAL(fcntl64)(fd, cmd, arg), fcntl, fd, cmd, L(arg));
}
IORR_EXPORT int ioctl(int fd, unsigned long req, ...) {
  VA_POINTER(req);
  if (iorr::recorder::IsOwnFd(fd)) RECORD(int, OwnFdRefused(), ioctl, fd, L(req), L(arg));
  RECORD(int, REAL(ioctl)(fd, req, arg), ioctl, fd, L(req), L(arg));
}
IORR_EXPORT int chdir(const char* p) { RECORD(int, REAL(chdir)(p), chdir, L(p)); }
IORR_EXPORT int fchdir(int fd) { RECORD(int, REAL(fchdir)(fd), fchdir, fd); }
// getcwd: glibc hands the kernel the caller's buffer, or for a NULL one a buffer of its own
// of `size` bytes (of max(PATH_MAX, the page size) for a size of 0), and returns the buffer
// where the kernel returns the path's length with its NUL. A buffer given with a size of 0 is
// refused (EINVAL) before any system call: not recorded.
namespace {
template <typename Real>
__attribute__((always_inline)) inline char* RecordGetcwd(char* buf, size_t size, Real real) {
  if (buf != nullptr && size == 0) return real();
  Call c;
  bool on = BeginNestableCall(&c);
  char* r = real();
  if (on) {
    int err = errno;
    long n = size != 0 ? static_cast<long>(size) : std::max<long>(PATH_MAX, getpagesize());
    long k[6] = {L(buf), n};
    EndCall(&c, CallId::getcwd, k, r != nullptr ? static_cast<long>(strlen(r)) + 1 : -err);
  }
  return r;
}
}  // namespace
IORR_EXPORT char* getcwd(char* buf, size_t size) {
  return RecordGetcwd(buf, size, [&] { return REAL(getcwd)(buf, size); });
}
IORR_EXPORT char* __getcwd_chk(char* buf, size_t size, size_t buflen) {
  return RecordGetcwd(buf, size, [&] { return REAL(__getcwd_chk)(buf, size, buflen); });
}
IORR_EXPORT mode_t umask(mode_t m) {
  Call c;
  bool on = BeginCall(&c);
  mode_t r = REAL(umask)(m);
  if (on) {
    long k[6] = {static_cast<long>(m)};
    EndCall(&c, CallId::umask, k, static_cast<long>(r));
  }
  return r;
}
IORR_EXPORT int flock(int fd, int op) { RECORD(int, REAL(flock)(fd, op), flock, fd, op); }

// ---- mappings, fds that are not files ----

IORR_EXPORT void* mmap(void* a, size_t n, int prot, int fl, int fd, off_t off) {
  RECORD(void*, REAL(mmap)(a, n, prot, fl, fd, off), mmap, L(a), L(n), prot, fl, fd, off);
}
IORR_EXPORT void* mmap64(void* a, size_t n, int prot, int fl, int fd, off_t off) {
  RECORD(void*, REAL(mmap64)(a, n, prot, fl, fd, off), mmap, L(a), L(n), prot, fl, fd, off);
}
IORR_EXPORT int munmap(void* a, size_t n) { RECORD(int, REAL(munmap)(a, n), munmap, L(a), L(n)); }
IORR_EXPORT int pipe(int* fds) { RECORD(int, REAL(pipe)(fds), pipe2, L(fds), 0); }
IORR_EXPORT int pipe2(int* fds, int fl) { RECORD(int, REAL(pipe2)(fds, fl), pipe2, L(fds), fl); }
IORR_EXPORT int socket(int d, int t, int p) { RECORD(int, REAL(socket)(d, t, p), socket, d, t, p); }
IORR_EXPORT int socketpair(int d, int t, int p, int* sv) {
  RECORD(int, REAL(socketpair)(d, t, p, sv), socketpair, d, t, p, L(sv));
}
IORR_EXPORT int accept(int fd, struct sockaddr* a, socklen_t* l) {
  RECORD(int, REAL(accept)(fd, a, l), accept, fd, L(a), L(l));
}
IORR_EXPORT int accept4(int fd, struct sockaddr* a, socklen_t* l, int fl) {
  RECORD(int, REAL(accept4)(fd, a, l, fl), accept4, fd, L(a), L(l), fl);
}
IORR_EXPORT int eventfd(unsigned v, int fl) { RECORD(int, REAL(eventfd)(v, fl), eventfd2, v, fl); }
IORR_EXPORT int memfd_create(const char* nm, unsigned fl) {
  RECORD(int, REAL(memfd_create)(nm, fl), memfd_create, L(nm), fl);
}
IORR_EXPORT int epoll_create1(int fl) { RECORD(int, REAL(epoll_create1)(fl), epoll_create1, fl); }
IORR_EXPORT int bind(int fd, const struct sockaddr* a, socklen_t l) {
  RECORD(int, REAL(bind)(fd, a, l), bind, fd, L(a), l);
}
IORR_EXPORT int inotify_init() { RECORD(int, REAL(inotify_init)(), inotify_init, 0); }
IORR_EXPORT int inotify_init1(int fl) { RECORD(int, REAL(inotify_init1)(fl), inotify_init1, fl); }
IORR_EXPORT int inotify_add_watch(int fd, const char* p, uint32_t mask) {
  RECORD(int, REAL(inotify_add_watch)(fd, p, mask), inotify_add_watch, fd, L(p), mask);
}

// ---- processes ----

// vfork is below, in assembly.
// Begun as a plain call: a handler that comes inside it (a SIGCHLD reaper, as in shells and
// make, whose children end while the next fork is made) has its calls recorded nested, in the
// parent, as the program's atfork handlers' calls are; in the child they are counted as lost
// until the pthread_atfork handler has reset its state (BeginNested). At stop 35's first
// version they ran unrecorded (8 to 13 of 20 reapers' opens missing, review); signals held over
// the call, tried next, deadlocked a program whose atfork handler waited for a thread in
// setuid (glibc's signal 33) and changed what others saw (second review).
IORR_EXPORT pid_t fork() {
  Call c;
  bool on = BeginNestableCall(&c);
  pid_t r = REAL(fork)();
  if (r == 0) return 0;  // the child was reset by the pthread_atfork handler
  if (on) {
    long k[6] = {kForkFlags};
    EndCall(&c, CallId::clone, k, KernelRet(r, errno));
  }
  return r;
}
// vfork: the child returns from it into the caller's frame while the parent is suspended, then
// runs on that stack; the parent, resumed, returns through the same frame. So nothing may be
// kept on the stack across the system call: the return address is handed to the work before
// (iorr_vfork_prepare, which keeps it in thread-local storage) and comes back from the work after
// (iorr_vfork_child or iorr_vfork_parent, in rdx beside vfork's result in rax), all called with
// the caller's stack pointer (preload.cc). The address of the parent's saved state goes from
// iorr_vfork_prepare to iorr_vfork_child and iorr_vfork_parent in r8 (free to use in a call;
// the system call keeps it, and each task's registers are its own). The system call is made
// here, outside the gate: iorr_vfork_prepare sets the dispatch selector to allow it. An
// address of 0 or 1 is a plain vfork (0: a task foreign to this thread-local storage, 1: one
// with no room for a save): the return address waits in r9 over the system call, as in libc's
// own.
asm(R"(
  .text
  .globl vfork
  .type vfork, @function
  .p2align 4
vfork:
  .cfi_startproc
  endbr64
  popq %rdi
  .cfi_adjust_cfa_offset -8
  .cfi_undefined rip
  call iorr_vfork_prepare
  movq %rax, %r8
  movq %rdx, %r9
  movl $58, %eax
  syscall
  cmpq $1, %r8
  jbe 3f
  testq %rax, %rax
  jz 1f
  movq %rax, %rdi
  movq %r8, %rsi
  call iorr_vfork_parent
  jmp 2f
1:
  movq %r8, %rdi
  call iorr_vfork_child
2:
  pushq %rdx
  ret
3:
  movq %rax, %rdi
  movq %r9, %rsi
  movq %r8, %rdx
  call iorr_vfork_plain
  jmp 2b
  .cfi_endproc
  .size vfork, .-vfork
)");

namespace {

// execve with the recording carried into the new image. The envp copy lives on this stack.
// at: execveat(dirfd, path, argv, envp, at_flags) (fexecve: fd, "", AT_EMPTY_PATH).
int ExecveRecorded(const char* path, char* const* argv, char* const* envp, bool at = false,
                   int dirfd = AT_FDCWD, int at_flags = 0) {
  int n = 0;
  for (char* const* p = envp; p && *p; ++p) ++n;
  int cap = n + 16;
  char** env2 = static_cast<char**>(__builtin_alloca(sizeof(char*) * static_cast<size_t>(cap)));
  const int buf_cap = 16384;
  char* buf = static_cast<char*>(__builtin_alloca(buf_cap));
  Call c;
  bool on = BeginCall(&c);
  int64_t start = on ? c.start : iorr::recorder::NowNs();
  bool ok = iorr::recorder::PrepareExecEnv(envp, start, env2, cap, buf, buf_cap);
  // Not into the new image (see DeferSignal).
  if (iorr::recorder::t_hot.deferred) iorr::recorder::ReleaseDeferredSignals();
  iorr::recorder::FlushAllAndHold();  // the new image starts with empty buffers
  iorr::recorder::NoteExecAttempt(at ? dirfd : AT_FDCWD, path);
  if (ok) iorr::recorder::ExecKeepsLock(true);  // IORR_LOCK names it to the new image
  int r = at ? REAL(execveat)(dirfd, path, argv, ok ? env2 : envp, at_flags)
             : REAL(execve)(path, argv, ok ? env2 : envp);
  if (ok) iorr::recorder::ExecKeepsLock(false);
  iorr::recorder::ReleaseHeldWriter();
  iorr::recorder::NoteExecFailed();
  if (on) {
    if (at) {
      long k[6] = {dirfd, L(path), L(argv), L(envp), at_flags};
      EndCall(&c, CallId::execveat, k, KernelRet(r, errno));
    } else {
      long k[6] = {L(path), L(argv), L(envp)};
      EndCall(&c, CallId::execve, k, KernelRet(r, errno));
    }
  }
  return r;
}

// glibc's execvp runs a file the kernel refuses as a program (ENOEXEC: a script without #!)
// with /bin/sh.
int ExecveOrScript(const char* path, char* const* argv, char* const* envp) {
  int r = ExecveRecorded(path, argv, envp);
  if (r != -1 || errno != ENOEXEC) return r;
  int argc = 0;
  while (argv && argv[argc]) ++argc;
  char** sh_argv =
      static_cast<char**>(__builtin_alloca(sizeof(char*) * static_cast<size_t>(argc + 2)));
  sh_argv[0] = const_cast<char*>("/bin/sh");
  sh_argv[1] = const_cast<char*>(path);
  for (int i = 1; i < argc; ++i) sh_argv[i + 1] = argv[i];
  sh_argv[argc > 0 ? argc + 1 : 2] = nullptr;
  ExecveRecorded("/bin/sh", sh_argv, envp);
  errno = ENOEXEC;
  return -1;
}

// execvp's search of PATH, as glibc does it, so each attempt goes through ExecveRecorded.
int ExecvpeRecorded(const char* file, char* const* argv, char* const* envp) {
  if (file == nullptr || *file == 0) {
    errno = ENOENT;
    return -1;
  }
  if (strchr(file, '/')) {
    ExecveOrScript(file, argv, envp);
  } else {
    const char* path = getenv("PATH");
    if (path == nullptr) path = "/bin:/usr/bin";
    size_t flen = strnlen(file, NAME_MAX + 1);
    if (flen > NAME_MAX) {
      errno = ENAMETOOLONG;
      return -1;
    }
    bool eacces = false;
    char buf[PATH_MAX];
    for (const char* p = path;; ++p) {
      const char* e = strchrnul(p, ':');
      size_t dlen = static_cast<size_t>(e - p);
      if (dlen + flen + 2 <= sizeof(buf)) {
        memcpy(buf, p, dlen);
        size_t off = dlen;
        if (dlen > 0) buf[off++] = '/';
        memcpy(buf + off, file, flen + 1);
        ExecveOrScript(buf, argv, envp);
        if (errno == EACCES)
          eacces = true;
        else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV &&
                 errno != ETIMEDOUT)
          return -1;
      }
      if (*e == 0) break;
      p = e;
    }
    if (eacces) errno = EACCES;
  }
  return -1;
}

}  // namespace

IORR_EXPORT int execve(const char* path, char* const* argv, char* const* envp) {
  return ExecveRecorded(path, argv, envp);
}
// fexecve and execveat: the same exec path (flush first, the library and the lock passed on);
// glibc's fexecve reaches execveat inside libc, where only dispatch would see it.
IORR_EXPORT int execveat(int dirfd, const char* path, char* const* argv, char* const* envp,
                         int flags) {
  return ExecveRecorded(path, argv, envp, true, dirfd, flags);
}
IORR_EXPORT int fexecve(int fd, char* const* argv, char* const* envp) {
  // As glibc's, before any system call. The pointers pass through an empty asm so that the
  // compiler, told they are never null, keeps the checks.
  auto null = [](const void* p) {
    asm volatile("" : "+r"(p));
    return p == nullptr;
  };
  if (fd < 0 || null(argv) || null(envp)) {
    errno = EINVAL;
    return -1;
  }
  return ExecveRecorded("", argv, envp, true, fd, AT_EMPTY_PATH);
}
IORR_EXPORT int execv(const char* path, char* const* argv) {
  return ExecveRecorded(path, argv, environ);
}
IORR_EXPORT int execvp(const char* file, char* const* argv) {
  return ExecvpeRecorded(file, argv, environ);
}
IORR_EXPORT int execvpe(const char* file, char* const* argv, char* const* envp) {
  return ExecvpeRecorded(file, argv, envp);
}

#define COLLECT_ARGS(first, last_named, env_out)                                     \
  int argc_ = 1;                                                                     \
  {                                                                                  \
    va_list ap;                                                                      \
    va_start(ap, last_named);                                                        \
    while (va_arg(ap, char*) != nullptr) ++argc_;                                    \
    va_end(ap);                                                                      \
  }                                                                                  \
  char** argv_ = static_cast<char**>(__builtin_alloca(sizeof(char*) * (argc_ + 1))); \
  argv_[0] = const_cast<char*>(first);                                               \
  char* const* env_out = environ;                                                    \
  {                                                                                  \
    va_list ap;                                                                      \
    va_start(ap, last_named);                                                        \
    for (int i = 1; i <= argc_; ++i) argv_[i] = va_arg(ap, char*);                   \
    if (env_out == environ && with_env_) env_out = va_arg(ap, char* const*);         \
    va_end(ap);                                                                      \
  }

IORR_EXPORT int execl(const char* path, const char* arg, ...) {
  const bool with_env_ = false;
  COLLECT_ARGS(arg, arg, envv);
  return ExecveRecorded(path, argv_, envv);
}
IORR_EXPORT int execlp(const char* file, const char* arg, ...) {
  const bool with_env_ = false;
  COLLECT_ARGS(arg, arg, envv);
  return ExecvpeRecorded(file, argv_, envv);
}
IORR_EXPORT int execle(const char* path, const char* arg, ...) {
  const bool with_env_ = true;
  COLLECT_ARGS(arg, arg, envv);
  return ExecveRecorded(path, argv_, envv);
}

namespace {

// glibc's private layout of posix_spawn_file_actions_t (stable since 2.35; spawn_int.h).
struct SpawnAction {
  enum Tag { kClose, kDup2, kOpen, kChdir, kFchdir, kClosefrom, kTcsetpgrp } tag;
  union {
    struct {
      int fd;
    } close;
    struct {
      int fd, newfd;
    } dup2;
    struct {
      int fd;
      char* path;
      int oflag;
      mode_t mode;
    } open;
    struct {
      char* path;
    } chdir;
    struct {
      int fd;
    } fchdir;
    struct {
      int from;
    } closefrom;
    struct {
      int fd;
    } tcsetpgrp;
  } a;
};
struct FileActions {
  int allocated, used;
  SpawnAction* actions;
  int pad[16];
};
static_assert(sizeof(FileActions) == sizeof(posix_spawn_file_actions_t));

// In the child of SpawnRecorded: what glibc's __spawni_child does, through the recorded calls.
[[noreturn]] void SpawnChildShared(bool search, const char* file,
                                   const posix_spawn_file_actions_t* fa,
                                   const posix_spawnattr_t* attr, char* const* argv,
                                   char* const* envp, const sigset_t* parent_mask,
                                   volatile int* err_out) {
  short flags = 0;
  if (attr) posix_spawnattr_getflags(attr, &flags);
  int err = 0;
  if (flags & POSIX_SPAWN_SETSIGDEF) {
    sigset_t def;
    posix_spawnattr_getsigdefault(attr, &def);
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig)
      if (sigismember(&def, sig) == 1) sigaction(sig, &dfl, nullptr);
  }
  if (!err && (flags & POSIX_SPAWN_SETSID) && setsid() < 0) err = errno;
  if (!err && (flags & POSIX_SPAWN_SETPGROUP)) {
    pid_t pg = 0;
    posix_spawnattr_getpgroup(attr, &pg);
    if (setpgid(0, pg) != 0) err = errno;
  }
  if (!err && (flags & (POSIX_SPAWN_SETSCHEDULER | POSIX_SPAWN_SETSCHEDPARAM))) {
    struct sched_param sp;
    posix_spawnattr_getschedparam(attr, &sp);
    int policy = 0;
    posix_spawnattr_getschedpolicy(attr, &policy);
    int r = (flags & POSIX_SPAWN_SETSCHEDULER) ? sched_setscheduler(0, policy, &sp)
                                               : sched_setparam(0, &sp);
    if (r < 0) err = errno;
  }
  // The kernel's calls, not libc's setgid/setuid: those make every thread of the process change
  // its ids (__nptl_setxid), and this child, a copy of its parent's memory, holds the parent's
  // list of threads without the threads. It waited for ever on one (stop 17: the writer thread,
  // created by the parent's call just before, whose start had not yet cleared its mark). glibc's
  // own spawn child makes the system calls too.
  if (!err && (flags & POSIX_SPAWN_RESETIDS)) {
    long r = RawSyscall6(SYS_setgid, RawSyscall6(SYS_getgid));
    if (r == 0) r = RawSyscall6(SYS_setuid, RawSyscall6(SYS_getuid));
    if (r < 0) err = static_cast<int>(-r);
  }
  const auto* acts = reinterpret_cast<const FileActions*>(fa);
  for (int i = 0; !err && acts && i < acts->used; ++i) {
    const SpawnAction& x = acts->actions[i];
    switch (x.tag) {
      case SpawnAction::kClose:
        if (close(x.a.close.fd) != 0 && errno != EBADF) err = errno;
        break;
      case SpawnAction::kDup2:
        if (x.a.dup2.fd == x.a.dup2.newfd) {
          int fl = fcntl(x.a.dup2.fd, F_GETFD, 0);
          if (fl < 0 || fcntl(x.a.dup2.fd, F_SETFD, fl & ~FD_CLOEXEC) < 0) err = errno;
        } else if (dup2(x.a.dup2.fd, x.a.dup2.newfd) < 0) {
          err = errno;
        }
        break;
      case SpawnAction::kOpen: {
        int fd = open(x.a.open.path, x.a.open.oflag, x.a.open.mode);
        if (fd < 0) {
          err = errno;
        } else if (fd != x.a.open.fd) {
          if (dup2(fd, x.a.open.fd) < 0) err = errno;
          close(fd);
        }
        break;
      }
      case SpawnAction::kChdir:
        if (chdir(x.a.chdir.path) != 0) err = errno;
        break;
      case SpawnAction::kFchdir:
        if (fchdir(x.a.fchdir.fd) != 0) err = errno;
        break;
      case SpawnAction::kClosefrom:
        closefrom(x.a.closefrom.from);
        break;
      case SpawnAction::kTcsetpgrp:
        if (tcsetpgrp(x.a.tcsetpgrp.fd, getpgrp()) != 0) err = errno;
        break;
      default:
        err = EINVAL;
    }
  }
  if (!err) {
    sigset_t mask = *parent_mask;
    if (flags & POSIX_SPAWN_SETSIGMASK) posix_spawnattr_getsigmask(attr, &mask);
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    if (search)
      ExecvpeRecorded(file, argv, envp);
    else
      ExecveRecorded(file, argv, envp);
    err = errno;
  }
  *err_out = err;
  RawSyscall6(SYS_exit_group, 127);
  __builtin_unreachable();
}

// posix_spawn's child on the parent's memory (SpawnVmChild): what it needs, and the errno of
// its failure on the way back.
struct VmSpawn {
  bool search;
  const char* file;
  const posix_spawn_file_actions_t* fa;
  const posix_spawnattr_t* attr;
  char* const* argv;
  char* const* envp;
  uint64_t parent_mask;
  volatile int err;
};

// Not instrumented in sanitizer builds (see VmChildMain).
[[noreturn]] __attribute__((no_sanitize("address"))) void VmSpawnChild(void* p) {
  auto* s = static_cast<VmSpawn*>(p);
  // A handler would run on the parent's memory: every signal the program handles goes back to
  // SIG_DFL in this process (its table of handlers is its own), as glibc's spawn child does;
  // glibc's own two (cancellation, setxid) are ignored. The exec would reset them anyway.
  for (int sig = 1; sig < 65; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct {
      long handler, flags, restorer;
      uint64_t mask;
    } act = {}, cur = {};
    if (RawSyscall6(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&cur), 8) != 0) continue;
    bool internal = sig == 32 || sig == 33;
    if (!internal && (cur.handler == reinterpret_cast<long>(SIG_DFL) ||
                      cur.handler == reinterpret_cast<long>(SIG_IGN)))
      continue;
    act.handler = reinterpret_cast<long>(internal ? SIG_IGN : SIG_DFL);
    RawSyscall6(SYS_rt_sigaction, sig, reinterpret_cast<long>(&act), 0, 8);
  }
  sigset_t mask;
  sigemptyset(&mask);
  memcpy(&mask, &s->parent_mask, sizeof(s->parent_mask));
  SpawnChildShared(s->search, s->file, s->fa, s->attr, s->argv, s->envp, &mask, &s->err);
}

// posix_spawn as clone(CLONE_VM | CLONE_VFORK) on a stack of its own + the file actions + exec,
// as glibc's is, but with the child's calls before its exec recorded like any other (glibc's
// child runs unrecorded): the child is recorded as a vfork child is (SpawnVmChild). Until stop
// 25 the child had a copy of the parent's memory (a fork without CLONE_VM): the page tables
// were copied at each spawn and the parent took a copy-on-write fault on every page it wrote
// after, which made posix_spawn+wait of a program with 256 MB written 40 times slower recorded
// (75 ms against 1.8 ms); `make` and `ninja` spawn with it. That way is left for a caller that
// cannot take the vfork path (itself a vfork child, or foreign to its storage). A failure's
// errno comes back through the parent's memory.
int SpawnRecorded(bool search, pid_t* pid, const char* file, const posix_spawn_file_actions_t* fa,
                  const posix_spawnattr_t* attr, char* const* argv, char* const* envp) {
  {
    VmSpawn s{search, file, fa, attr, argv, envp, 0, 0};
    // The child's stack: ExecveRecorded copies the environment's pointers onto it, and an exec
    // of a script without #! the arguments', besides 16 KiB of its own; untouched pages cost
    // nothing (MAP_NORESERVE).
    size_t words = 64;
    for (char* const* p = argv; p && *p; ++p) ++words;
    for (char* const* p = envp; p && *p; ++p) ++words;
    long child = iorr::recorder::SpawnVmChild(VmSpawnChild, &s, (256u << 10) + words * 16,
                                              &s.parent_mask, &s.err);
    if (child != iorr::recorder::kNoVmChild) {
      if (child < 0) return static_cast<int>(-child);
      if (s.err != 0) return s.err;  // exec failed: SpawnVmChild reaped the child
      if (pid) *pid = static_cast<pid_t>(child);
      return 0;
    }
  }
  long page =
      RawSyscall6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page < 0 && page > -4096) return EAGAIN;
  auto* shared_err = reinterpret_cast<volatile int*>(page);
  *shared_err = 0;
  sigset_t all, old;
  sigfillset(&all);
  sigdelset(&all, SIGSYS);  // blocked, a trap (selector left at ALLOW by an escape) would kill
  sigprocmask(SIG_SETMASK, &all, &old);  // no handler may run in the child before exec
  Call c;
  bool on = BeginCall(&c);
  long child = RawSyscall6(SYS_clone, CLONE_VFORK | SIGCHLD, 0, 0, 0, 0);
  if (child == 0) {
    iorr::recorder::AfterForkChild();  // no pthread_atfork handlers run for a raw clone
    iorr::recorder::NoWriterInThisProcess();
    SpawnChildShared(search, file, fa, attr, argv, envp, &old, shared_err);
  }
  if (on) {
    long k[6] = {CLONE_VFORK | SIGCHLD};
    EndCall(&c, CallId::clone, k, child);
  }
  int err = child < 0 ? static_cast<int>(-child) : *shared_err;
  if (child > 0 && err != 0) {  // exec failed: reap the child before a SIGCHLD handler can
    int status;
    while (waitpid(static_cast<pid_t>(child), &status, 0) < 0 && errno == EINTR) {
    }
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);
  RawSyscall6(SYS_munmap, page, 4096);
  if (child < 0 || err != 0) return err;
  if (pid) *pid = static_cast<pid_t>(child);
  return 0;
}

}  // namespace

IORR_EXPORT int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* fa,
                            const posix_spawnattr_t* attr, char* const* argv, char* const* envp) {
  return SpawnRecorded(false, pid, path, fa, attr, argv, envp);
}
IORR_EXPORT int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* fa,
                             const posix_spawnattr_t* attr, char* const* argv, char* const* envp) {
  return SpawnRecorded(true, pid, file, fa, attr, argv, envp);
}

// system() and popen() spawn their shell from inside libc (glibc's internal posix_spawn, which
// no wrapper sees), with the program's environment. Where that environment lacks the library
// the child runs unrecorded: dispatch and the patched sites see the clone and say so; a thread
// neither covers (IORR_DISPATCH=0, dispatch refused) says so here. Either way the call itself
// is libc's, unchanged, and the selector the clone left at ALLOW goes back (SpawnFromLibcEnd).
namespace {
// For the length of a call of libc's that spawns from inside (SpawnFromLibcBegin/End).
struct SpawnFromLibc {
  char selector = iorr::recorder::SpawnFromLibcBegin();
  ~SpawnFromLibc() { iorr::recorder::SpawnFromLibcEnd(selector); }
};
}  // namespace
IORR_EXPORT int system(const char* command) {
  SpawnFromLibc spawn;
  // (A NULL command asks whether there is a shell: glibc runs one, "exit 0", as for any other.)
  iorr::recorder::OpenSpawnWindow();
  return REAL(system)(command);
}
namespace {
// Whether glibc's popen takes `type` (else it fails with EINVAL and spawns nothing): 'r', 'w'
// and 'e' in any order, exactly one of 'r' and 'w'.
bool PopenSpawns(const char* type) {
  if (type == nullptr) return false;
  bool r = false, w = false;
  for (const char* p = type; *p; ++p) {
    if (*p == 'r')
      r = true;
    else if (*p == 'w')
      w = true;
    else if (*p != 'e')
      return false;
  }
  return r != w;
}
}  // namespace
IORR_EXPORT FILE* popen(const char* command, const char* type) {
  if (!PopenSpawns(type)) return REAL(popen)(command, type);
  SpawnFromLibc spawn;
  iorr::recorder::OpenSpawnWindow();
  return REAL(popen)(command, type);
}

struct SetxidGuard {
  iorr::recorder::SetxidWindow w;
  bool lowered = iorr::recorder::BeforeSetxid(&w);
  SetxidGuard() = default;
  SetxidGuard(const SetxidGuard&) = delete;
  SetxidGuard& operator=(const SetxidGuard&) = delete;
  ~SetxidGuard() { iorr::recorder::AfterSetxid(w); }
};
// glibc's setuid family: every thread of the process takes the new ids, the writer too, which
// glibc does only while it counts the process as threaded (BeforeSetxid). (Left: ruserok and
// iruserok, which switch the effective uid inside libc for a moment and back.)
IORR_EXPORT int setuid(uid_t uid) {
  SetxidGuard guard;
  return REAL(setuid)(uid);
}
IORR_EXPORT int setgid(gid_t gid) {
  SetxidGuard guard;
  return REAL(setgid)(gid);
}
IORR_EXPORT int seteuid(uid_t uid) {
  SetxidGuard guard;
  return REAL(seteuid)(uid);
}
IORR_EXPORT int setegid(gid_t gid) {
  SetxidGuard guard;
  return REAL(setegid)(gid);
}
IORR_EXPORT int setreuid(uid_t r, uid_t e) {
  SetxidGuard guard;
  return REAL(setreuid)(r, e);
}
IORR_EXPORT int setregid(gid_t r, gid_t e) {
  SetxidGuard guard;
  return REAL(setregid)(r, e);
}
IORR_EXPORT int setresuid(uid_t r, uid_t e, uid_t s) {
  SetxidGuard guard;
  return REAL(setresuid)(r, e, s);
}
IORR_EXPORT int setresgid(gid_t r, gid_t e, gid_t s) {
  SetxidGuard guard;
  return REAL(setresgid)(r, e, s);
}
IORR_EXPORT int setgroups(size_t n, const gid_t* groups) {
  SetxidGuard guard;
  return REAL(setgroups)(n, groups);
}
// initgroups runs the NSS modules, which may start threads: not with the flag down (it would be
// put back up over a thread of the program's). Its groups go to every thread afterwards.
IORR_EXPORT int initgroups(const char* user, gid_t group) {
  int r = REAL(initgroups)(user, group);
  if (r != 0) return r;
  int saved_errno = errno;
  gid_t some[64];
  gid_t* list = some;
  int n = getgroups(0, nullptr);
  if (n > 64) list = static_cast<gid_t*>(malloc(sizeof(gid_t) * static_cast<size_t>(n)));
  if (list != nullptr && n >= 0 && (n = getgroups(n, list)) >= 0) {
    SetxidGuard guard;
    if (guard.lowered) REAL(setgroups)(static_cast<size_t>(n), list);
  }
  if (list != some) free(list);
  errno = saved_errno;
  return r;
}

namespace {
// How many command substitutions wordexp may run, $(...) (not $((...)), arithmetic) or `...`:
// one shell each (at most 16 counted). Quoting is not looked at: at worst an escape note for a
// spawn that did not happen, in a program whose environment lacks the library, or a window
// nobody takes (it goes after a second).
int WordexpSpawns(const char* words, int flags) {
  if (words == nullptr || (flags & WRDE_NOCMD)) return 0;
  int subs = 0, quotes = 0;
  for (const char* p = words; *p; ++p) {
    if (*p == '`') ++quotes;
    if (p[0] == '$' && p[1] == '(' && p[2] != '(') ++subs;
  }
  return std::min(16, subs + (quotes + 1) / 2);
}
}  // namespace
// wordexp() runs a command substitution through glibc's spawn of a shell, as system() does.
IORR_EXPORT int wordexp(const char* words, wordexp_t* we, int flags) {
  int shells = WordexpSpawns(words, flags);
  if (shells == 0) return REAL(wordexp)(words, we, flags);
  SpawnFromLibc spawn;
  for (int i = 0; i < shells; ++i) iorr::recorder::OpenSpawnWindow();  // one shell each
  return REAL(wordexp)(words, we, flags);
}

IORR_EXPORT void _exit(int status) {
  // Armed and trapping, the exit_group it makes is handled there, once: recorded, flushed,
  // released (doing it here too left a window where other threads took slots nobody freed).
  if (iorr::recorder::t_hot.armed && iorr::recorder::t_hot.selector == 1) REAL(_exit)(status);
  Call c;
  if (BeginCall(&c)) {
    long k[6] = {status};
    EndCall(&c, CallId::exit_group, k, 0);
  }
  iorr::recorder::FlushAllAndHold();
  iorr::recorder::ReleaseProcessSlots();
  iorr::recorder::StopRecordingThread();  // its trapped exit_group is recorded above already
  REAL(_exit)(status);
  __builtin_unreachable();
}
IORR_EXPORT void _Exit(int status) { _exit(status); }

// A debugger's inferior-to-be asks to be traced: from then on a trap would be a signal stop for
// the debugger, so the process records through its wrappers only (the handler does the same
// for a trapped ptrace; this catches an unarmed caller, such as a vfork child).
IORR_EXPORT long ptrace(enum __ptrace_request request, ...) {
  va_list ap;
  va_start(ap, request);
  long pid = va_arg(ap, long), addr = va_arg(ap, long), data = va_arg(ap, long);
  va_end(ap);
  long r = REAL(ptrace)(request, pid, addr, data);
  if (request == PTRACE_TRACEME && r == 0) iorr::recorder::OnTraceMe();
  return r;
}

// The alternate signal stack, remembered for LeftByLongjmp (the trapped call does the same).
DECLARE_REAL(int, sigaltstack, const stack_t*, stack_t*);
IORR_EXPORT int sigaltstack(const stack_t* ss, stack_t* old) {
  int r = REAL(sigaltstack)(ss, old);
  if (ss != nullptr) {  // asked, not taken from ss: the kernel sets it before failing on `old`
    int saved = errno;
    stack_t now;
    if (REAL(sigaltstack)(nullptr, &now) == 0) iorr::recorder::NoteAltStack(now);
    errno = saved;
  }
  return r;
}

// glibc's clone(): the child runs fn(arg) on `stack`. (libc's own threads and spawns use an
// internal clone, not this one.)
//  - A process with a copy of this memory (no CLONE_VM): it starts afresh in fn's trampoline,
//    as a fork child does (AfterForkChildOf, on the stack the program gave it), and the clone is
//    recorded as fork's is. When fn returns, clone's code ends the thread with SYS_exit, which
//    only dispatch would see: the trampoline says so first, as syscall(SYS_exit) does.
//  - A task on this memory and thread-local storage (CLONE_VM without CLONE_SETTLS): foreign
//    until its exec (ShareStorage), for good (a task it starts on the same storage may outlive
//    it, even with CLONE_VFORK).
//  - CLONE_SETTLS: the caller made the task's thread-local storage; it is recorded through the
//    wrappers, as a thread of its own, from its first wrapped call (not armed for dispatch),
//    and an escape note says so.
DECLARE_REAL(int, clone, int (*)(void*), void*, int, void*, ...);
namespace {
struct CloneStart {
  int (*fn)(void*);
  void* arg;
  bool shared_files;
};
int CloneProcessStart(void* p) {
  // In the child's copy of the parent's memory: the parent's frame holding it is copied too.
  CloneStart s = *static_cast<CloneStart*>(p);
  iorr::recorder::t_in_clone = false;
  iorr::recorder::AfterForkChildOf(s.shared_files);
  int r = s.fn(s.arg);
  iorr::recorder::NoteThreadExit(r);
  iorr::recorder::FlushAll();
  return r;
}
}  // namespace
IORR_EXPORT int clone(int (*fn)(void*), void* stack, int flags, void* arg, ...) {
  va_list ap;
  va_start(ap, arg);  // read whatever the flags: glibc's clone passes them on as they are
  auto* ptid = va_arg(ap, pid_t*);
  void* tls = va_arg(ap, void*);
  auto* ctid = va_arg(ap, pid_t*);
  va_end(ap);
  // The real clone, with t_in_clone set (a trap of its system call, BeginCall being off, leaves
  // the new task to this wrapper). A task foreign to this storage (a CLONE_VM child) leaves its
  // owner's flag alone; the new task may see it set, and reads nothing of it.
  const bool mine = !iorr::recorder::ForeignTask();
  auto real = [&](int (*f)(void*), void* a) {
    bool was = iorr::recorder::t_in_clone;
    if (mine) iorr::recorder::t_in_clone = true;
    int r = REAL(clone)(f, stack, flags, a, ptid, tls, ctid);
    if (mine) iorr::recorder::t_in_clone = was;
    return r;
  };
  // A process sharing this one's fd table: the writer stays in it (OwnWriterTable).
  if ((flags & CLONE_FILES) && !(flags & CLONE_THREAD) && mine)
    iorr::recorder::NoteFilesSharedTask();
  if (!(flags & (CLONE_VM | CLONE_SETTLS | CLONE_THREAD)) && fn != nullptr) {
    CloneStart s{fn, arg, (flags & CLONE_FILES) != 0};
    Call c;
    bool on = BeginCall(&c);
    int r = real(CloneProcessStart, &s);
    if (on) {
      long k[6] = {static_cast<long>(static_cast<unsigned>(flags))};
      EndCall(&c, CallId::clone, k, KernelRet(r, errno));
    }
    return r;
  }
  bool vm_shared = (flags & CLONE_VM) && !(flags & CLONE_SETTLS);
  // Any task on this memory but a vfork child is one glibc does not count (not
  // pthread_create's), whatever its storage.
  if ((flags & CLONE_VM) && !(flags & CLONE_VFORK) && mine) iorr::recorder::NoteUncountedVmTask();
  uint32_t token = vm_shared ? iorr::recorder::ShareStorage() : 0;
  int r = real(fn, arg);
  int saved = errno;
  if (vm_shared && r < 0)
    iorr::recorder::EndSharedStorage(token);
  else if (vm_shared)
    iorr::recorder::NoteSharedStorage(
        "clone() with CLONE_VM and without CLONE_SETTLS (a task on this thread's storage)");
  else if (r > 0 && (flags & CLONE_SETTLS))
    iorr::recorder::NoteOwnTlsClone();
  errno = saved;
  return r;
}

// The old disposition the program reads where rt_sigaction is not caught (a thread on a stack
// of its own, a vfork child, the window after an escaped CLONE_VM clone): the kernel holds a
// stub of the library's for each handler the program set where it is caught (see
// iorr_handler_entry in dispatch.cc), and the program is told its own handler, as where it is
// caught (review of stop 35: such a thread read the stub's address back). glibc's struct
// sigaction starts with the handler, as the kernel's does.
using SigHandler = void (*)(int);
SigHandler ProgramSigHandler(SigHandler h) {
  return reinterpret_cast<SigHandler>(iorr::recorder::ProgramHandler(reinterpret_cast<void*>(h)));
}
DECLARE_REAL(int, sigaction, int, const struct sigaction*, struct sigaction*);
DECLARE_REAL(int, __sigaction, int, const struct sigaction*, struct sigaction*);
DECLARE_REAL(SigHandler, signal, int, SigHandler);
DECLARE_REAL(SigHandler, bsd_signal, int, SigHandler);
DECLARE_REAL(SigHandler, ssignal, int, SigHandler);
DECLARE_REAL(SigHandler, sysv_signal, int, SigHandler);
DECLARE_REAL(SigHandler, __sysv_signal, int, SigHandler);
DECLARE_REAL(SigHandler, sigset, int, SigHandler);
int WithProgramOld(int r, struct sigaction* old) {
  if (r == 0 && old != nullptr) old->sa_handler = ProgramSigHandler(old->sa_handler);
  return r;
}
IORR_EXPORT int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  return WithProgramOld(REAL(sigaction)(sig, act, old), old);
}
IORR_EXPORT int __sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  return WithProgramOld(REAL(__sigaction)(sig, act, old), old);
}
#define SIGNAL_WRAPPER(name)                           \
  IORR_EXPORT SigHandler name(int sig, SigHandler h) { \
    return ProgramSigHandler(REAL(name)(sig, h));      \
  }
SIGNAL_WRAPPER(signal)
SIGNAL_WRAPPER(bsd_signal)
SIGNAL_WRAPPER(ssignal)
SIGNAL_WRAPPER(sysv_signal)
SIGNAL_WRAPPER(__sysv_signal)
SIGNAL_WRAPPER(sigset)
#undef SIGNAL_WRAPPER

// syscall(): calls of the table are recorded like their libc counterparts.
IORR_EXPORT long syscall(long nr, ...) {
  long a[6];
  va_list ap;
  va_start(ap, nr);
  for (long& v : a) v = va_arg(ap, long);
  va_end(ap);
  if (nr == SYS_exit) iorr::recorder::NoteThreadExit(static_cast<int>(a[0]));
  if (nr == SYS_exit_group) iorr::recorder::FlushAllAndHold();
  if (nr == SYS_exit) iorr::recorder::FlushAll();
  if ((nr == SYS_close && iorr::recorder::IsOwnFd(a[0]))) return 0;
  // The library's fds survive raw calls too.
  if (nr == SYS_close_range)
    return iorr::recorder::CloseRangeKeepingOwn(
        static_cast<unsigned>(a[0]), static_cast<unsigned>(a[1]), static_cast<int>(a[2]));
  if ((nr == SYS_fcntl || nr == SYS_ioctl || nr == SYS_dup || nr == SYS_dup2 || nr == SYS_dup3) &&
      iorr::recorder::IsOwnFd(a[0])) {
    errno = EBADF;  // (the library's fds: see dup)
    return -1;
  }
  if ((nr == SYS_dup2 || nr == SYS_dup3) && a[0] != a[1] &&
      !iorr::recorder::VacateFd(static_cast<int>(a[1]))) {
    errno = EBUSY;
    return -1;
  }
  if (nr == SYS_rt_sigaction) {  // the old handler as the program set it (above)
    long r = REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (r == 0 && a[2] != 0) {
      auto* old = reinterpret_cast<void**>(a[2]);
      *old = iorr::recorder::ProgramHandler(*old);
    }
    return r;
  }
  if (nr == SYS_ptrace && a[0] == PTRACE_TRACEME) {  // as the ptrace wrapper
    long r = REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (r == 0) iorr::recorder::OnTraceMe();
    return r;
  }
  // A fork-like raw clone or clone3 (own memory, no new stack) without dispatch, which would see
  // it: the child becomes a process of its own here, as after fork (a child sharing the fd table
  // must not take its parent's lock fd for its own). clone3's flags and stack are in its struct
  // clone_args (at 0 and 40), read in the child, once the kernel has read them (the pointer is
  // good, and the copy the child's). Until stop 25 a clone3 child went on as its parent (one
  // process in the trace, the parent's events before the clone twice). Neither call is recorded
  // (Effect::kProcess): any other clone is only passed on.
  if ((nr == SYS_clone || nr == SYS_clone3) && !iorr::recorder::DispatchEnabled()) {
    long r = REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (r != 0 || (nr == SYS_clone3 && static_cast<unsigned long>(a[1]) < 64)) return r;
    uint64_t flags = static_cast<uint64_t>(a[0]), stack = static_cast<uint64_t>(a[1]);
    if (nr == SYS_clone3) {
      memcpy(&flags, reinterpret_cast<const char*>(a[0]), 8);
      memcpy(&stack, reinterpret_cast<const char*>(a[0]) + 40, 8);
    }
    if (!(flags & (CLONE_VM | CLONE_SETTLS)) && stack == 0) {
      int saved = errno;
      iorr::recorder::AfterForkChildOf((flags & CLONE_FILES) != 0);
      errno = saved;
    }
    return r;
  }
  int tag = iorr::recorder::CallTagOf(nr);  // (a table by number: searching the calls cost ~60 ns)
  const iorr::trace::CallShape* spec =
      tag > 0 ? iorr::trace::ShapeOf(static_cast<uint16_t>(tag)) : nullptr;
  bool recordable = spec && spec->effect != iorr::trace::Effect::kProcess;
  Call c(iorr::recorder::AtDeath::kSole, static_cast<CallId>(tag));
  bool on = recordable && BeginNestableCall(&c);  // (as dispatch's RunRecorded)
  bool seccomp = iorr::recorder::BeginSeccompCall(nr, a);
  long r = REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
  if (on) EndCall(&c, static_cast<CallId>(spec->tag), a, KernelRet(r, errno));
  iorr::recorder::EndSeccompCall(seccomp, KernelRet(r, errno));
  return r;
}

// ---- threads ----

namespace {
struct ThreadStart {
  void* (*fn)(void*);
  void* arg;
  bool arm;      // false: a small stack of the program's own memory (see pthread_create)
  bool foreign;  // started by a task foreign to its storage (see ForeignTask)
};
// free() through a pointer the loader filled in at start-up (a GOT entry), not through the PLT:
// a lazy binding's first call saves 2.7 KiB of vector state on the stack, and a new thread's may
// be small (its first call of free in the process once crashed one: see pthread_create). The
// library is not linked with -z now, which cost each process 39 us more here (97 symbols).
void (*const volatile g_free)(void*) = free;
void* ArmedStart(void* p) {
  ThreadStart s = *static_cast<ThreadStart*>(p);
  g_free(p);
  if (s.foreign)
    iorr::recorder::MarkThreadForeign();
  else if (s.arm)
    iorr::recorder::DispatchArmThread();  // dispatch is per thread: arm the new one
  void* r = s.fn(s.arg);
  iorr::recorder::NoteThreadExit(0);  // start_thread leaves with 0 (seen without dispatch too)
  return r;
}
}  // namespace

// The main thread may leave with pthread_exit while others run on (see WriterMain). With
// dispatch the final exit syscall is seen too; this covers PLT-only recording.
IORR_EXPORT void pthread_exit(void* value) {
  iorr::recorder::NoteThreadExit(0);  // glibc leaves the thread with 0
  REAL(pthread_exit)(value);
  __builtin_unreachable();
}

// Room for the recording on a thread stack the program sized small. glibc lets a thread start
// with as little as 2 KiB of stack left after its static TLS, and the recording needs more: a
// trapped call's signal frame (AT_MINSIGSTKSZ, 3.6 KiB with AVX-512 state), the library's own
// frames (an exec's up to 25 KiB), and, under the audit module, the static TLS room iorr record
// asks glibc for (protocol.h), carved from every thread's stack. A thread that a program sized
// below kSmallStack gets kStackRoom more: unused, it is address space only. A stack of the
// program's own memory cannot grow: a small one runs without dispatch (wrappers only, said in a
// note), as a trap's signal frame alone could overrun it.
constexpr size_t kSmallStack = 1 << 20;
constexpr size_t kStackRoom = 64 << 10;

// The process's default stack size as glibc reports it, 0 if unknown.
size_t DefaultStackSize() {
  pthread_attr_t cur;
  size_t size = 0;
  if (pthread_getattr_default_np(&cur) != 0) return 0;
  if (pthread_attr_getstacksize(&cur, &size) != 0) size = 0;
  pthread_attr_destroy(&cur);
  return size;
}

// The default stack sizes this library set, room included (the last eight; 0: none). A size
// among them is not grown again: an attribute whose size 0 reads as the default, a program
// putting back a default it saved, a default a constructor set (through the wrapper) before the
// library's start.
std::atomic<size_t> g_grown_defaults[8];
std::atomic<unsigned> g_grown_next{0};
bool GrownBefore(size_t size) {
  for (auto& g : g_grown_defaults)
    if (g.load(std::memory_order_relaxed) == size) return true;
  return false;
}
void NoteGrown(size_t size) {
  if (!GrownBefore(size)) g_grown_defaults[g_grown_next.fetch_add(1) % 8].store(size);
}

// A copy of attributes `a` (whose stack size is `size`) with the room, when the size is small and
// not one that has it already (one this library produced; the default, which has it). The copy
// shares the original's CPU set and signal mask: pthread_create and pthread_setattr_default_np
// only read it, and it is never destroyed.
bool WithRoom(const pthread_attr_t* a, size_t size, pthread_attr_t* grown) {
  if (size >= kSmallStack || GrownBefore(size) || size == DefaultStackSize()) return false;
  memcpy(grown, a, sizeof(*grown));
  return pthread_attr_setstacksize(grown, size + kStackRoom) == 0;
}

// Threads made with the process's default attributes (pthread_create(NULL), thrd_create, which
// glibc calls inside itself) get the room through the default: made small by a small
// RLIMIT_STACK at start (GrowDefaultStack, from the library's constructor) or by the program
// (pthread_setattr_default_np, below). pthread_getattr_default_np then reports the larger size.
IORR_EXPORT int pthread_setattr_default_np(const pthread_attr_t* attr) {
  size_t size = 0;
  pthread_attr_t grown;
  // (A size of 0, "keep the default", reads as the current default: left as it is.)
  if (pthread_attr_getstacksize(attr, &size) == 0 && WithRoom(attr, size, &grown)) {
    int r = REAL(pthread_setattr_default_np)(&grown);
    if (r == 0) NoteGrown(size + kStackRoom);
    return r;
  }
  return REAL(pthread_setattr_default_np)(attr);
}

namespace iorr::recorder {
void GrowDefaultStack() {
  size_t size = DefaultStackSize();
  pthread_attr_t attr;
  if (size == 0 || size >= kSmallStack || GrownBefore(size) || pthread_attr_init(&attr) != 0)
    return;
  if (pthread_attr_setstacksize(&attr, size + kStackRoom) == 0 &&
      REAL(pthread_setattr_default_np)(&attr) == 0)
    NoteGrown(size + kStackRoom);
  pthread_attr_destroy(&attr);
}
}  // namespace iorr::recorder

IORR_EXPORT int pthread_create(pthread_t* t, const pthread_attr_t* attr, void* (*fn)(void*),
                               void* arg) {
  // A foreign task leaves the selector alone: it is the owner's, and the task is not armed.
  bool foreign = iorr::recorder::ForeignTask();
  if (!foreign) {
    iorr::recorder::PatchBeforeThread();
    iorr::recorder::OwnWriterTableBeforeThread();
  }
  char saved = iorr::recorder::t_hot.selector;
  if (!foreign)
    iorr::recorder::t_hot.selector = 0;  // clone3 with a new stack cannot run in a handler
  // The stack the thread will get: the attribute's (its size 0 reads as the process's default).
  // Without attributes the process's defaults apply, whose stack has the room already.
  pthread_attr_t grown;
  const pthread_attr_t* a = attr;
  size_t size = 0, given_size = 0;
  void* given = nullptr;
  bool arm = true;
  if (a != nullptr && pthread_attr_getstacksize(a, &size) == 0 && size < kSmallStack &&
      pthread_attr_getstack(a, &given, &given_size) == 0) {
    // No stack of the program's: glibc 2.36 reports its address as null minus the size (later
    // versions as null).
    bool own = !(given == nullptr || reinterpret_cast<uintptr_t>(given) + given_size == 0);
    if (own) {
      arm = false;
      iorr::recorder::NoteSmallStack(given_size);
    } else if (WithRoom(a, size, &grown)) {
      attr = &grown;
    }
  }
  auto* s = static_cast<ThreadStart*>(malloc(sizeof(ThreadStart)));
  int r;
  if (s == nullptr) {
    r = REAL(pthread_create)(t, attr, fn, arg);
  } else {
    s->fn = fn;
    s->arg = arg;
    s->arm = arm;
    s->foreign = foreign;
    r = REAL(pthread_create)(t, attr, ArmedStart, s);
    if (r != 0) free(s);
  }
  if (!foreign) iorr::recorder::t_hot.selector = saved;
  return r;
}

// ---- directory streams ----
//
// glibc's readdir refills its buffer with an internal getdents64 that would trap (dispatch) on
// every refill; rm -rf and find spend most of their calls there. These are glibc 2.36's
// algorithms over the recorded calls, so the kernel sees the same calls, recorded at wrapper
// cost. DIR is opaque to programs, and glibc's own users of directory streams (scandir, nftw,
// glob) use its internal functions with its own DIR, so the two never mix.

namespace {
struct RecDir {
  int fd;
  size_t size;    // bytes in data
  size_t offset;  // next entry
  off_t filepos;
  int errcode;
  char data[32768] __attribute__((aligned(alignof(struct dirent64))));
};

DIR* AllocDir(int fd, bool close_fd) {
  if (!close_fd && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) return nullptr;
  auto* d = static_cast<RecDir*>(malloc(sizeof(RecDir)));
  if (d == nullptr) {
    if (close_fd) close(fd);
    errno = ENOMEM;
    return nullptr;
  }
  d->fd = fd;
  d->size = d->offset = 0;
  d->filepos = 0;
  d->errcode = 0;
  return reinterpret_cast<DIR*>(d);
}

DIR* OpendirTail(int fd) {
  if (fd < 0) return nullptr;
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return nullptr;
  }
  if (!S_ISDIR(st.st_mode)) {
    close(fd);
    errno = ENOTDIR;
    return nullptr;
  }
  return AllocDir(fd, true);
}
}  // namespace

IORR_EXPORT DIR* opendir(const char* name) {
  if (name[0] == 0) {
    errno = ENOENT;
    return nullptr;
  }
  return OpendirTail(open(name, O_RDONLY | O_NONBLOCK | O_DIRECTORY | O_CLOEXEC));
}

IORR_EXPORT DIR* fdopendir(int fd) {
  struct stat st;
  if (fstat(fd, &st) < 0) return nullptr;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return nullptr;
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags == -1) return nullptr;
  if ((flags & O_ACCMODE) == O_WRONLY) {
    errno = EINVAL;
    return nullptr;
  }
  return AllocDir(fd, false);
}

IORR_EXPORT struct dirent64* readdir64(DIR* dir) {
  auto* d = reinterpret_cast<RecDir*>(dir);
  struct dirent64* dp;
  int saved = errno;
  do {
    if (d->offset >= d->size) {
      ssize_t n = getdents64(d->fd, d->data, sizeof(d->data));
      if (n <= 0) {
        // Don't modify errno when reaching the end (or for a directory deleted meanwhile).
        if (n == 0 || errno == ENOENT) errno = saved;
        return nullptr;
      }
      d->size = static_cast<size_t>(n);
      d->offset = 0;
    }
    dp = reinterpret_cast<struct dirent64*>(&d->data[d->offset]);
    d->offset += dp->d_reclen;
    d->filepos = dp->d_off;
  } while (dp->d_ino == 0);  // deleted entries
  return dp;
}

IORR_EXPORT struct dirent* readdir(DIR* dir) {
  static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "x86_64: the same layout");
  return reinterpret_cast<struct dirent*>(readdir64(dir));
}

IORR_EXPORT int readdir64_r(DIR* dir, struct dirent64* entry, struct dirent64** result) {
  int saved = errno;
  errno = 0;
  struct dirent64* dp = readdir64(dir);
  int err = errno;
  errno = saved;
  if (dp == nullptr) {
    *result = nullptr;
    return err;
  }
  memcpy(entry, dp, dp->d_reclen < sizeof(*entry) ? dp->d_reclen : sizeof(*entry));
  *result = entry;
  return 0;
}

IORR_EXPORT int readdir_r(DIR* dir, struct dirent* entry, struct dirent** result) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return readdir64_r(dir, reinterpret_cast<struct dirent64*>(entry),
                     reinterpret_cast<struct dirent64**>(result));
#pragma GCC diagnostic pop
}

IORR_EXPORT int closedir(DIR* dir) {
  auto* d = reinterpret_cast<RecDir*>(dir);
  int fd = d->fd;
  free(d);
  return close(fd);
}

IORR_EXPORT void rewinddir(DIR* dir) {
  auto* d = reinterpret_cast<RecDir*>(dir);
  lseek(d->fd, 0, SEEK_SET);
  d->filepos = 0;
  d->offset = d->size = 0;
  d->errcode = 0;
}

IORR_EXPORT long telldir(DIR* dir) { return reinterpret_cast<RecDir*>(dir)->filepos; }

IORR_EXPORT void seekdir(DIR* dir, long pos) {
  auto* d = reinterpret_cast<RecDir*>(dir);
  lseek(d->fd, pos, SEEK_SET);
  d->size = d->offset = 0;
  d->filepos = pos;
}

IORR_EXPORT int dirfd(DIR* dir) { return reinterpret_cast<RecDir*>(dir)->fd; }

namespace iorr::recorder {
// Most in libc's own hash table (elf_next.h): dlsym's fixed costs (its error catching, the
// loader's lock, finding the caller's object) made the 180-odd lookups 40 to 60 us of every
// recorded process's start. dlsym for the rest, and for all of them where the loader's lookup
// follows rules the hash table does not show: LD_DYNAMIC_WEAK (a strong definition after libc
// beats libc's weak one), or an audit module besides the recorder's (its la_symbind may change
// what dlsym returns).
bool OnlyDlsym() {
  if (getenv("LD_DYNAMIC_WEAK") != nullptr) return true;  // set at all, even empty (glibc)
  auto ends_with = [](const char* p, size_t len, const char* ours) {
    size_t n = strlen(ours);
    return len >= n && memcmp(p + len - n, ours, n) == 0;
  };
  for (const char* p = getenv("LD_AUDIT"); p != nullptr && *p != 0;) {
    const char* end = strchr(p, ':');
    size_t len = end ? static_cast<size_t>(end - p) : strlen(p);
    if (len > 0 && !ends_with(p, len, "/libiorr-audit.so") &&
        !ends_with(p, len, "/libiorr-audit-chained.so"))
      return true;
    p = end ? end + 1 : nullptr;
  }
  return false;
}

void ResolveAllReals() {
  Dl_info info;
  link_map* self = nullptr;
  if (OnlyDlsym() || dladdr1(reinterpret_cast<void*>(&ResolveAllReals), &info,
                             reinterpret_cast<void**>(&self), RTLD_DL_LINKMAP) == 0)
    self = nullptr;
  NextInLibc next(self);
  for (int i = 0; i < g_nreals; ++i) {
    if (*g_reals[i].slot != nullptr) continue;
    if (!next.Find(g_reals[i].name, g_reals[i].slot))
      *g_reals[i].slot = dlsym(RTLD_NEXT, g_reals[i].name);
  }
}
}  // namespace iorr::recorder
