// A stand-in for trimd on a private bus: the adaptor generated from
// daemon/dbus/org.trimd.trimd1.xml over a scripted state, so trimctl's
// tests do not depend on the real daemon (nor on root or disks).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "client.hpp"

namespace trimctl_test {

// What the fake serves is what trimctl reads back: the client's own structs
// (ctl/client.hpp), generated from the XML like the fake's getters, so every
// property of the XML is one the fake serves (0 or empty unless a test sets it).
using FakePass = trimctl::PassInfo;  // its mount_point is left empty

struct FakeFilesystem : trimctl::FilesystemInfo {
  FakeFilesystem() {
    state = "scheduled";
    takeover = "none";
  }
  std::string id;  // object path: /org/trimd/trimd1/filesystem/<id>
  std::vector<FakePass> history;
  // What the next pass comes to (next_usec is its wall time, next_wait_usec
  // the part of it spent waiting).
  std::string next_result = "success";
  uint64_t next_bytes = 0;
  uint64_t next_usec = 0;
  uint64_t next_wait_usec = 0;
};

// How TrimNow plays a pass (TrimStarted, Progress 0 -> 0.5 -> 1,
// TrimFinished): all of it before the method returns (a client that
// subscribes late misses it), in steps on a thread, or stuck at 0.5;
// Percent: before the method returns too, in steps of 1%.
enum class Pacing { Immediate, Paced, Stalled, Percent };

struct FakeCalls {
  std::vector<std::vector<std::string>> trim_now;
  std::vector<bool> trim_now_ignore_idle;
  std::vector<std::vector<std::string>> pause;
  std::vector<std::vector<std::string>> resume;
  std::vector<std::vector<std::string>> cancel;
  int reloads = 0;
  std::vector<std::pair<std::string, uint64_t>> notify_freed;
  std::vector<std::vector<std::string>> take_over;
  std::vector<std::vector<std::string>> hand_back;
};

class FakeTrimd {
 public:
  // Owns org.trimd.trimd1 on the bus at `address` once this returns.
  FakeTrimd(const std::string& address, std::vector<FakeFilesystem> filesystems, Pacing pacing);
  ~FakeTrimd();  // leaves the bus
  FakeTrimd(const FakeTrimd&) = delete;
  FakeTrimd& operator=(const FakeTrimd&) = delete;

  FakeCalls calls() const;
  // How often a filesystem property was read: a client that counts on it
  // has read the state (and so subscribed before, if it does).
  uint64_t property_reads() const;

  // GetFleet's and GetFleetView's answer from now on (before: NotSupported,
  // no [fleet]); with claims alone, each backend's summary counts them.
  void set_fleet(std::vector<trimctl::FleetClaim> claims);
  void set_fleet(trimctl::FleetView view);
  void fail_reload_with(const std::string& error_name, const std::string& message);
  // Announce as trimd does: PropertiesChanged, InterfacesAdded/Removed.
  void set_progress(const std::string& mount_point, double progress);
  void add_filesystem(const FakeFilesystem& filesystem);
  void remove_filesystem(const std::string& mount_point);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trimctl_test
