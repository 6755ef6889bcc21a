// gui_test_support.cpp: see gui_test_support.h.
#include "gui_test_support.h"
#include <gtest/gtest.h>
#include "sanitizers/lsan_tracer.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stb/stb_image.h> // implementation in libstb

extern char** environ;

namespace attnviz_gui_test {

int RunResult::err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    if (!err.empty() && err.back() != '\n') ++n;
    return n;
}

std::string temp_dir() {
    // One directory per test process, named by its pid and made on first use.
    const std::string dir = "/tmp/attnviz_gui_test_" + std::to_string(getpid());
    mkdir(dir.c_str(), 0700);
    return dir;
}

static RunResult run_once(const std::vector<std::string>& argv, bool unset_display) {
    RunResult r;
    const std::string err_path = temp_dir() + "/stderr_" + std::to_string(getpid()) + ".txt";
    pid_t pid = fork();
    if (pid < 0) return r;
    if (pid == 0) {
        if (unset_display) unsetenv("DISPLAY");
        FILE* e = std::freopen(err_path.c_str(), "w", stderr);
        FILE* o = std::freopen("/dev/null", "w", stdout);
        (void)e;
        (void)o;
        std::vector<char*> args;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ifstream in(err_path);
    std::stringstream ss;
    ss << in.rdbuf();
    r.err = ss.str();
    std::remove(err_path.c_str());
    return r;
}

RunResult run(const std::vector<std::string>& argv, bool unset_display) {
    RunResult r = run_once(argv, unset_display);
    if (attnviz_sanitizers::lsan_tracer_crashed(r.err)) {
        std::string what;
        for (const std::string& a : argv) what += (what.empty() ? "" : " ") + a;
        attnviz_sanitizers::note_lsan_retry(what);
        r = run_once(argv, unset_display);
    }
    return r;
}

namespace {

RunResult run_under_xvfb(const char* bin, const std::vector<std::string>& args) {
    // -a picks a free display; different tests start their search at different numbers so
    // that parallel ctest runs rarely race for the same one.
    const int start = 100 + int(getpid() % 800);
    std::vector<std::string> argv = {"xvfb-run", "-a", "-n", std::to_string(start), "-s", "-screen 0 1280x800x24", bin};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, false);
}

} // namespace

RunResult run_headless(const std::vector<std::string>& args) { return run_under_xvfb(ATTNVIZ_BIN, args); }

RunResult run_headless_harness(const std::vector<std::string>& args) { return run_under_xvfb(ATTNVIZ_HARNESS_BIN, args); }

RunResult run_direct(const std::vector<std::string>& args, bool unset_display) {
    std::vector<std::string> argv = {ATTNVIZ_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, unset_display);
}

RunResult run_harness(const std::vector<std::string>& args, bool unset_display) {
    std::vector<std::string> argv = {ATTNVIZ_HARNESS_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, unset_display);
}

Rgb Image::at(int x, int y) const {
    Rgb c;
    if (x < 0 || y < 0 || x >= w || y >= h) return c;
    const uint8_t* p = rgba.data() + (size_t(y) * size_t(w) + size_t(x)) * 4;
    c.r = p[0], c.g = p[1], c.b = p[2];
    return c;
}

int Image::distinct_colours() const {
    std::set<uint32_t> s;
    for (size_t i = 0; i + 3 < rgba.size(); i += 4) s.insert(uint32_t(rgba[i]) << 16 | uint32_t(rgba[i + 1]) << 8 | rgba[i + 2]);
    return int(s.size());
}

Image load_png(const std::string& path) {
    Image im;
    int n = 0;
    unsigned char* data = stbi_load(path.c_str(), &im.w, &im.h, &n, 4);
    if (!data) return Image{};
    im.rgba.assign(data, data + size_t(im.w) * size_t(im.h) * 4);
    stbi_image_free(data);
    return im;
}

double differing_fraction(const Image& a, const Image& b) {
    if (a.w != b.w || a.h != b.h || a.rgba.empty()) return 1.0;
    size_t diff = 0;
    for (size_t i = 0; i + 3 < a.rgba.size(); i += 4)
        diff += std::memcmp(&a.rgba[i], &b.rgba[i], 3) != 0;
    return double(diff) / double(a.rgba.size() / 4);
}

std::vector<nlohmann::json> Shot::items(const std::string& kind, const std::string& name, int head) const {
    std::vector<nlohmann::json> out;
    if (!layout.contains("items")) return out;
    for (const auto& it : layout["items"])
        if (it["kind"] == kind && it["name"] == name && (head < 0 || it["head"] == head)) out.push_back(it);
    return out;
}

Shot take_shot(const std::string& name, const std::vector<std::string>& args) {
    Shot s;
    const std::string png = temp_dir() + "/" + name + ".png", json = temp_dir() + "/" + name + ".json";
    std::vector<std::string> a = {"--screenshot", png, "--layout-out", json};
    a.insert(a.end(), args.begin(), args.end());
    s.result = run_headless_harness(a); // --layout-out (and --keys) are the harness's probes
    s.image = load_png(png);
    std::ifstream in(json);
    if (in) s.layout = nlohmann::json::parse(in, nullptr, false);
    return s;
}

bool cell_point(const nlohmann::json& hm, int row, int col, double fx, double fy, int& x, int& y) {
    const int row0 = hm["row0"], col0 = hm["col0"], nrows = hm["nrows"], ncols = hm["ncols"];
    if (row < row0 || row >= row0 + nrows || col < col0 || col >= col0 + ncols) return false;
    const double cw = double(hm["w"]) / ncols, ch = double(hm["h"]) / nrows;
    x = int(double(hm["x"]) + (col - col0 + fx) * cw);
    y = int(double(hm["y"]) + (row - row0 + fy) * ch);
    return true;
}

bool is_masked_grey(Rgb c) {
    return std::abs(c.r - c.g) <= 6 && std::abs(c.g - c.b) <= 6 && c.r >= 110 && c.r <= 210;
}
bool is_nan_dark(Rgb c) { return c.r <= 30 && c.g <= 30 && c.b <= 30; }
bool is_outline_yellow(Rgb c) { return std::abs(c.r - 240) <= 12 && std::abs(c.g - 228) <= 12 && std::abs(c.b - 66) <= 20; }
bool is_bar_colour(Rgb c) { return std::abs(c.r - 213) <= 10 && std::abs(c.g - 94) <= 10 && c.b <= 12; }

// Every item of the shot inside its window.
void expect_inside(const Shot& s, const std::string& what) {
    const double W = s.layout["width"], H = s.layout["height"];
    for (const nlohmann::json& it : s.layout["items"]) {
        const double x = it["x"], y = it["y"], w = it["w"], h = it["h"];
        EXPECT_TRUE(x >= 0 && y >= 0 && x + w <= W + 0.5 && y + h <= H + 0.5)
            << what << ": " << it["kind"] << " " << it["name"] << " at " << x << ", " << y << " size " << w << " x " << h;
    }
}

} // namespace attnviz_gui_test
