// test_hub_get.cpp: the side panel's Get GPT-2 (hub_get_state.h) with a fake download in place
// of src/hub's: the download runs on a worker while the lesson stays shown, its progress
// reaches the state, and when it is in the model opens from the cache as Open model opens a
// folder; Cancel stops it and keeps what is shown; a failure keeps it and says why; a model
// already in the cache opens without a download; a build without a download (the page) says
// so. The fake waits on a condition the test releases, so no test depends on timing.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "app_state.h"
#include "gui_test_support.h"
#include "hub_get_state.h"
#include "inputs.h"
#include "state_test_support.h"
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <mutex>

using namespace attnviz;
using namespace attnviz_gui_test;
namespace fs = std::filesystem;

namespace {

const std::string commit = "0123456789abcdef0123456789abcdef01234567";

// A cache as get leaves it, for `id`, from the tiny GPT-2 repository of tests/data/hub.
std::string fill_cache(const std::string& cache, const std::string& id) {
    const fs::path repo = fs::path(cache) / ("models--" + id);
    const fs::path snap = repo / "snapshots" / commit;
    fs::create_directories(snap);
    fs::create_directories(repo / "refs");
    for (const char* f : {"config.json", "model.safetensors", "vocab.json", "merges.txt"})
        fs::copy_file(fs::path(ATTNVIZ_TEST_DATA "/hub/tiny-gpt2") / f, snap / f, fs::copy_options::overwrite_existing);
    std::ofstream(repo / "refs" / "main", std::ios::binary) << commit;
    return snap.string();
}

// The fake download: reports progress, then waits until the test releases it (or cancels).
struct Fake {
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    bool started = false;
    int calls = 0;
    std::string cache;
    std::string fail_with; // non-empty: the download fails with this sentence

    HubGetFunction function() {
        return [this](const std::string& repo, const std::function<void(const HubProgress&)>& progress,
                      const std::atomic<bool>* cancel) {
            HubProgress p;
            p.file = "model.safetensors";
            p.files = 4;
            p.file_index = 1;
            p.file_done = 100'000'000;
            p.file_total = 548'000'000;
            p.all_done = 100'000'000;
            p.all_total = 551'000'000;
            p.bytes_per_second = 50e6;
            progress(p);
            std::unique_lock<std::mutex> lock(m);
            ++calls;
            started = true;
            cv.notify_all();
            // Bounded: a test that forgets to release fails here instead of hanging.
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            while (!release && !*cancel && std::chrono::steady_clock::now() < deadline)
                cv.wait_for(lock, std::chrono::milliseconds(20));
            HubGetResult r;
            if (*cancel) {
                r.cancelled = true;
                r.error = "cancelled";
                return r;
            }
            if (!fail_with.empty()) {
                r.error = fail_with;
                return r;
            }
            r.ok = true;
            r.commit = commit;
            r.snapshot = fill_cache(cache, repo);
            r.downloaded = 363'755;
            return r;
        };
    }
    void wait_started() {
        std::unique_lock<std::mutex> lock(m);
        cv.wait_for(lock, std::chrono::seconds(60), [this] { return started; });
        ASSERT_TRUE(started) << "the download never started";
    }
    void go() {
        std::lock_guard<std::mutex> lock(m);
        release = true;
        cv.notify_all();
    }
};

std::string fresh_cache(const std::string& name) {
    const std::string dir = temp_dir() + "/hub-" + name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

void frames_until_open(AppState& s) {
    for (int i = 0; i < 100000 && (hub_getting(s) || model_loading(s)); ++i) {
        poll_hub_get(s, true);
        recompute(s);
    }
    poll_model_load(s, true);
    recompute(s);
}

} // namespace

TEST(HubGet, DownloadsOnAWorkerThenOpensTheModelFromTheCache) {
    AppState s = lesson_state();
    const Trace before = s.run.trace;
    Fake fake;
    fake.cache = s.hub.cache_dir = fresh_cache("download");
    s.hub.get = fake.function();
    refresh_hub_cached(s);
    ASSERT_EQ(s.hub.cached.size(), hub_choices().size());
    EXPECT_FALSE(s.hub.cached[0]);

    std::string error;
    ASSERT_TRUE(request_hub_get(s, 0, error)) << error;
    fake.wait_started();
    // The worker holds the download; the frame goes on, the lesson is what is shown.
    for (int i = 0; i < 3; ++i) recompute(s);
    EXPECT_TRUE(hub_getting(s));
    EXPECT_FALSE(shown_model(s));
    EXPECT_TRUE(same_bits(s.run.trace.y, before.y));
    EXPECT_EQ(s.hub.progress.file, "model.safetensors");
    EXPECT_EQ(hub_progress_text(s.hub.progress), "model.safetensors: 100 MB of 548 MB, 50.0 MB/s, 9 s left");
    // A second get while one runs is refused with a sentence; the first goes on.
    EXPECT_FALSE(request_hub_get(s, 1, error));
    EXPECT_NE(error.find("still getting gpt2"), std::string::npos) << error;
    EXPECT_TRUE(hub_getting(s));

    fake.go();
    frames_until_open(s);
    EXPECT_FALSE(hub_getting(s));
    ASSERT_TRUE(shown_model(s) && shown_model(s)->gpt()) << s.error << " / " << s.hub.message;
    EXPECT_TRUE(std::holds_alternative<GptModel>(s.shown.source));
    EXPECT_EQ(shown_model(s)->model->config.n_layer, 2);
    EXPECT_TRUE(shown_model(s)->tokenizer); // vocab.json + merges.txt of the snapshot
    EXPECT_FALSE(s.hub.failed) << s.hub.message;
    ASSERT_EQ(s.hub.cached.size(), hub_choices().size());
    EXPECT_TRUE(s.hub.cached[0]); // the list says so after the get
    EXPECT_EQ(fake.calls, 1);
}

TEST(HubGet, ACachedModelOpensWithoutADownload) {
    AppState s = lesson_state();
    Fake fake;
    fake.cache = s.hub.cache_dir = fresh_cache("cached");
    fill_cache(fake.cache, "distilgpt2");
    s.hub.get = fake.function();
    refresh_hub_cached(s);
    EXPECT_FALSE(s.hub.cached[0]);
    EXPECT_TRUE(s.hub.cached[1]);
    std::string error;
    ASSERT_TRUE(request_hub_get(s, 1, error)) << error;
    EXPECT_FALSE(hub_getting(s));
    frames_until_open(s);
    ASSERT_TRUE(shown_model(s) && shown_model(s)->gpt()) << s.error;
    EXPECT_EQ(fake.calls, 0);
}

TEST(HubGet, CancelStopsTheDownloadAndKeepsWhatIsShown) {
    AppState s = lesson_state();
    const Trace before = s.run.trace;
    Fake fake;
    fake.cache = s.hub.cache_dir = fresh_cache("cancel");
    s.hub.get = fake.function();
    std::string error;
    ASSERT_TRUE(request_hub_get(s, 0, error)) << error;
    fake.wait_started();
    cancel_hub_get(s);
    poll_hub_get(s, true);
    recompute(s);
    EXPECT_FALSE(hub_getting(s));
    EXPECT_FALSE(model_loading(s));
    EXPECT_FALSE(shown_model(s));
    EXPECT_TRUE(same_bits(s.run.trace.y, before.y));
    EXPECT_FALSE(s.hub.failed);
    EXPECT_EQ(s.hub.message.rfind("Cancelled getting gpt2", 0), 0u) << s.hub.message;
    EXPECT_TRUE(s.error.empty()) << s.error;
    // Another get may start at once.
    fake.started = false;
    ASSERT_TRUE(request_hub_get(s, 0, error)) << error;
    fake.wait_started();
    cancel_hub_get(s);
    poll_hub_get(s, true);
}

TEST(HubGet, AFailedDownloadKeepsWhatIsShownAndSaysWhy) {
    AppState s = lesson_state();
    const Trace before = s.run.trace;
    Fake fake;
    fake.cache = s.hub.cache_dir = fresh_cache("fail");
    fake.fail_with = "gpt2: the Hub refused the download (401); set HF_TOKEN to a token that can read it";
    fake.release = true;
    s.hub.get = fake.function();
    std::string error;
    ASSERT_TRUE(request_hub_get(s, 0, error)) << error;
    poll_hub_get(s, true);
    recompute(s);
    EXPECT_FALSE(hub_getting(s));
    EXPECT_FALSE(shown_model(s));
    EXPECT_TRUE(same_bits(s.run.trace.y, before.y));
    EXPECT_TRUE(s.hub.failed);
    EXPECT_EQ(s.hub.message, fake.fail_with);
    EXPECT_NE(s.error.find("set HF_TOKEN"), std::string::npos) << s.error;
    EXPECT_FALSE(s.hub.cached[0]);
}

TEST(HubGet, WithoutADownloadTheRequestSaysItNeedsTheApp) {
    AppState s = lesson_state();
    s.hub.cache_dir = fresh_cache("none");
    std::string error;
    EXPECT_FALSE(request_hub_get(s, 0, error));
    EXPECT_NE(error.find("needs the attnviz app on a computer"), std::string::npos) << error;
    EXPECT_FALSE(hub_getting(s));
    EXPECT_FALSE(request_hub_get(s, 7, error));
    EXPECT_NE(error.find("no model 7"), std::string::npos) << error;
}
