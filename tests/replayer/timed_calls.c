/* Issues N file-system calls (stat of a file it made) T microseconds apart, on an absolute
 * schedule, for checking the replayer's exact timing. Usage: timed_calls DIR [N] [T_US] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int n = argc > 2 ? atoi(argv[2]) : 2000;
  long gap_ns = (argc > 3 ? atol(argv[3]) : 1000) * 1000L;
  if (chdir(argv[1]) != 0) return 1;
  int fd = open("timed.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 1;
  close(fd);
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  struct stat st;
  for (int i = 0; i < n; i++) {
    t.tv_nsec += gap_ns;
    while (t.tv_nsec >= 1000000000L) {
      t.tv_nsec -= 1000000000L;
      t.tv_sec++;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
    if (stat("timed.dat", &st) != 0) return 1;
  }
  printf("%d calls\n", n);
  return 0;
}
