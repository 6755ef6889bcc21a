// tensor.h: the one memory layout of the project.
//
// Every matrix is float32 and row-major, so a matrix goes straight into a texture, a
// JSON array or a .npy file the way PyTorch stores it. Per-head tensors are a vector of
// H such matrices: (B=1, H, T, .) with B dropped.
#pragma once
#include <Eigen/Core>
#include <vector>

namespace attnviz {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vec = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>; // one row
using MatRef = Eigen::Ref<Mat>;
using ConstMatRef = const Eigen::Ref<const Mat>&;

using PerHead = std::vector<Mat>; // H matrices, head h first index

} // namespace attnviz
