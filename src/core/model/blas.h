// blas.h: the fast kernel's matrix products through OpenBLAS's cblas_sgemm. Not part of
// the public API, and never used by the reference kernel (its sums keep torch's order).
//
// OpenBLAS chooses its kernels for the CPU when the program starts, so one binary runs
// each machine's fastest product (AVX-512, AVX2 or SSE) without -march=native.
// Threads: every call runs on the calling thread. The fast kernel's work team
// (work_team.h) is the parallelism: its pieces call sgemm side by side, and OpenBLAS's
// own threads never get work, so they sleep instead of spinning next to the window.
// Loaded with dlopen at the first product: see blas.cpp. For comparisons, the environment
// variable ATTNVIZ_PRODUCTS=eigen (Eigen's products) or =blis (BLIS's sgemm) replaces it.
#pragma once
#include "tensor.h"

namespace attnviz::detail {

// c = a b (b_transposed false) or c = a b^T (true), all float32 row-major, with leading
// dimensions lda, ldb, ldc (floats from one row to the next). m, n, k: c is (m, n) and
// a is (m, k). k = 0 gives zeros.
void sgemm(bool b_transposed, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
           int ldc);

// The same for Eigen's row-major matrices and their blocks (contiguous rows).
template <class A, class B, class C>
void blas_product(const A& a, const B& b, bool b_transposed, C&& c) {
    static_assert(std::decay_t<A>::IsRowMajor && std::decay_t<B>::IsRowMajor && std::decay_t<C>::IsRowMajor,
                  "blas_product takes row-major matrices and blocks");
    eigen_assert(a.innerStride() == 1 && b.innerStride() == 1 && c.innerStride() == 1);
    eigen_assert(c.rows() == a.rows() && (b_transposed ? b.cols() == a.cols() && b.rows() == c.cols()
                                                       : b.rows() == a.cols() && b.cols() == c.cols()));
    sgemm(b_transposed, int(c.rows()), int(c.cols()), int(a.cols()), a.data(), int(a.outerStride()), b.data(),
          int(b.outerStride()), c.data(), int(c.outerStride()));
}

// Whether OpenBLAS was found (without it, sgemm falls back to Eigen's products), and the
// kernel set it runs on this CPU ("SkylakeX", "Haswell", ...; "none" without it).
bool blas_loaded();
const char* blas_core_name();

// The machine's own rate for the qkv step's product, (m, k) x (n, k)^T, for the benchmark:
// median GFLOP/s over at least 5 runs and about `seconds`, cut into `pieces` column groups
// on the work team with one OpenBLAS thread each (as the fast kernel runs it), and whole
// on `threads` of OpenBLAS's own threads (OpenBLAS is left at one thread afterwards; its
// extra threads sleep after about 0.1 s).
struct SgemmRates {
    double team = 0, blas_threads = 0;
};
SgemmRates measure_sgemm(int m, int n, int k, int threads, int pieces, double seconds);

} // namespace attnviz::detail
