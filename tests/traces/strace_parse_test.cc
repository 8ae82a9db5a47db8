// Tests for the strace log parser and the (compressed) line reader. Single-threaded.
#include "traces/strace_parse.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <boost/iostreams/filter/bzip2.hpp>
#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filter/lzma.hpp>
#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/filtering_stream.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace iorr::trace {
namespace {

using Kind = StraceRecord::Kind;

// A record with owned text, so that it outlives the parser's buffers.
struct Rec {
  Kind kind = Kind::kCall;
  uint32_t tid = 0;
  bool has_time = false;
  bool time_of_day = false;
  int64_t time_ns = 0;
  std::string name;
  std::vector<std::string> args;
  bool has_ret = false;
  int64_t ret = 0;
  std::string ret_fd_path;
  std::string err_name;
  std::string ret_note;
  bool has_duration = false;
  int64_t duration_ns = 0;
  bool never_resumed = false;
  int exit_status = 0;
  uint32_t execve_tid = 0;
  std::string text;
  uint64_t line_no = 0;
};

Rec Own(const StraceRecord& r) {
  Rec o;
  o.kind = r.kind;
  o.tid = r.tid;
  o.has_time = r.has_time;
  o.time_of_day = r.time_of_day;
  o.time_ns = r.time_ns;
  o.name = r.name;
  for (const StraceArg& a : r.args) o.args.emplace_back(a.text);
  o.has_ret = r.has_ret;
  o.ret = r.ret;
  o.ret_fd_path = r.ret_fd_path;
  o.err_name = r.err_name;
  o.ret_note = r.ret_note;
  o.has_duration = r.has_duration;
  o.duration_ns = r.duration_ns;
  o.never_resumed = r.unfinished_never_resumed;
  o.exit_status = r.exit_status;
  o.execve_tid = r.execve_tid;
  o.text = r.text;
  o.line_no = r.line_no;
  return o;
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    lines.emplace_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// Feeds every line, draining after each, then finishes.
std::vector<Rec> ParseLines(StraceParser& p, const std::vector<std::string>& lines) {
  std::vector<Rec> out;
  StraceRecord r;
  for (const std::string& line : lines) {
    p.Feed(line);
    while (p.Next(r)) out.push_back(Own(r));
  }
  p.Finish();
  while (p.Next(r)) out.push_back(Own(r));
  return out;
}

std::vector<Rec> Parse(std::string_view text, StraceParser* parser = nullptr) {
  StraceParser local;
  StraceParser& p = parser != nullptr ? *parser : local;
  std::vector<Rec> out = ParseLines(p, SplitLines(text));
  if (parser == nullptr) {
    for (const StraceParser::Error& e : p.first_errors()) {
      ADD_FAILURE() << "line " << e.line_no << ": " << e.reason << ": " << e.line;
    }
  }
  return out;
}

Rec ParseOne(std::string_view line) {
  std::vector<Rec> recs = Parse(line);
  EXPECT_EQ(recs.size(), 1u) << line;
  return recs.empty() ? Rec{} : recs[0];
}

// Real output of `strace -f -ttt -T -y -o LOG sh -c 'cat /etc/hostname > /dev/null; ...'`
// (strace 6.1), trimmed: two children, each vfork/execve/wait4 interleaved across tids.
constexpr std::string_view kRealLog =
    R"(3490  1796012969.799338 execve("/usr/bin/sh", ["sh", "-c", "cat /etc/hostname > /dev/null; l"...], 0x7ffe6b8efae0 /* 41 vars */) = 0 <0.000222>
3490  1796012969.799675 brk(NULL)       = 0x561176b56000 <0.000039>
3490  1796012969.803070 getrandom("\x60\xc4\xb9\x93\x3e\x82\x93\x71", 8, GRND_NONBLOCK) = 8 <0.000035>
3490  1796012969.803442 newfstatat(AT_FDCWD</tmp/sp>, "/tmp/sp", {st_mode=S_IFDIR|0755, st_size=4096, ...}, 0) = 0 <0.000041>
3490  1796012969.803878 rt_sigaction(SIGINT, {sa_handler=0x56114ecdfdc0, sa_mask=~[RTMIN RT_1], sa_flags=SA_RESTORER, sa_restorer=0x7ff576d15050}, NULL, 8) = 0 <0.000037>
3490  1796012969.804323 openat(AT_FDCWD</tmp/sp>, "/dev/null", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</dev/null> <0.000046>
3490  1796012969.804430 fcntl(1</tmp/bash_jobs.0/78e2420b7b92/stdout>, F_DUPFD, 10) = 11</tmp/bash_jobs.0/78e2420b7b92/stdout> <0.000038>
3490  1796012969.804903 newfstatat(AT_FDCWD</tmp/sp>, "/root/.cargo/bin/cat", 0x7fff0e354130, 0) = -1 ENOENT (No such file or directory) <0.000038>
3490  1796012969.805908 vfork( <unfinished ...>
3491  1796012969.806005 rt_sigprocmask(SIG_SETMASK, [], ~[KILL STOP RTMIN RT_1], 8) = 0 <0.000037>
3491  1796012969.806109 execve("/usr/bin/cat", ["cat", "/etc/hostname"], 0x561176b56e78 /* 41 vars */ <unfinished ...>
3490  1796012969.806210 <... vfork resumed>) = 3491 <0.000296>
3490  1796012969.806225 rt_sigprocmask(SIG_SETMASK, [], ~[KILL STOP RTMIN RT_1], 8) = 0 <0.000007>
3490  1796012969.806251 wait4(-1,  <unfinished ...>
3491  1796012969.806295 <... execve resumed>) = 0 <0.000174>
3491  1796012969.806786 access("/etc/ld.so.preload", R_OK) = -1 ENOENT (No such file or directory) <0.000042>
3491  1796012969.807382 read(3</usr/lib/x86_64-linux-gnu/libc.so.6>, "\177ELF\2\1\1\3\0\0\0\0\0\0\0\0\3\0>\0\1\0\0\0\20t\2\0\0\0\0\0"..., 832) = 832 <0.000037>
3491  1796012969.817830 exit_group(0)   = ?
3491  1796012969.818027 +++ exited with 0 +++
3490  1796012969.818034 <... wait4 resumed>[{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 3491 <0.011777>
3490  1796012969.818053 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=3491, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---
3490  1796012969.818070 rt_sigreturn({mask=[]}) = 3491 <0.000008>
3490  1796012969.818101 wait4(-1, 0x7fff0e3540bc, WNOHANG, NULL) = -1 ECHILD (No child processes) <0.000007>
3490  1796012969.833322 rt_sigsuspend([], 8 <unfinished ...>
3493  1796012969.856503 exit_group(0)   = ?
3493  1796012969.856697 +++ exited with 0 +++
3490  1796012969.856711 <... rt_sigsuspend resumed>) = ? ERESTARTNOHAND (To be restarted if no handler) <0.023381>
3490  1796012969.856724 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=3493, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---
3490  1796012969.856740 rt_sigreturn({mask=~[KILL STOP RTMIN RT_1]}) = -1 EINTR (Interrupted system call) <0.000008>
3490  1796012969.856863 exit_group(0)   = ?
3490  1796012969.856976 +++ exited with 0 +++)";

TEST(StraceParse, RealLogHasNoErrorsAndKeepsStartOrder) {
  StraceParser p;
  const std::vector<Rec> recs = Parse(kRealLog, &p);
  EXPECT_EQ(p.errors(), 0u);
  for (const StraceParser::Error& e : p.first_errors()) ADD_FAILURE() << e.reason << ": " << e.line;
  EXPECT_EQ(p.lines(), 31u);
  ASSERT_EQ(recs.size(), 27u);  // 31 lines, 4 of them resume lines
  for (size_t i = 1; i < recs.size(); ++i) EXPECT_LT(recs[i - 1].line_no, recs[i].line_no);

  const Rec& vfork = recs[8];
  EXPECT_EQ(vfork.name, "vfork");
  EXPECT_EQ(vfork.tid, 3490u);
  EXPECT_EQ(vfork.line_no, 9u);
  EXPECT_EQ(vfork.time_ns, 1796012969805908000);
  EXPECT_TRUE(vfork.has_ret);
  EXPECT_EQ(vfork.ret, 3491);
  EXPECT_EQ(vfork.duration_ns, 296000);
  EXPECT_TRUE(vfork.args.empty());

  const Rec& execve = recs[10];
  EXPECT_EQ(execve.name, "execve");
  EXPECT_EQ(execve.tid, 3491u);
  ASSERT_EQ(execve.args.size(), 3u);
  EXPECT_EQ(execve.args[1], R"(["cat", "/etc/hostname"])");
  EXPECT_EQ(execve.args[2], "0x561176b56e78 /* 41 vars */");
  EXPECT_EQ(execve.ret, 0);

  const Rec& wait4 = recs[12];
  EXPECT_EQ(wait4.name, "wait4");
  EXPECT_EQ(wait4.line_no, 14u);
  EXPECT_EQ(wait4.time_ns, 1796012969806251000);
  ASSERT_EQ(wait4.args.size(), 4u);
  EXPECT_EQ(wait4.args[0], "-1");
  EXPECT_EQ(wait4.args[1], "[{WIFEXITED(s) && WEXITSTATUS(s) == 0}]");
  EXPECT_EQ(wait4.args[3], "NULL");
  EXPECT_EQ(wait4.ret, 3491);
  EXPECT_EQ(wait4.duration_ns, 11777000);

  const Rec& exited = recs[16];
  EXPECT_EQ(exited.kind, Kind::kExited);
  EXPECT_EQ(exited.tid, 3491u);
  EXPECT_EQ(exited.exit_status, 0);

  const Rec& sigsuspend = recs[20];
  EXPECT_EQ(sigsuspend.name, "rt_sigsuspend");
  EXPECT_FALSE(sigsuspend.has_ret);
  EXPECT_EQ(sigsuspend.err_name, "ERESTARTNOHAND");
  EXPECT_EQ(sigsuspend.ret_note, "To be restarted if no handler");
  EXPECT_EQ(sigsuspend.args, (std::vector<std::string>{"[]", "8"}));
}

TEST(StraceParse, CompleteCallWithPidColumnAndEpochTime) {
  const Rec r =
      ParseOne(R"(12345 1700000000.123456 openat(AT_FDCWD, "a/b", O_RDONLY) = 3 <0.000012>)");
  EXPECT_EQ(r.kind, Kind::kCall);
  EXPECT_EQ(r.tid, 12345u);
  EXPECT_TRUE(r.has_time);
  EXPECT_FALSE(r.time_of_day);
  EXPECT_EQ(r.time_ns, 1700000000123456000);
  EXPECT_EQ(r.name, "openat");
  EXPECT_EQ(r.args, (std::vector<std::string>{"AT_FDCWD", "\"a/b\"", "O_RDONLY"}));
  EXPECT_TRUE(r.has_ret);
  EXPECT_EQ(r.ret, 3);
  EXPECT_TRUE(r.err_name.empty());
  EXPECT_TRUE(r.has_duration);
  EXPECT_EQ(r.duration_ns, 12000);
  EXPECT_FALSE(r.never_resumed);
  EXPECT_EQ(r.line_no, 1u);
}

TEST(StraceParse, ReturnValueShapes) {
  Rec r = ParseOne(
      R"(7 1.5 access("/etc/ld.so.preload", R_OK) = -1 ENOENT (No such file or directory) <0.000010>)");
  EXPECT_EQ(r.ret, -1);
  EXPECT_EQ(r.err_name, "ENOENT");
  EXPECT_EQ(r.ret_note, "No such file or directory");
  EXPECT_EQ(r.duration_ns, 10000);
  EXPECT_EQ(r.time_ns, 1500000000);

  r = ParseOne(
      "mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = "
      "0x7fc980845000");
  EXPECT_EQ(r.ret, 0x7fc980845000);
  EXPECT_FALSE(r.has_duration);
  EXPECT_FALSE(r.has_time);
  EXPECT_EQ(r.tid, 0u);
  EXPECT_EQ(r.args.size(), 6u);

  r = ParseOne("fcntl(3, F_GETFL) = 0x8000 (flags O_RDONLY|O_LARGEFILE)");
  EXPECT_EQ(r.ret, 0x8000);
  EXPECT_EQ(r.ret_note, "flags O_RDONLY|O_LARGEFILE");
  EXPECT_TRUE(r.err_name.empty());

  r = ParseOne("lseek(3, 0, SEEK_END) = 18446744073709551615");
  EXPECT_EQ(r.ret, -1);  // as its bits

  r = ParseOne("exit_group(0)                           = ?");
  EXPECT_FALSE(r.has_ret);
  EXPECT_EQ(r.args, std::vector<std::string>{"0"});

  r = ParseOne(
      "read(0, 0x7ffc, 10) = ? ERESTARTSYS (To be restarted if SA_RESTART is set) "
      "<1.000001>");
  EXPECT_FALSE(r.has_ret);
  EXPECT_EQ(r.err_name, "ERESTARTSYS");
  EXPECT_EQ(r.ret_note, "To be restarted if SA_RESTART is set");
  EXPECT_EQ(r.duration_ns, 1000001000);

  r = ParseOne("select(4, [3], NULL, NULL, {tv_sec=1, tv_usec=0}) = 0 (Timeout) <1.001>");
  EXPECT_EQ(r.ret, 0);
  EXPECT_EQ(r.ret_note, "Timeout");
  EXPECT_EQ(r.args.size(), 5u);

  r = ParseOne("poll([{fd=3, events=POLLIN}], 1, -1) = 1 ([{fd=3, revents=POLLIN}]) <0.000020>");
  EXPECT_EQ(r.ret, 1);
  EXPECT_EQ(r.ret_note, "[{fd=3, revents=POLLIN}]");
  EXPECT_EQ(r.args[0], "[{fd=3, events=POLLIN}]");

  r = ParseOne("futex(0x5556, FUTEX_WAIT_PRIVATE, 2, NULL) = ? <unavailable>");
  EXPECT_FALSE(r.has_ret);
  EXPECT_FALSE(r.has_duration);

  r = ParseOne(
      "openat(AT_FDCWD, \"/x\", O_RDONLY) = -1 ENOENT (No such file or directory) "
      "(INJECTED) <0.000001>");
  EXPECT_EQ(r.ret_note, "No such file or directory");
  EXPECT_TRUE(r.has_duration);

  r = ParseOne("getpid() = 42 <0.000001234>");  // --syscall-times=ns
  EXPECT_EQ(r.duration_ns, 1234);
  EXPECT_TRUE(r.args.empty());
}

TEST(StraceParse, NestedArgumentsSplitOnlyAtTopLevel) {
  Rec r = ParseOne(
      R"(execve("/usr/bin/tar", ["tar", "cf", "/tmp/x.tar", "a,b"], 0x7ffd670d0020 /* 41 vars */) = 0 <0.000727>)");
  ASSERT_EQ(r.args.size(), 3u);
  EXPECT_EQ(r.args[1], R"(["tar", "cf", "/tmp/x.tar", "a,b"])");
  EXPECT_EQ(r.args[2], "0x7ffd670d0020 /* 41 vars */");

  r = ParseOne(
      R"(newfstatat(AT_FDCWD, "/dev/sda1", {st_mode=S_IFBLK|0660, st_rdev=makedev(0x8, 0x1), ...}, 0) = 0)");
  ASSERT_EQ(r.args.size(), 4u);
  EXPECT_EQ(r.args[2], "{st_mode=S_IFBLK|0660, st_rdev=makedev(0x8, 0x1), ...}");

  r = ParseOne(R"(write(1, "a\"b\\c\n\x00\177 ) ] } ( [ { , \" <", 20) = 20)");
  ASSERT_EQ(r.args.size(), 3u);
  EXPECT_EQ(r.args[1], R"("a\"b\\c\n\x00\177 ) ] } ( [ { , \" <")");

  r = ParseOne(
      R"(read(3, "\177ELF\2\1\1\0\0\0\0\0\0\0\0\0\3\0>\0\1\0\0\0\0\0\0\0\0\0\0\0"..., 832) = 832)");
  ASSERT_EQ(r.args.size(), 3u);
  EXPECT_TRUE(r.args[1].ends_with("\"..."));
  EXPECT_EQ(r.args[2], "832");

  r = ParseOne(R"(getdents64(3, 0x55d1 /* 12 entries */, 32768) = 384)");
  EXPECT_EQ(r.args[1], "0x55d1 /* 12 entries */");

  r = ParseOne("restart_syscall(<... resuming interrupted read ...>) = 0");
  EXPECT_EQ(r.args, std::vector<std::string>{"<... resuming interrupted read ...>"});

  r = ParseOne(
      R"(accept4(3, {sa_family=AF_INET, sin_port=htons(22), sin_addr=inet_addr("10.0.0.1")}, [16 => 16], SOCK_CLOEXEC) = 4)");
  ASSERT_EQ(r.args.size(), 4u);
  EXPECT_EQ(r.args[2], "[16 => 16]");
}

TEST(StraceParse, FdPathsOfDashY) {
  Rec r = ParseOne(
      R"(openat(AT_FDCWD</tmp/sp>, "we,ird> <d/f\"x", O_RDONLY) = 3</tmp/sp/we,ird\76 \74d/f\"x> <0.000010>)");
  EXPECT_EQ(r.args,
            (std::vector<std::string>{"AT_FDCWD</tmp/sp>", R"("we,ird> <d/f\"x")", "O_RDONLY"}));
  EXPECT_EQ(r.ret, 3);
  EXPECT_EQ(r.ret_fd_path, R"(/tmp/sp/we,ird\76 \74d/f\"x)");
  EXPECT_EQ(UnescapeStraceText(r.ret_fd_path),
            std::optional<std::string>("/tmp/sp/we,ird> <d/f\"x"));
  EXPECT_EQ(r.duration_ns, 10000);

  r = ParseOne(R"(close(3</tmp/a,b (c)>) = 0)");
  EXPECT_EQ(r.args, std::vector<std::string>{"3</tmp/a,b (c)>"});

  // -yy: device numbers nest, a socket's "->" does not close the path.
  r = ParseOne(R"(openat(AT_FDCWD, "/dev/null", O_RDONLY) = 5</dev/null<char 1:3>> <0.000021>)");
  EXPECT_EQ(r.ret, 5);
  EXPECT_EQ(r.ret_fd_path, "/dev/null<char 1:3>");
  r = ParseOne(
      R"(sendto(4<TCP:[127.0.0.1:22->127.0.0.1:5555]>, "x,y", 3, 0, NULL, 0) = 3 <0.000005>)");
  ASSERT_EQ(r.args.size(), 6u);
  EXPECT_EQ(r.args[0], "4<TCP:[127.0.0.1:22->127.0.0.1:5555]>");
  r = ParseOne(
      R"(dup2(3</dev/null<char 1:3>>, 2</dev/pts/0<char 136:0>>) = 2</dev/pts/0<char 136:0>>)");
  EXPECT_EQ(r.args.size(), 2u);
  EXPECT_EQ(r.ret_fd_path, "/dev/pts/0<char 136:0>");
}

TEST(StraceParse, LinePrefixes) {
  // No pid column, -ttt.
  Rec r = ParseOne("1700000000.000001 close(3) = 0 <0.000001>");
  EXPECT_EQ(r.tid, 0u);
  EXPECT_EQ(r.time_ns, 1700000000000001000);
  // [pid N] of strace without -o; the pid is right-aligned.
  r = ParseOne("[pid  7214] 1700000000.5 close(3) = 0");
  EXPECT_EQ(r.tid, 7214u);
  EXPECT_EQ(r.time_ns, 1700000000500000000);
  r = ParseOne("[pid 99] close(3) = 0");
  EXPECT_EQ(r.tid, 99u);
  EXPECT_FALSE(r.has_time);
  // -tt: ns since midnight.
  r = ParseOne("4321  12:34:56.123456 close(3) = 0");
  EXPECT_EQ(r.tid, 4321u);
  EXPECT_TRUE(r.time_of_day);
  EXPECT_EQ(r.time_ns, ((12 * 60 + 34) * 60 + 56) * 1'000'000'000LL + 123456000);
  // -tt across midnight: the day goes on (it came out a day backwards until stop 30), while
  // threads' lines a little out of order stay as they are.
  std::vector<Rec> days = Parse(
      "7 23:59:59.999000 close(3) = 0\n8 23:59:59.998000 close(4) = 0\n"
      "7 00:00:00.001000 close(5) = 0\n7 23:59:59.999500 close(6) = 0\n");
  ASSERT_EQ(days.size(), 4u);
  constexpr int64_t kDay = 86'400'000'000'000;
  EXPECT_EQ(days[1].time_ns, days[0].time_ns - 1'000'000);
  EXPECT_EQ(days[2].time_ns, kDay + 1'000'000);
  EXPECT_EQ(days[3].time_ns, kDay - 500'000);  // (a line a little late stays on its side)
  // -t, without a pid column.
  r = ParseOne("04:35:30 close(3) = 0");
  EXPECT_EQ(r.tid, 0u);
  EXPECT_EQ(r.time_ns, ((4 * 60 + 35) * 60 + 30) * 1'000'000'000LL);
  // Pid column without timestamps.
  r = ParseOne("4321  close(3) = 0");
  EXPECT_EQ(r.tid, 4321u);
  EXPECT_FALSE(r.has_time);
  // No prefix at all; -ff files get their tid from the caller.
  StraceParser p;
  p.set_default_tid(555);
  const std::vector<Rec> recs = Parse("close(3) = 0\r", &p);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].tid, 555u);
  EXPECT_EQ(p.errors(), 0u);
}

TEST(StraceParse, ResumedArgumentsJoinWithOneSeparator) {
  const std::vector<Rec> recs = Parse(
      "1 read(0,  <unfinished ...>\n"
      "2 write(1, \"x\" <unfinished ...>\n"
      "3 rt_sigprocmask(SIG_SETMASK, [],  <unfinished ...>\n"
      "4 pread64(3,  <unfinished ...>\n"
      "5 vfork( <unfinished ...>\n"
      "1 <... read resumed>\"\", 0) = 0 <0.000050>\n"
      "2 <... write resumed>, 1) = 1\n"
      "3 <... rt_sigprocmask resumed>NULL, 8) = 0\n"
      "4 <... pread64 resumed>, \"ab\", 2, 0) = 2\n"
      "5 <... vfork resumed>) = 6\n");
  ASSERT_EQ(recs.size(), 5u);
  EXPECT_EQ(recs[0].args, (std::vector<std::string>{"0", "\"\"", "0"}));
  EXPECT_EQ(recs[0].duration_ns, 50000);
  EXPECT_EQ(recs[1].args, (std::vector<std::string>{"1", "\"x\"", "1"}));
  EXPECT_EQ(recs[2].args, (std::vector<std::string>{"SIG_SETMASK", "[]", "NULL", "8"}));
  EXPECT_EQ(recs[3].args, (std::vector<std::string>{"3", "\"ab\"", "2", "0"}));
  EXPECT_TRUE(recs[4].args.empty());
  EXPECT_EQ(recs[4].ret, 6);
  for (const Rec& r : recs) EXPECT_FALSE(r.never_resumed);
}

TEST(StraceParse, ThreadKilledInsideACall) {
  const std::vector<Rec> recs = Parse(
      "3612  1.0 clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, {tv_sec=301, tv_nsec=5},  "
      "<unfinished ...>\n"
      "3571  1.1 kill(3571, SIGKILL) = ?\n"
      "3612  1.2 <... clock_nanosleep resumed> <unfinished ...>) = ?\n"
      "3612  1.3 +++ killed by SIGKILL +++\n"
      "3571  1.4 +++ killed by SIGSEGV (core dumped) +++\n");
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0].name, "clock_nanosleep");
  EXPECT_EQ(recs[0].args.size(), 3u);
  EXPECT_FALSE(recs[0].has_ret);
  EXPECT_FALSE(recs[0].never_resumed);
  EXPECT_EQ(recs[2].kind, Kind::kKilled);
  EXPECT_EQ(recs[2].name, "SIGKILL");
  EXPECT_EQ(recs[2].text, "killed by SIGKILL");
  EXPECT_EQ(recs[3].name, "SIGSEGV");
  EXPECT_EQ(recs[3].text, "killed by SIGSEGV (core dumped)");
}

TEST(StraceParse, NeverResumedCalls) {
  const std::vector<Rec> recs = Parse(
      "10 1.0 read(3,  <unfinished ...>\n"
      "11 1.1 futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>\n"
      "10 1.2 +++ exited with 3 +++\n"
      "12 1.3 close(1) = 0\n"
      "12 1.4 openat(AT_FDCWD, \"/a\", O_RDONLY <unfinished ...>\n"
      "12 1.5 close(2) = 0\n");  // the same tid starting a new call: openat is lost
  ASSERT_EQ(recs.size(), 6u);
  EXPECT_EQ(recs[0].name, "read");
  EXPECT_TRUE(recs[0].never_resumed);
  EXPECT_FALSE(recs[0].has_ret);
  EXPECT_EQ(recs[0].args, std::vector<std::string>{"3"});
  EXPECT_EQ(recs[0].time_ns, 1000000000);
  EXPECT_EQ(recs[1].name, "futex");  // closed by Finish(), still in start order
  EXPECT_TRUE(recs[1].never_resumed);
  EXPECT_EQ(recs[1].args.size(), 4u);
  EXPECT_EQ(recs[2].kind, Kind::kExited);
  EXPECT_EQ(recs[2].exit_status, 3);
  EXPECT_EQ(recs[2].tid, 10u);
  EXPECT_EQ(recs[3].name, "close");
  EXPECT_EQ(recs[4].name, "openat");
  EXPECT_TRUE(recs[4].never_resumed);
  EXPECT_EQ(recs[4].args.size(), 3u);
  EXPECT_EQ(recs[5].name, "close");
}

TEST(StraceParse, ExecveInAThreadSupersedesTheLeader) {
  // Real strace 6.1 output of a thread calling execve while the main thread sleeps.
  const std::vector<Rec> recs = Parse(
      "3788  1796013072.525103 clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=0, tv_nsec=1000000},  "
      "<unfinished ...>\n"
      "3789  1796013072.525576 execve(\"/bin/true\", [\"/bin/true\"], 0x7ffeca3deef8 /* 41 vars */ "
      "<unfinished ...>\n"
      "3788  1796013072.525946 <... clock_nanosleep resumed> <unfinished ...>) = ?\n"
      "3788  1796013072.526306 +++ superseded by execve in pid 3789 +++\n"
      "3788  1796013072.526321 <... execve resumed>) = 0 <0.000713>\n"
      "3788  1796013072.527496 +++ exited with 0 +++\n");
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0].name, "clock_nanosleep");
  EXPECT_EQ(recs[0].tid, 3788u);
  EXPECT_FALSE(recs[0].has_ret);
  EXPECT_EQ(recs[1].name, "execve");
  EXPECT_EQ(recs[1].tid, 3789u);
  EXPECT_EQ(recs[1].ret, 0);
  EXPECT_EQ(recs[1].duration_ns, 713000);
  EXPECT_FALSE(recs[1].never_resumed);
  EXPECT_EQ(recs[2].kind, Kind::kSuperseded);
  EXPECT_EQ(recs[2].tid, 3788u);
  EXPECT_EQ(recs[2].execve_tid, 3789u);
  EXPECT_EQ(recs[3].kind, Kind::kExited);
}

TEST(StraceParse, SignalsAndExits) {
  const std::vector<Rec> recs = Parse(
      "3490  1796012969.818053 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=3491, "
      "si_uid=0, si_status=0, si_utime=0, si_stime=0} ---\n"
      "3490  1796012969.818060 --- stopped by SIGSTOP ---\n"
      "3491  1796012969.818027 +++ exited with 255 +++\n");
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].kind, Kind::kSignal);
  EXPECT_EQ(recs[0].name, "SIGCHLD");
  EXPECT_EQ(recs[0].tid, 3490u);
  EXPECT_EQ(recs[0].time_ns, 1796012969818053000);
  EXPECT_TRUE(recs[0].text.starts_with("SIGCHLD {si_signo=SIGCHLD"));
  EXPECT_TRUE(recs[0].args.empty());
  EXPECT_EQ(recs[1].kind, Kind::kSignal);
  EXPECT_EQ(recs[1].name, "SIGSTOP");
  EXPECT_EQ(recs[2].kind, Kind::kExited);
  EXPECT_EQ(recs[2].exit_status, 255);
  EXPECT_EQ(recs[2].text, "exited with 255");
}

TEST(StraceParse, LogWrittenToStderrWithoutDashO) {
  // strace -f -tt without -o: no prefix while one process is traced, strace's own messages
  // interleaved (even inside a line).
  StraceParser p;
  const std::vector<Rec> recs = Parse(
      "04:35:30.604891 rt_sigprocmask(SIG_SETMASK, ~[RTMIN RT_1], NULL, 8) = 0 <0.000006>\n"
      "04:35:30.604913 vfork(strace: Process 7214 attached\n"
      " <unfinished ...>\n"
      "[pid  7214] 04:35:30.605004 execve(\"/usr/bin/cat\", [\"cat\"], 0x55 /* 41 vars */ "
      "<unfinished ...>\n"
      "[pid  7213] 04:35:30.605141 <... vfork resumed>) = 7214 <0.000222>\n"
      "[pid  7213] 04:35:30.605178 wait4(-1,  <unfinished ...>\n"
      "[pid  7214] 04:35:30.605300 <... execve resumed>) = 0 <0.000174>\n"
      "[pid  7214] 04:35:30.612750 exit_group(0) = ?\n"
      "[pid  7214] 04:35:30.612863 +++ exited with 0 +++\n"
      "04:35:30.612868 <... wait4 resumed>[{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = "
      "7214 <0.007685>\n"
      "strace: Process 7213 detached\n",
      &p);
  EXPECT_EQ(p.errors(), 0u);
  for (const StraceParser::Error& e : p.first_errors()) ADD_FAILURE() << e.reason << ": " << e.line;
  EXPECT_EQ(p.strace_messages(), 2u);
  ASSERT_EQ(recs.size(), 6u);
  EXPECT_EQ(recs[0].tid, 0u);
  EXPECT_EQ(recs[1].name, "vfork");
  EXPECT_EQ(recs[1].line_no, 2u);
  EXPECT_EQ(recs[1].tid, 7213u);  // learnt from its resume line
  EXPECT_EQ(recs[1].ret, 7214);
  EXPECT_EQ(recs[2].name, "execve");
  EXPECT_EQ(recs[3].name, "wait4");
  EXPECT_EQ(recs[3].ret, 7214);  // resumed on an unprefixed line: the one live process
  EXPECT_EQ(recs[3].args.size(), 4u);
  EXPECT_EQ(recs[4].tid, 7214u);
  EXPECT_EQ(recs[5].kind, Kind::kExited);
}

TEST(StraceParse, GarbageIsCountedWithLineNumbers) {
  StraceParser p;
  const std::vector<Rec> recs = Parse(
      "1 1.0 close(3) = 0\n"
      "hello world\n"
      "\n"
      "1 1.1 close(3) = zero\n"
      "1 1.2 close(3 = 0\n"
      "1 1.3 close(3) = 0 <0.00x>\n"
      "1 1.4 close(3) = 0 trailing\n"
      "1 1.x close(3) = 0\n"
      "[pid 1 close(3) = 0\n"
      "1 1.5 <... close resumed>) = 0\n"
      "1 1.6 +++ exploded +++\n"
      "1 1.7 --- SIGCHLD {\n"
      "99999999999 close(3) = 0\n"
      "1 1.8 close(3) = 0\n",
      &p);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[1].line_no, 14u);
  EXPECT_EQ(p.lines(), 14u);
  EXPECT_EQ(p.errors(), 12u);
  ASSERT_EQ(p.first_errors().size(), 12u);
  std::vector<uint64_t> lines;
  for (const StraceParser::Error& e : p.first_errors()) {
    lines.push_back(e.line_no);
    EXPECT_FALSE(e.reason.empty());
  }
  EXPECT_EQ(lines, (std::vector<uint64_t>{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}));
  EXPECT_EQ(p.first_errors()[0].line, "hello world");
  EXPECT_EQ(p.first_errors()[8].reason,
            "resumed call without an unfinished one on this tid: close");
}

TEST(StraceParse, OnlyTheFirstTwentyErrorsAreKept) {
  StraceParser p;
  for (int i = 0; i < 100; ++i) p.Feed("junk");
  p.Finish();
  EXPECT_EQ(p.errors(), 100u);
  EXPECT_EQ(p.first_errors().size(), 20u);
  EXPECT_EQ(p.first_errors().back().line_no, 20u);
}

TEST(StraceParse, TruncatedFinalLine) {
  StraceParser p;
  std::vector<Rec> recs = Parse(
      "1 1.0 close(3) = 0 <0.000001>\n"
      "1 1.1 openat(AT_FDCWD, \"/usr/lib/x86_64-linux-gn",
      &p);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(p.errors(), 1u);
  ASSERT_EQ(p.first_errors().size(), 1u);
  EXPECT_EQ(p.first_errors()[0].line_no, 2u);
  EXPECT_EQ(p.first_errors()[0].reason, "unterminated string");

  // A resume line cut short: the call is kept as never resumed and the line is an error.
  StraceParser q;
  recs = Parse(
      "1 1.0 read(3,  <unfinished ...>\n"
      "1 1.1 <... read resumed>\"abc\\n\", 4",
      &q);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_TRUE(recs[0].never_resumed);
  EXPECT_EQ(recs[0].args, std::vector<std::string>{"3"});
  EXPECT_EQ(q.errors(), 1u);
  EXPECT_EQ(q.first_errors()[0].line_no, 2u);
}

TEST(StraceParse, RecordsStayValidUntilTheNextFeed) {
  StraceParser p;
  p.Feed("1 1.0 read(3,  <unfinished ...>");
  p.Feed(
      "2 1.1 openat(AT_FDCWD, \"/long/path/that/is/not/in/small/string/storage\", O_RDONLY) "
      "= 4");
  p.Feed("1 1.2 <... read resumed>\"data\", 4) = 4");  // releases both
  StraceRecord a, b;
  ASSERT_TRUE(p.Next(a));
  ASSERT_TRUE(p.Next(b));
  EXPECT_EQ(a.name, "read");
  EXPECT_EQ(a.args.size(), 3u);
  EXPECT_EQ(b.name, "openat");
  EXPECT_EQ(b.args[1].text, "\"/long/path/that/is/not/in/small/string/storage\"");
  StraceRecord c;
  EXPECT_FALSE(p.Next(c));
}

TEST(StraceParse, HeldRecordsAreBounded) {
  StraceParserOptions options;
  options.max_held = 4;
  StraceParser p(options);
  std::vector<std::string> lines = {"1 1.0 wait4(-1,  <unfinished ...>"};
  for (int i = 0; i < 10; ++i) lines.push_back("2 1.1 close(" + std::to_string(i) + ") = 0");
  lines.push_back("1 1.2 <... wait4 resumed>NULL, 0, NULL) = 2");
  StraceRecord r;
  size_t popped_before_resume = 0;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    p.Feed(lines[i]);
    while (p.Next(r)) ++popped_before_resume;
  }
  EXPECT_GE(popped_before_resume, 6u);  // the wait4 stopped holding the closes back
  p.Feed(lines.back());
  std::vector<Rec> rest;
  while (p.Next(r)) rest.push_back(Own(r));
  p.Finish();
  while (p.Next(r)) rest.push_back(Own(r));
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest.back().name, "wait4");
  EXPECT_EQ(rest.back().ret, 2);
  EXPECT_EQ(popped_before_resume + rest.size(), 11u);
}

TEST(StraceParse, HostileInputNeverCrashes) {
  StraceParser p;
  StraceRecord r;
  auto feed = [&](std::string_view line) {
    p.Feed(line);
    while (p.Next(r)) {
    }
  };
  // A 16 MB string argument, and a 16 MB unterminated one.
  const std::string big(16 << 20, 'x');
  feed("1 1.0 write(1, \"" + big + "\", 16777216) = 16777216 <0.1>");
  feed("1 1.0 write(1, \"" + big);
  // Deep and unbalanced nesting.
  feed("1 1.0 f(" + std::string(100000, '[') + std::string(100000, ']') + ") = 0");
  feed("1 1.0 f(" + std::string(1000, '{') + ") = 0");
  feed("1 1.0 f(}) = 0");
  feed("1 1.0 f(\"\\\") = 0");
  feed("1 1.0 f(/* never closed) = 0");
  feed("1 1.0 f(a) = 3</never closed");
  // Many fd-path-looking '<' that never close: must stay linear.
  std::string angles;
  for (int i = 0; i < 200000; ++i) angles += "a<";
  const auto start = std::chrono::steady_clock::now();
  feed("1 1.0 f(" + angles + ") = 0");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  // NUL bytes and binary junk.
  feed(std::string("1 1.0 close(\0) = 0", 18));
  feed(std::string("\0\0\0\0", 4));
  feed("\xff\xfe\x01\x02 ( ) = <");
  feed("<... ");
  feed("<... x resumed>");
  feed("+++ +++");
  feed("--- ---");
  feed("[pid ");
  feed("1 ");
  feed("1 1.");
  feed("1 12:");
  feed("1 99:99:99 close(3) = 0");
  feed("close(3) = -");
  feed("close(3) = 0x");
  feed("close(3) = 0x11112222333344445");
  feed("close(3) = 99999999999999999999999");
  feed("close(3) = 0 <");
  feed("close(3) = 0 <99999999999999999.1>");
  feed(" <unfinished ...>");
  feed("x( <unfinished ...>");
  feed("<... x resumed>) = 0");

  // Random mutations of real lines.
  const std::vector<std::string> seeds = SplitLines(kRealLog);
  std::mt19937 rng(12345);
  const std::string alphabet = "\"\\()[]{}<>,=?-+. /*0x1aZ\n\t\0\xff";
  for (int i = 0; i < 20000; ++i) {
    std::string line = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !line.empty(); ++e) {
      const size_t at = rng() % line.size();
      switch (rng() % 4) {
        case 0:
          line[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          line.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 2:
          line.erase(at, 1 + rng() % 8);
          break;
        default:
          line.resize(at);
          break;
      }
    }
    feed(line);
  }
  p.Finish();
  while (p.Next(r)) {
  }
  EXPECT_GT(p.errors(), 0u);
  EXPECT_LE(p.first_errors().size(), 20u);
  for (const StraceParser::Error& e : p.first_errors()) EXPECT_LE(e.line.size(), 512u);
}

TEST(StraceUnescape, Strings) {
  EXPECT_EQ(UnescapeStraceString(R"("plain")"), "plain");
  EXPECT_EQ(UnescapeStraceString(R"("")"), "");
  EXPECT_EQ(UnescapeStraceString(R"("a\"b\\c\n\t\r\v\f")"), "a\"b\\c\n\t\r\v\f");
  EXPECT_EQ(UnescapeStraceString(R"("\x00\177\x41\0\1a\377")"), std::string("\0\177A\0\1a\377", 7));
  EXPECT_EQ(UnescapeStraceString(R"("\1234")"), "S4");  // octal takes at most three digits
  bool truncated = false;
  EXPECT_EQ(UnescapeStraceString(R"("\177ELF\2\1"...)", &truncated), "\177ELF\2\1");
  EXPECT_TRUE(truncated);
  EXPECT_EQ(UnescapeStraceString(R"("x")", &truncated), "x");
  EXPECT_FALSE(truncated);

  EXPECT_EQ(UnescapeStraceString(""), std::nullopt);
  EXPECT_EQ(UnescapeStraceString("NULL"), std::nullopt);
  EXPECT_EQ(UnescapeStraceString("\""), std::nullopt);
  EXPECT_EQ(UnescapeStraceString(R"("abc)"), std::nullopt);
  EXPECT_EQ(UnescapeStraceString(R"("abc\")"), std::nullopt);
  EXPECT_EQ(UnescapeStraceString(R"("a"b")"), std::nullopt);
  EXPECT_EQ(UnescapeStraceString(R"("a"..)"), std::nullopt);
  EXPECT_EQ(UnescapeStraceString(R"("\q")"), std::nullopt);
  EXPECT_EQ(UnescapeStraceString(R"("\x")"), std::nullopt);
  EXPECT_EQ(UnescapeStraceString(R"("\400")"), std::nullopt);

  EXPECT_EQ(UnescapeStraceText(R"(/tmp/a\76b \74c\\d)"), "/tmp/a>b <c\\d");
  EXPECT_EQ(UnescapeStraceText("trailing\\"), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
// LineSource

class LineSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "strace_parse_test.XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  static std::string Content() {
    std::string s(kRealLog);
    s += '\n';
    for (int i = 0; i < 20000; ++i) {
      s += std::to_string(100 + i % 7) + "  1700000000." + std::to_string(100000 + i) + " close(" +
           std::to_string(i) + ") = 0 <0.000001>\n";
    }
    return s;
  }

  template <typename Compressor>
  void WriteCompressed(const std::string& path, const std::string& data, Compressor c) {
    std::ofstream file(path, std::ios::binary);
    boost::iostreams::filtering_ostream out;
    out.push(c);
    out.push(file);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.reset();
  }

  static void WritePlain(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary)
        .write(data.data(), static_cast<std::streamsize>(data.size()));
  }

  static std::vector<std::string> ReadAll(const std::string& path, std::string* error,
                                          bool* failed = nullptr) {
    std::vector<std::string> lines;
    std::unique_ptr<LineSource> src = LineSource::Open(path, error);
    if (src == nullptr) return lines;
    std::string_view line;
    while (src->Next(line)) lines.emplace_back(line);
    if (failed != nullptr) *failed = src->failed();
    if (src->failed()) *error = src->error();
    return lines;
  }

  std::filesystem::path dir_;
};

TEST_F(LineSourceTest, ReadsEveryFormat) {
  const std::string data = Content();
  const std::vector<std::string> expected = SplitLines(data);
  WritePlain(Path("log"), data);
  WriteCompressed(Path("log.gz"), data, boost::iostreams::gzip_compressor());
  WriteCompressed(Path("log.xz"), data, boost::iostreams::lzma_compressor());
  WriteCompressed(Path("log.bz2"), data, boost::iostreams::bzip2_compressor());
  WriteCompressed(Path("log.zst"), data, boost::iostreams::zstd_compressor());
  // Found by magic bytes, whatever the name says.
  WriteCompressed(Path("zstd-named.log"), data, boost::iostreams::zstd_compressor());
  for (const char* name : {"log", "log.gz", "log.xz", "log.bz2", "log.zst", "zstd-named.log"}) {
    std::string error;
    bool failed = true;
    const std::vector<std::string> lines = ReadAll(Path(name), &error, &failed);
    EXPECT_FALSE(failed) << name << ": " << error;
    EXPECT_EQ(lines.size(), expected.size()) << name;
    EXPECT_TRUE(lines == expected) << name;

    StraceParser p;
    std::vector<Rec> recs = ParseLines(p, lines);
    EXPECT_EQ(p.errors(), 0u) << name;
    EXPECT_EQ(recs.size(), 27u + 20000u) << name;
  }
}

TEST_F(LineSourceTest, CompressedWithTheCommandLineTools) {
  const std::string data = Content();
  WritePlain(Path("log"), data);
  const std::vector<std::string> expected = SplitLines(data);
  int tried = 0;
  for (const char* tool : {"gzip", "xz", "bzip2", "zstd"}) {
    const std::string cmd = std::string("command -v ") + tool + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) continue;
    const std::string out = Path(std::string("tool.") + tool);
    // Two compressed members back to back, as `cat a.gz b.gz` or an appended log makes.
    const std::string make = std::string(tool) + " -c " + Path("log") + " > " + out + " && " +
                             tool + " -c " + Path("log") + " >> " + out;
    ASSERT_EQ(std::system(make.c_str()), 0) << make;
    std::string error;
    bool failed = true;
    const std::vector<std::string> lines = ReadAll(out, &error, &failed);
    EXPECT_FALSE(failed) << tool << ": " << error;
    ASSERT_EQ(lines.size(), 2 * expected.size()) << tool;
    EXPECT_EQ(lines.front(), expected.front()) << tool;
    EXPECT_EQ(lines.back(), expected.back()) << tool;
    ++tried;
  }
  if (tried == 0) GTEST_SKIP() << "no gzip, xz, bzip2 or zstd binary";
}

TEST_F(LineSourceTest, LineEndingsAndLongLines) {
  const std::string long_line(3 << 20, 'y');  // longer than the initial buffer
  WritePlain(Path("log"), "a\n\nb\r\n" + long_line + "\nlast without newline");
  std::string error;
  const std::vector<std::string> lines = ReadAll(Path("log"), &error);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "", "b\r", long_line, "last without newline"}));

  WritePlain(Path("empty"), "");
  EXPECT_TRUE(ReadAll(Path("empty"), &error).empty());
  WritePlain(Path("short"), "x");
  EXPECT_EQ(ReadAll(Path("short"), &error), std::vector<std::string>{"x"});
}

TEST_F(LineSourceTest, ReadsStdin) {
  WriteCompressed(Path("log.gz"), std::string("one\ntwo\n"), boost::iostreams::gzip_compressor());
  const int saved = dup(STDIN_FILENO);
  ASSERT_GE(saved, 0);
  const int fd = open(Path("log.gz").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(dup2(fd, STDIN_FILENO), STDIN_FILENO);
  close(fd);
  std::string error;
  const std::vector<std::string> lines = ReadAll("-", &error);
  dup2(saved, STDIN_FILENO);
  close(saved);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
}

TEST_F(LineSourceTest, ReportsMissingAndBrokenFiles) {
  std::string error;
  EXPECT_EQ(LineSource::Open(Path("missing"), &error), nullptr);
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
  error.clear();
  EXPECT_EQ(LineSource::Open(dir_.string(), &error), nullptr);
  EXPECT_NE(error.find("directory"), std::string::npos) << error;

  if (geteuid() != 0) {
    WritePlain(Path("secret"), "x\n");
    std::filesystem::permissions(Path("secret"), std::filesystem::perms::none);
    error.clear();
    EXPECT_EQ(LineSource::Open(Path("secret"), &error), nullptr);
    EXPECT_NE(error.find("Permission denied"), std::string::npos) << error;
  }

  // A truncated gzip stream and a corrupted xz stream are errors, after the lines before them.
  const std::string data = Content();
  WriteCompressed(Path("full.gz"), data, boost::iostreams::gzip_compressor());
  std::string gz;
  {
    std::ifstream in(Path("full.gz"), std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(in), {});
  }
  WritePlain(Path("cut.gz"), gz.substr(0, gz.size() / 2));
  bool failed = false;
  error.clear();
  std::vector<std::string> lines = ReadAll(Path("cut.gz"), &error, &failed);
  EXPECT_TRUE(failed);
  EXPECT_NE(error.find("gzip"), std::string::npos) << error;
  EXPECT_LT(lines.size(), SplitLines(data).size());

  WriteCompressed(Path("full.xz"), data, boost::iostreams::lzma_compressor());
  std::string xz;
  {
    std::ifstream in(Path("full.xz"), std::ios::binary);
    xz.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (size_t i = 64; i < xz.size(); i += 97) xz[i] = static_cast<char>(xz[i] ^ 0x5a);
  WritePlain(Path("bad.xz"), xz);
  failed = false;
  ReadAll(Path("bad.xz"), &error, &failed);
  EXPECT_TRUE(failed);
  EXPECT_NE(error.find("xz"), std::string::npos) << error;

  // A zstd stream cut in the middle of its frame: Boost's own zstd filter took it for a whole one
  // (the lines before the cut, and no error); the whole stream still reads.
  WriteCompressed(Path("full.zst"), data, boost::iostreams::zstd_compressor());
  std::string zst;
  {
    std::ifstream in(Path("full.zst"), std::ios::binary);
    zst.assign(std::istreambuf_iterator<char>(in), {});
  }
  WritePlain(Path("cut.zst"), zst.substr(0, zst.size() / 2));
  failed = false;
  error.clear();
  lines = ReadAll(Path("cut.zst"), &error, &failed);
  EXPECT_TRUE(failed);
  EXPECT_NE(error.find("zstd"), std::string::npos) << error;
  EXPECT_LT(lines.size(), SplitLines(data).size());
  failed = false;
  error.clear();
  EXPECT_EQ(ReadAll(Path("full.zst"), &error, &failed), SplitLines(data)) << error;
  EXPECT_FALSE(failed);

  // Named .gz but not gzip at all.
  WritePlain(Path("plain.gz"), "close(3) = 0\n");
  failed = false;
  ReadAll(Path("plain.gz"), &error, &failed);
  EXPECT_TRUE(failed);
}

}  // namespace
}  // namespace iorr::trace
