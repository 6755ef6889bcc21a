// run_attnviz.h: runs build/attnviz as a child process and captures what it says.
#pragma once
#include "common/temp_dir.h"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attnviz_test {

struct RunResult {
    int status = -1;     // exit status, or 128 + signal, or -1 when it could not start
    std::string out, err;
    int err_lines() const; // lines on stderr
};

// Runs ATTNVIZ_BIN with `args` (no shell), stdout and stderr to temporary files, or stdout
// to `stdout_path` when given (e.g. /dev/full; `out` is then empty).
RunResult run_attnviz(const std::vector<std::string>& args, const char* stdout_path = nullptr);

// The same for any program: argv[0] is looked up on PATH unless it holds a slash.
RunResult run_program(std::vector<std::string> argv, const char* stdout_path = nullptr);

// Runs ATTNVIZ_BIN with `args` and parses its stdout as JSON, expecting exit status 0 and
// nothing on stderr (gtest failures otherwise; a discarded value when stdout is not JSON).
inline nlohmann::json run_json(const std::vector<std::string>& args) {
    RunResult r = run_attnviz(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << r.out.substr(0, 200);
    return j;
}

// A file's whole content, or "" when it cannot be read.
std::string read_file(const std::string& path);
nlohmann::json load_json(const std::string& path);


// Compares two JSON values as float32 data: numbers equal after rounding each to float32
// (bit for bit, so -0 and 0 differ only in sign and are treated as equal as floats), null
// only with null, arrays element by element with equal lengths. On the first difference
// returns false and describes it in `where` (a path like "y1[0][2][5]").
bool same_float32(const nlohmann::json& ours, const nlohmann::json& ref, const std::string& path,
                  std::string& where);

// The command is refused as bad input: exit status 2, one line on stderr containing
// `must_contain`, nothing on stdout.
inline void expect_usage_error(const std::vector<std::string>& args, const std::string& must_contain) {
    RunResult r = run_attnviz(args);
    std::string shown;
    for (const std::string& a : args) shown += a + " ";
    EXPECT_EQ(r.status, 2) << shown << "\nstderr: " << r.err;
    EXPECT_EQ(r.err_lines(), 1) << shown << "\nstderr: " << r.err;
    EXPECT_NE(r.err.find(must_contain), std::string::npos) << shown << "\nstderr: " << r.err;
    EXPECT_EQ(r.out, "") << shown;
}

} // namespace attnviz_test
