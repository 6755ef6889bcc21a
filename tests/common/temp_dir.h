// temp_dir.h: the tests' one temporary folder: made under $TMPDIR (or /tmp) with a name of
// its own, removed with everything in it when the test ends. Every suite includes it as
// "common/temp_dir.h".
#pragma once
#include <cstdlib>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace attnviz_test {

struct TempDir {
    std::string path; // "" when the folder could not be made
    explicit TempDir(const char* name = "attnviz-test") {
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
    // The path of the file `name` inside.
    std::string file(const std::string& name) const { return path + "/" + name; }
    // Writes `text` to the file `name` inside; its path.
    std::string write(const std::string& name, const std::string& text) const {
        const std::string p = file(name);
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }
    // The names inside, without . and ..
    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        if (DIR* d = ::opendir(path.c_str())) {
            while (dirent* e = ::readdir(d))
                if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
            ::closedir(d);
        }
        return names;
    }
};

} // namespace attnviz_test
