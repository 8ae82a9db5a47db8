// Feeds the thread of early_thread_lib.c two bytes; prints what it got.
#include <stdio.h>
#include <unistd.h>
extern int early_fds[2];
int main() {
  write(early_fds[1], "a", 1);
  usleep(50000);
  write(early_fds[1], "b", 1);
  usleep(50000);
  printf("main done\n");
  return 0;
}
