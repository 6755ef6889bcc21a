// test_formats.cpp: the number and file formats of src/core/io/formats.h, in process.
// Expected texts are what Python 3 / numpy print, written down from them.
#include "formats.h"
#include "run_attnviz.h"
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>

using namespace attnviz;
using nlohmann::json;

TEST(Formats, PythonFloatReprMatchesPython) {
    EXPECT_EQ(python_float_repr(0.0), "0.0");
    EXPECT_EQ(python_float_repr(-0.0), "-0.0");
    EXPECT_EQ(python_float_repr(0.1), "0.1");
    EXPECT_EQ(python_float_repr(1e16), "1e+16");
    EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
    EXPECT_EQ(python_float_repr(1e-5), "1e-05");
    EXPECT_EQ(python_float_repr(0.0001), "0.0001");
    EXPECT_EQ(python_float_repr(123.0), "123.0");
    EXPECT_EQ(python_float_repr(-2.5), "-2.5");
    EXPECT_EQ(python_float_repr(1.5e300), "1.5e+300");
    EXPECT_EQ(python_float_repr(5e-324), "5e-324");
    EXPECT_EQ(python_float_repr(123456789.125), "123456789.125");
    EXPECT_EQ(python_float_repr(std::ldexp(1.0, 70)), "1.1805916207174113e+21");
    EXPECT_EQ(python_float_repr(double(0.317545503f)), "0.31754550337791443");
    EXPECT_EQ(python_float_repr(double(1.f / 3.f)), "0.3333333432674408");
    EXPECT_EQ(python_float_repr(std::numeric_limits<double>::quiet_NaN()), "nan");
    EXPECT_EQ(python_float_repr(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(Formats, PythonRoundMatchesPython) {
    // round(x, n) in Python 3.
    EXPECT_EQ(python_float_repr(python_round(double(0.317545503f), 4)), "0.3175");
    EXPECT_EQ(python_float_repr(python_round(2.675, 2)), "2.67"); // 2.675 is 2.67499999... in binary
    EXPECT_EQ(python_float_repr(python_round(0.125, 2)), "0.12"); // ties to even
    EXPECT_EQ(python_float_repr(python_round(0.375, 2)), "0.38");
    EXPECT_EQ(python_float_repr(python_round(1.00005, 4)), "1.0001");
    EXPECT_EQ(python_float_repr(python_round(0.0, 4)), "0.0");
}

TEST(Formats, PythonTuple) {
    EXPECT_EQ(python_tuple({1, 4, 8}), "(1, 4, 8)");
    EXPECT_EQ(python_tuple({8}), "(8,)");
    EXPECT_EQ(python_tuple({}), "()");
}

TEST(Formats, JsonNumbersRoundTripFloat32AndSpecialsAreNull) {
    EXPECT_EQ(json_number(0.5f), "0.5");
    EXPECT_EQ(json_number(1.f), "1");
    EXPECT_EQ(json_number(0.353553385f), "0.353553385");
    EXPECT_EQ(json_number(1e-7f), "1.00000001e-07"); // printf("%.9g", 1e-7f)
    EXPECT_EQ(json_number(std::numeric_limits<float>::quiet_NaN()), "null");
    EXPECT_EQ(json_number(-std::numeric_limits<float>::infinity()), "null");
    EXPECT_EQ(json_number(std::numeric_limits<float>::infinity()), "null");
    // Every float32 pattern in a sweep reads back as itself.
    for (uint32_t bits = 0x00000001u; bits < 0x7f800000u; bits += 0x00012345u) {
        float f;
        std::memcpy(&f, &bits, 4);
        std::string s = json_number(f);
        EXPECT_EQ(std::strtof(s.c_str(), nullptr), f) << s;
        EXPECT_EQ(std::strtof(json_number(-f).c_str(), nullptr), -f) << s;
    }
}

TEST(Formats, JsonWriterNestsAndEscapes) {
    std::ostringstream out;
    {
        JsonWriter w(out);
        w.begin_object();
        w.key("name");
        w.value_string("a \"b\"\n");
        w.key("m");
        const float m[6] = {1, 2, 3, 4, std::numeric_limits<float>::quiet_NaN(), 6};
        w.array(m, {1, 2, 3});
        w.key("empty");
        w.array(m, {0});
        w.key("flags");
        w.begin_array();
        w.value_bool(true);
        w.value_null();
        w.value_int(-7);
        w.end_array();
        w.key("o");
        w.begin_object();
        w.key("s");
        w.value_shape({2, 3});
        w.end_object();
        w.end_object();
    }
    json j = json::parse(out.str());
    EXPECT_EQ(j["name"], "a \"b\"\n");
    EXPECT_EQ(j["m"], json::parse("[[[1,2,3],[4,null,6]]]"));
    EXPECT_EQ(j["empty"], json::array());
    EXPECT_EQ(j["flags"], json::parse("[true,null,-7]"));
    EXPECT_EQ(j["o"]["s"], json::parse("[2,3]"));
}

TEST(Formats, NpyHeaderIsVersionOneAndAligned) {
    std::string h = npy_header({2, 3});
    EXPECT_EQ(h.size() % 64, 0u);
    EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    size_t len = size_t(uint8_t(h[8])) | size_t(uint8_t(h[9])) << 8;
    EXPECT_EQ(len + 10, h.size());
    EXPECT_EQ(h.substr(10, 60).rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u);
    EXPECT_EQ(h.back(), '\n');
    EXPECT_NE(npy_header({7}).find("'shape': (7,)"), std::string::npos);
}

TEST(Formats, TensorNamesParseAndUnknownOnesSayWhatIsAllowed) {
    TensorName n;
    std::string error;
    for (TensorName t : all_tensor_names()) {
        ASSERT_TRUE(parse_tensor_name(to_string(t), n, error));
        EXPECT_EQ(n, t);
    }
    EXPECT_FALSE(parse_tensor_name("attn", n, error));
    EXPECT_NE(error.find("'attn'"), std::string::npos) << error;
    EXPECT_NE(error.find("probs"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(Formats, OneTableNamesEveryTensorAndTakesItsOtherNames) {
    const auto& table = trace_tensors();
    ASSERT_EQ(table.size(), all_tensor_names().size());
    for (size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(table[i].id, all_tensor_names()[i]);
        EXPECT_EQ(&tensor_info(table[i].id), &table[i]); // tensor_info indexes in enum order
    }
    // The lesson's names, and the reference files' keys, as they always were.
    const char* names[] = {"x", "qkv", "q", "k", "v", "scores", "scaled", "masked", "probs", "heads", "concat", "y"};
    const char* keys[] = {"x", "qkv", "q", "k", "v", "raw_scores", "scaled_scores", "masked_scores",
                          "softmax_probs", "head_outputs", "y_concat_before_proj", "y1"};
    for (size_t i = 0; i < table.size(); ++i) {
        EXPECT_STREQ(table[i].name, names[i]);
        EXPECT_STREQ(reference_key(table[i].id), keys[i]);
    }
    // Every other name a tensor had is still taken: the reference key, the panels' old
    // names, nanoGPT's att for the softmax weights.
    const std::pair<const char*, TensorName> others[] = {
        {"raw_scores", TensorName::scores},  {"scores_raw", TensorName::scores},
        {"scores_scaled", TensorName::scaled}, {"masked_scores", TensorName::masked},
        {"scores_masked", TensorName::masked}, {"softmax_probs", TensorName::probs},
        {"att", TensorName::probs},           {"head_outputs", TensorName::heads},
        {"head_out", TensorName::heads},      {"y_concat_before_proj", TensorName::concat}};
    for (const auto& [text, id] : others) {
        TensorName n = TensorName::x;
        std::string error;
        EXPECT_TRUE(parse_tensor_name(text, n, error)) << text << ": " << error;
        EXPECT_EQ(n, id) << text;
    }
    // The shapes the table gives are the trace's.
    Config c;
    c.n_embd = 12;
    c.n_head = 3;
    c.seq_len = 5;
    Experiment e = make_experiment(c);
    Trace tr;
    forward(c, e.weights, e.x, KernelKind::reference, tr);
    const std::pair<TensorName, std::vector<int64_t>> shapes[] = {
        {TensorName::x, {5, 12}},         {TensorName::qkv, {5, 36}},  {TensorName::k, {3, 5, 4}},
        {TensorName::masked, {3, 5, 5}},  {TensorName::heads, {3, 5, 4}}, {TensorName::concat, {5, 12}}};
    for (const auto& [id, shape] : shapes) EXPECT_EQ(tensor_by_name(tr, id).shape, shape) << to_string(id);
    // Stored tensors are read in place; the derived ones are made in the scratch matrix.
    Mat scratch;
    EXPECT_EQ(tensor_by_name(tr, TensorName::probs).block(2, scratch), tr.att[2].data());
    const float* masked = tensor_by_name(tr, TensorName::masked).block(1, scratch);
    EXPECT_EQ(masked, scratch.data());
    EXPECT_EQ(masked[0 * 5 + 1], -INFINITY);          // query 0 cannot see key 1
    EXPECT_EQ(masked[1 * 5 + 0], tr.masked_at(1, 1, 0)); // row-major (T, T)
}

TEST(Formats, RawWritersProduceNpyAndCsv) {
    attnviz_test::TempDir dir;
    const float data[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
    std::string error;
    ASSERT_TRUE(write_npy(dir.path + "/a.npy", data, {2, 3, 2}, error)) << error;
    ASSERT_TRUE(write_csv(dir.path + "/a.csv", data, {2, 3, 2}, error)) << error;
    std::string npy = attnviz_test::read_file(dir.path + "/a.npy");
    EXPECT_EQ(npy.size(), npy_header({2, 3, 2}).size() + 48);
    EXPECT_EQ(std::memcmp(npy.data() + npy.size() - 48, data, 40), 0);
    std::string csv = attnviz_test::read_file(dir.path + "/a.csv");
    EXPECT_NE(csv.find("\n0,1\n2,3\n4,5\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("\n8,9\n-inf,nan\n"), std::string::npos) << csv;
    EXPECT_FALSE(write_npy(dir.path + "/missing/a.npy", data, {2}, error));
    EXPECT_NE(error.find("missing/a.npy"), std::string::npos) << error;
    EXPECT_EQ(dir.entries().size(), 2u);
}
