// The one escaping of names that need not be UTF-8 (lib/base/utf8.hpp): every
// edge (bus, state file, metrics, text log) relies on these properties.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "journal_fields.hpp"
#include "utf8.hpp"

namespace trimd {
namespace {

// Random bytes, weighted towards what makes escaping interesting:
// backslashes, "x" and hex digits (text that looks like an escape), bytes
// of multi-byte characters, control characters.
std::string random_bytes(std::mt19937& random) {
  static const std::string kTricky = "\\x0aF/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\n\t";
  std::uniform_int_distribution<int> length(0, 24);
  std::uniform_int_distribution<int> any_byte(0, 255);
  std::uniform_int_distribution<std::size_t> tricky(0, kTricky.size() - 1);
  std::string out;
  for (int n = length(random); n > 0; --n)
    out += random() % 2 ? static_cast<char>(any_byte(random)) : kTricky[tricky(random)];
  return out;
}

TEST(EscapeBytes, LeavesValidUtf8WithoutABackslashUnchanged) {
  for (const std::string name :
       {"/", "/mnt/data", "/mnt/caf\xc3\xa9", "/srv/a b\"c'\n\t", "\xf0\x9f\x98\x80", "/mnt/x41"})
    EXPECT_EQ(escape_bytes(name), name);
}

TEST(EscapeBytes, WritesEachInvalidByteAndEachBackslashAsLowerCaseHex) {
  EXPECT_EQ(escape_bytes("/mnt/caf\xe9"), "/mnt/caf\\xe9");
  EXPECT_EQ(escape_bytes("/mnt/a\\b"), "/mnt/a\\x5cb");
  EXPECT_EQ(escape_bytes("/mnt/caf\\xe9"), "/mnt/caf\\x5cxe9");
  EXPECT_EQ(escape_bytes(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(escape_bytes("\xc3\xa9\xe9"), "\xc3\xa9\\xe9");             // keeps the valid part
  EXPECT_EQ(escape_bytes("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(escape_bytes("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
}

TEST(EscapeBytes, ForALineAlsoEscapesControlCharacters) {
  EXPECT_EQ(escape_bytes_for_line("/mnt/a\nb\tc\x1b[31m\x7f"), "/mnt/a\\x0ab\\x09c\\x1b[31m\\x7f");
  EXPECT_EQ(escape_bytes_for_line("/mnt/caf\xc3\xa9"), "/mnt/caf\xc3\xa9");
}

TEST(UnescapeBytes, ReadsEitherCaseAndRefusesABackslashThatStartsNoEscape) {
  EXPECT_EQ(unescape_bytes("/mnt/caf\\xe9"), "/mnt/caf\xe9");
  EXPECT_EQ(unescape_bytes("/mnt/caf\\xE9"), "/mnt/caf\xe9");
  EXPECT_EQ(unescape_bytes("plain"), "plain");
  for (const char* bad : {"a\\", "a\\x", "a\\x5", "a\\x5g", "a\\n", "a\\\\"})
    EXPECT_EQ(unescape_bytes(bad), std::nullopt) << bad;
}

TEST(EscapeBytes, RoundTripsRandomBytesIntoValidUtf8) {
  std::mt19937 random(20261202);
  for (int i = 0; i < 20000; ++i) {
    const std::string raw = random_bytes(random);
    const std::string escaped = escape_bytes(raw);
    const std::string line = escape_bytes_for_line(raw);
    ASSERT_TRUE(is_valid_utf8(escaped)) << escaped;
    ASSERT_TRUE(is_valid_utf8(line)) << line;
    ASSERT_EQ(unescape_bytes(escaped), raw) << escaped;
    ASSERT_EQ(unescape_bytes(line), raw) << line;
    for (const char c : line) ASSERT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f);
  }
}

TEST(EscapeBytes, GivesDistinctNamesDistinctEscapes) {
  // The pairs that collided on the bus before: a Latin-1 byte and the text
  // that showed it.
  EXPECT_NE(escape_bytes("/mnt/caf\xe9"), escape_bytes("/mnt/caf\\xe9"));
  EXPECT_NE(escape_bytes("/mnt/\xe9t\xe9"), escape_bytes("/mnt/\\xe9t\\xe9"));
}

// The JSON log gives such a name as an array of its bytes, as journalctl
// does; both forms must name the same bytes.
std::string json_byte_array(const std::string& raw) {
  std::string out = "[";
  for (const char c : raw) {
    if (out.size() > 1) out += ',';
    out += std::to_string(static_cast<unsigned char>(c));
  }
  return out + "]";
}

TEST(EscapeBytes, AgreesWithTheJsonLogOnTheBytesOfAName) {
  std::mt19937 random(17);
  int checked = 0;
  while (checked < 200) {
    const std::string raw = "/mnt/" + random_bytes(random);
    if (is_valid_utf8(raw)) continue;
    const std::string line = json_log_line(1, {"MOUNT_POINT=" + raw});
    ASSERT_EQ(line,
              "{\"__REALTIME_TIMESTAMP\":\"1\",\"MOUNT_POINT\":" + json_byte_array(raw) + "}");
    ASSERT_EQ(json_byte_array(*unescape_bytes(escape_bytes(raw))), json_byte_array(raw));
    ++checked;
  }
}

}  // namespace
}  // namespace trimd
