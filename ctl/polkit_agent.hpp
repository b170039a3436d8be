// An interactive polkit agent for a person at a terminal, as systemctl
// starts one: without it, polkit has nobody to ask for the password of an
// admin-group user, and trimd can only refuse.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

namespace trimctl {

// Whether a call that changes trimd's work should bring an agent: not for
// root (needs none), not without a terminal on stdin to ask at, not when
// --no-ask-password said no, and only when pkttyagent is installed.
bool polkit_agent_wanted(uid_t euid, bool stdin_tty, bool ask_password,
                         const std::string& agent_path);

// pkttyagent serving this process, started and registered with polkit
// when the constructor returns (or given up on after a few seconds);
// stopped on destruction.
class PolkitAgent {
 public:
  explicit PolkitAgent(const std::string& agent_path);
  ~PolkitAgent();
  PolkitAgent(const PolkitAgent&) = delete;
  PolkitAgent& operator=(const PolkitAgent&) = delete;

 private:
  pid_t pid_ = -1;
};

// The agent for this process when polkit_agent_wanted() says so, else none.
std::unique_ptr<PolkitAgent> start_polkit_agent(bool ask_password);

// pkttyagent in $PATH (then /usr/bin), or "" when there is none.
std::string find_polkit_agent();

}  // namespace trimctl
