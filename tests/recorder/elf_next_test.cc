// LookupNextInLibc (recorder/elf_next.h) against dlsym(RTLD_NEXT) itself, for every symbol
// libc defines, looked up from this executable (the first object of the search order): where
// the lookup answers, its answer must be dlsym's; and it must answer for nearly all of them.
#include "recorder/elf_next.h"

#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace iorr::recorder {
namespace {

const link_map* MapNamed(const char* tail) {
  for (const link_map* l = _r_debug.r_map; l != nullptr; l = l->l_next) {
    size_t n = l->l_name ? strlen(l->l_name) : 0, m = strlen(tail);
    if (n >= m && strcmp(l->l_name + n - m, tail) == 0) return l;
  }
  return nullptr;
}

// The names of the symbols libc defines, read from its dynamic symbol table (the number of
// symbols from its DT_HASH-less GNU hash table: the highest index in its chains, plus one).
std::vector<std::string> LibcNames(const link_map* libc) {
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* gnu = nullptr;
  auto at = [&](ElfW(Addr) p) {
    return reinterpret_cast<const void*>(p < libc->l_addr ? p + libc->l_addr : p);
  };
  for (const ElfW(Dyn)* d = libc->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB) symtab = static_cast<const ElfW(Sym)*>(at(d->d_un.d_ptr));
    if (d->d_tag == DT_STRTAB) strtab = static_cast<const char*>(at(d->d_un.d_ptr));
    if (d->d_tag == DT_GNU_HASH) gnu = static_cast<const uint32_t*>(at(d->d_un.d_ptr));
  }
  std::vector<std::string> names;
  if (symtab == nullptr || strtab == nullptr || gnu == nullptr) return names;
  uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
  const uint32_t* buckets = gnu + 4 + bloom_size * (sizeof(ElfW(Addr)) / 4);
  const uint32_t* chain = buckets + nbuckets;
  uint32_t last = 0;
  for (uint32_t b = 0; b < nbuckets; ++b) last = std::max(last, buckets[b]);
  if (last >= symoffset)
    while ((chain[last - symoffset] & 1) == 0) ++last;
  for (uint32_t i = 1; i <= last; ++i) {
    const ElfW(Sym)& s = symtab[i];
    if (s.st_shndx != SHN_UNDEF && s.st_name != 0) names.emplace_back(strtab + s.st_name);
  }
  return names;
}

TEST(ElfNext, AgreesWithDlsymOnEveryLibcSymbol) {
  const link_map* self = _r_debug.r_map;  // this executable
  const link_map* libc = MapNamed("/libc.so.6");
  ASSERT_NE(self, nullptr);
  ASSERT_NE(libc, nullptr);
  std::vector<std::string> names = LibcNames(libc);
  ASSERT_GT(names.size(), 1000u) << "libc's symbol table not read";
  size_t answered = 0, functions = 0;
  for (const std::string& name : names) {
    void* mine = nullptr;
    bool ok = LookupNextInLibc(self, name.c_str(), &mine);
    void* theirs = dlsym(RTLD_NEXT, name.c_str());
    if (ok) {
      ++answered;
      EXPECT_EQ(mine, theirs) << name;
    }
    if (theirs != nullptr) ++functions;
  }
  // The ones left to dlsym: indirect functions (memcpy and its kind), TLS, names another object
  // before libc defines too (libm's, libstdc++'s).
  EXPECT_GT(answered, functions * 8 / 10) << answered << " of " << functions;
  printf("answered %zu of the %zu names dlsym finds (%zu in libc's table)\n", answered, functions,
         names.size());
}

TEST(ElfNext, VersionedNamesGiveTheDefaultVersion) {
  const link_map* self = _r_debug.r_map;
  // Each has an older version beside the default one in glibc 2.36 (x86_64).
  for (const char* name : {"realpath", "posix_spawn", "pthread_cond_wait", "sched_setaffinity",
                           "glob64", "fmemopen"}) {
    void* mine = nullptr;
    void* theirs = dlsym(RTLD_NEXT, name);
    if (theirs == nullptr) continue;
    if (LookupNextInLibc(self, name, &mine)) {
      EXPECT_EQ(mine, theirs) << name;
    }
  }
}

TEST(ElfNext, LeavesToDlsymWhatItCannotAnswer) {
  const link_map* self = _r_debug.r_map;
  void* out = reinterpret_cast<void*>(1);
  EXPECT_FALSE(LookupNextInLibc(self, "iorr_no_such_symbol_anywhere", &out));
  EXPECT_FALSE(LookupNextInLibc(self, "memcpy", &out));  // an indirect function
  EXPECT_FALSE(LookupNextInLibc(nullptr, "read", &out));
  EXPECT_EQ(out, reinterpret_cast<void*>(1));
  // From libc itself, the next objects are after it: libc's own read is not found again.
  const link_map* libc = MapNamed("/libc.so.6");
  ASSERT_NE(libc, nullptr);
  EXPECT_FALSE(LookupNextInLibc(libc, "read", &out));
  // And from this executable, read is libc's.
  ASSERT_TRUE(LookupNextInLibc(self, "read", &out));
  EXPECT_EQ(out, dlsym(RTLD_NEXT, "read"));
}

// Another thread loading and unloading a library all the while (as a constructor's thread may
// while the recorder's constructor resolves its functions): the walk runs under the loader's
// list lock and stops at libc, so it never reads an object being unloaded, and the answers
// stay dlsym's. Walking the whole list unlocked read freed link maps and unmapped tables here.
TEST(ElfNext, WalksUnderTheLoadersLockWhileAnotherThreadUnloads) {
  const link_map* self = _r_debug.r_map;
  void* want = dlsym(RTLD_NEXT, "read");
  ASSERT_NE(want, nullptr);
  std::atomic<bool> stop{false};
  std::atomic<int> cycles{0};
  std::thread churn([&] {
    while (!stop.load()) {
      void* h = dlopen("libanl.so.1", RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) break;
      dlclose(h);
      cycles.fetch_add(1);
    }
  });
  // Walks until the other thread has unloaded the library 200 times (a fixed count of walks
  // could all be done before its first dlopen: CI), or 20 s.
  int wrong = 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int i = 0; i < 20000 || (cycles.load() < 200 && std::chrono::steady_clock::now() < until);
       ++i) {
    void* out = nullptr;
    if (!NextInLibc(self).Find("read", &out) || out != want) ++wrong;
  }
  stop.store(true);
  churn.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_GE(cycles.load(), 200) << "libanl.so.1 was not loaded and unloaded while the walks ran";
}

}  // namespace
}  // namespace iorr::recorder
