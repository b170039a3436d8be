// Every key of trimd.toml, one line each: its table, name, type, default, a
// line of doc, where it may be set, and how its value is read and applied.
// Adding a key is a line here, its field, its entry in trimd.toml(5) and its
// line in config/trimd.toml (HACKING.md, "Add a policy key").
#include "config_keys.hpp"

#include <algorithm>
#include <array>

#include "config_reader.hpp"
#include "duty.hpp"

namespace trimd {
namespace {

using namespace config_detail;
using KeyScope::AlsoPerFilesystem;
using KeyScope::Global;

// "auto" (trimd picks per disk: docs/preemption.md) or a duration.
std::optional<Duration> preempt_latency(const Value& v) {
  const auto* text = v.node().as_string();
  if (text && text->get() == "auto") return std::nullopt;
  if (text) {
    try {
      parse_duration(text->get());
    } catch (const std::invalid_argument&) {
      v.fail(fmt::format("\"{}\" is neither \"auto\" nor a duration such as \"4ms\"", text->get()));
    }
  }
  return v.duration(kPreemptLatencyRange);
}

double fraction(const Value& v) {
  const double number = v.number();
  if (number > 1) v.fail("must be a fraction between 0 and 1 (e.g. 0.05)");
  return number;
}

// "2%", "0.5%", or "0" for no budget (lib/policy/duty.hpp).
double duty(const Value& v) {
  const std::string text = v.string();
  double share = 0;
  try {
    share = parse_share(text);
  } catch (const std::invalid_argument& e) {
    v.fail(e.what());
  }
  if (share > 0 && share < kMinDuty)
    v.fail(fmt::format("\"{}\" is less than {}, the smallest budget accepted (\"0\" is none)", text,
                       format_share(kMinDuty)));
  return share;
}

InlineDiscardPolicy inline_discard(const Value& v) {
  const auto text = v.string();
  for (const auto policy :
       {InlineDiscardPolicy::Warn, InlineDiscardPolicy::Takeover, InlineDiscardPolicy::Ignore})
    if (text == to_string(policy)) return policy;
  v.fail(fmt::format("\"{}\" is not a choice (use warn, takeover or ignore)", text));
}

OnBatteryPolicy on_battery(const Value& v) {
  const auto text = v.string();
  for (const auto policy : {OnBatteryPolicy::Wait, OnBatteryPolicy::Gentle, OnBatteryPolicy::Trim})
    if (text == to_string(policy)) return policy;
  v.fail(fmt::format("\"{}\" is not a choice (use wait, gentle or trim)", text));
}

TrimPolicy::Scope scope(const Value& v) {
  const std::string text = v.string();
  if (text == "mounted") return TrimPolicy::Scope::Mounted;
  if (text == "fstab") return TrimPolicy::Scope::Fstab;
  v.fail(fmt::format("\"{}\" is not a scope (use \"mounted\" or \"fstab\")", text));
}

std::string log_level(const Value& v) {
  constexpr std::array<std::string_view, 5> levels{"trace", "debug", "info", "warn", "error"};
  std::string level = v.string();
  if (std::find(levels.begin(), levels.end(), level) == levels.end())
    v.fail(fmt::format("\"{}\" is not a level (use trace, debug, info, warn or error)", level));
  return level;
}

// node_exporter's textfile collector reads only *.prom files.
std::string prometheus_file(const Value& v) {
  std::string path = v.string();
  if (!path.empty() && (path.front() != '/' || !path.ends_with(".prom")))
    v.fail(
        fmt::format("\"{}\" is not an absolute path ending in .prom (node_exporter's textfile "
                    "collector reads only *.prom files)",
                    path));
  return path;
}

std::string match_value(const Value& v) {
  auto text = v.string();
  if (text.empty()) v.fail("must not be empty");
  return text;
}

using V = const Value&;
using T = Target&;

constexpr ConfigKey kKeys[] = {
    // [idle]
    {"idle", "sample_interval", "duration", "\"1s\"", "How often /proc/diskstats is read.", Global,
     [](V v, T t) { t.config.sample_interval = v.duration(kSampleRange); }},
    {"idle", "window", "duration", "\"40s\"",
     "A disk is idle once it has stayed below all three limits below for this long.", Global,
     [](V v, T t) { t.config.idle.idle_window = v.duration(kIdleWindowRange); }},
    {"idle", "max_iops", "number", "20", "Reads plus writes completed per second", Global,
     [](V v, T t) { t.config.idle.max_iops = v.number(); }},
    {"idle", "max_throughput", "size per second", "\"1MiB\"", "Bytes read plus written per second.",
     Global, [](V v, T t) { t.config.idle.max_bytes_per_sec = static_cast<double>(v.size()); }},
    {"idle", "max_busy", "number from 0 to 1", "0.05",
     "Fraction of the time the disk spent on reads and writes", Global,
     [](V v, T t) { t.config.idle.max_busy_fraction = fraction(v); }},
    {"idle", "preempt_interval", "duration", "\"20ms\"",
     "While a FITRIM call is in the kernel, its disks are sampled this often", Global,
     [](V v, T t) { t.config.preempt_interval = v.duration(kPreemptRange); }},
    {"idle", "preempt_latency", "duration or \"auto\"", "\"auto\"",
     "How long foreground I/O may wait on average (over one sample) before a call gives way",
     Global, [](V v, T t) { t.config.preempt_latency = preempt_latency(v); }},

    // [trim]
    {"trim", "enabled", "boolean", "true", "Trim at all.", AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&TrimPolicy::enabled, v.boolean())); }},
    {"trim", "interval", "duration", "\"1w\"",
     "How long after the end of one pass the next one is due.", AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&SchedulePolicy::interval, v.duration(kIntervalRange))); }},
    {"trim", "randomized_delay", "duration", "\"1h\"",
     "Each filesystem's pass is moved by a stable random part of this", AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&SchedulePolicy::randomized_delay, v.duration(kPolicyRange))); }},
    {"trim", "first_delay", "duration", "\"2min\"",
     "A filesystem trimd has never trimmed is due this long after trimd first saw it", Global,
     [](V v, T t) { t.policy(set(&SchedulePolicy::first_delay, v.duration(kPolicyRange))); }},
    {"trim", "forget_after", "duration", "\"90d\"",
     "The state file forgets a filesystem that has not been mounted for this long", Global,
     [](V v, T t) { t.policy(set(&TrimPolicy::forget_after, v.duration(kForgetRange))); }},
    {"trim", "window", "time window", "\"\"", "When passes may run", AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&SchedulePolicy::window, v.window())); }},
    {"trim", "chunk_size", "size", "\"1GiB\"", "Largest range handed to one FITRIM call.",
     AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&TrimPolicy::chunk_bytes, v.positive_size())); }},
    {"trim", "chunk_time", "duration", "\"2s\"", "How long one FITRIM call should take.",
     AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&TrimPolicy::chunk_time, v.duration(kChunkRange))); }},
    {"trim", "min_extent", "size", "\"0\"",
     "Free extents smaller than this are not trimmed (FITRIM minlen)", AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&TrimPolicy::min_extent_bytes, v.size())); }},
    {"trim", "pause", "duration", "\"20ms\"", "Pause between two chunks.", AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&TrimPolicy::chunk_pause, v.duration(kChunkRange))); }},
    {"trim", "rate_limit", "size per second", "\"0\"", "Upper bound on range trimmed per second",
     AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&TrimPolicy::rate_limit_bytes_per_sec, v.size())); }},
    {"trim", "duty", "percentage", "\"0\"",
     "The share of wall time the passes may keep the disks busy with discards", AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&TrimPolicy::duty, duty(v))); }},
    {"trim", "overdue_grace", "duration", "\"1d\"",
     "A filesystem whose disks never go idle is trimmed anyway, gently", AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&SchedulePolicy::overdue_grace, v.duration(kPolicyRange))); }},
    {"trim", "gentle_chunk_size", "size", "\"64MiB\"", "Chunk size of such a gentle pass.", Global,
     [](V v, T t) { t.policy(set(&TrimPolicy::gentle_chunk_bytes, v.positive_size())); }},
    {"trim", "gentle_pause", "duration", "\"5s\"", "Pause between chunks of a gentle pass.", Global,
     [](V v, T t) { t.policy(set(&TrimPolicy::gentle_pause, v.duration(kChunkRange))); }},
    {"trim", "skip_rotational", "boolean", "false",
     "Leave filesystems on disks that report themselves rotational alone.", AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&TrimPolicy::skip_rotational, v.boolean())); }},
    {"trim", "inline_discard", "string", "\"warn\"",
     "What trimd does about a filesystem mounted with synchronous online discard",
     AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&TrimPolicy::inline_discard, inline_discard(v))); }},
    {"trim", "on_battery", "string", "\"wait\"",
     "What a pass does while the machine runs on battery", AlsoPerFilesystem,
     [](V v, T t) { t.policy(set(&TrimPolicy::on_battery, on_battery(v))); }},
    {"trim", "hand_back_on_stop", "boolean", "true",
     "On a clean stop, give \"discard\" back to the filesystems trimd took over", Global,
     [](V v, T t) { t.policy(set(&TrimPolicy::hand_back_on_stop, v.boolean())); }},
    {"trim", "scope", "string", "\"mounted\"", "Which filesystems to trim", Global,
     [](V v, T t) { t.policy(set(&TrimPolicy::scope, scope(v))); }},

    // [log], [metrics]
    {"log", "level", "string", "\"info\"", "trace, debug, info, warn or error.", Global,
     [](V v, T t) { t.config.log_level = log_level(v); }},
    {"metrics", "textfile", "string", "\"\"",
     "A Prometheus text file for node_exporter's textfile collector", Global,
     [](V v, T t) { t.config.metrics_textfile = prometheus_file(v); }},

    // [fleet]
    {"fleet", "etcd", "array of strings", "", "The etcd cluster's client URLs", Global,
     [](V v, T t) { t.fleet().endpoints = read_endpoints(v); }},
    {"fleet", "ca", "string", "", "The CA that signed the etcd members' certificates", Global,
     [](V v, T t) { t.fleet().ca_file = read_absolute_file(v); }},
    {"fleet", "cert", "string", "", "A client certificate for etcd", Global,
     [](V v, T t) { t.fleet().cert_file = read_absolute_file(v); }},
    {"fleet", "key", "string", "", "The key of that client certificate", Global,
     [](V v, T t) { t.fleet().key_file = read_absolute_file(v); }},
    {"fleet", "user", "string", "", "The etcd user trimd logs in as", Global,
     [](V v, T t) { t.fleet().user = v.string(); }},
    {"fleet", "password_file", "string", "", "The file that holds that user's password", Global,
     [](V v, T t) { t.fleet().password_file = read_absolute_file(v); }},
    {"fleet", "max_concurrent", "integer", "1", "Passes at a time per backend, fleet-wide", Global,
     [](V v, T t) { t.fleet().max_concurrent = read_max_concurrent(v); }},
    {"fleet", "duty", "percentage", "\"0\"",
     "The share of a backend's time the whole fleet's discards may take", Global,
     [](V v, T t) { t.fleet().duty = duty(v); }},
    {"fleet", "lease_ttl", "duration", "\"15s\"",
     "How long a host's slots outlive it when it stops renewing them", Global,
     [](V v, T t) { t.fleet().lease_ttl = v.duration(kLeaseRange); }},
    {"fleet", "on_unreachable", "string", "\"local\"", "What a pass does while etcd is unreachable",
     Global, [](V v, T t) { t.fleet().on_unreachable = read_on_unreachable(v); }},
    {"fleet", "unreachable_after", "duration", "\"2min\"",
     "How long etcd must stay unreachable before \"local\" trims without a slot", Global,
     [](V v, T t) { t.fleet().unreachable_after = v.duration(kUnreachableRange); }},
    {"fleet", "host", "string", "", "The name this host goes by in its claims", Global,
     [](V v, T t) { t.fleet().host = read_host(v); }},
    {"fleet", "backend", "string", "", "The backend of every filesystem", Global,
     [](V v, T t) { t.fleet().backend = read_backend(v); }},

    // [[filesystem]]: what a rule matches, and what only a rule sets.
    {"filesystem", "match", "string", "", "A mount point glob as in fnmatch(3)", Global,
     [](V v, T t) { t.rule->mount_point_glob = match_value(v); }},
    {"filesystem", "uuid", "string", "", "A filesystem UUID (upper or lower case)", Global,
     [](V v, T t) { t.rule->uuid = match_value(v); }},
    {"filesystem", "fs_type", "string", "", "A filesystem type as in /proc/self/mountinfo", Global,
     [](V v, T t) { t.rule->fs_type = match_value(v); }},
    {"filesystem", "backend", "string", "", "The backend of the filesystems the rule matches",
     Global, [](V v, T t) { t.policy(set(&TrimPolicy::backend, read_backend(v))); }},
};

}  // namespace

std::span<const ConfigKey> config_keys() { return kKeys; }

}  // namespace trimd
