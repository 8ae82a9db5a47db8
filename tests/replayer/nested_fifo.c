/* A call interrupted by a signal handler that opens and closes the fd number the interrupted
 * call then gets: main blocks in open() of a FIFO (read side) until a child opens it for
 * writing, 300 ms later; a SIGALRM handler (SA_RESTART) runs 100 ms in, opens, writes and
 * closes a file, so the handler's open and the FIFO's open both return the lowest free fd.
 * The recorder keeps the handler's calls nested in the open (start order: the open, then the
 * handler's calls). Then main reads what the child wrote through that fd.
 * Usage: nested_fifo DIR. Prints "fd N, handler fd M, read K". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handler_fd = -1;

static void on_alarm(int sig) {
  (void)sig;
  int fd = open("handler.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (write(fd, "abc", 3) != 3) handler_fd = -2;
    close(fd);
  }
  if (handler_fd == -1) handler_fd = fd;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

int main(int argc, char** argv) {
  if (argc < 2 || chdir(argv[1]) != 0) return 2;
  unlink("fifo");
  if (mkfifo("fifo", 0644) != 0) return 1;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    sleep_ms(300);
    int w = open("fifo", O_WRONLY);
    if (w < 0 || write(w, "hello", 5) != 5) _exit(1);
    close(w);
    _exit(0);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 0}, {0, 100000}};
  setitimer(ITIMER_REAL, &it, NULL);
  int fd = open("fifo", O_RDONLY);  /* blocks until the child opens the other end */
  if (fd < 0) return 1;
  sleep_ms(100);  /* the child's write comes first in the recording too */
  char buf[16];
  ssize_t n = read(fd, buf, 5);
  close(fd);
  int status = 0;
  waitpid(child, &status, 0);
  printf("fd %d, handler fd %d, read %zd\n", fd, (int)handler_fd, n);
  return n == 5 && fd == handler_fd && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
