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

Json member_json(double value) { return json_number(value); }
template <typename Value>
Json member_json(const Value& value) {
  return Json(value);
}

// Every property of `info` as a member of `object`, after the ones it has:
// the --json names the XML gives them, in its order.
template <typename Info>
void add_properties_json(Json& object, const Info& info) {
  visit_properties(info, [&](const char*, const char* member, const auto& value) {
    object[member] = member_json(value);
  });
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
  Json object = Json::object();
  add_properties_json(object, manager);
  return object;
}

Json filesystem_json(const FilesystemInfo& fs) {
  Json object{{"object", fs.object_path}};
  add_properties_json(object, fs);
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
