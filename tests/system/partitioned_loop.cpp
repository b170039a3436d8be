#include "partitioned_loop.hpp"
#include "posix_util.hpp"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "loopfs_cleanup.hpp"
#include "wait_until.hpp"

namespace trimd::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// udevd re-reads the partition table of a whole disk closed after writing
// (its "watch" option), and a kernel without table parsers then drops the
// partitions partx added: let those events pass first.
void settle_udev() { run_command({"udevadm", "settle", "--timeout=30"}); }

// An MBR of `count` equal partitions, written through the device so that its
// page cache holds the new table; the kernel is told with the scan below.
void write_partition_table(const std::string& device, std::uint64_t size_mib, std::size_t count) {
  const std::uint64_t each_mib = (size_mib - 1) / count;  // the first MiB: the table, aligned
  std::string script = "label: dos\n";
  for (std::size_t i = 0; i < count; ++i) script += ",+" + std::to_string(each_mib) + "M\n";
  run_or_throw({"sh", "-c", "printf '%s' \"$1\" | sfdisk -q --no-reread --no-tell-kernel \"$0\"",
                device, script});
}

// LO_FLAGS_PARTSCAN set on a bound loop device lets it have partitions and
// makes the kernel read its table (loop_set_status()). A kernel built without
// partition-table parsers (this machine's: no CONFIG_MSDOS_PARTITION) reads
// nothing, so partx adds what it reads itself, through BLKPG; where the kernel
// has found them already, partx -u changes nothing.
void scan_partitions(const std::string& device) {
  settle_udev();
  // Read-only, so that closing it sets off no re-read (root may set the status).
  const int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno("open " + device);
  loop_info64 info{};
  const bool ok = ::ioctl(fd, LOOP_GET_STATUS64, &info) == 0 &&
                  (info.lo_flags |= LO_FLAGS_PARTSCAN, ::ioctl(fd, LOOP_SET_STATUS64, &info) == 0);
  const int error = errno;
  ::close(fd);
  if (!ok) throw std::system_error(error, std::generic_category(), "partition scan of " + device);
  settle_udev();
  run_or_throw({"partx", "-u", device});
}

void wait_for_device_node(const std::string& device) {
  const bool appeared = wait_until(
      [&] {
        struct stat st {};
        return ::stat(device.c_str(), &st) == 0 && S_ISBLK(st.st_mode);
      },
      5s, 20ms);
  if (!appeared) throw std::runtime_error(device + " did not appear after the partition scan");
}

}  // namespace

// ---- PartitionMount ---------------------------------------------------------

PartitionMount::PartitionMount(std::string device)
    : device_(std::move(device)), dir_(cleanup::make_temp_dir()), mount_point_(dir_ + "/mnt") {
  try {
    // No backing file of its own: the slot's unlink of "<dir>/image.img" finds nothing.
    slot_ = cleanup::claim_slot(dir_, mount_point_, dir_ + "/image.img");
  } catch (...) {
    ::rmdir(dir_.c_str());
    throw;
  }
  lock_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd_ >= 0) ::flock(lock_fd_, LOCK_EX);
  ::mkdir(mount_point_.c_str(), 0755);
}

PartitionMount::~PartitionMount() {
  try {
    unmount();
  } catch (const std::exception& e) {
    std::cerr << "partitioned_loop: cleaning up " << dir_ << ": " << e.what() << '\n';
  }
  if (!mounted_) {
    std::error_code ec;
    fs::remove_all(dir_, ec);  // never through a live mount
  }
  cleanup::release_slot(slot_);
  close_fd(lock_fd_);
}

void PartitionMount::mkfs(Fs fs) {
  if (mounted_) throw std::logic_error("mkfs on a mounted partition");
  std::vector<std::string> argv{mkfs_tool(fs), "-q"};
  if (fs == Fs::Ext4)
    argv.insert(argv.end(), {"-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"});
  else
    argv.push_back("-f");
  argv.push_back(device_);
  run_or_throw(argv);
  fs_ = fs;
}

void PartitionMount::mount(const std::string& options) {
  if (mounted_) throw std::logic_error(mount_point_ + " is already mounted");
  std::vector<std::string> argv{"mount"};
  if (fs_) argv.insert(argv.end(), {"-t", fs_name(*fs_)});
  if (!options.empty()) argv.insert(argv.end(), {"-o", options});
  argv.insert(argv.end(), {device_, mount_point_});
  run_or_throw(argv);
  mounted_ = true;
  cleanup::publish_mounted(slot_, true);
}

void PartitionMount::unmount() {
  if (!mounted_) return;
  int rc = ::umount2(mount_point_.c_str(), 0);
  for (int i = 0; i < 50 && rc != 0 && errno == EBUSY; ++i) {  // a trimd may hold it a moment
    std::this_thread::sleep_for(100ms);
    rc = ::umount2(mount_point_.c_str(), 0);
  }
  if (rc != 0 && errno == EBUSY) rc = ::umount2(mount_point_.c_str(), MNT_DETACH);
  if (rc != 0 && errno != EINVAL) throw_errno("umount " + mount_point_);
  mounted_ = false;
  cleanup::publish_mounted(slot_, false);
}

// ---- PartitionedImage -------------------------------------------------------

PartitionedImage PartitionedImage::create(std::uint64_t size_mib, std::size_t partitions) {
  PartitionedImage image(LoopImage::create(size_mib));
  const std::string& device = image.disk_.device();
  write_partition_table(device, size_mib, partitions);
  scan_partitions(device);
  for (std::size_t i = 1; i <= partitions; ++i) {
    const std::string partition = device + "p" + std::to_string(i);
    wait_for_device_node(partition);
    settle_udev();
    image.partitions_.push_back(std::make_unique<PartitionMount>(partition));
  }
  return image;
}

}  // namespace trimd::test
