// Carries out the takeover decisions (lib/policy/takeover.hpp): remounts through
// the Remounter, records the outcome in the manager. Single-threaded, on the
// daemon's loop, like the manager.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "discovery.hpp"
#include "manager.hpp"
#include "remounter.hpp"
#include "takeover.hpp"

namespace trimd {

class TakeoverController {
 public:
  TakeoverController(Manager& manager, Remounter& remounter);

  // After every rescan (the manager has seen `found` already). True when a
  // filesystem was remounted: rescan to see its new options.
  bool reconcile(const std::vector<DiscoveredFs>& found, const std::vector<FstabEntry>& fstab,
                 TimePoint now);
  // What reconcile would decide, without doing anything (--dry-run); by id.
  std::map<std::string, TakeoverDecision> preview(const std::vector<DiscoveredFs>& found,
                                                  const std::vector<FstabEntry>& fstab,
                                                  TimePoint now);
  // TakeOver and HandBack on the bus, by filesystem id. Each named
  // filesystem is checked before any is remounted; throws ManagerError.
  void take_over(const std::vector<std::string>& ids, TimePoint now);
  void hand_back(const std::vector<std::string>& ids, TimePoint now);
  // A clean stop: every filesystem trimd took over gets `discard` back,
  // unless the policy says hand_back_on_stop = false or trimd is restarting.
  void stop(TimePoint now, bool restarting = false);
  // Whether any mounted filesystem is without `discard` because of trimd.
  bool owes_discard() const;
  // A reloaded policy: what was handed back on request or failed may be
  // taken over again.
  void policy_changed();

 private:
  TakeoverFacts facts_for(const DiscoveredFs& fs, TimePoint now) const;
  TrimPolicy policy_for(const DiscoveredFs& fs) const;
  const DiscoveredFs& mounted(const std::string& id) const;
  // True when it remounted.
  bool carry_out(const DiscoveredFs& fs, const TakeoverDecision& decision, TakeoverOrigin origin,
                 TimePoint now);
  bool remount(const DiscoveredFs& fs, bool discard, TakeoverView& view);
  void forget(const DiscoveredFs& fs, const TakeoverView& view, TimePoint now);

  Manager& manager_;
  Remounter& remounter_;
  std::map<std::string, DiscoveredFs> mounted_;  // by id, as of the last reconcile
  std::vector<FstabEntry> fstab_;
  std::map<std::string, std::string> released_;  // handed back on request or let go: why
  std::map<std::string, TakeoverView> failed_;   // remount failed: not retried until a reload
};

}  // namespace trimd
