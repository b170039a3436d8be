#include "pass_outcome.hpp"

namespace trimd {

namespace {

constexpr std::string_view kFailedPrefix = "failed: ";
constexpr std::string_view kInterruptedPrefix = "interrupted: ";

}  // namespace

std::string PassOutcome::text() const {
  switch (result) {
    case PassResult::Success: return "success";
    case PassResult::Failed: return std::string(kFailedPrefix) + detail;
    case PassResult::Cancelled: return "cancelled";
    case PassResult::Unsupported: return "unsupported";
    case PassResult::Interrupted: return std::string(kInterruptedPrefix) + detail;
  }
  return "unknown";
}

std::optional<PassOutcome> PassOutcome::parse(std::string_view text) {
  if (text == "success") return PassOutcome{PassResult::Success, {}};
  if (text == "cancelled") return PassOutcome{PassResult::Cancelled, {}};
  if (text == "unsupported") return PassOutcome{PassResult::Unsupported, {}};
  if (text.starts_with(kFailedPrefix))
    return PassOutcome{PassResult::Failed, std::string(text.substr(kFailedPrefix.size()))};
  if (text == "failed") return PassOutcome{PassResult::Failed, {}};
  if (text.starts_with(kInterruptedPrefix))
    return PassOutcome{PassResult::Interrupted,
                       std::string(text.substr(kInterruptedPrefix.size()))};
  return std::nullopt;
}

std::string outcome_text(const std::optional<PassOutcome>& outcome) {
  return outcome ? outcome->text() : std::string{};
}

}  // namespace trimd
