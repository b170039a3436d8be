// Unit tests of slowtrim's disk model and stats output, on a sparse file in
// a temporary directory: no root, no FUSE.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slow_disk.hpp"
#include "stats.hpp"

namespace slowtrim {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr std::uint64_t mib = 1024 * 1024;

class ASlowDisk : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::string pattern = (fs::temp_directory_path() / "slowtrim-test.XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        backing_ = dir_ / "backing";
        std::ofstream(backing_).close();
        fs::resize_file(backing_, 8 * mib);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::uint64_t allocated() const
    {
        struct stat st {};
        ::stat(backing_.c_str(), &st);
        return static_cast<std::uint64_t>(st.st_blocks) * 512;
    }

    // Until the backing file holds `bytes` (a punch done), or 10 s.
    bool wait_for_allocation(std::uint64_t bytes) const
    {
        for (int i = 0; i < 10000 && allocated() != bytes; ++i)
            std::this_thread::sleep_for(1ms);
        return allocated() == bytes;
    }

    static void fill(SlowDisk& disk, off_t offset, std::size_t len)
    {
        std::vector<char> data(len, 'x');
        ASSERT_EQ(disk.write(data.data(), len, offset), static_cast<long>(len));
    }

    fs::path dir_;
    fs::path backing_;
};

TEST(DiscardCost, ChargesTheLatencyPlusTheMiBsDiscarded)
{
    DiscardCost cost{.latency = 2ms, .per_mib = 100us};
    EXPECT_EQ(cost.for_length(0), 2ms);
    EXPECT_EQ(cost.for_length(3 * mib), 2ms + 300us);
    EXPECT_EQ(cost.for_length(mib / 2), 2ms + 50us);
}

TEST_F(ASlowDisk, TakesItsSizeFromTheBackingFile)
{
    SlowDisk disk(backing_.string(), DiscardCost{});
    EXPECT_EQ(disk.size(), 8 * mib);
}

TEST_F(ASlowDisk, RefusesAnEmptyBackingFile)
{
    fs::resize_file(backing_, 0);
    EXPECT_THROW(SlowDisk(backing_.string(), DiscardCost{}), std::system_error);
}

TEST_F(ASlowDisk, ReadsBackWhatWasWrittenAndCountsBoth)
{
    SlowDisk disk(backing_.string(), DiscardCost{});
    fill(disk, 4096, 8192);
    std::vector<char> back(8192);
    ASSERT_EQ(disk.read(back.data(), back.size(), 4096), 8192);
    EXPECT_EQ(std::string(back.begin(), back.end()), std::string(8192, 'x'));
    Counters c = disk.counters();
    EXPECT_EQ(c.writes, 1U);
    EXPECT_EQ(c.bytes_written, 8192U);
    EXPECT_EQ(c.reads, 1U);
    EXPECT_EQ(c.bytes_read, 8192U);
}

TEST_F(ASlowDisk, DoesNotGrowPastItsSize)
{
    SlowDisk disk(backing_.string(), DiscardCost{});
    char byte = 'x';
    EXPECT_EQ(disk.write(&byte, 1, static_cast<off_t>(8 * mib)), -ENOSPC);
    EXPECT_EQ(disk.read(&byte, 1, static_cast<off_t>(8 * mib)), 0);
    EXPECT_EQ(disk.fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(9 * mib)),
              -ENOSPC);
    EXPECT_EQ(fs::file_size(backing_), 8 * mib);
}

TEST_F(ASlowDisk, PunchesTheHoleAndCountsWhatTheBackingFileLost)
{
    SlowDisk disk(backing_.string(), DiscardCost{.latency = 1ms, .per_mib = 0ms}, FlushMode::sync_backing);
    fill(disk, 0, 2 * mib);
    ASSERT_EQ(disk.sync(false), 0);
    ASSERT_EQ(disk.counters().flushes, 1U);
    std::uint64_t before = allocated();
    // Half of the range is data, half was never written.
    ASSERT_EQ(disk.fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(mib),
                             static_cast<off_t>(2 * mib)),
              0);
    Counters c = disk.counters();
    EXPECT_EQ(c.discards, 1U);
    EXPECT_EQ(c.bytes_discarded, 2 * mib);
    EXPECT_EQ(c.bytes_unmapped, before - allocated());
    EXPECT_GE(c.bytes_unmapped, mib - 64 * 1024);
    EXPECT_LE(c.bytes_unmapped, mib + 64 * 1024);
}

TEST_F(ASlowDisk, SpendsAtLeastTheDiscardCostOnEveryDiscard)
{
    SlowDisk disk(backing_.string(), DiscardCost{.latency = 5ms, .per_mib = 10ms});
    auto start = std::chrono::steady_clock::now();
    for (off_t i = 0; i < 3; ++i)
        ASSERT_EQ(disk.fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, i * static_cast<off_t>(mib),
                                 static_cast<off_t>(mib)),
                  0);
    auto elapsed = std::chrono::steady_clock::now() - start;
    Counters c = disk.counters();
    EXPECT_GE(elapsed, 3 * 15ms);
    EXPECT_GE(c.discard_ns, static_cast<std::uint64_t>(std::chrono::nanoseconds(3 * 15ms).count()));
    EXPECT_LE(c.punch_ns, c.discard_ns);
}

TEST_F(ASlowDisk, StallsAReadWhileADiscardRuns)
{
    SlowDisk disk(backing_.string(), DiscardCost{.latency = 300ms, .per_mib = 0ms});
    std::thread discard([&] { disk.fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096); });
    // Wait until the discard holds the disk: it is counted only at its end.
    std::this_thread::sleep_for(100ms);
    char byte;
    ASSERT_EQ(disk.counters().discards, 0U);
    ASSERT_EQ(disk.read(&byte, 1, static_cast<off_t>(mib)), 1);
    EXPECT_EQ(disk.counters().discards, 1U) << "the read ran before the discard ended";
    discard.join();
    EXPECT_GE(disk.counters().io_wait_ns, 50'000'000U);
}

TEST_F(ASlowDisk, QueuedLetsAReadPassADiscardInFlight)
{
    SlowDisk disk(backing_.string(), DiscardCost{.latency = 2s, .per_mib = 0ms}, FlushMode::sync_backing,
                  DeviceShape{DeviceModel::queued, 4});
    fill(disk, 0, 4096);
    ASSERT_EQ(disk.sync(false), 0);
    std::thread discard([&] { disk.fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096); });
    // The punch comes first, then the discard's cost: in flight from here.
    ASSERT_TRUE(wait_for_allocation(0)) << "the discard never started";
    char byte;
    ASSERT_EQ(disk.read(&byte, 1, static_cast<off_t>(mib)), 1);
    EXPECT_EQ(disk.counters().discards, 0U) << "the read waited for the discard";
    discard.join();
    EXPECT_EQ(disk.counters().discards, 1U);
}

TEST_F(ASlowDisk, QueuedStallsAReadOnlyWhenDiscardsFillTheQueue)
{
    SlowDisk disk(backing_.string(), DiscardCost{.latency = 300ms, .per_mib = 0ms}, FlushMode::sync_backing,
                  DeviceShape{DeviceModel::queued, 2});
    fill(disk, 0, 2 * 4096);
    ASSERT_EQ(disk.sync(false), 0);
    std::vector<std::thread> discards;
    for (off_t i = 0; i < 2; ++i)
        discards.emplace_back(
            [&, i] { disk.fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, i * 4096, 4096); });
    ASSERT_TRUE(wait_for_allocation(0)) << "the discards never started";
    char byte;
    ASSERT_EQ(disk.read(&byte, 1, static_cast<off_t>(mib)), 1);
    EXPECT_GE(disk.counters().discards, 1U) << "the read ran with the queue full of discards";
    for (auto& t : discards)
        t.join();
}

TEST_F(ASlowDisk, ThinDiscardsCostLittleAndStillReturnTheSpace)
{
    SlowDisk disk(backing_.string(), thin_cost(), FlushMode::sync_backing, DeviceShape{DeviceModel::thin});
    std::string block(4096, 'x');
    ASSERT_EQ(disk.write(block.data(), block.size(), 0), 4096);
    ASSERT_EQ(disk.sync(false), 0);
    ASSERT_EQ(disk.fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096), 0);
    Counters c = disk.counters();
    EXPECT_EQ(c.discards, 1U);
    EXPECT_EQ(c.bytes_unmapped, 4096U);
    // The model's charge, not the wall time: a loaded machine's punch alone
    // can take milliseconds (timings belong in the bench).
    EXPECT_LT(thin_cost().for_length(4096), std::chrono::milliseconds(2))
        << "a thin discard costs as much as a SATA TRIM";
    EXPECT_GE(c.discard_ns, c.punch_ns) << "the punch is part of the discard's time";
}

TEST(DeviceModels, AreNamedForTheCommandLine)
{
    for (auto model : {DeviceModel::exclusive, DeviceModel::queued, DeviceModel::thin})
        EXPECT_EQ(device_model_named(to_string(model)), model);
    EXPECT_EQ(device_model_named("nvme"), std::nullopt);
}

TEST_F(ASlowDisk, CountsZeroRangesAsWritesNotDiscards)
{
    SlowDisk disk(backing_.string(), DiscardCost{.latency = 1s, .per_mib = 0ms});
    auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(disk.fallocate(FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 65536), 0);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
    Counters c = disk.counters();
    EXPECT_EQ(c.zeroouts, 1U);
    EXPECT_EQ(c.bytes_zeroed, 65536U);
    EXPECT_EQ(c.discards, 0U);
}

TEST_F(ASlowDisk, RejectsFallocateModesADiskHasNot)
{
    SlowDisk disk(backing_.string(), DiscardCost{});
    EXPECT_EQ(disk.fallocate(FALLOC_FL_COLLAPSE_RANGE, 0, 4096), -EOPNOTSUPP);
    EXPECT_EQ(disk.fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 0), -EINVAL);
}

TEST(ADrainLock, LetsAWaitingDiscardInBeforeNewReaders)
{
    DrainLock lock;
    std::vector<char> order;
    std::mutex order_mutex;
    auto record = [&](char who) {
        std::lock_guard guard(order_mutex);
        order.push_back(who);
    };
    lock.lock_shared();
    std::thread writer([&] {
        lock.lock();
        record('W');
        lock.unlock();
    });
    std::this_thread::sleep_for(100ms);
    std::thread reader([&] {
        lock.lock_shared();
        record('R');
        lock.unlock_shared();
    });
    std::this_thread::sleep_for(100ms);
    record('0');
    lock.unlock_shared();
    writer.join();
    reader.join();
    EXPECT_EQ(std::string(order.begin(), order.end()), "0WR");
}

TEST(StatsOutput, NamesEveryCounterOnTheKeyValueLine)
{
    Counters c;
    c.discards = 7;
    c.errors = 2;
    std::string line = format_key_values(c);
    EXPECT_EQ(line.rfind("discards=7 ", 0), 0U);
    EXPECT_NE(line.find(" errors=2"), std::string::npos);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    for (const auto& [name, member] : counter_fields)
        EXPECT_NE(line.find(std::string(name) + "="), std::string::npos) << name;
}

TEST_F(ASlowDisk, WritesItsStatsAsJsonAtomically)
{
    SlowDisk disk(backing_.string(), DiscardCost{.latency = 3ms, .per_mib = 0ms});
    Snapshot snapshot;
    snapshot.sequence = 4;
    snapshot.final = true;
    snapshot.counters.bytes_discarded = 12345;
    fs::path out = dir_ / "stats.json";
    ASSERT_EQ(write_file_atomically(out.string(), format_json(snapshot, disk)), 0);
    std::stringstream text;
    text << std::ifstream(out).rdbuf();
    EXPECT_NE(text.str().find("\n  \"sequence\": 4,\n"), std::string::npos);
    EXPECT_NE(text.str().find("\n  \"final\": true,\n"), std::string::npos);
    EXPECT_NE(text.str().find("\n  \"discard_latency_ns\": 3000000,\n"), std::string::npos);
    EXPECT_NE(text.str().find("\n  \"bytes_discarded\": 12345,\n"), std::string::npos);
    EXPECT_EQ(text.str().substr(text.str().size() - 3), "\n}\n");
    EXPECT_FALSE(fs::exists(out.string() + ".tmp"));
}

TEST_F(ASlowDisk, ReportsAFailedStatsWriteWithoutLeavingATemporary)
{
    fs::path out = dir_ / "missing-dir" / "stats.json";
    EXPECT_EQ(write_file_atomically(out.string(), "{}\n"), ENOENT);
    EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace slowtrim
