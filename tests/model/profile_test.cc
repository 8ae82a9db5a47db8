// Profiles: every shipped profile loads and says what model/profiles/README.md says; bad
// profiles give one-line errors naming the field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "model/hdd.h"
#include "model/raid0.h"
#include "model_test_util.h"

namespace iorr::model {
namespace {

using testing::LoadShipped;
using testing::ProfilePath;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The shipped profile `name` with `from` replaced by `to` (which must occur).
std::string Edited(const std::string& name, const std::string& from, const std::string& to) {
  std::string s = Slurp(ProfilePath(name));
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// The error ParseProfile gives for text (empty when it parses).
std::string ErrorOf(const std::string& text, const std::string& dir = "") {
  auto p = ParseProfile(text, "t.json", dir);
  if (p.ok()) return "";
  EXPECT_EQ(p.status().message().find('\n'), std::string::npos) << "one line";
  return p.status().message();
}

TEST(Profiles, ShippedProfilesLoadAndBuild) {
  for (const char* name :
       {"hdd-7200", "hdd-15k", "ssd-sata", "nvme-plp", "scsi-10k", "ide-7200", "raid0-6x-ide"}) {
    Profile p = LoadShipped(name);
    EXPECT_EQ(p.name, name);
    EXPECT_FALSE(p.description.empty()) << name;
    for (bool wc : {false, true}) {
      DeviceSettings s;
      s.write_cache = wc;
      auto d = MakeDevice(p, s);
      ASSERT_TRUE(d.ok()) << name << ": " << d.status().message();
      EXPECT_EQ(d.value()->write_cache(), wc);
      EXPECT_EQ(d.value()->name(), name);
    }
  }
}

TEST(Profiles, ShippedValuesAreTheDocumentedOnes) {
  Profile h = LoadShipped("hdd-7200");
  EXPECT_EQ(h.type, DeviceType::kHdd);
  EXPECT_EQ(h.hdd.capacity_gb, 500);
  EXPECT_EQ(h.hdd.average_seek_ms, 8.5);
  EXPECT_EQ(h.hdd.track_to_track_ms, 1.0);
  EXPECT_NEAR(30e3 / h.hdd.rpm, 4.17, 0.005);  // average rotational latency, ms
  EXPECT_EQ(h.hdd.outer_mb_per_s, 85);
  EXPECT_EQ(h.hdd.inner_mb_per_s, 45);
  EXPECT_EQ(h.hdd.cache_mib, 32);
  EXPECT_TRUE(h.hdd.write_cache);
  EXPECT_FALSE(LoadShipped("scsi-10k").hdd.write_cache);  // as shipped around 2002
  Profile ide = LoadShipped("ide-7200");
  EXPECT_TRUE(ide.hdd.write_cache);
  EXPECT_EQ(ide.hdd.queue_depth, 1u);
  Profile sata = LoadShipped("ssd-sata");
  EXPECT_FALSE(sata.ssd.power_loss_protection);
  EXPECT_GE(sata.ssd.flush_ms, 1);
  EXPECT_LE(sata.ssd.flush_ms, 10);
  Profile nvme = LoadShipped("nvme-plp");
  EXPECT_TRUE(nvme.ssd.power_loss_protection);
  EXPECT_LT(nvme.ssd.flush_ms, 0.01);
  Profile raid = LoadShipped("raid0-6x-ide");
  EXPECT_EQ(raid.type, DeviceType::kRaid0);
  EXPECT_EQ(raid.chunk_kib, 64u);
  ASSERT_EQ(raid.members.size(), 6u);
  for (const Profile& m : raid.members) EXPECT_EQ(m.name, "ide-7200");
  auto d = MakeDevice(raid, {});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.value()->capacity_sectors(), 6 * (80'000'000'000ull / 512 / 128 * 128));
}

TEST(Profiles, ErrorsNameTheField) {
  const std::string none;
  EXPECT_EQ(ErrorOf(Slurp(ProfilePath("hdd-7200"))), none);
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"rpm\"", "\"rmp\"")), "t.json: \"rmp\": unknown key");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"rpm\": 7200", "\"rpm\": 0")),
            "t.json: \"rpm\": must be > 0 (got 0)");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"track_to_track_ms\": 1.0", "\"track_to_track_ms\": -1")),
            "t.json: \"track_to_track_ms\": must be > 0 (got -1)");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"heads\": 4,", "")), "t.json: \"heads\": missing");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"heads\": 4", "\"heads\": 2.5")),
            "t.json: \"heads\": must be a whole number (got 2.5)");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"heads\": 4", "\"heads\": 0")),
            "t.json: \"heads\": must be >= 1 (got 0)");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"rpm\": 7200", "\"rpm\": \"7200\"")),
            "t.json: \"rpm\": must be a number");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"write_cache\": true", "\"write_cache\": 1")),
            "t.json: \"write_cache\": must be true or false");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"rpm\": 7200", "\"rpm\": 7200, \"rpm\": 7200")),
            "t.json: \"rpm\": given twice");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"inner_mb_per_s\": 45", "\"inner_mb_per_s\": 95")),
            "t.json: \"inner_mb_per_s\": must not exceed outer_mb_per_s (85, got 95)");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"full_stroke_ms\": 18.0", "\"full_stroke_ms\": 8")),
            "t.json: \"full_stroke_ms\": must be more than average_seek_ms (8.5, got 8)");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"type\": \"hdd\"", "\"type\": \"tape\"")),
            "t.json: \"type\": must be \"hdd\", \"ssd\" or \"raid0\" (got \"tape\")");
  EXPECT_EQ(ErrorOf(Edited("hdd-7200", "\"cache_mib\": 32", "\"cache_mib\": 0")),
            "t.json: \"write_cache\": is true but cache_mib holds no sector");
  EXPECT_EQ(ErrorOf(Edited("ssd-sata", "\"channels\": 8", "\"channels\": 0")),
            "t.json: \"channels\": must be >= 1 (got 0)");
  EXPECT_EQ(ErrorOf(Edited("ssd-sata", "\"flush_ms\": 2.0", "\"flush_ms\": -2")),
            "t.json: \"flush_ms\": must be >= 0 (got -2)");
  EXPECT_EQ(ErrorOf("[1, 2]"), "t.json: the profile must be a JSON object");
  EXPECT_EQ(ErrorOf("{\n  \"type\": \"hdd\",\n  \"name\" \"x\"\n}"),
            "t.json: line 3, column 10: expected ':'");
}

TEST(Profiles, SeekTimesMustFitTheCurve) {
  // An average close to the full stroke would need a seek curve that falls on long seeks.
  std::string e =
      ErrorOf(Edited("hdd-7200", "\"average_seek_ms\": 8.5", "\"average_seek_ms\": 16"));
  EXPECT_EQ(e.rfind("t.json: \"average_seek_ms\": 16 is more than ", 0), 0u) << e;
  EXPECT_NE(e.find("track_to_track_ms (1) and full_stroke_ms (18)"), std::string::npos) << e;
  e = ErrorOf(Edited("hdd-7200", "\"average_seek_ms\": 8.5", "\"average_seek_ms\": 3"));
  EXPECT_EQ(e.rfind("t.json: \"average_seek_ms\": 3 is less than ", 0), 0u) << e;
}

TEST(Profiles, RaidMembers) {
  std::string dir = std::string(IORR_SOURCE_DIR) + "/model/profiles";
  std::string hdd = Slurp(ProfilePath("hdd-7200"));
  std::string bad = Edited("hdd-7200", "\"rpm\": 7200", "\"rpm\": 0");
  auto raid = [](const std::string& members, const std::string& chunk = "64") {
    return "{\"type\": \"raid0\", \"name\": \"r\", \"chunk_kib\": " + chunk + ", \"members\": [" +
           members + "]}";
  };
  EXPECT_EQ(ErrorOf(raid("\"ide-7200\", " + hdd), dir), "");
  EXPECT_EQ(ErrorOf(raid("\"ide-7200\", " + bad), dir),
            "t.json: \"members[1].rpm\": must be > 0 (got 0)");
  EXPECT_EQ(ErrorOf(raid("\"ide-7200\""), dir),
            "t.json: \"members\": RAID 0 needs at least 2 (got 1)");
  EXPECT_EQ(ErrorOf(raid("\"ide-7200\", \"ide-7200\"", "6"), dir),
            "t.json: \"chunk_kib\": must be a multiple of 4 (got 6)");
  EXPECT_EQ(ErrorOf(raid("\"ide-7200\", \"../x\""), dir),
            "t.json: \"members[1]\": \"../x\" is not a profile name (letters, digits, '-', '_', "
            "'.')");
  EXPECT_EQ(ErrorOf(raid("\"ide-7200\", 7"), dir),
            "t.json: \"members[1]\": must be a JSON object or a profile name");
  std::string e = ErrorOf(raid("\"ide-7200\", \"nosuch\""), dir);
  EXPECT_EQ(e.rfind("t.json: \"members[1]\": " + dir + "/nosuch.json: cannot open", 0), 0u) << e;
  EXPECT_EQ(ErrorOf(raid("\"ide-7200\", \"ide-7200\"")),
            "t.json: \"members[0]\": profile \"ide-7200\" named, but there is no directory to "
            "find it in");

  // A member file with an error: the message names both.
  // One directory per process: two test runs at once (a build's and a clone's) rewrote each
  // other's files under a shared name.
  std::string tmp = ::testing::TempDir() + "iorr_profile_test." + std::to_string(getpid());
  ASSERT_EQ(system(("mkdir -p " + tmp).c_str()), 0);
  std::ofstream(tmp + "/broken.json") << bad;
  std::ofstream(tmp + "/loop.json") << raid("\"loop\", \"loop\"");
  EXPECT_EQ(ErrorOf(raid("\"broken\", \"broken\""), tmp),
            "t.json: \"members[0]\": broken.json: \"rpm\": must be > 0 (got 0)");
  e = ErrorOf(raid("\"loop\", \"loop\""), tmp);
  EXPECT_NE(e.find("nested deeper than 4 arrays"), std::string::npos) << e;
  auto loaded = LoadProfile(tmp + "/broken.json");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), "broken.json: \"rpm\": must be > 0 (got 0)");
  EXPECT_EQ(system(("rm -rf " + tmp).c_str()), 0);
}

TEST(Profiles, MissingFile) {
  auto p = LoadProfile("/nonexistent/x.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "/nonexistent/x.json: cannot open: No such file or directory");
}

}  // namespace
}  // namespace iorr::model
