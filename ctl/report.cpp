#include "report.hpp"

#include <set>

#include "format.hpp"
#include "json.hpp"
#include "units.hpp"

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

namespace {

// The lifetime figures as members of `object`, after the ones it has.
void add_lifetime_json(Json& object, const LifetimeInfo& life, bool with_bytes) {
  if (with_bytes) object["bytes_trimmed_total"] = life.bytes_trimmed_total;
  object["passes_total"] = life.passes_total;
  object["preemptions_total"] = life.preemptions_total;
  object["pauses_total"] = life.pauses_total;
  object["failures_total"] = life.failures_total;
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

Json manager_json(const ManagerInfo& manager) {
  Json object{{"version", manager.version},
              {"state", manager.state},
              {"bytes_trimmed_total", manager.bytes_trimmed_total}};
  add_lifetime_json(object, manager.lifetime, false);
  return object;
}

Json filesystem_json(const FilesystemInfo& fs) {
  Json object{{"object", fs.object_path},
              {"mount_point", fs.mount_point},
              {"device", fs.device},
              {"fs_type", fs.fs_type},
              {"uuid", fs.uuid},
              {"backing_disks", fs.backing_disks},
              {"state", fs.state},
              {"state_reason", fs.state_reason},
              {"progress", json_number(fs.progress)},
              {"size", fs.size},
              {"last_trim_start_usec", fs.last_trim_start},
              {"last_trim_end_usec", fs.last_trim_end},
              {"last_result", fs.last_result},
              {"last_bytes_trimmed", fs.last_bytes_trimmed},
              {"next_trim_usec", fs.next_trim},
              {"inline_discard", fs.inline_discard},
              {"discard_mode", fs.discard_mode},
              {"takeover", fs.takeover},
              {"takeover_reason", fs.takeover_reason},
              {"taken_over_since_usec", fs.taken_over_since},
              {"last_trim_usec", fs.last_trim_duration},
              {"last_wait_usec", fs.last_wait_duration}};
  add_lifetime_json(object, fs.lifetime, true);
  return object;
}

Json property_json(const PropertyValue& value) {
  if (const auto* d = std::get_if<double>(&value)) return json_number(*d);
  return std::visit([](const auto& v) { return Json(v); }, value);
}

std::string property_text(const std::string& name, const PropertyValue& value) {
  if (const auto* n = std::get_if<uint64_t>(&value)) {
    if (is_timestamp(name)) return *n == 0 ? "none" : format_timestamp(*n);
    if (is_byte_count(name)) return trimd::format_size(*n);
    return std::to_string(*n);
  }
  if (const auto* d = std::get_if<double>(&value))
    return name == "Progress" ? format_percent(*d) : json_text(json_number(*d), JsonMode::Short);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "yes" : "no";
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) return join(*list, ",");
  const auto& text = std::get<std::string>(value);
  return text.empty() ? "\"\"" : text;
}

Json properties_json(const PropertyMap& properties) {
  Json object = Json::object();
  for (const auto& [name, value] : properties) object[name] = property_json(value);
  return object;
}

std::string properties_text(const PropertyMap& properties) {
  std::vector<std::string> pairs;
  for (const auto& [name, value] : properties)
    pairs.push_back(name + "=" + property_text(name, value));
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
