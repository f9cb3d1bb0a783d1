// The products whose oneDNN primitives are made for their shapes (precision/shapes.hpp): the row buckets, and int8
// products made for fixed shapes giving the bits of those made for every size — every row count through the buckets,
// blocks of a weight, strides, alpha, beta and a bias — with their primitives kept, found again and dropped at the
// cache's bound, also while threads run them side by side (bf16's: test_precision.cpp). On a CPU with AMX, the
// products run an AMX kernel.
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "autograd/tensor.hpp"
#include "precision/precision.hpp"
#include "precision/products.hpp"
#include "precision/shapes.hpp"
#include "runtime/cpu.hpp"
#include "tests/needs_precision.hpp"

using namespace attend;

namespace {

std::vector<float> random_numbers(std::size_t size, Rng& rng) {
  std::vector<float> v(size);
  for (float& x : v) x = static_cast<float>(rng.uniform(-2.0, 2.0));
  return v;
}

// A weight W (n_w × k_w) and the operands of products C = alpha·op(A)·(a block of W)ᵀ + beta·C that read it.
struct Weighted {
  Parameter<float> w;
  std::vector<float> a;  // big enough for every product below, transposed or strided
  std::vector<float> c;
  std::vector<float> bias;
};

Weighted make_weighted(std::size_t n_w, std::size_t k_w, std::size_t max_m, Rng& rng) {
  Tensor<float> w({n_w, k_w});
  const std::vector<float> numbers = random_numbers(n_w * k_w, rng);
  std::copy(numbers.begin(), numbers.end(), w.data());
  return {Parameter<float>(w), random_numbers((max_m + 3) * (k_w + 3), rng),
          random_numbers((max_m + 3) * (n_w + 3), rng), random_numbers(n_w, rng)};
}

struct Case {
  std::size_t m, n, k, r0, c0;  // op(A) m × k times the block of W's rows r0 … r0+n, columns c0 … c0+k, transposed
  bool trans_a, strided;
  float alpha, beta;
  bool bias;  // y = x·Wᵀ + bias (linear_product: the whole W, no stride)
};

// C as `products` computes the case (C starting from the same numbers every time).
std::vector<float> run(const Products& products, const Weighted& x, const Case& s) {
  const std::size_t k_w = x.w.value.shape()[1], pad = s.strided ? 3 : 0;
  const std::size_t lda = (s.trans_a ? s.m : s.k) + pad, ldc = s.n + pad;
  std::vector<float> c(x.c.begin(), x.c.begin() + s.m * ldc);
  const float* block = x.w.value.data() + s.r0 * k_w + s.c0;
  if (s.bias) {
    linear_product(&products, s.m, s.n, s.k, x.a.data(), block, x.bias.data(), c.data(), &x.w);
  } else {
    gemm(&products, s.trans_a, true, s.m, s.n, s.k, s.alpha, x.a.data(), lda, block, k_w, s.beta, c.data(), ldc,
         {nullptr, &x.w});
  }
  return c;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shapes)

BOOST_AUTO_TEST_CASE(rows_are_rounded_up_by_at_most_a_quarter_into_four_buckets_an_octave) {
  for (std::size_t m = 1; m <= 8; ++m) BOOST_TEST(row_bucket(m) == m);
  std::size_t buckets_in_octave = 0, octave = 8, previous = 8;
  for (std::size_t m = 9; m <= 5000; ++m) {
    const std::size_t b = row_bucket(m);
    BOOST_TEST_CONTEXT("m " << m << " bucket " << b) {
      BOOST_TEST(b >= m);
      BOOST_TEST(4 * b <= 5 * m + 3);  // at most a quarter more (m + step − 1, step = octave / 4 < m / 4)
      BOOST_TEST(row_bucket(b) == b);  // a bucket is its own
      BOOST_TEST(b >= previous);       // never fewer rows for more
    }
    if (b != previous) ++buckets_in_octave;
    previous = b;
    if (m == 2 * octave) {  // an octave (octave, 2·octave] done
      BOOST_TEST(buckets_in_octave == 4u, "octave " << octave);
      buckets_in_octave = 0, octave *= 2;
    }
  }
  BOOST_TEST(row_bucket(64) == 64u);
  BOOST_TEST(row_bucket(65) == 80u);
  BOOST_TEST(row_bucket(455) == 512u);
}

// Every row count through the buckets, both sides of their edges; blocks of W (a recurrence's gates); an operand
// transposed; strides; alpha and beta; a bias; 2,300 columns (the int32 sums made in blocks of 455 rows, the last one
// bucketed on its own): the bits of the products made for every size.
BOOST_AUTO_TEST_CASE(int8_products_made_for_their_shapes_give_the_same_bits, *test::needs_precision("int8")) {
  Rng rng(5);
  const Weighted x = make_weighted(2300, 700, 640, rng);
  const Matrices weights{{"w", &x.w}};
  const std::unique_ptr<Products> runtime = make_int8_products(weights, Shapes::runtime);
  const std::unique_ptr<Products> fixed = make_int8_products(weights, Shapes::fixed);
  std::vector<Case> cases;
  for (const std::size_t m : {1, 2, 7, 8, 9, 10, 11, 17, 33, 63, 64, 65, 100, 129, 300}) {
    cases.push_back({m, 300, 700, 600, 0, m % 2 == 1, m % 3 == 0, 1.f, m % 4 == 0 ? 0.f : 0.5f, false});
  }
  cases.push_back({37, 65, 129, 1000, 300, true, true, 0.5f, 1.f, false});
  cases.push_back({640, 2300, 700, 0, 0, false, false, 1.f, 0.f, false});
  cases.push_back({21, 2300, 700, 0, 0, false, false, 1.f, 0.f, true});
  for (const Case& s : cases) {
    BOOST_TEST_CONTEXT("m " << s.m << " n " << s.n << " k " << s.k << " trans_a " << s.trans_a << " strided "
                            << s.strided << " beta " << s.beta << " bias " << s.bias) {
      const std::vector<float> want = run(*runtime, x, s);
      BOOST_TEST(!same_bits(want, std::vector<float>(x.c.begin(), x.c.begin() + want.size())));  // C was written
      BOOST_TEST(same_bits(run(*fixed, x, s), want));
    }
  }
  const KernelCacheStats stats = kernel_cache_stats(*fixed);
  BOOST_TEST(stats.runs >= cases.size());
  BOOST_TEST(stats.made >= 10u);
  BOOST_TEST(stats.made < stats.runs);  // 8 and 9 … 10, 63 and 64: the same bucket, found made
  BOOST_TEST(stats.dropped == 0u);
  BOOST_TEST(kernel_cache_stats(*runtime).runs == 0u);
  BOOST_TEST(runtime->report() == "");
  BOOST_TEST(fixed->report().find(std::to_string(stats.made) + " kernels made for their shapes") == 0u,
             fixed->report());
}

// At most `capacity` primitives kept: the least recently used dropped, made again when asked for again.
BOOST_AUTO_TEST_CASE(int8_kernels_beyond_the_capacity_are_dropped_least_recently_used_first,
                     *test::needs_precision("int8")) {
  Rng rng(6);
  const Weighted x = make_weighted(50, 40, 100, rng);
  const Matrices weights{{"w", &x.w}};
  const std::unique_ptr<Products> runtime = make_int8_products(weights, Shapes::runtime);
  const std::unique_ptr<Products> fixed = make_int8_products(weights, Shapes::fixed, 2);
  const auto step = [&](std::size_t m, std::size_t made, std::size_t dropped) {
    const Case s{m, 50, 40, 0, 0, false, false, 1.f, 0.f, false};
    BOOST_TEST_CONTEXT("m " << m) {
      BOOST_TEST(same_bits(run(*fixed, x, s), run(*runtime, x, s)));
      const KernelCacheStats stats = kernel_cache_stats(*fixed);
      BOOST_TEST(stats.made == made);
      BOOST_TEST(stats.dropped == dropped);
    }
  };
  step(9, 1, 0);   // bucket 10
  step(10, 1, 0);  // found
  step(64, 2, 0);  // bucket 64
  step(9, 2, 0);   // found: 10 is now the most recently used
  step(65, 3, 1);  // bucket 80: 64 dropped
  step(10, 3, 1);  // still kept
  step(64, 4, 2);  // made again, 80 dropped
  BOOST_TEST(kernel_cache_stats(*fixed).runs == 7u);
}

// Threads running the same products and shapes at once, the cache dropping kernels meanwhile: each its own bits.
BOOST_AUTO_TEST_CASE(int8_kernels_made_for_their_shapes_run_side_by_side, *test::needs_precision("int8")) {
  Rng rng(7);
  const Weighted x = make_weighted(256, 128, 96, rng);
  const Matrices weights{{"w", &x.w}};
  const std::unique_ptr<Products> runtime = make_int8_products(weights, Shapes::runtime);
  const std::unique_ptr<Products> fixed = make_int8_products(weights, Shapes::fixed, 3);
  std::vector<std::vector<float>> want;
  for (std::size_t m = 1; m <= 96; m += 5)
    want.push_back(run(*runtime, x, {m, 256, 128, 0, 0, false, false, 1.f, 0.f, false}));
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < wrong.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (std::size_t i = 0; i < want.size(); ++i) {
          const std::size_t j = (i + 7 * t) % want.size();  // each thread its own order
          const Case s{1 + 5 * j, 256, 128, 0, 0, false, false, 1.f, 0.f, false};
          if (!same_bits(run(*fixed, x, s), want[j])) ++wrong[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (std::size_t t = 0; t < wrong.size(); ++t) BOOST_TEST(wrong[t] == 0, "thread " << t);
  BOOST_TEST(kernel_cache_stats(*fixed).dropped > 0u);
}

// Where the CPU has AMX-INT8 and Linux grants the tiles, int8 products are made for their shapes and run oneDNN's AMX
// kernel (the implementation name of the primitive made for the translation model's gate product).
BOOST_AUTO_TEST_CASE(int8_products_run_an_amx_kernel_on_amx,
                     *test::needs_precision("int8") * test::needs_cpu("amx_int8")) {
  const std::string kernel = find_precision("int8")->kernel();
  BOOST_TEST(kernel.find("amx") != std::string::npos, kernel);
  BOOST_TEST(kernel.find("made for each shape") != std::string::npos, kernel);
}

// Likewise bf16 products where the CPU has AMX-BF16.
BOOST_AUTO_TEST_CASE(bf16_products_run_an_amx_kernel_on_amx,
                     *test::needs_precision("bf16") * test::needs_cpu("amx_bf16")) {
  const std::string kernel = find_precision("bf16")->kernel();
  BOOST_TEST(kernel.find("amx") != std::string::npos, kernel);
  BOOST_TEST(kernel.find("made for each shape") != std::string::npos, kernel);
}

BOOST_AUTO_TEST_SUITE_END()
