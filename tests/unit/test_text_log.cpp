// The plain-text log keeps one message on one line, whatever a mount point
// holds (issue 16, item 11).
#include <gtest/gtest.h>

#include <spdlog/details/log_msg.h>

#include <string>

#include "text_log.hpp"
#include "utf8.hpp"

namespace trimd {
namespace {

std::string formatted(std::string_view message) {
  const spdlog::details::log_msg msg("trimd", spdlog::level::info,
                                     spdlog::string_view_t(message.data(), message.size()));
  spdlog::memory_buf_t out;
  text_log_formatter()->format(msg, out);
  return std::string(out.data(), out.size());
}

std::string message_part(const std::string& line) {
  const auto colon = line.find(": ");
  return colon == std::string::npos ? std::string() : line.substr(colon + 2);
}

TEST(TextLog, KeepsAMessageWithALineFeedOnOneLine) {
  const std::string line = formatted("trimmed /mnt/evil\n2026-12-02 00:00:00.000 info: forged");
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  EXPECT_EQ(message_part(line), "trimmed /mnt/evil\\x0a2026-12-02 00:00:00.000 info: forged\n");
}

TEST(TextLog, WritesANameThatIsNotUtf8AsOnTheBus) {
  const std::string line = formatted("trimmed /mnt/caf\xe9");
  EXPECT_TRUE(is_valid_utf8(line)) << line;
  EXPECT_EQ(message_part(line), "trimmed /mnt/caf\\xe9\n");
}

TEST(TextLog, LeavesAPlainMessageAlone) {
  EXPECT_EQ(message_part(formatted("trimmed /mnt/caf\xc3\xa9: 1 GiB")),
            "trimmed /mnt/caf\xc3\xa9: 1 GiB\n");
}

}  // namespace
}  // namespace trimd
