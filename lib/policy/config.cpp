// trimd.toml, read with toml++ into a Config. Every error names the file and
// the line and column of the offending key or value, and says what would be
// accepted instead.
#include "config.hpp"

#include <fnmatch.h>
#include <strings.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "config_keys.hpp"
#include "config_reader.hpp"
#include "config_suggest.hpp"
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

const ConfigKey* find_key(std::string_view section, std::string_view name) {
  for (const auto& key : config_keys())
    if (key.section == section && key.name == name) return &key;
  return nullptr;
}

bool is_section(std::string_view name) {
  const auto keys = config_keys();
  return std::any_of(keys.begin(), keys.end(),
                     [&](const auto& key) { return key.section == name; });
}

// Every table's name, in the order of the table of keys; "filesystem" last.
std::vector<std::string_view> section_names() {
  std::vector<std::string_view> names;
  for (const auto& key : config_keys())
    if (std::find(names.begin(), names.end(), key.section) == names.end())
      names.push_back(key.section);
  std::erase(names, "filesystem");
  names.push_back("filesystem");
  return names;
}

std::string bracketed(std::string_view section) {
  return section == "filesystem" ? "[[filesystem]]" : fmt::format("[{}]", section);
}

// The names a table may hold: a rule's own keys and the [trim] keys it may set.
std::vector<std::string_view> names_in(std::string_view section) {
  std::vector<std::string_view> names;
  for (const auto& key : config_keys())
    if (key.section == section || (section == "filesystem" && key.section == "trim" &&
                                   key.scope == KeyScope::AlsoPerFilesystem))
      names.push_back(key.name);
  return names;
}

// " (did you mean idle.window?)", " (window is a key of [idle])", or "".
std::string key_hint(std::string_view section, std::string_view typed) {
  const auto known = names_in(section);
  if (const auto near = nearest_name(typed, known, section))
    return fmt::format(" (did you mean {}.{}?)", section, *near);
  for (const auto& key : config_keys())
    if (key.name == typed && key.section != section)
      return fmt::format(" ({} is a key of {})", typed, bracketed(key.section));
  return {};
}

// "[idle], [trim], ... or [[filesystem]]", from the table of keys.
std::string section_list() {
  std::vector<std::string> sections;
  for (const auto name : section_names()) sections.push_back(bracketed(name));
  const std::string last = sections.back();
  sections.pop_back();
  return fmt::format("{} or {}", fmt::join(sections, ", "), last);
}

std::string unknown_table(std::string_view typed) {
  const auto sections = section_names();
  if (const auto near = nearest_name(typed, sections))
    return fmt::format("{}: unknown key (did you mean {}?)", typed, bracketed(*near));
  return fmt::format("{}: unknown key (expected {})", typed, section_list());
}

// Builds one Config from files read in order: a later file changes what
// earlier ones set, key by key, and its [[filesystem]] rules come after
// theirs. What needs the whole policy is checked once, at the end.
class ConfigBuilder {
 public:
  void add(std::string_view text, const std::string& file) {
    const toml::table document = parse_document(text, file);
    for (auto&& [key, value] : document) {
      if (key == "filesystem")
        add_rules(file, value);
      else if (is_section(key.str()))
        add_section(file, key, value);
      else
        fail_at(place_of(file, key.source()), unknown_table(key.str()));
    }
  }

  Config finish() && {
    if (config_.fleet) {
      check_fleet(*config_.fleet, *fleet_table_);
      config_.trim.backend = config_.fleet->backend;
    } else if (first_backend_) {
      fail_at(*first_backend_,
              "filesystem.backend: needs a [fleet] section (the etcd cluster that caps passes "
              "per backend)");
    }
    return std::move(config_);
  }

 private:
  static toml::table parse_document(std::string_view text, const std::string& file) {
    try {
      return toml::parse(text, std::string_view{file});
    } catch (const toml::parse_error& e) {
      fail_at(place_of(file, e.source()), std::string{e.description()});
    }
  }

  void add_section(const std::string& file, const toml::key& key, const toml::node& value) {
    const auto* table = value.as_table();
    if (!table)
      fail_at(place_of(file, value.source()),
              fmt::format("{}: expected a table ([{}])", key.str(), key.str()));
    Target target{config_};
    if (key == "fleet") {
      target.fleet();
      fleet_table_ = place_of(file, table->source());
    }
    read_keys(file, key.str(), *table, target);
  }

  void add_rules(const std::string& file, const toml::node& node) {
    const auto* array = node.as_array();
    if (!array)
      fail_at(place_of(file, node.source()),
              "filesystem: write it as [[filesystem]], one table per rule");
    for (const auto& element : *array) {
      const auto* table = element.as_table();
      if (!table) Value(file, "filesystem", element).fail_type("a table");
      config_.overrides.push_back(read_rule(file, *table));
    }
  }

  PolicyOverride read_rule(const std::string& file, const toml::table& table) {
    PolicyOverride rule;
    Target target{config_, &rule};
    read_keys(file, "filesystem", table, target);
    if (!rule.mount_point_glob && !rule.uuid && !rule.fs_type)
      fail_at(place_of(file, table.source()),
              "filesystem: needs at least one of match, uuid or fs_type (defaults for every "
              "filesystem belong in [trim])");
    if (const auto* backend = table.get("backend"); backend && !first_backend_)
      first_backend_ = place_of(file, backend->source());
    return rule;
  }

  static void read_keys(const std::string& file, std::string_view section, const toml::table& table,
                        Target& target) {
    for (auto&& [key, value] : table) {
      const auto name = fmt::format("{}.{}", section, key.str());
      find(file, section, name, key).read(Value(file, name, value), target);
    }
  }

  // A rule has its own keys, and the [trim] keys that may be set per filesystem.
  static const ConfigKey& find(const std::string& file, std::string_view section,
                               const std::string& name, const toml::key& key) {
    const ConfigKey* found = find_key(section, key.str());
    if (!found && section == "filesystem") {
      found = find_key("trim", key.str());
      if (found && found->scope != KeyScope::AlsoPerFilesystem)
        fail_at(place_of(file, key.source()),
                fmt::format("{}: can only be set in [trim], not per filesystem", name));
    }
    if (!found)
      fail_at(place_of(file, key.source()),
              fmt::format("{}: unknown key{}", name, key_hint(section, key.str())));
    return *found;
  }

  Config config_;
  std::optional<Place> fleet_table_;    // the last [fleet] table read
  std::optional<Place> first_backend_;  // the first [[filesystem]] backend read
};

[[noreturn]] void fail_missing(const std::string& path) {
  throw ConfigError(path, 0, 0, fmt::format("cannot read: {}", std::strerror(ENOENT)));
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

const char* to_string(OnBatteryPolicy policy) {
  switch (policy) {
    case OnBatteryPolicy::Wait: return "wait";
    case OnBatteryPolicy::Gentle: return "gentle";
    case OnBatteryPolicy::Trim: return "trim";
  }
  return "wait";
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
  for (const auto& change : changes) change(policy);
}

TrimPolicy Config::policy_for(std::string_view mount_point, std::string_view uuid,
                              std::string_view fs_type) const {
  TrimPolicy policy = trim;
  for (const auto& o : overrides)
    if (o.matches(mount_point, uuid, fs_type)) o.apply_to(policy);
  return policy;
}

Config parse_config(std::string_view text, const std::string& file_name) {
  ConfigBuilder builder;
  builder.add(text, file_name);
  return std::move(builder).finish();
}

std::optional<std::string> read_policy_file(const std::string& path) {
  try {
    return read_regular_file(path, kMaxPolicyFileBytes, Links::Follow);
  } catch (const FileRefused& e) {
    throw ConfigError(path, 0, 0, fmt::format("cannot read: {}", e.what()));
  }
}

Config load_config(const std::string& path, bool missing_ok) {
  const auto text = read_policy_file(path);
  if (!text) {
    if (missing_ok) return Config{};
    fail_missing(path);
  }
  return parse_config(*text, path);
}

Config load_policy(const PolicySources& sources, std::vector<std::string>* files_read) {
  ConfigBuilder builder;
  std::vector<std::string> files;
  std::size_t total_bytes = 0;
  // The files together are held to one file's cap: drop-ins add no parsing
  // time or memory to what one trimd.toml could take.
  const auto add = [&](const std::string& file, const std::string& text) {
    total_bytes += text.size();
    if (total_bytes > kMaxPolicyFileBytes)
      throw ConfigError(file, 0, 0,
                        fmt::format("the policy's files together are larger than {}, the most "
                                    "trimd reads",
                                    format_size(kMaxPolicyFileBytes)));
    builder.add(text, file);
    files.push_back(file);
  };
  if (const auto text = read_policy_file(sources.main_file))
    add(sources.main_file, *text);
  else if (sources.main_required)
    fail_missing(sources.main_file);
  for (const auto& file : list_drop_ins(sources)) {
    const auto text = read_policy_file(file);
    if (!text) fail_missing(file);  // removed since it was listed
    add(file, *text);
  }
  Config config = std::move(builder).finish();
  if (files_read) *files_read = std::move(files);
  return config;
}

}  // namespace trimd
