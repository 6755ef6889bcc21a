// model_loading.cpp: a whole model read off the frame thread. GPT-2 small is 500 MB of
// weights and a tokenizer; read on a click it froze the window for seconds. The side panel
// asks (request_model_path), a worker reads the file with the same readers the command
// line uses, and recompute() stages the model when it is in (poll_model_load), with a line
// in s.status meanwhile. No ImGui here. The web page has no threads: it reads at once.
#include "app_state.h"
#include "hub_cache.h"
#include "inputs.h"
#include "model_io.h"
#include "state_internal.h"
#include "text_util.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define ATTNVIZ_READ_IN_FRAME 1
#endif

namespace attnviz {

using namespace state_detail;

namespace {

struct ModelRead {
    bool read = false;
    std::shared_ptr<const TrainedInput> in;
    std::string error;
};

ModelRead read_model(const std::string& path) {
    ModelRead r;
    if (is_trained_model_file(path)) r.read = read_trained_input(path, "", r.in, r.error);
    else r.read = read_gpt_input(path, std::nullopt, "", "", r.in, r.error);
    return r;
}

// What the read is for: a GPT-2 directory's model.safetensors, else the file itself.
int64_t bytes_to_read(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path p(path);
    if (fs::is_directory(p, ec)) p /= "model.safetensors";
    const auto n = fs::file_size(p, ec);
    return ec ? -1 : int64_t(n);
}

void stage(AppState& s, const ModelRead& r, int layer) {
    if (!stage_read(s, r.read, r.in, r.error)) return;
    if (layer >= 0 && s.edit_trained && !s.edit_trained->gpt())
        s.edit_layer = std::clamp(layer, 0, s.edit_trained->model->config.n_layer - 1);
}

} // namespace

struct ModelLoad {
    std::string path;
    int layer = -1;
    int64_t bytes = -1;
    std::chrono::steady_clock::time_point started;
    std::future<ModelRead> result;
};

namespace {

std::string progress_line(const ModelLoad& l) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - l.started).count();
    char size[32] = "";
    if (l.bytes >= 0) std::snprintf(size, sizeof size, " (%.0f MB)", double(l.bytes) / 1e6);
    char time[32];
    std::snprintf(time, sizeof time, "%.1f s", seconds);
    return "Reading " + quote_path(l.path) + size + ": " + time + "; the views show the model before it until it is in.";
}

} // namespace

bool request_model_path(AppState& s, const std::string& path, std::string& error, int layer) {
    if (s.loading) {
        error = "still reading " + quote_path(s.loading->path) + "; open the next once it is in";
        s.status = "Kept what is shown: " + error + ".";
        s.error = s.status;
        return false;
    }
    if (path.empty()) return open_model_path(s, path, error); // its refusal, at once
    // A Hub id typed in the field ("gpt2"): its snapshot in the cache, never the network.
    std::string folder, name;
    if (!resolve_model_arg(path, "", folder, name, error)) {
        if (error.rfind("--model ", 0) == 0) error.erase(0, 8);
        s.status = "Kept what is shown: " + error + ".";
        s.error = s.status;
        return false;
    }
    if (folder != path) return request_model_path(s, folder, error, layer);
#ifdef ATTNVIZ_READ_IN_FRAME
    const ModelRead r = read_model(path);
    error = r.error;
    stage(s, r, layer);
    return r.read;
#else
    auto l = std::make_shared<ModelLoad>();
    l->path = path;
    l->layer = layer;
    l->bytes = bytes_to_read(path);
    l->started = std::chrono::steady_clock::now();
    l->result = std::async(std::launch::async, read_model, path);
    s.status = progress_line(*l);
    s.loading = std::move(l);
    return true;
#endif
}

bool request_weights_file(AppState& s, const std::string& path, int layer, std::string& error) {
    // load_weights_file refuses an empty path and a negative layer with its own sentences,
    // and reads one attention block's file (small) at once.
    if (path.empty() || layer < 0) return load_weights_file(s, path, layer, error);
    switch (weights_path_kind(path)) {
    case WeightsPathKind::gpt_directory: return request_model_path(s, path, error);
    case WeightsPathKind::trained_model: return request_model_path(s, path, error, layer);
    case WeightsPathKind::attention_block: break;
    }
    return load_weights_file(s, path, layer, error);
}

void poll_model_load(AppState& s, bool wait) {
    if (!s.loading) return;
    ModelLoad& l = *s.loading;
    if (!wait && l.result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        s.status = progress_line(l);
        return;
    }
    const ModelRead r = l.result.get();
    const int layer = l.layer;
    s.loading.reset();
    stage(s, r, layer);
}

bool model_loading(const AppState& s) { return bool(s.loading); }

} // namespace attnviz
