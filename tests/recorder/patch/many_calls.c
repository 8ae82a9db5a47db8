// Many calls through libc's PLT (lseek and write on a file), no signal handler: a process that
// switches from dispatch to patched sites part way (IORR_PATCH_AFTER).
// Usage: many_calls FILE N
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 3;
  long n = atol(argv[2]);
  for (long i = 0; i < n; ++i)
    if (lseek(fd, 0, SEEK_SET) != 0 || write(fd, "x", 1) != 1) return 4;
  return close(fd) == 0 ? 0 : 5;
}
