// trimd: keeps SSDs and thin-provisioned storage trimmed in the background.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "build_config.hpp"
#include "config.hpp"
#include "daemon.hpp"
#include "etcd_credentials.hpp"
#include "journal_sink.hpp"
#include "json_sink.hpp"
#include "options.hpp"
#include "text_log.hpp"

using namespace trimd;

namespace {

// EX_CONFIG, as systemd's exit-status table calls it: a unit can refuse to
// restart into the same broken policy (RestartPreventExitStatus=).
constexpr int kExitConfig = 78;

void setup_logging(const std::string& level, LogFormat format) {
  std::shared_ptr<spdlog::logger> logger;
  if (format == LogFormat::Json) {
    logger = std::make_shared<spdlog::logger>("trimd", std::make_shared<JsonSink>());
  } else if (format == LogFormat::Auto && stderr_is_journal()) {
    // Under systemd: native journal entries, with priorities and fields.
    logger = std::make_shared<spdlog::logger>("trimd", std::make_shared<JournalSink>());
  } else {
    logger = spdlog::stderr_color_mt("trimd");
    logger->set_formatter(text_log_formatter());
  }
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "trimd: %s\nTry 'trimd --help' for more information.\n", e.what());
    return 2;
  }
  if (options.show_help) {
    std::fputs(usage_text("trimd").c_str(), stdout);
    return 0;
  }
  if (options.show_version) {
    std::puts("trimd " TRIMD_VERSION);
    return 0;
  }

  Config config;
  try {
    config = load_config(options.config_path, !options.config_given);
    etcd::check_fleet_credentials(config, options.config_path);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "trimd: %s\n", e.what());
    return kExitConfig;
  }
  if (options.check_config) {
    // Valid, but worth saying (the log says it again when the fleet starts).
    if (config.fleet)
      for (const auto& warning : etcd::cleartext_warnings(*config.fleet))
        std::fprintf(stderr, "trimd: %s: warning: %s\n", options.config_path.c_str(),
                     warning.c_str());
    // load_config() read nothing when the default file is missing.
    if (!options.config_given && !std::filesystem::exists(options.config_path))
      std::printf("%s does not exist: trimd uses the built-in defaults, which are valid\n",
                  options.config_path.c_str());
    else
      std::printf("%s: configuration is valid\n", options.config_path.c_str());
    return 0;
  }
  setup_logging(options.log_level.value_or(config.log_level), options.log_format);

  try {
    if (options.dry_run) return run_dry_run(config, options.state_dir);
    Daemon daemon(options, config);
    return daemon.run();
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
