// trimctl's terminal decisions, fitted tables and pretty JSON, bus-free.
#include <gtest/gtest.h>

#include <map>

#include "json.hpp"
#include "pager.hpp"
#include "polkit_agent.hpp"
#include "table.hpp"
#include "terminal.hpp"

using namespace trimctl;

namespace {

TerminalFacts facts(std::map<std::string, std::string> environment, bool tty,
                    std::optional<std::size_t> window = std::nullopt) {
  TerminalFacts out;
  out.getenv = [environment = std::move(environment)](const char* name) -> const char* {
    const auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  };
  out.stdout_tty = tty;
  out.window_columns = window;
  return out;
}

TEST(DecideTerminal, TakesColumnsFromTheEnvironmentThenTheWindowElseNoLimit) {
  EXPECT_EQ(decide_terminal(facts({{"COLUMNS", "80"}}, true, 132)).columns, 80u);
  EXPECT_EQ(decide_terminal(facts({{"COLUMNS", "80"}}, false)).columns, 80u);
  EXPECT_EQ(decide_terminal(facts({}, true, 132)).columns, 132u);
  EXPECT_EQ(decide_terminal(facts({{"COLUMNS", "wide"}}, true, 132)).columns, 132u);
  EXPECT_EQ(decide_terminal(facts({}, false)).columns, 0u);
}

TEST(DecideTerminal, ColoursATerminalUnlessNoColorOrADumbTerminalSaysNo) {
  EXPECT_TRUE(decide_terminal(facts({}, true)).colors);
  EXPECT_FALSE(decide_terminal(facts({}, false)).colors);
  EXPECT_FALSE(decide_terminal(facts({{"NO_COLOR", ""}}, true)).colors);
  EXPECT_FALSE(decide_terminal(facts({{"TERM", "dumb"}}, true)).colors);
}

TEST(DecideTerminal, SystemdColorsDecidesOutrightWhenItIsReadable) {
  EXPECT_FALSE(decide_terminal(facts({{"SYSTEMD_COLORS", "0"}}, true)).colors);
  EXPECT_FALSE(decide_terminal(facts({{"SYSTEMD_COLORS", "False"}}, true)).colors);
  EXPECT_TRUE(decide_terminal(facts({{"SYSTEMD_COLORS", "yes"}}, false)).colors);
  EXPECT_TRUE(decide_terminal(facts({{"SYSTEMD_COLORS", "256"}, {"NO_COLOR", "1"}}, false)).colors);
  EXPECT_TRUE(decide_terminal(facts({{"SYSTEMD_COLORS", "16"}}, false)).colors);
  // Unreadable: as if unset.
  EXPECT_TRUE(decide_terminal(facts({{"SYSTEMD_COLORS", "maybe"}}, true)).colors);
  EXPECT_FALSE(decide_terminal(facts({{"SYSTEMD_COLORS", "maybe"}}, false)).colors);
}

TEST(Ellipsize, ShortensPathsInTheMiddleAndProseAtTheEnd) {
  EXPECT_EQ(ellipsize_middle("/srv/backups/archive", 11), "/srv/…chive");
  EXPECT_EQ(ellipsize_middle("/srv", 11), "/srv");
  EXPECT_EQ(ellipsize_end("failed: Input/output error", 10), "failed: I…");
  EXPECT_EQ(ellipsize_start("/dev/mapper/vg0-archive", 12), "…vg0-archive");
  EXPECT_EQ(display_width(ellipsize_middle("/mnt/données/été", 8)), 8u);
  EXPECT_EQ(ellipsize_middle("/mnt/données/été", 8), "/mn…/été");
}

TEST(WrapWords, BreaksProseAtSpacesAndIndentsWhatFollows) {
  EXPECT_EQ(wrap_words("warning: /data is mounted with discard", 16, 2),
            "warning: /data\n  is mounted\n  with discard\n");
  EXPECT_EQ(wrap_words("short", 16, 2), "short\n");
  EXPECT_EQ(wrap_words("a /very/long/path/name b", 8, 2), "a\n  /very/long/path/name\n  b\n");
  EXPECT_EQ(wrap_words("no limit at all", 0, 2), "no limit at all\n");
}

const std::vector<Column> kColumns{
    {"NAME", Ellipsize::Middle, 6}, {"WHEN"}, {"NOTE", Ellipsize::End, 4}};

TEST(RenderTable, PadsEveryColumnButTheLastToItsWidestCellOneSpaceApart) {
  const std::vector<std::vector<Cell>> rows{{{"long"}, {"x"}, {"a"}}, {{"é"}, {"y"}, {"b"}}};
  EXPECT_EQ(render_table(kColumns, rows, {}),
            "NAME WHEN NOTE\n"
            "long x    a\n"
            "é    y    b\n");
}

TEST(RenderTable, UsesCompactCellsThenEllipsizesToFitTheWidth) {
  const std::vector<std::vector<Cell>> rows{
      {{"/a/very/long/name"}, {"Tue 09:00; 2h left", "2h left"}, {"all good"}}};
  // Natural: 17 + 1 + 18 + 1 + 8 = 45. Compact: 17 + 1 + 7 + 1 + 8 = 34.
  EXPECT_EQ(render_table(kColumns, rows, {45, false, true, false}),
            "NAME              WHEN               NOTE\n"
            "/a/very/long/name Tue 09:00; 2h left all good\n");
  EXPECT_EQ(render_table(kColumns, rows, {34, false, false, false}),
            "/a/very/long/name 2h left all good\n");
  // The column with the most to spare gives first.
  EXPECT_EQ(render_table(kColumns, rows, {26, false, false, false}),
            "/a/v…name 2h left all good\n");
  EXPECT_EQ(render_table(kColumns, rows, {20, false, false, false}), "/a…ame 2h left all…\n");
}

TEST(RenderTable, ColumnsEarlierInShrinkOrderGiveUpCellsFirst) {
  const std::vector<Column> columns{{"NAME", Ellipsize::Middle, 4, 1},
                                    {"DEV", Ellipsize::Start, 4}};
  const std::vector<std::vector<Cell>> rows{{{"/a/long/name"}, {"/dev/sda1"}}};
  EXPECT_EQ(render_table(columns, rows, {17, false, false, false}), "/a/long/name …da1\n");
  EXPECT_EQ(render_table(columns, rows, {14, false, false, false}), "/a/l…name …da1\n");
}

TEST(RenderTable, FullIgnoresTheWidth) {
  const std::vector<std::vector<Cell>> rows{{{"/a/very/long/name"}, {"soon", "s"}, {"x"}}};
  EXPECT_EQ(render_table(kColumns, rows, {10, true, false, false}), "/a/very/long/name soon x\n");
}

TEST(RenderTable, ColoursCellsButNotTheirPadding) {
  const std::vector<std::vector<Cell>> rows{
      {{"a", "", Color::Green}, {"b"}, {"c", "", Color::Red}}};
  EXPECT_EQ(render_table(kColumns, rows, {0, false, false, true}),
            "\x1b[0;32ma\x1b[0m    b    \x1b[0;1;31mc\x1b[0m\n");
}

TEST(JsonPretty, IndentsMembersAndKeepsStringsAndEmptyContainersIntact) {
  const Json document = Json::parse(R"({"a":[1,2],"b":{},"c":"x,{y}:\"z\""})");
  EXPECT_EQ(json_text(document, JsonMode::Pretty),
            "{\n"
            "  \"a\": [\n"
            "    1,\n"
            "    2\n"
            "  ],\n"
            "  \"b\": {},\n"
            "  \"c\": \"x,{y}:\\\"z\\\"\"\n"
            "}");
}

TEST(PagerCommand, SystemdPagerThenPagerThenLessOnlyOnATerminal) {
  const auto env = [](std::map<std::string, std::string> values) {
    return facts(std::move(values), true).getenv;
  };
  EXPECT_EQ(pager_command(env({{"SYSTEMD_PAGER", "most"}, {"PAGER", "more"}}), true, true), "most");
  EXPECT_EQ(pager_command(env({{"PAGER", "more"}}), true, true), "more");
  EXPECT_EQ(pager_command(env({}), true, true), "");  // the default: less
  EXPECT_EQ(pager_command(env({{"SYSTEMD_PAGER", "cat"}, {"PAGER", "more"}}), true, true),
            std::nullopt);
  EXPECT_EQ(pager_command(env({{"PAGER", ""}}), true, true), std::nullopt);
  EXPECT_EQ(pager_command(env({}), false, true), std::nullopt);
  EXPECT_EQ(pager_command(env({}), true, false), std::nullopt);
}

TEST(PolkitAgentWanted, OnlyForANonRootCallerAtATerminalWithAnAgentInstalled) {
  const std::string agent = "/bin/sh";  // any executable
  EXPECT_TRUE(polkit_agent_wanted(1000, true, true, agent));
  EXPECT_FALSE(polkit_agent_wanted(0, true, true, agent));
  EXPECT_FALSE(polkit_agent_wanted(1000, false, true, agent));
  EXPECT_FALSE(polkit_agent_wanted(1000, true, false, agent));
  EXPECT_FALSE(polkit_agent_wanted(1000, true, true, ""));
  EXPECT_FALSE(polkit_agent_wanted(1000, true, true, "/nonexistent/pkttyagent"));
}

}  // namespace
