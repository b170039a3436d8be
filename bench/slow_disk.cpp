#include "slow_disk.hpp"

#include <algorithm>
#include <cerrno>
#include <shared_mutex>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace slowtrim {

namespace {

constexpr std::uint64_t mib = 1024 * 1024;

std::uint64_t to_ns(std::chrono::nanoseconds d)
{
    return static_cast<std::uint64_t>(std::max<std::chrono::nanoseconds::rep>(d.count(), 0));
}

// pread/pwrite until done: both may return short counts.
template <typename Buffer, typename Io>
long transfer_fully(int fd, Buffer buf, std::size_t len, off_t offset, Io io)
{
    std::size_t done = 0;
    while (done < len) {
        ssize_t n = io(fd, buf + done, len - done, offset + static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        done += static_cast<std::size_t>(n);
    }
    return static_cast<long>(done);
}

}  // namespace

std::chrono::nanoseconds DiscardCost::for_length(std::uint64_t bytes) const
{
    // Whole MiBs exactly, the remainder pro rata, so nothing overflows.
    auto whole = static_cast<std::chrono::nanoseconds::rep>(bytes / mib);
    auto rest = static_cast<double>(bytes % mib) / static_cast<double>(mib);
    auto partial = static_cast<std::chrono::nanoseconds::rep>(static_cast<double>(per_mib.count()) * rest);
    return latency + per_mib * whole + std::chrono::nanoseconds(partial);
}

Counters& Counters::operator+=(const Counters& other)
{
    for (const auto& [name, member] : counter_fields)
        this->*member += other.*member;
    return *this;
}

DrainLock::DrainLock()
{
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    int rc = pthread_rwlock_init(&rwlock_, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (rc != 0)
        throw std::system_error(rc, std::generic_category(), "pthread_rwlock_init");
}

DrainLock::~DrainLock() { pthread_rwlock_destroy(&rwlock_); }
void DrainLock::lock() { pthread_rwlock_wrlock(&rwlock_); }
void DrainLock::unlock() { pthread_rwlock_unlock(&rwlock_); }
void DrainLock::lock_shared() { pthread_rwlock_rdlock(&rwlock_); }
void DrainLock::unlock_shared() { pthread_rwlock_unlock(&rwlock_); }

const char* to_string(DeviceModel model)
{
    switch (model) {
    case DeviceModel::exclusive:
        return "exclusive";
    case DeviceModel::queued:
        return "queued";
    case DeviceModel::thin:
        return "thin";
    }
    return "?";
}

std::optional<DeviceModel> device_model_named(std::string_view name)
{
    for (auto model : {DeviceModel::exclusive, DeviceModel::queued, DeviceModel::thin})
        if (name == to_string(model))
            return model;
    return std::nullopt;
}

DiscardCost thin_cost()
{
    // A thin pool unmaps a chunk in its metadata: tens of microseconds.
    return DiscardCost{std::chrono::microseconds(50), std::chrono::nanoseconds(0)};
}

SlowDisk::SlowDisk(const std::string& backing_path, DiscardCost cost, FlushMode flush, DeviceShape shape)
    : cost_(cost),
      flush_(flush),
      shape_(shape),
      queue_(static_cast<std::ptrdiff_t>(std::clamp(shape.queue_depth, 1U, 4096U)))
{
    fd_ = ::open(backing_path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0)
        throw std::system_error(errno, std::generic_category(), backing_path);
    struct stat st {};
    int err = ::fstat(fd_, &st) != 0 ? errno : 0;
    if (err == 0 && (!S_ISREG(st.st_mode) || st.st_size <= 0))
        err = EINVAL;
    if (err != 0) {
        ::close(fd_);
        throw std::system_error(err, std::generic_category(),
                                backing_path + " (want a regular file of non-zero size)");
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
}

SlowDisk::~SlowDisk()
{
    if (fd_ >= 0)
        ::close(fd_);
}

int SlowDisk::stat_backing(struct stat& st) const { return ::fstat(fd_, &st) == 0 ? 0 : -errno; }

int SlowDisk::statfs(struct statvfs& st) const
{
    if (::fstatvfs(fd_, &st) != 0)
        return -errno;
    // The loop driver takes its discard granularity from f_bsize.
    st.f_bsize = 4096;
    return 0;
}

bool SlowDisk::fits(off_t offset, std::uint64_t length) const
{
    auto start = static_cast<std::uint64_t>(offset);
    return offset >= 0 && start <= size_ && length <= size_ - start;
}

std::chrono::nanoseconds SlowDisk::io_begin()
{
    auto start = Clock::now();
    if (shape_.model == DeviceModel::queued)
        queue_.acquire();
    drain_.lock_shared();
    return Clock::now() - start;
}

void SlowDisk::io_done()
{
    drain_.unlock_shared();
    if (shape_.model == DeviceModel::queued)
        queue_.release();
}

long SlowDisk::read(char* buf, std::size_t len, off_t offset)
{
    if (offset < 0)
        return -EINVAL;
    if (static_cast<std::uint64_t>(offset) >= size_)
        return 0;
    len = static_cast<std::size_t>(std::min<std::uint64_t>(len, size_ - static_cast<std::uint64_t>(offset)));
    auto waited = io_begin();
    long n = transfer_fully(fd_, buf, len, offset, ::pread);
    io_done();
    add(n < 0
            ? Counters{.io_wait_ns = to_ns(waited), .errors = 1}
            : Counters{.reads = 1, .bytes_read = static_cast<std::uint64_t>(n), .io_wait_ns = to_ns(waited)});
    return n;
}

long SlowDisk::write(const char* buf, std::size_t len, off_t offset)
{
    // A disk does not grow: the backing file keeps the size it had.
    if (!fits(offset, len))
        return -ENOSPC;
    auto waited = io_begin();
    long n = transfer_fully(fd_, buf, len, offset, ::pwrite);
    io_done();
    add(n < 0
            ? Counters{.io_wait_ns = to_ns(waited), .errors = 1}
            : Counters{
                  .writes = 1, .bytes_written = static_cast<std::uint64_t>(n), .io_wait_ns = to_ns(waited)});
    return n;
}

int SlowDisk::sync(bool data_only)
{
    auto waited = io_begin();
    int rc = 0;
    if (flush_ == FlushMode::sync_backing && (data_only ? ::fdatasync(fd_) : ::fsync(fd_)) != 0)
        rc = -errno;
    io_done();
    add(Counters{.flushes = rc == 0 ? 1U : 0U, .io_wait_ns = to_ns(waited), .errors = rc == 0 ? 0U : 1U});
    return rc;
}

int SlowDisk::fallocate(int mode, off_t offset, off_t length)
{
    if (offset < 0 || length <= 0)
        return -EINVAL;
    if (!fits(offset, static_cast<std::uint64_t>(length)))
        return -ENOSPC;
    switch (mode) {
    case FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE:
        return discard(offset, length);
    case FALLOC_FL_ZERO_RANGE:
    case FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE:
        return zero_range(mode, offset, length);
    case 0:
    case FALLOC_FL_KEEP_SIZE:
        return preallocate(mode, offset, length);
    default:
        return -EOPNOTSUPP;
    }
}

std::uint64_t SlowDisk::allocated_bytes() const
{
    struct stat st {};
    return ::fstat(fd_, &st) == 0 ? static_cast<std::uint64_t>(st.st_blocks) * 512 : 0;
}

std::pair<int, std::uint64_t> SlowDisk::punch(off_t offset, off_t length)
{
    // Nothing else changes the allocation while the drain lock is held, so
    // the difference is exactly what this punch gave back.
    std::uint64_t before = allocated_bytes();
    int rc = ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length) == 0 ? 0 : -errno;
    std::uint64_t after = allocated_bytes();
    return {rc, before > after ? before - after : 0};
}

int SlowDisk::discard(off_t offset, off_t length)
{
    auto bytes = static_cast<std::uint64_t>(length);
    const bool exclusive = shape_.model == DeviceModel::exclusive;
    // Queued: one slot of the queue for the whole cost, beside other I/O.
    if (shape_.model == DeviceModel::queued)
        queue_.acquire();
    // Exclusive: from here on no read or write runs, the queue is drained.
    // The others hold the drain lock only for the punch itself.
    drain_.lock();
    auto start = Clock::now();
    auto [rc, unmapped] = punch(offset, length);
    auto punched = Clock::now() - start;
    if (!exclusive)
        drain_.unlock();
    // Sleep out the rest of the cost: the real punch (0.3 ms typically, at
    // times 5 ms on this machine's ext4) is part of it, not added to it.
    std::this_thread::sleep_until(start + cost_.for_length(bytes));
    auto busy = Clock::now() - start;
    // Counted before the device is free again, so that no snapshot shows
    // I/O that waited for this discard without the discard.
    if (rc != 0)
        add(Counters{.discard_ns = to_ns(busy), .punch_ns = to_ns(punched), .errors = 1});
    else
        add(Counters{.discards = 1,
                     .bytes_discarded = bytes,
                     .bytes_unmapped = unmapped,
                     .discard_ns = to_ns(busy),
                     .punch_ns = to_ns(punched)});
    if (exclusive)
        drain_.unlock();
    if (shape_.model == DeviceModel::queued)
        queue_.release();
    return rc;
}

int SlowDisk::zero_range(int mode, off_t offset, off_t length)
{
    // Write-zeroes is a write to the disk, not a TRIM: no drain, no delay.
    auto waited = io_begin();
    int rc = ::fallocate(fd_, mode, offset, length) == 0 ? 0 : -errno;
    io_done();
    add(rc != 0 ? Counters{.io_wait_ns = to_ns(waited), .errors = 1}
                : Counters{.zeroouts = 1,
                           .bytes_zeroed = static_cast<std::uint64_t>(length),
                           .io_wait_ns = to_ns(waited)});
    return rc;
}

int SlowDisk::preallocate(int mode, off_t offset, off_t length)
{
    std::shared_lock lock(drain_);
    int rc = ::fallocate(fd_, mode, offset, length) == 0 ? 0 : -errno;
    lock.unlock();
    if (rc != 0)
        add(Counters{.errors = 1});
    return rc;
}

void SlowDisk::add(const Counters& delta)
{
    std::lock_guard guard(counters_mutex_);
    counters_ += delta;
}

Counters SlowDisk::counters() const
{
    std::lock_guard guard(counters_mutex_);
    return counters_;
}

}  // namespace slowtrim
