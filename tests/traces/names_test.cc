// Tests of traces/names.h: strace's spellings of argument values, errnos and syscall names.
// The expected strings come from strace 6.1 output on x86_64 unless a comment says otherwise.
#include "traces/names.h"

#include "traces/block.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace iorr::trace {
namespace {

std::string Fmt(ArgKind k, int64_t v) {
  std::string out;
  AppendArg(out, k, v);
  return out;
}

std::string KindName(ArgKind k) { return std::to_string(static_cast<int>(k)); }

constexpr ArgKind kLastKind = ArgKind::kInt;

// Every kind that stores an integer (all but the string kinds and kBuf).
std::vector<ArgKind> IntegerKinds() {
  std::vector<ArgKind> kinds;
  for (int i = 0; i <= static_cast<int>(kLastKind); ++i) {
    ArgKind k = static_cast<ArgKind>(i);
    if (IsStored(k) && !IsString(k)) kinds.push_back(k);
  }
  return kinds;
}

int64_t FdPair(int32_t a, int32_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(static_cast<uint32_t>(a)) |
                              static_cast<uint64_t>(static_cast<uint32_t>(b)) << 32);
}

struct Case {
  ArgKind kind;
  int64_t value;
  std::string_view text;
};

// ---------------------------------------------------------------------------------------------
// AppendArg

TEST(AppendArgTest, ExamplesFromTheInterface) {
  EXPECT_EQ(Fmt(ArgKind::kOpenFlags, 0x241), "O_WRONLY|O_CREAT|O_TRUNC");
  EXPECT_EQ(Fmt(ArgKind::kOpenFlags, 0), "O_RDONLY");
  EXPECT_EQ(Fmt(ArgKind::kOpenFlags, 0x40000000), "O_RDONLY|0x40000000");
  EXPECT_EQ(Fmt(ArgKind::kOpenHow, O_RDONLY | O_CLOEXEC), "O_RDONLY|O_CLOEXEC");
  EXPECT_EQ(Fmt(ArgKind::kMode, 0644), "0644");
  EXPECT_EQ(Fmt(ArgKind::kMode, 0), "000");
  EXPECT_EQ(Fmt(ArgKind::kDirFd, -100), "AT_FDCWD");
  EXPECT_EQ(Fmt(ArgKind::kDirFd, 3), "3");
  EXPECT_EQ(Fmt(ArgKind::kFd, 3), "3");
  EXPECT_EQ(Fmt(ArgKind::kWhence, 0), "SEEK_SET");
  EXPECT_EQ(Fmt(ArgKind::kAtFlags, 0x100), "AT_SYMLINK_NOFOLLOW");
  EXPECT_EQ(Fmt(ArgKind::kAtFlags, 0), "0");
  EXPECT_EQ(Fmt(ArgKind::kAccessMode, 0), "F_OK");
  EXPECT_EQ(Fmt(ArgKind::kAccessMode, 6), "R_OK|W_OK");
  EXPECT_EQ(Fmt(ArgKind::kFcntlCmd, 1), "F_GETFD");
  EXPECT_EQ(Fmt(ArgKind::kAddr, 0x7f1234567000), "0x7f1234567000");
  EXPECT_EQ(Fmt(ArgKind::kAddr, 0), "NULL");
  EXPECT_EQ(Fmt(ArgKind::kOffsetPtr, -1), "NULL");
  EXPECT_EQ(Fmt(ArgKind::kOffsetPtr, 5), "[5]");
  EXPECT_EQ(Fmt(ArgKind::kFdPair, FdPair(3, 4)), "[3, 4]");
  EXPECT_EQ(Fmt(ArgKind::kDev, static_cast<int64_t>(makedev(8, 1))), "makedev(0x8, 0x1)");
  EXPECT_EQ(Fmt(ArgKind::kSysNr, 12), "brk");
  EXPECT_EQ(Fmt(ArgKind::kStatxMask, 0x7ff), "STATX_BASIC_STATS");
  EXPECT_EQ(Fmt(ArgKind::kCloneFlags, CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD),
            "CLONE_VM|CLONE_FS|CLONE_FILES|SIGCHLD");
  EXPECT_EQ(Fmt(ArgKind::kIoctlReq, FICLONE), "FICLONE");
  EXPECT_EQ(Fmt(ArgKind::kIoctlReq, FIONREAD), "FIONREAD");
  EXPECT_EQ(Fmt(ArgKind::kIoctlReq, TCGETS), "TCGETS");
  EXPECT_EQ(Fmt(ArgKind::kIoctlReq, FS_IOC_GETFLAGS), "FS_IOC_GETFLAGS");
  EXPECT_EQ(Fmt(ArgKind::kIoctlReq, 0x1234), "0x1234");
  EXPECT_EQ(Fmt(ArgKind::kInt, -42), "-42");
}

TEST(AppendArgTest, AppendsWithoutTouchingWhatIsThere) {
  std::string out = "openat(";
  AppendArg(out, ArgKind::kDirFd, AT_FDCWD);
  out += ", ";
  AppendArg(out, ArgKind::kOpenFlags, O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(out, "openat(AT_FDCWD, O_RDONLY|O_CLOEXEC");
}

// Lines of `strace -o out ./probe` (strace 6.1), argument by argument.
const Case kStraceOutput[] = {
    // openat(AT_FDCWD, "/nonexistent/x", ...)
    {ArgKind::kOpenFlags, O_SYNC, "O_RDONLY|O_SYNC"},
    {ArgKind::kOpenFlags, O_DSYNC, "O_RDONLY|O_DSYNC"},
    {ArgKind::kOpenFlags, O_TMPFILE | O_RDWR, "O_RDWR|O_TMPFILE"},
    {ArgKind::kOpenFlags, 3, "O_ACCMODE"},
    {ArgKind::kOpenFlags, 0100000 | O_DIRECT, "O_RDONLY|O_DIRECT|O_LARGEFILE"},
    {ArgKind::kOpenFlags, O_PATH, "O_RDONLY|O_PATH"},
    {ArgKind::kOpenFlags,
     O_RDWR | O_CREAT | O_EXCL | O_NOCTTY | O_APPEND | O_NONBLOCK | O_NOFOLLOW | O_NOATIME |
         O_CLOEXEC | O_DIRECTORY | FASYNC,
     "O_RDWR|O_CREAT|O_EXCL|O_NOCTTY|O_APPEND|O_NONBLOCK|O_NOFOLLOW|O_NOATIME|O_CLOEXEC|"
     "O_DIRECTORY|FASYNC"},
    {ArgKind::kOpenFlags, 0x400000, "O_RDONLY|__O_TMPFILE"},
    // chmod, mknodat, umask
    {ArgKind::kMode, 04755, "04755"},
    {ArgKind::kMode, 022, "022"},
    {ArgKind::kMode, S_IFCHR | 0600, "S_IFCHR|0600"},
    {ArgKind::kMode, S_IFREG | S_ISUID | 0755, "S_IFREG|S_ISUID|0755"},
    {ArgKind::kMode, S_IFIFO, "S_IFIFO|000"},
    {ArgKind::kDev, static_cast<int64_t>(makedev(259, 65539)), "makedev(0x103, 0x10003)"},
    // lseek
    {ArgKind::kWhence, 1, "SEEK_CUR"},
    {ArgKind::kWhence, 2, "SEEK_END"},
    {ArgKind::kWhence, 3, "SEEK_DATA"},
    {ArgKind::kWhence, 4, "SEEK_HOLE"},
    {ArgKind::kWhence, 5, "0x5"},  // strace adds " /* SEEK_??? */"
    {ArgKind::kOffset, -5, "-5"},
    {ArgKind::kOffset, INT64_MAX, "9223372036854775807"},
    // newfstatat, statx
    {ArgKind::kAtFlags, 0x200 | 0x1000, "AT_REMOVEDIR|AT_EMPTY_PATH"},
    {ArgKind::kAtFlags, 0x40000000, "0x40000000"},
    {ArgKind::kAtFlags, 0x400, "AT_SYMLINK_FOLLOW"},
    {ArgKind::kAtFlags, 0x800, "AT_NO_AUTOMOUNT"},
    {ArgKind::kAtFlags, 0x8000, "AT_RECURSIVE"},
    {ArgKind::kAtFlags, AT_STATX_FORCE_SYNC | AT_SYMLINK_NOFOLLOW,
     "AT_STATX_FORCE_SYNC|AT_SYMLINK_NOFOLLOW"},
    {ArgKind::kAtFlags, AT_STATX_DONT_SYNC, "AT_STATX_DONT_SYNC"},
    {ArgKind::kStatxMask, 0x17ff, "STATX_BASIC_STATS|STATX_MNT_ID"},
    {ArgKind::kStatxMask, 0xfff, "STATX_ALL"},
    {ArgKind::kStatxMask, 0, "0"},
    {ArgKind::kStatxMask, 0x246, "STATX_MODE|STATX_NLINK|STATX_MTIME|STATX_SIZE"},
    {ArgKind::kStatxMask, 0x80000000, "0x80000000"},
    // faccessat
    {ArgKind::kAccessMode, 7, "R_OK|W_OK|X_OK"},
    {ArgKind::kAccessMode, 1, "X_OK"},
    {ArgKind::kAccessMode, 8, "0x8"},
    // fcntl
    {ArgKind::kFcntlCmd, 0, "F_DUPFD"},
    {ArgKind::kFcntlCmd, 2, "F_SETFD"},
    {ArgKind::kFcntlCmd, 3, "F_GETFL"},
    {ArgKind::kFcntlCmd, 4, "F_SETFL"},
    {ArgKind::kFcntlCmd, 5, "F_GETLK"},
    {ArgKind::kFcntlCmd, 6, "F_SETLK"},
    {ArgKind::kFcntlCmd, 7, "F_SETLKW"},
    {ArgKind::kFcntlCmd, 8, "F_SETOWN"},
    {ArgKind::kFcntlCmd, 9, "F_GETOWN"},
    {ArgKind::kFcntlCmd, 10, "F_SETSIG"},
    {ArgKind::kFcntlCmd, 11, "F_GETSIG"},
    {ArgKind::kFcntlCmd, 12, "F_GETLK64"},
    {ArgKind::kFcntlCmd, 13, "F_SETLK64"},
    {ArgKind::kFcntlCmd, 14, "F_SETLKW64"},
    {ArgKind::kFcntlCmd, 15, "F_SETOWN_EX"},
    {ArgKind::kFcntlCmd, 16, "F_GETOWN_EX"},
    {ArgKind::kFcntlCmd, 17, "F_GETOWNER_UIDS"},
    {ArgKind::kFcntlCmd, 36, "F_OFD_GETLK"},
    {ArgKind::kFcntlCmd, 37, "F_OFD_SETLK"},
    {ArgKind::kFcntlCmd, 38, "F_OFD_SETLKW"},
    {ArgKind::kFcntlCmd, 1024, "F_SETLEASE"},
    {ArgKind::kFcntlCmd, 1025, "F_GETLEASE"},
    {ArgKind::kFcntlCmd, 1026, "F_NOTIFY"},
    {ArgKind::kFcntlCmd, 1029, "F_CANCELLK"},
    {ArgKind::kFcntlCmd, 1030, "F_DUPFD_CLOEXEC"},
    {ArgKind::kFcntlCmd, 1031, "F_SETPIPE_SZ"},
    {ArgKind::kFcntlCmd, 1032, "F_GETPIPE_SZ"},
    {ArgKind::kFcntlCmd, 1033, "F_ADD_SEALS"},
    {ArgKind::kFcntlCmd, 1034, "F_GET_SEALS"},
    {ArgKind::kFcntlCmd, 99, "0x63"},
    // preadv2
    {ArgKind::kRwfFlags, 0, "0"},
    {ArgKind::kRwfFlags, 1, "RWF_HIPRI"},
    {ArgKind::kRwfFlags, 0x1f, "RWF_HIPRI|RWF_DSYNC|RWF_SYNC|RWF_NOWAIT|RWF_APPEND"},
    {ArgKind::kRwfFlags, 0x100, "0x100"},
    // renameat2, setxattr
    {ArgKind::kRenameFlags, 0, "0"},
    {ArgKind::kRenameFlags, 1, "RENAME_NOREPLACE"},
    {ArgKind::kRenameFlags, 2, "RENAME_EXCHANGE"},
    {ArgKind::kRenameFlags, 4, "RENAME_WHITEOUT"},
    {ArgKind::kRenameFlags, 8, "0x8"},
    {ArgKind::kXattrFlags, 0, "0"},
    {ArgKind::kXattrFlags, 1, "XATTR_CREATE"},
    {ArgKind::kXattrFlags, 2, "XATTR_REPLACE"},
    {ArgKind::kXattrFlags, 3, "XATTR_CREATE|XATTR_REPLACE"},
    // fallocate
    {ArgKind::kFallocMode, 0, "0"},
    {ArgKind::kFallocMode, 1, "FALLOC_FL_KEEP_SIZE"},
    {ArgKind::kFallocMode, 3, "FALLOC_FL_KEEP_SIZE|FALLOC_FL_PUNCH_HOLE"},
    {ArgKind::kFallocMode, 4, "FALLOC_FL_NO_HIDE_STALE"},
    {ArgKind::kFallocMode, 8, "FALLOC_FL_COLLAPSE_RANGE"},
    {ArgKind::kFallocMode, 0x10, "FALLOC_FL_ZERO_RANGE"},
    {ArgKind::kFallocMode, 0x20, "FALLOC_FL_INSERT_RANGE"},
    {ArgKind::kFallocMode, 0x40, "FALLOC_FL_UNSHARE_RANGE"},
    {ArgKind::kFallocMode, 0x100, "0x100"},
    // sync_file_range, msync, close_range
    {ArgKind::kSyncRangeFlags, 0, "0"},
    {ArgKind::kSyncRangeFlags, 7,
     "SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER"},
    {ArgKind::kSyncRangeFlags, 8, "0x8"},
    {ArgKind::kMsyncFlags, 0, "0"},
    {ArgKind::kMsyncFlags, 1, "MS_ASYNC"},
    {ArgKind::kMsyncFlags, 2, "MS_INVALIDATE"},
    {ArgKind::kMsyncFlags, 4, "MS_SYNC"},
    {ArgKind::kMsyncFlags, 6, "MS_SYNC|MS_INVALIDATE"},
    {ArgKind::kMsyncFlags, 8, "0x8"},
    {ArgKind::kCloseRangeFlags, 0, "0"},
    {ArgKind::kCloseRangeFlags, 6, "CLOSE_RANGE_UNSHARE|CLOSE_RANGE_CLOEXEC"},
    {ArgKind::kCloseRangeFlags, 8, "0x8"},
    // fadvise64
    {ArgKind::kAdvice, 0, "POSIX_FADV_NORMAL"},
    {ArgKind::kAdvice, 1, "POSIX_FADV_RANDOM"},
    {ArgKind::kAdvice, 2, "POSIX_FADV_SEQUENTIAL"},
    {ArgKind::kAdvice, 3, "POSIX_FADV_WILLNEED"},
    {ArgKind::kAdvice, 4, "POSIX_FADV_DONTNEED"},
    {ArgKind::kAdvice, 5, "POSIX_FADV_NOREUSE"},
    {ArgKind::kAdvice, 6, "0x6"},
    // ioctl (strace prints "BTRFS_IOC_CLONE or FICLONE" and _IOC(...) for unknown requests)
    {ArgKind::kIoctlReq, static_cast<int64_t>(FICLONERANGE), "FICLONERANGE"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FIDEDUPERANGE), "FIDEDUPERANGE"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FS_IOC_SETFLAGS), "FS_IOC_SETFLAGS"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FIBMAP), "FIBMAP"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FIGETBSZ), "FIGETBSZ"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FIFREEZE), "FIFREEZE"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FITHAW), "FITHAW"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FITRIM), "FITRIM"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(BLKGETSIZE64), "BLKGETSIZE64"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(BLKSSZGET), "BLKSSZGET"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FIONBIO), "FIONBIO"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FIOCLEX), "FIOCLEX"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FIONCLEX), "FIONCLEX"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(TIOCGWINSZ), "TIOCGWINSZ"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FS_IOC_FIEMAP), "FS_IOC_FIEMAP"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FS_IOC_FSGETXATTR), "FS_IOC_FSGETXATTR"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(FS_IOC_GETVERSION), "FS_IOC_GETVERSION"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(BLKDISCARD), "BLKDISCARD"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(BLKFLSBUF), "BLKFLSBUF"},
    {ArgKind::kIoctlReq, static_cast<int64_t>(TIOCGPGRP), "TIOCGPGRP"},
    // flock
    {ArgKind::kFlockOp, 1, "LOCK_SH"},
    {ArgKind::kFlockOp, 2, "LOCK_EX"},
    {ArgKind::kFlockOp, 4, "LOCK_NB"},
    {ArgKind::kFlockOp, 8, "LOCK_UN"},
    {ArgKind::kFlockOp, 6, "LOCK_EX|LOCK_NB"},
    {ArgKind::kFlockOp, 32, "LOCK_MAND"},
    {ArgKind::kFlockOp, 64, "LOCK_READ"},
    {ArgKind::kFlockOp, 128, "LOCK_WRITE"},
    {ArgKind::kFlockOp, 192, "LOCK_RW"},
    {ArgKind::kFlockOp, 0, "0"},
    {ArgKind::kFlockOp, 0x400, "0x400"},
    // mmap
    {ArgKind::kProt, 0, "PROT_NONE"},
    {ArgKind::kProt, 1, "PROT_READ"},
    {ArgKind::kProt, 3, "PROT_READ|PROT_WRITE"},
    {ArgKind::kProt, 5, "PROT_READ|PROT_EXEC"},
    {ArgKind::kProt, 8, "PROT_SEM"},
    {ArgKind::kProt, 0x01000000, "PROT_GROWSDOWN"},
    {ArgKind::kProt, 0x02000000, "PROT_GROWSUP"},
    {ArgKind::kProt, 0x10, "0x10"},
    {ArgKind::kMapFlags, MAP_SHARED, "MAP_SHARED"},
    {ArgKind::kMapFlags, MAP_PRIVATE | MAP_FIXED, "MAP_PRIVATE|MAP_FIXED"},
    {ArgKind::kMapFlags, MAP_PRIVATE | MAP_ANONYMOUS, "MAP_PRIVATE|MAP_ANONYMOUS"},
    {ArgKind::kMapFlags, MAP_PRIVATE | MAP_FIXED | MAP_DENYWRITE,
     "MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE"},
    {ArgKind::kMapFlags, MAP_SHARED_VALIDATE | MAP_SYNC, "MAP_SHARED_VALIDATE|MAP_SYNC"},
    {ArgKind::kMapFlags, MAP_PRIVATE | MAP_HUGETLB | (21 << MAP_HUGE_SHIFT),
     "MAP_PRIVATE|MAP_HUGETLB|21<<MAP_HUGE_SHIFT"},
    {ArgKind::kMapFlags, 0, "MAP_FILE"},
    {ArgKind::kMapFlags, MAP_FIXED, "MAP_FILE|MAP_FIXED"},
    {ArgKind::kMapFlags,
     MAP_PRIVATE | MAP_POPULATE | MAP_NORESERVE | MAP_STACK | MAP_32BIT | MAP_GROWSDOWN |
         MAP_LOCKED | MAP_NONBLOCK | MAP_EXECUTABLE | MAP_FIXED_NOREPLACE,
     "MAP_PRIVATE|MAP_32BIT|MAP_NORESERVE|MAP_POPULATE|MAP_NONBLOCK|MAP_GROWSDOWN|"
     "MAP_EXECUTABLE|MAP_LOCKED|MAP_STACK|MAP_FIXED_NOREPLACE"},
    {ArgKind::kMapFlags, 0xf, "0xf"},
    {ArgKind::kMapFlags, MAP_PRIVATE | 0x4000000, "MAP_PRIVATE|1<<MAP_HUGE_SHIFT"},
    {ArgKind::kMapFlags, 4, "0x4"},
    // clone, clone3
    {ArgKind::kCloneFlags, CLONE_FS | CLONE_NEWNS | SIGCHLD, "CLONE_FS|CLONE_NEWNS|SIGCHLD"},
    {ArgKind::kCloneFlags, CLONE_SIGHAND, "CLONE_SIGHAND"},
    {ArgKind::kCloneFlags, CLONE_SIGHAND | 34, "CLONE_SIGHAND|SIGRT_2"},
    {ArgKind::kCloneFlags,
     CLONE_SIGHAND | CLONE_FILES | CLONE_PTRACE | CLONE_SETTLS | CLONE_PARENT_SETTID |
         CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID | 0x400000 | CLONE_IO | CLONE_THREAD | SIGKILL,
     "CLONE_FILES|CLONE_SIGHAND|CLONE_PTRACE|CLONE_THREAD|CLONE_SETTLS|CLONE_PARENT_SETTID|"
     "CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|CLONE_IO|0x400000|SIGKILL"},
    {ArgKind::kCloneFlags,
     CLONE_SIGHAND | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC |
         CLONE_NEWCGROUP | CLONE_SYSVSEM | CLONE_UNTRACED | CLONE_VFORK | CLONE_PARENT |
         CLONE_PIDFD | 65,
     "CLONE_SIGHAND|CLONE_PIDFD|CLONE_VFORK|CLONE_PARENT|CLONE_SYSVSEM|CLONE_UNTRACED|"
     "CLONE_NEWCGROUP|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|65"},
    {ArgKind::kCloneFlags, static_cast<int64_t>(0x100000000ULL | 0x200000000ULL | CLONE_SIGHAND),
     "CLONE_SIGHAND|CLONE_CLEAR_SIGHAND|CLONE_INTO_CGROUP"},
    // pipe2, socketpair, syscall(500), read, pread64, chown, fchown
    {ArgKind::kFdPair, FdPair(3, 4), "[3, 4]"},
    {ArgKind::kSysNr, 500, "500"},  // strace: syscall_0x1f4(...)
    {ArgKind::kSize, -1, "18446744073709551615"},
    {ArgKind::kOffset, -1, "-1"},
    {ArgKind::kId, -1, "-1"},
    {ArgKind::kId, 1000, "1000"},
    {ArgKind::kId, 4294967294, "4294967294"},
    {ArgKind::kAddr, 0x1000, "0x1000"},
};

TEST(AppendArgTest, MatchesStrace) {
  for (const Case& c : kStraceOutput) {
    EXPECT_EQ(Fmt(c.kind, c.value), c.text) << "kind " << KindName(c.kind);
    EXPECT_EQ(ParseArg(c.kind, c.text), c.value) << c.text;
  }
}

TEST(AppendArgTest, StringKindsPrintDecimal) {
  EXPECT_EQ(Fmt(ArgKind::kPath, 7), "7");
  EXPECT_EQ(Fmt(ArgKind::kStr, -7), "-7");
  EXPECT_EQ(Fmt(ArgKind::kBuf, 0), "0");
}

// ---------------------------------------------------------------------------------------------
// Round trips

std::vector<int64_t> SampleValues() {
  std::vector<int64_t> values = {
      0,
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8,
      12,
      17,
      31,
      32,
      34,
      64,
      65,
      100,
      0xff,
      0x100,
      0x1ff,
      0x7ff,
      0xfff,
      0x1000,
      0x241,
      0x8000,
      0x40000000,
      0x7fffffff,
      0x80000000,
      0xffffffff,
      0x100000000,
      0x1ffffffff,
      -1,
      -2,
      -100,
      0644,
      0100644,
      020200000,
      04010000,
      std::numeric_limits<int64_t>::min(),
      std::numeric_limits<int64_t>::max(),
      static_cast<int64_t>(FICLONE),
      static_cast<int64_t>(FS_IOC_GETFLAGS),
      static_cast<int64_t>(makedev(0x123456, 0x789abc)),
      FdPair(-1, 7),
      FdPair(1 << 30, -5),
      MAP_PRIVATE | MAP_HUGETLB | (30 << MAP_HUGE_SHIFT),
      CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
          CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
  };
  std::mt19937_64 rng(20240611);
  for (int i = 0; i < 3000; ++i) {
    uint64_t r = rng();
    switch (i % 5) {
      case 0:
        values.push_back(static_cast<int64_t>(r));
        break;
      case 1:
        values.push_back(static_cast<int64_t>(r & rng() & rng()));
        break;  // sparse
      case 2:
        values.push_back(static_cast<int64_t>(r & 0xffffffff));
        break;
      case 3:
        values.push_back(static_cast<int64_t>(r % 1100));
        break;
      default:
        values.push_back(-static_cast<int64_t>(r % 1000));
        break;
    }
  }
  return values;
}

TEST(RoundTripTest, EveryIntegerKindReadsBackWhatItPrints) {
  const std::vector<int64_t> values = SampleValues();
  for (ArgKind k : IntegerKinds()) {
    for (int64_t v : values) {
      if (k == ArgKind::kId && v == 0xffffffff) continue;  // prints "-1", see below
      const std::string text = Fmt(k, v);
      std::optional<int64_t> back = ParseArg(k, text);
      ASSERT_TRUE(back.has_value()) << "kind " << KindName(k) << " value " << v << " text " << text;
      ASSERT_EQ(*back, v) << "kind " << KindName(k) << " text " << text;
    }
  }
}

TEST(RoundTripTest, IdMinusOneAndItsUnsignedSpellingBothPrintMinusOne) {
  EXPECT_EQ(Fmt(ArgKind::kId, 0xffffffff), "-1");
  EXPECT_EQ(ParseArg(ArgKind::kId, "-1"), -1);
  EXPECT_EQ(ParseArg(ArgKind::kId, "4294967295"), 4294967295);
}

TEST(RoundTripTest, EverySyscallNameReadsBack) {
  int named = 0;
  for (int nr = 0; nr < 1024; ++nr) {
    std::string_view name = SyscallName(nr);
    if (name.empty()) continue;
    ++named;
    EXPECT_EQ(Fmt(ArgKind::kSysNr, nr), name);
    EXPECT_EQ(ParseArg(ArgKind::kSysNr, name), nr);
  }
  EXPECT_GT(named, 300);
}

// ---------------------------------------------------------------------------------------------
// ParseArg: strace's other spellings

struct ParseCase {
  ArgKind kind;
  std::string_view text;
  int64_t value;
};

const ParseCase kStraceSpellings[] = {
    // strace -y: fds followed by their paths
    {ArgKind::kFd, "3</tmp/x>", 3},
    {ArgKind::kFd, "3</etc/ld.so.cache>", 3},
    {ArgKind::kFd, "7<socket:[1234]>", 7},
    {ArgKind::kFd, "5<UNIX:[123->456]>", 5},
    {ArgKind::kFd, "9</a dir/with, comma>", 9},
    {ArgKind::kFd, "-1", -1},
    {ArgKind::kDirFd, "AT_FDCWD", -100},
    {ArgKind::kDirFd, "AT_FDCWD</cwd>", -100},
    {ArgKind::kDirFd, "4</tmp>", 4},
    {ArgKind::kFdPair, "[3<pipe:[22871]>, 4<pipe:[22871]>]", FdPair(3, 4)},
    {ArgKind::kFdPair, "[5</x, y>, 6</z>]", FdPair(5, 6)},
    {ArgKind::kFdPair, "[3,4]", FdPair(3, 4)},
    // integers
    {ArgKind::kMode, "0644", 0644},
    {ArgKind::kInt, "0x1f", 0x1f},
    {ArgKind::kInt, "-12", -12},
    {ArgKind::kSize, "18446744073709551615", -1},
    {ArgKind::kOffset, "-9223372036854775808", std::numeric_limits<int64_t>::min()},
    {ArgKind::kAddr, "NULL", 0},
    {ArgKind::kAddr, "0x7f0dc5412000", 0x7f0dc5412000},
    {ArgKind::kAddr, "child_stack=NULL", 0},
    {ArgKind::kId, "4294967294", 4294967294},
    // pointers to offsets: copy_file_range, sendfile
    {ArgKind::kOffsetPtr, "NULL", -1},
    {ArgKind::kOffsetPtr, "[5]", 5},
    {ArgKind::kOffsetPtr, "[0 => 1024]", 0},
    {ArgKind::kOffsetPtr, "[7] => [1031]", 7},
    {ArgKind::kDev, "makedev(0x8, 0x1)", static_cast<int64_t>(makedev(8, 1))},
    {ArgKind::kDev, "makedev(8, 1)", static_cast<int64_t>(makedev(8, 1))},
    {ArgKind::kDev, "makedev(0, 0)", 0},
    // flag expressions
    {ArgKind::kOpenFlags, "O_RDONLY|O_CLOEXEC", O_CLOEXEC},
    {ArgKind::kOpenFlags, "O_CLOEXEC", O_CLOEXEC},  // pipe2 and dup3 omit the access mode
    {ArgKind::kOpenFlags, "O_WRONLY|O_CREAT|O_TRUNC", 0x241},
    {ArgKind::kOpenFlags, "O_RDWR|O_NDELAY", O_RDWR | O_NONBLOCK},
    {ArgKind::kOpenFlags, "O_RDONLY|0x40000000", 0x40000000},
    {ArgKind::kOpenFlags, "0x241 /* O_WRONLY|O_CREAT|O_TRUNC */", 0x241},  // strace -X verbose
    {ArgKind::kMode, "S_IFREG|0644", S_IFREG | 0644},
    {ArgKind::kMode, "S_IFCHR|0600", S_IFCHR | 0600},
    {ArgKind::kMode, "S_IFIFO|000", S_IFIFO},
    {ArgKind::kMode, "S_ISUID|S_ISGID|0755", S_ISUID | S_ISGID | 0755},
    {ArgKind::kWhence, "0x5 /* SEEK_??? */", 5},
    {ArgKind::kWhence, "SEEK_END", 2},
    {ArgKind::kAtFlags, "AT_STATX_SYNC_AS_STAT", 0},
    {ArgKind::kAtFlags, "AT_STATX_SYNC_AS_STAT|AT_SYMLINK_NOFOLLOW", 0x100},
    {ArgKind::kAtFlags, "AT_SYMLINK_NOFOLLOW|AT_EACCESS", 0x300},
    {ArgKind::kAtFlags, "AT_STATX_SYNC_AS_STAT|AT_SYMLINK_NOFOLLOW|AT_NO_AUTOMOUNT", 0x900},
    {ArgKind::kAtFlags, "0x6000 /* AT_??? */", 0x6000},
    {ArgKind::kAccessMode, "0x8 /* ?_OK */", 8},
    {ArgKind::kFcntlCmd, "0x40b /* F_??? */", 0x40b},
    {ArgKind::kRenameFlags, "0x8 /* RENAME_?? */", 8},
    {ArgKind::kFallocMode, "FALLOC_FL_ALLOCATE_RANGE", 0},
    {ArgKind::kSyncRangeFlags, "SYNC_FILE_RANGE_WRITE_AND_WAIT", 7},
    {ArgKind::kStatxMask, "STATX_ALL", 0xfff},
    {ArgKind::kStatxMask, "STATX_TYPE|STATX_MODE", 3},
    {ArgKind::kStatxMask, "STATX_BASIC_STATS|STATX_BTIME|STATX_MNT_ID", 0x1fff},
    {ArgKind::kMapFlags, "MAP_PRIVATE|MAP_ANON", MAP_PRIVATE | MAP_ANONYMOUS},
    {ArgKind::kMapFlags, "MAP_FILE|MAP_FIXED|MAP_ANONYMOUS", MAP_FIXED | MAP_ANONYMOUS},
    {ArgKind::kMapFlags, "0xf /* MAP_??? */", 0xf},
    {ArgKind::kMapFlags, "MAP_PRIVATE|MAP_HUGETLB|21<<MAP_HUGE_SHIFT",
     MAP_PRIVATE | MAP_HUGETLB | (21 << MAP_HUGE_SHIFT)},
    // clone and clone3
    {ArgKind::kCloneFlags, "flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD",
     CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID | SIGCHLD},
    {ArgKind::kCloneFlags, "CLONE_VM|CLONE_VFORK|SIGCHLD", CLONE_VM | CLONE_VFORK | SIGCHLD},
    {ArgKind::kCloneFlags, "CLONE_SIGHAND|SIGRT_2", CLONE_SIGHAND | 34},
    {ArgKind::kCloneFlags, "CLONE_DETACHED|SIGIOT", 0x400000 | SIGABRT},
    {ArgKind::kCloneFlags, "{flags=CLONE_SIGHAND, exit_signal=SIGCHLD, stack=NULL, stack_size=0}",
     CLONE_SIGHAND | SIGCHLD},
    {ArgKind::kCloneFlags,
     "{flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|"
     "CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, child_tid=0x7f5ea7fff910, "
     "parent_tid=0x7f5ea7fff910, exit_signal=0, stack=0x7f5ea77ff000, stack_size=0x7fff00, "
     "tls=0x7f5ea7fff640}",
     CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
         CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID},
    {ArgKind::kCloneFlags,
     "{flags=CLONE_SIGHAND|CLONE_CLEAR_SIGHAND|CLONE_INTO_CGROUP, exit_signal=0, stack=NULL, "
     "stack_size=0, cgroup=3</sys/fs/cgroup/a,b>}",
     static_cast<int64_t>(0x300000000ULL | CLONE_SIGHAND)},
    {ArgKind::kCloneFlags, "{flags=0, exit_signal=SIGCHLD}", SIGCHLD},
    // openat2
    {ArgKind::kOpenHow, "{flags=O_RDONLY|O_CLOEXEC, resolve=RESOLVE_IN_ROOT}", O_CLOEXEC},
    {ArgKind::kOpenHow, "{flags=O_RDWR|O_CREAT, mode=0644, resolve=0}", O_RDWR | O_CREAT},
    {ArgKind::kOpenHow, "O_WRONLY", O_WRONLY},
    // readv and writev
    {ArgKind::kIovec, "[{iov_base=\"...\"..., iov_len=10}, {iov_base=0x7ffd0debc9e8, iov_len=20}]",
     30},
    {ArgKind::kIovec,
     "[{iov_base=\"\\0\\0\\0\", iov_len=3}, {iov_base=\"\\0\\0\\0\\0\\0\", iov_len=5}]", 8},
    {ArgKind::kIovec,
     "[{iov_base=\"a\\\"b,c}, iov_len=99\\n\", iov_len=19}, {iov_base=\"\", iov_len=0}]", 19},
    {ArgKind::kIovec, "[{iov_base=\"abc\"..., iov_len=4096}, ...]", 4096},
    {ArgKind::kIovec, "[]", 0},
    {ArgKind::kIovec, "NULL", 0},
    {ArgKind::kIovec, "30", 30},
    // ioctl
    {ArgKind::kIoctlReq, "BTRFS_IOC_CLONE or FICLONE", static_cast<int64_t>(FICLONE)},
    {ArgKind::kIoctlReq, "SNDCTL_TMR_START or TCSETS", static_cast<int64_t>(TCSETS)},
    {ArgKind::kIoctlReq, "TIOCINQ", static_cast<int64_t>(FIONREAD)},
    {ArgKind::kIoctlReq, "_IOC(_IOC_NONE, 0x12, 0x34, 0)", 0x1234},
    {ArgKind::kIoctlReq, "_IOC(_IOC_READ|_IOC_WRITE, 0x66, 0x1, 0x18)", 0xc0186601},
    {ArgKind::kIoctlReq, "_IOC(_IOC_WRITE, 0, 0, 0)", 0x40000000},
    {ArgKind::kIoctlReq, "0x5401", 0x5401},
    // syscall numbers
    {ArgKind::kSysNr, "brk", 12},
    {ArgKind::kSysNr, "close_range", 436},
    {ArgKind::kSysNr, "syscall_0x1f4", 500},
    {ArgKind::kSysNr, "335", 335},
    // integers that strace prints symbolically
    {ArgKind::kInt, "AF_UNIX", AF_UNIX},
    {ArgKind::kInt, "SOCK_STREAM|SOCK_CLOEXEC", SOCK_STREAM | SOCK_CLOEXEC},
    {ArgKind::kInt, "IPPROTO_UDP", 17},
    {ArgKind::kInt, "EFD_CLOEXEC|EFD_NONBLOCK", 02004000},
    {ArgKind::kInt, "MFD_CLOEXEC|MFD_ALLOW_SEALING", 3},
    {ArgKind::kInt, "EPOLL_CLOEXEC", 02000000},
    {ArgKind::kInt, "FD_CLOEXEC", 1},
    {ArgKind::kInt, "O_RDONLY|O_APPEND|O_NONBLOCK", O_APPEND | O_NONBLOCK},
    {ArgKind::kInt, "F_RDLCK", F_RDLCK},
    {ArgKind::kInt, "SIGIO", SIGIO},
    {ArgKind::kInt, "NULL", 0},
    {ArgKind::kInt, "4294967295", 4294967295},
    // blanks and comments around tokens
    {ArgKind::kFd, "  3  ", 3},
    {ArgKind::kOpenFlags, " O_RDONLY | O_CLOEXEC ", O_CLOEXEC},
    {ArgKind::kProt, "PROT_READ|PROT_WRITE /* rw */", 3},
};

TEST(ParseArgTest, StraceSpellings) {
  for (const ParseCase& c : kStraceSpellings) {
    EXPECT_EQ(ParseArg(c.kind, c.text), c.value) << "kind " << KindName(c.kind) << ": " << c.text;
  }
}

TEST(ParseArgTest, StringKindsAndBuffersDoNotParse) {
  for (ArgKind k : {ArgKind::kBuf, ArgKind::kPath, ArgKind::kStr}) {
    EXPECT_EQ(ParseArg(k, "3"), std::nullopt);
    EXPECT_EQ(ParseArg(k, "\"/tmp/x\""), std::nullopt);
  }
}

TEST(ParseArgTest, AddressesAreNotTakenForValues) {
  // strace prints the address when it cannot read the memory.
  EXPECT_EQ(ParseArg(ArgKind::kIovec, "0x7ffd0debc9e8"), std::nullopt);
  EXPECT_EQ(ParseArg(ArgKind::kOffsetPtr, "0x7ffd0debc9e8"), std::nullopt);
  EXPECT_EQ(ParseArg(ArgKind::kFdPair, "0x7ffd0debc9e8"), std::nullopt);
}

TEST(ParseArgTest, UnknownNamesDoNotParse) {
  EXPECT_EQ(ParseArg(ArgKind::kIoctlReq, "XSDFEC_GET_STATUS"), std::nullopt);
  EXPECT_EQ(ParseArg(ArgKind::kOpenFlags, "O_RDONLY|O_BOGUS"), std::nullopt);
  EXPECT_EQ(ParseArg(ArgKind::kOpenFlags, "AT_FDCWD"), std::nullopt);
  EXPECT_EQ(ParseArg(ArgKind::kSysNr, "no_such_syscall"), std::nullopt);
  EXPECT_EQ(ParseArg(ArgKind::kCloneFlags, "CLONE_VM|SIGBOGUS"), std::nullopt);
  EXPECT_EQ(ParseArg(ArgKind::kInt, "SOME_FLAG"), std::nullopt);
  EXPECT_EQ(ParseArg(ArgKind::kWhence, "SEEK_SET|SEEK_CUR"), std::nullopt);
}

const std::string_view kGarbage[] = {
    "",
    " ",
    "|",
    "||",
    "O_",
    "0x",
    "0X",
    "-",
    "+",
    "--1",
    "0x1g",
    "08",
    "1|",
    "|1",
    "1||2",
    "[",
    "]",
    "[]x",
    "[[",
    "{",
    "}",
    "{{",
    "(",
    ")",
    "makedev(",
    "makedev()",
    "makedev(1)",
    "makedev(1, 2, 3)",
    "makedev(-1, 2)",
    "makedev(0x100000000, 0)",
    "_IOC(",
    "_IOC()",
    "_IOC(_IOC_NONE, 1, 2)",
    "_IOC(_IOC_NONE, 0x100, 0, 0)",
    "<",
    ">",
    "<>",
    "3<",
    "3<x",
    "AT_FDCWD<",
    "[3, ]",
    "[, 4]",
    "[3 4]",
    "[3, 4",
    "[ => 5]",
    "[x]",
    "{flags=}",
    "{flags=O_RDONLY",
    "{iov_len=5",
    "[{iov_len=}]",
    "[{iov_base=\"x}]",
    "[{iov_base=\"x\", iov_len=1}",
    "\"",
    "\"\"",
    "/*",
    "*/",
    "/* */",
    "99999999999999999999999",
    "-9223372036854775809",
    "0x10000000000000000",
    "1<<",
    "<<2",
    "1<<64",
    "1<<-1",
    "syscall_",
    "syscall_x",
    "SIGRT_",
    "SIGRT_33",
    "=",
    "flags=",
    "x=",
    "NULL|",
    "or",
    " or ",
    "A or ",
    "\x01\x02\xff",
    std::string_view("\0", 1),
    "[3, 4]]",
    "[[3, 4]",
};

TEST(ParseArgTest, GarbageDoesNotParse) {
  for (int i = 0; i <= static_cast<int>(kLastKind); ++i) {
    ArgKind k = static_cast<ArgKind>(i);
    for (std::string_view g : kGarbage) {
      EXPECT_EQ(ParseArg(k, g), std::nullopt) << "kind " << KindName(k) << ": \"" << g << "\"";
    }
  }
}

TEST(ParseArgTest, VeryLongTokensDoNotCrash) {
  const size_t n = 1 << 20;
  const std::string long_tokens[] = {
      std::string(n, '|'),        std::string(n, '['),
      std::string(n, ']'),        std::string(n, '{'),
      std::string(n, '9'),        std::string(n, '"'),
      std::string(n, '<'),        "makedev(" + std::string(n, '('),
      "[" + std::string(n, ','),  "[{iov_len=1}" + std::string(n, ' '),
      std::string(n, 'A'),        "{flags=" + std::string(n, '{'),
      "0x" + std::string(n, 'f'),
  };
  for (ArgKind k : IntegerKinds()) {
    for (const std::string& t : long_tokens) {
      EXPECT_EQ(ParseArg(k, t), std::nullopt) << "kind " << KindName(k) << ": " << t.substr(0, 20);
    }
  }
  // Long but well-formed expressions are fine.
  std::string many = "O_RDONLY";
  for (int i = 0; i < 100000; ++i) many += "|O_CLOEXEC";
  EXPECT_EQ(ParseArg(ArgKind::kOpenFlags, many), O_CLOEXEC);
  std::string iov = "[";
  for (int i = 0; i < 10000; ++i) iov += i == 0 ? "{iov_base=\"x\", iov_len=2}" : ", {iov_len=2}";
  iov += "]";
  EXPECT_EQ(ParseArg(ArgKind::kIovec, iov), 20000);
}

TEST(ParseArgTest, RandomTokensDoNotCrash) {
  const std::string_view alphabet = "0123456789xX|[]{}()<>,= \"\\-_ORDONLYSIGCHLD/*makedev";
  std::mt19937 rng(7);
  std::string token;
  for (int i = 0; i < 20000; ++i) {
    token.clear();
    size_t len = rng() % 24;
    for (size_t j = 0; j < len; ++j) token += alphabet[rng() % alphabet.size()];
    for (int k = 0; k <= static_cast<int>(kLastKind); ++k) {
      (void)ParseArg(static_cast<ArgKind>(k), token);
    }
  }
}

TEST(ParseIntegerTest, CIntegerLiterals) {
  EXPECT_EQ(ParseInteger("0"), 0);
  EXPECT_EQ(ParseInteger("42"), 42);
  EXPECT_EQ(ParseInteger("-42"), -42);
  EXPECT_EQ(ParseInteger("0x8c01"), 0x8c01);
  EXPECT_EQ(ParseInteger("022"), 022);
  EXPECT_EQ(ParseInteger(" 7 "), 7);
  EXPECT_EQ(ParseInteger("18446744073709551615"), -1);
  EXPECT_EQ(ParseInteger("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ParseInteger("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseInteger("1 2"), std::nullopt);
  EXPECT_EQ(ParseInteger("NULL"), std::nullopt);
  EXPECT_EQ(ParseInteger(""), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
// errno, signals, syscalls

TEST(ErrnoTest, NamesAndMessages) {
  EXPECT_EQ(ErrnoName(ENOENT), "ENOENT");
  EXPECT_EQ(ErrnoName(EPERM), "EPERM");
  EXPECT_EQ(ErrnoName(EAGAIN), "EAGAIN");
  EXPECT_EQ(ErrnoName(EDEADLK), "EDEADLK");
  EXPECT_EQ(ErrnoName(EOPNOTSUPP), "EOPNOTSUPP");
  EXPECT_EQ(ErrnoName(EHWPOISON), "EHWPOISON");
  EXPECT_EQ(ErrnoName(512), "ERESTARTSYS");
  EXPECT_EQ(ErrnoName(513), "ERESTARTNOINTR");
  EXPECT_EQ(ErrnoName(514), "ERESTARTNOHAND");
  EXPECT_EQ(ErrnoName(516), "ERESTART_RESTARTBLOCK");
  EXPECT_EQ(ErrnoName(529), "EIOCBQUEUED");
  EXPECT_EQ(ErrnoName(0), "");
  EXPECT_EQ(ErrnoName(-2), "");
  EXPECT_EQ(ErrnoName(41), "");  // a hole in the numbering
  EXPECT_EQ(ErrnoName(520), "");
  EXPECT_EQ(ErrnoName(100000), "");

  EXPECT_EQ(ErrnoFromName("ENOENT"), ENOENT);
  EXPECT_EQ(ErrnoFromName("EWOULDBLOCK"), EAGAIN);
  EXPECT_EQ(ErrnoFromName("EDEADLOCK"), EDEADLK);
  EXPECT_EQ(ErrnoFromName("ENOTSUP"), EOPNOTSUPP);
  EXPECT_EQ(ErrnoFromName("ERESTARTSYS"), 512);
  EXPECT_EQ(ErrnoFromName("ENOGRACE"), 531);
  EXPECT_EQ(ErrnoFromName("ENOSUCH"), 0);
  EXPECT_EQ(ErrnoFromName(""), 0);

  EXPECT_EQ(ErrnoMessage(ENOENT), "No such file or directory");
  EXPECT_EQ(ErrnoMessage(EBADF), "Bad file descriptor");
  EXPECT_EQ(ErrnoMessage(ENOSYS), "Function not implemented");
  EXPECT_EQ(ErrnoMessage(512), "To be restarted if SA_RESTART is set");
  EXPECT_EQ(ErrnoMessage(516), "Interrupted by signal");
  EXPECT_EQ(ErrnoMessage(0), "");
  EXPECT_EQ(ErrnoMessage(9999), "");
}

TEST(ErrnoTest, EveryNameReadsBack) {
  int named = 0;
  for (int e = -5; e < 600; ++e) {
    std::string_view name = ErrnoName(e);
    if (name.empty()) {
      EXPECT_EQ(ErrnoMessage(e), "") << e;
      continue;
    }
    ++named;
    EXPECT_EQ(ErrnoFromName(name), e) << name;
    EXPECT_FALSE(ErrnoMessage(e).empty()) << name;
  }
  EXPECT_GE(named, 131 + 19);
}

TEST(SignalTest, Names) {
  EXPECT_EQ(SignalName(SIGCHLD), "SIGCHLD");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(SIGSYS), "SIGSYS");
  EXPECT_EQ(SignalName(0), "");
  EXPECT_EQ(SignalName(34), "");
}

TEST(SyscallTest, NamesAndNumbers) {
  EXPECT_EQ(SyscallName(0), "read");
  EXPECT_EQ(SyscallName(257), "openat");
  EXPECT_EQ(SyscallName(12), "brk");
  EXPECT_EQ(SyscallNumber("read"), 0);
  EXPECT_EQ(SyscallNumber("openat"), 257);
  EXPECT_EQ(SyscallNumber("close_range"), 436);
  EXPECT_EQ(SyscallName(436), "close_range");
  EXPECT_EQ(SyscallNumber("openat2"), 437);
  EXPECT_EQ(SyscallName(-1), "");
  EXPECT_EQ(SyscallName(335), "");  // unassigned
  EXPECT_EQ(SyscallName(100000), "");
  EXPECT_EQ(SyscallNumber("no_such_call"), -1);
  EXPECT_EQ(SyscallNumber(""), -1);
}

TEST(SyscallTest, AgreesWithTheCallTable) {
  for (const CallSpec& c : kCalls) {
    if (c.nr < 0) continue;
    EXPECT_EQ(SyscallName(c.nr), c.name);
    EXPECT_EQ(SyscallNumber(c.name), c.nr);
  }
}

TEST(BlockTest, RwbsAsBlkFillRwbsWritesIt) {
  struct RwbsCase {
    const char* rwbs;
    uint32_t op;
  } cases[] = {
      {"W", block::kWrite},
      {"R", block::kRead},
      {"RA", block::kRead | block::kReadahead},
      {"WS", block::kWrite | block::kSync},
      {"WSM", block::kWrite | block::kSync | block::kMeta},
      {"FWFSM", block::kPreflush | block::kWrite | block::kFua | block::kSync | block::kMeta},
      {"FWS", block::kPreflush | block::kWrite | block::kSync},  // empty flush bio
      {"WFS", block::kWrite | block::kFua | block::kSync},
      {"FF", block::kPreflush | block::kFlushOp},  // the flush machinery's request
      {"F", block::kFlushOp},
      {"FS", block::kFlushOp | block::kSync},
      {"D", block::kDiscard},
      {"DE", block::kSecureErase},
      {"N", block::kOtherOp},
  };
  for (const RwbsCase& c : cases) {
    uint32_t op = 0;
    ASSERT_TRUE(block::ParseRwbs(c.rwbs, &op)) << c.rwbs;
    EXPECT_EQ(op, c.op) << c.rwbs;
    EXPECT_EQ(block::FormatRwbs(op), c.rwbs);
  }
  for (const char* bad : {"", "X", "WW", "WMS", "FX", "WFF", "F F"}) {
    uint32_t op = 77;
    EXPECT_FALSE(block::ParseRwbs(bad, &op)) << bad;
    EXPECT_EQ(op, 77u);
  }
}

TEST(BlockTest, PhaseAndOpNamesReadBack) {
  EXPECT_EQ(Fmt(ArgKind::kBlockPhase, 1), "BLK_QUEUE");
  EXPECT_EQ(Fmt(ArgKind::kBlockPhase, 3), "BLK_COMPLETE");
  uint64_t op = block::kPreflush | block::kWrite | block::kFua | block::kSync;
  EXPECT_EQ(Fmt(ArgKind::kBlockOp, static_cast<int64_t>(op)), "BLK_PREFLUSH|BLK_WRITE|BLK_FUA|BLK_SYNC");
  EXPECT_EQ(ParseArg(ArgKind::kBlockOp, "BLK_PREFLUSH|BLK_WRITE|BLK_FUA|BLK_SYNC"),
            static_cast<int64_t>(op));
  EXPECT_EQ(ParseArg(ArgKind::kBlockPhase, "BLK_ISSUE"), 2);
  EXPECT_EQ(ParseArg(ArgKind::kBlockPhase, "BLK_NOPE"), std::nullopt);
}

}  // namespace
}  // namespace iorr::trace
