// trimd.toml, read with toml++ into a Config. Every error names the file and
// the line and column of the offending key or value, and says what would be
// accepted instead.
#include "config.hpp"

#include <fnmatch.h>
#include <strings.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "config_reader.hpp"
#include "fleet_config.hpp"
#include "regular_file.hpp"
#include "units.hpp"

#if !TOML_EXCEPTIONS
#error "trimd reads toml++ parse errors as exceptions"
#endif

namespace trimd {
namespace {

using namespace config_detail;

std::string describe_location(const std::string& file, int line, int column,
                              const std::string& message) {
  if (line <= 0) return fmt::format("{}: {}", file, message);
  return fmt::format("{}:{}:{}: {}", file, line, column, message);
}

// "auto" (trimd picks per disk: docs/preemption.md) or a duration.
std::optional<Duration> read_preempt_latency(const Reader& r, const std::string& name,
                                             const toml::node& value) {
  const auto* text = value.as_string();
  if (text && text->get() == "auto") return std::nullopt;
  if (text) {
    try {
      parse_duration(text->get());
    } catch (const std::invalid_argument&) {
      r.fail(value.source(),
             fmt::format("{}: \"{}\" is neither \"auto\" nor a duration such as \"4ms\"", name,
                         text->get()));
    }
  }
  return r.duration(name, value, kPreemptLatencyRange);
}

void read_idle(const Reader& r, const toml::table& table, Config& config) {
  for (auto&& [key, value] : table) {
    const auto name = dotted("idle", key);
    if (key == "sample_interval") {
      config.sample_interval = r.duration(name, value, kSampleRange);
    } else if (key == "preempt_interval") {
      config.preempt_interval = r.duration(name, value, kPreemptRange);
    } else if (key == "preempt_latency") {
      config.preempt_latency = read_preempt_latency(r, name, value);
    } else if (key == "window") {
      config.idle.idle_window = r.duration(name, value, kIdleWindowRange);
    } else if (key == "max_iops") {
      config.idle.max_iops = r.number(name, value);
    } else if (key == "max_throughput") {
      config.idle.max_bytes_per_sec = static_cast<double>(r.size(name, value));
    } else if (key == "max_busy") {
      config.idle.max_busy_fraction = r.number(name, value);
      if (config.idle.max_busy_fraction > 1)
        r.fail(value.source(),
               fmt::format("{}: must be a fraction between 0 and 1 (e.g. 0.05)", name));
    } else {
      fail_unknown_key(r, name, key);
    }
  }
}

// The keys [trim] and [[filesystem]] share. False when `key` is not one of them.
bool read_policy_key(const Reader& r, const std::string& name, const toml::key& key,
                     const toml::node& value, PolicyOverride& out) {
  if (key == "enabled")
    out.enabled = r.boolean(name, value);
  else if (key == "interval")
    out.interval = r.duration(name, value, kIntervalRange);
  else if (key == "randomized_delay")
    out.randomized_delay = r.duration(name, value, kPolicyRange);
  else if (key == "window")
    out.window = r.window(name, value);
  else if (key == "chunk_size")
    out.chunk_bytes = r.positive_size(name, value);
  else if (key == "min_extent")
    out.min_extent_bytes = r.size(name, value);
  else if (key == "pause")
    out.chunk_pause = r.duration(name, value, kChunkRange);
  else if (key == "chunk_time")
    out.chunk_time = r.duration(name, value, kChunkRange);
  else if (key == "rate_limit")
    out.rate_limit_bytes_per_sec = r.size(name, value);
  else if (key == "overdue_grace")
    out.overdue_grace = r.duration(name, value, kPolicyRange);
  else if (key == "skip_rotational")
    out.skip_rotational = r.boolean(name, value);
  else if (key == "inline_discard")
    out.inline_discard = r.inline_discard(name, value);
  else
    return false;
  return true;
}

// Only [trim] sets these: they steer trimd as a whole, not one filesystem.
constexpr std::array<std::string_view, 6> trim_only_keys{"first_delay",  "gentle_chunk_size",
                                                         "gentle_pause", "hand_back_on_stop",
                                                         "scope",        "forget_after"};

TrimPolicy::Scope read_scope(const Reader& r, const std::string& name, const toml::node& value) {
  const std::string text = r.string(name, value);
  if (text == "mounted") return TrimPolicy::Scope::Mounted;
  if (text == "fstab") return TrimPolicy::Scope::Fstab;
  r.fail(value.source(),
         fmt::format("{}: \"{}\" is not a scope (use \"mounted\" or \"fstab\")", name, text));
}

bool is_trim_only_key(const toml::key& key) {
  for (const auto k : trim_only_keys)
    if (key == k) return true;
  return false;
}

void read_trim(const Reader& r, const toml::table& table, TrimPolicy& policy) {
  PolicyOverride shared;
  for (auto&& [key, value] : table) {
    const auto name = dotted("trim", key);
    if (read_policy_key(r, name, key, value, shared)) continue;
    if (key == "first_delay")
      policy.schedule.first_delay = r.duration(name, value, kPolicyRange);
    else if (key == "gentle_chunk_size")
      policy.gentle_chunk_bytes = r.positive_size(name, value);
    else if (key == "gentle_pause")
      policy.gentle_pause = r.duration(name, value, kChunkRange);
    else if (key == "hand_back_on_stop")
      policy.hand_back_on_stop = r.boolean(name, value);
    else if (key == "scope")
      policy.scope = read_scope(r, name, value);
    else if (key == "forget_after")
      policy.forget_after = r.duration(name, value, kForgetRange);
    else
      fail_unknown_key(r, name, key);
  }
  shared.apply_to(policy);
}

std::string match_value(const Reader& r, const std::string& name, const toml::node& value) {
  auto text = r.string(name, value);
  if (text.empty()) r.fail(value.source(), fmt::format("{}: must not be empty", name));
  return text;
}

PolicyOverride read_filesystem(const Reader& r, const toml::table& table) {
  PolicyOverride out;
  for (auto&& [key, value] : table) {
    const auto name = dotted("filesystem", key);
    if (key == "match")
      out.mount_point_glob = match_value(r, name, value);
    else if (key == "uuid")
      out.uuid = match_value(r, name, value);
    else if (key == "fs_type")
      out.fs_type = match_value(r, name, value);
    else if (key == "backend")
      out.backend = read_backend(r, name, value);
    else if (read_policy_key(r, name, key, value, out))
      continue;
    else if (is_trim_only_key(key))
      r.fail(key.source(), fmt::format("{}: can only be set in [trim], not per filesystem", name));
    else
      fail_unknown_key(r, name, key);
  }
  if (!out.mount_point_glob && !out.uuid && !out.fs_type)
    r.fail(table.source(),
           "filesystem: needs at least one of match, uuid or fs_type (defaults for every "
           "filesystem belong in [trim])");
  return out;
}

void read_filesystems(const Reader& r, const toml::node& node, std::vector<PolicyOverride>& out) {
  const auto* array = node.as_array();
  if (!array) r.fail(node.source(), "filesystem: write it as [[filesystem]], one table per rule");
  for (const auto& element : *array) {
    const auto* table = element.as_table();
    if (!table) r.fail_type("filesystem", element, "a table");
    out.push_back(read_filesystem(r, *table));
  }
}

void read_log(const Reader& r, const toml::table& table, Config& config) {
  constexpr std::array<std::string_view, 5> levels{"trace", "debug", "info", "warn", "error"};
  for (auto&& [key, value] : table) {
    const auto name = dotted("log", key);
    if (key != "level") fail_unknown_key(r, name, key);
    config.log_level = r.string(name, value);
    if (std::find(levels.begin(), levels.end(), config.log_level) == levels.end())
      r.fail(value.source(),
             fmt::format("{}: \"{}\" is not a level (use trace, debug, info, warn or error)", name,
                         config.log_level));
  }
}

void read_metrics(const Reader& r, const toml::table& table, Config& config) {
  for (auto&& [key, value] : table) {
    const auto name = dotted("metrics", key);
    if (key != "textfile") fail_unknown_key(r, name, key);
    config.metrics_textfile = r.string(name, value);
    const std::string& path = config.metrics_textfile;
    if (!path.empty() && (path.front() != '/' || !path.ends_with(".prom")))
      r.fail(value.source(),
             fmt::format("{}: \"{}\" is not an absolute path ending in .prom (node_exporter's "
                         "textfile collector reads only *.prom files)",
                         name, path));
  }
}

// A [[filesystem]] backend means nothing without [fleet] to coordinate it.
void require_fleet_for_backends(const Reader& r, const toml::table& document,
                                const Config& config) {
  if (config.fleet) return;
  const auto* rules = document.get_as<toml::array>("filesystem");
  if (!rules) return;
  for (const auto& rule : *rules)
    if (const auto* table = rule.as_table())
      if (const auto* backend = table->get("backend"))
        r.fail(backend->source(),
               "filesystem.backend: needs a [fleet] section (the etcd cluster "
               "that caps passes per backend)");
}

toml::table parse_document(std::string_view text, const std::string& file_name) {
  try {
    return toml::parse(text, std::string_view{file_name});
  } catch (const toml::parse_error& e) {
    throw ConfigError(file_name, static_cast<int>(e.source().begin.line),
                      static_cast<int>(e.source().begin.column), std::string{e.description()});
  }
}

}  // namespace

ConfigError::ConfigError(std::string file, int line, int column, const std::string& message)
    : std::runtime_error(describe_location(file, line, column, message)), file_(std::move(file)),
      line_(line), column_(column), message_(message) {}

const char* to_string(InlineDiscardPolicy policy) {
  switch (policy) {
    case InlineDiscardPolicy::Warn: return "warn";
    case InlineDiscardPolicy::Takeover: return "takeover";
    case InlineDiscardPolicy::Ignore: return "ignore";
  }
  return "warn";
}

bool PolicyOverride::matches(std::string_view mount_point, std::string_view fs_uuid,
                             std::string_view type) const {
  if (mount_point_glob &&
      ::fnmatch(mount_point_glob->c_str(), std::string{mount_point}.c_str(), 0) != 0)
    return false;
  // UUIDs are hex: blkid prints them lower case, people paste them upper case.
  if (uuid && (uuid->size() != fs_uuid.size() ||
               ::strncasecmp(uuid->data(), fs_uuid.data(), fs_uuid.size()) != 0))
    return false;
  return !fs_type || *fs_type == type;
}

void PolicyOverride::apply_to(TrimPolicy& policy) const {
  if (enabled) policy.enabled = *enabled;
  if (interval) policy.schedule.interval = *interval;
  if (randomized_delay) policy.schedule.randomized_delay = *randomized_delay;
  if (window) policy.schedule.window = *window;
  if (chunk_bytes) policy.chunk_bytes = *chunk_bytes;
  if (min_extent_bytes) policy.min_extent_bytes = *min_extent_bytes;
  if (chunk_pause) policy.chunk_pause = *chunk_pause;
  if (chunk_time) policy.chunk_time = *chunk_time;
  if (rate_limit_bytes_per_sec) policy.rate_limit_bytes_per_sec = *rate_limit_bytes_per_sec;
  if (overdue_grace) policy.schedule.overdue_grace = *overdue_grace;
  if (skip_rotational) policy.skip_rotational = *skip_rotational;
  if (inline_discard) policy.inline_discard = *inline_discard;
  if (backend) policy.backend = *backend;
}

TrimPolicy Config::policy_for(std::string_view mount_point, std::string_view uuid,
                              std::string_view fs_type) const {
  TrimPolicy policy = trim;
  for (const auto& o : overrides)
    if (o.matches(mount_point, uuid, fs_type)) o.apply_to(policy);
  return policy;
}

Config parse_config(std::string_view text, const std::string& file_name) {
  const Reader r{file_name};
  const toml::table document = parse_document(text, file_name);
  Config config;
  for (auto&& [key, value] : document) {
    if (key == "idle")
      read_idle(r, section(r, key, value), config);
    else if (key == "trim")
      read_trim(r, section(r, key, value), config.trim);
    else if (key == "log")
      read_log(r, section(r, key, value), config);
    else if (key == "metrics")
      read_metrics(r, section(r, key, value), config);
    else if (key == "filesystem")
      read_filesystems(r, value, config.overrides);
    else if (key == "fleet")
      config.fleet = read_fleet(r, section(r, key, value));
    else
      r.fail(key.source(),
             fmt::format("{}: unknown key (expected [idle], [trim], [log], [metrics], "
                         "[fleet] or [[filesystem]])",
                         key.str()));
  }
  if (config.fleet) config.trim.backend = config.fleet->backend;
  require_fleet_for_backends(r, document, config);
  return config;
}

Config load_config(const std::string& path, bool missing_ok) {
  std::optional<std::string> text;
  try {
    text = read_regular_file(path, kMaxPolicyFileBytes, Links::Follow);
  } catch (const FileRefused& e) {
    throw ConfigError(path, 0, 0, fmt::format("cannot read: {}", e.what()));
  }
  if (!text) {
    if (missing_ok) return Config{};
    throw ConfigError(path, 0, 0, fmt::format("cannot read: {}", std::strerror(ENOENT)));
  }
  return parse_config(*text, path);
}

}  // namespace trimd
