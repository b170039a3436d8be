// /org/trimd/trimd1: org.trimd.trimd1.Manager and the ObjectManager over the
// filesystem objects below it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include <sdbus-c++/sdbus-c++.h>

#include "bus_commands.hpp"
#include "bus_property_table.hpp"
#include "event_loop.hpp"
#include "manager.hpp"
#include "trimd1_adaptor.h"

namespace trimd::bus {

using ManagerAdaptor =
    sdbus::AdaptorInterfaces<org::trimd::trimd1::Manager_adaptor, sdbus::ObjectManager_adaptor,
                             sdbus::Properties_adaptor>;

class ManagerObject final : public ManagerAdaptor {
 public:
  ManagerObject(sdbus::IConnection& connection, Commands& commands, const EventLoop& loop);
  ~ManagerObject();

  // PropertiesChanged for whichever properties moved since the last call.
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

  // The getters, one per property of the XML, each reading the table, and
  // signals_changes(name).
  template <typename T>
  T property_value(std::string_view name) const {
    return std::get<T>(manager_property(sources(), name));
  }
#include "manager_getters.inc"
  std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                            std::string, uint32_t>>
  GetHistory(const std::string& mount_point) override;
  void GetFleet(
      sdbus::Result<std::vector<sdbus::Struct<std::string, uint32_t, uint32_t, std::string,
                                              std::string, bool, bool>>>&& result) override;
  void GetFleetView(
      sdbus::Result<std::vector<sdbus::Struct<std::string, uint32_t, uint64_t, uint64_t, uint64_t,
                                              uint64_t, bool, std::string>>,
                    std::vector<sdbus::Struct<std::string, uint32_t, uint32_t, std::string,
                                              std::string, bool, bool, std::string>>>&& result)
      override;

  ManagerSources sources() const { return {commands_.manager(), loop_}; }

  Commands& commands_;
  const EventLoop& loop_;
  std::map<std::string_view, BusValue> announced_;  // what PropertiesChanged last said
};

}  // namespace trimd::bus
