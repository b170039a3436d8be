// /org/trimd/trimd1/filesystem/<id>: one tracked filesystem on the bus.
// Properties come from the last status the manager reported, so a Get and
// the PropertiesChanged before it always agree.
#pragma once

#include <string>

#include <sdbus-c++/sdbus-c++.h>

#include "bus_commands.hpp"
#include "bus_connection.hpp"
#include "bus_names.hpp"
#include "bus_properties.hpp"
#include "event_loop.hpp"
#include "manager.hpp"
#include "trimd1_adaptor.h"

namespace trimd::bus {

using FilesystemAdaptor =
    sdbus::AdaptorInterfaces<org::trimd::trimd1::Filesystem_adaptor, sdbus::ManagedObject_adaptor,
                             sdbus::Properties_adaptor>;

class FilesystemObject final : public FilesystemAdaptor {
 public:
  // Exported at once; `announce` sends InterfacesAdded.
  FilesystemObject(BusConnection& bus, EventLoop& loop, Commands& commands, FsStatus status,
                   bool announce);
  ~FilesystemObject();

  const std::string& id() const { return status_.id; }
  // Emits PropertiesChanged for what differs; Progress at most 4 times a second.
  void update(const FsStatus& status);
  // InterfacesRemoved, before the object goes away for good.
  void announce_removal();

 private:
  void flush_progress();
  void control(sdbus::Result<>&& result, const std::string& method, Commands::Work work);

  void Trim(sdbus::Result<>&& result, bool ignore_idle) override;
  void Pause(sdbus::Result<>&& result) override;
  void Resume(sdbus::Result<>&& result) override;
  void Cancel(sdbus::Result<>&& result) override;

  std::string MountPoint() override { return bus_string(status_.mount_point); }
  std::string Device() override { return bus_string(status_.device); }
  std::string FsType() override { return bus_string(status_.fs_type); }
  std::string UUID() override { return bus_string(status_.uuid); }
  std::vector<std::string> BackingDisks() override { return bus_strings(status_.backing_disks); }
  std::string State() override { return to_string(status_.state); }
  std::string StateReason() override { return bus_string(status_.state_reason); }
  double Progress() override { return status_.progress; }
  uint64_t Size() override { return status_.size; }
  uint64_t LastTrimStart() override;
  uint64_t LastTrimEnd() override;
  std::string LastResult() override { return bus_string(status_.last_result); }
  uint64_t LastBytesTrimmed() override { return status_.last_bytes_trimmed; }
  uint64_t NextTrim() override;
  uint64_t LastTrimDuration() override { return duration_usec(status_.last_trimming); }
  uint64_t LastWaitDuration() override { return duration_usec(status_.last_waited); }
  uint64_t BytesTrimmedTotal() override { return status_.lifetime.bytes; }
  uint64_t PassesTotal() override { return status_.lifetime.passes; }
  uint64_t PreemptionsTotal() override { return status_.lifetime.preemptions; }
  uint64_t PausesTotal() override { return status_.lifetime.pauses; }
  uint64_t FailuresTotal() override { return status_.lifetime.failures; }
  bool InlineDiscard() override { return status_.inline_discard; }
  std::string DiscardMode() override { return to_string(status_.discard_mode); }
  std::string Takeover() override { return to_string(status_.takeover.status); }
  std::string TakeoverReason() override { return bus_string(status_.takeover.reason); }
  uint64_t TakenOverSince() override;

  BusConnection& bus_;
  Commands& commands_;
  FsStatus status_;
  Throttle progress_throttle_;
  bool progress_pending_ = false;
  Timer progress_timer_;
};

}  // namespace trimd::bus
