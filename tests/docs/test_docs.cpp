// The man pages say what the programs do: every long option of --help is
// documented, every key of the shipped trimd.toml with its compiled-in
// default (the unit tests hold the file to the defaults), every exit
// status the pages promise is the one returned, and every metric family
// the metrics file holds is named in trimd(8) with its type and labels.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "metrics.hpp"

using trimctl_test::run_child;

namespace {

const std::string kSource = TRIMD_SOURCE_DIR;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string man_page(const std::string& name) { return read_file(kSource + "/man/" + name); }

// How a word is written in roff source: every '-' escaped.
std::string roff(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

// "--config", "--no-bus"... as --help lists them.
std::set<std::string> long_options(const std::string& help) {
  std::set<std::string> options;
  for (auto at = help.find("--"); at != std::string::npos; at = help.find("--", at + 2)) {
    std::size_t end = at + 2;
    while (end < help.size() &&
           (std::islower(static_cast<unsigned char>(help[end])) || help[end] == '-'))
      ++end;
    std::string option = help.substr(at, end - at);
    while (!option.empty() && option.back() == '-') option.pop_back();
    if (option.size() > 2) options.insert(option);
  }
  return options;
}

// The text of one section (".SH NAME" up to the next .SH).
std::string section(const std::string& man, const std::string& heading) {
  const auto start = man.find("\n.SH " + heading + "\n");
  if (start == std::string::npos) return "";
  const auto end = man.find("\n.SH ", start + 1);
  return man.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The exit statuses an EXIT STATUS section lists (".TP\n.B 78").
std::set<int> documented_exit_codes(const std::string& man) {
  std::set<int> codes;
  std::istringstream lines(section(man, "EXIT STATUS"));
  std::string line, previous;
  while (std::getline(lines, line)) {
    if (previous == ".TP" && line.rfind(".B ", 0) == 0) codes.insert(std::stoi(line.substr(3)));
    previous = line;
  }
  return codes;
}

struct Default {
  std::string table;
  std::string key;
  std::string value;  // as written in TOML
};

// The keys config/trimd.toml sets, by table (comments and rules skipped).
std::vector<Default> shipped_defaults() {
  std::vector<Default> defaults;
  std::istringstream lines(read_file(kSource + "/config/trimd.toml"));
  std::string line, table;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      table = line;
      continue;
    }
    const auto equals = line.find(" = ");
    if (equals != std::string::npos)
      defaults.push_back({table, line.substr(0, equals), line.substr(equals + 3)});
  }
  return defaults;
}

// `"1s"` -> `\(dq1s\(dq`; numbers and booleans as they are.
std::string roff_value(const std::string& toml) {
  if (toml.size() >= 2 && toml.front() == '"')
    return "\\(dq" + roff(toml.substr(1, toml.size() - 2)) + "\\(dq";
  return toml;
}

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
  const std::string man = man_page("trimd.8");
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

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char pattern[] = "/tmp/trimd-docs.XXXXXX";
    const int fd = mkstemp(pattern);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    close(fd);
    path_ = pattern;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void expect_every_option_documented(const std::string& binary, const std::string& page) {
  const auto help = run_child({binary, "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  const auto options = long_options(help.out);
  EXPECT_GE(options.size(), 5u) << help.out;
  const std::string man = man_page(page);
  for (const auto& option : options)
    EXPECT_NE(man.find(roff(option)), std::string::npos) << option << " is not in man/" << page;
}

TEST(ManPages, EveryLongOptionOfTrimdHelpIsInTrimd8) {
  expect_every_option_documented(TRIMD_BINARY, "trimd.8");
}

TEST(ManPages, EveryLongOptionOfTrimctlHelpIsInTrimctl1) {
  expect_every_option_documented(TRIMCTL_BINARY, "trimctl.1");
}

TEST(ManPages, EveryShippedConfigKeyIsInTrimdToml5WithItsDefault) {
  const auto defaults = shipped_defaults();
  ASSERT_GE(defaults.size(), 15u);
  const std::string man = man_page("trimd.toml.5");
  for (const auto& [table, key, value] : defaults) {
    const std::string text = section(man, table);
    ASSERT_NE(text, "") << "no section " << table << " in trimd.toml(5)";
    const std::string entry = "\n.BR " + roff(key) + " \" (";
    const auto at = text.find(entry);
    ASSERT_NE(at, std::string::npos) << table << " " << key << " is not in trimd.toml(5)";
    const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find("default \" " + roff_value(value)), std::string::npos)
        << table << " " << key << " = " << value << ", but trimd.toml(5) says: " << line;
  }
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

TEST(ExitStatus, TrimdReturnsWhatTrimd8Documents) {
  EXPECT_EQ(documented_exit_codes(man_page("trimd.8")), (std::set<int>{0, 1, 2, 78}));
  EXPECT_EQ(run_child({TRIMD_BINARY, "--no-such-option"}).exit_code, 2);

  const TempFile broken("[trim]\nchunk_size = \"1 gigabyte\"\n");
  EXPECT_EQ(run_child({TRIMD_BINARY, "--check-config", "--config", broken.path()}).exit_code, 78);
  const TempFile valid("[trim]\nenabled = false\n");
  EXPECT_EQ(run_child({TRIMD_BINARY, "--check-config", "--config", valid.path()}).exit_code, 0);

  // Nothing is trimmed: the one mount point named does not exist.
  const auto state =
      std::filesystem::temp_directory_path() / ("trimd-docs-state." + std::to_string(getpid()));
  const auto once = run_child({TRIMD_BINARY, "--once", "--no-bus", "--config", valid.path(),
                               "--state-dir", state.string(), "/nonexistent/trimd-docs"});
  std::filesystem::remove_all(state);
  EXPECT_EQ(once.exit_code, 1) << once.err;
}

TEST(ExitStatus, TrimdToml5GivesTheStatusOfABrokenPolicy) {
  EXPECT_NE(section(man_page("trimd.toml.5"), "ERRORS").find("exit with status 78"),
            std::string::npos);
}

TEST(ExitStatus, TrimctlReturnsWhatTrimctl1Documents) {
  EXPECT_EQ(documented_exit_codes(man_page("trimctl.1")), (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(run_child({TRIMCTL_BINARY, "frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_child({TRIMCTL_BINARY, "--no-such-option"}).exit_code, 2);
  const auto nowhere =
      run_child({TRIMCTL_BINARY, "--address", "unix:path=/nonexistent/trimd-docs", "status"});
  EXPECT_EQ(nowhere.exit_code, 3) << nowhere.err;
}

TEST(CheckConfig, SaysThatNoFileExistsAndTheBuiltInDefaultsAreValid) {
  // No --config: the default path, which a test machine need not have.
  const auto help = run_child({TRIMD_BINARY, "--help"}).out;
  const auto at = help.find("(default ");
  ASSERT_NE(at, std::string::npos) << help;
  const std::string path = help.substr(at + 9, help.find(')', at) - at - 9);
  if (std::filesystem::exists(path)) GTEST_SKIP() << path << " exists here";
  const auto result = run_child({TRIMD_BINARY, "--check-config"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out,
            path + " does not exist: trimd uses the built-in defaults, which are valid\n");
}

TEST(ConfigPath, TrimctlNamesTheFileTrimdReads) {
  const auto trimd_help = run_child({TRIMD_BINARY, "--help"}).out;
  const auto at = trimd_help.find("(default ");
  ASSERT_NE(at, std::string::npos);
  const std::string path = trimd_help.substr(at + 9, trimd_help.find(')', at) - at - 9);
  EXPECT_NE(run_child({TRIMCTL_BINARY, "--help"}).out.find("(" + path + ")"), std::string::npos)
      << path;
}

}  // namespace
