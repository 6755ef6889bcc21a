// blas.cpp: OpenBLAS loaded at the first product, with the settings the fast kernel needs.
//
// Why dlopen rather than linking: OpenBLAS reads its settings from the environment when
// it is loaded, before main() could set them, and two of them matter here:
//   OPENBLAS_NUM_THREADS=1   the work team is the parallelism; with one thread OpenBLAS
//                            starts no threads of its own, so none can spin (after each
//                            product its idle threads would busy-wait about 0.1 s, taking a
//                            core from the window and from the team's other thread);
//   OPENBLAS_CORETYPE        OpenBLAS 0.3.21 knows Intel CPUs by model number, and on a
//                            model newer than itself it falls back to its SSE3 kernels
//                            ("Prescott"): on a Xeon of family 6, model 207 (AVX-512),
//                            20-29 GFLOP/s per core instead of 110-125. On Intel CPUs the
//                            kernel set is therefore chosen here from the CPU's features.
//                            AMD CPUs are left to OpenBLAS, which knows them by family.
// A value the user set in the environment is kept. The variables are restored after the
// load, so nothing else in the process sees them changed.
// The pthread build is loaded by its own path (ATTNVIZ_OPENBLAS_PATH, found by CMake), not
// whichever libopenblas.so.0 Debian's alternatives point to: the OpenMP build would open an
// OpenMP region per call from the team's threads, whose idle threads spin too.
// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics (the
// _mm512_undefined_ps idiom, GCC bug 105593) where Eigen's fallback products inline them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "blas.h"
#include "work_team.h"
#include <algorithm>
#include <chrono>
#include <cstdlib>
#ifndef __EMSCRIPTEN__
#include <dlfcn.h>
#endif
#include <cstring>
#include <vector>

#ifndef ATTNVIZ_OPENBLAS_PATH
#define ATTNVIZ_OPENBLAS_PATH "libopenblas.so.0"
#endif

namespace attnviz::detail {

namespace {

// cblas.h's values, so that the build needs only the runtime library.
enum { cblas_row_major = 101, cblas_no_trans = 111, cblas_trans = 112 };
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                         int);
using NameFn = char* (*)();

struct Blas {
    SgemmFn sgemm = nullptr;
    void (*set_threads)(int) = nullptr;
    NameFn core_name = nullptr;
};

#ifdef __EMSCRIPTEN__
// The web build (make web) has no shared libraries to load: Eigen's products, always.
Blas load() { return Blas{}; }
#else
// OpenBLAS's name for the best kernel set this CPU runs, or nullptr to let OpenBLAS choose.
const char* intel_core_type() {
    __builtin_cpu_init();
    if (!__builtin_cpu_is("intel")) return nullptr;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        return __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
    return nullptr;
}

// Sets name to value for the lifetime of this object unless the user set it already.
class EnvDefault {
public:
    EnvDefault(const char* name, const char* value) : name_(name) {
        if (!value || std::getenv(name)) return;
        setenv(name, value, 1);
        set_ = true;
    }
    ~EnvDefault() {
        if (set_) unsetenv(name_);
    }
    EnvDefault(const EnvDefault&) = delete;
    EnvDefault& operator=(const EnvDefault&) = delete;

private:
    const char* name_;
    bool set_ = false;
};

// ATTNVIZ_PRODUCTS=eigen or =blis replaces OpenBLAS, to compare the products in the real
// forward (make bench); BLIS is Debian's libblis4, run on one thread.
Blas load_other(const char* which) {
    Blas b;
    if (std::strcmp(which, "blis") != 0) return b;
    void* lib = dlopen("libblis.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return b;
    b.sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cblas_sgemm"));
    if (auto set = reinterpret_cast<void (*)(int64_t)>(dlsym(lib, "bli_thread_set_num_threads"))) set(1);
    b.core_name = [] { return const_cast<char*>("BLIS"); };
    return b;
}

Blas load() {
    if (const char* which = std::getenv("ATTNVIZ_PRODUCTS"); which && std::strcmp(which, "openblas") != 0)
        return load_other(which);
    const EnvDefault threads("OPENBLAS_NUM_THREADS", "1");
    const EnvDefault core("OPENBLAS_CORETYPE", intel_core_type());
    void* lib = dlopen(ATTNVIZ_OPENBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    Blas b;
    if (!lib) return b;
    b.sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cblas_sgemm"));
    b.core_name = reinterpret_cast<NameFn>(dlsym(lib, "openblas_get_corename"));
    // A user's OPENBLAS_NUM_THREADS above 1 would make OpenBLAS thread each call from
    // every piece of the team at once.
    b.set_threads = reinterpret_cast<void (*)(int)>(dlsym(lib, "openblas_set_num_threads"));
    if (b.set_threads) b.set_threads(1);
    return b;
}
#endif // __EMSCRIPTEN__

const Blas& blas() {
    static const Blas b = load();
    return b;
}

using Stride = Eigen::OuterStride<>;
using ConstMap = Eigen::Map<const Mat, 0, Stride>;

} // namespace

void sgemm(bool b_transposed, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
           int ldc) {
    if (m <= 0 || n <= 0) return;
    if (!blas().sgemm) { // OpenBLAS missing: Eigen's products, the same numbers within 1e-5
        Eigen::Map<Mat, 0, Stride> out(c, m, n, Stride(ldc));
        const ConstMap lhs(a, m, k, Stride(lda));
        if (b_transposed)
            out.noalias() = lhs * ConstMap(b, n, k, Stride(ldb)).transpose();
        else
            out.noalias() = lhs * ConstMap(b, k, n, Stride(ldb));
        return;
    }
    blas().sgemm(cblas_row_major, cblas_no_trans, b_transposed ? cblas_trans : cblas_no_trans, m, n, k, 1.f, a, lda, b,
                 ldb, 0.f, c, ldc);
}

bool blas_loaded() { return blas().sgemm != nullptr; }
const char* blas_core_name() { return !blas().sgemm ? "none" : blas().core_name ? blas().core_name() : "unknown"; }

namespace {

// Median GFLOP/s of run() doing `flops`, over at least 5 runs and about `seconds`.
template <class F>
double median_rate(double flops, double seconds, F&& run) {
    using Clock = std::chrono::steady_clock;
    std::vector<double> rates;
    const Clock::time_point start = Clock::now();
    while (rates.size() < 5 || std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
        const Clock::time_point t0 = Clock::now();
        run();
        rates.push_back(flops / std::chrono::duration<double>(Clock::now() - t0).count() * 1e-9);
        if (rates.size() >= 1000) break;
    }
    std::sort(rates.begin(), rates.end());
    return rates[rates.size() / 2];
}

} // namespace

SgemmRates measure_sgemm(int m, int n, int k, int threads, int pieces, double seconds) {
    const Mat a = Mat::Random(m, k), b = Mat::Random(n, k);
    Mat c(m, n);
    const double flops = 2.0 * m * n * k;
    SgemmRates r;
    const SerialEigen serial; // the Eigen fallback, as in the fast kernel
    pieces = std::max(1, std::min(pieces, (n + 15) / 16));
    r.team = median_rate(flops, seconds, [&] {
        run_pieces(pieces, threads, [&](int piece) {
            const int c0 = (n + 15) / 16 * piece / pieces * 16, c1 = std::min(n, (n + 15) / 16 * (piece + 1) / pieces * 16);
            blas_product(a, b.middleRows(c0, c1 - c0), true, c.middleCols(c0, c1 - c0));
        });
    });
    if (blas().set_threads) blas().set_threads(threads);
    r.blas_threads = median_rate(flops, seconds, [&] { blas_product(a, b, true, c); });
    if (blas().set_threads) blas().set_threads(1);
    return r;
}

} // namespace attnviz::detail
