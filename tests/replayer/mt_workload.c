/* 8 threads creating, writing, renaming, stat'ing and deleting files in two shared directories,
 * for the replayer's per-thread mode. Usage: mt_workload DIR [ROUNDS] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int rounds = 200;

static void* work(void* arg) {
  long t = (long)arg;
  char a[64], b[64], buf[4096] = {0};
  struct stat st;
  for (int i = 0; i < rounds; i++) {
    snprintf(a, sizeof a, "shared/t%ld-%d.tmp", t, i);
    snprintf(b, sizeof b, "other/t%ld-%d", t, i % 7);
    int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) continue;
    if (write(fd, buf, (size_t)(100 + (i * 37) % 4000)) < 0) {}
    if (i % 5 == 0) fsync(fd);
    close(fd);
    stat(a, &st);
    rename(a, b);  /* replaces another round's file of this thread */
    if (i % 3 == 0) unlink(b);
    stat("shared", &st);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2 || chdir(argv[1]) != 0) return 2;
  if (argc > 2) rounds = atoi(argv[2]);
  mkdir("shared", 0755);
  mkdir("other", 0755);
  pthread_t th[8];
  for (long t = 0; t < 8; t++) pthread_create(&th[t], NULL, work, (void*)t);
  for (int t = 0; t < 8; t++) pthread_join(th[t], NULL);
  printf("done\n");
  return 0;
}
