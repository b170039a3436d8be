// Pages long output as systemctl does: through $SYSTEMD_PAGER, else
// $PAGER, else less (with $SYSTEMD_LESS or "FRSXMK" as its options: quit
// when it fits one screen, keep colours, do not clear the screen), only
// when stdout is a terminal; none with --no-pager or a pager of "" or
// "cat".
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace trimctl {

// The command to page through, or nothing: no paging. `getenv` as in
// TerminalFacts; an empty command means "the default, less".
std::optional<std::string> pager_command(const std::function<const char*(const char*)>& getenv,
                                         bool stdout_tty, bool pager_wanted);

// While it lives, stdout goes to the pager; its destruction waits until
// the person has quit the pager.
class Pager {
 public:
  explicit Pager(const std::string& command);
  ~Pager();
  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;

 private:
  pid_t pid_ = -1;
};

// A pager for this process when pager_command() says so, else none.
std::unique_ptr<Pager> start_pager(bool stdout_tty, bool pager_wanted);

}  // namespace trimctl
