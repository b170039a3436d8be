// How a pass ended: a type everywhere inside trimd. Text ("success",
// "failed: <why>", ...) only where it leaves: the bus, the state file, logs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trimd {

enum class PassResult { Success, Failed, Cancelled, Unsupported, Interrupted };

struct PassOutcome {
  PassResult result = PassResult::Success;
  std::string detail;  // why it failed or was interrupted

  std::string text() const;  // "success", "failed: <detail>", "cancelled", ...
  // From text(); nothing for text it never writes.
  static std::optional<PassOutcome> parse(std::string_view text);
  bool operator==(const PassOutcome&) const = default;
};

// "" for a filesystem never trimmed.
std::string outcome_text(const std::optional<PassOutcome>& outcome);

}  // namespace trimd
