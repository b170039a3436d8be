// The trimctl tests' fixture: a private dbus-daemon (the common kit's, open
// to anyone) with the fake trimd on it, and the real trimctl binary run
// against it with --address.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "fake_trimd.hpp"
#include "find_program.hpp"
#include "private_bus.hpp"
#include "require_program.hpp"
#include "sample_filesystems.hpp"
#include "trimctl_run.hpp"
#include "wait_until.hpp"

namespace trimctl_test {

using trimd::test::find_program;
using trimd::test::PrivateBus;

class TrimctlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TRIMD_REQUIRE_PROGRAM("dbus-daemon");
    bus_ = std::make_unique<PrivateBus>(PrivateBus::Rules::Open);
    start_fake(Pacing::Immediate);
  }

  void start_fake(Pacing pacing, std::vector<FakeFilesystem> filesystems = sample_filesystems()) {
    fake_.reset();  // the old one leaves the bus first
    fake_ = std::make_unique<FakeTrimd>(bus_->address(), std::move(filesystems), pacing);
  }

  std::vector<std::string> trimctl_argv(const std::vector<std::string>& arguments) const {
    std::vector<std::string> argv{TRIMCTL_BINARY, "--address", bus_->address()};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    return argv;
  }

  CommandResult trimctl(const std::vector<std::string>& arguments,
                        const ChildOptions& options = trimctl_options()) {
    return run_child(trimctl_argv(arguments), options);
  }

  // Evaluates a Python expression over the JSON document (`doc`) or, for
  // JSON lines, the list of documents (`docs`) that `json` (`text`) holds.
  std::string python_json(const std::string& json, const std::string& expression) {
    const auto python = find_program("python3");
    if (!python) {
      ADD_FAILURE() << "python3 is needed to check the JSON output";
      return {};
    }
    const std::string path = (bus_->directory() / "output.json").string();
    std::ofstream(path) << json;
    const std::string script =
        "import json, sys\n"
        "text = open(sys.argv[1]).read()\n"
        "try:\n"
        "    docs = [json.loads(text)]\n"  // one document, perhaps indented
        "except ValueError:\n"
        "    docs = [json.loads(line) for line in text.splitlines() if line.strip()]\n"
        "doc = docs[0] if len(docs) == 1 else None\n"
        "print(" +
        expression + ")\n";
    const auto result = run_child({*python, "-c", script, path});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::string out = result.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  // Waits until a client has read a filesystem property (count > before).
  bool wait_for_reads(uint64_t before, std::chrono::milliseconds timeout) {
    return trimd::test::wait_until([&] { return fake_->property_reads() > before; }, timeout);
  }

  std::unique_ptr<PrivateBus> bus_;
  std::unique_ptr<FakeTrimd> fake_;  // after bus_: leaves before the bus stops
};

// The line of `text` that contains `needle`, or "" when none does.
inline std::string line_with(const std::string& text, const std::string& needle) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.find(needle) != std::string::npos) return line;
    start = end + 1;
  }
  return "";
}

// Whether `text` at `at` has the shape `shape`: in the shape, '9' stands
// for a digit, 'A' for an upper-case and 'a' for a lower-case letter, and
// anything else for itself. (No std::regex: GCC 12 warns inside it under
// the sanitizers, and CI builds those with -Werror.)
inline bool has_shape_at(const std::string& text, std::size_t at, const std::string& shape) {
  if (at + shape.size() > text.size()) return false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[at + i]);
    const bool ok = shape[i] == '9'   ? std::isdigit(c)
                    : shape[i] == 'A' ? std::isupper(c)
                    : shape[i] == 'a' ? std::islower(c)
                                      : c == static_cast<unsigned char>(shape[i]);
    if (!ok) return false;
  }
  return true;
}

inline bool contains_shape(const std::string& text, const std::string& shape) {
  for (std::size_t at = 0; at < text.size(); ++at)
    if (has_shape_at(text, at, shape)) return true;
  return false;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace trimctl_test
