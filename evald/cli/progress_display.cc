#include "evald/cli/progress_display.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "base/thread_annotations.h"

namespace evald {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kBarCells = 24;

class ProgressDisplay {
 public:
  explicit ProgressDisplay(bool terminal) : terminal_(terminal) {}

  void Update(const RunProgress& p) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    const auto now = Clock::now();
    // Sampling and grading interleave in a run: a phase is new only the first time it is seen.
    auto& start = phase_start_[static_cast<size_t>(p.phase)];
    const bool new_phase = !start;
    const bool last = p.done >= p.total;
    if (new_phase) start = now;
    const auto every = std::chrono::milliseconds(terminal_ ? 200 : 10000);
    if (!new_phase && !last && now - last_draw_ < every) return;
    last_draw_ = now;
    const std::string line = Line(p, now);
    if (!terminal_) {
      spdlog::info("{}", line);
      return;
    }
    const int filled = p.total > 0 ? static_cast<int>(std::clamp<int64_t>(
                                         int64_t{kBarCells} * p.done / p.total, 0, kBarCells))
                                   : 0;
    // A finished phase keeps its line; the next one starts below it.
    std::cerr << "\r[" << std::string(static_cast<size_t>(filled), '#')
              << std::string(static_cast<size_t>(kBarCells - filled), '.') << "] " << line
              << "\x1b[K" << (last ? "\n" : "") << std::flush;
  }

 private:
  // "grading 120/312 samples (formal 40)  4.5/s  ETA 42 s"
  std::string Line(const RunProgress& p, Clock::time_point now) const REQUIRES(mu_) {
    const char* unit = p.phase == RunPhase::kCalibrating ? "references" : "samples";
    std::string line = fmt::format("{} {}/{} {}", PhaseName(p.phase), p.done, p.total, unit);
    if (p.formal_checked > 0) line += fmt::format(" (formal {})", p.formal_checked);
    const auto start = phase_start_[static_cast<size_t>(p.phase)];
    const double secs = start ? std::chrono::duration<double>(now - *start).count() : 0;
    const double rate = secs > 0.5 && p.done > 1 ? (p.done - 1) / secs : 0;
    if (rate > 0 && p.done < p.total)
      line += fmt::format("  {:.1f}/s  ETA {:.0f} s", rate, (p.total - p.done) / rate);
    return line;
  }

  const bool terminal_;
  Mutex mu_;
  std::array<std::optional<Clock::time_point>, 3> phase_start_ GUARDED_BY(mu_);  // by RunPhase
  Clock::time_point last_draw_ GUARDED_BY(mu_);
};

}  // namespace

ProgressFn MakeProgressDisplay(bool terminal) {
  auto display = std::make_shared<ProgressDisplay>(terminal);
  return [display](const RunProgress& p) { display->Update(p); };
}

}  // namespace evald
