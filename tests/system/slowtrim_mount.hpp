// A filesystem on the slow-TRIM device (bench/slowtrim, FUSE): an image's
// backing file served by slowtrim, where every discard takes milliseconds
// and stalls other I/O like a non-queued TRIM, then a loop device over that
// and the filesystem mounted. Torn down in the only order that works
// (filesystem, loop, slowtrim) on every way out of scope.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

#include "loopfs.hpp"

namespace trimd::test {

class SlowTrimMount {
 public:
  // `image` must be detached and stay alive longer than this object; its
  // backing file keeps receiving what the filesystem writes and discards.
  SlowTrimMount(const LoopImage& image, Fs fs, int discard_latency_ms = 2);
  ~SlowTrimMount();  // never throws
  SlowTrimMount(const SlowTrimMount&) = delete;
  SlowTrimMount& operator=(const SlowTrimMount&) = delete;

  const std::string& mount_point() const { return mount_point_; }
  std::string loop_name() const { return device_.substr(5); }  // "loop7"
  dev_t mounted_dev() const;
  void unmount();
  // slowtrim's own counters now (bench/README.md, "Counters": discards,
  // discard_ns, bytes_unmapped, ...), the emulated device's word rather than
  // the kernel's or trimd's: a snapshot asked for with SIGUSR1. Throws when
  // none comes within 10 s.
  std::map<std::string, std::uint64_t> counters() const;

 private:
  void start_slowtrim(const std::string& backing, int latency_ms);
  void release() noexcept;

  std::string dir_;
  std::string fuse_dir_;
  std::string mount_point_;
  std::string device_;
  pid_t slowtrim_ = -1;
  bool mounted_ = false;
};

// Why the slow device cannot be used here (no slowtrim binary, no FUSE).
std::optional<std::string> missing_slowtrim();

}  // namespace trimd::test
