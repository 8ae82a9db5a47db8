// Symbolic names of argument values, errnos and syscalls, as strace prints them (names.h). All
// tables are constexpr and all functions stateless, so everything here is thread-safe.
//
// The x86_64 syscall table comes from syscall_names.inc, generated at build time from the
// kernel headers by gen_syscall_names.cmake; traces/CMakeLists.txt wires it:
//   add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/syscall_names.inc
//     COMMAND ${CMAKE_COMMAND} -DIN=<asm/unistd_64.h> -DOUT=${CMAKE_CURRENT_BINARY_DIR}/...
//             -P ${CMAKE_CURRENT_SOURCE_DIR}/gen_syscall_names.cmake
//     DEPENDS gen_syscall_names.cmake <asm/unistd_64.h>)
// with ${CMAKE_CURRENT_BINARY_DIR} on the include path of the target that compiles this file.
#include "traces/names.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/falloc.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/stat.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <initializer_list>
#include <span>

namespace iorr::trace {
namespace {

// ---------------------------------------------------------------------------------------------
// Tables. Print order is strace's (its xlat/*.in files): for flags, the first entry whose bits
// are all set wins, so combined names come before their parts. Entries marked parse-only are
// other spellings ParseArg accepts and AppendArg never prints.

struct Named {
  uint64_t value;
  std::string_view name;
  bool parse_only = false;
};
using Table = std::span<const Named>;

// clang-format off
#define IORR_N(x) Named{static_cast<uint64_t>(x), #x}
#define IORR_ALIAS(x) Named{static_cast<uint64_t>(x), #x, true}
// clang-format on

// Kernel values that glibc's headers lack or define differently on x86_64.
constexpr uint64_t kKernelOLargefile = 0100000;  // glibc's is 0 on 64-bit
constexpr uint64_t kKernelOSync = O_SYNC & ~O_DSYNC;
constexpr uint64_t kKernelOTmpfile = O_TMPFILE & ~O_DIRECTORY;

constexpr Named kAccessModes[] = {
    IORR_N(O_RDONLY),
    IORR_N(O_WRONLY),
    IORR_N(O_RDWR),
    IORR_N(O_ACCMODE),
};

constexpr Named kOpenFlags[] = {
    IORR_N(O_CREAT),
    IORR_N(O_EXCL),
    IORR_N(O_NOCTTY),
    IORR_N(O_TRUNC),
    IORR_N(O_APPEND),
    IORR_N(O_NONBLOCK),
    IORR_N(O_SYNC),  // __O_SYNC|O_DSYNC
    Named{kKernelOSync, "__O_SYNC"},
    IORR_N(O_DSYNC),
    IORR_N(O_DIRECT),
    Named{kKernelOLargefile, "O_LARGEFILE"},
    IORR_N(O_NOFOLLOW),
    IORR_N(O_NOATIME),
    IORR_N(O_CLOEXEC),
    IORR_N(O_PATH),
    IORR_N(O_TMPFILE),  // __O_TMPFILE|O_DIRECTORY
    Named{kKernelOTmpfile, "__O_TMPFILE"},
    IORR_N(O_DIRECTORY),
    IORR_N(FASYNC),
    IORR_ALIAS(O_ASYNC),
    IORR_ALIAS(O_NDELAY),
    IORR_ALIAS(O_RSYNC),
    IORR_ALIAS(O_FSYNC),
};

constexpr Named kModeBits[] = {
    IORR_N(S_IFSOCK), IORR_N(S_IFLNK), IORR_N(S_IFREG), IORR_N(S_IFBLK), IORR_N(S_IFDIR),
    IORR_N(S_IFCHR),  IORR_N(S_IFIFO), IORR_N(S_ISUID), IORR_N(S_ISGID), IORR_N(S_ISVTX),
};

constexpr Named kWhence[] = {
    IORR_N(SEEK_SET), IORR_N(SEEK_CUR), IORR_N(SEEK_END), IORR_N(SEEK_DATA), IORR_N(SEEK_HOLE),
};

// statx prints its sync type first; the other calls never set these bits.
constexpr Named kAtFlags[] = {
    IORR_N(AT_STATX_FORCE_SYNC),
    IORR_N(AT_STATX_DONT_SYNC),
    IORR_N(AT_SYMLINK_NOFOLLOW),
    IORR_N(AT_REMOVEDIR),
    IORR_N(AT_SYMLINK_FOLLOW),
    IORR_N(AT_NO_AUTOMOUNT),
    IORR_N(AT_EMPTY_PATH),
    IORR_N(AT_RECURSIVE),
    IORR_ALIAS(AT_STATX_SYNC_AS_STAT),  // 0: statx prints it for "no sync flags"
    IORR_ALIAS(AT_EACCESS),             // faccessat2's spelling of AT_REMOVEDIR's bit
};

constexpr Named kAccessFlags[] = {
    IORR_N(F_OK),
    IORR_N(R_OK),
    IORR_N(W_OK),
    IORR_N(X_OK),
};

#ifndef F_GETOWNER_UIDS
#define F_GETOWNER_UIDS 17
#endif
#ifndef F_CANCELLK
#define F_CANCELLK (F_SETLEASE + 5)  // F_SETLEASE is F_LINUX_SPECIFIC_BASE
#endif
#ifndef F_DUPFD_QUERY
#define F_DUPFD_QUERY (F_SETLEASE + 3)  // F_SETLEASE is F_LINUX_SPECIFIC_BASE
#endif
#ifndef F_CREATED_QUERY
#define F_CREATED_QUERY (F_SETLEASE + 4)  // F_SETLEASE is F_LINUX_SPECIFIC_BASE
#endif

constexpr Named kFcntlCmds[] = {
    IORR_N(F_DUPFD),
    IORR_N(F_GETFD),
    IORR_N(F_SETFD),
    IORR_N(F_GETFL),
    IORR_N(F_SETFL),
    IORR_N(F_GETLK),
    IORR_N(F_SETLK),
    IORR_N(F_SETLKW),
    IORR_N(F_SETOWN),
    IORR_N(F_GETOWN),
    IORR_N(F_SETSIG),
    IORR_N(F_GETSIG),
    // The kernel's numbers for the 32-bit ABIs' flock64 commands (asm-generic/fcntl.h); on
    // x86_64 glibc maps F_GETLK64 to F_GETLK instead.
    Named{12, "F_GETLK64"},
    Named{13, "F_SETLK64"},
    Named{14, "F_SETLKW64"},
    IORR_N(F_SETOWN_EX),
    IORR_N(F_GETOWN_EX),
    IORR_N(F_GETOWNER_UIDS),
    IORR_N(F_OFD_GETLK),
    IORR_N(F_OFD_SETLK),
    IORR_N(F_OFD_SETLKW),
    IORR_N(F_SETLEASE),
    IORR_N(F_GETLEASE),
    IORR_N(F_NOTIFY),
    IORR_N(F_DUPFD_QUERY),
    IORR_N(F_CREATED_QUERY),
    IORR_N(F_CANCELLK),
    IORR_N(F_DUPFD_CLOEXEC),
    IORR_N(F_SETPIPE_SZ),
    IORR_N(F_GETPIPE_SZ),
    IORR_N(F_ADD_SEALS),
    IORR_N(F_GET_SEALS),
    IORR_N(F_GET_RW_HINT),
    IORR_N(F_SET_RW_HINT),
    IORR_N(F_GET_FILE_RW_HINT),
    IORR_N(F_SET_FILE_RW_HINT),
};

#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040
#endif
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif

constexpr Named kRwfFlags[] = {
    IORR_N(RWF_HIPRI),  IORR_N(RWF_DSYNC),    IORR_N(RWF_SYNC),   IORR_N(RWF_NOWAIT),
    IORR_N(RWF_APPEND), IORR_N(RWF_NOAPPEND), IORR_N(RWF_ATOMIC), IORR_N(RWF_DONTCACHE),
};

constexpr Named kRenameFlags[] = {
    IORR_N(RENAME_NOREPLACE),
    IORR_N(RENAME_EXCHANGE),
    IORR_N(RENAME_WHITEOUT),
};

// inotify_add_watch's mask, in strace's order (its xlat/inotify_flags.in), then the combined
// names it never prints.
#ifndef IN_MASK_CREATE
#define IN_MASK_CREATE 0x10000000
#endif
constexpr Named kInotifyFlags[] = {
    IORR_N(IN_ACCESS),         IORR_N(IN_MODIFY),        IORR_N(IN_ATTRIB),
    IORR_N(IN_CLOSE_WRITE),    IORR_N(IN_CLOSE_NOWRITE), IORR_N(IN_OPEN),
    IORR_N(IN_MOVED_FROM),     IORR_N(IN_MOVED_TO),      IORR_N(IN_CREATE),
    IORR_N(IN_DELETE),         IORR_N(IN_DELETE_SELF),   IORR_N(IN_MOVE_SELF),
    IORR_N(IN_UNMOUNT),        IORR_N(IN_Q_OVERFLOW),    IORR_N(IN_IGNORED),
    IORR_N(IN_ONLYDIR),        IORR_N(IN_DONT_FOLLOW),   IORR_N(IN_EXCL_UNLINK),
    IORR_N(IN_MASK_CREATE),    IORR_N(IN_MASK_ADD),      IORR_N(IN_ISDIR),
    IORR_N(IN_ONESHOT),        IORR_ALIAS(IN_CLOSE),     IORR_ALIAS(IN_MOVE),
    IORR_ALIAS(IN_ALL_EVENTS),
};

constexpr Named kXattrFlags[] = {
    IORR_N(XATTR_CREATE),
    IORR_N(XATTR_REPLACE),
};

#ifndef FALLOC_FL_ALLOCATE_RANGE
#define FALLOC_FL_ALLOCATE_RANGE 0x00
#endif

constexpr Named kFallocFlags[] = {
    IORR_N(FALLOC_FL_KEEP_SIZE),     IORR_N(FALLOC_FL_PUNCH_HOLE),
    IORR_N(FALLOC_FL_NO_HIDE_STALE), IORR_N(FALLOC_FL_COLLAPSE_RANGE),
    IORR_N(FALLOC_FL_ZERO_RANGE),    IORR_N(FALLOC_FL_INSERT_RANGE),
    IORR_N(FALLOC_FL_UNSHARE_RANGE), IORR_ALIAS(FALLOC_FL_ALLOCATE_RANGE),
};

constexpr Named kSyncRangeFlags[] = {
    IORR_N(SYNC_FILE_RANGE_WAIT_BEFORE),
    IORR_N(SYNC_FILE_RANGE_WRITE),
    IORR_N(SYNC_FILE_RANGE_WAIT_AFTER),
    IORR_ALIAS(SYNC_FILE_RANGE_WRITE_AND_WAIT),
};

constexpr Named kMsyncFlags[] = {
    IORR_N(MS_ASYNC),
    IORR_N(MS_SYNC),
    IORR_N(MS_INVALIDATE),
};

constexpr Named kCloseRangeFlags[] = {
    IORR_N(CLOSE_RANGE_UNSHARE),
    IORR_N(CLOSE_RANGE_CLOEXEC),
};

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
#ifndef STATX_SUBVOL
#define STATX_SUBVOL 0x00008000U
#endif
#ifndef STATX_WRITE_ATOMIC
#define STATX_WRITE_ATOMIC 0x00010000U
#endif
#ifndef STATX_DIO_READ_ALIGN
#define STATX_DIO_READ_ALIGN 0x00020000U
#endif

constexpr Named kStatxMasks[] = {
    Named{0xfff, "STATX_ALL"},  // deprecated in the headers, still printed by strace
    IORR_N(STATX_BASIC_STATS),
    IORR_N(STATX_TYPE),
    IORR_N(STATX_MODE),
    IORR_N(STATX_NLINK),
    IORR_N(STATX_UID),
    IORR_N(STATX_GID),
    IORR_N(STATX_ATIME),
    IORR_N(STATX_MTIME),
    IORR_N(STATX_CTIME),
    IORR_N(STATX_INO),
    IORR_N(STATX_SIZE),
    IORR_N(STATX_BLOCKS),
    IORR_N(STATX_BTIME),
    IORR_N(STATX_MNT_ID),
    IORR_N(STATX_DIOALIGN),
    IORR_N(STATX_MNT_ID_UNIQUE),
    IORR_N(STATX_SUBVOL),
    IORR_N(STATX_WRITE_ATOMIC),
    IORR_N(STATX_DIO_READ_ALIGN),
};

constexpr Named kAdvice[] = {
    IORR_N(POSIX_FADV_NORMAL),   IORR_N(POSIX_FADV_RANDOM),   IORR_N(POSIX_FADV_SEQUENTIAL),
    IORR_N(POSIX_FADV_WILLNEED), IORR_N(POSIX_FADV_DONTNEED), IORR_N(POSIX_FADV_NOREUSE),
};

// The block pseudo-call's phase and operation (traces/block.h); not kernel names, iorr's own.
constexpr Named kBlockPhases[] = {
    {1, "BLK_QUEUE"}, {2, "BLK_ISSUE"}, {3, "BLK_COMPLETE"},
};
constexpr Named kBlockOps[] = {
    {1u << 8, "BLK_PREFLUSH"}, {1u << 0, "BLK_READ"},    {1u << 1, "BLK_WRITE"},
    {1u << 2, "BLK_DISCARD"},  {1u << 3, "BLK_SECURE_ERASE"}, {1u << 4, "BLK_FLUSH"},
    {1u << 5, "BLK_OTHER"},    {1u << 9, "BLK_FUA"},     {1u << 10, "BLK_RAHEAD"},
    {1u << 11, "BLK_SYNC"},    {1u << 12, "BLK_META"},
};

// The request numbers strace names that file-system workloads meet: file and block-device
// ioctls, and the terminal ones every interactive program issues.
constexpr Named kIoctls[] = {
    IORR_N(FICLONE),
    IORR_N(FICLONERANGE),
    IORR_N(FIDEDUPERANGE),
    IORR_N(FIBMAP),
    IORR_N(FIGETBSZ),
    IORR_N(FIFREEZE),
    IORR_N(FITHAW),
    IORR_N(FITRIM),
    IORR_N(FS_IOC_GETFLAGS),
    IORR_N(FS_IOC_SETFLAGS),
    IORR_N(FS_IOC_GETVERSION),
    IORR_N(FS_IOC_SETVERSION),
    IORR_N(FS_IOC32_GETFLAGS),
    IORR_N(FS_IOC32_SETFLAGS),
    IORR_N(FS_IOC32_GETVERSION),
    IORR_N(FS_IOC32_SETVERSION),
    IORR_N(FS_IOC_FIEMAP),
    IORR_N(FS_IOC_FSGETXATTR),
    IORR_N(FS_IOC_FSSETXATTR),
    IORR_N(FS_IOC_GETFSLABEL),
    IORR_N(FS_IOC_SETFSLABEL),
    IORR_N(BLKROSET),
    IORR_N(BLKROGET),
    IORR_N(BLKRRPART),
    IORR_N(BLKGETSIZE),
    IORR_N(BLKFLSBUF),
    IORR_N(BLKRASET),
    IORR_N(BLKRAGET),
    IORR_N(BLKSSZGET),
    IORR_N(BLKBSZGET),
    IORR_N(BLKBSZSET),
    IORR_N(BLKGETSIZE64),
    IORR_N(BLKDISCARD),
    IORR_N(BLKIOMIN),
    IORR_N(BLKIOOPT),
    IORR_N(BLKALIGNOFF),
    IORR_N(BLKPBSZGET),
    IORR_N(BLKDISCARDZEROES),
    IORR_N(BLKSECDISCARD),
    IORR_N(BLKROTATIONAL),
    IORR_N(BLKZEROOUT),
    IORR_N(FIONREAD),
    IORR_N(FIONBIO),
    IORR_N(FIOCLEX),
    IORR_N(FIONCLEX),
    IORR_N(FIOASYNC),
    IORR_N(FIOQSIZE),
    IORR_N(TCGETS),
    IORR_N(TCSETS),
    IORR_N(TCSETSW),
    IORR_N(TCSETSF),
    IORR_N(TCGETA),
    IORR_N(TCSETA),
    IORR_N(TCSETAW),
    IORR_N(TCSETAF),
    IORR_N(TCSBRK),
    IORR_N(TCXONC),
    IORR_N(TCFLSH),
    IORR_N(TIOCSCTTY),
    IORR_N(TIOCNOTTY),
    IORR_N(TIOCGPGRP),
    IORR_N(TIOCSPGRP),
    IORR_N(TIOCGSID),
    IORR_N(TIOCOUTQ),
    IORR_N(TIOCSTI),
    IORR_N(TIOCGWINSZ),
    IORR_N(TIOCSWINSZ),
    IORR_N(TIOCGPTN),
    IORR_N(TIOCSPTLCK),
    IORR_ALIAS(TIOCINQ),
};

constexpr Named kFlockOps[] = {
    IORR_N(LOCK_SH),   IORR_N(LOCK_EX), IORR_N(LOCK_NB),   IORR_N(LOCK_UN),
    IORR_N(LOCK_MAND), IORR_N(LOCK_RW), IORR_N(LOCK_READ), IORR_N(LOCK_WRITE),
};

#ifndef PROT_SEM
#define PROT_SEM 0x8  // asm-generic/mman-common.h; glibc does not define it
#endif

constexpr Named kProt[] = {
    IORR_N(PROT_NONE), IORR_N(PROT_READ),      IORR_N(PROT_WRITE),   IORR_N(PROT_EXEC),
    IORR_N(PROT_SEM),  IORR_N(PROT_GROWSDOWN), IORR_N(PROT_GROWSUP),
};

// mmap's flags: the sharing type (the MAP_TYPE bits, a value), then flags, then the huge page
// size in the MAP_HUGE_MASK << MAP_HUGE_SHIFT bits, printed as "21<<MAP_HUGE_SHIFT".
constexpr uint64_t kMapType = 0xf;  // MAP_TYPE, which glibc only defines for __USE_MISC
constexpr uint64_t kMapHugeBits = static_cast<uint64_t>(MAP_HUGE_MASK) << MAP_HUGE_SHIFT;

constexpr Named kMapTypes[] = {
    IORR_N(MAP_FILE),  // 0
    IORR_N(MAP_SHARED),
    IORR_N(MAP_PRIVATE),
    IORR_N(MAP_SHARED_VALIDATE),
};

#ifndef MAP_ABOVE4G
#define MAP_ABOVE4G 0x80
#endif

constexpr Named kMapFlags[] = {
    IORR_N(MAP_FIXED),      IORR_N(MAP_ANONYMOUS), IORR_N(MAP_32BIT),
    IORR_N(MAP_ABOVE4G),    IORR_N(MAP_NORESERVE), IORR_N(MAP_POPULATE),
    IORR_N(MAP_NONBLOCK),   IORR_N(MAP_GROWSDOWN), IORR_N(MAP_DENYWRITE),
    IORR_N(MAP_EXECUTABLE), IORR_N(MAP_LOCKED),    IORR_N(MAP_STACK),
    IORR_N(MAP_HUGETLB),    IORR_N(MAP_SYNC),      IORR_N(MAP_FIXED_NOREPLACE),
    IORR_ALIAS(MAP_ANON),
};

// clone's flags; the low byte (CSIGNAL) is the exit signal, printed by name.
constexpr uint64_t kCloneSignalMask = CSIGNAL;

#ifndef CLONE_DETACHED
#define CLONE_DETACHED 0x00400000
#endif

constexpr Named kCloneFlags[] = {
    IORR_N(CLONE_VM),
    IORR_N(CLONE_FS),
    IORR_N(CLONE_FILES),
    IORR_N(CLONE_SIGHAND),
    IORR_N(CLONE_PIDFD),
    IORR_N(CLONE_PTRACE),
    IORR_N(CLONE_VFORK),
    IORR_N(CLONE_PARENT),
    IORR_N(CLONE_THREAD),
    IORR_N(CLONE_NEWNS),
    IORR_N(CLONE_SYSVSEM),
    IORR_N(CLONE_SETTLS),
    IORR_N(CLONE_PARENT_SETTID),
    IORR_N(CLONE_CHILD_CLEARTID),
    IORR_N(CLONE_UNTRACED),
    IORR_N(CLONE_CHILD_SETTID),
    IORR_N(CLONE_NEWCGROUP),
    IORR_N(CLONE_NEWUTS),
    IORR_N(CLONE_NEWIPC),
    IORR_N(CLONE_NEWUSER),
    IORR_N(CLONE_NEWPID),
    IORR_N(CLONE_NEWNET),
    IORR_N(CLONE_IO),
    IORR_N(CLONE_CLEAR_SIGHAND),  // clone3 only
    IORR_N(CLONE_INTO_CGROUP),    // clone3 only
    IORR_ALIAS(CLONE_DETACHED),   // ignored by the kernel; strace prints its bit in hex
};

// Signals 1..31 in number order; 32..64 print as SIGRT_<n - 32> (strace's signame()).
constexpr Named kSignals[] = {
    IORR_N(SIGHUP),    IORR_N(SIGINT),     IORR_N(SIGQUIT),     IORR_N(SIGILL),     IORR_N(SIGTRAP),
    IORR_N(SIGABRT),   IORR_N(SIGBUS),     IORR_N(SIGFPE),      IORR_N(SIGKILL),    IORR_N(SIGUSR1),
    IORR_N(SIGSEGV),   IORR_N(SIGUSR2),    IORR_N(SIGPIPE),     IORR_N(SIGALRM),    IORR_N(SIGTERM),
    IORR_N(SIGSTKFLT), IORR_N(SIGCHLD),    IORR_N(SIGCONT),     IORR_N(SIGSTOP),    IORR_N(SIGTSTP),
    IORR_N(SIGTTIN),   IORR_N(SIGTTOU),    IORR_N(SIGURG),      IORR_N(SIGXCPU),    IORR_N(SIGXFSZ),
    IORR_N(SIGVTALRM), IORR_N(SIGPROF),    IORR_N(SIGWINCH),    IORR_N(SIGIO),      IORR_N(SIGPWR),
    IORR_N(SIGSYS),    IORR_ALIAS(SIGIOT), IORR_ALIAS(SIGPOLL), IORR_ALIAS(SIGCLD),
};
constexpr int kSigRtMin = 32;  // the kernel's; glibc's SIGRTMIN is a function and reserves two
constexpr int kSigRtMax = 64;

constexpr bool SignalsInOrder() {
  for (size_t i = 0; i < 31; ++i)
    if (kSignals[i].value != i + 1 || kSignals[i].parse_only) return false;
  return true;
}
static_assert(SignalsInOrder(), "kSignals must list signals 1..31 in order");

// Constants strace prints in the argument slots that the call table stores as plain kInt
// (socket, fcntl's third argument, eventfd2, memfd_create, ...). Parse-only.
constexpr Named kIntConstants[] = {
    IORR_N(AF_UNSPEC),
    IORR_N(AF_UNIX),
    IORR_N(AF_LOCAL),
    IORR_N(AF_INET),
    IORR_N(AF_INET6),
    IORR_N(AF_NETLINK),
    IORR_N(AF_PACKET),
    IORR_N(AF_BLUETOOTH),
    IORR_N(AF_ALG),
    IORR_N(AF_VSOCK),
    IORR_N(SOCK_STREAM),
    IORR_N(SOCK_DGRAM),
    IORR_N(SOCK_RAW),
    IORR_N(SOCK_RDM),
    IORR_N(SOCK_SEQPACKET),
    IORR_N(SOCK_PACKET),
    IORR_N(SOCK_NONBLOCK),
    IORR_N(SOCK_CLOEXEC),
    IORR_N(IPPROTO_IP),
    IORR_N(IPPROTO_ICMP),
    IORR_N(IPPROTO_TCP),
    IORR_N(IPPROTO_UDP),
    IORR_N(IPPROTO_IPV6),
    IORR_N(IPPROTO_ICMPV6),
    IORR_N(IPPROTO_SCTP),
    IORR_N(IPPROTO_RAW),
    IORR_N(NETLINK_ROUTE),
    IORR_N(NETLINK_AUDIT),
    IORR_N(NETLINK_KOBJECT_UEVENT),
    IORR_N(NETLINK_GENERIC),
    IORR_N(FD_CLOEXEC),
    IORR_N(EFD_CLOEXEC),
    IORR_N(EFD_NONBLOCK),
    IORR_N(EFD_SEMAPHORE),
    IORR_N(MFD_CLOEXEC),
    IORR_N(MFD_ALLOW_SEALING),
    IORR_N(MFD_HUGETLB),
    IORR_N(EPOLL_CLOEXEC),
    IORR_N(IN_CLOEXEC),
    IORR_N(IN_NONBLOCK),
    IORR_N(F_RDLCK),
    IORR_N(F_WRLCK),
    IORR_N(F_UNLCK),
    IORR_N(F_SEAL_SEAL),
    IORR_N(F_SEAL_SHRINK),
    IORR_N(F_SEAL_GROW),
    IORR_N(F_SEAL_WRITE),
    IORR_N(F_SEAL_FUTURE_WRITE),
    IORR_N(DN_ACCESS),
    IORR_N(DN_MODIFY),
    IORR_N(DN_CREATE),
    IORR_N(DN_DELETE),
    IORR_N(DN_RENAME),
    IORR_N(DN_ATTRIB),
    IORR_N(DN_MULTISHOT),
};

constexpr Named kIocDirs[] = {
    IORR_N(_IOC_NONE),
    IORR_N(_IOC_READ),
    IORR_N(_IOC_WRITE),
};

#undef IORR_N
#undef IORR_ALIAS

// ---------------------------------------------------------------------------------------------
// Errno names and messages. Userspace ones with glibc's messages, then the kernel-internal ones
// (include/linux/errno.h) strace can show: the ERESTART* ones with strace's explanations, the
// others with the kernel's comments.

struct ErrnoEntry {
  int value;
  std::string_view name;
  std::string_view message;
};

constexpr ErrnoEntry kErrnos[] = {
    {EPERM, "EPERM", "Operation not permitted"},
    {ENOENT, "ENOENT", "No such file or directory"},
    {ESRCH, "ESRCH", "No such process"},
    {EINTR, "EINTR", "Interrupted system call"},
    {EIO, "EIO", "Input/output error"},
    {ENXIO, "ENXIO", "No such device or address"},
    {E2BIG, "E2BIG", "Argument list too long"},
    {ENOEXEC, "ENOEXEC", "Exec format error"},
    {EBADF, "EBADF", "Bad file descriptor"},
    {ECHILD, "ECHILD", "No child processes"},
    {EAGAIN, "EAGAIN", "Resource temporarily unavailable"},
    {ENOMEM, "ENOMEM", "Cannot allocate memory"},
    {EACCES, "EACCES", "Permission denied"},
    {EFAULT, "EFAULT", "Bad address"},
    {ENOTBLK, "ENOTBLK", "Block device required"},
    {EBUSY, "EBUSY", "Device or resource busy"},
    {EEXIST, "EEXIST", "File exists"},
    {EXDEV, "EXDEV", "Invalid cross-device link"},
    {ENODEV, "ENODEV", "No such device"},
    {ENOTDIR, "ENOTDIR", "Not a directory"},
    {EISDIR, "EISDIR", "Is a directory"},
    {EINVAL, "EINVAL", "Invalid argument"},
    {ENFILE, "ENFILE", "Too many open files in system"},
    {EMFILE, "EMFILE", "Too many open files"},
    {ENOTTY, "ENOTTY", "Inappropriate ioctl for device"},
    {ETXTBSY, "ETXTBSY", "Text file busy"},
    {EFBIG, "EFBIG", "File too large"},
    {ENOSPC, "ENOSPC", "No space left on device"},
    {ESPIPE, "ESPIPE", "Illegal seek"},
    {EROFS, "EROFS", "Read-only file system"},
    {EMLINK, "EMLINK", "Too many links"},
    {EPIPE, "EPIPE", "Broken pipe"},
    {EDOM, "EDOM", "Numerical argument out of domain"},
    {ERANGE, "ERANGE", "Numerical result out of range"},
    {EDEADLK, "EDEADLK", "Resource deadlock avoided"},
    {ENAMETOOLONG, "ENAMETOOLONG", "File name too long"},
    {ENOLCK, "ENOLCK", "No locks available"},
    {ENOSYS, "ENOSYS", "Function not implemented"},
    {ENOTEMPTY, "ENOTEMPTY", "Directory not empty"},
    {ELOOP, "ELOOP", "Too many levels of symbolic links"},
    {ENOMSG, "ENOMSG", "No message of desired type"},
    {EIDRM, "EIDRM", "Identifier removed"},
    {ECHRNG, "ECHRNG", "Channel number out of range"},
    {EL2NSYNC, "EL2NSYNC", "Level 2 not synchronized"},
    {EL3HLT, "EL3HLT", "Level 3 halted"},
    {EL3RST, "EL3RST", "Level 3 reset"},
    {ELNRNG, "ELNRNG", "Link number out of range"},
    {EUNATCH, "EUNATCH", "Protocol driver not attached"},
    {ENOCSI, "ENOCSI", "No CSI structure available"},
    {EL2HLT, "EL2HLT", "Level 2 halted"},
    {EBADE, "EBADE", "Invalid exchange"},
    {EBADR, "EBADR", "Invalid request descriptor"},
    {EXFULL, "EXFULL", "Exchange full"},
    {ENOANO, "ENOANO", "No anode"},
    {EBADRQC, "EBADRQC", "Invalid request code"},
    {EBADSLT, "EBADSLT", "Invalid slot"},
    {EBFONT, "EBFONT", "Bad font file format"},
    {ENOSTR, "ENOSTR", "Device not a stream"},
    {ENODATA, "ENODATA", "No data available"},
    {ETIME, "ETIME", "Timer expired"},
    {ENOSR, "ENOSR", "Out of streams resources"},
    {ENONET, "ENONET", "Machine is not on the network"},
    {ENOPKG, "ENOPKG", "Package not installed"},
    {EREMOTE, "EREMOTE", "Object is remote"},
    {ENOLINK, "ENOLINK", "Link has been severed"},
    {EADV, "EADV", "Advertise error"},
    {ESRMNT, "ESRMNT", "Srmount error"},
    {ECOMM, "ECOMM", "Communication error on send"},
    {EPROTO, "EPROTO", "Protocol error"},
    {EMULTIHOP, "EMULTIHOP", "Multihop attempted"},
    {EDOTDOT, "EDOTDOT", "RFS specific error"},
    {EBADMSG, "EBADMSG", "Bad message"},
    {EOVERFLOW, "EOVERFLOW", "Value too large for defined data type"},
    {ENOTUNIQ, "ENOTUNIQ", "Name not unique on network"},
    {EBADFD, "EBADFD", "File descriptor in bad state"},
    {EREMCHG, "EREMCHG", "Remote address changed"},
    {ELIBACC, "ELIBACC", "Can not access a needed shared library"},
    {ELIBBAD, "ELIBBAD", "Accessing a corrupted shared library"},
    {ELIBSCN, "ELIBSCN", ".lib section in a.out corrupted"},
    {ELIBMAX, "ELIBMAX", "Attempting to link in too many shared libraries"},
    {ELIBEXEC, "ELIBEXEC", "Cannot exec a shared library directly"},
    {EILSEQ, "EILSEQ", "Invalid or incomplete multibyte or wide character"},
    {ERESTART, "ERESTART", "Interrupted system call should be restarted"},
    {ESTRPIPE, "ESTRPIPE", "Streams pipe error"},
    {EUSERS, "EUSERS", "Too many users"},
    {ENOTSOCK, "ENOTSOCK", "Socket operation on non-socket"},
    {EDESTADDRREQ, "EDESTADDRREQ", "Destination address required"},
    {EMSGSIZE, "EMSGSIZE", "Message too long"},
    {EPROTOTYPE, "EPROTOTYPE", "Protocol wrong type for socket"},
    {ENOPROTOOPT, "ENOPROTOOPT", "Protocol not available"},
    {EPROTONOSUPPORT, "EPROTONOSUPPORT", "Protocol not supported"},
    {ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT", "Socket type not supported"},
    {EOPNOTSUPP, "EOPNOTSUPP", "Operation not supported"},
    {EPFNOSUPPORT, "EPFNOSUPPORT", "Protocol family not supported"},
    {EAFNOSUPPORT, "EAFNOSUPPORT", "Address family not supported by protocol"},
    {EADDRINUSE, "EADDRINUSE", "Address already in use"},
    {EADDRNOTAVAIL, "EADDRNOTAVAIL", "Cannot assign requested address"},
    {ENETDOWN, "ENETDOWN", "Network is down"},
    {ENETUNREACH, "ENETUNREACH", "Network is unreachable"},
    {ENETRESET, "ENETRESET", "Network dropped connection on reset"},
    {ECONNABORTED, "ECONNABORTED", "Software caused connection abort"},
    {ECONNRESET, "ECONNRESET", "Connection reset by peer"},
    {ENOBUFS, "ENOBUFS", "No buffer space available"},
    {EISCONN, "EISCONN", "Transport endpoint is already connected"},
    {ENOTCONN, "ENOTCONN", "Transport endpoint is not connected"},
    {ESHUTDOWN, "ESHUTDOWN", "Cannot send after transport endpoint shutdown"},
    {ETOOMANYREFS, "ETOOMANYREFS", "Too many references: cannot splice"},
    {ETIMEDOUT, "ETIMEDOUT", "Connection timed out"},
    {ECONNREFUSED, "ECONNREFUSED", "Connection refused"},
    {EHOSTDOWN, "EHOSTDOWN", "Host is down"},
    {EHOSTUNREACH, "EHOSTUNREACH", "No route to host"},
    {EALREADY, "EALREADY", "Operation already in progress"},
    {EINPROGRESS, "EINPROGRESS", "Operation now in progress"},
    {ESTALE, "ESTALE", "Stale file handle"},
    {EUCLEAN, "EUCLEAN", "Structure needs cleaning"},
    {ENOTNAM, "ENOTNAM", "Not a XENIX named type file"},
    {ENAVAIL, "ENAVAIL", "No XENIX semaphores available"},
    {EISNAM, "EISNAM", "Is a named type file"},
    {EREMOTEIO, "EREMOTEIO", "Remote I/O error"},
    {EDQUOT, "EDQUOT", "Disk quota exceeded"},
    {ENOMEDIUM, "ENOMEDIUM", "No medium found"},
    {EMEDIUMTYPE, "EMEDIUMTYPE", "Wrong medium type"},
    {ECANCELED, "ECANCELED", "Operation canceled"},
    {ENOKEY, "ENOKEY", "Required key not available"},
    {EKEYEXPIRED, "EKEYEXPIRED", "Key has expired"},
    {EKEYREVOKED, "EKEYREVOKED", "Key has been revoked"},
    {EKEYREJECTED, "EKEYREJECTED", "Key was rejected by service"},
    {EOWNERDEAD, "EOWNERDEAD", "Owner died"},
    {ENOTRECOVERABLE, "ENOTRECOVERABLE", "State not recoverable"},
    {ERFKILL, "ERFKILL", "Operation not possible due to RF-kill"},
    {EHWPOISON, "EHWPOISON", "Memory page has hardware error"},
    {512, "ERESTARTSYS", "To be restarted if SA_RESTART is set"},
    {513, "ERESTARTNOINTR", "To be restarted"},
    {514, "ERESTARTNOHAND", "To be restarted if no handler"},
    {515, "ENOIOCTLCMD", "No ioctl command"},
    {516, "ERESTART_RESTARTBLOCK", "Interrupted by signal"},
    {517, "EPROBE_DEFER", "Driver requests probe retry"},
    {518, "EOPENSTALE", "Open found a stale dentry"},
    {519, "ENOPARAM", "Parameter not supported"},
    {521, "EBADHANDLE", "Illegal NFS file handle"},
    {522, "ENOTSYNC", "Update synchronization mismatch"},
    {523, "EBADCOOKIE", "Cookie is stale"},
    {524, "ENOTSUPP", "Operation is not supported"},
    {525, "ETOOSMALL", "Buffer or request is too small"},
    {526, "ESERVERFAULT", "An untranslatable error occurred"},
    {527, "EBADTYPE", "Type not supported by server"},
    {528, "EJUKEBOX", "Request initiated, but will not complete before timeout"},
    {529, "EIOCBQUEUED", "iocb queued, will get completion event"},
    {530, "ERECALLCONFLICT", "Conflict with recalled state"},
    {531, "ENOGRACE", "NFS file lock reclaim refused"},
};
constexpr ErrnoEntry kErrnoAliases[] = {
    {EWOULDBLOCK, "EWOULDBLOCK", {}},
    {EDEADLOCK, "EDEADLOCK", {}},
    {ENOTSUP, "ENOTSUP", {}},
};
constexpr int kMaxErrno = 531;

// Index by value, for the hot direction.
constexpr auto kErrnoIndex = [] {
  std::array<int16_t, kMaxErrno + 1> index{};
  for (auto& i : index) i = -1;
  for (size_t i = 0; i < std::size(kErrnos); ++i) index[kErrnos[i].value] = static_cast<int16_t>(i);
  return index;
}();

struct NameIndex {
  std::string_view name;
  int value;
};
constexpr auto kErrnosByName = [] {
  std::array<NameIndex, std::size(kErrnos) + std::size(kErrnoAliases)> a{};
  size_t n = 0;
  for (const auto& e : kErrnos) a[n++] = {e.name, e.value};
  for (const auto& e : kErrnoAliases) a[n++] = {e.name, e.value};
  std::sort(a.begin(), a.end(),
            [](const NameIndex& x, const NameIndex& y) { return x.name < y.name; });
  return a;
}();

template <size_t N>
constexpr bool NamesUnique(const std::array<NameIndex, N>& a) {
  for (size_t i = 1; i < N; ++i)
    if (a[i - 1].name == a[i].name) return false;
  return true;
}
static_assert(NamesUnique(kErrnosByName), "duplicate errno name");

template <size_t N>
int FindByName(const std::array<NameIndex, N>& a, std::string_view name, int missing) {
  auto it = std::lower_bound(a.begin(), a.end(), name,
                             [](const NameIndex& x, std::string_view n) { return x.name < n; });
  return it != a.end() && it->name == name ? it->value : missing;
}

// ---------------------------------------------------------------------------------------------
// x86_64 syscalls, from the generated table.

struct SyscallEntry {
  int nr;
  std::string_view name;
};
constexpr SyscallEntry kSyscalls[] = {
#include "syscall_names.inc"
};

constexpr int kMaxSyscall = [] {
  int m = 0;
  for (const auto& s : kSyscalls) m = std::max(m, s.nr);
  return m;
}();

constexpr auto kSyscallByNr = [] {
  std::array<std::string_view, kMaxSyscall + 1> a{};
  for (const auto& s : kSyscalls) a[s.nr] = s.name;
  return a;
}();

constexpr auto kSyscallsByName = [] {
  std::array<NameIndex, std::size(kSyscalls)> a{};
  for (size_t i = 0; i < std::size(kSyscalls); ++i) a[i] = {kSyscalls[i].name, kSyscalls[i].nr};
  std::sort(a.begin(), a.end(),
            [](const NameIndex& x, const NameIndex& y) { return x.name < y.name; });
  return a;
}();
static_assert(NamesUnique(kSyscallsByName), "duplicate syscall name");

// The call table and the generated syscall table must agree.
constexpr bool CallTableMatchesSyscalls() {
  for (const auto& c : kCalls) {
    if (c.nr < 0) continue;
    if (c.nr > kMaxSyscall || kSyscallByNr[c.nr] != c.name) return false;
  }
  return true;
}
static_assert(CallTableMatchesSyscalls(), "syscalls.def disagrees with syscall_names.inc");

// ---------------------------------------------------------------------------------------------
// Formatting.

void AppendDec(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

void AppendUDec(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

// printf's "%#x": "0x1f", and "0" for zero.
void AppendHex(std::string& out, uint64_t v) {
  if (v == 0) {
    out += '0';
    return;
  }
  char buf[24] = {'0', 'x'};
  auto r = std::to_chars(buf + 2, buf + sizeof(buf), v, 16);
  out.append(buf, r.ptr);
}

// printf's "%#03o": "0644", "022", "007", "000".
void AppendOctal(std::string& out, uint64_t v) {
  char buf[28];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, 8);
  size_t digits = static_cast<size_t>(r.ptr - buf) + (v != 0 ? 1 : 0);
  if (digits < 3) out.append(3 - digits, '0');
  if (v != 0) out += '0';
  out.append(buf, r.ptr);
}

// strace's printflags(): the names of the entries whose bits are all set, in table order, then
// the bits left over in hex; zero prints the table's name for zero, or "0".
void AppendFlags(std::string& out, Table table, uint64_t v) {
  if (v == 0) {
    for (const Named& e : table) {
      if (e.value == 0 && !e.parse_only) {
        out += e.name;
        return;
      }
    }
    out += '0';
    return;
  }
  bool any = false;
  for (const Named& e : table) {
    if (e.parse_only || e.value == 0 || (v & e.value) != e.value) continue;
    if (any) out += '|';
    out += e.name;
    any = true;
    v &= ~e.value;
    if (v == 0) return;
  }
  if (any) out += '|';
  AppendHex(out, v);
}

// strace's printxval(): the entry's name, or the value in hex.
void AppendValue(std::string& out, Table table, uint64_t v) {
  for (const Named& e : table) {
    if (e.value == v && !e.parse_only) {
      out += e.name;
      return;
    }
  }
  AppendHex(out, v);
}

void AppendSignal(std::string& out, uint64_t sig) {
  if (sig >= 1 && sig <= 31) {
    out += kSignals[sig - 1].name;
  } else if (sig >= kSigRtMin && sig <= kSigRtMax) {
    out += "SIGRT_";
    AppendUDec(out, sig - kSigRtMin);
  } else {
    AppendUDec(out, sig);
  }
}

void AppendOpenFlags(std::string& out, uint64_t v) {
  AppendValue(out, kAccessModes, v & O_ACCMODE);
  v &= ~static_cast<uint64_t>(O_ACCMODE);
  if (v != 0) {
    out += '|';
    AppendFlags(out, kOpenFlags, v);
  }
}

// strace's print_symbolic_mode_t() when a file type is set ("S_IFREG|S_ISUID|0755"), its
// print_numeric_umode_t() otherwise ("04755").
void AppendMode(std::string& out, uint64_t v) {
  const uint64_t type = v & S_IFMT;
  std::string_view type_name;
  if (type != 0) {
    for (const Named& e : kModeBits) {
      if (e.value == type) type_name = e.name;
    }
  }
  if (type_name.empty()) {
    AppendOctal(out, v);
    return;
  }
  out += type_name;
  out += '|';
  if (v & S_ISUID) out += "S_ISUID|";
  if (v & S_ISGID) out += "S_ISGID|";
  if (v & S_ISVTX) out += "S_ISVTX|";
  AppendOctal(out, v & ~static_cast<uint64_t>(S_IFMT | S_ISUID | S_ISGID | S_ISVTX));
}

void AppendMapFlags(std::string& out, uint64_t v) {
  AppendValue(out, kMapTypes, v & kMapType);
  const uint64_t huge = (v & kMapHugeBits) >> MAP_HUGE_SHIFT;
  v &= ~(kMapType | kMapHugeBits);
  if (v != 0) {
    out += '|';
    AppendFlags(out, kMapFlags, v);
  }
  if (huge != 0) {
    out += '|';
    AppendUDec(out, huge);
    out += "<<MAP_HUGE_SHIFT";
  }
}

void AppendCloneFlags(std::string& out, uint64_t v) {
  const uint64_t sig = v & kCloneSignalMask;
  const uint64_t flags = v & ~kCloneSignalMask;
  if (flags != 0) AppendFlags(out, kCloneFlags, flags);
  if (sig != 0) {
    if (flags != 0) out += '|';
    AppendSignal(out, sig);
  }
  if (v == 0) out += '0';
}

// ---------------------------------------------------------------------------------------------
// Parsing.

constexpr bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
constexpr bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
constexpr bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

bool IsIdent(std::string_view s) {
  if (s.empty() || !IsIdentStart(s.front())) return false;
  for (char c : s)
    if (!IsIdentChar(c)) return false;
  return true;
}

// Removes blanks, a trailing "/* ... */" comment and a leading "name=" (lower case, as in
// strace's "flags=CLONE_VM|SIGCHLD").
std::string_view Clean(std::string_view s) {
  s = Trim(s);
  if (s.size() >= 4 && s.ends_with("*/")) {
    size_t open = s.rfind("/*", s.size() - 2);
    if (open != std::string_view::npos) s = Trim(s.substr(0, open));
  }
  if (!s.empty() && ((s.front() >= 'a' && s.front() <= 'z') || s.front() == '_')) {
    size_t i = 1;
    while (i < s.size() &&
           ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
      ++i;
    if (i < s.size() && s[i] == '=') s = Trim(s.substr(i + 1));
  }
  return s;
}

// Unsigned magnitude of a C integer literal without sign; wraps nothing: nullopt on overflow.
std::optional<uint64_t> ParseMagnitude(std::string_view s) {
  int base = 10;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() >= 2 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseIntegerLiteral(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
  std::optional<uint64_t> m = ParseMagnitude(s);
  if (!m) return std::nullopt;
  if (negative) {
    if (*m > (uint64_t{1} << 63)) return std::nullopt;
    return static_cast<int64_t>(uint64_t{0} - *m);
  }
  return static_cast<int64_t>(*m);
}

std::optional<uint64_t> Lookup(Table table, std::string_view name) {
  for (const Named& e : table)
    if (e.name == name) return e.value;
  return std::nullopt;
}

// "SIGCHLD", "SIGRT_2", or a number.
std::optional<uint64_t> ParseSignal(std::string_view s) {
  if (auto v = Lookup(kSignals, s)) return v;
  if (s.starts_with("SIGRT_")) {
    auto n = ParseIntegerLiteral(s.substr(6));
    if (n && *n >= 0 && *n <= kSigRtMax - kSigRtMin) return kSigRtMin + *n;
    return std::nullopt;
  }
  if (s == "SIGRTMIN") return kSigRtMin;
  if (s == "SIGRTMAX") return kSigRtMax;
  if (auto n = ParseIntegerLiteral(s)) return static_cast<uint64_t>(*n);
  return std::nullopt;
}

// A '|' expression of names (resolved by resolve), integers and "N<<MAP_HUGE_SHIFT" parts.
template <typename Resolve>
std::optional<uint64_t> ParseFlagExpr(std::string_view s, Resolve&& resolve) {
  if (s.empty()) return std::nullopt;
  uint64_t acc = 0;
  while (true) {
    size_t bar = s.find('|');
    std::string_view part = Trim(s.substr(0, bar));
    if (part.empty()) return std::nullopt;
    if (auto n = ParseIntegerLiteral(part)) {
      acc |= static_cast<uint64_t>(*n);
    } else if (size_t shift = part.find("<<"); shift != std::string_view::npos) {
      auto left = ParseIntegerLiteral(Trim(part.substr(0, shift)));
      std::string_view right_text = Trim(part.substr(shift + 2));
      std::optional<int64_t> right;
      if (right_text == "MAP_HUGE_SHIFT") {
        right = MAP_HUGE_SHIFT;
      } else {
        right = ParseIntegerLiteral(right_text);
      }
      if (!left || !right || *right < 0 || *right > 63) return std::nullopt;
      acc |= static_cast<uint64_t>(*left) << *right;
    } else if (IsIdent(part)) {
      std::optional<uint64_t> v = resolve(part);
      if (!v) return std::nullopt;
      acc |= *v;
    } else {
      return std::nullopt;
    }
    if (bar == std::string_view::npos) return acc;
    s.remove_prefix(bar + 1);
  }
}

std::optional<int64_t> ToSigned(std::optional<uint64_t> v) {
  if (!v) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::optional<int64_t> ParseFlagsIn(std::string_view s, Table table) {
  return ToSigned(ParseFlagExpr(s, [table](std::string_view name) { return Lookup(table, name); }));
}

// A single name or an integer.
std::optional<int64_t> ParseValueIn(std::string_view s, Table table) {
  if (auto n = ParseIntegerLiteral(s)) return n;
  if (!IsIdent(s)) return std::nullopt;
  return ToSigned(Lookup(table, s));
}

std::optional<int64_t> ParseOpenFlags(std::string_view s) {
  return ToSigned(ParseFlagExpr(s, [](std::string_view name) {
    if (auto v = Lookup(kAccessModes, name)) return v;
    return Lookup(kOpenFlags, name);
  }));
}

// Calls item(text) for each top-level comma-separated item of s, skipping over quoted strings
// and nested (), [] and {}. False when s is unbalanced or item returns false.
template <typename Item>
bool ForEachItem(std::string_view s, Item&& item) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i)
        if (s[i] == '\\') ++i;
      if (i >= s.size()) return false;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth < 0) return false;
    } else if (c == ',' && depth == 0) {
      if (!item(Trim(s.substr(start, i - start)))) return false;
      start = i + 1;
    }
  }
  if (depth != 0) return false;
  std::string_view last = Trim(s.substr(start));
  if (last.empty() && start == 0) return true;  // no items at all
  return item(last);
}

bool Unwrap(std::string_view& s, char open, char close) {
  if (s.size() < 2 || s.front() != open || s.back() != close) return false;
  s = s.substr(1, s.size() - 2);
  return true;
}

// Calls field(name, value) for each "name=value" member of a strace struct "{...}".
template <typename Field>
bool ForEachField(std::string_view s, Field&& field) {
  if (!Unwrap(s, '{', '}')) return false;
  return ForEachItem(s, [&field](std::string_view item) {
    size_t eq = item.find('=');
    if (eq != std::string_view::npos && IsIdent(Trim(item.substr(0, eq))))
      field(Trim(item.substr(0, eq)), Trim(item.substr(eq + 1)));
    return true;
  });
}

// The value of member name of a strace struct, or an empty view.
std::string_view FieldOf(std::string_view s, std::string_view name, bool* ok) {
  std::string_view found;
  *ok = ForEachField(s, [&](std::string_view n, std::string_view v) {
    if (n == name && found.empty()) found = v;
  });
  return found;
}

// "3", "-1", "AT_FDCWD", each optionally followed by strace -y's "<path>".
std::optional<int64_t> ParseFd(std::string_view s) {
  size_t lt = s.find('<');
  if (lt != std::string_view::npos) {
    if (s.back() != '>') return std::nullopt;
    s = Trim(s.substr(0, lt));
  }
  if (s == "AT_FDCWD") return AT_FDCWD;
  return ParseIntegerLiteral(s);
}

std::optional<int64_t> ParseFdPair(std::string_view s) {
  if (!Unwrap(s, '[', ']')) return std::nullopt;
  // Paths printed by -y may hold commas: try the first few commas until both sides are fds.
  int tries = 0;
  for (size_t comma = s.find(','); comma != std::string_view::npos && tries < 16;
       comma = s.find(',', comma + 1), ++tries) {
    auto a = ParseFd(Trim(s.substr(0, comma)));
    if (!a) continue;
    auto b = ParseFd(Trim(s.substr(comma + 1)));
    if (!b) continue;
    if (*a < INT32_MIN || *a > INT32_MAX || *b < INT32_MIN || *b > INT32_MAX) return std::nullopt;
    return static_cast<int64_t>(static_cast<uint64_t>(static_cast<uint32_t>(*a)) |
                                static_cast<uint64_t>(static_cast<uint32_t>(*b)) << 32);
  }
  return std::nullopt;
}

// "NULL" (-1), "[5]", and the in/out forms "[5 => 10]" and "[5] => [10]" (the value going in).
std::optional<int64_t> ParseOffsetPtr(std::string_view s) {
  if (s == "NULL") return -1;
  if (s.empty() || s.front() != '[') return std::nullopt;
  size_t arrow = s.find("=>");
  if (arrow == std::string_view::npos) {
    if (!Unwrap(s, '[', ']')) return std::nullopt;
  } else {
    s = Trim(s.substr(0, arrow));
    if (s.ends_with(']')) s.remove_suffix(1);
    s.remove_prefix(1);
  }
  return ParseIntegerLiteral(Trim(s));
}

std::optional<int64_t> ParseDev(std::string_view s) {
  if (!s.starts_with("makedev(")) return ParseIntegerLiteral(s);
  s.remove_prefix(7);
  if (!Unwrap(s, '(', ')')) return std::nullopt;
  std::optional<int64_t> parts[2];
  int n = 0;
  bool ok = ForEachItem(s, [&](std::string_view item) {
    if (n >= 2) return false;
    parts[n++] = ParseIntegerLiteral(item);
    return parts[n - 1].has_value();
  });
  if (!ok || n != 2) return std::nullopt;
  if (*parts[0] < 0 || *parts[0] > UINT32_MAX || *parts[1] < 0 || *parts[1] > UINT32_MAX)
    return std::nullopt;
  return static_cast<int64_t>(
      makedev(static_cast<unsigned>(*parts[0]), static_cast<unsigned>(*parts[1])));
}

// A decimal sum (what AppendArg prints), "NULL", or strace's iovec array.
std::optional<int64_t> ParseIovec(std::string_view s) {
  if (s == "NULL") return 0;
  if (!s.empty() && s.front() >= '0' && s.front() <= '9' && !s.starts_with("0x") &&
      !s.starts_with("0X"))
    return ParseIntegerLiteral(s);
  if (!Unwrap(s, '[', ']')) return std::nullopt;
  uint64_t sum = 0;
  bool ok = ForEachItem(s, [&sum](std::string_view item) {
    if (item == "...") return true;  // strace's cut-off of long arrays
    bool fields_ok = false;
    std::string_view len = FieldOf(item, "iov_len", &fields_ok);
    if (!fields_ok || len.empty()) return false;
    auto n = ParseIntegerLiteral(len);
    if (!n) return false;
    sum += static_cast<uint64_t>(*n);
    return true;
  });
  if (!ok) return std::nullopt;
  return static_cast<int64_t>(sum);
}

std::optional<int64_t> ParseOpenHow(std::string_view s) {
  if (s.empty() || s.front() != '{') return ParseOpenFlags(s);
  bool ok = false;
  std::string_view flags = FieldOf(s, "flags", &ok);
  if (!ok || flags.empty()) return std::nullopt;
  return ParseOpenFlags(flags);
}

std::optional<int64_t> ParseCloneFlagExpr(std::string_view s) {
  return ToSigned(ParseFlagExpr(s, [](std::string_view name) -> std::optional<uint64_t> {
    if (auto v = Lookup(kCloneFlags, name)) return v;
    if (name.starts_with("SIG")) {
      auto sig = ParseSignal(name);
      if (sig && *sig <= kCloneSignalMask) return sig;
    }
    return std::nullopt;
  }));
}

std::optional<int64_t> ParseCloneFlags(std::string_view s) {
  if (s.empty() || s.front() != '{') return ParseCloneFlagExpr(s);
  // clone3's struct clone_args: flags plus exit_signal.
  std::string_view flags_text, signal_text;
  bool ok = ForEachField(s, [&](std::string_view name, std::string_view value) {
    if (name == "flags" && flags_text.empty()) flags_text = value;
    if (name == "exit_signal" && signal_text.empty()) signal_text = value;
  });
  if (!ok || flags_text.empty()) return std::nullopt;
  auto flags = ParseCloneFlagExpr(flags_text);
  if (!flags) return std::nullopt;
  if (signal_text.empty()) return flags;
  auto sig = ParseSignal(signal_text);
  if (!sig || *sig > kCloneSignalMask) return std::nullopt;
  return static_cast<int64_t>(static_cast<uint64_t>(*flags) | *sig);
}

// "_IOC(_IOC_READ|_IOC_WRITE, 0x66, 0x1, 0x8)".
std::optional<int64_t> ParseIocMacro(std::string_view s) {
  if (!s.starts_with("_IOC(")) return std::nullopt;
  s.remove_prefix(4);
  if (!Unwrap(s, '(', ')')) return std::nullopt;
  std::optional<int64_t> parts[4];
  int n = 0;
  bool ok = ForEachItem(s, [&](std::string_view item) {
    if (n >= 4) return false;
    parts[n] = n == 0 ? ParseFlagsIn(item, kIocDirs) : ParseIntegerLiteral(item);
    return parts[n++].has_value();
  });
  if (!ok || n != 4) return std::nullopt;
  const int64_t dir = *parts[0], type = *parts[1], nr = *parts[2], size = *parts[3];
  if (dir < 0 || dir > _IOC_DIRMASK || type < 0 || type > _IOC_TYPEMASK || nr < 0 ||
      nr > _IOC_NRMASK || size < 0 || size > _IOC_SIZEMASK)
    return std::nullopt;
  return static_cast<int64_t>(
      static_cast<uint64_t>(dir) << _IOC_DIRSHIFT | static_cast<uint64_t>(type) << _IOC_TYPESHIFT |
      static_cast<uint64_t>(nr) << _IOC_NRSHIFT | static_cast<uint64_t>(size) << _IOC_SIZESHIFT);
}

std::optional<int64_t> ParseIoctlOne(std::string_view s) {
  if (auto v = ParseValueIn(s, kIoctls)) return v;
  return ParseIocMacro(s);
}

// strace prints every name of an ambiguous request: "BTRFS_IOC_CLONE or FICLONE".
std::optional<int64_t> ParseIoctl(std::string_view s) {
  while (true) {
    size_t sep = s.find(" or ");
    if (auto v = ParseIoctlOne(Trim(s.substr(0, sep)))) return v;
    if (sep == std::string_view::npos) return std::nullopt;
    s.remove_prefix(sep + 4);
  }
}

std::optional<int64_t> ParseSysNr(std::string_view s) {
  if (auto n = ParseIntegerLiteral(s)) return n;
  if (s.starts_with("syscall_")) return ParseIntegerLiteral(s.substr(8));
  int nr = SyscallNumber(s);
  if (nr < 0) return std::nullopt;
  return nr;
}

std::optional<int64_t> ParseIntArg(std::string_view s) {
  if (s == "NULL") return 0;
  return ToSigned(ParseFlagExpr(s, [](std::string_view name) -> std::optional<uint64_t> {
    for (Table t :
         {Table(kIntConstants), Table(kAccessModes), Table(kOpenFlags), Table(kSignals)}) {
      if (auto v = Lookup(t, name)) return v;
    }
    return std::nullopt;
  }));
}

std::optional<int64_t> ParseAddr(std::string_view s) {
  if (s == "NULL") return 0;
  return ParseIntegerLiteral(s);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

void AppendArg(std::string& out, ArgKind k, int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  switch (k) {
    case ArgKind::kBuf:
    case ArgKind::kPath:
    case ArgKind::kStr:
    case ArgKind::kLinkTarget:
    case ArgKind::kXattrValue:
    case ArgKind::kFd:
    case ArgKind::kOffset:
    case ArgKind::kInt:
    case ArgKind::kCloneSize:  // -1: unknown
      AppendDec(out, v);
      return;
    case ArgKind::kSize:
    case ArgKind::kIovec:
      AppendUDec(out, u);
      return;
    case ArgKind::kDirFd:
      if (v == AT_FDCWD) {
        out += "AT_FDCWD";
      } else {
        AppendDec(out, v);
      }
      return;
    case ArgKind::kOpenFlags:
    case ArgKind::kOpenHow:
      AppendOpenFlags(out, u);
      return;
    case ArgKind::kMode:
      AppendMode(out, u);
      return;
    case ArgKind::kOffsetPtr:
      if (v == -1) {
        out += "NULL";
      } else {
        out += '[';
        AppendDec(out, v);
        out += ']';
      }
      return;
    case ArgKind::kWhence:
      AppendValue(out, kWhence, u);
      return;
    case ArgKind::kAtFlags:
      AppendFlags(out, kAtFlags, u);
      return;
    case ArgKind::kAccessMode:
      AppendFlags(out, kAccessFlags, u);
      return;
    case ArgKind::kFcntlCmd:
      AppendValue(out, kFcntlCmds, u);
      return;
    case ArgKind::kRwfFlags:
      AppendFlags(out, kRwfFlags, u);
      return;
    case ArgKind::kRenameFlags:
      AppendFlags(out, kRenameFlags, u);
      return;
    case ArgKind::kXattrFlags:
      AppendFlags(out, kXattrFlags, u);
      return;
    case ArgKind::kInotifyMask:
      AppendFlags(out, kInotifyFlags, u);
      return;
    case ArgKind::kFallocMode:
      AppendFlags(out, kFallocFlags, u);
      return;
    case ArgKind::kSyncRangeFlags:
      AppendFlags(out, kSyncRangeFlags, u);
      return;
    case ArgKind::kMsyncFlags:
      AppendFlags(out, kMsyncFlags, u);
      return;
    case ArgKind::kCloseRangeFlags:
      AppendFlags(out, kCloseRangeFlags, u);
      return;
    case ArgKind::kStatxMask:
      AppendFlags(out, kStatxMasks, u);
      return;
    case ArgKind::kAdvice:
      AppendValue(out, kAdvice, u);
      return;
    case ArgKind::kBlockPhase:
      AppendValue(out, kBlockPhases, u);
      return;
    case ArgKind::kBlockOp:
      AppendFlags(out, kBlockOps, u);
      return;
    case ArgKind::kIoctlReq:
      // Names only for values that fit the kernel's unsigned int cmd, so that the hex of any
      // other value reads back unchanged.
      if (u <= UINT32_MAX) {
        AppendValue(out, kIoctls, u);
      } else {
        AppendHex(out, u);
      }
      return;
    case ArgKind::kFlockOp:
      AppendFlags(out, kFlockOps, u);
      return;
    case ArgKind::kProt:
      AppendFlags(out, kProt, u);
      return;
    case ArgKind::kMapFlags:
      AppendMapFlags(out, u);
      return;
    case ArgKind::kCloneFlags:
      AppendCloneFlags(out, u);
      return;
    case ArgKind::kAddr:
      if (v == 0) {
        out += "NULL";
      } else {
        AppendHex(out, u);
      }
      return;
    case ArgKind::kDev:
      out += "makedev(";
      AppendHex(out, major(u));
      out += ", ";
      AppendHex(out, minor(u));
      out += ')';
      return;
    case ArgKind::kId:
      if (v == -1 || u == UINT32_MAX) {  // uid_t(-1), "no change"
        out += "-1";
      } else {
        AppendDec(out, v);
      }
      return;
    case ArgKind::kFdPair:
      out += '[';
      AppendDec(out, static_cast<int32_t>(static_cast<uint32_t>(u)));
      out += ", ";
      AppendDec(out, static_cast<int32_t>(static_cast<uint32_t>(u >> 32)));
      out += ']';
      return;
    case ArgKind::kSysNr: {
      std::string_view name = v >= 0 && v <= kMaxSyscall ? kSyscallByNr[v] : std::string_view();
      if (name.empty()) {
        AppendDec(out, v);
      } else {
        out += name;
      }
      return;
    }
  }
  AppendDec(out, v);  // a kind this file does not know yet
}

std::optional<int64_t> ParseArg(ArgKind k, std::string_view token) {
  const std::string_view s = Clean(token);
  if (s.empty()) return std::nullopt;
  switch (k) {
    case ArgKind::kBuf:
    case ArgKind::kPath:
    case ArgKind::kStr:
    case ArgKind::kLinkTarget:
    case ArgKind::kXattrValue:
      return std::nullopt;
    case ArgKind::kFd:
    case ArgKind::kDirFd:
      return ParseFd(s);
    case ArgKind::kOpenFlags:
      return ParseOpenFlags(s);
    case ArgKind::kOpenHow:
      return ParseOpenHow(s);
    case ArgKind::kMode:
      return ParseFlagsIn(s, kModeBits);
    case ArgKind::kSize:
    case ArgKind::kOffset:
    case ArgKind::kId:
    case ArgKind::kCloneSize:
      return ParseIntegerLiteral(s);
    case ArgKind::kOffsetPtr:
      return ParseOffsetPtr(s);
    case ArgKind::kIovec:
      return ParseIovec(s);
    case ArgKind::kWhence:
      return ParseValueIn(s, kWhence);
    case ArgKind::kAtFlags:
      return ParseFlagsIn(s, kAtFlags);
    case ArgKind::kAccessMode:
      return ParseFlagsIn(s, kAccessFlags);
    case ArgKind::kFcntlCmd:
      return ParseValueIn(s, kFcntlCmds);
    case ArgKind::kRwfFlags:
      return ParseFlagsIn(s, kRwfFlags);
    case ArgKind::kRenameFlags:
      return ParseFlagsIn(s, kRenameFlags);
    case ArgKind::kXattrFlags:
      return ParseFlagsIn(s, kXattrFlags);
    case ArgKind::kInotifyMask:
      return ParseFlagsIn(s, kInotifyFlags);
    case ArgKind::kFallocMode:
      return ParseFlagsIn(s, kFallocFlags);
    case ArgKind::kSyncRangeFlags:
      return ParseFlagsIn(s, kSyncRangeFlags);
    case ArgKind::kMsyncFlags:
      return ParseFlagsIn(s, kMsyncFlags);
    case ArgKind::kCloseRangeFlags:
      return ParseFlagsIn(s, kCloseRangeFlags);
    case ArgKind::kStatxMask:
      return ParseFlagsIn(s, kStatxMasks);
    case ArgKind::kAdvice:
      return ParseValueIn(s, kAdvice);
    case ArgKind::kBlockPhase:
      return ParseValueIn(s, kBlockPhases);
    case ArgKind::kBlockOp:
      return ParseFlagsIn(s, kBlockOps);
    case ArgKind::kIoctlReq:
      return ParseIoctl(s);
    case ArgKind::kFlockOp:
      return ParseFlagsIn(s, kFlockOps);
    case ArgKind::kProt:
      return ParseFlagsIn(s, kProt);
    case ArgKind::kMapFlags:
      return ToSigned(ParseFlagExpr(s, [](std::string_view name) {
        if (auto v = Lookup(kMapTypes, name)) return v;
        return Lookup(kMapFlags, name);
      }));
    case ArgKind::kCloneFlags:
      return ParseCloneFlags(s);
    case ArgKind::kAddr:
      return ParseAddr(s);
    case ArgKind::kDev:
      return ParseDev(s);
    case ArgKind::kFdPair:
      return ParseFdPair(s);
    case ArgKind::kSysNr:
      return ParseSysNr(s);
    case ArgKind::kInt:
      return ParseIntArg(s);
  }
  return std::nullopt;
}

std::optional<int64_t> ParseInteger(std::string_view token) {
  return ParseIntegerLiteral(Trim(token));
}

std::string_view ErrnoName(int err) {
  if (err <= 0 || err > kMaxErrno || kErrnoIndex[err] < 0) return {};
  return kErrnos[kErrnoIndex[err]].name;
}

int ErrnoFromName(std::string_view name) { return FindByName(kErrnosByName, name, 0); }

std::string_view ErrnoMessage(int err) {
  if (err <= 0 || err > kMaxErrno || kErrnoIndex[err] < 0) return {};
  return kErrnos[kErrnoIndex[err]].message;
}

std::string_view SignalName(int sig) {
  if (sig < 1 || sig > 31) return {};
  return kSignals[sig - 1].name;
}

std::string_view SyscallName(int nr) {
  if (nr < 0 || nr > kMaxSyscall) return {};
  return kSyscallByNr[nr];
}

int SyscallNumber(std::string_view name) { return FindByName(kSyscallsByName, name, -1); }

}  // namespace iorr::trace
