// The calls a sweep of real programs found missing from the call table (format version 5):
// getcwd, inotify_init1 and inotify_add_watch, and bind of an AF_UNIX socket to a path, which
// makes a socket node that chmod, stat and unlink then use. Each is made through libc's
// function (the wrappers), some through libc's own internal calls (realpath's getcwd: dispatch
// or the patched sites) and some through a syscall instruction of this program's (dispatch or
// the patched sites). Also binds that store no path: abstract, unnamed, AF_INET, a refused
// length. Works in DIR (created), leaves DIR empty, prints what it saw, exits 0.
// Usage: sock_calls DIR
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static long Raw3(long nr, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return r;
}

static int fails = 0;
static void Check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "sock_calls: %s: %s\n", what, strerror(errno));
    ++fails;
  }
}

static socklen_t UnixAddr(struct sockaddr_un* a, const char* path) {
  memset(a, 0, sizeof(*a));
  a->sun_family = AF_UNIX;
  strncpy(a->sun_path, path, sizeof(a->sun_path) - 1);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: sock_calls DIR\n");
    return 2;
  }
  Check(mkdir(argv[1], 0755) == 0, "mkdir");
  Check(chdir(argv[1]) == 0, "chdir");

  // getcwd: the caller's buffer, glibc's own (NULL, 0), a buffer too small (ERANGE), through
  // realpath (libc's internal call), and raw.
  char buf[PATH_MAX];
  Check(getcwd(buf, sizeof(buf)) != NULL, "getcwd");
  char* own = getcwd(NULL, 0);
  Check(own != NULL, "getcwd(NULL, 0)");
  Check(getcwd(buf, 2) == NULL && errno == ERANGE, "getcwd of 2 bytes");
  char* real = realpath(".", NULL);
  Check(real != NULL, "realpath");
  Check(Raw3(SYS_getcwd, (long)buf, sizeof(buf), 0) > 0, "raw getcwd");

  // inotify: a watch on the directory, one on a missing name (ENOENT), one raw.
  int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  Check(in >= 0, "inotify_init1");
  Check(inotify_add_watch(in, ".", IN_MODIFY | IN_CREATE) >= 0, "inotify_add_watch");
  Check(inotify_add_watch(in, "missing", IN_ATTRIB) < 0 && errno == ENOENT,
        "inotify_add_watch of a missing name");
  Check(Raw3(SYS_inotify_add_watch, in, (long)".", IN_DELETE) >= 0, "raw inotify_add_watch");

  // bind to a path: a socket node, then chmod, stat, unlink; bound again (EADDRINUSE first).
  struct sockaddr_un a;
  socklen_t len = UnixAddr(&a, "sock");
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  Check(s >= 0, "socket");
  Check(bind(s, (struct sockaddr*)&a, len) == 0, "bind");
  struct stat st;
  Check(chmod("sock", 0600) == 0, "chmod");
  Check(stat("sock", &st) == 0 && S_ISSOCK(st.st_mode), "stat");
  int s2 = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  Check(bind(s2, (struct sockaddr*)&a, len) < 0 && errno == EADDRINUSE, "bind to a used name");
  Check(unlink("sock") == 0, "unlink");
  // The whole of sun_path, no NUL (the kernel takes it so), raw.
  memset(&a, 0, sizeof(a));
  a.sun_family = AF_UNIX;
  memset(a.sun_path, 'n', sizeof(a.sun_path));
  int s3 = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  Check(Raw3(SYS_bind, s3, (long)&a, sizeof(a)) == 0, "raw bind of 108 bytes");
  char name[sizeof(a.sun_path) + 1];
  memcpy(name, a.sun_path, sizeof(a.sun_path));
  name[sizeof(a.sun_path)] = 0;
  Check(unlink(name) == 0, "unlink of the 108-byte name");

  // Binds that name no path: abstract, unnamed (autobind), AF_INET, a length refused.
  int s4 = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  memset(&a, 0, sizeof(a));
  a.sun_family = AF_UNIX;
  // (Unique: the tests run at once in several modes.)
  int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "iorr-abstract-%d", (int)getpid());
  Check(bind(s4, (struct sockaddr*)&a,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) == 0,
        "abstract bind");
  int s5 = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  Check(bind(s5, (struct sockaddr*)&a, sizeof(sa_family_t)) == 0, "unnamed bind");
  int s6 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in in4 = {
      .sin_family = AF_INET, .sin_port = 0, .sin_addr = {htonl(INADDR_LOOPBACK)}};
  Check(bind(s6, (struct sockaddr*)&in4, sizeof(in4)) == 0, "AF_INET bind");
  Check(bind(s5, (struct sockaddr*)&a, 200) < 0 && errno == EINVAL, "bind of a refused length");

  printf("%s %s %d\n", own ? "cwd" : "no cwd", real ? "real" : "no real", fails);
  free(own);
  free(real);
  return fails ? 1 : 0;
}
