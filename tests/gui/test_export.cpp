// test_export.cpp: exports from the window - any tensor of the trace on screen to .npy or
// .csv gives the very file `attnviz export` writes for the same config; the PNG request
// checks its name and follows the view.
#include "app_state.h"
#include "gui_test_support.h"
#include "inputs.h"
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

TEST(ExportFromTheApp, EveryTensorEqualsTheExportCommand) {
    // Words, three heads and a half-way perturbation: the trace as the window shows it.
    Config c = lesson_config();
    c.seed = 3;
    c.n_embd = 12;
    c.n_head = 3;
    AppState s;
    init_app_state(s, c, KernelChoice::reference);
    std::string error;
    ASSERT_TRUE(set_text(s, "the cat saw the cat", error)) << error;
    recompute(s);
    request_perturbation(s, 2, 0.5f);
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    ASSERT_EQ(s.run.applied_p, 2);
    const std::string dir = temp_dir();
    for (TensorName n : all_tensor_names()) {
        const std::string name = to_string(n);
        for (const char* ext : {".npy", ".csv"}) {
            const std::string app = dir + "/app_" + name + ext, cli = dir + "/cli_" + name + ext;
            ASSERT_TRUE(export_tensor_file(s, n, app, error)) << error;
            RunResult r = run_direct({"export", "--tensor", name, "--out", cli, "--seed", "3", "--n-embd", "12",
                                      "--n-head", "3", "--text", "the cat saw the cat", "--perturb", "2", "--strength",
                                      "0.5", "--kernel", "reference"},
                                     false);
            ASSERT_EQ(r.status, 0) << r.err;
            const std::string a = slurp(app), b = slurp(cli);
            EXPECT_GT(a.size(), 0u) << name << ext;
            EXPECT_EQ(a, b) << name << ext;
        }
    }
    // The tensors differ from the unperturbed run's (the export is of what is on screen).
    RunResult r = run_direct({"export", "--tensor", "y", "--out", dir + "/cli_plain_y.npy", "--seed", "3", "--n-embd",
                              "12", "--n-head", "3", "--text", "the cat saw the cat", "--kernel", "reference"},
                             false);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(slurp(dir + "/app_y.npy"), slurp(dir + "/cli_plain_y.npy"));
}

TEST(ExportFromTheApp, StatusSaysWhatWasSavedOrWhyNot) {
    AppState s;
    init_app_state(s, lesson_config(), KernelChoice::reference);
    recompute(s);
    const std::string dir = temp_dir();
    s.fields.export_tensor = 8; // probs
    ASSERT_EQ(to_string(all_tensor_names()[8]), std::string("probs"));
    s.fields.tensor_path = dir + "/probs.npy";
    export_tensor_now(s);
    EXPECT_NE(s.status.find("Saved probs (2, 4, 4)"), std::string::npos) << s.status;
    EXPECT_FALSE(slurp(dir + "/probs.npy").empty());
    s.fields.tensor_path = dir + "/probs.txt";
    export_tensor_now(s);
    EXPECT_EQ(s.status.rfind("Not saved", 0), 0u) << s.status;
    s.fields.tensor_path = dir + "/no/such/folder/probs.npy";
    export_tensor_now(s);
    EXPECT_EQ(s.status.rfind("Not saved", 0), 0u) << s.status;
}

TEST(ExportFromTheApp, PngRequestFollowsTheViewAndChecksTheName) {
    AppState s;
    s.screen.view = View::scores;
    EXPECT_EQ(default_png_name(View::causality), "attnviz-causality.png");
    EXPECT_EQ(default_tensor_file(TensorName::probs, false), "attnviz-probs.npy");
    request_png(s);
    EXPECT_EQ(s.screen.png_request, "attnviz-scores.png");
    s.screen.png_request.clear();
    s.fields.png_path = "figure.jpg";
    request_png(s);
    EXPECT_TRUE(s.screen.png_request.empty());
    EXPECT_EQ(s.status.rfind("Not saved", 0), 0u) << s.status;
    s.fields.png_path = "figure.png";
    s.screen.view = View::walk;
    request_png(s);
    EXPECT_EQ(s.screen.png_request, "figure.png"); // a name of the user's own stays
}

TEST(ExportWindow, CtrlPSavesTheViewAndCtrlEATensor) {
    // The default names land in the working directory, as they would for a user.
    const std::filesystem::path cwd = std::filesystem::current_path();
    const std::filesystem::path png = cwd / "attnviz-scores.png", npy = cwd / "attnviz-x.npy";
    std::filesystem::remove(png);
    std::filesystem::remove(npy);
    const std::string shot = temp_dir() + "/ctrl_p_window.png";
    RunResult r = run_headless_harness({"--view", "scores", "--text", "the cat saw the cat", "--keys", "ctrl+p,ctrl+e",
                                        "--screenshot", shot});
    ASSERT_EQ(r.status, 0) << r.err;
    const Image view = load_png(png.string()), window = load_png(shot);
    std::filesystem::remove(png);
    ASSERT_GT(view.w, 0);
    ASSERT_EQ(window.w, 1280);
    // The view without the side panel, and exactly what the window showed there.
    EXPECT_GT(view.w, 640);
    EXPECT_LT(view.w, window.w);
    EXPECT_LT(view.h, window.h);
    const int x0 = window.w - view.w, y0 = window.h - view.h;
    int differ = 0;
    for (int y = 0; y < view.h; ++y)
        for (int x = 0; x < view.w; ++x) {
            const Rgb a = view.at(x, y), b = window.at(x0 + x, y0 + y);
            differ += a.r != b.r || a.g != b.g || a.b != b.b;
        }
    EXPECT_EQ(differ, 0);
    // Ctrl+E: x of the five words, as numpy.load reads it.
    const std::string bytes = slurp(npy.string());
    std::filesystem::remove(npy);
    ASSERT_GT(bytes.size(), 10u);
    EXPECT_EQ(bytes.substr(1, 5), "NUMPY");
    EXPECT_NE(bytes.find("(5, 8)"), std::string::npos);
}
