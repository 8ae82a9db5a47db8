/* posix_spawn's cost by the size of the spawning process: a process that has written HEAP MiB
 * spawns PROG N times, waits for each, and writes its memory again after each spawn (as a build
 * tool's heap is written between its spawns). Prints microseconds per spawn+wait and per
 * rewrite, and the page faults of a rewrite: a child on a copy of the parent's memory (a fork)
 * leaves one copy-on-write fault per page written after; one on the parent's memory (glibc's
 * clone with CLONE_VM | CLONE_VFORK) none.
 * Usage: spawn_cost HEAP_MIB N [PROG]   (tools/bench/record-spawn.sh runs it) */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char** environ;

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long Faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: spawn_cost HEAP_MIB N [PROG]\n");
    return 2;
  }
  size_t bytes = (size_t)atol(argv[1]) << 20;
  int n = atoi(argv[2]);
  char* prog = argc > 3 ? argv[3] : "/bin/true";
  char* heap = bytes ? malloc(bytes) : NULL;
  if (bytes && !heap) return 1;
  if (bytes) memset(heap, 1, bytes);
  char* av[] = {prog, NULL};
  double spawn = 0, rewrite = 0;
  long faults = 0;
  for (int i = 0; i < n; ++i) {
    double t0 = Now();
    pid_t p;
    int st;
    if (posix_spawn(&p, prog, NULL, NULL, av, environ) != 0 || waitpid(p, &st, 0) != p) return 1;
    double t1 = Now();
    long f0 = Faults();
    for (size_t j = 0; j < bytes; j += 4096) heap[j]++;
    faults += Faults() - f0;
    spawn += t1 - t0;
    rewrite += Now() - t1;
  }
  printf("%.1f %.1f %ld\n", spawn / n * 1e6, rewrite / n * 1e6, faults / n);
  return 0;
}
