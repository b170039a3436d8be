// One etcd member (Debian's etcd-server) on free loopback ports with its own
// data dir, for the fleet tests: stopped and removed with the test.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "command.hpp"
#include "require_program.hpp"

namespace trimd::test {

class EtcdMember {
 public:
  EtcdMember();
  ~EtcdMember();
  EtcdMember(const EtcdMember&) = delete;
  EtcdMember& operator=(const EtcdMember&) = delete;
  const std::string& url() const { return url_; }
  pid_t pid() const { return pid_; }

 private:
  std::filesystem::path dir_;
  std::string url_;
  pid_t pid_ = -1;
};

}  // namespace trimd::test

// Skips without etcd (Debian etcd-server); under CI=true a missing etcd fails.
#define TRIMD_REQUIRE_ETCD() TRIMD_REQUIRE_PROGRAM("etcd")
