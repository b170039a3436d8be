// A watch stream of etcd's gateway, cut into its messages: one JSON object
// per line, as the bytes come in whatever pieces. Each byte is looked at
// once (only new bytes are searched for a line's end), a line is kept only
// up to kMaxStreamLineBytes (the rest of a longer one is skipped), and what
// is taken in one turn is at most kMaxStreamBytesPerTurn in
// kMaxStreamMessagesPerTurn messages: whatever a stream sends, its cost per
// loop turn is bounded. Where messages were dropped for a bound, a gap
// (nothing) stands in their place, once however many went.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace trimd::etcd {

inline constexpr std::size_t kMaxStreamLineBytes = 256u << 10;
inline constexpr std::size_t kMaxStreamBytesPerTurn = 1u << 20;
inline constexpr std::size_t kMaxStreamMessagesPerTurn = 256;

class StreamLines {
 public:
  using Message = std::optional<nlohmann::json>;  // nothing: a gap

  void feed(std::string_view bytes);
  // The messages since the last take(); a new turn's budget begins.
  std::vector<Message> take();
  bool empty() const { return messages_.empty(); }

 private:
  void line_done();
  void gap();

  std::string line_;            // the line so far
  bool skipping_line_ = false;  // the rest of a line over the bound
  std::vector<Message> messages_;
  std::size_t turn_bytes_ = 0;  // parsed this turn
};

}  // namespace trimd::etcd
