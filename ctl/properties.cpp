// trimctl's readers of trimd's properties, made from the visitors generated
// from the introspection XML (trimd1_properties.hpp): each property goes into
// the member of its name. tests/bus/test_bus_property_table.cpp holds them to
// the XML.
#include <string>
#include <vector>

#include "client.hpp"

namespace trimctl {

namespace {

// Copies the value into `member` when it has the member's type.
template <typename Member>
void store_if(Member& member, const PropertyValue& value) {
  if (const auto* typed = std::get_if<Member>(&value)) member = *typed;
}

template <typename Info>
void apply(Info& info, const PropertyMap& properties) {
  visit_properties(info, [&](const char* name, const char*, auto& member) {
    const auto it = properties.find(name);
    if (it != properties.end()) store_if(member, it->second);
  });
}

template <typename Info>
std::vector<std::string> names_of() {
  const Info info;
  std::vector<std::string> names;
  visit_properties(info,
                   [&](const char* name, const char*, const auto&) { names.emplace_back(name); });
  return names;
}

}  // namespace

void apply_properties(ManagerInfo& manager, const PropertyMap& properties) {
  apply(manager, properties);
}

void apply_properties(FilesystemInfo& fs, const PropertyMap& properties) { apply(fs, properties); }

std::vector<std::string> manager_properties_read() { return names_of<ManagerInfo>(); }
std::vector<std::string> filesystem_properties_read() { return names_of<FilesystemInfo>(); }

}  // namespace trimctl
