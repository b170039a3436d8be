#include "command.hpp"

#include <stdexcept>
#include <system_error>

namespace trimd::test {

namespace {

std::string join(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) line += (line.empty() ? "" : " ") + word;
  return line;
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const ChildOptions& options,
                          std::chrono::milliseconds timeout) {
  std::optional<ChildProcess> child;
  try {
    child.emplace(argv, options);
  } catch (const std::system_error& e) {
    CommandResult result;
    result.exit_code = 127;
    result.err = e.what();
    return result;
  }
  return child->finish(timeout);
}

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  return run_command(argv, ChildOptions{}, timeout);
}

std::string run_or_throw(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CommandResult result = run_command(argv, timeout);
  if (result.ok()) return result.out;
  const std::string how =
      result.timed_out ? "timed out" : "failed (exit " + std::to_string(result.exit_code) + ")";
  throw std::runtime_error(join(argv) + " " + how + ": " + result.err);
}

}  // namespace trimd::test
