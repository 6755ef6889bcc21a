// hub_get_state.cpp: see hub_get_state.h.
#include "hub_get_state.h"
#include "app_state.h"
#include "hub_cache.h"
#include "text_util.h"
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

namespace attnviz {

const std::vector<HubChoice>& hub_choices() {
    // The Hub's own sizes of model.safetensors plus config and tokenizer, rounded: gpt2
    // 548 MB, distilgpt2 353 MB, gpt2-medium 1.52 GB (the repositories' file lists).
    static const std::vector<HubChoice> choices = {
        {"gpt2", "GPT-2 small (124M)", 551'000'000},
        {"distilgpt2", "DistilGPT-2 (82M)", 356'000'000},
        {"gpt2-medium", "GPT-2 medium (355M)", 1'524'000'000},
    };
    return choices;
}

struct HubJob {
    std::atomic<bool> cancel{false};
    std::atomic<bool> done{false};
    std::mutex mutex;          // progress, result
    HubProgress progress;
    HubGetResult result;
    std::thread worker;

    ~HubJob() {
        cancel = true; // a window closed mid-download: stop, keep the partial file
        if (worker.joinable()) worker.join();
    }
};

namespace {

std::string cache_dir_of(const HubGetState& h) { return h.cache_dir.empty() ? hub_cache_dir() : h.cache_dir; }

std::string megabytes(int64_t bytes) {
    char buf[32];
    if (bytes >= 1'000'000'000) std::snprintf(buf, sizeof buf, "%.2f GB", double(bytes) / 1e9);
    else if (bytes >= 10'000'000) std::snprintf(buf, sizeof buf, "%.0f MB", double(bytes) / 1e6);
    else std::snprintf(buf, sizeof buf, "%.1f MB", double(bytes) / 1e6); // config and tokenizer files
    return buf;
}

bool refuse(AppState& s, const std::string& why, std::string& error) {
    error = why;
    s.error = "Kept what is shown: " + why + ".";
    s.status = s.error;
    return false;
}

void open_snapshot(AppState& s, const std::string& id, const std::string& folder) {
    std::string error;
    if (request_model_path(s, folder, error)) {
        s.hub.message = id + " is in the cache; opening it.";
        s.hub.failed = false;
    } else {
        s.hub.message = "Could not open " + id + ": " + error;
        s.hub.failed = true;
    }
}

} // namespace

void refresh_hub_cached(AppState& s) {
    const std::string dir = cache_dir_of(s.hub);
    s.hub.cached.assign(hub_choices().size(), false);
    for (size_t i = 0; i < hub_choices().size(); ++i)
        s.hub.cached[i] = hub_cached_snapshot(dir, hub_choices()[i].id, "main").has_value();
    s.hub.looked = true;
}

bool hub_getting(const AppState& s) { return bool(s.hub.job); }

bool request_hub_get(AppState& s, int i, std::string& error) {
    if (i < 0 || i >= int(hub_choices().size()))
        return refuse(s, "there is no model " + std::to_string(i) + " in the list; choose one of its " +
                             std::to_string(hub_choices().size()),
                      error);
    const HubChoice& c = hub_choices()[size_t(i)];
    if (s.hub.job)
        return refuse(s, std::string("still getting ") + hub_choices()[size_t(s.hub.choice)].id +
                             "; wait for it or cancel it first",
                      error);
    if (model_loading(s)) return refuse(s, "a model is being read; get the next once it is in", error);
    if (auto folder = hub_cached_snapshot(cache_dir_of(s.hub), c.id, "main")) {
        s.hub.choice = i;
        open_snapshot(s, c.id, *folder);
        return !s.hub.failed;
    }
    if (!s.hub.get)
        return refuse(s, std::string("getting ") + c.id +
                             " needs the attnviz app on a computer: a page in the browser cannot download a model",
                      error);
    auto job = std::make_shared<HubJob>();
    HubJob* j = job.get();
    const HubGetFunction get = s.hub.get;
    const std::string id = c.id;
    job->worker = std::thread([j, get, id] {
        HubGetResult r = get(id, [j](const HubProgress& p) {
            std::lock_guard<std::mutex> lock(j->mutex);
            j->progress = p;
        }, &j->cancel);
        {
            std::lock_guard<std::mutex> lock(j->mutex);
            j->result = std::move(r);
        }
        j->done = true;
    });
    s.hub.job = std::move(job);
    s.hub.choice = i;
    s.hub.progress = HubProgress{};
    s.hub.message.clear();
    s.hub.failed = false;
    s.error.clear();
    s.status = "Getting " + id + " (about " + megabytes(c.bytes) + ") from the Hugging Face Hub; every view stays usable.";
    return true;
}

void cancel_hub_get(AppState& s) {
    if (s.hub.job) s.hub.job->cancel = true;
}

void poll_hub_get(AppState& s, bool wait) {
    if (!s.hub.job) return;
    HubJob& j = *s.hub.job;
    if (wait && j.worker.joinable()) j.worker.join();
    {
        std::lock_guard<std::mutex> lock(j.mutex);
        s.hub.progress = j.progress;
    }
    if (!j.done) return;
    if (j.worker.joinable()) j.worker.join();
    const HubGetResult r = j.result;
    const bool cancelled = j.cancel || r.cancelled;
    s.hub.job.reset();
    const std::string id = hub_choices()[size_t(s.hub.choice)].id;
    refresh_hub_cached(s);
    if (r.ok && !cancelled) {
        open_snapshot(s, id, r.snapshot);
        if (s.hub.failed) s.error = s.status = "Kept what is shown: " + s.hub.message + ".";
        return;
    }
    s.hub.failed = !cancelled;
    s.hub.message = cancelled ? "Cancelled getting " + id + "; the part downloaded stays, and the next get goes on from it."
                              : r.error;
    s.status = cancelled ? s.hub.message : "Kept what is shown: " + r.error;
    if (!cancelled) s.error = s.status;
}

std::string hub_progress_text(const HubProgress& p) {
    if (p.files == 0) return "asking the Hub…";
    std::string text = p.file + ": " + (p.file_total >= 0 ? megabytes(p.file_done) + " of " + megabytes(p.file_total)
                                                          : megabytes(p.file_done));
    if (p.bytes_per_second > 0) {
        char rate[48];
        std::snprintf(rate, sizeof rate, ", %.1f MB/s", p.bytes_per_second / 1e6);
        text += rate;
        if (p.all_total > 0 && p.all_total >= p.all_done) {
            const double left = double(p.all_total - p.all_done) / p.bytes_per_second;
            char eta[48];
            if (left >= 60) std::snprintf(eta, sizeof eta, ", %d min %02d s left", int(left) / 60, int(left) % 60);
            else std::snprintf(eta, sizeof eta, ", %d s left", int(left + 0.5));
            text += eta;
        }
    }
    return text;
}

} // namespace attnviz
