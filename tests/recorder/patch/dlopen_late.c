// dlopen()s libbig.so (path in argv[1]) and libz, then ends a thread with pthread_exit (which
// loads libgcc_s): no crash, no escape noted for code without system call instructions.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
static void* t(void* p) {
  pthread_exit(0);
  return p;
}
int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* h = dlopen(argv[1], RTLD_NOW);
  printf("dlopen %s\n", h ? "ok" : dlerror());
  void* z = dlopen("libz.so.1", RTLD_NOW);
  printf("libz %s\n", z ? "ok" : "no");
  pthread_t th;
  pthread_create(&th, 0, t, 0);
  pthread_join(th, 0);
  return 0;
}
