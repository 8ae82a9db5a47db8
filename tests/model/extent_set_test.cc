// ExtentSet (the HDD's dirty-data index) against a plain bitmap under random operations.
#include "model/extent_set.h"

#include <gtest/gtest.h>

#include <vector>

#include "model_test_util.h"

namespace iorr::model {
namespace {

TEST(ExtentSet, MergesSplitsAndSweeps) {
  ExtentSet s;
  EXPECT_EQ(s.Insert(10, 20), 10u);
  EXPECT_EQ(s.Insert(20, 30), 10u);  // touching: merged
  EXPECT_EQ(s.extents(), 1u);
  EXPECT_EQ(s.Insert(5, 25), 5u);  // overlapping
  EXPECT_EQ(s.extents(), 1u);
  EXPECT_TRUE(s.Covers(5, 30));
  EXPECT_FALSE(s.Covers(4, 30));
  EXPECT_EQ(s.Erase(12, 14), 2u);  // split
  EXPECT_EQ(s.extents(), 2u);
  EXPECT_EQ(s.sectors(), 23u);
  s.Insert(100, 200);
  uint64_t lo, hi;
  ASSERT_TRUE(s.TakeNext(50, 40, &lo, &hi));  // the next extent at or after 50, 40 at most
  EXPECT_EQ(lo, 100u);
  EXPECT_EQ(hi, 140u);
  ASSERT_TRUE(s.TakeNext(1000, 1000, &lo, &hi));  // nothing above: wraps to the lowest
  EXPECT_EQ(lo, 5u);
  EXPECT_EQ(hi, 12u);
}

TEST(ExtentSet, AgreesWithABitmap) {
  constexpr uint64_t kN = 2000;
  ExtentSet s;
  std::vector<bool> bits(kN);
  testing::Rng rng(9);
  for (int i = 0; i < 20000; ++i) {
    uint64_t a = rng.Next() % kN, len = 1 + rng.Next() % 40;
    uint64_t b = std::min(kN, a + len);
    uint64_t op = rng.Next() % 10;
    if (op < 6) {
      uint64_t fresh = 0;
      for (uint64_t k = a; k < b; ++k) fresh += !bits[k], bits[k] = true;
      ASSERT_EQ(s.Insert(a, b), fresh);
    } else if (op < 9) {
      uint64_t gone = 0;
      for (uint64_t k = a; k < b; ++k) gone += bits[k], bits[k] = false;
      ASSERT_EQ(s.Erase(a, b), gone);
    } else {
      uint64_t lo, hi;
      bool any = s.TakeNext(a, len, &lo, &hi);
      // Expected: the first run starting at or after a (a run start is a set bit whose left
      // neighbour is clear), else the first run.
      uint64_t start = kN;
      for (uint64_t k = a; k < kN && start == kN; ++k)
        if (bits[k] && (k == 0 || !bits[k - 1])) start = k;
      for (uint64_t k = 0; k < kN && start == kN; ++k)
        if (bits[k] && (k == 0 || !bits[k - 1])) start = k;
      ASSERT_EQ(any, start != kN);
      if (!any) continue;
      ASSERT_EQ(lo, start);
      uint64_t end = start;
      while (end < kN && bits[end] && end - start < len) ++end;
      ASSERT_EQ(hi, end);
      for (uint64_t k = lo; k < hi; ++k) bits[k] = false;
    }
    uint64_t count = 0, runs = 0;
    for (uint64_t k = 0; k < kN; ++k) {
      count += bits[k];
      runs += bits[k] && (k == 0 || !bits[k - 1]);
    }
    ASSERT_EQ(s.sectors(), count);
    ASSERT_EQ(s.extents(), runs);
  }
}

}  // namespace
}  // namespace iorr::model
