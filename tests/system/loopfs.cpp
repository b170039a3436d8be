// LoopImage: sparse file -> loop device -> filesystem -> mount, and back.
#include "loopfs.hpp"
#include "posix_util.hpp"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "loopfs_cleanup.hpp"
#include "wait_until.hpp"

namespace trimd::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// A loop device whose limits were changed for good goes, and a fresh one
// with its number comes: the next user gets defaults. Right after a detach
// udev may still hold it open (EBUSY).
void renew_loop_device(int number) {
  const int control = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) throw_errno("open /dev/loop-control");
  const bool removed = wait_until(
      [&] { return ::ioctl(control, LOOP_CTL_REMOVE, number) >= 0 || errno != EBUSY; }, 5s, 20ms);
  if (removed) ::ioctl(control, LOOP_CTL_ADD, number);  // EEXIST: someone took the number
  ::close(control);
  if (!removed) throw std::runtime_error("loop" + std::to_string(number) + " stays busy");
}

}  // namespace

const char* fs_name(Fs fs) {
  switch (fs) {
    case Fs::Ext4: return "ext4";
    case Fs::Xfs: return "xfs";
    case Fs::Btrfs: return "btrfs";
  }
  return "unknown";
}

const char* mkfs_tool(Fs fs) {
  switch (fs) {
    case Fs::Ext4: return "mkfs.ext4";
    case Fs::Xfs: return "mkfs.xfs";
    case Fs::Btrfs: return "mkfs.btrfs";
  }
  return "mkfs";
}

std::vector<std::string> tools_for(Fs fs) {
  return {mkfs_tool(fs), "mount", "cp", "blkid", "losetup", "fstrim"};
}

// ---- LoopImage ------------------------------------------------------------

LoopImage::LoopImage(std::string dir, std::uint64_t size_bytes, std::optional<Fs> fs)
    : dir_(std::move(dir)), file_(dir_ + "/image.img"), mount_point_(dir_ + "/mnt"),
      size_bytes_(size_bytes), fs_(fs) {
  try {
    slot_ = cleanup::claim_slot(dir_, mount_point_, file_);
  } catch (...) {
    ::rmdir(dir_.c_str());
    throw;
  }
  lock_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd_ >= 0) ::flock(lock_fd_, LOCK_EX);  // before image.img exists: see the sweep
  ::mkdir(mount_point_.c_str(), 0755);
}

LoopImage LoopImage::create(std::uint64_t size_mib) {
  cleanup::prepare_process_once();
  LoopImage image(cleanup::make_temp_dir(), size_mib << 20, std::nullopt);
  image.create_backing_file();
  image.attach();
  return image;
}

void LoopImage::create_backing_file() {
  const int fd = ::open(file_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw_errno("create " + file_);
  const int rc = ::ftruncate(fd, static_cast<off_t>(size_bytes_));
  ::close(fd);
  if (rc != 0) throw_errno("ftruncate " + file_);
}

LoopImage::LoopImage(LoopImage&& other) noexcept { *this = std::move(other); }

LoopImage& LoopImage::operator=(LoopImage&& other) noexcept {
  if (this == &other) return *this;
  release();
  dir_ = std::exchange(other.dir_, {});
  file_ = std::exchange(other.file_, {});
  mount_point_ = std::exchange(other.mount_point_, {});
  device_ = std::exchange(other.device_, {});
  size_bytes_ = other.size_bytes_;
  fs_ = other.fs_;
  lock_fd_ = std::exchange(other.lock_fd_, -1);
  loop_fd_ = std::exchange(other.loop_fd_, -1);
  mounted_ = std::exchange(other.mounted_, false);
  slot_ = std::exchange(other.slot_, -1);
  renew_device_ = std::exchange(other.renew_device_, false);
  return *this;
}

LoopImage::~LoopImage() { release(); }

void LoopImage::release() noexcept {
  if (dir_.empty()) return;
  try {
    detach();
  } catch (const std::exception& e) {
    std::cerr << "loopfs: cleaning up " << dir_ << ": " << e.what() << '\n';
  }
  std::error_code ec;
  if (!mounted_) fs::remove_all(dir_, ec);  // never remove through a live mount
  cleanup::release_slot(slot_);
  close_fd(lock_fd_);
  slot_ = -1;
  dir_.clear();
}

void LoopImage::attach() {
  if (attached()) return;
  int control = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  int backing = ::open(file_.c_str(), O_RDWR | O_CLOEXEC);
  if (control < 0 || backing < 0) {
    const int error = errno;
    close_fd(control);
    close_fd(backing);
    throw std::system_error(error, std::generic_category(), "attach " + file_);
  }
  // Another process may take the free device between the two calls: retry.
  int last_error = 0;
  for (int attempt = 0; attempt < 32 && !attached(); ++attempt) {
    const int number = ::ioctl(control, LOOP_CTL_GET_FREE);
    const std::string device = "/dev/loop" + std::to_string(number);
    int fd = number < 0 ? -1 : ::open(device.c_str(), O_RDWR | O_CLOEXEC);
    loop_config config{};
    config.fd = static_cast<__u32>(backing);
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), file_.c_str(),
                 LO_NAME_SIZE - 1);
    if (fd >= 0 && ::ioctl(fd, LOOP_CONFIGURE, &config) == 0) {
      device_ = device;
      loop_fd_ = fd;
    } else {
      last_error = errno;
      close_fd(fd);
    }
  }
  close_fd(control);
  close_fd(backing);  // the loop holds its own reference to the file
  if (!attached())
    throw std::system_error(last_error, std::generic_category(), "no loop device for " + file_);
  cleanup::publish_loop_fd(slot_, loop_fd_);
}

void LoopImage::wait_until_detached(const std::string& device) const {
  const std::string sysfs = "/sys/block/" + device.substr(5) + "/loop/backing_file";
  // udev may hold the device open for a moment.
  wait_until([&] { return read_first_line(sysfs).find(file_) != 0; }, 5s, 20ms);
}

void LoopImage::detach() {
  unmount();
  if (!attached()) return;
  cleanup::publish_loop_fd(slot_, -1);
  ::ioctl(loop_fd_, LOOP_CLR_FD, 0);
  close_fd(loop_fd_);  // autoclear: the last close detaches
  const std::string device = std::exchange(device_, {});
  wait_until_detached(device);
  if (std::exchange(renew_device_, false)) renew_loop_device(std::stoi(device.substr(9)));
}

void LoopImage::disable_discard() {
  if (!attached()) throw std::logic_error("disable_discard on a detached image");
  renew_device_ = true;
  std::ofstream limit("/sys/block/" + loop_name() + "/queue/discard_max_bytes");
  limit << "0\n";
  if (!limit.flush() ||
      read_first_line("/sys/block/" + loop_name() + "/queue/discard_max_bytes") != "0")
    throw std::runtime_error("cannot turn discard off on " + device_);
}

void LoopImage::mkfs(Fs fs, const std::vector<std::string>& extra_args) {
  if (mounted_) throw std::logic_error("mkfs on a mounted image");
  attach();
  std::vector<std::string> argv{mkfs_tool(fs), "-q"};
  if (fs == Fs::Ext4)
    argv.insert(argv.end(), {"-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"});
  else
    argv.push_back("-f");
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  argv.push_back(device_);
  run_or_throw(argv);
  fs_ = fs;
}

void LoopImage::mount(const std::string& options) {
  if (mounted_) throw std::logic_error(mount_point_ + " is already mounted");
  attach();
  std::vector<std::string> argv{"mount"};
  if (fs_) argv.insert(argv.end(), {"-t", fs_name(*fs_)});
  if (!options.empty()) argv.insert(argv.end(), {"-o", options});
  argv.insert(argv.end(), {device_, mount_point_});
  run_or_throw(argv);
  mounted_ = true;
  cleanup::publish_mounted(slot_, true);
}

void LoopImage::remount(const std::string& options) {
  run_or_throw({"mount", "-o", "remount," + options, mount_point_});
}

void LoopImage::unmount() {
  if (!mounted_) return;
  // A trimd under test may still have the mount point open for a moment.
  int rc = 0;
  wait_until([&] { return (rc = ::umount2(mount_point_.c_str(), 0)) == 0 || errno != EBUSY; }, 5s,
             100ms);
  if (rc != 0 && errno == EBUSY) rc = ::umount2(mount_point_.c_str(), MNT_DETACH);
  if (rc != 0 && errno != EINVAL) throw_errno("umount " + mount_point_);
  mounted_ = false;
  cleanup::publish_mounted(slot_, false);
}

void sync_filesystem(const std::string& mount_point) {
  const int fd = ::open(mount_point.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_errno("open " + mount_point);
  const int rc = ::syncfs(fd);
  ::close(fd);
  if (rc != 0) throw_errno("syncfs " + mount_point);
}

namespace {

std::vector<std::string> fragment_files(const std::string& mount_point) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(mount_point + "/frag", ec), end; !ec && it != end;
       it.increment(ec))
    files.push_back(it->path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

void write_fragmented_files(const std::string& mount_point, std::size_t count,
                            std::uint64_t bytes) {
  fs::create_directories(mount_point + "/frag");
  const std::size_t first = fragment_files(mount_point).size();
  std::vector<char> block(64 * 1024);
  for (std::size_t i = first; i < first + count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/frag/file-%06zu", i);
    std::ofstream out(mount_point + name, std::ios::binary);
    std::fill(block.begin(), block.end(), static_cast<char>(1 + i % 250));
    for (std::uint64_t done = 0; done < bytes; done += block.size()) {
      const std::uint64_t piece = std::min<std::uint64_t>(block.size(), bytes - done);
      out.write(block.data(), static_cast<std::streamsize>(piece));
    }
    if (!out.flush()) throw std::runtime_error(std::string("cannot write ") + name);
  }
  sync_filesystem(mount_point);
}

std::uint64_t delete_every_other(const std::string& mount_point) {
  const std::vector<std::string> files = fragment_files(mount_point);
  std::uint64_t deleted = 0;
  for (std::size_t i = 1; i < files.size(); i += 2) {
    deleted += fs::file_size(files[i]);
    fs::remove(files[i]);
  }
  sync_filesystem(mount_point);
  return deleted;
}

void LoopImage::sync() const { sync_filesystem(mount_point_); }

void LoopImage::write_fragmented_files(std::size_t count, std::uint64_t bytes) {
  if (!mounted_) throw std::logic_error("write_fragmented_files on an unmounted image");
  trimd::test::write_fragmented_files(mount_point_, count, bytes);
}

std::uint64_t LoopImage::delete_every_other() {
  return trimd::test::delete_every_other(mount_point_);
}

LoopImage LoopImage::clone_sparse() const {
  if (mounted_) throw std::logic_error("clone_sparse of a mounted image: unmount first");
  if (attached()) ::fsync(loop_fd_);  // what mkfs wrote through the device's page cache
  LoopImage twin(cleanup::make_temp_dir(), size_bytes_, fs_);
  run_or_throw({"cp", "--sparse=always", file_, twin.file_});
  return twin;
}

std::uint64_t LoopImage::allocated_bytes() const {
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) throw_errno("stat " + file_);
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

std::uint64_t LoopImage::size_bytes() const { return size_bytes_; }

std::string LoopImage::loop_name() const { return device_.empty() ? "" : device_.substr(5); }

dev_t LoopImage::mounted_dev() const {
  struct stat st {};
  if (::stat(mount_point_.c_str(), &st) != 0) throw_errno("stat " + mount_point_);
  return st.st_dev;
}

std::string LoopImage::blkid_uuid() const {
  std::string out = run_or_throw({"blkid", "-p", "-s", "UUID", "-o", "value", device_});
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace trimd::test
