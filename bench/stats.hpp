// slowtrim's counters on the way out: a key=value line, a JSON file
// replaced atomically, and the thread that writes it on SIGUSR1 and on a
// timer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "slow_disk.hpp"

namespace slowtrim {

struct Snapshot {
    Counters counters;
    std::uint64_t sequence = 0;  // grows with every snapshot taken
    bool final = false;          // taken after the filesystem was unmounted
    std::uint64_t uptime_ns = 0;
    std::uint64_t backing_allocated_bytes = 0;
};

// "discards=3 bytes_discarded=12288 ..." on one line, no newline.
std::string format_key_values(const Counters& counters);

// One flat object, one key per line, so that even grep can read it.
std::string format_json(const Snapshot& snapshot, const SlowDisk& disk);

// Writes a temporary file beside path and renames it over path, so that a
// reader sees the old or the new text, never half of it. Returns 0 or errno.
int write_file_atomically(const std::string& path, const std::string& text);

// Blocks SIGUSR1 in the calling thread and every thread it creates from now
// on; the reporter's thread is then the only one that takes it.
void block_report_signal();

class StatsReporter {
public:
    // path empty: SIGUSR1 prints the key=value line to stdout instead.
    // interval zero: no periodic snapshots.
    StatsReporter(const SlowDisk& disk, std::string path, std::chrono::milliseconds interval);
    ~StatsReporter();
    StatsReporter(const StatsReporter&) = delete;
    StatsReporter& operator=(const StatsReporter&) = delete;

    // Call once the filesystem is mounted: writes the first snapshot.
    void start();
    // Stops the thread and writes the final snapshot; returns its counters.
    Counters finish();

private:
    void run();
    bool wait_for_trigger();
    Snapshot take(bool final);
    void publish(const Snapshot& snapshot);

    const SlowDisk& disk_;
    std::string path_;
    std::chrono::milliseconds interval_;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::uint64_t sequence_ = 0;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

}  // namespace slowtrim
