// /org/trimd/trimd1: org.trimd.trimd1.Manager and the ObjectManager over the
// filesystem objects below it.
#pragma once

#include <cstdint>
#include <string>

#include <sdbus-c++/sdbus-c++.h>

#include "bus_commands.hpp"
#include "manager.hpp"
#include "trimd1_adaptor.h"

namespace trimd::bus {

using ManagerAdaptor =
    sdbus::AdaptorInterfaces<org::trimd::trimd1::Manager_adaptor, sdbus::ObjectManager_adaptor,
                             sdbus::Properties_adaptor>;

class ManagerObject final : public ManagerAdaptor {
 public:
  ManagerObject(sdbus::IConnection& connection, Commands& commands);
  ~ManagerObject();

  // PropertiesChanged for State and the lifetime totals, whichever moved.
  void announce_changes();

 private:
  const sdbus::Message* current_call() const;

  void TrimNow(sdbus::Result<>&& result, std::vector<std::string> mount_points,
               bool ignore_idle) override;
  void Pause(sdbus::Result<>&& result, std::vector<std::string> mount_points) override;
  void Resume(sdbus::Result<>&& result, std::vector<std::string> mount_points) override;
  void Cancel(sdbus::Result<>&& result, std::vector<std::string> mount_points) override;
  void Reload(sdbus::Result<>&& result) override;
  void NotifyFreed(sdbus::Result<>&& result, std::string mount_point, uint64_t bytes) override;
  void TakeOver(sdbus::Result<>&& result, std::vector<std::string> mount_points) override;
  void HandBack(sdbus::Result<>&& result, std::vector<std::string> mount_points) override;

  std::string Version() override;
  std::string State() override;
  uint64_t BytesTrimmedTotal() override;
  uint64_t PassesTotal() override { return commands_.manager().lifetime_totals().passes; }
  uint64_t PreemptionsTotal() override { return commands_.manager().lifetime_totals().preemptions; }
  uint64_t PausesTotal() override { return commands_.manager().lifetime_totals().pauses; }
  uint64_t FailuresTotal() override { return commands_.manager().lifetime_totals().failures; }
  std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                            std::string, uint32_t>>
  GetHistory(const std::string& mount_point) override;

  Commands& commands_;
  std::string announced_state_;
  Lifetime announced_totals_;
};

}  // namespace trimd::bus
