// trimd: keeps SSDs and thin-provisioned storage trimmed in the background.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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

// --check-config: which files made the valid policy.
void report_valid_policy(const PolicySources& sources, const std::vector<std::string>& files) {
  const bool main_read = !files.empty() && files.front() == sources.main_file;
  if (main_read)
    std::printf("%s: configuration is valid\n", sources.main_file.c_str());
  else
    std::printf("%s does not exist: trimd uses the built-in defaults, which are valid\n",
                sources.main_file.c_str());
  for (std::size_t i = main_read ? 1 : 0; i < files.size(); ++i)
    std::printf("%s: drop-in is valid\n", files[i].c_str());
}

// One file of --cat-config under its name, as systemd-analyze cat-config
// prints it.
void print_policy_file(const std::string& path, const std::string& text, bool first) {
  std::printf("%s# %s\n%s", first ? "" : "\n", path.c_str(), text.c_str());
  if (!text.empty() && text.back() != '\n') std::putchar('\n');
}

// --cat-config: the files in the order they are merged.
int cat_policy(const PolicySources& sources) {
  try {
    const auto main_text = read_policy_file(sources.main_file);
    if (main_text)
      print_policy_file(sources.main_file, *main_text, true);
    else
      std::printf("# Configuration file %s not found\n", sources.main_file.c_str());
    for (const auto& file : list_drop_ins(sources))
      print_policy_file(file, read_policy_file(file).value_or(""), false);
  } catch (const ConfigError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "trimd: %s\n", e.what());
    return kExitConfig;
  }
  return 0;
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

  const PolicySources sources = policy_sources(options);
  if (options.cat_config) return cat_policy(sources);
  Config config;
  std::vector<std::string> files;
  try {
    config = load_policy(sources, &files);
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
    report_valid_policy(sources, files);
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
