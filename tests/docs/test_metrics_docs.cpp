// Every metric family trimd writes is named in trimd(8), section Metrics,
// with its type and its labels, and trimd(8) names no other.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "metrics.hpp"
#include "source_text.hpp"

using namespace trimd_docs;

namespace {

// A metric family: its TYPE and the names of its samples' labels.
struct MetricFamily {
  std::string type;
  std::set<std::string> labels;
  bool operator==(const MetricFamily&) const = default;
};
using MetricFamilies = std::map<std::string, MetricFamily>;

std::ostream& operator<<(std::ostream& out, const MetricFamily& family) {
  out << family.type << " {";
  for (const auto& label : family.labels) out << " " << label;
  return out << " }";
}

// The families of a Prometheus text exposition ("# TYPE name type" and the
// label names of its samples).
MetricFamilies families_in_exposition(const std::string& text) {
  MetricFamilies families;
  const std::regex type_line(R"(^# TYPE (\w+) (\w+)$)");
  const std::regex sample(R"(^(\w+)(\{(.*)\})? \S+$)");
  const std::regex label(R"((\w+)="(?:[^"\\]|\\.)*")");
  std::istringstream lines(text);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, match, type_line)) {
      families[match[1]].type = match[2];
    } else if (std::regex_match(line, match, sample)) {
      const std::string labels = match[3];
      auto& family = families[match[1]];
      for (std::sregex_iterator it(labels.begin(), labels.end(), label), end; it != end; ++it)
        family.labels.insert((*it)[1]);
    }
  }
  return families;
}

// What trimd writes for a filesystem that shows every family: waiting for
// a busy disk, trimmed before, due again, coordinated by [fleet].
MetricFamilies families_trimd_writes() {
  trimd::FsStatus fs;
  fs.id = "a";
  fs.mount_point = "/srv";
  fs.fs_type = "ext4";
  fs.state = trimd::FsState::Waiting;
  fs.waiting_for = trimd::WaitingFor::DisksBusy;
  fs.busy_disk = "sda";
  fs.busy_limit = trimd::IdleLimit::Iops;
  fs.last_trim_start = trimd::from_usec(1'700'000'000'000'000);
  fs.last_trim_end = trimd::from_usec(1'700'000'060'000'000);
  fs.last_result = trimd::PassOutcome{trimd::PassResult::Success, ""};
  fs.next_trim = trimd::from_usec(1'800'000'000'000'000);
  fs.fleet_backend = "pool-a";
  return families_in_exposition(
      trimd::render_metrics({fs}, trimd::Lifetime{}, std::chrono::seconds{1}));
}

// The families trimd(8)'s "Metrics" names, one per entry:
//   .BR trimd_passes_total " (counter)"
//   .BR trimd_filesystem_state " (gauge; " "mount_point, fs_type, state" )
MetricFamilies families_in_trimd8() {
  const std::string man = source_file("man/trimd.8");
  const auto start = man.find("\n.SS Metrics\n");
  if (start == std::string::npos) return {};
  const auto end = man.find("\n.S", start + 1);
  std::istringstream lines(man.substr(start, end - start));
  const std::regex entry(R"re(^\.BR (\w+) " \((\w+)(?:\)"|; " "([\w, ]+)" \))$)re");
  MetricFamilies families;
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (!std::regex_match(line, match, entry)) continue;
    auto& family = families[match[1]];
    family.type = match[2];
    std::istringstream labels(match[3]);
    for (std::string label; std::getline(labels >> std::ws, label, ',');)
      family.labels.insert(label);
  }
  return families;
}

TEST(Metrics, EveryFamilyTrimdWritesIsInTrimd8WithItsTypeAndLabels) {
  const auto written = families_trimd_writes();
  ASSERT_GE(written.size(), 23u);
  const auto documented = families_in_trimd8();
  for (const auto& [name, family] : written) {
    const auto it = documented.find(name);
    if (it == documented.end())
      ADD_FAILURE() << name << " (" << family << ") is not in trimd(8), section Metrics";
    else
      EXPECT_EQ(it->second, family) << name << ": trimd writes this, trimd(8) says otherwise";
  }
}

TEST(Metrics, Trimd8NamesNoFamilyThatTrimdDoesNotWrite) {
  const auto written = families_trimd_writes();
  for (const auto& [name, family] : families_in_trimd8())
    EXPECT_TRUE(written.count(name)) << name << " is in trimd(8) but trimd writes no such family";
}

}  // namespace
