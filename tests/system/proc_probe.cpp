#include "proc_probe.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace trimd::test {

namespace {

std::string proc_path(pid_t pid, const char* what) {
  return "/proc/" + std::to_string(pid) + "/" + what;
}

}  // namespace

std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t child; in >> child;) out.push_back(child);
  return out;
}

std::size_t open_fds(pid_t pid) {
  std::error_code ec;
  std::size_t n = 0;
  for (std::filesystem::directory_iterator it(proc_path(pid, "fd"), ec), end; !ec && it != end;
       it.increment(ec))
    ++n;
  return n;
}

std::optional<FitrimCall> fitrim_in_flight(pid_t pid) {
  std::ifstream in(proc_path(pid, "syscall"));
  long number = -1;
  std::string fd, request, arg;
  if (!(in >> number >> fd >> request >> arg) || number != SYS_ioctl) return std::nullopt;
  if (std::stoull(request, nullptr, 16) != FITRIM) return std::nullopt;
  const int mem = ::open(proc_path(pid, "mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (mem < 0) return std::nullopt;
  fstrim_range range{};
  const auto got =
      ::pread(mem, &range, sizeof range, static_cast<off_t>(std::stoull(arg, nullptr, 16)));
  ::close(mem);
  if (got != static_cast<ssize_t>(sizeof range)) return std::nullopt;
  return FitrimCall{range.start, range.len};
}

bool process_exists(pid_t pid) {
  std::ifstream in(proc_path(pid, "stat"));
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

}  // namespace trimd::test
