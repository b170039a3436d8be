#include "bus_property_table.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "build_config.hpp"
#include "bus_names.hpp"

namespace trimd::bus {

namespace {

using Fs = const FsStatus&;

// In the XML's order.
constexpr std::array kFilesystemProperties{
    FilesystemProperty{"MountPoint", [](Fs s) -> BusValue { return bus_string(s.mount_point); }},
    FilesystemProperty{"Device", [](Fs s) -> BusValue { return bus_string(s.device); }},
    FilesystemProperty{"FsType", [](Fs s) -> BusValue { return bus_string(s.fs_type); }},
    FilesystemProperty{"UUID", [](Fs s) -> BusValue { return bus_string(s.uuid); }},
    FilesystemProperty{"BackingDisks",
                       [](Fs s) -> BusValue { return bus_strings(s.backing_disks); }},
    FilesystemProperty{"State", [](Fs s) -> BusValue { return std::string(to_string(s.state)); }},
    FilesystemProperty{"StateReason", [](Fs s) -> BusValue { return bus_string(s.state_reason); }},
    FilesystemProperty{"WaitingFor",
                       [](Fs s) -> BusValue { return std::string(to_string(s.waiting_for)); }},
    FilesystemProperty{"Progress", [](Fs s) -> BusValue { return s.progress; }},
    FilesystemProperty{"Size", [](Fs s) -> BusValue { return s.size; }},
    FilesystemProperty{"LastTrimStart",
                       [](Fs s) -> BusValue { return timestamp_usec(s.last_trim_start); }},
    FilesystemProperty{"LastTrimEnd",
                       [](Fs s) -> BusValue { return timestamp_usec(s.last_trim_end); }},
    FilesystemProperty{"LastResult",
                       [](Fs s) -> BusValue { return bus_string(outcome_text(s.last_result)); }},
    FilesystemProperty{"LastBytesTrimmed", [](Fs s) -> BusValue { return s.last_bytes_trimmed; }},
    FilesystemProperty{"NextTrim", [](Fs s) -> BusValue { return timestamp_usec(s.next_trim); }},
    FilesystemProperty{"InlineDiscard", [](Fs s) -> BusValue { return s.inline_discard; }},
    FilesystemProperty{"DiscardMode",
                       [](Fs s) -> BusValue { return std::string(to_string(s.discard_mode)); }},
    FilesystemProperty{"Takeover",
                       [](Fs s) -> BusValue { return std::string(to_string(s.takeover.status)); }},
    FilesystemProperty{"TakeoverReason",
                       [](Fs s) -> BusValue { return bus_string(s.takeover.reason); }},
    FilesystemProperty{"TakenOverSince",
                       [](Fs s) -> BusValue { return timestamp_usec(s.takeover.since); }},
    FilesystemProperty{"LastTrimDuration",
                       [](Fs s) -> BusValue { return duration_usec(s.last_trimming); }},
    FilesystemProperty{"LastWaitDuration",
                       [](Fs s) -> BusValue { return duration_usec(s.last_waited); }},
    FilesystemProperty{"BytesTrimmedTotal", [](Fs s) -> BusValue { return s.lifetime.bytes; }},
    FilesystemProperty{"PassesTotal", [](Fs s) -> BusValue { return s.lifetime.passes; }},
    FilesystemProperty{"PreemptionsTotal", [](Fs s) -> BusValue { return s.lifetime.preemptions; }},
    FilesystemProperty{"PausesTotal", [](Fs s) -> BusValue { return s.lifetime.pauses; }},
    FilesystemProperty{"FailuresTotal", [](Fs s) -> BusValue { return s.lifetime.failures; }},
    FilesystemProperty{"Duty", [](Fs s) -> BusValue { return s.duty; }},
};

using M = const ManagerSources&;

constexpr std::array kManagerProperties{
    ManagerProperty{"Version", [](M) -> BusValue { return std::string(TRIMD_VERSION); }},
    ManagerProperty{"State",
                    [](M s) -> BusValue { return std::string(to_string(s.manager.state())); }},
    ManagerProperty{"BytesTrimmedTotal",
                    [](M s) -> BusValue { return s.manager.bytes_trimmed_total(); }},
    ManagerProperty{"PassesTotal",
                    [](M s) -> BusValue { return s.manager.lifetime_totals().passes; }},
    ManagerProperty{"PreemptionsTotal",
                    [](M s) -> BusValue { return s.manager.lifetime_totals().preemptions; }},
    ManagerProperty{"PausesTotal",
                    [](M s) -> BusValue { return s.manager.lifetime_totals().pauses; }},
    ManagerProperty{"FailuresTotal",
                    [](M s) -> BusValue { return s.manager.lifetime_totals().failures; }},
    ManagerProperty{"EventLoopLatenessMaxUSec",
                    [](M s) -> BusValue { return duration_usec(s.loop.lateness_max()); }},
};

template <typename Table, typename Source>
BusValue lookup(const Table& table, const Source& source, std::string_view name) {
  const auto it = std::find_if(table.begin(), table.end(),
                               [name](const auto& property) { return property.name == name; });
  if (it == table.end()) throw std::out_of_range("no bus property " + std::string(name));
  return it->value(source);
}

}  // namespace

std::span<const FilesystemProperty> filesystem_properties() { return kFilesystemProperties; }
std::span<const ManagerProperty> manager_properties() { return kManagerProperties; }

BusValue filesystem_property(const FsStatus& status, std::string_view name) {
  return lookup(kFilesystemProperties, status, name);
}

BusValue manager_property(const ManagerSources& sources, std::string_view name) {
  return lookup(kManagerProperties, sources, name);
}

std::vector<std::string> changed_properties(const FsStatus& before, const FsStatus& after) {
  std::vector<std::string> names;
  for (const auto& property : kFilesystemProperties)
    if (property.value(before) != property.value(after)) names.emplace_back(property.name);
  return names;
}

}  // namespace trimd::bus
