// work_team.h: the fast kernel's threads. Not part of the public API.
//
// run_pieces(n, threads, piece) calls piece(k) for k = 0 .. n-1, on the calling thread and
// on up to threads - 1 workers of one process-wide team, and returns when every piece is
// done. Why not an OpenMP region: on a machine busier than its cores, a region's barrier
// waits for every thread of the team, including one the OS has not run yet, and OpenMP's
// idle threads spin for milliseconds after each region (taking a core from the GUI). Here
//   - pieces are claimed one at a time, so the caller never waits for a thread that did
//     not take a piece (a late worker finds nothing left and goes back to sleep);
//   - idle workers spin only briefly (work_team_spin_us) and then sleep on a condition
//     variable, which costs nothing between slider moves;
//   - only one caller uses the team at a time; a second caller (or a piece that calls
//     run_pieces itself) runs its pieces alone, with the same results.
// Each piece must write memory no other piece of the same call touches.
#pragma once
#include <cstdint>
#include <type_traits>

namespace attnviz::detail {

// Threads the fast kernel uses for large problems: the CPUs this process may run on,
// or OMP_NUM_THREADS when that is a positive number (at most 64). Read once.
int work_team_threads();

// How long an idle worker keeps looking for the next piece before it sleeps.
constexpr int work_team_spin_us = 50;

using PieceFn = void (*)(void* context, int piece);

// See the top of this file. threads <= 1 or n <= 1: every piece on the calling thread.
void run_pieces(int n, int threads, PieceFn fn, void* context);

template <class F>
void run_pieces(int n, int threads, F&& piece) {
    using G = std::remove_reference_t<F>;
    run_pieces(n, threads, [](void* c, int k) { (*static_cast<G*>(c))(k); }, const_cast<void*>(static_cast<const void*>(&piece)));
}

// Runs Eigen's products single-threaded on this thread while it lives (the pieces are
// the parallelism) and then restores the thread's OpenMP setting.
class SerialEigen {
public:
    SerialEigen();
    ~SerialEigen();
    SerialEigen(const SerialEigen&) = delete;
    SerialEigen& operator=(const SerialEigen&) = delete;

private:
    [[maybe_unused]] int saved_ = 0; // unused without OpenMP (the web build)
};

} // namespace attnviz::detail
