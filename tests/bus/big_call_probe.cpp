// A hostile caller and a bystander, as one program (run as any uid):
//   big_call_probe <bus address> <path bytes> [<callers> [<paths>]]
// sends Manager.Pause with <paths> (default 1) paths "/a/a/..." of <path
// bytes> bytes each (more than a command line may hold, hence not busctl),
// from <callers> (default 1) connections at once, and for as long as those
// calls are out (and a little longer), calls Properties.GetAll on another
// connection again and again. Prints "call <error name or none>" as each
// call ends, then "pause_ms=<n> pause_error=<error name of the first call>
// getall_ms=<slowest GetAll> getalls=<n>".
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <sdbus-c++/sdbus-c++.h>

namespace {

using Ms = std::chrono::milliseconds;
constexpr const char* kName = "org.trimd.trimd1";
constexpr const char* kPath = "/org/trimd/trimd1";
constexpr const char* kManager = "org.trimd.trimd1.Manager";
// Callers wait as long as it takes: how soon a big call is answered is set
// by dbus-daemon, which moves a message 2 KiB per main-loop turn (about 9 s
// of its CPU for 40 of 16 MiB, against trimd's 2 s), so on a loaded
// machine it is minutes; the tests bound the whole run instead.
constexpr std::chrono::minutes kCallTimeout{10};

long since(std::chrono::steady_clock::time_point start) {
  return static_cast<long>(
      std::chrono::duration_cast<Ms>(std::chrono::steady_clock::now() - start).count());
}

std::string a_path_of(std::size_t bytes) {
  std::string path;
  path.reserve(bytes + 2);
  while (path.size() < bytes) path += "/a";
  path.resize(bytes);
  return path;
}

// The error name of Pause(paths), or "none".
std::string pause(const std::string& address, const std::vector<std::string>& paths) {
  auto connection = sdbus::createSessionBusConnectionWithAddress(address);
  auto proxy = sdbus::createProxy(*connection, kName, kPath);
  try {
    proxy->callMethod("Pause").onInterface(kManager).withTimeout(kCallTimeout).withArguments(paths);
  } catch (const sdbus::Error& e) {
    return e.getName();
  }
  return "none";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    std::fprintf(stderr, "usage: %s ADDRESS PATH_BYTES [CALLERS [PATHS]]\n", argv[0]);
    return 2;
  }
  const std::string address = argv[1];
  const std::size_t callers = argc > 3 ? std::stoul(argv[3]) : 1;
  const std::vector<std::string> paths(argc > 4 ? std::stoul(argv[4]) : 1,
                                       a_path_of(std::stoul(argv[2])));
  auto bystander = sdbus::createSessionBusConnectionWithAddress(address);
  auto properties = sdbus::createProxy(*bystander, kName, kPath);

  const auto pause_start = std::chrono::steady_clock::now();
  std::atomic<long> pause_ms{-1};
  std::atomic<std::size_t> ended{0};
  std::vector<std::future<std::string>> errors;
  for (std::size_t i = 0; i < callers; ++i)
    errors.push_back(std::async(std::launch::async, [&] {
      auto name = pause(address, paths);
      std::printf("call %s\n", name.c_str());
      std::fflush(stdout);
      if (++ended == callers) pause_ms = since(pause_start);
      return name;
    }));
  long slowest = 0;
  int getalls = 0;
  std::map<std::string, sdbus::Variant> values;
  // At least a second's worth, so that some GetAll meets the big call in
  // trimd; and the last must succeed. dbus-daemon refuses a call while its
  // queue to trimd is full (LimitsExceeded, with many callers): not timed.
  while (pause_ms < 0 || getalls < 20 || values.empty()) {
    const auto start = std::chrono::steady_clock::now();
    values.clear();
    try {
      properties->callMethod("GetAll")
          .onInterface("org.freedesktop.DBus.Properties")
          .withTimeout(kCallTimeout)
          .withArguments(std::string(kManager))
          .storeResultsTo(values);
      slowest = std::max(slowest, since(start));
    } catch (const sdbus::Error& e) {
      if (e.getName() != "org.freedesktop.DBus.Error.LimitsExceeded") throw;
    }
    ++getalls;
    std::this_thread::sleep_for(Ms{50});
  }
  std::string name;
  for (auto& error : errors) {
    const std::string one = error.get();
    if (name.empty()) name = one;
  }
  std::printf("pause_ms=%ld pause_error=%s getall_ms=%ld getalls=%d\n", pause_ms.load(),
              name.c_str(), slowest, getalls);
  return values.count("State") == 1 ? 0 : 1;
}
