// The safetensors container: dtype conversion, and one clear sentence for every kind of
// broken file (built byte by byte in a temporary directory), never a crash or a hang.
#include "safetensors.h"
#include "test_safetensors_util.h"
#include "weights_io.h"
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace attnviz;
using namespace st_test;
using nlohmann::json;

// ---------------------------------------------------------------------------------------
// F16 and BF16
// ---------------------------------------------------------------------------------------

static void expect_same_float(float got, float want, const std::string& what) {
    if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << what;
    } else {
        EXPECT_EQ(bits_of(got), bits_of(want)) << what << ": got " << got << ", want " << want;
    }
}

TEST(SafetensorsDtypes, HalfMatchesItsDefinitionForEveryBitPattern) {
    for (uint32_t h = 0; h < 0x10000; ++h) expect_same_float(f16_to_f32(uint16_t(h)), half_ref(uint16_t(h)), "half " + std::to_string(h));
}

TEST(SafetensorsDtypes, HalfEdgeCases) {
    EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.f, -24)); // smallest subnormal
    EXPECT_EQ(f16_to_f32(0x03ff), std::ldexp(1023.f, -24)); // largest subnormal
    EXPECT_EQ(f16_to_f32(0x0400), std::ldexp(1.f, -14)); // smallest normal
    EXPECT_EQ(f16_to_f32(0x7bff), 65504.f);
    EXPECT_EQ(f16_to_f32(0x3c00), 1.f);
    EXPECT_EQ(f16_to_f32(0xc000), -2.f);
    EXPECT_EQ(bits_of(f16_to_f32(0x8000)), 0x80000000u); // -0 keeps its sign
    EXPECT_EQ(f16_to_f32(0x7c00), INFINITY);
    EXPECT_EQ(f16_to_f32(0xfc00), -INFINITY);
    EXPECT_TRUE(std::isnan(f16_to_f32(0x7e00)));
    EXPECT_TRUE(std::isnan(f16_to_f32(0x7c01)));
}

TEST(SafetensorsDtypes, BFloat16IsTheHighHalfOfFloat32) {
    for (uint32_t b = 0; b < 0x10000; ++b) expect_same_float(bf16_to_f32(uint16_t(b)), bf16_ref(uint16_t(b)), "bf16 " + std::to_string(b));
    EXPECT_EQ(bf16_to_f32(0x3f80), 1.f);
    EXPECT_EQ(bf16_to_f32(0xc040), -3.f);
}

// numpy (F16) and torch (BF16) converted the same bit patterns when the fixture was made.
TEST(SafetensorsDtypes, ConversionsAgreeWithNumpyAndTorch) {
    const std::string path = fixture("f16_bf16_values.safetensors");
    SafetensorsFile file;
    std::string error;
    ASSERT_TRUE(read_safetensors_header(path, file, error)) << error;
    for (const char* pair : {"f16", "bf16"}) {
        const TensorInfo* in = file.find(pair);
        const TensorInfo* ref = file.find(std::string(pair) + "_as_f32");
        ASSERT_TRUE(in && ref);
        std::vector<float> got, want;
        ASSERT_TRUE(read_tensor(file, *in, got, error)) << error;
        ASSERT_TRUE(read_tensor(file, *ref, want, error)) << error;
        ASSERT_EQ(got.size(), want.size());
        ASSERT_GT(got.size(), 200u);
        for (size_t i = 0; i < got.size(); ++i) expect_same_float(got[i], want[i], std::string(pair) + "[" + std::to_string(i) + "]");
    }
    // and the F32 copies are what the naive reading finds
    auto raw = raw_tensors(path);
    std::vector<float> want = raw_f32(raw["f16_as_f32"]), got;
    ASSERT_TRUE(read_tensor(file, *file.find("f16_as_f32"), got, error));
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), 4 * got.size()));
}

// ---------------------------------------------------------------------------------------
// Header parsing of good files
// ---------------------------------------------------------------------------------------

TEST(SafetensorsHeader, ReadsNamesShapesOffsetsAndMetadata) {
    SafetensorsFile file;
    std::string error;
    ASSERT_TRUE(read_safetensors_header(fixture("lesson_c8_h2.safetensors"), file, error)) << error;
    ASSERT_EQ(file.tensors.size(), 2u);
    const TensorInfo* qkv = file.find("qkv.weight");
    ASSERT_NE(qkv, nullptr);
    EXPECT_EQ(qkv->dtype, "F32");
    EXPECT_EQ(qkv->shape, (std::vector<uint64_t>{24, 8}));
    EXPECT_EQ(qkv->end - qkv->begin, 24u * 8 * 4);
    ASSERT_NE(file.meta("n_head"), nullptr);
    EXPECT_EQ(*file.meta("n_head"), "2");
    EXPECT_EQ(file.meta("nothing"), nullptr);
    EXPECT_EQ(file.data_start() % 8, 0u);
}

TEST(SafetensorsHeader, MemoryAndFileReadersAgree) {
    const std::string path = fixture("gpt2_hf_c12.safetensors");
    std::string bytes = read_bytes(path), error;
    SafetensorsFile a, b;
    ASSERT_TRUE(read_safetensors_header(path, a, error)) << error;
    ASSERT_TRUE(parse_safetensors((const uint8_t*)bytes.data(), bytes.size(), path, b, error)) << error;
    ASSERT_EQ(a.tensors.size(), b.tensors.size());
    auto raw = raw_tensors(path);
    EXPECT_EQ(a.tensors.size(), raw.size());
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        EXPECT_EQ(a.tensors[i].name, b.tensors[i].name);
        EXPECT_EQ(a.tensors[i].begin, b.tensors[i].begin);
        EXPECT_EQ(a.tensors[i].shape, raw[a.tensors[i].name].shape);
        EXPECT_EQ(a.tensors[i].dtype, raw[a.tensors[i].name].dtype);
    }
}

TEST(SafetensorsHeader, EmptyTensorsAndScalarsAreFine) {
    TempDir dir;
    const std::string path = dir.file("odd.safetensors");
    json h = {{"empty", {{"dtype", "F32"}, {"shape", {0, 8}}, {"data_offsets", {0, 0}}}},
              {"scalar", {{"dtype", "F32"}, {"shape", json::array()}, {"data_offsets", {0, 4}}}},
              {"also_empty", {{"dtype", "F16"}, {"shape", {0}}, {"data_offsets", {4, 4}}}}};
    write_bytes(path, make_file(h.dump(), f32_bytes({2.5f})));
    SafetensorsFile file;
    std::string error;
    ASSERT_TRUE(read_safetensors_header(path, file, error)) << error;
    std::vector<float> v;
    ASSERT_TRUE(read_tensor(file, *file.find("scalar"), v, error)) << error;
    EXPECT_EQ(v, std::vector<float>{2.5f});
    ASSERT_TRUE(read_tensor(file, *file.find("empty"), v, error)) << error;
    EXPECT_TRUE(v.empty());
}

// ---------------------------------------------------------------------------------------
// Broken files: one sentence with the file name, exit path only, nothing else
// ---------------------------------------------------------------------------------------

// Loads `path` and expects failure with an error that names the file, is one line, and
// contains `expect` (when given).
static void expect_refused(const std::string& path, const std::string& expect, std::optional<int> n_head = 2,
                           int layer = 0) {
    LoadedWeights w;
    std::string error;
    EXPECT_FALSE(load_weights(path, n_head, layer, w, error)) << path;
    EXPECT_NE(error.find(path), std::string::npos) << "error does not name the file: " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "error is not one line: " << error;
    if (!expect.empty()) {
        EXPECT_NE(error.find(expect), std::string::npos) << "error lacks '" << expect << "': " << error;
    }
    // and the same bytes from memory give the same sentence
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) < (1u << 20)) {
        std::string bytes = read_bytes(path), memory_error;
        EXPECT_FALSE(load_weights_from_memory((const uint8_t*)bytes.data(), bytes.size(), path, n_head, layer, w,
                                              memory_error));
        EXPECT_EQ(memory_error, error);
    }
}

// A lesson file (C = 8) with the given header entries replaced or added.
static std::string lesson_with(const json& changes, std::string data = std::string(1024, '\0')) {
    json h = {{"__metadata__", {{"format", "pt"}}},
              {"proj.weight", {{"dtype", "F32"}, {"shape", {8, 8}}, {"data_offsets", {0, 256}}}},
              {"qkv.weight", {{"dtype", "F32"}, {"shape", {24, 8}}, {"data_offsets", {256, 1024}}}}};
    for (auto it = changes.begin(); it != changes.end(); ++it) {
        if (it.value().is_null()) h.erase(it.key());
        else h[it.key()] = it.value();
    }
    return make_file(h.dump(), data);
}

class SafetensorsBroken : public ::testing::Test {
protected:
    TempDir dir;
    std::string put(const std::string& name, const std::string& bytes) {
        std::string p = dir.file(name);
        write_bytes(p, bytes);
        return p;
    }
};

TEST_F(SafetensorsBroken, TheBaseFileIsGood) {
    // the helpers above build a valid file; every test below breaks one thing in it
    LoadedWeights w;
    std::string error;
    ASSERT_TRUE(load_weights(put("good.safetensors", lesson_with(json::object())), 2, 0, w, error)) << error;
    EXPECT_EQ(w.n_embd, 8);
}

TEST_F(SafetensorsBroken, MissingPathDirectoryEmptyAndText) {
    expect_refused(dir.file("nope.safetensors"), "no such file");
    expect_refused(dir.path, "directory");
    expect_refused(put("empty.safetensors", ""), "empty");
    expect_refused(put("notes.txt", "These are my notes about attention.\n"), "text");
    expect_refused(put("config.json", "{\"n_embd\": 8, \"n_head\": 2}"), "not a safetensors file");
    expect_refused(put("short.safetensors", "abc"), "too short");
    expect_refused(put("noparent.safetensors", "") + "/below", "not a directory");
}

TEST_F(SafetensorsBroken, FifoIsRefusedWithoutWaiting) {
    std::string p = dir.file("pipe.safetensors");
    ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
    expect_refused(p, "not a regular file");
}

TEST_F(SafetensorsBroken, UnreadableFile) {
    if (::geteuid() == 0) GTEST_SKIP() << "root reads every file";
    std::string p = put("locked.safetensors", lesson_with(json::object()));
    ::chmod(p.c_str(), 0);
    expect_refused(p, "permission denied");
}

TEST_F(SafetensorsBroken, TooLargeToBeWeights) {
    std::string p = dir.file("huge.safetensors");
    {
        std::ofstream f(p, std::ios::binary);
    }
    std::error_code ec;
    std::filesystem::resize_file(p, max_safetensors_file_bytes + 1, ec); // sparse: no disk used
    if (ec) GTEST_SKIP() << "cannot make a sparse file here: " << ec.message();
    expect_refused(p, "4 GiB");
}

TEST_F(SafetensorsBroken, EveryTruncationOfAGoodFile) {
    const std::string good = read_bytes(fixture("lesson_c8_h2.safetensors"));
    ASSERT_GT(good.size(), 1000u);
    for (size_t n = 0; n < good.size(); ++n) {
        std::string p = put("cut.safetensors", good.substr(0, n));
        LoadedWeights w;
        std::string error;
        ASSERT_FALSE(load_weights(p, std::nullopt, 0, w, error)) << "cut at " << n;
        ASSERT_EQ(error.rfind(p + ": ", 0), 0u) << error;
    }
}

TEST_F(SafetensorsBroken, HeaderLength) {
    std::string body = "{\"a\":1}";
    expect_refused(put("past.safetensors", le64(1000) + body), "only 7 bytes follow");
    expect_refused(put("huge.safetensors", le64(uint64_t(1) << 62) + body), "more than the 100000000");
    expect_refused(put("max.safetensors", le64(UINT64_MAX) + body), "more than");
    expect_refused(put("zero.safetensors", le64(0) + body), "header is empty");
}

TEST_F(SafetensorsBroken, HeaderIsNotAJsonObject) {
    expect_refused(put("garbage.safetensors", make_file("{not json at all", "")), "not valid JSON");
    expect_refused(put("array.safetensors", make_file("[1, 2, 3]", "")), "a list, not a JSON object");
    expect_refused(put("string.safetensors", make_file("\"qkv.weight\"", "")), "a string, not a JSON object");
    expect_refused(put("number.safetensors", make_file("12345678", "")), "a number");
    expect_refused(put("nul.safetensors", make_file(std::string("{\0}", 3), "")), "not valid JSON");
    expect_refused(put("bigfloat.safetensors", make_file("{\"a\": 1e999}", "")), "not valid JSON");
    expect_refused(put("utf8.safetensors", make_file("{\"\xff\xfe\": 1}", "")), "not valid JSON");
}

TEST_F(SafetensorsBroken, EntriesWithMissingFieldsOrWrongTypes) {
    json e = {{"dtype", "F32"}, {"shape", {24, 8}}, {"data_offsets", {256, 1024}}};
    auto without = [&](const char* key) { json c = e; c.erase(key); return c; };
    auto with = [&](const char* key, json v) { json c = e; c[key] = v; return c; };
    expect_refused(put("nodtype.safetensors", lesson_with({{"qkv.weight", without("dtype")}})), "no \"dtype\"");
    expect_refused(put("noshape.safetensors", lesson_with({{"qkv.weight", without("shape")}})), "no \"shape\"");
    expect_refused(put("nooffsets.safetensors", lesson_with({{"qkv.weight", without("data_offsets")}})), "no \"data_offsets\"");
    expect_refused(put("notobj.safetensors", lesson_with({{"qkv.weight", 42}})), "not an object");
    expect_refused(put("dtypenum.safetensors", lesson_with({{"qkv.weight", with("dtype", 32)}})), "\"dtype\" that is a number");
    expect_refused(put("shapestr.safetensors", lesson_with({{"qkv.weight", with("shape", "24x8")}})), "\"shape\" that is a string");
    expect_refused(put("shapeneg.safetensors", lesson_with({{"qkv.weight", with("shape", {-24, 8})}})), "not a whole number");
    expect_refused(put("shapefrac.safetensors", lesson_with({{"qkv.weight", with("shape", {24.5, 8})}})), "not a whole number");
    expect_refused(put("off3.safetensors", lesson_with({{"qkv.weight", with("data_offsets", {0, 1, 2})}})), "two whole numbers");
    expect_refused(put("offneg.safetensors", lesson_with({{"qkv.weight", with("data_offsets", {-256, 1024})}})), "two whole numbers");
    expect_refused(put("meta.safetensors", lesson_with({{"__metadata__", {1, 2}}})), "__metadata__ is a list");
    expect_refused(put("metaval.safetensors", lesson_with({{"__metadata__", {{"n_head", 2}}}})), "not a string");
}

TEST_F(SafetensorsBroken, OffsetsOutOfRangeOverlappingOrDisagreeingWithShape) {
    auto entry = [](json shape, uint64_t b, uint64_t e, const char* dtype = "F32") {
        return json{{"dtype", dtype}, {"shape", shape}, {"data_offsets", {b, e}}};
    };
    expect_refused(put("range.safetensors", lesson_with({{"qkv.weight", entry({24, 8}, 256, 1028)}})), "past the end");
    expect_refused(put("backwards.safetensors", lesson_with({{"qkv.weight", entry({0}, 300, 200)}})), "end before they begin");
    expect_refused(put("overlap.safetensors", lesson_with({{"qkv.weight", entry({24, 8}, 252, 1020)}})), "overlap");
    expect_refused(put("size.safetensors", lesson_with({{"qkv.weight", entry({24, 8}, 256, 1020)}})), "hold 764 bytes");
    expect_refused(put("f16size.safetensors", lesson_with({{"qkv.weight", entry({24, 8}, 256, 1024, "F16")}})), "384 bytes");
    // a shape whose element count overflows 64 bits must not be multiplied blindly
    expect_refused(put("overflow.safetensors",
                       lesson_with({{"qkv.weight", entry({uint64_t(1) << 40, uint64_t(1) << 40}, 256, 1024)}})),
                   "too many elements");
    expect_refused(put("bigshape.safetensors",
                       lesson_with({{"qkv.weight", entry({uint64_t(1) << 31, uint64_t(1) << 31}, 256, 1024)}})),
                   "damaged");
}

TEST_F(SafetensorsBroken, MissingTensorsAndWrongShapes) {
    auto entry = [](json shape, uint64_t b, uint64_t e) {
        return json{{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {b, e}}};
    };
    expect_refused(put("noproj.safetensors", lesson_with({{"proj.weight", nullptr}})), "no tensor 'proj.weight'");
    expect_refused(put("noqkv.safetensors", lesson_with({{"qkv.weight", nullptr}})), "no tensor 'qkv.weight'");
    expect_refused(put("other.safetensors",
                       lesson_with({{"qkv.weight", nullptr}, {"proj.weight", nullptr}, {"wte.weight", entry({8, 8}, 0, 256)}})),
                   "'wte.weight'");
    expect_refused(put("notensors.safetensors", make_file("{}", "")), "holds no tensors");
    expect_refused(put("qkvshape.safetensors", lesson_with({{"qkv.weight", entry({8, 24}, 256, 1024)}})), "must be [3C, C]");
    expect_refused(put("qkv3d.safetensors", lesson_with({{"qkv.weight", entry({3, 8, 8}, 256, 1024)}})), "must be [3C, C]");
    expect_refused(put("projshape.safetensors", lesson_with({{"proj.weight", entry({4, 16}, 0, 256)}})), "must be [8, 8]");
    expect_refused(put("biasshape.safetensors", lesson_with({{"qkv.bias", entry({8}, 1024, 1056)}}, std::string(1056, '\0'))),
                   "must be [24]");
    expect_refused(put("pbiasshape.safetensors", lesson_with({{"proj.bias", entry({1, 8}, 1024, 1056)}}, std::string(1056, '\0'))),
                   "must be [8]");
}

TEST_F(SafetensorsBroken, UnsupportedDtypeSaysWhichAreSupported) {
    json e = {{"dtype", "I32"}, {"shape", {24, 8}}, {"data_offsets", {256, 1024}}};
    expect_refused(put("i32.safetensors", lesson_with({{"qkv.weight", e}})), "F32, F16 or BF16");
    e["dtype"] = "Q4_K"; // unknown names are taken as they come and refused when used
    expect_refused(put("q4.safetensors", lesson_with({{"qkv.weight", e}})), "'Q4_K'");
}

TEST_F(SafetensorsBroken, NonFiniteWeightsNameTheTensorAndIndex) {
    std::vector<float> v(256, 0.5f);
    v[3 * 8 + 5] = NAN; // proj.weight[3][5]
    expect_refused(put("nan.safetensors", lesson_with(json::object(), f32_bytes(v) + std::string(768, '\0'))),
                   "'proj.weight' has a non-finite value (nan) at [3, 5]");
    std::vector<float> q(24 * 8, 0.f);
    q[23 * 8 + 7] = -INFINITY; // qkv.weight[23][7]
    expect_refused(put("inf.safetensors", lesson_with(json::object(), std::string(256, '\0') + f32_bytes(q))),
                   "'qkv.weight' has a non-finite value (-inf) at [23, 7]");
    // F16 inf (0x7c00) in a bias, found after conversion
    std::string bias(48, '\0');
    bias[2 * 5] = 0x00, bias[2 * 5 + 1] = 0x7c;
    json b = {{"dtype", "F16"}, {"shape", {24}}, {"data_offsets", {1024, 1072}}};
    expect_refused(put("f16inf.safetensors", lesson_with({{"qkv.bias", b}}, std::string(1024, '\0') + bias)),
                   "'qkv.bias' has a non-finite value (inf) at [5]");
}

TEST_F(SafetensorsBroken, HeadsLayersAndSizes) {
    std::string p = put("lesson.safetensors", lesson_with(json::object()));
    expect_refused(p, "give --n-head, which can be 1, 2, 4 or 8", std::nullopt);
    expect_refused(p, "n_embd 8 is not divisible by n_head 3; n_head can be 1, 2, 4 or 8", 3);
    expect_refused(p, "n_head 0 is out of range", 0);
    expect_refused(p, "layer 1 does not exist; the file holds one attention block, layer 0", 2, 1);
    expect_refused(put("meta3.safetensors", lesson_with({{"__metadata__", {{"n_head", "3"}}}})),
                   "not divisible by n_head 3 (from the file's __metadata__)", std::nullopt);
    expect_refused(put("metabad.safetensors", lesson_with({{"__metadata__", {{"n_head", "two"}}}})),
                   "n_head in __metadata__ 'two' is not a whole number", std::nullopt);
    expect_refused(fixture("gpt2_hf_c12.safetensors"), "layer 2 does not exist; the file has layers 0 to 1", 3, 2);
    expect_refused(fixture("gpt2_hf_c12.safetensors"), "layer -1 does not exist", 3, -1);
    // C beyond attnviz's limit is refused from the shapes alone, before any data is read
    // (an unknown dtype has no size to check the empty byte range against)
    json big = {{"proj.weight", {{"dtype", "Q4_K"}, {"shape", {9000, 9000}}, {"data_offsets", {0, 0}}}},
                {"qkv.weight", {{"dtype", "Q4_K"}, {"shape", {27000, 9000}}, {"data_offsets", {0, 0}}}}};
    expect_refused(put("big.safetensors", make_file(big.dump(), "")), "n_embd 9000 (from 'qkv.weight') is out of range");
}
