// GPT-2's tokenizer (bpe_tokenizer.h) against GPT-2's real vocabulary and the ids its
// encoder gives a corpus of texts (tests/data/gpt2_tokenizer, made by
// scripts/gen_tokenizer_fixtures.js), and its refusal of bad files.
#include "common/temp_dir.h"
#include "bpe_tokenizer.h"
#include "unicode_classes.h"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace {

using attnviz::BpeTokenizer;
using nlohmann::json;

const std::string data_dir = std::string(ATTNVIZ_TEST_DATA) + "/gpt2_tokenizer";

std::string read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

void write_all(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
}

// A fresh folder, removed with what is in it.
using Folder = attnviz_test::TempDir;

// GPT-2's tokenizer, loaded once for all the tests (it takes a fraction of a second).
const BpeTokenizer& gpt2() {
    static BpeTokenizer t;
    static bool once = [] {
        std::string error;
        EXPECT_TRUE(t.load_dir(data_dir, error)) << error;
        return true;
    }();
    (void)once;
    return t;
}

const json& corpus() {
    static const json c = json::parse(read_all(data_dir + "/corpus.json"));
    return c;
}

int id_of(const BpeTokenizer& t, const std::string& symbols) {
    for (int id = 0; id < t.vocab_size(); ++id)
        if (t.token_symbols(id) == symbols) return id;
    return -1;
}

// ---------------------------------------------------------------------------------------
// GPT-2's ids

TEST(BpeTokenizer, LoadsGpt2Vocabulary) {
    EXPECT_EQ(gpt2().vocab_size(), 50257);
    EXPECT_EQ(gpt2().token_symbols(50256), "<|endoftext|>");
    EXPECT_EQ(gpt2().token_symbols(3797), "Ġcat");
}

TEST(BpeTokenizer, CorpusIdsEqualGpt2s) {
    const json& entries = corpus().at("entries");
    ASSERT_GE(entries.size(), 30u);
    for (const json& e : entries) {
        const std::string text = e.at("text");
        const std::vector<int> want = e.at("ids");
        EXPECT_EQ(gpt2().encode(text), want) << e.at("name");
        EXPECT_EQ(gpt2().decode(want), text) << e.at("name");
    }
}

TEST(BpeTokenizer, FollowsWhiteSpaceWhereTheJavaScriptEncoderDiffers) {
    // gpt-3-encoder's JavaScript \s takes U+FEFF for whitespace; GPT-2's Python `regex`
    // (and tiktoken) do not, so " \uFEFF" is one punctuation chunk there.
    int differing = 0;
    for (const json& e : corpus().at("entries")) {
        if (!e.contains("ids_gpt_3_encoder")) continue;
        ++differing;
        const std::vector<int> js = e.at("ids_gpt_3_encoder");
        EXPECT_NE(gpt2().encode(e.at("text")), js) << e.at("name");
    }
    EXPECT_GE(differing, 1);
    EXPECT_EQ(attnviz::unicode_class(0xFEFF), attnviz::UnicodeClass::other);
    EXPECT_EQ(attnviz::unicode_class(0x0085), attnviz::UnicodeClass::space);
}

TEST(BpeTokenizer, RoundTripsAnyBytes) {
    // Not UTF-8: a stray continuation byte, a cut-short lead, an overlong form, a surrogate.
    const std::string text = "ok \xff\xfe abc \xc3 \x80\x80 \xc0\xaf \xed\xa0\x80 end\xe2\x82";
    const std::vector<int> ids = gpt2().encode(text);
    EXPECT_FALSE(ids.empty());
    EXPECT_EQ(gpt2().decode(ids), text);
}

TEST(BpeTokenizer, CacheGivesTheSameIds) {
    const std::string text = "the cat sat on the mat, the cat sat on the mat";
    const std::vector<int> first = gpt2().encode(text), second = gpt2().encode(text);
    EXPECT_EQ(first, second);
    // The two halves are the same words, so the same ids (the second from the cache).
    ASSERT_EQ(first.size() % 2, 1u); // the comma in the middle
    const size_t half = first.size() / 2;
    for (size_t i = 1; i < half; ++i) EXPECT_EQ(first[i], first[half + 1 + i]) << i;
}

TEST(BpeTokenizer, EncodesFromSeveralThreads) {
    const json& entries = corpus().at("entries");
    auto run = [&](int offset, bool& ok) {
        ok = true;
        for (size_t k = 0; k < entries.size(); ++k) {
            const json& e = entries[(k + size_t(offset)) % entries.size()];
            ok = ok && gpt2().encode(e.at("text")) == e.at("ids").get<std::vector<int>>();
        }
    };
    bool a = false, b = false;
    std::thread t1(run, 0, std::ref(a)), t2(run, 7, std::ref(b));
    t1.join();
    t2.join();
    EXPECT_TRUE(a);
    EXPECT_TRUE(b);
}

// ---------------------------------------------------------------------------------------
// The pre-tokenizer and the views' labels

std::vector<std::string> chunks(const std::string& text) {
    std::vector<std::string> out;
    for (const attnviz::ByteRange& r : attnviz::pretokenize(text)) out.push_back(text.substr(r.begin, r.end - r.begin));
    return out;
}

TEST(BpeTokenizer, PretokenizesAsGpt2sExpression) {
    using V = std::vector<std::string>;
    EXPECT_EQ(chunks("Hello world"), (V{"Hello", " world"}));
    // \s+(?!\S) leaves the last space of a run to the next word.
    EXPECT_EQ(chunks("a   b"), (V{"a", "  ", " b"}));
    EXPECT_EQ(chunks("a\n\nb"), (V{"a", "\n", "\n", "b"}));
    EXPECT_EQ(chunks("end  "), (V{"end", "  "}));
    EXPECT_EQ(chunks("it's"), (V{"it", "'s"}));
    EXPECT_EQ(chunks("IT'S"), (V{"IT", "'", "S"}));
    EXPECT_EQ(chunks("we'll've"), (V{"we", "'ll", "'ve"}));
    EXPECT_EQ(chunks("x2 1.5"), (V{"x", "2", " 1", ".", "5"}));
    EXPECT_EQ(chunks(" !?x"), (V{" !?", "x"}));
    EXPECT_EQ(chunks("caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87"), (V{"caf\xc3\xa9", " \xe4\xb8\xad\xe6\x96\x87"}));
    EXPECT_EQ(chunks(""), V{});
}

TEST(BpeTokenizer, UnicodeClasses) {
    using attnviz::UnicodeClass;
    EXPECT_EQ(attnviz::unicode_class('a'), UnicodeClass::letter);
    EXPECT_EQ(attnviz::unicode_class('7'), UnicodeClass::number);
    EXPECT_EQ(attnviz::unicode_class(' '), UnicodeClass::space);
    EXPECT_EQ(attnviz::unicode_class('\''), UnicodeClass::other);
    EXPECT_EQ(attnviz::unicode_class(0x4E2D), UnicodeClass::letter); // 中
    EXPECT_EQ(attnviz::unicode_class(0x0661), UnicodeClass::number); // Arabic-Indic one
    EXPECT_EQ(attnviz::unicode_class(0x00BD), UnicodeClass::number); // ½
    EXPECT_EQ(attnviz::unicode_class(0x3000), UnicodeClass::space);  // ideographic space
    EXPECT_EQ(attnviz::unicode_class(0x0301), UnicodeClass::other);  // combining acute
    EXPECT_EQ(attnviz::unicode_class(0x1F600), UnicodeClass::other); // 😀
    EXPECT_EQ(attnviz::unicode_class(0x10FFFF), UnicodeClass::other);
    EXPECT_STRNE(attnviz::unicode_tables_version(), "");
}

TEST(BpeTokenizer, DisplayFormForTheViews) {
    const BpeTokenizer& t = gpt2();
    EXPECT_EQ(t.display(3797), " cat");
    EXPECT_EQ(t.display(id_of(t, "Ċ")), "\xE2\x86\xB5");  // ↵
    EXPECT_EQ(t.display(id_of(t, "ĉ")), "\xE2\x87\xA5");  // ⇥
    EXPECT_EQ(t.display(id_of(t, "č")), "\xE2\x90\x8D");  // ␍
    EXPECT_EQ(t.display(id_of(t, "Ā")), "\\x00");
    EXPECT_EQ(t.display(id_of(t, "ð")), "\\xF0"); // the first byte of an emoji on its own
    EXPECT_EQ(t.display(50256), "<|endoftext|>");
    EXPECT_EQ(t.display(-1), "<bad id -1>");
    EXPECT_EQ(t.display(50257), "<bad id 50257>");
    // "é" as one token, whatever its bytes' symbols: the label is the letter.
    const std::vector<int> ids = t.encode(" caf\xc3\xa9");
    std::string joined;
    for (int id : ids) joined += t.display(id);
    EXPECT_EQ(joined, " caf\xc3\xa9");
    EXPECT_EQ(t.decode({-5}), "\xEF\xBF\xBD");
}

TEST(BpeTokenizer, EmbeddingRowsCheck) {
    std::string error;
    EXPECT_TRUE(gpt2().check_embedding_rows(50257, error));
    EXPECT_TRUE(gpt2().check_embedding_rows(50304, error)); // nanoGPT's padded GPT-2
    EXPECT_FALSE(gpt2().check_embedding_rows(50256, error));
    EXPECT_EQ(error, "the vocabulary has 50257 entries but wte has 50256 rows; give the tokenizer files saved with this model");
    EXPECT_FALSE(gpt2().check_embedding_rows(50368, error));
    EXPECT_FALSE(gpt2().check_embedding_rows(1000, error));
}

// ---------------------------------------------------------------------------------------
// Files: both formats, and bad files refused with one sentence

TEST(BpeTokenizer, LoadsHuggingFaceNamesAndLayout) {
    // Hugging Face's vocab.json is the same table written without spaces; merges.txt is vocab.bpe.
    Folder d;
    write_all(d.file("vocab.json"), json::parse(read_all(data_dir + "/encoder.json")).dump());
    write_all(d.file("merges.txt"), read_all(data_dir + "/vocab.bpe"));
    attnviz::BpeFiles files;
    std::string error;
    ASSERT_TRUE(attnviz::find_bpe_files(d.path, files, error)) << error;
    EXPECT_EQ(files.format, "Hugging Face");
    EXPECT_EQ(files.vocab, d.file("vocab.json"));
    BpeTokenizer t;
    ASSERT_TRUE(t.load_dir(d.file("merges.txt"), error)) << error; // a file stands for its folder
    for (const json& e : corpus().at("entries")) EXPECT_EQ(t.encode(e.at("text")), e.at("ids").get<std::vector<int>>());
}

TEST(BpeTokenizer, FindsNoFilesWithOneSentence) {
    Folder d;
    attnviz::BpeFiles files;
    std::string error;
    EXPECT_FALSE(attnviz::find_bpe_files(d.file("nope"), files, error));
    EXPECT_NE(error.find("no such folder"), std::string::npos) << error;
    EXPECT_FALSE(attnviz::find_bpe_files(d.path, files, error));
    EXPECT_NE(error.find("has neither vocab.json + merges.txt"), std::string::npos) << error;
    write_all(d.file("encoder.json"), "{}");
    EXPECT_FALSE(attnviz::find_bpe_files(d.path, files, error));
    EXPECT_NE(error.find("has encoder.json but no vocab.bpe beside it"), std::string::npos) << error;
}

// A small valid byte-level tokenizer: the 256 bytes, then "Ġt", "he", "Ġthe".
std::string small_vocab(const std::string& extra = "") {
    json v = json::object();
    const auto& syms = attnviz::byte_symbols();
    for (int b = 0; b < 256; ++b) v[syms[size_t(b)]] = b;
    v["Ġt"] = 256;
    v["he"] = 257;
    v["Ġthe"] = 258;
    v["<|endoftext|>"] = 259;
    std::string s = v.dump();
    if (!extra.empty()) s.insert(s.size() - 1, "," + extra);
    return s;
}
const std::string small_merges = "#version: 0.2\nĠ t\nh e\nĠt he\n";

struct Refusal {
    const char* what;
    std::string vocab, merges, must_contain;
};

TEST(BpeTokenizer, RefusesBadFilesWithOneSentenceAndKeepsItsState) {
    const std::string encoder = read_all(data_dir + "/encoder.json");
    const std::string merges = read_all(data_dir + "/vocab.bpe");
    const size_t cut_line = merges.find('\n', merges.size() / 2) + 1; // cut at a line boundary
    const std::vector<Refusal> cases = {
        {"not JSON", "hello", small_merges, "vocab.json: is not JSON (at byte 1)"},
        {"a list", "[1, 2]", small_merges, "is not one JSON object of token -> id"},
        {"vocab cut short", encoder.substr(0, encoder.size() / 2), merges, "ends in the middle of its JSON"},
        {"empty vocab", "", small_merges, "vocab.json: the file is empty"},
        {"token twice", small_vocab("\"he\": 260"), small_merges, "gives the token 'he' twice (ids 257 and 260)"},
        {"id twice", small_vocab("\"xy\": 3"), small_merges, "gives the id 3 to both"},
        {"id gap", small_vocab("\"xy\": 999"), small_merges, "so ids must run 0 to 260"},
        {"negative id", small_vocab("\"xy\": -1"), small_merges, "gives the token 'xy' the id -1, not an id"},
        {"id a string", small_vocab("\"xy\": \"7\""), small_merges, "gives the token 'xy' a string, not an id"},
        {"no byte token", "{\"a\": 0}", "", "has no token for the byte 0x00"},
        {"empty merges", small_vocab(), "", "merges.txt: the file is empty"},
        {"three tokens", small_vocab(), "#version: 0.2\nĠ t x\n", "line 2 ('Ġ t x') is not two tokens separated by one space"},
        {"one token", small_vocab(), "#version: 0.2\nĠ t\nhe\n", "line 3 ('he') is not two tokens"},
        {"blank line", small_vocab(), "#version: 0.2\nĠ t\n\nh e\n", "line 3 is empty"},
        {"result missing", small_vocab(), "#version: 0.2\nĠ t\nh e\nt h\n", "line 4 makes 'th', which"},
        {"part missing", small_vocab(), "#version: 0.2\nĠ t\nh e\nĠthe ĠĠ\n", "line 4 merges 'Ġthe', which no line before it makes"},
        {"out of order", small_vocab(), "#version: 0.2\nĠ t\nĠt he\nh e\n", "line 3 merges 'he', which no line before it makes; the merges are out of order"},
        {"repeated", small_vocab(), "#version: 0.2\nĠ t\nh e\nĠ t\nĠt he\n", "line 4 repeats the merge of line 2"},
        {"merges cut at a line", encoder, merges.substr(0, cut_line), "the file is cut short or belongs to another vocabulary"},
        {"merges cut in a line", encoder, merges.substr(0, merges.size() - 4), "the file may be cut short"},
        {"merges of another vocabulary", small_vocab("\"Ġcat\": 260"), small_merges, "makes none of 1 entries"},
    };
    BpeTokenizer t;
    std::string error;
    ASSERT_TRUE(t.load_text(small_vocab(), small_merges, "vocab.json", "merges.txt", error)) << error;
    const std::vector<int> before = t.encode(" the them");
    EXPECT_EQ(before, (std::vector<int>{258, 258, 'm'})); // " the", " the" + "m" (byte b has id b here)
    for (const Refusal& c : cases) {
        error.clear();
        EXPECT_FALSE(t.load_text(c.vocab, c.merges, "vocab.json", "merges.txt", error)) << c.what;
        EXPECT_NE(error.find(c.must_contain), std::string::npos) << c.what << ": " << error;
        EXPECT_EQ(error.find('\n'), std::string::npos) << c.what << ": " << error;
        EXPECT_EQ(t.vocab_size(), 260) << c.what;
        EXPECT_EQ(t.encode(" the them"), before) << c.what;
    }
}

TEST(BpeTokenizer, RefusesMissingFiles) {
    Folder d;
    BpeTokenizer t;
    std::string error;
    EXPECT_FALSE(t.load_files(d.file("vocab.json"), d.file("merges.txt"), error));
    EXPECT_NE(error.find("vocab.json: no such file"), std::string::npos) << error;
    write_all(d.file("vocab.json"), small_vocab());
    EXPECT_FALSE(t.load_files(d.file("vocab.json"), d.file("merges.txt"), error));
    EXPECT_NE(error.find("merges.txt: no such file"), std::string::npos) << error;
    EXPECT_FALSE(t.load_files(d.path, d.file("merges.txt"), error));
    EXPECT_NE(error.find("is a folder"), std::string::npos) << error;
    EXPECT_FALSE(t.loaded());
}

} // namespace
