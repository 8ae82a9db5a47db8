// A library whose constructor starts a thread blocked in read() before the recorder's
// constructor runs: its code must not be rewritten under that thread (patch.cc).
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
int early_fds[2];
static void* reader(void* p) {
  char c;
  while (read(early_fds[0], &c, 1) == 1) printf("thread got %c\n", c), fflush(stdout);
  return p;
}
__attribute__((constructor)) static void init(void) {
  pipe(early_fds);
  pthread_t t;
  pthread_create(&t, 0, reader, 0);
  usleep(100000);
}
