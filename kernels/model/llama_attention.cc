// LlamaSession's attention step: each vector's query heads over its KV heads, and the scores of
// positions every vector of a step reads from the same rows computed once for all of them
// (a shared prompt, the positions before a prefill chunk).
#include "kernels/model/llama_model.h"

#include <algorithm>
#include <vector>

#include "kernels/ops/attention.h"
#include "kernels/ops/kernel_table.h"
#include "kernels/ops/thread_pool.h"
#include "kernels/quant/blocks.h"

namespace evald::kernels {

namespace {

// The attention's scores scratch of this thread (the pool's workers live as long as the
// generation): one row per query head and position of the vectors a thread attends for at once.
std::vector<float>& ThreadScores() {
  thread_local std::vector<float> scores;
  return scores;
}

}  // namespace

int LlamaSession::FirstPosition(const Step& step, int l, int s) const {
  const LayerShape& shape = model_.config().layer[static_cast<size_t>(l)];
  return shape.sliding ? std::max(0, step.PosOf(s) - model_.config().sliding_window + 1) : 0;
}

int LlamaSession::SharedPositions(const Step& step, int l) const {
  const LayerShape& shape = model_.config().layer[static_cast<size_t>(l)];
  const KernelTable& kernels = matvec_.kernels();
  const bool have = kv_type_ == KvCacheType::kF32 ? kernels.shared_scores != nullptr
                                                  : kernels.shared_scores_q8_0 != nullptr;
  if (step.count < 2 || !have) return 0;
  if (const ThreadPool* pool = matvec_.pool(); pool && pool->threads() > shape.n_kv_heads) return 0;
  // Every vector's window must start at 0 (the last one's is the latest to start).
  if (FirstPosition(step, l, step.count - 1) != 0) return 0;
  // Decode: the prompt's rows are sequence 0's in every sequence. Prefill: the positions before
  // the chunk.
  const int shared = step.prefill ? step.pos : shared_prefix_;
  const int64_t group = shape.n_heads / shape.n_kv_heads;
  const int64_t scores =
      static_cast<int64_t>(step.count) * group * (step.PosOf(step.count - 1) + 1);
  return scores <= kMostSharedScores ? shared : 0;
}

void LlamaSession::AttendHeads(const Step& step, int l, int kv, int s, int scored, float* scores) {
  const LlamaConfig& c = model_.config();
  const LayerShape& shape = c.layer[static_cast<size_t>(l)];
  const int kv_dim = shape.kv_dim(), q_dim = shape.q_dim(), hd = shape.head_dim;
  const int group = shape.n_heads / shape.n_kv_heads;
  const int p = step.PosOf(s), seq = step.SeqOf(s);
  const size_t cache = CacheAt(l, seq, 0) + static_cast<size_t>(kv) * hd;
  AttentionHead head{hd, kv_dim, c.query_scale, c.attn_softcap};
  if (!FullLayer(l)) head.ring = layer_slots_[static_cast<size_t>(l)];  // a sliding layer's ring
  if (seq > 0 && shared_prefix_ > 0) {
    head.prefix = shared_prefix_;
    head.prefix_offset =
        static_cast<int64_t>(CacheAt(l, 0, 0)) - static_cast<int64_t>(CacheAt(l, seq, 0));
  }
  head.scored = scored;
  const float* q = &q_[s * q_dim + kv * group * hd];
  float* out = &attn_out_[s * q_dim + kv * group * hd];
  const int first = FirstPosition(step, l, s);
  if (kv_type_ == KvCacheType::kQ8_0) {
    matvec_.kernels().attend_q8_0(head, group, q, key_blocks_.data() + cache / kQK,
                                  value_blocks_.data() + cache / kQK, kv_dim / kQK, first, p,
                                  scores, out);
  } else {
    matvec_.kernels().attend(head, group, q, key_cache_.data() + cache, value_cache_.data() + cache,
                             first, p, scores, out);
  }
}

void LlamaSession::AttendSharing(const Step& step, int l, int shared) {
  const int kv_heads = model_.config().layer[static_cast<size_t>(l)].n_kv_heads;
  auto attend = [&](int64_t begin, int64_t end) {
    for (int64_t kv = begin; kv < end; ++kv)
      AttendKvHeadSharing(step, l, static_cast<int>(kv), shared);
  };
  if (ThreadPool* pool = matvec_.pool()) {
    pool->ParallelFor(kv_heads, attend);
  } else {
    attend(0, kv_heads);
  }
}

void LlamaSession::AttendKvHeadSharing(const Step& step, int l, int kv, int shared) {
  const LlamaConfig& c = model_.config();
  const LayerShape& shape = c.layer[static_cast<size_t>(l)];
  const int q_dim = shape.q_dim(), hd = shape.head_dim;
  const int group = shape.n_heads / shape.n_kv_heads, heads = step.count * group;
  // Vector s's scores from offset[s], its head g's g x (position + 1) floats further on, as
  // AttendHeads lays them out.
  std::vector<float>& scores = ThreadScores();
  thread_local std::vector<size_t> offset;
  thread_local std::vector<const float*> queries;
  thread_local std::vector<float*> rows;
  offset.assign(static_cast<size_t>(step.count) + 1, 0);
  for (int s = 0; s < step.count; ++s)
    offset[s + 1] = offset[s] + static_cast<size_t>(group) * (step.PosOf(s) + 1);
  if (scores.size() < offset.back()) scores.resize(offset.back());
  queries.resize(static_cast<size_t>(heads));
  rows.resize(static_cast<size_t>(heads));
  for (int s = 0; s < step.count; ++s)
    for (int g = 0; g < group; ++g) {
      const size_t i = static_cast<size_t>(s * group + g);
      queries[i] = &q_[s * q_dim + (kv * group + g) * hd];
      rows[i] = scores.data() + offset[s] + static_cast<size_t>(g) * (step.PosOf(s) + 1);
    }
  // The shared positions are sequence 0's rows (AttentionHead::prefix of the others).
  AttentionHead head{hd, shape.kv_dim(), c.query_scale, c.attn_softcap};
  if (!FullLayer(l)) head.ring = layer_slots_[static_cast<size_t>(l)];
  const size_t keys = CacheAt(l, 0, 0) + static_cast<size_t>(kv) * hd;
  if (kv_type_ == KvCacheType::kQ8_0) {
    matvec_.kernels().shared_scores_q8_0(head, heads, queries.data(),
                                         key_blocks_.data() + keys / kQK, shape.kv_dim() / kQK, 0,
                                         shared - 1, rows.data());
  } else {
    matvec_.kernels().shared_scores(head, heads, queries.data(), key_cache_.data() + keys, 0,
                                    shared - 1, rows.data());
  }
  for (int s = 0; s < step.count; ++s)
    AttendHeads(step, l, kv, s, shared, scores.data() + offset[s]);
}

// Every (vector, KV head) with the query heads that share it on its own, split across the pool
// once all keys and values of this step are cached (a prefilled token attends to the ones before
// it in the chunk) -- or KV head by KV head where the vectors share positions (AttendSharing);
// then the output projection and the residual.
void LlamaSession::Attention(const Step& step, int l) {
  const LlamaConfig& c = model_.config();
  const LlamaLayer& L = model_.layers()[static_cast<size_t>(l)];
  const LayerShape& shape = c.layer[static_cast<size_t>(l)];
  const int group = shape.n_heads / shape.n_kv_heads;
  if (const int shared = SharedPositions(step, l); shared > 0) {
    AttendSharing(step, l, shared);
  } else {
    // KV head by KV head: the vectors of one KV head follow each other, so that the rows of a
    // shared prompt are read from memory once for all of them.
    auto attend = [&](int64_t begin, int64_t end) {
      std::vector<float>& scores = ThreadScores();
      const size_t needed = static_cast<size_t>(group) * static_cast<size_t>(max_positions_);
      if (scores.size() < needed) scores.resize(needed);
      for (int64_t i = begin; i < end; ++i)
        AttendHeads(step, l, static_cast<int>(i / step.count), static_cast<int>(i % step.count), 0,
                    scores.data());
    };
    const int64_t items = static_cast<int64_t>(step.count) * shape.n_kv_heads;
    if (ThreadPool* pool = matvec_.pool()) {
      pool->ParallelFor(items, attend);
    } else {
      attend(0, items);
    }
  }
  matvec_.ApplyBatch(L.wo, attn_out_.data(), step.count, xb_.data());
  AddResidual(step.count, L.post_attn_norm);
}

}  // namespace evald::kernels
