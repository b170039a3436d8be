// Reads the live system's tables and hands the text to the engine's parsers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "block_topology.hpp"
#include "discovery.hpp"
#include "diskstats.hpp"
#include "fs_probe.hpp"

namespace trimd {

// The whole file, or nothing when it cannot be read.
std::optional<std::string> read_text_file(const std::string& path);

class SystemView {
 public:
  SystemView();
  Discovery scan();
  std::vector<DiskStat> diskstats();

 private:
  SysfsBlockInventory inventory_;
  SystemFsProber prober_;
};

}  // namespace trimd
