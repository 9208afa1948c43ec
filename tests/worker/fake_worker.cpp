// A stand-in for `tiletune __worker` in the worker tests: the real serve_worker loop around a
// handler that misbehaves on trial 2 in the way its mode says. Usage: fake_worker MODE, with
// $TILETUNE_WORKER_FDS set by WorkerProcess.
//   ok       every trial is ok (median_ms = id; detail names the fds and the cubin size)
//   sleep    trial 2 never answers
//   crash    trial 2 raises SIGSEGV
//   exit     trial 2 calls exit(3)
//   garbage  trial 2 writes a frame of random bytes, then hangs
//   huge     trial 2 writes a frame header announcing 4 GiB, then hangs
//   throw    trial 2 throws (the worker must stay alive)
//   linger   like ok, but ignores EOF on its request pipe (the parent has to kill it)
//   deaf     closes its request pipe during trial 1 and lives on (the parent's next write
//            meets EPIPE)
// Every trial also prints to stdout, which must not reach the protocol.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

#include "tiletune/worker.hpp"

namespace {

using tiletune::CopyCeiling;
using tiletune::TrialRequest;
using tiletune::TrialResult;

[[noreturn]] void hang() {
  for (;;) ::pause();
}

void write_raw(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      std::perror("fake_worker: write");
      std::exit(1);
    }
    done += static_cast<std::size_t>(n);
  }
}

class FakeHandler : public tiletune::TrialHandler {
 public:
  FakeHandler(std::string mode, int in_fd, int out_fd) : mode_(std::move(mode)), in_fd_(in_fd), out_fd_(out_fd) {}

  TrialResult run_trial(const TrialRequest& request) override {
    std::printf("fake_worker: trial %llu (stdout noise that must not reach the protocol)\n",
                static_cast<unsigned long long>(request.id));
    std::fflush(stdout);
    if (request.id == 1 && mode_ == "deaf" && ::close(in_fd_) != 0) std::perror("fake_worker: close");
    if (request.id == 2) misbehave();
    if (request.id == 2 && mode_ == "lost") {
      // Like a kernel that faulted: answer, then the serve loop exits (context_lost).
      lost_ = true;
      TrialResult r;
      r.id = request.id;
      r.status = tiletune::TrialStatus::runtime_fault;
      r.detail = "CUDA_ERROR_ILLEGAL_ADDRESS: the CUDA context is lost";
      return r;
    }
    TrialResult r;
    r.id = request.id;
    r.median_ms = static_cast<double>(request.id);
    r.mean_ms = r.median_ms;
    r.min_ms = r.median_ms;
    r.samples = 10;
    const char* fds = std::getenv(tiletune::worker_fds_env);
    r.detail = std::string("fds=") + (fds ? fds : "") + " cubin=" + std::to_string(request.cubin.size());
    return r;
  }

  [[nodiscard]] bool context_lost() const noexcept override { return lost_; }

  CopyCeiling measure_copy(std::uint64_t bytes) override {
    if (bytes == 0) throw std::runtime_error("fake copy of zero bytes");
    CopyCeiling c;
    c.bytes = bytes;
    c.median_ms = static_cast<double>(bytes) / 1e6;
    c.gbps = 2.0 * static_cast<double>(bytes) / (c.median_ms * 1e6);
    return c;
  }

 private:
  void misbehave() {
    if (mode_ == "sleep") hang();
    if (mode_ == "crash") ::raise(SIGSEGV);
    if (mode_ == "exit") std::exit(3);
    if (mode_ == "throw") throw std::runtime_error("fake failure on trial 2");
    if (mode_ == "garbage") {
      std::mt19937 rng(12345);
      std::string payload(64, '\0');
      for (char& c : payload) c = static_cast<char>(rng() & 0xff);
      payload[0] = static_cast<char>(0xff);  // a CBOR "break" where a map must start
      write_raw(out_fd_, tiletune::frame(payload));
      hang();
    }
    if (mode_ == "huge") {
      write_raw(out_fd_, std::string("\xff\xff\xff\xff", 4));
      hang();
    }
  }

  std::string mode_;
  bool lost_ = false;
  int in_fd_;
  int out_fd_;
};

}  // namespace

int main(int argc, char** argv) {
  static const std::set<std::string> kModes = {"ok", "sleep", "crash", "exit", "garbage", "huge", "throw", "linger", "deaf", "lost"};
  if (argc != 2 || kModes.count(argv[1]) == 0) {
    std::fprintf(stderr, "usage: fake_worker ok|sleep|crash|exit|garbage|huge|throw|linger|deaf|lost\n");
    return 64;
  }
  std::string mode = argv[1];
  if (mode == "crash") {
    rlimit no_core{0, 0};  // a test crash should not leave a core file behind
    if (::setrlimit(RLIMIT_CORE, &no_core) != 0) std::perror("fake_worker: setrlimit(RLIMIT_CORE)");
  }
  try {
    tiletune::WorkerFds fds = tiletune::worker_fds_from_env();
    FakeHandler handler(mode, fds.in_fd, fds.out_fd);
    int code = tiletune::serve_worker(handler, fds.in_fd, fds.out_fd);
    if (mode == "linger" || (mode == "deaf" && code != 0)) hang();
    return code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_worker: %s\n", e.what());
    return 1;
  }
}
