// record-stdio.sh's program: stdio a character at a time, as a scanner or a filter written with
// getc and putc does. Reads FILE with getc to its end, then writes N characters to /dev/null with
// putc, and prints the seconds each part took (CLOCK_MONOTONIC).
// Usage: stdio_loop FILE N
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: stdio_loop FILE N\n");
    return 2;
  }
  FILE* in = fopen(argv[1], "r");
  FILE* out = fopen("/dev/null", "w");
  if (in == NULL || out == NULL) {
    perror("stdio_loop");
    return 1;
  }
  long n = atol(argv[2]), lines = 0;
  int c;
  double t0 = Now();
  while ((c = getc(in)) != EOF) lines += c == '\n';
  double t1 = Now();
  for (long i = 0; i < n; i++) putc('x', out);
  fflush(out);
  double t2 = Now();
  printf("%.4f %.4f %ld\n", t1 - t0, t2 - t1, lines);
  return 0;
}
