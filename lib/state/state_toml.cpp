// The TOML form of trimd's records, both ways: what state.toml holds for one
// filesystem and how it is read back. state_store.cpp puts records together
// into the file and keeps it within its bounds.
#include "state_toml.hpp"

#include <charconv>
#include <ctime>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "utf8.hpp"

#if !TOML_EXCEPTIONS
#error "trimd reads toml++ parse errors as exceptions"
#endif

namespace trimd {
namespace {

// Longer than any pass: a bigger duration is clamped, not trusted.
constexpr std::int64_t kLongestStoredUsec = 100ll * 365 * 24 * 3600 * 1000000;

// Only basic "..." strings: toml++ 3.3 writes literal and multi-line strings
// that it cannot read back when they hold quotes, tabs or line breaks.
constexpr auto string_flags = toml::format_flags::allow_unicode_strings;

// TOML integers are signed; byte counts and offsets past 8 EiB do not occur.
std::int64_t to_toml_integer(std::uint64_t value) {
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  return value > static_cast<std::uint64_t>(max) ? max : static_cast<std::int64_t>(value);
}

std::int64_t usec_of(Duration d) { return d.count() < 0 ? 0 : d.count(); }

void lifetime_to_table(const Lifetime& life, toml::table& table) {
  table.insert("bytes_total", to_toml_integer(life.bytes));
  table.insert("passes_total", to_toml_integer(life.passes));
  table.insert("preemptions_total", to_toml_integer(life.preemptions));
  table.insert("pauses_total", to_toml_integer(life.pauses));
  table.insert("failures_total", to_toml_integer(life.failures));
}

// toml++ drops every byte that is not UTF-8 when it writes a string: such a
// name (a mount point, a result naming one) is written escaped
// (escape_bytes()) under its key plus "_escaped", so that the plain key keeps
// its meaning for files written before (and for every UTF-8 name).
void insert_bytes(toml::table& table, std::string_view key, const std::string& raw) {
  if (is_valid_utf8(raw))
    table.insert(key, raw);
  else
    table.insert(std::string(key) + "_escaped", escape_bytes(raw));
}

// Inline tables: the record's header is written by hand (table_header), so
// nested [[...]] sections would land outside it.
toml::array history_to_array(const std::vector<PassHistoryEntry>& history) {
  toml::array array;
  for (const auto& entry : history) {
    toml::table t;
    t.insert("start_usec", to_usec(entry.start));
    t.insert("end_usec", to_usec(entry.end));
    t.insert("trimming_usec", usec_of(entry.trimming));
    t.insert("waited_usec", usec_of(entry.waited));
    t.insert("bytes", to_toml_integer(entry.bytes));
    insert_bytes(t, "result", entry.result.text());
    t.insert("preemptions", to_toml_integer(entry.preemptions));
    t.is_inline(true);
    array.push_back(std::move(t));
  }
  return array;
}

void mount_to_table(const MountInstance& mount, toml::table& table) {
  table.insert("taken_over_boot_id", mount.boot_id);
  table.insert("taken_over_mount_ns", to_toml_integer(mount.namespace_id));
  table.insert("taken_over_mount_id", to_toml_integer(mount.mount_id));
  toml::array options;
  for (const auto& option : mount.options) options.push_back(option);
  table.insert("taken_over_options", std::move(options));
}

toml::table record_to_table(const FsRecord& record) {
  toml::table table;
  insert_bytes(table, "mount_point", record.mount_point);
  if (!record.device.empty()) insert_bytes(table, "device", record.device);
  if (record.last_start) table.insert("last_start_usec", to_usec(*record.last_start));
  if (record.last_end) table.insert("last_end_usec", to_usec(*record.last_end));
  insert_bytes(table, "last_result", outcome_text(record.last_result));
  table.insert("last_bytes", to_toml_integer(record.last_bytes));
  if (record.cursor) table.insert("cursor", to_toml_integer(*record.cursor));
  if (record.pass_start) table.insert("pass_start_usec", to_usec(*record.pass_start));
  table.insert("pass_bytes", to_toml_integer(record.pass_bytes));
  table.insert("pass_waited_usec", usec_of(record.pass_waited));
  table.insert("last_trimming_usec", usec_of(record.last_trimming));
  table.insert("last_waited_usec", usec_of(record.last_waited));
  if (record.first_seen) table.insert("first_seen_usec", to_usec(*record.first_seen));
  lifetime_to_table(record.lifetime, table);
  if (!record.history.empty()) table.insert("history", history_to_array(record.history));
  if (record.last_seen) table.insert("last_seen_usec", to_usec(*record.last_seen));
  if (record.taken_over) {
    table.insert("taken_over_usec", to_usec(record.taken_over->since));
    table.insert("taken_over_by", to_string(record.taken_over->origin));
    if (record.taken_over->mount) mount_to_table(*record.taken_over->mount, table);
  }
  return table;
}

// toml++ drops every byte that is not UTF-8 when it writes a string, and an
// id holds the mount point when there is no UUID: such an id is written as
// "bytes:" and the hex of all its bytes instead (an id never starts so).
constexpr std::string_view kBytesPrefix = "bytes:";

std::string id_to_key(const std::string& id) {
  if (is_valid_utf8(id)) return id;
  constexpr char kHex[] = "0123456789abcdef";
  std::string key(kBytesPrefix);
  for (const char ch : id) {
    const auto c = static_cast<unsigned char>(ch);
    key += kHex[c >> 4];
    key += kHex[c & 0xf];
  }
  return key;
}

std::string key_to_id(std::string_view key) {
  if (key.substr(0, kBytesPrefix.size()) != kBytesPrefix) return std::string(key);
  const std::string_view hex = key.substr(kBytesPrefix.size());
  std::string id;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(hex.data() + i, hex.data() + i + 2, value, 16);
    if (error != std::errc{} || end != hex.data() + i + 2)
      throw std::runtime_error(fmt::format("\"{}\": not a hex string of bytes", key));
    id += static_cast<char>(value);
  }
  if (hex.size() % 2 != 0)
    throw std::runtime_error(fmt::format("\"{}\": not a hex string of bytes", key));
  return id;
}

// toml++ 3.3 leaves keys with quotes, tabs or line breaks bare in table
// headers, so the header is written as a quoted string value instead.
std::string table_header(const std::string& id) {
  std::ostringstream out;
  out << '[' << toml::toml_formatter{toml::value<std::string>{id}, string_flags} << ']';
  return out.str();
}

// Reads one record, throwing std::runtime_error on a value of the wrong type.
class RecordReader {
 public:
  RecordReader(const std::string& id, const toml::table& table) : id_(id), table_(table) {}

  bool has(std::string_view key) const { return table_.get(key) != nullptr; }
  std::optional<std::int64_t> integer(std::string_view key) const {
    const toml::node* node = table_.get(key);
    if (!node) return std::nullopt;
    if (const auto* i = node->as_integer()) return i->get();
    throw wrong(key, "an integer");
  }
  std::uint64_t count(std::string_view key) const {
    const auto value = integer(key).value_or(0);
    if (value < 0) throw wrong(key, "a non-negative integer");
    return static_cast<std::uint64_t>(value);
  }
  // A time before 1970 or after kLatestStoredUsec was not written by trimd:
  // the file is corrupt (and such a time would overflow the clock's sums).
  std::optional<TimePoint> time(std::string_view key) const {
    const auto usec = integer(key);
    if (!usec) return std::nullopt;
    if (*usec < 0 || *usec > kLatestStoredUsec)
      throw wrong(key, fmt::format("a time between 1970 and 2200, not {} us", *usec));
    return from_usec(*usec);
  }
  std::string string(std::string_view key) const {
    const toml::node* node = table_.get(key);
    if (!node) return {};
    if (const auto* s = node->as_string()) return s->get();
    throw wrong(key, "a string");
  }
  // What insert_bytes() wrote.
  std::string bytes(std::string_view key) const {
    const std::string escaped_key = std::string(key) + "_escaped";
    if (!table_.get(escaped_key)) return string(key);
    const auto raw = unescape_bytes(string(escaped_key));
    if (!raw) throw wrong(escaped_key, "a name with bytes escaped as \\xNN");
    return *raw;
  }
  // What PassOutcome::text() wrote; nothing for "" (never trimmed) unless
  // the key must hold one.
  enum class Need { Optional, Required };
  std::optional<PassOutcome> outcome(std::string_view key, Need need = Need::Optional) const {
    const std::string text = bytes(key);
    if (text.empty() && need == Need::Optional) return std::nullopt;
    if (auto outcome = PassOutcome::parse(text)) return outcome;
    throw wrong(key,
                "a pass result (success, failed: ..., cancelled, unsupported, interrupted: ...)");
  }
  std::vector<std::string> strings(std::string_view key) const {
    return array<std::string>(key, "an array of strings",
                              [](const toml::node& element) -> std::optional<std::string> {
                                if (const auto* s = element.as_string()) return s->get();
                                return std::nullopt;
                              });
  }
  TakeoverOrigin takeover_origin(std::string_view key) const {
    const auto text = string(key);
    for (const auto origin : {TakeoverOrigin::Policy, TakeoverOrigin::Request})
      if (text == to_string(origin)) return origin;
    throw wrong(key, "\"policy\" or \"request\"");
  }
  Duration duration(std::string_view key) const {
    return Duration{static_cast<Duration::rep>(
        std::min<std::uint64_t>(count(key), static_cast<std::uint64_t>(kLongestStoredUsec)))};
  }
  // The tables of an array (none when absent).
  std::vector<const toml::table*> tables(std::string_view key) const {
    return array<const toml::table*>(
        key, "an array of tables",
        [](const toml::node& element) -> std::optional<const toml::table*> {
          if (const auto* table = element.as_table()) return table;
          return std::nullopt;
        });
  }

 private:
  // Each element of the array at `key` read by `read`, which answers
  // nothing (or null) for an element of the wrong type.
  template <typename T, typename Read>
  std::vector<T> array(std::string_view key, std::string_view expected, Read read) const {
    std::vector<T> out;
    const toml::node* node = table_.get(key);
    if (!node) return out;
    const auto* elements = node->as_array();
    if (!elements) throw wrong(key, expected);
    for (const auto& element : *elements) {
      auto value = read(element);
      if (!value) throw wrong(key, expected);
      out.push_back(*value);
    }
    return out;
  }
  std::runtime_error wrong(std::string_view key, std::string_view expected) const {
    return std::runtime_error(fmt::format("[\"{}\"] {}: expected {}", id_, key, expected));
  }
  const std::string& id_;
  const toml::table& table_;
};

Lifetime read_lifetime(const RecordReader& r) {
  Lifetime life;
  life.bytes = r.count("bytes_total");
  life.passes = r.count("passes_total");
  life.preemptions = r.count("preemptions_total");
  life.pauses = r.count("pauses_total");
  life.failures = r.count("failures_total");
  return life;
}

PassHistoryEntry read_history_entry(const std::string& id, const toml::table& table) {
  const RecordReader r{id, table};
  PassHistoryEntry entry;
  entry.start = r.time("start_usec").value_or(TimePoint{});
  entry.end = r.time("end_usec").value_or(TimePoint{});
  entry.trimming = r.duration("trimming_usec");
  entry.waited = r.duration("waited_usec");
  entry.bytes = r.count("bytes");
  entry.result = *r.outcome("result", RecordReader::Need::Required);
  entry.preemptions = r.count("preemptions");
  return entry;
}

// Absent from a record written before trimd kept the mount (1caa747).
std::optional<MountInstance> read_mount(const RecordReader& r) {
  if (!r.has("taken_over_boot_id")) return std::nullopt;
  return MountInstance{r.string("taken_over_boot_id"), r.count("taken_over_mount_ns"),
                       r.count("taken_over_mount_id"), r.strings("taken_over_options")};
}

FsRecord table_to_record(const std::string& id, const toml::table& table) {
  const RecordReader r{id, table};
  FsRecord record;
  record.mount_point = r.bytes("mount_point");
  record.device = r.bytes("device");
  record.last_start = r.time("last_start_usec");
  record.last_end = r.time("last_end_usec");
  record.last_result = r.outcome("last_result");
  record.last_bytes = r.count("last_bytes");
  if (r.integer("cursor")) record.cursor = r.count("cursor");
  record.pass_start = r.time("pass_start_usec");
  record.pass_bytes = r.count("pass_bytes");
  record.pass_waited = r.duration("pass_waited_usec");
  record.last_trimming = r.duration("last_trimming_usec");
  record.last_waited = r.duration("last_waited_usec");
  record.first_seen = r.time("first_seen_usec");
  record.lifetime = read_lifetime(r);
  for (const auto* entry : r.tables("history")) add_history(record, read_history_entry(id, *entry));
  record.last_seen = r.time("last_seen_usec");
  if (const auto since = r.time("taken_over_usec"))
    record.taken_over = TakeoverRecord{*since, r.takeover_origin("taken_over_by"), read_mount(r)};
  return record;
}

}  // namespace

// One record as it stands in the file, a blank line before it.
std::string format_record(const std::string& id, const FsRecord& record) {
  std::ostringstream out;
  out << '\n'
      << table_header(id_to_key(id)) << '\n'
      << toml::toml_formatter{record_to_table(record), string_flags} << '\n';
  return out.str();
}

// Unknown keys are left alone: a newer trimd may have written them.
StateMap parse_state(std::string_view text, const std::filesystem::path& file) {
  toml::table document;
  try {
    document = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(fmt::format("line {}, column {}: {}", e.source().begin.line,
                                         e.source().begin.column, e.description()));
  }
  StateMap state;
  for (auto&& [key, value] : document) {
    const std::string id = key_to_id(key.str());
    const auto* table = value.as_table();
    if (!table) throw std::runtime_error(fmt::format("\"{}\": expected a table", id));
    state.emplace(id, table_to_record(id, *table));
  }
  return state;
}

}  // namespace trimd
