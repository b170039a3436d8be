// The system-test kit: real filesystems on loop devices backed by sparse
// files, so that what a trim reclaims shows up as the backing file's
// allocation dropping. Everything a LoopImage sets up is torn down on every
// way out: scope exit, exceptions, failed ASSERTs, exit() and fatal signals.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ci_rule.hpp"  // TRIMD_SKIP_OR_FAIL_IF
#include "command.hpp"  // run_command

namespace trimd::test {

// ---- prerequisites -------------------------------------------------------

// Why the test cannot run here, or nothing.
std::optional<std::string> missing_root();  // root and /dev/loop-control
std::optional<std::string> missing_tools(const std::vector<std::string>& tools);

// Use in a test body or SetUp(): skip when not root, fail instead under CI=true.
#define REQUIRE_ROOT_OR_FAIL() TRIMD_SKIP_OR_FAIL_IF(::trimd::test::missing_root())
// REQUIRE_TOOLS_OR_FAIL("mkfs.xfs", "fstrim"): the same for programs in PATH.
#define REQUIRE_TOOLS_OR_FAIL(...) \
  TRIMD_SKIP_OR_FAIL_IF(::trimd::test::missing_tools({__VA_ARGS__}))

// ---- loop-device filesystems ---------------------------------------------

enum class Fs { Ext4, Xfs, Btrfs };

const char* fs_name(Fs fs);    // "ext4", "xfs", "btrfs"
const char* mkfs_tool(Fs fs);  // "mkfs.ext4", ...

// Every program the kit itself runs for `fs`, plus fstrim and losetup.
std::vector<std::string> tools_for(Fs fs);

// A mount point or a backing file is still in use on this machine.
bool is_mounted(const std::string& mount_point);
bool is_attached(const std::string& backing_file);  // per `losetup -a`

// What LoopImage::write_fragmented_files() and delete_every_other() do, on
// any mounted filesystem (a partition's, see partitioned_loop.hpp).
void write_fragmented_files(const std::string& mount_point, std::size_t count, std::uint64_t bytes);
std::uint64_t delete_every_other(const std::string& mount_point);
void sync_filesystem(const std::string& mount_point);  // syncfs(2)

class LoopImage {
 public:
  // A sparse file of `size_mib` MiB in a fresh temp dir, attached to a free
  // loop device. xfs needs at least 300 MiB.
  static LoopImage create(std::uint64_t size_mib);

  LoopImage(LoopImage&& other) noexcept;
  LoopImage& operator=(LoopImage&& other) noexcept;
  LoopImage(const LoopImage&) = delete;
  LoopImage& operator=(const LoopImage&) = delete;
  ~LoopImage();  // unmounts, detaches, removes the temp dir; never throws

  // ext4 without lazy init (ext4lazyinit would keep the disk busy), xfs -f, btrfs -f.
  void mkfs(Fs fs, const std::vector<std::string>& extra_args = {});
  void mount(const std::string& options = "");  // attaches first when detached
  void remount(const std::string& options);     // mount -o remount,<options>
  void unmount();
  void attach();
  void detach();  // unmounts first
  // Writes 0 to the loop device's queue/discard_max_bytes: a disk without
  // discard support. The kernel cannot turn it back on, so detach() then
  // removes the device and adds a fresh one of the same number.
  void disable_discard();

  // `count` files of `bytes` each, written one after the other and synced, so
  // that deleting every other one leaves `count / 2` separate free extents.
  // The data is never all-zero, so `cp --sparse=always` keeps it.
  void write_fragmented_files(std::size_t count, std::uint64_t bytes);
  // Deletes the 2nd, 4th, ... file and syncs; returns the bytes deleted.
  std::uint64_t delete_every_other();
  void sync() const;  // syncfs: freed extents become visible to FITRIM

  // An identical twin in its own temp dir, detached, made with
  // `cp --sparse=always`. Make *both* twins this way (docs/design.md): the copy
  // drops all-zero blocks, so an original and its copy differ. Unmount first.
  LoopImage clone_sparse() const;

  std::uint64_t allocated_bytes() const;  // st_blocks * 512 of the backing file
  std::uint64_t size_bytes() const;
  const std::string& backing_file() const { return file_; }
  const std::string& mount_point() const { return mount_point_; }
  const std::string& device() const { return device_; }  // "/dev/loop3"; empty when detached
  std::string loop_name() const;                         // "loop3", as in /proc/diskstats
  std::optional<Fs> fs() const { return fs_; }
  bool attached() const { return loop_fd_ >= 0; }
  bool mounted() const { return mounted_; }
  dev_t mounted_dev() const;       // st_dev of the mounted filesystem's root
  std::string blkid_uuid() const;  // `blkid -s UUID -o value`

 private:
  LoopImage(std::string dir, std::uint64_t size_bytes, std::optional<Fs> fs);
  void create_backing_file();
  void release() noexcept;
  void wait_until_detached(const std::string& device) const;

  std::string dir_;
  std::string file_;
  std::string mount_point_;
  std::string device_;
  std::uint64_t size_bytes_ = 0;
  std::optional<Fs> fs_;
  int lock_fd_ = -1;  // flock on dir_: tells a later run's sweep we are alive
  int loop_fd_ = -1;  // held open: the loop is autoclear, so a crash still frees it
  bool mounted_ = false;
  int slot_ = -1;              // in the table the signal handler cleans up from
  bool renew_device_ = false;  // discard was turned off on device_ for good
};

}  // namespace trimd::test
