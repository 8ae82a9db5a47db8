// A baseline for record-variants.sh: preloaded into an unrecorded program, it starts one thread
// the way the recorder starts its writer (pthread_create from a constructor, every signal
// blocked, an fd table of its own) and leaves it asleep. The program then pays what a second
// thread costs it (glibc's multi-threaded paths: cancellation points, malloc's arena locks;
// the kernel's for a shared address space) and nothing of the recording.
#define _GNU_SOURCE
#include <linux/close_range.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

static void* Sleep(void* arg) {
  (void)arg;
  syscall(SYS_close_range, 0U, ~0U, CLOSE_RANGE_UNSHARE);  // then closes them: empty table
  for (;;) pause();
  return NULL;
}

__attribute__((constructor)) static void Start(void) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 << 10);
  pthread_t t;
  pthread_create(&t, &attr, Sleep, NULL);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}
