// Unit tests of trace_coverage's matching: the alignment against a reference LCS, what counts as
// missing, mismatched, extra and before main, and the exclusions (launcher, writer threads, the
// trace fd, what a launcher's child does before its execve), on small traces written with
// TraceWriter. Single-threaded.
#define IORR_TRACE_COVERAGE_NO_MAIN
#include "tests/recorder/trace_coverage.cc"

#include <gtest/gtest.h>
#include <unistd.h>

#include <random>

#include "traces/writer.h"

namespace iorr::coverage {
namespace {

Call C(CallId call, int64_t ret, bool ret_unknown = false) {
  Call c;
  c.call = call;
  c.ret = ret;
  c.ret_unknown = ret_unknown;
  return c;
}

Call Exec() {
  Call c = C(CallId::execve, 0);
  c.new_image = true;
  return c;
}

// Length of a longest common subsequence under Same(), by dynamic programming.
size_t ReferenceLcs(const std::vector<Call>& a, const std::vector<Call>& b) {
  std::vector<size_t> next(b.size() + 1, 0), row(b.size() + 1, 0);  // rows i + 1 and i
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;)
      row[j] = Same(a[i], b[j]) ? next[j + 1] + 1 : std::max(next[j], row[j + 1]);
    std::swap(row, next);
  }
  return next[0];
}

void ExpectValidMatches(const Matches& m, const std::vector<Call>& a, const std::vector<Call>& b) {
  for (size_t k = 0; k < m.size(); ++k) {
    ASSERT_LT(m[k].first, a.size());
    ASSERT_LT(m[k].second, b.size());
    EXPECT_TRUE(Same(a[m[k].first], b[m[k].second]));
    if (k) {
      EXPECT_LT(m[k - 1].first, m[k].first);
      EXPECT_LT(m[k - 1].second, m[k].second);
    }
  }
}

TEST(CoverageSame, CallAndResultMustAgreeUnlessStraceHadNoResult) {
  EXPECT_TRUE(Same(C(CallId::openat, 3), C(CallId::openat, 3)));
  EXPECT_FALSE(Same(C(CallId::openat, 3), C(CallId::openat, 4)));
  EXPECT_FALSE(Same(C(CallId::openat, 3), C(CallId::open, 3)));
  EXPECT_TRUE(Same(C(CallId::read, 0, true), C(CallId::read, -4)));
  EXPECT_FALSE(Same(C(CallId::read, 0, true), C(CallId::write, 0)));
}

TEST(CoverageAligner, FindsALongestCommonSubsequence) {
  std::mt19937 rng(7);
  const CallId kCalls[] = {CallId::openat, CallId::read, CallId::close};
  for (int round = 0; round < 400; ++round) {
    auto make = [&](size_t n) {
      std::vector<Call> v;
      for (size_t i = 0; i < n; ++i) v.push_back(C(kCalls[rng() % 3], rng() % 2, rng() % 10 == 0));
      return v;
    };
    std::vector<Call> a = make(rng() % 30), b = make(rng() % 30);
    if (round % 4 == 0) {  // mostly a subsequence: the case that matters
      b.clear();
      for (const Call& c : a)
        if (rng() % 8) b.push_back(C(c.call, c.ret));
    }
    Aligner aligner(a, b, UINT64_MAX);
    Matches m = aligner.Run();
    EXPECT_TRUE(aligner.exact());
    ExpectValidMatches(m, a, b);
    EXPECT_EQ(m.size(), ReferenceLcs(a, b)) << "round " << round;
  }
}

TEST(CoverageAligner, LargeNearlyEqualSequencesAreFast) {
  std::vector<Call> a, b;
  for (int i = 0; i < 200000; ++i) a.push_back(C(i % 3 ? CallId::read : CallId::write, i % 7));
  b = a;
  for (int i = 0; i < 100; ++i) b.erase(b.begin() + 1000 * i + 7);
  Aligner aligner(a, b, 400'000'000);
  Matches m = aligner.Run();
  EXPECT_TRUE(aligner.exact());
  EXPECT_EQ(m.size(), b.size());
}

TEST(CoverageAligner, PastTheBudgetASubsequenceIsStillExact) {
  // Read and write in turn, every tenth call lost, some extra calls that strace never saw.
  std::vector<Call> a, b;
  for (int i = 0; i < 20000; ++i) a.push_back(C(i % 2 ? CallId::write : CallId::read, 10240));
  for (size_t i = 0; i < a.size(); ++i) {
    if (i % 10 != 4) b.push_back(a[i]);
    if (i % 997 == 0) b.push_back(C(CallId::syncfs, 0));
  }
  Aligner aligner(a, b, 10);
  Matches m = aligner.Run();
  EXPECT_TRUE(aligner.exact());
  ExpectValidMatches(m, a, b);
  EXPECT_EQ(m.size(), 18000u);
}

TEST(CoverageAligner, PastTheBudgetAnchorsKeepItClose) {
  // Files opened, written in look-alike blocks and closed; every tenth call lost and some
  // calls recorded twice, so the recorded calls are no subsequence.
  std::mt19937 rng(3);
  std::vector<Call> a, b;
  for (int f = 0; f < 500; ++f) {
    a.push_back(C(CallId::openat, 4));
    a.back().detail = 1000 + f;  // its path
    for (int k = static_cast<int>(rng() % 12); k >= 0; --k) {
      a.push_back(C(CallId::read, 10240));
      a.push_back(C(CallId::write, k ? 10240 : 17 + f));
      a.back().detail = k ? 1 : 100000 + f;
    }
    a.push_back(C(CallId::close, 0));
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (i % 10 != 4) b.push_back(a[i]);
    if (i % 997 == 0) b.push_back(a[i]);
  }
  Aligner aligner(a, b, 1000);
  Matches m = aligner.Run();
  EXPECT_FALSE(aligner.exact());
  ExpectValidMatches(m, a, b);
  size_t best = ReferenceLcs(a, b);
  EXPECT_GE(m.size(), best - best / 200) << "best " << best;
}

TEST(CoverageThread, IdenticalIsComplete) {
  std::vector<Call> a = {C(CallId::openat, 3), C(CallId::read, 10), C(CallId::close, 0)};
  ThreadResult r = CompareThread(a, a);
  EXPECT_EQ(r.expected, 3u);
  EXPECT_EQ(r.matched, 3u);
  EXPECT_EQ(r.missing + r.extra + r.order_mismatches + r.return_mismatches, 0u);
}

TEST(CoverageThread, MissingBeforeTheFirstRecordedCallIsBeforeMain) {
  std::vector<Call> e = {C(CallId::openat, 3), C(CallId::mmap, 77), C(CallId::close, 0),
                         C(CallId::openat, 3), C(CallId::read, 5),  C(CallId::close, 0)};
  std::vector<Call> a = {C(CallId::openat, 3), C(CallId::close, 0)};  // read lost after main
  ThreadResult r = CompareThread(e, a);
  EXPECT_EQ(r.matched, 2u);
  EXPECT_EQ(r.missing, 4u);
  EXPECT_EQ(r.missing_before_main, 3u);
  EXPECT_TRUE(r.before_main[0] && r.before_main[1] && r.before_main[2]);
  EXPECT_FALSE(r.before_main[4]);
  EXPECT_EQ(r.expected_fate[4], Fate::kMissing);
}

TEST(CoverageThread, EachImageHasItsOwnMain) {
  // The recorder saw the old image and the execve, not the new image's loader.
  std::vector<Call> e = {C(CallId::write, 1),  Exec(),
                         C(CallId::openat, 3), C(CallId::close, 0),
                         C(CallId::openat, 4), C(CallId::write, 2)};
  std::vector<Call> a = {C(CallId::write, 1), Exec(), C(CallId::openat, 4), C(CallId::write, 2)};
  ThreadResult r = CompareThread(e, a);
  EXPECT_EQ(r.matched, 4u);
  EXPECT_EQ(r.missing, 2u);
  EXPECT_EQ(r.missing_before_main, 2u);
}

TEST(CoverageThread, UnseenThreadIsNotBeforeMain) {
  std::vector<Call> e = {C(CallId::openat, 3), C(CallId::close, 0)};
  ThreadResult r = CompareThread(e, {});
  EXPECT_EQ(r.missing, 2u);
  EXPECT_EQ(r.missing_before_main, 0u);
}

TEST(CoverageThread, ExtraCallsAreReportedNotFatal) {
  std::vector<Call> e = {C(CallId::openat, 3), C(CallId::close, 0)};
  std::vector<Call> a = {C(CallId::openat, 3), C(CallId::fstat, 0), C(CallId::close, 0)};
  ThreadResult r = CompareThread(e, a);
  EXPECT_EQ(r.matched, 2u);
  EXPECT_EQ(r.extra, 1u);
  EXPECT_EQ(r.actual_fate[1], Fate::kExtra);
}

TEST(CoverageThread, OtherResultInPlaceIsAReturnMismatch) {
  std::vector<Call> e = {C(CallId::openat, 3), C(CallId::read, 10), C(CallId::close, 0)};
  std::vector<Call> a = {C(CallId::openat, 3), C(CallId::read, 9), C(CallId::close, 0)};
  ThreadResult r = CompareThread(e, a);
  EXPECT_EQ(r.matched, 2u);
  EXPECT_EQ(r.return_mismatches, 1u);
  EXPECT_EQ(r.missing, 0u);
  EXPECT_EQ(r.extra, 0u);
  EXPECT_EQ(r.expected_partner[1], 1u);
}

TEST(CoverageThread, SwappedCallsAreAnOrderMismatch) {
  std::vector<Call> e = {C(CallId::openat, 3), C(CallId::fstat, 0), C(CallId::close, 0)};
  std::vector<Call> a = {C(CallId::fstat, 0), C(CallId::openat, 3), C(CallId::close, 0)};
  ThreadResult r = CompareThread(e, a);
  EXPECT_EQ(r.matched, 2u);
  EXPECT_EQ(r.order_mismatches, 1u);
  EXPECT_EQ(r.missing + r.extra + r.return_mismatches, 0u);
}

TEST(CoverageThread, OptionalCallsDoNotCount) {
  Call exec = Exec();
  exec.optional = true;
  std::vector<Call> e = {exec, C(CallId::openat, 3)};
  ThreadResult absent = CompareThread(e, {C(CallId::openat, 3)});
  EXPECT_EQ(absent.expected, 1u);
  EXPECT_EQ(absent.matched, 1u);
  EXPECT_EQ(absent.expected_fate[0], Fate::kOptionalAbsent);
  ThreadResult present = CompareThread(e, {Exec(), C(CallId::openat, 3)});
  EXPECT_EQ(present.expected, 1u);
  EXPECT_EQ(present.extra, 0u);
}

// ---- Whole traces ----

constexpr uint32_t kLauncher = 100, kChild = 101, kThread = 102, kWriter = 103;
constexpr int64_t kTraceFd = 1000, kShmFd = 999;

// An event at t us, with integer arguments by position.
trace::Event E(uint32_t pid, uint32_t tid, CallId call, int64_t t, int64_t ret,
               std::initializer_list<std::pair<int, int64_t>> ints = {}) {
  trace::Event e;
  e.call = call;
  e.pid = pid;
  e.tid = tid;
  e.start_ns = t * 1000;
  e.end_ns = e.start_ns + 1000;
  e.ret = ret;
  for (auto [i, v] : ints) e.args[i].i = v;
  return e;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/iorr_cov_" + std::to_string(getpid()) + "_" + name;
}

std::string Write(const std::string& name, const std::vector<trace::Event>& events,
                  std::vector<std::pair<std::string, std::string>> fields = {},
                  const std::vector<std::string>& notes = {}) {
  trace::Header h;
  for (auto& [k, v] : fields) h.Set(k, v);
  std::string path = TempPath(name);
  auto w = trace::TraceWriter::Create(path, h, trace::WriterOptions{});
  EXPECT_TRUE(w.ok()) << w.status().message();
  for (const trace::Event& e : events) EXPECT_TRUE((*w)->Add(e).ok());
  for (const std::string& n : notes) EXPECT_TRUE((*w)->AddNote(n).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

TraceData Load(const std::string& path) {
  auto t = LoadTrace(path);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(*t);
}

// What strace shows for `iorr record -- CMD` where CMD opens and reads a file from two threads.
std::vector<trace::Event> StraceEvents() {
  constexpr int64_t kCloneThread = 0x00010000 | 0x00000100;  // CLONE_THREAD|CLONE_VM
  return {
      E(kLauncher, kLauncher, CallId::execve, 1, 0),
      E(kLauncher, kLauncher, CallId::openat, 2, 3),        // the trace file
      E(kLauncher, kLauncher, CallId::memfd_create, 2, 4),  // the shared state
      E(kLauncher, kLauncher, CallId::fcntl, 2, kShmFd, {{0, 4}, {1, F_DUPFD}, {2, 990}}),
      E(kLauncher, kLauncher, CallId::close, 2, 0, {{0, 4}}),
      E(kLauncher, kLauncher, CallId::clone, 3, kChild, {{0, 17}}),  // SIGCHLD: a process
      E(kChild, kChild, CallId::dup2, 4, kTraceFd, {{0, 3}, {1, kTraceFd}}),
      E(kChild, kChild, CallId::close, 5, 0, {{0, 3}}),
      E(kChild, kChild, CallId::execve, 6, -2),                     // PATH search
      E(kChild, kChild, CallId::execve, 7, 0),                      // CMD
      E(kChild, kChild, CallId::mmap, 8, 0x7e0000, {{4, kShmFd}}),  // the library's
      E(kChild, kChild, CallId::openat, 8, 3),                      // the loader
      E(kChild, kChild, CallId::mmap, 9, 0x7f0000, {{4, 3}}),
      E(kChild, kChild, CallId::mmap, 10, 0x7f1000, {{4, -1}}),  // anonymous: not counted
      E(kChild, kChild, CallId::close, 11, 0, {{0, 3}}),
      E(kChild, kChild, CallId::clone, 12, kWriter, {{0, kCloneThread}}),
      E(kChild, kWriter, CallId::write, 13, 4096, {{0, kTraceFd}}),
      E(kChild, kChild, CallId::openat, 14, 3),  // main
      E(kChild, kChild, CallId::clone, 15, kThread, {{0, kCloneThread}}),
      E(kChild, kThread, CallId::read, 16, 10, {{0, 3}}),
      E(kChild, kThread, CallId::fstat, 17, 0, {{0, 3}}),
      E(kChild, kChild, CallId::read, 18, 5, {{0, 3}}),
      E(kChild, kChild, CallId::close_range, 19, 0, {{0, 3}, {1, kShmFd - 1}}),
      E(kChild, kChild, CallId::close_range, 20, 0, {{0, kTraceFd + 1}, {1, 0xffffffff}}),
      E(kChild, kChild, CallId::write, 21, 100, {{0, kTraceFd}}),  // the final flush
      E(kChild, kChild, CallId::exit_group, 22, 0),
  };
}

std::vector<trace::Event> RecordedEvents() {
  return {
      E(kChild, kChild, CallId::execve, 7, 0),
      E(kChild, kChild, CallId::openat, 14, 3),
      E(kChild, kThread, CallId::read, 16, 10, {{0, 3}}),
      E(kChild, kThread, CallId::fstat, 17, 0, {{0, 3}}),
      E(kChild, kChild, CallId::read, 18, 5, {{0, 3}}),
      E(kChild, kChild, CallId::close_range, 19, 0, {{0, 3}, {1, 0xffffffff}}),
  };
}

std::vector<std::pair<std::string, std::string>> RecordedFields() {
  return {{"recorder_pid", std::to_string(kLauncher)}, {"trace_fd", std::to_string(kTraceFd)}};
}

const std::vector<std::string> kWriterNote = {"writer-thread 101 103"};

TEST(CoverageCompare, LeavesOutTheRecordersOwnCalls) {
  TraceData s = Load(Write("s1", StraceEvents()));
  TraceData r = Load(Write("r1", RecordedEvents(), RecordedFields(), kWriterNote));
  Report rep = Compare(s, r, Options{});
  EXPECT_EQ(rep.recorder_pid, kLauncher);
  EXPECT_EQ(rep.writer_tids, std::set<uint32_t>{kWriter});
  EXPECT_EQ(rep.excluded_launcher, 4u);  // execve, openat, fcntl, close
  std::set<int64_t> fds = {kShmFd, kTraceFd};  // and the 16 above them: the library's range
  for (int64_t fd = kTraceFd + 1; fd <= kTraceFd + 16; ++fd) fds.insert(fd);
  EXPECT_EQ(rep.recorder_fds, fds);
  EXPECT_EQ(rep.excluded_before_exec, 3u);  // dup2, close, the failed execve
  EXPECT_EQ(rep.excluded_writer, 1u);
  EXPECT_EQ(rep.excluded_fds, 2u);  // the shared state's mmap, the final flush
  EXPECT_EQ(rep.merged_close_range, 1u);
  // child: loader openat, mmap, close, then openat, read, close_range; thread: read, fstat.
  EXPECT_EQ(rep.expected, 8u);
  EXPECT_EQ(rep.matched, 5u);
  EXPECT_EQ(rep.missing, 3u);
  EXPECT_EQ(rep.missing_before_main, 3u);
  EXPECT_EQ(rep.optional_matched, 1u);  // the execve of CMD
  EXPECT_EQ(rep.extra, 0u);
  EXPECT_EQ(ExitCode(rep, false), kExitIncomplete);
  EXPECT_EQ(CoverageLine(rep),
            "coverage: 5/8 (62.5%) file-system calls, 0 order/return mismatches, 0 extra");
}

TEST(CoverageCompare, CompleteWhenTheLoaderIsRecordedToo) {
  std::vector<trace::Event> rec = RecordedEvents();
  rec.insert(rec.begin() + 1, {E(kChild, kChild, CallId::openat, 8, 3),
                               E(kChild, kChild, CallId::mmap, 9, 0x7f0000, {{4, 3}}),
                               E(kChild, kChild, CallId::close, 11, 0, {{0, 3}})});
  rec.erase(rec.begin());  // without the execve of CMD: it is optional
  TraceData s = Load(Write("s2", StraceEvents()));
  TraceData r = Load(Write("r2", rec, RecordedFields(), kWriterNote));
  Report rep = Compare(s, r, Options{});
  EXPECT_EQ(rep.matched, 8u);
  EXPECT_EQ(rep.expected, 8u);
  EXPECT_EQ(ExitCode(rep, false), kExitComplete);
  EXPECT_EQ(CoverageLine(rep),
            "coverage: 8/8 (100.0%) file-system calls, 0 order/return mismatches, 0 extra");

  // A wrong result fails; an extra call is counted and does not.
  rec[4].ret = 4;  // the thread's read
  rec.push_back(E(kChild, kChild, CallId::fsync, 30, 0, {{0, 3}}));
  TraceData r2 = Load(Write("r3", rec, RecordedFields(), kWriterNote));
  Report bad = Compare(s, r2, Options{});
  EXPECT_EQ(bad.return_mismatches, 1u);
  EXPECT_EQ(bad.extra, 1u);
  EXPECT_EQ(ExitCode(bad, false), kExitIncomplete);
  EXPECT_EQ(CoverageLine(bad),
            "coverage: 7/8 (87.5%) file-system calls, 1 order/return mismatches, 1 extra");
}

TEST(CoverageCompare, WithoutTheWriterNoteItsWritesAreMissing) {
  TraceData s = Load(Write("s4", StraceEvents()));
  TraceData r = Load(Write("r4", RecordedEvents(), RecordedFields()));
  Report rep = Compare(s, r, Options{});
  // On the trace fd all the same: left out as the recorder's.
  EXPECT_EQ(rep.excluded_writer, 0u);
  EXPECT_EQ(rep.excluded_fds, 3u);
}

TEST(CoverageCompare, CallWithoutResultMatchesAnyResult) {
  std::vector<trace::Event> s = {E(7, 7, CallId::openat, 1, 3), E(7, 7, CallId::read, 2, 0)};
  s[1].end_ns = s[1].start_ns;  // strace's `= ?`
  std::vector<trace::Event> r = {E(7, 7, CallId::openat, 1, 3), E(7, 7, CallId::read, 2, -4)};
  Report rep =
      Compare(Load(Write("s5", s)), Load(Write("r5", r, {{"recorder_pid", "1"}})), Options{});
  EXPECT_EQ(rep.matched, 2u);
  EXPECT_EQ(ExitCode(rep, false), kExitComplete);
  EXPECT_EQ(rep.warnings.size(), 1u);  // no trace_fd
}

TEST(CoverageCompare, ModeResultsReadEitherWay) {
  // strace prints `umask(000) = 022`; read as decimal it is 22, the recorder has 022 = 18.
  std::vector<trace::Event> s = {E(7, 7, CallId::umask, 1, 22), E(7, 7, CallId::umask, 2, 18),
                                 E(7, 7, CallId::umask, 3, 0)};
  std::vector<trace::Event> r = {E(7, 7, CallId::umask, 1, 18), E(7, 7, CallId::umask, 2, 18),
                                 E(7, 7, CallId::umask, 3, 0)};
  Report rep = Compare(Load(Write("s9", s)), Load(Write("r9", r, RecordedFields())), Options{});
  EXPECT_EQ(rep.matched, 3u);
  r[2].ret = 8;  // 010 is no reading of 0
  Report bad = Compare(Load(Write("s9", s)), Load(Write("r10", r, RecordedFields())), Options{});
  EXPECT_EQ(bad.return_mismatches, 1u);
}

TEST(CoverageCompare, LoadingTheRecordersLibraryIsNotTheProgramsCall) {
  auto open = [](int64_t t, std::string_view path, int64_t ret) {
    trace::Event e = E(7, 7, CallId::openat, t, ret, {{0, -100}});
    e.args[1].s = path;
    return e;
  };
  std::vector<trace::Event> s = {open(1, "/b/lib/libiorr-preload.so", 3),
                                 E(7, 7, CallId::read, 2, 832, {{0, 3}}),
                                 E(7, 7, CallId::mmap, 3, 0x7f00, {{4, 3}}),
                                 E(7, 7, CallId::close, 4, 0, {{0, 3}}),
                                 open(5, "/lib/libc.so.6", 3),
                                 E(7, 7, CallId::read, 6, 832, {{0, 3}}),
                                 E(7, 7, CallId::close, 7, 0, {{0, 3}}),
                                 open(8, "data", 3)};
  std::vector<trace::Event> r = {open(8, "data", 3)};
  Report rep = Compare(Load(Write("s11", s)), Load(Write("r11", r, RecordedFields())), Options{});
  EXPECT_EQ(rep.excluded_library, 4u);
  EXPECT_EQ(rep.expected, 4u);
  EXPECT_EQ(rep.missing_before_main, 3u);
}

TEST(CoverageCompare, SameTraceIsComplete) {
  std::string path = Write("s6", StraceEvents());
  Report rep = Compare(Load(path), Load(path), Options{});
  EXPECT_EQ(rep.matched, rep.expected);
  EXPECT_EQ(rep.extra, 0u);
  EXPECT_EQ(ExitCode(rep, false), kExitComplete);
}

TEST(CoverageCompare, NothingToCompareIsNotComplete) {
  std::string path = Write("s7", {E(7, 7, CallId::exit_group, 1, 0)});
  Report rep = Compare(Load(path), Load(path), Options{});
  EXPECT_EQ(rep.expected, 0u);
  EXPECT_EQ(ExitCode(rep, false), kExitIncomplete);
}

TEST(CoverageLoad, ThreadsAreInStartOrderAndBadFilesFail) {
  TraceData t = Load(Write("s8", {E(5, 6, CallId::close, 3, 0), E(5, 5, CallId::openat, 1, 3),
                                  E(5, 6, CallId::openat, 2, 4)}));
  ASSERT_EQ(t.threads.size(), 2u);
  ASSERT_EQ(t.threads[6].size(), 2u);
  EXPECT_EQ(t.threads[6][0].e.call, CallId::openat);
  EXPECT_EQ(t.threads[6][0].text, "openat(0, \"\", O_RDONLY, 000) = 4");
  EXPECT_FALSE(LoadTrace(TempPath("does-not-exist")).ok());
  std::string junk = TempPath("junk");
  std::FILE* f = std::fopen(junk.c_str(), "w");
  std::fputs("not a trace\n", f);
  std::fclose(f);
  EXPECT_FALSE(LoadTrace(junk).ok());
}

TEST(CoveragePercent, NeverRoundsUpToComplete) {
  EXPECT_EQ(Percent(123, 125), "98.4%");
  EXPECT_EQ(Percent(9999, 10000), "99.9%");
  EXPECT_EQ(Percent(5, 5), "100.0%");
}

TEST(CoverageMain, ExitStatus) {
  std::string s = Write("s12", StraceEvents());
  std::string r = Write("r12", RecordedEvents(), RecordedFields(), kWriterNote);
  std::string missing = TempPath("does-not-exist");
  auto run = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return Main(static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(run({"trace_coverage", s, s}), kExitComplete);
  EXPECT_EQ(run({"trace_coverage", s, r, "--verbose"}), kExitIncomplete);
  EXPECT_EQ(run({"trace_coverage", s, missing}), kExitBadInput);
  EXPECT_EQ(run({"trace_coverage", s}), kExitBadInput);
  EXPECT_EQ(run({"trace_coverage", s, r, "--bogus"}), kExitBadInput);
}

}  // namespace
}  // namespace iorr::coverage
