// trimctl and inline discard: which filesystems it warns about, and the
// takeover and release commands, against the fake trimd on a private bus.
#include "trimctl_fixture.hpp"

using namespace trimctl_test;

namespace {

class TrimctlDiscard : public TrimctlTest {};

FakeFilesystem async_btrfs() {
  FakeFilesystem fs;
  fs.id = "home";
  fs.mount_point = "/home";
  fs.device = "/dev/nvme0n1p3";
  fs.fs_type = "btrfs";
  fs.discard_mode = "async";
  return fs;
}

TEST_F(TrimctlDiscard, DoesNotAdviseAgainstBtrfsAsyncDiscard) {
  fake_->add_filesystem(async_btrfs());
  const auto result = trimctl({"status"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(line_with(result.out, "/home"), "") << result.out;
  EXPECT_EQ(result.out.find("warning: /home"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("warning: /data is mounted with 'discard'"), std::string::npos)
      << result.out;
}

TEST_F(TrimctlDiscard, PrintsTheDiscardModeInJson) {
  fake_->add_filesystem(async_btrfs());
  const auto result = trimctl({"status", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(python_json(result.out, "[f['discard_mode'] for f in doc['filesystems']]"),
            "['sync', 'async', '']");
}

}  // namespace
