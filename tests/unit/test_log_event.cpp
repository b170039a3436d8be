#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>

#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "journal_fields.hpp"
#include "log_event.hpp"
#include "trimd_log.hpp"

namespace trimd {
namespace {

using ::testing::ElementsAre;

// Records what a field-aware sink sees for each line.
class RecordingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::pair<std::string, LogFields>> lines;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    lines.emplace_back(std::string(msg.payload.data(), msg.payload.size()), current_log_fields());
  }
  void flush_() override {}
};

class LogEventTest : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink_));
    spdlog::set_level(spdlog::level::debug);
  }
  void TearDown() override { spdlog::set_default_logger(previous_); }

  std::shared_ptr<RecordingSink> sink_ = std::make_shared<RecordingSink>();
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(LogEventTest, HandsTheSinkTheMessageIdAndFieldsOfTheEvent) {
  log_event(EventId::PassFinished, spdlog::level::info,
            {{"MOUNT_POINT", "/home"}, {"BYTES", "4096"}}, "pass over /home finished");
  ASSERT_EQ(sink_->lines.size(), 1u);
  EXPECT_EQ(sink_->lines[0].first, "pass over /home finished");
  EXPECT_THAT(sink_->lines[0].second,
              ElementsAre(LogField{"MESSAGE_ID", std::string(message_id(EventId::PassFinished))},
                          LogField{"MOUNT_POINT", "/home"}, LogField{"BYTES", "4096"}));
}

TEST_F(LogEventTest, PlainLogCallsCarryNoFields) {
  log_event(EventId::PassStarted, spdlog::level::info, {}, "first");
  spdlog::info("plain");
  ASSERT_EQ(sink_->lines.size(), 2u);
  EXPECT_TRUE(sink_->lines[1].second.empty());
}

TEST_F(LogEventTest, LinesBelowTheLevelAreNotLogged) {
  spdlog::set_level(spdlog::level::warn);
  log_event(EventId::PassStarted, spdlog::level::info, {}, "dropped");
  EXPECT_TRUE(sink_->lines.empty());
}

TEST(MessageId, EveryEventHasItsOwn128BitId) {
  std::set<std::string_view> seen;
  for (EventId id : kAllEventIds) {
    const auto text = message_id(id);
    EXPECT_EQ(text.size(), 32u);
    EXPECT_EQ(text.find_first_not_of("0123456789abcdef"), std::string_view::npos) << text;
    seen.insert(text);
  }
  EXPECT_EQ(seen.size(), std::size(kAllEventIds));
}

TEST(MessageId, EveryIdIsListedInTheManualPage) {
  std::ifstream in(std::string(TRIMD_TEST_DATA) + "/../../man/trimd.8");
  std::stringstream page;
  page << in.rdbuf();
  ASSERT_FALSE(page.str().empty());
  for (EventId id : kAllEventIds)
    EXPECT_NE(page.str().find(message_id(id)), std::string::npos) << message_id(id);
}

TEST(SyslogPriority, MapsSpdlogLevelsToSyslogs) {
  EXPECT_EQ(syslog_priority(spdlog::level::critical), 2);
  EXPECT_EQ(syslog_priority(spdlog::level::err), 3);
  EXPECT_EQ(syslog_priority(spdlog::level::warn), 4);
  EXPECT_EQ(syslog_priority(spdlog::level::info), 6);
  EXPECT_EQ(syslog_priority(spdlog::level::debug), 7);
  EXPECT_EQ(syslog_priority(spdlog::level::trace), 7);
}

TEST(JournalFieldName, AcceptsUpperCaseDigitsAndUnderscores) {
  EXPECT_TRUE(valid_journal_field_name("MOUNT_POINT"));
  EXPECT_TRUE(valid_journal_field_name("DURATION_USEC"));
  EXPECT_TRUE(valid_journal_field_name("A1"));
  EXPECT_TRUE(valid_journal_field_name(std::string(64, 'A')));
}

TEST(JournalFieldName, RejectsWhatJournaldRejects) {
  EXPECT_FALSE(valid_journal_field_name(""));
  EXPECT_FALSE(valid_journal_field_name("_PID"));  // trusted, set by journald
  EXPECT_FALSE(valid_journal_field_name("1ST"));
  EXPECT_FALSE(valid_journal_field_name("mount_point"));
  EXPECT_FALSE(valid_journal_field_name("MOUNT-POINT"));
  EXPECT_FALSE(valid_journal_field_name("A=B"));
  EXPECT_FALSE(valid_journal_field_name(std::string(65, 'A')));
}

TEST(JournalEntry, PutsMessagePriorityAndIdentifierFirstThenTheFields) {
  const auto entry =
      journal_entry("trimmed /home", 6, "trimd", {{"MESSAGE_ID", "abc"}, {"MOUNT_POINT", "/home"}});
  EXPECT_THAT(entry, ElementsAre("MESSAGE=trimmed /home", "PRIORITY=6", "SYSLOG_IDENTIFIER=trimd",
                                 "MESSAGE_ID=abc", "MOUNT_POINT=/home"));
}

TEST(JournalEntry, DropsInvalidFieldsAndOnesOnlyTheSinkSets) {
  const auto entry = journal_entry(
      "x", 4, "trimd", {{"_PID", "1"}, {"PRIORITY", "0"}, {"bad", "y"}, {"OK", "a\nb"}});
  EXPECT_THAT(entry, ElementsAre("MESSAGE=x", "PRIORITY=4", "SYSLOG_IDENTIFIER=trimd", "OK=a\nb"));
}

TEST(JsonLogLine, IsTheEntryAsOneFlatObjectOfStringsAfterTheTimestamp) {
  EXPECT_EQ(
      json_log_line(1700000000123456, {"MESSAGE=trimmed /home", "PRIORITY=6", "MOUNT_POINT=/home"}),
      R"({"__REALTIME_TIMESTAMP":"1700000000123456","MESSAGE":"trimmed /home",)"
      R"("PRIORITY":"6","MOUNT_POINT":"/home"})");
}

TEST(JsonLogLine, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_log_line(1, {"MESSAGE=a \"b\" \\ c\nd\x01"}),
            R"({"__REALTIME_TIMESTAMP":"1","MESSAGE":"a \"b\" \\ c\nd\u0001"})");
}

TEST(JsonLogLine, KeepsUtf8AndGivesOtherBytesAsAnArrayAsJournalctlDoes) {
  EXPECT_EQ(json_log_line(1, {"MOUNT_POINT=/mnt/\xc3\xa9t\xc3\xa9"}),
            "{\"__REALTIME_TIMESTAMP\":\"1\",\"MOUNT_POINT\":\"/mnt/\xc3\xa9t\xc3\xa9\"}");
  EXPECT_EQ(json_log_line(1, {"MOUNT_POINT=/m\xff"}),
            R"({"__REALTIME_TIMESTAMP":"1","MOUNT_POINT":[47,109,255]})");
}

TEST(JsonLogLine, ReadsBackFieldForFieldWithTheTestsReader) {
  const std::string odd_mount("/mnt/a \"q\"\n\xfe", 13);
  const auto line = json_log_line(
      42, journal_entry("done", 6, "trimd", {{"MESSAGE_ID", "x"}, {"MOUNT_POINT", odd_mount}}));
  const auto entry = test::parse_log_line(line);
  ASSERT_TRUE(entry) << line;
  EXPECT_EQ(entry->at("__REALTIME_TIMESTAMP"), "42");
  EXPECT_EQ(entry->at("MESSAGE"), "done");
  EXPECT_EQ(entry->at("PRIORITY"), "6");
  EXPECT_EQ(entry->at("MOUNT_POINT"), odd_mount);
}

TEST(JsonLogLine, TheTestsReaderRejectsWhatIsNotOneObject) {
  EXPECT_FALSE(test::parse_log_line("2026-12-01 10:00:00.000 info: trimd started"));
  EXPECT_FALSE(test::parse_log_line(R"({"A":"b")"));
  EXPECT_FALSE(test::parse_log_line(R"({"A":"b"} trailing)"));
  EXPECT_FALSE(test::parse_log_line(R"({"A":[1,)"));
}

TEST(JournalStream, MatchesOnlyTheDeviceAndInodeOfStderr) {
  EXPECT_TRUE(journal_stream_matches("8:12345", 8, 12345));
  EXPECT_FALSE(journal_stream_matches("8:12345", 8, 12346));
  EXPECT_FALSE(journal_stream_matches("9:12345", 8, 12345));
}

TEST(JournalStream, RejectsMalformedValues) {
  for (const char* text : {"", "8", "8:", ":12345", "8:12345x", "x:1", "8;12345"})
    EXPECT_FALSE(journal_stream_matches(text, 8, 12345)) << text;
}

}  // namespace
}  // namespace trimd
