// Ring: a double-ended FIFO of trivially copyable values in one power-of-two array. It grows
// (doubling) only when full, so a queue that has reached its working size never allocates
// again. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace iorr::model {

template <typename T>
class Ring {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  explicit Ring(size_t capacity = 16) {
    size_t n = 1;
    while (n < capacity) n <<= 1;
    buf_.resize(n);
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return buf_.size(); }

  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& operator[](size_t i) { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  const T& operator[](size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }

  void push_back(const T& v) {
    if (size_ == buf_.size()) Grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  void push_front(const T& v) {
    if (size_ == buf_.size()) Grow();
    head_ = (head_ + buf_.size() - 1) & (buf_.size() - 1);
    buf_[head_] = v;
    ++size_;
  }
  T pop_front() {
    T v = buf_[head_];
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
    return v;
  }
  // Removes element i (0 = front), keeping the order of the others. O(size).
  void erase(size_t i) {
    for (size_t k = i; k + 1 < size_; ++k) (*this)[k] = (*this)[k + 1];
    --size_;
  }
  void clear() { head_ = size_ = 0; }

 private:
  void Grow() {
    std::vector<T> bigger(buf_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    buf_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> buf_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace iorr::model
