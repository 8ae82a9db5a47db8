/* A program whose signal handler siglongjmps out of a blocking read (the recorder's wrapped call
 * is abandoned mid-way), then writes a file: the recorder must record the write (the thread must
 * not stay "inside" the abandoned call). Usage: longjmp_out FILE. Exit 0 when the jump happened. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static sigjmp_buf env;

static void on_alarm(int sig) {
  (void)sig;
  siglongjmp(env, 1);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  int p[2];
  if (pipe(p) != 0) return 2;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  if (sigsetjmp(env, 1) == 0) {
    struct itimerval t = {{0, 0}, {0, 50000}};
    setitimer(ITIMER_REAL, &t, NULL);
    char c;
    (void)read(p[0], &c, 1); /* blocks until the alarm's handler jumps out of it */
    return 3;
  }
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 4;
  if (write(fd, "after\n", 6) != 6) return 5;
  return close(fd) == 0 ? 0 : 6;
}
