// libFuzzer: what etcd (or whoever answers in its place) sends the fleet.
// The input is a range reply, a NUL byte, then a watch stream fed in pieces
// whose sizes the input's first bytes choose. std::runtime_error is how a
// reply is refused; a crash, a sanitizer report or a bound not kept is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "claim_view.hpp"
#include "etcd_wire.hpp"
#include "json_bounds.hpp"
#include "stream_lines.hpp"

namespace {

using namespace trimd;

void check(bool holds) {
  if (!holds) std::abort();
}

// The view's answers stay bounded whatever it was fed.
void use(const fleet::ClaimView& view) {
  const auto key = slot_key("pool-a", "me", "fs");
  (void)view.standing(key, view.revision(), 4);
  check(view.holders_text("pool-a", 4).size() < 1024);
  fleet::FleetReport report;
  view.report("pool-a", 4, {key}, report);
  check(report.rows.size() <= fleet::kReportRowsPerBackend + 1 + fleet::kReportIgnoredPerBackend);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto split = input.find('\0');
  const auto range_text = input.substr(0, split);
  auto stream = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);

  fleet::ClaimView view(slot_prefix("pool-a"));
  const auto range = etcd::parse_bounded(range_text, etcd::kEtcdReplyLimits);
  if (range.fault == etcd::JsonFault::None) {
    try {
      view.reset(etcd::range_of(range.value), !range_text.empty() && range_text[0] == ' ');
    } catch (const std::runtime_error&) {
    }
  }
  use(view);

  etcd::StreamLines lines;
  std::size_t turn = 0;
  while (!stream.empty()) {
    const std::size_t piece = 1 + static_cast<unsigned char>(stream[0]) % 64;
    lines.feed(stream.substr(0, piece));
    stream.remove_prefix(std::min(piece, stream.size()));
    if (++turn % 4 != 0) continue;
    const auto messages = lines.take();
    check(messages.size() <= etcd::kMaxStreamMessagesPerTurn + 1);
    for (const auto& message : messages) {
      if (!message) continue;
      try {
        (void)view.apply(etcd::watch_message_of(*message));
      } catch (const std::runtime_error&) {
      }
    }
  }
  use(view);
  return 0;
}
