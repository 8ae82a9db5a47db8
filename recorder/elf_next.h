// The real functions' addresses without dlsym's fixed costs: a lookup in the loaded objects'
// own GNU hash tables, for the library's constructor (ResolveAllReals in wrappers.cc).
#pragma once

#include <link.h>
#include <stdint.h>

namespace iorr::recorder {

// What dlsym(RTLD_NEXT, name) returns to code in `self`, when that is a definition in libc
// (the object whose file name is libc.so.6) and the answer is plain: the first object after
// `self` in the load order (the vDSO passed over: it is not in the search scope) that defines
// `name` is libc, and its definition is a function or object, not an indirect function
// (whose resolver dlsym runs), TLS or a unique symbol, with one default version at most.
// Returns true and sets *out then; false for every other case (a definition elsewhere first,
// none, an object without a GNU hash table), where the caller asks dlsym.
//
// Objects loaded at start-up come in the load order, which is the search order; objects a
// constructor dlopen'ed come after them, and after libc, where the walk stops (under the
// loader's list lock: elf_next.cc), so a libc definition is taken only where it is the first.
bool LookupNextInLibc(const link_map* self, const char* name, void** out);

// A loaded object's name ends with tail (a name may be null: false).
bool NameEndsWith(const char* name, const char* tail);

// The same for many names: the objects' tables are read once.
class NextInLibc {
 public:
  explicit NextInLibc(const link_map* self);
  bool Find(const char* name, void** out) const;

 private:
  struct Object {
    const void* symtab;
    const char* strtab;
    const uint32_t* gnu_hash;
    const uint16_t* versym;
    uintptr_t base;
    bool libc;
  };
  void Collect(const link_map* self);  // under the loader's list lock (elf_next.cc)

  static constexpr int kMaxObjects = 64;
  Object objects_[kMaxObjects];
  int n_ = 0;
  bool usable_ = false;  // every object from self to libc read (else Find always says no)
};

}  // namespace iorr::recorder
