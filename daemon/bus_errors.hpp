// org.trimd.trimd1.Error.*: the errors trimd's methods answer with, and the
// translation of engine exceptions into them.
#pragma once

#include <exception>
#include <string>

#include <sdbus-c++/Error.h>

#include "manager.hpp"

namespace trimd::bus {

enum class ErrorKind {
  NotFound,
  NotSupported,
  InvalidArgument,
  AccessDenied,
  Busy,
  ConfigInvalid,
  Unavailable
};

// "org.trimd.trimd1.Error.NotFound", ...
std::string error_name(ErrorKind kind);
// `message` may hold raw bytes: they are escaped as bus_string() does.
sdbus::Error make_error(ErrorKind kind, const std::string& message);

ErrorKind error_kind_for(ManagerError::Kind kind);
sdbus::Error to_bus_error(const ManagerError& error);

// The reply for whatever a method handler threw: our own errors as they
// are, engine and config errors translated, anything else as
// org.freedesktop.DBus.Error.Failed. Call from inside a catch block.
sdbus::Error current_exception_as_bus_error();

}  // namespace trimd::bus
