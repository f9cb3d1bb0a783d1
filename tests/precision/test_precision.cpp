// The precisions of the float products (precision/precision.hpp, precision/products.hpp): the bfloat16 rounding bit for
// bit (the scalar rule against hand-worked cases, the AVX512-BF16 instruction against the scalar rule), and the bf16
// products against float64 products of the same float operands, within precision.hpp's bound — and outside float32's,
// so that a silent fall back to float32 fails too — for every transposition, strided operands, alpha and beta (beta 0
// over a C of NaN), one row and many, one column, one term; how they are cut into blocks, with operands read from the
// weights' copies across the blocks — found by the weight a product names, never by where its numbers lie — and the
// copies made again where Products::updated says. The int8 products likewise, with the model's weights quantized
// (whole, and blocks of their rows and columns), and every other product left to OpenBLAS bit for bit. Products belong
// to their object: two precisions in one process at once. On a CPU or build that cannot run bf16 or int8, the cases of
// its arithmetic are skipped with the reason (tests/needs_precision.hpp), and asking for it is refused with that
// reason.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "autograd/blas.hpp"
#include "autograd/tensor.hpp"
#include "ops/fused.hpp"
#include "precision/bf16.hpp"
#include "precision/bfloat16.hpp"
#include "precision/precision.hpp"
#include "precision/products.hpp"
#include "precision/shapes.hpp"
#include "tests/needs_precision.hpp"

using namespace attend;

namespace {

float from_bits(std::uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// For BOOST_CHECK_EXCEPTION: the error's message is exactly `what`.
auto says(const std::string& what) {
  return [what](const std::exception& e) { return std::string(e.what()) == what; };
}

// One product's operands as stored (row strides lda, ldb, ldc wider than the rows when `strided`).
struct Product {
  bool trans_a, trans_b;
  std::size_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
  std::vector<float> a, b, c;
};

Product make_product(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, bool strided, float alpha,
                     float beta, Rng& rng) {
  const std::size_t pad = strided ? 3 : 0;
  Product p{ta, tb, m, n, k, (ta ? m : k) + pad, (tb ? k : n) + pad, n + pad, alpha, beta, {}, {}, {}};
  const auto fill = [&rng](std::size_t size) {
    std::vector<float> v(size);
    for (float& x : v) x = static_cast<float>(rng.uniform(-2.0, 2.0));
    return v;
  };
  p.a = fill((ta ? k : m) * p.lda);
  p.b = fill((tb ? n : k) * p.ldb);
  p.c = fill(m * p.ldc);
  if (beta == 0.0f) std::fill(p.c.begin(), p.c.end(), std::numeric_limits<float>::quiet_NaN());  // overwritten
  return p;
}

float a_at(const Product& p, std::size_t i, std::size_t l) {
  return p.trans_a ? p.a[l * p.lda + i] : p.a[i * p.lda + l];
}
float b_at(const Product& p, std::size_t l, std::size_t j) {
  return p.trans_b ? p.b[j * p.ldb + l] : p.b[l * p.ldb + j];
}

// Element (i, j) of op(A)·op(B) in double, and Σ_l |a_il b_lj|.
struct Exact {
  double value = 0, magnitude = 0;
};
Exact exact_at(const Product& p, std::size_t i, std::size_t j) {
  Exact e;
  for (std::size_t l = 0; l < p.k; ++l) {
    e.value += double(a_at(p, i, l)) * double(b_at(p, l, j));
    e.magnitude += std::fabs(double(a_at(p, i, l)) * double(b_at(p, l, j)));
  }
  return e;
}

// Runs p through `products` and compares every element with the float64 result: returns the largest error as a
// fraction of the bfloat16 bound (must be ≤ 1) and sets `beyond_float32` when some error exceeds float32's own bound.
// The product reads A and B at `a` and `b` when given (the same numbers as p.a and p.b, stored elsewhere), naming the
// weights `weights`.
double worst_fraction_of_bound(const Products* products, const Product& p, bool& beyond_float32,
                               const float* a = nullptr, const float* b = nullptr, const WeightOperands& weights = {}) {
  std::vector<float> c = p.c;
  gemm(products, p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, a ? a : p.a.data(), p.lda, b ? b : p.b.data(), p.ldb,
       p.beta, c.data(), p.ldc, weights);
  double worst = 0;
  beyond_float32 = false;
  for (std::size_t i = 0; i < p.m; ++i) {
    for (std::size_t j = 0; j < p.n; ++j) {
      const auto [exact, magnitude] = exact_at(p, i, j);
      const double c0 = p.beta == 0.0f ? 0.0 : p.c[i * p.ldc + j];  // with beta 0, C's NaN must not show
      const double error = std::fabs(double(c[i * p.ldc + j]) - (p.alpha * exact + p.beta * c0));
      // precision.hpp's bound on the product, scaled by alpha, plus one float rounding of the sum with beta·C
      const double bound = std::fabs(p.alpha) * (std::ldexp(1.0, -7) + double(p.k) * std::ldexp(1.0, -23)) * magnitude +
                           std::ldexp(1.0, -22) * (std::fabs(p.alpha) * magnitude + std::fabs(p.beta * c0));
      const double float32_bound = std::fabs(p.alpha) * 2.0 * double(p.k) * std::ldexp(1.0, -24) * magnitude +
                                   std::ldexp(1.0, -22) * (std::fabs(p.alpha) * magnitude + std::fabs(p.beta * c0));
      worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error / bound);
      if (error > float32_bound) beyond_float32 = true;
    }
  }
  return worst;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(precision)

BOOST_AUTO_TEST_CASE(bfloat16_rounding_by_hand) {
  BOOST_TEST(bf16::from_float(1.0f) == 0x3f80u);
  BOOST_TEST(bf16::from_float(-2.0f) == 0xc000u);
  BOOST_TEST(bf16::from_float(from_bits(0x3f808000u)) == 0x3f80u);  // a tie rounds to the even upper half: down
  BOOST_TEST(bf16::from_float(from_bits(0x3f818000u)) == 0x3f82u);  // a tie from an odd upper half: up
  BOOST_TEST(bf16::from_float(from_bits(0x3f808001u)) == 0x3f81u);  // just above half: up
  BOOST_TEST(bf16::from_float(from_bits(0x3f807fffu)) == 0x3f80u);  // just below half: down
  BOOST_TEST(bf16::from_float(std::numeric_limits<float>::infinity()) == 0x7f80u);
  BOOST_TEST(bf16::from_float(std::numeric_limits<float>::max()) == 0x7f80u);        // beyond bfloat16's largest: ∞
  BOOST_TEST(bf16::from_float(from_bits(0x00000001u)) == 0x0000u);                   // a denormal: zero
  BOOST_TEST(bf16::from_float(from_bits(0x807fffffu)) == 0x8000u);                   // of its sign
  BOOST_TEST(std::isnan(bf16::to_float(bf16::from_float(from_bits(0x7f800001u)))));  // a NaN stays one
  BOOST_TEST(std::isnan(bf16::to_float(bf16::from_float(std::numeric_limits<float>::quiet_NaN()))));
  BOOST_TEST(bf16::to_float(bf16::from_float(3.140625f)) == 3.140625f);  // representable: exact
}

BOOST_AUTO_TEST_CASE(bfloat16_arrays_equal_the_scalar_rule) {
  // random bit patterns (every class: NaN, ∞, denormal, ties) in an array whose length leaves a scalar tail
  Rng rng(5);
  std::vector<float> x(32 * 1000 + 13);
  for (float& v : x) v = from_bits(static_cast<std::uint32_t>(rng.next()));
  for (std::size_t i = 0; i < 64; ++i) x[i * 50] = from_bits(0x3f808000u + (i % 2 ? 0x10000u : 0u));  // ties
  std::vector<std::uint16_t> y(x.size());
  bf16::from_float(x.data(), y.data(), y.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < x.size(); ++i) differ += y[i] != bf16::from_float(x[i]);
  BOOST_TEST(differ == 0u);
  // streamed: the same numbers from every alignment of y (a head before its 64-byte boundary, a tail after)
  std::vector<std::uint16_t> streamed(x.size() + 32, 0);
  for (std::size_t offset = 0; offset < 32; offset += 3) {
    std::fill(streamed.begin(), streamed.end(), std::uint16_t{0x1234});
    bf16::from_float_streamed(x.data() + offset, streamed.data() + offset, x.size() - offset);
    BOOST_TEST(std::equal(y.begin() + static_cast<std::ptrdiff_t>(offset), y.end(),
                          streamed.begin() + static_cast<std::ptrdiff_t>(offset)),
               "offset " << offset);
    BOOST_TEST(streamed[x.size()] == 0x1234u, "offset " << offset);                    // nothing written after y's end
    if (offset > 0) BOOST_TEST(streamed[offset - 1] == 0x1234u, "offset " << offset);  // nor before its start
  }
  BOOST_TEST_MESSAGE("array conversion by " << (bf16::cpu_has_instructions() ? "VCVTNE2PS2BF16" : "the scalar rule"));
}

BOOST_AUTO_TEST_CASE(bfloat16_products_within_their_bound, *test::needs_precision("bf16")) {
  Rng rng(11);
  const std::unique_ptr<Products> bf16 = make_products("bf16", {});
  BOOST_TEST(bf16->name() == "bf16");
  struct Case {
    std::size_t m, n, k;
    bool strided;
    float alpha, beta;
  };
  // the last two are cut into blocks (precision/precision.cpp): sums of 1100 terms in three, and 2100 columns or rows
  // of C
  for (const Case& s :
       {Case{1, 70, 40, false, 1.f, 0.f}, Case{5, 33, 70, true, 1.f, 1.f}, Case{37, 65, 129, false, 0.5f, 1.f},
        Case{64, 48, 256, true, 1.f, -0.5f}, Case{7, 1, 33, true, 1.f, 0.f}, Case{6, 9, 1, false, 2.f, 1.f},
        Case{3, 2100, 1100, false, 1.f, 0.f}, Case{2100, 4, 1100, true, 0.5f, -0.5f}}) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        const Product p = make_product(ta, tb, s.m, s.n, s.k, s.strided, s.alpha, s.beta, rng);
        bool beyond_float32 = false;
        const double fraction = worst_fraction_of_bound(bf16.get(), p, beyond_float32);
        BOOST_TEST_CONTEXT("m " << s.m << " n " << s.n << " k " << s.k << " ta " << ta << " tb " << tb << " strided "
                                << s.strided << " alpha " << s.alpha << " beta " << s.beta) {
          BOOST_TEST(fraction <= 1.0);
          BOOST_TEST(beyond_float32);  // the operands were rounded to bfloat16, not multiplied in float32
        }
      }
    }
  }
}

// How a bfloat16 product is cut (precision/precision.cpp), on the translation benchmark's output layer: a 63-row block
// of logits (8,207 columns, sums of 640) in 6 products of 1,368 columns read from W's copy, where a rounded operand's
// side would be in 21 of 391; dx's 640 columns whole in each 512-term block of its sums (320 for a rounded operand);
// dW's 8,207 rows in 2 of 4,104 from G in bfloat16 (a shard of 248 rows). For every extent: the fewest blocks within
// the bound, near-equal (the parts differ by less than one row each).
BOOST_AUTO_TEST_CASE(bfloat16_products_cut_operands_read_in_place_into_fewer_blocks) {
  BOOST_TEST(bfloat16_block_extent(8207, 640, true) == 1368u);
  BOOST_TEST(bfloat16_block_extent(8207, 640, false) == 391u);
  BOOST_TEST(bfloat16_block_extent(640, 8207, true) == 640u);
  BOOST_TEST(bfloat16_block_extent(640, 8207, false) == 320u);
  BOOST_TEST(bfloat16_block_extent(8207, 248, true) == 4104u);
  BOOST_TEST(bfloat16_block_extent(1, 1, false) == 1u);
  for (const std::size_t k : {1, 640, 1024, 1025, 8207}) {
    const std::size_t sum = k <= 1024 ? k : 512;
    for (const bool in_place : {false, true}) {
      const std::size_t largest = (in_place ? std::size_t{1} << 20 : std::size_t{1} << 18) / sum;
      std::vector<std::size_t> extents{largest - 1, largest, largest + 1, 2 * largest, 2 * largest + 1};
      for (std::size_t extent = 1; extent <= 3 * largest + 7; extent += 1 + extent / 97) extents.push_back(extent);
      for (const std::size_t extent : extents) {
        const std::size_t tile = bfloat16_block_extent(extent, k, in_place);
        const std::size_t parts = (extent + tile - 1) / tile;
        BOOST_TEST_CONTEXT("extent " << extent << " k " << k << " in place " << in_place) {
          BOOST_TEST(tile <= largest);
          BOOST_TEST(parts == (extent + largest - 1) / largest);
          BOOST_TEST(parts * tile - extent < parts);
        }
      }
    }
  }
}

// Products with operands read from the bfloat16 copies of the model's weights, cut into those larger blocks: every
// element of C within the bound — beta 0 over a C of NaN (an element left out shows), beta 0.5 over numbers (an
// element computed twice shows) — for each transposition, with A, B or both weights, sides cut into unequal last
// blocks (2,101 = 1,051 + 1,050), and the copies made and read.
BOOST_AUTO_TEST_CASE(bfloat16_products_of_weights_in_larger_blocks, *test::needs_precision("bf16")) {
  Rng rng(19);
  // C's 2,101 columns from B's copy in 2 blocks (1,497 at most); 2,101 rows from A's; sums of 1,100 terms in blocks of
  // 512 with both registered and B's 700 columns whole (2,048 at most; 512 for a rounded operand)
  for (const auto& [m, n, k, registered_a, registered_b, beta] :
       {std::tuple{5, 2101, 700, false, true, 0.f}, std::tuple{2101, 3, 700, true, false, 0.5f},
        std::tuple{5, 700, 1100, true, true, 0.f}}) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        const Product p = make_product(ta, tb, m, n, k, true, 1.f, beta, rng);
        // the operands in weights
        const Parameter<float> a(Tensor<float>(Shape{p.a.size()}, p.a)), b(Tensor<float>(Shape{p.b.size()}, p.b));
        Matrices weights;
        if (registered_a) weights.emplace_back("A", &a);
        if (registered_b) weights.emplace_back("B", &b);
        const std::unique_ptr<Products> bf16 = make_products("bf16", weights);
        bool beyond_float32 = false;
        const double fraction = worst_fraction_of_bound(bf16.get(), p, beyond_float32, a.value.data(), b.value.data(),
                                                        {registered_a ? &a : nullptr, registered_b ? &b : nullptr});
        BOOST_TEST_CONTEXT("m " << m << " n " << n << " k " << k << " ta " << ta << " tb " << tb) {
          BOOST_TEST(fraction <= 1.0);
          BOOST_TEST(beyond_float32);
          BOOST_TEST(bfloat16_copy_bytes(*bf16) ==
                     2 * ((registered_a ? a.value.size() : 0) + (registered_b ? b.value.size() : 0)));
        }
      }
    }
  }
}

// bf16 products whose primitives are made for their shapes (precision/shapes.hpp), as on a CPU with AMX: rows and
// terms of the sums rounded up to their buckets and padded with zeros, C's rows through a buffer where padded (beta
// 0.5 over numbers: a row added twice or left out shows) — every element within the bound for each transposition,
// with operands from the weights' copies or rounded as read, sums cut into blocks (1,100 terms: 512, 512, 76 → 80),
// and the primitives of repeated shapes found made.
BOOST_AUTO_TEST_CASE(bfloat16_products_made_for_their_shapes_within_their_bound, *test::needs_precision("bf16")) {
  Rng rng(29);
  for (const auto& [m, n, k, registered, beta] :
       {std::tuple{1, 70, 40, false, 0.f}, std::tuple{9, 33, 70, true, 0.5f}, std::tuple{65, 48, 129, false, 0.5f},
        std::tuple{37, 65, 1100, true, 0.f}, std::tuple{300, 20, 17, true, 0.5f},
        std::tuple{2101, 3, 700, true, 0.f}}) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        const Product p = make_product(ta, tb, m, n, k, true, ta ? 0.5f : 1.f, beta, rng);
        const Parameter<float> a(Tensor<float>(Shape{p.a.size()}, p.a)), b(Tensor<float>(Shape{p.b.size()}, p.b));
        Matrices weights;
        if (registered) weights = {{"A", &a}, {"B", &b}};
        const std::unique_ptr<Products> bf16 = make_bf16_products(weights, Shapes::fixed);
        bool beyond_float32 = false;
        const WeightOperands named{registered ? &a : nullptr, registered ? &b : nullptr};
        double fraction = worst_fraction_of_bound(bf16.get(), p, beyond_float32, a.value.data(), b.value.data(), named);
        fraction = std::max(fraction, worst_fraction_of_bound(bf16.get(), p, beyond_float32, a.value.data(),
                                                              b.value.data(), named));  // again: found made
        const KernelCacheStats stats = kernel_cache_stats(*bf16);
        BOOST_TEST_CONTEXT("m " << m << " n " << n << " k " << k << " ta " << ta << " tb " << tb) {
          BOOST_TEST(fraction <= 1.0);
          BOOST_TEST(beyond_float32);
          BOOST_TEST(stats.runs > 0u);
          BOOST_TEST(2 * stats.made == stats.runs);
        }
      }
    }
  }
}

// An A given in bfloat16 already (Products::gemm_bfloat16_a) is what every bfloat16 product rounds A to: the bf16
// products of the float A within float32's rounding of the sums — the same rounded operands, which oneDNN may add in
// another order for another row stride (the float A is packed first; seen: strided A, untransposed) — for each
// transposition, strided operands, alpha and beta, sums and rows cut into blocks; the same bits when A is stored as
// the float path packs it (contiguous, whole sums). Products that do not round to bfloat16 refuse it.
BOOST_AUTO_TEST_CASE(an_operand_in_bfloat16_already_gives_the_products_bits, *test::needs_precision("bf16")) {
  const std::vector<std::uint16_t> one(4, 0x3f80);
  std::vector<float> out(4, 0.f);
  BOOST_CHECK_EXCEPTION(
      make_products("float32", {})
          ->gemm_bfloat16_a(false, false, 2, 2, 2, 1.f, one.data(), 2, out.data(), 2, 0.f, out.data(), 2, nullptr),
      std::logic_error, [](const std::logic_error& e) {
        return std::string(e.what()) == "gemm_bfloat16_a: an operand in bfloat16 while the products are float32";
      });
  Rng rng(13);
  const std::unique_ptr<Products> bf16 = make_products("bf16", {});
  // (4300, 40, 248): 4,228 rows of C a block at most, so A's rows are read in two, as the output layer's dW reads G
  for (const auto& [m, n, k, strided] :
       {std::tuple{5, 33, 70, true}, std::tuple{37, 65, 1100, false}, std::tuple{2100, 4, 40, true},
        std::tuple{1, 9, 3, false}, std::tuple{4300, 40, 248, false}}) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        const Product p = make_product(ta, tb, m, n, k, strided, ta ? 0.5f : 1.f / 248, tb ? 1.f : 0.f, rng);
        std::vector<std::uint16_t> a16(p.a.size());
        bf16::from_float(p.a.data(), a16.data(), a16.size());
        std::vector<float> by_float = p.c, by_bf16 = p.c;
        gemm(bf16.get(), ta, tb, p.m, p.n, p.k, p.alpha, p.a.data(), p.lda, p.b.data(), p.ldb, p.beta, by_float.data(),
             p.ldc);
        bf16->gemm_bfloat16_a(ta, tb, p.m, p.n, p.k, p.alpha, a16.data(), p.lda, p.b.data(), p.ldb, p.beta,
                              by_bf16.data(), p.ldc, nullptr);
        double worst = 0;  // the largest difference as a fraction of float32's bound on the sum
        for (std::size_t i = 0; i < p.m; ++i) {
          for (std::size_t j = 0; j < p.n; ++j) {
            double magnitude = 0;
            for (std::size_t l = 0; l < p.k; ++l) magnitude += std::fabs(double(a_at(p, i, l)) * double(b_at(p, l, j)));
            const double c0 = p.beta == 0.0f ? 0.0 : p.c[i * p.ldc + j];  // with beta 0, C's NaN is overwritten
            const double bound = std::fabs(p.alpha) * 2.0 * double(p.k) * std::ldexp(1.0, -24) * magnitude +
                                 std::ldexp(1.0, -23) * std::fabs(double(p.beta) * c0);
            const double error = std::fabs(double(by_bf16[i * p.ldc + j]) - double(by_float[i * p.ldc + j]));
            worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error / bound);
          }
        }
        BOOST_TEST_CONTEXT("m " << m << " n " << n << " k " << k << " ta " << ta << " tb " << tb) {
          BOOST_TEST(worst <= 1.0);
          if (!strided && k <= 1024) BOOST_TEST((by_bf16 == by_float));
        }
      }
    }
  }
}

namespace {

// |a − b| at its largest, against the largest |b|.
double relative_difference(const Tensor<float>& a, const Tensor<float>& b) {
  double largest = 0, difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    largest = std::max(largest, std::fabs(double(b.data()[i])));
    difference = std::max(difference, std::fabs(double(a.data()[i]) - double(b.data()[i])));
  }
  return difference / largest;
}

}  // namespace

// With bfloat16 products the output layer's loss is one node, keeping G = softmax − (1 − ε) onehot − ε/C rounded to
// bfloat16 (linear_cross_entropy, ops/fused.hpp), where the two nodes cross_entropy(linear(…)) keep the logits and
// their gradient s·G in float32 and round s·G at each of linear's two backward products. With 8 counted rows,
// s = 1/8 scales every number exactly, so the two differ only in their softmax — the node's e_c · (1 / Σ e) from the
// exps its loss took, cross_entropy's exp(x_c − m − ln Σ e) taken again in backward, a few units of float's last place:
// the same loss, db (from float32 G) within 2⁻²⁰ and dx, dW (from bfloat16 G) within 2⁻⁸ of their largest element (G's
// rounding to bfloat16, which the two softmaxes can tip either way) — while the float32 products' two nodes give
// others.
BOOST_AUTO_TEST_CASE(the_output_layer_loss_in_bfloat16_is_one_node_within_the_two_nodes_rounding,
                     *test::needs_precision("bf16")) {
  Rng rng(19);
  const Tensor<float> x = rng.uniform_tensor<float>(Shape{9, 40}, -2.0, 2.0);
  const Tensor<float> W = rng.uniform_tensor<float>(Shape{300, 40}, -0.5, 0.5);
  const Tensor<float> b = rng.uniform_tensor<float>(Shape{300}, -0.5, 0.5);
  const Ids targets(Shape{9}, {3, 299, -100, 0, 17, 17, 150, 42, 7});  // 8 counted
  struct Result {
    float loss;
    Tensor<float> dx, dW, db;
    std::size_t nodes;
  };
  const auto run = [&](bool one_node, const Products* products) {
    TapeWithContext<float> on(Context{nullptr, products});
    Tape<float>& tape = on.tape;
    const Variable<float> vx = tape.leaf(x), vW = tape.leaf(W), vb = tape.leaf(b);
    const Variable<float> loss = one_node ? linear_cross_entropy(vx, vW, vb, targets, -100, 0.1)
                                          : cross_entropy(dense(vx, vW, vb), targets, -100, 0.1);
    tape.backward(loss);
    return Result{loss.value().item(), vx.grad(), vW.grad(), vb.grad(), tape.size()};
  };
  const Result float32 = run(true, nullptr);
  BOOST_TEST(float32.nodes == 5u);  // float32 products: linear_cross_entropy records the two nodes
  const std::unique_ptr<Products> bf16 = make_products("bf16", {});
  const Result one = run(true, bf16.get()), two = run(false, bf16.get());
  BOOST_TEST(one.nodes == 4u);
  BOOST_TEST(two.nodes == 5u);
  BOOST_TEST(one.loss == two.loss);
  BOOST_TEST(relative_difference(one.db, two.db) <= std::ldexp(1.0, -20));
  BOOST_TEST(relative_difference(one.dx, two.dx) <= std::ldexp(1.0, -8));
  BOOST_TEST(relative_difference(one.dW, two.dW) <= std::ldexp(1.0, -8));
  BOOST_TEST((one.dx.flat() != float32.dx.flat()));
  BOOST_TEST((one.dW.flat() != float32.dW.flat()));
}

// The same at a size where the node computes its logits in two blocks (9 rows of 65,537 classes: 7, then 2) and its
// backward products cut their sums and rows into blocks, without a bias, and 6 counted rows (s = 1/6 does not scale
// exactly): the one node within float32's rounding of the two nodes, which round s·G where it rounds G — a few units
// of bfloat16's last place of G's largest numbers, 2⁻⁸ relative, at most.
BOOST_AUTO_TEST_CASE(the_output_layer_loss_in_bfloat16_in_blocks, *test::needs_precision("bf16")) {
  Rng rng(23);
  const std::size_t C = 65537;
  const Tensor<float> x = rng.uniform_tensor<float>(Shape{9, 8}, -2.0, 2.0);
  const Tensor<float> W = rng.uniform_tensor<float>(Shape{C, 8}, -2.0, 2.0);
  const Ids targets(Shape{9}, {0, 65536, -100, 30000, -100, 12, -100, 7, 65535});
  const std::unique_ptr<Products> bf16 = make_products("bf16", {});
  const auto run = [&](bool one_node) {
    TapeWithContext<float> on(Context{nullptr, bf16.get()});
    Tape<float>& tape = on.tape;
    const Variable<float> vx = tape.leaf(x), vW = tape.leaf(W);
    const Variable<float> loss =
        one_node ? linear_cross_entropy(vx, vW, Variable<float>(), targets) : cross_entropy(dense(vx, vW), targets);
    tape.backward(loss);
    return std::tuple{loss.value().item(), vx.grad(), vW.grad(), tape.size()};
  };
  const auto [loss1, dx1, dW1, nodes1] = run(true);
  const auto [loss2, dx2, dW2, nodes2] = run(false);
  BOOST_TEST(nodes1 == 3u);
  BOOST_TEST(nodes2 == 4u);
  BOOST_TEST(loss1 == loss2, boost::test_tools::tolerance(1e-6f));
  // |Δ| against the largest |element| of the gradient: G's rounding differs by up to 2⁻⁸ relative per element
  BOOST_TEST(relative_difference(dW1, dW2) <= std::ldexp(1.0, -8));
  BOOST_TEST(relative_difference(dx1, dx2) <= std::ldexp(1.0, -8));
  BOOST_TEST(relative_difference(dW1, dW2) > 0.0);  // s·G and G round differently: not the same arithmetic by accident
}

// An alpha other than 1 is given to oneDNN when the product runs: products with nine different alphas (the loss's
// dy/N changes with every batch) add at most one primitive to the thread's cache, not nine.
BOOST_AUTO_TEST_CASE(bfloat16_primitives_do_not_multiply_with_alpha, *test::needs_precision("bf16")) {
  const std::unique_ptr<Products> bf16 = make_products("bf16", {});
  std::vector<float> a(6 * 5, 0.5f), b(5 * 7, 0.25f), c(6 * 7, 0.f);
  gemm(bf16.get(), false, false, 6, 7, 5, 1.f, a.data(), 5, b.data(), 7, 0.f, c.data(), 7);
  const std::size_t before = bfloat16_primitives();
  for (int i = 1; i <= 9; ++i) {
    const float alpha = 1.0f / static_cast<float>(i + 300);
    gemm(bf16.get(), false, false, 6, 7, 5, alpha, a.data(), 5, b.data(), 7, 0.f, c.data(), 7);
    BOOST_TEST(c[0] == alpha * 5 * 0.5f * 0.25f, boost::test_tools::tolerance(1e-6f));  // the alpha of this product
  }
  BOOST_TEST(bfloat16_primitives() <= before + 1);  // + 1 unless an earlier product of this thread made it
}

// A weight's bfloat16 copy is made when a product first reads it and read by every product after: the same bits as
// rounding the operand at each product, for W read as Wᵀ (y = x·Wᵀ, its sum of 1100 terms cut into blocks), as W
// (dx = dy·W), as a block of Wᵀ (W's rows 3 … 32, columns 7 … 506, as a recurrence's gates) and as A (W·z). A weight
// listed twice (shared by two layers) has one copy; one no product reads (an embedding's table) has none. After an
// optimizer step the copy is stale until Products::updated reports the change; another object's copy of the same
// weight is its own.
BOOST_AUTO_TEST_CASE(bfloat16_weights_are_rounded_once_until_updated, *test::needs_precision("bf16")) {
  Rng rng(17);
  Parameter<float> W(Tensor<float>(Shape{40, 1100}));
  for (float& x : W.value.flat()) x = static_cast<float>(rng.uniform(-2.0, 2.0));
  std::vector<float> x(5 * 1100), dy(5 * 40), z(1100 * 6);
  for (auto* v : {&x, &dy, &z})
    for (float& e : *v) e = static_cast<float>(rng.uniform(-2.0, 2.0));
  const auto products = [&](const Products* bf16) {
    std::vector<std::vector<float>> c{std::vector<float>(5 * 40), std::vector<float>(5 * 1100),
                                      std::vector<float>(5 * 30), std::vector<float>(40 * 6)};
    const float* w = W.value.data();
    gemm(bf16, false, true, 5, 40, 1100, 1.f, x.data(), 1100, w, 1100, 0.f, c[0].data(), 40, {nullptr, &W});
    gemm(bf16, false, false, 5, 1100, 40, 1.f, dy.data(), 40, w, 1100, 0.f, c[1].data(), 1100, {nullptr, &W});
    gemm(bf16, false, true, 5, 30, 500, 1.f, x.data(), 1100, w + 3 * 1100 + 7, 1100, 0.f, c[2].data(), 30,
         {nullptr, &W});
    gemm(bf16, false, false, 40, 6, 1100, 1.f, w, 1100, z.data(), 6, 0.f, c[3].data(), 6, {&W, nullptr});
    return c;
  };
  const std::unique_ptr<Products> rounding = make_products("bf16", {});  // no weights: every operand rounded
  const auto rounded_each_time = products(rounding.get());
  const Parameter<float> unread(Tensor<float>(Shape{300, 2}));
  const std::unique_ptr<Products> bf16 = make_products("bf16", {{"W", &W}, {"W again", &W}, {"unread", &unread}});
  BOOST_TEST(bfloat16_copy_bytes(*bf16) == 0u);  // nothing rounded before a product reads it
  std::vector<float> unnamed(5 * 40);            // W's numbers, not named as W: rounded as they are read, no copy made
  gemm(bf16.get(), false, true, 5, 40, 1100, 1.f, x.data(), 1100, W.value.data(), 1100, 0.f, unnamed.data(), 40);
  BOOST_TEST(bfloat16_copy_bytes(*bf16) == 0u);
  BOOST_TEST((unnamed == rounded_each_time[0]));
  BOOST_CHECK_EXCEPTION(  // x's numbers named as W: the caller's error
      gemm(bf16.get(), false, true, 40, 5, 1100, 1.f, W.value.data(), 1100, x.data(), 1100, 0.f, unnamed.data(), 5,
           {nullptr, &W}),
      std::logic_error,
      says("bf16 products: an operand named as weight W (44000 numbers when the products were made, "
           "44000 now) is not in its numbers"));
  BOOST_TEST((products(bf16.get()) == rounded_each_time));     // the copy's bits are the rounding's
  BOOST_TEST(bfloat16_copy_bytes(*bf16) == 40u * 1100u * 2u);  // made once, for W alone
  for (float& e : W.value.flat()) e += 0.75f;                  // an optimizer step
  BOOST_TEST((products(bf16.get()) == rounded_each_time));     // not reported: the old values
  const std::unique_ptr<Products> other = make_products("bf16", {{"W", &W}});
  const auto rounded_now = products(rounding.get());
  BOOST_TEST((rounded_now != rounded_each_time));
  BOOST_TEST((products(other.get()) == rounded_now));  // another object's copy, made from the new values
  BOOST_TEST(bf16->copies_weights());
  bf16->updated(W, 0, W.value.size());  // what nn::Trainer reports after the step
  BOOST_TEST((products(bf16.get()) == rounded_now));
  BOOST_TEST(bfloat16_copy_bytes(*bf16) == 40u * 1100u * 2u);  // the unread tensor is still not copied
}

// updated(first, last), as nn::Trainer reports the numbers an optimizer's update has just written (StepExtras::
// updated): after every changed range is reported, products read exactly the new values' rounding; numbers of a copy
// no product has read, of another object's weight or of no weight are left alone.
BOOST_AUTO_TEST_CASE(bfloat16_weights_updated_in_parts, *test::needs_precision("bf16")) {
  Rng rng(23);
  const auto filled = [&](Shape shape) {
    Tensor<float> t(shape);
    for (float& e : t.flat()) e = static_cast<float>(rng.uniform(-2.0, 2.0));
    return t;
  };
  Parameter<float> W(filled(Shape{40, 700})), V(filled(Shape{30, 20})), elsewhere(filled(Shape{40, 700}));
  const Tensor<float> x = filled(Shape{5, 700});
  const auto product = [&](const Products& products, const Parameter<float>& M) {  // y = x·Mᵀ
    std::vector<float> y(5 * 40);
    gemm(&products, false, true, 5, 40, 700, 1.f, x.data(), 700, M.value.data(), 700, 0.f, y.data(), 40, {nullptr, &M});
    return y;
  };
  const std::unique_ptr<Products> bf16 = make_products("bf16", {{"W", &W}, {"V", &V}});  // V never read: no copy
  const std::unique_ptr<Products> other = make_products("bf16", {{"elsewhere", &elsewhere}});
  const std::unique_ptr<Products> rounding = make_products("bf16", {});
  const std::vector<float> old_elsewhere = product(*other, elsewhere);  // the copies made
  product(*bf16, W);
  BOOST_TEST(bfloat16_copy_bytes(*bf16) == 40u * 700u * 2u);
  for (float& e : W.value.flat()) e *= -1.5f;  // an optimizer step, in three uneven parts
  for (float& e : elsewhere.value.flat()) e += 1.0f;
  const std::size_t cuts[] = {0, 1, 9001, W.value.size()};
  for (std::size_t k = 3; k-- > 0;) bf16->updated(W, cuts[k], cuts[k + 1]);
  bf16->updated(V, 0, V.value.size());
  bf16->updated(elsewhere, 0, elsewhere.value.size());        // not this object's
  BOOST_TEST(bfloat16_copy_bytes(*bf16) == 40u * 700u * 2u);  // V is still not copied
  BOOST_TEST((product(*bf16, W) == product(*rounding, W)));   // the new values, rounded
  BOOST_TEST((product(*other, elsewhere) == old_elsewhere));  // its owner has not heard of the step
  other->updated(elsewhere, 0, elsewhere.value.size());
  BOOST_TEST((product(*other, elsewhere) == product(*rounding, elsewhere)));
  BOOST_TEST((product(*other, elsewhere) != old_elsewhere));
}

// Products belong to their object, not to the process: a product without products (nullptr) or with float32's is
// OpenBLAS's, the same bits before, while and after other precisions' products are made and run — on two threads at
// once, each precision giving the bits it gives alone.
BOOST_AUTO_TEST_CASE(precisions_run_side_by_side) {
  Rng rng(3);
  const Product p = make_product(false, true, 9, 31, 57, false, 1.f, 0.f, rng);
  const Parameter<float> w(Tensor<float>(Shape{31, 57}, p.b));
  const auto run = [&p, &w](const Products* products) {
    std::vector<float> c = p.c;
    gemm(products, p.trans_a, p.trans_b, p.m, p.n, p.k, 1.f, p.a.data(), p.lda, w.value.data(), p.ldb, 0.f, c.data(),
         p.ldc, {nullptr, &w});
    return c;
  };
  const std::vector<float> before = run(nullptr);
  std::vector<std::unique_ptr<Products>> all;
  for (const std::string& name : precision_names()) {
    if (!find_precision(name)->unavailable().empty()) continue;
    all.push_back(make_products(name, {{"w", &w}}));
  }
  BOOST_TEST_REQUIRE(all.size() >= 1u);
  std::vector<std::vector<float>> alone;
  for (const auto& products : all) alone.push_back(run(products.get()));
  BOOST_TEST((alone.front() == before));  // float32's
  for (std::size_t i = 1; i < all.size(); ++i) BOOST_TEST((alone[i] != before), all[i]->name());
  std::vector<std::vector<float>> together(all.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < all.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int repeat = 0; repeat < 50; ++repeat) together[i] = run(all[i].get());
    });
  }
  for (std::thread& t : threads) t.join();
  for (std::size_t i = 0; i < all.size(); ++i) BOOST_TEST((together[i] == alone[i]), all[i]->name());
  BOOST_TEST((run(nullptr) == before));
}

namespace {

// A weight W of `int8`'s model (rows × cols, values in ±2) and the product C = alpha·op(A)·Bᵀ + beta·C whose B is W's
// block at rows r0 …, columns c0 … (n rows, k columns, row stride cols). Returns the largest error as a fraction of
// precision.hpp's int8 bound (per element: the row's scale s_a from op(A)'s row, 0 included; s_w from W's whole row)
// and sets `beyond_float32` when some error exceeds float32's bound.
double int8_worst_fraction(const Products& int8, Product p, const Parameter<float>& weight, std::size_t r0,
                           std::size_t c0, bool& beyond_float32) {
  const Tensor<float>& w = weight.value;
  const std::size_t cols = w.shape()[1];
  p.b.clear();
  std::vector<float> c = p.c;
  const float* b = w.data() + r0 * cols + c0;
  gemm(&int8, p.trans_a, true, p.m, p.n, p.k, p.alpha, p.a.data(), p.lda, b, cols, p.beta, c.data(), p.ldc,
       {nullptr, &weight});
  double worst = 0;
  beyond_float32 = false;
  for (std::size_t i = 0; i < p.m; ++i) {
    double lo = 0, hi = 0, sum_a = 0;
    for (std::size_t l = 0; l < p.k; ++l) {
      lo = std::min(lo, double(a_at(p, i, l))), hi = std::max(hi, double(a_at(p, i, l)));
      sum_a += std::fabs(a_at(p, i, l));
    }
    const double s_a = (hi - lo) / 255;
    for (std::size_t j = 0; j < p.n; ++j) {
      const float* w_row = w.data() + (r0 + j) * cols;
      double s_w = 0, exact = 0, magnitude = 0, sum_w = 0;
      for (std::size_t l = 0; l < cols; ++l) s_w = std::max(s_w, std::fabs(double(w_row[l])) / int8_weight_levels());
      for (std::size_t l = 0; l < p.k; ++l) {
        exact += double(a_at(p, i, l)) * w_row[c0 + l];
        magnitude += std::fabs(double(a_at(p, i, l)) * w_row[c0 + l]);
        sum_w += std::fabs(w_row[c0 + l]);
      }
      const double c0_value = p.beta == 0.0f ? 0.0 : p.c[i * p.ldc + j];
      const double error = std::fabs(double(c[i * p.ldc + j]) - (p.alpha * exact + p.beta * c0_value));
      const double product_bound = s_a / 2 * sum_w + s_w / 2 * sum_a + double(p.k) * s_a * s_w / 4;
      // plus the float roundings of turning the int32 sum back into a float and adding beta·C
      const double bound = std::fabs(p.alpha) * (product_bound + std::ldexp(1.0, -20) * (magnitude + product_bound)) +
                           std::ldexp(1.0, -22) * std::fabs(p.beta * c0_value);
      const double float32_bound =
          std::fabs(p.alpha) * 2.0 * double(p.k) * std::ldexp(1.0, -24) * magnitude +
          std::ldexp(1.0, -22) * (std::fabs(p.alpha) * magnitude + std::fabs(p.beta * c0_value));
      worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error / bound);
      if (error > float32_bound) beyond_float32 = true;
    }
  }
  return worst;
}

Tensor<float> random_matrix(std::size_t rows, std::size_t cols, Rng& rng) {
  Tensor<float> w({rows, cols});
  for (std::size_t i = 0; i < w.size(); ++i) w.data()[i] = static_cast<float>(rng.uniform(-2.0, 2.0));
  return w;
}

}  // namespace

BOOST_AUTO_TEST_CASE(int8_products_within_their_bound, *test::needs_precision("int8")) {
  Rng rng(13);
  // W's rows of very different sizes (a scale per row), one row of zeros
  Parameter<float> w(random_matrix(2300, 700, rng));
  for (std::size_t r = 0; r < 2300; ++r)
    for (std::size_t c = 0; c < 700; ++c)
      w.value.data()[r * 700 + c] *= r == 5 ? 0.0f : std::ldexp(1.0f, int(r % 9) - 4);
  const std::unique_ptr<Products> int8 = make_products("int8", {{"w", &w}});
  BOOST_TEST(int8->name() == "int8");
  struct Case {
    std::size_t m, n, k, r0, c0;
    bool strided;
    float alpha, beta;
  };
  // the whole W; blocks of rows and columns (a gate of a recurrence); one row of A; 2300 columns of C (the int32 sums
  // in blocks of 455 rows); a 640-row product (2 blocks)
  for (const Case& s : {Case{1, 2300, 700, 0, 0, false, 1.f, 0.f}, Case{5, 300, 700, 600, 0, true, 1.f, 1.f},
                        Case{37, 65, 129, 1000, 300, false, 0.5f, 1.f}, Case{64, 48, 256, 0, 444, true, 1.f, -0.5f},
                        Case{7, 1, 33, 4, 0, true, 1.f, 0.f}, Case{6, 9, 1, 2, 699, false, 2.f, 1.f},
                        Case{640, 2300, 700, 0, 0, false, 1.f, 0.f}}) {
    for (const bool ta : {false, true}) {
      Product p = make_product(ta, true, s.m, s.n, s.k, s.strided, s.alpha, s.beta, rng);
      if (s.m > 1) {  // rows of one sign (as after a ReLU or σ) and a row of zeros
        for (std::size_t l = 0; l < s.k; ++l) {
          float& first = ta ? p.a[l * p.lda] : p.a[l];
          first = std::fabs(first);
          (ta ? p.a[l * p.lda + 1] : p.a[p.lda + l]) = 0.0f;
        }
      }
      bool beyond_float32 = false;
      const double fraction = int8_worst_fraction(*int8, p, w, s.r0, s.c0, beyond_float32);
      BOOST_TEST_CONTEXT("m " << s.m << " n " << s.n << " k " << s.k << " rows from " << s.r0 << " columns from "
                              << s.c0 << " ta " << ta << " strided " << s.strided << " alpha " << s.alpha << " beta "
                              << s.beta) {
        BOOST_TEST(fraction <= 1.0);
        BOOST_TEST(beyond_float32);  // quantized, not multiplied in float32
      }
    }
  }
}

// Only a B named as a weight of the model is quantized. A B that is no weight, W's own numbers not named as W (an
// operand is never recognized by where its numbers lie), a weight not transposed (a backward product) or read with
// another row stride, a row of A holding a NaN, and every product of another model's int8 products: OpenBLAS's bits
// exactly, NaN included. Naming W for numbers that are not W's is the caller's error.
BOOST_AUTO_TEST_CASE(int8_leaves_the_other_products_to_float32, *test::needs_precision("int8")) {
  Rng rng(17);
  const Parameter<float> w(random_matrix(40, 30, rng));
  const float* W = w.value.data();
  Product p = make_product(false, true, 9, 40, 30, false, 1.f, 0.f, rng);
  const Products* products = nullptr;  // float32 first
  const auto run = [&p, &products](const float* b, bool tb, const Parameter<float>* named) {
    std::vector<float> c = p.c;
    gemm(products, p.trans_a, tb, p.m, tb ? 40 : 30, tb ? 30 : 40, 1.f, p.a.data(), tb ? 30 : 40, b, 30, 0.f, c.data(),
         p.ldc, {nullptr, named});
    return c;
  };
  const auto same = [](const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
  };
  const std::vector<float> other = p.b;  // (40, 30) too
  const std::vector<float> by_blas = run(W, true, nullptr), other_by_blas = run(other.data(), true, nullptr);
  // W's numbers read with another row stride: (40, 15) rows that are not W's
  const auto run_strided = [&p, &w, W, &products] {
    std::vector<float> c(9 * 40);
    gemm(products, false, true, 9, 40, 15, 1.f, p.a.data(), 30, W, 15, 0.f, c.data(), 40, {nullptr, &w});
    return c;
  };
  const std::vector<float> strided = run_strided();
  p.a.resize(9 * 40);
  const std::vector<float> not_transposed = run(W, false, &w);
  p.a.resize(9 * 30);
  const float kept = p.a[4 * 30 + 7];
  p.a[4 * 30 + 7] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> with_nan = run(W, true, &w);
  p.a[4 * 30 + 7] = kept;
  const std::unique_ptr<Products> int8 = make_products("int8", {{"w", &w}});
  {
    products = int8.get();
    BOOST_TEST(!same(run(W, true, &w), by_blas));  // (the checks below can fail)
    BOOST_TEST(same(run(W, true, nullptr), by_blas));
    BOOST_TEST(same(run(other.data(), true, nullptr), other_by_blas));
    BOOST_TEST(same(run_strided(), strided));
    p.a.resize(9 * 40);
    BOOST_TEST(same(run(W, false, &w), not_transposed));
    p.a.resize(9 * 30);
    p.a[4 * 30 + 7] = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> c = run(W, true, &w);
    BOOST_TEST(same(c, with_nan));
    BOOST_TEST(std::isnan(c[4 * 40]));
    p.a[4 * 30 + 7] = kept;
    BOOST_CHECK_EXCEPTION(run(other.data(), true, &w), std::logic_error,
                          says("int8 products: an operand named as a weight of 40 × 30 numbers is not in them"));
  }
  const std::unique_ptr<Products> another = make_products("int8", {});  // another model's: w is not its weight
  products = another.get();
  BOOST_TEST(same(run(W, true, &w), by_blas));
}

BOOST_AUTO_TEST_CASE(linear_product_adds_the_bias_as_copy_then_gemm_does) {
  // y = x·Wᵀ + bias (products.hpp): in float32 and bfloat16 the bits of the bias copied into y and gemm with beta = 1;
  // int8 products add the bias as they write y, so there within a rounding of the terms' size
  Rng rng(23);
  const Parameter<float> weight(random_matrix(70, 50, rng));
  const Tensor<float>& w = weight.value;
  const Tensor<float> bias = random_matrix(1, 70, rng), x = random_matrix(9, 50, rng);
  const auto linear = [&](const Products* products) {
    std::vector<float> y(9 * 70, std::numeric_limits<float>::quiet_NaN());
    linear_product(products, 9, 70, 50, x.data(), w.data(), bias.data(), y.data(), &weight);
    return y;
  };
  const auto copy_then_gemm = [&](const Products* products) {
    std::vector<float> y(9 * 70);
    for (std::size_t r = 0; r < 9; ++r) std::copy(bias.data(), bias.data() + 70, y.data() + r * 70);
    gemm(products, false, true, 9, 70, 50, 1.f, x.data(), 50, w.data(), 50, 1.f, y.data(), 70, {nullptr, &weight});
    return y;
  };
  for (const std::string name : {"float32", "bf16", "int8"}) {
    if (!find_precision(name)->unavailable().empty()) continue;  // refusals: checked above
    const std::unique_ptr<Products> products = make_products(name, {{"w", &weight}});
    const std::vector<float> y = linear(products.get()), expected = copy_then_gemm(products.get());
    BOOST_TEST_CONTEXT(name) {
      if (name != "int8") {
        BOOST_TEST(std::memcmp(y.data(), expected.data(), y.size() * sizeof(float)) == 0);
        continue;
      }
      std::size_t beyond = 0;
      for (std::size_t i = 0; i < y.size(); ++i)
        beyond += !(std::fabs(y[i] - expected[i]) <= std::ldexp(1.0f, -22) * 256.0f);  // |x·w| + |b| < 256
      BOOST_TEST(beyond == 0u);
    }
  }
  std::vector<float> none(9 * 70, std::numeric_limits<float>::quiet_NaN()), expected(9 * 70);
  linear_product(nullptr, 9, 70, 50, x.data(), w.data(), nullptr, none.data());  // no bias: x·Wᵀ alone
  blas_gemm(false, true, 9, 70, 50, 1.f, x.data(), 50, w.data(), 50, 0.f, expected.data(), 70);
  BOOST_TEST(std::memcmp(none.data(), expected.data(), none.size() * sizeof(float)) == 0);
}

// f64products: each product computed in double and rounded to float once — every element within half a unit in the
// last place of float of the exact result (plus the double sums' own error, k·2⁻⁵² of Σ|a||b|), beta 0 over a C of
// NaN and beta ≠ 0, every transposition, strided operands, a bias; float32's sgemm falls outside that bound on the long
// sums (so that a silent fall back fails).
BOOST_AUTO_TEST_CASE(f64products_round_once) {
  Rng rng(29);
  const std::unique_ptr<Products> f64 = make_products("f64products", {});
  BOOST_TEST(!f64->copies_weights());
  const auto worst = [](const Product& p, const std::vector<float>& c, const float* bias) {
    double fraction = 0;
    for (std::size_t i = 0; i < p.m; ++i) {
      for (std::size_t j = 0; j < p.n; ++j) {
        const auto [exact, magnitude] = exact_at(p, i, j);
        const double added = bias != nullptr ? double(bias[j]) : p.beta == 0.0f ? 0.0 : p.beta * p.c[i * p.ldc + j];
        const double total = p.alpha * exact + added;
        const double bound =
            std::ldexp(std::fabs(total), -24) +
            double(p.k + 2) * std::ldexp(1.0, -52) * (std::fabs(p.alpha) * magnitude + std::fabs(added));
        const double error = std::fabs(double(c[i * p.ldc + j]) - total);
        fraction = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(fraction, error / bound);
      }
    }
    return fraction;
  };
  double float32_worst = 0;
  for (const auto& [m, n, k, strided, alpha, beta] :
       {std::tuple{1, 70, 40, false, 1.f, 0.f}, std::tuple{5, 33, 700, true, 0.5f, 1.f},
        std::tuple{37, 65, 2000, false, 1.f, -0.5f}, std::tuple{6, 9, 1, true, 2.f, 0.f}}) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        const Product p = make_product(ta, tb, m, n, k, strided, alpha, beta, rng);
        std::vector<float> c = p.c, by_float32 = p.c;
        gemm(f64.get(), ta, tb, p.m, p.n, p.k, p.alpha, p.a.data(), p.lda, p.b.data(), p.ldb, p.beta, c.data(), p.ldc);
        gemm(nullptr, ta, tb, p.m, p.n, p.k, p.alpha, p.a.data(), p.lda, p.b.data(), p.ldb, p.beta, by_float32.data(),
             p.ldc);
        BOOST_TEST(worst(p, c, nullptr) <= 1.0, "m " << m << " n " << n << " k " << k << " ta " << ta << " tb " << tb);
        float32_worst = std::max(float32_worst, worst(p, by_float32, nullptr));
      }
    }
  }
  BOOST_TEST(float32_worst > 1.0);  // float32's sums round at every term
  // y = x·Wᵀ + bias: the bias added in double, before the one rounding
  const Product p = make_product(false, true, 7, 30, 500, false, 1.f, 0.f, rng);
  std::vector<float> bias(30), y(7 * 30, std::numeric_limits<float>::quiet_NaN());
  for (float& b : bias) b = static_cast<float>(rng.uniform(-3.0, 3.0));
  linear_product(f64.get(), 7, 30, 500, p.a.data(), p.b.data(), bias.data(), y.data());
  BOOST_TEST(worst(p, y, bias.data()) <= 1.0);
}

// dense's shapes are linear's, and so are its errors: every mismatch named as linear names it.
BOOST_AUTO_TEST_CASE(dense_refuses_what_linear_refuses) {
  Tape<float> tape;
  const Variable<float> x = tape.leaf(Tensor<float>(Shape{2, 3})), v = tape.leaf(Tensor<float>(Shape{3}));
  const Variable<float> W = tape.leaf(Tensor<float>(Shape{4, 3})), W5 = tape.leaf(Tensor<float>(Shape{4, 5}));
  const Variable<float> b = tape.leaf(Tensor<float>(Shape{4})), b3 = tape.leaf(Tensor<float>(Shape{3}));
  const std::string expected = ": expected input (..., in) of rank 2 or 3, weight (out, in), bias (out,)";
  BOOST_CHECK_EXCEPTION(dense(x, W5, b), std::invalid_argument,
                        says("linear: input (2,3), weight (4,5), bias (4,)" + expected));
  BOOST_CHECK_EXCEPTION(dense(x, W, b3), std::invalid_argument,
                        says("linear: input (2,3), weight (4,3), bias (3,)" + expected));
  BOOST_CHECK_EXCEPTION(dense(v, W), std::invalid_argument,
                        says("linear: input (3,), weight (4,3), bias none" + expected));
  BOOST_TEST((dense(x, W, b).shape() == Shape{2, 4}));
}

BOOST_AUTO_TEST_CASE(int8_weights_refuse_what_they_cannot_hold, *test::needs_precision("int8")) {
  Parameter<float> vector(Tensor<float>({4}));
  Parameter<float> matrix(Tensor<float>({3, 4}));
  Parameter<float> kernels(Tensor<float>({2, 3, 3, 3}));  // a convolution's: never a product's Wᵀ, left out
  matrix.value.data()[6] = std::numeric_limits<float>::infinity();
  BOOST_CHECK_EXCEPTION(make_products("int8", {{"W", &matrix}}), std::invalid_argument,
                        says("int8: W holds inf at (1, 2)"));
  matrix.value.data()[6] = 1.0f;
  // the same matrix twice (a weight shared by two layers): quantized once; 12 int8 numbers, 3 scales and 3 sums
  const std::unique_ptr<Products> int8 =
      make_products("int8", {{"bias", &vector}, {"W", &matrix}, {"W again", &matrix}, {"conv", &kernels}});
  BOOST_TEST(int8->kept() == "1 weight matrix quantized per output channel (0 MB)");
}

// A precision this CPU or build cannot run is refused with its reason, the one its skipped cases give; one it can run
// makes its products (float32's: none, OpenBLAS's sgemm).
BOOST_AUTO_TEST_CASE(unavailable_precisions_are_refused_with_their_reason) {
  for (const std::string& name : precision_names()) {
    const std::string why = find_precision(name)->unavailable();
    BOOST_TEST_CONTEXT("precision " << name << (why.empty() ? " (available)" : " (unavailable: " + why + ")")) {
      if (why.empty()) {
        BOOST_CHECK_NO_THROW(make_products(name, {}));
      } else {
        BOOST_CHECK_EXCEPTION(make_products(name, {}), std::runtime_error, says("precision " + name + ": " + why));
      }
    }
  }
  BOOST_TEST(find_precision("float32")->unavailable().empty());  // float32 runs everywhere
}

// Every precision is found by its name, float32 first; a name no precision has is refused with the list.
BOOST_AUTO_TEST_CASE(precisions_by_name) {
  const std::vector<std::string> names = precision_names();
  BOOST_TEST_REQUIRE(!names.empty());
  BOOST_TEST(names.front() == "float32");
  std::string list;
  for (const std::string& name : names) {
    BOOST_TEST(find_precision(name)->name == name);
    BOOST_TEST(std::count(names.begin(), names.end(), name) == 1);
    list += (list.empty() ? "" : ", ") + name;
  }
  BOOST_TEST(find_precision("fp16") == nullptr);
  BOOST_CHECK_EXCEPTION(make_products("fp16", {}), std::invalid_argument,
                        says("precision fp16: no such precision (" + list + ")"));
  const std::vector<std::string> training = precision_names(true);
  BOOST_TEST(std::count(training.begin(), training.end(), "int8") == 0);  // int8 decodes only
  BOOST_TEST(std::count(training.begin(), training.end(), "bf16") == 1);
}

BOOST_AUTO_TEST_SUITE_END()
