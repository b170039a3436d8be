// trimd.toml's drop-ins (lib/policy/policy_files.cpp, load_policy): which
// files are read, in which order, how they merge, and what their errors name.
// The directories are a scratch tree's, never the machine's /etc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "config.hpp"
#include "file_test_kit.hpp"
#include "policy_files.hpp"
#include "regular_file.hpp"

namespace trimd::test {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;
namespace fs = std::filesystem;

constexpr std::uint64_t MiB = 1 << 20;

// A default policy's tree: etc/trimd.toml and the vendor, runtime and
// admin drop-in directories.
class DropIns : public ::testing::Test {
 protected:
  DropIns() {
    for (const auto& dir : {vendor(), runtime(), admin()}) fs::create_directories(dir);
  }

  fs::path vendor() const { return root_.path() / "usr/lib/trimd/trimd.toml.d"; }
  fs::path runtime() const { return root_.path() / "run/trimd/trimd.toml.d"; }
  fs::path admin() const { return root_.path() / "etc/trimd/trimd.toml.d"; }
  std::string main_file() const { return (root_.path() / "etc/trimd/trimd.toml").string(); }

  PolicySources sources() const {
    return default_policy_sources(main_file(), vendor().string(), runtime().string());
  }
  std::vector<std::string> files_read() const {
    std::vector<std::string> files;
    load_policy(sources(), &files);
    return files;
  }
  ConfigError error() const {
    try {
      load_policy(sources());
    } catch (const ConfigError& e) {
      return e;
    }
    ADD_FAILURE() << "the policy was accepted";
    return ConfigError("", 0, 0, "");
  }

  ScratchDir root_{"trimd-drop-ins"};
};

TEST_F(DropIns, ComeAfterTheMainFileInTheOrderOfTheirNamesWhateverTheirDirectory) {
  write_text(main_file(), "");
  write_text(admin() / "20-b.toml", "");
  write_text(vendor() / "10-a.toml", "");
  write_text(runtime() / "30-c.toml", "");
  write_text(vendor() / "40-d.toml", "");
  EXPECT_THAT(
      files_read(),
      ElementsAre(main_file(), (vendor() / "10-a.toml").string(), (admin() / "20-b.toml").string(),
                  (runtime() / "30-c.toml").string(), (vendor() / "40-d.toml").string()));
}

TEST_F(DropIns, OfOneNameOnlyTheAdminsIsReadThenTheRuntimeOnesThenTheVendors) {
  write_text(vendor() / "50-x.toml", "[trim]\nchunk_size = \"1MiB\"\n");
  write_text(runtime() / "50-x.toml", "[trim]\nchunk_size = \"2MiB\"\n");
  write_text(admin() / "50-x.toml", "[trim]\nchunk_size = \"3MiB\"\n");
  write_text(vendor() / "60-y.toml", "[trim]\nrate_limit = \"1MiB\"\n");
  write_text(runtime() / "60-y.toml", "[trim]\nrate_limit = \"2MiB\"\n");
  EXPECT_THAT(files_read(),
              ElementsAre((admin() / "50-x.toml").string(), (runtime() / "60-y.toml").string()));
  const Config config = load_policy(sources());
  EXPECT_EQ(config.trim.chunk_bytes, 3 * MiB);
  EXPECT_EQ(config.trim.rate_limit_bytes_per_sec, 2 * MiB);
}

TEST_F(DropIns, ALinkToDevNullMasksTheNameInTheDirectoriesBelow) {
  write_text(vendor() / "50-x.toml", "[trim]\nchunk_size = \"1MiB\"\n");
  fs::create_symlink("/dev/null", admin() / "50-x.toml");
  write_text(vendor() / "60-y.toml", "[trim]\nrate_limit = \"1MiB\"\n");
  fs::create_symlink("/dev/null", runtime() / "60-y.toml");
  write_text(admin() / "60-y.toml", "[trim]\nrate_limit = \"3MiB\"\n");
  EXPECT_THAT(files_read(), ElementsAre((admin() / "60-y.toml").string()));
  EXPECT_EQ(load_policy(sources()).trim.chunk_bytes, TrimPolicy{}.chunk_bytes);
}

TEST_F(DropIns, LaterFilesWinKeyByKeyAndKeepWhatTheyDoNotSet) {
  write_text(main_file(), "[trim]\nchunk_size = \"8MiB\"\npause = \"1s\"\n[idle]\nmax_iops = 5\n");
  write_text(vendor() / "10-a.toml", "[trim]\npause = \"2s\"\n");
  write_text(admin() / "20-b.toml", "[trim]\npause = \"3s\"\n[idle]\nwindow = \"1min\"\n");
  const Config config = load_policy(sources());
  EXPECT_EQ(config.trim.chunk_bytes, 8 * MiB);
  EXPECT_EQ(config.trim.chunk_pause, std::chrono::seconds{3});
  EXPECT_EQ(config.idle.max_iops, 5);
  EXPECT_EQ(config.idle.idle_window, std::chrono::minutes{1});
}

TEST_F(DropIns, AddTheirFilesystemRulesAfterThoseBeforeThem) {
  write_text(main_file(), "[[filesystem]]\nmatch = \"/srv/*\"\nchunk_size = \"8MiB\"\n");
  write_text(admin() / "50-x.toml", "[[filesystem]]\nmatch = \"/srv/db\"\nchunk_size = \"4MiB\"\n");
  const Config config = load_policy(sources());
  ASSERT_EQ(config.overrides.size(), 2u);
  EXPECT_EQ(config.policy_for("/srv/db", "", "xfs").chunk_bytes, 4 * MiB);
  EXPECT_EQ(config.policy_for("/srv/web", "", "xfs").chunk_bytes, 8 * MiB);
}

TEST_F(DropIns, MayCompleteTheFleetSectionOfAnEarlierFile) {
  write_text(main_file(), "[fleet]\netcd = [\"http://127.0.0.1:2379\"]\n");
  write_text(admin() / "50-fleet.toml", "[fleet]\nmax_concurrent = 3\nbackend = \"pool-a\"\n");
  const Config config = load_policy(sources());
  ASSERT_TRUE(config.fleet);
  EXPECT_EQ(config.fleet->endpoints.size(), 1u);
  EXPECT_EQ(config.fleet->max_concurrent, 3u);
  EXPECT_EQ(config.policy_for("/", "", "ext4").backend, "pool-a");
}

TEST_F(DropIns, AnErrorNamesTheDropInItsLineAndColumn) {
  write_text(main_file(), "[trim]\nenabled = false\n");
  write_text(admin() / "50-x.toml", "# a comment\n[idle]\nwindow = \"2d\"\n");
  const ConfigError e = error();
  EXPECT_EQ(e.file(), (admin() / "50-x.toml").string());
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.column(), 10);
  EXPECT_THAT(e.what(), HasSubstr("50-x.toml:3:10: idle.window: 2d is more than 1d"));
}

TEST_F(DropIns, AWholeFleetCheckNamesTheFileOfTheLastFleetTable) {
  write_text(main_file(), "[fleet]\netcd = [\"https://127.0.0.1:2379\"]\n");
  write_text(admin() / "50-tls.toml", "\n[fleet]\ncert = \"/etc/trimd/client.pem\"\n");
  const ConfigError e = error();
  EXPECT_EQ(e.file(), (admin() / "50-tls.toml").string());
  EXPECT_EQ(e.line(), 2);
  EXPECT_THAT(e.message(), HasSubstr("cert and key go together"));
}

TEST_F(DropIns, WithoutAMainFileApplyToTheBuiltInDefaults) {
  write_text(admin() / "50-x.toml", "[trim]\nenabled = false\n");
  EXPECT_THAT(files_read(), ElementsAre((admin() / "50-x.toml").string()));
  EXPECT_FALSE(load_policy(sources()).trim.enabled);
}

TEST_F(DropIns, OnlyVisibleTomlFilesCount) {
  write_text(admin() / "50-x.conf", "not toml");
  write_text(admin() / ".50-x.toml", "not toml");
  write_text(admin() / "50-x.toml~", "not toml");
  write_text(admin() / "50-x.toml", "");
  EXPECT_THAT(files_read(), ElementsAre((admin() / "50-x.toml").string()));
}

TEST_F(DropIns, AMissingDirectoryHasNone) {
  fs::remove_all(root_.path() / "run");
  write_text(admin() / "50-x.toml", "");
  EXPECT_THAT(files_read(), ElementsAre((admin() / "50-x.toml").string()));
}

TEST_F(DropIns, ADirectoryThatIsNoDirectoryIsAnError) {
  fs::remove_all(runtime());
  write_text(runtime(), "");
  EXPECT_THAT(error().what(), HasSubstr("trimd.toml.d: cannot read: Not a directory"));
}

TEST_F(DropIns, AtMost128AreRead) {
  for (std::size_t i = 0; i < kMaxDropIns; ++i)
    write_text((i % 2 ? vendor() : admin()) / ("d" + std::to_string(i) + ".toml"), "");
  EXPECT_EQ(files_read().size(), kMaxDropIns);
  write_text(runtime() / "one-more.toml", "");
  EXPECT_THAT(error().what(), HasSubstr("more than 128 drop-ins"));
}

TEST_F(DropIns, EachIsHeldToThePolicyFileSizeCap) {
  const std::string comment_line = "# " + std::string(1022, 'x') + "\n";
  std::string text;
  while (text.size() < kMaxPolicyFileBytes) text += comment_line;
  write_text(admin() / "50-x.toml", text.substr(0, kMaxPolicyFileBytes));
  EXPECT_THAT(files_read(), ElementsAre((admin() / "50-x.toml").string()));
  write_text(admin() / "50-x.toml", text.substr(0, kMaxPolicyFileBytes) + "#\n");
  const ConfigError e = error();
  EXPECT_EQ(e.file(), (admin() / "50-x.toml").string());
  EXPECT_THAT(e.message(), HasSubstr("cannot read: is larger than 4 MiB"));
}

TEST_F(DropIns, TogetherWithTheMainFileAreHeldToOneFilesSizeCap) {
  const std::string half(kMaxPolicyFileBytes / 2, '#');
  write_text(main_file(), half);
  write_text(vendor() / "10-a.toml", half);
  EXPECT_THAT(files_read(), ElementsAre(main_file(), (vendor() / "10-a.toml").string()));
  write_text(admin() / "20-b.toml", "\n");
  const ConfigError e = error();
  EXPECT_EQ(e.file(), (admin() / "20-b.toml").string());
  EXPECT_THAT(e.message(), HasSubstr("the policy's files together are larger than 4 MiB"));
}

TEST(GivenPolicy, ReadsItsOwnDotDDirectoryOnly) {
  const ScratchDir dir("trimd-given-policy");
  const std::string file = (dir.path() / "policy.toml").string();
  write_text(file, "[trim]\nchunk_size = \"8MiB\"\n");
  fs::create_directories(file + ".d");
  write_text(file + ".d/50-x.toml", "[trim]\nchunk_size = \"4MiB\"\n");
  std::vector<std::string> files;
  EXPECT_EQ(load_policy(given_policy_sources(file), &files).trim.chunk_bytes, 4 * MiB);
  EXPECT_THAT(files, ElementsAre(file, file + ".d/50-x.toml"));
}

TEST(GivenPolicy, MustExistEvenWithDropIns) {
  const ScratchDir dir("trimd-given-policy");
  const std::string file = (dir.path() / "policy.toml").string();
  fs::create_directories(file + ".d");
  write_text(file + ".d/50-x.toml", "");
  EXPECT_THAT([&] { load_policy(given_policy_sources(file)); },
              testing::ThrowsMessage<ConfigError>(
                  HasSubstr("policy.toml: cannot read: No such file or directory")));
}

// What a reload relies on: a policy that fails to load is thrown away whole,
// and a caller that keeps its Config on ConfigError keeps the old policy.
TEST_F(DropIns, ABadDropInLeavesThePolicyReadBeforeItAsItWas) {
  write_text(main_file(), "[trim]\nchunk_size = \"8MiB\"\n");
  Config running = load_policy(sources());
  write_text(main_file(), "[trim]\nchunk_size = \"2MiB\"\n");
  write_text(admin() / "50-x.toml", "[trim]\nchunk_size = 0\n");
  try {
    running = load_policy(sources());
    ADD_FAILURE() << "a bad drop-in was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), (admin() / "50-x.toml").string());
  }
  EXPECT_EQ(running.trim.chunk_bytes, 8 * MiB);
}

}  // namespace
}  // namespace trimd::test
