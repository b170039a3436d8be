// config/trimd.toml and trimd.toml(5) against the table of policy keys
// (lib/policy/config_keys.cpp), both ways: every key the parser reads is in
// both, with its type, default and scope, and neither names a key the parser
// does not read.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config.hpp"
#include "config_keys.hpp"
#include "source_text.hpp"

namespace {

using trimd::ConfigKey;
using trimd::KeyScope;
using namespace trimd_docs;

std::string key_name(const ConfigKey& key) {
  return std::string(key.section) + "." + std::string(key.name);
}

bool is_trim_only(const ConfigKey& key) {
  return key.section == "trim" && key.scope == KeyScope::Global;
}

// The key `name` as a table may hold it: its own keys and, in a
// [[filesystem]] rule, the [trim] keys a rule may set.
const ConfigKey* known(const std::string& table, const std::string& name) {
  for (const auto& key : trimd::config_keys()) {
    if (key.name != name) continue;
    if (key.section == table) return &key;
    if (table == "filesystem" && key.section == "trim" && key.scope == KeyScope::AlsoPerFilesystem)
      return &key;
  }
  return nullptr;
}

// One key line of config/trimd.toml: "name = value", or "#name = value" for
// a key that is off by default.
struct ShippedKey {
  std::string table;  // "filesystem" for [[filesystem]]
  std::string name;
  std::string value;  // as written in TOML
  bool commented;
  std::string comment;  // the comment lines right above it, joined by spaces
  int line;
};

std::vector<ShippedKey> shipped_keys() {
  static const std::regex table_line(R"(^#?\[\[?([a-z_]+)\]\]?$)");
  static const std::regex key_line(R"(^(#?)([a-z_]+) = (.*)$)");
  std::vector<ShippedKey> keys;
  std::istringstream lines(source_file("config/trimd.toml"));
  std::string line, table, comment;
  int number = 0;
  std::smatch m;
  while (std::getline(lines, line)) {
    ++number;
    if (std::regex_match(line, m, table_line)) {
      table = m[1];
      comment.clear();
    } else if (std::regex_match(line, m, key_line)) {
      keys.push_back({table, m[2], m[3], m[1] == "#", comment, number});
      comment.clear();
    } else if (line.rfind("# ", 0) == 0) {
      comment += (comment.empty() ? "" : " ") + line.substr(2);
    } else {
      comment.clear();  // a blank line, or a bare "#", ends a comment
    }
  }
  return keys;
}

const ShippedKey* first_shipped(const std::vector<ShippedKey>& keys, const ConfigKey& key) {
  for (const auto& shipped : keys)
    if (shipped.table == key.section && shipped.name == key.name) return &shipped;
  return nullptr;
}

TEST(ConfigTrimdToml, HasEveryKeyWithItsDefaultAndBeginsItsCommentWithTheKeysDoc) {
  const auto keys = shipped_keys();
  for (const auto& key : trimd::config_keys()) {
    const auto* shipped = first_shipped(keys, key);
    ASSERT_NE(shipped, nullptr) << key_name(key) << " is not in config/trimd.toml";
    if (!key.default_value.empty() && key.section != "filesystem") {
      EXPECT_EQ(shipped->value, key.default_value)
          << key_name(key) << " on line " << shipped->line << " is not its default";
    }
    EXPECT_EQ(shipped->comment.rfind(key.doc, 0), 0u)
        << "the comment above " << key_name(key) << " on line " << shipped->line
        << " does not begin with its doc: " << key.doc;
  }
}

TEST(ConfigTrimdToml, NamesOnlyKeysTheParserReads) {
  const auto keys = shipped_keys();
  ASSERT_GE(keys.size(), trimd::config_keys().size());
  for (const auto& shipped : keys)
    EXPECT_NE(known(shipped.table, shipped.name), nullptr)
        << "line " << shipped.line << ": " << shipped.table << "." << shipped.name
        << " is not a key trimd reads";
}

TEST(ConfigTrimdToml, SetsEveryDefaultAndShowsOnlyFleetAndRulesCommentedOut) {
  for (const auto& shipped : shipped_keys()) {
    const bool off_by_default = shipped.table == "fleet" || shipped.table == "filesystem";
    EXPECT_EQ(shipped.commented, off_by_default) << "line " << shipped.line;
  }
}

TEST(ConfigTrimdToml, MarksExactlyTheTrimOnlyKeys) {
  const auto keys = shipped_keys();
  for (const auto& key : trimd::config_keys()) {
    if (key.section != "trim") continue;
    const auto* shipped = first_shipped(keys, key);
    ASSERT_NE(shipped, nullptr) << key_name(key);
    EXPECT_EQ(shipped->comment.find("[trim] only") != std::string::npos, is_trim_only(key))
        << key_name(key) << " on line " << shipped->line;
  }
}

TEST(ConfigTrimdToml, UncommentedWholeIsAPolicyTrimdAccepts) {
  static const std::regex off(R"(^#(\[|[a-z_]+ = ))");
  std::istringstream lines(source_file("config/trimd.toml"));
  std::string line, text;
  while (std::getline(lines, line))
    text += (std::regex_search(line, off) ? line.substr(1) : line) + "\n";
  const trimd::Config config = trimd::parse_config(text, "trimd.toml, uncommented");
  ASSERT_TRUE(config.fleet);
  EXPECT_EQ(config.overrides.size(), 4u);
}

std::string heading_of(std::string_view section) {
  return section == "filesystem" ? "[[filesystem]]" : "[" + std::string(section) + "]";
}

// A key's entry: ".TP\n.BR name \" (type..." up to the next .TP, .PP or .SH.
std::optional<std::string> man_entry(const std::string& section, const ConfigKey& key) {
  const std::string head = "\n.TP\n.BR " + roff(key.name) + " \" (";
  const auto at = section.find(head);
  if (at == std::string::npos) return std::nullopt;
  auto end = section.size();
  for (const char* next : {"\n.TP\n", "\n.PP\n", "\n.SH "})
    end = std::min(end, section.find(next, at + 1));
  return section.substr(at + 5, end - at - 5);
}

const std::string& trimd_toml_5() {
  static const std::string man = source_file("man/trimd.toml.5");
  return man;
}

TEST(TrimdToml5, HasEveryKeyWithItsTypeAndDefault) {
  for (const auto& key : trimd::config_keys()) {
    const std::string section = man_section(trimd_toml_5(), heading_of(key.section));
    ASSERT_NE(section, "") << "trimd.toml(5) has no section " << heading_of(key.section);
    const auto entry = man_entry(section, key);
    ASSERT_TRUE(entry) << key_name(key) << " has no entry in trimd.toml(5)";
    const std::string first_line = entry->substr(0, entry->find('\n'));
    const std::string head = ".BR " + roff(key.name) + " \" (" + roff(key.type);
    EXPECT_EQ(first_line.rfind(head, 0), 0u)
        << key_name(key) << ": trimd.toml(5) says " << first_line << ", not the type " << key.type;
    if (!key.default_value.empty()) {
      EXPECT_NE(first_line.find(", default \" " + roff(key.default_value)), std::string::npos)
          << key_name(key) << " = " << key.default_value << ", but trimd.toml(5) says "
          << first_line;
    }
  }
}

TEST(TrimdToml5, DocumentsOnlyKeysTheParserReads) {
  static const std::regex entry(R"(\n\.TP\n\.BR ([a-z_]+) " \()");
  std::set<std::string> tables;
  for (const auto& key : trimd::config_keys()) tables.insert(std::string(key.section));
  int entries = 0;
  for (const auto& table : tables) {
    const std::string section = man_section(trimd_toml_5(), heading_of(table));
    for (std::sregex_iterator it(section.begin(), section.end(), entry), end; it != end; ++it) {
      ++entries;
      const auto* key = known(table, (*it)[1]);
      EXPECT_TRUE(key && key->section == table)
          << "trimd.toml(5) documents " << (*it)[1] << " in " << heading_of(table)
          << ", which trimd does not read there";
    }
  }
  EXPECT_EQ(entries, static_cast<int>(trimd::config_keys().size()));
}

TEST(TrimdToml5, MarksExactlyTheTrimOnlyKeys) {
  const std::string section = man_section(trimd_toml_5(), "[trim]");
  for (const auto& key : trimd::config_keys()) {
    if (key.section != "trim") continue;
    const auto entry = man_entry(section, key);
    ASSERT_TRUE(entry) << key_name(key);
    EXPECT_EQ(entry->find("Only in\n.BR [trim] .") != std::string::npos, is_trim_only(key))
        << key_name(key);
  }
}

}  // namespace
