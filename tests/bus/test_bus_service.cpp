// The bus service in-process, through the generated proxy: objects, the
// trim flow and its signals, pause/resume/cancel, argument errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "bus_names.hpp"
#include "service_harness.hpp"

namespace trimd::test {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Key;
using ::testing::Not;

class BusService : public ServiceHarness {
 protected:
  // Runs chunks for `id` until its pass ends; each chunk "discards" `bytes`.
  // `between` gives the loop time between chunks (Progress is throttled).
  std::uint64_t run_pass(std::uint64_t bytes, std::chrono::milliseconds between) {
    std::uint64_t total = 0;
    pump_until(
        [&] {
          for (const auto& job : take_jobs()) {
            finish(job, bytes);
            total += bytes;
          }
          pump_for(between);
          return !signals_named("TrimFinished").empty();
        },
        std::chrono::seconds{20});
    return total;
  }

  std::string fs_state(const std::string& id) {
    FilesystemClient fs(*client_connection_, fs_path(id));
    return call([&] { return fs.State(); });
  }
};

TEST_F(BusService, ListsEveryTrackedFilesystemInGetManagedObjects) {
  auto objects = call([&] { return client_->GetManagedObjects(); });
  ASSERT_EQ(objects.size(), 2u);
  ASSERT_THAT(objects, Contains(Key(sdbus::ObjectPath(fs_path(kIdA)))));
  auto& b = objects.at(sdbus::ObjectPath(fs_path(kIdB)));
  EXPECT_EQ(b.at(bus::kFilesystemInterface).at("MountPoint").get<std::string>(), kMountB);
  EXPECT_EQ(b.at(bus::kFilesystemInterface).at("Size").get<std::uint64_t>(), kFsSize);
}

TEST_F(BusService, EscapesIdsIntoObjectPathsLikeSdBusPathEncode) {
  auto objects = call([&] { return client_->GetManagedObjects(); });
  EXPECT_THAT(
      objects,
      Contains(Key(sdbus::ObjectPath(
          "/org/trimd/trimd1/filesystem/dev_2d_2fdev_2ffakeb_2d_2fsrv_2ftrimd_20test_20b"))));
}

TEST_F(BusService, AnswersManagerPropertiesToAnyReader) {
  EXPECT_EQ(call([&] { return client_->Version(); }), TRIMD_TEST_VERSION);
  EXPECT_EQ(call([&] { return client_->State(); }), "idle");
  EXPECT_EQ(call([&] { return client_->BytesTrimmedTotal(); }), 0u);
}

TEST_F(BusService, TrimNowRunsAPassWithStartedProgressAndFinishedSignals) {
  call([&] { client_->TrimNow({kMountA}, true); });
  const std::uint64_t bytes = run_pass(4096, std::chrono::milliseconds{60});

  auto started = signals_named("TrimStarted");
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].object, fs_path(kIdA));
  auto finished = signals_named("TrimFinished");
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].result, "success");
  EXPECT_EQ(finished[0].bytes, bytes);
  EXPECT_EQ(bytes, 8u * 4096);
  // The last Progress (1) may trail TrimFinished by one throttle interval.
  auto progress_of_a = [&] {
    std::vector<double> values;
    for (const auto& s : signals_named("PropertiesChanged"))
      if (s.path == fs_path(kIdA) && s.progress) values.push_back(*s.progress);
    return values;
  };
  ASSERT_TRUE(pump_until([&] {
    auto v = progress_of_a();
    return !v.empty() && v.back() == 1.0;
  }));
  auto values = progress_of_a();
  EXPECT_TRUE(std::is_sorted(values.begin(), values.end()));
  EXPECT_GE(values.size(), 2u);
  EXPECT_EQ(call([&] { return client_->BytesTrimmedTotal(); }), bytes);
}

TEST_F(BusService, AnnouncesProgressAtMostFourTimesASecond) {
  call([&] { client_->TrimNow({kMountA}, true); });
  const auto start = std::chrono::steady_clock::now();
  run_pass(4096, std::chrono::milliseconds{20});  // 8 chunks in ~160 ms
  pump_for(std::chrono::milliseconds{300});       // let the last one out
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::size_t announced = 0;
  for (const auto& s : signals_named("PropertiesChanged"))
    if (s.path == fs_path(kIdA) && s.progress) ++announced;
  EXPECT_GE(announced, 1u);
  EXPECT_LE(static_cast<double>(announced), seconds * 4 + 1);
  EXPECT_LT(announced, 8u);  // fewer than one per chunk
}

TEST_F(BusService, AnnouncesManagerStateChangesWithPropertiesChanged) {
  call([&] { client_->TrimNow({kMountA}, true); });
  run_pass(4096, std::chrono::milliseconds{5});
  std::vector<std::string> states;
  for (const auto& s : signals_named("PropertiesChanged"))
    if (s.path == bus::kManagerPath && s.text.count("State")) states.push_back(s.text.at("State"));
  EXPECT_THAT(states, ElementsAre("trimming", "idle"));
}

TEST_F(BusService, HandsOutNoChunkOncePauseHasReturned) {
  call([&] { client_->TrimNow({kMountA}, true); });
  auto first = take_jobs();
  ASSERT_EQ(first.size(), 1u);
  call([&] { client_->Pause({kMountA}); });
  finish(first[0], 4096);  // the chunk already in the kernel completes
  EXPECT_TRUE(take_jobs().empty());
  EXPECT_EQ(fs_state(kIdA), "paused");

  call([&] { client_->Resume({kMountA}); });
  auto next = take_jobs();
  ASSERT_EQ(next.size(), 1u);
  // From the cursor, not from zero.
  EXPECT_EQ(next[0].range.start, first[0].range.start + first[0].range.len);
  EXPECT_GT(control_.kicks, 0);
}

TEST_F(BusService, PauseWithAnEmptyListPausesEveryFilesystem) {
  call([&] { client_->Pause({}); });
  EXPECT_EQ(call([&] { return client_->State(); }), "paused");
  EXPECT_EQ(fs_state(kIdA), "paused");
  EXPECT_EQ(fs_state(kIdB), "paused");
  call([&] { client_->Resume({}); });
  EXPECT_EQ(call([&] { return client_->State(); }), "idle");
  EXPECT_NE(fs_state(kIdB), "paused");
}

TEST_F(BusService, CancelEndsThePassWithLastResultCancelled) {
  call([&] { client_->TrimNow({kMountA}, true); });
  auto jobs = take_jobs();
  ASSERT_EQ(jobs.size(), 1u);
  call([&] { client_->Cancel({kMountA}); });
  finish(jobs[0], 4096);
  ASSERT_TRUE(pump_until([&] { return !signals_named("TrimFinished").empty(); }));
  EXPECT_EQ(signals_named("TrimFinished")[0].result, "cancelled");
  FilesystemClient fs(*client_connection_, fs_path(kIdA));
  EXPECT_EQ(call([&] { return fs.LastResult(); }), "cancelled");
  EXPECT_TRUE(take_jobs().empty());
}

TEST_F(BusService, FilesystemObjectMethodsActOnTheirFilesystemOnly) {
  FilesystemClient a(*client_connection_, fs_path(kIdA));
  call([&] { a.Pause(); });
  EXPECT_EQ(fs_state(kIdA), "paused");
  EXPECT_NE(fs_state(kIdB), "paused");
  call([&] { a.Trim(true); });  // an explicit trim un-pauses
  auto jobs = take_jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].fs_id, kIdA);
}

TEST_F(BusService, RejectsARelativeMountPointAsInvalidArgument) {
  EXPECT_EQ(error_of([&] { client_->TrimNow({"srv/data"}, false); }),
            "org.trimd.trimd1.Error.InvalidArgument");
}

TEST_F(BusService, RejectsAMissingPathAsNotFound) {
  EXPECT_EQ(error_of([&] { client_->Pause({"/srv/no-such-mount-point"}); }),
            "org.trimd.trimd1.Error.NotFound");
}

TEST_F(BusService, RejectsADirectoryThatIsNotAMountPointAsNotFound) {
  TempDir dir;
  std::string message;
  try {
    call([&] { client_->Cancel({dir.path().string()}); });
  } catch (const sdbus::Error& e) {
    EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.NotFound");
    message = e.getMessage();
  }
  EXPECT_THAT(message, HasSubstr("is not a mount point"));
}

TEST_F(BusService, RejectsAPseudoFilesystemAsNotSupportedWithTheReason) {
  std::string message;
  try {
    call([&] { client_->NotifyFreed("/proc", 1 << 30); });
  } catch (const sdbus::Error& e) {
    EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.NotSupported");
    message = e.getMessage();
  }
  EXPECT_THAT(message, HasSubstr("'/proc' is not trimmed"));
}

TEST_F(BusService, ReportsAReloadErrorAsConfigInvalidNamingTheLine) {
  control_.reload_error = ConfigError("/etc/trimd/trimd.toml", 12, 14, "bad size");
  std::string message;
  try {
    call([&] { client_->Reload(); });
  } catch (const sdbus::Error& e) {
    EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.ConfigInvalid");
    message = e.getMessage();
  }
  EXPECT_THAT(message, HasSubstr("/etc/trimd/trimd.toml:12:14"));
  EXPECT_EQ(control_.reloads, 1);
  control_.reload_error.reset();
  call([&] { client_->Reload(); });
  EXPECT_EQ(control_.reloads, 2);
}

TEST_F(BusService, AddsAndRemovesObjectsAsFilesystemsComeAndGo) {
  manager_->update_filesystems({fake_filesystem(kIdA, kMountA, "fakea", kFsSize),
                                fake_filesystem("uuid-3333", "/srv/c", "fakec", kFsSize)},
                               control_.now());
  ASSERT_TRUE(pump_until([&] {
    return !signals_named("InterfacesAdded").empty() && !signals_named("InterfacesRemoved").empty();
  }));
  EXPECT_EQ(signals_named("InterfacesAdded")[0].object, fs_path("uuid-3333"));
  EXPECT_EQ(signals_named("InterfacesRemoved")[0].object, fs_path(kIdB));
  auto objects = call([&] { return client_->GetManagedObjects(); });
  EXPECT_THAT(objects, Contains(Key(sdbus::ObjectPath(fs_path("uuid-3333")))));
  EXPECT_THAT(objects, Not(Contains(Key(sdbus::ObjectPath(fs_path(kIdB))))));
}

// Latin-1 "café": not UTF-8, so not a D-Bus string as it is.
const char* const kLatin1Mount = "/srv/caf\xe9";
const char* const kLatin1MountOnTheBus = "/srv/caf\\xe9";

TEST_F(BusService, GivesAFilesystemAtANonUtf8MountPointAnObjectWithEscapedStrings) {
  manager_->update_filesystems(
      {fake_filesystem(kIdA, kMountA, "fakea", kFsSize),
       fake_filesystem(kIdB, kMountB, "fakeb", kFsSize),
       fake_filesystem("dev-/dev/fakec-/srv/caf\xe9", kLatin1Mount, "fakec", kFsSize)},
      control_.now());
  const std::string path = fs_path("dev-/dev/fakec-/srv/caf\xe9");
  EXPECT_EQ(path, "/org/trimd/trimd1/filesystem/dev_2d_2fdev_2ffakec_2d_2fsrv_2fcaf_e9");
  ASSERT_TRUE(pump_until([&] { return !signals_named("InterfacesAdded").empty(); }));
  auto objects = call([&] { return client_->GetManagedObjects(); });
  ASSERT_THAT(objects, Contains(Key(sdbus::ObjectPath(path))));
  EXPECT_EQ(objects.at(sdbus::ObjectPath(path))
                .at(bus::kFilesystemInterface)
                .at("MountPoint")
                .get<std::string>(),
            kLatin1MountOnTheBus);
  // The escaped name is what a client can send back.
  call([&] { client_->Pause({kLatin1MountOnTheBus}); });
  FilesystemClient fs(*client_connection_, path);
  EXPECT_EQ(call([&] { return fs.State(); }), "paused");
}

TEST_F(BusService, KeepsTheManagerWorkingWhenTheBusGoesAway) {
  call([&] { client_->TrimNow({kMountA}, true); });
  disconnect_client();
  bus_.reset();
  pump_for(std::chrono::milliseconds{100});

  // Every chunk reports back, and each report makes the service announce.
  int chunks = 0;
  ASSERT_TRUE(pump_until([&] {
    for (const auto& job : take_jobs()) {
      finish(job, 4096);
      ++chunks;
    }
    return manager_->finished_passes().count(kIdA) > 0;
  }));
  EXPECT_EQ(chunks, 8);
  EXPECT_EQ(manager_->finished_passes().at(kIdA).result, PassResult::Success);
}

}  // namespace
}  // namespace trimd::test

namespace trimd::test {
namespace {

class HonestProgress : public BusService {
 protected:
  // /proc/diskstats samples of fakea, `seconds_ago` before now.
  void sample_fakea(int seconds_ago, std::uint64_t writes) {
    DiskCounters counters;
    counters.writes_completed = writes;
    counters.sectors_written = writes * 8;
    counters.ms_writing = writes / 5;
    manager_->observe_diskstats({DiskStat{7, 0, "fakea", counters}},
                                control_.now() - std::chrono::seconds{seconds_ago});
  }
  // The values fs A's State took, in the order announced.
  std::vector<std::string> states_of_a() {
    std::vector<std::string> states;
    for (const auto& s : signals_named("PropertiesChanged"))
      if (s.path == fs_path(kIdA) && s.text.count("State")) states.push_back(s.text.at("State"));
    return states;
  }
};

TEST_F(HonestProgress, APassWaitsNamingTheBusyDiskThenTrimsAndAnnouncesItsStartAfterTheFirstChunk) {
  sample_fakea(100, 0);
  sample_fakea(90, 500000);  // foreground writes: over the limits
  call([&] { client_->TrimNow({kMountA}, false); });
  EXPECT_TRUE(take_jobs().empty());
  pump_for(std::chrono::milliseconds{50});
  EXPECT_EQ(fs_state(kIdA), "waiting");
  FilesystemClient fs(*client_connection_, fs_path(kIdA));
  EXPECT_THAT(call([&] { return fs.StateReason(); }), HasSubstr("fakea"));
  EXPECT_TRUE(signals_named("TrimStarted").empty()) << "nothing issued yet";

  sample_fakea(60, 500000);  // quiet for longer than the idle window since
  sample_fakea(0, 500000);
  run_pass(4096, std::chrono::milliseconds{5});

  const auto states = states_of_a();
  const auto waiting = std::find(states.begin(), states.end(), "waiting");
  ASSERT_NE(waiting, states.end());
  EXPECT_NE(std::find(waiting, states.end(), "trimming"), states.end()) << "waiting, then trimming";
  // TrimStarted follows the State change that the first chunk caused.
  const auto all = signals();
  std::size_t trimming_at = all.size(), started_at = all.size();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (trimming_at == all.size() && all[i].path == fs_path(kIdA) && all[i].text.count("State") &&
        all[i].text.at("State") == "trimming")
      trimming_at = i;
    if (started_at == all.size() && all[i].member == "TrimStarted") started_at = i;
  }
  ASSERT_LT(started_at, all.size());
  EXPECT_LT(trimming_at, started_at);
  EXPECT_GT(call([&] { return fs.LastWaitDuration(); }), 0u);
  EXPECT_EQ(call([&] { return client_->PassesTotal(); }), 1u);
}

TEST_F(HonestProgress, GetHistoryReturnsTheFinishedPassAndNotFoundForAnUnknownMount) {
  call([&] { client_->TrimNow({kMountA}, true); });
  const std::uint64_t bytes = run_pass(4096, std::chrono::milliseconds{5});
  const auto history = call([&] { return client_->GetHistory(kMountA); });
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].get<0>(), kMountA);
  EXPECT_EQ(history[0].get<5>(), bytes);
  EXPECT_EQ(history[0].get<6>(), "success");
  EXPECT_EQ(error_of([&] { client_->GetHistory("/no/such/mount"); }),
            "org.trimd.trimd1.Error.NotFound");
  EXPECT_EQ(error_of([&] { client_->GetHistory("relative"); }),
            "org.trimd.trimd1.Error.InvalidArgument");
}

}  // namespace
}  // namespace trimd::test
