#include "bus_errors.hpp"

#include <spdlog/spdlog.h>

#include "config.hpp"
#include "utf8.hpp"

namespace trimd::bus {

std::string error_name(ErrorKind kind) {
  const char* reason = "Failed";
  switch (kind) {
    case ErrorKind::NotFound: reason = "NotFound"; break;
    case ErrorKind::NotSupported: reason = "NotSupported"; break;
    case ErrorKind::InvalidArgument: reason = "InvalidArgument"; break;
    case ErrorKind::AccessDenied: reason = "AccessDenied"; break;
    case ErrorKind::Busy: reason = "Busy"; break;
    case ErrorKind::ConfigInvalid: reason = "ConfigInvalid"; break;
    case ErrorKind::Unavailable: reason = "Unavailable"; break;
  }
  return std::string("org.trimd.trimd1.Error.") + reason;
}

// Messages name mount points as the kernel gave them: escaped here, once,
// or sd-bus could not send the reply at all.
sdbus::Error make_error(ErrorKind kind, const std::string& message) {
  return sdbus::Error(error_name(kind), escape_bytes(message));
}

ErrorKind error_kind_for(ManagerError::Kind kind) {
  switch (kind) {
    case ManagerError::Kind::NotFound: return ErrorKind::NotFound;
    case ManagerError::Kind::NotSupported: return ErrorKind::NotSupported;
    case ManagerError::Kind::InvalidArgument: return ErrorKind::InvalidArgument;
    case ManagerError::Kind::Busy: return ErrorKind::Busy;
  }
  return ErrorKind::InvalidArgument;
}

sdbus::Error to_bus_error(const ManagerError& error) {
  return make_error(error_kind_for(error.kind()), error.what());
}

sdbus::Error current_exception_as_bus_error() {
  try {
    throw;
  } catch (const sdbus::Error& e) {
    return e;
  } catch (const ManagerError& e) {
    return to_bus_error(e);
  } catch (const ConfigError& e) {
    return make_error(ErrorKind::ConfigInvalid, e.what());
  } catch (const std::exception& e) {
    spdlog::error("D-Bus call failed unexpectedly: {}", e.what());
    return sdbus::Error("org.freedesktop.DBus.Error.Failed", escape_bytes(e.what()));
  }
}

}  // namespace trimd::bus
