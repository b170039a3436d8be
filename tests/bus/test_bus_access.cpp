// Who may change things: root yes, other users only with polkit's consent
// (a fake polkit on the private bus), everyone may read. Non-root callers
// are real processes: busctl and dbus-send through setpriv as uid 65534,
// which also proves that trimd's bus policy file lets them reach trimd.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bus_names.hpp"
#include "service_harness.hpp"

namespace trimd::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// org.freedesktop.PolicyKit1 answering every CheckAuthorization the same way.
class FakePolkit {
 public:
  struct Request {
    std::string subject_kind;
    std::string subject_name;
    std::string action;
    std::uint32_t flags = 0;
  };

  FakePolkit(const std::string& address, bool grant) : grant_(grant) {
    connection_ = sdbus::createSessionBusConnectionWithAddress(address);
    object_ = sdbus::createObject(*connection_, "/org/freedesktop/PolicyKit1/Authority");
    object_->registerMethod("CheckAuthorization")
        .onInterface("org.freedesktop.PolicyKit1.Authority")
        .implementedAs([this](const Subject& subject, const std::string& action,
                              const std::map<std::string, std::string>&, const std::uint32_t& flags,
                              const std::string&) { return check(subject, action, flags); });
    object_->finishRegistration();
    connection_->requestName("org.freedesktop.PolicyKit1");
    connection_->enterEventLoopAsync();
  }
  ~FakePolkit() { connection_->leaveEventLoop(); }

  std::vector<Request> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  using Subject = sdbus::Struct<std::string, std::map<std::string, sdbus::Variant>>;
  using Result = sdbus::Struct<bool, bool, std::map<std::string, std::string>>;

  Result check(const Subject& subject, const std::string& action, std::uint32_t flags) {
    Request request{std::get<0>(subject), "", action, flags};
    auto name = std::get<1>(subject).find("name");
    if (name != std::get<1>(subject).end()) request.subject_name = name->second.get<std::string>();
    std::lock_guard lock(mutex_);
    requests_.push_back(request);
    return Result{grant_, false, {}};
  }

  bool grant_;
  std::unique_ptr<sdbus::IConnection> connection_;
  std::unique_ptr<sdbus::IObject> object_;
  std::mutex mutex_;
  std::vector<Request> requests_;
};

class BusAccess : public ServiceHarness {
 protected:
  void SetUp() override {
    ServiceHarness::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    TRIMD_REQUIRE_PROGRAM("setpriv");
    TRIMD_REQUIRE_PROGRAM("busctl");
    TRIMD_REQUIRE_PROGRAM("dbus-send");
  }

  CommandResult busctl_as_nobody(std::vector<std::string> args) {
    return call([&] { return run_command(as_nobody(bus_->busctl(std::move(args)))); });
  }
  CommandResult dbus_send_as_nobody(std::vector<std::string> args) {
    return call([&] { return run_command(as_nobody(bus_->dbus_send(std::move(args)))); });
  }
  CommandResult pause_a_as_nobody() {
    return busctl_as_nobody({"call", bus::kBusName, bus::kManagerPath, bus::kManagerInterface,
                             "Pause", "as", "1", kMountA});
  }
  std::string state_of_a() {
    FilesystemClient fs(*client_connection_, fs_path(kIdA));
    return call([&] { return fs.State(); });
  }
};

TEST_F(BusAccess, RefusesANonRootCallerWithoutPolkit) {
  auto result = pause_a_as_nobody();
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err,
              HasSubstr("requires root (or polkit authorization org.trimd.trimd1.manage)"));
  EXPECT_NE(state_of_a(), "paused");
}

TEST_F(BusAccess, NamesTheRefusalOrgTrimdTrimd1ErrorAccessDenied) {
  auto result = dbus_send_as_nobody({"--dest=org.trimd.trimd1", bus::kManagerPath,
                                     "org.trimd.trimd1.Manager.Cancel", "array:string:"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err, HasSubstr("org.trimd.trimd1.Error.AccessDenied"));
}

TEST_F(BusAccess, LetsANonRootCallerReadPropertiesAndObjects) {
  auto version = busctl_as_nobody(
      {"get-property", bus::kBusName, bus::kManagerPath, bus::kManagerInterface, "Version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_THAT(version.out, HasSubstr(TRIMD_TEST_VERSION));
  auto objects = busctl_as_nobody({"call", bus::kBusName, bus::kManagerPath,
                                   "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"});
  EXPECT_EQ(objects.exit_code, 0) << objects.err;
  EXPECT_THAT(objects.out, HasSubstr(kMountA));
}

TEST_F(BusAccess, LetsANonRootCallerActWhenPolkitGrantsIt) {
  FakePolkit polkit(bus_->address(), true);
  auto result = pause_a_as_nobody();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(state_of_a(), "paused");
}

TEST_F(BusAccess, AsksPolkitForTheManageActionOnBehalfOfTheCallersBusName) {
  FakePolkit polkit(bus_->address(), true);
  pause_a_as_nobody();
  auto requests = polkit.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].action, "org.trimd.trimd1.manage");
  EXPECT_EQ(requests[0].subject_kind, "system-bus-name");
  EXPECT_THAT(requests[0].subject_name, StartsWith(":"));
  EXPECT_EQ(requests[0].flags, 1u);  // AllowUserInteraction
}

TEST_F(BusAccess, RefusesANonRootCallerWhenPolkitSaysNo) {
  FakePolkit polkit(bus_->address(), false);
  auto result = dbus_send_as_nobody({"--dest=org.trimd.trimd1", fs_path(kIdA),
                                     "org.trimd.trimd1.Filesystem.Pause"});
  EXPECT_THAT(result.err, HasSubstr("org.trimd.trimd1.Error.AccessDenied"));
  EXPECT_EQ(polkit.requests().size(), 1u);
  EXPECT_NE(state_of_a(), "paused");
}

TEST_F(BusAccess, NeverAsksPolkitAboutRoot) {
  FakePolkit polkit(bus_->address(), false);
  call([&] { client_->Pause({kMountA}); });
  EXPECT_EQ(state_of_a(), "paused");
  EXPECT_TRUE(polkit.requests().empty());
}

}  // namespace
}  // namespace trimd::test
