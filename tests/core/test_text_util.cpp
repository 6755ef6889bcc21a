// The user's text inside an error sentence: control characters and bytes that are not
// UTF-8 come out escaped, so that the sentence stays one line whatever was typed or read.
#include "session.h"
#include "text_util.h"
#include <gtest/gtest.h>

using namespace attnviz;

TEST(TextUtil, EscapedShowsControlCharactersAndKeepsLetters) {
    EXPECT_EQ(escaped("high\nontrast"), "high\\nontrast");
    EXPECT_EQ(escaped("a\tb\rc"), "a\\tb\\rc");
    EXPECT_EQ(escaped(std::string("nul\0x", 5)), "nul\\x00x");
    EXPECT_EQ(escaped("bell\x07 del\x7f esc\x1b["), "bell\\x07 del\\x7F esc\\x1B[");
    EXPECT_EQ(escaped("Gewichte für Köln, 東京"), "Gewichte für Köln, 東京"); // UTF-8 letters stay
    EXPECT_EQ(escaped("bad \xff byte \xc3"), "bad \\xFF byte \\xC3");            // not UTF-8
    EXPECT_EQ(escaped("next\xc2\x85line\xe2\x80\xa8sep"), "next\\u0085line\\u2028sep"); // C1, U+2028
    EXPECT_EQ(escaped("plain text, 'quotes' and \\ stay"), "plain text, 'quotes' and \\ stay");
}

TEST(TextUtil, QuoteCutsLongTextAtACharacterBoundary) {
    EXPECT_EQ(quote("pink"), "'pink'");
    EXPECT_EQ(quote(std::string(100, 'a')), "'" + std::string(60, 'a') + "...'");
    // A cut inside a two-byte letter ends before it, not half way through.
    const std::string cut = quote(std::string(59, 'a') + "ü", 60);
    EXPECT_EQ(cut, "'" + std::string(59, 'a') + "ü'");
    EXPECT_EQ(quote(std::string(59, 'a') + "üü", 60), "'" + std::string(59, 'a') + "ü...'");
    const std::string path = "/home/teacher/" + std::string(200, 'd') + "/lesson\n3.json";
    const std::string q = quote_path(path);
    EXPECT_EQ(q.rfind("'...", 0), 0u) << q;
    EXPECT_NE(q.find("lesson\\n3.json'"), std::string::npos) << q;
    EXPECT_EQ(q.find('\n'), std::string::npos) << q;
}

TEST(TextUtil, ASessionRefusedForItsThemeSaysSoOnOneLine) {
    // The session file libFuzzer found: its theme holds a newline (fuzz/corpus/fuzz_session).
    Session s;
    std::string error;
    ASSERT_FALSE(parse_session(R"({"attnviz_session": 1, "theme": "high\nontrast"})", "lesson\n.json", s, error));
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_NE(error.find("theme \"high\\nontrast\" is not known"), std::string::npos) << error;
    EXPECT_EQ(error.rfind("lesson\\n.json: ", 0), 0u) << error;
    ASSERT_FALSE(parse_session(R"({"attnviz_session": 1, "view": "w\u0000alk"})", "s.json", s, error));
    EXPECT_NE(error.find("view \"w\\x00alk\""), std::string::npos) << error;
    ASSERT_FALSE(parse_session(R"({"attnviz_session": 1, "mask": "causal\r"})", "s.json", s, error));
    EXPECT_NE(error.find("mask 'causal\\r' is not known"), std::string::npos) << error;
}
