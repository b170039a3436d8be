// The pure pieces of the bus layer: object path escaping, mount point
// checks, error names and mapping, changed-property lists, throttling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "bus_auth.hpp"
#include "bus_errors.hpp"
#include "bus_mount_points.hpp"
#include "bus_names.hpp"
#include "bus_property_table.hpp"
#include "bus_throttle.hpp"

namespace trimd::bus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

TEST(ObjectPathEscaping, KeepsLettersAndDigits) {
  EXPECT_EQ(escape_path_element("abcXYZ019"), "abcXYZ019");
}

TEST(ObjectPathEscaping, EncodesEveryOtherByteAsUnderscoreAndLowerCaseHex) {
  EXPECT_EQ(escape_path_element("uuid-12ab"), "uuid_2d12ab");
  EXPECT_EQ(escape_path_element("dev-/dev/sda1-/mnt"), "dev_2d_2fdev_2fsda1_2d_2fmnt");
  EXPECT_EQ(escape_path_element("a_b c"), "a_5fb_20c");
  EXPECT_EQ(escape_path_element("\xc3\xa9"), "_c3_a9");
}

TEST(ObjectPathEscaping, EncodesTheEmptyStringAsALoneUnderscore) {
  EXPECT_EQ(escape_path_element(""), "_");
  EXPECT_EQ(unescape_path_element("_"), std::string{});
}

TEST(ObjectPathEscaping, RoundTripsArbitraryIds) {
  for (std::string id : {"uuid-862772b6-a66c", "dev-/dev/vda-/", "dev-tank/home-/home x", "_"})
    EXPECT_EQ(unescape_path_element(escape_path_element(id)), id) << id;
}

TEST(ObjectPathEscaping, RejectsMalformedEscapes) {
  EXPECT_EQ(unescape_path_element("abc_2"), std::nullopt);
  EXPECT_EQ(unescape_path_element("abc_zz"), std::nullopt);
  EXPECT_EQ(unescape_path_element("a-b"), std::nullopt);
  EXPECT_EQ(unescape_path_element(""), std::nullopt);
}

TEST(ObjectPathEscaping, PutsFilesystemsUnderTheManagerPath) {
  EXPECT_EQ(filesystem_object_path("uuid-1"), "/org/trimd/trimd1/filesystem/uuid_2d1");
}

TEST(BusStrings, PassValidUtf8WithoutABackslashUnchanged) {
  EXPECT_EQ(bus_string("/mnt/caf\xc3\xa9 x\ny"), "/mnt/caf\xc3\xa9 x\ny");
  EXPECT_EQ(bus_string("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");
}

TEST(BusStrings, EscapeABackslashEvenInValidUtf8SoThatNoTwoNamesLookAlike) {
  EXPECT_EQ(bus_string("/mnt/caf\\xe9"), "/mnt/caf\\x5cxe9");
  EXPECT_NE(bus_string("/mnt/caf\\xe9"), bus_string("/mnt/caf\xe9"));
  EXPECT_EQ(raw_from_bus_string(bus_string("/mnt/caf\\xe9")), "/mnt/caf\\xe9");
  EXPECT_EQ(raw_from_bus_string(bus_string("/mnt/caf\xe9")), "/mnt/caf\xe9");
}

TEST(BusStrings, EscapeEveryByteThatIsNotUtf8AndThenEveryBackslash) {
  EXPECT_EQ(bus_string("/mnt/caf\xe9"), "/mnt/caf\\xe9");
  EXPECT_EQ(bus_string("a\\b\xff"), "a\\x5cb\\xff");
  EXPECT_EQ(bus_string("\xc3"), "\\xc3");                             // cut short
  EXPECT_EQ(bus_string("\xc0\xaf"), "\\xc0\\xaf");                    // overlong "/"
  EXPECT_EQ(bus_string("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(bus_string("\xef\xbf\xbe"), "\\xef\\xbf\\xbe");           // U+FFFE
  EXPECT_EQ(bus_string("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(bus_string("\xc3\xa9\xe9"), "\xc3\xa9\\xe9");             // keeps the valid part
}

TEST(BusTimestamps, AreMicrosecondsSinceTheEpochOrZeroForNever) {
  EXPECT_EQ(timestamp_usec(std::nullopt), 0u);
  EXPECT_EQ(timestamp_usec(from_usec(1700000000123456)), 1700000000123456u);
}

TEST(MountPointCheck, RejectsRelativePathsAsInvalidArgument) {
  try {
    normalize_mount_point("mnt/data");
    FAIL() << "no error";
  } catch (const sdbus::Error& e) {
    EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.InvalidArgument");
    EXPECT_EQ(e.getMessage(), "relative path 'mnt/data': mount points must be absolute");
  }
  EXPECT_THROW(normalize_mount_point(""), sdbus::Error);
}

TEST(MountPointCheck, DropsTrailingSlashesAndDotSegments) {
  EXPECT_EQ(normalize_mount_point("/mnt/data/"), "/mnt/data");
  EXPECT_EQ(normalize_mount_point("/mnt/./data//"), "/mnt/data");
  EXPECT_EQ(normalize_mount_point("/"), "/");
}

TEST(MountPointCheck, StepsBackForDotDotButNeverAboveTheRoot) {
  EXPECT_EQ(normalize_mount_point("/a/b/../c"), "/a/c");
  EXPECT_EQ(normalize_mount_point("/a/b/.."), "/a");
  EXPECT_EQ(normalize_mount_point("/../.."), "/");
  EXPECT_EQ(normalize_mount_point("/a/../../b/"), "/b");
  EXPECT_EQ(normalize_mount_point("//a///b/./"), "/a/b");
  EXPECT_EQ(normalize_mount_point("/a/.../b.."), "/a/.../b..");
}

TEST(MountPointCheck, AgreesWithTheLexicalNormalFormOnAbsolutePaths) {
  for (const char* path : {"/", "/mnt", "/mnt/", "/a/./b/../c/", "/a/b/c/../../d", "/..", "/a//b",
                           "/x/y/z/../../..", "/.hidden/./.."}) {
    std::string expected = std::filesystem::path(path).lexically_normal().string();
    while (expected.size() > 1 && expected.back() == '/') expected.pop_back();
    EXPECT_EQ(normalize_mount_point(path), expected) << path;
  }
}

TEST(MountPointCheck, AcceptsAPathOfPathMaxBytes) {
  std::string path;
  while (path.size() < kMaxPathBytes) path += "/a";
  path.resize(kMaxPathBytes);
  EXPECT_EQ(normalize_mount_point(path).size(), kMaxPathBytes);
}

std::string invalid_argument_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const sdbus::Error& e) {
    EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.InvalidArgument");
    return e.getMessage();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(MountPointCheck, RefusesALongerPathAsInvalidArgumentNamingTheBound) {
  const std::string path(kMaxPathBytes + 1, '/');
  EXPECT_THAT(invalid_argument_message([&] { normalize_mount_point(path); }),
              HasSubstr("at most 4096 (PATH_MAX)"));
}

TEST(MountPointCheck, RefusesTooManyMountPointsInOneCall) {
  std::vector<std::string> many(kMaxMountPoints + 1, "/");
  EXPECT_THAT(invalid_argument_message([&] { check_mount_point_list(many); }),
              HasSubstr("at most 4096"));
  many.pop_back();
  EXPECT_NO_THROW(check_mount_point_list(many));
}

TEST(MountPointCheck, RefusesTooManyBytesInOneCall) {
  std::vector<std::string> big(kMaxTotalPathBytes / kMaxPathBytes + 1,
                               std::string(kMaxPathBytes, '/'));
  EXPECT_THAT(invalid_argument_message([&] { check_mount_point_list(big); }),
              HasSubstr("bytes of mount points"));
}

TEST(MountPointCheck, CallsAMissingPathNotFound) {
  auto e = untracked_path_error("/nope", UntrackedPath{false, std::nullopt});
  EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.NotFound");
  EXPECT_EQ(e.getMessage(), "'/nope' does not exist");
}

TEST(MountPointCheck, CallsAnExistingNonMountPointNotFound) {
  auto e = untracked_path_error("/etc", UntrackedPath{true, std::nullopt});
  EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.NotFound");
  EXPECT_EQ(e.getMessage(), "'/etc' is not a mount point");
}

TEST(MountPointCheck, CallsASkippedMountNotSupportedWithItsReason) {
  auto e = untracked_path_error("/proc", UntrackedPath{true, "pseudo filesystem (proc)"});
  EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.NotSupported");
  EXPECT_EQ(e.getMessage(), "'/proc' is not trimmed: pseudo filesystem (proc)");
}

TEST(MountPointCheck, PointsToDryRunWhenTheReasonIsUnknown) {
  auto e = untracked_path_error("/new", UntrackedPath{true, ""});
  EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.NotSupported");
  EXPECT_THAT(e.getMessage(), HasSubstr("trimd --dry-run"));
}

TEST(MountPointCheck, AsksTheInspectorOnlyAboutUntrackedPaths) {
  Manager manager(Config{}, StateMap{}, Clock::now());
  DiscoveredFs fs;
  fs.id = "uuid-1";
  fs.mount.mount_point = "/data";
  manager.update_filesystems({fs}, Clock::now());
  std::vector<std::string> asked;
  auto inspect = [&asked](const std::string& path) {
    asked.push_back(path);
    return UntrackedPath{};
  };
  EXPECT_THAT(ids_for_mount_points(manager, {"/data/"}, inspect), ElementsAre("uuid-1"));
  EXPECT_THAT(asked, IsEmpty());
  EXPECT_THROW(ids_for_mount_points(manager, {"/data", "/other"}, inspect), sdbus::Error);
  EXPECT_THAT(asked, ElementsAre("/other"));
}

TEST(MountPointCheck, NamesANonUtf8MountPointByTheStringTheBusShows) {
  Manager manager(Config{}, StateMap{}, Clock::now());
  DiscoveredFs latin1;
  latin1.id = "dev-latin1";
  latin1.mount.mount_point = "/srv/caf\xe9";
  DiscoveredFs lookalike;
  lookalike.id = "dev-lookalike";
  lookalike.mount.mount_point = "/srv/caf\\xe9";
  DiscoveredFs lone;
  lone.id = "dev-lone";
  lone.mount.mount_point = "/srv/a\\b";
  manager.update_filesystems({latin1, lookalike, lone}, Clock::now());
  const auto none = [](const std::string&) { return UntrackedPath{}; };
  EXPECT_THAT(ids_for_mount_points(manager, {bus_string("/srv/caf\xe9"), "/srv/caf\xe9"}, none),
              ElementsAre("dev-latin1", "dev-latin1"));
  EXPECT_THAT(ids_for_mount_points(manager, {bus_string("/srv/caf\\xe9")}, none),
              ElementsAre("dev-lookalike"));
  // Text that is no escape (a lone backslash) is taken as it is.
  EXPECT_THAT(ids_for_mount_points(manager, {"/srv/a\\b/"}, none), ElementsAre("dev-lone"));
}

TEST(MountPointCheck, RefusesAnOverlongStringBeforeAnythingElseWithoutEchoingIt) {
  const std::string overlong(kMaxBusPathBytes + 1, 'q');
  try {
    check_mount_point_list({"/ok", overlong});
    FAIL() << "no error";
  } catch (const sdbus::Error& e) {
    EXPECT_EQ(e.getName(), "org.trimd.trimd1.Error.InvalidArgument");
    EXPECT_THAT(e.getMessage(), Not(HasSubstr("qqqq")));
  }
}

TEST(PendingPolkitChecks, AllowFourPerUserAndSixteenInAll) {
  PendingChecks pending;
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(pending.try_add(1000));
  EXPECT_FALSE(pending.try_add(1000));
  for (uid_t uid = 1001; uid < 1004; ++uid)
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(pending.try_add(uid));
  EXPECT_EQ(pending.total(), kMaxPending);
  EXPECT_FALSE(pending.try_add(2000)) << "no room left in all";
  pending.remove(1001);
  EXPECT_FALSE(pending.try_add(1000)) << "1000 still has four";
  EXPECT_TRUE(pending.try_add(2000));
  EXPECT_FALSE(pending.try_add(2001)) << "full again in all";
  pending.remove(1000);
  EXPECT_TRUE(pending.try_add(1000));
}

TEST(BusErrors, EscapeRawBytesInTheirMessages) {
  EXPECT_EQ(make_error(ErrorKind::NotFound, "'/srv/caf\xe9' does not exist").getMessage(),
            "'/srv/caf\\xe9' does not exist");
}

TEST(BusErrors, UseTheOrgTrimdTrimd1ErrorNames) {
  EXPECT_EQ(error_name(ErrorKind::NotFound), "org.trimd.trimd1.Error.NotFound");
  EXPECT_EQ(error_name(ErrorKind::NotSupported), "org.trimd.trimd1.Error.NotSupported");
  EXPECT_EQ(error_name(ErrorKind::InvalidArgument), "org.trimd.trimd1.Error.InvalidArgument");
  EXPECT_EQ(error_name(ErrorKind::AccessDenied), "org.trimd.trimd1.Error.AccessDenied");
  EXPECT_EQ(error_name(ErrorKind::Busy), "org.trimd.trimd1.Error.Busy");
  EXPECT_EQ(error_name(ErrorKind::ConfigInvalid), "org.trimd.trimd1.Error.ConfigInvalid");
}

TEST(BusErrors, MapEveryManagerErrorKindToItsNamesake) {
  using K = ManagerError::Kind;
  EXPECT_EQ(to_bus_error(ManagerError(K::NotFound, "x")).getName(),
            error_name(ErrorKind::NotFound));
  EXPECT_EQ(to_bus_error(ManagerError(K::NotSupported, "x")).getName(),
            error_name(ErrorKind::NotSupported));
  EXPECT_EQ(to_bus_error(ManagerError(K::InvalidArgument, "x")).getName(),
            error_name(ErrorKind::InvalidArgument));
  EXPECT_EQ(to_bus_error(ManagerError(K::Busy, "why")).getMessage(), "why");
}

TEST(BusErrors, TranslateConfigErrorsAndUnexpectedExceptions) {
  auto reply_for = [](auto thrown) {
    try {
      throw thrown;
    } catch (...) {
      return current_exception_as_bus_error();
    }
  };
  auto config = reply_for(ConfigError("/etc/trimd/trimd.toml", 3, 7, "unknown key"));
  EXPECT_EQ(config.getName(), "org.trimd.trimd1.Error.ConfigInvalid");
  EXPECT_THAT(config.getMessage(), HasSubstr("/etc/trimd/trimd.toml:3:7"));
  EXPECT_EQ(reply_for(std::runtime_error("boom")).getName(), "org.freedesktop.DBus.Error.Failed");
  EXPECT_EQ(reply_for(make_error(ErrorKind::Busy, "b")).getName(), error_name(ErrorKind::Busy));
}

TEST(ChangedProperties, ListsNothingForEqualStatuses) {
  FsStatus status;
  status.mount_point = "/";
  EXPECT_THAT(changed_properties(status, status), IsEmpty());
}

TEST(ChangedProperties, NamesExactlyTheFieldsThatDiffer) {
  FsStatus before;
  FsStatus after = before;
  after.state = FsState::Trimming;
  after.progress = 0.5;
  after.next_trim = from_usec(1);
  EXPECT_THAT(changed_properties(before, after), ElementsAre("State", "Progress", "NextTrim"));
}

TEST(ChangedProperties, IgnoresFieldsThatAreNotBusProperties) {
  FsStatus before;
  FsStatus after = before;
  after.gentle = true;
  after.id = "other";
  EXPECT_THAT(changed_properties(before, after), IsEmpty());
}

TEST(ProgressThrottle, LetsTheFirstValueGoAtOnce) {
  Throttle throttle(std::chrono::milliseconds{250});
  EXPECT_TRUE(throttle.try_send(Throttle::Clock::time_point{} + std::chrono::seconds{1}));
}

TEST(ProgressThrottle, HoldsValuesBackUntilTheIntervalHasPassed) {
  Throttle throttle(std::chrono::milliseconds{250});
  const auto t0 = Throttle::Clock::time_point{} + std::chrono::seconds{1};
  ASSERT_TRUE(throttle.try_send(t0));
  EXPECT_FALSE(throttle.try_send(t0 + std::chrono::milliseconds{100}));
  EXPECT_EQ(throttle.wait(t0 + std::chrono::milliseconds{100}), std::chrono::milliseconds{150});
  EXPECT_TRUE(throttle.try_send(t0 + std::chrono::milliseconds{250}));
  EXPECT_FALSE(throttle.try_send(t0 + std::chrono::milliseconds{499}));
}

}  // namespace
}  // namespace trimd::bus
