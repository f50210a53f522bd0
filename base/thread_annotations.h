// Clang's thread-safety annotations (checked by -Wthread-safety in the test command's clang
// build; no-ops elsewhere), and a mutex and lock that carry them: what a member is guarded by
// and what a function needs held is then part of its declaration, and a caller that forgets
// the lock does not compile.
#pragma once

#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define EVALD_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define EVALD_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) EVALD_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY EVALD_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) EVALD_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) EVALD_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) EVALD_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) EVALD_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) EVALD_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) EVALD_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS EVALD_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace evald {

// std::mutex as a capability the analysis knows.
class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

// std::lock_guard for Mutex.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// A lock that a condition variable can wait with (std::unique_lock over the Mutex).
class SCOPED_CAPABILITY WaitableLock {
 public:
  explicit WaitableLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.native()) {}
  ~WaitableLock() RELEASE() {}
  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace evald
