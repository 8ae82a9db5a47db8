// ExtentSet: disjoint sector ranges [lo, hi) kept sorted, merged when they touch; the dirty
// data of a write-back cache. O(log n) per operation; nodes come from a pool owned by the set,
// so a set that has reached its working size never calls malloc. Not thread-safe.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <memory_resource>

namespace iorr::model {

class ExtentSet {
 public:
  ExtentSet() : map_(&pool_) {}
  ExtentSet(const ExtentSet&) = delete;
  ExtentSet& operator=(const ExtentSet&) = delete;

  // Makes room for n extents in the pool so that up to n never allocate. Call while empty.
  void Reserve(size_t n) {
    for (size_t i = 0; i < n; ++i) map_.emplace_hint(map_.end(), 2 * i, 2 * i + 1);
    map_.clear();  // the nodes go back to the pool, which keeps them
  }

  bool empty() const { return map_.empty(); }
  size_t extents() const { return map_.size(); }
  uint64_t sectors() const { return sectors_; }

  // Adds [lo, hi), merging with what it overlaps or touches. Returns the sectors newly covered.
  uint64_t Insert(uint64_t lo, uint64_t hi) {
    if (lo >= hi) return 0;
    uint64_t added = hi - lo;
    auto it = map_.upper_bound(lo);
    if (it != map_.begin()) {
      auto prev = std::prev(it);
      if (prev->second >= lo) it = prev;  // touches or overlaps from the left
    }
    // Absorb every extent that starts at or before hi.
    uint64_t new_lo = lo, new_hi = hi;
    auto first = it;
    while (it != map_.end() && it->first <= hi) {
      uint64_t a = it->first, b = it->second;
      uint64_t ov_lo = a > lo ? a : lo, ov_hi = b < hi ? b : hi;
      if (ov_hi > ov_lo) added -= ov_hi - ov_lo;
      if (a < new_lo) new_lo = a;
      if (b > new_hi) new_hi = b;
      ++it;
    }
    if (first != it && first->first == new_lo) {
      first->second = new_hi;  // keep the first node, drop the rest
      map_.erase(std::next(first), it);
    } else if (first != it) {
      auto rest = std::next(first);
      auto node = map_.extract(first);  // reuse a node: no allocation
      map_.erase(rest, it);
      node.key() = new_lo;
      node.mapped() = new_hi;
      map_.insert(it, std::move(node));
    } else {
      map_.emplace(new_lo, new_hi);
    }
    sectors_ += added;
    return added;
  }

  // Removes [lo, hi) from the set. Returns the sectors removed.
  uint64_t Erase(uint64_t lo, uint64_t hi) {
    if (lo >= hi || map_.empty()) return 0;
    uint64_t removed = 0;
    auto it = map_.upper_bound(lo);
    if (it != map_.begin() && std::prev(it)->second > lo) --it;
    while (it != map_.end() && it->first < hi) {
      uint64_t a = it->first, b = it->second;
      uint64_t ov_lo = a > lo ? a : lo, ov_hi = b < hi ? b : hi;
      removed += ov_hi - ov_lo;
      if (a < lo && b > hi) {  // split: keep [a, lo) here, [hi, b) in a new node
        it->second = lo;
        map_.emplace_hint(std::next(it), hi, b);
        break;
      }
      if (a < lo) {
        it->second = lo;
        ++it;
      } else if (b > hi) {
        auto node = map_.extract(it++);
        node.key() = hi;
        map_.insert(it, std::move(node));
        break;
      } else {
        it = map_.erase(it);
      }
    }
    sectors_ -= removed;
    return removed;
  }

  // True when [lo, hi) lies inside one extent.
  bool Covers(uint64_t lo, uint64_t hi) const {
    auto it = map_.upper_bound(lo);
    if (it == map_.begin()) return false;
    --it;
    return it->first <= lo && it->second >= hi;
  }

  // Circular-LOOK: takes up to max_sectors from the first extent starting at or after `from`
  // (wrapping to the lowest extent when there is none) and removes them. False when empty.
  bool TakeNext(uint64_t from, uint64_t max_sectors, uint64_t* lo, uint64_t* hi) {
    if (map_.empty()) return false;
    auto it = map_.lower_bound(from);
    if (it == map_.end()) it = map_.begin();
    *lo = it->first;
    uint64_t end = it->second;
    if (end - *lo > max_sectors) {
      *hi = *lo + max_sectors;
      auto node = map_.extract(it++);
      node.key() = *hi;
      map_.insert(it, std::move(node));
    } else {
      *hi = end;
      map_.erase(it);
    }
    sectors_ -= *hi - *lo;
    return true;
  }

 private:
  std::pmr::unsynchronized_pool_resource pool_;
  std::pmr::map<uint64_t, uint64_t> map_;
  uint64_t sectors_ = 0;
};

}  // namespace iorr::model
