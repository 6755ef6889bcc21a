// test_safetensors_util.h: helpers shared by the safetensors tests.
//
// The tests check the reader against a second, deliberately naive reading of the same
// bytes (raw_tensors: nlohmann-json on the header, memcpy on the data) and against
// values that torch and numpy wrote into the fixtures, never against the reader itself.
#pragma once
#include "common/temp_dir.h"
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace st_test {

inline std::string fixture(const std::string& name) { return std::string(ATTNVIZ_TEST_DATA) + "/weights/" + name; }

inline std::string read_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
}

inline std::string le64(uint64_t n) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = char((n >> (8 * i)) & 0xff);
    return s;
}

// A safetensors file from header text and data bytes, with no checks at all.
inline std::string make_file(const std::string& header, const std::string& data) {
    return le64(header.size()) + header + data;
}

// `n` float32 values as little-endian bytes.
inline std::string f32_bytes(const std::vector<float>& v) {
    std::string s(v.size() * 4, '\0');
    std::memcpy(&s[0], v.data(), s.size()); // the test machine is little-endian x86-64
    return s;
}

struct RawTensor {
    std::string dtype;
    std::vector<uint64_t> shape;
    std::string bytes;
};

// The naive second reading of a well-formed file.
inline std::map<std::string, RawTensor> raw_tensors(const std::string& path) {
    std::string b = read_bytes(path);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(b[i]);
    nlohmann::json h = nlohmann::json::parse(b.substr(8, n));
    std::map<std::string, RawTensor> out;
    for (auto it = h.begin(); it != h.end(); ++it) {
        if (it.key() == "__metadata__") continue;
        RawTensor t;
        t.dtype = it.value()["dtype"].get<std::string>();
        t.shape = it.value()["shape"].get<std::vector<uint64_t>>();
        uint64_t begin = it.value()["data_offsets"][0], end = it.value()["data_offsets"][1];
        t.bytes = b.substr(8 + n + begin, end - begin);
        out[it.key()] = t;
    }
    return out;
}

inline std::vector<uint16_t> raw_u16(const RawTensor& t) {
    std::vector<uint16_t> v(t.bytes.size() / 2);
    std::memcpy(v.data(), t.bytes.data(), v.size() * 2);
    return v;
}

inline std::vector<float> raw_f32(const RawTensor& t) {
    std::vector<float> v(t.bytes.size() / 4);
    std::memcpy(v.data(), t.bytes.data(), v.size() * 4);
    return v;
}

// IEEE half by its definition: (-1)^s * 2^(e-15) * (1 + m/1024), subnormals m * 2^-24.
inline float half_ref(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0) v = std::ldexp(double(m), -24);
    else if (e == 31) v = m ? std::nan("") : INFINITY;
    else v = std::ldexp(1.0 + m / 1024.0, e - 15);
    return float(s ? -v : v);
}

// bfloat16 by its definition: the high half of a float32.
inline float bf16_ref(uint16_t b) {
    uint32_t bits = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

inline uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

// A fresh directory for one test, removed with everything in it afterwards.
using TempDir = attnviz_test::TempDir;

} // namespace st_test
