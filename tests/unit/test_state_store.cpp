#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "fifo_guard.hpp"
#include "file_test_kit.hpp"
#include "regular_file.hpp"
#include "state_store.hpp"

namespace fs = std::filesystem;
using testing::HasSubstr;
using trimd::FsRecord;
using trimd::PassOutcome;
using trimd::PassResult;
using trimd::StateMap;
using trimd::StateStore;
using trimd::test::expect_same_record;
using trimd::test::expect_same_state;
using trimd::test::read_text;
using trimd::test::write_text;

namespace {

FsRecord complete_record() {
  FsRecord r;
  r.last_start = trimd::from_usec(1700000000123456);
  r.last_end = trimd::from_usec(1700000090654321);
  r.last_result = PassOutcome{PassResult::Failed, "Input/output error"};
  r.last_bytes = 5'000'000'000;
  r.cursor = 3ull << 30;
  r.pass_start = trimd::from_usec(1700100000000001);
  r.pass_bytes = 123456789;
  r.mount_point = "/srv/vm images";
  r.last_seen = trimd::from_usec(1700200000000000);
  return r;
}

// Counts the warnings logged: a person learns that something happened;
// what the wording says is for people, not for tests.
class WarningCounter final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  int warnings() const { return warnings_; }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (msg.level == spdlog::level::warn) ++warnings_;
  }
  void flush_() override {}

 private:
  int warnings_ = 0;
};

class StateStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    // Count warnings to check that a person learns what happened.
    logger_ = std::make_shared<spdlog::logger>("test", warnings_);
    previous_logger_ = spdlog::default_logger();
    spdlog::set_default_logger(logger_);
  }
  void TearDown() override { spdlog::set_default_logger(previous_logger_); }

  std::vector<fs::path> files_in(const fs::path& dir) const {
    std::vector<fs::path> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  int warnings() const { return warnings_->warnings(); }

  // `text` as the state file loads as nothing and is moved aside, with its
  // content, and one warning says so; the directory is emptied for the next.
  void expect_corrupt(const std::string& text) {
    SCOPED_TRACE(text);
    write_text(root_ / "state.toml", text);
    const int before = warnings();
    EXPECT_TRUE(StateStore{root_}.load().empty());
    EXPECT_FALSE(fs::exists(root_ / "state.toml"));
    EXPECT_EQ(warnings(), before + 1);
    const auto files = files_in(root_);
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(read_text(root_ / files[0]), text);
    for (const auto& f : files) fs::remove(root_ / f);
  }

  trimd::test::ScratchDir scratch_{"trimd-state"};
  const fs::path& root_ = scratch_.path();
  std::shared_ptr<WarningCounter> warnings_ = std::make_shared<WarningCounter>();
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<spdlog::logger> previous_logger_;
};

}  // namespace

TEST_F(StateStoreTest, KeepsTheStateFileInTheDirectory) {
  EXPECT_EQ(StateStore{root_}.path(), root_ / "state.toml");
}

TEST_F(StateStoreTest, MissingFileLoadsAsEmptyState) {
  StateStore store{root_ / "never-written"};
  EXPECT_TRUE(store.load().empty());
  EXPECT_FALSE(fs::exists(root_ / "never-written"));
  EXPECT_EQ(warnings(), 0);
}

TEST_F(StateStoreTest, RoundTripsEveryFieldAndLeavesOptionalOnesAbsent) {
  StateMap state;
  state["/dev/disk/by-uuid/0b6b1b4e:ext4"] = complete_record();
  state["fresh"] = FsRecord{};  // never trimmed: every optional absent, strings empty
  FsRecord finished;
  finished.last_end = trimd::from_usec(0);  // the epoch is a time, not "absent"
  finished.last_result = PassOutcome{PassResult::Success, {}};
  state["finished"] = finished;
  StateStore store{root_};
  store.save(state);
  const StateMap loaded = store.load();
  expect_same_state(state, loaded);
  EXPECT_FALSE(loaded.at("fresh").last_start.has_value());
  EXPECT_FALSE(loaded.at("fresh").cursor.has_value());
  EXPECT_FALSE(loaded.at("fresh").pass_start.has_value());
  EXPECT_TRUE(loaded.at("finished").last_end.has_value());
}

TEST_F(StateStoreTest, RoundTripsAMountPointThatIsNotUtf8) {
  StateMap state;
  state["dev-/dev/loop3-/srv/caf\xe9"].mount_point = "/srv/caf\xe9";
  StateStore store{root_};
  store.save(state);
  const StateMap loaded = store.load();
  ASSERT_EQ(loaded.count("dev-/dev/loop3-/srv/caf\xe9"), 1u) << read_text(store.path());
  EXPECT_THAT(read_text(store.path()),
              HasSubstr("[\"bytes:6465762d2f6465762f6c6f6f70332d2f7372762f636166e9\"]"));
}

TEST_F(StateStoreTest, KeepsEveryByteOfNamesAndResultsThatAreNotUtf8) {
  StateMap state;
  FsRecord& record = state["dev-/dev/loop3-/srv/\xe9t\xe9"];
  record.mount_point = "/srv/\xe9t\xe9";
  record.last_result = PassOutcome{PassResult::Failed, "/srv/\xe9t\xe9 is gone"};
  trimd::add_history(record, trimd::PassHistoryEntry{
                                 {}, {}, {}, {}, 1, PassOutcome{PassResult::Failed, "\xff"}, 0});
  state["plain"].mount_point = "/srv/back\\slash";
  StateStore store{root_};
  store.save(state);
  const StateMap loaded = store.load();
  expect_same_state(state, loaded);
  const FsRecord& back = loaded.at("dev-/dev/loop3-/srv/\xe9t\xe9");
  EXPECT_EQ(back.mount_point, "/srv/\xe9t\xe9");
  EXPECT_EQ(outcome_text(back.last_result), "failed: /srv/\xe9t\xe9 is gone");
  ASSERT_EQ(back.history.size(), 1u);
  EXPECT_EQ(back.history.front().result.text(), "failed: \xff");
  EXPECT_EQ(loaded.at("plain").mount_point, "/srv/back\\slash");
  EXPECT_THAT(read_text(store.path()), HasSubstr(R"(mount_point_escaped = "/srv/\\xe9t\\xe9")"));
  EXPECT_THAT(read_text(store.path()), HasSubstr(R"(mount_point = "/srv/back\\slash")"));
}

TEST_F(StateStoreTest, ReadsNamesAsFilesBeforeEscapingWroteThem) {
  std::ofstream(root_ / "state.toml") << "[\"bytes:6ae9\"]\nmount_point = \"/srv/a\\\\xe9\"\n"
                                         "last_result = \"success\"\n";
  const StateMap loaded = StateStore{root_}.load();
  ASSERT_EQ(loaded.count("j\xe9"), 1u);
  EXPECT_EQ(loaded.at("j\xe9").mount_point, "/srv/a\\xe9");  // plain key: taken literally
  EXPECT_EQ(outcome_text(loaded.at("j\xe9").last_result), "success");
}

TEST_F(StateStoreTest, AnEscapedNameThatIsNoEscapeCountsAsCorrupt) {
  expect_corrupt("[\"a\"]\nmount_point_escaped = \"/srv/\\\\q\"\n");
}

TEST_F(StateStoreTest, ABytesKeyThatIsNotHexCountsAsCorrupt) {
  expect_corrupt("[\"bytes:6g\"]\nlast_bytes = 1\n");
  expect_corrupt("[\"bytes:646\"]\nlast_bytes = 1\n");
}

TEST_F(StateStoreTest, QuotesIdsThatNeedIt) {
  StateMap state;
  for (const std::string id :
       {"/dev/sda1", "UUID=1234:/mnt/a b", "it's", "quote\"back\\slash", "tab\there", "new\nline",
        "dotted.key", "ünïcode", "", "[brackets]", "#hash"})
    state[id].mount_point = id;
  StateStore store{root_};
  store.save(state);
  expect_same_state(state, store.load());
  EXPECT_EQ(warnings(), 0);
}

TEST_F(StateStoreTest, StoresTimesAsIntegerMicrosecondsSinceTheEpoch) {
  StateMap state;
  state["fs"].last_start = trimd::from_usec(1700000000123456);
  StateStore{root_}.save(state);
  EXPECT_THAT(read_text(root_ / "state.toml"), HasSubstr("1700000000123456"));
}

TEST_F(StateStoreTest, SavingReplacesThePreviousState) {
  StateStore store{root_};
  store.save({{"a", complete_record()}, {"b", FsRecord{}}});
  store.save({{"c", FsRecord{}}});
  const auto loaded = store.load();
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded.count("c"), 1u);
}

TEST_F(StateStoreTest, SaveCreatesMissingDirectoriesAndLeavesNoTempFile) {
  const auto dir = root_ / "var" / "lib" / "trimd";
  const mode_t old_umask = ::umask(022);
  StateStore{dir}.save({{"fs", complete_record()}});
  ::umask(old_umask);
  EXPECT_EQ(files_in(dir), std::vector<fs::path>{"state.toml"});
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(::stat((dir / "state.toml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_F(StateStoreTest, WritesTheStateFileWithMode0644WhateverTheUmask) {
  const mode_t old_umask = ::umask(077);
  StateStore{root_}.save({{"fs", FsRecord{}}});
  ::umask(old_umask);
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "state.toml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_F(StateStoreTest, FailedSaveThrowsAndLeavesThePreviousFileIntact) {
  StateStore store{root_};
  store.save({{"old", complete_record()}});
  const auto before = read_text(store.path());
  // A file size limit makes write(2) fail with EFBIG, even for root.
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit tiny = saved;
  tiny.rlim_cur = 16;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tiny), 0);
  EXPECT_THROW(store.save({{"new", complete_record()}}), std::system_error);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(read_text(store.path()), before);
  EXPECT_EQ(store.load().count("old"), 1u);
  EXPECT_EQ(files_in(root_), std::vector<fs::path>{"state.toml"}) << "no temporary file left";
}

// The temporary file has no name (or a random one): whatever lies at a name
// someone could guess is neither opened nor in the way.
TEST_F(StateStoreTest, FifosAtEveryPlausibleTempNameAreNeitherOpenedNorInTheWay) {
  const std::string pid = std::to_string(::getpid());
  const std::vector<std::string> names{".state.toml.tmp", "state.toml.tmp",
                                       ".state.toml." + pid + ".tmp", "state.toml." + pid + ".tmp"};
  for (const auto& name : names) ASSERT_EQ(::mkfifo((root_ / name).c_str(), 0600), 0) << name;
  StateStore store{root_};
  trimd::test::without_blocking_on(root_ / names[0], [&] {
    store.save({{"fs", complete_record()}});
  });
  EXPECT_EQ(store.load().count("fs"), 1u);
  for (const auto& name : names)
    EXPECT_EQ(fs::symlink_status(root_ / name).type(), fs::file_type::fifo) << name;
  EXPECT_EQ(files_in(root_).size(), names.size() + 1) << "no temporary file left";
}

TEST_F(StateStoreTest, ASymbolicLinkAtTheOldTempNameIsNotFollowed) {
  write_text(root_ / "elsewhere", "keep me");
  fs::create_symlink(root_ / "elsewhere", root_ / ".state.toml.tmp");
  StateStore store{root_};
  store.save({{"fs", complete_record()}});
  EXPECT_EQ(read_text(root_ / "elsewhere"), "keep me");
  EXPECT_EQ(store.load().count("fs"), 1u);
  EXPECT_FALSE(fs::is_symlink(store.path()));
}

TEST_F(StateStoreTest, ADirectoryAtTheOldTempNameIsNotInTheWay) {
  StateStore store{root_};
  fs::create_directories(root_ / ".state.toml.tmp" / "inside");
  store.save({{"fs", complete_record()}});
  EXPECT_EQ(store.load().count("fs"), 1u);
  EXPECT_TRUE(fs::is_directory(root_ / ".state.toml.tmp" / "inside"));
}

TEST_F(StateStoreTest, AFifoAsTheStateFileIsMovedAsideNotReadFrom) {
  const auto file = root_ / "state.toml";
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  trimd::test::without_blocking_on(file, [&] { EXPECT_TRUE(StateStore{root_}.load().empty()); });
  EXPECT_FALSE(fs::exists(fs::symlink_status(file)));
  EXPECT_EQ(warnings(), 1);
}

TEST_F(StateStoreTest, AStateFileOverTheCapIsCorruptAndMovedAside) {
  std::string big;
  while (big.size() <= trimd::kMaxStateFileBytes)
    big += "[\"uuid-" + std::to_string(big.size()) + "\"]\nlast_bytes = 1\n";
  write_text(root_ / "state.toml", big);
  EXPECT_TRUE(StateStore{root_}.load().empty());
  EXPECT_FALSE(fs::exists(root_ / "state.toml"));
  EXPECT_EQ(warnings(), 1);
}

TEST_F(StateStoreTest, TimesOutsideTheClocksRangeCountAsCorrupt) {
  for (const std::string text :
       {"[fs]\nlast_end_usec = 9223372036854775807\n", "[fs]\nlast_start_usec = -1\n",
        "[fs]\npass_start_usec = -9223372036854775808\n",
        "[fs]\nlast_end_usec = 7258118400000001\n"})
    expect_corrupt(text);
}

TEST_F(StateStoreTest, KeepsTheLatestAcceptedTime) {
  write_text(root_ / "state.toml", "[fs]\nlast_end_usec = 7258118400000000\n");
  EXPECT_EQ(StateStore{root_}.load().at("fs").last_end, trimd::from_usec(trimd::kLatestStoredUsec));
}

TEST_F(StateStoreTest, ALoadThatMayNotChangeAnythingLeavesACorruptFileInPlace) {
  write_text(root_ / "state.toml", "garbage = = 1\n");
  EXPECT_TRUE(StateStore{root_}.load(StateStore::OnCorrupt::Leave).empty());
  EXPECT_EQ(read_text(root_ / "state.toml"), "garbage = = 1\n");
  EXPECT_EQ(files_in(root_).size(), 1u);
}

TEST_F(StateStoreTest, SaveIntoAPathThatIsARegularFileThrows) {
  write_text(root_ / "not-a-dir", "x");
  StateStore store{root_ / "not-a-dir"};
  EXPECT_THROW(store.save({{"fs", FsRecord{}}}), std::system_error);
  EXPECT_EQ(read_text(root_ / "not-a-dir"), "x");
}

TEST_F(StateStoreTest, CorruptFileIsMovedAsideLoggedAndLoadsAsEmpty) {
  const std::string garbage = "[\"fs\"\nlast_bytes = = 3\n";
  write_text(root_ / "state.toml", garbage);
  StateStore store{root_};
  EXPECT_TRUE(store.load().empty());
  EXPECT_FALSE(fs::exists(store.path()));
  const auto files = files_in(root_);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_THAT(files[0].string(), testing::MatchesRegex("state\\.toml\\.corrupt-[0-9]+"));
  EXPECT_EQ(read_text(root_ / files[0]), garbage);
  EXPECT_EQ(warnings(), 1);
}

TEST_F(StateStoreTest, ValuesOfTheWrongTypeCountAsCorrupt) {
  for (const std::string text :
       {"[fs]\nlast_bytes = \"many\"\n", "[fs]\ncursor = -1\n", "[fs]\nlast_start_usec = 1.5\n",
        "[fs]\nmount_point = 7\n", "fs = 3\n"})
    expect_corrupt(text);
}

TEST_F(StateStoreTest, UnreadableFileIsMovedAsideAndLoadsAsEmpty) {
  fs::create_directory(root_ / "state.toml");
  EXPECT_TRUE(StateStore{root_}.load().empty());
  EXPECT_FALSE(fs::exists(root_ / "state.toml"));
  EXPECT_EQ(warnings(), 1);
}

TEST(PruneUnseen, DropsRecordsNotSeenWithinTheHorizonAndKeepsTheRest) {
  using namespace std::chrono_literals;
  const auto now = trimd::from_usec(1800000000000000);
  StateMap state;
  state["recent"].last_seen = now - 24h;
  const trimd::Duration keep = 90 * 24h;
  state["gone"].last_seen = now - keep - 1s;
  state["old-file-recent-pass"].last_end = now - 24h;
  state["old-file-old-pass"].last_end = now - 100 * 24h;
  state["never-trimmed-no-sighting"] = FsRecord{};
  EXPECT_EQ(trimd::prune_unseen(state, now, keep), 2u);
  EXPECT_EQ(state.count("recent"), 1u);
  EXPECT_EQ(state.count("old-file-recent-pass"), 1u);
  EXPECT_EQ(state.count("never-trimmed-no-sighting"), 1u);
  EXPECT_EQ(state.count("gone"), 0u);
  EXPECT_EQ(state.count("old-file-old-pass"), 0u);
}

TEST_F(StateStoreTest, IgnoresKeysItDoesNotKnow) {
  write_text(root_ / "state.toml",
             "['/dev/sda1']\nlast_bytes = 42\nwritten_by_a_newer_trimd = true\n");
  const auto loaded = StateStore{root_}.load();
  ASSERT_EQ(loaded.count("/dev/sda1"), 1u);
  EXPECT_EQ(loaded.at("/dev/sda1").last_bytes, 42u);
}

TEST_F(StateStoreTest, RoundTripsATakeoverWithItsTimeAndOrigin) {
  StateMap state;
  state["by-policy"].taken_over =
      trimd::TakeoverRecord{trimd::from_usec(1700000000000001), trimd::TakeoverOrigin::Policy};
  state["by-request"].taken_over =
      trimd::TakeoverRecord{trimd::from_usec(1700000000000002), trimd::TakeoverOrigin::Request};
  state["never"] = FsRecord{};
  StateStore store{root_};
  store.save(state);
  expect_same_state(state, store.load());
  const std::string text = read_text(root_ / "state.toml");
  EXPECT_THAT(text, HasSubstr("taken_over_usec = 1700000000000002"));
  EXPECT_THAT(text, HasSubstr("taken_over_by = \"request\""));
  EXPECT_FALSE(store.load().at("never").taken_over.has_value());
}

TEST_F(StateStoreTest, AnUnknownTakeoverOriginCountsAsCorrupt) {
  write_text(root_ / "state.toml", "[fs]\ntaken_over_usec = 5\ntaken_over_by = \"someone\"\n");
  EXPECT_TRUE(StateStore{root_}.load().empty());
  EXPECT_EQ(warnings(), 1);
}

TEST_F(StateStoreTest, RoundTripsLifetimeFiguresHistoryAndFirstSighting) {
  FsRecord r = complete_record();
  r.lifetime = trimd::Lifetime{7'000'000'000, 12, 5, 3, 1};
  r.first_seen = trimd::from_usec(1690000000000000);
  r.last_trimming = std::chrono::seconds{4};
  r.last_waited = std::chrono::seconds{52};
  r.pass_waited = std::chrono::seconds{9};
  for (int i = 0; i < 3; ++i)
    trimd::add_history(
        r, trimd::PassHistoryEntry{
               trimd::from_usec(1700000000000000 + i), trimd::from_usec(1700000100000000 + i),
               std::chrono::seconds{i}, std::chrono::seconds{2}, 1000u + i,
               i == 1 ? PassOutcome{PassResult::Failed, "\"x\""} : PassOutcome{},
               static_cast<std::uint64_t>(i)});
  StateStore store{root_};
  store.save({{"fs-1", r}});
  const auto loaded = store.load().at("fs-1");
  EXPECT_EQ(loaded.lifetime, r.lifetime);
  EXPECT_EQ(loaded.first_seen, r.first_seen);
  EXPECT_EQ(loaded.last_trimming, r.last_trimming);
  EXPECT_EQ(loaded.last_waited, r.last_waited);
  EXPECT_EQ(loaded.pass_waited, r.pass_waited);
  EXPECT_EQ(loaded.history, r.history);
  expect_same_record(loaded, r);
}

TEST_F(StateStoreTest, HistoryIsBoundedOldestDroppedFirst) {
  FsRecord r;
  for (std::uint64_t i = 0; i < trimd::kHistoryLength + 5; ++i)
    trimd::add_history(r, trimd::PassHistoryEntry{{}, {}, {}, {}, i, PassOutcome{}, 0});
  ASSERT_EQ(r.history.size(), trimd::kHistoryLength);
  EXPECT_EQ(r.history.front().bytes, 5u);
}

TEST_F(StateStoreTest, AFileWithoutTheNewFieldsLoadsWithZeroFigures) {
  write_text(root_ / "state.toml", "[\"fs-1\"]\nmount_point = \"/a\"\nlast_result = \"success\"\n");
  const auto loaded = StateStore{root_}.load().at("fs-1");
  EXPECT_EQ(loaded.lifetime, trimd::Lifetime{});
  EXPECT_TRUE(loaded.history.empty());
  EXPECT_FALSE(loaded.first_seen);
}

TEST_F(StateStoreTest, AHistoryThatIsNotAnArrayOfTablesCountsAsCorrupt) {
  write_text(root_ / "state.toml", "[\"fs-1\"]\nhistory = [1, 2]\n");
  EXPECT_TRUE(StateStore{root_}.load().empty());
}

// Issue 16, items 5 and 7: the mount a takeover belongs to and the device a
// filesystem was last seen on survive a save; a file of 1caa747 still loads.
TEST_F(StateStoreTest, RoundTripsTheMountOfATakeoverAndTheDeviceAndLoadsAFileWithoutThem) {
  StateMap state;
  state["uuid-x-dev-/dev/loop1"].device = "/dev/loop1";
  state["uuid-x-dev-/dev/loop1"].taken_over =
      trimd::TakeoverRecord{trimd::from_usec(1700000000000001), trimd::TakeoverOrigin::Policy,
                            trimd::MountInstance{"a8c40e28-94b3-4e51-ab1c-30e50d1aae46",
                                                 4026531855ull,
                                                 2147483694ull,
                                                 {"rw", "errors=remount-ro", "commit=30"}}};
  StateStore store{root_};
  store.save(state);
  const auto loaded = store.load();
  ASSERT_EQ(loaded.count("uuid-x-dev-/dev/loop1"), 1u);
  EXPECT_EQ(loaded.at("uuid-x-dev-/dev/loop1").device, "/dev/loop1");
  EXPECT_EQ(loaded.at("uuid-x-dev-/dev/loop1").taken_over,
            state.at("uuid-x-dev-/dev/loop1").taken_over);

  write_text(root_ / "state.toml",
             "[\"uuid-x\"]\nmount_point = \"/srv/a\"\ntaken_over_usec = 5\n"
             "taken_over_by = \"policy\"\n");
  const auto old = StateStore{root_}.load();
  ASSERT_EQ(old.count("uuid-x"), 1u);
  EXPECT_EQ(old.at("uuid-x").device, "");
  ASSERT_TRUE(old.at("uuid-x").taken_over);
  EXPECT_EQ(old.at("uuid-x").taken_over->mount, std::nullopt);
}

TEST_F(StateStoreTest, TakeoverOptionsThatAreNotStringsCountAsCorrupt) {
  expect_corrupt(
      "[fs]\ntaken_over_usec = 5\ntaken_over_by = \"policy\"\ntaken_over_boot_id = \"b\"\n"
      "taken_over_options = [1]\n");
}
