// catalog/trimd.catalog against the events trimd logs (log_event.hpp): one
// well-formed entry per MESSAGE_ID, and no entry for an id trimd never logs.
// (catalog/check_catalog.sh has journalctl itself index the file.)
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "log_event.hpp"

namespace {

const std::string kCatalog = std::string(TRIMD_TEST_DATA) + "/../../catalog/trimd.catalog";

struct Entry {
  std::string id;
  int line = 0;  // of its "-- ID" line
  std::map<std::string, std::string> headers;
  std::string text;  // after the blank line that ends the headers
};

// The entries as journalctl reads them: "-- ID", "Name: value" headers up to
// a blank line, then the text; '#' lines outside an entry are comments.
// Lines that fit none of that are returned in `stray`.
std::vector<Entry> read_catalog(std::vector<std::string>& stray) {
  std::ifstream in(kCatalog);
  std::vector<Entry> entries;
  std::string line;
  bool in_headers = false;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.rfind("-- ", 0) == 0) {
      entries.push_back({line.substr(3), number, {}, {}});
      in_headers = true;
    } else if (entries.empty()) {
      if (!line.empty() && line[0] != '#') stray.push_back(line);
    } else if (in_headers && line.empty()) {
      in_headers = false;
    } else if (in_headers) {
      const auto colon = line.find(": ");
      if (colon == std::string::npos)
        stray.push_back(line);
      else
        entries.back().headers[line.substr(0, colon)] = line.substr(colon + 2);
    } else {
      entries.back().text += line + "\n";
    }
  }
  return entries;
}

std::vector<Entry> catalog() {
  std::vector<std::string> stray;
  auto entries = read_catalog(stray);
  EXPECT_TRUE(stray.empty()) << "not an entry, header or comment: " << stray.front();
  return entries;
}

TEST(Catalog, EveryEntryHasAMessageIdOf32HexDigitsASubjectAndAText) {
  static const std::regex id("[0-9a-f]{32}");
  const auto entries = catalog();
  ASSERT_FALSE(entries.empty()) << kCatalog << " holds no entry";
  for (const auto& entry : entries) {
    SCOPED_TRACE("the entry on line " + std::to_string(entry.line));
    EXPECT_TRUE(std::regex_match(entry.id, id)) << entry.id;
    EXPECT_FALSE(entry.headers.count("Subject") == 0 || entry.headers.at("Subject").empty());
    EXPECT_EQ(entry.headers.count("Defined-By") ? entry.headers.at("Defined-By") : "", "trimd");
    EXPECT_NE(entry.text.find_first_not_of(" \n"), std::string::npos) << "no text";
  }
}

TEST(Catalog, ExplainsEveryEventTrimdLogsOnce) {
  std::map<std::string, int> entries;
  for (const auto& entry : catalog()) ++entries[entry.id];
  for (const auto id : trimd::kAllEventIds) {
    const std::string message_id(trimd::message_id(id));
    EXPECT_EQ(entries[message_id], 1) << "MESSAGE_ID=" << message_id << " of event "
                                      << static_cast<int>(id) << " needs one catalog entry";
  }
}

TEST(Catalog, HasNoEntryForAMessageIdTrimdDoesNotLog) {
  std::set<std::string> logged;
  for (const auto id : trimd::kAllEventIds) logged.insert(std::string(trimd::message_id(id)));
  for (const auto& entry : catalog())
    EXPECT_EQ(logged.count(entry.id), 1u)
        << "line " << entry.line << ": " << entry.id << " is not the MESSAGE_ID of an event";
}

TEST(Catalog, NamesOnlyFieldsAsTheJournalWritesThem) {
  static const std::regex field("@([^@\n]*)@");
  static const std::regex name("[A-Z][A-Z0-9_]*");
  for (auto& entry : catalog()) {
    const std::string text = entry.headers["Subject"] + "\n" + entry.text;
    for (std::sregex_iterator it(text.begin(), text.end(), field), end; it != end; ++it)
      EXPECT_TRUE(std::regex_match((*it)[1].str(), name))
          << "line " << entry.line << ": @" << (*it)[1] << "@ is not a journal field name";
  }
}

}  // namespace
