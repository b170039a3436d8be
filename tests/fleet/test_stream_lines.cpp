// A watch stream cut into messages (stream_lines.hpp): whole lines from any
// pieces, and each bound (a line's bytes, a turn's messages and bytes, a
// message's shape) kept by dropping what is over it, in its place a gap.
#include "stream_lines.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using trimd::etcd::StreamLines;

TEST(AStream, ReassemblesLinesFromAnyPieces) {
  StreamLines lines;
  const std::string text = "{\"a\":1}\n\n{\"b\":[2]}\n{\"c\"";
  for (const char c : text) lines.feed(std::string_view(&c, 1));
  const auto messages = lines.take();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0]->at("a"), 1);
  EXPECT_EQ(messages[1]->at("b")[0], 2);
  lines.feed(":3}\n");
  EXPECT_EQ(lines.take().at(0)->at("c"), 3);
}

TEST(AStream, SkipsALineOverItsBoundAndLeavesAGapThenGoesOn) {
  StreamLines lines;
  lines.feed("{\"x\":\"");
  const std::string chunk(64 * 1024, 'x');
  for (int i = 0; i < 64; ++i) lines.feed(chunk);  // 4 MiB of one line
  lines.feed("\"}\n{\"after\":true}\n");
  const auto messages = lines.take();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_FALSE(messages[0]) << "the long line is a gap";
  EXPECT_EQ(messages[1]->at("after"), true);
}

TEST(AStream, TakesAtMostATurnsWorthOfMessagesAndMarksTheRestAsOneGap) {
  StreamLines lines;
  std::string many;
  for (std::size_t i = 0; i < trimd::etcd::kMaxStreamMessagesPerTurn + 50; ++i)
    many += "{\"n\":" + std::to_string(i) + "}\n";
  lines.feed(many);
  const auto messages = lines.take();
  ASSERT_EQ(messages.size(), trimd::etcd::kMaxStreamMessagesPerTurn + 1);
  EXPECT_FALSE(messages.back());
  lines.feed("{\"next\":1}\n");
  EXPECT_TRUE(lines.take().at(0)) << "a new turn has its budget again";
}

TEST(AStream, TakesAtMostATurnsWorthOfBytes) {
  StreamLines lines;
  const std::string line = "{\"v\":\"" + std::string(200 * 1024, 'v') + "\"}\n";
  for (int i = 0; i < 8; ++i) lines.feed(line);  // 1.6 MiB in 8 lines
  const auto messages = lines.take();
  ASSERT_EQ(messages.size(), 6u);  // 5 within 1 MiB, then one gap
  EXPECT_FALSE(messages.back());
}

TEST(AStream, AMessageThatIsNotJsonOrTooDeepIsAGap) {
  StreamLines lines;
  lines.feed("not json\n" + std::string(100, '[') + std::string(100, ']') + "\n{}\n");
  const auto messages = lines.take();
  ASSERT_EQ(messages.size(), 2u);  // the two bad ones are one gap
  EXPECT_FALSE(messages[0]);
  EXPECT_TRUE(messages[1]);
}

}  // namespace
