// test_model_shots.cpp: the Model view in the window (--view model): one pattern per layer x
// head with the detector's highlights on the heads the core marks, the predictions' bars,
// every head of a big model paged inside 1280 x 720 at text sizes 1 and 2, --head in the
// per-head views, and bad --view / --head values refused in one sentence.
#include "gui_test_support.h"
#include "head_detector.h"
#include "model_io.h"
#include "state_test_support.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <map>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

const std::string data_dir = ATTNVIZ_TEST_DATA "/model_view/";

// Every item of a kind, whatever its name (a head's name is its role).
std::vector<nlohmann::json> of_kind(const Shot& s, const std::string& kind) {
    std::vector<nlohmann::json> out;
    for (const nlohmann::json& it : s.layout.value("items", nlohmann::json::array()))
        if (it["kind"] == kind) out.push_back(it);
    return out;
}

// What the core marks on the file's default sequence: (layer, head) -> "prev", "dup", "ind".
std::map<std::pair<int, int>, std::string> core_roles(const std::string& file) {
    Model m;
    std::string error;
    EXPECT_TRUE(load_model(file, m, error)) << error;
    ModelTrace t;
    model_forward(m, default_trained_tokens(m.config), KernelKind::reference, t);
    HeadDetection d;
    d.text = detect_on_text({attention_of(t)});
    detect_repeat_induction(m, KernelKind::reference, d);
    std::map<std::pair<int, int>, std::string> out;
    for (const HeadRole& r : head_roles(d)) out[{r.layer, r.head}] = role_tag(r.kind);
    return out;
}

std::map<std::pair<int, int>, std::string> shot_roles(const Shot& s) {
    std::map<std::pair<int, int>, std::string> out;
    for (const nlohmann::json& it : of_kind(s, "grid_head"))
        if (!it["name"].get<std::string>().empty()) out[{int(it["layer"]), int(it["head"])}] = it["name"];
    return out;
}

} // namespace

TEST(ModelWindow, GridHasEveryHeadAndTheDetectorsHighlights) {
    for (const char* file : {"both.safetensors", "induction.safetensors"}) {
        const std::string path = data_dir + file;
        Shot s = take_shot(std::string("model_") + file, {"--weights", path, "--view", "model", "--size", "1280x720"});
        ASSERT_EQ(s.result.status, 0) << file << ": " << s.result.err;
        EXPECT_EQ(s.layout["view"], "model");
        Model m;
        std::string error;
        ASSERT_TRUE(load_model(path, m, error)) << error;
        const std::vector<nlohmann::json> heads = of_kind(s, "grid_head");
        ASSERT_EQ(int(heads.size()), m.config.n_layer * m.config.n_head) << file;
        for (const nlohmann::json& h : heads) {
            EXPECT_EQ(int(h["rows"]), int(default_trained_tokens(m.config).size())) << file;
            EXPECT_GE(double(h["w"]), 30.0) << file;
        }
        const auto want = core_roles(path);
        EXPECT_FALSE(want.empty()) << file << ": the core marks no head";
        EXPECT_EQ(shot_roles(s), want) << file;
        // The table has a row per head, marked as the grid is.
        EXPECT_EQ(int(of_kind(s, "detector_row").size()), m.config.n_layer * m.config.n_head) << file;
        // The LM head's predictions: five bars at the last position, no more than 1 together.
        const std::vector<nlohmann::json> bars = of_kind(s, "prediction");
        if (m.config.has_lm_head()) {
            ASSERT_EQ(bars.size(), 5u) << file;
            double sum = 0;
            for (const nlohmann::json& b : bars) sum += double(b["value"]);
            EXPECT_LE(sum, 1.0 + 1e-6);
            EXPECT_EQ(int(bars[0]["position"]), int(default_trained_tokens(m.config).size()) - 1);
        } else {
            EXPECT_TRUE(bars.empty()) << file;
        }
        expect_inside(s, file);
    }
}

TEST(ModelWindow, PatternsTableAndPredictionsDoNotOverlapAtBothTextSizes) {
    auto box_overlap = [](const nlohmann::json& a, const nlohmann::json& b) {
        return double(a["x"]) < double(b["x"]) + double(b["w"]) && double(b["x"]) < double(a["x"]) + double(a["w"]) &&
               double(a["y"]) < double(b["y"]) + double(b["h"]) && double(b["y"]) < double(a["y"]) + double(a["h"]);
    };
    for (const char* file : {"both.safetensors", "induction.safetensors"})
        for (const char* scale : {"1", "2"}) {
            const std::string what = std::string(file) + " at text size " + scale;
            Shot s = take_shot(std::string("model_overlap_") + scale + file,
                               {"--weights", data_dir + file, "--view", "model", "--size", "1280x720", "--font-scale", scale});
            ASSERT_EQ(s.result.status, 0) << what << ": " << s.result.err;
            expect_inside(s, what);
            const auto& items = s.layout["items"];
            // Items of different kinds never overlap (a table row may touch the next one), but
            // for those drawn on purpose inside another: a head's ablate mark on its pattern,
            // the ablate box and the DLA cell in their table row.
            auto nested = [](const std::string& a, const std::string& b) {
                auto pair = [&](const char* x, const char* y) { return (a == x && b == y) || (a == y && b == x); };
                return pair("ablate_mark", "grid_head") || pair("ablate_check", "detector_row") ||
                       pair("dla_cell", "detector_row") || pair("ablate_check", "dla_cell");
            };
            for (size_t a = 0; a < items.size(); ++a)
                for (size_t b = a + 1; b < items.size(); ++b)
                    if (items[a]["kind"] != items[b]["kind"] && !nested(items[a]["kind"], items[b]["kind"])) {
                        EXPECT_FALSE(box_overlap(items[a], items[b])) << what << ": " << items[a].dump() << " and " << items[b].dump();
                    }
        }
}

TEST(ModelWindow, UntrainedModelHasNoHighlight) {
    Model m = init_model(task_defaults(Task::both).model, 3);
    const std::string path = temp_dir() + "/untrained_both.safetensors";
    std::string error;
    ASSERT_TRUE(save_model(path, m, error)) << error;
    Shot s = take_shot("model_untrained", {"--weights", path, "--view", "model", "--size", "1280x720"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    EXPECT_EQ(of_kind(s, "grid_head").size(), 4u);
    EXPECT_TRUE(shot_roles(s).empty());
}

TEST(ModelWindow, ABigModelIsPagedInsideTheWindowAtBothTextSizes) {
    // The largest toy model: 4 layers x 16 heads, more heads than GPT-2 small has.
    ModelConfig c = task_defaults(Task::both).model;
    c.n_layer = 4;
    c.n_head = 16;
    const std::string path = temp_dir() + "/big_both.safetensors";
    std::string error;
    ASSERT_TRUE(save_model(path, init_model(c, 0), error)) << error;
    for (const char* scale : {"1", "2"}) {
        Shot s = take_shot(std::string("model_big_") + scale,
                           {"--weights", path, "--view", "model", "--size", "1280x720", "--font-scale", scale});
        ASSERT_EQ(s.result.status, 0) << s.result.err;
        const std::vector<nlohmann::json> heads = of_kind(s, "grid_head");
        ASSERT_FALSE(heads.empty());
        EXPECT_LE(heads.size(), 64u);
        for (const nlohmann::json& h : heads) EXPECT_GE(double(h["w"]), 30.0 * std::stod(scale)) << scale;
        expect_inside(s, std::string("text size ") + scale);
        // No two patterns overlap.
        for (size_t i = 0; i < heads.size(); ++i)
            for (size_t j = i + 1; j < heads.size(); ++j) {
                const nlohmann::json &a = heads[i], &b = heads[j];
                const bool apart = double(a["x"]) + double(a["w"]) <= double(b["x"]) || double(b["x"]) + double(b["w"]) <= double(a["x"]) ||
                                   double(a["y"]) + double(a["h"]) <= double(b["y"]) || double(b["y"]) + double(b["h"]) <= double(a["y"]);
                EXPECT_TRUE(apart) << scale << ": heads " << i << " and " << j << " overlap";
            }
    }
}

TEST(ModelWindow, LessonShowsItsHeadsAndPointsAtTheTrainView) {
    Shot s = take_shot("model_lesson", {"--view", "model", "--size", "1280x720"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    EXPECT_EQ(of_kind(s, "grid_head").size(), 2u); // the lesson's H = 2, one layer
    EXPECT_TRUE(of_kind(s, "prediction").empty());
    expect_inside(s, "lesson");
}

TEST(ModelWindow, HeadOptionPagesThePerHeadViews) {
    // H = 8: the scores view shows at most four heads, from --head on.
    Shot s = take_shot("scores_head5", {"--view", "scores", "--n-embd", "16", "--n-head", "8", "--head", "5"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    std::vector<int> heads;
    for (const nlohmann::json& it : s.items("heatmap", "probs")) heads.push_back(int(it["head"]));
    ASSERT_FALSE(heads.empty());
    for (int h : heads) EXPECT_GE(h, 4) << "head " << h << " shown, before the page holding head 5";
    EXPECT_NE(std::find(heads.begin(), heads.end(), 5), heads.end());
}

TEST(ModelWindow, BadViewOrHeadIsOneSentence) {
    const std::vector<std::vector<std::string>> bad = {
        {"--view", "heads"},
        {"--view", "model7"},
        {"--head", "2"},
        {"--head", "-1"},
        {"--head", "x"},
        {"--weights", data_dir + "both.safetensors", "--head", "4"},
    };
    for (const auto& args : bad) {
        RunResult r = run_direct(args, true);
        EXPECT_EQ(r.status, 2) << args[0] << " " << args[1];
        EXPECT_EQ(r.err_lines(), 1) << r.err;
        EXPECT_NE(r.err.find(args[0] == "--weights" ? "--head" : args[0]), std::string::npos) << r.err;
    }
    RunResult view = run_direct({"--view", "heads"}, true);
    EXPECT_NE(view.err.find("model"), std::string::npos) << "the list of views names the new one: " << view.err;
    RunResult head = run_direct({"--head", "2"}, true);
    EXPECT_NE(head.err.find("from 0 to 1"), std::string::npos) << head.err;
}
