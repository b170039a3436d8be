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
#define TRIMD_EVENT(name, text) \
  case EventId::name:           \
    return text;
#include "event_ids.def"
#undef TRIMD_EVENT
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
