// trimctl_fake_trimd ADDRESS: the tests' fake trimd (two filesystems,
// passes paced in steps) on the bus at ADDRESS, until SIGINT or SIGTERM.
#include <csignal>
#include <cstdio>

#include "fake_trimd.hpp"
#include "sample_filesystems.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trimctl_fake_trimd ADDRESS\n");
    return 2;
  }
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  // Blocked before the fake starts its threads, so they inherit it.
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  trimctl_test::FakeTrimd fake(argv[1], trimctl_test::sample_filesystems(),
                               trimctl_test::Pacing::Paced);
  int signal = 0;
  sigwait(&mask, &signal);
  return 0;
}
