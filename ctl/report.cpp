#include "report.hpp"

#include <set>

#include "units.hpp"
#include "format.hpp"
#include "json.hpp"

namespace trimctl {

namespace {

bool is_timestamp(const std::string& name) {
  static const std::set<std::string> kNames{"LastTrimStart", "LastTrimEnd", "NextTrim"};
  return kNames.count(name) > 0;
}

bool is_byte_count(const std::string& name) {
  static const std::set<std::string> kNames{"Size", "LastBytesTrimmed", "BytesTrimmedTotal"};
  return kNames.count(name) > 0;
}

std::string join(const std::vector<std::string>& words, const char* separator) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : separator) + word;
  return out;
}

}  // namespace

std::string json_for(const std::string& compact, JsonMode mode) {
  return mode == JsonMode::Pretty ? json_pretty(compact) : compact;
}

namespace {

JsonObject lifetime_json(const LifetimeInfo& life, bool with_bytes) {
  JsonObject object;
  if (with_bytes) object.number("bytes_trimmed_total", life.bytes_trimmed_total);
  return object.number("passes_total", life.passes_total)
      .number("preemptions_total", life.preemptions_total)
      .number("pauses_total", life.pauses_total)
      .number("failures_total", life.failures_total);
}

}  // namespace

std::string lifetime_text(const LifetimeInfo& life) {
  std::string text = trimd::format_size(life.bytes_trimmed_total) + " trimmed in " +
                     std::to_string(life.passes_total) +
                     (life.passes_total == 1 ? " pass" : " passes");
  text += ", " + std::to_string(life.failures_total) + " failed; " +
          std::to_string(life.preemptions_total) + " chunks preempted, " +
          std::to_string(life.pauses_total) + " pauses for foreground I/O";
  return text;
}

std::string manager_json(const ManagerInfo& manager) {
  return JsonObject()
      .string("version", manager.version)
      .string("state", manager.state)
      .number("bytes_trimmed_total", manager.bytes_trimmed_total)
      .append(lifetime_json(manager.lifetime, false))
      .str();
}

std::string filesystem_json(const FilesystemInfo& fs) {
  return JsonObject()
      .string("object", fs.object_path)
      .string("mount_point", fs.mount_point)
      .string("device", fs.device)
      .string("fs_type", fs.fs_type)
      .string("uuid", fs.uuid)
      .strings("backing_disks", fs.backing_disks)
      .string("state", fs.state)
      .string("state_reason", fs.state_reason)
      .number("progress", fs.progress)
      .number("size", fs.size)
      .number("last_trim_start_usec", fs.last_trim_start)
      .number("last_trim_end_usec", fs.last_trim_end)
      .string("last_result", fs.last_result)
      .number("last_bytes_trimmed", fs.last_bytes_trimmed)
      .number("next_trim_usec", fs.next_trim)
      .boolean("inline_discard", fs.inline_discard)
      .string("discard_mode", fs.discard_mode)
      .string("takeover", fs.takeover)
      .string("takeover_reason", fs.takeover_reason)
      .number("taken_over_since_usec", fs.taken_over_since)
      .number("last_trim_usec", fs.last_trim_duration)
      .number("last_wait_usec", fs.last_wait_duration)
      .append(lifetime_json(fs.lifetime, true))
      .str();
}

std::string property_json(const PropertyValue& value) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(uint64_t n) const { return std::to_string(n); }
    std::string operator()(double d) const { return json_number(d); }
    std::string operator()(const std::string& s) const { return json_quote(s); }
    std::string operator()(const std::vector<std::string>& list) const {
      std::vector<std::string> quoted;
      for (const auto& s : list) quoted.push_back(json_quote(s));
      return json_array(quoted);
    }
  };
  return std::visit(Visitor{}, value);
}

std::string property_text(const std::string& name, const PropertyValue& value) {
  if (const auto* n = std::get_if<uint64_t>(&value)) {
    if (is_timestamp(name)) return *n == 0 ? "none" : format_timestamp(*n);
    if (is_byte_count(name)) return trimd::format_size(*n);
    return std::to_string(*n);
  }
  if (const auto* d = std::get_if<double>(&value))
    return name == "Progress" ? format_percent(*d) : json_number(*d);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "yes" : "no";
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) return join(*list, ",");
  const auto& text = std::get<std::string>(value);
  return text.empty() ? "\"\"" : text;
}

std::string properties_json(const PropertyMap& properties) {
  JsonObject object;
  for (const auto& [name, value] : properties) object.raw(name, property_json(value));
  return object.str();
}

std::string properties_text(const PropertyMap& properties) {
  std::vector<std::string> pairs;
  for (const auto& [name, value] : properties) pairs.push_back(name + "=" + property_text(name, value));
  return join(pairs, " ");
}

bool pass_under_way(const FilesystemInfo& fs) {
  const bool held = fs.state == "paused" || fs.state == "waiting";
  return fs.state == "trimming" || (held && fs.progress > 0 && fs.progress < 1);
}

std::string trim_result_text(const std::string& result, uint64_t bytes, uint64_t usec,
                             uint64_t wait_usec) {
  wait_usec = std::min(wait_usec, usec);
  std::string text = (result.empty() ? std::string("finished") : result) + ", " +
                     trimd::format_size(bytes) + " trimmed in " + format_duration(usec - wait_usec);
  if (wait_usec > 0) text += " (waited " + format_duration(wait_usec) + ")";
  return text;
}

bool warn_about_inline_discard(const FilesystemInfo& fs) {
  // Taken over, ignored on purpose, or not possible: takeover_note() says it.
  const bool left_inline = fs.takeover.empty() || fs.takeover == "inline";
  return fs.inline_discard && fs.discard_mode != "async" && left_inline;
}

std::string inline_discard_warning(const std::string& mount_point) {
  return "warning: " + mount_point +
         " is mounted with 'discard': deletes pay for inline TRIM; remount with nodiscard and "
         "let trimd trim";
}

}  // namespace trimctl
