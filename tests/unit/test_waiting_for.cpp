// What a filesystem waits for has one list of words: to_string(WaitingFor)
// (lib/engine/manager.hpp). The bus and the metrics print them; the Cockpit
// page's table, org.trimd.trimd1(5) and the XML must name every one and no
// other, so a value added (or dropped) without them fails here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "manager.hpp"

namespace trimd {
namespace {

using ::testing::UnorderedElementsAreArray;

const std::string kSource = std::string(TRIMD_TEST_DATA) + "/../..";

std::string read(const std::string& path) {
  std::ifstream in(kSource + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every value's word, in the enum's order (its values are numbered from 0).
std::vector<std::string> all_words() {
  std::vector<std::string> words;
  for (unsigned n = 0; n <= 255; ++n) {
    const char* word = to_string(static_cast<WaitingFor>(n));
    if (!word) break;
    words.emplace_back(word);
  }
  return words;
}

// The keys a waiting filesystem shows: every word but Nothing's "".
std::vector<std::string> keys() {
  auto words = all_words();
  words.erase(words.begin());
  return words;
}

// The names `pattern`'s first group matches in `text`, each once.
std::vector<std::string> matches(const std::string& text, const std::string& pattern) {
  std::set<std::string> found;
  const std::regex re(pattern);
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it)
    found.insert((*it)[1]);
  return {found.begin(), found.end()};
}

// The text from `start` up to the first `stop` after it.
std::string between(const std::string& text, const std::string& start, const std::string& stop) {
  const auto from = text.find(start);
  if (from == std::string::npos) return {};
  return text.substr(from, text.find(stop, from + start.size()) - from);
}

TEST(WaitingFor, EveryValueHasAWordOfItsOwnAndOnlyNothingsIsEmpty) {
  const auto words = all_words();
  ASSERT_GE(words.size(), 8u);
  EXPECT_EQ(words.front(), "");
  EXPECT_EQ(to_string(WaitingFor::Nothing), std::string());
  EXPECT_EQ(std::set<std::string>(words.begin(), words.end()).size(), words.size());
  for (const auto& key : keys()) EXPECT_TRUE(std::regex_match(key, std::regex("[a-z_]+"))) << key;
}

TEST(WaitingFor, TheCockpitPageHasWordsForEveryKeyAndNoOther) {
  const std::string table = between(read("cockpit/format.js"), "const WAITING_WORDS = {", "};");
  ASSERT_FALSE(table.empty()) << "no WAITING_WORDS in cockpit/format.js";
  EXPECT_THAT(matches(table, R"(\n\s*([a-z_]+):)"), UnorderedElementsAreArray(keys()));
}

TEST(WaitingFor, TheBusManualNamesEveryKeyAndNoOther) {
  const std::string entry = between(read("man/org.trimd.trimd1.5"), "\n.B WaitingFor (s)", "\n.TP");
  ASSERT_FALSE(entry.empty()) << "no WaitingFor in org.trimd.trimd1(5)";
  EXPECT_THAT(matches(entry, R"(\n\.BR? ([a-z_]+)(?: |,|\n))"), UnorderedElementsAreArray(keys()));
}

TEST(WaitingFor, TheXmlNamesEveryKeyAndNoOther) {
  const std::string entry = between(read("daemon/dbus/org.trimd.trimd1.xml"),
                                    "<property name=\"WaitingFor\"", "</property>");
  ASSERT_FALSE(entry.empty()) << "no WaitingFor in org.trimd.trimd1.xml";
  EXPECT_THAT(matches(entry, "'([a-z_]+)'"), UnorderedElementsAreArray(keys()));
}

}  // namespace
}  // namespace trimd
