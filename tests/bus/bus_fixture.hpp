// What every bus test needs, from the common kit (tests/common): a private
// dbus-daemon shaped like the system bus, child processes that never outlive
// the test, commands run as nobody, the CI rule.
#pragma once

#include "as_nobody.hpp"
#include "child_process.hpp"
#include "command.hpp"
#include "private_bus.hpp"
#include "require_program.hpp"
#include "temp_dir.hpp"
