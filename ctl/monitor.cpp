// trimctl monitor: every signal and property change, one timestamped line
// each (JSON lines with --json), until SIGINT or SIGTERM.
#include <cstdio>

#include "commands.hpp"
#include "format.hpp"
#include "json.hpp"
#include "report.hpp"
#include "terminal_text.hpp"

namespace trimctl {

namespace {

class MonitorPrinter final : public EventSink {
 public:
  MonitorPrinter(JsonMode json, bool quiet) : json_(json), quiet_(quiet) {}

  void know(const FilesystemInfo& fs) { mount_points_[fs.object_path] = fs.mount_point; }

  void on_trim_started(const std::string& object) override {
    print(object, "TrimStarted", "", Json::object());
  }

  void on_trim_finished(const std::string& object, const std::string& result, uint64_t bytes,
                        uint64_t usec) override {
    print(object, "TrimFinished", trim_result_text(result, bytes, usec),
          Json{{"result", result}, {"bytes", bytes}, {"usec", usec}});
  }

  void on_properties_changed(const std::string& object, const std::string& interface,
                             const PropertyMap& changed) override {
    if (changed.empty()) return;
    if (interface == kFilesystemInterface) {
      if (const auto it = changed.find("MountPoint"); it != changed.end())
        if (const auto* mount_point = std::get_if<std::string>(&it->second))
          mount_points_[object] = *mount_point;
    }
    print(object, "PropertiesChanged", properties_text(changed),
          Json{{"interface", interface}, {"changed", properties_json(changed)}});
  }

  void on_filesystem_added(const FilesystemInfo& fs) override {
    know(fs);
    print(fs.object_path, "InterfacesAdded", fs.fs_type + " on " + fs.device,
          Json{{"filesystem", filesystem_json(fs)}});
  }

  void on_filesystem_removed(const std::string& object) override {
    print(object, "InterfacesRemoved", "", Json::object());
    mount_points_.erase(object);
  }

  void on_daemon_presence(bool present) override {
    print(kManagerPath, present ? "DaemonAppeared" : "DaemonVanished",
          present ? "trimd is on the bus" : "trimd left the bus", Json::object());
  }

 private:
  // The manager speaks as "trimd", a filesystem by its mount point.
  std::string subject(const std::string& object) const {
    if (object == kManagerPath) return "trimd";
    const auto it = mount_points_.find(object);
    return it == mount_points_.end() ? object : it->second;
  }

  void print(const std::string& object, const char* event, const std::string& text,
             const Json& details) const {
    if (quiet_) return;
    const uint64_t now = realtime_now_usec();
    if (json_ != JsonMode::Off) {
      Json line{{"time_usec", now}, {"event", event}, {"object", object}};
      if (object != kManagerPath) line["mount_point"] = subject(object);
      line.update(details);  // the event's own members, after these
      std::printf("%s\n", json_text(line, json_).c_str());
    } else {
      std::fputs(text_line(format_log_time(now) + " " + subject(object) + ": " + event +
                           (text.empty() ? "" : " ") + text)
                     .c_str(),
                 stdout);
    }
    std::fflush(stdout);  // a pipe reader wants each event as it happens
  }

  JsonMode json_;
  bool quiet_;
  std::map<std::string, std::string> mount_points_;
};

}  // namespace

int monitor_command(Client& client, const Options& options) {
  MonitorPrinter printer(options.json, options.quiet);
  client.subscribe(printer);
  for (const auto& fs : client.filesystems()) printer.know(fs);
  client.dispatch_until([] { return false; });
  return kExitOk;  // stopped by SIGINT or SIGTERM, as asked
}

}  // namespace trimctl
