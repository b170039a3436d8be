// org.freedesktop.systemd1: GetUnitByPID(own pid) -> Unit.Job -> Job.JobType.
#include "unit_job.hpp"

#include <systemd/sd-bus.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace trimd {

namespace {

constexpr const char* kSystemd = "org.freedesktop.systemd1";

struct BusUnref {
  void operator()(sd_bus* bus) const { sd_bus_flush_close_unref(bus); }
};
struct MessageUnref {
  void operator()(sd_bus_message* message) const { sd_bus_message_unref(message); }
};
using Bus = std::unique_ptr<sd_bus, BusUnref>;
using Message = std::unique_ptr<sd_bus_message, MessageUnref>;

// An sd_bus_error freed on every way out.
struct Error {
  sd_bus_error error{};  // SD_BUS_ERROR_NULL, without its C99 compound literal
  ~Error() { sd_bus_error_free(&error); }
};

std::optional<std::string> unit_path(sd_bus* bus) {
  Error error;
  sd_bus_message* raw = nullptr;
  if (sd_bus_call_method(bus, kSystemd, "/org/freedesktop/systemd1",
                         "org.freedesktop.systemd1.Manager", "GetUnitByPID", &error.error, &raw,
                         "u", static_cast<std::uint32_t>(::getpid())) < 0)
    return std::nullopt;
  const Message reply(raw);
  const char* path = nullptr;
  if (sd_bus_message_read(reply.get(), "o", &path) < 0 || !path) return std::nullopt;
  return std::string(path);
}

std::optional<std::string> job_path(sd_bus* bus, const std::string& unit) {
  Error error;
  sd_bus_message* raw = nullptr;
  if (sd_bus_get_property(bus, kSystemd, unit.c_str(), "org.freedesktop.systemd1.Unit", "Job",
                          &error.error, &raw, "(uo)") < 0)
    return std::nullopt;
  const Message reply(raw);
  std::uint32_t id = 0;
  const char* path = nullptr;
  if (sd_bus_message_read(reply.get(), "(uo)", &id, &path) < 0 || id == 0 || !path)
    return std::nullopt;
  return std::string(path);
}

}  // namespace

std::optional<std::string> own_unit_job_type(std::chrono::milliseconds timeout) {
  // Only under systemd: elsewhere there is nobody to ask.
  if (!std::getenv("INVOCATION_ID")) return std::nullopt;
  sd_bus* raw = nullptr;
  if (sd_bus_open_system(&raw) < 0) return std::nullopt;
  const Bus bus(raw);
  sd_bus_set_method_call_timeout(bus.get(), static_cast<std::uint64_t>(timeout.count()) * 1000);
  const auto unit = unit_path(bus.get());
  const auto job = unit ? job_path(bus.get(), *unit) : std::nullopt;
  if (!job) return std::nullopt;
  Error error;
  char* type = nullptr;
  if (sd_bus_get_property_string(bus.get(), kSystemd, job->c_str(), "org.freedesktop.systemd1.Job",
                                 "JobType", &error.error, &type) < 0 ||
      !type)
    return std::nullopt;
  std::string result(type);
  std::free(type);
  return result;
}

}  // namespace trimd
