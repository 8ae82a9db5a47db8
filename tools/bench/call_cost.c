/* The recorder's cost per call, in a loop hot in the cache: each kind of call N times, best of
 * ROUNDS rounds, in nanoseconds per call. Run plain, under `iorr record` and with dispatch off
 * by tools/bench/record-call-cost.sh, which prints the differences.
 * With COLD_KB, each call is preceded by writes over COLD_KB KiB of memory, one per cache line,
 * which push the library's code and data out of the caches between calls, as the kernel's work
 * does in a real program (a `tar xf` call copies kilobytes); the writes cost the same plain and
 * recorded, and are not timed: each call is timed on its own (the clock's two readings cost
 * the same plain and recorded), so the difference is what a call costs the recorder with cold
 * caches.
 * ONLY: the one kind to run (its name, as printed), as record-call-instructions.sh does.
 * Usage: call_cost DIR [N] [ROUNDS] [COLD_KB] [ONLY]   (DIR: where a scratch file is made) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: call_cost DIR [N] [ROUNDS] [COLD_KB] [ONLY]\n");
    return 2;
  }
  long n = argc > 2 ? atol(argv[2]) : 200000;
  int rounds = argc > 3 ? atoi(argv[3]) : 5;
  size_t cold = argc > 4 ? (size_t)atol(argv[4]) << 10 : 0;
  const char* only = argc > 5 ? argv[5] : NULL;
  volatile char* evict = cold ? calloc(cold, 1) : NULL;
  if (cold && !evict) return 1;
  char path[4096];
  snprintf(path, sizeof(path), "%s/call_cost.%d", argv[1], (int)getpid());
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(path);
    return 1;
  }
  char byte = 'x';
  struct stat st;
  /* Each kind: a name and the loop body. */
  static const char* const names[] = {"lseek", "fstat", "pwrite", "open+close", "raw lseek"};
  enum { kinds = sizeof(names) / sizeof(names[0]) };
  for (int k = 0; k < kinds; ++k) {
    if (only && strcmp(only, names[k]) != 0) continue;
    double best = 1e30;
    for (int r = 0; r < rounds; ++r) {
      double t0 = now_ns(), in_calls = 0;
      for (long i = 0; i < n; ++i) {
        double c0 = 0;
        if (cold) {
          for (size_t j = 0; j < cold; j += 64) evict[j]++;
          c0 = now_ns();
        }
        switch (k) {
          case 0:
            lseek(fd, 0, SEEK_CUR);
            break;
          case 1:
            fstat(fd, &st);
            break;
          case 2:
            pwrite(fd, &byte, 1, 0);
            break;
          case 3:
            close(open(path, O_RDONLY));
            break;
          case 4:
            syscall(SYS_lseek, fd, 0, SEEK_CUR);
            break;
        }
        if (cold) in_calls += now_ns() - c0;
      }
      double per = (cold ? in_calls : now_ns() - t0) / n / (k == 3 ? 2 : 1);
      if (per < best) best = per;
    }
    printf("%s %.1f\n", names[k], best);
  }
  close(fd);
  unlink(path);
  return 0;
}
