// One chunk through the real ChunkRunner on its own event loop, run to its
// end (or given up on): its report and the own I/O the runner hands the
// idleness model afterwards.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "chunk_runner.hpp"
#include "event_loop.hpp"

namespace trimd::test {

struct OneChunkRun {
  std::optional<ChunkReport> report;  // none: it did not end in time
  std::map<std::string, IoBytes> own_io;
};

inline OneChunkRun run_one_chunk(ChunkRunner::Sampler sample, const ChunkJob& job,
                                 Duration give_up_after) {
  using namespace std::chrono_literals;
  EventLoop loop;
  OneChunkRun run;
  ChunkRunner runner(loop, std::move(sample), 20ms, [&](const ChunkReport& done) {
    run.report = done;
    loop.quit();
  });
  runner.start(job);
  Timer give_up(loop, [&] { loop.quit(); });
  give_up.arm_in(give_up_after);
  loop.run();
  if (!run.report) {
    runner.stop_all();
    runner.drain(10s);
  }
  run.own_io = runner.take_own_io();
  return run;
}

}  // namespace trimd::test
