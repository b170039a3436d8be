// Logging straight into the journal (sd_journal_sendv) when trimd runs under
// systemd: real priorities ("journalctl -u trimd -p warning") and the fields
// of log_event() (MESSAGE_ID=, MOUNT_POINT=, ...).
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <mutex>

namespace trimd {

class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}
};

// True when stderr is the journal stream systemd set up for this service
// (JOURNAL_STREAM names stderr's device and inode), as sd_journal_stream_fd(3)
// and systemd.exec(5) advise; false in a terminal or when redirected.
bool stderr_is_journal();

}  // namespace trimd
