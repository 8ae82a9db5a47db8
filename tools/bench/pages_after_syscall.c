/* Whether the pages a recorded call touches after its system call cost TLB refills: on a host
 * with page-table isolation and no PCID the kernel switches page tables at every entry and exit,
 * which may empty the TLB of the program's pages. Times a loop of one system call (getppid)
 * followed by one load from each of K distinct pages, for K = 0, 1, 2, 4, 8 (best of 5 rounds
 * of 200,000), in ns per loop. Stop 23's host, three runs: K=0 1,001 to 1,194 ns, K=8 1,017 to
 * 1,231 ns, within each run's noise (about 40 ns): no refill cost to see.
 * Usage: pages_after_syscall */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void) {
  const long n = 200000;
  volatile char* m =
      mmap(0, 8 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (m == MAP_FAILED) return 1;
  const int ks[] = {0, 1, 2, 4, 8};
  for (unsigned j = 0; j < sizeof(ks) / sizeof(ks[0]); ++j) {
    int k = ks[j];
    double best = 1e18;
    long sum = 0;
    for (int r = 0; r < 5; ++r) {
      double t0 = now_ns();
      for (long i = 0; i < n; ++i) {
        syscall(SYS_getppid);
        for (int p = 0; p < k; ++p) sum += m[(p << 12) + 64 * p];
      }
      double t = (now_ns() - t0) / n;
      if (t < best) best = t;
    }
    printf("K=%d pages: %.1f ns per loop%s\n", k, best, sum == 42 ? " " : "");
  }
  return 0;
}
