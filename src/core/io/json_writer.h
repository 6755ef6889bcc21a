// json_writer.h: numbers as JSON and CSV text, and a streaming JSON writer.
//
//   JSON numbers   float32 with 9 significant digits (%.9g): parses back to the same float.
//                  NaN, -inf and +inf have no JSON spelling and are written as null.
//   JSON strings   UTF-8; a byte that is not UTF-8 (a file name in another encoding)
//                  becomes U+FFFD, so the output is always valid JSON.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace attnviz {

// "%.9g" of a float32, or "null" when it is NaN or infinite.
std::string json_number(float v);
// Appends the same text to `out`; returns its length. Faster than json_number in loops.
int append_json_number(std::string& out, float v);
// "%.9g", but "-inf", "inf" and "nan" for the non-finite values (the CSV spelling).
int append_csv_number(std::string& out, float v);

// Writes one JSON value as it goes; commas are placed automatically. Output is buffered
// and handed to the stream in large pieces. Keys and strings are escaped.
class JsonWriter {
public:
    explicit JsonWriter(std::ostream& out);
    ~JsonWriter(); // flushes

    void begin_object();
    void end_object();
    void begin_array();
    void end_array();
    void key(const std::string& k); // inside an object, before its value; a new line

    void value(float v);            // json_number
    void value_int(int64_t v);
    void value_string(const std::string& s);
    void value_bool(bool b);
    void value_null();
    void value_shape(const std::vector<int64_t>& shape); // [1, 4, 8]

    // Nested arrays of float32 in row-major order: `shape` gives the nesting, e.g.
    // {1, T, C} for a (T, C) matrix with B in front. data holds prod(shape) values.
    void array(const float* data, const std::vector<int64_t>& shape);
    // Hands everything written so far to the stream.
    void flush();

private:
    std::ostream& out_;
    std::string buf_;
    std::vector<bool> first_; // per open container: nothing written in it yet
    bool after_key_ = false;
    void before_value();
    void spill();
};

} // namespace attnviz
