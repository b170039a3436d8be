#include "journal_sink.hpp"

#include <sys/stat.h>
#include <sys/uio.h>
// Else sd_journal_sendv() adds CODE_FILE= etc. of this sink to every entry.
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "journal_fields.hpp"
#include "log_event.hpp"

namespace trimd {

namespace {

constexpr std::string_view kIdentifier = "trimd";

// journald's stream protocol: "<priority>" before the text still sets the
// priority when the native socket refuses the entry (sd_journal_sendv()
// itself stays silent when there is no journal at all).
void write_to_stderr(int priority, std::string_view text) {
  std::fprintf(stderr, "<%d>%.*s\n", priority, static_cast<int>(text.size()), text.data());
}

}  // namespace

void JournalSink::sink_it_(const spdlog::details::log_msg& msg) {
  const std::string_view text(msg.payload.data(), msg.payload.size());
  const int priority = syslog_priority(msg.level);
  const auto entry = journal_entry(text, priority, kIdentifier, current_log_fields());
  std::vector<iovec> iov;
  iov.reserve(entry.size());
  for (const auto& field : entry) iov.push_back({const_cast<char*>(field.data()), field.size()});
  if (sd_journal_sendv(iov.data(), static_cast<int>(iov.size())) < 0)
    write_to_stderr(priority, text);
}

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  struct stat st {};
  if (stream == nullptr || ::fstat(STDERR_FILENO, &st) != 0) return false;
  return journal_stream_matches(stream, st.st_dev, st.st_ino);
}

}  // namespace trimd
