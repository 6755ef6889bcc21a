// test_work_team.cpp: the fast kernel's threads (work_team.h): every piece runs exactly
// once whatever the threads, callers and batch sizes, and the kernels' results do not
// depend on how many threads ran them or on a second caller using the team at once.
#include "core_test_util.h"
#include "kernels.h"
#include "work_team.h"
#include <atomic>
#include <thread>

namespace attnviz::test {
namespace {

// Runs n pieces on `threads` threads and checks that each ran once.
void expect_each_piece_once(int n, int threads) {
    std::vector<std::atomic<int>> runs(static_cast<size_t>(std::max(n, 1)));
    for (auto& r : runs) r.store(0);
    detail::run_pieces(n, threads, [&](int k) {
        ASSERT_GE(k, 0);
        ASSERT_LT(k, n);
        runs[size_t(k)].fetch_add(1);
    });
    for (int k = 0; k < n; ++k) ASSERT_EQ(runs[size_t(k)].load(), 1) << "piece " << k << " of " << n << ", threads " << threads;
}

TEST(WorkTeam, EveryPieceRunsOnce) {
    EXPECT_GE(detail::work_team_threads(), 1);
    // 5000 is more than one call's packed piece count (4095): the rest goes in a second batch.
    for (int threads : {1, 2, 3, 8})
        for (int n : {0, 1, 2, 3, 7, 64, 1000, 5000}) expect_each_piece_once(n, threads);
    // Many short calls in a row: workers that wake late must not run a piece of a later call twice.
    for (int i = 0; i < 2000; ++i) expect_each_piece_once(1 + i % 5, 2);
}

TEST(WorkTeam, ConcurrentAndNestedCallersEachGetTheirPieces) {
    std::atomic<int> failures{0};
    auto caller = [&](int seed) {
        for (int i = 0; i < 300; ++i) {
            const int n = 1 + (seed * 7 + i) % 17;
            std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
            for (auto& r : runs) r.store(0);
            detail::run_pieces(n, 2, [&](int k) {
                // A piece that itself runs pieces: they run on its thread.
                std::atomic<int> inner{0};
                detail::run_pieces(3, 2, [&](int) { inner.fetch_add(1); });
                if (inner.load() != 3) failures.fetch_add(1);
                runs[size_t(k)].fetch_add(1);
            });
            for (auto& r : runs)
                if (r.load() != 1) failures.fetch_add(1);
        }
    };
    std::thread a(caller, 1), b(caller, 2), c(caller, 3);
    a.join();
    b.join();
    c.join();
    EXPECT_EQ(failures.load(), 0);
}

// Large enough that every step of the fast kernel is cut into pieces for the team.
Config team_sized_config() {
    Config c;
    c.seq_len = 200;
    c.n_embd = 96;
    c.n_head = 3;
    c.seed = 5;
    return c;
}

TEST(WorkTeam, KernelResultsDoNotDependOnTheThreads) {
    const Config c = team_sized_config();
    Experiment e = make_experiment(c);
    const Vec row = perturbed_row(e, 77, 0.6f);
    Trace alone;
    forward(c, e.weights, e.x, KernelKind::fast, alone);
    update_row(e.weights, 77, row.data(), alone);
    Trace ref_alone;
    forward(c, e.weights, e.x, KernelKind::reference, ref_alone);

    // Two threads run the same forward and update at once: one of them finds the team busy
    // and runs its pieces alone. Both must give exactly the results of the run above.
    std::vector<Trace> traces(4);
    std::vector<std::thread> callers;
    for (size_t t = 0; t < traces.size(); ++t)
        callers.emplace_back([&, t] {
            const KernelKind k = t % 2 ? KernelKind::reference : KernelKind::fast;
            forward(c, e.weights, e.x, k, traces[t]);
            if (k == KernelKind::fast) update_row(e.weights, 77, row.data(), traces[t]);
        });
    for (auto& th : callers) th.join();
    for (size_t t = 0; t < traces.size(); ++t) {
        const Trace& want = t % 2 ? ref_alone : alone;
        expect_same_trace(traces[t], want, 0.f, t % 2 ? "reference, concurrent" : "fast, concurrent");
    }
}

} // namespace
} // namespace attnviz::test
