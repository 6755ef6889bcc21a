// train_session.h: a training run on a worker thread, for the Train view. It owns a TrainRun
// (train.h) and steps it with run / pause / single step / a target step, at a chosen speed,
// and keeps the run's history: the loss of every step and snapshots of the weights at fixed
// steps within a stated memory budget, each with its accuracy and head scores.
//
// Threads. Only the worker touches the TrainRun while it lives. The window reads what the
// worker publishes (status, losses, snapshots, the latest weights) through copies taken
// under one mutex, held only to copy: the window never waits for a training step.
//
// Without threads (the web build without -pthread: ATTNVIZ_TRAIN_IN_SLICES) there is no
// worker: the page's loop calls pump_training() once a frame, which does the worker's work
// for a few milliseconds, a step (or a resume) at a time; wait_idle() does it to the end.
// The steps and their bits are the same.
//
// Determinism. The worker does nothing but train_step in order, so pausing, single steps,
// the speed and scrubbing never change a bit: the weights at step N are those of N calls of
// train_step after start_training, which is what `attnviz train --steps N` writes.
//
// History. A snapshot every `every` steps (10 at first) holds the weights; one every
// 10 x `every` steps (and step 0) also holds Adam's moments and the batch generator (a full
// checkpoint). When the snapshots pass the budget, `every` doubles and the snapshots off the
// new grid go: every 10 steps up to about 5000 steps at the default sizes, then sparser.
// Resuming from a snapshot restores the full checkpoint at or before it and replays the
// steps between (train_step is deterministic), then drops everything after it.
#pragma once
#include "train.h"
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define ATTNVIZ_TRAIN_IN_SLICES 1
#endif

namespace attnviz {

// Everything that fixes a run: the model's shapes and task, the seed, the learning rate and
// the batch size (`attnviz train`'s options).
struct TrainSettings {
    ModelConfig model;
    uint64_t seed = 0;
    double lr = 5e-3;
    int batch = 64;
};
// The task's defaults (task_defaults), seed 0.
TrainSettings default_train_settings(Task t);
// "" when start_training accepts the settings, else its one sentence.
std::string validate(const TrainSettings& s);

// The history's memory budget: the payload of every snapshot (weights, and for full
// checkpoints Adam's m and v and the generator), 128 MiB.
constexpr int64_t train_history_budget = int64_t(128) << 20;
// The first snapshot interval, and how many intervals lie between two full checkpoints.
constexpr int snapshot_every = 10;
constexpr int full_checkpoint_ratio = 10;
// accuracy() and head_scores() run 256 probe sequences each: at the default sizes about
// 50 ms together, ten steps' time. At full speed the worker scores every score_every steps
// (and step 0); when the speed is limited to slow_speed steps per second or less it has
// the time, and scores every snapshot.
constexpr int score_every = 50;
constexpr double slow_speed = 20;

// One snapshot of the history.
struct TrainSnapshot {
    int64_t step = 0;
    std::shared_ptr<const Model> model;  // the weights after `step` steps
    bool scored = false;                    // accuracy and scores were computed at this step
    std::map<std::string, double> accuracy; // train.h's accuracy()
    HeadScores scores;                      // train.h's head_scores()
    bool full = false;                      // Adam's state and the generator are kept too
};

// What the worker publishes after each step.
struct TrainStatus {
    int64_t step = 0;            // steps done
    int64_t target = -1;         // the step where it pauses by itself (-1: none)
    bool running = false;        // stepping, or about to
    bool busy = false;           // running, or restoring a snapshot
    double speed = 0;            // the limit, steps per second (0: as fast as it goes)
    double measured = 0;         // steps per second over the last second or so
    uint64_t version = 0;        // changes whenever anything below changes
    int64_t history_bytes = 0;   // snapshots' payload, <= budget
    int64_t budget = 0;
    int every = snapshot_every;  // the snapshot interval now
    std::string message;         // a divergence or a resume, for the view to say
};

// A copy of the history for drawing.
struct TrainHistory {
    std::vector<float> losses;          // losses[i] is step i + 1's loss (before its update)
    std::vector<TrainSnapshot> snapshots; // by step; models shared, not copied
    uint64_t epoch = ~uint64_t(0);      // the session's history epoch this copy follows
};

class TrainSession {
public:
    // start_training(settings); throws std::invalid_argument with its sentence.
    explicit TrainSession(const TrainSettings& s, int64_t budget = train_history_budget);
    // A run that starts from a given model (a loaded file): its weights, fresh Adam moments
    // and a fresh batch generator from the settings' seed, at step 0.
    TrainSession(const TrainSettings& s, const Model& start, int64_t budget = train_history_budget);
    ~TrainSession(); // stops the worker after its current step and joins it
    TrainSession(const TrainSession&) = delete;
    TrainSession& operator=(const TrainSession&) = delete;

    const TrainSettings& settings() const { return settings_; }

    void run();                    // train until paused (or the target)
    void pause();                  // stop after the current step
    void step(int n = 1);          // n more steps, then pause
    void run_to(int64_t step);     // train until `step`, then pause
    void set_speed(double steps_per_second); // 0: as fast as the machine goes
    // Continue from the snapshot at `step` (<= the current step): every step and snapshot
    // after it is dropped. False when no snapshot is at `step`.
    bool resume_from(int64_t step);
    // Blocks until the worker has nothing to do (paused, nothing pending). For headless runs
    // and tests; the window never calls it.
    void wait_idle();

    TrainStatus status() const;
    // Brings `out` up to date. Between a thinning and a resume the history only grows, so a
    // copy that follows the session takes only the losses and snapshots it lacks: the window
    // copies a few floats a frame, not the whole run under the lock the worker needs.
    void copy_history(TrainHistory& out) const;
    // The latest weights, shared; `step` (when given) gets the steps they are after.
    std::shared_ptr<const Model> latest(int64_t* step = nullptr) const;
    // The run as it is now (weights, Adam, generator); waits until the worker is idle.
    TrainRun run_copy();

#ifdef ATTNVIZ_TRAIN_IN_SLICES
    // The worker's work until `deadline` or until there is none (or the speed limit says
    // wait); pump_training() calls it.
    void pump(std::chrono::steady_clock::time_point deadline);
#endif

private:
    struct Full;
    void start_worker();
    void first_snapshot();
    void worker();
    // One piece of the worker's work, with the lock held (released meanwhile): a pending
    // resume, or one step. False, having done nothing, when the speed limit says the next
    // step is not due yet; `due` then says when it is.
    bool work_once(std::unique_lock<std::mutex>& lock, std::chrono::steady_clock::time_point& due);
    void take_snapshot(int64_t step, bool score); // worker only, lock not held
    void thin_locked();
    void restore_locked(int64_t step, std::unique_lock<std::mutex>& lock);

    TrainSettings settings_;
    TrainRun run_; // the worker's, or anyone's while the worker waits with nothing to do
    mutable std::mutex mu_;
    std::condition_variable wake_, idle_;
    std::thread thread_;
    bool quit_ = false;
    TrainStatus status_;
    int64_t resume_ = -1; // a pending resume_from
    bool stepping_ = false; // the worker is inside a step or a restore (lock released)
    std::vector<float> losses_;
    std::vector<TrainSnapshot> snapshots_;
    uint64_t epoch_ = 0; // changes when losses or snapshots are dropped or changed, not appended
    std::map<int64_t, std::shared_ptr<const Full>> full_; // by step
    std::shared_ptr<const Model> latest_;
    int64_t budget_;
    std::chrono::steady_clock::time_point last_start_ = std::chrono::steady_clock::now() - std::chrono::hours(1);
    std::vector<std::chrono::steady_clock::time_point> recent_; // step ends within the last second, for `measured`
};

#ifdef ATTNVIZ_TRAIN_IN_SLICES
// Every live session's work for about `budget_ms` milliseconds in all, shared between them.
void pump_training(double budget_ms);
#endif

} // namespace attnviz
