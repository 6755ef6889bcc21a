// test_readability.cpp: presentation at a projector's size (1280 x 720, text size 1 and 2):
// nothing drawn overlaps or leaves the window; the colour-blind palette, the settings file
// and the keyboard shortcuts.
#include "gui_test_support.h"
#include "settings.h"
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace attnviz_gui_test;

namespace {

struct Box {
    double x0, y0, x1, y1;
};
Box box_of(const nlohmann::json& it) {
    const double x = it["x"], y = it["y"], w = it["w"], h = it["h"];
    return {x, y, x + w, y + h};
}
bool overlap(const Box& a, const Box& b) {
    // Touching edges are fine; a pixel of overlap is not.
    return a.x0 < b.x1 - 0.5 && b.x0 < a.x1 - 0.5 && a.y0 < b.y1 - 0.5 && b.y0 < a.y1 - 0.5;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

TEST(Readability, NothingOverlapsOrLeavesTheWindowAt1280x720) {
    const std::vector<std::vector<std::string>> views = {
        {"--view", "walk", "--step", "0"},  {"--view", "walk", "--step", "3"},  {"--view", "walk", "--step", "5"},
        {"--view", "walk", "--step", "8"},  {"--view", "walk", "--step", "10"}, {"--view", "walk", "--step", "11"},
        {"--view", "qkv"},                  {"--view", "scores"},               {"--view", "causality"}};
    for (const char* scale : {"1", "2"})
        for (const auto& v : views) {
            std::vector<std::string> args = v;
            args.insert(args.end(), {"--perturb", "2", "--size", "1280x720", "--font-scale", scale});
            std::string name = "read";
            for (const std::string& a : args) name += "_" + a;
            for (char& c : name)
                if (c == '-' || c == 'x') c = '_';
            Shot s = take_shot(name, args);
            const std::string what = v[1] + (v.size() > 2 ? " step " + v[3] : "") + " at text size " + scale;
            ASSERT_EQ(s.result.status, 0) << what << ": " << s.result.err;
            ASSERT_EQ(s.image.w, 1280) << what;
            ASSERT_EQ(s.image.h, 720) << what;
            const auto& items = s.layout["items"];
            int heatmaps = 0;
            for (const auto& it : items) heatmaps += it["kind"] == "heatmap";
            // The causality view may give all its room to the chart at large text; every other
            // view shows its matrices whole.
            if (v[1] != "causality") {
                EXPECT_GT(heatmaps, 0) << what;
                for (const auto& it : items)
                    if (it["kind"] == "heatmap") {
                        EXPECT_EQ(it["nrows"], it["rows"]) << what << ": " << it.dump();
                        EXPECT_EQ(it["ncols"], it["cols"]) << what << ": " << it.dump();
                        // Whole matrices with cells of at least 10 pixels at text size 1, 14 at 2.
                        const double cell = std::min(double(it["w"]) / double(it["ncols"]), double(it["h"]) / double(it["nrows"]));
                        EXPECT_GE(cell, std::string(scale) == "1" ? 10.0 : 14.0) << what << ": " << it.dump();
                    }
            } else {
                int bars = 0;
                for (const auto& it : items) bars += it["kind"] == "bar";
                EXPECT_EQ(bars, 4) << what;
            }
            for (size_t a = 0; a < items.size(); ++a) {
                const Box ba = box_of(items[a]);
                EXPECT_GE(ba.x0, 0.0) << what << ": " << items[a].dump();
                EXPECT_GE(ba.y0, 0.0) << what << ": " << items[a].dump();
                EXPECT_LE(ba.x1, 1280.0) << what << ": " << items[a].dump();
                EXPECT_LE(ba.y1, 720.0) << what << ": " << items[a].dump();
                for (size_t b = a + 1; b < items.size(); ++b)
                    EXPECT_FALSE(overlap(ba, box_of(items[b]))) << what << ": " << items[a].dump() << " and " << items[b].dump();
            }
        }
}

TEST(Readability, CheckViewRendersAtTextSizeTwo) {
    Shot s = take_shot("read_check_2", {"--view", "check", "--size", "1280x720", "--font-scale", "2"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    EXPECT_GT(s.image.distinct_colours(), 50);
}

TEST(Palette, ColourBlindPaletteChangesTheHeatmapsAndNotTheLayout) {
    Shot a = take_shot("pal_default", {"--view", "scores"});
    Shot b = take_shot("pal_cb", {"--view", "scores", "--palette", "cb"});
    ASSERT_EQ(a.result.status, 0) << a.result.err;
    ASSERT_EQ(b.result.status, 0) << b.result.err;
    EXPECT_GT(differing_fraction(a.image, b.image), 0.02);
    EXPECT_EQ(a.layout["items"], b.layout["items"]);
    // The weights' cell (0, 0) is exactly 1: the top of viridis (253, 231, 37) by default,
    // the top of cividis (254, 232, 56) with cb: two yellows. Cell (1, 0) is 0.764: a green
    // in viridis (about 103, 203, 92), a khaki in cividis (about 191, 176, 106).
    // Near the top-left corner of cell (i, 0) of head 0's weights, clear of the number.
    auto weight_cell = [](Shot& shot, int i) {
        auto probs = shot.items("heatmap", "probs", 0);
        int x = -1, y = -1;
        if (probs.size() != 1u || !cell_point(probs[0], i, 0, 0.2, 0.15, x, y)) ADD_FAILURE() << "no weights cell " << i;
        return x >= 0 ? shot.image.at(x, y) : Rgb{};
    };
    const Rgb ca = weight_cell(a, 0), cb = weight_cell(b, 0), ma = weight_cell(a, 1), mb = weight_cell(b, 1);
    EXPECT_NEAR(ca.r, 253, 12);
    EXPECT_NEAR(ca.g, 231, 12);
    EXPECT_NEAR(cb.r, 254, 12);
    EXPECT_NEAR(cb.g, 232, 12);
    EXPECT_NEAR(cb.b, 56, 14);
    EXPECT_NEAR(ma.r, 103, 14);
    EXPECT_NEAR(mb.r, 191, 14);
    EXPECT_GT(std::abs(ma.r - mb.r), 60);
}

TEST(Palette, MaskedCellsKeepTheirStripesInEveryPalette) {
    Shot b = take_shot("pal_cb_mask", {"--view", "scores", "--palette", "cb"});
    ASSERT_EQ(b.result.status, 0) << b.result.err;
    auto masked = b.items("heatmap", "masked", 0);
    ASSERT_EQ(masked.size(), 1u);
    int x = 0, y = 0, grey = 0;
    for (double fx : {0.2, 0.5, 0.8})
        if (cell_point(masked[0], 0, 3, fx, 0.3, x, y)) grey += is_masked_grey(b.image.at(x, y));
    EXPECT_GE(grey, 2);
}

TEST(Palette, UnknownPaletteIsOneSentenceAndStatusTwo) {
    RunResult r = run_direct({"--palette", "rainbow", "--screenshot", temp_dir() + "/never.png"}, false);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find("rainbow"), std::string::npos) << r.err;
}

TEST(Settings, AThemeChangedInTheAppIsThereOnTheNextRun) {
    const std::string file = temp_dir() + "/cfg/attnviz/settings.json";
    std::filesystem::remove_all(temp_dir() + "/cfg");
    // Run 1: T switches dark -> light in the app; the settings file is written.
    Shot first = take_shot("set_first", {"--settings", file, "--keys", "t"});
    ASSERT_EQ(first.result.status, 0) << first.result.err;
    const nlohmann::json j = nlohmann::json::parse(read_text(file), nullptr, false);
    ASSERT_TRUE(j.is_object()) << read_text(file);
    EXPECT_EQ(j["theme"], "light");
    // Run 2 starts light: the same picture as --theme light.
    Shot second = take_shot("set_second", {"--settings", file});
    Shot light = take_shot("set_light", {"--theme", "light"});
    Shot dark = take_shot("set_dark", {});
    ASSERT_EQ(second.result.status, 0) << second.result.err;
    EXPECT_EQ(differing_fraction(second.image, light.image), 0.0);
    EXPECT_GT(differing_fraction(second.image, dark.image), 0.05);
    // An option overrides the file for its run and is not saved.
    Shot hc = take_shot("set_hc", {"--settings", file, "--theme", "high-contrast"});
    ASSERT_EQ(hc.result.status, 0) << hc.result.err;
    EXPECT_GT(differing_fraction(hc.image, light.image), 0.05);
    EXPECT_EQ(nlohmann::json::parse(read_text(file), nullptr, false)["theme"], "light");
}

TEST(Settings, PaletteAndTextSizeArePickedUpToo) {
    const std::string file = temp_dir() + "/cfg2/settings.json";
    std::filesystem::remove_all(temp_dir() + "/cfg2");
    Shot first = take_shot("set2_first", {"--settings", file, "--keys", "p,ctrl+="});
    ASSERT_EQ(first.result.status, 0) << first.result.err;
    Shot second = take_shot("set2_second", {"--settings", file});
    Shot same = take_shot("set2_same", {"--palette", "cb", "--font-scale", "1.25"});
    ASSERT_EQ(second.result.status, 0) << second.result.err;
    EXPECT_EQ(differing_fraction(second.image, same.image), 0.0);
}

TEST(Settings, ABrokenFileIsIgnoredWithOneLine) {
    const std::string file = temp_dir() + "/broken_settings.json";
    for (const char* text : {"{not json", "[1, 2]", "{\"theme\": \"purple\"}", "{\"font_scale\": 9}"}) {
        std::ofstream(file) << text;
        Shot s = take_shot("set_broken", {"--settings", file});
        EXPECT_EQ(s.result.status, 0) << text << ": " << s.result.err;
        EXPECT_EQ(s.result.err_lines(), 1) << text << ": " << s.result.err;
        EXPECT_NE(s.result.err.find("settings"), std::string::npos) << s.result.err;
        EXPECT_GT(s.image.w, 0) << text;
    }
}

TEST(Settings, ScreenshotsDoNotTouchTheUsersSettings) {
    // Headless runs without --settings neither read nor write XDG_CONFIG_HOME's file.
    const std::string xdg = temp_dir() + "/xdg";
    std::filesystem::create_directories(xdg + "/attnviz");
    std::ofstream(xdg + "/attnviz/settings.json") << "{\"theme\": \"light\"}";
    const char* old = std::getenv("XDG_CONFIG_HOME");
    const std::string saved = old ? old : "";
    setenv("XDG_CONFIG_HOME", xdg.c_str(), 1);
    Shot s = take_shot("set_xdg", {"--keys", "p"});
    Shot dark = take_shot("set_xdg_dark", {"--palette", "cb"});
    if (old) setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
    else unsetenv("XDG_CONFIG_HOME");
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    EXPECT_EQ(differing_fraction(s.image, dark.image), 0.0);
    EXPECT_EQ(read_text(xdg + "/attnviz/settings.json"), "{\"theme\": \"light\"}");
    EXPECT_FALSE(std::filesystem::exists("imgui.ini"));
}

TEST(Settings, DefaultPathFollowsXdgConfigHome) {
    const char* old_xdg = std::getenv("XDG_CONFIG_HOME");
    const char* old_home = std::getenv("HOME");
    const std::string sx = old_xdg ? old_xdg : "", sh = old_home ? old_home : "";
    setenv("XDG_CONFIG_HOME", "/tmp/somewhere", 1);
    EXPECT_EQ(attnviz::default_settings_path(), "/tmp/somewhere/attnviz/settings.json");
    setenv("XDG_CONFIG_HOME", "relative/dir", 1); // not absolute: ignored, as the spec says
    setenv("HOME", "/home/teacher", 1);
    EXPECT_EQ(attnviz::default_settings_path(), "/home/teacher/.config/attnviz/settings.json");
    unsetenv("XDG_CONFIG_HOME");
    EXPECT_EQ(attnviz::default_settings_path(), "/home/teacher/.config/attnviz/settings.json");
    if (old_xdg) setenv("XDG_CONFIG_HOME", sx.c_str(), 1);
    if (old_home) setenv("HOME", sh.c_str(), 1);
    else unsetenv("HOME");
}

TEST(Keys, ShortcutsDoWhatTheirOptionsDo) {
    Shot base = take_shot("keys_base", {"--view", "walk"});
    ASSERT_EQ(base.result.status, 0) << base.result.err;
    // ? and F1 open the same help overlay.
    Shot q = take_shot("keys_q", {"--view", "walk", "--keys", "?"});
    Shot f1 = take_shot("keys_f1", {"--view", "walk", "--keys", "f1"});
    ASSERT_EQ(q.result.status, 0) << q.result.err;
    EXPECT_GT(differing_fraction(base.image, q.image), 0.05);
    EXPECT_EQ(differing_fraction(q.image, f1.image), 0.0);
    // Esc closes it again.
    Shot closed = take_shot("keys_closed", {"--view", "walk", "--keys", "?,esc"});
    EXPECT_EQ(differing_fraction(base.image, closed.image), 0.0);
    // 3 and Right / T / P match their options.
    Shot k3 = take_shot("keys_3", {"--keys", "3"});
    Shot o3 = take_shot("opt_3", {"--view", "scores"});
    EXPECT_EQ(differing_fraction(k3.image, o3.image), 0.0);
    Shot kr = take_shot("keys_right", {"--keys", "right,right"});
    Shot or2 = take_shot("opt_step2", {"--step", "2"});
    EXPECT_EQ(differing_fraction(kr.image, or2.image), 0.0);
    Shot kp = take_shot("keys_p", {"--keys", "p"});
    Shot op = take_shot("opt_p", {"--palette", "cb"});
    EXPECT_EQ(differing_fraction(kp.image, op.image), 0.0);
    // M, S and H change the config as the side panel would.
    Shot km = take_shot("keys_msh", {"--keys", "m,s,h", "--view", "scores"});
    ASSERT_EQ(km.result.status, 0) << km.result.err;
    EXPECT_EQ(km.layout["config"]["mask"], "none");
    EXPECT_EQ(km.layout["config"]["scale"], "n-embd");
    EXPECT_EQ(km.layout["config"]["n_head"], 4);
    // F2 hides the side panel: the view moves left.
    Shot f2 = take_shot("keys_f2", {"--keys", "f2", "--view", "scores"});
    ASSERT_EQ(f2.items("heatmap", "scaled", 0).size(), 1u);
    ASSERT_EQ(o3.items("heatmap", "scaled", 0).size(), 1u);
    EXPECT_LT(double(f2.items("heatmap", "scaled", 0)[0]["x"]), double(o3.items("heatmap", "scaled", 0)[0]["x"]));
    // Up / Down and Left / Right move p and the strength in the causality view.
    Shot kc = take_shot("keys_caus", {"--view", "causality", "--keys", "down,right,right"});
    ASSERT_EQ(kc.result.status, 0) << kc.result.err;
    EXPECT_EQ(kc.layout["perturb"]["p"], 3);
    EXPECT_NEAR(double(kc.layout["perturb"]["strength"]), 0.1, 1e-6);
    // Alt+1 / Alt+2 in the check view are its "Show me" buttons: the lesson's perturbation in
    // the causality view; the next of H = 1, 2, 4 at the same C, in the scores view.
    Shot a1 = take_shot("keys_alt1", {"--view", "check", "--keys", "alt+1"});
    ASSERT_EQ(a1.result.status, 0) << a1.result.err;
    EXPECT_EQ(a1.layout["perturb"]["p"], 2);
    EXPECT_NEAR(double(a1.layout["perturb"]["strength"]), 1.0, 1e-6);
    EXPECT_EQ(differing_fraction(a1.image, take_shot("opt_lesson_p2", {"--view", "causality", "--perturb", "2", "--strength", "1"}).image), 0.0);
    Shot a2 = take_shot("keys_alt2", {"--view", "check", "--keys", "alt+2,5,alt+2"});
    ASSERT_EQ(a2.result.status, 0) << a2.result.err;
    EXPECT_EQ(a2.layout["config"]["n_head"], 1); // 2 -> 4, then past the last back to 1
    EXPECT_EQ(a2.layout["config"]["n_embd"], 8);
    // L resets to the lesson with the side panel hidden too (its button is not drawn then).
    Shot kl = take_shot("keys_f2_l", {"--n-embd", "12", "--n-head", "3", "--keys", "f2,l"});
    ASSERT_EQ(kl.result.status, 0) << kl.result.err;
    EXPECT_EQ(kl.layout["config"]["n_embd"], 8);
    EXPECT_EQ(kl.layout["config"]["n_head"], 2);
    // Without Alt, 1 still switches to the shape walk.
    Shot k1 = take_shot("keys_1_from_check", {"--view", "check", "--keys", "1"});
    EXPECT_EQ(differing_fraction(k1.image, base.image), 0.0);
}

TEST(Keys, BadKeyScriptIsOneSentence) {
    RunResult r = run_harness({"--keys", "t,nosuchkey", "--screenshot", temp_dir() + "/never.png"}, false);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find("nosuchkey"), std::string::npos) << r.err;
}
