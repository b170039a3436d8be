#include "stats.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

namespace slowtrim {

namespace {

constexpr int report_signal = SIGUSR1;

std::uint64_t nanoseconds(std::chrono::nanoseconds d) { return static_cast<std::uint64_t>(d.count()); }

void append_json_field(std::string& out, std::string_view key, std::string_view value)
{
    out += out.back() == '\n' ? "  \"" : ",\n  \"";
    out += key;
    out += "\": ";
    out += value;
}

int write_all(int fd, std::string_view text)
{
    while (!text.empty()) {
        ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

// Runs fn with the termination signals blocked, so that a thread it starts
// never takes them: libfuse's loop wakes only if its main thread does.
template <typename Fn>
void with_termination_signals_blocked(Fn fn)
{
    sigset_t set, old;
    sigemptyset(&set);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
        sigaddset(&set, sig);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    fn();
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

std::string format_key_values(const Counters& counters)
{
    std::string out;
    for (const auto& [name, member] : counter_fields) {
        if (!out.empty())
            out += ' ';
        out += name;
        out += '=';
        out += std::to_string(counters.*member);
    }
    return out;
}

std::string format_json(const Snapshot& snapshot, const SlowDisk& disk)
{
    std::string out = "{\n";
    auto number = [&out](std::string_view key, std::uint64_t value) {
        append_json_field(out, key, std::to_string(value));
    };
    number("sequence", snapshot.sequence);
    append_json_field(out, "final", snapshot.final ? "true" : "false");
    number("pid", static_cast<std::uint64_t>(::getpid()));
    number("uptime_ns", snapshot.uptime_ns);
    number("discard_latency_ns", nanoseconds(disk.cost().latency));
    number("per_mib_ns", nanoseconds(disk.cost().per_mib));
    append_json_field(out, "sync_backing", disk.flush_mode() == FlushMode::sync_backing ? "true" : "false");
    number("size_bytes", disk.size());
    number("backing_allocated_bytes", snapshot.backing_allocated_bytes);
    for (const auto& [name, member] : counter_fields)
        number(name, snapshot.counters.*member);
    out += "\n}\n";
    return out;
}

int write_file_atomically(const std::string& path, const std::string& text)
{
    std::string temporary = path + ".tmp";
    int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno;
    int err = write_all(fd, text);
    if (::close(fd) != 0 && err == 0)
        err = errno;
    if (err == 0 && ::rename(temporary.c_str(), path.c_str()) != 0)
        err = errno;
    if (err != 0)
        ::unlink(temporary.c_str());
    return err;
}

void block_report_signal()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, report_signal);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

StatsReporter::StatsReporter(const SlowDisk& disk, std::string path, std::chrono::milliseconds interval)
    : disk_(disk), path_(std::move(path)), interval_(interval)
{
}

StatsReporter::~StatsReporter()
{
    if (thread_.joinable())
        finish();
}

void StatsReporter::start()
{
    // The first file tells a harness that the disk is mounted and ready.
    if (!path_.empty())
        publish(take(false));
    with_termination_signals_blocked([this] { thread_ = std::thread([this] { run(); }); });
}

Counters StatsReporter::finish()
{
    if (thread_.joinable()) {
        stopping_ = true;
        pthread_kill(thread_.native_handle(), report_signal);
        thread_.join();
    }
    Snapshot last = take(true);
    if (!path_.empty())
        publish(last);
    return last.counters;
}

void StatsReporter::run()
{
    while (wait_for_trigger()) {
        Snapshot snapshot = take(false);
        if (!path_.empty()) {
            publish(snapshot);
        } else {
            std::printf("%s\n", format_key_values(snapshot.counters).c_str());
            std::fflush(stdout);
        }
    }
}

// True when a snapshot is due: SIGUSR1 came, or the interval passed and
// there is a file to update. False when finish() asks us to stop.
bool StatsReporter::wait_for_trigger()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, report_signal);
    for (;;) {
        int sig;
        if (interval_.count() > 0) {
            auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(interval_).count();
            timespec timeout{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
            sig = sigtimedwait(&set, nullptr, &timeout);
        } else {
            sig = sigwaitinfo(&set, nullptr);
        }
        if (stopping_)
            return false;
        if (sig == report_signal || (sig < 0 && errno == EAGAIN && !path_.empty()))
            return true;
    }
}

Snapshot StatsReporter::take(bool final)
{
    Snapshot snapshot;
    snapshot.counters = disk_.counters();
    snapshot.sequence = ++sequence_;
    snapshot.final = final;
    snapshot.uptime_ns = nanoseconds(std::chrono::steady_clock::now() - started_);
    struct stat st {};
    if (disk_.stat_backing(st) == 0)
        snapshot.backing_allocated_bytes = static_cast<std::uint64_t>(st.st_blocks) * 512;
    return snapshot;
}

void StatsReporter::publish(const Snapshot& snapshot)
{
    if (int err = write_file_atomically(path_, format_json(snapshot, disk_)); err != 0)
        std::fprintf(stderr, "slowtrim: cannot write %s: %s\n", path_.c_str(), std::strerror(err));
}

}  // namespace slowtrim
