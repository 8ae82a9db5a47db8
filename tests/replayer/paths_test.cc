// The replayer's path arithmetic: composing, normalising, splitting, pseudo file systems.
#include "replayer/paths.h"

#include <gtest/gtest.h>

namespace iorr::replay {
namespace {

TEST(ReplayPaths, ComposeMakesEverythingRootRelative) {
  EXPECT_EQ(Compose("home/u", "a/b"), "home/u/a/b");
  EXPECT_EQ(Compose("home/u", "/etc/passwd"), "etc/passwd");
  EXPECT_EQ(Compose("home/u", "///etc"), "etc");
  EXPECT_EQ(Compose("", "a"), "a");
  EXPECT_EQ(Compose("home", ""), "home");
  EXPECT_EQ(Compose("x", "/"), "");
}

TEST(ReplayPaths, NormalizeNeverClimbsAboveTheRoot) {
  EXPECT_EQ(Normalize("a/./b//c/"), "a/b/c");
  EXPECT_EQ(Normalize("a/b/../c"), "a/c");
  EXPECT_EQ(Normalize("../../../etc/passwd"), "etc/passwd");
  EXPECT_EQ(Normalize("a/../../.."), "");
  EXPECT_EQ(Normalize(""), "");
  EXPECT_EQ(Normalize("...//..a"), ".../..a");  // names that only look like dots
}

TEST(ReplayPaths, ParentAndLeaf) {
  EXPECT_EQ(Parent("a/b/c"), "a/b");
  EXPECT_EQ(Parent("a"), "");
  std::string dir, leaf;
  ASSERT_TRUE(SplitLeaf("a/b/c", &dir, &leaf));
  EXPECT_EQ(dir, "a/b");
  EXPECT_EQ(leaf, "c");
  ASSERT_TRUE(SplitLeaf("top/", &dir, &leaf));
  EXPECT_EQ(dir, "");
  EXPECT_EQ(leaf, "top");
  EXPECT_FALSE(SplitLeaf("a/..", &dir, &leaf));
  EXPECT_FALSE(SplitLeaf(".", &dir, &leaf));
  EXPECT_FALSE(SplitLeaf("", &dir, &leaf));
}

TEST(ReplayPaths, PseudoFileSystems) {
  EXPECT_TRUE(IsPseudo("proc/self/fd"));
  EXPECT_TRUE(IsPseudo("sys"));
  EXPECT_TRUE(IsPseudo("dev/null"));
  EXPECT_FALSE(IsPseudo("dev/shm/x"));
  EXPECT_FALSE(IsPseudo("dev/shm"));
  EXPECT_FALSE(IsPseudo("devices/x"));
  EXPECT_FALSE(IsPseudo("home/proc"));
}

}  // namespace
}  // namespace iorr::replay
