// Text from trimd, the kernel or a fleet peer, as trimctl shows it to a
// person: nothing a terminal would obey, nothing that reorders the line.
#include <gtest/gtest.h>

#include "table.hpp"
#include "terminal_safety.hpp"
#include "terminal_text.hpp"

using namespace trimctl;
using trimctl_test::first_unsafe_in;

namespace {

TEST(TerminalText, EscapesEscapeSequencesBelAndCarriageReturnByteByByte) {
  EXPECT_EQ(terminal_text("\x1b]0;pwned\x07\x1b[2J"), "\\x1b]0;pwned\\x07\\x1b[2J");
  EXPECT_EQ(terminal_text("\x1b[1A\x1b[2K\rFAKE: all good"), "\\x1b[1A\\x1b[2K\\x0dFAKE: all good");
}

TEST(TerminalText, KeepsAFieldOnItsLineByEscapingTabAndLineFeed) {
  EXPECT_EQ(terminal_text("a\tb\nc"), "a\\x09b\\x0ac");
  EXPECT_EQ(terminal_text(std::string("nul\0here", 8)), "nul\\x00here");
}

TEST(TerminalText, EscapesDelAndEachByteOfAC1Control) {
  EXPECT_EQ(terminal_text("del\x7f"), "del\\x7f");
  EXPECT_EQ(terminal_text("csi\xc2\x9b"
                          "2J"),
            "csi\\xc2\\x9b2J");
  EXPECT_EQ(terminal_text("\xc2\x80\xc2\x9f"), "\\xc2\\x80\\xc2\\x9f");
  // U+00A0, the first code point after the C1 block, is text.
  EXPECT_EQ(terminal_text("no\xc2\xa0"
                          "break"),
            "no\xc2\xa0"
            "break");
}

TEST(TerminalText, EscapesBidiOverridesIsolatesAndMarksAsCodePoints) {
  EXPECT_EQ(terminal_text("txt.\xe2\x80\xae"
                          "exe"),
            "txt.\\u202eexe");
  EXPECT_EQ(terminal_text("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad"),
            "\\u202a\\u202b\\u202c\\u202d");
  EXPECT_EQ(terminal_text("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9"),
            "\\u2066\\u2067\\u2068\\u2069");
  EXPECT_EQ(terminal_text("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c"), "\\u200e\\u200f\\u061c");
  EXPECT_EQ(terminal_text("line\xe2\x80\xa8para\xe2\x80\xa9"), "line\\u2028para\\u2029");
}

TEST(TerminalText, EscapesEachByteThatIsNotUtf8) {
  EXPECT_EQ(terminal_text("caf\xe9"), "caf\\xe9");  // Latin-1
  EXPECT_EQ(terminal_text("\x9b"
                          "2J"),
            "\\x9b2J");                                         // a lone 8-bit CSI
  EXPECT_EQ(terminal_text("\xe2\x80"), "\\xe2\\x80");           // cut short
  EXPECT_EQ(terminal_text("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(terminal_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
}

TEST(TerminalText, PassesUtf8TextAndBackslashesUntouched) {
  for (const std::string text :
       {"/mnt/données/été", "/srv/数据/バックアップ", "/home/🦀/📦", "Ελληνικά", "עברית",
        "/mnt/caf\\xe9", "a\\b", "plain ascii: 1.5 GiB, 42% ~!@#$%^&*()"})
    EXPECT_EQ(terminal_text(text), text);
}

TEST(TerminalText, ChangesNothingWhenAppliedTwice) {
  const std::string once = terminal_text("\x1b[2J\xc2\x9b\xe2\x80\xae\t\xff");
  EXPECT_EQ(terminal_text(once), once);
  EXPECT_EQ(first_unsafe_in(once), "");
}

TEST(TerminalText, LinesAndParagraphsAreEscapedBeforeTheyAreEndedOrWrapped) {
  EXPECT_EQ(text_line("a\nFAKE: b"), "a\\x0aFAKE: b\n");
  EXPECT_EQ(text_line("x\x1b", Color::Red, true), "\x1b[0;1;31mx\\x1b\x1b[0m\n");
  EXPECT_EQ(text_paragraph("/srv/a\tb: waiting: disk\x1b[2J busy", 20, 2),
            "/srv/a\\x09b:\n  waiting:\n  disk\\x1b[2J busy\n");
}

TEST(RenderTable, EscapesCellsAndCountsTheEscapedFormInWidths) {
  const std::vector<Column> columns{{"NAME"}, {"HOST"}};
  // Two cells raw, eight escaped: the column is eight wide.
  const std::vector<std::vector<Cell>> rows{{{"\x1b\x1b"}, {"x"}}, {{"longer"}, {"y\xe2\x80\xae"}}};
  EXPECT_EQ(render_table(columns, rows, {}),
            "NAME     HOST\n"
            "\\x1b\\x1b x\n"
            "longer   y\\u202e\n");
}

TEST(RenderTable, EllipsizesTheEscapedFormSoARowKeepsItsWidth) {
  const std::vector<Column> columns{{"MOUNT", Ellipsize::Middle, 6}, {"X"}};
  const std::vector<std::vector<Cell>> rows{{{"/srv/\x1b[2J\x1b[2J\x1b[2J/end"}, {"x"}}};
  const std::string table = render_table(columns, rows, {16, false, false, false});
  EXPECT_EQ(table, "/srv/\\…[2J/end x\n");
  EXPECT_EQ(first_unsafe_in(table), "");
}

TEST(FirstUnsafeIn, FindsEachKindAndAcceptsPlainText) {
  EXPECT_EQ(first_unsafe_in("ok line\nnext é 数 🦀\n"), "");
  EXPECT_NE(first_unsafe_in("a\x1b"), "");
  EXPECT_NE(first_unsafe_in("a\r"), "");
  EXPECT_NE(first_unsafe_in("a\t"), "");
  EXPECT_NE(first_unsafe_in("a\x7f"), "");
  EXPECT_NE(first_unsafe_in("a\xc2\x9b"), "");
  EXPECT_NE(first_unsafe_in("a\xe2\x80\xae"), "");
  EXPECT_NE(first_unsafe_in("a\xe2\x81\xa6"), "");
  EXPECT_NE(first_unsafe_in("a\x9b"), "");
}

}  // namespace
