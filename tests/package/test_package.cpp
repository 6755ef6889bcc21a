// test_package.cpp: the Debian package `make package` builds (cmake/packaging.cmake), read with
// dpkg-deb: its control fields, its file list, and the binary, man page, menu entry and icons
// inside it. Skipped, saying so, when build-package/ holds no .deb of this version (the .deb
// is not part of `make test`; scripts/package-check installs it on a fresh Debian 12).
// ATTNVIZ_DEB=FILE tests another file.
#include "cli/run_attnviz.h"
#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

using attnviz_test::read_file;
using attnviz_test::RunResult;
using attnviz_test::run_attnviz;
using attnviz_test::run_program;

// build-package/attnviz_VERSION_ARCH.deb, or "" when there is none.
std::string find_deb() {
    if (const char* given = std::getenv("ATTNVIZ_DEB"); given && *given) return given;
    const std::string dir = std::string(ATTNVIZ_SOURCE_DIR) + "/build-package";
    const std::string prefix = std::string("attnviz_") + ATTNVIZ_VERSION + "_";
    std::string found;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string n = e->d_name;
            if (n.rfind(prefix, 0) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, ".deb") == 0)
                found = dir + "/" + n;
        }
        closedir(d);
    }
    return found;
}

// "Key: value" lines of `dpkg-deb -f`, continuation lines (starting with a space) appended.
std::map<std::string, std::string> control_fields(const std::string& text) {
    std::map<std::string, std::string> fields;
    std::istringstream in(text);
    std::string line, key;
    while (std::getline(in, line)) {
        if (!line.empty() && line[0] == ' ' && !key.empty()) {
            fields[key] += "\n" + line;
        } else if (size_t colon = line.find(": "); colon != std::string::npos) {
            key = line.substr(0, colon);
            fields[key] = line.substr(colon + 2);
        }
    }
    return fields;
}

// The package names a Depends field lists, alternatives included ("a (>= 1), b | c" -> a b c).
std::vector<std::string> depended_names(const std::string& depends) {
    std::vector<std::string> names;
    size_t start = 0;
    while (start < depends.size()) {
        size_t end = depends.find_first_of(",|", start);
        if (end == std::string::npos) end = depends.size();
        const std::string item = depends.substr(start, end - start);
        const size_t first = item.find_first_not_of(" \n");
        if (first != std::string::npos) names.push_back(item.substr(first, item.find_first_of(" (:", first) - first));
        start = end + 1;
    }
    return names;
}

// `dpkg-deb -c`: path (without the leading "."), mode string ("-rwxr-xr-x") and owner.
struct Entry {
    std::string mode, owner;
};
std::map<std::string, Entry> file_list(const std::string& text) {
    std::map<std::string, Entry> files;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string mode, owner, size, date, time, path;
        if (f >> mode >> owner >> size >> date >> time >> path) files[path.substr(1)] = {mode, owner};
    }
    return files;
}

// A PNG's width and height from its IHDR chunk, or {0, 0}.
std::pair<int, int> png_size(const std::string& bytes) {
    if (bytes.size() < 24 || bytes.compare(1, 3, "PNG") != 0 || bytes.compare(12, 4, "IHDR") != 0) return {0, 0};
    auto be32 = [&](size_t at) {
        int v = 0;
        for (size_t i = 0; i < 4; ++i) v = v * 256 + static_cast<unsigned char>(bytes[at + i]);
        return v;
    };
    return {be32(16), be32(20)};
}

class Package : public ::testing::Test {
protected:
    std::string deb;
    void SetUp() override {
        deb = find_deb();
        if (deb.empty())
            GTEST_SKIP() << "no attnviz_" << ATTNVIZ_VERSION << "_*.deb in " << ATTNVIZ_SOURCE_DIR
                         << "/build-package: run `make package` first to test the Debian package";
    }
    std::string dpkg_deb(const std::string& option) {
        RunResult r = run_program({"dpkg-deb", option, deb});
        EXPECT_EQ(r.status, 0) << "dpkg-deb " << option << " " << deb << ": " << r.err;
        return r.out;
    }
};

TEST_F(Package, ControlFieldsNameTheVersionSectionAndEveryDependency) {
    auto fields = control_fields(dpkg_deb("-f"));
    EXPECT_EQ(fields["Package"], "attnviz");
    EXPECT_EQ(fields["Version"], ATTNVIZ_VERSION);
    EXPECT_EQ(fields["Section"], "education");
    EXPECT_NE(fields["Maintainer"].find('<'), std::string::npos) << fields["Maintainer"];
    EXPECT_NE(fields["Description"].find("self-attention"), std::string::npos) << fields["Description"];
    EXPECT_NE(fields["Description"].find('\n'), std::string::npos) << "no long description";
    EXPECT_EQ(fields.count("Homepage"), 0u);
    // Linked (found by dpkg-shlibdeps) and opened at run time (declared by hand).
    const std::vector<std::string> depends = depended_names(fields["Depends"]);
    for (const char* lib : {"libc6", "libstdc++6", "libglfw3", "libgl1", "libstb0", "libopenblas0-pthread",
                            "fonts-dejavu-core", "libwebsockets17", "libqrencode4"})
        EXPECT_NE(std::find(depends.begin(), depends.end(), lib), depends.end())
            << lib << " is not in Depends: " << fields["Depends"];
}

TEST_F(Package, HoldsTheBinaryManPageMenuEntryAndIconsUnderUsr) {
    auto files = file_list(dpkg_deb("-c"));
    const std::string icons = "/usr/share/icons/hicolor/";
    const std::vector<std::string> wanted = {
        "/usr/bin/attnviz", "/usr/share/man/man1/attnviz.1.gz", "/usr/share/applications/attnviz.desktop",
        icons + "scalable/apps/attnviz.svg", icons + "48x48/apps/attnviz.png", icons + "128x128/apps/attnviz.png",
        icons + "256x256/apps/attnviz.png"};
    for (const std::string& path : wanted) {
        ASSERT_EQ(files.count(path), 1u) << path << " is not in " << deb;
        EXPECT_EQ(files[path].owner, "root/root") << path;
        EXPECT_EQ(files[path].mode, path == "/usr/bin/attnviz" ? "-rwxr-xr-x" : "-rw-r--r--") << path;
    }
    for (const auto& file : files)
        EXPECT_TRUE(file.first.rfind("/usr/", 0) == 0 || file.first == "/") << file.first << " is outside /usr";
}

TEST_F(Package, ItsBinaryManPageMenuEntryAndIconsWork) {
    attnviz_test::TempDir root;
    ASSERT_EQ(run_program({"dpkg-deb", "-x", deb, root.path}).status, 0);
    const std::string usr = root.path + "/usr";

    // The packaged (portable) binary prints the lesson's lines exactly as the tested build.
    RunResult packaged = run_program({usr + "/bin/attnviz", "lesson"});
    EXPECT_EQ(packaged.status, 0) << packaged.err;
    EXPECT_EQ(packaged.out, run_attnviz({"lesson"}).out);
    EXPECT_EQ(run_program({usr + "/bin/attnviz", "--version"}).out, std::string("attnviz ") + ATTNVIZ_VERSION + "\n");

    // The man page: help2man's header, the options and every command's own help.
    RunResult man = run_program({"gzip", "-dc", usr + "/share/man/man1/attnviz.1.gz"});
    EXPECT_EQ(man.status, 0) << man.err;
    EXPECT_EQ(man.out.find(".TH ATTNVIZ \"1\""), man.out.find(".TH")) << man.out.substr(0, 300);
    EXPECT_NE(man.out.find(".TH"), std::string::npos);
    for (const char* part : {"\\-\\-screenshot", ".SH COMMANDS", ".SS lesson", ".SS trace", ".SS train", ".SH FILES"})
        EXPECT_NE(man.out.find(part), std::string::npos) << part << " is not in the man page";

    const std::string desktop = read_file(usr + "/share/applications/attnviz.desktop");
    for (const char* line : {"[Desktop Entry]\n", "\nType=Application\n", "\nExec=attnviz\n", "\nIcon=attnviz\n"})
        EXPECT_NE(desktop.find(line), std::string::npos) << line << " is not in the .desktop file";

    for (int size : {48, 128, 256}) {
        const std::string dir = std::to_string(size) + "x" + std::to_string(size);
        auto [w, h] = png_size(read_file(usr + "/share/icons/hicolor/" + dir + "/apps/attnviz.png"));
        EXPECT_EQ(w, size) << dir;
        EXPECT_EQ(h, size) << dir;
    }
    EXPECT_NE(read_file(usr + "/share/icons/hicolor/scalable/apps/attnviz.svg").find("<svg"), std::string::npos);
}

// attnviz --serve's web page (make package runs make web first), where the binary finds it.
TEST_F(Package, HoldsTheWebPageTheServerServes) {
    auto files = file_list(dpkg_deb("-c"));
    for (const char* name : {"index.html", "attnviz.js", "attnviz.wasm"}) {
        const std::string path = std::string("/usr/share/attnviz/site/") + name;
        ASSERT_EQ(files.count(path), 1u) << path << " is not in " << deb << "; make package runs make web first";
        EXPECT_EQ(files[path].owner, "root/root") << path;
    }
}

} // namespace
