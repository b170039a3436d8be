// Names that are not UTF-8 on the bus (issue 16, item 6): a Latin-1 mount
// point and a UTF-8 one that reads like its escape are shown as distinct
// strings, each can be named back, and no caller's GetHistory breaks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "bus_names.hpp"
#include "service_harness.hpp"

namespace trimd::test {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

const char* const kLatin1Id = "dev-/dev/fakec-/srv/caf\xe9";
const char* const kLatin1Mount = "/srv/caf\xe9";
const char* const kLatin1OnTheBus = "/srv/caf\\xe9";
const char* const kLookalikeId = "dev-/dev/faked-/srv/caf\\xe9";
const char* const kLookalikeMount = "/srv/caf\\xe9";  // a backslash, "x", "e", "9"
const char* const kLookalikeOnTheBus = "/srv/caf\\x5cxe9";

class NotUtf8 : public ServiceHarness {
 protected:
  void SetUp() override {
    ServiceHarness::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    manager_->update_filesystems({fake_filesystem(kIdA, kMountA, "fakea", kFsSize),
                                  fake_filesystem(kLatin1Id, kLatin1Mount, "fakec", kFsSize),
                                  fake_filesystem(kLookalikeId, kLookalikeMount, "faked", kFsSize)},
                                 control_.now());
    ASSERT_TRUE(pump_until([&] { return signals_named("InterfacesAdded").size() >= 2; }));
  }

  std::string state_of(const std::string& id) {
    FilesystemClient fs(*client_connection_, fs_path(id));
    return call([&] { return fs.State(); });
  }

  // Trims the filesystem at `mount_point` (as the bus shows it) to the end.
  void trim(const std::string& mount_point) {
    call([&] { client_->TrimNow({mount_point}, true); });
    ASSERT_TRUE(pump_until([&] {
      for (const auto& job : take_jobs()) finish(job, 4096);
      return !signals_named("TrimFinished").empty();
    }));
  }
};

TEST_F(NotUtf8, ShowsALatin1MountPointAndItsLookalikeAsDistinctValidStrings) {
  auto objects = call([&] { return client_->GetManagedObjects(); });
  std::set<std::string> shown;
  for (const auto& [path, interfaces] : objects)
    shown.insert(interfaces.at(bus::kFilesystemInterface).at("MountPoint").get<std::string>());
  EXPECT_EQ(shown, (std::set<std::string>{kMountA, kLatin1OnTheBus, kLookalikeOnTheBus}));
  EXPECT_NE(fs_path(kLatin1Id), fs_path(kLookalikeId));
}

TEST_F(NotUtf8, PausesEachByTheNameItShows) {
  call([&] { client_->Pause({kLookalikeOnTheBus}); });
  EXPECT_EQ(state_of(kLookalikeId), "paused");
  EXPECT_NE(state_of(kLatin1Id), "paused");
  call([&] { client_->Pause({kLatin1OnTheBus}); });
  EXPECT_EQ(state_of(kLatin1Id), "paused");
  EXPECT_NE(state_of(kIdA), "paused");
}

TEST_F(NotUtf8, LetsAHandTypedLookalikeNameItsOwnFilesystemWhenNoByteMatches) {
  // "/srv/caf\xe9" is the Latin-1 one; a name whose escape reading matches
  // nothing falls back to the text itself.
  manager_->update_filesystems({fake_filesystem(kIdA, kMountA, "fakea", kFsSize),
                                fake_filesystem(kLookalikeId, kLookalikeMount, "faked", kFsSize)},
                               control_.now());
  call([&] { client_->Pause({kLookalikeMount}); });
  EXPECT_EQ(state_of(kLookalikeId), "paused");
}

TEST_F(NotUtf8, GivesEveryCallerTheHistoryWithTheNamesAsShown) {
  trim(kLatin1OnTheBus);
  const auto all = call([&] { return client_->GetHistory(""); });
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].get<0>(), kLatin1OnTheBus);
  EXPECT_EQ(all[0].get<6>(), "success");
  // The name shown is the name to ask with.
  const auto one = call([&] { return client_->GetHistory(all[0].get<0>()); });
  ASSERT_EQ(one.size(), 1u);
  EXPECT_TRUE(call([&] { return client_->GetHistory(kLookalikeOnTheBus); }).empty())
      << "the lookalike was never trimmed";
}

TEST_F(NotUtf8, NamesAnUnknownNonUtf8PathInItsErrorAsShown) {
  try {
    call([&] { client_->Pause({"/srv/no-such-caf\\xe9"}); });
    FAIL() << "no error";
  } catch (const sdbus::Error& e) {
    EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.NotFound");
    EXPECT_THAT(e.getMessage(), HasSubstr("/srv/no-such-caf\\xe9"));
  }
}

// Issue 16 item 3: GetHistory answered a 16 MiB argument with a 16 MiB error.
TEST_F(NotUtf8, GetHistoryNamesWhatIsWrongWithAnArgumentWithoutEchoingIt) {
  for (const std::string& bad :
       {"relative/" + std::string(1000, 'r'), "/" + std::string(1 << 20, 'a')}) {
    try {
      call([&] { client_->GetHistory(bad); });
      FAIL() << "no error";
    } catch (const sdbus::Error& e) {
      EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.InvalidArgument");
      EXPECT_LT(e.getMessage().size(), 200u);
      EXPECT_THAT(e.getMessage(), Not(HasSubstr(bad.substr(0, 64))));
    }
  }
}

}  // namespace
}  // namespace trimd::test
