#include "stream_lines.hpp"

#include "json_bounds.hpp"

namespace trimd::etcd {

void StreamLines::gap() {
  if (messages_.empty() || messages_.back()) messages_.emplace_back();
}

void StreamLines::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto end = bytes.find('\n');
    const auto piece = bytes.substr(0, end);
    if (skipping_line_) {
      // the line's tail: nothing kept
    } else if (line_.size() + piece.size() > kMaxStreamLineBytes) {
      line_.clear();
      skipping_line_ = true;
      gap();
    } else {
      line_.append(piece);
    }
    if (end == std::string_view::npos) return;
    bytes.remove_prefix(end + 1);
    if (skipping_line_)
      skipping_line_ = false;
    else
      line_done();
  }
}

void StreamLines::line_done() {
  std::string line = std::move(line_);
  line_.clear();
  if (line.empty()) return;
  turn_bytes_ += line.size();
  if (messages_.size() >= kMaxStreamMessagesPerTurn || turn_bytes_ > kMaxStreamBytesPerTurn)
    return gap();
  auto parsed = parse_bounded(line, kEtcdReplyLimits);
  if (parsed.fault == JsonFault::None)
    messages_.emplace_back(std::move(parsed.value));
  else
    gap();
}

std::vector<StreamLines::Message> StreamLines::take() {
  turn_bytes_ = 0;
  return std::exchange(messages_, {});
}

}  // namespace trimd::etcd
