// --log-format=json: every log line as one JSON object on stderr, with the
// fields the journal would get (MESSAGE_ID=, MOUNT_POINT=, ...), for log
// shippers and for tests and benchmarks, which read fields, never wording.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <mutex>

namespace trimd {

class JsonSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;
};

}  // namespace trimd
