// trimctl's readers of trimd's properties: a table per interface of which
// property goes into which field. tests/bus/test_bus_property_table.cpp holds
// the tables to the introspection XML.
#include <functional>
#include <string>
#include <vector>

#include "client.hpp"

namespace trimctl {

namespace {

// One property trimctl reads: its name and where its value goes.
template <typename Info>
struct Reader {
  const char* name;
  std::function<void(Info&, const PropertyValue&)> store;
};

// Copies the value into `field` when it has the field's type.
template <typename Field>
void store_if(Field& field, const PropertyValue& value) {
  if (const auto* typed = std::get_if<Field>(&value)) field = *typed;
}

template <typename Info, typename Field>
Reader<Info> into(const char* name, Field Info::*field) {
  return {name, [field](Info& info, const PropertyValue& value) { store_if(info.*field, value); }};
}

template <typename Info, typename Part, typename Field>
Reader<Info> into(const char* name, Part Info::*part, Field Part::*field) {
  return {name, [part, field](Info& info, const PropertyValue& value) {
            store_if(info.*part.*field, value);
          }};
}

const std::vector<Reader<ManagerInfo>>& manager_readers() {
  using M = ManagerInfo;
  using L = LifetimeInfo;
  static const std::vector<Reader<M>> readers{
      into("Version", &M::version),
      into("State", &M::state),
      into("BytesTrimmedTotal", &M::bytes_trimmed_total),
      into("PassesTotal", &M::lifetime, &L::passes_total),
      into("PreemptionsTotal", &M::lifetime, &L::preemptions_total),
      into("PausesTotal", &M::lifetime, &L::pauses_total),
      into("FailuresTotal", &M::lifetime, &L::failures_total),
  };
  return readers;
}

const std::vector<Reader<FilesystemInfo>>& filesystem_readers() {
  using F = FilesystemInfo;
  using L = LifetimeInfo;
  static const std::vector<Reader<F>> readers{
      into("MountPoint", &F::mount_point),
      into("Device", &F::device),
      into("FsType", &F::fs_type),
      into("UUID", &F::uuid),
      into("BackingDisks", &F::backing_disks),
      into("State", &F::state),
      into("StateReason", &F::state_reason),
      into("WaitingFor", &F::waiting_for),
      into("Progress", &F::progress),
      into("Size", &F::size),
      into("LastTrimStart", &F::last_trim_start),
      into("LastTrimEnd", &F::last_trim_end),
      into("LastResult", &F::last_result),
      into("LastBytesTrimmed", &F::last_bytes_trimmed),
      into("LastTrimDuration", &F::last_trim_duration),
      into("LastWaitDuration", &F::last_wait_duration),
      into("BytesTrimmedTotal", &F::lifetime, &L::bytes_trimmed_total),
      into("PassesTotal", &F::lifetime, &L::passes_total),
      into("PreemptionsTotal", &F::lifetime, &L::preemptions_total),
      into("PausesTotal", &F::lifetime, &L::pauses_total),
      into("FailuresTotal", &F::lifetime, &L::failures_total),
      into("NextTrim", &F::next_trim),
      into("InlineDiscard", &F::inline_discard),
      into("Takeover", &F::takeover),
      into("TakeoverReason", &F::takeover_reason),
      into("TakenOverSince", &F::taken_over_since),
      into("DiscardMode", &F::discard_mode),
  };
  return readers;
}

template <typename Info>
void apply(const std::vector<Reader<Info>>& readers, Info& info, const PropertyMap& properties) {
  for (const auto& reader : readers) {
    const auto it = properties.find(reader.name);
    if (it != properties.end()) reader.store(info, it->second);
  }
}

template <typename Info>
std::vector<std::string> names_of(const std::vector<Reader<Info>>& readers) {
  std::vector<std::string> names;
  for (const auto& reader : readers) names.emplace_back(reader.name);
  return names;
}

}  // namespace

void apply_properties(ManagerInfo& manager, const PropertyMap& properties) {
  apply(manager_readers(), manager, properties);
  manager.lifetime.bytes_trimmed_total = manager.bytes_trimmed_total;
}

void apply_properties(FilesystemInfo& fs, const PropertyMap& properties) {
  apply(filesystem_readers(), fs, properties);
}

std::vector<std::string> manager_properties_read() { return names_of(manager_readers()); }
std::vector<std::string> filesystem_properties_read() { return names_of(filesystem_readers()); }

}  // namespace trimctl
