// test_follow_gpt.cpp: a GPT model shown by the teacher's window with --serve (serve_link.cpp,
// follow_gpt.h), in process: the message names the shown layer and its parts' URLs; the parts
// served are the state's tensors bit for bit, and never the model's weights; a layer change
// publishes the new layer; a page's state made from them (show_received_gpt) shows the
// teacher's numbers and refuses an edit it cannot compute.
#include "app_state.h"
#include "follow_gpt.h"
#include "inputs.h"
#include "safetensors.h"
#include "serve_link.h"
#include "session_state.h"
#include "common/temp_dir.h"
#include "ws_client.h"
#include <cstdio>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unistd.h>

using namespace attnviz;
using attnviz_test::free_port;
using attnviz_test::http_get;
using attnviz_test::WsClient;

namespace {

const std::string gpt_dir = std::string(ATTNVIZ_TEST_DATA) + "/gpt_tiny/gpt2";
std::string class_code; // the window's, as the teacher's page has it: the parts' URLs need it

std::string body_of(const std::string& response) {
    const size_t at = response.find("\r\n\r\n");
    return at == std::string::npos ? "" : response.substr(at + 4);
}
std::string status_of(const std::string& response) { return response.substr(0, response.find("\r\n")); }

// One served part, parsed; its tensors read whole.
struct Served {
    std::string bytes;
    SafetensorsFile file;
    bool open(int port, const std::string& url) {
        const std::string r = http_get(port, url, 20000);
        if (status_of(r) != "HTTP/1.1 200 OK") return false;
        bytes = body_of(r);
        std::string error;
        return parse_safetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), url, file, error);
    }
    // Bit for bit the floats [data, data + n) under `name`.
    bool equals(const std::string& name, const float* data, size_t n) const {
        const TensorInfo* t = file.find(name);
        return t && t->dtype == "F32" && t->end - t->begin == 4 * n &&
               std::memcmp(bytes.data() + file.data_start() + t->begin, data, 4 * n) == 0;
    }
    bool equals(const std::string& name, const Mat& m) const { return equals(name, m.data(), size_t(m.size())); }
    bool equals(const std::string& name, const PerHead& p) const {
        std::vector<float> all;
        for (const Mat& m : p) all.insert(all.end(), m.data(), m.data() + m.size());
        return equals(name, all.data(), all.size());
    }
};

struct Teacher {
    attnviz_test::TempDir dir{"attnviz-follow-gpt"};
    std::string site = dir.path;
    AppState s;
    WsClient ws;
    int port = 0;
    Teacher() { dir.write("index.html", "<html>the page</html>"); }
    ~Teacher() {
        ws.close();
        stop_serving();
    }
    bool start(std::string& error) {
        init_app_state(s, lesson_config(), KernelChoice::reference);
        recompute(s);
        if (!open_model_path(s, gpt_dir, error)) return false;
        recompute(s);
        if (!std::holds_alternative<GptModel>(s.shown.source)) {
            error = "the GPT model is not shown: " + s.error;
            return false;
        }
        GuiOptions o;
        o.serve = true;
        port = free_port();
        o.port = std::to_string(port);
        o.bind = "127.0.0.1";
        o.site = site;
        if (!start_serving(o, error)) return false;
        serve_after_frame(s);
        if (s.follow.code.size() != 6) {
            error = "no class code: '" + s.follow.code + "'";
            return false;
        }
        class_code = s.follow.code;
        return ws.connect("127.0.0.1", port, "/follow?code=" + s.follow.code);
    }
    // The latest message the server sends once it names the GPT parts (the window makes them
    // once a page follows: frames until the server has counted this one).
    nlohmann::json message() {
        nlohmann::json last;
        attnviz_test::eventually(
            [&] {
                serve_after_frame(s);
                std::string text;
                while (ws.read(text, 300) == 1) last = nlohmann::json::parse(text, nullptr, false);
                return last.is_object() && last.contains("follow_gpt") && !last["follow_gpt"]["urls"].value("layer", "").empty();
            },
            20000);
        return last;
    }
};

std::string url_of(const nlohmann::json& m, const char* part) {
    const std::string u = m.contains("follow_gpt") ? m["follow_gpt"]["urls"].value(part, std::string()) : std::string();
    return u.empty() ? u : u + "?code=" + class_code;
}

} // namespace

TEST(FollowGpt, TheShownLayerIsServedBitForBitAndNeverTheWeightsFile) {
    Teacher t;
    std::string error;
    ASSERT_TRUE(t.start(error)) << error;
    AppState& s = t.s;
    const nlohmann::json m = t.message();
    ASSERT_TRUE(m.is_object() && m.contains("follow_gpt") && m["follow_gpt"].is_object()) << m.dump().substr(0, 400);
    const nlohmann::json& h = m["follow_gpt"];
    EXPECT_EQ(h["layer"], 0);
    EXPECT_EQ(h["n_layer"], 2);
    EXPECT_EQ(h["tokens"].get<std::vector<int>>(), shown_model(s)->tokens);
    EXPECT_EQ(h["name"], "gpt2");

    Served layer, weights, grid;
    ASSERT_TRUE(layer.open(t.port, url_of(m, "layer"))) << url_of(m, "layer");
    for (const auto& [name, mat] : {std::pair<const char*, const Mat*>{"trace.x", &s.run.trace.x}, {"trace.qkv", &s.run.trace.qkv},
                                    {"trace.concat", &s.run.trace.concat}, {"trace.y", &s.run.trace.y}, {"base_y", &s.run.base_y}})
        EXPECT_TRUE(layer.equals(name, *mat)) << name;
    for (const auto& [name, p] : {std::pair<const char*, const PerHead*>{"trace.q", &s.run.trace.q}, {"trace.k", &s.run.trace.k},
                                  {"trace.v", &s.run.trace.v}, {"trace.raw_scores", &s.run.trace.raw_scores},
                                  {"trace.att", &s.run.trace.att}, {"trace.heads", &s.run.trace.heads}})
        EXPECT_TRUE(layer.equals(name, *p)) << name;
    ASSERT_TRUE(weights.open(t.port, url_of(m, "weights")));
    EXPECT_TRUE(weights.equals("c_attn.weight", s.run.experiment.weights.c_attn.weight));
    EXPECT_TRUE(weights.equals("c_proj.weight", s.run.experiment.weights.c_proj.weight));
    ASSERT_TRUE(grid.open(t.port, url_of(m, "grid")));
    for (int l = 0; l < 2; ++l) EXPECT_TRUE(grid.equals("att." + std::to_string(l), s.model_run.model_base.layers[size_t(l)].att)) << l;

    // Never the weights file: no part holds the embedding (wte's first rows, 64 floats) or a
    // layer's MLP, and all of them together are smaller than the file.
    std::ifstream f(gpt_dir + "/model.safetensors", std::ios::binary);
    const std::string file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const Model& model = *shown_model(s)->model;
    const std::string wte(reinterpret_cast<const char*>(model.wte.data()), 4 * 64);
    const std::string mlp(reinterpret_cast<const char*>(model.h[0].mlp.c_fc.weight.data()), 4 * 64);
    for (const Served* p : {&layer, &weights, &grid}) {
        EXPECT_EQ(p->bytes.find(wte), std::string::npos);
        EXPECT_EQ(p->bytes.find(mlp), std::string::npos);
    }
    EXPECT_LT(layer.bytes.size() + weights.bytes.size() + grid.bytes.size(), file.size());
    EXPECT_EQ(status_of(http_get(t.port, "/model.safetensors")), "HTTP/1.1 404 Not Found");
}

TEST(FollowGpt, ALayerChangePublishesTheNewLayer) {
    Teacher t;
    std::string error;
    ASSERT_TRUE(t.start(error)) << error;
    AppState& s = t.s;
    const nlohmann::json before = t.message();
    const std::string old_url = url_of(before, "layer");
    request_layer(s, 1);
    recompute(s);
    ASSERT_EQ(s.shown.layer, 1);
    const nlohmann::json after = t.message();
    ASSERT_TRUE(after.contains("follow_gpt"));
    EXPECT_EQ(after["follow_gpt"]["layer"], 1);
    const std::string new_url = url_of(after, "layer");
    EXPECT_NE(new_url, old_url);
    Served layer, weights;
    ASSERT_TRUE(layer.open(t.port, new_url)) << new_url;
    EXPECT_TRUE(layer.equals("trace.att", s.run.trace.att));
    EXPECT_TRUE(layer.equals("trace.x", s.run.trace.x));
    ASSERT_TRUE(weights.open(t.port, url_of(after, "weights")));
    EXPECT_TRUE(weights.equals("c_attn.weight", shown_model(s)->model->h[1].attn.c_attn.weight));
    EXPECT_EQ(status_of(http_get(t.port, old_url)), "HTTP/1.1 404 Not Found"); // the old layer is gone
    // The grid is the same run: the same file.
    EXPECT_EQ(url_of(after, "grid"), url_of(before, "grid"));
}

TEST(FollowGpt, APageShowsTheTeachersNumbersAndRefusesEditsItCannotCompute) {
    Teacher t;
    std::string error;
    ASSERT_TRUE(t.start(error)) << error;
    AppState& s = t.s;
    s.screen.view = View::causality;
    ASSERT_TRUE(set_replacement_text(s, "7", error)) << error; // token p replaced by id 7
    recompute(s);
    ASSERT_GE(s.run.applied_p, 0);
    ASSERT_FALSE(s.model_run.causality.resid_max_abs.empty());
    const nlohmann::json m = t.message();
    Served layer, weights, grid;
    ASSERT_TRUE(layer.open(t.port, url_of(m, "layer")));
    ASSERT_TRUE(weights.open(t.port, url_of(m, "weights")));
    ASSERT_TRUE(grid.open(t.port, url_of(m, "grid")));
    EXPECT_TRUE(layer.equals("base.att", s.run.base.att));
    EXPECT_TRUE(layer.equals("dy", s.run.dy.data(), s.run.dy.size()));

    AppState page;
    init_app_state(page, lesson_config(), KernelChoice::reference);
    recompute(page);
    const std::string* parts[gpt_part_count] = {&layer.bytes, &weights.bytes, &grid.bytes};
    ASSERT_TRUE(show_received_gpt(page, m["follow_gpt"], parts, error)) << error;
    recompute(page);
    EXPECT_TRUE(received_gpt(page));
    EXPECT_EQ(shown_fingerprint(page), shown_fingerprint(s));
    EXPECT_EQ(page.shown.layer, s.shown.layer);
    EXPECT_EQ(page.shown.words, s.shown.words);
    EXPECT_EQ(std::memcmp(page.run.base.att[1].data(), s.run.base.att[1].data(), 4 * size_t(s.run.base.att[1].size())), 0);
    EXPECT_EQ(page.model_run.causality.resid_max_abs, s.model_run.causality.resid_max_abs);
    EXPECT_EQ(page.run.applied_p, s.run.applied_p);
    ASSERT_EQ(page.run.sharpness.cells.size(), s.run.sharpness.cells.size());
    for (size_t i = 0; i < s.run.sharpness.cells.size(); ++i)
        for (int k = 0; k < 2; ++k) {
            EXPECT_EQ(page.run.sharpness.cells[i][size_t(k)].max_weight, s.run.sharpness.cells[i][size_t(k)].max_weight) << i;
            EXPECT_EQ(page.run.sharpness.cells[i][size_t(k)].entropy, s.run.sharpness.cells[i][size_t(k)].entropy) << i;
        }
    EXPECT_EQ(std::memcmp(page.run.experiment.weights.c_proj.weight.data(), s.run.experiment.weights.c_proj.weight.data(),
                          4 * size_t(s.run.experiment.weights.c_proj.weight.size())),
              0);
    ASSERT_EQ(page.model_run.model_base.layers.size(), 2u);
    EXPECT_EQ(std::memcmp(page.model_run.model_base.layers[1].att[3].data(), s.model_run.model_base.layers[1].att[3].data(),
                          4 * size_t(s.model_run.model_base.layers[1].att[3].size())),
              0);
    EXPECT_EQ(page.model_view.predictions.size(), s.model_view.predictions.size());
    EXPECT_EQ(grid_fingerprint(page), grid_fingerprint(s));

    // A message whose parts are the ones shown (the teacher moved the predictions' picker):
    // nothing is fetched again and every number is kept.
    nlohmann::json moved = m["follow_gpt"];
    moved["predict_pos"] = 3;
    const std::string* kept[gpt_part_count] = {nullptr, nullptr, nullptr};
    ASSERT_TRUE(show_received_gpt(page, moved, kept, error)) << error;
    EXPECT_EQ(page.model_view.predict_pos, 3);
    EXPECT_EQ(shown_fingerprint(page), shown_fingerprint(s));
    EXPECT_EQ(grid_fingerprint(page), grid_fingerprint(s));
    EXPECT_EQ(std::memcmp(page.run.experiment.weights.c_attn.weight.data(), s.run.experiment.weights.c_attn.weight.data(),
                          4 * size_t(s.run.experiment.weights.c_attn.weight.size())),
              0);

    // Another layer cannot be computed on the page: refused with the sentence, nothing changed.
    const std::string before = shown_fingerprint(page);
    request_layer(page, 1);
    recompute(page);
    EXPECT_EQ(page.shown.layer, 0);
    EXPECT_NE(page.error.find("lives on the teacher's computer"), std::string::npos) << page.error;
    EXPECT_EQ(shown_fingerprint(page), before);
    // A part that does not fit is refused whole: the page keeps what it shows.
    const std::string bad = "not a safetensors file";
    const std::string* wrong[gpt_part_count] = {&bad, nullptr, nullptr};
    EXPECT_FALSE(show_received_gpt(page, m["follow_gpt"], wrong, error));
    EXPECT_EQ(shown_fingerprint(page), before);
    // Back to the lesson goes as usual.
    reset_to_lesson(page);
    recompute(page);
    EXPECT_FALSE(shown_model(page));
}

// Finding 5: the state carried the teacher's file paths (home folder, user name). Every kind
// of file the window can show (a weights file's block, a trained model, a whole GPT model):
// the message names it by its base name, and no folder of the teacher's is in it.
TEST(FollowGpt, NoFolderOfTheTeachersInAnyStateMessage) {
    Teacher t;
    std::string error;
    ASSERT_TRUE(t.start(error)) << error;
    AppState& s = t.s;
    const std::string data = ATTNVIZ_TEST_DATA;
    auto latest = [&] {
        std::string text, last;
        attnviz_test::eventually(
            [&] {
                serve_after_frame(s);
                while (t.ws.read(text, 200) == 1) last = text;
                return !last.empty();
            },
            10000);
        return last;
    };
    const std::string gpt = latest();
    ASSERT_NE(gpt.find("follow_gpt"), std::string::npos) << gpt.substr(0, 300);
    EXPECT_EQ(gpt.find(data), std::string::npos) << gpt.substr(0, 600);

    ASSERT_TRUE(open_model_path(s, data + "/model_view/both.safetensors", error)) << error;
    recompute(s);
    ASSERT_TRUE(std::holds_alternative<ToyModel>(s.shown.source)) << s.error;
    const std::string toy = latest();
    const nlohmann::json tj = nlohmann::json::parse(toy, nullptr, false);
    ASSERT_TRUE(tj.is_object() && tj.contains("model")) << toy.substr(0, 300);
    EXPECT_EQ(tj["model"]["source"].get<std::string>().find('/'), std::string::npos) << tj["model"]["source"];
    EXPECT_EQ(toy.find(data), std::string::npos) << toy.substr(0, 600);

    request_trained_model(s, nullptr); // back to the lesson's module
    recompute(s);
    ASSERT_TRUE(load_weights_file(s, data + "/weights/lesson_c8_h2.safetensors", 0, error)) << error;
    recompute(s);
    const std::string lesson = latest();
    const nlohmann::json lj = nlohmann::json::parse(lesson, nullptr, false);
    ASSERT_TRUE(lj.is_object()) << lesson.substr(0, 300);
    EXPECT_EQ(lj.value("weights", ""), "lesson_c8_h2.safetensors");
    EXPECT_EQ(lesson.find(data), std::string::npos) << lesson.substr(0, 600);
}

// Finding 7's config.json: a model folder's config.json over 1 MB is refused before it is
// read (it was read whole first). A sparse file of 1.5 GB: read, it would raise the peak RSS
// by as much.
TEST(FollowGpt, AHugeConfigJsonIsRefusedUnread) {
    attnviz_test::TempDir dir{"attnviz-config"};
    std::ifstream in(gpt_dir + "/model.safetensors", std::ios::binary);
    std::ofstream(dir.path + "/model.safetensors", std::ios::binary) << in.rdbuf();
    const std::string config = dir.path + "/config.json";
    std::ofstream(config) << "{";
    ASSERT_EQ(::truncate(config.c_str(), off_t(3) << 29), 0);
    auto peak_kb = [] {
        std::ifstream f("/proc/self/status");
        std::string line;
        while (std::getline(f, line))
            if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
        return -1L;
    };
    const long before = peak_kb();
    AppState s;
    init_app_state(s, lesson_config(), KernelChoice::reference);
    std::string error;
    EXPECT_FALSE(open_model_path(s, dir.path, error));
    EXPECT_NE(error.find("is over 1 MB"), std::string::npos) << error;
    EXPECT_LT(peak_kb() - before, 256 * 1024) << "kB: the file was read";
}
