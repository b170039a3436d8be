// What a misspelt policy key most likely meant, for the "unknown key" error:
// an admin who wrote `idle_window` under [idle] is told `idle.window`, not
// only that the key is unknown.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace trimd {

// The known name nearest to `typed`: one at most a third of its length of
// edits away (at least 1 edit, at most 2; a swap of two neighbours counts as
// one), or the one it ends with after the table's name and a separator
// ("idle_window" in [idle] means "window"). None when nothing is that near,
// two are equally near, or `typed` is longer than kMaxSuggestedNameLength:
// a key can be as long as the file, and the distance costs length × length.
std::optional<std::string_view> nearest_name(std::string_view typed,
                                             std::span<const std::string_view> known,
                                             std::string_view section = {});
constexpr std::size_t kMaxSuggestedNameLength = 64;

// Edits (insert, delete, replace, swap two neighbours) from a to b.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace trimd
