// The one reading of sizes that trimd.toml and trimctl share: every unit
// up to E, and 64-bit limits checked on the way.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"

namespace {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t PiB = KiB * KiB * KiB * KiB * KiB;
constexpr std::uint64_t EiB = PiB * KiB;

TEST(ParseSizeUnits, ReadsPetaAndExaInBothBasesAndAnyCase) {
  const std::vector<std::pair<std::string, std::uint64_t>> cases{
      {"1P", PiB},
      {"1PiB", PiB},
      {"2pib", 2 * PiB},
      {"1PB", 1000000000000000},
      {"1E", EiB},
      {"1EiB", EiB},
      {"15EiB", 15 * EiB},
      {"1EB", 1000000000000000000},
      {"1.5P", PiB + PiB / 2},
      {"0.5EiB", EiB / 2},
      {"0.000001EiB", EiB / 1000000},
  };
  for (const auto& [text, bytes] : cases) EXPECT_EQ(trimd::parse_size(text), bytes) << text;
}

TEST(ParseSizeUnits, KeepsTheFractionExactUpToItsSixthDigitInLargeUnits) {
  // 0.999999 EiB: 999999 * 2^60 / 10^6 overflows 64 bits if done naively.
  const std::uint64_t expected = EiB / 1000000 * 999999 + (EiB % 1000000) * 999999 / 1000000;
  EXPECT_EQ(trimd::parse_size("0.999999EiB"), expected);
  EXPECT_EQ(trimd::parse_size("15.999999EiB"), 15 * EiB + expected);
}

TEST(ParseSizeUnits, RejectsWhatDoesNotFitSixtyFourBits) {
  for (const char* text :
       {"16EiB", "16E", "19EB", "16384PiB", "1.5ZiB", "18446744073709551615.5KiB"})
    EXPECT_THROW(trimd::parse_size(text), std::invalid_argument) << text;
  EXPECT_EQ(trimd::parse_size("16383PiB"), 16383 * PiB);
  EXPECT_EQ(trimd::parse_size("18EB"), 18 * 1000000000000000000u);
}

TEST(FormatSizeUnits, ReadsBackWhatItWritesToATenth) {
  for (const std::uint64_t bytes : {PiB, 3 * PiB / 2, 2 * EiB, 5 * EiB + EiB / 2}) {
    const std::string text = trimd::format_size(bytes);
    EXPECT_EQ(trimd::parse_size(text), bytes) << text;
  }
  EXPECT_EQ(trimd::format_size(std::numeric_limits<std::uint64_t>::max()), "16 EiB");
}

}  // namespace

namespace {

TEST(ParseShare, ReadsPercentagesAndZero) {
  EXPECT_DOUBLE_EQ(trimd::parse_share("2%"), 0.02);
  EXPECT_DOUBLE_EQ(trimd::parse_share("0.5%"), 0.005);
  EXPECT_DOUBLE_EQ(trimd::parse_share(" 12.5% "), 0.125);
  EXPECT_DOUBLE_EQ(trimd::parse_share("100%"), 1.0);
  EXPECT_DOUBLE_EQ(trimd::parse_share("0"), 0.0);
  EXPECT_DOUBLE_EQ(trimd::parse_share("0%"), 0.0);
}

TEST(ParseShare, RejectsANumberWithoutItsPercentSignAndMoreThanTheWhole) {
  for (const char* text : {"2", "0.02", "2 %", "-1%", "%", "", "two%", "2%%", "100.5%"})
    EXPECT_THROW(trimd::parse_share(text), std::invalid_argument) << text;
}

TEST(FormatShare, WritesWhatParseShareReads) {
  for (const char* text : {"2%", "0.5%", "12.5%", "0.01%", "100%"})
    EXPECT_EQ(trimd::format_share(trimd::parse_share(text)), text);
}

}  // namespace
