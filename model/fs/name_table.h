// A map from names (paths) to small values for the file-system models: open addressing with
// linear probing on a stored 64-bit hash, names copied into an arena freed in one go. A trace
// names hundreds of thousands of files; a node-based map spends its time on cache misses, in
// rehashing and in destroying its nodes. Not iterable: the models only look names up.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory_resource>
#include <string_view>
#include <utility>
#include <vector>

namespace iorr::model::fs {

template <typename V>
class NameTable {
 public:
  NameTable() : slots_(kInitialSlots) {}
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;

  // The value of `name`, or null.
  V* Find(std::string_view name) {
    uint64_t h = Hash(name);
    for (size_t i = h & Mask();; i = (i + 1) & Mask()) {
      Slot& s = slots_[i];
      if (s.name == nullptr) return nullptr;
      if (Matches(s, h, name)) return &s.value;
    }
  }

  // The value of `name`, inserted as `value` if it had none; second: whether it was inserted.
  std::pair<V*, bool> TryEmplace(std::string_view name, V value) {
    uint64_t h = Hash(name);
    Slot* reuse = nullptr;  // the first tombstone on the way
    size_t i = h & Mask();
    for (;; i = (i + 1) & Mask()) {
      Slot& s = slots_[i];
      if (s.name == nullptr) break;
      if (s.name == Tombstone()) {
        if (!reuse) reuse = &s;
      } else if (Matches(s, h, name)) {
        return {&s.value, false};
      }
    }
    if (!reuse) {
      if ((used_ + 1) * 10 > slots_.size() * 7) {  // load factor 0.7, tombstones included
        Grow();
        return TryEmplace(name, std::move(value));
      }
      reuse = &slots_[i];
      ++used_;
    }
    char* copy = static_cast<char*>(arena_.allocate(name.size() + 1, 1));  // "" needs an address
    std::memcpy(copy, name.data(), name.size());
    *reuse = Slot{h, copy, static_cast<uint32_t>(name.size()), std::move(value)};
    ++size_;
    return {&reuse->value, true};
  }

  // Removes `name`; false if it had no value.
  bool Erase(std::string_view name) {
    uint64_t h = Hash(name);
    for (size_t i = h & Mask();; i = (i + 1) & Mask()) {
      Slot& s = slots_[i];
      if (s.name == nullptr) return false;
      if (Matches(s, h, name)) {
        s.name = Tombstone();
        s.value = V{};
        --size_;
        return true;
      }
    }
  }

  size_t size() const { return size_; }

 private:
  static constexpr size_t kInitialSlots = 1024;  // a power of two
  struct Slot {
    uint64_t hash = 0;
    const char* name = nullptr;  // null: empty; Tombstone(): erased
    uint32_t len = 0;
    V value{};
  };
  static uint64_t Hash(std::string_view s) { return std::hash<std::string_view>()(s); }
  static const char* Tombstone() {
    static const char t = 0;
    return &t;
  }
  size_t Mask() const { return slots_.size() - 1; }
  static bool Matches(const Slot& s, uint64_t h, std::string_view name) {
    return s.hash == h && s.len == name.size() && s.name != Tombstone() &&
           std::memcmp(s.name, name.data(), name.size()) == 0;
  }
  void Grow() {  // doubles, or only drops the tombstones when they are most of it
    std::vector<Slot> old(size_ * 4 < slots_.size() ? slots_.size() : slots_.size() * 2);
    old.swap(slots_);
    used_ = 0;
    for (Slot& s : old) {
      if (s.name == nullptr || s.name == Tombstone()) continue;
      size_t i = s.hash & Mask();
      while (slots_[i].name != nullptr) i = (i + 1) & Mask();
      slots_[i] = std::move(s);
      ++used_;
    }
  }

  std::vector<Slot> slots_;
  size_t used_ = 0;  // slots not empty: live and tombstones
  size_t size_ = 0;  // live
  std::pmr::monotonic_buffer_resource arena_{1 << 20};
};

}  // namespace iorr::model::fs
