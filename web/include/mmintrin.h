// mmintrin.h for the web build: Emscripten 3.1.6 emulates SSE to SSE4.2 with WebAssembly's
// SIMD (its compat headers) but has no MMX header, and clang's own cannot compile for
// wasm32. Eigen includes it before its SSE headers and uses nothing of it.
#pragma once
