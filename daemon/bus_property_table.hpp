// Every bus property trimd serves, once: its name and how its value is made
// from the engine's state. The adaptors' getters (generated from the XML,
// daemon/dbus/getters.cmake) and the PropertiesChanged announcements both read
// these tables, so a new property is the XML, one line here and the man page
// (HACKING.md, "Add a bus property"); tests/bus/test_bus_property_table.cpp holds
// the tables to the XML.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "event_loop.hpp"
#include "manager.hpp"

namespace trimd::bus {

// The D-Bus types the API uses: b, d, t, s, as.
using BusValue = std::variant<bool, double, std::uint64_t, std::string, std::vector<std::string>>;

struct FilesystemProperty {
  std::string_view name;
  BusValue (*value)(const FsStatus&);
};
std::span<const FilesystemProperty> filesystem_properties();

// What the Manager's properties are made of: the engine's state and the
// loop that runs it.
struct ManagerSources {
  const Manager& manager;
  const EventLoop& loop;
};

struct ManagerProperty {
  std::string_view name;
  BusValue (*value)(const ManagerSources&);
};
std::span<const ManagerProperty> manager_properties();

// The value of the named property; throws std::out_of_range for a name the
// table does not have (a getter generated from an XML the table lags behind).
BusValue filesystem_property(const FsStatus& status, std::string_view name);
BusValue manager_property(const ManagerSources& sources, std::string_view name);

// The org.trimd.trimd1.Filesystem property names whose value differs.
std::vector<std::string> changed_properties(const FsStatus& before, const FsStatus& after);

}  // namespace trimd::bus
