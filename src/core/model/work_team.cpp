// work_team.cpp: see work_team.h.
#include "work_team.h"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>
#ifdef __linux__
#include <sched.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace attnviz::detail {

namespace {

using Clock = std::chrono::steady_clock;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// The current call, packed into one word so that a compare-and-swap claims a piece of
// this call and of no other: generation (32 bits) | threads allowed (8) | pieces (12) |
// next piece (12).
constexpr int piece_bits = 12;
constexpr int max_pieces = (1 << piece_bits) - 1;

uint64_t pack(uint32_t generation, int threads, int n) {
    return uint64_t(generation) << 32 | uint64_t(threads) << (2 * piece_bits) | uint64_t(n) << piece_bits;
}
uint32_t generation_of(uint64_t job) { return uint32_t(job >> 32); }

struct Team {
    int size = 1;                      // threads, the caller included
    std::atomic<uint64_t> job{0};      // see pack()
    std::atomic<int> done{0};          // pieces of the current call finished
    PieceFn fn = nullptr;              // written before `job` is published; read after a claim
    void* context = nullptr;
    uint32_t generation = 0;           // the caller's count of calls (only the busy caller writes it)
    std::atomic<bool> busy{false};     // a caller is using the team
    std::atomic<int> sleepers{0};      // workers waiting on `wake`
    std::atomic<bool> caller_sleeping{false};
    std::mutex m;
    std::condition_variable wake;      // workers: a new call
    std::condition_variable finished;  // the caller: the last piece is done
};

// Claims the next piece of call `gen` for thread `id` (0: the caller); -1 when none is
// left, the call is over, or the call wants fewer threads. `n` gets the call's pieces.
int claim(Team& t, uint32_t gen, int id, int& n) {
    uint64_t s = t.job.load(std::memory_order_acquire);
    for (;;) {
        if (generation_of(s) != gen || id >= int((s >> (2 * piece_bits)) & 0xff)) return -1;
        n = int((s >> piece_bits) & max_pieces);
        const int next = int(s & max_pieces);
        if (next >= n) return -1;
        if (t.job.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire))
            return next;
    }
}

void finish_piece(Team& t, int n) {
    // seq_cst with the caller's store of caller_sleeping: one of the two sees the other.
    if (t.done.fetch_add(1) + 1 == n && t.caller_sleeping.load()) {
        std::lock_guard<std::mutex> lock(t.m);
        t.finished.notify_one();
    }
}

// A worker's wait for a call other than `seen`: a short spin (calls of one forward follow
// each other within microseconds), then sleep.
uint32_t wait_for_call(Team& t, uint32_t seen) {
    auto current = [&] { return generation_of(t.job.load(std::memory_order_acquire)); };
    const Clock::time_point until = Clock::now() + std::chrono::microseconds(work_team_spin_us);
    for (int i = 1;; ++i) {
        if (current() != seen) return current();
        if (i % 64 == 0 && Clock::now() > until) break;
        cpu_relax();
    }
    std::unique_lock<std::mutex> lock(t.m);
    t.sleepers.fetch_add(1); // seq_cst with the caller's store of `job`
    t.wake.wait(lock, [&] { return current() != seen; });
    t.sleepers.fetch_sub(1);
    return current();
}

void worker_main(Team* t, int id) {
#ifdef _OPENMP
    omp_set_num_threads(1); // Eigen's products inside a piece stay on this thread
#endif
    uint32_t seen = 0;
    for (;;) {
        const uint32_t gen = wait_for_call(*t, seen);
        seen = gen;
        int n = 0;
        for (int k; (k = claim(*t, gen, id, n)) >= 0;) {
            t->fn(t->context, k);
            finish_piece(*t, n);
        }
    }
}

int count_threads() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
    return 1; // the web build without threads: every piece runs on the calling thread
#else
    int n = int(std::thread::hardware_concurrency());
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
#endif
    if (const char* env = std::getenv("OMP_NUM_THREADS")) {
        char* end = nullptr;
        const long v = std::strtol(env, &end, 10);
        if (end != env && v > 0) n = int(std::min<long>(v, 64));
    }
    return std::clamp(n, 1, 64);
#endif
}

// The team lives for the whole process (its workers sleep when idle); it is never
// destroyed, so no worker can wait on a destroyed condition variable at exit.
std::once_flag team_once;
Team* the_team = nullptr;
int thread_count = 0;
std::once_flag threads_once;

Team& team() {
    std::call_once(team_once, [] {
        Team* t = new Team;
        const int want = work_team_threads();
        for (int id = 1; id < want; ++id) {
            try {
                std::thread(worker_main, t, id).detach();
                t->size = id + 1;
            } catch (const std::system_error&) {
                break; // fewer threads than hoped; the pieces still all run
            }
        }
        the_team = t;
    });
    return *the_team;
}

void run_alone(int n, PieceFn fn, void* context) {
    for (int k = 0; k < n; ++k) fn(context, k);
}

// One call of at most max_pieces pieces on a team this caller holds.
void run_on_team(Team& t, int n, int threads, PieceFn fn, void* context) {
    t.fn = fn;
    t.context = context;
    t.done.store(0, std::memory_order_relaxed);
    const uint32_t gen = ++t.generation;
    t.job.store(pack(gen, threads, n)); // seq_cst with a worker's sleepers.fetch_add
    if (t.sleepers.load() > 0) {
        std::lock_guard<std::mutex> lock(t.m);
        t.wake.notify_all();
    }
    int pieces = n;
    for (int k; (k = claim(t, gen, 0, pieces)) >= 0;) {
        fn(context, k);
        t.done.fetch_add(1);
    }
    // Only pieces a running worker has claimed are left: spin briefly, then sleep.
    const Clock::time_point until = Clock::now() + std::chrono::microseconds(work_team_spin_us);
    for (int i = 1; t.done.load(std::memory_order_acquire) < n; ++i) {
        if (i % 64 == 0 && Clock::now() > until) {
            t.caller_sleeping.store(true);
            std::unique_lock<std::mutex> lock(t.m);
            t.finished.wait(lock, [&] { return t.done.load() >= n; });
            t.caller_sleeping.store(false);
            break;
        }
        cpu_relax();
    }
}

} // namespace

int work_team_threads() {
    std::call_once(threads_once, [] { thread_count = count_threads(); });
    return thread_count;
}

void run_pieces(int n, int threads, PieceFn fn, void* context) {
    if (n <= 0) return;
    if (threads <= 1 || n == 1) return run_alone(n, fn, context);
    Team& t = team();
    threads = std::min(threads, t.size);
    if (threads <= 1 || t.busy.exchange(true, std::memory_order_acquire)) return run_alone(n, fn, context);
    struct Batch {
        PieceFn fn;
        void* context;
        int base;
    };
    for (int base = 0; base < n; base += max_pieces) {
        const int count = std::min(max_pieces, n - base);
        if (base == 0 && count == n) {
            run_on_team(t, n, threads, fn, context);
        } else {
            Batch b{fn, context, base};
            run_on_team(t, count, threads, [](void* c, int k) {
                const Batch& batch = *static_cast<Batch*>(c);
                batch.fn(batch.context, batch.base + k);
            }, &b);
        }
    }
    t.busy.store(false, std::memory_order_release);
}

SerialEigen::SerialEigen() {
#ifdef _OPENMP
    saved_ = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
}

SerialEigen::~SerialEigen() {
#ifdef _OPENMP
    omp_set_num_threads(saved_);
#endif
}

} // namespace attnviz::detail
