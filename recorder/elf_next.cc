// See elf_next.h. The matching rules are glibc's (elf/dl-lookup.c, check_match and
// do_lookup_x) for a lookup without a version, as dlsym makes it (the newest, public one).
#include "recorder/elf_next.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

namespace iorr::recorder {
namespace {

struct Tables {
  const ElfW(Sym) * symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* gnu_hash = nullptr;
  const ElfW(Half) * versym = nullptr;
};

// The loader adjusts the dynamic section's addresses by the load bias in place where the
// section is writable (every object but the vDSO, which is passed over); an address below
// the bias is still an offset.
const void* At(const link_map* l, ElfW(Addr) p) {
  return reinterpret_cast<const void*>(p < l->l_addr ? p + l->l_addr : p);
}

bool TablesOf(const link_map* l, Tables* t) {
  if (l->l_ld == nullptr) return false;
  for (const ElfW(Dyn)* d = l->l_ld; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        t->symtab = static_cast<const ElfW(Sym)*>(At(l, d->d_un.d_ptr));
        break;
      case DT_STRTAB:
        t->strtab = static_cast<const char*>(At(l, d->d_un.d_ptr));
        break;
      case DT_GNU_HASH:
        t->gnu_hash = static_cast<const uint32_t*>(At(l, d->d_un.d_ptr));
        break;
      case DT_VERSYM:
        t->versym = static_cast<const ElfW(Half)*>(At(l, d->d_un.d_ptr));
        break;
      default:
        break;
    }
  }
  return t->symtab != nullptr && t->strtab != nullptr && t->gnu_hash != nullptr;
}

enum class Found { kNone, kPlain, kOther };

// The object's definition of name (hash: its GNU hash): kPlain with *sym for one dlsym would
// return as it is, kOther for one it would treat otherwise (or an ambiguity), kNone.
Found FindIn(const Tables& t, const char* name, uint32_t hash, const ElfW(Sym) * *sym) {
  const uint32_t nbuckets = t.gnu_hash[0], symoffset = t.gnu_hash[1];
  const uint32_t bloom_size = t.gnu_hash[2], bloom_shift = t.gnu_hash[3];
  if (nbuckets == 0 || bloom_size == 0) return Found::kNone;
  const auto* bloom = reinterpret_cast<const ElfW(Addr)*>(t.gnu_hash + 4);
  constexpr unsigned kBits = sizeof(ElfW(Addr)) * 8;
  ElfW(Addr) word = bloom[(hash / kBits) % bloom_size];
  ElfW(Addr) mask =
      (ElfW(Addr){1} << (hash % kBits)) | (ElfW(Addr){1} << ((hash >> bloom_shift) % kBits));
  if ((word & mask) != mask) return Found::kNone;
  const uint32_t* buckets = reinterpret_cast<const uint32_t*>(bloom + bloom_size);
  const uint32_t* chain = buckets + nbuckets;
  uint32_t idx = buckets[hash % nbuckets];
  if (idx < symoffset) return Found::kNone;
  const ElfW(Sym)* versioned = nullptr;
  int versions = 0;
  for (;; ++idx) {
    uint32_t h = chain[idx - symoffset];
    if ((h | 1) == (hash | 1) && strcmp(t.strtab + t.symtab[idx].st_name, name) == 0) {
      const ElfW(Sym)& s = t.symtab[idx];
      unsigned type = ELF64_ST_TYPE(s.st_info), bind = ELF64_ST_BIND(s.st_info);
      bool skip =
          (s.st_value == 0 && type != STT_TLS) || s.st_shndx == SHN_UNDEF || bind == STB_LOCAL;
      if (!skip) {
        if (type == STT_GNU_IFUNC || type == STT_TLS || bind == STB_GNU_UNIQUE ||
            (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE && type != STT_COMMON))
          return Found::kOther;
        ElfW(Half) v = t.versym ? t.versym[idx] : 0;
        if ((v & 0x7fff) < 2) {  // unversioned (local or global base): taken at once
          *sym = &s;
          return Found::kPlain;
        }
        if ((v & 0x8000) == 0 && versions++ == 0) versioned = &s;  // a hidden one is skipped
      }
    }
    if (h & 1) break;
  }
  if (versions > 1) return Found::kOther;
  if (versioned == nullptr) return Found::kNone;
  *sym = versioned;
  return Found::kPlain;
}

}  // namespace

bool NameEndsWith(const char* name, const char* tail) {
  size_t n = name ? strlen(name) : 0, m = strlen(tail);
  return n >= m && strcmp(name + n - m, tail) == 0;
}

// The walk runs inside a dl_iterate_phdr callback: dl_iterate_phdr holds the loader's list lock
// (dl_load_write_lock) while it calls back, and dlopen and dlclose take it to link and unlink
// an object (glibc 2.36 elf/dl-object.c, elf/dl-close.c), so another thread's dlclose cannot
// unmap an object under the walk (a constructor's thread, before this library's constructor).
// It stops at libc: the objects before it in the list were loaded at start-up (dlopen appends),
// and the loader never unloads those, so their tables stay readable for Find after the lock is
// released. Objects after libc only matter for names libc does not define, which Find leaves to
// dlsym anyway.
NextInLibc::NextInLibc(const link_map* self) {
  if (self == nullptr) return;
  struct Walk {
    NextInLibc* next;
    const link_map* self;
  } walk{this, self};
  dl_iterate_phdr(
      [](dl_phdr_info*, size_t, void* data) {
        auto* w = static_cast<Walk*>(data);
        w->next->Collect(w->self);
        return 1;  // once
      },
      &walk);
}

void NextInLibc::Collect(const link_map* self) {
  for (const link_map* l = self->l_next; l != nullptr; l = l->l_next) {
    if (NameEndsWith(l->l_name, "linux-vdso.so.1")) continue;
    Tables t;
    if (n_ == kMaxObjects || !TablesOf(l, &t)) return;  // one this lookup cannot read: dlsym's
    bool libc = NameEndsWith(l->l_name, "/libc.so.6");
    objects_[n_++] = {t.symtab, t.strtab, t.gnu_hash, t.versym, l->l_addr, libc};
    if (libc) {
      usable_ = true;
      return;
    }
  }
}

bool NextInLibc::Find(const char* name, void** out) const {
  if (!usable_ || name == nullptr) return false;
  uint32_t hash = 5381;  // the GNU hash (dl_new_hash)
  for (const unsigned char* c = reinterpret_cast<const unsigned char*>(name); *c; ++c)
    hash = hash * 33 + *c;
  for (int i = 0; i < n_; ++i) {
    const Object& o = objects_[i];
    Tables t;
    t.symtab = static_cast<const ElfW(Sym)*>(o.symtab);
    t.strtab = o.strtab;
    t.gnu_hash = o.gnu_hash;
    t.versym = o.versym;
    const ElfW(Sym)* sym = nullptr;
    Found f = FindIn(t, name, hash, &sym);
    if (f == Found::kNone) continue;
    if (f != Found::kPlain || !o.libc) return false;
    *out = reinterpret_cast<void*>(o.base + sym->st_value);
    return true;
  }
  return false;
}

bool LookupNextInLibc(const link_map* self, const char* name, void** out) {
  return NextInLibc(self).Find(name, out);
}

}  // namespace iorr::recorder
