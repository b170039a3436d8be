#include "json_sink.hpp"

#include <chrono>
#include <cstdio>
#include <string>

#include "journal_fields.hpp"
#include "log_event.hpp"

namespace trimd {

void JsonSink::sink_it_(const spdlog::details::log_msg& msg) {
  const std::string_view text(msg.payload.data(), msg.payload.size());
  const auto usec =
      std::chrono::duration_cast<std::chrono::microseconds>(msg.time.time_since_epoch()).count();
  std::string line = json_log_line(
      usec, journal_entry(text, syslog_priority(msg.level), "trimd", current_log_fields()));
  line += '\n';
  // One write per line: a reader tailing the file never sees half of one.
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void JsonSink::flush_() { std::fflush(stderr); }

}  // namespace trimd
