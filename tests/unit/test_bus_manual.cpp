// org.trimd.trimd1(5) documents every interface, member and error of the
// introspection XML, each member under its own interface's section.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kSource = std::string(TRIMD_TEST_DATA) + "/../..";

struct Member {
  std::string interface;
  std::string kind;  // method, signal, property
  std::string name;
};

// Each <interface name="..."> and the members up to its </interface>.
std::vector<Member> members_of(const std::string& xml) {
  std::vector<Member> members;
  const std::regex tag(R"re(<(interface|method|signal|property)\s+name="([^"]+)")re");
  std::string interface;
  for (std::sregex_iterator it(xml.begin(), xml.end(), tag), end; it != end; ++it) {
    if ((*it)[1] == "interface")
      interface = (*it)[2];
    else
      members.push_back({interface, (*it)[1], (*it)[2]});
  }
  return members;
}

// The XML's comment lists the errors as org.trimd.trimd1.Error.{A,B,...}.
std::vector<std::string> errors_of(const std::string& xml) {
  std::smatch match;
  std::vector<std::string> errors;
  if (!std::regex_search(xml, match, std::regex(R"re((org\.trimd\.trimd1\.Error)\.\{([^}]+)\})re")))
    return errors;
  const std::string list = std::regex_replace(match[2].str(), std::regex(R"(\s+)"), "");
  std::stringstream names(list);
  for (std::string name; std::getline(names, name, ',');)
    errors.push_back(match[1].str() + "." + name);
  return errors;
}

// The page's text from ".SH INTERFACE <name>" to the next ".SH".
std::string section_of(const std::string& page, const std::string& interface) {
  const auto start = page.find(".SH INTERFACE " + interface + "\n");
  if (start == std::string::npos) return {};
  const auto end = page.find("\n.SH ", start + 1);
  return page.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(BusManual, DocumentsEveryMemberUnderItsInterface) {
  const std::string xml = read(kSource + "/daemon/dbus/org.trimd.trimd1.xml");
  const std::string page = read(kSource + "/man/org.trimd.trimd1.5");
  const auto members = members_of(xml);
  ASSERT_GE(members.size(), 20u) << "the XML did not parse";
  for (const auto& member : members) {
    const std::string section = section_of(page, member.interface);
    ASSERT_FALSE(section.empty()) << "no section for " << member.interface;
    // A definition line: ".B Name", ".BI \"Name(", ".TP\n.B Name (".
    const std::regex definition("\\n\\.BI? \"?" + member.name + "[ (\"\\n]");
    EXPECT_TRUE(std::regex_search(section, definition))
        << member.kind << " " << member.interface << "." << member.name << " is not documented";
  }
}

TEST(BusManual, DocumentsEveryError) {
  const std::string xml = read(kSource + "/daemon/dbus/org.trimd.trimd1.xml");
  const std::string page = read(kSource + "/man/org.trimd.trimd1.5");
  const auto errors = errors_of(xml);
  ASSERT_EQ(errors.size(), 6u);
  for (const auto& error : errors)
    EXPECT_NE(page.find(".B " + error + "\n"), std::string::npos) << error << " is not documented";
}

TEST(BusManual, GivesABusctlExampleForEveryManagerMethod) {
  const std::string xml = read(kSource + "/daemon/dbus/org.trimd.trimd1.xml");
  const std::string page = read(kSource + "/man/org.trimd.trimd1.5");
  for (const auto& member : members_of(xml)) {
    if (member.interface != "org.trimd.trimd1.Manager" || member.kind != "method") continue;
    EXPECT_NE(page.find("org.trimd.trimd1.Manager " + member.name), std::string::npos)
        << "no busctl call of " << member.name;
  }
}

}  // namespace
