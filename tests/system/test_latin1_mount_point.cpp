// Issue 16, item 6, end to end: an ext4 on a loop device mounted on a
// directory whose name is Latin-1 ("caf\xe9", not UTF-8), the real trimd on
// a private dbus-daemon. Every edge shows the name escaped as systemd-escape
// does ("caf\xe9" spelt with a backslash): the bus, where that name also
// selects it for TrimNow; GetHistory, for every caller; the metrics file; the
// state file, which brings cursor and lifetime figures back after a restart.
// What a trim reclaimed is read from the backing file's allocation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include "bus_fixture.hpp"
#include "loopfs.hpp"
#include "posix_util.hpp"
#include "trimd_process.hpp"
#include "utf8.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr const char* kFilesystemInterface = "org.trimd.trimd1.Filesystem";

// A filesystem mounted on a directory of the test's choosing; unmounted
// (lazily when it must be) before the image and the directory go.
class MountedAt {
 public:
  MountedAt(const std::string& device, std::string mount_point)
      : mount_point_(std::move(mount_point)) {
    if (::mkdir(mount_point_.c_str(), 0755) != 0) throw_errno("mkdir " + mount_point_);
    if (::mount(device.c_str(), mount_point_.c_str(), "ext4", 0, "nodiscard") != 0)
      throw_errno("mount " + device);
  }
  ~MountedAt() {
    if (::umount2(mount_point_.c_str(), 0) != 0) ::umount2(mount_point_.c_str(), MNT_DETACH);
  }
  MountedAt(const MountedAt&) = delete;
  MountedAt& operator=(const MountedAt&) = delete;

 private:
  std::string mount_point_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class Latin1MountPoint : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    REQUIRE_TOOLS_OR_FAIL("dbus-daemon", "busctl", "setpriv");
    // 8 MiB block groups: a pass of many chunks, so that one can stop in the middle.
    image_.emplace(fragmented_image(Fs::Ext4, 256, 200, 256 * 1024, kExt4SmallGroups));
    image_->image.unmount();
    const std::string dir = std::filesystem::path(sandbox_.config_path()).parent_path().string();
    raw_ = dir + "/caf\xe9";
    escaped_ = dir + "/caf\\xe9";
    metrics_label_ = dir + "/caf\\\\xe9";  // Prometheus escapes the backslash once more
    metrics_ = dir + "/trimd.prom";
    mounted_.emplace(image_->image.device(), raw_);
    bus_.emplace();
  }

  // Only this filesystem may be trimmed, and only when asked (first_delay);
  // `pause` is the rest between chunks. A UUID rule, as TOML holds only UTF-8.
  void configure(const std::string& pause) {
    sandbox_.write_config(
        "[idle]\nwindow = \"1s\"\nsample_interval = \"200ms\"\n\n"
        "[trim]\nenabled = false\nfirst_delay = \"1h\"\nrandomized_delay = \"0s\"\n"
        "chunk_size = \"16MiB\"\npause = \"" +
        pause + "\"\n\n[metrics]\ntextfile = \"" + metrics_ + "\"\n\n[[filesystem]]\nuuid = \"" +
        image_->image.blkid_uuid() + "\"\nenabled = true\n");
  }

  void start_trimd(const std::string& pause = "0s") {
    configure(pause);
    trimd_.emplace(sandbox_.args_on_bus(bus_->address()),
                   sandbox_.log_path("trimd" + std::to_string(++starts_)));
    ASSERT_TRUE(wait_until([&] { return on_the_bus() || !trimd_->running(); }, 15s, 50ms) &&
                trimd_->running())
        << "trimd did not claim org.trimd.trimd1\n"
        << trimd_->log();
  }

  void stop_trimd() {
    trimd_->send(SIGTERM);
    EXPECT_EQ(trimd_->wait_for_exit(30s), 0) << trimd_->log();
  }

  bool on_the_bus() const {
    return run_command(bus_->busctl({"status", "org.trimd.trimd1"}), 5s).ok();
  }

  nlohmann::json busctl_json(std::vector<std::string> args) const {
    args.insert(args.begin(), "--json=short");
    const CommandResult result = run_command(bus_->busctl(std::move(args)), 10s);
    if (!result.ok()) throw std::runtime_error("busctl: " + result.err);
    return nlohmann::json::parse(result.out).at("data");
  }

  // Every Filesystem object's MountPoint, by object path.
  std::map<std::string, std::string> mount_points_on_the_bus() const {
    const auto objects = busctl_json({"call", "org.trimd.trimd1", "/org/trimd/trimd1",
                                      "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"})
                             .at(0);
    std::map<std::string, std::string> shown;
    for (const auto& [path, interfaces] : objects.items())
      if (interfaces.contains(kFilesystemInterface))
        shown[path] = interfaces[kFilesystemInterface].at("MountPoint").at("data");
    return shown;
  }

  // The object whose MountPoint is the escaped name, or "".
  std::string object_path() const {
    for (const auto& [path, mount_point] : mount_points_on_the_bus())
      if (mount_point == escaped_) return path;
    return {};
  }

  nlohmann::json property(const std::string& name) const {
    return busctl_json(
               {"get-property", "org.trimd.trimd1", object_path(), kFilesystemInterface, name})
        .get<nlohmann::json>();
  }

  CommandResult trim_now(const std::string& name) const {
    return run_command(
        bus_->busctl({"call", "org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager",
                      "TrimNow", "asb", "1", name, "true"}),
        10s);
  }

  // TrimNow by the escaped name, and the pass to its end.
  void trim_to_the_end() {
    const CommandResult call = trim_now(escaped_);
    ASSERT_TRUE(call.ok()) << call.err << trimd_->log();
    ASSERT_TRUE(trimd_->wait_for_event(EventId::PassFinished, raw_, 60s)) << trimd_->log();
  }

  std::uint64_t allocated() const {
    image_->image.sync();
    return image_->image.allocated_bytes();
  }

  TrimdSandbox sandbox_;
  std::optional<FragmentedImage> image_;
  std::optional<MountedAt> mounted_;
  std::optional<PrivateBus> bus_;
  std::optional<TrimdProcess> trimd_;
  std::string raw_;
  std::string escaped_;
  std::string metrics_label_;
  std::string metrics_;
  int starts_ = 0;
};

TEST_F(Latin1MountPoint, ShowsItEscapedOnTheBusOnceAndTrimsItByThatName) {
  const std::uint64_t before = allocated();
  ASSERT_NO_FATAL_FAILURE(start_trimd());
  const auto shown = mount_points_on_the_bus();
  EXPECT_EQ(std::count_if(shown.begin(), shown.end(),
                          [&](const auto& entry) { return entry.second == escaped_; }),
            1);
  for (const auto& [path, mount_point] : shown) {
    EXPECT_TRUE(is_valid_utf8(mount_point)) << path;
    EXPECT_EQ(mount_point.find('\xe9'), std::string::npos) << path;
  }

  ASSERT_NO_FATAL_FAILURE(trim_to_the_end());
  const std::uint64_t after = allocated();
  std::cout << "[latin1] allocated " << mib(before) << " -> " << mib(after) << " MiB ("
            << mib(image_->deleted) << " MiB deleted)" << std::endl;
  EXPECT_LT(after + image_->deleted / 2, before) << trimd_->log();
  EXPECT_EQ(property("LastResult"), "success");
}

TEST_F(Latin1MountPoint, GivesItsHistoryToEveryCaller) {
  ASSERT_NO_FATAL_FAILURE(start_trimd());
  ASSERT_NO_FATAL_FAILURE(trim_to_the_end());
  const std::vector<std::string> history{TRIMCTL_BINARY, "--address=" + bus_->address(), "history"};
  for (const auto& argv : {history, as_nobody(history)}) {
    const CommandResult result = run_command(argv, 10s);
    EXPECT_TRUE(result.ok()) << argv[0] << ": " << result.err;
    EXPECT_THAT(result.out, HasSubstr(escaped_)) << argv[0];
    EXPECT_TRUE(is_valid_utf8(result.out)) << argv[0];
  }
  const CommandResult call = run_command(
      as_nobody(bus_->busctl({"call", "org.trimd.trimd1", "/org/trimd/trimd1",
                              "org.trimd.trimd1.Manager", "GetHistory", "s", escaped_})),
      10s);
  EXPECT_TRUE(call.ok()) << call.err;
  EXPECT_THAT(call.out, HasSubstr("success"));
}

TEST_F(Latin1MountPoint, LabelsItsMetricsWithValidUtf8) {
  ASSERT_NO_FATAL_FAILURE(start_trimd());
  ASSERT_NO_FATAL_FAILURE(trim_to_the_end());
  stop_trimd();  // the last flush
  const std::string metrics = read_file(metrics_);
  EXPECT_TRUE(is_valid_utf8(metrics));
  EXPECT_THAT(metrics, HasSubstr("mount_point=\"" + metrics_label_ + "\""));
}

// A complete pass, then one stopped after its first chunk: the state file
// keeps the name whole, and the next trimd resumes at the cursor with the
// lifetime figures and the last result kept.
TEST_F(Latin1MountPoint, ResumesAtItsCursorWithItsFiguresAfterARestart) {
  ASSERT_NO_FATAL_FAILURE(start_trimd());
  ASSERT_NO_FATAL_FAILURE(trim_to_the_end());
  configure("1h");  // the next pass rests after its first chunk
  trimd_->send(SIGHUP);
  ASSERT_TRUE(trimd_->wait_for_event(EventId::ConfigReloaded, "", 10s)) << trimd_->log();
  ASSERT_TRUE(trim_now(escaped_).ok()) << trimd_->log();
  ASSERT_TRUE(wait_until([&] { return property("Progress").get<double>() > 0; }, 30s, 100ms))
      << trimd_->log();
  stop_trimd();
  const std::string state = sandbox_.state_file();
  EXPECT_EQ(state_string(state, raw_, "mount_point_escaped"), escaped_);
  const auto cursor = state_cursor(state, raw_);
  const auto bytes = state_integer(state, raw_, "bytes_total");
  ASSERT_TRUE(cursor && *cursor > 0) << read_file(state);
  ASSERT_TRUE(bytes && *bytes > 0) << read_file(state);
  EXPECT_EQ(state_integer(state, raw_, "passes_total"), 1) << read_file(state);

  ASSERT_NO_FATAL_FAILURE(start_trimd("1h"));
  const auto resumed = trimd_->wait_for_event(EventId::PassResumed, raw_, 30s);
  ASSERT_TRUE(resumed) << trimd_->log();
  EXPECT_EQ(field_u64(*resumed, "OFFSET"), *cursor);
  EXPECT_EQ(property("LastResult"), "success");
  EXPECT_GE(property("BytesTrimmedTotal").get<std::int64_t>(), *bytes);
  stop_trimd();
  EXPECT_EQ(state_string(state, raw_, "mount_point_escaped"), escaped_);
  EXPECT_GE(state_cursor(state, raw_).value_or(0), *cursor);
  EXPECT_GE(state_integer(state, raw_, "bytes_total").value_or(0), *bytes);
  EXPECT_EQ(state_integer(state, raw_, "passes_total"), 1);
}

}  // namespace
}  // namespace trimd::test
