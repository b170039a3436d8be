#include "config_suggest.hpp"

#include <algorithm>
#include <vector>

namespace trimd {

namespace {

std::size_t edits_allowed(std::string_view typed) {
  return std::clamp<std::size_t>(typed.size() / 3, 1, 2);
}

// "idle_window" or "idle-window" in [idle]: the table's name said twice.
std::string_view without_section_prefix(std::string_view typed, std::string_view section) {
  if (section.empty() || typed.size() <= section.size() + 1 || !typed.starts_with(section))
    return typed;
  const char separator = typed[section.size()];
  if (separator != '_' && separator != '-' && separator != '.') return typed;
  return typed.substr(section.size() + 1);
}

}  // namespace

// Optimal string alignment distance, keeping only the table's last three rows.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t replace = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string_view> nearest_name(std::string_view typed,
                                             std::span<const std::string_view> known,
                                             std::string_view section) {
  if (typed.empty() || typed.size() > kMaxSuggestedNameLength) return std::nullopt;
  const std::string_view stripped = without_section_prefix(typed, section);
  if (stripped != typed && std::find(known.begin(), known.end(), stripped) != known.end())
    return stripped;
  std::optional<std::string_view> best;
  std::size_t best_distance = edits_allowed(typed) + 1;
  bool tied = false;
  for (const std::string_view name : known) {
    const std::size_t distance = edit_distance(typed, name);
    if (distance < best_distance) {
      best = name;
      best_distance = distance;
      tied = false;
    } else if (distance == best_distance && best && *best != name) {
      tied = true;
    }
  }
  if (tied) return std::nullopt;
  return best;
}

}  // namespace trimd
