// Issue 8, F5: two mounted copies of one image (same filesystem UUID, as VM
// images and snapshots have) are two filesystems. trimd tracks and trims
// both, each with a state record of its own.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <string>

#include <toml++/toml.h>

#include "loopfs.hpp"
#include "trimd_process.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* kConfig = R"([idle]
window = "1s"
sample_interval = "200ms"

[trim]
chunk_size = "32MiB"
pause = "0s"
)";

// id -> (mount point, last result) of every record in the state file.
std::map<std::string, std::pair<std::string, std::string>> state_records(const std::string& file) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  const toml::table document = toml::parse_file(file);
  for (auto&& [id, node] : document) {
    const toml::table* record = node.as_table();
    if (!record) continue;
    out[std::string(id.str())] = {(*record)["mount_point"].value_or(std::string{}),
                                  (*record)["last_result"].value_or(std::string{})};
  }
  return out;
}

struct Sighting {
  std::string mount_point;
  std::int64_t last_end_usec = 0;
};

// id -> (mount point, end of the last pass) of the state file's records
// of the two copies.
std::map<std::string, Sighting> state_sightings(const std::string& file, const Twins& twins) {
  std::map<std::string, Sighting> out;
  const toml::table document = toml::parse_file(file);
  for (auto&& [id, node] : document) {
    const toml::table* record = node.as_table();
    if (!record) continue;
    const Sighting sighting{(*record)["mount_point"].value_or(std::string{}),
                            (*record)["last_end_usec"].value_or(std::int64_t{0})};
    if (sighting.mount_point == twins.first.mount_point() ||
        sighting.mount_point == twins.second.mount_point())
      out[std::string(id.str())] = sighting;
  }
  return out;
}

class TrimClones : public ::testing::TestWithParam<Fs> {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(GetParam())));
  }
  TrimdSandbox sandbox_;
};

TEST_P(TrimClones, TrimsBothCopiesOfOneImageEachWithItsOwnStateRecord) {
  Twins twins = fragmented_twins(GetParam(), GetParam() == Fs::Xfs ? 320 : 256, 200, 256 * 1024);
  // xfs refuses a second filesystem with a UUID already mounted unless told.
  const std::string options = GetParam() == Fs::Xfs ? "nodiscard,nouuid" : kNoDiscard;
  twins.first.mount(options);
  twins.second.mount(options);
  ASSERT_EQ(twins.first.blkid_uuid(), twins.second.blkid_uuid());
  const std::uint64_t before_first = twins.first.allocated_bytes();
  const std::uint64_t before_second = twins.second.allocated_bytes();

  sandbox_.write_config(kConfig);
  TrimdProcess trimd(
      sandbox_.args({"--once", twins.first.mount_point(), twins.second.mount_point()}),
      sandbox_.log_path("trimd"));
  ASSERT_EQ(trimd.wait_for_exit(60s), 0) << trimd.log();
  twins.first.sync();
  twins.second.sync();

  const std::uint64_t after_first = twins.first.allocated_bytes();
  const std::uint64_t after_second = twins.second.allocated_bytes();
  std::cout << "[trim-clones] " << fs_name(GetParam()) << ": allocated " << mib(before_first)
            << " -> " << mib(after_first) << " MiB and " << mib(before_second) << " -> "
            << mib(after_second) << " MiB, " << mib(twins.deleted) << " MiB deleted" << std::endl;
  EXPECT_LT(after_first + twins.deleted / 2, before_first) << trimd.log();
  EXPECT_LT(after_second + twins.deleted / 2, before_second) << trimd.log();

  std::map<std::string, std::string> results_by_mount;
  for (const auto& [id, record] : state_records(sandbox_.state_file()))
    results_by_mount[record.first] = record.second;
  EXPECT_EQ(results_by_mount[twins.first.mount_point()], "success");
  EXPECT_EQ(results_by_mount[twins.second.mount_point()], "success");
}

// Issue 16, item 7: which copies are mounted must not decide whose record is
// whose. The copy that sorts first by device held the plain uuid-<UUID> id
// beside the other, which took it over when mounted alone.
TEST_P(TrimClones, ACopyTrimmedAloneUpdatesItsOwnRecordAndNoOtherCopys) {
  Twins twins = fragmented_twins(GetParam(), GetParam() == Fs::Xfs ? 320 : 256, 200, 256 * 1024);
  const std::string options = GetParam() == Fs::Xfs ? "nodiscard,nouuid" : kNoDiscard;
  twins.first.mount(options);
  twins.second.mount(options);
  const bool first_sorts_first = twins.first.device() < twins.second.device();
  LoopImage& unmounted = first_sorts_first ? twins.first : twins.second;
  LoopImage& alone = first_sorts_first ? twins.second : twins.first;

  sandbox_.write_config(kConfig);
  TrimdProcess both(
      sandbox_.args({"--once", twins.first.mount_point(), twins.second.mount_point()}),
      sandbox_.log_path("both"));
  ASSERT_EQ(both.wait_for_exit(60s), 0) << both.log();
  const auto before = state_sightings(sandbox_.state_file(), twins);
  ASSERT_EQ(before.size(), 2u);

  unmounted.unmount();
  TrimdProcess one(sandbox_.args({"--once", alone.mount_point()}), sandbox_.log_path("alone"));
  ASSERT_EQ(one.wait_for_exit(60s), 0) << one.log();
  const auto after = state_sightings(sandbox_.state_file(), twins);
  ASSERT_EQ(after.size(), 2u) << one.log();
  for (const auto& [id, sighting] : before) {
    SCOPED_TRACE(id);
    ASSERT_EQ(after.count(id), 1u);
    EXPECT_EQ(after.at(id).mount_point, sighting.mount_point) << "another copy took this id";
    if (sighting.mount_point == unmounted.mount_point())
      EXPECT_EQ(after.at(id).last_end_usec, sighting.last_end_usec)
          << "the unmounted copy's record changed";
    else
      EXPECT_GT(after.at(id).last_end_usec, sighting.last_end_usec)
          << "the copy's own pass was not recorded";
  }
}

INSTANTIATE_TEST_SUITE_P(Filesystems, TrimClones, ::testing::Values(Fs::Ext4, Fs::Xfs),
                         [](const auto& param_info) {
                           return std::string(fs_name(param_info.param));
                         });

}  // namespace
}  // namespace trimd::test
