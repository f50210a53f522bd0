#include "kernels/ops/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace evald::kernels {

namespace {

// How long a worker that has finished looks for the next call before it sleeps: longer than
// the gap between two mat-vecs of one token (norms, RoPE, a residual: a few microseconds), far
// shorter than a sleeping worker's wake-up is worth risking on a busy machine.
constexpr auto kSpinFor = std::chrono::microseconds(50);

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins (with `pause`) until `ready()` or kSpinFor has passed; whether it became ready. The clock
// is read every 64 turns, not every turn.
template <typename Ready>
bool SpinBriefly(const Ready& ready) {
  const auto until = std::chrono::steady_clock::now() + kSpinFor;
  for (int i = 0; !ready(); ++i) {
    CpuRelax();
    if (i % 64 == 63 && std::chrono::steady_clock::now() > until) return ready();
  }
  return true;
}

uint64_t GenerationOf(uint64_t word) {
  return word >> 32;
}
uint32_t PiecesLeft(uint64_t word) {
  return static_cast<uint32_t>(word);
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back(&ThreadPool::WorkerMain, this);
}

ThreadPool::~ThreadPool() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                             int64_t align) {
  if (n <= 0) return;
  align = std::max<int64_t>(align, 1);
  if (workers_.empty() || n <= align) {
    fn(0, n);
    return;
  }
  // About eight pieces per thread: few enough that claiming them costs nothing, enough that a
  // late worker still finds some.
  const int64_t target = std::max<int64_t>(1, n / (8 * threads()));
  const int64_t piece_size = (target + align - 1) / align * align;
  const int64_t pieces = (n + piece_size - 1) / piece_size;
  job_ = &fn;
  n_.store(n, std::memory_order_relaxed);
  piece_size_.store(piece_size, std::memory_order_relaxed);
  pieces_.store(static_cast<uint32_t>(pieces), std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  // 32 bits of generations, 0 never used (AwaitGeneration's "stopping").
  uint64_t generation = (GenerationOf(word_.load(std::memory_order_relaxed)) + 1) & 0xFFFFFFFFu;
  if (generation == 0) generation = 1;
  word_.store(Word(generation, static_cast<uint64_t>(pieces)), std::memory_order_release);
  {
    MutexLock lock(mu_);
    if (sleeping_ > 0) work_cv_.notify_all();
  }
  RunPieces(generation);
  auto finished = [&] { return done_.load(std::memory_order_acquire) == pieces; };
  if (SpinBriefly(finished)) return;
  WaitableLock lock(mu_);
  while (!finished()) done_cv_.wait(lock.native());
}

void ThreadPool::RunPieces(uint64_t generation) {
  uint64_t word = word_.load(std::memory_order_acquire);
  while (GenerationOf(word) == generation && PiecesLeft(word) > 0) {
    // Counting down to 0 in the same word as the generation: an ended call's word can never be
    // claimed, whatever the next call has already written beside it. A successful claim holds
    // the call open until this piece is counted done, so the job and sizes read below are its.
    if (!word_.compare_exchange_weak(word, word - 1, std::memory_order_acq_rel)) continue;
    const int64_t pieces = pieces_.load(std::memory_order_relaxed);
    const int64_t size = piece_size_.load(std::memory_order_relaxed);
    const int64_t begin = (pieces - PiecesLeft(word)) * size;
    (*job_)(begin, std::min(n_.load(std::memory_order_relaxed), begin + size));
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == pieces) {
      MutexLock lock(mu_);  // the caller may be asleep: wake it under the lock it checks under
      done_cv_.notify_one();
      return;
    }
    word = word_.load(std::memory_order_acquire);
  }
}

uint64_t ThreadPool::AwaitGeneration(uint64_t seen) {
  auto current = [&] { return GenerationOf(word_.load(std::memory_order_acquire)); };
  if (SpinBriefly([&] { return current() != seen; })) return current();
  WaitableLock lock(mu_);
  ++sleeping_;
  uint64_t generation = seen;
  while (!stopping_ && (generation = current()) == seen) work_cv_.wait(lock.native());
  --sleeping_;
  return stopping_ ? 0 : generation;
}

void ThreadPool::WorkerMain() {
  uint64_t seen = 0;
  while (true) {
    const uint64_t generation = AwaitGeneration(seen);
    if (generation == 0) return;
    seen = generation;
    RunPieces(generation);
  }
}

}  // namespace evald::kernels
