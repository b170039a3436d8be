// Taking over inline discard on the bus: TakeOver and HandBack need root or
// polkit like every other change, and the filesystem objects show what
// trimd did (Takeover, TakeoverReason, TakenOverSince, DiscardMode).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "bus_names.hpp"
#include "service_harness.hpp"

namespace trimd::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class BusTakeover : public ServiceHarness {
 protected:
  CommandResult as_nobody_call(const std::string& method) {
    return call([&] {
      return run_command(
          as_nobody(bus_->busctl({"call", bus::kBusName, bus::kManagerPath, bus::kManagerInterface,
                                  method, "as", "1", kMountA})));
    });
  }
  bool saw_change_of(const std::string& property) const {
    for (const auto& signal : signals_named("PropertiesChanged"))
      if (signal.path == fs_path(kIdA) &&
          std::count(signal.changed.begin(), signal.changed.end(), property))
        return true;
    return false;
  }
};

TEST_F(BusTakeover, RefusesANonRootCallerBeforeTouchingAnything) {
  TRIMD_REQUIRE_PROGRAM("setpriv");
  TRIMD_REQUIRE_PROGRAM("busctl");
  for (const char* method : {"TakeOver", "HandBack"}) {
    const auto result = as_nobody_call(method);
    EXPECT_NE(result.exit_code, 0) << method;
    EXPECT_THAT(result.err,
                HasSubstr("requires root (or polkit authorization org.trimd.trimd1.manage)"));
  }
  EXPECT_TRUE(control_.taken_over.empty());
  EXPECT_TRUE(control_.handed_back.empty());
}

TEST_F(BusTakeover, HandsRootsRequestToTheDaemonByFilesystemId) {
  call([&] { client_->TakeOver({kMountA}); });
  call([&] { client_->HandBack({kMountA, kMountB}); });
  ASSERT_EQ(control_.taken_over.size(), 1u);
  EXPECT_THAT(control_.taken_over[0], ElementsAre(kIdA));
  ASSERT_EQ(control_.handed_back.size(), 1u);
  EXPECT_THAT(control_.handed_back[0], ElementsAre(kIdA, kIdB));
}

TEST_F(BusTakeover, AnswersAnUnknownMountPointWithNotFound) {
  EXPECT_EQ(error_of([&] { client_->TakeOver({"/srv/not-tracked-anywhere"}); }),
            "org.trimd.trimd1.Error.NotFound");
  EXPECT_TRUE(control_.taken_over.empty());
}

TEST_F(BusTakeover, ShowsATakeoverAndAnnouncesIt) {
  FilesystemClient fs(*client_connection_, fs_path(kIdA));
  EXPECT_EQ(call([&] { return fs.Takeover(); }), "none");
  EXPECT_EQ(call([&] { return fs.DiscardMode(); }), "");
  const TimePoint since = from_usec(1'800'000'000'000'000);
  manager_->set_takeover(kIdA, {TakeoverStatus::TakenOver, "", since},
                         TakeoverRecord{since, TakeoverOrigin::Request}, control_.now());
  EXPECT_TRUE(pump_until([&] { return saw_change_of("Takeover"); }));
  EXPECT_TRUE(saw_change_of("TakenOverSince"));
  EXPECT_EQ(call([&] { return fs.Takeover(); }), "taken-over");
  EXPECT_EQ(call([&] { return fs.TakenOverSince(); }), 1'800'000'000'000'000u);
}

TEST_F(BusTakeover, ExplainsWhyATakeoverIsNotPossible) {
  manager_->set_takeover(kIdA, {TakeoverStatus::NotPossible, "xfs keeps 'discard'", std::nullopt},
                         std::nullopt, control_.now());
  FilesystemClient fs(*client_connection_, fs_path(kIdA));
  EXPECT_EQ(call([&] { return fs.Takeover(); }), "not-possible");
  EXPECT_EQ(call([&] { return fs.TakeoverReason(); }), "xfs keeps 'discard'");
  EXPECT_EQ(call([&] { return fs.TakenOverSince(); }), 0u);
}

}  // namespace
}  // namespace trimd::test
