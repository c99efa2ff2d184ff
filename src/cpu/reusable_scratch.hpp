// Scratch that a solver's run() reuses from one call to the next: kept by the calling thread,
// grown when a call needs more, never zeroed (the solver writes every element before reading it).
// A fresh zero-filled std::vector per call faulted its pages in and cleared them each time, which
// cost small layers up to a fifth of their time (docs/perf.md). One buffer per `Site` type, so
// that two users never share one; a buffer keeps its largest size for the thread's lifetime
// (bounded by the solvers' check()s).
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

namespace convguard::cpu {

template <class Site, class T>
T* reusable_scratch(std::size_t count) {
  static_assert(std::is_trivially_default_constructible_v<T>);
  thread_local std::unique_ptr<T[]> buffer;
  thread_local std::size_t size = 0;
  if (size < count) {
    buffer.reset();  // freed first: a throwing allocation leaves no stale size behind
    size = 0;
    buffer.reset(new T[count]);
    size = count;
  }
  return buffer.get();
}

}  // namespace convguard::cpu
