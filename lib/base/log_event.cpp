#include "log_event.hpp"

namespace trimd {

namespace {

thread_local const LogFields* t_current_fields = nullptr;

// Sets this thread's fields for the duration of one log call.
class FieldsScope {
 public:
  explicit FieldsScope(const LogFields& fields) : previous_(t_current_fields) {
    t_current_fields = &fields;
  }
  ~FieldsScope() { t_current_fields = previous_; }
  FieldsScope(const FieldsScope&) = delete;
  FieldsScope& operator=(const FieldsScope&) = delete;

 private:
  const LogFields* previous_;
};

}  // namespace

std::string_view message_id(EventId id) {
  switch (id) {
    case EventId::PassStarted: return "7f0b13752fa4425c84745f01474944d9";
    case EventId::PassFinished: return "7b0a00ec70094b2393531ef1942a9c1e";
    case EventId::PassFailed: return "6799e1ff84064f9b9c1fe6dc5eb44fcd";
    case EventId::PassPreempted: return "ace649d494e64a3884e0ff0cfe8a0083";
    case EventId::FilesystemSkipped: return "a4cff09dff824d22b3b01436151b4bf2";
    case EventId::DaemonStarted: return "78b3f045be954bbeb5e8e978e72188ae";
    case EventId::ConfigReloaded: return "ec101ae8b3c34b8cb1aa75bd722b04db";
    case EventId::ReloadFailed: return "d50da2cf4dac464fa0f25f10fc339f71";
    case EventId::PassResumed: return "6aba4b9199f2484a9d48d709fcfb519c";
    case EventId::ChunkStarted: return "28f2cc93e3994bc5818be17642806327";
    case EventId::PassPaused: return "1b1027bf857d4bde9b77b39e2b90c773";
    case EventId::FilesystemGone: return "9be4f094349546f98d66a35bb4ae4993";
    case EventId::RunnerKilled: return "7df5f0737dad484eb73896e664dcd23b";
    case EventId::WaitingForIdle: return "98a12ccba793483d8dbef5ee25adb6dc";
    case EventId::FleetSlotAcquired: return "22ab84e37f32423ebe3c68b6f41f26e4";
    case EventId::FleetSlotReleased: return "6813f772eb084022b870772e5f2c37fe";
    case EventId::FleetSlotLost: return "9a952037680b4abd98cf49320bceea7b";
    case EventId::FleetUnreachable: return "030f044dbbc34b98b67d421ae1a99bca";
  }
  return {};
}

void log_event(EventId id, spdlog::level::level_enum level, const LogFields& fields,
               std::string_view message) {
  LogFields all;
  all.reserve(fields.size() + 1);
  all.push_back({"MESSAGE_ID", std::string(message_id(id))});
  all.insert(all.end(), fields.begin(), fields.end());
  const FieldsScope scope(all);
  spdlog::log(level, "{}", message);
}

const LogFields& current_log_fields() {
  static const LogFields kNone;
  return t_current_fields ? *t_current_fields : kNone;
}

}  // namespace trimd
