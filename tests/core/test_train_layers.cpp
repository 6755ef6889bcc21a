// test_train_layers.cpp: the training path's attention and cross-entropy (layers.h)
// against the same formulas in double, at sizes the tasks' defaults do not reach: rows
// shorter and longer than a block of 16 floats (N 1 to 65), head sizes 4 to 64, class
// counts on both sides of 16. Each result within 1e-5 of its tensor's largest |value|;
// the masked attention weights exactly 0.
// GCC 12's false -Wmaybe-uninitialized inside its AVX-512 intrinsics, where Eigen's
// products inline them (as in layers.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "layers.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace attnviz::detail {
namespace {

Mat random_mat(std::mt19937& r, int rows, int cols, float sd) {
    std::normal_distribution<float> nd(0.f, sd);
    Mat m(rows, cols);
    for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = nd(r);
    return m;
}

// max |got - want| over max |want| (1 when want is all 0)
double relative_error(const Mat& got, const Eigen::MatrixXd& want) {
    const double scale = std::max(1e-30, want.cwiseAbs().maxCoeff());
    return (got.cast<double>() - want).cwiseAbs().maxCoeff() / scale;
}

TEST(TrainLayers, AttentionMatchesTheFormulasInDouble) {
    for (int N : {1, 2, 15, 16, 17, 33, 65})
        for (int H : {1, 4, 16}) {
            SCOPED_TRACE("N " + std::to_string(N) + " H " + std::to_string(H));
            const int B = 2, C = 64, hd = C / H, M = B * N;
            const float scale = float(std::pow(double(hd), -0.5));
            std::mt19937 r{uint32_t(N * 100 + H)};
            const Mat qkv = random_mat(r, M, 3 * C, 2.f), dy = random_mat(r, M, C, 1.f);
            Mat y(M, C), att(B * H * N, N), dqkv(M, 3 * C), scratch(1, attention_scratch_floats(N, hd));
            attention_forward(y.data(), att.data(), qkv.data(), B, N, C, H, scale);
            attention_backward(dqkv.data(), scratch.data(), dy.data(), qkv.data(), att.data(), B, N, C, H, scale);

            const Eigen::MatrixXd x = qkv.cast<double>(), g = dy.cast<double>();
            Eigen::MatrixXd want_y(M, C), want_att(B * H * N, N), want_dqkv(M, 3 * C);
            for (int b = 0; b < B; ++b)
                for (int h = 0; h < H; ++h) {
                    const auto q = x.block(b * N, h * hd, N, hd), k = x.block(b * N, C + h * hd, N, hd),
                               v = x.block(b * N, 2 * C + h * hd, N, hd);
                    const auto dyh = g.block(b * N, h * hd, N, hd);
                    Eigen::MatrixXd P = Eigen::MatrixXd::Zero(N, N), S = q * k.transpose() * double(scale);
                    for (int i = 0; i < N; ++i) {
                        const double m = S.row(i).head(i + 1).maxCoeff();
                        for (int j = 0; j <= i; ++j) P(i, j) = std::exp(S(i, j) - m);
                        P.row(i) /= P.row(i).sum();
                    }
                    const Eigen::MatrixXd dP = dyh * v.transpose();
                    Eigen::MatrixXd dS = Eigen::MatrixXd::Zero(N, N);
                    for (int i = 0; i < N; ++i) {
                        const double dot = P.row(i).dot(dP.row(i));
                        for (int j = 0; j <= i; ++j) dS(i, j) = P(i, j) * (dP(i, j) - dot) * double(scale);
                    }
                    want_att.block((b * H + h) * N, 0, N, N) = P;
                    want_y.block(b * N, h * hd, N, hd) = P * v;
                    want_dqkv.block(b * N, h * hd, N, hd) = dS * k;
                    want_dqkv.block(b * N, C + h * hd, N, hd) = dS.transpose() * q;
                    want_dqkv.block(b * N, 2 * C + h * hd, N, hd) = P.transpose() * dyh;
                }
            EXPECT_LE(relative_error(att, want_att), 1e-5) << "att";
            EXPECT_LE(relative_error(y, want_y), 1e-5) << "y";
            EXPECT_LE(relative_error(dqkv, want_dqkv), 1e-5) << "dqkv";
            for (int row = 0; row < B * H * N; ++row)
                for (int j = row % N + 1; j < N; ++j) ASSERT_EQ(att(row, j), 0.f) << "masked att at " << row << ", " << j;
        }
}

TEST(TrainLayers, CrossEntropyMatchesTheFormulasInDouble) {
    for (int K : {2, 15, 16, 17, 27}) {
        SCOPED_TRACE("K " + std::to_string(K));
        const int M = 40;
        std::mt19937 r{uint32_t(K)};
        const Mat logits = random_mat(r, M, K, 3.f);
        std::vector<int> target(static_cast<size_t>(M));
        for (int i = 0; i < M; ++i) target[size_t(i)] = i % 5 == 0 ? -1 : int(r() % uint32_t(K));
        const float inv_count = 1.f / 32.f; // the 32 rows in the loss
        Mat dlogits(M, K);
        const double loss = crossentropy_forward_backward(dlogits.data(), logits.data(), target.data(), M, K, inv_count);
        double want_loss = 0.0;
        Eigen::MatrixXd want = Eigen::MatrixXd::Zero(M, K);
        for (int i = 0; i < M; ++i) {
            if (target[size_t(i)] < 0) continue;
            const Eigen::VectorXd z = logits.row(i).cast<double>().transpose();
            const double m = z.maxCoeff(), lse = m + std::log((z.array() - m).exp().sum());
            want_loss += lse - z(target[size_t(i)]);
            want.row(i) = ((z.array() - lse).exp() * double(inv_count)).matrix().transpose();
            want(i, target[size_t(i)]) -= double(inv_count);
        }
        EXPECT_NEAR(loss, want_loss, 1e-5 * want_loss) << "loss";
        EXPECT_LE(relative_error(dlogits, want), 1e-5) << "dlogits";
        for (int i = 0; i < M; i += 5) EXPECT_EQ(dlogits.row(i).cwiseAbs().maxCoeff(), 0.f) << "row " << i << " not in the loss";
    }
}

} // namespace
} // namespace attnviz::detail
