#include "netns_link.hpp"

#include <unistd.h>

#include <stdexcept>

#include "command.hpp"

namespace trimd::test {

namespace {

void ip(const std::vector<std::string>& words) {
  std::vector<std::string> argv{"ip"};
  argv.insert(argv.end(), words.begin(), words.end());
  const auto result = run_command(argv, std::chrono::seconds{10});
  if (!result.ok()) {
    std::string text;
    for (const auto& word : argv) text += word + " ";
    throw std::runtime_error(text + "failed: " + result.err);
  }
}

}  // namespace

NetnsLink::NetnsLink() {
  const auto n = std::to_string(static_cast<unsigned>(::getpid()) % 250 + 1);
  const auto id = std::to_string(::getpid());
  netns_ = "trimd-test-" + id;
  veth_here_ = "tt" + id + "a";
  veth_there_ = "tt" + id + "b";
  here_ = "10.231." + n + ".1";
  there_ = "10.231." + n + ".2";
  ip({"netns", "add", netns_});
  try {
    ip({"link", "add", veth_here_, "type", "veth", "peer", "name", veth_there_});
    ip({"link", "set", veth_there_, "netns", netns_});
    ip({"addr", "add", here_ + "/30", "dev", veth_here_});
    ip({"link", "set", veth_here_, "up"});
    ip({"-n", netns_, "addr", "add", there_ + "/30", "dev", veth_there_});
    ip({"-n", netns_, "link", "set", veth_there_, "up"});
    ip({"-n", netns_, "link", "set", "lo", "up"});
  } catch (...) {
    run_command({"ip", "link", "del", veth_here_}, std::chrono::seconds{10});
    run_command({"ip", "netns", "del", netns_}, std::chrono::seconds{10});
    throw;
  }
}

// Deleting the namespace deletes its end of the pair, and with it ours.
NetnsLink::~NetnsLink() {
  run_command({"ip", "link", "del", veth_here_}, std::chrono::seconds{10});
  run_command({"ip", "netns", "del", netns_}, std::chrono::seconds{10});
}

std::vector<std::string> NetnsLink::enter() const {
  return {"nsenter", "--net=/run/netns/" + netns_, "--"};
}

void NetnsLink::cut() { ip({"link", "set", veth_here_, "down"}); }

void NetnsLink::mend() { ip({"link", "set", veth_here_, "up"}); }

}  // namespace trimd::test
