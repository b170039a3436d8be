// The introspection XML is the API. trimd's property tables make the values
// and the PropertiesChanged announcements; trimctl's readers and its --json,
// generated from the XML, take them in.
// A property added to the XML and missed by a table, or left in a table after
// it left the XML, fails here, not in a user's `trimctl status`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bus_property_table.hpp"
#include "client.hpp"
#include "json.hpp"
#include "report.hpp"

namespace {

using testing::UnorderedElementsAreArray;

struct XmlProperty {
  std::string name;
  std::string type;
};

// The <property> elements of one <interface> of the XML, in order.
std::vector<XmlProperty> xml_properties(const std::string& interface) {
  std::ifstream in(TRIMD_BUS_XML);
  const std::string xml{std::istreambuf_iterator<char>(in), {}};
  const auto start = xml.find("<interface name=\"" + interface + "\">");
  EXPECT_NE(start, std::string::npos) << interface;
  const std::string body = xml.substr(start, xml.find("</interface>", start) - start);
  const std::regex property("<property name=\"([A-Za-z0-9]+)\" type=\"([a-z]+)\"");
  std::vector<XmlProperty> out;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), property);
       it != std::sregex_iterator(); ++it)
    out.push_back({(*it)[1], (*it)[2]});
  return out;
}

std::vector<std::string> names(const std::vector<XmlProperty>& properties) {
  std::vector<std::string> out;
  for (const auto& p : properties) out.push_back(p.name);
  return out;
}

template <typename Table>
std::vector<std::string> table_names(const Table& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.name);
  return out;
}

// The D-Bus signature of a table value.
std::string signature(const trimd::bus::BusValue& value) {
  static const char* const kSignatures[] = {"b", "d", "t", "s", "as"};
  return kSignatures[value.index()];
}

const std::string kFilesystem = "org.trimd.trimd1.Filesystem";
const std::string kManager = "org.trimd.trimd1.Manager";

TEST(PropertyTable, TheXmlIsReadAtAll) {
  EXPECT_GE(xml_properties(kFilesystem).size(), 20u);
  EXPECT_GE(xml_properties(kManager).size(), 3u);
}

TEST(PropertyTable, TrimdServesEveryFilesystemPropertyOfTheXmlAndNoOther) {
  EXPECT_THAT(table_names(trimd::bus::filesystem_properties()),
              UnorderedElementsAreArray(names(xml_properties(kFilesystem))));
}

TEST(PropertyTable, TrimdServesEveryManagerPropertyOfTheXmlAndNoOther) {
  EXPECT_THAT(table_names(trimd::bus::manager_properties()),
              UnorderedElementsAreArray(names(xml_properties(kManager))));
}

TEST(PropertyTable, EveryFilesystemValueHasTheTypeTheXmlSays) {
  const trimd::FsStatus status;
  for (const auto& property : xml_properties(kFilesystem))
    EXPECT_EQ(signature(trimd::bus::filesystem_property(status, property.name)), property.type)
        << property.name;
}

TEST(PropertyTable, EveryManagerValueHasTheTypeTheXmlSays) {
  const trimd::Manager manager(trimd::Config{}, trimd::StateMap{}, trimd::Clock::now());
  const trimd::EventLoop loop;
  for (const auto& property : xml_properties(kManager))
    EXPECT_EQ(signature(trimd::bus::manager_property({manager, loop}, property.name)),
              property.type)
        << property.name;
}

TEST(PropertyTable, TrimctlReadsEveryPropertyOfTheXmlAndNoOther) {
  EXPECT_THAT(trimctl::filesystem_properties_read(),
              UnorderedElementsAreArray(names(xml_properties(kFilesystem))));
  EXPECT_THAT(trimctl::manager_properties_read(),
              UnorderedElementsAreArray(names(xml_properties(kManager))));
}

// trimctl's --json: a member per property (and the object path), none lost
// to a name two properties share.
TEST(PropertyTable, TrimctlJsonHasOneMemberPerPropertyOfTheXml) {
  EXPECT_EQ(trimctl::manager_json(trimctl::ManagerInfo{}).size(), xml_properties(kManager).size());
  EXPECT_EQ(trimctl::filesystem_json(trimctl::FilesystemInfo{}).size(),
            xml_properties(kFilesystem).size() + 1);
}

TEST(PropertyTable, AChangeOfWhatAFilesystemWaitsForIsAnnounced) {
  trimd::FsStatus before;
  trimd::FsStatus after = before;
  after.waiting_for = trimd::WaitingFor::DisksBusy;
  EXPECT_THAT(trimd::bus::changed_properties(before, after), testing::ElementsAre("WaitingFor"));
}

}  // namespace
