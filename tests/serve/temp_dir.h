// temp_dir.h: the serve tests' one temporary folder: made under $TMPDIR (or /tmp) with a
// name of its own, removed with everything in it when the test ends.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace attnviz_test {

struct TempDir {
    std::string path;
    explicit TempDir(const char* name = "attnviz-serve") {
        const char* tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + name + "-XXXXXX";
        if (::mkdtemp(tmpl.data())) path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    // Writes `text` to the file `name` inside; its path.
    std::string write(const std::string& name, const std::string& text) const {
        const std::string p = path + "/" + name;
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }
};

} // namespace attnviz_test
