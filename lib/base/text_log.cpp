#include "text_log.hpp"

#include <spdlog/pattern_formatter.h>

#include <string>
#include <string_view>

#include "utf8.hpp"

namespace trimd {

namespace {

// %* in the pattern: the message, escaped for one line.
class EscapedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string text =
        escape_bytes_for_line(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<spdlog::custom_flag_formatter> clone() const override {
    return std::make_unique<EscapedMessage>();
  }
};

}  // namespace

std::unique_ptr<spdlog::formatter> text_log_formatter() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<EscapedMessage>('*').set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$: %*");
  return formatter;
}

}  // namespace trimd
