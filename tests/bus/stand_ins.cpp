#include "stand_ins.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <stdexcept>

namespace trimd::test {

namespace {

constexpr const char* kLogindName = "org.freedesktop.login1";
constexpr const char* kLogindPath = "/org/freedesktop/login1";
constexpr const char* kLogindManager = "org.freedesktop.login1.Manager";
constexpr const char* kUPowerName = "org.freedesktop.UPower";
constexpr const char* kUPowerPath = "/org/freedesktop/UPower";
constexpr const char* kUPowerInterface = "org.freedesktop.UPower";
// What the test asks of a stand-in, done on the stand-in's own thread.
constexpr const char* kControl = "org.trimd.test.StandIn";

SteadyTime from_ticks(std::uint64_t ticks) {
  return SteadyTime(std::chrono::steady_clock::duration(static_cast<std::int64_t>(ticks)));
}

std::uint64_t ticks(SteadyTime t) {
  return static_cast<std::uint64_t>(t.time_since_epoch().count());
}

}  // namespace

LogindStandIn::LogindStandIn(const std::string& bus_address)
    : wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (wake_.get() < 0) throw std::runtime_error("eventfd");
  connection_ = sdbus::createSessionBusConnectionWithAddress(bus_address);
  object_ = sdbus::createObject(*connection_, kLogindPath);
  object_->registerMethod("Inhibit")
      .onInterface(kLogindManager)
      .withInputParamNames("what", "who", "why", "mode")
      .withOutputParamNames("pipe_fd")
      .implementedAs([this](const std::string& what, const std::string& who, const std::string& why,
                            const std::string& mode) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw sdbus::Error("org.trimd.test.Error", "pipe2");
        {
          std::lock_guard lock(mutex_);
          inhibitors_.push_back(
              Inhibitor{what, who, why, mode, std::chrono::steady_clock::now(), {}});
          read_ends_.emplace_back(fds[0]);
        }
        const std::uint64_t one = 1;
        (void)!::write(wake_.get(), &one, sizeof one);
        // The reply carries a copy; ours closes with the UnixFd.
        return sdbus::UnixFd(fds[1], sdbus::adopt_fd);
      });
  object_->registerSignal("PrepareForSleep").onInterface(kLogindManager).withParameters<bool>();
  object_->registerSignal("PrepareForShutdown").onInterface(kLogindManager).withParameters<bool>();
  object_->registerMethod("Emit").onInterface(kControl).implementedAs(
      [this](const std::string& signal, bool start) {
        const SteadyTime before = std::chrono::steady_clock::now();
        object_->emitSignal(signal).onInterface(kLogindManager).withArguments(start);
        return ticks(before);
      });
  object_->finishRegistration();
  connection_->requestName(kLogindName);
  connection_->enterEventLoopAsync();
  watcher_ = std::thread([this] { watch_pipes(); });
  control_ = sdbus::createSessionBusConnectionWithAddress(bus_address);
  control_proxy_ = sdbus::createProxy(*control_, kLogindName, kLogindPath);
}

LogindStandIn::~LogindStandIn() {
  control_proxy_.reset();
  control_.reset();
  connection_->leaveEventLoop();
  stop_ = true;
  const std::uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
  if (watcher_.joinable()) watcher_.join();
}

// Marks each lock released when every copy of its write end is closed.
void LogindStandIn::watch_pipes() {
  while (!stop_) {
    std::vector<pollfd> fds{{wake_.get(), POLLIN, 0}};
    std::vector<std::size_t> which;
    {
      std::lock_guard lock(mutex_);
      for (std::size_t i = 0; i < read_ends_.size(); ++i)
        if (read_ends_[i].get() >= 0) {
          fds.push_back({read_ends_[i].get(), POLLIN, 0});
          which.push_back(i);
        }
    }
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    const SteadyTime now = std::chrono::steady_clock::now();
    std::uint64_t drained;
    (void)!::read(wake_.get(), &drained, sizeof drained);
    std::lock_guard lock(mutex_);
    for (std::size_t k = 1; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLHUP | POLLIN | POLLERR))) continue;
      char byte;
      if (::read(fds[k].fd, &byte, 1) > 0) continue;  // nobody writes; EOF is what counts
      const std::size_t i = which[k - 1];
      inhibitors_[i].released = now;
      read_ends_[i].reset();
      changed_.notify_all();
    }
  }
}

std::vector<LogindStandIn::Inhibitor> LogindStandIn::inhibitors() const {
  std::lock_guard lock(mutex_);
  return inhibitors_;
}

std::size_t LogindStandIn::held() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& inhibitor : inhibitors_)
    if (!inhibitor.released) ++n;
  return n;
}

std::optional<SteadyTime> LogindStandIn::wait_released(std::size_t n,
                                                       std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout,
                    [&] { return n < inhibitors_.size() && inhibitors_[n].released; });
  if (n < inhibitors_.size()) return inhibitors_[n].released;
  return std::nullopt;
}

SteadyTime LogindStandIn::emit(const std::string& signal, bool start) {
  std::uint64_t before = 0;
  control_proxy_->callMethod("Emit")
      .onInterface(kControl)
      .withArguments(signal, start)
      .storeResultsTo(before);
  return from_ticks(before);
}

SteadyTime LogindStandIn::prepare_for_sleep(bool start) { return emit("PrepareForSleep", start); }
SteadyTime LogindStandIn::prepare_for_shutdown(bool start) {
  return emit("PrepareForShutdown", start);
}

UPowerStandIn::UPowerStandIn(const std::string& bus_address, bool on_battery)
    : on_battery_(on_battery) {
  connection_ = sdbus::createSessionBusConnectionWithAddress(bus_address);
  object_ = sdbus::createObject(*connection_, kUPowerPath);
  object_->registerProperty("OnBattery").onInterface(kUPowerInterface).withGetter([this] {
    return on_battery_.load();
  });
  object_->registerMethod("Set").onInterface(kControl).implementedAs([this](bool value) {
    on_battery_ = value;
    object_->emitPropertiesChangedSignal(kUPowerInterface, {"OnBattery"});
  });
  object_->finishRegistration();
  connection_->requestName(kUPowerName);
  connection_->enterEventLoopAsync();
  control_ = sdbus::createSessionBusConnectionWithAddress(bus_address);
  control_proxy_ = sdbus::createProxy(*control_, kUPowerName, kUPowerPath);
}

UPowerStandIn::~UPowerStandIn() {
  control_proxy_.reset();
  control_.reset();
  connection_->leaveEventLoop();
}

void UPowerStandIn::set_on_battery(bool on_battery) {
  control_proxy_->callMethod("Set").onInterface(kControl).withArguments(on_battery);
}

}  // namespace trimd::test
