// A fake fleet gate and a fleet policy for the manager's unit tests.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "manager_fixture.hpp"

namespace trimd::test {

using namespace std::chrono_literals;

// Records what the manager asks of the fleet; the test answers.
class FakeGate : public FleetGate {
 public:
  std::vector<std::string> asked;
  std::vector<std::string> given_back;
  std::set<std::string> open;  // asked and not given back
  void ask(const std::string& fs_id, const std::string& backend, const std::string&) override {
    asked.push_back(fs_id + "@" + backend);
    open.insert(fs_id);
  }
  void give_back(const std::string& fs_id) override {
    given_back.push_back(fs_id);
    open.erase(fs_id);
  }
};

inline Config fleet_config(OnUnreachable on_unreachable = OnUnreachable::Local) {
  Config config = quick_config();
  FleetConfig fleet;
  fleet.endpoints = {"http://127.0.0.1:2379"};
  fleet.backend = "pool-a";
  fleet.lease_ttl = 15s;
  fleet.on_unreachable = on_unreachable;
  fleet.unreachable_after = 2min;
  config.fleet = fleet;
  config.trim.backend = fleet.backend;
  return config;
}

}  // namespace trimd::test
