// test_colormaps.cpp: the heatmap shader and the side panel's colour bars and legends use
// two copies of the four colour maps (the shader's tables in shaders/heatmap_frag.glsl and
// theme.cpp's for ImGui). Every stop must be the same in both, or a legend would show a
// colour the heatmap never draws.
#include "theme.h"
#include <array>
#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using attnviz::Colormap;
using attnviz::PaletteKind;

namespace {

// The 11 stops of `const vec3 <name>[11] = vec3[11](...)` in the shader, in 0..255.
std::vector<std::array<int, 3>> shader_table(const std::string& name) {
    std::ifstream in(std::string(ATTNVIZ_SOURCE_DIR) + "/shaders/heatmap_frag.glsl");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string src = ss.str();
    const std::string head = "const vec3 " + name + "[11] = vec3[11](";
    const size_t at = src.find(head);
    if (at == std::string::npos) return {};
    const std::string body = src.substr(at + head.size(), src.find(");", at) - at - head.size());
    std::vector<std::array<int, 3>> stops;
    const std::regex vec3(R"(vec3\((\d+),\s*(\d+),\s*(\d+)\))");
    for (auto it = std::sregex_iterator(body.begin(), body.end(), vec3); it != std::sregex_iterator(); ++it)
        stops.push_back({std::stoi((*it)[1]), std::stoi((*it)[2]), std::stoi((*it)[3])});
    return stops;
}

void expect_same_stops(const std::string& name, Colormap m, PaletteKind k) {
    const auto stops = shader_table(name);
    ASSERT_EQ(stops.size(), 11u) << "the shader's table " << name;
    for (int i = 0; i <= 10; ++i) {
        const ImVec4 c = attnviz::colormap_color(m, float(i) / 10.f, k);
        const float got[3] = {c.x * 255.f, c.y * 255.f, c.z * 255.f};
        for (int ch = 0; ch < 3; ++ch)
            EXPECT_NEAR(got[ch], float(stops[size_t(i)][size_t(ch)]), 0.5f) << name << " stop " << i << " channel " << ch;
    }
}

} // namespace

TEST(Colormaps, ShaderAndPanelTablesAgree) {
    expect_same_stops("diverging", Colormap::diverging, PaletteKind::standard);
    expect_same_stops("viridis", Colormap::viridis, PaletteKind::standard);
    expect_same_stops("diverging_cb", Colormap::diverging, PaletteKind::cb);
    expect_same_stops("cividis", Colormap::viridis, PaletteKind::cb);
}

// cividis as matplotlib 3.6 samples it at t = 0, 0.5 and 1 (checked with Debian's
// python3-matplotlib: matplotlib.colormaps["cividis"](t)): dark blue, grey, yellow.
TEST(Colormaps, CividisMatchesMatplotlib) {
    const int want[3][3] = {{0, 34, 78}, {125, 124, 120}, {254, 232, 56}};
    const float t[3] = {0.f, 0.5f, 1.f};
    for (int s = 0; s < 3; ++s) {
        const ImVec4 c = attnviz::colormap_color(Colormap::viridis, t[s], PaletteKind::cb);
        EXPECT_NEAR(c.x * 255.f, float(want[s][0]), 0.5f) << "t = " << t[s];
        EXPECT_NEAR(c.y * 255.f, float(want[s][1]), 0.5f) << "t = " << t[s];
        EXPECT_NEAR(c.z * 255.f, float(want[s][2]), 0.5f) << "t = " << t[s];
    }
}
