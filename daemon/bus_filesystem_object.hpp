// /org/trimd/trimd1/filesystem/<id>: one tracked filesystem on the bus.
// Properties come from the last status the manager reported, so a Get and
// the PropertiesChanged before it always agree.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include <sdbus-c++/sdbus-c++.h>

#include "bus_commands.hpp"
#include "bus_connection.hpp"
#include "bus_names.hpp"
#include "bus_property_table.hpp"
#include "bus_throttle.hpp"
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

  // The getters, one per property of the XML, each reading the table, and
  // signals_changes(name).
  template <typename T>
  T property_value(std::string_view name) const {
    return std::get<T>(filesystem_property(status_, name));
  }
#include "filesystem_getters.inc"

  BusConnection& bus_;
  Commands& commands_;
  FsStatus status_;
  Throttle progress_throttle_;
  bool progress_pending_ = false;
  Timer progress_timer_;
};

}  // namespace trimd::bus
