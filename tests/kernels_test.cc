// The decoding core: half conversions, ggml block formats, SIMD paths against the scalar oracle,
// the GGUF reader against hostile files, the quantizer against llama.cpp's own files, the
// tokenizer against Llama-2 ids, and greedy decoding of stories260K against the known text.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <thread>
#include <tuple>

#include <sys/stat.h>

#include "base/file_io.h"
#include "base/hash.h"
#include "base/memory_info.h"
#include "kernels/generate/generator.h"
#include "kernels/generate/sample_groups.h"
#include "kernels/generate/teacher_forcing.h"
#include "kernels/gguf/gguf_writer.h"
#include "kernels/gguf/random_model.h"
#include "kernels/model/memory_plan.h"
#include "kernels/ops/activations.h"
#include "kernels/ops/attention.h"
#include "kernels/ops/dot.h"
#include "kernels/ops/isa.h"
#include "kernels/ops/kernel_table.h"
#include "kernels/ops/matvec.h"
#include "kernels/ops/packed_activations.h"
#include "kernels/ops/packed_matrix.h"
#include "kernels/ops/thread_pool.h"
#include "kernels/quant/fp16.h"
#include "kernels/quant/kquants.h"
#include "kernels/tokenizer/pre_tokenizer.h"
#include "kernels/tokenizer/spm_tokenizer.h"
#include "test_support.h"

namespace evald::kernels {
namespace {

std::string Models() {
  return std::string(EVALD_SHARED_DIR) + "/models";
}
bool HaveModels() {
  return IsRegularFile(Models() + "/stories260K-f32.gguf");
}

// A random-weight model of `shape` with stories260K's vocabulary, loaded from a temporary file
// that is removed once loaded (the model keeps it mapped).
StatusOr<std::unique_ptr<LlamaModel>> LoadRandomModel(const RandomModelShape& shape,
                                                      const std::string& name) {
  const std::string path = "/tmp/evald-" + name + "-" + RandomHex(4) + ".gguf";
  if (Status written = WriteRandomModel(shape, Models() + "/stories260K-f32.gguf", path);
      !written.ok())
    return written;
  auto model = LlamaModel::Load(path);
  std::remove(path.c_str());
  return model;
}

const char* kKnownText =
    ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw "
    "a big, red ball. She wanted to play with it, but it was too high.";

TEST(Fp16, ExhaustiveRoundTripAndKnownValues) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = Fp16ToFp32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(Fp32ToFp16(f), h) << std::hex << h;
  }
  EXPECT_EQ(Fp32ToFp16(1.0f), 0x3C00);
  EXPECT_EQ(Fp32ToFp16(65504.0f), 0x7BFF);
  EXPECT_EQ(Fp32ToFp16(1e6f), 0x7C00);                   // overflow to infinity
  EXPECT_EQ(Fp32ToFp16(1.0f + 1.0f / 2048), 0x3C00);     // halfway: to even
  EXPECT_EQ(Fp32ToFp16(1.0f + 3.0f / 2048), 0x3C02);     // halfway: to even (up)
  EXPECT_EQ(Fp32ToFp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(Fp32ToFp16(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_FLOAT_EQ(Bf16ToFp32(0x3F80), 1.0f);
}

TEST(Blocks, Q8_0AndQ4_0ReferenceQuantizers) {
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = (j - 16) * 0.25f;  // amax 4.0 at j = 0
  BlockQ8_0 q8;
  QuantizeRowQ8_0(x, &q8, 32);
  EXPECT_EQ(q8.d, Fp32ToFp16(4.0f / 127));
  EXPECT_EQ(q8.qs[0], -127);
  EXPECT_EQ(q8.qs[16], 0);
  EXPECT_EQ(q8.qs[17], static_cast<int8_t>(std::roundf(0.25f * 127 / 4.0f)));  // 7.9375 -> 8
  float back[32];
  ASSERT_TRUE(DequantizeRow(GgmlType::kQ8_0, &q8, back, 32).ok());
  for (int j = 0; j < 32; ++j) EXPECT_NEAR(back[j], x[j], 4.0f / 127);
  BlockQ4_0 q4;
  QuantizeRowQ4_0(x, &q4, 32);
  EXPECT_EQ(q4.d, Fp32ToFp16(-4.0f / -8.0f));  // the signed maximum -4 maps to -8
  EXPECT_EQ(q4.qs[0] & 0x0F, 0);               // -4 / 0.5 + 8 = 0
  ASSERT_TRUE(DequantizeRow(GgmlType::kQ4_0, &q4, back, 32).ok());
  for (int j = 0; j < 32; ++j) EXPECT_NEAR(back[j], x[j], 0.5f);
  EXPECT_FALSE(DequantizeRow(GgmlType::kQ5_K, &q4, back, 256).ok());
}

// K-quant rows against Q8_0 activations: the integer block sums of the scalar oracle equal the
// product of the dequantized row (DequantizeRow, ggml's formulas) with the dequantized
// activations, up to float rounding; the AVX2 kernel equals the oracle up to summation order;
// and MatVec takes this path for Q4_K/Q6_K matrices. Random bit patterns reach every nibble,
// every high-bit pair, negative Q6_K scales and 6-bit Q4_K scales and minimums.
TEST(Dot, KQuantRowsAgainstQ8_0Activations) {
  std::mt19937 rng(23);
  std::normal_distribution<float> dist(0, 1);
  const int64_t n = 1024;
  std::vector<float> x(n), wf(n);
  for (auto& v : x) v = dist(rng);
  std::vector<BlockQ8_0> x8(n / kQK);
  QuantizeRowQ8_0(x.data(), x8.data(), n);
  std::vector<float> xd(n);
  ASSERT_TRUE(DequantizeRow(GgmlType::kQ8_0, x8.data(), xd.data(), n).ok());
  auto random_bytes = [&](auto& blocks) {
    auto* p = reinterpret_cast<uint8_t*>(blocks.data());
    for (size_t i = 0; i < blocks.size() * sizeof(blocks[0]); ++i)
      p[i] = static_cast<uint8_t>(rng());
  };
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<BlockQ6_K> w6(n / kQK_K);
    std::vector<BlockQ4_K> w4(n / kQK_K);
    random_bytes(w6);
    random_bytes(w4);
    for (auto& b : w6) b.d = Fp32ToFp16(0.001f * (trial + 1));
    for (auto& b : w4) {
      b.d = Fp32ToFp16(0.01f);
      b.dmin = Fp32ToFp16(0.002f * trial);
    }
    for (GgmlType type : {GgmlType::kQ6_K, GgmlType::kQ4_K}) {
      const void* w = type == GgmlType::kQ6_K ? static_cast<const void*>(w6.data()) : w4.data();
      ASSERT_TRUE(DequantizeRow(type, w, wf.data(), n).ok());
      double exact = 0, magnitude = 0;
      for (int64_t i = 0; i < n; ++i) {
        exact += static_cast<double>(wf[i]) * xd[i];
        magnitude += std::fabs(static_cast<double>(wf[i]) * xd[i]);
      }
      const float oracle = type == GgmlType::kQ6_K ? DotQ6_KScalar(w6.data(), x8.data(), n)
                                                   : DotQ4_KScalar(w4.data(), x8.data(), n);
      const char* name = type == GgmlType::kQ6_K ? "q6_k" : "q4_k";
      EXPECT_NEAR(oracle, exact, 1e-5 * magnitude + 1e-6) << name << " trial " << trial;
      if (!IsaSupported(Isa::kAvx2)) continue;
      const float simd = type == GgmlType::kQ6_K ? DotQ6_KAvx2(w6.data(), x8.data(), n)
                                                 : DotQ4_KAvx2(w4.data(), x8.data(), n);
      EXPECT_NEAR(simd, oracle, 1e-5 * magnitude + 1e-6) << name << " avx2, trial " << trial;
      // MatVec over a matrix of one such row repeated 3 times gives the oracle per row.
      const uint64_t row_bytes =
          type == GgmlType::kQ6_K ? n / kQK_K * sizeof(BlockQ6_K) : n / kQK_K * sizeof(BlockQ4_K);
      std::vector<uint8_t> rows(3 * row_bytes);
      for (int r = 0; r < 3; ++r) std::memcpy(rows.data() + r * row_bytes, w, row_bytes);
      WeightMatrix m{type, rows.data(), 3, n, row_bytes};
      float y[3];
      MatVec(KernelTable::For(Isa::kScalar)).Apply(m, x.data(), y);
      for (float v : y) EXPECT_EQ(v, oracle) << name;
    }
  }
}

TEST(Dot, SimdPathsEqualTheScalarOracle) {
  std::vector<Isa> paths;
  for (Isa isa : {Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512Vnni})
    if (IsaSupported(isa)) paths.push_back(isa);
  if (paths.empty()) GTEST_SKIP() << "no SIMD path on this CPU";
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0, 1);
  for (Isa isa : paths) {
    for (int n : {32, 96, 4096}) {  // odd block counts exercise the two-block kernels' tails
      std::vector<float> w(n), x(n);
      for (int trial = 0; trial < 20; ++trial) {
        for (auto& v : w) v = dist(rng) * (trial + 1);
        for (auto& v : x) v = dist(rng);
        std::vector<BlockQ8_0> w8(n / 32), x8(n / 32);
        std::vector<BlockQ4_0> w4(n / 32);
        QuantizeRowQ8_0(w.data(), w8.data(), n);
        QuantizeRowQ4_0(w.data(), w4.data(), n);
        QuantizeRowQ8_0(x.data(), x8.data(), n);
        // Through each ISA's kernel table, as a session calls them.
        const auto* w4_row = reinterpret_cast<const uint8_t*>(w4.data());
        const KernelTable &scalar = KernelTable::For(Isa::kScalar), &simd = KernelTable::For(isa);
        EXPECT_EQ(simd.isa, isa);
        const auto* w8_row = reinterpret_cast<const uint8_t*>(w8.data());
        float s8 = scalar.Row(GgmlType::kQ8_0).dot_q8(w8_row, x8.data(), n),
              v8 = simd.Row(GgmlType::kQ8_0).dot_q8(w8_row, x8.data(), n);
        float s4 = scalar.Row(GgmlType::kQ4_0).dot_q8(w4_row, x8.data(), n),
              v4 = simd.Row(GgmlType::kQ4_0).dot_q8(w4_row, x8.data(), n);
        // Integer block sums are exact; only the float accumulation order differs.
        EXPECT_NEAR(v8, s8, 1e-5f * std::fabs(s8) + 1e-3f) << IsaName(isa) << " n=" << n;
        EXPECT_NEAR(v4, s4, 1e-5f * std::fabs(s4) + 1e-3f) << IsaName(isa) << " n=" << n;
      }
    }
  }
}

// Weights laid out for the packed kernels (16 rows interleaved), for each packed path this CPU
// runs (AVX2; AVX-VNNI, in AVX2's layout; AVX-512 VNNI): every row equal to the scalar oracle up to
// float accumulation order, and a vector's result bit-identical whether it is multiplied alone, in
// a batch or across threads (so samples do not depend on their neighbours).
TEST(PackedMatVec, EqualsTheOracleAndBatchesBitIdentically) {
  std::vector<Isa> paths;
  for (Isa isa : {Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512Vnni})
    if (IsaSupported(isa)) paths.push_back(isa);
  if (paths.empty()) GTEST_SKIP() << "no packed kernels on this CPU";
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0, 1);
  ThreadPool pool(3);
  for (Isa isa : paths) {
    for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_0}) {
      for (int64_t cols : {32, 96, 2048}) {
        // 13 groups of 16 rows: one vector takes several at a time (AVX-512: 8, then 4), then
        // the rest one by one.
        const int64_t rows = 208, rb = static_cast<int64_t>(*RowBytes(type, cols));
        std::vector<uint8_t> data(static_cast<size_t>(rb * rows));
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; ++r) {
          for (auto& v : row) v = dist(rng) * static_cast<float>(1 + r % 5);
          if (type == GgmlType::kQ8_0) {
            QuantizeRowQ8_0(row.data(), reinterpret_cast<BlockQ8_0*>(data.data() + r * rb), cols);
          } else {
            QuantizeRowQ4_0(row.data(), reinterpret_cast<BlockQ4_0*>(data.data() + r * rb), cols);
          }
        }
        WeightMatrix plain{type, data.data(), rows, cols, static_cast<uint64_t>(rb)};
        auto packed = PackedMatrix::Pack(plain, isa);
        ASSERT_NE(packed, nullptr);
        EXPECT_EQ(packed->layout(), PackedLayoutFor(isa));
        WeightMatrix w = plain;
        w.packed = packed.get();
        const std::string what = std::string(IsaName(isa)) + " " +
                                 (type == GgmlType::kQ8_0 ? "q8_0" : "q4_0") + " cols " +
                                 std::to_string(cols);
        // Every kernel width (1..10 vectors) and the chunkings of larger batches.
        for (int batch : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 20, 23}) {
          std::vector<float> x(static_cast<size_t>(batch * cols));
          for (auto& v : x) v = dist(rng);
          std::vector<float> oracle(static_cast<size_t>(batch * rows)), got(oracle.size()),
              one(rows);
          MatVec scalar(KernelTable::For(Isa::kScalar)), simd(KernelTable::For(isa)),
              pooled(KernelTable::For(isa), &pool);
          scalar.ApplyBatch(plain, x.data(), batch, oracle.data());
          simd.ApplyBatch(w, x.data(), batch, got.data());
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_NEAR(got[i], oracle[i], 1e-5f * std::fabs(oracle[i]) + 1e-3f)
                << what << " batch " << batch << " at " << i;
          for (int b = 0; b < batch; ++b) {
            simd.Apply(w, x.data() + b * cols, one.data());
            ASSERT_EQ(std::memcmp(one.data(), got.data() + b * rows, sizeof(float) * rows), 0)
                << what << ": vector " << b << " of " << batch << " differs alone and in the batch";
          }
          // Split across threads (pieces of whole eight-group runs: 8 + 5 groups): the same bits.
          std::vector<float> pooled_out(got.size());
          pooled.ApplyBatch(w, x.data(), batch, pooled_out.data());
          ASSERT_EQ(std::memcmp(pooled_out.data(), got.data(), sizeof(float) * got.size()), 0)
              << what << ": batch " << batch << " differs across threads";
        }
      }
    }
  }
  // What cannot be packed is left alone: rows not a multiple of 16, and for AVX2 a Q8_0 matrix
  // holding a -128, which |x| x (w * sign x) cannot multiply exactly (it still multiplies
  // exactly through the file's layout).
  WeightMatrix odd{GgmlType::kQ8_0, nullptr, 20, 32, 34};
  EXPECT_EQ(PackedMatrix::Pack(odd, Isa::kAvx512Vnni), nullptr);
  EXPECT_EQ(PackedMatrix::Pack(odd, Isa::kAvx2), nullptr);
  std::vector<BlockQ8_0> blocks(16);
  for (auto& b : blocks) {
    b.d = Fp32ToFp16(0.5f);
    for (int j = 0; j < kQK; ++j) b.qs[j] = static_cast<int8_t>(j * 3 - 40);
  }
  blocks[7].qs[9] = -128;
  WeightMatrix minus128{GgmlType::kQ8_0, reinterpret_cast<const uint8_t*>(blocks.data()), 16, 32,
                        sizeof(BlockQ8_0)};
  EXPECT_EQ(PackedMatrix::Pack(minus128, Isa::kAvx2), nullptr);
  EXPECT_EQ(PackedMatrix::Pack(minus128, Isa::kScalar), nullptr);
  EXPECT_NE(PackedMatrix::Pack(minus128, Isa::kAvx512Vnni), nullptr);
  EXPECT_EQ(PackedLayoutFor(Isa::kAvxVnni), Isa::kAvx2);
}

// Several matrices of one input (queries, keys and values; gate and up) through one call: each
// output bit-identical to its matrix multiplied alone, alone or split across threads, when they
// are packed alike (one quantized input, the groups of all of them in one pass of the pool) and
// when they are not (a Q8_0 beside Q4_0 ones, an unpacked one).
TEST(PackedMatVec, SeveralMatricesOfOneInputEqualEachAlone) {
  std::vector<Isa> paths;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512Vnni})
    if (IsaSupported(isa)) paths.push_back(isa);
  if (paths.empty()) GTEST_SKIP() << "no packed kernels on this CPU";
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0, 1);
  const int64_t cols = 256;
  struct Matrix {
    std::vector<uint8_t> data;
    WeightMatrix w;
    std::unique_ptr<PackedMatrix> packed;
  };
  auto make = [&](GgmlType type, int64_t rows, Isa isa, bool pack) {
    auto m = std::make_unique<Matrix>();
    const int64_t rb = static_cast<int64_t>(*RowBytes(type, cols));
    m->data.resize(static_cast<size_t>(rb * rows));
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (auto& v : row) v = dist(rng);
      if (type == GgmlType::kQ8_0) {
        QuantizeRowQ8_0(row.data(), reinterpret_cast<BlockQ8_0*>(m->data.data() + r * rb), cols);
      } else {
        QuantizeRowQ4_0(row.data(), reinterpret_cast<BlockQ4_0*>(m->data.data() + r * rb), cols);
      }
    }
    m->w = WeightMatrix{type, m->data.data(), rows, cols, static_cast<uint64_t>(rb)};
    if (pack) {
      m->packed = PackedMatrix::Pack(m->w, isa);
      m->w.packed = m->packed.get();
    }
    return m;
  };
  ThreadPool pool(3);
  for (Isa isa : paths) {
    // 13 + 3 + 3 groups, as queries, keys and values; then a mixture.
    std::vector<std::unique_ptr<Matrix>> alike, mixed;
    alike.push_back(make(GgmlType::kQ4_0, 208, isa, true));
    alike.push_back(make(GgmlType::kQ4_0, 48, isa, true));
    alike.push_back(make(GgmlType::kQ4_0, 48, isa, true));
    mixed.push_back(make(GgmlType::kQ4_0, 208, isa, true));
    mixed.push_back(make(GgmlType::kQ8_0, 48, isa, true));
    mixed.push_back(make(GgmlType::kQ4_0, 48, isa, false));
    for (auto* set : {&alike, &mixed}) {
      for (int batch : {1, 20}) {
        std::vector<float> x(static_cast<size_t>(batch * cols));
        for (auto& v : x) v = dist(rng);
        for (ThreadPool* threads : {static_cast<ThreadPool*>(nullptr), &pool}) {
          MatVec matvec(KernelTable::For(isa), threads);
          std::vector<const WeightMatrix*> ws;
          std::vector<std::vector<float>> each, alone;
          for (const auto& m : *set) {
            ws.push_back(&m->w);
            each.emplace_back(static_cast<size_t>(batch * m->w.rows), -1.0f);
            alone.emplace_back(each.back().size());
            matvec.ApplyBatch(m->w, x.data(), batch, alone.back().data());
          }
          std::vector<float*> ys;
          for (auto& y : each) ys.push_back(y.data());
          matvec.ApplyBatchToEach(ws, x.data(), batch, ys);
          for (size_t i = 0; i < each.size(); ++i)
            EXPECT_EQ(std::memcmp(each[i].data(), alone[i].data(), sizeof(float) * each[i].size()),
                      0)
                << IsaName(isa) << (set == &alike ? " alike" : " mixed") << ", batch " << batch
                << (threads ? ", pooled" : "") << ": matrix " << i << " differs from alone";
        }
      }
    }
  }
}

// The pool hands out pieces by time, not by thread: whatever the timing, every item of every
// call is computed exactly once, within pieces whose bounds keep the alignment asked for, and
// calls follow each other (with the workers spinning or asleep in between) without mixing up.
TEST(ThreadPool, EveryItemOnceInAlignedPiecesAcrossManyCalls) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    std::mt19937 rng(static_cast<unsigned>(threads));
    for (int call = 0; call < 3000; ++call) {
      const int64_t n = std::uniform_int_distribution<int64_t>(0, 700)(rng);
      const int64_t align = call % 3 == 0 ? 4 : 1;
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      std::atomic<bool> misaligned{false};
      pool.ParallelFor(
          n,
          [&](int64_t begin, int64_t end) {
            if (begin % align != 0 || (end % align != 0 && end != n) || begin >= end)
              misaligned = true;
            for (int64_t i = begin; i < end; ++i) seen[static_cast<size_t>(i)]++;
          },
          align);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(seen[static_cast<size_t>(i)].load(), 1) << "call " << call << " item " << i;
      ASSERT_FALSE(misaligned) << "call " << call;
      // Now and then a pause long enough for the workers to fall asleep.
      if (call % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

// The AVX2 and AVX-512 activation quantizers (one block, and AVX-512 sixteen at once) against
// QuantizeRowQ8_0 (itself bit-identical to ggml's reference): same values, same scale, on random
// blocks, blocks of exact halves after scaling (roundf takes them away from zero; round-to-even
// would not), zeros and extreme magnitudes.
TEST(PackedActivations, VectorQuantizersAreBitIdenticalToTheReference) {
  if (!IsaSupported(Isa::kAvx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  const bool avx512 = IsaSupported(Isa::kAvx512Vnni);
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0, 1);
  std::vector<std::vector<float>> blocks;
  for (int i = 0; i < 2000; ++i) {
    std::vector<float> b(kQK);
    const float scale = std::pow(10.0f, static_cast<float>(i % 13) - 6.0f);
    for (auto& v : b) v = dist(rng) * scale;
    blocks.push_back(b);
  }
  // amax 127 makes the inverse scale exactly 1: k + 0.5 lands on a tie.
  std::vector<float> ties(kQK);
  for (int j = 0; j < kQK; ++j) ties[j] = (j % 2 ? -1.0f : 1.0f) * (static_cast<float>(j) + 0.5f);
  ties[31] = 127.0f;
  blocks.push_back(ties);
  blocks.push_back(std::vector<float>(kQK, 0.0f));
  std::vector<float> extreme(kQK, 1e-30f);
  extreme[3] = -3e38f;
  blocks.push_back(extreme);
  std::vector<float> near_half(kQK, 0.49999997f);
  near_half[0] = 127.0f;
  blocks.push_back(near_half);
  for (size_t i = 0; i < blocks.size(); ++i) {
    BlockQ8_0 ref;
    QuantizeRowQ8_0(blocks[i].data(), &ref, kQK);
    int32_t ref_sum = 0;
    for (int8_t v : ref.qs) ref_sum += v;
    for (auto quantize : {&QuantizeBlockQ8_0Avx2, &QuantizeBlockQ8_0Avx512}) {
      if (quantize == &QuantizeBlockQ8_0Avx512 && !avx512) continue;
      int8_t q[kQK];
      uint16_t d;
      const int32_t sum = quantize(blocks[i].data(), q, &d);
      const char* which = quantize == &QuantizeBlockQ8_0Avx2 ? "avx2" : "avx512";
      ASSERT_EQ(d, ref.d) << which << " block " << i;
      ASSERT_EQ(std::memcmp(q, ref.qs, kQK), 0) << which << " block " << i;
      ASSERT_EQ(sum, ref_sum) << which << " block " << i;
    }
  }
  if (!avx512) return;
  // Sixteen blocks at once: every run of 16 consecutive blocks, the special ones among them
  // (copied to the front as well), each block's values written 48 bytes apart.
  std::vector<std::vector<float>> runs(blocks.end() - 4, blocks.end());
  runs.insert(runs.end(), blocks.begin(), blocks.end());
  std::vector<float> flat;
  for (const auto& b : runs) flat.insert(flat.end(), b.begin(), b.end());
  for (size_t r = 0; r + 16 <= runs.size(); r += 16) {
    constexpr int64_t kStride = 48;
    std::vector<int8_t> q(16 * kStride, 0x55);
    uint16_t d[16];
    int32_t sums[16];
    QuantizeSixteenBlocksQ8_0Avx512(&flat[r * kQK], q.data(), kStride, d, sums);
    for (int k = 0; k < 16; ++k) {
      BlockQ8_0 ref;
      QuantizeRowQ8_0(runs[r + k].data(), &ref, kQK);
      int32_t ref_sum = 0;
      for (int8_t v : ref.qs) ref_sum += v;
      ASSERT_EQ(d[k], ref.d) << "sixteen, block " << r + k;
      ASSERT_EQ(std::memcmp(&q[k * kStride], ref.qs, kQK), 0) << "sixteen, block " << r + k;
      ASSERT_EQ(sums[k], ref_sum) << "sixteen, block " << r + k;
      for (int64_t g = kQK; g < kStride; ++g) ASSERT_EQ(q[k * kStride + g], 0x55) << "gap written";
    }
  }
}

// The RMS norm's AVX2 and AVX-512 versions equal the scalar one bit for bit (lengths around the
// 16-lane steps, with and without weights, in place), and the scalar one is the norm: within a
// few float roundings of the same computed in double.
TEST(Activations, RmsNormVectorPathsEqualTheScalarOne) {
  std::vector<std::pair<const char*, RmsNormFn>> paths;
  if (IsaSupported(Isa::kAvx2)) paths.push_back({"avx2", &RmsNormAvx2});
  if (IsaSupported(Isa::kAvx512Vnni)) paths.push_back({"avx512", &RmsNormAvx512});
  std::mt19937 rng(17);
  for (int64_t n : {1, 5, 15, 16, 17, 31, 64, 100, 256, 2048, 2051, 5632}) {
    std::vector<float> x(static_cast<size_t>(n)), w(x.size());
    const float magnitude = std::pow(10.0f, static_cast<float>(n % 7) - 3.0f);
    for (auto& v : x) v = std::normal_distribution<float>(0, magnitude)(rng);
    for (auto& v : w) v = std::normal_distribution<float>(1, 0.3f)(rng);
    for (const float* weights :
         {static_cast<const float*>(w.data()), static_cast<const float*>(nullptr)}) {
      std::vector<float> want(x.size());
      RmsNormScalar(x.data(), weights, want.data(), n, 1e-5f);
      double sum = 0;
      for (float v : x) sum += static_cast<double>(v) * v;
      const double inv = 1.0 / std::sqrt(sum / static_cast<double>(n) + 1e-5);
      for (int64_t i = 0; i < n; ++i) {
        const double exact = x[i] * inv * (weights ? weights[i] : 1.0);
        ASSERT_NEAR(want[i], exact, 4e-7 * std::fabs(exact) + 1e-30) << "n " << n << " at " << i;
      }
      for (const auto& [name, norm] : paths) {
        std::vector<float> got(x.size(), -1.0f);
        norm(x.data(), weights, got.data(), n, 1e-5f);
        ASSERT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * x.size()), 0)
            << name << " n " << n << (weights ? "" : " without weights");
        std::vector<float> in_place = x;
        norm(in_place.data(), weights, in_place.data(), n, 1e-5f);
        ASSERT_EQ(std::memcmp(in_place.data(), want.data(), sizeof(float) * x.size()), 0)
            << name << " n " << n << " in place";
      }
    }
  }
}

// The vector exps within 2 ulp of std::exp over the float range, saturating at both ends; the
// gated SiLU built on them against the scalar oracle, the same for an element wherever it sits;
// the AVX2 path equal to the AVX-512 one bit for bit.
TEST(Activations, VectorExpAndGatedSiluMatchTheScalarOracle) {
  struct Path {
    const char* name;
    Isa isa;
    void (*exp)(const float*, float*, int64_t);
    void (*gated_silu)(float*, const float*, int64_t);
  };
  std::vector<Path> paths;
  for (const Path& p : {Path{"avx2", Isa::kAvx2, &ExpAvx2, &GatedSiluAvx2},
                        Path{"avx512", Isa::kAvx512Vnni, &ExpAvx512, &GatedSiluAvx512}})
    if (IsaSupported(p.isa)) paths.push_back(p);
  if (paths.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::vector<float> x;
  for (float v = -110.0f; v <= 95.0f; v += 0.0137f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.72f, -87.33f, -103.9f}) x.push_back(v);
  std::vector<std::vector<float>> exps;
  for (const Path& p : paths) {
    std::vector<float> y(x.size());
    p.exp(x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = std::exp(x[i]);
      if (std::isinf(want)) {
        ASSERT_TRUE(std::isinf(y[i])) << p.name << " exp(" << x[i] << ") = " << y[i];
        continue;
      }
      if (want < 1e-37f) {  // below the normal range: within an ulp of the smallest normal
        ASSERT_NEAR(y[i], want, 2e-38f) << p.name << " exp(" << x[i] << ")";
        continue;
      }
      ASSERT_LE(std::fabs(y[i] - want), 2.5e-7f * want) << p.name << " exp(" << x[i] << ")";
    }
    exps.push_back(std::move(y));
  }
  if (exps.size() == 2) {
    ASSERT_EQ(std::memcmp(exps[0].data(), exps[1].data(), sizeof(float) * x.size()), 0)
        << "the AVX2 exp differs from the AVX-512 exp";
  }
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0, 4);
  for (int64_t n : {1, 7, 8, 15, 16, 172, 5632}) {
    std::vector<float> gate(static_cast<size_t>(n)), up(gate.size());
    for (auto& v : gate) v = dist(rng);
    for (auto& v : up) v = dist(rng);
    std::vector<float> want = gate;
    GatedSiluScalar(want.data(), up.data(), n);
    std::vector<std::vector<float>> outs;
    for (const Path& p : paths) {
      std::vector<float> got = gate;
      p.gated_silu(got.data(), up.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(got[i], want[i], 1e-6f * std::fabs(want[i]) + 1e-30f)
            << p.name << " n " << n << " at " << i;
      // The first element alone equals the first of the batch, bit for bit.
      float alone = gate[0];
      p.gated_silu(&alone, up.data(), 1);
      ASSERT_EQ(std::memcmp(&alone, got.data(), sizeof(float)), 0) << p.name;
      outs.push_back(std::move(got));
    }
    if (outs.size() == 2) {
      ASSERT_EQ(std::memcmp(outs[0].data(), outs[1].data(), sizeof(float) * outs[0].size()), 0)
          << "n " << n << ": the AVX2 gated SiLU differs from the AVX-512 one";
    }
  }
}

// The sampler's weights e^((x - max) x scale): the vector paths within the exp's tolerance of the
// scalar oracle, equal to each other bit for bit, the largest exactly 1 and a NaN's 0, over
// lengths with and without a tail; and the maximum left for the caller when it is infinite.
TEST(Activations, SoftmaxWeightsMatchTheScalarOracle) {
  std::vector<std::pair<const char*, SoftmaxWeightsFn>> paths;
  if (IsaSupported(Isa::kAvx2)) paths.push_back({"avx2", &SoftmaxWeightsAvx2});
  if (IsaSupported(Isa::kAvx512Vnni)) paths.push_back({"avx512", &SoftmaxWeightsAvx512});
  if (paths.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(8);
  std::normal_distribution<float> dist(-3, 6);
  for (int64_t n : {1, 5, 8, 16, 17, 600, 32003}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = dist(rng);
    if (n > 5) x[3] = std::nanf("");
    const float scale = 1.0f / 0.8f;
    std::vector<float> want(x.size());
    const float max = SoftmaxWeightsScalar(x.data(), want.data(), n, scale);
    EXPECT_EQ(*std::max_element(want.begin(), want.end()), 1.0f);
    std::vector<std::vector<float>> outs;
    for (const auto& [name, weights] : paths) {
      std::vector<float> got(x.size(), -1.0f);
      EXPECT_EQ(weights(x.data(), got.data(), n, scale), max) << name << " n " << n;
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(got[i], want[i], 2.5e-7f * want[i] + 2e-38f)
            << name << " n " << n << " at " << i;
      if (n > 5) {
        EXPECT_EQ(got[3], 0.0f) << name << ": a NaN weighs nothing";
      }
      outs.push_back(std::move(got));
    }
    if (outs.size() == 2) {
      ASSERT_EQ(std::memcmp(outs[0].data(), outs[1].data(), sizeof(float) * outs[0].size()), 0)
          << "n " << n << ": the AVX2 weights differ from the AVX-512 ones";
    }
  }
  std::vector<float> odd = {1.0f, std::numeric_limits<float>::infinity(), 2.0f}, y(3);
  for (const auto& [name, weights] : paths)
    EXPECT_TRUE(std::isinf(weights(odd.data(), y.data(), 3, 1.0f))) << name;
  std::vector<float> nans(20, std::nanf(""));
  std::vector<float> y20(20);
  for (const auto& [name, weights] : paths)
    EXPECT_EQ(weights(nans.data(), y20.data(), 20, 1.0f), -std::numeric_limits<float>::infinity())
        << name;
}

// Attention, each SIMD path against the scalar oracle, with and without soft-capping, over a
// window that does not start at position 0 (sliding-window layers) and over a ring (a sliding
// layer's cache); head sizes each path takes in registers, Gemma's 256 and Gemma 4's 512, and ones
// it hands to the scalar path (384 among them: AVX-512 has no kernel between 256 and 512); one
// query head, and a group of five sharing a KV head, each of whose results is the one it has
// alone, bit for bit.
TEST(Attention, SimdPathEqualsTheScalarOracle) {
  std::vector<std::pair<const char*, AttendFn>> paths;
  if (IsaSupported(Isa::kAvx2)) paths.emplace_back("avx2", &AttendAvx2);
  if (IsaSupported(Isa::kAvx512Vnni)) paths.emplace_back("avx512", &AttendAvx512);
  if (paths.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0, 1);
  const int group = 5;
  for (int head_dim : {16, 64, 128, 8, 24, 256, 12, 512, 384}) {
    for (float softcap : {0.0f, 50.0f}) {
      const int positions = 300, kv_heads = 2;
      const int64_t stride = static_cast<int64_t>(kv_heads) * head_dim;
      std::vector<float> keys(static_cast<size_t>(positions * stride)), values(keys.size()),
          q(static_cast<size_t>(group * head_dim));
      for (auto& v : keys) v = dist(rng);
      for (auto& v : values) v = dist(rng);
      for (auto& v : q) v = dist(rng) * 2;
      // (first, last, ring): whole windows with 12, 7 and 5 positions past the last full block of
      // 16, one of 17, a single position, and a window of 50 over a ring of 64 rows.
      for (auto [first, last, ring] :
           {std::tuple{0, 299, 0}, std::tuple{37, 299, 0}, std::tuple{295, 299, 0},
            std::tuple{100, 116, 0}, std::tuple{7, 7, 0}, std::tuple{250, 299, 64}}) {
        AttentionHead head{head_dim, stride, 1.0f / std::sqrt(static_cast<float>(head_dim)),
                           softcap};
        head.ring = ring;
        const std::string what = "head_dim " + std::to_string(head_dim) + " softcap " +
                                 std::to_string(softcap) + " window " + std::to_string(first) +
                                 ".." + std::to_string(last) + " ring " + std::to_string(ring);
        const size_t span = static_cast<size_t>(last + 1);
        std::vector<float> scores(group * span), want(q.size()), got(q.size()), alone(head_dim);
        AttendScalar(head, group, q.data(), keys.data() + head_dim, values.data() + head_dim, first,
                     last, scores.data(), want.data());
        for (const auto& [name, attend] : paths) {
          attend(head, group, q.data(), keys.data() + head_dim, values.data() + head_dim, first,
                 last, scores.data(), got.data());
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_NEAR(got[i], want[i], 1e-5f + 1e-5f * std::fabs(want[i]))
                << name << " " << what << " at " << i;
          for (int g = 0; g < group; ++g) {
            attend(head, 1, q.data() + g * head_dim, keys.data() + head_dim,
                   values.data() + head_dim, first, last, scores.data(), alone.data());
            ASSERT_EQ(
                std::memcmp(alone.data(), got.data() + g * head_dim, sizeof(float) * head_dim), 0)
                << name << " " << what << ": head " << g << " differs alone and in its group";
          }
        }
      }
    }
  }
}

// Scores given for `group` heads' positions [first, first + scored) (rows of last + 1) that put
// all the weight on position `chosen`.
std::vector<float> ScoresOnOnePosition(int group, int first, int last, int scored, int chosen) {
  std::vector<float> scores(static_cast<size_t>(group * (last + 1)));
  for (int g = 0; g < group; ++g)
    for (int t = first; t < first + scored; ++t)
      scores[static_cast<size_t>(g * (last + 1) + t)] = t == chosen ? 1000.0f : -1000.0f;
  return scores;
}

// The instruction sets this CPU runs whose kernel table has `kernel` (the AVX-512 one must).
template <typename Fn>
std::vector<Isa> IsasWithKernel(Fn KernelTable::*kernel) {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512Vnni})
    if (IsaSupported(isa) && KernelTable::For(isa).*kernel) isas.push_back(isa);
  if (IsaSupported(Isa::kAvx512Vnni)) {
    EXPECT_NE(KernelTable::For(Isa::kAvx512Vnni).*kernel, nullptr);
  }
  return isas;
}

// The cases the shared-scores tests run, for a head size and cache stride: soft-capping or not,
// windows from 0 and later (the later one on a ring), each of `ahead` positions scored ahead
// (where the window has that many); fn(head, first, last, scored, what).
template <typename Fn>
void ForEachSharedScoresCase(int head_dim, int64_t stride, std::initializer_list<int> ahead,
                             Fn fn) {
  for (float softcap : {0.0f, 30.0f}) {
    for (auto [first, last, ring] :
         {std::tuple{0, 199, 0}, std::tuple{0, 40, 0}, std::tuple{150, 199, 64}}) {
      std::vector<int> counts(ahead);
      counts.push_back(last - first + 1);  // every position
      for (int scored : counts) {
        if (scored > last - first + 1) continue;
        AttentionHead head{head_dim, stride, 1.0f / std::sqrt(static_cast<float>(head_dim)),
                           softcap};
        head.ring = ring;
        const std::string what = "head_dim " + std::to_string(head_dim) + " softcap " +
                                 std::to_string(softcap) + " window " + std::to_string(first) +
                                 ".." + std::to_string(last) + " ring " + std::to_string(ring) +
                                 " scored " + std::to_string(scored);
        fn(head, first, last, scored, what);
      }
    }
  }
}

// Head i's query at q + i x head_dim and its scores row at scores + i x span, as the shared
// scores take them.
void SharedScoreRows(int heads, int head_dim, int64_t span, const float* q, float* scores,
                     std::vector<const float*>* queries, std::vector<float*>* rows) {
  for (int i = 0; i < heads; ++i) {
    queries->push_back(q + i * head_dim);
    rows->push_back(scores + i * span);
  }
}

// Scores computed once for many query heads (SharedScoresFn: the heads of n samples over the
// prompt they share, a prefill chunk's tokens over the positions before it) and handed to the
// attend kernel (AttentionHead::scored) give each head the result that kernel computes alone,
// bit for bit, for every kernel table that has them (the AVX-512 one must): head sizes taken in
// registers (16 to 256, 512) and handed to the scalar path (24, 384), with and without
// soft-capping, windows from 0 and later, over a ring, 1 to all positions scored ahead; 9 heads of
// 3 vectors, so that the kernel's pairs of heads leave one over. Scores of order 1 (unit keys and
// queries): where all are near 0, every e^score rounds to 1 and a wrong score goes unseen.
TEST(Attention, SharedScoresGiveEachHeadItsOwnResultBitForBit) {
  const std::vector<Isa> isas = IsasWithKernel(&KernelTable::shared_scores);
  std::mt19937 rng(12);
  std::normal_distribution<float> dist(0, 1);
  const int group = 3, vectors = 3, heads = group * vectors, positions = 200, kv_heads = 2;
  for (int head_dim : {16, 32, 64, 256, 24, 512, 384}) {
    const int64_t stride = static_cast<int64_t>(kv_heads) * head_dim;
    std::vector<float> keys(static_cast<size_t>(positions * stride)), values(keys.size()),
        q(static_cast<size_t>(heads * head_dim));
    for (auto& v : keys) v = dist(rng);
    for (auto& v : values) v = dist(rng);
    for (auto& v : q) v = dist(rng);
    ForEachSharedScoresCase(
        head_dim, stride, {1, 15, 16, 17, 40},
        [&](const AttentionHead& head, int first, int last, int scored, const std::string& what) {
          const int64_t span = last + 1;
          for (Isa isa : isas) {
            const KernelTable& k = KernelTable::For(isa);
            std::vector<float> scratch(static_cast<size_t>(group * span)), want(q.size());
            for (int v = 0; v < vectors; ++v)
              k.attend(head, group, q.data() + v * group * head_dim, keys.data() + head_dim,
                       values.data() + head_dim, first, last, scratch.data(),
                       want.data() + v * group * head_dim);
            // Head i's scores at i x span: vector v's heads at v x group x span, as attend lays out
            // its own.
            std::vector<float> scores(static_cast<size_t>(heads * span)), got(q.size());
            std::vector<const float*> queries;
            std::vector<float*> rows;
            SharedScoreRows(heads, head_dim, span, q.data(), scores.data(), &queries, &rows);
            k.shared_scores(head, heads, queries.data(), keys.data() + head_dim, first,
                            first + scored - 1, rows.data());
            AttentionHead with_scores = head;
            with_scores.scored = scored;
            for (int v = 0; v < vectors; ++v)
              k.attend(with_scores, group, q.data() + v * group * head_dim, keys.data() + head_dim,
                       values.data() + head_dim, first, last, scores.data() + v * group * span,
                       got.data() + v * group * head_dim);
            ASSERT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * got.size()), 0)
                << IsaName(isa) << " " << what;
          }
        });
  }
}

// The same over a Q8_0 cache: the shared scores (SharedScoresQ8_0Fn) of 9 heads give each head
// the output attend_q8_0 gives it alone, bit for bit, on every table that has them (the AVX-512
// one required): head sizes of 1 to 8 blocks and 16 (Gemma 4's 512), and 12 (head by head),
// soft-capping, windows from 0 and later, a ring, 1 to all positions scored ahead.
TEST(Attention, SharedQ8_0ScoresGiveEachHeadItsOwnResultBitForBit) {
  const std::vector<Isa> isas = IsasWithKernel(&KernelTable::shared_scores_q8_0);
  std::mt19937 rng(14);
  std::normal_distribution<float> dist(0, 1);
  const int group = 3, vectors = 3, heads = group * vectors, positions = 200, kv_heads = 2;
  for (int head_dim : {32, 64, 128, 256, 512, 384}) {
    const int64_t stride = static_cast<int64_t>(kv_heads) * head_dim, block_stride = stride / kQK;
    std::vector<float> raw(static_cast<size_t>(positions * stride));
    std::vector<BlockQ8_0> keys(raw.size() / kQK), values(keys.size());
    for (auto& v : raw) v = dist(rng);
    QuantizeRowQ8_0(raw.data(), keys.data(), static_cast<int64_t>(raw.size()));
    for (auto& v : raw) v = dist(rng);
    QuantizeRowQ8_0(raw.data(), values.data(), static_cast<int64_t>(raw.size()));
    std::vector<float> q(static_cast<size_t>(heads * head_dim));
    for (auto& v : q) v = 3 * dist(rng);
    const BlockQ8_0* k1 = keys.data() + head_dim / kQK;  // KV head 1
    const BlockQ8_0* v1 = values.data() + head_dim / kQK;
    ForEachSharedScoresCase(
        head_dim, stride, {1, 16, 17},
        [&](const AttentionHead& head, int first, int last, int scored, const std::string& what) {
          const int64_t span = last + 1;
          for (Isa isa : isas) {
            const KernelTable& k = KernelTable::For(isa);
            std::vector<float> scratch(static_cast<size_t>(group * span)), want(q.size());
            for (int v = 0; v < vectors; ++v)
              k.attend_q8_0(head, group, q.data() + v * group * head_dim, k1, v1, block_stride,
                            first, last, scratch.data(), want.data() + v * group * head_dim);
            std::vector<float> scores(static_cast<size_t>(heads * span)), got(q.size());
            std::vector<const float*> queries;
            std::vector<float*> rows;
            SharedScoreRows(heads, head_dim, span, q.data(), scores.data(), &queries, &rows);
            k.shared_scores_q8_0(head, heads, queries.data(), k1, block_stride, first,
                                 first + scored - 1, rows.data());
            AttentionHead with_scores = head;
            with_scores.scored = scored;
            for (int v = 0; v < vectors; ++v)
              k.attend_q8_0(with_scores, group, q.data() + v * group * head_dim, k1, v1,
                            block_stride, first, last, scores.data() + v * group * span,
                            got.data() + v * group * head_dim);
            ASSERT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * got.size()), 0)
                << IsaName(isa) << " " << what;
          }
        });
  }
}

// Every Q8_0-cache kernel takes given scores (AttentionHead::scored) as they are: scores that
// put all the weight on one position give that position's (dequantized) values.
TEST(Attention, GivenScoresAreTakenAsTheyAreOverAQ8_0Cache) {
  std::vector<std::pair<const char*, AttendQ8_0Fn>> paths = {
      {"scalar", &AttendQ8_0Heads<&DotQ8_0Scalar>}};
  if (IsaSupported(Isa::kAvx2)) paths.emplace_back("avx2", &AttendQ8_0Avx2);
  if (IsaSupported(Isa::kAvx512Vnni)) paths.emplace_back("avx512", &AttendQ8_0Avx512);
  std::mt19937 rng(15);
  std::normal_distribution<float> dist(0, 1);
  const int head_dim = 64, group = 2, first = 0, last = 99, scored = 37, chosen = 20;
  std::vector<float> raw(static_cast<size_t>((last + 1) * head_dim)), q(group * head_dim);
  std::vector<BlockQ8_0> keys(raw.size() / kQK), values(keys.size());
  for (auto& v : raw) v = dist(rng);
  QuantizeRowQ8_0(raw.data(), keys.data(), static_cast<int64_t>(raw.size()));
  for (auto& v : raw) v = dist(rng);
  QuantizeRowQ8_0(raw.data(), values.data(), static_cast<int64_t>(raw.size()));
  for (auto& v : q) v = dist(rng);
  AttentionHead head{head_dim, head_dim, 1.0f / 8, 0.0f};
  head.scored = scored;
  for (const auto& [name, attend] : paths) {
    std::vector<float> scores = ScoresOnOnePosition(group, first, last, scored, chosen),
                       out(q.size());
    attend(head, group, q.data(), keys.data(), values.data(), head_dim / kQK, first, last,
           scores.data(), out.data());
    for (int g = 0; g < group; ++g)
      for (int i = 0; i < head_dim; ++i) {
        const BlockQ8_0& b = values[static_cast<size_t>((chosen * head_dim + i) / kQK)];
        ASSERT_NEAR(out[g * head_dim + i], Fp16ToFp32(b.d) * b.qs[i % kQK], 1e-4f)
            << name << " head " << g << " at " << i;
      }
  }
}

// Every float-cache kernel takes the scores it is given as they are (AttentionHead::scored),
// those of kernel tables without shared scores (AVX2) too: one given score far above the rest
// puts all the weight on its position's values.
TEST(Attention, GivenScoresAreTakenAsTheyAre) {
  std::vector<std::pair<const char*, AttendFn>> paths = {{"scalar", &AttendScalar}};
  if (IsaSupported(Isa::kAvx2)) paths.emplace_back("avx2", &AttendAvx2);
  if (IsaSupported(Isa::kAvx512Vnni)) paths.emplace_back("avx512", &AttendAvx512);
  std::mt19937 rng(13);
  std::normal_distribution<float> dist(0, 1);
  const int head_dim = 64, group = 2, first = 0, last = 99, scored = 37, chosen = 20;
  std::vector<float> keys(static_cast<size_t>((last + 1) * head_dim)), values(keys.size()),
      q(static_cast<size_t>(group * head_dim));
  for (auto& v : keys) v = dist(rng);
  for (auto& v : values) v = dist(rng);
  for (auto& v : q) v = dist(rng);
  AttentionHead head{head_dim, head_dim, 1.0f / 8, 0.0f};
  head.scored = scored;
  for (const auto& [name, attend] : paths) {
    std::vector<float> scores = ScoresOnOnePosition(group, first, last, scored, chosen),
                       out(q.size());
    attend(head, group, q.data(), keys.data(), values.data(), first, last, scores.data(),
           out.data());
    for (int g = 0; g < group; ++g)
      for (int i = 0; i < head_dim; ++i)
        ASSERT_NEAR(out[g * head_dim + i], values[chosen * head_dim + i], 1e-5f)
            << name << " head " << g << " at " << i;
  }
}

// Attention over a Q8_0 cache: the AVX2 and AVX-512 kernels against the scalar oracle (AttendQ8_0
// head by head, the scalar block dot), over whole and partial windows, a ring, and a shared prompt
// read from another sequence's rows; head sizes it takes (multiples of 32 up to 256, and 512) and
// ones it hands back (48, 288, 384); a group of five whose heads each equal what they are alone,
// bit for bit.
TEST(Attention, Q8_0CacheSimdPathEqualsTheScalarOracle) {
  std::vector<std::pair<const char*, AttendQ8_0Fn>> paths;
  if (IsaSupported(Isa::kAvx2)) paths.emplace_back("avx2", &AttendQ8_0Avx2);
  if (IsaSupported(Isa::kAvx512Vnni)) paths.emplace_back("avx512", &AttendQ8_0Avx512);
  if (paths.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0, 1);
  const int group = 5;
  for (int head_dim : {64, 32, 128, 256, 96, 48, 288, 512, 384}) {
    for (float softcap : {0.0f, 50.0f}) {
      // Two sequences of `positions` rows each, two KV heads per row; the kernel reads the
      // second KV head of sequence 1.
      const int positions = 300, kv_heads = 2;
      const int64_t kv_dim = static_cast<int64_t>(kv_heads) * head_dim, row_blocks = kv_dim / kQK;
      std::vector<float> row(static_cast<size_t>(kv_dim));
      std::vector<BlockQ8_0> keys(static_cast<size_t>(2 * positions * row_blocks)),
          values(keys.size());
      for (auto* cache : {&keys, &values})
        for (int r = 0; r < 2 * positions; ++r) {
          for (auto& v : row) v = dist(rng);
          QuantizeRowQ8_0(row.data(), cache->data() + r * row_blocks, kv_dim);
        }
      std::vector<float> q(static_cast<size_t>(group * head_dim));
      for (auto& v : q) v = dist(rng) * 2;
      const int64_t seq1 = positions * row_blocks + head_dim / kQK;  // blocks
      // (first, last, ring, prefix): windows as in the float test, and a prompt of 40 positions
      // shared from sequence 0.
      for (auto [first, last, ring, prefix] :
           {std::tuple{0, 299, 0, 0}, std::tuple{37, 299, 0, 0}, std::tuple{295, 299, 0, 0},
            std::tuple{100, 116, 0, 0}, std::tuple{7, 7, 0, 0}, std::tuple{250, 299, 64, 0},
            std::tuple{0, 120, 0, 40}}) {
        AttentionHead head{head_dim, kv_dim, 1.0f / std::sqrt(static_cast<float>(head_dim)),
                           softcap};
        head.ring = ring;
        head.prefix = prefix;
        head.prefix_offset = prefix > 0 ? -static_cast<int64_t>(positions) * kv_dim : 0;
        const std::string what = "head_dim " + std::to_string(head_dim) + " softcap " +
                                 std::to_string(softcap) + " window " + std::to_string(first) +
                                 ".." + std::to_string(last) + " ring " + std::to_string(ring) +
                                 " prefix " + std::to_string(prefix);
        const size_t span = static_cast<size_t>(last + 1);
        std::vector<float> scores(group * span), want(q.size()), got(q.size()), alone(head_dim);
        AttendQ8_0Heads<&DotQ8_0Scalar>(head, group, q.data(), keys.data() + seq1,
                                        values.data() + seq1, row_blocks, first, last,
                                        scores.data(), want.data());
        for (const auto& [name, attend] : paths) {
          attend(head, group, q.data(), keys.data() + seq1, values.data() + seq1, row_blocks, first,
                 last, scores.data(), got.data());
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_NEAR(got[i], want[i], 1e-5f + 1e-5f * std::fabs(want[i]))
                << name << " " << what << " at " << i;
          for (int g = 0; g < group; ++g) {
            attend(head, 1, q.data() + g * head_dim, keys.data() + seq1, values.data() + seq1,
                   row_blocks, first, last, scores.data(), alone.data());
            ASSERT_EQ(
                std::memcmp(alone.data(), got.data() + g * head_dim, sizeof(float) * head_dim), 0)
                << name << " " << what << ": head " << g << " differs alone and in its group";
          }
        }
      }
    }
  }
}

TEST(Gguf, ReadsTheSharedModelsAndRejectsDamagedCopies) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  auto f = GgufFile::Open(Models() + "/stories260K-q8_0.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->version(), 3u);
  EXPECT_EQ((*f)->GetString("general.architecture"), "llama");
  EXPECT_EQ((*f)->FindTensor("token_embd.weight")->type, GgmlType::kQ8_0);
  auto bytes = ReadFileBounded(Models() + "/stories260K-q8_0.gguf");
  ASSERT_TRUE(bytes.ok());
  // Every truncation point in the header and metadata, and a spread of later ones.
  std::mt19937 rng(3);
  std::vector<size_t> cuts;
  for (size_t i = 0; i < 6000 && i < bytes->size(); i += 7) cuts.push_back(i);
  for (int i = 0; i < 100; ++i) cuts.push_back(rng() % bytes->size());
  for (size_t cut : cuts) {
    auto t = GgufFile::FromBytes(bytes->substr(0, cut));
    EXPECT_FALSE(t.ok()) << "accepted a copy cut at " << cut;
  }
  // Random corruption: parsed or rejected, never a crash (the sanitizer build checks reads).
  for (int i = 0; i < 300; ++i) {
    std::string copy = bytes->substr(0, 8192);
    for (int k = 0; k < 4; ++k) copy[rng() % copy.size()] = static_cast<char>(rng());
    (void)GgufFile::FromBytes(copy);
  }
}

TEST(Gguf, HostileHeaders) {
  auto header = [](uint32_t version, uint64_t tensors, uint64_t kv) {
    std::string s("GGUF", 4);
    s.append(reinterpret_cast<const char*>(&version), 4);
    s.append(reinterpret_cast<const char*>(&tensors), 8);
    s.append(reinterpret_cast<const char*>(&kv), 8);
    return s;
  };
  EXPECT_FALSE(GgufFile::FromBytes("").ok());
  EXPECT_FALSE(GgufFile::FromBytes("GGML....").ok());
  EXPECT_FALSE(GgufFile::FromBytes(header(9, 0, 0)).ok());
  EXPECT_TRUE(GgufFile::FromBytes(header(3, 0, 0)).ok());
  EXPECT_FALSE(GgufFile::FromBytes(header(3, 1ull << 60, 0)).ok());
  EXPECT_FALSE(GgufFile::FromBytes(header(3, 0, 1ull << 62)).ok());
  // A string whose length runs past the end; an array claiming 2^40 elements.
  std::string s = header(3, 0, 1);
  uint64_t klen = 3, vlen = 1ull << 40;
  uint32_t t_string = 8, t_array = 9, t_u8 = 0;
  std::string k = s;
  k.append(reinterpret_cast<const char*>(&klen), 8)
      .append("key")
      .append(reinterpret_cast<const char*>(&t_string), 4);
  k.append(reinterpret_cast<const char*>(&vlen), 8);
  EXPECT_FALSE(GgufFile::FromBytes(k).ok());
  std::string a = s;
  a.append(reinterpret_cast<const char*>(&klen), 8)
      .append("arr")
      .append(reinterpret_cast<const char*>(&t_array), 4);
  a.append(reinterpret_cast<const char*>(&t_u8), 4).append(reinterpret_cast<const char*>(&vlen), 8);
  EXPECT_FALSE(GgufFile::FromBytes(a).ok());
}

TEST(Gguf, WriterRoundTripAndTensorBounds) {
  GgufWriter w;
  GgufValue arch;
  arch.type = GgufType::kString;
  arch.s = "llama";
  w.SetMetadata("general.architecture", arch);
  std::string data(64 * 4, '\0');
  w.AddTensor("t", GgmlType::kF32, {64}, data);
  std::string path = "/tmp/evald-gguf-" + RandomHex(4) + ".gguf";
  ASSERT_TRUE(w.Write(path).ok());
  auto f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->FindTensor("t")->bytes, 256u);
  auto bytes = ReadFileBounded(path);
  std::filesystem::remove(path);
  // Chop the tensor data: the tensor now lies outside the file.
  EXPECT_FALSE(GgufFile::FromBytes(bytes->substr(0, bytes->size() - 100)).ok());
}

TEST(Quantize, BitIdenticalToLlamaCppFiles) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  for (auto [type, name] :
       {std::pair{GgmlType::kQ8_0, "q8_0"}, std::pair{GgmlType::kQ4_0, "q4_0"}}) {
    std::string out = "/tmp/evald-quant-" + RandomHex(4) + ".gguf";
    auto n = QuantizeModel(Models() + "/stories260K-f32.gguf", out, type);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, 31);  // every 2-D weight but ffn_down (172 columns), the embedding included
    auto mine = GgufFile::Open(out);
    auto ref = GgufFile::Open(Models() + "/stories260K-" + name + ".gguf");
    ASSERT_TRUE(mine.ok() && ref.ok());
    ASSERT_EQ((*mine)->tensors().size(), (*ref)->tensors().size());
    for (const auto& t : (*mine)->tensors()) {
      const GgufTensor* r = (*ref)->FindTensor(t.name);
      ASSERT_NE(r, nullptr) << t.name;
      EXPECT_EQ(t.type, r->type) << t.name;
      ASSERT_EQ(t.bytes, r->bytes) << t.name;
      EXPECT_EQ(std::memcmp(t.data, r->data, t.bytes), 0) << name << " " << t.name << " differs";
    }
    std::filesystem::remove(out);
  }
}

// Byte-level BPE loses nothing: any byte string (invalid UTF-8 included) splits into pieces that
// concatenate back to it and encodes to tokens that decode back to it.
TEST(Tokenizer, BpeRoundTripsArbitraryBytes) {
  std::string vocab = "/tmp/evald-bpe-roundtrip-" + RandomHex(4) + ".gguf";
  ASSERT_TRUE(
      WriteBpeVocabulary("qwen2", "module TopModule endmodule assign always begin end", 40, vocab)
          .ok());
  auto file = GgufFile::Open(vocab);
  ASSERT_TRUE(file.ok());
  auto tok = LoadTokenizer(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  std::mt19937_64 rng(7);
  for (const char* pre : {"qwen2", "llama-bpe", "gpt-2", "deepseek-coder", "default"}) {
    auto splitter = PreTokenizer::ForName(pre);
    ASSERT_TRUE(splitter.ok());
    for (int i = 0; i < 300; ++i) {
      std::string s(rng() % 40, '\0');
      static constexpr char kAlphabet[] = " \n\ta1'\xc3\xa9M(";
      for (char& c : s)
        c = static_cast<char>(i % 2 ? rng() : kAlphabet[rng() % (sizeof kAlphabet - 1)]);
      std::string joined;
      for (auto piece : (*splitter)->Split(s)) joined += piece;
      ASSERT_EQ(joined, s) << pre;
      if (std::string(pre) == "qwen2") {
        ASSERT_EQ((*tok)->Decode((*tok)->Encode(s, false)), s);
      }
    }
  }
  EXPECT_FALSE(PreTokenizer::ForName("no-such-pre").ok());
  std::filesystem::remove(vocab);
}

TEST(Tokenizer, Llama2Ids) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  auto f = GgufFile::Open(Models() + "/llama-2-tiny-random.gguf");
  ASSERT_TRUE(f.ok());
  auto t = SpmTokenizer::FromGguf(**f);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->Encode("Hello world", true), (std::vector<int>{1, 15043, 3186}));
  // Digits are single tokens after a bare U+2581; unknown characters fall back to bytes.
  EXPECT_EQ(t->Encode("12345", false),
            (std::vector<int>{29871, 29896, 29906, 29941, 29946, 29945}));
  auto emoji = t->Encode("\xf0\x9f\x99\x82", false);
  EXPECT_EQ(emoji, (std::vector<int>{29871, 243, 162, 156, 133}));
  for (const char* s :
       {"module TopModule(input clk, output reg [7:0] q);", "  x\n\ty  z",
        "h\xc3\xa9llo \xe6\x97\xa5\xe6\x9c\xac", "always @(posedge clk) q <= q + 1'b1;"}) {
    EXPECT_EQ(t->Decode(t->Encode(s, true)), std::string(" ") + s) << s;
  }
}

// EVALD_ISA picks a path this CPU runs, and a name it cannot honour is refused, never replaced.
TEST(Isa, TheEnvironmentNamesAPathOrIsRefused) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512Vnni})
    EXPECT_EQ(IsaFromName(IsaName(isa)), isa);
  EXPECT_FALSE(IsaFromName("avx512").has_value());
  const Isa best = DetectIsa();
  ASSERT_EQ(unsetenv("EVALD_FORCE_SCALAR"), 0);
  struct Restore {
    ~Restore() { unsetenv("EVALD_ISA"); }
  } restore;
  ASSERT_EQ(setenv("EVALD_ISA", "scalar", 1), 0);
  EXPECT_TRUE(CheckIsaOverride().ok());
  EXPECT_EQ(DetectIsa(), Isa::kScalar);
  ASSERT_EQ(setenv("EVALD_ISA", "sse4", 1), 0);
  EXPECT_NE(CheckIsaOverride().message().find("names no kernel path"), std::string::npos);
  EXPECT_EQ(DetectIsa(), best);  // what start-up refuses, a library call does not take
  for (Isa isa : {Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512Vnni}) {
    ASSERT_EQ(setenv("EVALD_ISA", IsaName(isa), 1), 0);
    EXPECT_EQ(CheckIsaOverride().ok(), IsaSupported(isa)) << IsaName(isa);
    EXPECT_EQ(DetectIsa(), IsaSupported(isa) ? isa : best) << IsaName(isa);
  }
}

class Stories : public ::testing::TestWithParam<std::tuple<std::string, Isa>> {};

TEST_P(Stories, GreedyDecodingReproducesTheKnownText) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  auto [file, isa] = GetParam();
  if (!IsaSupported(isa)) GTEST_SKIP() << IsaName(isa) << " is not available on this CPU";
  auto model = LlamaModel::Load(Models() + "/stories260K-" + file + ".gguf");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto tok = SpmTokenizer::FromGguf((*model)->file());
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ(tok->Encode("Once upon a time", true), (std::vector<int>{1, 403, 407, 261, 378}));
  GenerateOptions o;
  o.max_tokens = 64;
  o.isa = isa;
  auto out = Generate(**model, *tok, "Once upon a time", o);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::string& text = (*out)[0].text;
  if (file == "q4_0") {
    // 4-bit weights diverge after about 15 tokens (as in llama.cpp); the start still agrees.
    EXPECT_EQ(text.substr(0, 40), std::string(kKnownText).substr(0, 40)) << text;
  } else {
    EXPECT_EQ(text.substr(0, std::strlen(kKnownText)), kKnownText) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, Stories,
                         ::testing::Combine(::testing::Values("f32", "q8_0", "q4_0"),
                                            ::testing::Values(Isa::kScalar, Isa::kAvx2,
                                                              Isa::kAvxVnni, Isa::kAvx512Vnni)));

// A prompt prefilled in chunks (each matrix streamed once per chunk) leaves the same logits and
// the same cache, bit for bit, as feeding it one token at a time; on every kernel path.
TEST(Prefill, ChunksAreBitIdenticalToOneTokenAtATime) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  for (const char* file :
       {"/stories260K-q8_0.gguf", "/stories260K-q4_0.gguf", "/stories260K-f32.gguf"}) {
    auto model = LlamaModel::Load(Models() + file);
    ASSERT_TRUE(model.ok());
    auto tok = SpmTokenizer::FromGguf((*model)->file());
    ASSERT_TRUE(tok.ok());
    std::vector<int> prompt = tok->Encode(
        "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
        "park with her friends and her dog.",
        true);
    ASSERT_GT(prompt.size(), 2u * LlamaSession::kPrefillChunk);
    const int vocab = (*model)->config().vocab, n = static_cast<int>(prompt.size());
    for (Isa isa : {Isa::kScalar, DetectIsa()}) {
      LlamaSession one(**model, n + 1, KernelTable::For(isa)),
          chunked(**model, n + 1, KernelTable::For(isa));
      const float* a = nullptr;
      for (int i = 0; i < n; ++i) a = *one.Forward(prompt[i], i);
      const float* b = nullptr;
      for (int i = 0; i < n; i += LlamaSession::kPrefillChunk) {
        auto l =
            chunked.Prefill(prompt.data() + i, std::min(LlamaSession::kPrefillChunk, n - i), i);
        ASSERT_TRUE(l.ok()) << l.status().ToString();
        b = *l;
      }
      ASSERT_EQ(std::memcmp(a, b, sizeof(float) * vocab), 0) << file << " " << IsaName(isa);
      // The caches agree too: the next step is identical.
      a = *one.Forward(1, n);
      b = *chunked.Forward(1, n);
      ASSERT_EQ(std::memcmp(a, b, sizeof(float) * vocab), 0) << file << " " << IsaName(isa);
    }
    LlamaSession s(**model, 8, KernelTable::For(DetectIsa()));
    EXPECT_FALSE(s.Prefill(prompt.data(), LlamaSession::kPrefillChunk + 1, 0).ok());
    EXPECT_FALSE(s.Prefill(prompt.data(), 4, 6).ok());  // beyond the session's 8 positions
  }
}

// Sliding layers keep a ring of their window and one prefill chunk: over a prompt several
// rings long, chunked prefill, one token at a time and an n-sequence batch sharing the prompt
// agree bit for bit (gemma2/3/4 with windows of 3 to 5 positions, rings of 18 to 20).
TEST(SlidingWindowRing, PrefillForwardAndSharedBatchesAgreeOverManyRings) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  for (const char* arch : {"gemma2", "gemma3", "gemma4"}) {
    RandomModelShape shape;
    shape.architecture = arch;
    shape.dim = 64;
    shape.heads = 2;
    shape.kv_heads = 1;
    shape.hidden = 64;
    shape.layers = 6;
    shape.head_dim = 32;
    shape.sliding_window = std::string(arch) == "gemma2" ? 3 : 5;
    shape.head_dim_swa = 32;
    shape.kv_heads_swa = 2;
    auto model = LoadRandomModel(shape, "ring");
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    const int n = 70, vocab = (*model)->config().vocab;
    std::vector<int> prompt;
    for (int i = 0; i < n; ++i) prompt.push_back(1 + (i * 37) % (vocab - 1));
    const KernelTable& scalar = KernelTable::For(Isa::kScalar);
    LlamaSession one(**model, n + 2, scalar), chunked(**model, n + 2, scalar);
    LlamaSession batch(**model, n + 2, scalar, 3);
    int64_t full_cache = 0;  // what keeping every position on every layer would take
    for (const LayerShape& l : (*model)->config().layer)
      full_cache += 2 * 4LL * (n + 2) * l.kv_dim();
    EXPECT_LT(one.kv_cache_bytes(), full_cache) << arch << ": the rings are smaller";
    const float* a = nullptr;
    for (int i = 0; i < n; ++i) a = *one.Forward(prompt[i], i);
    const float* b = nullptr;
    for (int i = 0; i < n; i += LlamaSession::kPrefillChunk) {
      const int count = std::min(LlamaSession::kPrefillChunk, n - i);
      b = *chunked.Prefill(prompt.data() + i, count, i);
      ASSERT_TRUE(batch.Prefill(prompt.data() + i, count, i).ok());
    }
    ASSERT_EQ(std::memcmp(a, b, sizeof(float) * vocab), 0) << arch;
    batch.ShareFirstSequence(n);
    const int next[3] = {5, 5, 5};
    a = *one.Forward(5, n);
    const float* c = *batch.ForwardBatch(next, n);
    for (int s = 0; s < 3; ++s)
      ASSERT_EQ(std::memcmp(a, c + s * vocab, sizeof(float) * vocab), 0) << arch << " seq " << s;
  }
}

// 8 query heads over 2 KV heads of 32 (grouped-query attention), 256 wide, weights of `type`.
RandomModelShape GroupedQueryShape(GgmlType type) {
  RandomModelShape shape;
  shape.dim = 256;
  shape.heads = 8;
  shape.kv_heads = 2;
  shape.head_dim = 32;
  shape.hidden = 128;
  shape.weight_type = type;
  return shape;
}

// The instruction sets whose kernels this CPU runs: scalar, AVX2, AVX-512 VNNI.
std::vector<Isa> IsasHere() {
  std::vector<Isa> isas = {Isa::kScalar};
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512Vnni})
    if (IsaSupported(isa)) isas.push_back(isa);
  return isas;
}

// A gemma3 shape small enough for any test: 6 layers, 5 of them sliding with windows of
// `window` (rings of window + 16), 4 query heads over 2 KV heads of 32.
RandomModelShape SmallSlidingShape(int window) {
  RandomModelShape shape;
  shape.architecture = "gemma3";
  shape.dim = 64;
  shape.heads = 4;
  shape.kv_heads = 2;
  shape.hidden = 64;
  shape.layers = 6;
  shape.head_dim = 32;
  shape.sliding_window = window;
  shape.head_dim_swa = 32;
  shape.kv_heads_swa = 2;
  return shape;
}

// A session of `sequences` over `positions`, `prompt` prefilled in chunks on sequence 0 and
// shared with the others (which copies nothing: they read sequence 0's rows).
std::unique_ptr<LlamaSession> PrefilledSession(const LlamaModel& model,
                                               const std::vector<int>& prompt, int positions,
                                               const KernelTable& kernels, int sequences,
                                               KvCacheType kv) {
  auto session = std::make_unique<LlamaSession>(model, positions, kernels, sequences, nullptr, kv);
  const int n = static_cast<int>(prompt.size());
  for (int i = 0; i < n; i += LlamaSession::kPrefillChunk)
    EXPECT_TRUE(
        session->Prefill(prompt.data() + i, std::min(LlamaSession::kPrefillChunk, n - i), i).ok());
  const int64_t written = session->kv_cache_resident_bytes();
  session->ShareFirstSequence(n);
  EXPECT_EQ(session->kv_cache_resident_bytes(), written) << "the prompt shared, not copied";
  return session;
}

// The scalar kernel table and this CPU's (where it is another).
std::vector<const KernelTable*> ScalarAndDetectedTables() {
  std::vector<const KernelTable*> tables = {&KernelTable::For(Isa::kScalar)};
  if (DetectIsa() != Isa::kScalar) tables.push_back(&KernelTable::For(DetectIsa()));
  return tables;
}

// Sliding layers read the shared prompt from sequence 0's ring as the full layers do: sequences
// decoding well past their rings' wrap (prompts shorter than the window, shorter than the ring
// and several rings long) give the logits each gets alone, bit for bit, through the scalar and
// this CPU's kernels and both caches, while some finish early; the other sequences write only
// the positions after the prompt (KvCacheBytes counts that).
TEST(SlidingWindowRing, SequencesShareThePromptInTheirRingsAsTheyDecode) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  auto model = LoadRandomModel(SmallSlidingShape(5), "shared-ring");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const LlamaConfig& c = (*model)->config();
  const int vocab = c.vocab, batch = 3, steps = 30;
  for (int n : {3, 10, 70}) {
    std::vector<int> prompt;
    for (int i = 0; i < n; ++i) prompt.push_back(1 + (i * 29) % (vocab - 1));
    for (const KernelTable* kernels : ScalarAndDetectedTables()) {
      for (KvCacheType kv : {KvCacheType::kF32, KvCacheType::kQ8_0}) {
        const std::string what = std::to_string(n) + "-token prompt, " + IsaName(kernels->isa) +
                                 ", " + KvCacheTypeName(kv);
        auto prefilled = [&](int sequences) {
          return PrefilledSession(**model, prompt, n + steps, *kernels, sequences, kv);
        };
        auto together = prefilled(batch);
        std::vector<std::unique_ptr<LlamaSession>> alone;
        for (int s = 0; s < batch; ++s) alone.push_back(prefilled(1));
        for (int step = 0; step < steps; ++step) {
          // Sequence 0 (whose ring the others read the prompt from) finishes at step 20.
          std::vector<int> running = step < 20 ? std::vector<int>{0, 1, 2} : std::vector<int>{1, 2};
          std::vector<int> tokens;
          for (int s : running) tokens.push_back(2 + (7 * s + 13 * step) % (vocab - 2));
          auto b = together->ForwardSequences(tokens.data(), running.data(),
                                              static_cast<int>(running.size()), n + step);
          ASSERT_TRUE(b.ok()) << b.status().ToString();
          for (size_t i = 0; i < running.size(); ++i) {
            auto a = alone[running[i]]->Forward(tokens[i], n + step);
            ASSERT_TRUE(a.ok());
            ASSERT_EQ(std::memcmp(*a, *b + i * vocab, sizeof(float) * vocab), 0)
                << what << ": sequence " << running[i] << " at step " << step;
          }
        }
      }
    }
  }
  EXPECT_EQ(KvCacheBytes(c, KvCacheType::kF32, 100, 3, 100),
            KvCacheBytes(c, KvCacheType::kF32, 100, 1))
      << "nothing written after the prompt: one sequence's cache";
  EXPECT_LT(KvCacheBytes(c, KvCacheType::kF32, 100, 3, 90),
            KvCacheBytes(c, KvCacheType::kF32, 100, 3, 0));
}

// A sequence that took another's rows (CopySequence: a sample computed as another until the two
// drew different tokens) continues as a session fed the same tokens alone would, bit for bit:
// copies after fewer positions than a ring holds and after several rings' worth, with both
// caches, through the scalar and this CPU's kernels; bad copies are refused.
TEST(SharedPrompt, ACopiedSequenceContinuesAsItsSourceWould) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  auto model = LoadRandomModel(SmallSlidingShape(4), "copy");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const int vocab = (*model)->config().vocab, n = 12, batch = 3;
  std::vector<int> prompt;
  for (int i = 0; i < n; ++i) prompt.push_back(1 + (i * 31) % (vocab - 1));
  auto token = [&](int s, int step) { return 2 + (5 * s + 17 * step) % (vocab - 2); };
  for (int together : {3, 45}) {  // steps computed on sequence 0 alone (rings of 20)
    for (const KernelTable* kernels : ScalarAndDetectedTables()) {
      for (KvCacheType kv : {KvCacheType::kF32, KvCacheType::kQ8_0}) {
        const std::string what = std::to_string(together) + " steps as one, " +
                                 IsaName(kernels->isa) + ", " + KvCacheTypeName(kv);
        const int steps = together + 8, positions = n + steps;
        auto prefilled = [&](int sequences) {
          return PrefilledSession(**model, prompt, positions, *kernels, sequences, kv);
        };
        auto session = prefilled(batch);
        std::vector<std::unique_ptr<LlamaSession>> alone;
        for (int s = 0; s < batch; ++s) alone.push_back(prefilled(1));
        const int first[1] = {0}, all[3] = {0, 1, 2};
        for (int step = 0; step < steps; ++step) {
          const int pos = n + step;
          if (step == together) {  // the three part: 1 and 2 take sequence 0's rows
            ASSERT_TRUE(session->CopySequence(0, 1, n, pos).ok());
            ASSERT_TRUE(session->CopySequence(0, 2, n, pos).ok());
          }
          std::vector<int> tokens;
          for (int s = 0; s < batch; ++s) tokens.push_back(token(step < together ? 0 : s, step));
          auto b = step < together ? session->ForwardSequences(tokens.data(), first, 1, pos)
                                   : session->ForwardSequences(tokens.data(), all, batch, pos);
          ASSERT_TRUE(b.ok()) << b.status().ToString();
          for (int s = 0; s < (step < together ? 1 : batch); ++s) {
            auto a = alone[s]->Forward(tokens[s], pos);
            ASSERT_TRUE(a.ok());
            ASSERT_EQ(std::memcmp(*a, *b + s * vocab, sizeof(float) * vocab), 0)
                << what << ": sequence " << s << " at step " << step;
          }
          // The alone sessions of 1 and 2 are fed sequence 0's tokens until they part.
          if (step < together) {
            for (int s = 1; s < batch; ++s) ASSERT_TRUE(alone[s]->Forward(tokens[0], pos).ok());
          }
        }
      }
    }
  }
  LlamaSession session(**model, n + 2, KernelTable::For(Isa::kScalar), batch);
  EXPECT_FALSE(session.CopySequence(0, 0, 0, 1).ok()) << "onto itself";
  EXPECT_FALSE(session.CopySequence(0, 3, 0, 1).ok()) << "no such sequence";
  EXPECT_FALSE(session.CopySequence(-1, 1, 0, 1).ok());
  EXPECT_FALSE(session.CopySequence(0, 1, 2, 1).ok()) << "backwards";
  EXPECT_FALSE(session.CopySequence(0, 1, 0, n + 3).ok()) << "beyond the context";
}

// A prompt shared by a batch (ShareFirstSequence: the full layers read sequence 0's rows) gives
// each sequence the logits it has alone, bit for bit, with either cache and through the scalar,
// AVX2 and AVX-512 kernels, over enough positions for several of the attention's blocks; a
// step written inside the shared prompt first copies it, and still agrees.
TEST(SharedPrompt, EverySequenceDecodesAsItDoesAlone) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  auto model = LoadRandomModel(GroupedQueryShape(GgmlType::kQ8_0), "shared");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const int n = 45, steps = 4, vocab = (*model)->config().vocab;
  std::vector<int> prompt;
  for (int i = 0; i < n; ++i) prompt.push_back(1 + (i * 53) % (vocab - 1));
  for (Isa isa : IsasHere()) {
    for (KvCacheType kv : {KvCacheType::kF32, KvCacheType::kQ8_0}) {
      const std::string what =
          std::string(IsaName(isa)) + (kv == KvCacheType::kQ8_0 ? " q8_0 cache" : " f32 cache");
      const KernelTable& kernels = KernelTable::For(isa);
      LlamaSession batch(**model, n + steps + 1, kernels, 3, nullptr, kv);
      for (int i = 0; i < n; i += LlamaSession::kPrefillChunk)
        ASSERT_TRUE(
            batch.Prefill(prompt.data() + i, std::min(LlamaSession::kPrefillChunk, n - i), i).ok());
      batch.ShareFirstSequence(n);
      std::vector<std::unique_ptr<LlamaSession>> alone;
      for (int s = 0; s < 3; ++s) {
        alone.push_back(
            std::make_unique<LlamaSession>(**model, n + steps + 1, kernels, 1, nullptr, kv));
        for (int i = 0; i < n; i += LlamaSession::kPrefillChunk)
          ASSERT_TRUE(
              alone[s]
                  ->Prefill(prompt.data() + i, std::min(LlamaSession::kPrefillChunk, n - i), i)
                  .ok());
      }
      for (int step = 0; step < steps; ++step) {
        const int tokens[3] = {5 + step, 17 + 3 * step, 29 + 7 * step};
        auto b = batch.ForwardBatch(tokens, n + step);
        ASSERT_TRUE(b.ok());
        for (int s = 0; s < 3; ++s) {
          auto a = alone[s]->Forward(tokens[s], n + step);
          ASSERT_TRUE(a.ok());
          ASSERT_EQ(std::memcmp(*a, *b + s * vocab, sizeof(float) * vocab), 0)
              << what << ": sequence " << s << " at step " << step;
        }
      }
      // Inside the shared prompt: position n - 1 again, now with a different token per sequence.
      const int inside[3] = {7, 8, 9};
      auto b = batch.ForwardBatch(inside, n - 1);
      ASSERT_TRUE(b.ok());
      for (int s = 0; s < 3; ++s) {
        auto a = alone[s]->Forward(inside[s], n - 1);
        ASSERT_TRUE(a.ok());
        ASSERT_EQ(std::memcmp(*a, *b + s * vocab, sizeof(float) * vocab), 0)
            << what << ": sequence " << s << " written inside the shared prompt";
      }
    }
  }
}

// Sequences that have finished are left out of later steps (ForwardSequences): those still
// running get the logits they get alone, bit for bit, whichever others run beside them, with
// either cache and through every kernel path; sequences out of order, repeated, out of range
// or none at all are refused.
TEST(SharedPrompt, SequencesLeftOutCostNothingAndChangeNothing) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  auto model = LoadRandomModel(GroupedQueryShape(GgmlType::kQ4_0), "subset");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const int n = 37, batch = 4, vocab = (*model)->config().vocab;
  std::vector<int> prompt;
  for (int i = 0; i < n; ++i) prompt.push_back(1 + (i * 41) % (vocab - 1));
  // Who runs at each step: all, then 0 has finished, then 3, then only 1.
  const std::vector<std::vector<int>> running = {{0, 1, 2, 3}, {1, 2, 3}, {1, 2}, {1}, {1}};
  for (Isa isa : IsasHere()) {
    for (KvCacheType kv : {KvCacheType::kF32, KvCacheType::kQ8_0}) {
      const std::string what =
          std::string(IsaName(isa)) + (kv == KvCacheType::kQ8_0 ? " q8_0 cache" : " f32 cache");
      const KernelTable& kernels = KernelTable::For(isa);
      const int positions = n + static_cast<int>(running.size()) + 1;
      auto prefilled = [&](int sequences) {
        return PrefilledSession(**model, prompt, positions, kernels, sequences, kv);
      };
      auto some = prefilled(batch);
      std::vector<std::unique_ptr<LlamaSession>> alone;
      for (int s = 0; s < batch; ++s) alone.push_back(prefilled(1));
      for (size_t step = 0; step < running.size(); ++step) {
        const int pos = n + static_cast<int>(step);
        std::vector<int> tokens;
        for (int s : running[step]) tokens.push_back(3 + 11 * s + 5 * static_cast<int>(step));
        const int count = static_cast<int>(tokens.size());
        auto b = some->ForwardSequences(tokens.data(), running[step].data(), count, pos);
        ASSERT_TRUE(b.ok()) << b.status().ToString();
        for (int i = 0; i < count; ++i) {
          auto a = alone[running[step][i]]->Forward(tokens[i], pos);
          ASSERT_TRUE(a.ok());
          ASSERT_EQ(std::memcmp(*a, *b + i * vocab, sizeof(float) * vocab), 0)
              << what << ": sequence " << running[step][i] << " at step " << step;
        }
      }
    }
  }
  LlamaSession session(**model, n + 2, KernelTable::For(Isa::kScalar), batch);
  const int tokens[4] = {5, 6, 7, 8};
  for (std::vector<int> bad : {std::vector<int>{1, 0}, {2, 2}, {0, 4}, {-1, 1}}) {
    auto r = session.ForwardSequences(tokens, bad.data(), 2, 0);
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad[0] << ", " << bad[1];
  }
  const int all[5] = {0, 1, 2, 3, 4};
  EXPECT_FALSE(session.ForwardSequences(tokens, all, 0, 0).ok()) << "none";
  EXPECT_FALSE(session.ForwardSequences(tokens, all, 5, 0).ok()) << "more than the batch";
}

// The cache is reserved for every position of every sequence but committed only where rows are
// written: 8 sequences sharing a 1,000-position prompt and decoding 3 steps hold about one
// prompt and 8 x 3 rows (KvCacheBytes with the prompt shared), not 8 prompts, and not the 2,048
// positions reserved, with either cache type.
TEST(SharedPrompt, IsHeldOnceInMemory) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  RandomModelShape shape;  // 4 KV heads of 64: rows of 1 KiB (F32), four to a page
  shape.dim = 256;
  shape.heads = 4;
  shape.kv_heads = 4;
  shape.head_dim = 64;
  shape.hidden = 64;
  shape.context = 2048;
  auto model = LoadRandomModel(shape, "resident");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const LlamaConfig& c = (*model)->config();
  const int n = 1000, steps = 3, batch = 8;
  std::vector<int> prompt;
  for (int i = 0; i < n; ++i) prompt.push_back(1 + (i * 53) % (c.vocab - 1));
  for (KvCacheType kv : {KvCacheType::kF32, KvCacheType::kQ8_0}) {
    LlamaSession session(**model, 2048, KernelTable::For(DetectIsa()), batch, nullptr, kv);
    EXPECT_EQ(session.kv_cache_resident_bytes(), 0) << "nothing written yet";
    for (int i = 0; i < n; i += LlamaSession::kPrefillChunk)
      ASSERT_TRUE(
          session.Prefill(prompt.data() + i, std::min(LlamaSession::kPrefillChunk, n - i), i).ok());
    session.ShareFirstSequence(n);
    for (int step = 0; step < steps; ++step) {
      std::vector<int> tokens(batch, 5 + step);
      ASSERT_TRUE(session.ForwardBatch(tokens.data(), n + step).ok());
    }
    const int64_t held = KvCacheBytes(c, kv, n + steps, batch, n);
    // Each (layer, sequence, keys or values) block may end in part of a page at both ends.
    const int64_t pages = 2LL * c.n_layers * batch * 2 * 4096;
    const int64_t resident = session.kv_cache_resident_bytes();
    EXPECT_GE(resident, held - pages) << KvCacheTypeName(kv);
    EXPECT_LE(resident, held + pages) << KvCacheTypeName(kv);
    EXPECT_LT(resident * 4, KvCacheBytes(c, kv, n + steps, batch)) << "not a prompt per sequence";
    EXPECT_EQ(session.kv_cache_bytes(), KvCacheBytes(c, kv, 2048, batch)) << "reserved";
  }
}

// Samples that could outgrow the memory are refused before anything runs, with the figures,
// where a cache too large to reserve used to end the process (std::bad_alloc): 128 samples of a
// million positions of a long-context model against this machine's available memory, and
// small requests against a budget; within it they run.
TEST(SessionMemory, SamplesThatCouldOutgrowTheMemoryAreRefusedBeforeTheyRun) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  RandomModelShape shape;  // 4 KV heads of 16 over 2 layers: 1 KiB of F32 cache per position
  shape.dim = 64;
  shape.heads = 4;
  shape.kv_heads = 4;
  shape.hidden = 64;
  shape.context = 1 << 20;
  auto model = LoadRandomModel(shape, "long");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto tok = SpmTokenizer::FromGguf((*model)->file());
  ASSERT_TRUE(tok.ok());
  GenerateOptions o;
  o.n = 128;
  o.max_tokens = 1'000'000;  // 128 x 1M positions x 1 KiB: 131 GB
  o.sampling.temperature = 0.8f;
  const int64_t available = AvailableMemoryBytes();
  if (available > 0 && available < 120'000'000'000) {  // else it would fit, and run for days
    auto huge = Generate(**model, *tok, "Once", o);
    ASSERT_EQ(huge.status().code(), Status::Code::kResourceExhausted) << huge.status().ToString();
    EXPECT_NE(huge.status().message().find("128 sample(s) of up to 1000002 positions need up to "
                                           "131.07 GB of KV cache (f32)"),
              std::string::npos)
        << huge.status().message();
    EXPECT_NE(huge.status().message().find("is available"), std::string::npos);
    EXPECT_NE(huge.status().message().find("q8_0"), std::string::npos);
  }
  o.n = 2;
  o.max_tokens = 4;
  o.memory_budget = 4096;
  auto over = Generate(**model, *tok, "Once", o);
  ASSERT_EQ(over.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(over.status().message().find("is the budget"), std::string::npos);
  o.memory_budget = 64 << 20;
  auto within = Generate(**model, *tok, "Once", o);
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  EXPECT_EQ(within->size(), 2u);
  o.memory_budget = -1;
  EXPECT_EQ(Generate(**model, *tok, "Once", o).status().code(), Status::Code::kInvalidArgument);
}

// stories260K at Q8_0 with its tokenizer: the small real model the sampling tests decode.
struct StoriesQ8 {
  std::unique_ptr<LlamaModel> model;
  std::unique_ptr<SpmTokenizer> tokenizer;
};

StoriesQ8 LoadStories() {
  StoriesQ8 out;
  auto model = LlamaModel::Load(Models() + "/stories260K-q8_0.gguf");
  EXPECT_TRUE(model.ok());
  if (!model.ok()) return out;
  auto tok = SpmTokenizer::FromGguf((*model)->file());
  EXPECT_TRUE(tok.ok());
  if (!tok.ok()) return out;
  out.model = std::move(*model);
  out.tokenizer = std::make_unique<SpmTokenizer>(std::move(*tok));
  return out;
}

// The sampler against the filtered softmax computed here in double, in the order the options
// document (top-k by logit, softmax with temperature, top-p: the smallest likeliest set holding
// p, min-p against the likeliest): 100,000 draws over 600 tokens (three of the draw's blocks)
// never leave the kept set and match each kept token's probability within 5 sigma (+ 3 draws);
// through the scalar weights and the widest vector ones this CPU runs (the AVX2 and AVX-512 ones
// are equal, SoftmaxWeightsMatchTheScalarOracle). Then what is not a number or infinite.
TEST(Sampling, DrawsFromTheFilteredSoftmax) {
  const int vocab = 600, draws = 100000;
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0, 2);
  std::vector<float> logits(vocab);
  for (auto& l : logits) l = dist(rng);
  logits[17] = logits[18];  // a tie
  auto expected = [&](const SamplingOptions& o) {
    std::vector<int> ids(vocab);
    for (int i = 0; i < vocab; ++i) ids[i] = i;
    std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return logits[a] > logits[b]; });
    if (o.top_k > 0) ids.resize(static_cast<size_t>(o.top_k));
    std::vector<double> p(ids.size());
    double sum = 0;
    for (size_t i = 0; i < ids.size(); ++i)
      sum += p[i] = std::exp((double{logits[ids[i]]} - logits[ids[0]]) / o.temperature);
    for (auto& v : p) v /= sum;
    size_t keep = ids.size();
    if (o.top_p < 1) {
      double cum = 0;
      for (keep = 0; keep < ids.size() && cum < o.top_p;) cum += p[keep++];
    }
    std::vector<double> out(vocab, 0.0);
    double kept = 0;
    for (size_t i = 0; i < keep; ++i)
      if (p[i] >= o.min_p * p[0]) kept += out[ids[i]] = p[i];
    for (auto& v : out) v /= kept;
    return out;
  };
  std::vector<std::pair<const char*, SoftmaxWeightsFn>> exps = {{"scalar", &SoftmaxWeightsScalar}};
  if (IsaSupported(Isa::kAvx512Vnni)) {
    exps.push_back({"avx512", &SoftmaxWeightsAvx512});
  } else if (IsaSupported(Isa::kAvx2)) {
    exps.push_back({"avx2", &SoftmaxWeightsAvx2});
  }
  for (const SamplingOptions& o :
       {SamplingOptions{0.7f, 0, 1.0f, 0.0f}, SamplingOptions{1.0f, 20, 1.0f, 0.0f},
        SamplingOptions{0.9f, 0, 0.8f, 0.0f}, SamplingOptions{1.3f, 0, 1.0f, 0.05f},
        SamplingOptions{0.8f, 50, 0.9f, 0.1f}}) {
    const std::vector<double> want = expected(o);
    for (const auto& [name, exp] : exps) {
      Sampler sampler(o, 42, exp);
      std::vector<int> count(vocab, 0);
      for (int d = 0; d < draws; ++d) {
        const int t = sampler.Sample(logits.data(), vocab);
        ASSERT_TRUE(t >= 0 && t < vocab);
        ++count[t];
      }
      const std::string what = std::string(name) + " T " + std::to_string(o.temperature) +
                               " top_k " + std::to_string(o.top_k) + " top_p " +
                               std::to_string(o.top_p) + " min_p " + std::to_string(o.min_p);
      int kept = 0;
      for (int t = 0; t < vocab; ++t) {
        const double got = static_cast<double>(count[t]) / draws;
        if (want[t] == 0) {
          EXPECT_EQ(count[t], 0) << what << ": token " << t << " is not among the kept";
          continue;
        }
        ++kept;
        // 5 sigma, and 3 draws for the rare tokens where the normal approximation fails.
        const double sigma = std::sqrt(want[t] * (1 - want[t]) / draws);
        EXPECT_NEAR(got, want[t], 5 * sigma + 3.0 / draws) << what << ": token " << t;
      }
      EXPECT_GT(kept, 5) << what;
    }
  }
  // A NaN logit is never drawn; an infinite one takes every draw; a temperature whose inverse
  // overflows is greedy.
  std::vector<float> odd = logits;
  odd[0] = std::nanf("");
  odd[599] = std::nanf("");
  Sampler plain({1.0f, 0, 1.0f, 0.0f}, 1);
  for (int d = 0; d < 2000; ++d) {
    const int t = plain.Sample(odd.data(), vocab);
    EXPECT_TRUE(t != 0 && t != 599) << t;
  }
  odd[300] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(plain.Sample(odd.data(), vocab), 300);
  Sampler cold({1e-39f, 0, 1.0f, 0.0f}, 1);
  const int greedy =
      static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  EXPECT_EQ(cold.Sample(logits.data(), vocab), greedy);
}

// top-p finds its cut from the weights' buckets and sorts only the heaviest ones; the kept set
// must be the one a full sort and walk gives, ties included (lower ids first): a flat block of
// equal weights cut in the middle, the single heaviest for a target of ~0, and a nucleus that
// reaches hundreds of tokens deep into a graded tail of light ones spread over many buckets,
// with ties (the kept set computed here by sorting every weight).
TEST(Sampling, TopPKeepsTheHeaviestTokensUpToTheCutAcrossWeightBuckets) {
  auto draw_counts = [](const std::vector<float>& logits, SamplingOptions o, int draws) {
    Sampler sampler(o, 7);
    std::vector<int> count(logits.size(), 0);
    for (int d = 0; d < draws; ++d)
      ++count[static_cast<size_t>(sampler.Sample(logits.data(), static_cast<int>(logits.size())))];
    return count;
  };
  // Flat: 400 equal weights, p = 0.5: exactly ids 0..199.
  std::vector<float> flat(400, 0.25f);
  std::vector<int> count = draw_counts(flat, {1.0f, 0, 0.5f, 0.0f}, 10000);
  for (int t = 200; t < 400; ++t) ASSERT_EQ(count[t], 0) << "token " << t << " beyond the cut";
  EXPECT_GT(count[199], 0) << "the last token of the cut never drawn";
  EXPECT_GT(count[0], 0);
  // A target of almost nothing keeps the heaviest alone; of two equal heaviest, the lower id.
  std::mt19937 rng(11);
  std::vector<float> peaked(5000);
  for (auto& l : peaked) l = std::normal_distribution<float>(0, 1)(rng);
  peaked[900] = peaked[41] = 9.0f;
  count = draw_counts(peaked, {1.0f, 0, 1e-7f, 0.0f}, 200);
  EXPECT_EQ(count[41], 200);
  // 20 heavy tokens (logit 5) among 4,000 light ones graded from 0 down to -3 (each logit
  // four times): p = 0.85 reaches hundreds of light tokens deep.
  std::vector<float> tail(4020);
  for (size_t i = 0; i < tail.size(); ++i) tail[i] = -3.0f * static_cast<float>(i % 1000) / 1000;
  for (int i = 0; i < 20; ++i) tail[static_cast<size_t>(i * 200 + 3)] = 5.0f;
  std::vector<float> w(tail.size());
  SoftmaxWeightsScalar(tail.data(), w.data(), static_cast<int64_t>(w.size()), 1.0f);
  std::vector<std::pair<float, int>> order;
  double total = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    order.emplace_back(w[i], static_cast<int>(i));
    total += w[i];
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  double cum = 0;
  size_t kept = 0;
  while (cum < 0.85 * total) cum += order[kept++].first;
  ASSERT_GT(kept, 300u);
  ASSERT_LT(kept, 1500u);
  std::vector<bool> in(tail.size(), false);
  for (size_t i = 0; i < kept; ++i) in[static_cast<size_t>(order[i].second)] = true;
  count = draw_counts(tail, {1.0f, 0, 0.85f, 0.0f}, 20000);
  int last_kept = 0;  // draws of the 50 lightest kept tokens
  for (size_t i = kept - 50; i < kept; ++i)
    last_kept += count[static_cast<size_t>(order[i].second)];
  for (size_t t = 0; t < tail.size(); ++t) {
    if (!in[t]) {
      ASSERT_EQ(count[t], 0) << "token " << t << " beyond the cut";
    }
  }
  EXPECT_GT(last_kept, 50);
}

TEST(Sampling, SeededSamplesAreReproducibleWhateverIsGeneratedWithThem) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  StoriesQ8 stories = LoadStories();
  ASSERT_TRUE(stories.tokenizer);
  auto& model = stories.model;
  auto& tok = stories.tokenizer;
  GenerateOptions o;
  o.max_tokens = 30;
  o.n = 3;
  o.seed = 100;
  o.sampling = {0.9f, 40, 0.95f, 0.05f};
  auto three = Generate(*model, *tok, "Once upon a time", o);
  ASSERT_TRUE(three.ok());
  o.n = 1;
  o.seed = 102;
  auto alone = Generate(*model, *tok, "Once upon a time", o);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ((*three)[2].tokens, (*alone)[0].tokens);
  EXPECT_NE((*three)[0].tokens, (*three)[1].tokens);  // different seeds, different samples
  // top_k = 1 is greedy.
  o.sampling = {1.0f, 1, 1.0f, 0.0f};
  auto k1 = Generate(*model, *tok, "Once upon a time", o);
  ASSERT_TRUE(k1.ok());
  EXPECT_EQ((*k1)[0].text.substr(0, 30), std::string(kKnownText).substr(0, 30));
  // Stop strings cut the text and end the sample.
  GenerateOptions s;
  s.max_tokens = 40;
  s.stop = {"Lily"};
  auto stopped = Generate(*model, *tok, "Once upon a time", s);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ((*stopped)[0].text, ", there was a little girl named ");
  EXPECT_EQ((*stopped)[0].finish_reason, "stop");
  // Threads change nothing in the result.
  GenerateOptions t;
  t.max_tokens = 40;
  t.n = 3;
  t.seed = 9;
  t.sampling = {0.8f, 0, 0.95f, 0.0f};
  auto one_thread = Generate(*model, *tok, "Once upon a time", t);
  t.threads = 3;
  auto three_threads = Generate(*model, *tok, "Once upon a time", t);
  ASSERT_TRUE(one_thread.ok() && three_threads.ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*one_thread)[i].tokens, (*three_threads)[i].tokens);
}

// Sample i of a Generate call with `options`, generated on its own (n = 1, seed + i).
Completion SampleAlone(const StoriesQ8& stories, GenerateOptions options, int i) {
  options.n = 1;
  options.seed += static_cast<uint64_t>(i);
  options.stats = nullptr;
  auto alone = Generate(*stories.model, *stories.tokenizer, "Once upon a time", options);
  EXPECT_TRUE(alone.ok()) << alone.status().ToString();
  return alone.ok() ? (*alone)[0] : Completion{};
}

// Samples that stop early leave the later steps (the others run without them) and every sample
// is still the one its seed gives alone: eight samples cut at their first full stop end at
// different lengths, each equal to the same seed generated on its own.
TEST(Sampling, SamplesThatFinishEarlyLeaveTheOthersAsTheyWere) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  StoriesQ8 stories = LoadStories();
  ASSERT_TRUE(stories.tokenizer);
  GenerateOptions o;
  o.max_tokens = 60;
  o.n = 8;
  o.seed = 31;
  o.sampling = {1.0f, 0, 1.0f, 0.0f};
  o.stop = {"."};
  auto together = Generate(*stories.model, *stories.tokenizer, "Once upon a time", o);
  ASSERT_TRUE(together.ok());
  std::set<size_t> lengths;
  for (int i = 0; i < o.n; ++i) {
    const Completion alone = SampleAlone(stories, o, i);
    EXPECT_EQ((*together)[i].tokens, alone.tokens) << "sample " << i;
    EXPECT_EQ((*together)[i].finish_reason, alone.finish_reason) << "sample " << i;
    lengths.insert((*together)[i].tokens.size());
  }
  EXPECT_GE(lengths.size(), 3u) << "the samples end at different steps";
  EXPECT_LT(*lengths.begin(), 60u);
}

// SampleGroups' plan, step by step: five samples over one prompt start as one group on sequence
// 0; a group keeps its sequence where its representative stays in it, else its first sample
// takes a copy; finished samples drop out; without merging every sample is its own vector.
TEST(Sampling, SampleGroupsPlanWhoComputesWhom) {
  SampleGroups groups(5, /*merge=*/true);
  GroupStep step;
  std::vector<bool> done(5, false);
  groups.Next({7, 7, 7, 7, 7}, done, &step);  // all drew 7: one vector
  EXPECT_TRUE(step.copies.empty());
  EXPECT_EQ(step.sequences, std::vector<int>({0}));
  EXPECT_EQ(step.tokens, std::vector<int>({7}));
  EXPECT_EQ(step.vector_of, std::vector<int>({0, 0, 0, 0, 0}));
  groups.Next({3, 4, 3, 4, 9}, done, &step);  // {0, 2} keep 0; {1, 3} and {4} copy 0's rows
  EXPECT_EQ(step.copies, (std::vector<std::pair<int, int>>{{0, 1}, {0, 4}}));
  EXPECT_EQ(step.sequences, std::vector<int>({0, 1, 4}));
  EXPECT_EQ(step.tokens, std::vector<int>({3, 4, 9}));
  EXPECT_EQ(step.vector_of, std::vector<int>({0, 1, 0, 1, 2}));
  done[1] = true;                             // 1 finished: 3 goes on alone, from 1's rows
  groups.Next({5, 0, 5, 6, 9}, done, &step);  // 0 and 2 still together
  EXPECT_EQ(step.copies, (std::vector<std::pair<int, int>>{{1, 3}}));
  EXPECT_EQ(step.sequences, std::vector<int>({0, 3, 4}));
  EXPECT_EQ(step.tokens, std::vector<int>({5, 6, 9}));
  EXPECT_EQ(step.vector_of, std::vector<int>({0, -1, 0, 1, 2}));
  SampleGroups each(3, /*merge=*/false);
  each.Next({1, 1, 1}, std::vector<bool>{false, true, false}, &step);
  EXPECT_TRUE(step.copies.empty());
  EXPECT_EQ(step.sequences, std::vector<int>({0, 2}));
  EXPECT_EQ(step.vector_of, std::vector<int>({0, -1, 1}));
}

// Samples that have drawn the same tokens so far run as one vector (SampleGroups) and part
// when they draw different ones: each sample is still the one its seed gives alone (log-probs
// included), the same as with every sample computed on its own, and fewer vectors ran; greedy
// samples never part, so n of them cost one vector a step.
TEST(Sampling, SamplesWithTheSameTokensSoFarRunAsOne) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  StoriesQ8 stories = LoadStories();
  ASSERT_TRUE(stories.tokenizer);
  GenerateOptions o;
  o.max_tokens = 40;
  o.n = 6;
  o.seed = 5;
  o.logprobs = 2;
  o.sampling = {0.5f, 0, 1.0f, 0.0f};
  GenerateStats merged, each;
  o.stats = &merged;
  auto together = Generate(*stories.model, *stories.tokenizer, "Once upon a time", o);
  o.merge_identical_samples = false;
  o.stats = &each;
  auto apart = Generate(*stories.model, *stories.tokenizer, "Once upon a time", o);
  ASSERT_TRUE(together.ok() && apart.ok());
  EXPECT_EQ(merged.sample_steps, each.sample_steps);
  EXPECT_EQ(each.vectors, each.sample_steps);
  EXPECT_LT(merged.vectors, merged.sample_steps) << "some samples ran as one for a while";
  std::set<std::vector<int>> distinct;
  for (int i = 0; i < o.n; ++i) {
    EXPECT_EQ((*together)[i].tokens, (*apart)[i].tokens) << "sample " << i;
    const Completion alone = SampleAlone(stories, o, i);
    EXPECT_EQ((*together)[i].tokens, alone.tokens) << "sample " << i;
    ASSERT_EQ((*together)[i].logprobs.size(), alone.logprobs.size());
    for (size_t t = 0; t < alone.logprobs.size(); ++t)
      EXPECT_EQ((*together)[i].logprobs[t].chosen.logprob, alone.logprobs[t].chosen.logprob);
    distinct.insert((*together)[i].tokens);
  }
  EXPECT_GE(distinct.size(), 3u) << "the samples parted";
  GenerateOptions greedy;
  greedy.max_tokens = 20;
  greedy.n = 5;
  greedy.sampling = {0.0f, 0, 1.0f, 0.0f};
  GenerateStats g;
  greedy.stats = &g;
  auto same = Generate(*stories.model, *stories.tokenizer, "Once upon a time", greedy);
  ASSERT_TRUE(same.ok());
  for (int i = 1; i < greedy.n; ++i) EXPECT_EQ((*same)[i].tokens, (*same)[0].tokens);
  EXPECT_EQ(g.vectors * greedy.n, g.sample_steps) << "one vector a step";
}

TEST(Logprobs, LogSoftmaxOfTheRawLogitsWithTheLikeliestFirst) {
  const std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f, 1000.0f, -1000.0f};
  const int vocab = static_cast<int>(logits.size());
  double max = 1000, sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
  auto want = [&](int t) { return static_cast<float>(logits[t] - max - std::log(sum)); };
  StepLogprobs lp = LogprobsOf(logits.data(), vocab, 2, 4);
  EXPECT_EQ(lp.chosen.token, 2);
  EXPECT_FLOAT_EQ(lp.chosen.logprob, want(2));
  ASSERT_EQ(lp.top.size(), 4u);
  const int order[] = {5, 1, 3, 0};  // equal logits: the lower id first
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(lp.top[i].token, order[i]);
    EXPECT_FLOAT_EQ(lp.top[i].logprob, want(order[i]));
  }
  EXPECT_TRUE(std::isfinite(LogprobsOf(logits.data(), vocab, 6, 0).chosen.logprob));
  EXPECT_EQ(LogprobsOf(logits.data(), vocab, 0, 100).top.size(), logits.size());
  EXPECT_TRUE(LogprobsOf(logits.data(), vocab, 0, 0).top.empty());
}

TEST(Logprobs, OnePerGeneratedTokenAndTheSamplesUnchanged) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  const StoriesQ8 stories = LoadStories();
  ASSERT_TRUE(stories.tokenizer);
  // Two samples of 20 tokens at temperature 0.9, with `logprobs` top tokens.
  auto sample = [&](int logprobs) {
    GenerateOptions o;
    o.max_tokens = 20;
    o.n = 2;
    o.seed = 4;
    o.sampling.temperature = 0.9f;
    o.logprobs = logprobs;
    return Generate(*stories.model, *stories.tokenizer, "Once upon a time", o);
  };
  auto plain = sample(-1);
  auto with = sample(3);
  ASSERT_TRUE(plain.ok() && with.ok());
  for (int s = 0; s < 2; ++s) {
    const Completion& c = (*with)[s];
    EXPECT_EQ(c.tokens, (*plain)[s].tokens);
    EXPECT_TRUE((*plain)[s].logprobs.empty());
    ASSERT_EQ(c.logprobs.size(), c.tokens.size());
    for (size_t i = 0; i < c.tokens.size(); ++i) {
      EXPECT_EQ(c.logprobs[i].chosen.token, c.tokens[i]);
      ASSERT_EQ(c.logprobs[i].top.size(), 3u);
      EXPECT_LE(c.logprobs[i].chosen.logprob, c.logprobs[i].top[0].logprob);
    }
  }
  EXPECT_FALSE(sample(kMaxTopLogprobs + 1).ok());
}

// Teacher forcing scores a text in prefill chunks, every token's logits kept: the same
// distributions, bit for bit, as one decode step per token (here over 40 tokens: 2.5 chunks).
TEST(TeacherForcing, ChunkedScoringEqualsOneStepPerToken) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  const StoriesQ8 stories = LoadStories();
  ASSERT_TRUE(stories.tokenizer);
  std::vector<int> tokens = stories.tokenizer->Encode(
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
      "sun with her dog and her friends.",
      true);
  ASSERT_GT(tokens.size(), 30u);
  const size_t first = 3;
  std::vector<std::vector<float>> chunked;
  std::vector<size_t> positions;
  ASSERT_TRUE(ForEachNextTokenLogprobs(*stories.model, tokens, first,
                                       [&](size_t t, std::span<const float> lp) {
                                         positions.push_back(t);
                                         chunked.emplace_back(lp.begin(), lp.end());
                                       })
                  .ok());
  ASSERT_EQ(chunked.size(), tokens.size() - first);
  const int vocab = stories.model->config().vocab;
  LlamaSession session(*stories.model, static_cast<int>(tokens.size()),
                       KernelTable::For(DetectIsa()));
  for (size_t t = 0; t + 1 < tokens.size(); ++t) {
    auto l = session.Forward(tokens[t], static_cast<int>(t));
    ASSERT_TRUE(l.ok());
    if (t + 1 < first) continue;
    const size_t k = t + 1 - first;
    EXPECT_EQ(positions[k], t + 1);
    // The same logits give the same log-softmax: compare its argmax and values.
    std::vector<float> lp(*l, *l + vocab);
    const float max = *std::max_element(lp.begin(), lp.end());
    double sum = 0;
    for (float x : lp) sum += std::exp(static_cast<double>(x) - max);
    for (int v = 0; v < vocab; ++v)
      ASSERT_FLOAT_EQ(chunked[k][v], static_cast<float>(lp[v] - (max + std::log(sum))))
          << "token " << t + 1 << " id " << v;
  }
  EXPECT_FALSE(ForEachNextTokenLogprobs(*stories.model, tokens, 0, nullptr).ok());
}

TEST(Model, ClearErrorsForUnusableFiles) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  EXPECT_FALSE(LlamaModel::Load("/nonexistent.gguf").ok());
  // The tokenizer test file has the llama layout but only one layer of dim 8: it loads.
  auto tiny = LlamaModel::Load(Models() + "/llama-2-tiny-random.gguf");
  EXPECT_TRUE(tiny.ok()) << tiny.status().ToString();
  // A file without the weights is refused with the missing tensor's name.
  GgufWriter w;
  GgufValue v;
  v.type = GgufType::kString;
  v.s = "llama";
  w.SetMetadata("general.architecture", v);
  GgufValue one;
  one.type = GgufType::kUint32;
  one.u = 8;
  for (const char* key : {"llama.embedding_length", "llama.block_count",
                          "llama.feed_forward_length", "llama.context_length"})
    w.SetMetadata(key, one);
  GgufValue heads = one;
  heads.u = 2;
  w.SetMetadata("llama.attention.head_count", heads);
  w.AddTensor("token_embd.weight", GgmlType::kF32, {8, 4}, std::string(8 * 4 * 4, '\0'));
  std::string path = "/tmp/evald-model-" + RandomHex(4) + ".gguf";
  ASSERT_TRUE(w.Write(path).ok());
  auto broken = LlamaModel::Load(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("output_norm.weight"), std::string::npos)
      << broken.status().ToString();
}

}  // namespace
}  // namespace evald::kernels

namespace evald::kernels {
namespace {

// The Q8_0 KV cache's attention against the F32 one on the same keys and values: the same up
// to the rounding of q, k and v to 8 bits per 32-block, on every kernel path.
TEST(KvCacheQ8_0, AttentionMatchesTheF32CacheUpToItsRounding) {
  std::mt19937 rng(7);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const int head_dim = 64, positions = 40;
  std::vector<float> q(head_dim), keys(positions * head_dim), values(positions * head_dim);
  for (float& x : q) x = g(rng);
  for (float& x : keys) x = g(rng);
  for (float& x : values) x = g(rng);
  std::vector<BlockQ8_0> kq(positions * head_dim / kQK), vq(kq.size());
  QuantizeRowQ8_0(keys.data(), kq.data(), positions * head_dim);
  QuantizeRowQ8_0(values.data(), vq.data(), positions * head_dim);
  const AttentionHead head{head_dim, head_dim, 0.125f, 0.0f};
  std::vector<float> scores(positions), exact(head_dim), rounded(head_dim);
  AttendScalar(head, 1, q.data(), keys.data(), values.data(), 0, positions - 1, scores.data(),
               exact.data());
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512Vnni}) {
    if (!IsaSupported(isa)) continue;
    KernelTable::For(isa).attend_q8_0(head, 1, q.data(), kq.data(), vq.data(), head_dim / kQK, 0,
                                      positions - 1, scores.data(), rounded.data());
    double worst = 0;
    for (int i = 0; i < head_dim; ++i)
      worst = std::max<double>(worst, std::abs(exact[i] - rounded[i]));
    EXPECT_GT(worst, 0) << IsaName(isa);
    EXPECT_LT(worst, 0.02) << IsaName(isa);
  }
}

TEST(KvCacheQ8_0, OptInSizedAndRefusedWhereHeadsDoNotFitItsBlocks) {
  EXPECT_EQ(*ParseKvCacheType(""), KvCacheType::kF32);
  EXPECT_EQ(*ParseKvCacheType("q8_0"), KvCacheType::kQ8_0);
  EXPECT_FALSE(ParseKvCacheType("q4_0").ok());
  LlamaConfig c;
  c.architecture = "llama";
  c.n_layers = 22;
  LayerShape tiny_llama;  // TinyLlama 1.1B
  tiny_llama.n_kv_heads = 4;
  tiny_llama.head_dim = 64;
  c.layer.assign(22, tiny_llama);
  EXPECT_TRUE(CheckKvCacheType(c, KvCacheType::kQ8_0).ok());
  // n = 20 sequences at a 2k context: 1.8 GB of F32 cache, 0.49 GB as Q8_0.
  EXPECT_EQ(KvCacheBytes(c, KvCacheType::kF32, 2048, 20), 2LL * 22 * 20 * 2048 * 256 * 4);
  EXPECT_EQ(KvCacheBytes(c, KvCacheType::kQ8_0, 2048, 20), 2LL * 22 * 20 * 2048 * 256 / 32 * 34);
  // A 500-position prompt the 20 share is held once.
  EXPECT_EQ(KvCacheBytes(c, KvCacheType::kF32, 2048, 20, 500),
            2LL * 22 * (500 + 20 * 1548) * 256 * 4);
  c.layer[3].head_dim = 8;  // one layer of stories260K's head size
  EXPECT_NE(CheckKvCacheType(c, KvCacheType::kQ8_0).message().find("multiples of 32"),
            std::string::npos);
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  auto model = LlamaModel::Load(Models() + "/stories260K-f32.gguf");
  ASSERT_TRUE(model.ok());
  auto tok = SpmTokenizer::FromGguf((*model)->file());
  GenerateOptions o;
  o.kv_cache = KvCacheType::kQ8_0;
  EXPECT_FALSE(Generate(**model, *tok, "Once", o).ok()) << "refused, not ignored";
}

// Gemma 4 31B's layout (its GGUF metadata as published: 60 layers of 5376, 50 sliding with 16
// KV heads of 256, 10 full with 4 of 512, FFN 21504, 262144 tokens) written without weights and
// planned from the metadata alone: 30.70 B parameters (what llama.cpp prints for the real file),
// the Q4_0 weights' bytes, and the KV cache per position exactly as the layer shapes give it.
TEST(MemoryPlan, Gemma4_31BFromItsMetadataAlone) {
  auto layout = KnownModelLayout("gemma4-31b", GgmlType::kQ4_0);
  ASSERT_TRUE(layout.ok());
  const std::string path = "/tmp/evald-layout-" + RandomHex(4) + ".gguf";
  ASSERT_TRUE(WriteModelLayout(*layout, path).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_GT(st.st_size, 17'000'000'000LL) << "the file has its full size";
  EXPECT_LT(st.st_blocks * 512LL, 64LL << 20) << "but the weights are a hole";
  auto file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto plan = PlanMemory(**file, 8192, 1, KvCacheType::kF32);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_NEAR(static_cast<double>(plan->parameters) / 1e9, 30.70, 0.005);
  // Q4_0: 18 bytes per 32 weights for every 2-D tensor; the norms and rope_freqs in F32.
  EXPECT_NEAR(static_cast<double>(plan->weights) / plan->parameters, 18.0 / 32, 0.001);
  // Keys (or values) of one sequence: full layers every position, sliding layers a ring of
  // their 1024-position window and one prefill chunk (1039).
  const int64_t per_sequence = 50 * 16 * 256 * 1039LL + 10 * 4 * 512 * 8192LL;
  EXPECT_EQ(plan->kv_cache, 2 * 4 * per_sequence);
  auto q8 = PlanMemory(**file, 8192, 20, KvCacheType::kQ8_0);
  ASSERT_TRUE(q8.ok());
  EXPECT_EQ(q8->kv_cache, 2 * 20 * per_sequence / 32 * 34);
  // 20 samples of a 1,000-position prompt: the full layers hold it once; the rings, where the
  // samples read it from the first's, fill with each sample's own 7,192 positions.
  auto shared = PlanMemory(**file, 8192, 20, KvCacheType::kQ8_0, 1, 1000);
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(shared->kv_cache,
            2 * (20 * 50 * 16 * 256 * 1039LL + 10 * 4 * 512 * (1000 + 20 * 7192LL)) / 32 * 34);
  // Of 300 positions after the prompt, the other 19 samples' rings hold those 300 only.
  auto short_samples = PlanMemory(**file, 1300, 20, KvCacheType::kQ8_0, 1, 1000);
  ASSERT_TRUE(short_samples.ok());
  EXPECT_EQ(
      short_samples->kv_cache,
      2 * (50 * 16 * 256 * (1039 + 19 * 300LL) + 10 * 4 * 512 * (1000 + 20 * 300LL)) / 32 * 34);
  EXPECT_FALSE(PlanMemory(**file, 8192, 20, KvCacheType::kQ8_0, 1, 8192).ok());
  auto short_context = PlanMemory(**file, 512, 1, KvCacheType::kF32);
  ASSERT_TRUE(short_context.ok());
  EXPECT_EQ(short_context->kv_cache, 2 * 4 * 512LL * (50 * 16 * 256 + 10 * 4 * 512));
  int full = 0;
  for (const LayerShape& l : plan->config.layer) full += !l.sliding;
  EXPECT_EQ(full, 10);
  EXPECT_EQ(plan->config.layer[5].head_dim, 512);
  EXPECT_EQ(plan->config.layer[5].n_kv_heads, 4);
  EXPECT_EQ(plan->config.layer[0].head_dim, 256);
  std::remove(path.c_str());
}

// What of Gemma 4 the core does not compute is refused by name, not run wrongly.
TEST(Gemma4, SmallModelAndMixtureOfExpertsFeaturesAreRefused) {
  if (!HaveModels()) GTEST_SKIP() << "no ../shared/models";
  RandomModelShape shape;
  shape.architecture = "gemma4";
  shape.layers = 6;
  shape.head_dim = 64;
  shape.kv_heads = 1;
  shape.head_dim_swa = 32;
  shape.kv_heads_swa = 2;
  const std::string path = "/tmp/evald-gemma4-" + RandomHex(4) + ".gguf";
  ASSERT_TRUE(WriteRandomModel(shape, Models() + "/stories260K-f32.gguf", path).ok());
  auto ok = LlamaModel::Load(path);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE((*ok)->layers()[5].values_from_keys);
  EXPECT_FALSE((*ok)->layers()[0].values_from_keys);
  EXPECT_EQ((*ok)->config().query_scale, 1.0f);
  GgufValue u32;
  u32.type = GgufType::kUint32;
  for (const auto& [key, why] : std::vector<std::pair<std::string, std::string>>{
           {"gemma4.attention.shared_kv_layers", "KV sharing"},
           {"gemma4.embedding_length_per_layer_input", "per-layer embeddings"},
           {"gemma4.expert_count", "mixture-of-experts"}}) {
    u32.u = 8;
    shape.extra_metadata = {{key, u32}};
    ASSERT_TRUE(WriteRandomModel(shape, Models() + "/stories260K-f32.gguf", path).ok());
    auto refused = LlamaModel::Load(path);
    ASSERT_FALSE(refused.ok()) << key;
    EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(refused.status().message().find(why), std::string::npos)
        << refused.status().message();
  }
  u32.u = 0;  // 0 is the dense layout's own value
  shape.extra_metadata = {{"gemma4.attention.shared_kv_layers", u32}};
  ASSERT_TRUE(WriteRandomModel(shape, Models() + "/stories260K-f32.gguf", path).ok());
  EXPECT_TRUE(LlamaModel::Load(path).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace evald::kernels
