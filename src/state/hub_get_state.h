// hub_get_state.h: the side panel's Get GPT-2. A short list of the GPT-2 family, each with its
// download size and whether the Hugging Face cache already holds it (hub_cache.h: files only),
// and one download at a time on a worker thread with its progress and Cancel; when it is in,
// the model opens as Open model opens a folder (model_loading.cpp), named by its id.
//
// The state layer never waits on the network and links no libcurl: the download itself is a
// function the app injects (HubGetState::get, src/hub's hub_get over the environment's
// endpoint, token and cache), and the tests inject a fake. Without one (the web page) the
// panel says in one sentence that a download needs the app. hub_download.h is read for its
// plain types only, as render's are.
#pragma once
#include "hub_download.h"
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

struct AppState;

// What the window offers: the Hub id, the label and the approximate download (config,
// weights and tokenizer; model.safetensors is nearly all of it).
struct HubChoice {
    const char* id;
    const char* label;
    int64_t bytes;
};
const std::vector<HubChoice>& hub_choices();

// The download the app injects: blocks, reports progress on its own thread, stops when
// *cancel turns true. Empty: this build cannot download (the web page).
using HubGetFunction = std::function<HubGetResult(const std::string& repo, const std::function<void(const HubProgress&)>&,
                                                  const std::atomic<bool>* cancel)>;

struct HubJob; // hub_get_state.cpp: the worker, its cancel flag and latest progress

struct HubGetState {
    HubGetFunction get;
    std::string cache_dir;            // where the list looks (hub_cache_dir() when empty)
    std::vector<bool> cached;         // per hub_choices(), as last looked
    bool looked = false;              // `cached` is filled (looked once, then after each get)
    std::shared_ptr<HubJob> job;      // the download under way; nullptr: none
    int choice = -1;                  // the one downloading or last downloaded
    HubProgress progress;             // the latest, copied each frame from the worker
    std::string message;              // the last outcome: "gpt2 is in ...", a failure, "Cancelled ..."
    bool failed = false;              // `message` is a failure
};

// Looks in the cache for every choice (a few stat calls; the panel asks once, then after gets).
void refresh_hub_cached(AppState& s);
// Starts downloading choice i on a worker, or opens it at once when it is cached. False with
// one sentence (also in s.error) when i is out of range, a download is already under way, a
// model is being read, or this build cannot download; the shown model is kept.
bool request_hub_get(AppState& s, int i, std::string& error);
// Asks the worker to stop; the partial file stays for the next get to resume.
void cancel_hub_get(AppState& s);
bool hub_getting(const AppState& s);
// Called by recompute() each frame: copies the progress, and when the worker is done opens
// the model (request_model_path) or keeps the shown one and says why. `wait`: block until done.
void poll_hub_get(AppState& s, bool wait = false);
// "model.safetensors: 120 of 548 MB, 45.0 MB/s, 9 s left" for the panel's bar.
std::string hub_progress_text(const HubProgress& p);

} // namespace attnviz
