#!/usr/bin/env bash
# The recorder under hard conditions: the program's behaviour must not change and the trace must
# stay readable. Cases: a scrubbed environment (env -i) in a child, SIGKILL mid-run, a million
# calls in a burst, a program with its own SIGSYS handler, a thread that blocks SIGSYS, and a
# full disk under the trace (root only). Prints "N passed, M failed".
# Usage: record_behaviour_test.sh IORR_BIN
set -uo pipefail
iorr=$1
lib=$(dirname "$iorr")/../lib/libiorr-preload.so
[[ -f $lib ]] || { echo "SKIP: $lib is missing"; exit 77; }
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/iorr-behaviour.XXXXXX")
cleanup() {
  mountpoint -q "$work/full" 2>/dev/null && umount "$work/full"
  mountpoint -q "$work/xfs" 2>/dev/null && umount "$work/xfs"
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
# The files iorr record keeps between recordings (the clock, decoded system call sites) go here,
# not to the user's: each run of this test starts without them.
export XDG_CACHE_HOME=$work/cache
unset XDG_RUNTIME_DIR
passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
events() { "$iorr" stats --json "$1" | grep -o '"events":[0-9]*' | cut -d: -f2; }
processes() { "$iorr" stats --json "$1" 2> /dev/null | grep -o '"processes":[0-9]*' | cut -d: -f2; }
# grep -q on a dump would close the pipe early (and pipefail would report it): dump to a file.
dump_has() { "$iorr" dump "$1" > "$1.txt" 2>&1 && grep -q -- "$2" "$1.txt"; }
# as_unrecorded LABEL TRACE "MODE..." COMMAND...: COMMAND recorded into TRACE once per MODE
# (default, or VAR=VALUE for the recording) ends with status 0 and prints (stdout and stderr)
# what it prints unrecorded.
as_unrecorded() {
  local label=$1 trace=$2 modes=$3 want got st how
  shift 3
  want=$("$@" 2>&1)
  for how in $modes; do
    got=$(env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o "$trace" -- "$@" 2>&1)
    st=$?
    if [[ $st == 0 && $got == "$want" ]]; then
      ok "$label ($how): $(tr '\n' ' ' <<< "$got")"
    else
      fail "$label ($how): status $st, '$got' against '$want'"
    fi
  done
}
# The largest lag of a chunk's watermark behind its own events, and whether (an empty lag is 9)
# a lag is below a bound.
lag_of() { "$iorr" stats --json "$1" 2> /dev/null | grep -o '"max_watermark_lag_s":[0-9.]*' | cut -d: -f2; }
below() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "${1:-9}" "$2"; }

# 1. env -i: the child sees exactly the environment it asked for, and is still recorded.
env -i sh -c 'env; ls / > /dev/null' | sort > plain.env
timeout 60 "$iorr" record -q -o env.iorr -- env -i sh -c 'env; ls / > /dev/null' | sort > rec.env
if ! cmp -s plain.env rec.env; then
  fail "env -i: the environment differs: $(diff plain.env rec.env | head -n 4 | tr '\n' ' ')"
elif ! dump_has env.iorr 'execve("/usr/bin/ls"'; then
  fail "env -i: the ls started from a scrubbed environment was not recorded"
elif ! dump_has env.iorr 'getdents64'; then
  fail "env -i: ls's calls are missing"
elif [[ ${IORR_AUDIT:-1} != 0 ]] &&
     [[ $(grep -c 'caught by the audit module' env.iorr.txt) != $(grep -c 'exec-ok' env.iorr.txt) ]]; then
  fail "env -i: the loader's calls of $(grep -c 'caught by the audit module' env.iorr.txt) of $(grep -c 'exec-ok' env.iorr.txt) images recorded"
else
  ok "env -i: same environment, child recorded (the loader's calls of every image too)"
fi

# 2. SIGKILL mid-run: the trace reads up to the last flushed frame; status 137.
timeout 60 "$iorr" record -q -o kill.iorr -- sh -c \
  'i=0; while [ $i -lt 400 ]; do echo $i > f.$((i % 7)); i=$((i + 1)); done; sleep 0.3; kill -KILL $$'
st=$?
n=$(events kill.iorr 2>/dev/null || echo 0)
if [[ $st -ne 137 ]]; then
  fail "SIGKILL: exit status $st, expected 137"
elif ! "$iorr" stats kill.iorr > /dev/null 2> kill.err; then
  fail "SIGKILL: the trace does not read: $(head -n 1 kill.err)"
elif [[ ${n:-0} -lt 400 ]]; then
  fail "SIGKILL: only ${n:-0} events survived (the loop's ran 300 ms before the kill)"
else
  ok "SIGKILL: status 137, $n events readable"
fi

# 2b. Killed by a signal it does not handle (SIGTERM, SIGPIPE): the process writes out what it
# recorded before it dies of the signal (stop 22; until then it lost everything since the
# writer's last flush, up to 100 ms: all of a short process). Output and status as unrecorded,
# and the program is told SIG_DFL for the signals the library holds. Where rt_sigaction is not
# caught (IORR_DISPATCH=0) nothing changes, and that mode is not checked here.
cat > fatal.c << 'C'
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static void on_usr1(int sig) { (void)sig; }
int main(int argc, char** argv) {
  struct sigaction old;
  sigaction(SIGTERM, NULL, &old);
  void (*was)(int) = signal(SIGINT, SIG_DFL);
  struct sigaction h = {0}, back;
  h.sa_handler = on_usr1;
  sigaction(SIGUSR1, &h, NULL);
  signal(SIGUSR1, SIG_DFL);
  sigaction(SIGUSR1, NULL, &back);
  printf("term %s, int %s, usr1 after reset %s\n", old.sa_handler == SIG_DFL ? "dfl" : "other",
         was == SIG_DFL ? "dfl" : "other", back.sa_handler == SIG_DFL ? "dfl" : "other");
  fflush(stdout);
  mkdir("fatal.dir", 0755);
  char name[64];
  for (int i = 0; i < 300; ++i) {
    snprintf(name, sizeof name, "fatal.dir/%d", i);
    close(open(name, O_WRONLY | O_CREAT, 0644));
  }
  sigaction(SIGTERM, NULL, &old);  // again after 300 calls: past a switch to patched sites
  printf("term after the opens %s\n", old.sa_handler == SIG_DFL ? "dfl" : "other");
  fflush(stdout);
  if (strcmp(argv[1], "term") == 0) {
    kill(getpid(), SIGTERM);
    pause();
  } else if (strcmp(argv[1], "pipe") == 0) {
    int p[2];
    if (pipe(p) == 0 && close(p[0]) == 0) write(p[1], "x", 1);
  } else if (strcmp(argv[1], "segv") == 0) {
    volatile int* volatile p = 0;
    *p = 1;
  } else if (strcmp(argv[1], "abrt") == 0) {
    abort();
  } else if (strcmp(argv[1], "quit") == 0) {
    kill(getpid(), SIGQUIT);
    pause();
  }
  return 0;
}
C
if cc -O1 -g fatal.c -o fatal 2> /dev/null; then
  for kind in term pipe segv abrt quit; do
    want=$(./fatal $kind 2>&1; echo "status $?")
    for how in default IORR_PATCH=1 IORR_PATCH=0; do
      rm -rf fatal.dir
      got=$(env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o fatal.iorr -- \
        ./fatal $kind 2>&1; echo "status $?")
      dump_has fatal.iorr 'openat(' > /dev/null
      opens=$(grep -c 'openat(AT_FDCWD, "fatal.dir/' fatal.iorr.txt)
      if [[ $got == "$want" && $opens == 300 ]]; then
        ok "killed by SIG${kind^^} ($how): 300 opens recorded, $(tr '\n' ' ' <<< "$got")"
      else
        fail "killed by SIG${kind^^} ($how): $opens of 300 opens, '$got' against '$want'"
      fi
    done
  done
fi
# A crash's core is the program's own: the flush runs in the library's handler, which then
# leaves the signal pending with SIG_DFL and returns, so the process dies where the signal
# found it: gdb's first frames of the program equal an unrecorded run's, with no frame of the
# fatal-signal handler on top, and so does the signal's si_code (and a fault's address: the
# first signal's siginfo is sent again). A signal sent by a trapped call (abort's tgkill under
# dispatch) finds the thread in the SIGSYS handler, and gdb unwinds from there through the
# library's restorer into the program's frames. Needs gdb and a core_pattern that writes a file.
pattern=$(cat /proc/sys/kernel/core_pattern 2> /dev/null || echo '|')
if [[ ! -x fatal ]] || ! command -v gdb > /dev/null; then
  echo "skip: crash cores (no gdb or no test program)"
elif [[ $pattern == '|'* || $pattern == */* ]]; then
  echo "skip: crash cores (core_pattern '$pattern' does not write a core beside the program)"
else
  # frames DIR: the functions of the first three frames of the program in the core DIR/core*
  # of ./fatal (below the last signal frame, if the library's frames lie above one), and
  # "+library" when there are library frames above them.
  frames() {
    local core
    core=$(ls "$1"/core* 2> /dev/null | head -n 1)
    [[ -n $core ]] || { echo "no core"; return; }
    gdb -batch -nx -ex bt -ex 'p $_siginfo.si_code' -ex 'p $_siginfo._sifields._sigfault.si_addr' \
      "$PWD/fatal" "$core" 2> /dev/null | grep '^[#$]' | uniq |
      awk '/^\$1 / { code = $3; next }
           /^\$2 / { addr = $NF; next }
           /<signal handler called>/ { above = above n; n = 0; delete f; next }
           { f[n++] = $0 }
           END { for (i = 0; i < 3 && i < n; i++) {
                   s = f[i]; sub(/^#[0-9]+ +(0x[0-9a-f]+ in )?/, "", s); sub(/ \(.*/, "", s)
                   printf "%s ", s }
                 printf "si_code %s", code
                 if (code > 0) printf " si_addr %s", addr
                 if (above > 0) printf " +library" }'
  }
  for kind in segv abrt; do
    rm -rf core.plain && mkdir core.plain
    (cd core.plain && ulimit -c unlimited && ../fatal $kind > /dev/null 2>&1)
    want=$(frames core.plain)
    for how in IORR_PATCH=0 IORR_PATCH=1; do
      rm -rf core.rec && mkdir core.rec
      (cd core.rec && ulimit -c unlimited && env "$how" timeout 30 "$iorr" \
        record -q -o ../core.iorr -- ../fatal $kind > /dev/null 2>&1)
      got=$(frames core.rec)
      dump_has core.iorr 'openat(' > /dev/null
      opens=$(grep -c 'openat(AT_FDCWD, "fatal.dir/' core.iorr.txt)
      # Under dispatch abort's tgkill is trapped: the SIGSYS handler's frames lie above.
      [[ $how == IORR_PATCH=0 && $kind == abrt ]] && want_here="$want +library" || want_here=$want
      if [[ $want != "no core" && $got == "$want_here" && $opens == 300 ]]; then
        ok "core of a process killed by SIG${kind^^} ($how): frames '$got' as unrecorded, 300 opens"
      else
        fail "core of a process killed by SIG${kind^^} ($how): frames '$got' against '$want_here', $opens opens"
      fi
    done
  done
fi
# A fatal signal the kernel delivers as a system call returns: SIGPIPE as write gets EPIPE (the
# end of `prog | head`), a signal a call sends the process itself (O_ASYNC's F_SETSIG). The
# process died of it before the wrapper or the caught call's handler wrote the call's event:
# strace shows the call done, the trace did not have it (stop 36's sweep). Now the library's
# fatal-signal handler writes it, from the registers, when the interrupted context is that
# call's return: through the libc wrapper (write), libc's own write (stdio: a patched site or a
# trap), syscall() and a raw syscall instruction (a trap), and in a vfork child (which had no
# flush before its death at all: it is never armed). Status and output as unrecorded; a
# core-dumping signal still dumps. A call the signal interrupts before it is done (a read
# waiting on a pipe) is not written: unrecorded it dies unfinished.
cat > atreturn.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char** argv) {
  for (int i = 0; i < 100; ++i) close(open("/dev/null", O_RDONLY));  // past IORR_PATCH_AFTER=64
  // The pipe at 8 (read) and 7 (write), whatever fds it got first.
  int p[2];
  if (pipe(p) != 0) return 2;
  int r = fcntl(p[0], F_DUPFD, 50), w = fcntl(p[1], F_DUPFD, 50);
  close(p[0]);
  close(p[1]);
  if (r < 0 || w < 0 || dup2(r, 8) != 8 || dup2(w, 7) != 7) return 2;
  close(r);
  close(w);
  printf("%s\n", argv[1]);
  fflush(stdout);
  if (strcmp(argv[1], "block") == 0) {  // waits for ever on its own pipe: killed meanwhile
    FILE* f = fopen("atreturn.pid", "w");
    fprintf(f, "%d\n", getpid());
    fclose(f);
    char c;
    read(8, &c, 1);
    return 3;
  }
  if (strcmp(argv[1], "async") == 0) {  // the write's return delivers SIGQUIT (core)
    fcntl(8, F_SETOWN, getpid());
    fcntl(8, F_SETSIG, SIGQUIT);
    fcntl(8, F_SETFL, O_ASYNC);
    write(7, "x", 1);
    return 3;
  }
  close(8);  // no reader: the write gets EPIPE and SIGPIPE
  if (strcmp(argv[1], "write") == 0) {
    write(7, "x", 1);
  } else if (strcmp(argv[1], "stdio") == 0) {
    FILE* f = fdopen(7, "w");
    fputs("x", f);
    fflush(f);
  } else if (strcmp(argv[1], "syscall") == 0) {
    syscall(SYS_write, 7, "x", 1);
  } else if (strcmp(argv[1], "vfork") == 0) {  // a vfork child dies of it; the parent goes on
    pid_t pid = vfork();
    if (pid == 0) {
      write(7, "x", 1);
      _exit(5);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child killed by %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 0;
  } else if (strcmp(argv[1], "asm") == 0) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "0"(1L), "D"(7L), "S"("x"), "d"(1L) : "rcx", "r11", "memory");
  }
  return 3;
}
C
if cc -O1 -g atreturn.c -o atreturn 2> /dev/null; then
  for kind in write stdio syscall asm vfork; do
    want=$(./atreturn $kind 2>&1; echo "status $?")
    want_status=141
    [[ $kind == vfork ]] && want_status=0  # (the child dies of SIGPIPE: 13)
    modes="default IORR_PATCH_AFTER=64 IORR_PATCH=0"
    [[ $kind == asm ]] && modes="default IORR_PATCH=0"  # (patched: the program's own goes natively)
    for how in $modes; do
      got=$(env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o atreturn.iorr -- \
        ./atreturn $kind 2>&1; echo "status $?")
      if ! dump_has atreturn.iorr 'write(7, .* = -1 EPIPE'; then
        fail "SIGPIPE at write's return ($kind, $how): no write with EPIPE in the trace, '$got'; $(grep -m1 'write(7, ' atreturn.iorr.txt)"
      elif [[ $got != "$want" || $want != *"status $want_status" ]]; then
        fail "SIGPIPE at write's return ($kind, $how): '$got' against '$want'"
      else
        ok "SIGPIPE at write's return ($kind, $how): the write is in the trace, $(tr '\n' ' ' <<< "$got")"
      fi
    done
  done
  # A core-dumping signal that the write itself sends: the write (done, 1 byte) is in the
  # trace, and the process still dumps core and dies of SIGQUIT.
  rm -rf atr.plain && mkdir atr.plain
  want=$(cd atr.plain && ulimit -c unlimited && ../atreturn async 2>&1; echo "status $?")
  for how in default IORR_PATCH_AFTER=64 IORR_PATCH=0; do
    rm -rf atr.rec && mkdir atr.rec
    got=$(cd atr.rec && ulimit -c unlimited && env "${how/default/IORR_X=}" timeout 30 "$iorr" \
      record -q -o ../atreturn.iorr -- ../atreturn async 2>&1; echo "status $?")
    if ! dump_has atreturn.iorr 'write(7, .* = 1 <'; then
      fail "SIGQUIT at write's return ($how): no write of 1 byte in the trace, '$got'"
    elif [[ $got != "$want" || $want != *"status 131" ]] || ! ls atr.plain/core* > /dev/null 2>&1 ||
      ! ls atr.rec/core* > /dev/null 2>&1; then
      fail "SIGQUIT at write's return ($how): '$got' against '$want', cores: $(ls atr.plain atr.rec | tr '\n' ' ')"
    else
      ok "SIGQUIT at write's return ($how): the write is in the trace, a core, $(tr '\n' ' ' <<< "$got")"
    fi
  done
  # SIGTERM while read waits on a pipe: the read is not done (restarted under the library's
  # handler, then the process dies), and it is not in the trace.
  for how in default IORR_PATCH_AFTER=64 IORR_PATCH=0; do
    rm -f atreturn.pid
    env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o atreturn.iorr -- \
      ./atreturn block > /dev/null 2>&1 &
    rec=$!
    for _ in $(seq 100); do [[ -s atreturn.pid ]] && break; sleep 0.1; done
    sleep 0.3
    kill -TERM "$(cat atreturn.pid 2> /dev/null)" 2> /dev/null
    wait $rec
    st=$?
    if [[ $st != 143 ]]; then
      fail "SIGTERM in a waiting read ($how): status $st"
    elif ! dump_has atreturn.iorr 'openat(AT_FDCWD, "atreturn.pid"'; then
      fail "SIGTERM in a waiting read ($how): the trace lacks the calls before the read"
    elif grep -q 'read(8, ' atreturn.iorr.txt; then
      fail "SIGTERM in a waiting read ($how): the unfinished read is in the trace: $(grep 'read(8, ' atreturn.iorr.txt)"
    else
      ok "SIGTERM in a waiting read ($how): status 143, the unfinished read not in the trace"
    fi
  done
fi
# `yes | head -1`: yes's last write gets EPIPE and is in the trace, as strace shows it.
got=$(timeout 30 "$iorr" record -q -o yes.iorr -- sh -c 'yes | head -1' 2>&1; echo "status $?")
if [[ $got != $'y\nstatus 0' ]]; then
  fail "yes | head -1: '$got'"
elif ! dump_has yes.iorr 'write(1, .* = -1 EPIPE'; then
  fail "yes | head -1: yes's write with EPIPE is not in the trace"
else
  ok "yes | head -1: yes's last write, with EPIPE, is in the trace"
fi
# Stop 38: the writer thread left the program's fd table for one of its own by copying it (the
# kernel's close_range with CLOSE_RANGE_UNSHARE takes references on the first 64 fds before it
# closes them), at its start, while the program ran on: a pipe whose read end the program
# closed in that moment still had a reader, and a write took a byte instead of EPIPE (2 or 3
# of 15,000 writes here in every recorded run; once in stop 37's CI). The writer now shares
# the program's table until the main thread, the only one, waits for its move (a process's
# 4096th call): the children here close pipes' read ends at the writer's start (after 1 call)
# and across the move (after 4000).
cat > pipe_close.c << 'C'
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int children = atoi(argv[1]), calls = atoi(argv[2]), found = 0;
  signal(SIGPIPE, SIG_IGN);
  for (int i = 0; i < children; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      for (int c = 0; c < calls; c += 2) close(open("/dev/null", O_RDONLY));
      int bad = 0;
      for (int k = 0; k < 50; ++k) {
        int p[2];
        if (pipe(p) != 0) _exit(100);
        close(p[0]);
        if (write(p[1], "x", 1) == 1) ++bad;
        close(p[1]);
      }
      _exit(bad);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    found += WIFEXITED(st) ? WEXITSTATUS(st) : 100;
  }
  printf("writes that found a closed pipe's reader: %d\n", found);
  return found != 0;
}
C
if cc -O1 pipe_close.c -o pipe_close 2> /dev/null; then
  as_unrecorded "a closed pipe at the writer's start" pipe_close.iorr default ./pipe_close 300 1
  as_unrecorded "a closed pipe at the writer's move" pipe_close.iorr default ./pipe_close 100 4000
  if ! dump_has pipe_close.iorr 'pipe2\?(.* = 0' ||
    [[ $(grep -c ' = -1 EPIPE' pipe_close.iorr.txt) != 5000 ]]; then
    fail "a closed pipe at the writer's move: the trace lacks the pipes or their 5,000 EPIPE writes"
  fi
fi
# A review of the first version of the move (stop 38) found it wrong where the program leaves
# its table, installs a seccomp filter or shares the table with another process, or traps its
# calls: each mode here failed with it. unshare, closerange: the program leaves the shared
# table (unshare(CLONE_FILES), close_range with CLOSE_RANGE_UNSHARE) before its 4096th call;
# the writer, left behind in the old table, kept every file of it open (the write after
# closing the read end took a byte: 6 of 6). (A filter that kills for pidfd_getfd, installed
# after the start, killed the process at the move: "narrowed after start (pidfd)".) cfiles: a
# process and
# its clone(CLONE_FILES) child share one table, each closing pipes' read ends as the other
# moves its writer (1 to 6 of 80,000 writes took a byte). raw: raw syscall instructions (each
# trap put the count the move waits for back, so the writer never moved: it held the
# program's 9 fds).
cat > table_move.c << 'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static int pipes(int n) {  /* writes that found a reader after the read end was closed */
  int bad = 0;
  for (int k = 0; k < n; ++k) {
    int p[2];
    if (pipe(p) != 0) return 100;
    close(p[0]);
    if (write(p[1], "x", 1) == 1) ++bad;
    close(p[1]);
  }
  return bad;
}
static int child(void* a) { (void)a; _exit(pipes(2000)); }
static int count(const char* dir) {
  DIR* d = opendir(dir);
  int n = 0;
  if (!d) return -1;
  while (readdir(d)) ++n;
  closedir(d);
  return n - 2;
}
int main(int argc, char** argv) {
  const char* m = argv[1];
  signal(SIGPIPE, SIG_IGN);
  if (!strcmp(m, "unshare") || !strcmp(m, "closerange")) {
    int p[2];
    if (pipe(p)) return 2;
    usleep(100000);
    if (m[0] == 'u' ? unshare(CLONE_FILES) : syscall(SYS_close_range, 5000, 5000, CLOSE_RANGE_UNSHARE))
      return 3;
    close(p[0]);
    long w = write(p[1], "x", 1);
    printf("%s: write after closing the read end: %s\n", m, w < 0 ? strerror(errno) : "1 byte");
  } else if (!strcmp(m, "cfiles")) {
    int found = 0;
    for (int r = 0; r < 20; ++r) {
      pid_t pid = fork();
      if (pid == 0) {
        char* stack = mmap(0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        pid_t c = clone(child, stack + (1 << 20), CLONE_FILES | SIGCHLD, 0);
        if (c < 0) _exit(100);
        int bad = pipes(2000), st = 0;
        waitpid(c, &st, 0);
        _exit(bad + (WIFEXITED(st) ? WEXITSTATUS(st) : 100));
      }
      int st = 0;
      waitpid(pid, &st, 0);
      found += WIFEXITED(st) ? WEXITSTATUS(st) : 100;
    }
    printf("writes that found a closed pipe's reader: %d\n", found);
  } else {  /* raw: raw close(-1) calls, then the fds of the other tasks (the writer's) */
    for (int i = 0; i < 20000; ++i) {
      long r;
      __asm__ volatile("syscall" : "=a"(r) : "0"(SYS_close), "D"(-1L) : "rcx", "r11", "memory");
    }
    char path[64];
    DIR* t = opendir("/proc/self/task");
    struct dirent* e;
    while (t && (e = readdir(t))) {
      if (e->d_name[0] == '.' || atoi(e->d_name) == getpid()) continue;
      snprintf(path, sizeof path, "/proc/self/task/%s/fd", e->d_name);
      printf("another task holds %d fds\n", count(path));
    }
    if (t) closedir(t);
  }
  return 0;
}
C
if cc -O1 table_move.c -o table_move 2> /dev/null; then
  for mode in unshare closerange cfiles; do
    as_unrecorded "the writer's table: $mode" table_move.iorr default ./table_move $mode
  done
  if [[ ${IORR_PATCH:-} == 1 ]]; then
    echo "SKIP: the writer's table: raw system calls (patched from the start, the program's own system call instructions go unseen)"
  else
    got=$(timeout 60 "$iorr" record -q -o table_move.iorr -- ./table_move raw 2>&1)
    if [[ $got == "another task holds 3 fds" ]]; then
      ok "the writer's table: raw system calls: the writer moved ($got)"
    else
      fail "the writer's table: raw system calls: '$got' (want the writer's 3 fds)"
    fi
  fi
fi
# Review of stop 23: a fatal signal that comes while the program waits with a mask that lets it
# through (sigsuspend, ppoll, pselect6: the program blocks it otherwise) lived on once the
# handler returned to the blocking mask, and a thread of it joined a parked thread for ever;
# a crash handler on an 8 KiB alternate stack that calls abort() died of SIGSEGV (a second
# signal frame overflowed that stack), with and without SS_AUTODISARM.
cat > waitkill.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>
static volatile int stop;
static void* worker(void* p) {
  while (!stop) close(open("/dev/null", O_RDONLY));
  return p;
}
int main(int argc, char** argv) {
  sigset_t blk, none;
  sigemptyset(&blk);
  sigaddset(&blk, SIGTERM);
  sigemptyset(&none);
  sigprocmask(SIG_BLOCK, &blk, NULL);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  if (fork() == 0) {
    usleep(200000);
    kill(getppid(), SIGTERM);
    _exit(0);
  }
  int r;
  if (strcmp(argv[1], "ppoll") == 0) r = ppoll(NULL, 0, NULL, &none);
  else if (strcmp(argv[1], "pselect") == 0) r = pselect(0, NULL, NULL, NULL, NULL, &none);
  else r = sigsuspend(&none);
  stop = 1;
  pthread_join(t, NULL);
  printf("lived on: %d\n", r);
  return 0;
}
C
cat > altabort.c << 'C'
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
static void on_segv(int s) {
  (void)s;
  write(1, "crash\n", 6);
  abort();
}
int main(int argc, char** argv) {
  stack_t ss = {0};
  ss.ss_size = 8192;
  char* m = mmap(0, ss.ss_size + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  mprotect(m, 4096, PROT_NONE);  // a guard page below
  ss.ss_sp = m + 4096;
  ss.ss_flags = strcmp(argv[1], "autodisarm") == 0 ? SS_AUTODISARM : 0;
  sigaltstack(&ss, NULL);
  struct sigaction sa = {0};
  sa.sa_handler = on_segv;
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGSEGV, &sa, NULL);
  volatile int* volatile q = 0;
  *q = 1;
  return 0;
}
C
if cc -O1 -pthread waitkill.c -o waitkill 2> /dev/null && cc -O1 altabort.c -o altabort 2> /dev/null; then
  for run in "waitkill sigsuspend" "waitkill ppoll" "waitkill pselect" "altabort plain" "altabort autodisarm"; do
    want=$(./$run 2>&1; echo "status $?")
    for how in default IORR_PATCH=1 IORR_PATCH=0; do
      got=$(env "${how/default/IORR_X=}" timeout -s KILL 30 "$iorr" record -q -o wk.iorr -- ./$run 2>&1
        echo "status $?")
      if [[ $got == "$want" ]]; then
        ok "fatal signal: $run ($how): $(tr '\n' ' ' <<< "$got")as unrecorded"
      else
        fail "fatal signal: $run ($how): '$got' against '$want'"
      fi
    done
  done 2> /dev/null
fi
# A review of the first version: a fork child killed before it had left its parent's state
# flushed the parent's pending events again (duplicates) or spun for ever on a writer lock
# copied held; and the killed process's other threads ran on during the flush (their output
# appeared, which SIG_DFL's kill does not let happen). Now: no duplicate, no hang, no output.
cat > forkkill.c << 'C'
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int stop;
static int count;
static void* worker(void* a) {
  char p[64];
  while (!stop) {
    snprintf(p, sizeof p, "/nonexistent/w%d", count++);
    open(p, O_RDONLY);
  }
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  usleep(10000);
  int killed = 0;
  for (int i = 0; i < 50; ++i) {
    pid_t c = fork();
    if (c == 0)
      for (;;) pause();
    kill(c, SIGTERM);
    int st;
    waitpid(c, &st, 0);
    killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM;
  }
  stop = 1;
  pthread_join(t, 0);
  printf("killed %d\n", killed);
  return 0;
}
C
# The main thread sends itself SIGTERM; the worker, woken just before, makes its next call
# 300 us later: unrecorded the process is gone by then; recorded, the worker waits for the death
# while the main thread's handler flushes the worker's calls. The worker sleeps until then, so
# that the main thread has a CPU to itself between its wake and its kill (at stop 37 the worker
# spun meanwhile, and with the writer thread that made three runnable threads on two CPUs: a
# main thread preempted for 300 us let the write through, once in three runs; a version in
# which the worker sent the signal, to a main thread that had to be scheduled to take it, did
# so 1 in 30).
cat > lateout.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static volatile int flag;
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
static void* worker(void* a) {
  double end = now() + 0.06;
  while (now() < end) close(open("/dev/null", O_RDONLY));  /* events for the flush */
  while (!flag) syscall(SYS_futex, &flag, FUTEX_WAIT_PRIVATE, 0, 0, 0, 0);
  struct timespec t = {0, 300000};
  nanosleep(&t, 0);
  write(1, "late output\n", 12);
  _exit(0);
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  usleep(100000);
  flag = 1;
  syscall(SYS_futex, &flag, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
  kill(getpid(), SIGTERM);
  pause();
  return 0;
}
C
if cc -O1 -pthread forkkill.c -o forkkill 2> /dev/null && cc -O1 -pthread lateout.c -o lateout 2> /dev/null; then
  for how in default IORR_PATCH=1 IORR_PATCH=0; do
    got=$(env "${how/default/IORR_X=}" timeout 60 "$iorr" record -q -o forkkill.iorr -- ./forkkill 2>&1)
    st=$?
    dump_has forkkill.iorr 'openat(' > /dev/null
    all=$(grep -c 'nonexistent/w' forkkill.iorr.txt)
    uniq=$(grep -o 'nonexistent/w[0-9]*' forkkill.iorr.txt | sort -u | wc -l)
    if [[ $st == 0 && $got == "killed 50" && $all == "$uniq" && $all -gt 0 ]]; then
      ok "fork children killed at once ($how): $got, $all opens, none twice"
    else
      fail "fork children killed at once ($how): status $st, '$got', $all opens, $uniq distinct"
    fi
    late=0
    for i in 1 2 3; do
      got=$(env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o lateout.iorr -- ./lateout 2>&1)
      st=$?
      [[ $st == 143 && -z $got ]] || late=$((late + 1))
    done
    if [[ $late == 0 ]]; then
      ok "other threads of a process killed by SIGTERM ($how): no output after the signal, status 143"
    else
      fail "other threads of a process killed by SIGTERM ($how): $late of 3 runs with output or another status"
    fi
  done
fi
# Other threads' calls at the process's end or a thread's exec (stop 39's sweep): three threads
# append 8-byte records to files of their own; "exit": the main thread calls exit() 2 ms in;
# "exec": thread 1 execs /bin/true once its writes are done. Each record in the files must be
# in the trace (the calls made after the last flush, before the kernel ended the threads, were
# lost with the trace still complete: 2 to 11 of about 1,900 at the exit, 300 to 1,000 of
# 56,000 at the exec).
cat > endwrites.c << 'C'
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static int exec_mode;
static void* writer(void* arg) {
  long id = (long)arg;
  char name[32];
  snprintf(name, sizeof name, "endw%ld.dat", id);
  int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  for (int i = 0; i < 20000; i++)
    if (write(fd, "abcdefgh", 8) != 8) break;
  close(fd);
  if (exec_mode && id == 1) execl("/bin/true", "true", (char*)0);
  return 0;
}
int main(int argc, char** argv) {
  (void)argc;
  exec_mode = !strcmp(argv[1], "exec");
  pthread_t t[3];
  for (long i = 0; i < 3; i++) pthread_create(&t[i], 0, writer, (void*)i);
  if (!exec_mode) {
    usleep(2000);
    exit(0);
  }
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  return 0;
}
C
if cc -O1 -pthread endwrites.c -o endwrites 2> /dev/null; then
  for m in exit exec; do
    for how in default IORR_PATCH=0 IORR_PATCH=1 IORR_DISPATCH=0; do
      bad=""
      for i in 1 2 3; do
        rm -f endw*.dat
        env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o endw.iorr -- ./endwrites $m
        st=$?
        files=$(($(cat endw*.dat | wc -c) / 8))
        traced=$("$iorr" dump endw.iorr 2> /dev/null | grep -c 'write(.*, 8) = 8')
        [[ $st == 0 && $files == "$traced" ]] || bad+=" status $st, $files records in the files, $traced in the trace;"
      done
      if [[ -z $bad ]]; then
        ok "other threads' writes at a thread's $m ($how): every record in the files is in the trace"
      else
        fail "other threads' writes at a thread's $m ($how):$bad"
      fi
    done
  done
else
  fail "other threads' writes at a thread's exit or exec: the test program does not build"
fi

# The review of that hold (stop 39): without dispatch the hold comes at the library's destructor,
# and destructors run after it: (1) a library's destructor that takes a lock a parked thread
# held waited for ever; (2) one that forks: the child inherited the hold and parked at its first
# call for ever. The hold now ends by itself after 100 ms there, and a fork child drops it.
# (3) The library's pthread_atfork handler went with its own finalization, before those later
# destructors: the fork child ran on the parent's state, recorded under the parent's ids, and hung
# when the writer held its lock at the fork (CI of stop 39, 1 run in 15); it is now registered
# as the program's. (4) In PLT-only recording those destructors' calls were lost: the last flush
# was the library's destructor; it is now an exit handler that runs after every destructor.
cat > dtorlock.c << 'C'
#include <pthread.h>
#include <unistd.h>
pthread_mutex_t dtor_m = PTHREAD_MUTEX_INITIALIZER;
__attribute__((destructor)) static void dtor(void) {
  pthread_mutex_lock(&dtor_m);
  write(1, "dtor\n", 5);
  pthread_mutex_unlock(&dtor_m);
}
C
cat > dtorfork.c << 'C'
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((destructor)) static void dtor(void) {
  pid_t p = fork();
  if (p == 0) {
    close(open("dtorfork.child", O_WRONLY | O_CREAT | O_TRUNC, 0644));
    _exit(0);
  }
  int st;
  waitpid(p, &st, 0);
  write(1, "forked\n", 7);
}
C
cat > dtormain.c << 'C'
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
extern pthread_mutex_t dtor_m;
static int fd;
static void* run(void* a) {
  for (;;) {
    pthread_mutex_lock(&dtor_m);
    write(fd, "abcdefgh", 8);
    pthread_mutex_unlock(&dtor_m);
  }
  return a;
}
int main(void) {
  fd = open("dtormain.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pthread_t t;
  pthread_create(&t, 0, run, 0);
  usleep(20000);
  return 0;
}
C
if cc -O1 -shared -fPIC dtorlock.c -o libdtorlock.so 2> /dev/null &&
  cc -O1 -shared -fPIC dtorfork.c -o libdtorfork.so 2> /dev/null &&
  cc -O1 -pthread dtormain.c -o dtormain -L. -Wl,--no-as-needed -ldtorlock -ldtorfork \
    -Wl,-rpath,"$PWD" 2> /dev/null; then
  want=$(./dtormain 2>&1)
  for how in IORR_DISPATCH=0 default; do
    rm -f dtorfork.child
    got=$(env "${how/default/IORR_X=}" timeout 20 "$iorr" record -q -o dtor.iorr -- ./dtormain 2>&1)
    st=$?
    # The fork child's calls are its own process's (not under the parent's ids, on its state).
    "$iorr" dump dtor.iorr > dtor.iorr.txt 2>&1
    parent=$(grep -m1 -o '^\[[0-9]*' dtor.iorr.txt)
    child=$(grep -m1 '"dtorfork.child"' dtor.iorr.txt | grep -o '^\[[0-9]*')
    # And the destructor's last write, after the fork, is in the trace.
    last=$(grep -c "^$parent [0-9]*\] [0-9.]* write(1, ..., 7) = 7" dtor.iorr.txt)
    if [[ $st == 0 && $got == "$want" && -f dtorfork.child && -n $child && $child != "$parent" &&
      $last == 1 ]]; then
      ok "destructors after the hold: a lock a parked thread held, a fork ($how): as unrecorded, the child a process of its own, their calls recorded"
    else
      fail "destructors after the hold: a lock a parked thread held, a fork ($how): status $st, '$got' against '$want', child '$child' parent '$parent', last write recorded $last"
    fi
  done
else
  fail "destructors after the hold: the test programs do not build"
fi

# multiprocessing's Pool ends its workers with SIGTERM when it leaves its `with` block, often
# while a worker that got its last task is in its exit's flush: the workers' files must all be
# in the trace (75 of 120 opens were missing before stop 22; under load 4 runs of 10 of a
# fork Pool still lost a worker whose signal came inside that flush, until the signal waited
# for the flush to end).
if command -v python3 > /dev/null; then
  cat > pool.py << 'PY'
import multiprocessing as mp, os
def work(i):
    with open(f"pool.dir/{i}.txt", "w") as f:
        f.write(str(i))
    return i
if __name__ == "__main__":
    os.makedirs("pool.dir", exist_ok=True)
    for method in ("fork", "spawn", "fork"):
        with mp.get_context(method).Pool(2) as pool:
            print(method, sum(pool.map(work, range(40))))
PY
  want=$(python3 pool.py 2>&1; echo "status $?")
  for how in default IORR_PATCH=1 IORR_PATCH=0; do
    rm -rf pool.dir
    got=$(env "${how/default/IORR_X=}" timeout 60 "$iorr" record -q -o pool.iorr -- python3 pool.py 2>&1
      echo "status $?")
    dump_has pool.iorr 'openat(' > /dev/null
    opens=$(grep -c 'openat(AT_FDCWD, "pool.dir/[0-9]*.txt", O_WRONLY' pool.iorr.txt)
    if [[ $got == "$want" && $opens == 120 ]]; then
      ok "multiprocessing Pool, fork and spawn ($how): the workers' 120 opens recorded"
    else
      fail "multiprocessing Pool ($how): $opens of 120 opens, '$got' against '$want'"
    fi
  done
fi

# 2c. The clock of the recorded calls (stop 23): the TSC where the kernel keeps time with it or
# where iorr record finds it in step on every CPU (a VM told its TSC is unstable keeps
# kvm-clock), else clock_gettime; the header says which and why. Either way a call's time is
# CLOCK_MONOTONIC's: 20 stats 10 ms apart on an absolute schedule span 190 ms in the trace.
# The choice is kept for the boot in $XDG_RUNTIME_DIR/iorr-clock (stop 24): a second recording
# takes it from there; a file that does not read back whole (a multiplier out of range) is
# checked again and rewritten.
timed=$(dirname "$iorr")/timed_calls
if [[ -x $timed ]]; then
  source_now=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
  rm -rf clockdir && mkdir clockdir
  for how in first kept corrupt IORR_CLOCK=clock_gettime; do
    rm -rf timed.dir && mkdir timed.dir
    knob=IORR_X=
    case $how in
      corrupt) printf 'iorr-clock 1\n%s %s\n5\nclocksource tsc\n' \
        "$(cat /proc/sys/kernel/random/boot_id)" "$source_now" > clockdir/iorr-clock ;;
      IORR_CLOCK=*) knob=$how ;;
    esac
    env XDG_RUNTIME_DIR="$PWD/clockdir" "$knob" "$iorr" record -q -o clock.iorr -- "$timed" \
      "$PWD/timed.dir" 20 10000 > /dev/null
    "$iorr" dump clock.iorr > clock.txt 2>&1
    clock=$(grep -m1 '^# recorder_clock: ' clock.txt | cut -d' ' -f3-)
    span=$(grep 'newfstatat(AT_FDCWD, "timed.dat"' clock.txt | awk 'NR == 1 {a = $3} {b = $3}
      END {printf "%.1f", (b - a) * 1000}')
    [[ $source_now == tsc ]] && want='^tsc \(clocksource tsc' ||
      want="^(tsc \(clocksource $source_now; no warp in [0-9]+ turns|clock_gettime \(clocksource $source_now; )"
    case $how in
      first | corrupt) want+="[^;]*(;[^;]*)?\)$" ;; # checked now: nothing kept
      kept) want+=".*; kept from this boot's first check\)$" ;;
      *) want='^clock_gettime \(IORR_CLOCK=clock_gettime\)' ;;
    esac
    mult=$(sed -n 3p clockdir/iorr-clock 2> /dev/null)
    if [[ $clock =~ $want ]] && awk -v s="$span" 'BEGIN {exit !(s >= 180 && s <= 230)}' &&
      [[ $mult =~ ^[0-9]+$ && $mult != 5 ]]; then
      ok "clock ($how): '$clock', 20 calls 10 ms apart span $span ms"
    else
      fail "clock ($how): '$clock' (want /$want/), 20 calls 10 ms apart span '$span' ms (want 190: 180 to 230 under load), kept multiplier '$mult'"
    fi
  done
fi

# 3. A burst of a million calls (a writer/thread hand-off once deadlocked here).
if timeout 120 "$iorr" record -q -o burst.iorr -- dd if=/dev/zero of=/dev/null bs=1 count=500000 2> /dev/null; then
  n=$(events burst.iorr)
  if [[ $n -ge 1000000 ]]; then ok "burst: $n events"; else fail "burst: only $n events"; fi
else
  fail "burst: dd under the recorder failed or hung"
fi

# 4. A program with its own SIGSYS handler still gets its signal.
if command -v python3 > /dev/null; then
  prog='import os, signal
signal.signal(signal.SIGSYS, lambda s, f: print("handler", s))
os.kill(os.getpid(), signal.SIGSYS)
print("after")'
  python3 -c "$prog" > plain.sigsys 2>&1
  timeout 60 "$iorr" record -q -o sigsys.iorr -- python3 -c "$prog" > rec.sigsys 2>&1
  if cmp -s plain.sigsys rec.sigsys; then ok "own SIGSYS handler"; else
    fail "own SIGSYS handler: $(tr '\n' ' ' < rec.sigsys)"; fi

  # 5. A thread that blocks SIGSYS (and every signal) keeps working and is recorded.
  prog='import signal, threading
def work():
    signal.pthread_sigmask(signal.SIG_BLOCK, range(1, signal.NSIG))
    with open("blocked.txt", "w") as f:
        f.write("x" * 100)
t = threading.Thread(target=work); t.start(); t.join(); print(open("blocked.txt").read()[:3])'
  timeout 60 "$iorr" record -q -o blocked.iorr -- python3 -c "$prog" > rec.blocked 2>&1
  st=$?
  if [[ $st -ne 0 ]]; then
    fail "blocked SIGSYS: exit status $st: $(head -c 200 rec.blocked)"
  elif ! dump_has blocked.iorr 'openat(AT_FDCWD, "blocked.txt", O_WRONLY'; then
    fail "blocked SIGSYS: the thread's open is not in the trace"
  else
    ok "a thread with every signal blocked"
  fi
else
  echo "skip: python3 is missing (own SIGSYS handler, blocked SIGSYS)"
fi

# 6. A full disk under the trace: the program carries on, the trace says it is incomplete.
if [[ $(id -u) -eq 0 ]] && mkdir -p full && mount -t tmpfs -o size=8k tmpfs full 2> /dev/null; then
  timeout 60 "$iorr" record -q -o full/t.iorr -- sh -c \
    'i=0; while [ $i -lt 5000 ]; do echo $i > f.$i; i=$((i + 1)); done; rm -f f.*; echo done' \
    > full.out 2> full.err
  st=$?
  if [[ $st -ne 0 || $(cat full.out) != done ]]; then
    fail "disk full: the program was harmed (status $st, output $(head -c 100 full.out))"
  elif ! "$iorr" stats full/t.iorr > /dev/null 2> full.stats; then
    fail "disk full: the trace does not read: $(head -n 1 full.stats)"
  # (A disk that fills exactly at a frame's end leaves whole frames and no end record: the reader
  # then says "trace has no end record: the recording did not finish cleanly", which this
  # pattern missed once in stop 40's CI; a cut at any other byte reads as truncated.)
  elif ! grep -q "incomplete\|truncated\|lost\|no end record" full.stats; then
    fail "disk full: the trace does not say it is incomplete"
  else
    ok "disk full: program unharmed, trace marked incomplete"
  fi
else
  echo "skip: disk full (needs root and a tmpfs mount)"
fi

# 7. A static child cannot load the library: the trace says its exec was not recorded.
if printf 'int main(void) { return 3; }' | cc -static -x c - -o static_prog 2> /dev/null; then
  timeout 60 "$iorr" record -q -o static.iorr -- sh -c './static_prog; echo $?' > static.out 2>&1
  if [[ $(cat static.out) != 3 ]]; then
    fail "static child: output $(head -c 100 static.out)"
  elif ! dump_has static.iorr '^# note: escape: exec of ./static_prog by process'; then
    fail "static child: no escape note"
  else
    ok "static child: runs unharmed, its exec noted as not recorded"
  fi
  # A static program that execs a dynamic one in the same process (busybox's sh running
  # /bin/cat: stop 39's sweep): the dynamic image's library said "exec-ok" for the pid, which
  # hid that the static image ran unrecorded before it. The names differ now.
  printf '#include <unistd.h>\nint main(int c, char** v) { (void)c; execv(v[1], v + 1); return 127; }' |
    cc -static -x c - -o static_exec 2> /dev/null
  timeout 60 "$iorr" record -q -o static2.iorr -- sh -c './static_exec /bin/echo hi' > static2.out 2>&1
  if [[ $(cat static2.out) != hi ]]; then
    fail "static child that execs a dynamic program: output $(head -c 100 static2.out)"
  elif ! dump_has static2.iorr '^# note: escape: exec of ./static_exec by process [0-9]* (which then ran /bin/echo)'; then
    fail "static child that execs a dynamic program: no escape note for the static image"
  elif ! dump_has static2.iorr 'write(1, .*) = 3'; then
    fail "static child that execs a dynamic program: the dynamic image's write is not recorded"
  else
    ok "static child that execs a dynamic program: the static image's exec noted as not recorded"
  fi
else
  echo "skip: static child (no static C library)"
fi

# 8. execvp of a script without #! runs it with /bin/sh, as glibc does; the user's own IORR_*
# variables reach the program.
printf 'echo script ran with $IORR_DISPATCH\n' > noshebang && chmod +x noshebang
PATH=$PWD:$PATH IORR_DISPATCH=1 env noshebang > plain.ns 2>&1
PATH=$PWD:$PATH IORR_DISPATCH=1 timeout 60 "$iorr" record -q -o ns.iorr -- env noshebang > rec.ns 2>&1
if cmp -s plain.ns rec.ns; then ok "execvp of a script without #!, user IORR_* kept"; else
  fail "execvp of a script without #!: $(cat rec.ns) (plain: $(cat plain.ns))"; fi

# system() and popen() after the program cleared its environment: glibc spawns the shell from
# inside libc with that environment, so the child runs without the recorder. The program is
# unchanged (same status, same environment in the child) and the trace says what escaped.
cat > sys.py << 'PY'
import ctypes, os, sys
os.environ.clear()
out = sys.argv[1]
st = os.system("env | sort > %s.env; echo hi > %s; exit 3" % (out, out))
print(st >> 8)
libc = ctypes.CDLL(None)
# Two in a row: the first's clone leaves an armed thread's selector at ALLOW, so dispatch does
# not see the second's; its wrapper notes it.
libc.system(b"true")
libc.system(b"true")
libc.popen.restype = ctypes.c_void_p
if libc.popen(b"true", b"x"):  # EINVAL: nothing spawned, nothing noted
    sys.exit(9)
f = libc.popen(b"echo popen > " + out.encode() + b".popen", b"er")
libc.pclose(ctypes.c_void_p(f))
PY
# Without dispatch (IORR_DISPATCH=0) nothing sees the clone: the wrappers of system and popen
# write the notes. Exactly one note per spawn either way: four spawns.
plain_st=$(python3 sys.py "$work/sys-plain")
for how in "" IORR_DISPATCH=0; do
  rm -f sys-rec.env sys-rec.popen
  rec_st=$(env $how timeout 60 "$iorr" record -q -o sys.iorr -- python3 sys.py "$work/sys-rec")
  "$iorr" dump sys.iorr > sys.dump 2> /dev/null
  notes=$(grep -c '^# note: escape .*spawned from inside libc' sys.dump)
  if [[ $plain_st == 3 && $rec_st == 3 ]] && cmp -s sys-plain.env sys-rec.env && [[ -f sys-rec.popen ]] &&
    [[ $notes -eq 4 ]]; then
    ok "system() and popen() with a cleared environment${how:+ ($how)}: unchanged, and noted as escapes"
  else
    fail "system()/popen() with a cleared environment${how:+ ($how)}: status $rec_st (plain $plain_st), env $(diff sys-plain.env sys-rec.env | head -n 3 | tr '\n' ' '), $notes escape notes of 4"
  fi
done

# A raw execve syscall (trapped by Syscall User Dispatch, run from the SIGSYS handler) with an
# environment without the library: the library goes back in, from pages of its own rather than
# the handler's stack.
cat > rawexec.py << PY
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
argv = (ctypes.c_char_p * 4)(b"/bin/sh", b"-c", b"echo raw > $work/raw-exec", None)
env = (ctypes.c_char_p * 2)(b"A=1", None)
libc.syscall(59, b"/bin/sh", argv, env)
PY
timeout 60 "$iorr" record -q -o raw.iorr -- python3 rawexec.py
"$iorr" dump raw.iorr > raw.dump 2> /dev/null
if [[ $(cat raw-exec 2> /dev/null) == raw ]] && grep -q "\"$work/raw-exec\", O_WRONLY" raw.dump; then
  ok "raw execve with an environment without the library: the new program is recorded"
else
  fail "raw execve: $(cat raw-exec 2> /dev/null), $(grep -c raw-exec raw.dump) events"
fi

# The main thread leaves while a worker runs on. glibc ends the process with exit(0) when the
# last thread it counts leaves through pthread_exit; the recorder's writer thread must not keep
# it alive, and must not change how it ends: with pthread_exit, exit(0) runs on the worker
# (stdout flushed, status 0); with a raw SYS_exit of main, no exit handlers run and the status
# is the last thread's (0 when it returns, 5 when it leaves with a raw SYS_exit(5)). Each
# program's status and output, recorded (with and without dispatch), equal an unrecorded run's.
cat > leave.c << 'C'
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
static const char* how;
static void* worker(void* arg) {
  (void)arg;
  usleep(100000);
  int fd = open("leave.out", O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (write(fd, "x", 1) != 1) return NULL;
  close(fd);
  printf("worker done\n");  /* buffered: only an exit() flushes it */
  if (strcmp(how, "raw5") == 0) syscall(SYS_exit, 5);
  return NULL;
}
int main(int argc, char** argv) {
  how = argc > 1 ? argv[1] : "pthread";
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  if (strcmp(how, "pthread") == 0) pthread_exit(NULL);
  syscall(SYS_exit, 3);
  return 1;
}
C
leave=iorr-leave-$$  # a name of its own, to kill by name below
if cc -O1 -pthread leave.c -o $leave 2> /dev/null; then
  for how in pthread raw raw5; do
    rm -f leave.out
    ./$leave $how > plain.stdout
    plain_st=$?
    for dispatch in 1 0; do
      rm -f leave.out
      # To a file: a process that never ends would hold a pipe open, and the test with it.
      IORR_DISPATCH=$dispatch timeout -k 5 20 "$iorr" record -q -o leave.iorr -- ./$leave $how > leave.stdout
      st=$?
      pkill -KILL -x $leave 2> /dev/null
      "$iorr" dump leave.iorr > leave.dump 2> leave.err
      what="main leaves by $how (dispatch=$dispatch)"
      if [[ $st -ne $plain_st ]]; then
        fail "$what: status $st, unrecorded $plain_st (124 or 137: the process never ended)"
      elif ! cmp -s leave.stdout plain.stdout; then
        fail "$what: output '$(cat leave.stdout)', unrecorded '$(cat plain.stdout)'"
      elif [[ ! -f leave.out ]] || ! grep -q '"leave.out", O_WRONLY' leave.dump; then
        fail "$what: the worker's file or its open in the trace is missing"
      elif [[ $how == pthread && $dispatch == 1 ]] && ! grep -q 'write(1, ..., 12) = 12' leave.dump; then
        fail "$what: exit's stdio flush on the worker was not recorded"
      elif [[ -s leave.err ]]; then
        fail "$what: $(head -n 1 leave.err)"
      else
        ok "$what: status $st and output as unrecorded"
      fi
    done
  done
else
  echo "skip: main-thread-leaves cases: no C compiler"
fi

# Two workers leave together after main's pthread_exit (a key destructor of the program's holds
# them at a barrier): the one that ends the process runs exit(0), whose stdio flush must be in
# the trace. And threads handing over to a successor from a key destructor, 64 times: the
# recorder's state of each must be freed (it once kept about 1 MB per thread).
cat > together.c << 'C'
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static pthread_key_t key;
static pthread_barrier_t bar;
static int chain;
static void* worker(void* a);
static void spawn(long i) {
  pthread_t t;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_create(&t, &at, worker, (void*)i);
}
static void dtor(void* p) {
  if (chain) spawn((long)p);
  else pthread_barrier_wait(&bar);
}
static void* worker(void* a) {
  long i = (long)a;
  int fd = open("/dev/null", O_RDONLY);
  close(fd);
  if (chain && i == 64) {
    usleep(200000);
    char buf[4096];
    int f = open("/proc/thread-self/status", O_RDONLY); /* the leader is a zombie */
    int n = read(f, buf, sizeof buf - 1);
    close(f);
    buf[n > 0 ? n : 0] = 0;
    char* r = strstr(buf, "VmRSS:");
    printf("%ld\n", r ? strtol(r + 6, NULL, 10) : -1);
    return NULL;
  }
  pthread_setspecific(key, (void*)(i + 1));
  return NULL;
}
int main(int argc, char** argv) {
  chain = argc > 1;
  pthread_key_create(&key, dtor);
  pthread_barrier_init(&bar, NULL, 2);
  if (chain) {
    spawn(1);
  } else {
    printf("buffered line\n");
    pthread_t t1, t2;
    pthread_create(&t1, NULL, worker, NULL);
    pthread_create(&t2, NULL, worker, NULL);
  }
  pthread_exit(NULL);
}
C
together=iorr-together-$$
if cc -O1 -pthread together.c -o $together 2> /dev/null; then
  timeout -k 5 20 "$iorr" record -q -o together.iorr -- ./$together > together.stdout
  st=$?
  pkill -KILL -x $together 2> /dev/null
  "$iorr" dump together.iorr > together.dump 2> /dev/null
  if [[ $st -ne 0 || $(cat together.stdout) != "buffered line" ]]; then
    fail "two workers leaving together: status $st, output '$(cat together.stdout)'"
  elif ! grep -q 'write(1, ..., 14) = 14' together.dump; then
    fail "two workers leaving together: exit's stdio flush is not in the trace"
  else
    ok "two workers leaving together: the last one's exit(0) and its stdio flush recorded"
  fi
  timeout -k 5 30 "$iorr" record -q -o chain.iorr -- ./$together chain > chain.stdout
  st=$?
  pkill -KILL -x $together 2> /dev/null
  rss=$(cat chain.stdout)
  if [[ $st -ne 0 || -z $rss ]]; then
    fail "64 threads handing over from a key destructor: status $st, output '$rss'"
  elif [[ $rss -gt 20000 ]]; then
    fail "64 threads handing over from a key destructor: RSS $rss kB (their states are kept)"
  else
    ok "64 threads handing over from a key destructor: RSS $rss kB at the end"
  fi
else
  echo "skip: threads-leaving-together cases: no C compiler"
fi

# torn_by_kill ERR DUMP: the dump's only complaint is the mark `iorr record` puts on a trace it
# repaired, and the trace says what it repaired. A process SIGKILLed while its writer appends a
# chunk can leave part of a record: the kernel stops a write to a regular file between pages when
# a fatal signal is pending. The recorder cannot make its writes whole under SIGKILL; it repairs
# the piece (or cuts it off the end) and marks the trace incomplete, correctly (the killed
# process's unwritten events are lost). Any other warning, or the mark without a repair note,
# still fails.
torn_by_kill() {
  [[ $(wc -l < "$1") -eq 1 ]] && grep -Eqx 'iorr: warning: .*: trace is marked incomplete \(see the trace notes\)' "$1" &&
    grep -Eq '^# note: recorder: ([0-9]+ records? cut short in the middle|removed [0-9]+ bytes of an incomplete record)' "$2"
}

# A child killed with SIGKILL in the middle of a call never clears its thread slots; once its
# liveness lock is gone the others' writers free them, so the rest of the run is written with
# watermarks that move on (the lag stayed at the rest of the run, 1.5 s here, before).
cat > killed.sh << 'SH'
( while :; do echo x > a; done ) & c=$!
sleep 0.3; kill -9 $c
end=$(( $(date +%s%N) + 1500000000 ))
while [ $(date +%s%N) -lt $end ]; do echo y > b; done
SH
timeout 60 "$iorr" record -q -o killed.iorr -- sh killed.sh
st=$?
lag=$(lag_of killed.iorr)
"$iorr" dump killed.iorr > killed.dump 2> killed.err
if [[ $st -ne 0 ]]; then
  fail "killed child: status $st"
elif ! grep -q 'process-gone' killed.dump; then
  fail "killed child: no process-gone note (watermark lag ${lag}s)"
elif ! below "$lag" 0.6; then
  fail "killed child: watermarks held back ${lag}s"
elif [[ -s killed.err ]] && ! torn_by_kill killed.err killed.dump; then
  fail "killed child: $(head -n 1 killed.err)"
else
  ok "killed child: its slots freed (process-gone note), largest watermark lag ${lag}s$(
    [[ -s killed.err ]] && echo "; the kill tore a record, repaired: $(grep -o 'recorder: .*' killed.dump | head -n 1)")"
fi

# Liveness must never free a live process's slots: a fork-like clone sharing the fd table
# (CLONE_FILES) must not drop its parent's lock (the parent, blocked 0.5 s in read(), was
# reported gone and an event came out of order). And a main thread cancelled inside a recorded
# read() (its exit untrapped, a zombie leader) must not hold watermarks back.
cat > live.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static int p[2];
static pthread_t main_t;
static void churn(int n) {
  for (int i = 0; i < n; i++) {
    int fd = open("/dev/null", O_RDONLY);
    close(fd);
    usleep(5000);
  }
}
static void* canceller(void* a) {
  (void)a;
  usleep(50000);
  pthread_cancel(main_t);
  churn(300);
  return NULL;
}
int main(int argc, char** argv) {
  if (pipe(p) != 0) return 2;
  char b;
  if (argc > 1 && strcmp(argv[1], "cancel") == 0) {
    main_t = pthread_self();
    pthread_t t;
    pthread_create(&t, NULL, canceller, NULL);
    return read(p[0], &b, 1) == 1 ? 1 : 3;
  }
  long c = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
  if (c == 0) {
    churn(100);
    if (write(p[1], "x", 1) != 1) _exit(1);
    churn(40);
    _exit(0);
  }
  if (read(p[0], &b, 1) != 1) return 1;
  close(open("/dev/zero", O_RDONLY));
  int st;
  waitpid(c, &st, 0);
  return 0;
}
C
if cc -O1 -pthread live.c -o live 2> /dev/null; then
  for dispatch in 1 0; do
    IORR_DISPATCH=$dispatch timeout -k 5 30 "$iorr" record -q -o clonef.iorr -- ./live
    st=$?
    "$iorr" dump clonef.iorr > clonef.dump 2> clonef.err
    if [[ $st -ne 0 ]]; then
      fail "CLONE_FILES child (dispatch=$dispatch): status $st"
    elif grep -q 'process-gone' clonef.dump || [[ -s clonef.err ]]; then
      fail "CLONE_FILES child (dispatch=$dispatch): $(grep -m1 process-gone clonef.dump) $(head -n 1 clonef.err)"
    else
      ok "CLONE_FILES child (dispatch=$dispatch): the parent's lock kept, no event out of order"
    fi
  done
  timeout -k 5 30 "$iorr" record -q -o cancel.iorr -- ./live cancel
  st=$?
  lag=$(lag_of cancel.iorr)
  if [[ $st -ne 0 ]]; then
    fail "main cancelled in read(): status $st"
  elif ! below "$lag" 0.6; then
    fail "main cancelled in read(): watermarks held back ${lag}s"
  else
    ok "main cancelled in read(): largest watermark lag ${lag}s"
  fi
else
  echo "skip: liveness cases: no C compiler"
fi

# system() then posix_spawn(): glibc's spawn inside system() runs unarmed and leaves the
# selector at ALLOW; the recorder's own spawn then must not block SIGSYS (the next trapped call
# killed the program with SIGSYS, status 159).
cat > sysspawn.c << 'C'
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
extern char** environ;
int main(void) {
  if (system("true") != 0) return 2;
  pid_t p;
  char* av[] = {"true", NULL};
  int r = posix_spawn(&p, "/bin/true", NULL, NULL, av, environ);
  waitpid(p, NULL, 0);
  printf("posix_spawn %d\n", r);
  return 0;
}
C
if cc -O1 sysspawn.c -o sysspawn 2> /dev/null; then
  out=$(timeout 30 "$iorr" record -q -o sysspawn.iorr -- ./sysspawn)
  st=$?
  if [[ $st -eq 0 && $out == "posix_spawn 0" ]]; then
    ok "system() then posix_spawn(): status 0, spawned"
  else
    fail "system() then posix_spawn(): status $st, output '$out'"
  fi
fi

# After system(), popen() and wordexp(), libc's own calls are recorded again: glibc's spawn
# makes its clone natively, which left the thread's selector at ALLOW, and fopen's openat and
# read (from inside libc, no wrapper) after it went unrecorded until the next wrapped call.
cat > sysgap.c << 'C'
#include <stdio.h>
#include <stdlib.h>
#include <wordexp.h>
static int readfile(const char* path) {
  char b[64];
  FILE* f = fopen(path, "r");
  if (!f) return 1;
  if (!fgets(b, sizeof b, f)) b[0] = 0;
  fclose(f);
  return 0;
}
int main(void) {
  if (system("true") != 0) return 2;
  if (readfile("/etc/hostname")) return 3;
  FILE* p = popen("true", "r");
  if (!p) return 4;
  if (readfile("/etc/passwd")) return 5;
  pclose(p);
  wordexp_t w;
  if (wordexp("$(true) x", &w, 0) != 0) return 6;
  wordfree(&w);
  if (readfile("/etc/hosts")) return 7;
  return 0;
}
C
if cc -O1 sysgap.c -o sysgap 2> /dev/null; then
  for how in "" IORR_PATCH=1 IORR_PATCH=0; do
    env $how timeout 30 "$iorr" record -q -o sysgap.iorr -- ./sysgap
    st=$?
    "$iorr" dump sysgap.iorr > sysgap.dump 2> /dev/null
    # The program's own process: the pid of its first event.
    pid=$(awk '/^\[/ {gsub(/\[/, "", $1); print $1; exit}' sysgap.dump)
    n=$(grep -E "^\[$pid [0-9]+\] .*openat\(AT_FDCWD, \"/etc/(hostname|passwd|hosts)\"" sysgap.dump | wc -l)
    if [[ $st -eq 0 && $n -eq 3 ]]; then
      ok "fopen after system(), popen() and wordexp()${how:+ ($how)}: all 3 opens recorded"
    else
      fail "fopen after system(), popen() and wordexp()${how:+ ($how)}: status $st, $n of 3 opens recorded"
    fi
  done
fi

# The shell that system(), popen() and wordexp() spawn from inside libc (no wrapper sees its
# exec, so no environment announces it) records its exec and the loader's calls: the wrapper
# opens a window in the parent's name (OpenSpawnWindow) that the shell's image takes. Before,
# its audit log was dropped ("no exec window": 27 calls per shell) and its exec not recorded.
# Four threads spawning at once check that siblings find a window each (a child may take one
# a sibling's spawn opened), without events out of time order; wordexp runs a shell for each
# of its two substitutions (one window each, since a review found the second one dropped).
cat > spawnwin.c << 'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <wordexp.h>
static int rounds = 1;
static void* run(void* arg) {
  for (int i = 0; i < rounds; ++i) {
    if (system("exit 0") != 0) exit(2);
    FILE* p = popen("cat /etc/hostname", "r");
    char b[256];
    if (!p) exit(3);
    while (fgets(b, sizeof b, p)) {
    }
    if (pclose(p) != 0) exit(4);
    wordexp_t w;
    if (wordexp("$(exit 0) `exit 0` x", &w, 0) != 0) exit(5);  // two shells
    wordfree(&w);
  }
  return arg;
}
int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  rounds = argc > 2 ? atoi(argv[2]) : 1;
  pthread_t t[8];
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], 0, run, 0);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], 0);
  return 0;
}
C
if cc -O1 -pthread spawnwin.c -o spawnwin 2> /dev/null; then
  for how in "" IORR_PATCH=1 IORR_PATCH=0 IORR_DISPATCH=0 "4 5"; do
    args=(1 1) mode=$how
    [[ $how == "4 5" ]] && args=(4 5) mode=""
    env $mode timeout 60 "$iorr" record -q -o spawnwin.iorr -- ./spawnwin "${args[@]}"
    st=$?
    "$iorr" dump spawnwin.iorr > spawnwin.dump 2> spawnwin.err
    want=$((4 * args[0] * args[1]))
    # The shells: processes whose exec of /bin/sh is in the trace, and of those, the ones with
    # the loader's first call (its read of ld.so.cache) recorded.
    shells=$(grep -E '^\[[0-9]+ [0-9]+\] [0-9.]+ execve\("/bin/sh"' spawnwin.dump |
      awk '{gsub(/\[/, "", $1); print $1}' | sort -u)
    nsh=$(wc -w <<< "$shells")
    loaded=0
    for p in $shells; do
      grep -qE "^\[$p $p\] .*openat\(AT_FDCWD, \"/etc/ld.so.cache\"" spawnwin.dump && loaded=$((loaded + 1))
    done
    dropped=$(grep -c 'no exec window' spawnwin.dump)
    # (Without the audit module, IORR_AUDIT=0, nothing catches the loader's calls.)
    want_loaded=$want
    [[ ${IORR_AUDIT:-1} == 0 ]] && want_loaded=0
    label="shells spawned from inside libc (system, popen, wordexp${how:+; $how})"
    if [[ $st -eq 0 && $nsh -eq $want && $loaded -eq $want_loaded && $dropped -eq 0 ]] &&
      ! grep -q 'out of time order' spawnwin.err; then
      ok "$label: $nsh of $want execs and their loader's calls recorded"
    else
      fail "$label: status $st, $nsh of $want execs, $loaded with the loader's calls, $dropped logs dropped, $(cat spawnwin.err)"
    fi
  done
fi

# _exit() is one exit_group in the trace (its wrapper records it; the trapped syscall it then
# makes was recorded a second time).
printf '#include <unistd.h>\nint main(void) { _exit(4); }\n' | cc -x c - -o exit4 2> /dev/null
if [[ -x exit4 ]]; then
  timeout 30 "$iorr" record -q -o exit4.iorr -- ./exit4
  st=$?
  "$iorr" dump exit4.iorr > exit4.dump 2> /dev/null
  n=$(grep -c 'exit_group(4)' exit4.dump)
  if [[ $st -eq 4 && $n -eq 1 ]]; then
    ok "_exit(4): status 4, one exit_group in the trace"
  else
    fail "_exit(4): status $st, $n exit_group events"
  fi
fi

# fexecve (execveat under dispatch) is an exec like execve: what the first image did is written
# before it (it was lost), and the new image is recorded. A CLONE_FILES child (no process entry
# of its own) that execs: its old image's slot is freed by the new image (it stayed pinned).
cat > fexec.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
extern char** environ;
int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "clone") == 0) {
    long c = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
    if (c == 0) {
      close(open("/dev/null", O_RDONLY));
      execl("/bin/true", "true", (char*)NULL);
      _exit(1);
    }
    int st;
    waitpid(c, &st, 0);
    for (int i = 0; i < 100; i++) {
      close(open("/dev/zero", O_RDONLY));
      usleep(5000);
    }
    return 0;
  }
  close(open("fexec-before", O_CREAT | O_WRONLY | O_TRUNC, 0644));
  int fd = open("/bin/sh", O_RDONLY | O_CLOEXEC);
  char* none[] = {NULL};
  /* glibc refuses these before any system call; the recorder's fexecve must too */
  if (fexecve(-1, none, environ) != -1 || errno != EINVAL) return 5;
  if (fexecve(fd, none, NULL) != -1 || errno != EINVAL) return 6;
  char* av[] = {"sh", "-c", "echo x > fexec-after", NULL};
  fexecve(fd, av, environ);
  return 1;
}
C
if cc -O1 fexec.c -o fexec 2> /dev/null; then
  for dispatch in 1 0; do
    IORR_DISPATCH=$dispatch timeout 30 "$iorr" record -q -o fexec.iorr -- ./fexec
    st=$?
    "$iorr" dump fexec.iorr > fexec.dump 2> /dev/null
    if [[ $st -eq 0 ]] && grep -q '"fexec-before", O_WRONLY' fexec.dump &&
      grep -q '"fexec-after", O_WRONLY' fexec.dump; then
      ok "fexecve (dispatch=$dispatch): the first image's calls and the new image's recorded"
    else
      fail "fexecve (dispatch=$dispatch): status $st, before: $(grep -c fexec-before fexec.dump), after: $(grep -c fexec-after fexec.dump)"
    fi
  done
  timeout 30 "$iorr" record -q -o cfexec.iorr -- ./fexec clone
  st=$?
  lag=$(lag_of cfexec.iorr)
  if [[ $st -eq 0 ]] && below "$lag" 0.3; then
    ok "CLONE_FILES child that execs: largest watermark lag ${lag}s"
  else
    fail "CLONE_FILES child that execs: status $st, watermarks held back ${lag}s"
  fi
fi

# Children that _exit while threads are being created in them: a thread whose first call came
# as the process released its slots took one that nobody freed, unflushed and without an entry,
# holding watermarks back for the rest of the run (2 s here); now the thread gives it back.
cat > storm.c << 'C'
#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
static void* one(void* x) {
  (void)x;
  close(open("/dev/null", O_RDONLY));
  return NULL;
}
static void* spawner(void* x) {
  (void)x;
  for (;;) {
    pthread_t t;
    if (pthread_create(&t, NULL, one, NULL) == 0) pthread_detach(t);
  }
  return NULL;
}
int main(void) {
  for (int i = 0; i < 30; i++) {
    pid_t c = fork();
    if (c == 0) {
      for (int k = 0; k < 3; k++) {
        pthread_t t;
        pthread_create(&t, NULL, spawner, NULL);
      }
      usleep(10000);
      _exit(0);
    }
    waitpid(c, NULL, 0);
  }
  for (int i = 0; i < 200; i++) {
    close(open("/dev/zero", O_RDONLY));
    usleep(10000);
  }
  return 0;
}
C
if cc -O1 -pthread storm.c -o storm 2> /dev/null; then
  timeout 60 "$iorr" record -q -o storm.iorr -- ./storm
  st=$?
  lag=$(lag_of storm.iorr)
  # A slot nobody frees holds the watermarks back for the rest of the run (about 90% of it);
  # the lag of a sound run grows with the machine's load (up to 16% of a run that load had
  # stretched from 2.5 s to 15 to 33 s, three recordings at once on 2 cores, stop 20; 1.6 s
  # failed CI once): the bound is 1.5 s or 40% of the run, whichever is more.
  storm_bound=$("$iorr" stats --json storm.iorr 2> /dev/null | grep -o '"duration_ns":[0-9]*' |
    cut -d: -f2 | awk '{b = 0.4 * $1 / 1e9; printf "%.3f", (b > 1.5 ? b : 1.5)}')
  "$iorr" dump storm.iorr > storm.dump 2> storm.err
  if [[ $st -ne 0 ]]; then
    fail "children _exit amid thread creation: status $st"
  elif ! below "$lag" "$storm_bound"; then
    fail "children _exit amid thread creation: watermarks held back ${lag}s (bound ${storm_bound}s)"
  elif [[ -s storm.err ]]; then
    fail "children _exit amid thread creation: $(head -n 1 storm.err)"
  else
    ok "children _exit amid thread creation: largest watermark lag ${lag}s"
  fi
fi

# Watermarks under load: processes of several threads each, all making calls without pause
# while their writers drain, raise the watermarks and write chunks, and each writer reads the
# others' slots. A chunk's watermark promises that no later chunk holds an earlier event; the
# merged reading counts broken promises (`iorr dump` warns). A load test of the watermark
# protocol as a whole (fences, raise windows, slots read across processes): the races it
# guards against are too narrow to be hit on demand, and the 1 ms clock margin hides most of
# them (preload.cc).
cat > wmstress.c << 'C'
#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
static void* work(void* arg) {
  int fd = open("/dev/null", O_RDONLY);
  double end = now() + 1.0;
  long n = 0;
  while (now() < end) {
    lseek(fd, n++, SEEK_SET);
    if ((n & 1023) == 0) close(open("/dev/null", O_RDONLY));
  }
  close(fd);
  return arg;
}
int main(void) {
  for (int p = 0; p < 3; p++) {
    if (fork() == 0) {
      pthread_t t[3];
      for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, work, NULL);
      for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
      _exit(0);
    }
  }
  work(NULL);
  while (wait(NULL) > 0) {
  }
  return 0;
}
C
if cc -O1 -pthread wmstress.c -o wmstress 2> /dev/null; then
  timeout 60 "$iorr" record -q -o wmstress.iorr -- ./wmstress
  st=$?
  "$iorr" dump wmstress.iorr 2> wmstress.err | grep -c 'lseek(' > wmstress.n
  if [[ $st -ne 0 ]]; then
    fail "watermarks under load: status $st"
  elif [[ -s wmstress.err ]]; then
    fail "watermarks under load: $(head -n 1 wmstress.err)"
  elif [[ $(cat wmstress.n) -lt 100000 ]]; then
    fail "watermarks under load: only $(cat wmstress.n) lseek events"
  else
    ok "watermarks under load: $(cat wmstress.n) lseek events in 10 threads, no broken promise"
  fi
fi

# The library loaded without iorr record above it (or whose set-up failed) leaves the program
# alone: its children get the environment the program gave them, with nothing added.
sh -c 'sh -c env' | sort > plain-inactive.env
LD_PRELOAD=$lib sh -c 'unset LD_PRELOAD; sh -c env' | sort > inactive.env
if cmp -s plain-inactive.env inactive.env; then
  ok "library loaded but not recording: children's environment unchanged"
else
  fail "library loaded but not recording: children's environment changed: $(diff plain-inactive.env inactive.env | head -n 4 | tr '\n' ' ')"
fi

# vfork runs the child on the parent's memory (as unrecorded: a store of the child is seen by the
# parent), records the child's calls in a stream of its own, and frees what the child held when
# it ends: by exec, by _exit, by an exec that fails, by SIGKILL before exec. A thread of the
# parent records meanwhile.
cat > vf.c <<'C'
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int stop;
static void* busy(void* a) { (void)a; while (!stop) close(open("/dev/null", O_RDONLY)); return 0; }
int main(void) {
  int fails = 0, st;
  pthread_t t; pthread_create(&t, 0, busy, 0);
  // 1. child writes a file and _exits with 3; shares the parent's memory
  volatile int shared = 0;
  pid_t p = vfork();
  if (p == 0) { int fd = open("vf1.out", O_WRONLY | O_CREAT | O_TRUNC, 0644); write(fd, "child\n", 6); close(fd); shared = 42; _exit(3); }
  waitpid(p, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 3) { printf("1: status %d\n", st); fails++; }
  if (shared != 42) { printf("1: memory not shared (%d)\n", shared); fails++; }
  // 2. exec failure then _exit(5)
  p = vfork();
  if (p == 0) { execl("/nonexistent/prog", "x", (char*)0); _exit(errno == ENOENT ? 5 : 6); }
  waitpid(p, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 5) { printf("2: status %d\n", st); fails++; }
  // 3. many execs
  for (int i = 0; i < 200; i++) {
    p = vfork();
    if (p == 0) { execl("/bin/true", "true", (char*)0); _exit(127); }
    waitpid(p, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) { printf("3: status %d\n", st); fails++; break; }
  }
  // 4. a child killed before it execs
  p = vfork();
  if (p == 0) { close(open("vf4.in", O_RDONLY)); kill(getpid(), SIGKILL); _exit(9); }
  waitpid(p, &st, 0);
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) { printf("4: status %d\n", st); fails++; }
  // 5. errno from a failed vfork-child call is visible (shared), the parent's own errno path ok
  p = vfork();
  if (p == 0) { execl("/bin/sh", "sh", "-c", "echo from-sh > vf5.out", (char*)0); _exit(127); }
  waitpid(p, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) { printf("5: status %d\n", st); fails++; }
  for (int i = 0; i < 50; i++) close(open("/dev/null", O_RDONLY));
  stop = 1; pthread_join(t, 0);
  printf("vf: %d failures\n", fails);
  return fails;
}
C
if cc -O1 -pthread vf.c -o vf 2> /dev/null; then
  for dispatch in 1 0; do
    IORR_DISPATCH=$dispatch timeout 60 "$iorr" record -q -o vf.iorr -- ./vf > vf.out 2>&1
    st=$?
    lag=$(lag_of vf.iorr)
    "$iorr" dump vf.iorr > vf.dump 2> vf.err
    parent=$(grep -m1 'execve(".*/vf"' vf.dump | sed 's/^\[\([0-9]*\) .*/\1/')
    child=$(grep -m1 'openat(AT_FDCWD, "vf1.out"' vf.dump | sed 's/^\[\([0-9]*\) .*/\1/')
    if [[ $st -ne 0 ]]; then
      fail "vfork (dispatch=$dispatch): status $st: $(tr '\n' ' ' < vf.out)"
    elif [[ -z $child || $child == "$parent" ]]; then
      fail "vfork (dispatch=$dispatch): the child's open is not in a stream of its own (parent $parent, child ${child:-none})"
    elif ! grep -q 'openat(AT_FDCWD, "vf4.in"' vf.dump; then
      fail "vfork (dispatch=$dispatch): the killed child's call was lost"
    elif [[ $(grep -c 'clone(CLONE_VM|CLONE_VFORK|SIGCHLD) = [0-9]' vf.dump) -ne 204 ]]; then
      fail "vfork (dispatch=$dispatch): $(grep -c 'clone(CLONE_VM|CLONE_VFORK' vf.dump) vfork calls recorded, expected 204"
    elif ! below "$lag" 1.0; then
      fail "vfork (dispatch=$dispatch): watermarks held back ${lag}s"
    elif [[ -s vf.err ]]; then
      fail "vfork (dispatch=$dispatch): $(head -n 1 vf.err)"
    else
      ok "vfork (dispatch=$dispatch): shared memory, child streams, killed child's calls kept, lag ${lag}s"
    fi
  done
fi

# A fork child whose first call is a vfork: the vfork child records before the fork child has a
# writer thread, and must not start one itself (it would be the vfork child's, on its parent's
# memory, and gone with its exec): the fork child's own writer flushes what it records before
# it is killed.
cat > vf2.c <<'C'
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {  // a fork child whose first call is a vfork: it has no writer thread yet
  int st;
  pid_t f = fork();
  if (f == 0) {
    pid_t p = vfork();
    if (p == 0) { close(open("/dev/null", O_RDONLY)); execl("/bin/true", "true", (char*)0); _exit(127); }
    waitpid(p, &st, 0);
    close(open("vf2.marker", O_RDONLY));
    usleep(400000);  // its writer flushes the marker meanwhile: it survives the kill
    kill(getpid(), SIGKILL);
  }
  waitpid(f, &st, 0);
  return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : 1;
}
C
if cc -O1 vf2.c -o vf2 2> /dev/null; then
  timeout 60 "$iorr" record -q -o vf2.iorr -- ./vf2
  st=$?
  "$iorr" dump vf2.iorr > vf2.dump 2>&1
  if [[ $st -ne 0 ]]; then
    fail "vfork first: status $st"
  elif ! grep -q 'openat(AT_FDCWD, "vf2.marker"' vf2.dump; then
    fail "vfork first: the fork child's call before its kill was lost (no writer of its own)"
  else
    ok "vfork first: the fork child's writer is its own"
  fi
fi

# vfork's hard cases (from two reviews): a child whose calls fill its ring many times over (it
# once waited forever for a writer that never reads a child's ring), a child killed while it
# writes (its half-done chunk once went into the trace: corrupt), a signal delivered to the
# parent as vfork returns (its handler once ran on the child's state: a crash), a vfork child's
# own vfork (the parent's later calls were lost; then the child filling its ring after it hung),
# a child that closes every fd (its lock once went with them: false "process-gone" notes), a
# handler's calls while the child writes (a corrupt chunk), a child setting SIGSYS's disposition
# (it was the parent's), the process ending while a thread's vfork child lives on (the child's
# later calls were dropped). Each in both dispatch modes: the program sees what it would
# unrecorded, the trace reads, no false note, nothing held back.
cat > vfhard.c <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
// Hard cases for vfork, one per argument. Each prints "ok CASE" when the program saw what it
// would unrecorded; the test checks the trace.
static volatile int stop;
static volatile pid_t victim;
static volatile int phase;
static void* busy(void* a) { (void)a; while (!stop) { close(open("/dev/null", O_RDONLY)); usleep(1000); } return 0; }
static void* killer(void* a) { (void)a; while (phase != 1) {} kill(victim, SIGKILL); return 0; }
static void on_usr1(int s) { (void)s; close(open("vfhard.sig", O_RDONLY)); }
static volatile sig_atomic_t got_sys;
static void on_sys(int s) { (void)s; got_sys = 1; }
static volatile int in_handler;
static void on_alrm(int s) { (void)s; close(open("vfhard.alrm", O_RDONLY)); in_handler++; }
static void* vfork_then_exec_late(void* a) {
  (void)a;
  if (vfork() == 0) { usleep(300000); close(open("vfhard.late", O_RDONLY)); execl("/bin/true", "true", (char*)0); _exit(127); }
  return 0;
}
int main(int argc, char** argv) {
  const char* c = argv[1];
  int st = -1;
  pid_t p;
  if (!strcmp(c, "closeall")) {  // the child's calls fill its ring many times over
    p = vfork();
    if (p == 0) { for (int fd = 3; fd < 65536; fd++) close(fd); execl("/bin/true", "true", (char*)0); _exit(127); }
    waitpid(p, &st, 0);
    if (st != 0) return 1;
  } else if (!strcmp(c, "killmid")) {  // killed as it writes its events at exec
    pthread_t t; pthread_create(&t, 0, killer, 0);
    p = vfork();
    // (A late kill finds sleep: killed all the same.)
    if (p == 0) { victim = getpid(); for (int i = 0; i < 8000; i++) close(open("/dev/null", O_RDONLY)); phase = 1; execl("/bin/sleep", "sleep", "5", (char*)0); _exit(127); }
    waitpid(p, &st, 0); pthread_join(t, 0);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) return 1;
  } else if (!strcmp(c, "signal")) {  // a signal sent by the child reaches the parent's handler
    signal(SIGUSR1, on_usr1);
    p = vfork();
    if (p == 0) { kill(getppid(), SIGUSR1); _exit(0); }
    waitpid(p, &st, 0);
    close(open("vfhard.after", O_RDONLY));
    if (st != 0) return 1;
  } else if (!strcmp(c, "nested")) {  // a vfork child's vfork
    p = vfork();
    if (p == 0) { int st2; pid_t q = vfork(); if (q == 0) { execl("/bin/true", "true", (char*)0); _exit(127); } waitpid(q, &st2, 0); _exit(st2 ? 1 : 0); }
    waitpid(p, &st, 0);
    close(open("vfhard.after", O_RDONLY));
    if (st != 0) return 1;
  } else if (!strcmp(c, "closefrom")) {  // the child closes every fd, its lock's included
    pthread_t t; pthread_create(&t, 0, busy, 0);
    for (int i = 0; i < 3; i++) {
      p = vfork();
      if (p == 0) { closefrom(3); execl("/bin/sleep", "sleep", "0.2", (char*)0); _exit(127); }
      waitpid(p, &st, 0);
    }
    stop = 1; pthread_join(t, 0);
    if (st != 0) return 1;
  } else if (!strcmp(c, "nestedfill")) {  // after its own vfork, the child fills its ring
    p = vfork();
    if (p == 0) {
      int st2; pid_t q = vfork(); if (q == 0) _exit(0); waitpid(q, &st2, 0);
      for (int i = 0; i < 40000; i++) close(open("/dev/null", O_RDONLY));
      _exit(3);
    }
    waitpid(p, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 3) return 1;
  } else if (!strcmp(c, "handler")) {  // a handler's calls while the child writes its events
    struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = on_alrm; sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, 0);
    p = vfork();
    if (p == 0) {
      // Events up to 100 ms old as the handler's calls begin: each of those asks for a write of
      // the child's events (flush age), and one may come while another is under way.
      struct stat sb;
      stat("/dev/null", &sb);
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      long ns = 0;
      for (int n = 0; n < 10500 && ns < 97000000L; n++) {
        stat("/dev/null", &sb);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
      }
      do {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
      } while (ns < 99900000L);
      struct itimerval it = {{0, 300}, {0, 300}};
      setitimer(ITIMER_REAL, &it, 0);
      struct timespec ts = {0, 20000000};
      while (nanosleep(&ts, &ts) != 0) {}
      struct itimerval off = {{0, 0}, {0, 0}};
      setitimer(ITIMER_REAL, &off, 0);
      _exit(0);
    }
    waitpid(p, &st, 0);
    printf("handler ran %d times\n", in_handler);
    if (st != 0) return 1;
  } else if (!strcmp(c, "sigsys")) {  // the child's SIGSYS disposition is the child's
    struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = on_sys;
    sigaction(SIGSYS, &sa, NULL);
    p = vfork();
    if (p == 0) { signal(SIGSYS, SIG_IGN); execl("/bin/true", "true", (char*)0); _exit(127); }
    waitpid(p, &st, 0);
    struct sigaction old; sigaction(SIGSYS, NULL, &old);
    raise(SIGSYS);
    if (old.sa_handler != on_sys || !got_sys) return 1;
  } else if (!strcmp(c, "mainexit")) {  // the process ends while a thread's vfork child lives on
    pthread_t t; pthread_create(&t, 0, vfork_then_exec_late, 0);
    usleep(100000);
  } else {
    return 2;
  }
  printf("ok %s\n", c);
  return 0;
}
C
if cc -O1 -pthread vfhard.c -o vfhard 2> /dev/null; then
  for dispatch in 1 0; do
    for c in closeall killmid signal nested closefrom nestedfill handler sigsys mainexit; do
      IORR_DISPATCH=$dispatch timeout 60 "$iorr" record -q -o vfh.iorr -- ./vfhard "$c" > vfh.out 2>&1
      st=$?
      lag=$(lag_of vfh.iorr)
      "$iorr" dump vfh.iorr > vfh.dump 2> vfh.err
      dst=$?
      what="vfork $c (dispatch=$dispatch)"
      if [[ $st -ne 0 ]] || ! grep -q "^ok $c" vfh.out; then
        fail "$what: status $st: $(head -c 200 vfh.out)"
      elif [[ $dst -ne 0 ]] || grep -v 'marked incomplete' vfh.err | grep -q .; then
        fail "$what: the trace does not read: $(head -n 1 vfh.err)"
      # Without dispatch nothing sees the exit_group of mainexit's process, whose vfork-ing
      # thread is still inside vfork: the child, writing on, finds that slot stuck and frees
      # it with a process-gone note, as for any process ending with a thread inside a call.
      # killmid's child killed inside its exec reached no image: iorr record says so.
      elif grep -E 'note: (escape|process-gone)' vfh.dump |
        { [[ $c == mainexit && $dispatch == 0 ]] && grep -v 'process-gone' || cat; } |
        { [[ $c == killmid ]] && grep -v 'escape: exec of /bin/sleep' || cat; } | grep -q .; then
        fail "$what: a false note: $(grep -m1 -E 'note: (escape|process-gone)' vfh.dump)"
      elif [[ $c == signal ]] && ! grep -q 'openat(AT_FDCWD, "vfhard.sig"' vfh.dump; then
        fail "$what: the handler's call is missing"
      elif [[ $c == signal || $c == nested ]] && ! grep -q 'openat(AT_FDCWD, "vfhard.after"' vfh.dump; then
        fail "$what: the parent's call after vfork is missing"
      elif [[ $c == handler ]] &&
        [[ $(grep -c 'openat(AT_FDCWD, "vfhard.alrm"' vfh.dump) != "$(sed -n 's/^handler ran \([0-9]*\) times/\1/p' vfh.out)" ]]; then
        fail "$what: $(grep -c 'openat(AT_FDCWD, "vfhard.alrm"' vfh.dump) handler calls in the trace, $(head -n 1 vfh.out)"
      elif [[ $c == mainexit ]] && ! grep -q 'openat(AT_FDCWD, "vfhard.late"' vfh.dump; then
        fail "$what: the child's call after its parent's process ended is missing"
      elif ! below "$lag" 1.0; then
        fail "$what: watermarks held back ${lag}s"
      else
        ok "$what: as unrecorded, lag ${lag}s"
      fi
    done
  done
fi

# The recorder must never hold one of the program's fd numbers, even for a moment: a program
# that closes fd 0 (or 1, as dash's redirections do before their dup2) and opens again must
# get it back every time. The writer thread opened /proc/self/stat every 100 ms, taking the
# lowest free fd: 30 of 550,000 reopenings in 1.5 s got another number (and dash's dup2 got
# EBUSY, its echo "I/O error").
cat > fdrace.c <<'C'
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
/* Closes a low fd and takes it back at once, for SECONDS: the recorder must never hold the
   number in between (an fd of its own taken for a moment is the lowest free one). */
int main(int argc, char** argv) {
  double secs = argc > 1 ? atof(argv[1]) : 1.0;
  int keep = open("/dev/null", O_WRONLY);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  long n = 0, bad = 0;
  do {
    for (int i = 0; i < 1000; ++i, ++n) {
      close(3 + 7);  /* nothing there: just a call */
      close(0);
      int r = open("/dev/null", O_RDONLY);
      if (r != 0) { bad++; if (r > 0) close(r); dup2(keep, 0); }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
  printf("%ld of %ld reopenings did not get fd 0\n", bad, n);
  return bad != 0;
}
C
if cc -O1 fdrace.c -o fdrace 2> /dev/null; then
  for dispatch in 1 0; do
    IORR_DISPATCH=$dispatch timeout -k 5 60 "$iorr" record -q -o fdrace.iorr -- ./fdrace 1.0 > fdrace.out 2>&1
    st=$?
    if [[ $st -eq 0 ]]; then
      ok "fd numbers the program frees stay its own (dispatch=$dispatch): $(cat fdrace.out)"
    else
      fail "fd numbers (dispatch=$dispatch): status $st: $(head -c 200 fdrace.out)"
    fi
  done
fi

# Signal masks and alternate stacks set through trapped calls (libc's sigprocmask and
# sigaltstack make raw system calls): the SIGSYS handler's return restores both from its signal
# frame, so they must be changed there too. A blocked SIGUSR1 raised must stay pending (it
# killed the program), in the main thread and in another; the alternate stack must stay set.
cat > masks.c <<'C'
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
static int check(const char* who) {
  sigset_t s, p;
  sigemptyset(&s);
  sigaddset(&s, SIGUSR1);
  if (pthread_sigmask(SIG_BLOCK, &s, NULL) != 0) return 1;
  raise(SIGUSR1);
  sigpending(&p);
  printf("%s: SIGUSR1 pending %d\n", who, sigismember(&p, SIGUSR1));
  int sig;
  sigwait(&s, &sig);
  return 0;
}
static void* thread(void* p) {
  (void)p;
  check("thread");
  return NULL;
}
int main(void) {
  static char stack[1 << 16];
  stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0}, cur;
  sigaltstack(&ss, NULL);
  sigaltstack(NULL, &cur);
  printf("alternate stack kept: %d\n", cur.ss_sp == stack && !(cur.ss_flags & SS_DISABLE));
  check("main");
  pthread_t t;
  pthread_create(&t, NULL, thread, NULL);
  pthread_join(t, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  sigset_t m;
  sigprocmask(SIG_SETMASK, NULL, &m);
  printf("unblocked again: %d\n", !sigismember(&m, SIGUSR1));
  return 0;
}
C
if cc -O1 -pthread masks.c -o masks 2> /dev/null; then
  ./masks > masks.want 2>&1
  for dispatch in 1 0; do
    IORR_DISPATCH=$dispatch timeout -k 5 60 "$iorr" record -q -o masks.iorr -- ./masks > masks.out 2>&1
    st=$?
    if [[ $st -eq 0 ]] && cmp -s masks.want masks.out; then
      ok "signal masks and alternate stack kept (dispatch=$dispatch)"
    else
      fail "signal masks (dispatch=$dispatch): status $st, '$(tr '\n' ' ' < masks.out)', unrecorded '$(tr '\n' ' ' < masks.want)'"
    fi
  done
fi

# Masks a call waits with (sigsuspend, pselect, ppoll) that block everything but one signal,
# SIGSYS included: a handler run during the wait was killed by its first trapped call (status
# 159; the classic SIGCHLD reaper). And alternate stacks with SS_AUTODISARM, which the kernel
# disarms for every handler, the SIGSYS handler's too: the trapped query must report the
# program's, and a handler on such a stack above the thread's stack, interrupting wrapped calls
# at a high rate, must count as nested (it was taken for a call left by longjmp: a ring
# corrupted, SIGSEGV; a restarted read recorded twice).
cat > chld.c <<'C'
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int reaped;
static void on_chld(int s) {  /* the classic reaper: waitpid is async-signal-safe */
  (void)s;
  int st;
  while (waitpid(-1, &st, WNOHANG) > 0) reaped++;
}
int main(void) {
  signal(SIGCHLD, on_chld);
  sigset_t blk, wait;
  sigemptyset(&blk); sigaddset(&blk, SIGCHLD);
  sigprocmask(SIG_BLOCK, &blk, NULL);
  if (fork() == 0) _exit(0);
  sigfillset(&wait); sigdelset(&wait, SIGCHLD);  /* wait for SIGCHLD only */
  while (!reaped) sigsuspend(&wait);
  printf("reaped %d\n", reaped);
  return 0;
}
C
cat > suspend.c <<'C'
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>
static void h(int s) { printf("handler %d\n", s); fflush(stdout); }  /* stdio: a trapped write */
int main(int argc, char** argv) {
  signal(SIGUSR1, h);
  sigset_t blk, wait;
  sigemptyset(&blk); sigaddset(&blk, SIGUSR1);
  sigprocmask(SIG_BLOCK, &blk, NULL);
  sigfillset(&wait); sigdelset(&wait, SIGUSR1);   /* the usual "everything but the one" */
  raise(SIGUSR1);
  if (strcmp(argv[1], "sigsuspend") == 0) sigsuspend(&wait);
  else if (strcmp(argv[1], "pselect") == 0) pselect(0, NULL, NULL, NULL, NULL, &wait);
  else if (strcmp(argv[1], "ppoll") == 0) ppoll(NULL, 0, NULL, &wait);
  printf("done %s\n", argv[1]);
  return 0;
}
C
cat > adstorm.c <<'C'
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
/* Signals at a high rate to a thread making wrapped calls; the handler runs on an SS_AUTODISARM
   alternate stack mapped above the thread's stack and makes a wrapped call of its own. */
static void* stack;
static volatile int stop;
static volatile long handled;
static void h(int s) {
  (void)s;
  (void)faccessat(AT_FDCWD, "adstorm.handler", F_OK, 0);
  handled++;
}
static void* thr(void* arg) {
  (void)arg;
  stack_t ss = {.ss_sp = stack, .ss_size = 1 << 16, .ss_flags = SS_AUTODISARM};
  sigaltstack(&ss, NULL);
  long n = 0;
  while (!stop) { (void)faccessat(AT_FDCWD, "adstorm.thread-with-a-longer-name", F_OK, 0); n++; }
  printf("thread calls %ld\n", n > 0);
  return NULL;
}
int main(void) {
  stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  struct sigaction sa; memset(&sa, 0, sizeof sa);
  sa.sa_handler = h; sa.sa_flags = SA_ONSTACK | SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t t; pthread_create(&t, NULL, thr, NULL);
  for (int i = 0; i < 20000; i++) { pthread_kill(t, SIGUSR1); if (i % 16 == 0) usleep(50); }
  stop = 1;
  pthread_join(t, NULL);
  printf("handled>0 %d\n", handled > 0);
  return 0;
}
C
cat > autodisarm.c <<'C'
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
/* A thread blocked in read; a handler on an alternate stack (SS_AUTODISARM, mapped above the
   thread's stack) makes a call and returns normally; the read then completes. */
static int p[2];
static void* stack;
static volatile int handled;
static void h(int s) {
  (void)s;
  close(open("autodisarm.inhandler", O_RDONLY | O_CREAT, 0644));
  handled = 1;
}
static void* thr(void* arg) {
  (void)arg;
  stack_t ss = {.ss_sp = stack, .ss_size = 1 << 16, .ss_flags = SS_AUTODISARM};
  if (sigaltstack(&ss, NULL) != 0) perror("sigaltstack");
  char c;
  ssize_t r = read(p[0], &c, 1);
  printf("read returned %zd '%c'\n", r, c);
  close(open("autodisarm.after", O_RDONLY | O_CREAT, 0644));
  return NULL;
}
int main(void) {
  stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  pipe(p);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = h;
  sa.sa_flags = SA_ONSTACK | SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t t;
  pthread_create(&t, NULL, thr, NULL);
  usleep(100000);
  pthread_kill(t, SIGUSR1);
  while (!handled) usleep(1000);
  usleep(50000);
  write(p[1], "x", 1);
  pthread_join(t, NULL);
  return 0;
}
C
for prog in chld "suspend sigsuspend" "suspend pselect" "suspend ppoll" adstorm autodisarm; do
  set -- $prog
  cc -O1 -pthread "$1.c" -o "$1" 2> /dev/null || continue
  timeout -k 5 60 ./"$@" > "$1.want" 2>&1
  for dispatch in 1 0; do
    IORR_DISPATCH=$dispatch timeout -k 5 60 "$iorr" record -q -o "$1.iorr" -- ./"$@" > "$1.out" 2>&1
    st=$?
    "$iorr" dump "$1.iorr" > "$1.dump" 2>&1
    what="$prog (dispatch=$dispatch)"
    if [[ $st -ne 0 ]] || ! cmp -s "$1.want" "$1.out"; then
      fail "$what: status $st, '$(tr '\n' ' ' < "$1.out" | head -c 150)', unrecorded '$(tr '\n' ' ' < "$1.want")'"
    elif grep -q -E 'note: longjmp|out of time order' "$1.dump"; then
      fail "$what: $(grep -m1 -E 'note: longjmp|out of time order' "$1.dump")"
    elif [[ $1 == autodisarm ]] && [[ $(grep -c ' read([0-9]*, ..., 1) = 1 ' "$1.dump") != 1 ]]; then
      fail "$what: the read is in the trace $(grep -c ' read([0-9]*, ..., 1) = 1 ' "$1.dump") times"
    else
      ok "$what: as unrecorded"
    fi
  done
done

# A fork child whose first act is a pause() left by siglongjmp: the SIGSYS handler carrying out
# the trapped pause is gone with it, and the child's writer must still start (it waited for
# that handler to end: 173,788 of its 200,000 writes were lost).
cat > ljpause.c <<'C'
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
static sigjmp_buf env;
static void on_alarm(int s) { (void)s; siglongjmp(env, 1); }
int main(void) {
  signal(SIGALRM, on_alarm);
  pid_t pid = fork();
  if (pid == 0) {
    /* the child's first act: wait for a timeout with pause(), left by siglongjmp */
    if (sigsetjmp(env, 1) == 0) {
      struct itimerval t = {{0, 0}, {0, 20000}};
      setitimer(ITIMER_REAL, &t, NULL);
      pause();
    }
    int fd = open("/dev/null", O_WRONLY);
    for (int i = 0; i < 200000; i++) write(fd, "x", 1);
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  printf("child status %d\n", st);
  return 0;
}
C
if cc -O1 ljpause.c -o ljpause 2> /dev/null; then
  timeout -k 5 60 "$iorr" record -q -o ljpause.iorr -- ./ljpause > ljpause.out 2>&1
  st=$?
  "$iorr" stats ljpause.iorr > ljpause.stats 2>&1
  writes=$(awk '$1 == "write" {print $2}' ljpause.stats | tr -d ,)
  if [[ $st -ne 0 || $(cat ljpause.out) != "child status 0" ]]; then
    fail "pause() left by longjmp in a fork child: status $st, $(head -c 100 ljpause.out)"
  elif [[ ${writes:-0} -lt 200000 ]] || grep -q -E 'lost|incomplete' ljpause.stats; then
    fail "pause() left by longjmp in a fork child: ${writes:-0} writes recorded, $(grep -m1 -E 'lost|incomplete' ljpause.stats)"
  else
    ok "pause() left by longjmp in a fork child: all $writes writes recorded"
  fi
fi

# A signal handler that siglongjmps out of a call the recorder is inside (a timed read, as
# shells do): the abandoned call must not leave the thread unrecorded, nor hold every watermark
# back. Cases: a wrapped read; stdio's read (the trapped path, whose SIGSYS handler is left
# too); a handler on an alternate stack mapped above the thread's stack (its own call is
# nested, as before: not recorded, but not twice either); and a cancelled read, whose cleanup
# handler runs nested (below the call, from the unwinder): the rest of the program is recorded.
cat > ljmp.c <<'C'
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>
static sigjmp_buf env;
static int pipefd[2];
static int in_handler_call;
static void on_alarm(int sig) {
  (void)sig;
  if (in_handler_call) close(open("ljmp.inhandler", O_RDONLY));
  siglongjmp(env, 1);
}
static void arm(int onstack) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = onstack ? SA_ONSTACK : 0;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval t = {{0, 0}, {0, 50000}};
  setitimer(ITIMER_REAL, &t, NULL);
}
static void* altstack_thread(void* stack) {
  stack_t ss = {.ss_sp = stack, .ss_size = 1 << 16, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &s, NULL);
  in_handler_call = 1;
  if (sigsetjmp(env, 1) == 0) {
    arm(1);
    char c;
    (void)read(pipefd[0], &c, 1);
    return (void*)1;
  }
  close(open("ljmp.after", O_RDONLY));
  return NULL;
}
static void cleanup(void* p) {
  (void)p;
  close(open("ljmp.cleanup", O_RDONLY));
}
static void* cancelled_thread(void* p) {
  (void)p;
  pthread_cleanup_push(cleanup, NULL);
  char c;
  (void)read(pipefd[0], &c, 1);
  pthread_cleanup_pop(0);
  return NULL;
}
int main(int argc, char** argv) {
  if (argc != 2 || pipe(pipefd) != 0) return 2;
  if (strcmp(argv[1], "read") == 0 || strcmp(argv[1], "stdio") == 0) {
    FILE* f = fdopen(pipefd[0], "r");
    if (sigsetjmp(env, 1) == 0) {
      arm(0);
      if (argv[1][0] == 'r') {
        char c;
        (void)read(pipefd[0], &c, 1);
      } else {
        (void)fgetc(f);
      }
      return 3;
    }
  } else if (strcmp(argv[1], "altstack") == 0) {
    /* The alternate stack is mapped first, the thread's stack after it (mmap goes down): the
       handler then runs above the frames of the call it interrupts. */
    void* stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    pthread_t t;
    void* r;
    pthread_create(&t, NULL, altstack_thread, stack);
    pthread_join(t, &r);
    if (r != NULL) return 4;
  } else if (strcmp(argv[1], "cancel") == 0) {
    pthread_t t;
    pthread_create(&t, NULL, cancelled_thread, NULL);
    usleep(50000);
    pthread_cancel(t);
    pthread_join(t, NULL);
  } else {
    return 2;
  }
  close(open("ljmp.end", O_RDONLY));
  printf("ok %s\n", argv[1]);
  return 0;
}
C
if cc -O1 -pthread ljmp.c -o ljmp 2> /dev/null; then
  : > ljmp.inhandler; : > ljmp.after; : > ljmp.cleanup; : > ljmp.end
  for dispatch in 1 0; do
    for c in read stdio altstack cancel; do
      [[ $c == stdio && $dispatch == 0 ]] && continue  # stdio's own read is not seen without dispatch
      IORR_DISPATCH=$dispatch timeout -k 5 60 "$iorr" record -q -o ljmp.iorr -- ./ljmp "$c" > ljmp.out 2>&1
      st=$?
      lag=$(lag_of ljmp.iorr)
      "$iorr" dump ljmp.iorr > ljmp.dump 2> ljmp.err
      what="longjmp out of a call: $c (dispatch=$dispatch)"
      if [[ $st -ne 0 ]] || [[ $(cat ljmp.out) != "ok $c" ]]; then
        fail "$what: status $st: $(head -c 200 ljmp.out)"
      elif ! grep -q 'openat(AT_FDCWD, "ljmp.end"' ljmp.dump; then
        fail "$what: the call after it is missing"
      elif [[ $c == altstack ]] && ! grep -q 'openat(AT_FDCWD, "ljmp.after"' ljmp.dump; then
        fail "$what: the thread's call after the jump is missing"
      elif [[ $(grep -c 'openat(AT_FDCWD, "ljmp.inhandler"' ljmp.dump) -gt 1 ]]; then
        fail "$what: the handler's call is in the trace twice"
      elif [[ $c != cancel ]] && ! grep -q 'note: longjmp' ljmp.dump; then
        fail "$what: no note says a call was left"
      elif ! below "$lag" 0.5; then
        fail "$what: watermarks held back ${lag}s"
      else
        ok "$what: later calls recorded, lag ${lag}s"
      fi
    done
  done
fi

# A debugger's inferior: a child that asks to be traced (PTRACE_TRACEME, as gdb's does), by fork
# or vfork, then execs. Its tracer must see only the exec's stop: a Syscall User Dispatch trap
# would stop it at every SIGSYS (gdb reports "received signal SIGSYS" and stops there).
cat > tracee.c <<'C'
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char** argv) {
  if (argc > 2) {  /* the inferior's new image */
    close(open("tracee.in", O_RDONLY));
    return 5;
  }
  int use_vfork = argc > 1 && strcmp(argv[1], "vfork") == 0;
  pid_t pid = use_vfork ? vfork() : fork();
  if (pid == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(100);
    execl("/proc/self/exe", "tracee", "x", "image", (char*)0);
    _exit(101);
  }
  int st, others = 0, code = -1;
  for (;;) {
    if (waitpid(pid, &st, 0) != pid) return 2;
    if (WIFEXITED(st)) { code = WEXITSTATUS(st); break; }
    if (WIFSIGNALED(st)) { code = 128 + WTERMSIG(st); break; }
    int sig = WSTOPSIG(st);
    if (sig != SIGTRAP) others++;
    ptrace(PTRACE_CONT, pid, 0, sig == SIGTRAP ? 0 : sig);
  }
  printf("inferior exited %d, %d other signal stops\n", code, others);
  return 0;
}
C
if cc -O1 tracee.c -o tracee 2> /dev/null; then
  for how in fork vfork; do
    ./tracee "$how" > tracee.want 2>&1
    timeout -k 5 60 "$iorr" record -q -o tracee.iorr -- ./tracee "$how" > tracee.out 2>&1
    st=$?
    "$iorr" dump tracee.iorr > tracee.dump 2>&1
    if [[ $st -ne 0 ]] || ! cmp -s tracee.want tracee.out; then
      fail "ptrace inferior ($how): status $st, '$(head -c 200 tracee.out)', unrecorded '$(head -c 200 tracee.want)'"
    elif ! grep -q 'traced (PTRACE_TRACEME)' tracee.dump; then
      fail "ptrace inferior ($how): no note says it was recorded through the wrappers only"
    elif ! grep -q 'openat(AT_FDCWD, "tracee.in"' tracee.dump; then
      fail "ptrace inferior ($how): the inferior's open is missing"
    else
      ok "ptrace inferior ($how): $(cat tracee.out)"
    fi
  done
fi
if command -v gdb > /dev/null; then
  printf 'int main(void) { return 3; }' | cc -x c - -o exit3 2> /dev/null
  timeout -k 5 60 "$iorr" record -q -o gdb.iorr -- gdb -q -batch -ex run ./exit3 > gdb.out 2>&1
  if grep -q 'exited with code 03' gdb.out && ! grep -q SIGSYS gdb.out; then
    ok "gdb runs a recorded inferior to its end"
  else
    fail "gdb under the recorder: $(grep -m1 -E 'SIGSYS|exited' gdb.out)"
  fi
else
  echo "SKIP: gdb is not installed (the ptrace cases above cover its inferior)"
fi

# The writer thread works in an fd table of its own holding only the library's fds once the
# program has made 4096 calls (before, it shares the program's: see "a closed pipe at the
# writer's start"): the program's files are not open in it (a closed pipe end brings EOF at once), closing them there
# drops none of the program's POSIX locks, and the program's own table is not shared (which
# made each fd call of the program take the kernel's path for shared tables).
cat > fdtable.c << 'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
static int count_fds(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d))) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}
int main(void) {
  int p[2];
  if (pipe(p)) return 2;
  int fd = open("locked", O_RDWR | O_CREAT, 0644);
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  if (fd < 0 || fcntl(fd, F_SETLK, &fl)) return 2;
  struct stat st;
  /* Recorded calls: the writer starts, runs some ticks, and moves to its own table at the
     4096th call. */
  for (int i = 0; i < 4200; ++i) {
    stat(".", &st);
    if (i % 140 == 0) usleep(10000);
  }
  /* Tasks other than this one (the writer when recorded): the fewest fds any of them holds. */
  char path[64];
  int fewest = -1, mine = count_fds("/proc/self/fd");
  DIR* t = opendir("/proc/self/task");
  struct dirent* e;
  while (t && (e = readdir(t))) {
    if (e->d_name[0] == '.' || atoi(e->d_name) == gettid()) continue;
    snprintf(path, sizeof(path), "/proc/self/task/%s/fd", e->d_name);
    int n = count_fds(path);
    if (n >= 0 && (fewest < 0 || n < fewest)) fewest = n;
  }
  if (t) closedir(t);
  close(p[1]);
  struct pollfd pf = {p[0], POLLIN, 0};
  char c;
  int eof = poll(&pf, 1, 2000) == 1 && read(p[0], &c, 1) == 0;
  pid_t pid = fork();
  if (pid == 0) {
    struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int f = open("locked", O_RDWR);
    _exit(f >= 0 && fcntl(f, F_GETLK, &q) == 0 && q.l_type == F_WRLCK && q.l_pid == getppid() ? 0
                                                                                             : 1);
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  printf("eof %s, lock %s\n", eof ? "at once" : "missing", ws == 0 ? "held" : "lost");
  fprintf(stderr, "fds: this thread %d, other tasks at least %d\n", mine, fewest);
  return 0;
}
C
# deny NR CMD...: runs CMD with system call NR failing with EPERM (a seccomp filter, as container
# profiles have): the writer then cannot make its own table and shares the program's.
cat > deny.c << 'C'
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char** argv) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)atoi(argv[1]), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog p = {sizeof f / sizeof f[0], f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p))
    return 125;
  execvp(argv[2], argv + 2);
  return 127;
}
C
# Files locked with flock through fds at the top of a full table, then an exec; the new image
# closes each and at once takes its lock again through a new open. Unrecorded every close is the
# file's last and every lock is free again; a writer holding copies of the program's fds (as it
# did for a moment, stop 13, until it made its table empty instead of copying it) kept some.
cat > flockwin.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>
#define K 150
int main(int argc, char** argv) {
  char name[32];
  if (argc == 1) {
    struct rlimit r;
    getrlimit(RLIMIT_NOFILE, &r);
    if (r.rlim_max > 20000) r.rlim_max = 20000;
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
    int top = (int)r.rlim_cur - 300;
    for (int i = 0; i < K; ++i) {
      snprintf(name, sizeof name, "lock.%d", i);
      int lk = open(name, O_RDWR | O_CREAT, 0644);
      if (lk < 0 || flock(lk, LOCK_EX) || dup2(lk, top + i) < 0) return 2;
      close(lk);
    }
    int z = open("/dev/null", O_RDONLY);
    for (int fd = z + 1; fd < top - 300; ++fd)
      if (dup2(z, fd) < 0) break;
    char s[16];
    snprintf(s, sizeof s, "%d", top);
    execl("/proc/self/exe", argv[0], s, (char*)0);
    return 2;
  }
  int top = atoi(argv[1]), busy = 0;
  for (int i = 0; i < K; ++i) {
    close(top + i);
    snprintf(name, sizeof name, "lock.%d", i);
    int f = open(name, O_RDWR);
    if (flock(f, LOCK_EX | LOCK_NB) != 0) ++busy;
    close(f);
  }
  printf("locks still held after their last close: %d of %d\n", busy, K);
  return busy != 0;
}
C
if cc -O1 fdtable.c -o fdtable 2> /dev/null && cc -O1 deny.c -o deny 2> /dev/null &&
  cc -O1 flockwin.c -o flockwin 2> /dev/null; then
  ./fdtable > fdtable.want 2> /dev/null
  timeout -k 5 60 "$iorr" record -q -o fdtable.iorr -- ./fdtable > fdtable.out 2> fdtable.err
  st=$?
  read -r mine fewest < <(sed -E 's/.*this thread ([0-9-]+), other tasks at least ([0-9-]+).*/\1 \2/' fdtable.err)
  if [[ $st -ne 0 ]] || ! cmp -s fdtable.want fdtable.out; then
    fail "writer's fd table: status $st, '$(cat fdtable.out)' ($(cat fdtable.err)), unrecorded '$(cat fdtable.want)'"
  elif ! dump_has fdtable.iorr 'newfstatat(AT_FDCWD, "."'; then
    fail "writer's fd table: the program's calls are missing"
  elif [[ ${fewest:--1} -lt 0 || $fewest -ge ${mine:-0} ]]; then
    fail "writer's fd table is the program's: $(cat fdtable.err)"
  else
    ok "writer's fd table is its own: $(cat fdtable.out); $(cat fdtable.err)"
  fi
  # Where close_range or pidfd_getfd is refused, the writer shares the program's table.
  for nr in 436 438; do
    timeout -k 5 60 ./deny $nr "$iorr" record -q -o deny.iorr -- ./fdtable > deny.out 2> deny.err
    st=$?
    if [[ $st -ne 0 ]] || ! cmp -s fdtable.want deny.out || [[ $(events deny.iorr) -lt 30 ]]; then
      fail "system call $nr refused: status $st, '$(cat deny.out)', $(events deny.iorr) events"
    else
      ok "system call $nr refused: the writer shares the table: $(cat deny.out), $(events deny.iorr) events"
    fi
  done
  busy=0
  for i in 1 2 3 4 5; do
    rm -f lock.*
    timeout -k 5 60 "$iorr" record -q -o flock.iorr -- ./flockwin > flock.out 2>&1 || busy=$((busy + 1))
  done
  if [[ $busy -eq 0 ]]; then ok "flock: every close of the program is the file's last (5 runs)"; else
    fail "flock: $busy of 5 runs kept locks after the program's last close: $(cat flock.out)"; fi
  rm -f lock.*
fi

# System call instructions in the program's own code (not libc's): recorded with patched sites
# (the default), with dispatch (IORR_PATCH=0), and with dispatch as the fallback when a site
# cannot be rewritten (a jump on either side of the instruction).
if cc -O2 "$src/raw_syscalls.c" -o raw_syscalls 2> /dev/null &&
  cc -O2 -DODD_SITE "$src/raw_syscalls.c" -o raw_syscalls_odd 2> /dev/null; then
  for mode in patched dispatch fallback; do
    prog=./raw_syscalls
    envs=(IORR_PATCH=1)  # patched from the start (else only after IORR_PATCH_AFTER calls)
    [[ $mode == dispatch ]] && envs=(IORR_PATCH=0)
    [[ $mode == fallback ]] && prog=./raw_syscalls_odd
    rm -f raw.$mode
    ./raw_syscalls raw.plain 40
    env "${envs[@]}" timeout 60 "$iorr" record -q -o raw.iorr -- $prog raw.$mode 40
    st=$?
    "$iorr" dump raw.iorr > raw.txt 2>&1
    fd=$(grep -o "openat(AT_FDCWD, \"raw.$mode\".*) = [0-9]*" raw.txt | grep -o '[0-9]*$')
    writes=$(grep -c "write(${fd:-x}, \.\.\., [0-9]*) = [0-9]" raw.txt)
    case $mode in
      patched) note='capture: patched system call sites' ;;
      dispatch) note='' ;;
      fallback) note='not patched: a site cannot be rewritten at the program' ;;
    esac
    [[ ${IORR_PATCH:-} == 0 ]] && note=''  # the whole run with dispatch
    if [[ $st -ne 0 ]] || ! cmp -s raw.plain raw.$mode; then
      fail "raw syscalls ($mode): status $st, output $(cmp raw.plain raw.$mode 2>&1)"
    elif [[ -z $fd || $writes -ne 40 ]] || ! grep -q "close($fd) = 0" raw.txt; then
      fail "raw syscalls ($mode): calls missing: openat ${fd:-none}, $writes of 40 writes, close $(grep -c "close(${fd:-x})" raw.txt)"
    elif [[ -n $note ]] && ! grep -q "$note" raw.txt; then
      fail "raw syscalls ($mode): no note '$note': $(grep 'capture' raw.txt)"
    else
      ok "raw syscalls ($mode): openat, 40 writes and close recorded${note:+ ($note)}"
    fi
  done
else
  echo "skip: raw syscall cases: no C compiler"
fi

# Dispatch first, patched sites once a process has made IORR_PATCH_AFTER calls (4096 unless
# set): every call of a long run is recorded across the switch.
cc -O1 "$src/patch/many_calls.c" -o many_calls
timeout 60 "$iorr" record -q -o switch.iorr -- ./many_calls many.out 10000
n=$(events switch.iorr)
if [[ ${n:-0} -lt 20000 ]]; then
  fail "switch to patched sites: $n events, 20000 lseeks and writes expected"
elif [[ ${IORR_PATCH:-} == "" ]] && ! dump_has switch.iorr 'capture: patched system call sites after'; then
  fail "switch to patched sites: no note: $(grep capture switch.iorr.txt)"
else
  ok "switch to patched sites: $n events$(grep -o 'capture: patched system call sites after [0-9]* calls' switch.iorr.txt | sed 's/^capture: /, /')"
fi

# Decoded system call sites kept from one recording for the next (stop 24): the second run of a
# program decodes nothing, and a file that does not match (bytes changed at random) or does not
# parse changes nothing that is recorded; the latter is replaced. IORR_CACHE=0 leaves the file
# alone.
sites=$XDG_CACHE_HOME/iorr-sites
rm -f "$sites"
patching=1
[[ ${IORR_PATCH:-} == 0 || ${IORR_DISPATCH:-} == 0 ]] && patching=0
sites_bad=""
for run in first second changed garbage off; do
  knob=IORR_X=
  case $run in
    changed) dd if=/dev/urandom of="$sites" bs=1 seek=40 count=400 conv=notrunc 2> /dev/null ;;
    garbage) head -c 3000 /dev/urandom > "$sites" ;;
    off) knob=IORR_CACHE=0 before=$(cksum < "$sites" 2> /dev/null) ;;
  esac
  env "$knob" IORR_PATCH_AFTER="${IORR_PATCH_AFTER:-64}" timeout 60 "$iorr" record -q \
    -o sites.iorr -- ./many_calls many.out 10000
  st=$?
  n=$(events sites.iorr)
  "$iorr" dump sites.iorr > sites.txt 2>&1
  kept=$(grep -o 'system call sites of [0-9]* object' sites.txt | grep -o '[0-9]*')
  decoded=$(grep -o 'objects decoded here: [0-9]*' sites.txt | grep -o '[0-9]*$')
  [[ $run == first ]] && first_n=$n
  want_kept=0
  [[ $run == second && $patching == 1 ]] && want_kept=2+
  if [[ $st != 0 || $n != "$first_n" || ${n:-0} -lt 20000 ]] ||
    { [[ $want_kept == 0 && $run != changed && $run != off ]] && [[ $kept != 0 ]]; } ||
    { [[ $want_kept == 2+ ]] && [[ ${kept:-0} -lt 2 || ${decoded:-x} != 0 ]]; } ||
    { [[ $patching == 1 ]] && ! head -c 8 "$sites" 2> /dev/null | grep -q IORRSIT1; } ||
    { [[ $run == off ]] && [[ -n $kept || $(cksum < "$sites" 2> /dev/null) != "$before" ]]; }; then
    sites_bad+=" $run: status $st, $n events (first run $first_n), $kept objects kept, $decoded decoded;"
  fi
done
if [[ -z $sites_bad ]]; then
  ok "decoded system call sites kept for the next recording: first/second/changed/garbage file, IORR_CACHE=0, $first_n events each"
else
  fail "decoded system call sites kept:$sites_bad"
fi

# iorr record's own decoding thread outlives a short program while stderr is a full pipe (the
# launcher then waits in its summary): it must not touch the shared state once unmapped
# (review: SIGSEGV, 5 runs in 5).
( head -c 65536 /dev/zero >&2; "$iorr" record -o pipe.iorr -- /nonexistent-program; echo $? > pipe.rc ) 2>&1 |
  (sleep 1; cat > /dev/null)
if [[ $(cat pipe.rc) == 127 ]]; then ok "launcher with a full stderr pipe: status 127"; else
  fail "launcher with a full stderr pipe: status $(cat pipe.rc), 127 expected"; fi

# Where the kernel refuses dispatch (a seccomp filter makes its prctl fail, as on a kernel
# without it), libc's internal calls are caught by patched sites from the start.
if cc -O1 "$src/patch/no_dispatch.c" -o no_dispatch 2> /dev/null; then
  printf '#include <stdio.h>\nint main(void) { char l[256]; int n = 0; FILE* f = fopen("/etc/passwd", "r");\n  while (fgets(l, sizeof l, f)) n++; fclose(f); printf("%%d\\n", n); return 0; }\n' > stdio_lines.c
  cc -O1 stdio_lines.c -o stdio_lines
  IORR_PATCH= timeout 60 ./no_dispatch "$iorr" record -q -o nodisp.iorr -- ./stdio_lines > nodisp.out 2>&1
  st=$?
  if [[ $st -ne 0 || $(cat nodisp.out) != "$(./stdio_lines)" ]]; then
    fail "dispatch refused: status $st, '$(cat nodisp.out)'"
  elif ! dump_has nodisp.iorr 'openat(AT_FDCWD, "/etc/passwd"'; then
    fail "dispatch refused: stdio's openat is missing: $(grep capture nodisp.iorr.txt)"
  else
    ok "dispatch refused: stdio's calls recorded through patched sites"
  fi
fi
# Two executable segments with data between them: the data stays writable.
if cc -O1 -Wl,-T,"$src/patch/two_segments.ld" "$src/patch/two_segments.c" -o two_segments 2> /dev/null; then
  ./two_segments > twoseg.want 2>&1
  IORR_PATCH=1 timeout 60 "$iorr" record -q -o twoseg.iorr -- ./two_segments > twoseg.out 2>&1
  st=$?
  if [[ $st -ne 0 ]] || [[ $(sed 's/pid [0-9]*//' twoseg.out) != "$(sed 's/pid [0-9]*//' twoseg.want)" ]]; then
    fail "two executable segments: status $st, '$(cat twoseg.out)'"
  else
    ok "two executable segments: data between them still writable"
  fi
fi

# A raw system call right after a function that ends with a data byte: the planning, decoding
# from the function before, read it as bytes of other instructions and left it unrewritten, so
# that its calls went unrecorded once patched (stop 16's review). Now the object keeps dispatch.
if cc -O1 "$src/patch/data_before_syscall.c" -o data_before_syscall 2> /dev/null; then
  IORR_PATCH=1 timeout 60 "$iorr" record -q -o databefore.iorr -- ./data_before_syscall /etc/hostname
  st=$?
  "$iorr" dump databefore.iorr > databefore.txt 2>&1
  n=$(grep -c 'openat(AT_FDCWD, "/etc/hostname"' databefore.txt)
  if [[ $st -ne 0 || $n -ne 3 ]]; then
    fail "a system call after a data byte: status $st, $n of 3 openat recorded ($(grep 'capture:' databefore.txt | tail -n 1))"
  else
    ok "a system call after a data byte: 3 of 3 openat recorded ($(grep -o 'capture: [^(]*' databefore.txt | tail -n 1))"
  fi
fi

# A call made inside a signal handler could switch while the context it interrupted sits
# inside a window about to be rewritten (review: 9 runs in 20 died), so until stop 36 a program
# with a handler kept dispatch. Now the switch waits while a handler's frame is live (the
# library's entry counts them) and comes outside: the program runs as unrecorded and switches.
# SIGALRM every 200 us, a write in the handler, libc-internal calls in main. (At stop 36 the
# case passed 20 of 20 runs with the frame count removed too: it no longer reproduces the race,
# and guards the function.)
if cc -O1 "$src/patch/signal_switch.c" -o signal_switch 2> /dev/null; then
  bad=0
  for i in 1 2 3 4 5; do
    IORR_PATCH_AFTER=64 timeout 60 "$iorr" record -q -o sigsw.iorr -- ./signal_switch 3000 > sigsw.out 2>&1 ||
      bad=$((bad + 1))
  done
  if [[ $bad -ne 0 ]]; then
    fail "signal handler and the switch: $bad of 5 runs failed: $(head -c 200 sigsw.out)"
  elif [[ ${IORR_PATCH:-} == "" ]] && ! dump_has sigsw.iorr 'capture: patched system call sites after'; then
    fail "signal handler and the switch: no switch: $(grep -o 'capture: [^(]*(.*' sigsw.iorr.txt | tail -n 1)"
  else
    ok "signal handler and the switch: 5 runs as unrecorded$(grep -o 'capture: patched system call sites after [^(]*' sigsw.iorr.txt | sed 's/^/, /')"
  fi
fi

# Patched sites under hard conditions (each found by review; tests/recorder/patch/).
p=$src/patch
# A thread started by an earlier library's constructor, blocked in read(): no rewriting under
# it (dispatch instead), and the program's output is its own.
if cc -shared -fPIC -pthread "$p/early_thread_lib.c" -o libearly.so 2> /dev/null &&
  cc -pthread "$p/early_thread_main.c" -L. -learly -Wl,-rpath,"$work" -o early_main 2> /dev/null; then
  ./early_main > early.want 2>&1
  IORR_PATCH=${IORR_PATCH:-1} timeout 60 "$iorr" record -q -o early.iorr -- ./early_main > early.out 2>&1
  st=$?
  if [[ $st -ne 0 ]] || ! cmp -s early.want early.out; then
    fail "thread started before the recorder: status $st, '$(tr '\n' ' ' < early.out)'"
  elif [[ ${IORR_PATCH:-} != 0 ]] && ! dump_has early.iorr 'not patched: threads were started before the recorder'; then
    fail "thread started before the recorder: no note: $(grep capture early.iorr.txt)"
  else
    ok "thread started before the recorder: output as unrecorded"
  fi
fi
# A program started through the loader (/proc/self/exe is then the loader): its sites and the
# loader's are told apart, and the loader's calls in a later dlopen are recorded.
if cc -O1 -pthread "$p/dlopen_late.c" -o dlopen_late -ldl 2> /dev/null &&
  cc -shared -fPIC -Wl,-z,noseparate-code "$p/big_lib.c" -o libbig.so 2> /dev/null; then
  ldso=$(ls /lib64/ld-linux-x86-64.so.2 2> /dev/null)
  timeout 60 "$iorr" record -q -o ldso.iorr -- sh -c \
    "/bin/true; $ldso /bin/cat /etc/hostname; $ldso ./dlopen_late $work/libbig.so" > ldso.out 2>&1
  st=$?
  want="$(cat /etc/hostname; printf 'dlopen ok\nlibz ok\n')"
  if [[ $st -ne 0 || $(cat ldso.out) != "$want" ]]; then
    fail "programs run by the loader: status $st, '$(tr '\n' ' ' < ldso.out)'"
  elif ! dump_has ldso.iorr 'openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libz.so.1"'; then
    fail "programs run by the loader: the dlopen's openat is missing"
  elif grep -q 'after the switch to patched sites holds' ldso.iorr.txt; then
    fail "programs run by the loader: an escape noted for code without system calls: $(grep 'after start-up' ldso.iorr.txt | head -n 1)"
  else
    ok "programs run by the loader, a library mapped past its file's end, libgcc_s: as unrecorded, dlopen recorded"
  fi
fi
# pthread_cancel of a thread blocked in read(): its C++ destructor runs.
if c++ -O1 -pthread "$p/cancel_destructor.cc" -o cancel_destructor 2> /dev/null; then
  timeout 60 "$iorr" record -q -o cancel.iorr -- ./cancel_destructor > cancel.out 2>&1
  st=$?
  if [[ $st -ne 0 ]] || [[ $(cat cancel.out) != "$(printf 'destructor ran\njoined, cancelled=1')" ]]; then
    fail "cancelled thread: status $st, '$(tr '\n' ' ' < cancel.out)'"
  else
    ok "cancelled thread: its destructor ran"
  fi
fi
# The extended registers across a raw system call (ymm16: AVX-512).
if grep -qw avx512vl /proc/cpuinfo && cc -O1 -mavx512f -mavx512vl "$p/vector_regs.c" -o vector_regs 2> /dev/null; then
  timeout 60 "$iorr" record -q -o vec.iorr -- ./vector_regs > vec.out 2>&1
  if [[ $(cat vec.out) == "ymm16 kept"* ]] && dump_has vec.iorr 'openat(AT_FDCWD, "/etc/hostname"'; then
    ok "ymm16 kept across a recorded raw call"
  else
    fail "vector registers: '$(cat vec.out)'"
  fi
else
  echo "skip: vector register case: no AVX-512"
fi

# A piece of a record in the middle of the trace (as a process killed while writing leaves),
# whose claimed size runs past the end of the file: iorr record repairs it, and the whole
# records after it stay (they were cut off as "an incomplete record at the end" before).
rm -f tf*
# (Appended through a file of the program's own: the recorder's fds refuse it, EBADF.)
timeout 60 "$iorr" record -q -o torn.iorr -- bash -c '
  printf "\x5e\x2a\x4d\x18\xa0\x86\x01\x00%0100d" 0 >> torn.iorr
  for i in $(seq 40); do echo "$i" > tf$i; done' 2> torn.err
st=$?
"$iorr" dump torn.iorr > torn.dump 2> torn.dump.err
dst=$?
n=$(grep -c 'openat(AT_FDCWD, "tf' torn.dump)
grep -v '^# note: recorder: ' torn.dump > torn.unnoted
echo "iorr: warning: torn.iorr: bad frame magic at byte 1" > torn.other
if [[ $st == 0 && $dst == 0 && $n == 40 ]] && grep -q 'cut short in the middle' torn.dump; then
  # The killed-child case accepts this trace's warning, and only with the repair note.
  if ! torn_by_kill torn.dump.err torn.dump || torn_by_kill torn.dump.err torn.unnoted ||
    torn_by_kill torn.other torn.dump; then
    fail "a piece of a record in the middle: torn_by_kill judges '$(head -n 1 torn.dump.err)' wrongly"
  else
    ok "a piece of a record in the middle, claiming more than the file holds: repaired, 40 of 40 later opens kept"
  fi
else
  fail "a piece of a record in the middle: record $st, dump $dst ($(head -n 1 torn.dump.err)), $n of 40 later opens, $(grep -c 'cut short' torn.dump) repair notes"
fi

# A raw clone(CLONE_VM) child (not a vfork the library sees) that execs or _exits: its exit or
# exec must not keep the parent's writer lock (a hang at the parent's exit).
cat > cvm.c << 'C'
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static int child(void* how) {
  if (strcmp(how, "exec") == 0) execl("/bin/true", "true", (char*)0);
  _exit(0);
}
int main(int argc, char** argv) {
  char* st = malloc(1 << 20);
  pid_t p = clone(child, st + (1 << 20), CLONE_VM | CLONE_VFORK | SIGCHLD, argv[1]);
  int s;
  waitpid(p, &s, 0);
  printf("child status %d\n", WEXITSTATUS(s));
  return argc;
}
C
if cc -O1 cvm.c -o cvm 2> /dev/null; then
  for how in exec exit; do
    out=$(timeout 30 "$iorr" record -q -o cvm.iorr -- ./cvm "$how")
    st=$?
    if [[ $st == 2 && $out == "child status 0" ]]; then
      ok "clone(CLONE_VM) child that ${how}s: the parent ends (status $st)"
    else
      fail "clone(CLONE_VM) child that ${how}s: status $st (124: hung), output '$out'"
    fi
  done
fi

# A vfork child killed while its own vfork child runs (found by review at stop 17): the kernel
# resumes the top parent, which took the killed child's save (the top one on the shared list)
# and returned into the child's frame: it ran the child's _exit(3) instead of its own code.
# The grandchild runs on the same memory and thread-local storage, which the top parent now
# uses again: it hung for ever in the library's lock of the writer, which the top parent held
# as it ended (stop 20). It must exec, recorded, its calls before the exec must not be in the
# top's stream (it recorded them there), and the trace must say they escaped. (The gap keeps the grandchild's frames below all the top parent's stack use;
# without it the top parent's printf and exit overwrote them, and the grandchild crashed,
# recorded or not.)
# With "deeper", one level more: the great-grandchild kills the middle child while the
# grandchild waits in its own vfork. The grandchild then returns through a save the top parent
# has marked orphaned, and must leave the top's storage alone too (stop 20).
cat > vfkill.c << 'C'
#define _GNU_SOURCE
#include <alloca.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile pid_t middle;
static void kill_middle(void) {
  syscall(SYS_kill, middle, SIGKILL);
  struct timespec t = {0, 100000000};
  syscall(SYS_nanosleep, &t, 0);
}
int main(int argc, char** argv) {
  (void)argv;
  pid_t p = vfork();
  if (p == 0) {
    middle = getpid();
    char* volatile gap = alloca(1 << 18);
    gap[0] = 0;
    if (vfork() == 0) {  // the grandchild
      if (argc > 1) {    // deeper
        char* volatile gap2 = alloca(1 << 18);
        gap2[0] = 0;
        if (vfork() == 0) {
          kill_middle();
          execl("/bin/true", "true", (char*)0);
          _exit(9);
        }
      } else {
        kill_middle();
      }
      access("/iorr-vfkill-grandchild", F_OK);
      execl("/bin/true", "true", (char*)0);
      _exit(9);
    }
    _exit(3);
  }
  int st;
  waitpid(p, &st, 0);
  printf("middle: %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  return 0;
}
C
if cc -O1 vfkill.c -o vfkill 2> /dev/null; then
  for deeper in "" deeper; do
    label="vfork child killed during its own vfork${deeper:+, a level deeper}"
    want_execs=$([[ -n $deeper ]] && echo 2 || echo 1)
    as_unrecorded "$label" vfkill.iorr "default IORR_PATCH=1 IORR_PATCH=0 IORR_DISPATCH=0" \
      ./vfkill $deeper
    for how in default IORR_PATCH=1 IORR_DISPATCH=0; do
      env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o vfkill.iorr -- ./vfkill $deeper > /dev/null 2>&1
      st=$?
      "$iorr" dump vfkill.iorr > vfkill.iorr.txt 2>&1
      execs=$(grep -c 'execve("/bin/true"' vfkill.iorr.txt)
      if [[ $st != 0 || $execs != "$want_execs" ]]; then
        fail "$label ($how): status $st, $execs of $want_execs execs of the descendants in the trace"
      elif grep -q 'iorr-vfkill-grandchild' vfkill.iorr.txt; then
        fail "$label ($how): the grandchild's call before its exec was recorded"
      elif ! grep -q 'escape [0-9]*: a vfork child was killed during its own vfork' vfkill.iorr.txt; then
        fail "$label ($how): no note of the grandchild's escape"
      else
        ok "$label ($how): the descendants' execs recorded, their calls before not, their escape noted"
      fi
    done
  done
fi

# The recorder's fds are not open to the program (stop 39's sweep): bash probes an fd with
# F_GETFD before `exec N>file` and saved and restored what it found, so that `echo two >&N`
# wrote into the recorder's shared memory. fcntl, dup and ioctl on them get EBADF now. For each
# of the recorder's fds (found in /proc), the shell's probe finds it closed and a redirection
# onto it reaches the file.
cat > ownfds.sh << 'SH'
own=""
for f in /proc/$$/fd/*; do
  case $(readlink "$f") in *iorr-shared* | *ownfds.iorr) own+=" ${f##*/}" ;; esac
done
for n in $own; do (: >&"$n") 2> /dev/null && echo "open $n"; done
for n in $own; do
  eval "exec $n>own.$n"
  eval "echo two >&$n"
  eval "exec $n>&-"
  echo "fd $n: $(cat own.$n)"
done
SH
for how in default IORR_PATCH=0 IORR_DISPATCH=0; do
  got=$(env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o ownfds.iorr -- bash ownfds.sh 2>&1)
  st=$?
  n=$(grep -c '^fd [0-9]*: two$' <<< "$got")
  if [[ $st == 0 && $n -ge 2 ]] && ! grep -qv '^fd [0-9]*: two$' <<< "$got"; then
    ok "the recorder's fds seen closed, redirections onto them reach the file ($how): $n fds"
  else
    fail "the recorder's fds seen closed, redirections onto them reach the file ($how): status $st, '$(tr '\n' '|' <<< "$got")'"
  fi
done

# A vfork child that dup2s onto the recorder's own fds (the top of the fd range): it got EBUSY
# until stop 20 (their numbers were the parent's variables); now it moves its copies and keeps
# their numbers in thread-local storage, and its exec hands the moved ones on.
cat > vfdup.c << 'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int failed = 0;
  pid_t p = vfork();
  if (p == 0) {
    int null = open("/dev/null", O_RDONLY);
    for (int i = 1; i < argc; i++)
      if (dup2(null, atoi(argv[i])) != atoi(argv[i])) failed++;
    execl("/bin/sh", "sh", "-c", "cat /dev/null", (char*)0);
    _exit(127);
  }
  int st;
  waitpid(p, &st, 0);
  printf("dup2 failures %d, child status %d\n", failed, WEXITSTATUS(st));
  return 0;
}
C
fds=
if cc -O1 vfdup.c -o vfdup 2> /dev/null &&
   timeout 30 "$iorr" record -q -o vfdup.iorr -- ./vfdup > /dev/null 2>&1 &&
   dump_has vfdup.iorr '^# trace_fd: '; then
  tfd=$(grep -m1 '^# trace_fd: ' vfdup.iorr.txt | cut -d' ' -f3)
  fds=$(seq "$tfd" $((tfd + 4)) | tr '\n' ' ')
  as_unrecorded "vfork child dup2-ing onto the recorder's fds ($fds)" vfdup.iorr \
    "default IORR_PATCH=1 IORR_DISPATCH=0" ./vfdup $fds
  for how in default IORR_DISPATCH=0; do
    env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o vfdup.iorr -- ./vfdup $fds > /dev/null 2>&1
    if dump_has vfdup.iorr "dup2([0-9]*, $tfd) = $tfd" && grep -q 'execve("/bin/sh"' vfdup.iorr.txt &&
       [[ $(grep -c 'openat(AT_FDCWD, "/dev/null"' vfdup.iorr.txt) == 2 ]]; then
      ok "vfork child dup2-ing onto the recorder's fds ($how): its dup2s, its exec and cat's open recorded"
    else
      fail "vfork child dup2-ing onto the recorder's fds ($how): $(grep -c "dup2([0-9]*, $tfd)" vfdup.iorr.txt) dup2s onto $tfd, $(grep -c 'openat(AT_FDCWD, "/dev/null"' vfdup.iorr.txt) of 2 opens of /dev/null in the trace"
    fi
  done
fi

# The same child then forks and vforks before its exec: their fd tables are copies of its own,
# so they must write the trace through its moved numbers, not into the file it put on the old
# ones (the scratch file stays empty), and be recorded (stop 20, found by review).
cat > vfdup2.c << 'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int failed = 0;
  int scratch = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  pid_t p = vfork();
  if (p == 0) {
    for (int i = 2; i < argc; i++)
      if (dup2(scratch, atoi(argv[i])) != atoi(argv[i])) failed++;
    pid_t f = fork();
    if (f == 0) {
      close(open("/dev/null", O_RDONLY));
      _exit(0);
    }
    waitpid(f, NULL, 0);
    pid_t v = vfork();
    if (v == 0) {
      execl("/bin/sh", "sh", "-c", "cat /dev/null", (char*)0);
      _exit(127);
    }
    waitpid(v, NULL, 0);
    execl("/bin/sh", "sh", "-c", "cat /dev/null", (char*)0);
    _exit(127);
  }
  int st;
  waitpid(p, &st, 0);
  struct stat s;
  fstat(scratch, &s);
  printf("dup2 failures %d, child status %d, scratch %lld bytes\n", failed, WEXITSTATUS(st),
         (long long)s.st_size);
  return 0;
}
C
if [[ -n ${fds:-} ]] && cc -O1 vfdup2.c -o vfdup2 2> /dev/null; then
  as_unrecorded "vfork child on the recorder's fds, then fork and vfork" vfdup2.iorr \
    "default IORR_PATCH=1 IORR_DISPATCH=0" ./vfdup2 "$PWD/vfdup2.scratch" $fds
  for how in default IORR_DISPATCH=0; do
    env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o vfdup2.iorr -- ./vfdup2 "$PWD/vfdup2.scratch" $fds > /dev/null 2>&1
    "$iorr" dump vfdup2.iorr > vfdup2.iorr.txt 2>&1
    opens=$(grep -c 'openat(AT_FDCWD, "/dev/null"' vfdup2.iorr.txt)
    cats=$(grep -c 'execve("/usr/bin/cat"\|execve("/bin/cat"' vfdup2.iorr.txt)
    if [[ $opens == 3 && $cats == 2 && ! -s vfdup2.scratch ]]; then
      ok "vfork child on the recorder's fds, then fork and vfork ($how): all three recorded, nothing in the program's file"
    else
      fail "vfork child on the recorder's fds, then fork and vfork ($how): $opens of 3 opens, $cats of 2 cat execs, scratch $(stat -c %s vfdup2.scratch) bytes"
    fi
  done
fi

# glibc's clone() with a child function on a stack of its own (stop 21). A process with a copy
# of the memory ("fork": SIGCHLD only) was recorded into its copy of its parent's ring, which
# nobody drained: its calls were lost without a word. A task on the caller's memory and
# thread-local storage ("vm": CLONE_VM without CLONE_SETTLS; "vfork": with CLONE_VFORK too)
# recorded as its parent's thread, into the same ring at the same time. Now the first is a
# process of its own, recorded, whose status (fn's result) is kept; the others are foreign
# until their exec, which is recorded, and an escape note says so.
cat > rawclone.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static int exec_at_end;
static void files(const char* name) {
  for (int i = 0; i < 300; i++) {
    int fd = open(name, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (write(fd, "x", 1) != 1) abort();
    close(fd);
  }
}
static int child(void* arg) {
  files("rawclone.child");
  if (exec_at_end) execl("/bin/sh", "sh", "-c", "cat /dev/null", (char*)0);
  return 7;  // clone's code ends the child with SYS_exit(7)
}
int main(int argc, char** argv) {
  unlink("rawclone.child");
  unlink("rawclone.parent");
  int flags = SIGCHLD;
  if (strcmp(argv[1], "vm") == 0) flags |= CLONE_VM | CLONE_FS | CLONE_FILES;
  if (strcmp(argv[1], "vfork") == 0) flags |= CLONE_VM | CLONE_VFORK;
  exec_at_end = strcmp(argv[1], "fork") != 0;
  char* stack = malloc(1 << 20);
  pid_t p = clone(child, stack + (1 << 20), flags, NULL);
  if (p < 0) return 1;
  files("rawclone.parent");
  int st;
  if (waitpid(p, &st, 0) != p) return 2;
  FILE* c = fopen("rawclone.child", "r");
  FILE* q = fopen("rawclone.parent", "r");
  fseek(c, 0, SEEK_END);
  fseek(q, 0, SEEK_END);
  printf("child status %d, child wrote %ld, parent wrote %ld\n", WEXITSTATUS(st), ftell(c), ftell(q));
  return 0;
}
C
if cc -O1 rawclone.c -o rawclone 2> /dev/null; then
  for kind in fork vm vfork; do
    as_unrecorded "clone() of a $kind child on a stack of its own" rawclone.iorr \
      "default IORR_PATCH=1 IORR_DISPATCH=0" ./rawclone $kind
    for how in default IORR_PATCH=1 IORR_DISPATCH=0; do
      env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o rawclone.iorr -- ./rawclone $kind > /dev/null 2>&1
      "$iorr" dump rawclone.iorr > rawclone.iorr.txt 2>&1
      child=$(grep -c 'openat(AT_FDCWD, "rawclone.child", O_WRONLY' rawclone.iorr.txt)
      parent=$(grep -c 'openat(AT_FDCWD, "rawclone.parent", O_WRONLY' rawclone.iorr.txt)
      cats=$(grep -c 'execve("/usr/bin/cat"\|execve("/bin/cat"' rawclone.iorr.txt)
      noted=$(grep -c 'escape .*CLONE_VM and without CLONE_SETTLS' rawclone.iorr.txt)
      case $kind in
        fork) good=$([[ $child == 300 && $parent == 300 && $noted == 0 ]] && echo y) ;;
        *) good=$([[ $child == 0 && $parent == 300 && $cats == 1 && $noted == 1 ]] && echo y) ;;
      esac
      if [[ $good == y ]]; then
        ok "clone() of a $kind child ($how): child's opens $child, parent's $parent, cat execs $cats, escape notes $noted"
      else
        fail "clone() of a $kind child ($how): child's opens $child, parent's $parent, cat execs $cats, escape notes $noted"
      fi
    done
  done
fi

# clone() with CLONE_SETTLS (a task on thread-local storage the program made, as a threads
# library of its own would): recorded through the wrappers only, now with an escape note (stop
# 21: silent before). The child touches neither libc nor its storage: a raw exit.
cat > owntls.c << 'C'
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
static int child(void* arg) {
  (void)arg;
  __asm__ volatile("mov $60, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "rax", "rdi", "rcx", "r11", "memory");
  return 0;
}
int main(void) {
  char* stack = malloc(1 << 16);
  void** tls = calloc(1024, sizeof(void*));
  tls[512] = &tls[512];  // a thread pointer that points to itself, as x86-64's TCB does
  pid_t p = clone(child, stack + (1 << 16), CLONE_VM | CLONE_SETTLS | SIGCHLD, NULL, NULL,
                  &tls[512], NULL);
  int st = -1;
  if (p > 0) waitpid(p, &st, 0);
  printf("clone %s, child status %d\n", p > 0 ? "ok" : "failed", WEXITSTATUS(st));
  return 0;
}
C
if cc -O1 -fno-stack-protector owntls.c -o owntls 2> /dev/null; then
  as_unrecorded "clone() with CLONE_SETTLS" owntls.iorr "default IORR_PATCH=1 IORR_DISPATCH=0" ./owntls
  if dump_has owntls.iorr 'escape .*clone() with CLONE_SETTLS'; then
    ok "clone() with CLONE_SETTLS: an escape note says the task is recorded through the wrappers only"
  else
    fail "clone() with CLONE_SETTLS: no escape note"
  fi
fi

# mkfifo, mkfifoat and statvfs, which tar, cp and python3 import, through the wrappers alone
# (stop 21: they were recorded only by dispatch).
if [[ -x /usr/bin/python3 ]]; then
  rm -f fifo1 fifo2
  IORR_DISPATCH=0 timeout 30 "$iorr" record -q -o fifo.iorr -- /usr/bin/python3 -c \
    'import os; os.mkfifo("fifo1"); os.statvfs("."); os.mkfifo("fifo2", dir_fd=os.open(".", os.O_RDONLY))'
  if dump_has fifo.iorr 'mknodat(AT_FDCWD, "fifo1", S_IFIFO|0666' &&
     grep -q 'mknodat([0-9]*, "fifo2", S_IFIFO|0666' fifo.iorr.txt && grep -q 'statfs("\.", ' fifo.iorr.txt; then
    ok "mkfifo, mkfifoat and statvfs through the wrappers alone (IORR_DISPATCH=0)"
  else
    fail "mkfifo, mkfifoat and statvfs through the wrappers alone: $(grep -c 'mknodat\|statfs' fifo.iorr.txt) of 3 calls"
  fi
  rm -f fifo1 fifo2
fi

# vfork children 24 levels deep: past the library's 16 saved levels the process ended with
# status 127 (stop 20: a plain vfork, its child unrecorded until its exec, and noted). (An
# armed, recorded task reaches the plain path only after orphans have taken levels: not run.)
cat > vfdeep.c << 'C'
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static int level(int d) {  // each vfork child vforks again; the deepest execs echo
  pid_t p = vfork();
  if (p < 0) return 100;
  if (p == 0) {
    if (d == 24) execl("/bin/echo", "echo", "deep", (char*)0);
    _exit(level(d + 1));
  }
  int st;
  if (waitpid(p, &st, 0) != p || !WIFEXITED(st)) return 101;
  return WEXITSTATUS(st);
}
int main(void) {
  printf("levels: status %d\n", level(1));
  return 0;
}
C
if cc -O1 vfdeep.c -o vfdeep 2> /dev/null; then
  as_unrecorded "vfork children 24 levels deep" vfdeep.iorr \
    "default IORR_PATCH=1 IORR_DISPATCH=0" ./vfdeep
  for how in default IORR_DISPATCH=0; do
    env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o vfdeep.iorr -- ./vfdeep > /dev/null 2>&1
    if ! dump_has vfdeep.iorr 'execve("/bin/echo"'; then
      fail "vfork children 24 levels deep ($how): the deepest one's exec is not in the trace"
    elif ! grep -q 'escape [0-9]*: no room for a vfork.s saved state (16 levels)' vfdeep.iorr.txt; then
      fail "vfork children 24 levels deep ($how): the unrecorded levels are not noted"
    else
      ok "vfork children 24 levels deep ($how): the deepest exec recorded, the unrecorded levels noted"
    fi
  done
fi

# posix_spawn with POSIX_SPAWN_RESETIDS at once after the process's first recorded call (as
# make does): the spawn child (then a copy of the parent's memory; on it since stop 25) reset
# its ids through libc's setgid, which waits for every thread on glibc's list, the writer thread
# the call had just created among them, absent from the child: it hung for ever, most runs
# (stop 17). It uses the kernel's setgid/setuid since, as glibc's own child does.
cat > spawnids.c << 'C'
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
extern char** environ;
int main(void) {
  close(open("spawnids.c", O_RDONLY));  // starts the writer thread
  posix_spawnattr_t a;
  posix_spawnattr_init(&a);
  posix_spawnattr_setflags(&a, POSIX_SPAWN_RESETIDS);
  char* argv[] = {"true", 0};
  pid_t p;
  int r = posix_spawn(&p, "/bin/true", 0, &a, argv, environ), st = -1;
  if (r == 0) waitpid(p, &st, 0);
  printf("spawn %d, status %d\n", r, st);
  return 0;
}
C
if cc -O1 spawnids.c -o spawnids 2> /dev/null; then
  bad=0 why=""
  for i in 1 2 3 4 5 6 7 8 9 10; do
    out=$(timeout -s KILL 20 "$iorr" record -q -o spawnids.iorr -- ./spawnids 2>&1)
    st=$?
    if [[ $st != 0 || $out != "spawn 0, status 0" ]]; then
      bad=$((bad + 1))
      why+=" [run $i: status $st (137: hung), '$out']"  # (stop 24: 1 of 10 failed twice)
    fi
  done
  pkill -KILL -f '/spawnids$' 2> /dev/null
  if [[ $bad == 0 ]]; then
    ok "posix_spawn with POSIX_SPAWN_RESETIDS right after the writer starts: 10 of 10 runs end"
  else
    fail "posix_spawn with POSIX_SPAWN_RESETIDS: $bad of 10 runs hung or failed:$why"
  fi
fi

# glibc's flag for a process without threads (stop 27): the recorder sets
# __libc_single_threaded back after starting its writer, so a single-threaded program's calls
# skip glibc's cancellation bookkeeping as they do unrecorded. The setuid family then has to
# tell the writer too (with the flag up glibc changes only the calling thread's ids: the
# writer kept root after the program dropped it when this was first tried), and a vfork child's
# setuid must not reach its parent's writer. Each mode prints the flag before and after, and
# whether every task of the process has the same ids; the same output as unrecorded.
# "keepcaps" (stop 39's sweep: `setpriv --reuid=65534 --regid=65534 --keep-groups` ended by
# SIGABRT recorded): capabilities kept over a setresuid and raised again by capset, which is
# the calling thread's alone, then a setresgid; handed to every thread, it failed in the writer
# (which had lost them) and glibc aborted. The change is now the program's thread's alone, as
# unrecorded, and the trace says the writer kept its ids.
cat > setxid.c << 'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#include <unistd.h>
/* Whether every task of the process shows the same Uid:, Gid: and Groups: lines. */
static const char* same_ids(void) {
  static char first[512];
  int tasks = 0, differ = 0;
  DIR* d = opendir("/proc/self/task");
  struct dirent* e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[64], buf[4096], ids[512] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
    FILE* f = fopen(path, "r");
    if (!f) continue;
    while (fgets(buf, sizeof buf, f))
      if (!strncmp(buf, "Uid:", 4) || !strncmp(buf, "Gid:", 4) || !strncmp(buf, "Groups:", 7))
        strncat(ids, buf, sizeof ids - strlen(ids) - 1);
    fclose(f);
    if (tasks++ == 0) strcpy(first, ids);
    else if (strcmp(first, ids)) differ = 1;
  }
  if (d) closedir(d);
  return differ ? "tasks differ" : "tasks agree";
}
static void* idle(void* a) { pause(); return a; }
int main(int argc, char** argv) {
  close(open("/dev/null", O_RDONLY));  /* a recorded call: the writer starts */
  printf("%s: single %d;", argv[1], __libc_single_threaded);
  gid_t g = 65534;
  int r = 0;
  if (!strcmp(argv[1], "setuid")) r = setuid(65534);
  else if (!strcmp(argv[1], "setresuid")) r = setresuid(65534, 65534, 65534);
  else if (!strcmp(argv[1], "seteuid")) r = seteuid(65534);
  else if (!strcmp(argv[1], "setgid")) r = setgid(65534);
  else if (!strcmp(argv[1], "setgroups")) r = setgroups(1, &g);
  else if (!strcmp(argv[1], "initgroups")) r = initgroups("nobody", 65534);
  else if (!strcmp(argv[1], "keepcaps")) {
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    r = prctl(PR_SET_KEEPCAPS, 1) | setresuid(65534, 65534, 65534) |
        (int)syscall(SYS_capget, &h, d);
    d[0].effective = d[0].permitted;
    d[1].effective = d[1].permitted;
    r |= (int)syscall(SYS_capset, &h, d) | setresgid(65534, 65534, 65534);
    /* Then without capabilities in either thread: the writer's ids are apart for good (its
       setgid(0) succeeded where the program's failed, and glibc aborted: review of stop 39). */
    memset(d, 0, sizeof d);
    r |= (int)syscall(SYS_capset, &h, d);
    printf(" setgid(0) %d;", setgid(0));
  } else if (!strcmp(argv[1], "thread")) {
    pthread_t t;
    r = pthread_create(&t, 0, idle, 0);
  } else if (!strcmp(argv[1], "vfork")) {
    pid_t p = vfork();
    if (p == 0) _exit(setuid(65534) == 0 ? 0 : 1);
    int st;
    waitpid(p, &st, 0);
    r = WEXITSTATUS(st);
  }
  printf(" %s %d; single %d; %s\n", argv[1], r, __libc_single_threaded,
         strcmp(argv[1], "keepcaps") ? same_ids() : "-");
  return 0;
}
C
if [[ $(id -u) -ne 0 ]]; then
  echo "skip: the setuid family case needs root"
elif cc -O1 -pthread setxid.c -o setxid 2> /dev/null; then
  for m in setuid setresuid seteuid setgid setgroups initgroups thread vfork keepcaps; do
    want=$(./setxid $m 2>&1)
    got=$(timeout 30 "$iorr" record -q -o setxid.iorr -- ./setxid $m 2>&1)
    st=$?
    if [[ $m == keepcaps ]]; then
      if [[ $st == 0 && $got == "$want" && $want == *"setgid(0) -1; keepcaps 0;"* ]] &&
        "$iorr" dump setxid.iorr 2> /dev/null | grep -q "the writer thread keeps the ids it had"; then
        ok "ids changed with capabilities of the program's thread alone: '$got' as unrecorded, noted"
      else
        fail "ids changed with capabilities of the program's thread alone: status $st, '$got' against '$want'"
      fi
    elif [[ $st == 0 && $got == "$want" && $got == *"tasks agree"* ]]; then
      ok "glibc's single-threaded flag and $m: '$got' as unrecorded"
    else
      fail "glibc's single-threaded flag and $m: status $st, '$got' against '$want'"
    fi
  done
fi

# Found by review at stop 27: (1) setuid is async-signal-safe, and a handler's seteuid while
# the program's setresuid had the flag down entered glibc's setxid again under its own lock and
# hung (it did before stop 27 too, the flag being down for good); (2) initgroups runs the NSS
# modules, and one that starts a thread meanwhile must leave the flag down as unrecorded
# (put back up over the program's two threads, malloc's shortcuts corrupted the heap).
cat > sigsetxid.c << 'C'
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
static volatile long handled;
static void on_alarm(int s) { (void)s; seteuid(0); handled++; }
int main(void) {
  close(open("/dev/null", O_RDONLY));
  signal(SIGALRM, on_alarm);
  struct itimerval it = {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &it, 0);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    setresuid(0, 0, 0);
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while (t.tv_sec - t0.tv_sec < 1);
  printf("done, handler ran: %d\n", handled > 0);
  return 0;
}
C
cat > nss_thr.c << 'C'
#include <grp.h>
#include <nss.h>
#include <pthread.h>
#include <unistd.h>
static void* idle(void* a) { pause(); return a; }
enum nss_status _nss_thr_initgroups_dyn(const char* user, gid_t group, long* start, long* size,
                                        gid_t** groups, long limit, int* err) {
  pthread_t t;
  pthread_create(&t, 0, idle, 0);
  return NSS_STATUS_NOTFOUND;
}
C
cat > nssprog.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <sys/single_threaded.h>
#include <unistd.h>
int main(void) {
  close(open("/dev/null", O_RDONLY));
  int r = initgroups("nobody", 65534);
  printf("initgroups %d; single %d\n", r, __libc_single_threaded);
  return 0;
}
C
if [[ $(id -u) -ne 0 ]]; then
  echo "skip: the setuid cases need root"
else
  if cc -O1 sigsetxid.c -o sigsetxid 2> /dev/null; then
    got=$(timeout -s KILL 30 "$iorr" record -q -o sigsetxid.iorr -- ./sigsetxid 2>&1)
    st=$?
    if [[ $st == 0 && $got == "done, handler ran: 1" ]]; then
      ok "setresuid in a loop, seteuid in a timer's handler: '$got'"
    else
      fail "setresuid in a loop, seteuid in a timer's handler: status $st (137: hung), '$got'"
    fi
  fi
  if cc -O1 -shared -fPIC -pthread nss_thr.c -o libnss_thr.so.2 2> /dev/null &&
    cc -O1 nssprog.c -o nssprog 2> /dev/null && command -v unshare > /dev/null; then
    printf 'passwd: files\ngroup: thr files\n' > nsswitch.conf
    cat > nss.sh << SH
mount --bind "$work/nsswitch.conf" /etc/nsswitch.conf || exit 99
export LD_LIBRARY_PATH="$work"
./nssprog
timeout 30 "$iorr" record -q -o nss.iorr -- ./nssprog
SH
    out=$(unshare -m --propagation private bash nss.sh 2>&1)
    st=$?
    if [[ $st == 99 ]]; then
      echo "skip: no private mount namespace for an nsswitch.conf of the test's own"
    elif [[ $st == 0 && $out == $'initgroups 0; single 0\ninitgroups 0; single 0' ]]; then
      ok "initgroups whose NSS module starts a thread: flag down recorded as unrecorded"
    else
      fail "initgroups whose NSS module starts a thread: status $st, '$(echo $out)' (unrecorded, then recorded)"
    fi
  fi
fi

# stdio's locks (stop 27): the writer's pthread_create turned them on for good, and every getc
# and putc of a single-threaded program then locked its stream (5 times slower). Whether a
# stream locks is its _IO_FLAGS2_NEED_LOCK (0x80 in _flags2). The writer runs before main, so
# the case looks at a fork child, whose writer starts at its first recorded call: stdout, a
# stream the parent opened and one of fopencookie's (which locks anyway, and must keep it)
# before that call, after it, and after the child's own pthread_create, with a new stream;
# then the parent's after its own pthread_create. As unrecorded.
cat > stdiolocks.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
/* Global and read out of line: fopen's result is malloc-like to the compiler, which would
   otherwise keep a flag read before pthread_create. */
FILE *early, *cookie, *after;
__attribute__((noinline)) int locks(FILE* f) { return (f->_flags2 & 0x80) != 0; }
static ssize_t rd(void* c, char* b, size_t n) { (void)c; (void)b; (void)n; return 0; }
static void* idle(void* a) { pause(); return a; }
static void show(const char* when) {
  printf(" %s: stdout %d early %d cookie %d", when, locks(stdout), locks(early), locks(cookie));
}
int main(void) {
  early = fopen("/dev/null", "r");
  cookie_io_functions_t io = {rd, 0, 0, 0};
  cookie = fopencookie(0, "r", io);
  fflush(stdout);
  pid_t p = fork();
  pthread_t t;
  if (p == 0) {
    show("child");
    close(open("/dev/null", O_RDONLY));  /* a recorded call: the child's writer starts */
    show("after a call");
    pthread_create(&t, 0, idle, 0);
    after = fopen("/dev/null", "r");
    show("with a thread");
    printf(" new %d;", locks(after));
    fflush(stdout);
    _exit(0);
  }
  int st;
  waitpid(p, &st, 0);
  pthread_create(&t, 0, idle, 0);
  show("parent with a thread");
  printf("\n");
  return 0;
}
C
if cc -O1 -pthread stdiolocks.c -o stdiolocks 2> /dev/null; then
  want=$(./stdiolocks)
  got=$(timeout 30 "$iorr" record -q -o stdiolocks.iorr -- ./stdiolocks 2>&1)
  st=$?
  if [[ $st == 0 && $got == "$want" ]]; then
    ok "stdio's locks as unrecorded:$got"
  else
    fail "stdio's locks: status $st, '$got' against '$want'"
  fi
fi

# What keeps that flag right: the writer thread calls none of glibc's functions that trust it
# (malloc and the rest of its family, pthread_mutex_lock). A library of the program's own counts
# their calls from any thread but a process's main one, in a program that has no other thread
# of its own (so every such call is the writer's): none, in the program and its fork child,
# while the main thread's own calls are counted (the counting works). (ld.so's own locks go
# through a pointer of its own, not the PLT: the review at stop 27 checked those by reading.)
cat > shim.c << 'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void __libc_free(void*);
static atomic_long mine, others;
static void count(void) {
  if (syscall(SYS_gettid) == getpid()) atomic_fetch_add(&mine, 1);
  else atomic_fetch_add(&others, 1);
}
void* malloc(size_t n) { count(); return __libc_malloc(n); }
void* calloc(size_t a, size_t b) { count(); return __libc_calloc(a, b); }
void* realloc(void* p, size_t n) { count(); return __libc_realloc(p, n); }
void free(void* p) { if (p) count(); __libc_free(p); }
static int (*real_lock)(pthread_mutex_t*);
int pthread_mutex_lock(pthread_mutex_t* m) {
  count();
  if (!real_lock) real_lock = (int (*)(pthread_mutex_t*))dlsym(RTLD_NEXT, "pthread_mutex_lock");
  return real_lock(m);
}
__attribute__((destructor)) static void report(void) {
  const char* out = getenv("SHIM_OUT");
  if (!out) return;
  char line[96];
  int n = snprintf(line, sizeof line, "%d main %ld others %ld\n", getpid(), (long)mine,
                   (long)others);
  FILE* f = fopen(out, "a");
  if (f) { fwrite(line, 1, n, f); fclose(f); }
}
C
cat > busy.c << 'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void work(const char* name) {
  for (int i = 0; i < 100000; i++) {
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char* p = malloc(64 + i % 512);
    if (p) p[0] = 'x';
    if (fd >= 0) { write(fd, p ? p : "x", 1); close(fd); }
    free(p);
    if (i % 1000 == 0) usleep(2000);  /* let the writer tick meanwhile */
  }
  FILE* f = fopen(name, "w");
  if (f) { fprintf(f, "done\n"); fclose(f); }
}
int main(void) {
  work("busy.a");
  pid_t p = fork();
  if (p == 0) { work("busy.b"); exit(0); }
  int st;
  waitpid(p, &st, 0);
  return WEXITSTATUS(st);
}
C
if cc -O1 -shared -fPIC shim.c -o libshim.so -ldl 2> /dev/null && cc -O1 busy.c -o busy 2> /dev/null; then
  rm -f shim.out
  # In a tmpfs: on ext4 each open(O_TRUNC) of the non-empty file and its close start a
  # writeback (auto_da_alloc), and the 200,000 of them took 94 to 104 s unrecorded on stop 37's
  # host, past the timeout under load; 3.2 s in /dev/shm.
  busydir=$work
  [[ $(stat -f -c %T /dev/shm 2> /dev/null) == tmpfs ]] && busydir=$(mktemp -d /dev/shm/iorr-busy.XXXXXX)
  (cd "$busydir" && timeout 120 "$iorr" record -q -o "$work/busy.iorr" -- \
    env SHIM_OUT="$work/shim.out" LD_PRELOAD="$work/libshim.so" "$work/busy")
  st=$?
  [[ $busydir != "$work" ]] && rm -rf "$busydir"
  lines=$(wc -l < shim.out 2> /dev/null || echo 0)
  if [[ $st == 0 && $lines == 2 ]] && ! grep -qv ' others 0$' shim.out &&
    ! grep -q ' main 0 ' shim.out; then
    ok "the writer calls no malloc, free or pthread_mutex_lock ($(tr '\n' ';' < shim.out))"
  else
    fail "the writer and glibc's single-thread shortcuts: status $st, $(tr '\n' ';' < shim.out 2> /dev/null)"
  fi
fi

# A process whose calls are all libc's own (stdio alone) switches to patched sites from inside
# a trapped call (stop 27; before, it kept dispatch for good, a trap per call). The program
# reads a file of 6,000 characters with getc through no buffer, each character one read (the
# switch comes inside one of them: libc's read site, whose window covers instructions after
# the syscall, so the thread goes on in the stub), then appends 6,000 characters with fputc
# and fflush, each one write. Every write and read is in the trace, the program's output is right, and
# the modes that switch (no IORR_PATCH) the trace says the switch came from a trapped call.
cat > stdioonly.c << 'C'
#include <stdio.h>
#include <string.h>
int main(void) {
  char text[6000];
  for (int i = 0; i < 6000; i++) text[i] = 'a' + i % 26;
  FILE* f = fopen("stdioonly.txt", "w");
  fwrite(text, 1, sizeof text, f);
  fclose(f);
  f = fopen("stdioonly.txt", "r");
  setvbuf(f, NULL, _IONBF, 0);
  long sum = 0, n = 0;
  int c;
  while ((c = getc(f)) != EOF) { sum += c; n++; }
  fclose(f);
  f = fopen("stdioonly.txt", "a");
  for (int i = 0; i < 6000; i++) { fputc(text[i], f); fflush(f); }
  fclose(f);
  printf("%ld characters, sum %ld\n", n, sum);
  return 0;
}
C
if cc -O1 stdioonly.c -o stdioonly 2> /dev/null; then
  want=$(./stdioonly)
  got=$(timeout 60 "$iorr" record -q -o stdioonly.iorr -- ./stdioonly 2>&1)
  st=$?
  "$iorr" dump stdioonly.iorr > stdioonly.txt.dump 2>&1
  # The file's writes and reads: those on the fd its opening returned, from there on.
  calls_on() {  # OPEN_PATTERN CALL: how many CALLs on the fd that OPEN_PATTERN's openat returned
    awk -v open="$1" -v call=" $2(" '
      index($0, open) && fd == "" { split($0, eq, " = "); split(eq[2], v, " "); fd = v[1]; next }
      fd != "" && index($0, call fd ", ") {n++}
      END {print n + 0}' stdioonly.txt.dump
  }
  w=$(calls_on 'openat(AT_FDCWD, "stdioonly.txt", O_WRONLY|O_CREAT|O_APPEND' write)
  r=$(calls_on 'openat(AT_FDCWD, "stdioonly.txt", O_RDONLY' read)
  switched=yes
  if [[ -z ${IORR_PATCH:-} ]] && ! grep -q "from a trapped call" stdioonly.txt.dump; then
    switched=no  # the suites without IORR_PATCH switch after 64 calls (tests/recorder)
  fi
  if [[ $st == 0 && $got == "$want" && $w == 6000 && $r == 6001 && $switched == yes ]]; then
    ok "stdio alone: '$got', $w writes and $r reads recorded, switched from a trapped call"
  else
    fail "stdio alone: status $st, '$got' against '$want', $w writes and $r reads (6000, 6001), switched from a trapped call: $switched"
  fi
fi

# The same program after a handler of its own that SA_RESETHAND took down again: such a
# handler's frame may be live when the switch comes, over a context inside a window about to
# be rewritten (found by review at stop 27, in the switch outside the handler too). Until stop
# 36 a process that had ever installed a handler kept dispatch; every handler now runs behind
# the library's entry, which counts its live frames, and the switch waits only while one is
# live: this one has returned, so the process switches (and says so).
sed 's/^int main(void) {$/static void on_usr1(int s) { (void)s; }\nint main(void) {\n  struct sigaction sa = {0};\n  sa.sa_handler = on_usr1;\n  sa.sa_flags = SA_RESETHAND;\n  sigaction(SIGUSR1, \&sa, 0);\n  raise(SIGUSR1);/; 1i #include <signal.h>' stdioonly.c > stdioreset.c
if [[ -z ${IORR_PATCH:-} ]] && cc -O1 stdioreset.c -o stdioreset 2> /dev/null; then
  want=$(./stdioreset)
  got=$(timeout 60 "$iorr" record -q -o stdioreset.iorr -- ./stdioreset 2>&1)
  st=$?
  if [[ $st == 0 && $got == "$want" ]] &&
    dump_has stdioreset.iorr "capture: patched system call sites after"; then
    ok "stdio alone after an SA_RESETHAND handler: '$got', switched to patched sites"
  else
    fail "stdio alone after an SA_RESETHAND handler: status $st, '$got' against '$want', $(grep -o 'capture: [^(]*(.*' stdioreset.iorr.txt | tail -n 1)"
  fi
fi

# The switch beside a busy handler (the case the rule above guards): a 2 kHz timer whose
# handler makes libc's calls (open, write, close: in windows) interrupts a loop of stdio
# (fputc and fflush, getc) in which the switch comes; a handler frame live at a call that would
# switch puts it off, and signals wait while code is rewritten. The program must run as
# unrecorded, switch, and have every handler's open in the trace.
cat > busyswitch.c << 'C'
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
static volatile int handled;
static void tick(int s) {
  (void)s;
  /* async-signal-safe calls (stdio here, over main's stdio, aborted once in malloc) */
  int fd = open("busyswitch.h", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) {
    (void)write(fd, "h", 1);
    close(fd);
  }
  handled++;
}
int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = tick;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, 0);
  struct itimerval it = {{0, 500}, {0, 500}};
  setitimer(ITIMER_REAL, &it, 0);
  long sum = 0;
  for (int round = 0; round < 40; round++) {
    FILE* f = fopen("busyswitch.txt", "w");
    for (int i = 0; i < 2000; i++) { fputc('a' + i % 26, f); if (i % 7 == 0) fflush(f); }
    fclose(f);
    f = fopen("busyswitch.txt", "r");
    int c;
    while ((c = getc(f)) != EOF) sum += c;
    fclose(f);
  }
  memset(&it, 0, sizeof it);
  setitimer(ITIMER_REAL, &it, 0);
  printf("sum %ld, handled>0 %d\n", sum, handled > 0);
  fprintf(stderr, "%d\n", handled);
  return 0;
}
C
if [[ -z ${IORR_PATCH:-} ]] && cc -O1 busyswitch.c -o busyswitch 2> /dev/null; then
  want=$(./busyswitch 2> /dev/null)
  for run in 1 2 3; do
    got=$(timeout 60 "$iorr" record -q -o busyswitch.iorr -- ./busyswitch 2> busyswitch.err)
    st=$?
    n=$(head -n 1 busyswitch.err)
    opens=$("$iorr" dump busyswitch.iorr 2> busyswitch.dumperr | grep -c 'openat(AT_FDCWD, "busyswitch.h"' || :)
    # (a handler that comes while the library writes an event has its calls counted as lost)
    lost=$(grep -o '[0-9,]* events could not be stored' busyswitch.dumperr | head -n 1 | cut -d' ' -f1 | tr -d ,)
    what="the switch to patched sites beside a 2 kHz handler making calls (run $run)"
    if [[ $st != 0 || $got != "$want" ]]; then
      fail "$what: status $st, '$got' against '$want'"
    elif ! dump_has busyswitch.iorr "capture: patched system call sites after"; then
      fail "$what: no switch: $(grep -o 'capture: [^(]*(.*' busyswitch.iorr.txt | tail -n 1)"
    elif [[ $((opens + ${lost:-0})) -lt $n || $((2 * opens)) -lt $n ]]; then
      fail "$what: $opens of the handler's $n opens in the trace, ${lost:-0} calls counted as lost"
    else
      ok "$what: as unrecorded, switched, $opens of $n handler opens recorded"
    fi
  done
fi

# Handlers whose frames the switch could not see (a review of stop 36): the program's own
# SIGSYS handler (run by the library's SIGSYS handler), a handler for signal 32 set by a raw
# rt_sigaction (taken for glibc's own until stop 37: crashed 3 of 3), a handler set past the
# 256 entries that takes itself down, and one a linked library's constructor set before the
# library started. Each interrupts libc's read right after its syscall (inside the window the switch
# rewrites) and makes enough calls there to bring the switch about before it returns: the
# switch under it crashed the program (SIGILL, SIGTRAP or SIGSEGV) in the first two on the
# first version of the counting rule, in the third before it. glibc 2.36's read only (the
# program says so and the case is skipped elsewhere).
if [[ -z ${IORR_PATCH:-} ]] &&
  cc -O1 -shared -fPIC "$src/patch/unentered_pre.c" -o libunentered_pre.so 2> /dev/null &&
  cc -O1 "$src/patch/unentered_switch.c" -o unentered_switch -Wl,--no-as-needed -L. \
    -lunentered_pre -Wl,-rpath,"$PWD" -ldl -lrt 2> /dev/null; then
  for m in sigsys sig32 past256 prestart entered; do
    pre=
    [[ $m == prestart ]] && pre=PRE_HANDLER=1
    want=$(env $pre ./unentered_switch $m 5000 4000 2> /dev/null)
    st=$?
    if [[ $st == 3 ]]; then
      echo "skip: handlers the switch could not see: not glibc 2.36's read"
      break
    fi
    sts=
    for run in 1 2 3; do
      got=$(env $pre IORR_PATCH_AFTER=5000 timeout 60 "$iorr" record -q -o unent.iorr -- \
        ./unentered_switch $m 5000 4000 2> /dev/null)
      st=$?
      [[ $st == 0 && $got == "$want" ]] || sts="$sts $st"
    done
    if [[ -n $sts ]]; then
      fail "handlers the switch could not see: $m: statuses$sts ('$want' unrecorded)"
    else
      ok "handlers the switch could not see: $m: 3 runs as unrecorded ('$want')"
    fi
  done
fi

# A task on the program's memory that glibc does not count as a thread (clone with CLONE_VM,
# through glibc's clone() or the raw system call), blocked in libc's read when the main
# thread's calls bring the switch to patched sites about: it returned into the rewritten
# window and died, and the program waited for it for good (3 of 3 runs of each mode timed out
# before stop 37). Now such a process keeps dispatch, and says so.
if [[ -z ${IORR_PATCH:-} ]] && cc -O1 "$src/patch/uncounted_vm_task.c" -o uncounted_vm_task 2> /dev/null; then
  for m in wrap raw; do
    want=$(./uncounted_vm_task $m 2> /dev/null)
    sts=
    for run in 1 2 3; do
      got=$(IORR_PATCH_AFTER=4096 timeout 60 "$iorr" record -q -o vmtask.iorr -- \
        ./uncounted_vm_task $m 2> /dev/null)
      st=$?
      [[ $st == 0 && $got == "$want" ]] || sts="$sts $st"
    done
    "$iorr" stats vmtask.iorr > vmtask.txt 2>&1
    if [[ -n $sts ]]; then
      fail "a task glibc does not count, at the switch: $m: statuses$sts ('$want' unrecorded)"
    elif ! grep -q "not patched: a task on the program's memory" vmtask.txt; then
      fail "a task glibc does not count, at the switch: $m: no note that dispatch was kept"
    else
      ok "a task glibc does not count, at the switch: $m: 3 runs as unrecorded, dispatch kept"
    fi
  done
fi

# A program that starts a thread early (before the switch's count of calls): code is rewritten
# only in a process of one thread, so the switch comes before the first thread starts (until
# stop 36 it never came, and every call libc made itself trapped from then on: 4 Python
# threads of 1-byte writes ran 1.7x plain, 1.15x patched).
cat > earlythread.c << 'C'
#include <pthread.h>
#include <stdio.h>
static void* run(void* a) {
  long sum = 0;
  for (int r = 0; r < 200; r++) {
    FILE* f = fopen("earlythread.txt", r == 0 ? "w" : "r+");
    for (int i = 0; i < 50; i++) { fputc('x', f); fflush(f); }
    rewind(f);
    int c;
    while ((c = getc(f)) != EOF) sum += c;
    fclose(f);
  }
  *(long*)a = sum;
  return 0;
}
int main(void) {
  long sum = 0;
  for (int i = 0; i < 600; i++) fclose(fopen("earlythread.txt", "a"));  /* (a short process
     that starts a thread at once does not switch: the switch waits for 512 calls) */
  pthread_t t;
  pthread_create(&t, 0, run, &sum);
  pthread_join(t, 0);
  printf("sum %ld\n", sum);
  return 0;
}
C
if [[ -z ${IORR_PATCH:-} ]] && cc -O1 -pthread earlythread.c -o earlythread 2> /dev/null; then
  want=$(./earlythread)
  # (the suites switch after 64 calls: here the count is the default's, so that the thread
  # comes first)
  got=$(IORR_PATCH_AFTER=4096 timeout 60 "$iorr" record -q -o earlythread.iorr -- ./earlythread 2>&1)
  st=$?
  writes=$("$iorr" dump earlythread.iorr 2> /dev/null | grep -c ' write(' || :)
  if [[ $st == 0 && $got == "$want" && $writes -ge 10000 ]] &&
    dump_has earlythread.iorr "capture: patched system call sites before the program's first thread"; then
    ok "a thread started early: '$got', switched before it, $writes writes recorded"
  else
    fail "a thread started early: status $st, '$got' against '$want', $writes writes, $(grep -o 'capture: [^(]*(.*' earlythread.iorr.txt | tail -n 1)"
  fi
fi

# posix_spawn with more file actions than the child's ring holds (found by review at stop 17):
# the child, which has no writer thread, waited for ever for one to drain its ring.
cat > spawnmany.c << 'C'
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
extern char** environ;
int main(void) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int i = 0; i < 50000; i++) posix_spawn_file_actions_addclose(&fa, 200);
  char* argv[] = {"true", 0};
  pid_t p;
  int r = posix_spawn(&p, "/bin/true", &fa, 0, argv, environ), st = -1;
  if (r == 0) waitpid(p, &st, 0);
  printf("spawn %d, status %d\n", r, st);
  return 0;
}
C
if cc -O1 spawnmany.c -o spawnmany 2> /dev/null; then
  out=$(timeout -s KILL 60 "$iorr" record -q -o spawnmany.iorr -- ./spawnmany)
  st=$?
  n=$("$iorr" dump spawnmany.iorr 2> /dev/null | grep -c 'close(200)')
  if [[ $st == 0 && $out == "spawn 0, status 0" && $n == 50000 ]]; then
    ok "posix_spawn with 50,000 file actions: ends, all recorded"
  else
    fail "posix_spawn with 50,000 file actions: status $st (137: hung), '$out', $n closes recorded"
  fi
fi

# posix_spawn's child runs on the parent's memory, as glibc's does (stop 25; before, a copy:
# the parent's page tables were copied at each spawn and each page it wrote after faulted). A
# parent with 128 MiB written spawns 5 children and writes its memory again after each: its
# page faults stay below 1,000 a spawn (a copy took one per page, 32,768). The child's work
# before its exec is recorded (its file actions), an exec that fails returns its errno with
# the child reaped by posix_spawn itself (not by a SIGCHLD handler of the program's, which
# would run if the thread's signals were unblocked first), and posix_spawnp searches PATH;
# output and status as unrecorded.
cat > spawnvm.c << 'C'
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
extern char** environ;
static volatile int stolen = 0;  /* children a SIGCHLD handler reaped */
static void on_chld(int sig) {
  (void)sig;
  int e = errno;
  while (waitpid(-1, 0, WNOHANG) > 0) stolen++;
  errno = e;
}
static long faults(void) { struct rusage u; getrusage(RUSAGE_SELF, &u); return u.ru_minflt; }
int main(void) {
  size_t n = 128u << 20;
  char* heap = malloc(n);
  memset(heap, 1, n);
  long worst = 0;
  for (int i = 0; i < 5; ++i) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "spawnvm.out", O_WRONLY | O_CREAT | O_APPEND, 0644);
    char* argv[] = {"echo", "child", 0};
    pid_t p;
    int st = -1, r = posix_spawn(&p, "/bin/echo", &fa, 0, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (r == 0) waitpid(p, &st, 0);
    long before = faults();
    for (size_t j = 0; j < n; j += 4096) heap[j]++;
    long f = faults() - before;
    if (f > worst) worst = f;
    if (r != 0 || st != 0) { printf("spawn %d: %d, status %d\n", i, r, st); return 1; }
  }
  pid_t p;
  char* bad[] = {"nope", 0};
  signal(SIGCHLD, on_chld);
  int r = posix_spawn(&p, "/nonexistent/nope", 0, 0, bad, environ);
  int reaped = waitpid(-1, 0, WNOHANG) == -1 && errno == ECHILD && stolen == 0;
  signal(SIGCHLD, SIG_DFL);
  char* av[] = {"true", 0};
  int st = -1, rp = posix_spawnp(&p, "true", 0, 0, av, environ);
  if (rp == 0) waitpid(p, &st, 0);
  printf("faults %s 1000 a spawn; missing: %s, %s; spawnp %d status %d; heap %d\n",
         worst < 1000 ? "below" : "above", strerror(r), reaped ? "reaped by posix_spawn" :
         "not reaped by posix_spawn", rp, st, heap[4096]);
  return 0;
}
C
if cc -O1 spawnvm.c -o spawnvm 2> /dev/null; then
  rm -f spawnvm.out
  want=$(./spawnvm)
  rm -f spawnvm.out
  out=$(timeout -s KILL 60 "$iorr" record -q -o spawnvm.iorr -- ./spawnvm)
  st=$?
  "$iorr" dump spawnvm.iorr > spawnvm.txt 2>&1
  clones=$(grep -c 'clone(CLONE_VM|CLONE_VFORK|SIGCHLD)' spawnvm.txt)
  opens=$(grep -c 'openat(AT_FDCWD, "spawnvm.out"' spawnvm.txt)
  if [[ $st == 0 && $out == "$want" && $out == "faults below 1000 a spawn; missing: No such"* &&
        $clones == 7 && $opens == 5 && $(grep -c child spawnvm.out) == 5 ]]; then
    ok "posix_spawn on the parent's memory: '$out' as unrecorded, the children's opens recorded"
  else
    fail "posix_spawn on the parent's memory: status $st, '$out' (unrecorded '$want'), $clones clones, $opens opens recorded"
  fi
fi

# posix_spawn from four threads at once, 200 spawns each with a file action, on the parent's
# memory: each thread's child runs on that thread's storage while the other threads record on.
cat > spawnmt.c << 'C'
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
extern char** environ;
static void* work(void* a) {
  long k = (long)a, bad = 0;
  for (int i = 0; i < 200; ++i) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    char* av[] = {"true", 0};
    pid_t p;
    int st = -1;
    if (posix_spawn(&p, "/bin/true", &fa, 0, av, environ) != 0 || waitpid(p, &st, 0) != p ||
        st != 0)
      bad++;
    posix_spawn_file_actions_destroy(&fa);
    if (i % 50 == 0) {
      char n[64];
      snprintf(n, sizeof n, "spawnmt%ld.tmp", k);
      close(open(n, O_CREAT | O_WRONLY, 0644));
      unlink(n);
    }
  }
  return (void*)bad;
}
int main(void) {
  pthread_t t[4];
  for (long k = 0; k < 4; ++k) pthread_create(&t[k], 0, work, (void*)k);
  long bad = 0;
  for (int k = 0; k < 4; ++k) {
    void* r;
    pthread_join(t[k], &r);
    bad += (long)r;
  }
  printf("failed spawns %ld\n", bad);
  return bad != 0;
}
C
if cc -O1 -pthread spawnmt.c -o spawnmt 2> /dev/null; then
  out=$(timeout -s KILL 120 "$iorr" record -q -o spawnmt.iorr -- ./spawnmt)
  st=$?
  "$iorr" dump spawnmt.iorr > spawnmt.txt 2>&1
  clones=$(grep -c 'clone(CLONE_VM|CLONE_VFORK|SIGCHLD)' spawnmt.txt)
  execs=$(grep -c 'execve("/bin/true"' spawnmt.txt)
  opens=$(grep -c 'openat(AT_FDCWD, "/dev/null", O_WRONLY' spawnmt.txt)
  if [[ $st == 0 && $out == "failed spawns 0" && $clones == 800 && $execs == 800 &&
        $opens == 800 ]]; then
    ok "posix_spawn from 4 threads at once: 800 spawns, each child's open and exec recorded"
  else
    fail "posix_spawn from 4 threads at once: status $st (137: hung), '$out', $clones clones, $execs execs, $opens opens"
  fi
fi

# A PID namespace's first process (tid 1) spawning and vforking: the parent holds the library's
# fd-move lock for its child with a value of its own (iorr_vfork_prepare), which must not be
# Lock()'s 1, or its give-back could free another thread's hold. 50 posix_spawns and 50 vforks
# of pid 1, each recorded as a process of its own, in every mode.
cat > nsspawn.c << 'C'
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
extern char** environ;
int main(void) {
  int spawned = 0, forked = 0;
  for (int i = 0; i < 50; i++) {
    pid_t p;
    char* argv[] = {"/bin/true", 0};
    if (posix_spawn(&p, "/bin/true", 0, 0, argv, environ) == 0 && waitpid(p, 0, 0) == p) spawned++;
    pid_t v = vfork();
    if (v == 0) _exit(0);
    if (v > 0 && waitpid(v, 0, 0) == v) forked++;
  }
  printf("pid %d: %d spawns, %d vforks\n", getpid(), spawned, forked);
  return 0;
}
C
if ! unshare -fp true 2> /dev/null; then
  echo "skip: spawns of a PID namespace's first process (unshare -fp fails: needs root)"
elif cc -O1 nsspawn.c -o nsspawn 2> /dev/null; then
  for how in default IORR_PATCH=1 IORR_PATCH=0; do
    out=$(env "${how/default/IORR_X=}" timeout -s KILL 60 "$iorr" record -q -o ns.iorr -- unshare -fp ./nsspawn 2>&1)
    st=$?
    procs=$(processes ns.iorr)
    # unshare, its forked child that execs nsspawn, 50 spawned and 50 vforked children
    if [[ $st == 0 && $out == "pid 1: 50 spawns, 50 vforks" && $procs == 102 ]]; then
      ok "spawns of a PID namespace's first process ($how): $out, $procs processes"
    else
      fail "spawns of a PID namespace's first process ($how): status $st (137: hung), '$out', ${procs:-no} processes"
    fi
  done
fi

# A fork-like clone3 through syscall() (own memory, no new stack; with and without CLONE_FILES):
# the child is a process of its own, and the parent's events before it are in the trace once.
# Without dispatch the syscall() wrapper saw only clone: the child went on as its parent (one
# process, the calls before the clone twice). With 5000 calls first the process has switched
# to patched sites.
cat > clone3.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int n = argc > 2 ? 5000 : 20;
  for (int i = 0; i < n; i++) close(open("c3.before", O_RDONLY | O_CREAT, 0644));
  struct clone_args ca;
  memset(&ca, 0, sizeof ca);
  ca.flags = strcmp(argv[1], "files") == 0 ? CLONE_FILES : 0;
  ca.exit_signal = SIGCHLD;
  long c = syscall(SYS_clone3, &ca, sizeof ca);
  if (c == 0) {
    for (int i = 0; i < 30; i++) close(open("c3.child", O_WRONLY | O_CREAT, 0644));
    _exit(0);
  }
  if (c < 0) return 1;
  int st;
  waitpid(c, &st, 0);
  for (int i = 0; i < 10; i++) close(open("c3.parent", O_WRONLY | O_CREAT, 0644));
  printf("child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "failed");
  return 0;
}
C
if cc -O1 clone3.c -o clone3 2> /dev/null && ./clone3 own > /dev/null 2>&1; then
  for how in default IORR_DISPATCH=0; do
    for run in "own" "files" "own many" "files many"; do
      out=$(env "${how/default/IORR_X=}" timeout -s KILL 60 "$iorr" record -q -o c3.iorr -- ./clone3 $run 2>&1)
      st=$?
      "$iorr" dump c3.iorr > c3.txt 2>&1
      procs=$(processes c3.iorr)
      want=20
      [[ $run == *many ]] && want=5000
      got="$(grep -c '"c3.before"' c3.txt) $(grep -c '"c3.child"' c3.txt) $(grep -c '"c3.parent"' c3.txt)"
      if [[ $st == 0 && $out == "child ok" && $procs == 2 && $got == "$want 30 10" ]]; then
        ok "clone3 through syscall() ($how, $run): 2 processes, opens before/child/parent $got"
      else
        fail "clone3 through syscall() ($how, $run): status $st, '$out', ${procs:-no} processes, opens before/child/parent $got (want $want 30 10)"
      fi
    done
  done
else
  echo "skip: clone3 through syscall() (no clone3 here)"
fi

# Small thread stacks. glibc starts a thread with 2 KiB of stack left after its static TLS; the
# recording needs more (a trap's 3.6 KiB signal frame, a lazy binding's 2.7 KiB of vector state,
# the audit module's TLS room), so the pthread_create wrapper gives a stack the program sized
# small more room, and a small stack of the program's own memory runs without dispatch. Before:
# a PTHREAD_STACK_MIN thread beside 8.5 KiB of the program's TLS died of SIGSEGV recorded (in
# ArmedStart's lazy binding of free(), in a trap's signal frame). Each way: the thread doing
# nothing, a file call, a raw syscall(); output and status as unrecorded, in every mode.
cat > tinystack.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
__thread char own[8448];  // the program's TLS: PTHREAD_STACK_MIN less it leaves about 6 KiB
static int mode;
static void* run(void* a) {
  own[0] = 1;
  if (mode == 1) close(open("tinystack.c", O_RDONLY));
  if (mode == 2) syscall(SYS_getppid);
  return a;
}
int main(int argc, char** argv) {
  mode = atoi(argv[1]);
  int mine = argc > 2;  // on a stack of the program's own memory
  pthread_attr_t at;
  pthread_attr_init(&at);
  static char stack[24576] __attribute__((aligned(4096)));  // PTHREAD_STACK_MIN + 8 KiB
  int r = mine ? pthread_attr_setstack(&at, stack, sizeof(stack))
               : pthread_attr_setstacksize(&at, PTHREAD_STACK_MIN);
  pthread_t t;
  int c = pthread_create(&t, &at, run, NULL);
  if (c == 0) pthread_join(t, NULL);
  printf("attr %d, pthread_create %d (%s)\n", r, c, c ? strerror(c) : "started");
  return 0;
}
C
if cc -O1 -pthread tinystack.c -o tinystack 2> /dev/null; then
  for args in 0 1 2 "1 mine" "2 mine"; do
    # shellcheck disable=SC2086
    as_unrecorded "tiny thread stack ($args)" tiny.iorr \
      "default IORR_DISPATCH=0 IORR_PATCH=1 IORR_AUDIT=1" ./tinystack $args
  done
  if dump_has tiny.iorr "stack of the program's own memory"; then
    ok "tiny thread stack of the program's own memory: noted"
  else
    fail "tiny thread stack of the program's own memory: no note"
  fi
fi

# Threads made with the process's defaults: a small default stack set by the program
# (pthread_setattr_default_np), used by thrd_create (which glibc calls inside itself, past the
# wrapper) and pthread_create(NULL). The defaults' room comes through the default itself; the
# thread keeps the default's CPU set and guard (a first version gave pthread_create(NULL) a fresh
# attribute: every CPU, a one-page guard). thrd_create with 3 to 4 KiB of TLS died of SIGSEGV
# recorded, with the audit module's room.
cat > defstack.c << 'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <threads.h>
#include <unistd.h>
__thread char own[4096];
static int body(void* a) { own[0] = 1; close(syscall(SYS_openat, AT_FDCWD, "defstack.c", O_RDONLY)); (void)a; return 0; }
static void* pbody(void* a) {
  cpu_set_t c;
  pthread_getaffinity_np(pthread_self(), sizeof c, &c);
  pthread_attr_t at;
  size_t g = 0;
  pthread_getattr_np(pthread_self(), &at);
  pthread_attr_getguardsize(&at, &g);
  printf("pthread_create(NULL): cpus %d, guard %zu\n", CPU_COUNT(&c), g);
  return a;
}
int main(void) {
  pthread_attr_t d;
  pthread_attr_init(&d);
  pthread_attr_setstacksize(&d, 16384);
  pthread_attr_setguardsize(&d, 65536);
  cpu_set_t c;
  CPU_ZERO(&c);
  CPU_SET(0, &c);
  pthread_attr_setaffinity_np(&d, sizeof c, &c);
  printf("setattr_default %d\n", pthread_setattr_default_np(&d));
  thrd_t t;
  int r = thrd_create(&t, body, 0);
  if (r == thrd_success) thrd_join(t, 0);
  printf("thrd_create %d\n", r);
  pthread_t p;
  if (pthread_create(&p, NULL, pbody, 0) == 0) pthread_join(p, 0);
  return 0;
}
C
if cc -O1 -pthread defstack.c -o defstack 2> /dev/null; then
  as_unrecorded "default thread attributes" defstack.iorr "default IORR_DISPATCH=0 IORR_AUDIT=0" \
    ./defstack
fi

# A program run on Valgrind: Valgrind hands prctl to the kernel, so dispatch armed by the library
# (or the audit module) in its guest trapped Valgrind's own calls and it died of SIGSYS (status
# 159, stop 17). Now the guest is recorded through the wrappers only, with a note, and the exec of
# Valgrind's tool goes without the audit module (with it Valgrind reported libc's freeing of the
# audit namespace's memory as invalid: status 3 with --error-exitcode=3). Output and status as
# unrecorded, with and without the module.
if command -v valgrind > /dev/null; then
  want=$(valgrind -q --error-exitcode=3 ls / 2>&1; echo "status $?")
  for how in default IORR_AUDIT=0; do
    got=$(env ${how/default/IORR_X=} timeout 120 "$iorr" record -q -o vg.iorr -- \
      valgrind -q --error-exitcode=3 ls / 2>&1; echo "status $?")
    # The dump goes to a file (a pipe into grep -q could end it early by SIGPIPE), and on a
    # failure its status, error and what the trace holds are printed (CI once failed here with
    # output and status as unrecorded, and nothing else to go on).
    "$iorr" dump vg.iorr > vg.dump 2> vg.dump-err
    dumped=$?
    if [[ $got == "$want" && $dumped -eq 0 ]] && grep -q "runs on Valgrind" vg.dump; then
      ok "valgrind ($how): the guest recorded through the wrappers, output and status as unrecorded"
    else
      fail "valgrind ($how): '$(head -c 300 <<< "$got")' against '$(head -c 300 <<< "$want")';
        dump status $dumped ($(head -c 300 vg.dump-err)), $(grep -c . vg.dump) lines, notes:
        $(grep '^# note' vg.dump | cut -c1-100 | tr '\n' '|')
        stats: $("$iorr" stats vg.iorr 2>&1 | head -c 600 | tr '\n' '|')"
    fi
  done
  # A limit Valgrind cannot raise (soft equal to hard): it keeps the top 12 fds for itself and
  # refuses the guest's calls on them. The recorder's fds sat 8 below the limit there, and the
  # guest lost every event (no note, no getdents) until stop 22.
  got=$( (ulimit -n 4096 && timeout 120 "$iorr" record -q -o vglim.iorr -- \
    valgrind -q --error-exitcode=3 ls / 2>&1; echo "status $?") 2>&1)
  if [[ $got == "$want" ]] && dump_has vglim.iorr "runs on Valgrind" &&
    grep -q "getdents64(" vglim.iorr.txt; then
    ok "valgrind with ulimit -n 4096 (soft and hard): the guest recorded"
  else
    fail "valgrind with ulimit -n 4096: '$(head -c 200 <<< "$got")', $(grep -c "getdents64(" \
      vglim.iorr.txt) getdents"
  fi
else
  echo "skip: no valgrind"
fi

# The audit module (recorder/audit.h) without the recorder: it arms, keeps calls until its log
# is full, then ends it; the program runs as without it, past the full log too.
audit=$(dirname "$iorr")/../lib/libiorr-audit.so
if [[ -f $audit ]]; then
  find /usr/share -maxdepth 3 > audit-plain.out 2>&1
  LD_AUDIT=$audit find /usr/share -maxdepth 3 > audit-alone.out 2>&1
  st=$?
  if [[ $st == 0 ]] && cmp -s audit-plain.out audit-alone.out; then
    ok "audit module without the recorder: $(wc -l < audit-alone.out) lines as without it"
  else
    fail "audit module without the recorder: status $st, output $(cmp audit-plain.out audit-alone.out 2>&1)"
  fi

  # A library constructor that opens a file and forks before the recording library starts: the
  # open is recorded (as the loader's calls are), the fork ends the audit log (a note says so),
  # and the program runs unchanged.
  cat > ctorlib.c << 'C'
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((constructor)) static void early(void) {
  close(open("ctor-before-fork", O_WRONLY | O_CREAT | O_TRUNC, 0644));
  pid_t c = fork();
  if (c == 0) {
    close(open("ctor-child", O_WRONLY | O_CREAT | O_TRUNC, 0644));
    _exit(0);
  }
  waitpid(c, 0, 0);
}
C
  cat > ctormain.c << 'C'
#include <stdio.h>
int main(void) { puts("main"); return 3; }
C
  if cc -shared -fPIC ctorlib.c -o libctorlib.so 2> /dev/null &&
     cc ctormain.c -o ctormain -Wl,--no-as-needed -L. -lctorlib -Wl,-rpath,"$PWD" 2> /dev/null; then
    rm -f ctor-before-fork ctor-child
    out=$(IORR_AUDIT=1 "$iorr" record -q -o ctor.iorr -- ./ctormain)
    st=$?
    "$iorr" dump ctor.iorr > ctor.dump 2> /dev/null
    if [[ $st == 3 && $out == main && -e ctor-child ]] &&
       grep -q 'openat.*ctor-before-fork' ctor.dump &&
       grep -q 'caught by the audit module; it stopped at system call' ctor.dump; then
      ok "constructor that forks before the library: its open recorded, the audit log ended there"
    else
      fail "constructor that forks before the library: status $st, output '$out', $(grep -c 'ctor-before-fork' ctor.dump) opens, $(grep 'audit module' ctor.dump | head -n 1)"
    fi
  fi
  # Before the library starts, under the audit module: a signal handled while a trapped call
  # sleeps, a mask change, and a call the kernel refuses before reading a bad pointer (review
  # of stop 15: killed by SIGSYS, mask lost, SIGSEGV).
  cat > early.c << 'C'
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
static volatile int got;
static long readv_ret;
static void on_alarm(int s) { (void)s; got = 1; }
static void early(int argc, char** argv, char** envp) {
  (void)argc, (void)argv, (void)envp;
  signal(SIGALRM, on_alarm);
  struct itimerval it = {{0, 0}, {0, 50000}};
  setitimer(ITIMER_REAL, &it, 0);
  struct timespec ts = {0, 300000000};
  nanosleep(&ts, 0);
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGUSR1);
  sigprocmask(SIG_BLOCK, &s, 0);
  readv_ret = syscall(SYS_readv, -1, (void*)8, 1);
}
__attribute__((section(".preinit_array"), used)) static void (*p)(int, char**, char**) = early;
int main(void) {
  sigset_t now;
  sigprocmask(SIG_BLOCK, 0, &now);
  printf("alarm %d, SIGUSR1 blocked %d, readv %ld\n", got, sigismember(&now, SIGUSR1), readv_ret);
  return 0;
}
C
  if cc -O1 early.c -o early 2> /dev/null; then
    want=$(./early)
    got=$(IORR_AUDIT=1 timeout 30 "$iorr" record -q -o early.iorr -- ./early)
    st=$?
    if [[ $st == 0 && $got == "$want" ]]; then
      ok "audit module: a signal during a trapped call, a mask change, a bad pointer: '$got'"
    else
      fail "audit module: status $st, '$got' against '$want'"
    fi
  fi
  # A library with 4 KiB of initial-exec TLS: with an audit module glibc sizes static TLS before
  # the program's libraries load; iorr record gives it room (GLIBC_TUNABLES, protocol.h).
  printf '__thread char big[4096] __attribute__((tls_model("initial-exec")));\nchar* get(void) { big[0] = 1; return big; }\n' > tlslib.c
  printf '#include <stdio.h>\nchar* get(void);\nint main(void) { printf("ok %%d\\n", get()[0]); return 0; }\n' > tlsmain.c
  if cc -shared -fPIC tlslib.c -o libtlslib.so 2> /dev/null &&
     cc tlsmain.c -o tlsmain -L. -ltlslib -Wl,-rpath,"$PWD" 2> /dev/null; then
    out=$(IORR_AUDIT=1 timeout 30 "$iorr" record -q -o tls.iorr -- ./tlsmain 2>&1)
    st=$?
    if [[ $st == 0 && $out == "ok 1" ]]; then
      ok "audit module: a library with 4 KiB of initial-exec TLS loads"
    else
      fail "audit module: a library with 4 KiB of initial-exec TLS: status $st, '$out'"
    fi
  fi
  # Libraries with more initial-exec TLS than that room (rustc's librustc_driver: 23 KiB; rustc
  # and cargo exited 127 recorded, "cannot allocate memory in static TLS block"): the audit
  # module runs the program again before any of its code with a room they fit in, the trace
  # notes it, and the program sees the environment it would have (no restart variable, the
  # recorder's tunable as with a small library). Two libraries (12 and 20 KiB), so that the
  # room asked for at the first library's overflow must cover the second in one more run at
  # most; the program's own calls are recorded.
  printf '__thread char big12[12288] __attribute__((tls_model("initial-exec")));\nchar* get12(void) { big12[0] = 1; return big12; }\n' > tls12.c
  printf '__thread char big20[20480] __attribute__((tls_model("initial-exec")));\nchar* get20(void) { big20[20479] = 2; return big20; }\n' > tls20.c
  cat > tlsbig.c << 'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
char* get12(void);
char* get20(void);
int main(void) {
  const char* t = getenv("GLIBC_TUNABLES");
  close(open("tlsbig.mark", O_RDONLY));
  printf("ok %d %d tunables=%s restarts=%s\n", get12()[0], get20()[20479], t ? t : "-",
         getenv("IORR_TLS_RESTARTS") ? "seen" : "none");
  return 0;
}
C
  : > tlsbig.mark
  if cc -shared -fPIC tls12.c -o libtls12.so 2> /dev/null &&
     cc -shared -fPIC tls20.c -o libtls20.so 2> /dev/null &&
     cc tlsbig.c -o tlsbig -L. -ltls12 -ltls20 -Wl,-rpath,"$PWD" 2> /dev/null; then
    printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void) { const char* t = getenv("GLIBC_TUNABLES"); printf("tunables=%%s\\n", t ? t : "-"); return 0; }\n' > tlsenv.c
    cc tlsenv.c -o tlsenv 2> /dev/null
    small=$(IORR_AUDIT=1 timeout 30 "$iorr" record -q -o tls.iorr -- ./tlsenv 2>&1)
    for how in default IORR_PATCH=1; do
      out=$(env "${how/default/IORR_X=}" IORR_AUDIT=1 timeout 30 "$iorr" record -q -o tlsbig.iorr -- ./tlsbig 2>&1)
      st=$?
      note=$("$iorr" stats tlsbig.iorr 2> /dev/null | grep -o 'run again by the audit module ([0-9]* times\?)')
      marks=$("$iorr" dump tlsbig.iorr 2> /dev/null | grep -c 'openat(AT_FDCWD, "tlsbig.mark"' || :)
      what="audit module: libraries with 32 KiB of initial-exec TLS ($how)"
      if [[ $st != 0 || $out != "ok 1 2 tunables=$(printf '%s' "$small" | sed -n 's/.*tunables=//p')"* ||
        $out != *"restarts=none" ]]; then
        fail "$what: status $st, '$out'"
      elif [[ -z $note || $marks != 1 ]]; then
        fail "$what: note '${note:-none}', $marks opens of tlsbig.mark in the trace"
      else
        ok "$what: '$out', $note"
      fi
    done
  fi
  # The room is carved from every thread's stack: a thread of PTHREAD_STACK_MIN must still
  # start (pthread_create returned EINVAL with 16 KiB of room).
  cat > smallstack.c << 'C'
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
static void* run(void* a) { return a; }
int main(void) {
  pthread_attr_t at;
  pthread_attr_init(&at);
  int r = pthread_attr_setstacksize(&at, PTHREAD_STACK_MIN);
  pthread_t t;
  int c = pthread_create(&t, &at, run, NULL);
  if (c == 0) pthread_join(t, NULL);
  printf("setstacksize %d, pthread_create %d\n", r, c);
  return 0;
}
C
  if cc -O1 -pthread smallstack.c -o smallstack 2> /dev/null; then
    want=$(./smallstack)
    got=$(IORR_AUDIT=1 timeout 30 "$iorr" record -q -o smallstack.iorr -- ./smallstack 2>&1)
    st=$?
    if [[ $st == 0 && $got == "$want" ]]; then
      ok "audit module: a thread of PTHREAD_STACK_MIN starts ('$got')"
    else
      fail "audit module: a thread of PTHREAD_STACK_MIN: status $st, '$got' against '$want'"
    fi
  fi
else
  echo "skip: no audit module at $audit"
fi

# A program that narrows its own world once running: its address space limited to what it has
# plus 8 MiB, or a seccomp filter that kills on any new mapping, or on pidfd_getfd (which the
# writer's move to a table of its own makes at the 4096th call: it killed the program with the
# move's first version, stop 38, which did not look for a filter). The recorder maps what it needs
# (the compressor's 3.5 MiB workspace) as the writer starts, not when a chunk first needs
# compressing, later in the program's life: the program's own allocation within its limit
# succeeds, the filter kills nobody, and no event is lost.
cat > narrow.c << 'C'
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
static long vmsize_kb(void) {
  char buf[4096];
  FILE* f = fopen("/proc/self/status", "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  buf[n] = 0;
  char* p = strstr(buf, "VmSize:");
  return p ? atol(p + 7) : -1;
}
int main(int argc, char** argv) {
  struct stat st;
  usleep(150000);
  if (strcmp(argv[1], "rlimit") == 0) {
    long kb = vmsize_kb();
    struct rlimit rl = {(kb + 8192) * 1024, (kb + 8192) * 1024};
    if (setrlimit(RLIMIT_AS, &rl) != 0) perror("setrlimit");
  } else {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, strcmp(argv[1], "pidfd") ? SYS_mmap : SYS_pidfd_getfd,
                 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    struct sock_fprog prog = {4, f};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
      perror("seccomp");
  }
  int ok = 0;
  for (int i = 0; i < 5000; i++) ok += stat(i & 1 ? "/tmp" : "/", &st) == 0;
  usleep(150000);
  void* p = strcmp(argv[1], "rlimit") == 0 ? malloc(6 << 20) : &ok;
  printf("%s: %d stats ok, %s\n", argv[1], ok, p ? "allocation ok" : "allocation FAILED");
  return p == NULL;
}
C
if cc -O1 narrow.c -o narrow 2> /dev/null; then
  for how in rlimit seccomp pidfd; do
    as_unrecorded "narrowed after start ($how)" narrow.iorr default ./narrow $how
    n=$(events narrow.iorr)
    if [[ ${n:-0} -ge 5000 ]] && "$iorr" stats --json narrow.iorr | grep -q '"integrity":null'; then
      ok "narrowed after start ($how): $n events, none lost"
    else
      fail "narrowed after start ($how): $n events (5,000 stat calls made)"
    fi
  done
  # The same filter added under one inherited with no_new_privs already set (a sandbox around
  # the recording): neither the seccomp mode nor no_new_privs changes, and patching (after 64
  # calls) killed the program (status 159) until the library watched for the install itself.
  cat > nnpfilter.c << 'C'
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char** argv) {
  struct sock_filter f[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog prog = {1, f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    perror("nnpfilter");
    return 125;
  }
  execvp(argv[1], argv + 1);
  return 127;
}
C
  if cc -O1 nnpfilter.c -o nnpfilter; then
    want=$(./narrow seccomp 2>&1)
    got=$(IORR_PATCH_AFTER=64 timeout 30 ./nnpfilter "$iorr" record -q -o narrow-nnp.iorr -- \
      ./narrow seccomp 2>&1)
    st=$?
    n=$(events narrow-nnp.iorr)
    if [[ $st == 0 && $got == "$want" && ${n:-0} -ge 3000 ]]; then
      ok "narrowed after start under an inherited filter with no_new_privs set: $got, $n events"
    else
      fail "narrowed after start under an inherited filter with no_new_privs set: status $st, '$got', $n events"
    fi
  else
    fail "narrowed after start: cannot build nnpfilter.c"
  fi
  # Three more of the review's cases around the seccomp rule (all with IORR_PATCH_AFTER=64):
  # "preinit": a filter killing mprotect(PROT_EXEC) installed by the program's .preinit_array,
  # before the library's constructor (only the audit module sees it: the default and
  # IORR_PATCH=1 suites; status 159 when patching went on). "probe": libseccomp's and systemd's
  # probe, prctl(PR_SET_SECCOMP, FILTER, NULL), which fails with EFAULT and installs nothing,
  # under an inherited filter: patching goes on. "vforkchild": a vfork child installs a filter
  # and execs; the parent, on the same memory until then, still patches.
  cat > seccases.c << 'C'
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static int install(int kill_exec_mprotect) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog prog = {6, f}, all = {1, allow};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  // Through libc's prctl (no wrapper of the library's: only dispatch, or before the library
  // the audit module, sees it; narrow.c takes the syscall() wrapper's way).
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, kill_exec_mprotect ? &prog : &all);
}
#ifdef PREINIT
static void early(void) {
  if (install(1) != 0) perror("seccomp");
}
__attribute__((section(".preinit_array"), used)) static void (*preinit)(void) = early;
#endif
int main(int argc, char** argv) {
  struct stat st;
  int ok = 0;
  if (argc > 1 && strcmp(argv[1], "probe") == 0) {
    int r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL);
    printf("probe: %d %s\n", r, r == -1 && errno == EFAULT ? "EFAULT" : "?");
  } else if (argc > 1 && strcmp(argv[1], "vforkchild") == 0) {
    pid_t c = vfork();
    if (c == 0) {
      if (install(0) != 0) _exit(3);
      execl("/bin/true", "true", (char*)0);
      _exit(4);
    }
    int status = 0;
    waitpid(c, &status, 0);
    printf("child: %d\n", WEXITSTATUS(status));
  }
  for (int i = 0; i < 3000; i++) ok += stat(i & 1 ? "/tmp" : "/", &st) == 0;
  printf("%d stats ok\n", ok);
  return 0;
}
C
  if cc -O1 -DPREINIT seccases.c -o seccases-preinit && cc -O1 seccases.c -o seccases; then
    for c in preinit probe vforkchild; do
      if [[ $c == preinit ]]; then cmd=(./seccases-preinit) launch=(); else cmd=(./seccases "$c") launch=(./nnpfilter); fi
      want=$("${launch[@]}" "${cmd[@]}" 2>&1)
      got=$(IORR_PATCH_AFTER=64 timeout 30 "${launch[@]}" "$iorr" record -q -o "sec-$c.iorr" -- \
        "${cmd[@]}" 2>&1)
      st=$?
      "$iorr" dump "sec-$c.iorr" > "sec-$c.txt" 2>&1
      kept=$(grep -c "not patched: the program installed a seccomp filter" "sec-$c.txt")
      if [[ $c == preinit && ${IORR_AUDIT:-} == 0 ]]; then
        echo "skip: seccomp filter from .preinit_array (without the audit module nothing sees it)"
      elif [[ $st != 0 || $got != "$want" ]]; then
        fail "seccomp case $c: status $st, '$got' against '$want'"
      elif [[ $c == preinit && ${IORR_PATCH:-} != 0 && $kept == 0 ]]; then
        fail "seccomp case $c: no note that patching was left out"
      elif [[ $c != preinit && $kept != 0 ]]; then
        fail "seccomp case $c: patching left out ($kept notes): nothing was installed in this process"
      else
        ok "seccomp case $c: $(tr '\n' ' ' <<< "$got")(notes keeping dispatch: $kept)"
      fi
    done
  else
    fail "seccomp cases: cannot build seccases.c"
  fi
fi

# A program whose first segment is not at address 0 (a PIE linked with another image base): its
# load bias is then no address of its ELF header, which the audit module once read there
# (la_objopen; killed at start). Needs lld for --image-base; skipped without it.
cat > imagebase.c << 'C'
#include <stdio.h>
int main(void) { puts("image base"); return 0; }
C
if cc -fPIE -pie -fuse-ld=lld -Wl,--image-base=0x10000000 imagebase.c -o imagebase 2> /dev/null; then
  as_unrecorded "a PIE linked at another image base" imagebase.iorr default ./imagebase
else
  echo "skip: a PIE at another image base (no lld to link it)"
fi

# A program run with an audit module of its own (LD_AUDIT) whose la_symbind reports the
# program's bindings, a dlsym among them: glibc 2.36 moves along its auditors for a dlsym only
# past one with la_symbind, so behind the recorder's plain module the program's module never
# heard of it (recorded: no "cos" line). Also through an exec with a cleared environment that
# names the module alone (the library adds the chained variant; the child sees its own).
cat > ownaudit.c << 'C'
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>
unsigned la_version(unsigned v) { return LAV_CURRENT; }
unsigned la_objopen(struct link_map *m, Lmid_t lm, uintptr_t *cookie) {
  *cookie = (uintptr_t)m;
  return LA_FLG_BINDTO | LA_FLG_BINDFROM;
}
uintptr_t la_symbind64(Elf64_Sym *s, unsigned n, uintptr_t *ref, uintptr_t *def, unsigned *flags,
                       const char *name) {
  const struct link_map *from = (const struct link_map *)*ref;
  if (from->l_name[0] == 0 && (!strcmp(name, "puts") || !strcmp(name, "cos")))
    fprintf(stderr, "[aud] %s%s\n", name, (*flags & LA_SYMB_DLSYM) ? " (dlsym)" : "");
  return s->st_value;
}
C
cat > ownaudit-prog.c << 'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
  puts("hello");
  fflush(stdout);
  double (*c)(double) = (double (*)(double))dlsym(dlopen("libm.so.6", RTLD_NOW), "cos");
  printf("cos 0 = %g, LD_AUDIT=%s\n", c(0), getenv("LD_AUDIT"));
  fflush(stdout);
  if (argc > 1) {
    char *args[] = {argv[0], NULL}, *env[] = {argv[1], NULL};
    execve("/proc/self/exe", args, env);
    return 1;
  }
  return 0;
}
C
if cc -shared -fPIC ownaudit.c -o ownaudit.so && cc ownaudit-prog.c -o ownaudit-prog -ldl; then
  own="LD_AUDIT=$PWD/ownaudit.so"
  as_unrecorded "the program's own audit module (la_symbind, a dlsym among its bindings)" \
    ownaudit.iorr "default IORR_PATCH=0" env "$own" ./ownaudit-prog
  as_unrecorded "the program's own audit module, through an exec with only it in the environment" \
    ownaudit-exec.iorr default env "$own" ./ownaudit-prog "$own"
  # The module named to iorr record itself (whose program sees the recorder's LD_AUDIT: the
  # bindings compared).
  want=$(env "$own" ./ownaudit-prog 2>&1 | grep '^\[aud\]')
  got=$(env "$own" timeout 30 "$iorr" record -q -o ownaudit-top.iorr -- ./ownaudit-prog 2>&1)
  st=$?
  if [[ $st == 0 && $(grep '^\[aud\]' <<< "$got") == "$want" ]]; then
    ok "the program's own audit module, named to iorr record: $(tr '\n' ' ' <<< "$want")"
  else
    fail "the program's own audit module, named to iorr record: status $st, '$got' against '$want'"
  fi
  # Added by the program after ours (LD_AUDIT=$LD_AUDIT:own.so in a script): the exec wrapper
  # turns our plain module into the chained one (review: the plain one stayed in front).
  got=$(timeout 30 "$iorr" record -q -o ownaudit-added.iorr -- \
    sh -c "LD_AUDIT=\$LD_AUDIT:$PWD/ownaudit.so ./ownaudit-prog" 2>&1)
  st=$?
  if [[ $st == 0 && $(grep '^\[aud\]' <<< "$got") == "$want" ]]; then
    ok "the program's own audit module, added by the program after ours: $(tr '\n' ' ' <<< "$want")"
  else
    fail "the program's own audit module, added by the program after ours: status $st, '$got' against '$want'"
  fi
  # Named by the program itself (-Wl,--audit: DT_AUDIT, loaded after LD_AUDIT's modules): iorr
  # record reads the command's dynamic section and puts the chained module first.
  if cc ownaudit-prog.c -o ownaudit-dt -ldl -Wl,--audit="$PWD/ownaudit.so" 2> /dev/null; then
    want=$(./ownaudit-dt 2>&1 | grep '^\[aud\]')
    got=$(timeout 30 "$iorr" record -q -o ownaudit-dt.iorr -- ./ownaudit-dt 2>&1)
    st=$?
    if [[ $st == 0 && -n $want && $(grep '^\[aud\]' <<< "$got") == "$want" ]]; then
      ok "the program's own audit module, named in its DT_AUDIT: $(tr '\n' ' ' <<< "$want")"
    else
      fail "the program's own audit module, named in its DT_AUDIT: status $st, '$got' against '$want'"
    fi
  fi
else
  fail "own audit module: cannot build the test program"
fi

# readlink's target (format 3) from each way a call is caught: a wrapper (coreutils readlink),
# a raw syscall() and glibc's internal readlink in realpath() (patched sites, or dispatch with
# IORR_PATCH=0); a failed one has none.
ln -s some-target-name rl-link
cat > rl.c << 'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
  char b[64];
  long n = syscall(SYS_readlink, "rl-link", b, sizeof b);
  char* r = realpath("rl-link", NULL);
  printf("%ld %s\n", n, r ? r : "(none)");
  return 0;
}
C
if cc -O2 rl.c -o rl-prog 2> /dev/null; then
  for how in default IORR_PATCH=0; do
    got=$(env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o rl.iorr -- sh -c 'readlink rl-link; ./rl-prog' 2>&1)
    st=$?
    "$iorr" dump rl.iorr > rl.txt 2>&1
    n=$(grep -c '^\[.*readlink(".*rl-link", "some-target-name", [0-9]*) = 16 <' rl.txt)
    nf=$(grep -c 'readlink(".*/some-target-name", NULL, [0-9]*) = -1 ENOENT' rl.txt)
    if [[ $st == 0 && $n == 3 && $nf == 1 ]]; then
      ok "readlink targets recorded ($how): 3 of 3, the failed one without ($(tr '\n' ' ' <<< "$got"))"
    else
      fail "readlink targets ($how): status $st, $n of 3 with the target, $nf failed without: $(grep readlink rl.txt | head -n 5)"
    fi
  done
else
  fail "readlink targets: cannot build the test program"
fi
# setxattr's value (format 3) from the libc wrapper and a raw syscall(); a failed one has none.
touch xa-file
cat > xa.c << 'C'
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
int main(void) {
  int a = setxattr("xa-file", "user.iorr", "hello", 5, 0);
  int b = (int)syscall(SYS_setxattr, "xa-file", "user.raw", "ab\0cd", 5, 0);
  int c = setxattr("xa-missing", "user.iorr", "x", 1, 0);
  printf("%d %d %d\n", a, b, c);
  return 0;
}
C
if ! setfattr -n user.probe -v 1 xa-file 2> /dev/null &&
  ! python3 -c "import os; os.setxattr('xa-file', 'user.probe', b'1')" 2> /dev/null; then
  echo "SKIP (case): $PWD does not take user extended attributes"
elif cc -O2 xa.c -o xa-prog 2> /dev/null; then
  for how in default IORR_PATCH=0; do
    got=$(env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o xa.iorr -- ./xa-prog 2>&1)
    st=$?
    "$iorr" dump xa.iorr > xa.txt 2>&1
    if [[ $st == 0 && $got == "0 0 -1" ]] && grep -q 'setxattr("xa-file", "user.iorr", "hello", 5, 0) = 0' xa.txt &&
      grep -q 'setxattr("xa-file", "user.raw", "ab\\x00cd", 5, 0) = 0' xa.txt &&
      grep -q 'setxattr("xa-missing", "user.iorr", NULL, 1, 0) = -1 ENOENT' xa.txt; then
      ok "setxattr values recorded ($how): wrapper and syscall(), none for a failed call"
    else
      fail "setxattr values ($how): status $st, '$got', $(grep setxattr xa.txt | head -n 3)"
    fi
  done
else
  fail "setxattr values: cannot build the test program"
fi
# setxattr values a review found the recorder mishandling: one of 64 KiB (with its path, more
# than an event may hold: the event was dropped and the trace marked incomplete) is kept
# without its value; a setxattr a seccomp filter makes succeed unread, from a PROT_NONE page,
# is not read (the program died of SIGSEGV).
shm=$(mktemp -d /dev/shm/iorr-xa.XXXXXX)
touch "$shm/f"
cat > xa2.c << 'C'
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
int main(int argc, char** argv) {
  (void)argc;
  char* big = calloc(1, 65536);
  int a = setxattr(argv[1], "user.big", big, 65536, 0);
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setxattr, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog prog = {4, f};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) return 3;
  char* none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int b = setxattr(argv[1], "user.x", none, 100, 0);
  printf("%d %d\n", a, b);
  return 0;
}
C
if ! python3 -c "import os, sys; os.setxattr(sys.argv[1], 'user.probe', b'x' * 65536)" "$shm/f" 2> /dev/null; then
  echo "SKIP (case): /dev/shm does not take a 64 KiB user attribute"
elif cc -O2 xa2.c -o xa2-prog 2> /dev/null; then
  as_unrecorded "setxattr values: 64 KiB kept without it, a seccomp-faked success not read" xa2.iorr \
    "default IORR_PATCH=0 IORR_DISPATCH=0" ./xa2-prog "$shm/f"
  "$iorr" dump xa2.iorr > xa2.txt 2> xa2.err
  if grep -q 'setxattr(".*", "user.big", NULL, 65536, 0) = 0' xa2.txt && ! grep -q 'incomplete' xa2.err; then
    ok "a 64 KiB setxattr is in the trace, without its value, and the trace is whole"
  else
    fail "a 64 KiB setxattr: $(grep user.big xa2.txt) $(cat xa2.err)"
  fi
else
  fail "setxattr values: cannot build the second test program"
fi
rm -rf "$shm"
# A readlink (and a getdents64) made to return more than its buffer holds (strace's fault
# injection; a seccomp supervisor can do the same): the recording reads no more than the buffer
# (a review: it read the returned count, past the end of the mapping, and the program died of
# SIGSEGV).
cat > rlinj.c << 'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
  char* p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(p + 4096, 4096);
  printf("ret %ld\n", (long)readlink("rl-link", p + 4096 - 16, 16));
  // A listing that looks whole up to the buffer's end, and goes on past it if read further.
  char* d = p + 4096 - 64;
  for (int off = 0; off < 64; off += 24) {
    unsigned short reclen = 24;
    if (off + 18 < 64) memcpy(d + off + 16, &reclen, 2);
    if (off + 19 < 64) d[off + 18] = 8;
    if (off + 20 < 64) d[off + 19] = 'a';
  }
  int fd = open(".", O_RDONLY | O_DIRECTORY);
  printf("getdents64 %ld\n", syscall(SYS_getdents64, fd, d, 64));
  return 0;
}
C
if command -v strace > /dev/null && cc -O2 rlinj.c -o rlinj 2> /dev/null; then
  as_unrecorded "a readlink returning more than its buffer" rlinj.iorr "default IORR_PATCH=0 IORR_DISPATCH=0" \
    sh -c 'strace -o /dev/null -e inject=readlink,getdents64:retval=60000 ./rlinj 2> /dev/null'
fi

# A FICLONE that succeeded stores the bytes it gave the destination (format 4: the source's size,
# asked after the call), through libc's ioctl and a raw system call alike; a failed one, and
# another request, store -1. The model copies those bytes where a file system cannot clone
# (before format 4 a `cp -a` recorded on xfs or btrfs modelled no data at all). Needs root, a
# loop device and mkfs.xfs (reflink is its default).
cat > ficlone.c <<'C'
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char** argv) {
  (void)argc;
  int src = open(argv[1], O_RDONLY), empty = open(argv[2], O_RDONLY);
  int d1 = open(argv[3], O_WRONLY | O_CREAT | O_EXCL, 0644);
  int d2 = open(argv[4], O_WRONLY | O_CREAT | O_EXCL, 0644);
  int d3 = open(argv[5], O_WRONLY | O_CREAT | O_EXCL, 0644);
  int other = open("/dev/null", O_RDONLY);
  int a = ioctl(d1, FICLONE, src);
  long b = syscall(SYS_ioctl, d2, FICLONE, empty);
  int c = ioctl(d3, FICLONE, other);
  int n = 0;
  int e = ioctl(src, FIONREAD, &n);
  printf("%d %ld %d %d\n", a, b, c, e);
  return 0;
}
C
# Under a seccomp filter the size is not asked (-1): a filter may kill on an fstat the program
# never makes (a review: a sandbox letting ioctl through as a no-op and killing on SYS_fstat
# died recorded, status 159).
cat > ficlone-sc.c <<'C'
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char** argv) {
  (void)argc;
  int src = open(argv[1], O_RDONLY);
  int dst = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fstat, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog p = {sizeof f / sizeof f[0], f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p) != 0)
    return 2;
  printf("ficlone %d\n", ioctl(dst, FICLONE, src));
  return 0;
}
C
if cc -O2 ficlone-sc.c -o ficlone-sc 2> /dev/null; then
  echo data > fsc-src
  for how in default IORR_PATCH=0 IORR_DISPATCH=0; do
    got=$(env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o fsc.iorr -- ./ficlone-sc fsc-src fsc-dst 2>&1)
    st=$?
    "$iorr" dump fsc.iorr > fsc.txt 2>&1
    if [[ $st == 0 && $got == "ficlone 0" ]] && grep -q 'ioctl([0-9]*, FICLONE, [0-9]*, -1) = 0' fsc.txt; then
      ok "FICLONE under a seccomp filter that kills on fstat ($how): the program lives, size -1"
    else
      fail "FICLONE under seccomp ($how): status $st, output '$got', $(grep ioctl fsc.txt | head -n 2 | tr '\n' '|')"
    fi
  done
else
  fail "FICLONE under seccomp: the test program does not build"
fi
if [[ $(id -u) -ne 0 ]] || ! command -v mkfs.xfs > /dev/null; then
  echo "SKIP (case): FICLONE's size needs root and mkfs.xfs"
elif ! cc -O2 ficlone.c -o ficlone-prog 2> /dev/null; then
  fail "FICLONE's size: the test program does not build"
elif ! { truncate -s 512M xfs.img && mkfs.xfs -q xfs.img && mkdir -p xfs &&
  mount -o loop xfs.img xfs; } 2> xfs.err; then
  echo "SKIP (case): FICLONE's size: no loop-mounted xfs here ($(head -n 1 xfs.err))"
else
  head -c 1000000 /dev/urandom > xfs/src && : > xfs/empty
  # (With PLT wrappers alone the library cannot see every seccomp install, so it asks no size,
  # as it keeps no setxattr value: -1.)
  for how in default IORR_PATCH=0 IORR_DISPATCH=0; do
    rm -f xfs/d1 xfs/d2 xfs/d3
    got=$(env "${how/default/IORR_X=}" timeout 30 "$iorr" record -q -o fc.iorr -- \
      ./ficlone-prog xfs/src xfs/empty xfs/d1 xfs/d2 xfs/d3 2>&1)
    "$iorr" dump fc.iorr > fc.txt 2>&1
    big=1000000 none=0
    [[ $how == IORR_DISPATCH=0 ]] && big=-1 none=-1
    if [[ $got == "0 0 -1 0" ]] && cmp -s xfs/src xfs/d1 &&
      grep -q "ioctl([0-9]*, FICLONE, [0-9]*, $big) = 0" fc.txt &&
      grep -q "ioctl([0-9]*, FICLONE, [0-9]*, $none) = 0" fc.txt &&
      grep -q 'ioctl([0-9]*, FICLONE, [0-9]*, -1) = -1 EXDEV' fc.txt &&
      grep -q 'ioctl([0-9]*, FIONREAD, -\?[0-9]*, -1) = 0' fc.txt; then
      ok "FICLONE's size stored ($how): $big and $none after a success, -1 after a failure or another request"
    else
      fail "FICLONE's size ($how): output '$got', dump: $(grep ioctl fc.txt | head -n 5 | tr '\n' '|')"
    fi
  done
  umount xfs
fi

# A signal handler that interrupts a recorded call and makes calls of its own (a SIGTERM
# handler unlinking its lock file while main waits in read, an alarm's open): its calls are
# recorded, nested in the call it interrupted, whose event comes first (start order, as strace
# prints it unfinished). Until stop 34 they were left out as nested calls (a review's case:
# the open and close of a SIGALRM handler that interrupted a read were missing in every mode).
# "restart": the handler has SA_RESTART, the read goes on and gets its byte from another
# thread; "raw": the read is syscall(SYS_read).
cat > inh.c << 'C'
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
static int pipefd[2];
static void handler(int sig) {
  (void)sig;
  close(open("inh.inhandler", O_RDONLY));
  unlink("inh.gone");
}
static void* writer(void* p) {
  (void)p;
  usleep(300000);
  (void)write(pipefd[1], "x", 1);
  return NULL;
}
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int restart = strcmp(argv[1], "restart") == 0;
  close(open("inh.gone", O_WRONLY | O_CREAT, 0600));
  if (pipe(pipefd) != 0) return 2;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = restart ? SA_RESTART : 0;
  sigaction(SIGALRM, &sa, NULL);
  pthread_t t;
  if (restart) pthread_create(&t, NULL, writer, NULL);
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_usec = 100000;
  setitimer(ITIMER_REAL, &it, NULL);
  char c;
  long r = strcmp(argv[1], "raw") == 0 ? syscall(SYS_read, pipefd[0], &c, 1)
                                       : (long)read(pipefd[0], &c, 1);
  if (restart) pthread_join(t, NULL);
  if (restart ? r != 1 : r != -1) return 3;
  if (access("inh.gone", F_OK) == 0) return 4;
  close(open("inh.end", O_RDONLY));
  printf("ok %s\n", argv[1]);
  return 0;
}
C
# "timer": a 1 kHz timer's handler opens and closes a file while main makes calls back to back
# for half a second, so most of its calls come inside one of main's: each is recorded, or,
# where the handler came while the library was writing an event, counted as lost (its open and
# close both: the trace says it is incomplete); most are recorded, and the trace keeps its few
# chunks (the writer puts each window of the ring in start order: one chunk per interrupted
# call made 1,647 of them in a review's program).
cat > inht.c << 'C'
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
static volatile sig_atomic_t calls;
static void handler(int sig) {
  (void)sig;
  close(open("inht.inhandler", O_RDONLY));
  calls++;
}
int main(void) {
  int fd = open("inht.inhandler", O_RDONLY);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_usec = it.it_interval.tv_usec = 1000;
  setitimer(ITIMER_REAL, &it, NULL);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    for (int i = 0; i < 1000; ++i) lseek(fd, i, SEEK_SET);
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 500000000L);
  memset(&it, 0, sizeof it);
  setitimer(ITIMER_REAL, &it, NULL);
  printf("%d\n", (int)calls);
  return 0;
}
C
if cc -O1 inht.c -o inht 2> /dev/null; then
  : > inht.inhandler
  for how in default IORR_PATCH=0 IORR_DISPATCH=0; do
    env "${how/default/IORR_X=}" timeout -k 5 60 "$iorr" record -q -o inht.iorr -- ./inht \
      > inht.out 2>&1
    st=$?
    n=$(cat inht.out)
    "$iorr" dump inht.iorr > inht.dump 2> inht.err
    got=$(($(grep -c 'openat(AT_FDCWD, "inht.inhandler"' inht.dump) - 1))
    chunks=$("$iorr" stats inht.iorr 2> /dev/null | sed -n 's/^events .* in \([0-9,]*\) chunks.*/\1/p' | tr -d ,)
    lost=$(grep -o '[0-9,]* events could not be stored' inht.err | head -n 1 | cut -d' ' -f1 | tr -d ,)
    lost=${lost:-0}
    what="a timer's handler inside calls ($how)"
    if [[ $st -ne 0 ]] || ! [[ $n =~ ^[0-9]+$ ]] || [[ $n -lt 50 ]]; then
      fail "$what: status $st, handler ran '$(head -c 100 inht.out)' times"
    elif [[ $((got + lost / 2)) -ne $n ]] || [[ $lost -gt $((n / 2)) ]]; then
      fail "$what: $got of the handler's $n opens in the trace, $lost calls counted as lost"
    elif grep -v 'could not be stored' inht.err | grep -q .; then
      fail "$what: the trace reads with: $(grep -v 'could not be stored' inht.err | head -n 1)"
    elif [[ -z $chunks || $chunks -gt $((n / 10 + 20)) ]]; then
      fail "$what: ${chunks:-?} chunks for $n interrupting handlers"
    else
      ok "$what: $got of the handler's $n opens recorded, the rest counted ($lost calls lost), $chunks chunks"
    fi
  done
fi

if cc -O1 -pthread inh.c -o inh 2> /dev/null; then
  : > inh.inhandler; : > inh.end
  for how in default IORR_PATCH=0 IORR_DISPATCH=0; do
    for c in read raw restart; do
      env "${how/default/IORR_X=}" timeout -k 5 60 "$iorr" record -q -o inh.iorr -- ./inh "$c" \
        > inh.out 2>&1
      st=$?
      "$iorr" dump inh.iorr > inh.dump 2> inh.err
      what="a handler's calls inside a call: $c ($how)"
      read_line=$(grep -n ' read(' inh.dump | grep -v '= 832\|= 784' | tail -n 1 | cut -d: -f1)
      open_line=$(grep -n 'openat(AT_FDCWD, "inh.inhandler"' inh.dump | head -n 1 | cut -d: -f1)
      if [[ $st -ne 0 ]] || [[ $(cat inh.out) != "ok $c" ]]; then
        fail "$what: status $st: $(head -c 200 inh.out)"
      elif [[ $(grep -c 'openat(AT_FDCWD, "inh.inhandler"' inh.dump) -ne 1 ]] ||
        [[ $(grep -c 'unlink.*"inh.gone"' inh.dump) -ne 1 ]]; then
        fail "$what: the handler's open and unlink are not in the trace once each: $(grep -c inh.inhandler inh.dump), $(grep -c 'unlink.*inh.gone' inh.dump)"
      elif ! grep -q 'openat(AT_FDCWD, "inh.end"' inh.dump; then
        fail "$what: the call after it is missing"
      elif [[ -s inh.err ]]; then
        fail "$what: the trace reads with: $(head -n 1 inh.err)"
      elif [[ -z $read_line || -z $open_line || $read_line -gt $open_line ]]; then
        fail "$what: the interrupted read (line ${read_line:-none}) is not before the handler's open (line ${open_line:-none})"
      else
        ok "$what: the handler's open and unlink recorded once, after the read they interrupted"
      fi
    done
  done
fi

# A handler that interrupts a recorded call runs behind the library's entry (HandlerEntry), which
# lets the handler's own libc calls be caught: "stdio", fopen/fputs/fclose in a handler that
# interrupted a read (fopen's openat, the write and the close are libc's own calls: not in the
# trace before stop 35, in any mode); "raise", GNU tools' cleanup idiom, signal(sig, SIG_DFL)
# and raise(sig), in such a handler: the process died without the library's flush and lost
# what it had recorded since the last one (300 opens made just before: about 100 in the trace
# before stop 35). Not with IORR_DISPATCH=0 (PLT wrappers alone see no libc-internal call).
cat > inhl.c << 'C'
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
static void stdio_handler(int sig) {
  (void)sig;
  FILE* f = fopen("inhl.stdio", "w");
  if (f) {
    fputs("x\n", f);
    fclose(f);
  }
}
static void raise_handler(int sig) {
  signal(sig, SIG_DFL);
  raise(sig);
}
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int die = strcmp(argv[1], "raise") == 0;
  for (int i = 0; i < 300; ++i) close(open("inhl.many", O_RDONLY));
  int pipefd[2];
  if (pipe(pipefd) != 0) return 2;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = die ? raise_handler : stdio_handler;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_usec = 30000;
  setitimer(ITIMER_REAL, &it, NULL);
  char c;
  if (read(pipefd[0], &c, 1) != -1) return 3;
  close(open("inhl.end", O_RDONLY));
  printf("ok %s\n", argv[1]);
  return 0;
}
C
if cc -O1 inhl.c -o inhl 2> /dev/null; then
  : > inhl.many; : > inhl.end
  for how in default IORR_PATCH=0 IORR_PATCH=1; do
    for c in stdio raise; do
      rm -f inhl.stdio
      env "${how/default/IORR_X=}" timeout -k 5 60 "$iorr" record -q -o inhl.iorr -- ./inhl "$c" \
        > inhl.out 2>&1
      st=$?
      "$iorr" dump inhl.iorr > inhl.dump 2> inhl.err
      many=$(grep -c 'openat(AT_FDCWD, "inhl.many"' inhl.dump)
      what="a handler's libc calls inside a call: $c ($how)"
      if [[ $c == stdio ]]; then
        fd=$(grep 'openat(AT_FDCWD, "inhl.stdio"' inhl.dump | sed -n 's/.* = \([0-9]*\) <.*/\1/p')
        if [[ $st -ne 0 || $(cat inhl.out) != "ok stdio" || $(cat inhl.stdio 2> /dev/null) != x ]]; then
          fail "$what: status $st, output '$(head -c 100 inhl.out)'"
        elif [[ -z $fd ]] || ! grep -q "write($fd, \.\.\., 2) = 2" inhl.dump ||
          ! grep -q "close($fd) = 0" inhl.dump; then
          fail "$what: fopen's openat (fd '${fd}'), fputs's write or fclose's close is not in the trace"
        elif [[ -s inhl.err || $many -ne 300 ]] || ! grep -q 'inhl.end' inhl.dump; then
          fail "$what: $many of 300 opens, $(head -n 1 inhl.err)"
        else
          ok "$what: the handler's fopen, write and fclose recorded (fd $fd)"
        fi
      else
        if [[ $st -ne 142 || -s inhl.out ]]; then
          fail "$what: status $st (142 unrecorded), output '$(head -c 100 inhl.out)'"
        elif [[ $many -ne 300 ]]; then
          fail "$what: $many of the 300 opens made before the handler's raise are in the trace"
        else
          ok "$what: the process died of SIGALRM (142) with all 300 opens in the trace"
        fi
      fi
    done
  done
else
  fail "a handler's libc calls inside a call: the test program does not build"
fi

# The program sees its own handlers, though the kernel holds the library's entry in their place:
# sigaction and signal() give them back, SA_RESETHAND leaves SIG_DFL, a disposition read back and
# set on another signal works, a handler with SA_SIGINFO gets its siginfo and context, a
# handler's siglongjmp out of a read leaves a call the trace notes, and sigaction of SIGKILL
# fails; all as unrecorded, in every mode.
cat > hent.c << 'C'
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>
static volatile int got, val, ripok;
static sigjmp_buf jb;
static void h1(int sig) { got = sig; }
static void h2(int sig, siginfo_t* si, void* ctx) {
  got = sig;
  val = si->si_value.sival_int;
  ripok = ((ucontext_t*)ctx)->uc_mcontext.gregs[REG_RIP] != 0;
}
static void hj(int sig) { (void)sig; siglongjmp(jb, 1); }
int main(void) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = h1;
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGUSR1, NULL, &old);
  printf("query: %d, flags %#lx\n", old.sa_handler == h1, (unsigned long)(old.sa_flags & ~0x04000000UL));
  raise(SIGUSR1);
  printf("got %d\n", got);
  printf("signal() gave h1: %d\n", signal(SIGUSR1, SIG_DFL) == h1);
  sa.sa_sigaction = h2;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigaction(SIGUSR2, &sa, &old);
  printf("old SIG_DFL: %d\n", old.sa_handler == SIG_DFL);
  union sigval v;
  v.sival_int = 42;
  sigqueue(getpid(), SIGUSR2, v);
  printf("got %d, value %d, context %d\n", got, val, ripok);
  sigaction(SIGUSR2, NULL, &old);
  printf("reset to SIG_DFL: %d\n", old.sa_handler == SIG_DFL);
  signal(SIGHUP, h1);
  struct sigaction o2;
  sigaction(SIGHUP, NULL, &o2);
  sigaction(SIGINT, &o2, NULL);
  raise(SIGINT);
  sigaction(SIGINT, NULL, &o2);
  printf("copied: got %d, h1 %d\n", got, o2.sa_handler == h1);
  signal(SIGALRM, hj);
  int p[2];
  if (pipe(p) != 0) return 2;
  if (sigsetjmp(jb, 1) == 0) {
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_usec = 30000;
    setitimer(ITIMER_REAL, &it, NULL);
    char c;
    (void)read(p[0], &c, 1);
    printf("read returned\n");
  } else {
    printf("jumped\n");
  }
  FILE* f = fopen("hent.after", "w");
  fputs("y", f);
  fclose(f);
  printf("SIGKILL: %d, usr1 SIG_DFL: %d\n", sigaction(SIGKILL, &sa, NULL), signal(SIGUSR1, SIG_IGN) == SIG_DFL);
  return 0;
}
C
if cc -O1 hent.c -o hent 2> /dev/null && ./hent > hent.plain 2>&1; then
  for how in default IORR_PATCH=0 IORR_PATCH=1 IORR_DISPATCH=0; do
    env "${how/default/IORR_X=}" timeout -k 5 60 "$iorr" record -q -o hent.iorr -- ./hent \
      > hent.out 2>&1
    st=$?
    "$iorr" dump hent.iorr > hent.dump 2>&1
    what="the program's handlers behind the library's entry ($how)"
    if [[ $st -ne 0 ]] || ! cmp -s hent.plain hent.out; then
      fail "$what: status $st, output differs: $(diff hent.plain hent.out | head -n 4 | tr '\n' '|')"
    elif [[ $how != IORR_DISPATCH=0 ]] && { ! grep -q 'openat(AT_FDCWD, "hent.after"' hent.dump ||
      ! grep -q 'note: longjmp' hent.dump; }; then
      fail "$what: fopen after the siglongjmp ($(grep -c hent.after hent.dump)) or the note of the call left ($(grep -c 'note: longjmp' hent.dump)) is missing"
    else
      ok "$what: the program's output equals an unrecorded run's"
    fi
  done
else
  fail "the program's handlers behind the library's entry: the test program does not build or run"
fi

# A handler's calls while the recorder writes the interrupted thread's event (stop 40): a
# SIGALRM handler that opens a file every 100 us while the main thread writes and opens. They
# were counted lost (60 to 100 of about 2,000 runs; a SIGCHLD reaper lost all 14 calls of one run
# so, and CI's "reaper" case failed); the handler is now put off until the write is done: every
# run's open is in the trace, none lost. With IORR_DISPATCH=0 the handlers run without the
# library's entry and are still lost there: the trace says how many and why (stop 39's sweep:
# "N events could not be stored (see the trace notes)", and no note said).
cat > lostnote.c << 'C'
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
static volatile int runs;
static void on_alarm(int s) {
  (void)s;
  close(open("lostnote.h", O_RDONLY));
  runs++;
}
int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, 0);
  struct itimerval it = {{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &it, 0);
  int fd = open("lostnote.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
  char buf[512] = {0};
  for (int i = 0; i < 20000; i++) {
    if (write(fd, buf, sizeof buf) < 0) return 1;
    close(open("lostnote.none", O_RDONLY));
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, 0);
  printf("%d\n", runs);
  return 0;
}
C
if cc -O1 lostnote.c -o lostnote 2> /dev/null; then
  for how in default IORR_PATCH=0 IORR_PATCH=1; do
    env "${how/default/IORR_X=}" timeout 60 "$iorr" record -o lostnote.iorr -- ./lostnote \
      > lostnote.out 2> lostnote.err
    st=$?
    runs=$(cat lostnote.out)
    lost=$(grep -o '[0-9]* events\? lost' lostnote.err | cut -d' ' -f1)
    dump_has lostnote.iorr 'openat(' || :
    opens=$(grep -c 'openat(AT_FDCWD, "lostnote.h"' lostnote.iorr.txt)
    if [[ $st == 0 && -z $lost && $runs -gt 100 && $opens == "$runs" ]]; then
      ok "a handler's calls while the recorder writes an event ($how): all $runs runs' opens recorded, none lost"
    else
      fail "a handler's calls while the recorder writes an event ($how): status $st, $opens opens of $runs runs, ${lost:-0} lost"
    fi
  done
  how=IORR_DISPATCH=0
  lost=0
  for i in 1 2 3; do  # (a run may lose none)
    env "$how" timeout 60 "$iorr" record -o lostnote.iorr -- ./lostnote > /dev/null 2> lostnote.err
    st=$?
    lost=$(grep -o '[0-9]* events\? lost' lostnote.err | cut -d' ' -f1)
    [[ -n $lost ]] && break
  done
  if [[ $st != 0 ]]; then
    fail "lost events named in a note ($how): status $st"
  elif [[ -z $lost ]]; then
    echo "skip: lost events named in a note ($how): no event lost in 3 runs"
  elif dump_has lostnote.iorr "^# note: lost: $lost events could not be stored; [0-9]* of them calls of signal handlers"; then
    ok "lost events named in a note ($how): $lost, with the handlers' share"
  else
    fail "lost events named in a note ($how): $lost lost, note: '$(grep -m1 'note: lost' lostnote.iorr.txt)'"
  fi
else
  fail "lost events named in a note: the test program does not build"
fi

# The review of that deferral (stop 40): (1) a handler the entry does not put off (SA_RESETHAND
# reset the disposition) that left the write by siglongjmp left the thread at depth 2 for good,
# and every later signal was put off for ever (0 SIGPROF runs where an unrecorded run had 70;
# every later call counted lost, there before): a call from above the write's frame now ends it,
# and a signal is put off only while the interrupted code is the library's. (2) A real-time
# signal sent again went behind the instances queued meanwhile (2 to 90 of 20,000 sigqueue values
# out of order): real-time signals are not put off.
cat > defer_rt.c << 'C'
// A second thread queues SIGRTMIN to the main thread with values 1, 2, 3, ... in bursts of 4;
// the main thread writes to /dev/null in a loop. An SA_SIGINFO handler notes the values in the
// order it gets them. POSIX: queued instances of one real-time signal are delivered in the
// order sent. Prints the number of runs and of values out of order.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define N 20000
static volatile int got[N + 1];
static volatile int ngot;
static pthread_t main_th;
static volatile int done;
static void on_rt(int s, siginfo_t* si, void* c) {
  (void)s; (void)c;
  if (ngot < N) got[ngot] = si->si_value.sival_int;
  ngot++;
}
static void* sender(void* a) {
  (void)a;
  for (int v = 1; v <= N;) {
    for (int k = 0; k < 4 && v <= N; k++, v++) {
      union sigval sv = {.sival_int = v};
      while (pthread_sigqueue(main_th, SIGRTMIN, sv) != 0) {
      }
    }
    for (volatile int spin = 0; spin < 20000; spin++) {
    }
  }
  done = 1;
  return 0;
}
int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_rt;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGRTMIN, &sa, 0);
  main_th = pthread_self();
  int fd = open("/dev/null", O_WRONLY);
  pthread_t t;
  pthread_create(&t, 0, sender, 0);
  while (!done || ngot < N) write(fd, "x", 1);
  pthread_join(t, 0);
  int bad = 0;
  for (int i = 1; i < N; i++)
    if (got[i] != got[i - 1] + 1) bad++;
  printf("runs %d, out of order %d\n", ngot, bad);
  return bad != 0;
}
C
cat > defer_jmp.c << 'C'
// A SA_RESETHAND SIGALRM handler leaves by siglongjmp; afterwards the program spins (no system
// calls) until a SIGPROF handler has run twice. Unrecorded, SIGPROF (ITIMER_PROF, 1 ms) always
// comes within a few ms of CPU time.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
static sigjmp_buf jb;
static volatile sig_atomic_t ticks;
static void on_prof(int s) { (void)s; ticks++; }
static void on_alrm(int s) { (void)s; siglongjmp(jb, 1); }
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);  // vDSO: no system call
  return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 200;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_prof;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &sa, 0);
  struct itimerval prof = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_PROF, &prof, 0);
  int fd = open("/dev/null", O_WRONLY);
  int stuck = 0, worst_ms = 0;
  for (int i = 0; i < iters; i++) {
    struct sigaction ra;
    memset(&ra, 0, sizeof ra);
    ra.sa_handler = on_alrm;
    ra.sa_flags = SA_RESETHAND;
    sigaction(SIGALRM, &ra, 0);
    if (sigsetjmp(jb, 1) == 0) {
      struct itimerval one = {{0, 0}, {0, 50 + i % 50}};
      setitimer(ITIMER_REAL, &one, 0);
      for (;;) write(fd, "x", 1);
    }
    // Back from the handler: wait for two SIGPROF runs, with no system call.
    int t0 = ticks;
    double start = now();
    while (ticks < t0 + 2 && now() - start < 0.5) {
    }
    int ms = (int)((now() - start) * 1000);
    if (ms > worst_ms) worst_ms = ms;
    if (ticks < t0 + 2) stuck++;
  }
  printf("iterations %d, SIGPROF held off for 0.5 s after the jump: %d, worst wait %d ms\n", iters,
         stuck, worst_ms);
  return stuck != 0;
}
C
if cc -O1 -pthread defer_rt.c -o defer_rt 2> /dev/null && cc -O1 defer_jmp.c -o defer_jmp 2> /dev/null; then
  for how in default IORR_PATCH=0 IORR_PATCH=1; do
    got=$(env "${how/default/IORR_X=}" timeout 60 "$iorr" record -q -o defer.iorr -- ./defer_rt 2>&1)
    st=$?
    if [[ $st == 0 && $got == "runs 20000, out of order 0" ]]; then
      ok "queued real-time signals while events are written ($how): in the order sent"
    else
      fail "queued real-time signals while events are written ($how): status $st, '$got'"
    fi
    got=$(env "${how/default/IORR_X=}" timeout 60 "$iorr" record -q -o defer.iorr -- ./defer_jmp 100 2>&1)
    st=$?
    if [[ $st == 0 ]]; then
      ok "a handler that leaves an event's write by siglongjmp ($how): later signals handled ($got)"
    else
      fail "a handler that leaves an event's write by siglongjmp ($how): status $st, '$got'"
    fi
  done
else
  fail "signals put off inside an event's write: the test programs do not build"
fi

# Stop 40's sweep: a signal sent to each of 1,000 threads right after pthread_create, its
# handler writing a byte. (1) A handler that ran just after the thread's prctl arming dispatch,
# before the library marked it armed, had its write recorded twice (the real function's system
# call trapped too). (2) A thread whose first recorded call came after glibc ran its key
# destructors left the key holding its state for good; glibc gave the descriptor, value included,
# to a later thread, whose exit then wrote into a state unmapped long since: SIGSEGV, 5 of 5 runs.
cat > thrkill.c << 'C'
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static int hfd;
static void h(int s) {
  (void)s;
  (void)write(hfd, "h", 1);
}
static void* t(void* a) { return a; }
int main(void) {
  hfd = open("thrkill.bin", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = h;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, 0);
  for (int i = 0; i < 1000; i++) {
    pthread_t th;
    pthread_create(&th, 0, t, 0);
    pthread_kill(th, SIGUSR1);
    pthread_join(th, 0);
  }
  printf("done\n");
  return 0;
}
C
if cc -O1 -pthread thrkill.c -o thrkill 2> /dev/null; then
  for how in default IORR_PATCH=0 IORR_PATCH=1; do
    bad=""
    for i in 1 2 3; do
      got=$(env "${how/default/IORR_X=}" timeout 60 "$iorr" record -q -o thrkill.iorr -- ./thrkill 2>&1)
      st=$?
      bytes=$(wc -c < thrkill.bin)
      dump_has thrkill.iorr 'write(' || :
      writes=$(grep -c 'write([0-9]*, \.\.\., 1) = 1 ' thrkill.iorr.txt)
      if [[ $st != 0 || $got != done || $writes != "$bytes" ]]; then
        bad="run $i: status $st, '$got', $writes writes recorded of $bytes"
        break
      fi
    done
    if [[ -z $bad ]]; then
      ok "signals to threads just started ($how): as unrecorded, each handler write recorded once"
    else
      fail "signals to threads just started ($how): $bad"
    fi
  done
else
  fail "signals to threads just started: the test program does not build"
fi

# Cases from the review of stop 35's handler entries, each as unrecorded in every mode:
# "efault": an rt_sigaction whose old action cannot be written sets the new one all the same
# (EFAULT), and the handler runs (the library's table of handlers had been put back: the
# signal was dropped); "ownstack": a thread on a stack of the program's own (not armed: its
# rt_sigaction is not caught) reads back the program's handler, not the library's stub;
# "hfork": a handler that interrupts a read forks, and the child goes on (it died of SIGSEGV
# in the read's wrapper: the call began in the parent); "altstack": a handler on a 6 KiB
# alternate stack that interrupts a read and uses stdio (its calls caught there overflowed
# it); "reaper": a SIGCHLD handler reaping 20 children, opening a file for each, while the
# parent forks them: the 20 opens in the trace, but for one that came while the library was
# writing an event, counted as lost (8 to 13 were lost, the handler having come inside fork's
# call).
cat > rev35.c << 'C'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int ran, n, reaped;
static volatile pid_t child = -1;
static int wpipe[2];
static void h(int s) { ran = s; }
static void* th(void* a) {
  struct sigaction q;
  sigaction(SIGINT, NULL, &q);
  *(int*)a = q.sa_handler == h;
  return 0;
}
static void forker(int s) { (void)s; child = fork(); }
static void stdio_h(int s) {
  (void)s;
  // Five runs: under load the 10 ms timer can fire again before the loop below sees the fifth
  // (recorded and unrecorded alike: "handled 6" against 5 once, two suites in parallel).
  if (n >= 5) return;
  FILE* f = fopen("rev35.alt", "w");
  if (f) {
    fputs("x\n", f);
    fclose(f);
  }
  n++;
}
static void reaper(int s) {
  (void)s;
  int saved = errno, st;
  while (waitpid(-1, &st, WNOHANG) > 0) {
    reaped++;
    close(open("rev35.reaped", O_RDONLY));
    if (reaped == 20) (void)write(wpipe[1], "x", 1);
  }
  errno = saved;
}
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* what = argv[1];
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  char c;
  int p[2];
  if (pipe(p) != 0) return 2;
  if (strcmp(what, "efault") == 0) {
    struct {
      void* h;
      unsigned long f;
      void* r;
      unsigned long m;
    } k;
    sa.sa_handler = h;
    sigaction(SIGURG, &sa, NULL);
    syscall(SYS_rt_sigaction, SIGURG, NULL, &k, 8);
    errno = 0;
    long r = syscall(SYS_rt_sigaction, SIGPROF, &k, (void*)8, 8);
    printf("%ld %d\n", r, errno);
    sigaction(SIGPROF, NULL, &sa);
    printf("handler h: %d\n", sa.sa_handler == h);
    raise(SIGPROF);
    printf("ran: %d\n", ran == SIGPROF);
  } else if (strcmp(what, "ownstack") == 0) {
    signal(SIGINT, h);
    pthread_attr_t at;
    pthread_attr_init(&at);
    size_t sz = 256 * 1024;
    pthread_attr_setstack(&at, aligned_alloc(4096, sz), sz);
    int ok = -1;
    pthread_t t;
    pthread_create(&t, &at, th, &ok);
    pthread_join(t, 0);
    printf("thread sees h: %d\n", ok);
  } else if (strcmp(what, "hfork") == 0) {
    sa.sa_handler = forker;
    sigaction(SIGALRM, &sa, 0);
    struct itimerval it = {{0, 0}, {0, 20000}};
    setitimer(ITIMER_REAL, &it, 0);
    ssize_t r = read(p[0], &c, 1);
    if (child == 0) _exit(r == -1 && errno == EINTR ? 5 : 6);
    int st;
    waitpid(child, &st, 0);
    printf("read %zd, child status %#x\n", r, st);
  } else if (strcmp(what, "altstack") == 0) {
    size_t size = 6144;
    char* mem = mmap(0, size + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(mem, 4096, PROT_NONE);
    stack_t ss = {.ss_sp = mem + 4096, .ss_size = size, .ss_flags = 0};
    if (sigaltstack(&ss, 0)) return 2;
    sa.sa_handler = stdio_h;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGALRM, &sa, 0);
    struct itimerval it = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_REAL, &it, 0);
    while (n < 5) (void)read(p[0], &c, 1);
    printf("handled %d\n", n);
  } else if (strcmp(what, "reaper") == 0) {
    if (pipe(wpipe) != 0) return 2;
    sa.sa_handler = reaper;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, 0);
    for (int i = 0; i < 20; i++)
      if (fork() == 0) {
        usleep(1000 * (i % 5));
        _exit(0);
      }
    ssize_t r;
    while ((r = read(wpipe[0], &c, 1)) < 0 && errno == EINTR) {
    }
    printf("reaped %d\n", reaped);
  }
  return 0;
}
C
if cc -O1 -pthread rev35.c -o rev35 2> /dev/null; then
  : > rev35.reaped
  for c in efault ownstack hfork altstack reaper; do
    ./rev35 "$c" > rev35.plain 2>&1
    pst=$?
    for how in default IORR_PATCH=0 IORR_PATCH=1 IORR_DISPATCH=0; do
      env "${how/default/IORR_X=}" timeout -k 5 60 "$iorr" record -o rev35.iorr -- ./rev35 "$c" \
        > rev35.out 2> rev35.rec
      st=$?
      what="a review's case of handler entries: $c ($how)"
      if [[ $st -ne $pst ]] || ! cmp -s rev35.plain rev35.out; then
        fail "$what: status $st ($pst unrecorded), output '$(head -c 120 rev35.out | tr '\n' '|')' ('$(head -c 120 rev35.plain | tr '\n' '|')')"
      elif [[ $c == altstack && $how != IORR_DISPATCH=0 ]] &&
        got=$("$iorr" dump rev35.iorr 2> /dev/null | grep -c 'openat(AT_FDCWD, "rev35.alt"' || :) &&
        noted=$("$iorr" stats rev35.iorr 2> /dev/null |
          sed -n 's/^note: escape: \([0-9]*\) signal handler runs inside a recorded call.*/\1/p') &&
        [[ $((got + ${noted:-0})) -lt 5 ]]; then
        # (the handler's stdio goes natively on so small a stack: noted, not silently missed)
        fail "$what: $got of 5 handler opens in the trace and ${noted:-no} unwatched runs noted"
      elif [[ $c == reaper && $how != IORR_DISPATCH=0 ]] &&
        got=$("$iorr" dump rev35.iorr 2> /dev/null | grep -c 'openat(AT_FDCWD, "rev35.reaped"' || :) &&
        lost=$(grep -o '[0-9]* events\? lost' rev35.rec | cut -d' ' -f1) &&
        { [[ $((got + ${lost:-0} / 2)) -ne 20 ]] || [[ $got -lt 15 ]]; }; then
        fail "$what: $got of 20 opens in the trace, ${lost:-0} calls counted as lost; $(tail -n 1 rev35.rec)"
      else
        ok "$what: as unrecorded ($(head -n 1 rev35.out))"
      fi
    done
  done
else
  fail "a review's case of handler entries: the test program does not build"
fi

# Handlers past the library's 256 entries run without one (the kernel holds them), so their
# libc calls inside a recorded call go natively: the trace notes how many were set so, as an
# escape, and the program runs as unrecorded (each handler set is the one that runs).
{
  echo '#include <signal.h>'
  echo '#include <stdio.h>'
  echo 'static volatile int ran;'
  for i in $(seq 0 299); do echo "static void h$i(int s) { (void)s; ran = $i; }"; done
  echo 'static void (*hs[300])(int) = {'
  for i in $(seq 0 299); do echo "  h$i,"; done
  echo '};'
  echo 'int main(void) {'
  echo '  int bad = 0;'
  echo '  for (int i = 0; i < 300; i++) {'
  echo '    signal(SIGUSR1, hs[i]);'
  echo '    raise(SIGUSR1);'
  echo '    if (ran != i) bad++;'
  echo '  }'
  echo '  printf("%d handlers, %d ran another\n", 300, bad);'
  echo '  return 0;'
  echo '}'
} > manyh.c
if cc -O1 manyh.c -o manyh 2> /dev/null; then
  ./manyh > manyh.plain 2>&1
  for how in default IORR_PATCH=0 IORR_PATCH=1; do
    env "${how/default/IORR_X=}" timeout -k 5 60 "$iorr" record -o manyh.iorr -- ./manyh \
      > manyh.out 2> manyh.rec
    st=$?
    noted=$("$iorr" stats manyh.iorr 2> /dev/null |
      sed -n 's/^note: escape: \([0-9]*\) signal handlers were set past.*/\1/p')
    what="handlers past the library's 256 entries ($how)"
    if [[ $st -ne 0 ]] || ! cmp -s manyh.plain manyh.out; then
      fail "$what: status $st, output '$(head -c 120 manyh.out)' ('$(head -c 120 manyh.plain)')"
    elif [[ $noted != 44 ]] || ! grep -q 'calls escaped the recorder' manyh.rec; then
      fail "$what: ${noted:-no} handlers noted as set without an entry (44 expected); $(tail -n 1 manyh.rec)"
    else
      ok "$what: as unrecorded, 44 noted"
    fi
  done
else
  fail "handlers past the library's 256 entries: the test program does not build"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
