// The bare BCEWithLogits formula, vectorised, on 2 threads (1 for small inputs): the compute roof of the benchmark.
//
//   loss = (1 - y) * x - (1 + (p - 1) * y) * (min(x, 0) - log1p(exp(-|x|)))      (times w when given)
//   dloss/dx = (1 - y) - (1 + (p - 1) * y) * sigmoid(-x)                        (times w and dout)
//
// Data are (rows, cols) row-major; pos_weight rows advance by p_row_stride (0 for a (cols,) vector).
// Elements are stored as float32, float16 or bfloat16 and computed in float32, as the package does: each tile is
// converted into float32 buffers, computed there, and the result converted back.
// Built with -ffast-math so that glibc's <math.h> declares the libmvec vector variants of expf and log1pf
// (it only does under __FAST_MATH__); the build checks that the calls went to libmvec.
#include <math.h>
#include <stdint.h>
#ifdef __F16C__
#include <immintrin.h>
#endif

namespace {

constexpr int64_t kTile = 64;
// Below this many elements a second thread costs more to wake and join than it saves.
constexpr int64_t kMinParallelElements = 1 << 15;

struct Float32 {
  using Stored = float;
  static void load(const Stored *from, float *to, int64_t n) {
    for (int64_t i = 0; i < n; ++i) to[i] = from[i];
  }
  static void store(const float *from, Stored *to, int64_t n) {
    for (int64_t i = 0; i < n; ++i) to[i] = from[i];
  }
};

// GCC 12 does not vectorise _Float16 conversions without AVX-512 FP16, so F16C does them 8 at a time.
struct Float16 {
  using Stored = _Float16;
  static void load(const Stored *from, float *to, int64_t n) {
    int64_t i = 0;
#ifdef __F16C__
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(to + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(from + i))));
#endif
    for (; i < n; ++i) to[i] = static_cast<float>(from[i]);
  }
  static void store(const float *from, Stored *to, int64_t n) {
    int64_t i = 0;
#ifdef __F16C__
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128(reinterpret_cast<__m128i *>(to + i),
                       _mm256_cvtps_ph(_mm256_loadu_ps(from + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; ++i) to[i] = static_cast<Stored>(from[i]);
  }
};

// bfloat16 is the top half of a float32; kept as its bits because GCC 12 has no conversions for __bf16.
struct BFloat16 {
  using Stored = uint16_t;
  static void load(const Stored *from, float *to, int64_t n) {
    for (int64_t i = 0; i < n; ++i) to[i] = __builtin_bit_cast(float, static_cast<uint32_t>(from[i]) << 16);
  }
  static void store(const float *from, Stored *to, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t bits = __builtin_bit_cast(uint32_t, from[i]);
      to[i] = static_cast<Stored>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);  // round to nearest even
    }
  }
};

template <typename Type>
struct Operands {
  int64_t rows, cols;
  const typename Type::Stored *x, *y, *weight, *pos_weight;  // weight, pos_weight: null when absent
  int64_t pos_weight_row_stride;
  const typename Type::Stored *dout;  // backward only: one value, or one per element
  typename Type::Stored *out;         // forward: the loss (per element only); backward: dx
};

// One tile in float32; weight and pos_weight are read only when present.
struct Tile {
  float x[kTile], y[kTile], weight[kTile], pos_weight[kTile], dout[kTile], result[kTile];

  template <typename Type, bool kWeight, bool kPosWeight>
  void load(const Operands<Type> &a, int64_t row, int64_t col, int64_t n) {
    const int64_t at = row * a.cols + col;
    Type::load(a.x + at, x, n);
    Type::load(a.y + at, y, n);
    if (kWeight) Type::load(a.weight + at, weight, n);
    if (kPosWeight) Type::load(a.pos_weight + row * a.pos_weight_row_stride + col, pos_weight, n);
  }
};

template <bool kWeight, bool kPosWeight>
float forward_tile(Tile &t, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) {
    const float p = kPosWeight ? t.pos_weight[i] : 1.0f;
    const float log_sigmoid = fminf(t.x[i], 0.0f) - log1pf(expf(-fabsf(t.x[i])));
    float loss = (1.0f - t.y[i]) * t.x[i] - (1.0f + (p - 1.0f) * t.y[i]) * log_sigmoid;
    if (kWeight) loss *= t.weight[i];
    t.result[i] = loss;
    sum += loss;
  }
  return sum;
}

template <bool kWeight, bool kPosWeight>
void backward_tile(Tile &t, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float p = kPosWeight ? t.pos_weight[i] : 1.0f;
    float dx = (1.0f - t.y[i]) - (1.0f + (p - 1.0f) * t.y[i]) / (1.0f + expf(t.x[i]));
    if (kWeight) dx *= t.weight[i];
    t.result[i] = dx * t.dout[i];
  }
}

// kPerElement: forward writes the per-element loss (reduction none); backward reads a per-element dout.
template <typename Type, bool kWeight, bool kPosWeight, bool kPerElement>
double forward(const Operands<Type> &a) {
  double total = 0.0;
#pragma omp parallel for num_threads(2) schedule(static) \
    reduction(+ : total) if (a.rows * a.cols >= kMinParallelElements)
  for (int64_t row = 0; row < a.rows; ++row) {
    Tile t;
    for (int64_t col = 0; col < a.cols; col += kTile) {
      const int64_t n = a.cols - col < kTile ? a.cols - col : kTile;
      t.load<Type, kWeight, kPosWeight>(a, row, col, n);
      total += forward_tile<kWeight, kPosWeight>(t, n);
      if (kPerElement) Type::store(t.result, a.out + row * a.cols + col, n);
    }
  }
  return total;
}

template <typename Type, bool kWeight, bool kPosWeight, bool kPerElement>
double backward(const Operands<Type> &a) {
#pragma omp parallel for num_threads(2) schedule(static) if (a.rows * a.cols >= kMinParallelElements)
  for (int64_t row = 0; row < a.rows; ++row) {
    Tile t;
    if (!kPerElement) {
      Type::load(a.dout, t.dout, 1);
      for (int64_t i = 1; i < kTile; ++i) t.dout[i] = t.dout[0];
    }
    for (int64_t col = 0; col < a.cols; col += kTile) {
      const int64_t n = a.cols - col < kTile ? a.cols - col : kTile;
      t.load<Type, kWeight, kPosWeight>(a, row, col, n);
      if (kPerElement) Type::load(a.dout + row * a.cols + col, t.dout, n);
      backward_tile<kWeight, kPosWeight>(t, n);
      Type::store(t.result, a.out + row * a.cols + col, n);
    }
  }
  return 0.0;
}

// Turns the three run-time flags into template arguments, one flag per level.
template <typename Type, bool... kFlags>
double dispatch(bool is_backward, const bool *flags, const Operands<Type> &a) {
  if constexpr (sizeof...(kFlags) == 3) {
    return is_backward ? backward<Type, kFlags...>(a) : forward<Type, kFlags...>(a);
  } else {
    return flags[0] ? dispatch<Type, kFlags..., true>(is_backward, flags + 1, a)
                    : dispatch<Type, kFlags..., false>(is_backward, flags + 1, a);
  }
}

template <typename Type>
double run(int is_backward, int per_element, int64_t rows, int64_t cols, const void *x, const void *y,
           const void *weight, const void *pos_weight, int64_t pos_weight_row_stride, const void *dout, void *out) {
  using Stored = typename Type::Stored;
  const Operands<Type> a{rows,
                         cols,
                         static_cast<const Stored *>(x),
                         static_cast<const Stored *>(y),
                         static_cast<const Stored *>(weight),
                         static_cast<const Stored *>(pos_weight),
                         pos_weight_row_stride,
                         static_cast<const Stored *>(dout),
                         static_cast<Stored *>(out)};
  const bool flags[3] = {weight != nullptr, pos_weight != nullptr, per_element != 0};
  return dispatch<Type>(is_backward != 0, flags, a);
}

}  // namespace

// Forward returns the sum of the loss (and writes it per element when per_element); backward writes dx.
#define FORMULA_ROOF_ENTRY(name, Type)                                                                                \
  extern "C" double name(int is_backward, int per_element, int64_t rows, int64_t cols, const void *x, const void *y,  \
                         const void *weight, const void *pos_weight, int64_t pos_weight_row_stride, const void *dout, \
                         void *out) {                                                                                 \
    return run<Type>(is_backward, per_element, rows, cols, x, y, weight, pos_weight, pos_weight_row_stride, dout,     \
                     out);                                                                                            \
  }

FORMULA_ROOF_ENTRY(formula_roof_float32, Float32)
FORMULA_ROOF_ENTRY(formula_roof_float16, Float16)
FORMULA_ROOF_ENTRY(formula_roof_bfloat16, BFloat16)
