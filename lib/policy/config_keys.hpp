// The keys of trimd.toml, one descriptor each (config_keys.cpp). The parser
// reads every key through its descriptor, a [[filesystem]] rule may set what
// its descriptor allows, and tests/docs holds config/trimd.toml and
// trimd.toml(5) to the table both ways: a key must be documented in both, and
// both may document only keys of the table.
#pragma once

#include <span>
#include <string_view>

namespace trimd {

namespace config_detail {
class Value;
struct Target;
}  // namespace config_detail

enum class KeyScope {
  Global,             // only in its own table
  AlsoPerFilesystem,  // a [trim] key that a [[filesystem]] rule may set too
};

struct ConfigKey {
  // Its table: "idle", "trim", "log", "metrics", "fleet"; "filesystem" for
  // the keys only a [[filesystem]] rule has.
  std::string_view section;
  std::string_view name;
  // As trimd.toml(5) gives it before the default: "duration", "size", ...
  std::string_view type;
  // The default as TOML text ("\"1s\"", "20", "\"\""), as config/trimd.toml
  // and trimd.toml(5) show it; empty when there is none to write (a required
  // key, a match key, a default trimd works out).
  std::string_view default_value;
  // One line; config/trimd.toml's comment on the key begins with it.
  std::string_view doc;
  KeyScope scope;
  // Reads the value and makes the change; throws ConfigError.
  void (*read)(const config_detail::Value& value, config_detail::Target& target);
};

// Every key, in the order the tables appear in config/trimd.toml.
std::span<const ConfigKey> config_keys();

}  // namespace trimd
