// test_tokenize.cpp: `attnviz tokenize` with GPT-2's real vocabulary (tests/data/gpt2_tokenizer):
// the ids GPT-2 gives the corpus's texts, the tokens as the views label them, and bad
// files and options refused with one sentence and exit status 2.
#include "run_attnviz.h"
#include <fstream>
#include <gtest/gtest.h>

using attnviz_test::expect_usage_error;
using attnviz_test::load_json;
using attnviz_test::read_file;
using attnviz_test::run_attnviz;
using attnviz_test::run_json;
using attnviz_test::TempDir;
using nlohmann::json;

namespace {

const std::string gpt2_dir = ATTNVIZ_TEST_DATA "/gpt2_tokenizer";

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
}

TEST(Tokenize, PrintsIdsAndTokens) {
    json j = run_json({"tokenize", "--tokenizer", gpt2_dir, "--text", "Hello world!\nThe cat's\tmat"});
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j.size(), 2u);
    // Ids as GPT-2 gives them (tiktoken's "gpt2" and gpt-3-encoder agree on this text).
    EXPECT_EQ(j["ids"], json::parse("[15496, 995, 0, 198, 464, 3797, 338, 197, 6759]"));
    EXPECT_EQ(j["tokens"], json::parse(R"(["Hello", " world", "!", "↵", "The", " cat", "'s", "⇥", "mat"])"));
}

TEST(Tokenize, CorpusFromFilesEqualsGpt2s) {
    // Every corpus text through --file: the same ids as the fixture's, so the file is read
    // byte for byte (newlines, tabs, emoji, an empty file).
    TempDir dir;
    const json corpus = load_json(gpt2_dir + "/corpus.json");
    int checked = 0;
    for (const json& e : corpus["entries"]) {
        const std::string path = dir.path + "/text.txt";
        write_file(path, e["text"].get<std::string>());
        json j = run_json({"tokenize", "--tokenizer", gpt2_dir, "--file", path});
        EXPECT_EQ(j["ids"], e["ids"]) << e["name"];
        EXPECT_EQ(j["tokens"].size(), e["ids"].size()) << e["name"];
        if (++checked == 12) break; // the first twelve: every kind of whitespace and the empty text
    }
    EXPECT_EQ(checked, 12);
}

TEST(Tokenize, SplitCharactersShownAsBytes) {
    // 🍕 is one character but two tokens here: each piece alone is not UTF-8.
    json j = run_json({"tokenize", "--tokenizer", gpt2_dir, "--text", "\xF0\x9F\x8D\x95"});
    EXPECT_EQ(j["ids"], json::parse("[8582, 235, 243]"));
    EXPECT_EQ(j["tokens"], json::parse(R"(["\\xF0\\x9F", "\\x8D", "\\x95"])"));
}

TEST(Tokenize, HuggingFaceFolder) {
    TempDir dir;
    write_file(dir.path + "/vocab.json", read_file(gpt2_dir + "/encoder.json"));
    write_file(dir.path + "/merges.txt", read_file(gpt2_dir + "/vocab.bpe"));
    json j = run_json({"tokenize", "--tokenizer", dir.path, "--text", " attention heads"});
    EXPECT_EQ(j["ids"], json::parse("[3241, 6665]"));
}

TEST(Tokenize, BadOptionsAreOneSentence) {
    expect_usage_error({"tokenize", "--tokenizer", gpt2_dir}, "tokenize needs a text: --text \"...\" or --file FILE");
    expect_usage_error({"tokenize", "--tokenizer", gpt2_dir, "--text", "a", "--file", "b"}, "not both");
    expect_usage_error({"tokenize", "--text", "a"}, "needs --tokenizer");
    expect_usage_error({"tokenize", "--tokenizer", gpt2_dir, "--text", "caf\xE9"},
                       "--text is not UTF-8 text (byte 0xE9 at offset 3); save or type it as UTF-8");
    TempDir dir;
    expect_usage_error({"tokenize", "--tokenizer", gpt2_dir, "--file", dir.path + "/none.txt"},
                       "none.txt: no such file; give --file a text file to tokenize");
    expect_usage_error({"tokenize", "--tokenizer", gpt2_dir, "--file", dir.path}, "is a folder");
    write_file(dir.path + "/latin1.txt", "na\xEFve");
    expect_usage_error({"tokenize", "--tokenizer", gpt2_dir, "--file", dir.path + "/latin1.txt"},
                       "is not UTF-8 text (byte 0xEF at offset 2)");
}

TEST(Tokenize, BadTokenizerFilesAreOneSentence) {
    TempDir dir;
    expect_usage_error({"tokenize", "--tokenizer", dir.path + "/nope", "--text", "a"}, "no such folder");
    expect_usage_error({"tokenize", "--tokenizer", dir.path, "--text", "a"},
                       "has neither vocab.json + merges.txt (Hugging Face) nor encoder.json + vocab.bpe");
    write_file(dir.path + "/vocab.json", read_file(gpt2_dir + "/encoder.json"));
    expect_usage_error({"tokenize", "--tokenizer", dir.path, "--text", "a"}, "has vocab.json but no merges.txt beside it");

    const std::string merges = read_file(gpt2_dir + "/vocab.bpe");
    write_file(dir.path + "/merges.txt", merges.substr(0, merges.size() / 3));
    expect_usage_error({"tokenize", "--tokenizer", dir.path, "--text", "a"}, "merges.txt:");
    write_file(dir.path + "/merges.txt", merges);
    const std::string vocab = read_file(gpt2_dir + "/encoder.json");
    write_file(dir.path + "/vocab.json", vocab.substr(0, vocab.size() - 100));
    expect_usage_error({"tokenize", "--tokenizer", dir.path, "--text", "a"}, "ends in the middle of its JSON");
    write_file(dir.path + "/vocab.json", "not json");
    expect_usage_error({"tokenize", "--tokenizer", dir.path, "--text", "a"}, "vocab.json: is not JSON");
    // The merges out of order: the line making "Ġt" (line 2) moved to the end, after the
    // lines that use it.
    write_file(dir.path + "/vocab.json", vocab);
    const size_t second = merges.find('\n') + 1, third = merges.find('\n', second) + 1;
    write_file(dir.path + "/merges.txt",
               merges.substr(0, second) + merges.substr(third) + merges.substr(second, third - second));
    expect_usage_error({"tokenize", "--tokenizer", dir.path, "--text", "a"}, "the merges are out of order");
}

} // namespace
