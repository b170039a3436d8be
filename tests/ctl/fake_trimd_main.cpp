// trimctl_fake_trimd ADDRESS [--more]: the tests' fake trimd (two
// filesystems, passes paced in steps; --more adds one with a long mount
// point, half trimmed) on the bus at ADDRESS, until SIGINT or SIGTERM.
#include <csignal>
#include <cstdio>
#include <string>

#include "fake_trimd.hpp"
#include "sample_filesystems.hpp"

int main(int argc, char** argv) {
  const bool more = argc == 3 && std::string(argv[2]) == "--more";
  if (argc != 2 && !more) {
    std::fprintf(stderr, "usage: trimctl_fake_trimd ADDRESS [--more]\n");
    return 2;
  }
  auto filesystems = trimctl_test::sample_filesystems();
  if (more) {
    auto archive = trimctl_test::fast_filesystem(trimctl_test::realtime_usec());
    archive.id = "archive";
    archive.mount_point = "/srv/backups/nightly-snapshots/archive-2026";
    archive.device = "/dev/mapper/vg0-archive";
    archive.state = "trimming";
    archive.progress = 0.42;
    filesystems.push_back(archive);
  }
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  // Blocked before the fake starts its threads, so they inherit it.
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  trimctl_test::FakeTrimd fake(argv[1], filesystems, trimctl_test::Pacing::Paced);
  int signal = 0;
  sigwait(&mask, &signal);
  return 0;
}
