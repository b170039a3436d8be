// The man pages say what the programs do: every long option of --help is
// documented, and every exit status the pages promise is the one returned.
// (The policy keys are held to trimd.toml(5) by test_policy_docs.cpp.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "source_text.hpp"
#include "temp_dir.hpp"
#include "trimctl_run.hpp"

using trimctl_test::run_child;
using namespace trimd_docs;

namespace {

std::string man_page(const std::string& name) { return source_file("man/" + name); }

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

// The exit statuses an EXIT STATUS section lists (".TP\n.B 78").
std::set<int> documented_exit_codes(const std::string& man) {
  std::set<int> codes;
  std::istringstream lines(man_section(man, "EXIT STATUS"));
  std::string line, previous;
  while (std::getline(lines, line)) {
    if (previous == ".TP" && line.rfind(".B ", 0) == 0) codes.insert(std::stoi(line.substr(3)));
    previous = line;
  }
  return codes;
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
  EXPECT_NE(man_section(man_page("trimd.toml.5"), "ERRORS").find("exit with status 78"),
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

// A policy file with drop-ins: p.toml and p.toml.d/ in a scratch directory.
class PolicyWithDropIns : public ::testing::Test {
 protected:
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_.path() / name) << text;
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }

  trimd::test::TempDir dir_{"trimd-docs-"};
  const std::string main_ = path("p.toml");
  const std::string drop_ins_ = path("p.toml.d") + "/";
  const bool made_ = std::filesystem::create_directory(drop_ins_);
};

TEST_F(PolicyWithDropIns, CatConfigPrintsEachFileUnderItsNameInTheOrderTheyAreMerged) {
  write("p.toml", "[trim]\nenabled = false\n");
  write("p.toml.d/20-b.toml", "[idle]\nmax_iops = 5\n");
  write("p.toml.d/10-a.toml", "# no newline at the end");
  write("p.toml.d/.hidden.toml", "[trim]\n");
  std::filesystem::create_symlink("/dev/null", drop_ins_ + "30-masked.toml");
  const auto cat = run_child({TRIMD_BINARY, "--cat-config", "--config", main_});
  EXPECT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_EQ(cat.out, "# " + main_ + "\n[trim]\nenabled = false\n\n# " + drop_ins_ +
                         "10-a.toml\n# no newline at the end\n\n# " + drop_ins_ +
                         "20-b.toml\n[idle]\nmax_iops = 5\n");
}

TEST_F(PolicyWithDropIns, CheckConfigNamesEachFileOfAValidPolicy) {
  write("p.toml", "[trim]\nenabled = false\n");
  write("p.toml.d/50-x.toml", "[trim]\nchunk_size = \"8MiB\"\n");
  const auto check = run_child({TRIMD_BINARY, "--check-config", "--config", main_});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.out,
            main_ + ": configuration is valid\n" + drop_ins_ + "50-x.toml: drop-in is valid\n");
}

TEST_F(PolicyWithDropIns, CheckConfigNamesTheDropInOfAnErrorAndExitsWith78) {
  write("p.toml", "[trim]\nenabled = false\n");
  write("p.toml.d/50-x.toml", "[trim]\nchunk_size = \"1 gigabyte\"\n");
  const auto check = run_child({TRIMD_BINARY, "--check-config", "--config", main_});
  EXPECT_EQ(check.exit_code, 78);
  EXPECT_THAT(check.err, testing::HasSubstr(drop_ins_ + "50-x.toml:2:14: trim.chunk_size:"));
}

}  // namespace
