// SIGINT and SIGTERM while a long command runs (`tune`): the first asks the work to stop at its
// next safe point (a sweep between trials: what was measured stays, the summary is printed);
// a second one ends the process at once, as the signal's default does (SA_RESETHAND).
#pragma once

#include <signal.h>

namespace tiletune {

class InterruptSignals {
 public:
  /// Installs the handlers; the destructor puts back what was there before.
  InterruptSignals();
  ~InterruptSignals();
  InterruptSignals(const InterruptSignals&) = delete;
  InterruptSignals& operator=(const InterruptSignals&) = delete;

  /// The signal that arrived since construction (SIGINT or SIGTERM), or 0.
  [[nodiscard]] static int received() noexcept;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace tiletune
