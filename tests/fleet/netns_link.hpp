// A test host behind a cable that a test can cut: a network namespace of
// its own (ip netns) joined to this one by a veth pair with a /30 between
// them (10.231.N.1 here, 10.231.N.2 there; N from the test's pid, so
// parallel runs do not meet). Only addresses the test itself made are ever
// used. Removed with everything in it on every exit path.
#pragma once

#include <string>
#include <vector>

namespace trimd::test {

class NetnsLink {
 public:
  NetnsLink();  // throws std::runtime_error naming the ip command that failed
  ~NetnsLink();
  NetnsLink(const NetnsLink&) = delete;
  NetnsLink& operator=(const NetnsLink&) = delete;

  const std::string& here() const { return here_; }    // this side's address
  const std::string& there() const { return there_; }  // the namespace's address
  // Runs a command inside the namespace (its network only: the mounts and
  // the processes are this one's): prepend to its argv.
  std::vector<std::string> enter() const;

  void cut();   // this side's end down: what the namespace sends is lost
  void mend();  // and up again

 private:
  std::string netns_, veth_here_, veth_there_, here_, there_;
};

}  // namespace trimd::test
