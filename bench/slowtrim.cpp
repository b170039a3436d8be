// slowtrim: an emulated slow-TRIM SSD for trimd's benchmarks.
//
// A FUSE filesystem with one file, "disk", backed by a sparse file. Put a
// loop device on it and the loop driver turns every discard into
// fallocate(PUNCH_HOLE) on that file; slowtrim makes each one cost a fixed
// latency plus a per-MiB time. How that time weighs on other I/O is the
// device model: exclusive (nothing else runs, SATA's non-queued TRIM),
// queued (discards share a queue with other I/O, NVMe) or thin (a cheap
// discard on a thin-provisioned backend). Then it punches the hole for
// real, so the space reclaimed shows in the backing file's allocation.

#include <fuse.h>

#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <sys/stat.h>

#include "slow_disk.hpp"
#include "stats.hpp"

namespace {

using namespace slowtrim;

constexpr const char* disk_path = "/disk";

constexpr const char* usage_text = R"(Usage: slowtrim [options] BACKING_FILE MOUNTPOINT

Mounts a FUSE filesystem at MOUNTPOINT holding one file, "disk", of the size
of BACKING_FILE and backed by it. Attach a loop device to it:
  losetup --find --show --direct-io=off MOUNTPOINT/disk
Each discard on that loop device costs device time, then punches the hole in
BACKING_FILE; what other I/O does meanwhile is the --model. Runs in the foreground; SIGINT or SIGTERM
unmounts and exits, printing the counters as one line of key=value pairs.

Options:
  --model=MODEL          exclusive: no other I/O runs during a discard (SATA's
                         non-queued TRIM; the default); queued: discards and
                         other I/O share --queue-depth slots (NVMe); thin: a
                         thin-provisioned backend, discards cheap (0.05 ms)
  --queue-depth=N        slots of the queued model (default 32)
  --discard-latency=MS   time every discard costs (default 2; thin 0.05)
  --per-mib=MS           added time per MiB discarded (default 0.1; thin 0)
  --stats=FILE           write the counters as JSON to FILE (atomically) on
                         exit, on SIGUSR1 and every --stats-interval
  --stats-interval=SEC   period of those updates, 0 = none (default 1)
  --sync-backing         a flush on the disk also fsyncs BACKING_FILE; by
                         default it only waits for a running discard
  -o OPTIONS             FUSE mount options, passed on
  -d, --debug            FUSE debug output
  -f                     accepted and ignored: always in the foreground
  -h, --help             this text
  -V, --version          the version
Without --stats, SIGUSR1 prints the key=value line to stdout.
)";

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Options {
    DiscardCost cost;
    bool cost_given = false;
    DeviceShape shape;
    std::string stats_path;
    std::chrono::milliseconds stats_interval{1000};
    FlushMode flush = FlushMode::drain_only;
    std::string backing;
    std::string mountpoint;
    std::vector<std::string> fuse_args;
    bool help = false;
    bool version = false;
};

double parse_non_negative(std::string_view name, std::string_view text)
{
    double value = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0)
        throw UsageError(std::string(name) + " wants a number >= 0, not '" + std::string(text) + "'");
    return value;
}

std::chrono::nanoseconds parse_milliseconds(std::string_view name, std::string_view text)
{
    return std::chrono::nanoseconds(std::llround(parse_non_negative(name, text) * 1e6));
}

// Walks argv; "--name=value" and "--name value" both work.
class ArgCursor {
public:
    ArgCursor(int argc, char** argv) : args_(argv + 1, argv + argc) {}

    bool done() const { return next_ >= args_.size(); }
    std::string_view take() { return args_[next_++]; }

    std::optional<std::string> value_of(std::string_view arg, std::string_view name)
    {
        if (arg.substr(0, name.size()) != name)
            return std::nullopt;
        std::string_view rest = arg.substr(name.size());
        if (!rest.empty() && rest.front() == '=')
            return std::string(rest.substr(1));
        if (!rest.empty())
            return std::nullopt;
        if (done())
            throw UsageError(std::string(name) + " wants a value");
        return std::string(take());
    }

private:
    std::vector<std::string_view> args_;
    std::size_t next_ = 0;
};

Options parse_options(int argc, char** argv)
{
    Options opts;
    std::vector<std::string> positional;
    ArgCursor args(argc, argv);
    while (!args.done()) {
        std::string_view arg = args.take();
        if (arg == "-h" || arg == "--help") {
            opts.help = true;
        } else if (arg == "-V" || arg == "--version") {
            opts.version = true;
        } else if (arg == "-d" || arg == "--debug") {
            opts.fuse_args.emplace_back("-d");
        } else if (arg == "--sync-backing") {
            opts.flush = FlushMode::sync_backing;
        } else if (arg == "-f") {
            // Always in the foreground, so that the harness can kill us.
        } else if (auto v = args.value_of(arg, "--discard-latency")) {
            opts.cost.latency = parse_milliseconds("--discard-latency", *v);
            opts.cost_given = true;
        } else if (auto p = args.value_of(arg, "--per-mib")) {
            opts.cost.per_mib = parse_milliseconds("--per-mib", *p);
            opts.cost_given = true;
        } else if (auto m = args.value_of(arg, "--model")) {
            auto model = device_model_named(*m);
            if (!model)
                throw UsageError("--model: want exclusive, queued or thin, not '" + *m + "'");
            opts.shape.model = *model;
        } else if (auto q = args.value_of(arg, "--queue-depth")) {
            double depth = parse_non_negative("--queue-depth", *q);
            if (depth < 1 || depth > 4096 || depth != std::floor(depth))
                throw UsageError("--queue-depth: want a whole number from 1 to 4096");
            opts.shape.queue_depth = static_cast<unsigned>(depth);
        } else if (auto s = args.value_of(arg, "--stats")) {
            opts.stats_path = *s;
        } else if (auto i = args.value_of(arg, "--stats-interval")) {
            auto ms = std::llround(parse_non_negative("--stats-interval", *i) * 1000);
            opts.stats_interval = std::chrono::milliseconds(ms);
        } else if (auto o = args.value_of(arg, "-o")) {
            opts.fuse_args.insert(opts.fuse_args.end(), {"-o", *o});
        } else if (arg.size() > 2 && arg.substr(0, 2) == "-o") {
            opts.fuse_args.insert(opts.fuse_args.end(), {"-o", std::string(arg.substr(2))});
        } else if (arg.size() > 1 && arg.front() == '-') {
            throw UsageError("unknown option '" + std::string(arg) + "'");
        } else {
            positional.emplace_back(arg);
        }
    }
    if (opts.help || opts.version)
        return opts;
    if (positional.size() != 2)
        throw UsageError("want BACKING_FILE and MOUNTPOINT");
    if (opts.shape.model == DeviceModel::thin && !opts.cost_given)
        opts.cost = thin_cost();
    opts.backing = positional[0];
    opts.mountpoint = positional[1];
    return opts;
}

// The FUSE side: a root directory and the one file in it.

SlowDisk& disk() { return *static_cast<SlowDisk*>(fuse_get_context()->private_data); }
bool is_root(const char* path) { return std::strcmp(path, "/") == 0; }
bool is_disk(const char* path) { return std::strcmp(path, disk_path) == 0; }

int op_getattr(const char* path, struct stat* st, fuse_file_info*)
{
    if (!is_root(path) && !is_disk(path))
        return -ENOENT;
    if (int rc = disk().stat_backing(*st); rc != 0)
        return rc;
    if (is_root(path)) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
        st->st_size = 0;
        st->st_blocks = 0;
        return 0;
    }
    // Allocation as the backing file's, so du on the disk shows it too.
    st->st_nlink = 1;
    st->st_size = static_cast<off_t>(disk().size());
    st->st_blksize = 4096;
    return 0;
}

int op_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info*, fuse_readdir_flags)
{
    if (!is_root(path))
        return -ENOTDIR;
    for (const char* name : {".", "..", disk_path + 1})
        fill(buf, name, nullptr, 0, fuse_fill_dir_flags{});
    return 0;
}

int op_open(const char* path, fuse_file_info* fi)
{
    if (!is_disk(path))
        return -ENOENT;
    // Every read and write reaches us, none is served from the page cache:
    // a discard must be able to stall them all.
    fi->direct_io = 1;
    return 0;
}

int op_read(const char*, char* buf, size_t size, off_t offset, fuse_file_info*)
{
    return static_cast<int>(disk().read(buf, size, offset));
}

int op_write(const char*, const char* buf, size_t size, off_t offset, fuse_file_info*)
{
    return static_cast<int>(disk().write(buf, size, offset));
}

// close(): nothing is buffered here, writes went to the backing file.
int op_flush(const char*, fuse_file_info*) { return 0; }

int op_fsync(const char*, int data_only, fuse_file_info*) { return disk().sync(data_only != 0); }

int op_fallocate(const char*, int mode, off_t offset, off_t length, fuse_file_info*)
{
    return disk().fallocate(mode, offset, length);
}

int op_statfs(const char*, struct statvfs* st) { return disk().statfs(*st); }

void* op_init(fuse_conn_info*, fuse_config*) { return fuse_get_context()->private_data; }

fuse_operations make_operations()
{
    fuse_operations ops{};
    ops.getattr = op_getattr;
    ops.readdir = op_readdir;
    ops.open = op_open;
    ops.read = op_read;
    ops.write = op_write;
    ops.flush = op_flush;
    ops.fsync = op_fsync;
    ops.fallocate = op_fallocate;
    ops.statfs = op_statfs;
    ops.init = op_init;
    return ops;
}

struct FuseArgs {
    fuse_args args = FUSE_ARGS_INIT(0, nullptr);

    explicit FuseArgs(const std::vector<std::string>& extra)
    {
        add("slowtrim");
        add("-o");
        add("fsname=slowtrim,subtype=slowtrim");
        for (const auto& arg : extra)
            add(arg);
    }
    ~FuseArgs() { fuse_opt_free_args(&args); }
    FuseArgs(const FuseArgs&) = delete;
    FuseArgs& operator=(const FuseArgs&) = delete;

    void add(const std::string& arg)
    {
        if (fuse_opt_add_arg(&args, arg.c_str()) != 0)
            throw std::bad_alloc();
    }
};

using FusePtr = std::unique_ptr<fuse, decltype(&fuse_destroy)>;

// fuse_loop_mt() reports the signal that stopped it; that is a clean stop.
bool stopped_cleanly(int loop_result)
{
    return loop_result == 0 || loop_result == SIGINT || loop_result == SIGTERM || loop_result == SIGHUP;
}

int run_loop(fuse* f)
{
    fuse_loop_config* config = fuse_loop_cfg_create();
    if (config == nullptr)
        return -ENOMEM;
    fuse_loop_cfg_set_clone_fd(config, 0);
    int rc = fuse_loop_mt(f, config);
    fuse_loop_cfg_destroy(config);
    return rc;
}

int serve(SlowDisk& disk, const Options& opts)
{
    FuseArgs args(opts.fuse_args);
    fuse_operations ops = make_operations();
    FusePtr f(fuse_new(&args.args, &ops, sizeof ops, &disk), fuse_destroy);
    if (!f)
        return 1;
    if (fuse_mount(f.get(), opts.mountpoint.c_str()) != 0)
        return 1;
    fuse_session* session = fuse_get_session(f.get());
    // A shell starts background jobs with SIGINT ignored, and libfuse takes
    // over only signals left at their default: SIGINT must still unmount.
    for (int sig : {SIGINT, SIGTERM, SIGHUP})
        std::signal(sig, SIG_DFL);
    if (fuse_set_signal_handlers(session) != 0) {
        fuse_unmount(f.get());
        return 1;
    }
    std::fprintf(stderr, "slowtrim: %s (%llu bytes) at %s%s, %s, discard %.3f ms + %.3f ms/MiB\n",
                 opts.backing.c_str(), static_cast<unsigned long long>(disk.size()), opts.mountpoint.c_str(),
                 disk_path, to_string(disk.shape().model),
                 static_cast<double>(disk.cost().latency.count()) / 1e6,
                 static_cast<double>(disk.cost().per_mib.count()) / 1e6);

    StatsReporter reporter(disk, opts.stats_path, opts.stats_interval);
    reporter.start();
    int rc = run_loop(f.get());
    fuse_remove_signal_handlers(session);
    fuse_unmount(f.get());
    f.reset();
    // After the unmount no request can come: these totals are final.
    Counters totals = reporter.finish();
    std::printf("%s\n", format_key_values(totals).c_str());
    std::fflush(stdout);
    if (!stopped_cleanly(rc)) {
        std::fprintf(stderr, "slowtrim: FUSE loop failed: %s\n", std::strerror(rc < 0 ? -rc : rc));
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    Options opts;
    try {
        opts = parse_options(argc, argv);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "slowtrim: %s\nTry 'slowtrim --help'.\n", e.what());
        return 2;
    }
    if (opts.help) {
        std::fputs(usage_text, stdout);
        return 0;
    }
    if (opts.version) {
        std::printf("slowtrim %s\n", SLOWTRIM_VERSION);
        return 0;
    }
    // Before any thread exists, so that they all inherit the blocked signal.
    block_report_signal();
    try {
        SlowDisk disk(opts.backing, opts.cost, opts.flush, opts.shape);
        return serve(disk, opts);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "slowtrim: %s\n", e.what());
        return 1;
    }
}
