// A thread cancelled while blocked in read(): its C++ destructors must run, as unrecorded (the
// unwinder goes through the patched site's stub and the library's entry).
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
int fds[2];
struct Guard {
  ~Guard() { fprintf(stderr, "destructor ran\n"); }
};
void* run(void*) {
  Guard g;
  char c;
  read(fds[0], &c, 1);
  return nullptr;
}
int main() {
  pipe(fds);
  pthread_t t;
  pthread_create(&t, nullptr, run, nullptr);
  usleep(100000);
  pthread_cancel(t);
  void* r;
  pthread_join(t, &r);
  fprintf(stderr, "joined, cancelled=%d\n", r == PTHREAD_CANCELED);
}
