// Many method calls to trimd at once, from whoever runs this (the fleet
// tier runs it as nobody, uid 65534): CONNECTIONS connections to the bus at
// ADDRESS, CALLS calls each, all sent before any reply is read, then every
// reply awaited (60 s at most). Prints one line a test can read:
//   answered=N ok=N busy=N other=N most_rows=N
// Usage: fleet_call_flood ADDRESS CONNECTIONS CALLS METHOD
#include <systemd/sd-bus.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Tally {
  unsigned answered = 0, ok = 0, busy = 0, other = 0, most_rows = 0;
};

// GetFleet's and GetFleetView's replies end with the array of claims.
unsigned rows_in(sd_bus_message* reply, const char* method) {
  if (std::strcmp(method, "GetFleetView") == 0 && sd_bus_message_skip(reply, "a(suttttbs)") < 0)
    return 0;
  const char* row = std::strcmp(method, "GetFleetView") == 0 ? "(suussbbs)" : "(suussbb)";
  if (sd_bus_message_enter_container(reply, SD_BUS_TYPE_ARRAY, row) < 0) return 0;
  unsigned rows = 0;
  while (sd_bus_message_skip(reply, row) > 0) ++rows;
  return rows;
}

struct Call {
  Tally* tally;
  const char* method;
};

int on_reply(sd_bus_message* reply, void* data, sd_bus_error*) {
  auto& call = *static_cast<Call*>(data);
  auto& tally = *call.tally;
  ++tally.answered;
  if (const sd_bus_error* error = sd_bus_message_get_error(reply)) {
    if (error->name && std::strcmp(error->name, "org.trimd.trimd1.Error.Busy") == 0)
      ++tally.busy;
    else
      ++tally.other;
    return 0;
  }
  ++tally.ok;
  const unsigned rows = rows_in(reply, call.method);
  if (rows > tally.most_rows) tally.most_rows = rows;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s ADDRESS CONNECTIONS CALLS METHOD\n", argv[0]);
    return 2;
  }
  const unsigned connections = static_cast<unsigned>(std::atoi(argv[2]));
  const unsigned calls = static_cast<unsigned>(std::atoi(argv[3]));
  const char* method = argv[4];
  Tally tally;
  Call call{&tally, method};
  std::vector<sd_bus*> buses;
  for (unsigned c = 0; c < connections; ++c) {
    sd_bus* bus = nullptr;
    if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, argv[1]) < 0 ||
        sd_bus_set_bus_client(bus, 1) < 0 || sd_bus_start(bus) < 0) {
      std::fprintf(stderr, "cannot connect to %s\n", argv[1]);
      return 1;
    }
    buses.push_back(bus);
    for (unsigned i = 0; i < calls; ++i)
      if (sd_bus_call_method_async(bus, nullptr, "org.trimd.trimd1", "/org/trimd/trimd1",
                                   "org.trimd.trimd1.Manager", method, on_reply, &call, "") < 0) {
        std::fprintf(stderr, "cannot send call %u\n", i);
        return 1;
      }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{60};
  while (tally.answered < connections * calls && std::chrono::steady_clock::now() < deadline)
    for (sd_bus* bus : buses) {
      while (sd_bus_process(bus, nullptr) > 0) {
      }
      sd_bus_wait(bus, 10000);
    }
  std::printf("answered=%u ok=%u busy=%u other=%u most_rows=%u\n", tally.answered, tally.ok,
              tally.busy, tally.other, tally.most_rows);
  for (sd_bus* bus : buses) sd_bus_flush_close_unref(bus);
  return tally.answered == connections * calls ? 0 : 1;
}
