// train_session.cpp: see train_session.h.
#include "train_session.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace attnviz {

using Clock = std::chrono::steady_clock;

// [SECTION] Settings

TrainSettings default_train_settings(Task t) {
    const TrainDefaults d = task_defaults(t);
    TrainSettings s;
    s.model = d.model;
    s.lr = d.lr;
    s.batch = d.batch;
    return s;
}

std::string validate(const TrainSettings& s) {
    if (std::string bad = validate(s.model); !bad.empty()) return bad;
    if (!(s.lr > 0.0) || !std::isfinite(s.lr)) {
        char text[32];
        std::snprintf(text, sizeof text, "%g", s.lr);
        return std::string("learning rate ") + text + " is not a positive number; use e.g. 5e-3";
    }
    if (s.batch < 1 || s.batch > max_train_batch)
        return "batch " + std::to_string(s.batch) + " is out of range; use 1 to " + std::to_string(max_train_batch) +
               " sequences";
    return "";
}

// [SECTION] Snapshots and their bytes

// What a full checkpoint keeps besides the snapshot's weights.
struct TrainSession::Full {
    AdamState adam;
    TorchGenerator gen;
};

namespace {

int64_t model_floats(const Model& m) {
    int64_t n = 0;
    for (const Param& p : parameters(const_cast<Model&>(m))) n += p.value->size();
    return n;
}

// The payload a snapshot holds: its weights, and for a full checkpoint Adam's m and v
// (one float per weight each) and the generator.
int64_t snapshot_bytes(const Model& m, bool full) {
    const int64_t w = model_floats(m) * int64_t(sizeof(float));
    return full ? 3 * w + int64_t(sizeof(TorchGenerator)) : w;
}

} // namespace

// [SECTION] Life

TrainSession::TrainSession(const TrainSettings& s, int64_t budget)
    : settings_(s), run_(start_training(s.model, s.seed, s.lr, s.batch)), budget_(budget) {
    start_worker();
}

TrainSession::TrainSession(const TrainSettings& s, const Model& start, int64_t budget)
    : settings_(s), budget_(budget) {
    settings_.model = start.config;
    run_ = start_training(settings_.model, settings_.seed, settings_.lr, settings_.batch);
    run_.model = start;
    start_worker();
}

#ifdef ATTNVIZ_TRAIN_IN_SLICES
namespace {
std::vector<TrainSession*>& live_sessions() {
    static std::vector<TrainSession*> sessions;
    return sessions;
}
} // namespace

void pump_training(double budget_ms) {
    const std::vector<TrainSession*> sessions = live_sessions();
    for (size_t i = 0; i < sessions.size(); ++i) {
        const double share = budget_ms / double(sessions.size());
        sessions[i]->pump(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double, std::milli>(share)));
    }
}

void TrainSession::pump(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    Clock::time_point due;
    while ((status_.running || resume_ >= 0) && Clock::now() < deadline)
        if (!work_once(lock, due)) break;
}
#endif

void TrainSession::start_worker() {
    status_.budget = budget_;
    latest_ = std::make_shared<const Model>(run_.model);
    stepping_ = true; // the worker's first job is the snapshot of step 0
#ifdef ATTNVIZ_TRAIN_IN_SLICES
    first_snapshot();
    live_sessions().push_back(this);
#else
    thread_ = std::thread([this] { worker(); });
#endif
}

TrainSession::~TrainSession() {
#ifdef ATTNVIZ_TRAIN_IN_SLICES
    std::vector<TrainSession*>& live = live_sessions();
    live.erase(std::remove(live.begin(), live.end(), this), live.end());
#endif
    {
        std::lock_guard<std::mutex> lock(mu_);
        quit_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

// [SECTION] Controls

void TrainSession::run() {
    std::lock_guard<std::mutex> lock(mu_);
    status_.running = true;
    status_.target = -1;
    status_.message.clear();
    ++status_.version;
    wake_.notify_all();
}

void TrainSession::pause() {
    std::lock_guard<std::mutex> lock(mu_);
    status_.running = false;
    status_.target = -1;
    ++status_.version;
    wake_.notify_all();
}

void TrainSession::run_to(int64_t step) {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t from = resume_ >= 0 ? resume_ : status_.step;
    if (step <= from) return;
    status_.running = true;
    status_.target = step;
    status_.message.clear();
    ++status_.version;
    wake_.notify_all();
}

void TrainSession::step(int n) {
    int64_t from;
    {
        std::lock_guard<std::mutex> lock(mu_);
        from = resume_ >= 0 ? resume_ : status_.step;
        // Steps asked for one after another add up; a step while running stops the run
        // after the step it is in.
        if (status_.running && status_.target >= 0) from = status_.target;
        else if (status_.running) from = status_.step + (stepping_ ? 1 : 0);
    }
    run_to(from + n);
}

void TrainSession::set_speed(double steps_per_second) {
    std::lock_guard<std::mutex> lock(mu_);
    status_.speed = steps_per_second > 0 ? steps_per_second : 0;
    ++status_.version;
    wake_.notify_all();
}

bool TrainSession::resume_from(int64_t step) {
    std::lock_guard<std::mutex> lock(mu_);
    bool found = false;
    for (const TrainSnapshot& s : snapshots_) found = found || s.step == step;
    if (!found || step > status_.step) return false;
    if (step == status_.step) return true;
    resume_ = step;
    ++status_.version;
    wake_.notify_all();
    return true;
}

void TrainSession::wait_idle() {
    std::unique_lock<std::mutex> lock(mu_);
#ifdef ATTNVIZ_TRAIN_IN_SLICES
    Clock::time_point due;
    while (status_.running || resume_ >= 0) work_once(lock, due); // not due yet: it soon is
#endif
    idle_.wait(lock, [&] { return !status_.running && resume_ < 0 && !stepping_; });
}

// [SECTION] Reading

TrainStatus TrainSession::status() const {
    std::lock_guard<std::mutex> lock(mu_);
    TrainStatus s = status_;
    s.busy = status_.running || resume_ >= 0 || stepping_;
    return s;
}

void TrainSession::copy_history(TrainHistory& out) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (out.epoch != epoch_ || out.losses.size() > losses_.size() || out.snapshots.size() > snapshots_.size()) {
        out.losses = losses_;
        out.snapshots = snapshots_;
        out.epoch = epoch_;
        return;
    }
    out.losses.insert(out.losses.end(), losses_.begin() + std::ptrdiff_t(out.losses.size()), losses_.end());
    out.snapshots.insert(out.snapshots.end(), snapshots_.begin() + std::ptrdiff_t(out.snapshots.size()), snapshots_.end());
}

std::shared_ptr<const Model> TrainSession::latest(int64_t* step) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (step) *step = status_.step;
    return latest_;
}

TrainRun TrainSession::run_copy() {
#ifdef ATTNVIZ_TRAIN_IN_SLICES
    wait_idle();
#endif
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return !status_.running && resume_ < 0 && !stepping_; });
    return run_; // the worker cannot start a step while the lock is held
}

// [SECTION] The worker

void TrainSession::take_snapshot(int64_t step, bool score) {
    TrainSnapshot snap;
    snap.step = step;
    snap.model = std::make_shared<const Model>(run_.model);
    snap.scored = score;
    if (score) {
        snap.accuracy = accuracy(run_.model);
        snap.scores = head_scores(run_.model);
    }
    std::shared_ptr<const Full> full;
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t full_every = int64_t(status_.every) * full_checkpoint_ratio;
    snap.full = step % full_every == 0;
    if (snap.full) full = std::make_shared<const Full>(Full{run_.adam, run_.batch_gen});
    status_.history_bytes += snapshot_bytes(*snap.model, snap.full);
    if (full) full_[step] = std::move(full);
    snapshots_.push_back(std::move(snap));
    thin_locked();
}

// Doubles the interval until the history fits the budget; step 0 always stays.
void TrainSession::thin_locked() {
    while (status_.history_bytes > budget_ && status_.every < (1 << 30)) {
        status_.every *= 2;
        const int64_t every = status_.every, full_every = every * full_checkpoint_ratio;
        std::vector<TrainSnapshot> kept;
        int64_t bytes = 0;
        for (TrainSnapshot& s : snapshots_) {
            if (s.step != 0 && s.step % every != 0) continue;
            if (s.full && s.step != 0 && s.step % full_every != 0) {
                s.full = false;
                full_.erase(s.step);
            }
            bytes += snapshot_bytes(*s.model, s.full);
            kept.push_back(std::move(s));
        }
        for (auto it = full_.begin(); it != full_.end();)
            it = (it->first != 0 && it->first % full_every != 0) ? full_.erase(it) : std::next(it);
        snapshots_ = std::move(kept);
        status_.history_bytes = bytes;
        ++epoch_;
    }
}

// Puts the run back at snapshot `step`: the full checkpoint at or before it, then the steps
// between replayed. Called by the worker with the lock held; releases it while replaying.
void TrainSession::restore_locked(int64_t step, std::unique_lock<std::mutex>& lock) {
    auto it = full_.upper_bound(step);
    --it; // step 0 is always a full checkpoint
    const int64_t from = it->first;
    std::shared_ptr<const Full> full = it->second;
    std::shared_ptr<const Model> model;
    for (const TrainSnapshot& s : snapshots_)
        if (s.step == from) model = s.model;
    const int64_t dropped = status_.step - step;
    stepping_ = true;
    lock.unlock();
    run_.model = *model;
    run_.adam = full->adam;
    run_.batch_gen = full->gen;
    for (int64_t k = from; k < step; ++k) train_step(run_); // deterministic: the same bits as the first time
    run_.losses.clear();
    auto now = std::make_shared<const Model>(run_.model);
    lock.lock();
    stepping_ = false;
    losses_.resize(size_t(step));
    std::vector<TrainSnapshot> kept;
    int64_t bytes = 0;
    for (TrainSnapshot& s : snapshots_) {
        if (s.step > step) continue;
        bytes += snapshot_bytes(*s.model, s.full);
        kept.push_back(std::move(s));
    }
    snapshots_ = std::move(kept);
    full_.erase(full_.upper_bound(step), full_.end());
    status_.history_bytes = bytes;
    status_.step = step;
    ++epoch_;
    latest_ = std::move(now);
    status_.message = "Resumed from step " + std::to_string(step) + ": the " + std::to_string(dropped) +
                      " later steps were dropped.";
    ++status_.version;
}

void TrainSession::first_snapshot() {
    take_snapshot(0, true);
    std::lock_guard<std::mutex> lock(mu_);
    stepping_ = false;
    ++status_.version;
    idle_.notify_all();
}

void TrainSession::worker() {
    first_snapshot();
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
        wake_.wait(lock, [&] { return quit_ || status_.running || resume_ >= 0; });
        if (quit_) break;
        Clock::time_point due;
        if (!work_once(lock, due)) wake_.wait_until(lock, due); // a pause, a new speed or quitting wakes it early
    }
    stepping_ = false;
    idle_.notify_all();
}

bool TrainSession::work_once(std::unique_lock<std::mutex>& lock, Clock::time_point& due) {
    if (resume_ >= 0) {
        const int64_t at = resume_;
        restore_locked(at, lock);
        if (resume_ == at) resume_ = -1;
        if (status_.target >= 0 && status_.target <= status_.step) status_.running = false, status_.target = -1;
        if (!status_.running) idle_.notify_all();
        return true;
    }
    if (status_.speed > 0) {
        due = last_start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / status_.speed));
        if (Clock::now() < due) return false;
    }
    last_start_ = Clock::now();
    const int64_t next = status_.step + 1;
    const double speed = status_.speed;
    stepping_ = true;
    lock.unlock();
    // One thread: the window's drawing (llvmpipe, on machines without a GPU) needs the
    // other core more than a toy model's step needs two. The bits are the same either way.
    const float loss = train_step(run_, 1);
    const bool ok = std::isfinite(loss);
    std::shared_ptr<const Model> now;
    if (ok) {
        run_.losses.clear(); // the session keeps the losses; the run's copy would only grow
        now = std::make_shared<const Model>(run_.model);
        // Only the worker writes `every`, so it may read it without the lock.
        if (next % status_.every == 0)
            take_snapshot(next, next % score_every == 0 || (speed > 0 && speed <= slow_speed));
    }
    lock.lock();
    stepping_ = false;
    if (ok) {
        losses_.push_back(loss);
        status_.step = next;
        latest_ = std::move(now);
        const Clock::time_point end = Clock::now();
        recent_.push_back(end);
        while (recent_.size() > 2 && end - recent_.front() > std::chrono::seconds(1)) recent_.erase(recent_.begin());
        const double span = std::chrono::duration<double>(recent_.back() - recent_.front()).count();
        status_.measured = recent_.size() > 1 && span > 0 ? double(recent_.size() - 1) / span : 0;
    } else {
        char lr[32];
        std::snprintf(lr, sizeof lr, "%g", settings_.lr);
        status_.message = "Training diverged at step " + std::to_string(next) +
                          " (the loss is not finite) and stopped; try a smaller learning rate than " + lr + ".";
        status_.running = false;
        status_.target = -1;
    }
    if (status_.target >= 0 && status_.step >= status_.target) {
        status_.running = false;
        status_.target = -1;
    }
    if (!status_.running) status_.measured = 0, recent_.clear();
    ++status_.version;
    if (!status_.running) idle_.notify_all();
    return true;
}

} // namespace attnviz
