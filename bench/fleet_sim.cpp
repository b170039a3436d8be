// fleet_sim: the fleet's slots at scale, by simulation on one machine. Every
// simulated host is the real coordinator (daemon/fleet: its own etcd client,
// lease, claim and watch), against the etcd cluster
// named on the command line. A host arrives, asks for a slot of one backend,
// holds it for a random time and gives it back, or crashes while holding it
// (no release, no keep-alive: etcd expires its lease). The hosts are shared
// out over one event loop per CPU (--loops), each on a thread of its own, as
// a real host has its own loop; the bookkeeping is under one lock. A
// sampler, on the main thread's loop, reads the
// backend's claims every 100 ms. At the end one JSON report on stdout:
// the most hosts that believed they held a slot at once, the samples where a
// believer was not among etcd's first max_concurrent claims, grants out of
// arrival order, hand-over latencies after a release and after a crash, etcd
// requests per waiting host per minute, and this process's memory.
// bench/workloads/w6_fleet_scale.py runs it (docs/fleet.md, "At scale").
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "etcd_client.hpp"
#include "event_loop.hpp"
#include "fleet_coordinator.hpp"

namespace {

using namespace std::chrono_literals;
using trimd::Duration;
using trimd::EventLoop;
using trimd::Timer;
using Clock = std::chrono::steady_clock;
using trimd::fleet::Coordinator;
using trimd::fleet::SlotNews;

struct Options {
    std::vector<std::string> etcd;
    unsigned hosts = 1000;
    unsigned max_concurrent = 4;
    Duration ttl = 10s;
    Duration arrive_over = 20s;  // arrivals spread evenly over this
    Duration hold_min = 200ms, hold_max = 1000ms;
    double crash_share = 0.05;
    Duration give_up = 30min;
    unsigned seed = 1;
    unsigned loops = std::max(1u, std::thread::hardware_concurrency());
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One simulated host and what happened to it.
struct Host {
    enum class State { Coming, Waiting, Holding, Done, Crashed };
    unsigned index = 0;
    std::string name;
    EventLoop* loop = nullptr;  // its shard's
    bool will_crash = false;
    State state = State::Coming;
    std::unique_ptr<Coordinator> coordinator;
    std::unique_ptr<Timer> timer;
    std::optional<Clock::time_point> asked, granted, freed;
    std::int64_t create_revision = 0;  // its claim's, as the sampler last saw it
    Coordinator::Counters counters;    // kept when its coordinator goes
    unsigned lost = 0, unreachable = 0;
};

struct Grant {
    unsigned host = 0;
    Clock::time_point at;
    std::int64_t create_revision = 0;  // the claim's place in line (0: not sampled yet)
};

// A freed slot and the grant it went to.
struct Handover {
    double at_s = 0;       // released or crashed, into the run
    double latency_s = 0;  // until the next grant
    bool crash = false;
};

struct Freed {
    Clock::time_point at;       // released, or crashed
    Clock::time_point free_at;  // when the slot was free in etcd
    bool crash = false;
};

// One event loop and the hosts on it, run on a thread of its own; it stops
// when the simulation is over.
struct Shard {
    explicit Shard(const std::atomic<bool>& over)
        : watch(loop, [this, &over] {
              if (over)
                  loop.quit();
          })
    {
        watch.arm_every(50ms);
    }
    EventLoop loop;
    Timer watch;
    std::thread thread;
};

class Simulation {
public:
    Simulation(EventLoop& loop, Options options)
        : loop_(loop),
          options_(std::move(options)),
          random_(options_.seed),
          sampler_(loop, sampler_settings(options_)),
          sample_timer_(loop, [this] { sample(); }),
          give_up_(loop, [this] { over_ = true; })
    {
        for (unsigned i = 0; i < std::max(1u, options_.loops); ++i)
            shards_.push_back(std::make_unique<Shard>(over_));
        hosts_.resize(options_.hosts);
        std::bernoulli_distribution crashes(options_.crash_share);
        for (unsigned i = 0; i < options_.hosts; ++i) {
            Host& host = hosts_[i];
            host.index = i;
            host.name = "sim" + std::to_string(i);
            host.loop = &shards_[i % shards_.size()]->loop;
            host.will_crash = crashes(random_);
            host.timer = std::make_unique<Timer>(*host.loop, [this, i] { arrive(hosts_[i]); });
            host.timer->arm_in(options_.arrive_over * i / std::max(1u, options_.hosts));
        }
        started_ = Clock::now();
        sample_timer_.arm_every(100ms);
        give_up_.arm_in(options_.give_up);
    }

    // The shards on their threads and the sampler on this one, until every
    // host is done (or the run gives up).
    void run()
    {
        for (auto& shard : shards_)
            shard->thread = std::thread([&loop = shard->loop] { loop.run(); });
        Timer over(loop_, [this] {
            if (over_)
                loop_.quit();
        });
        over.arm_every(50ms);
        loop_.run();
        for (auto& shard : shards_)
            shard->thread.join();
    }

    // The most any loop's timer waited past its time.
    Duration lateness_max() const
    {
        Duration most = loop_.lateness_max();
        for (const auto& shard : shards_)
            most = std::max(most, shard->loop.lateness_max());
        return most;
    }

    nlohmann::json report() const;

private:
    static trimd::etcd::ClientSettings sampler_settings(const Options& options)
    {
        trimd::etcd::ClientSettings settings;
        settings.endpoints = options.etcd;
        settings.request_timeout = 2s;
        return settings;
    }

    trimd::FleetConfig config_for(const Host& host) const
    {
        trimd::FleetConfig config;
        // Each host talks to its own member first: the members share the load.
        config.endpoints = options_.etcd;
        std::rotate(config.endpoints.begin(), config.endpoints.begin() + host.index % config.endpoints.size(),
                    config.endpoints.end());
        config.max_concurrent = options_.max_concurrent;
        config.lease_ttl = options_.ttl;
        return config;
    }

    void arrive(Host& host)
    {
        const unsigned i = host.index;
        host.coordinator =
            std::make_unique<Coordinator>(*host.loop, config_for(host), host.name,
                                          [this, i](const SlotNews& news) { heard(hosts_[i], news); });
        {
            std::lock_guard lock(mutex_);
            host.state = Host::State::Waiting;
            host.asked = Clock::now();
        }
        host.coordinator->request("fs", "pool-a", "/sim/" + std::to_string(i));
    }

    void heard(Host& host, const SlotNews& news)
    {
        using Kind = SlotNews::Kind;
        std::lock_guard lock(mutex_);
        if (news.kind == Kind::Unreachable)
            ++host.unreachable;
        if (news.kind == Kind::Lost) {
            ++host.lost;
            // The reason's first words: "the lease expired", "its claim is gone
            // from etcd", "etcd has not confirmed this host's lease ..."
            ++lost_reasons_[news.reason.substr(0, 30)];
            lost_at_.push_back(std::round(seconds(Clock::now() - started_) * 10) / 10);
            if (host.state == Host::State::Holding) {
                --believers_;
                host.state = Host::State::Waiting;
            }
        }
        if (news.kind != Kind::Granted || host.state != Host::State::Waiting)
            return;
        host.state = Host::State::Holding;
        host.granted = Clock::now();
        grants_.push_back({host.index, *host.granted, host.create_revision});
        most_believers_ = std::max(most_believers_, ++believers_);
        if (host.will_crash) {
            host.timer = std::make_unique<Timer>(*host.loop, [this, i = host.index] { crash(hosts_[i]); });
            host.timer->arm_in(Duration{0});
            return;
        }
        std::uniform_int_distribution<std::int64_t> hold(options_.hold_min.count(),
                                                         options_.hold_max.count());
        host.timer = std::make_unique<Timer>(*host.loop, [this, i = host.index] { release(hosts_[i]); });
        host.timer->arm_in(Duration{hold(random_)});
    }

    // Keep what it asked of etcd; its coordinator goes. Under the lock.
    void retire(Host& host)
    {
        host.counters = host.coordinator->counters();
        host.freed = Clock::now();
        --believers_;
        ++finished_;
    }

    void release(Host& host)
    {
        {
            std::lock_guard lock(mutex_);
            if (host.state != Host::State::Holding)
                return;
            retire(host);
            host.state = Host::State::Done;
            freed_.push_back({*host.freed, *host.freed, false});
        }
        host.coordinator->release("fs");
        // The key is deleted; the lease is revoked after it, and the host goes.
        host.coordinator->revoke([] {});
        host.timer = std::make_unique<Timer>(*host.loop, [this, i = host.index] {
            hosts_[i].coordinator.reset();
            std::lock_guard lock(mutex_);
            if (finished_ == hosts_.size())
                over_ = true;
        });
        host.timer->arm_in(2s);
    }

    // No release, no revoke, no more keep-alives: as a kill -9 leaves it.
    void crash(Host& host)
    {
        {
            std::lock_guard lock(mutex_);
            if (host.state != Host::State::Holding)
                return;
            retire(host);
            host.state = Host::State::Crashed;
            crashed_keys_[trimd::slot_key("pool-a", host.name, "fs")] = host.index;
            if (finished_ == hosts_.size())
                over_ = true;
        }
        host.coordinator.reset();
    }

    void sample();
    void sampled(const trimd::etcd::Outcome& outcome, const std::vector<bool>& believed_before);
    std::vector<Handover> all_handovers() const;
    std::vector<double> handovers(bool crash) const;

    EventLoop& loop_;
    Options options_;
    std::atomic<bool> over_{false};
    std::vector<std::unique_ptr<Shard>> shards_;
    // Every Host's state and times, and everything below, between threads.
    mutable std::mutex mutex_;
    std::mt19937 random_;
    std::vector<Host> hosts_;
    Clock::time_point started_;
    unsigned believers_ = 0, most_believers_ = 0;
    std::size_t finished_ = 0;
    std::vector<Grant> grants_;  // in the order granted
    std::vector<Freed> freed_;
    std::map<std::string, unsigned> crashed_keys_;  // until the sampler sees them gone
    std::map<std::string, unsigned> lost_reasons_;
    std::vector<double> lost_at_;                          // seconds into the run
    nlohmann::json violations_ = nlohmann::json::array();  // the first few, for a person
    trimd::etcd::Client sampler_;
    Timer sample_timer_, give_up_;
    bool sampling_ = false;
    unsigned samples_ = 0, failed_samples_ = 0, sample_violations_ = 0, most_claims_ = 0;
};

// etcd's view every 100 ms: the first max_concurrent claims hold the slots,
// so a host that believed it held one across the whole read must be among
// them; each host's create revision (its place in line); when a crashed
// host's key went (its slot free).
void Simulation::sample()
{
    if (sampling_)
        return;  // the last read is still out
    sampling_ = true;
    std::vector<bool> believed(hosts_.size());
    {
        std::lock_guard lock(mutex_);
        for (const auto& host : hosts_)
            believed[host.index] = host.state == Host::State::Holding;
    }
    sampler_.call("/v3/kv/range", trimd::etcd::range_prefix_request(trimd::slot_prefix("pool-a"), 0, true),
                  [this, believed](const trimd::etcd::Outcome& outcome) { sampled(outcome, believed); });
}

void Simulation::sampled(const trimd::etcd::Outcome& outcome, const std::vector<bool>& believed_before)
{
    sampling_ = false;
    std::vector<trimd::etcd::KeyValue> kvs;
    try {
        if (!outcome.reply)
            throw std::runtime_error(outcome.error);
        kvs = trimd::etcd::range_of(*outcome.reply).kvs;
    } catch (const std::exception&) {
        ++failed_samples_;
        return;
    }
    ++samples_;
    std::sort(kvs.begin(), kvs.end(), [](const auto& a, const auto& b) {
        return std::tie(a.create_revision, a.key) < std::tie(b.create_revision, b.key);
    });
    most_claims_ = std::max<unsigned>(most_claims_, static_cast<unsigned>(kvs.size()));
    std::map<std::string, std::size_t> place;
    for (std::size_t i = 0; i < kvs.size(); ++i)
        place[kvs[i].key] = i;
    std::lock_guard lock(mutex_);
    for (auto& host : hosts_) {
        const auto key = trimd::slot_key("pool-a", host.name, "fs");
        const auto it = place.find(key);
        if (it != place.end())
            host.create_revision = kvs[it->second].create_revision;
        const bool believed_throughout = believed_before[host.index] && host.state == Host::State::Holding;
        if (believed_throughout && (it == place.end() || it->second >= options_.max_concurrent)) {
            ++sample_violations_;
            if (violations_.size() < 10)
                violations_.push_back({{"host", host.index},
                                       {"place", it == place.end() ? -1 : static_cast<long>(it->second)},
                                       {"at_s", seconds(Clock::now() - started_)}});
        }
    }
    const auto now = Clock::now();
    for (auto it = crashed_keys_.begin(); it != crashed_keys_.end();) {
        if (place.count(it->first)) {
            ++it;
            continue;
        }
        freed_.push_back({*hosts_[it->second].freed, now, true});
        it = crashed_keys_.erase(it);
    }
}

// Each freed slot, in the order it became free in etcd, goes to the next
// grant after that: its hand-over latency, from the release (or the crash).
std::vector<Handover> Simulation::all_handovers() const
{
    auto freed = freed_;
    std::sort(freed.begin(), freed.end(),
              [](const Freed& a, const Freed& b) { return a.free_at < b.free_at; });
    std::vector<Clock::time_point> grants;
    for (const auto& grant : grants_)
        grants.push_back(grant.at);
    std::sort(grants.begin(), grants.end());
    std::vector<Handover> out;
    std::size_t next = std::min<std::size_t>(options_.max_concurrent, grants.size());
    for (const auto& slot : freed) {
        // A crash's slot is seen free by a sample up to 100 ms late.
        const auto free_at = slot.crash ? slot.free_at - 100ms : slot.free_at;
        while (next < grants.size() && grants[next] < free_at)
            ++next;
        if (next == grants.size())
            break;
        out.push_back({seconds(slot.at - started_), seconds(grants[next] - slot.at), slot.crash});
        ++next;
    }
    return out;
}

std::vector<double> Simulation::handovers(bool crash) const
{
    std::vector<double> out;
    for (const auto& handover : all_handovers())
        if (handover.crash == crash)
            out.push_back(handover.latency_s);
    return out;
}

double percentile(std::vector<double> values, double p)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1,
                           static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

nlohmann::json latency(const std::vector<double>& values)
{
    return {{"n", values.size()},
            {"p50_s", percentile(values, 0.5)},
            {"p99_s", percentile(values, 0.99)},
            {"max_s", values.empty() ? 0.0 : *std::max_element(values.begin(), values.end())}};
}

std::size_t status_kib(const char* field)
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(field, 0) == 0)
            return std::stoul(line.substr(std::string(field).size()));
    return 0;
}

nlohmann::json Simulation::report() const
{
    // Grants out of arrival order: a claim granted more than the news' skew
    // (a second) after one that was put behind it. A host that lost its
    // claim (its lease expired) queued again at the back with a new one.
    unsigned out_of_order = 0;
    for (const auto& a : grants_)
        for (const auto& b : grants_)
            if (a.create_revision && b.create_revision && a.create_revision < b.create_revision &&
                a.at > b.at + 1s)
                ++out_of_order;
    double waiting_minutes = 0;
    std::uint64_t requests = 0, keepalives = 0, fences = 0, far_reads = 0, watches = 0;
    unsigned lost = 0, unreachable = 0;
    for (const auto& host : hosts_) {
        if (host.asked)
            waiting_minutes += seconds((host.granted ? *host.granted : Clock::now()) - *host.asked) / 60;
        const auto& c = host.coordinator ? host.coordinator->counters() : host.counters;
        requests += c.reads + c.puts + c.deletes + c.watches;
        keepalives += c.keepalives;
        fences += c.fences;
        far_reads += c.far_reads;
        watches += c.watches;
        lost += host.lost;
        unreachable += host.unreachable;
    }
    unsigned done = 0, crashed = 0;
    for (const auto& host : hosts_) {
        done += host.state == Host::State::Done;
        crashed += host.state == Host::State::Crashed;
    }
    return {
        {"hosts", hosts_.size()},
        {"max_concurrent", options_.max_concurrent},
        {"lease_ttl_s", seconds(options_.ttl)},
        {"arrive_over_s", seconds(options_.arrive_over)},
        {"released", done},
        {"crashed", crashed},
        {"duration_s", seconds(Clock::now() - started_)},
        {"most_believers", most_believers_},
        {"samples", samples_},
        {"failed_samples", failed_samples_},
        {"sample_violations", sample_violations_},
        {"violations", violations_},
        {"most_claims", most_claims_},
        {"grants", grants_.size()},
        {"out_of_order", out_of_order},
        {"handover_release", latency(handovers(false))},
        {"handover_crash", latency(handovers(true))},
        // Every hand-over as [when, how long, crash]: the report splits them
        // around the leader's stop.
        {"handovers",
         [this] {
             auto list = nlohmann::json::array();
             for (const auto& h : all_handovers())
                 list.push_back(
                     {std::round(h.at_s * 1000) / 1000, std::round(h.latency_s * 1000) / 1000, h.crash});
             return list;
         }()},
        {"waiting_host_minutes", waiting_minutes},
        {"requests", requests},
        {"requests_per_waiting_host_minute",
         waiting_minutes > 0 ? static_cast<double>(requests) / waiting_minutes : 0.0},
        {"keepalives", keepalives},
        {"far_reads", far_reads},
        {"watches", watches},
        {"loops", shards_.size()},
        {"fences", fences},
        {"lost", lost},
        {"lost_reasons", lost_reasons_},
        {"lost_at_s", lost_at_},
        {"unreachable", unreachable},
        {"rss_hwm_kib", status_kib("VmHWM:")},
    };
}

Duration parse_duration(const std::string& text)
{
    const double value = std::stod(text);
    if (text.ends_with("ms"))
        return Duration{static_cast<std::int64_t>(value * 1000)};
    return Duration{static_cast<std::int64_t>(value * 1'000'000)};
}

Options parse(int argc, char** argv)
{
    Options options;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string name = argv[i], value = argv[i + 1];
        if (name == "--etcd") {
            for (std::size_t at = 0; at <= value.size();) {
                const auto comma = std::min(value.find(',', at), value.size());
                options.etcd.push_back(value.substr(at, comma - at));
                at = comma + 1;
            }
        } else if (name == "--hosts") {
            options.hosts = static_cast<unsigned>(std::stoul(value));
        } else if (name == "--max-concurrent") {
            options.max_concurrent = static_cast<unsigned>(std::stoul(value));
        } else if (name == "--ttl") {
            options.ttl = parse_duration(value);
        } else if (name == "--arrive-over") {
            options.arrive_over = parse_duration(value);
        } else if (name == "--hold-min") {
            options.hold_min = parse_duration(value);
        } else if (name == "--hold-max") {
            options.hold_max = parse_duration(value);
        } else if (name == "--crash") {
            options.crash_share = std::stod(value);
        } else if (name == "--give-up") {
            options.give_up = parse_duration(value);
        } else if (name == "--seed") {
            options.seed = static_cast<unsigned>(std::stoul(value));
        } else if (name == "--loops") {
            options.loops = static_cast<unsigned>(std::stoul(value));
        } else {
            throw std::invalid_argument("unknown option " + name);
        }
    }
    if (options.etcd.empty())
        throw std::invalid_argument("--etcd URL[,URL...] is needed");
    return options;
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        const auto options = parse(argc, argv);
        // Each host has a few sockets and timers: far more than 1024 files.
        rlimit files{65536, 65536};
        if (setrlimit(RLIMIT_NOFILE, &files) != 0)
            std::perror("fleet_sim: setrlimit(RLIMIT_NOFILE)");
        const auto baseline_kib = status_kib("VmRSS:");
        EventLoop loop;
        Simulation simulation(loop, options);
        simulation.run();
        auto report = simulation.report();
        report["rss_baseline_kib"] = baseline_kib;
        // A loop carries hundreds of hosts here, where each real host has
        // its own: a late keep-alive timer loses a lease in the simulator alone.
        report["loop_lateness_max_s"] = std::chrono::duration<double>(simulation.lateness_max()).count();
        std::printf("%s\n", report.dump().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fleet_sim: %s\n", e.what());
        return 2;
    }
}
