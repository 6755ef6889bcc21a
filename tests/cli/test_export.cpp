// test_export.cpp: `attnviz export` writes the same numbers `trace --intermediates` prints,
// as a well-formed .npy and a .csv, and never leaves a half-written file.
#include "run_attnviz.h"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <sstream>

using attnviz_test::read_file;
using attnviz_test::run_attnviz;
using attnviz_test::RunResult;
using attnviz_test::TempDir;
using nlohmann::json;

namespace {

// A config where T, C, 3C, H and head_dim all differ; off-by-one gives NaN row 0 as well
// as -inf entries, so every special value crosses the files.
const std::vector<std::string> config = {"--seed", "11", "--n-embd", "12", "--n-head", "3", "--seq-len", "5",
                                         "--kernel", "reference"};

struct Expected {
    std::string key;            // where trace keeps it
    std::vector<int64_t> shape; // export's shape (no B)
};

Expected expected_for(const std::string& name) {
    if (name == "x") return {"x", {5, 12}};
    if (name == "y") return {"y1", {5, 12}};
    if (name == "qkv") return {"qkv", {5, 36}};
    if (name == "q" || name == "k" || name == "v") return {name, {3, 5, 4}};
    if (name == "heads") return {"head_outputs", {3, 5, 4}};
    if (name == "scores") return {"raw_scores", {3, 5, 5}};
    if (name == "scaled") return {"scaled_scores", {3, 5, 5}};
    if (name == "masked") return {"masked_scores", {3, 5, 5}};
    if (name == "probs") return {"softmax_probs", {3, 5, 5}};
    return {"y_concat_before_proj", {5, 12}}; // concat
}

const std::vector<std::string> names = {"x", "qkv", "q", "k", "v", "scores", "scaled", "masked",
                                        "probs", "heads", "concat", "y"};

// The trace's values for a tensor, flattened in row-major order (B dropped); null stays null.
std::vector<json> flatten(const json& j) {
    std::vector<json> out;
    if (j.is_array()) {
        for (const json& e : j) {
            std::vector<json> inner = flatten(e);
            out.insert(out.end(), inner.begin(), inner.end());
        }
    } else {
        out.push_back(j);
    }
    return out;
}

json trace_of(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"trace", "--intermediates"};
    args.insert(args.end(), config.begin(), config.end());
    args.insert(args.end(), extra.begin(), extra.end());
    RunResult r = run_attnviz(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return json::parse(r.out);
}

const json& tensor_in(const json& tr, const std::string& key) {
    return tr["intermediates_for_x"].contains(key) ? tr["intermediates_for_x"][key] : tr[key];
}

// A float from the files against a trace value: null stands for NaN or -inf.
::testing::AssertionResult same_value(float got, const json& want, const std::string& label) {
    if (want.is_null()) {
        if (std::isnan(got) || (std::isinf(got) && got < 0)) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << label << ": got " << got << ", trace has null";
    }
    float w = float(want.get<double>());
    if (std::memcmp(&got, &w, sizeof got) == 0 || got == w) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << label << ": got " << got << ", trace has " << w;
}

std::string python_tuple(const std::vector<int64_t>& s) {
    std::string t = "(";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + (s.size() == 1 ? ",)" : ")");
}

// Parses an NPY 1.0 file independently of the writer: magic, version, header, data.
void expect_npy(const std::string& bytes, const std::vector<int64_t>& shape, const std::vector<json>& want,
                const std::string& label) {
    ASSERT_GE(bytes.size(), 10u) << label;
    EXPECT_EQ(bytes.substr(0, 6), std::string("\x93NUMPY", 6)) << label;
    EXPECT_EQ(bytes[6], '\x01') << label;
    EXPECT_EQ(bytes[7], '\x00') << label;
    size_t header_len = size_t(uint8_t(bytes[8])) | size_t(uint8_t(bytes[9])) << 8;
    EXPECT_EQ((10 + header_len) % 64, 0u) << label << ": data not aligned";
    std::string header = bytes.substr(10, header_len);
    EXPECT_EQ(header.back(), '\n') << label;
    EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
    EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
    EXPECT_NE(header.find("'shape': " + python_tuple(shape)), std::string::npos) << header;
    size_t n = want.size();
    ASSERT_EQ(bytes.size(), 10 + header_len + n * 4) << label;
    for (size_t i = 0; i < n; ++i) {
        float got;
        std::memcpy(&got, bytes.data() + 10 + header_len + i * 4, 4);
        ASSERT_TRUE(same_value(got, want[i], label + " value " + std::to_string(i)));
    }
}

void expect_csv(const std::string& text, const std::vector<int64_t>& shape, const std::vector<json>& want,
                const std::string& label) {
    std::istringstream in(text);
    std::string line;
    std::vector<float> values;
    int head_lines = 0, data_lines = 0, comments = 0;
    int64_t cols = shape.back();
    while (std::getline(in, line)) {
        if (!line.empty() && line[0] == '#') {
            ++comments;
            head_lines += line.rfind("# head ", 0) == 0;
            continue;
        }
        ++data_lines;
        std::istringstream cells(line);
        std::string cell;
        int64_t n = 0;
        while (std::getline(cells, cell, ',')) {
            values.push_back(std::strtof(cell.c_str(), nullptr)); // reads -inf, inf and nan too
            ++n;
        }
        EXPECT_EQ(n, cols) << label << ": line " << line;
    }
    EXPECT_GE(comments, 1) << label;
    EXPECT_EQ(head_lines, shape.size() == 3 ? shape[0] : 0) << label;
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
    EXPECT_EQ(data_lines, rows) << label;
    ASSERT_EQ(values.size(), want.size()) << label;
    for (size_t i = 0; i < want.size(); ++i)
        ASSERT_TRUE(same_value(values[i], want[i], label + " value " + std::to_string(i)));
}

RunResult export_to(const std::string& name, const std::string& out, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"export", "--tensor", name, "--out", out};
    args.insert(args.end(), config.begin(), config.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return run_attnviz(args);
}

} // namespace

class ExportEveryTensor : public ::testing::TestWithParam<const char*> {};

TEST_P(ExportEveryTensor, NpyAndCsvEqualTraceIntermediates) {
    const std::string name = GetParam();
    TempDir dir;
    for (const char* mask : {"causal", "off-by-one"}) {
        json tr = trace_of({"--mask", mask});
        Expected e = expected_for(name);
        std::vector<json> want = flatten(tensor_in(tr, e.key));
        std::string label = name + " (" + mask + ")";
        for (const char* ext : {".npy", ".csv"}) {
            std::string path = dir.path + "/" + name + "_" + mask + ext;
            RunResult r = export_to(name, path, {"--mask", mask});
            ASSERT_EQ(r.status, 0) << r.err;
            EXPECT_EQ(r.out, "");
            EXPECT_EQ(r.err, "");
            if (std::string(ext) == ".npy") expect_npy(read_file(path), e.shape, want, label + ext);
            else expect_csv(read_file(path), e.shape, want, label + ext);
        }
    }
    // Nothing but the files asked for: no temporary left behind.
    EXPECT_EQ(dir.entries().size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(Names, ExportEveryTensor,
                         ::testing::Values("x", "qkv", "q", "k", "v", "scores", "scaled", "masked", "probs",
                                           "heads", "concat", "y"));

TEST(Export, PerturbWritesTheTraceOfX2AndStrengthZeroGivesX) {
    json tr = trace_of({"--perturb", "2"});
    TempDir dir;
    std::string full = dir.path + "/y2.npy", none = dir.path + "/y_strength0.npy";
    ASSERT_EQ(export_to("y", full, {"--perturb", "2"}).status, 0);
    ASSERT_EQ(export_to("y", none, {"--perturb", "2", "--strength", "0"}).status, 0);
    expect_npy(read_file(full), {5, 12}, flatten(tr["y2"]), "y at strength 1");
    expect_npy(read_file(none), {5, 12}, flatten(tr["y1"]), "y at strength 0");
    std::string half = dir.path + "/x_half.csv";
    ASSERT_EQ(export_to("x", half, {"--perturb", "2", "--strength", "0.5"}).status, 0);
    // Row 2 lies between x and x2; the other rows are x's.
    std::vector<json> x = flatten(tr["x"]), x2 = flatten(tr["x2"]);
    std::istringstream in(read_file(half));
    std::string line;
    std::vector<float> got;
    while (std::getline(in, line))
        if (line[0] != '#') {
            std::istringstream cells(line);
            std::string cell;
            while (std::getline(cells, cell, ',')) got.push_back(std::strtof(cell.c_str(), nullptr));
        }
    ASSERT_EQ(got.size(), 60u);
    for (size_t i = 0; i < 60; ++i) {
        float a = float(x[i].get<double>()), b = float(x2[i].get<double>());
        if (i / 12 == 2) EXPECT_NEAR(got[i], 0.5f * (a + b), 1e-6f) << i;
        else EXPECT_EQ(got[i], a) << i;
    }
}

TEST(Export, OverwritesAnExistingFileWhole) {
    TempDir dir;
    std::string path = dir.path + "/t.csv";
    ASSERT_EQ(export_to("probs", path, {}).status, 0);
    std::string first = read_file(path);
    ASSERT_EQ(export_to("x", path, {}).status, 0);
    std::string second = read_file(path);
    EXPECT_NE(first, second);
    EXPECT_EQ(second.find("probs"), std::string::npos);
    EXPECT_EQ(dir.entries().size(), 1u);
}
