// NameTable (the file-system models' name index) against std::unordered_map under random
// inserts, lookups and erases, through growth and tombstone reuse.
#include "model/fs/name_table.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>

namespace iorr::model::fs {
namespace {

TEST(NameTable, FindsInsertsAndErases) {
  NameTable<int> t;
  EXPECT_EQ(t.Find(""), nullptr);
  auto [v, made] = t.TryEmplace("", 7);  // the empty name is a name (the root's parent)
  EXPECT_TRUE(made);
  EXPECT_EQ(*v, 7);
  EXPECT_FALSE(t.TryEmplace("", 8).second);
  EXPECT_EQ(*t.Find(""), 7);
  EXPECT_EQ(t.Find("/a"), nullptr);
  t.TryEmplace("/a", 1);
  EXPECT_TRUE(t.Erase("/a"));
  EXPECT_FALSE(t.Erase("/a"));
  EXPECT_EQ(t.Find("/a"), nullptr);
  EXPECT_EQ(t.size(), 1u);
}

TEST(NameTable, AgreesWithAnUnorderedMap) {
  std::mt19937_64 rng(42);
  NameTable<uint64_t> t;
  std::unordered_map<std::string, uint64_t> want;
  for (int i = 0; i < 400000; ++i) {
    // Few enough names that erased ones come back, many enough to grow the table.
    std::string name = "/dir" + std::to_string(rng() % 97) + "/f" + std::to_string(rng() % 3000);
    switch (rng() % 4) {
      case 0:
      case 1: {
        uint64_t v = rng();
        auto [slot, made] = t.TryEmplace(name, v);
        auto [it, wmade] = want.try_emplace(name, v);
        ASSERT_EQ(made, wmade) << name;
        ASSERT_EQ(*slot, it->second) << name;
        break;
      }
      case 2: {
        uint64_t* slot = t.Find(name);
        auto it = want.find(name);
        ASSERT_EQ(slot != nullptr, it != want.end()) << name;
        if (slot) {
          ASSERT_EQ(*slot, it->second);
        }
        break;
      }
      case 3:
        ASSERT_EQ(t.Erase(name), want.erase(name) == 1) << name;
        break;
    }
    ASSERT_EQ(t.size(), want.size());
  }
  for (const auto& [name, v] : want) ASSERT_EQ(*t.Find(name), v) << name;
}

}  // namespace
}  // namespace iorr::model::fs
