#include "common/interrupt_signals.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>

#include "tiletune/error.hpp"

namespace tiletune {

namespace {

// The one place a signal handler can leave a mark: it may touch nothing but a lock-free
// sig_atomic_t. Set by the handler, read by InterruptSignals::received.
volatile std::sig_atomic_t g_received = 0;

extern "C" void note_signal(int signal) {
  g_received = signal;
  constexpr char kSaid[] = "\ntiletune: interrupted: finishing the trials being measured (again to stop at once)\n";
  (void)!::write(STDERR_FILENO, kSaid, sizeof kSaid - 1);  // async-signal-safe
}

void install(int signal, struct sigaction& old) {
  struct sigaction action {};
  action.sa_handler = note_signal;
  ::sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second signal takes the default action: the process ends
  if (::sigaction(signal, &action, &old) != 0)
    throw Error(std::string("sigaction (installing the interrupt handler): ") + std::strerror(errno));
}

}  // namespace

InterruptSignals::InterruptSignals() {
  g_received = 0;
  install(SIGINT, old_int_);
  install(SIGTERM, old_term_);
}

InterruptSignals::~InterruptSignals() {
  (void)::sigaction(SIGINT, &old_int_, nullptr);
  (void)::sigaction(SIGTERM, &old_term_, nullptr);
}

int InterruptSignals::received() noexcept { return g_received; }

}  // namespace tiletune
