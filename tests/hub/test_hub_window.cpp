// test_hub_window.cpp: the window's Get GPT-2 (src/state/hub_get_state.h) with the real
// download of src/hub, injected as the window injects it, against the mock Hub on 127.0.0.1:
// Cancel midway stops the transfer and keeps what is shown, the part that arrived stays as
// blobs/<etag>.incomplete with nothing in snapshots/, and the next Get resumes it with a Range
// request and opens the model in every view.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "app_state.h"
#include "cli/run_attnviz.h"
#include "hub_download.h"
#include "hub_get_state.h"
#include "mock_hub.h"
#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <thread>

namespace fs = std::filesystem;
using namespace attnviz;
using namespace attnviz_test;

namespace {

// Frames (recompute) until `done` or 60 s: the window's loop, bounded.
template <class Done>
bool frames_until(AppState& s, Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        recompute(s);
        std::this_thread::sleep_for(std::chrono::milliseconds(5)); // a frame's pace, not a wait for an outcome
    }
    return true;
}

} // namespace

TEST(HubWindow, CancelKeepsThePartAndTheNextGetResumesItAndOpensTheModel) {
    TempDir cache;
    MockHub hub;
    std::string error;
    ASSERT_TRUE(hub.add_repo("gpt2", std::string(ATTNVIZ_TEST_DATA) + "/hub/tiny-gpt2", error)) << error;
    ASSERT_TRUE(hub.start(error)) << error;
    hub.set_slow(true);

    AppState s;
    init_app_state(s, lesson_config(), KernelChoice::reference);
    recompute(s);
    s.hub.cache_dir = cache.path;
    const std::string endpoint = hub.endpoint();
    s.hub.get = [&](const std::string& repo, const std::function<void(const HubProgress&)>& progress,
                    const std::atomic<bool>* cancel) {
        HubGetOptions o;
        o.repo = repo;
        o.endpoint = endpoint;
        o.cache_dir = cache.path;
        return hub_get(o, progress, cancel);
    };

    ASSERT_TRUE(request_hub_get(s, 0, error)) << error;
    ASSERT_TRUE(frames_until(s, [&] { return s.hub.progress.file == "model.safetensors" && s.hub.progress.file_done > 0; }))
        << "no byte of model.safetensors arrived; last: " << s.hub.progress.file;
    EXPECT_GT(s.hub.progress.all_total, 0);
    cancel_hub_get(s);
    ASSERT_TRUE(frames_until(s, [&] { return !hub_getting(s); }));
    EXPECT_FALSE(shown_model(s)); // the lesson stays
    EXPECT_FALSE(s.hub.failed) << s.hub.message;
    EXPECT_EQ(s.hub.message.rfind("Cancelled getting gpt2", 0), 0u) << s.hub.message;
    const fs::path repo = fs::path(cache.path) / "models--gpt2";
    int incomplete = 0;
    for (const auto& e : fs::directory_iterator(repo / "blobs"))
        if (e.path().extension() == ".incomplete") ++incomplete;
    EXPECT_EQ(incomplete, 1);
    EXPECT_FALSE(fs::exists(repo / "snapshots" / hub.commit("gpt2") / "model.safetensors"));
    EXPECT_FALSE(s.hub.cached[0]);

    hub.set_slow(false);
    const int ranges = hub.range_gets();
    ASSERT_TRUE(request_hub_get(s, 0, error)) << error;
    ASSERT_TRUE(frames_until(s, [&] { return !hub_getting(s) && !model_loading(s); }));
    recompute(s);
    ASSERT_TRUE(shown_model(s) && shown_model(s)->gpt()) << s.error << " / " << s.hub.message;
    EXPECT_TRUE(std::holds_alternative<GptModel>(s.shown.source));
    EXPECT_GT(hub.range_gets(), ranges); // the part was resumed, not fetched again
    EXPECT_TRUE(s.hub.cached[0]);
    EXPECT_FALSE(hub.storage_saw_authorization());
}
