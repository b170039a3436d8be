// The emulated slow-TRIM disk behind slowtrim's one file: a backing file,
// a lock that lets a discard drain all other I/O, and the counters.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string>
#include <string_view>
#include <utility>

#include <pthread.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

namespace slowtrim {

// What one discard costs on the emulated disk.
struct DiscardCost {
    std::chrono::nanoseconds latency{std::chrono::milliseconds(2)};
    std::chrono::nanoseconds per_mib{std::chrono::microseconds(100)};

    std::chrono::nanoseconds for_length(std::uint64_t bytes) const;
};

// Everything slowtrim counts. All fields only ever grow.
struct Counters {
    std::uint64_t discards = 0;
    std::uint64_t bytes_discarded = 0;  // lengths the kernel asked to discard
    std::uint64_t bytes_unmapped = 0;   // allocation the backing file lost by them
    std::uint64_t discard_ns = 0;       // device busy with discards: cost or punch, the longer
    std::uint64_t punch_ns = 0;         // of that, the real punches in the backing file
    std::uint64_t reads = 0;
    std::uint64_t bytes_read = 0;
    std::uint64_t writes = 0;
    std::uint64_t bytes_written = 0;
    std::uint64_t flushes = 0;
    std::uint64_t zeroouts = 0;
    std::uint64_t bytes_zeroed = 0;
    std::uint64_t io_wait_ns = 0;  // reads/writes/flushes stalled behind discards
    std::uint64_t errors = 0;

    Counters& operator+=(const Counters& other);
};

// Name and member of every counter, in output order.
inline constexpr std::array counter_fields{
    std::pair{"discards", &Counters::discards},
    std::pair{"bytes_discarded", &Counters::bytes_discarded},
    std::pair{"bytes_unmapped", &Counters::bytes_unmapped},
    std::pair{"discard_ns", &Counters::discard_ns},
    std::pair{"punch_ns", &Counters::punch_ns},
    std::pair{"reads", &Counters::reads},
    std::pair{"bytes_read", &Counters::bytes_read},
    std::pair{"writes", &Counters::writes},
    std::pair{"bytes_written", &Counters::bytes_written},
    std::pair{"flushes", &Counters::flushes},
    std::pair{"zeroouts", &Counters::zeroouts},
    std::pair{"bytes_zeroed", &Counters::bytes_zeroed},
    std::pair{"io_wait_ns", &Counters::io_wait_ns},
    std::pair{"errors", &Counters::errors},
};

// A reader-writer lock that admits a waiting writer before new readers.
// std::shared_mutex is glibc's default rwlock, which prefers readers: a
// steady stream of reads and writes would starve a discard forever, while a
// non-queued TRIM really drains the queue. Meets the SharedMutex
// requirements, so std::shared_lock and std::unique_lock work with it.
class DrainLock {
public:
    DrainLock();
    ~DrainLock();
    DrainLock(const DrainLock&) = delete;
    DrainLock& operator=(const DrainLock&) = delete;

    void lock();
    void unlock();
    void lock_shared();
    void unlock_shared();

private:
    pthread_rwlock_t rwlock_;
};

// What a flush (fsync of the disk) does once the queue lets it through.
enum class FlushMode {
    // Nothing more: the backing file is scratch, and the host disk's own
    // flush time (shared, noisy) would swamp what the benchmarks measure.
    drain_only,
    // fdatasync/fsync the backing file too.
    sync_backing,
};

// How discards share the disk with other I/O (issue 18's three devices).
enum class DeviceModel {
    // SATA's non-queued TRIM: a discard drains the queue; nothing else runs
    // while it does.
    exclusive,
    // NVMe's queued discard: discards and other I/O share `queue_depth`
    // slots; a discard holds one for its whole cost, so I/O waits only when
    // discards fill the queue.
    queued,
    // A thin-provisioned backend (LVM thin, a SAN): a discard is bookkeeping
    // (cheap by default, see thin_cost), and the space it returns is what counts.
    thin,
};
const char* to_string(DeviceModel model);
std::optional<DeviceModel> device_model_named(std::string_view name);
// The cost of a discard on a thin backend when none is given.
DiscardCost thin_cost();

struct DeviceShape {
    DeviceModel model = DeviceModel::exclusive;
    unsigned queue_depth = 32;  // queued only
};

// The disk. Methods return 0 or a byte count on success, -errno on error,
// as FUSE handlers want.
class SlowDisk {
public:
    // Opens the backing file; throws std::system_error.
    SlowDisk(const std::string& backing_path, DiscardCost cost, FlushMode flush = FlushMode::drain_only,
             DeviceShape shape = {});
    ~SlowDisk();
    SlowDisk(const SlowDisk&) = delete;
    SlowDisk& operator=(const SlowDisk&) = delete;

    std::uint64_t size() const { return size_; }
    const DiscardCost& cost() const { return cost_; }
    FlushMode flush_mode() const { return flush_; }
    const DeviceShape& shape() const { return shape_; }

    int stat_backing(struct stat& st) const;
    int statfs(struct statvfs& st) const;
    long read(char* buf, std::size_t len, off_t offset);
    long write(const char* buf, std::size_t len, off_t offset);
    int sync(bool data_only);
    int fallocate(int mode, off_t offset, off_t length);

    Counters counters() const;

private:
    using Clock = std::chrono::steady_clock;

    int discard(off_t offset, off_t length);
    int zero_range(int mode, off_t offset, off_t length);
    int preallocate(int mode, off_t offset, off_t length);
    std::uint64_t allocated_bytes() const;
    bool fits(off_t offset, std::uint64_t length) const;
    // Takes the shared side of the drain lock (and, queued, a queue slot)
    // and says how long that took; io_done() gives them back.
    std::chrono::nanoseconds io_begin();
    void io_done();
    // A punch with the drain lock held, so that the allocation it gave back
    // is exact: {rc, bytes unmapped}.
    std::pair<int, std::uint64_t> punch(off_t offset, off_t length);
    void add(const Counters& delta);

    int fd_ = -1;
    std::uint64_t size_ = 0;
    DiscardCost cost_;
    FlushMode flush_;
    DeviceShape shape_;
    DrainLock drain_;
    std::counting_semaphore<4096> queue_;
    mutable std::mutex counters_mutex_;
    Counters counters_;
};

}  // namespace slowtrim
