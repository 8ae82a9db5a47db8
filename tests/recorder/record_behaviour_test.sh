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
work=$(mktemp -d "${TMPDIR:-/tmp}/iorr-behaviour.XXXXXX")
cleanup() {
  mountpoint -q "$work/full" 2>/dev/null && umount "$work/full"
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
events() { "$iorr" stats --json "$1" | grep -o '"events":[0-9]*' | cut -d: -f2; }
# grep -q on a dump would close the pipe early (and pipefail would report it): dump to a file.
dump_has() { "$iorr" dump "$1" > "$1.txt" 2>&1 && grep -q -- "$2" "$1.txt"; }

# 1. env -i: the child sees exactly the environment it asked for, and is still recorded.
env -i sh -c 'env; ls / > /dev/null' | sort > plain.env
timeout 60 "$iorr" record -q -o env.iorr -- env -i sh -c 'env; ls / > /dev/null' | sort > rec.env
if ! cmp -s plain.env rec.env; then
  fail "env -i: the environment differs: $(diff plain.env rec.env | head -n 4 | tr '\n' ' ')"
elif ! dump_has env.iorr 'execve("/usr/bin/ls"'; then
  fail "env -i: the ls started from a scrubbed environment was not recorded"
elif ! dump_has env.iorr 'getdents64'; then
  fail "env -i: ls's calls are missing"
else
  ok "env -i: same environment, child recorded"
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
  elif ! grep -q "incomplete\|truncated\|lost" full.stats; then
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
libc.popen.restype = ctypes.c_void_p
f = libc.popen(b"echo popen > " + out.encode() + b".popen", b"r")
libc.pclose(ctypes.c_void_p(f))
PY
plain_st=$(python3 sys.py "$work/sys-plain")
rec_st=$(timeout 60 "$iorr" record -q -o sys.iorr -- python3 sys.py "$work/sys-rec")
"$iorr" dump sys.iorr > sys.dump 2> /dev/null
if [[ $plain_st == 3 && $rec_st == 3 ]] && cmp -s sys-plain.env sys-rec.env && [[ -f sys-rec.popen ]] &&
  [[ $(grep -c '^# note: escape .*spawned from inside libc' sys.dump) -ge 2 ]]; then
  ok "system() and popen() with a cleared environment: unchanged, and noted as escapes"
else
  fail "system()/popen() with a cleared environment: status $rec_st (plain $plain_st), env $(diff sys-plain.env sys-rec.env | head -n 3 | tr '\n' ' '), $(grep -c '^# note: escape' sys.dump) escape notes"
fi

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
if cc -O1 -pthread leave.c -o leave 2> /dev/null; then
  for how in pthread raw raw5; do
    rm -f leave.out
    ./leave $how > plain.stdout
    plain_st=$?
    for dispatch in 1 0; do
      rm -f leave.out
      # To a file: a process that never ends would hold a pipe open, and the test with it.
      IORR_DISPATCH=$dispatch timeout -k 5 20 "$iorr" record -q -o leave.iorr -- ./leave $how > leave.stdout
      st=$?
      pkill -KILL -x leave 2> /dev/null
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

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
