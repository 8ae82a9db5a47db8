// fs_torture: a C program that exercises what makes recording hard — fork, exec of itself,
// posix_spawn, threads with every signal blocked, stdio, opendir/readdir, a raw
// syscall(SYS_openat), closefrom and close_range — for the recorder's end-to-end tests
// (record_strace_test.sh). Its stdout is deterministic (no pids, paths or times) and it exits 0
// when every check passed, so a recorded run can be compared with a plain one.
// Usage: fs_torture WORKDIR   (child modes: fs_torture child-exec|child-spawn WORKDIR)
// The worker threads share only their own stack data and the counters guarded by joins.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

enum { kThreads = 4, kRounds = 40, kMaxPath = 4096 };

static const char* g_dir;
static char g_self[kMaxPath];
static int g_failures;

static void Fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fs_torture: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (errno %d: %s)\n", errno, strerror(errno));
  va_end(ap);
  ++g_failures;
}

static void PathOf(char* out, const char* name) { snprintf(out, kMaxPath, "%s/%s", g_dir, name); }

static int Compare(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

// Lists a directory with opendir/readdir, prints the number of entries and the sorted names
// (at most `show` of them), skipping "." and "..".
static int ListDir(const char* label, const char* path, int show) {
  DIR* d = opendir(path);
  if (d == NULL) {
    Fail("opendir %s", label);
    return -1;
  }
  char* names[1024];
  int n = 0;
  struct dirent* e;
  errno = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (n < 1024) names[n++] = strdup(e->d_name);
  }
  if (errno != 0) Fail("readdir %s", label);
  if (closedir(d) != 0) Fail("closedir %s", label);
  qsort(names, (size_t)n, sizeof names[0], Compare);
  printf("%s: %d entries", label, n);
  for (int i = 0; i < n && i < show; ++i) printf(" %s", names[i]);
  printf("\n");
  for (int i = 0; i < n; ++i) free(names[i]);
  return n;
}

// stdio: fopen/fprintf/fclose, then fopen/fgets/fclose.
static void Stdio(void) {
  char path[kMaxPath];
  PathOf(path, "stdio.txt");
  FILE* f = fopen(path, "w");
  if (f == NULL) {
    Fail("fopen w");
    return;
  }
  for (int i = 0; i < 20; ++i) fprintf(f, "line %d of the stdio file\n", i);
  if (fclose(f) != 0) Fail("fclose w");
  f = fopen(path, "r");
  if (f == NULL) {
    Fail("fopen r");
    return;
  }
  char line[128];
  int lines = 0;
  size_t bytes = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    ++lines;
    bytes += strlen(line);
  }
  if (fclose(f) != 0) Fail("fclose r");
  printf("stdio: %d lines, %zu bytes\n", lines, bytes);
}

// A raw syscall instruction that no libc wrapper sees.
static void RawOpenat(void) {
  char path[kMaxPath];
  PathOf(path, "raw.txt");
  long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    Fail("syscall(SYS_openat)");
    return;
  }
  static const char kText[] = "written after a raw openat\n";
  long n = syscall(SYS_write, fd, kText, sizeof kText - 1);
  if (syscall(SYS_close, fd) != 0) Fail("syscall(SYS_close)");
  struct stat st;
  if (stat(path, &st) != 0) Fail("stat raw.txt");
  printf("raw syscall: wrote %ld bytes, size %lld\n", n, (long long)st.st_size);
  // A failing raw call: its error must be recorded too.
  PathOf(path, "does-not-exist/raw.txt");
  long bad = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
  printf("raw syscall: missing file -> %ld %s\n", bad, bad < 0 && errno == ENOENT ? "ENOENT" : "?");
}

// Writes `len` bytes to a new file, fsyncs, closes.
static int WriteFile(const char* path, const char* data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  int rc = write(fd, data, len) == (ssize_t)len && fsync(fd) == 0 ? 0 : -1;
  if (close(fd) != 0) rc = -1;
  return rc;
}

static int WaitStatus(pid_t pid, const char* what) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) {
    Fail("waitpid %s", what);
    return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// fork: the child writes, syncs and renames a file, then exits with status 42.
static void Fork(void) {
  char tmp[kMaxPath], dst[kMaxPath];
  PathOf(tmp, "fork-child.tmp");
  PathOf(dst, "fork-child.txt");
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    Fail("fork");
    return;
  }
  if (pid == 0) {
    static const char kText[] = "from the forked child\n";
    int ok = WriteFile(tmp, kText, sizeof kText - 1) == 0 && rename(tmp, dst) == 0;
    _exit(ok ? 42 : 1);
  }
  int status = WaitStatus(pid, "fork");
  struct stat st;
  long long size = stat(dst, &st) == 0 ? (long long)st.st_size : -1;
  printf("fork: child exited %d, its file has %lld bytes\n", status, size);
  if (status != 42) Fail("fork child status %d", status);
}

// exec: a forked child runs this program again as `fs_torture child-exec DIR` (exits 3).
static void Exec(void) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    Fail("fork for exec");
    return;
  }
  if (pid == 0) {
    char* argv[] = {"fs_torture", "child-exec", (char*)g_dir, NULL};
    execv(g_self, argv);
    _exit(127);
  }
  int status = WaitStatus(pid, "exec");
  printf("exec: child exited %d\n", status);
  if (status != 3) Fail("exec child status %d", status);
}

// posix_spawn: `fs_torture child-spawn DIR` (exits 5), with a file action that opens its stdin.
static void Spawn(void) {
  char input[kMaxPath];
  PathOf(input, "stdio.txt");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, input, O_RDONLY, 0);
  char* argv[] = {"fs_torture", "child-spawn", (char*)g_dir, NULL};
  fflush(stdout);
  pid_t pid;
  int err = posix_spawn(&pid, g_self, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) {
    errno = err;
    Fail("posix_spawn");
    return;
  }
  int status = WaitStatus(pid, "spawn");
  printf("posix_spawn: child exited %d\n", status);
  if (status != 5) Fail("spawn child status %d", status);
}

struct Worker {
  int index;
  int renamed, unlinked, failures;
};

// Each thread blocks every signal, then creates, syncs, renames, stats and (every other round)
// unlinks its own files in the shared directory t/.
static void* Work(void* arg) {
  struct Worker* w = arg;
  sigset_t all;
  sigfillset(&all);
  if (pthread_sigmask(SIG_BLOCK, &all, NULL) != 0) ++w->failures;
  char tmp[kMaxPath], dst[kMaxPath], data[100];
  memset(data, 'a' + w->index, sizeof data);
  for (int r = 0; r < kRounds; ++r) {
    snprintf(tmp, sizeof tmp, "%s/t/w%d-%02d.tmp", g_dir, w->index, r);
    snprintf(dst, sizeof dst, "%s/t/w%d-%02d.dat", g_dir, w->index, r);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
      ++w->failures;
      continue;
    }
    if (write(fd, data, sizeof data) != (ssize_t)sizeof data) ++w->failures;
    if (fsync(fd) != 0) ++w->failures;
    if (close(fd) != 0) ++w->failures;
    if (rename(tmp, dst) == 0) ++w->renamed;
    struct stat st;
    if (stat(dst, &st) != 0 || st.st_size != (off_t)sizeof data) ++w->failures;
    if (r % 2 == 1) {
      if (unlink(dst) == 0) ++w->unlinked;
    }
    if (stat(tmp, &st) == 0 || errno != ENOENT) ++w->failures;  // a failing stat, on purpose
  }
  return NULL;
}

static void Threads(void) {
  char shared[kMaxPath];
  PathOf(shared, "t");
  if (mkdir(shared, 0755) != 0) Fail("mkdir t");
  pthread_t th[kThreads];
  struct Worker w[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    w[i] = (struct Worker){.index = i};
    if (pthread_create(&th[i], NULL, Work, &w[i]) != 0) Fail("pthread_create");
  }
  int renamed = 0, unlinked = 0, failures = 0;
  for (int i = 0; i < kThreads; ++i) {
    pthread_join(th[i], NULL);
    renamed += w[i].renamed;
    unlinked += w[i].unlinked;
    failures += w[i].failures;
  }
  printf("threads: %d renamed, %d unlinked, %d failures\n", renamed, unlinked, failures);
  if (failures) Fail("%d failures in the threads", failures);
  ListDir("threads dir", shared, 3);
}

static int IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

// closefrom(3) and close_range: every fd of the program above 2 goes, stdio keeps working.
static void CloseAll(void) {
  char path[kMaxPath];
  PathOf(path, "stdio.txt");
  int fds[6];
  for (int i = 0; i < 6; ++i) fds[i] = open(path, O_RDONLY);
  int high = dup2(fds[0], 40);
  closefrom(3);
  int still = 0;
  for (int i = 0; i < 6; ++i) still += fds[i] >= 0 && IsOpen(fds[i]);
  still += high >= 0 && IsOpen(high);
  printf("closefrom(3): %d of 7 fds still open\n", still);
  if (still) Fail("closefrom left %d fds", still);

  for (int i = 0; i < 6; ++i) fds[i] = open(path, O_RDONLY);
  if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) Fail("close_range cloexec");
  int cloexec = 0;
  for (int i = 0; i < 6; ++i) cloexec += (fcntl(fds[i], F_GETFD) & FD_CLOEXEC) != 0;
  if (close_range(3, ~0U, 0) != 0) Fail("close_range");
  still = 0;
  for (int i = 0; i < 6; ++i) still += IsOpen(fds[i]);
  printf("close_range: %d of 6 marked close-on-exec, then %d still open\n", cloexec, still);
  // The program still reads and writes files afterwards.
  char line[128] = "";
  FILE* f = fopen(path, "r");
  if (f == NULL || fgets(line, sizeof line, f) == NULL) Fail("read after close_range");
  if (f) fclose(f);
  printf("after closing: first line %s", line);
}

// fs_torture child-exec DIR: data calls of every shape, then exit 3.
static int ChildExec(void) {
  char path[kMaxPath], link_path[kMaxPath], sub[kMaxPath];
  PathOf(path, "exec.dat");
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    Fail("child-exec open");
    return 1;
  }
  char a[64], b[64], back[128];
  memset(a, 'x', sizeof a);
  memset(b, 'y', sizeof b);
  struct iovec iov[2] = {{a, sizeof a}, {b, sizeof b}};
  ssize_t wv = writev(fd, iov, 2);
  ssize_t pw = pwrite(fd, "PWRITE", 6, 10);
  off_t end = lseek(fd, 0, SEEK_END);
  ssize_t pr = pread(fd, back, sizeof back, 0);
  if (ftruncate(fd, 100) != 0) Fail("ftruncate");
  if (fdatasync(fd) != 0) Fail("fdatasync");
  struct stat st;
  fstat(fd, &st);
  close(fd);
  PathOf(link_path, "exec.link");
  if (symlink("exec.dat", link_path) != 0) Fail("symlink");
  ssize_t rl = readlink(link_path, back, sizeof back);
  PathOf(sub, "exec.sub");
  if (mkdir(sub, 0700) != 0 || rmdir(sub) != 0) Fail("mkdir/rmdir");
  if (chmod(path, 0600) != 0) Fail("chmod");
  if (unlink(link_path) != 0) Fail("unlink");
  printf("child-exec: writev %zd, pwrite %zd, end %lld, pread %zd, size %lld, readlink %zd\n", wv,
         pw, (long long)end, pr, (long long)st.st_size, rl);
  fflush(stdout);
  return g_failures ? 1 : 3;
}

// fs_torture child-spawn DIR: reads stdin (opened by the spawn's file action), lists DIR, exits 5.
static int ChildSpawn(void) {
  char line[128];
  int lines = 0;
  while (fgets(line, sizeof line, stdin) != NULL) ++lines;
  printf("child-spawn: %d lines on stdin\n", lines);
  ListDir("child-spawn dir", g_dir, 4);
  fflush(stdout);
  return g_failures ? 1 : 5;
}

int main(int argc, char** argv) {
  if (argc == 3 && (strcmp(argv[1], "child-exec") == 0 || strcmp(argv[1], "child-spawn") == 0)) {
    g_dir = argv[2];
    return argv[1][6] == 'e' ? ChildExec() : ChildSpawn();
  }
  if (argc != 2) {
    fprintf(stderr, "usage: fs_torture WORKDIR\n");
    return 2;
  }
  g_dir = argv[1];
  ssize_t n = readlink("/proc/self/exe", g_self, sizeof g_self - 1);
  if (n <= 0) {
    Fail("readlink /proc/self/exe");
    return 1;
  }
  g_self[n] = '\0';
  if (mkdir(g_dir, 0755) != 0 && errno != EEXIST) {
    Fail("mkdir WORKDIR");
    return 1;
  }
  printf("fs_torture\n");
  Stdio();
  RawOpenat();
  Fork();
  Exec();
  Spawn();
  Threads();
  CloseAll();
  ListDir("work dir", g_dir, 10);
  printf("%s\n", g_failures ? "FAILED" : "done");
  return g_failures ? 1 : 0;
}
