// test_text.cpp: words as input through the command line (--text). The input rows come
// from PyTorch's recipe in tests/data/text_examples.json (scripts/gen_text_reference.py),
// compared bit for bit; a repeated word repeats its row; bad text is one sentence, exit 2.
#include "run_attnviz.h"
#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>

using attnviz_test::load_json;
using attnviz_test::read_file;
using attnviz_test::run_attnviz;
using attnviz_test::run_json;
using attnviz_test::RunResult;
using attnviz_test::TempDir;
using nlohmann::json;

namespace {

json text_cases() { return load_json(ATTNVIZ_TEST_DATA "/text_examples.json")["cases"]; }

// The reference stores float32 values as "%.9g" strings: each parses back to one float.
float ref_float(const json& s) { return std::strtof(s.get<std::string>().c_str(), nullptr); }

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// x of a trace, (1, T, C), against the reference's flat row-major (T*C) list.
void expect_x_equals_reference(const json& x, const json& ref_x, int T, int C, const std::string& label) {
    ASSERT_EQ(ref_x.size(), size_t(T) * C) << label;
    ASSERT_EQ(x[0].size(), size_t(T)) << label;
    for (int t = 0; t < T; ++t) {
        ASSERT_EQ(x[0][t].size(), size_t(C)) << label;
        for (int c = 0; c < C; ++c) {
            float ours = float(x[0][t][c].get<double>()), ref = ref_float(ref_x[size_t(t) * C + c]);
            EXPECT_TRUE(same_bits(ours, ref)) << label << " x[" << t << "][" << c << "]: " << ours << " vs " << ref;
        }
    }
}

void expect_usage_error(const std::vector<std::string>& args, const std::string& must_contain) {
    RunResult r = run_attnviz(args);
    std::string shown;
    for (const std::string& a : args) shown += a.substr(0, 40) + " ";
    EXPECT_EQ(r.status, 2) << shown << "\nstderr: " << r.err;
    EXPECT_EQ(r.err_lines(), 1) << shown << "\nstderr: " << r.err;
    EXPECT_NE(r.err.find(must_contain), std::string::npos) << shown << "\nstderr: " << r.err;
    EXPECT_EQ(r.out, "") << shown;
}

} // namespace

TEST(Text, RepeatedWordsRepeatTheirInputRows) {
    json j = run_json({"trace", "--text", "the cat saw the cat"});
    EXPECT_EQ(j["T"], 5);
    EXPECT_EQ(j["text"], "the cat saw the cat");
    EXPECT_EQ(j["tokens"], (json{"the", "cat", "saw", "the", "cat"}));
    const json& x = j["x"][0];
    ASSERT_EQ(x.size(), 5u);
    EXPECT_EQ(x[0], x[3]); // "the"
    EXPECT_EQ(x[1], x[4]); // "cat"
    EXPECT_NE(x[0], x[1]);
    EXPECT_NE(x[0], x[2]);
    EXPECT_NE(x[1], x[2]);
    // Same input row, but position 3 also sees positions 1 and 2: its output differs from 0's.
    EXPECT_NE(j["y1"][0][0], j["y1"][0][3]);
}

TEST(Text, InputEqualsPyTorchBitForBit) {
    for (const json& ref : text_cases()) {
        const int C = ref["n_embd"].get<int>(), T = int(ref["tokens"].size());
        const std::string label = ref["text"].get<std::string>();
        json j = run_json({"trace", "--text", ref["text"].get<std::string>(), "--seed",
                           std::to_string(ref["seed"].get<long long>()), "--n-embd", std::to_string(C), "--n-head",
                           std::to_string(ref["n_head"].get<int>()), "--perturb", "0"});
        EXPECT_EQ(j["T"], T) << label;
        EXPECT_EQ(j["tokens"], ref["tokens"]) << label;
        expect_x_equals_reference(j["x"], ref["x"], T, C, label);
        // The perturbation row is the generator's next randn(C) after the embedding table.
        ASSERT_EQ(j["perturbed_row"].size(), size_t(C)) << label;
        for (int c = 0; c < C; ++c)
            EXPECT_TRUE(same_bits(float(j["perturbed_row"][c].get<double>()), ref_float(ref["perturbed_row"][c])))
                << label << " perturbed_row[" << c << "]";
    }
}

TEST(Text, WhitespaceOfAnyKindSeparatesWords) {
    json a = run_json({"trace", "--text", "the cat saw the cat"});
    json b = run_json({"trace", "--text", "  the\tcat\n saw   the cat \n"});
    EXPECT_EQ(b["tokens"], a["tokens"]);
    EXPECT_EQ(b["x"], a["x"]);
    EXPECT_EQ(b["y1"], a["y1"]);
    EXPECT_EQ(b["text"], "  the\tcat\n saw   the cat \n"); // kept as given, escaped in the JSON
}

TEST(Text, SeqLenMayRepeatTheWordCountButNotContradictIt) {
    json j = run_json({"trace", "--text", "the cat saw the cat", "--seq-len", "5"});
    EXPECT_EQ(j["T"], 5);
    expect_usage_error({"trace", "--text", "the cat saw the cat", "--seq-len", "4"}, "--seq-len 4");
    expect_usage_error({"trace", "--seq-len", "6", "--text", "the cat saw the cat"}, "5 words");
    expect_usage_error({"trace", "--text", "the cat", "--seq-len", "zero"}, "zero");
}

TEST(Text, ExportOfXHasOneRowPerWord) {
    TempDir dir;
    const std::string path = dir.path + "/x.npy";
    RunResult r = run_attnviz({"export", "--text", "the cat saw the cat", "--tensor", "x", "--out", path});
    ASSERT_EQ(r.status, 0) << r.err;
    std::string npy = read_file(path);
    ASSERT_GT(npy.size(), 10u);
    const size_t header_len = size_t((unsigned char)npy[8]) | size_t((unsigned char)npy[9]) << 8;
    const std::string header = npy.substr(10, header_len);
    EXPECT_NE(header.find("'shape': (5, 8)"), std::string::npos) << header;
    ASSERT_EQ(npy.size(), 10 + header_len + 5 * 8 * sizeof(float));
    // The same values trace prints, in row-major order.
    json j = run_json({"trace", "--text", "the cat saw the cat"});
    for (int t = 0; t < 5; ++t)
        for (int c = 0; c < 8; ++c) {
            float v;
            std::memcpy(&v, npy.data() + 10 + header_len + sizeof(float) * size_t(t * 8 + c), sizeof v);
            EXPECT_TRUE(same_bits(v, float(j["x"][0][t][c].get<double>()))) << t << ", " << c;
        }
}

TEST(Text, BenchRunsOnWords) {
    json j = run_json({"bench", "--text", "the cat saw the cat", "--repeat", "3"});
    EXPECT_EQ(j["T"], 5);
    EXPECT_EQ(j["input"], "text");
    EXPECT_EQ(j["perturbed_position"], 2);
    EXPECT_EQ(j["weights"], "seeded");
}

TEST(Text, TextWithoutWordsIsOneSentence) {
    for (const char* text : {"", " ", "   ", "\t\n "})
        for (const char* command : {"trace", "bench"})
            expect_usage_error({command, "--text", text}, "the text has no words");
    expect_usage_error({"export", "--text", "  ", "--tensor", "x", "--out", "x.npy"}, "the text has no words");
}

TEST(Text, MoreWordsThanPositionsIsOneSentence) {
    std::string text;
    for (int i = 0; i < 8193; ++i) text += "w ";
    expect_usage_error({"trace", "--text", text}, "8193 words, more than the 8192 positions");
}

TEST(Text, TextThatIsNotUtf8IsOneSentence) {
    expect_usage_error({"trace", "--text", "the \xff cat"}, "not valid UTF-8");
    expect_usage_error({"trace", "--text", "caf\xc3"}, "offset 3");
    // Valid UTF-8 words pass through to the JSON as they are.
    json j = run_json({"trace", "--text", "caf\xc3\xa9 \xe2\x88\x9a"});
    EXPECT_EQ(j["tokens"], (json{"caf\xc3\xa9", "\xe2\x88\x9a"}));
}
