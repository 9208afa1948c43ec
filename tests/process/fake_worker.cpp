// A stand-in for `tiletune __worker` in the worker and sweep tests: the real serve_worker loop
// around a handler that misbehaves on one trial (2 unless --at says) in the way its mode says.
// Usage: fake_worker MODE [--at ID] [--recording FILE] [--delay-ms N] [--log FILE]
// [--timeline FILE] [--poison FILE] [--crash-on CONFIG] [--scale FIRST-LAST:FACTOR], with $TILETUNE_WORKER_FDS set by
// WorkerProcess.
//   --recording  answer each trial from a landscape CSV (tests/data/landscapes): an ok trial
//                with its recorded time, any other recorded status as wrong_result; a config
//                the recording lacks is a launch_failed; a reference run is ok
//   --delay-ms   sleep this long in every trial (a sweep slow enough to be killed mid-way)
//   --log        append "ID reference|trial PROBLEM_KEY CONFIG" per trial, to see what a
//                sweep asked of its workers
//   --timeline   append "START_NS END_NS ID" per trial (steady clock, the same in every process
//                of the machine), to see which trials overlapped
//   --crash-on   raise SIGSEGV in every trial of this config text ("A=1 B=2"; "*": every trial)
//   --scale      FIRST-LAST:FACTOR: the times of trials FIRST to LAST (ids) are FACTOR times
//                the recorded ones (a GPU whose state drifts for a while); may be repeated
//   --poison     create FILE when trial --at misbehaves; a worker that starts while FILE exists
//                exits at once (a GPU that broke for good mid-sweep)
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
//   dead     exits with status 1 before serving anything (a GPU whose worker cannot start)
//   checkfail  trial 2 answers that the space's host check failed (host_check_failed), as a
//            worker whose check program exited does
//   globalfail trial 2 answers that a module global is larger than its symbol (shared_failure),
//            as a worker does for a __constant__ array smaller than the space's data
// An ok trial carries its samples (times_ms: `samples` times the median) and a verify_ms of 0.25.
// Every trial also prints to stdout, which must not reach the protocol.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tiletune/landscape.hpp"
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

struct Options {
  std::string mode;
  std::uint64_t at = 2;
  std::optional<tiletune::Landscape> recording;
  int delay_ms = 0;
  std::string log;
  std::string timeline;
  std::string poison;
  std::string crash_on;
  struct Scale {
    std::uint64_t first = 0, last = 0;
    double factor = 1;
  };
  std::vector<Scale> scales;
};

Options::Scale parse_scale(const std::string& text) {  // "FIRST-LAST:FACTOR"
  const std::size_t dash = text.find('-'), colon = text.find(':');
  if (dash == std::string::npos || colon == std::string::npos || colon < dash)
    throw std::invalid_argument("--scale " + text + ": expected FIRST-LAST:FACTOR");
  return {std::stoull(text.substr(0, dash)), std::stoull(text.substr(dash + 1, colon - dash - 1)),
          std::stod(text.substr(colon + 1))};
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// "N=1024;M=8" -> {{"M", 8}, {"N", 1024}}, to match a request's sizes.
std::map<std::string, std::int64_t> parse_sizes(const std::string& canonical) {
  std::map<std::string, std::int64_t> sizes;
  std::size_t begin = 0;
  while (begin < canonical.size()) {
    std::size_t end = canonical.find(';', begin);
    if (end == std::string::npos) end = canonical.size();
    const std::string item = canonical.substr(begin, end - begin);
    const std::size_t eq = item.find('=');
    if (eq != std::string::npos) sizes[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
    begin = end + 1;
  }
  return sizes;
}

/// The recorded trial of a request: its problem by sizes, its config by the config text
/// ("A=1 B=2" is the canonical "A=1;B=2" with spaces).
const tiletune::LandscapeTrial* recorded(const tiletune::Landscape& l, const TrialRequest& request) {
  std::string params = request.config_text;
  for (char& c : params)
    if (c == ' ') c = ';';
  for (const tiletune::LandscapeProblem& p : l.problems) {
    if (parse_sizes(p.problem) != request.sizes) continue;
    for (const tiletune::LandscapeTrial& t : p.trials)
      if (t.params == params) return &t;
  }
  return nullptr;
}

TrialResult from_recording(const tiletune::Landscape& l, const TrialRequest& request) {
  TrialResult r;
  r.id = request.id;
  const tiletune::LandscapeTrial* t = request.is_reference ? nullptr : recorded(l, request);
  if (!request.is_reference && !t) {
    r.status = tiletune::TrialStatus::launch_failed;
    r.detail = "fake_worker: " + request.config_text + " is not in the recording";
    return r;
  }
  if (t && t->status != tiletune::TrialStatus::ok) {
    r.status = tiletune::TrialStatus::wrong_result;
    r.detail = "recorded as " + std::string(tiletune::status_name(t->status));
    return r;
  }
  r.median_ms = t ? *t->time_ms : 1.0;
  r.mean_ms = r.min_ms = r.median_ms;
  r.samples = 10;
  r.times_ms.assign(10, r.median_ms);
  r.measure_ms = t ? t->measure_ms : 1.0;
  r.load_ms = 0.5;
  r.verify_ms = 0.25;
  return r;
}

class FakeHandler : public tiletune::TrialHandler {
 public:
  FakeHandler(Options options, int in_fd, int out_fd)
      : options_(std::move(options)), mode_(options_.mode), in_fd_(in_fd), out_fd_(out_fd) {}

  TrialResult run_trial(const TrialRequest& request) override {
    std::printf("fake_worker: trial %llu (stdout noise that must not reach the protocol)\n",
                static_cast<unsigned long long>(request.id));
    std::fflush(stdout);
    log(request);
    const std::int64_t start_ns = steady_ns();
    if (options_.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options_.delay_ms));
    if (!options_.poison.empty() && request.id == options_.at) std::ofstream(options_.poison) << "poisoned\n";
    if (!options_.crash_on.empty() && !request.is_reference &&
        (options_.crash_on == "*" || options_.crash_on == request.config_text))
      ::raise(SIGSEGV);
    TrialResult r = answer(request);
    if (!options_.timeline.empty())
      std::ofstream(options_.timeline, std::ios::app) << start_ns << ' ' << steady_ns() << ' ' << request.id << '\n';
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
  TrialResult answer(const TrialRequest& request) {
    if (request.id == 1 && mode_ == "deaf" && ::close(in_fd_) != 0) std::perror("fake_worker: close");
    if (request.id == options_.at) misbehave();
    if (request.id == options_.at && mode_ == "lost") {
      // Like a kernel that faulted: answer, then the serve loop exits (context_lost).
      lost_ = true;
      TrialResult r;
      r.id = request.id;
      r.status = tiletune::TrialStatus::runtime_fault;
      r.detail = "CUDA_ERROR_ILLEGAL_ADDRESS: the CUDA context is lost";
      return r;
    }
    if (request.id == options_.at && mode_ == "checkfail") {
      TrialResult r;
      r.id = request.id;
      r.status = tiletune::TrialStatus::runtime_fault;
      r.detail = "host check [./check.py] exited with status 1 before answering";
      r.host_check_failed = true;
      r.shared_failure = true;
      return r;
    }
    if (request.id == options_.at && mode_ == "globalfail") {
      TrialResult r;
      r.id = request.id;
      r.status = tiletune::TrialStatus::launch_failed;
      r.detail = "module global 'filter' is 900 bytes in the module of k [A=1], smaller than the 1089 x float = "
                 "4356 bytes the space fills it with";
      r.shared_failure = true;
      return r;
    }
    if (options_.recording) return scaled(from_recording(*options_.recording, request));
    TrialResult r;
    r.id = request.id;
    r.median_ms = static_cast<double>(request.id);
    r.mean_ms = r.median_ms;
    r.min_ms = r.median_ms;
    r.samples = 10;
    r.times_ms.assign(10, r.median_ms);
    r.verify_ms = 0.25;
    const char* fds = std::getenv(tiletune::worker_fds_env);
    r.detail = std::string("fds=") + (fds ? fds : "") + " cubin=" + std::to_string(request.cubin.size());
    return r;
  }

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

  TrialResult scaled(TrialResult r) const {
    for (const Options::Scale& scale : options_.scales) {
      if (r.id < scale.first || r.id > scale.last) continue;
      r.median_ms *= scale.factor;
      r.mean_ms *= scale.factor;
      r.min_ms *= scale.factor;
      for (double& t : r.times_ms) t *= scale.factor;
    }
    return r;
  }

  void log(const TrialRequest& request) const {
    if (options_.log.empty()) return;
    std::ofstream out(options_.log, std::ios::app);
    out << request.id << (request.is_reference ? " reference " : " trial ") << request.problem_key << ' '
        << request.config_text << '\n';
  }

  Options options_;
  const std::string& mode_;
  bool lost_ = false;
  int in_fd_;
  int out_fd_;
};

}  // namespace

int main(int argc, char** argv) {
  static const std::set<std::string> kModes = {"ok",   "sleep", "crash", "exit",      "garbage",   "huge", "throw",
                                               "linger", "deaf", "lost", "dead", "checkfail", "globalfail"};
  const char* usage =
      "usage: fake_worker ok|sleep|crash|exit|garbage|huge|throw|linger|deaf|lost|dead|checkfail|globalfail [--at ID] "
      "[--recording FILE] "
      "[--delay-ms N] [--log FILE] [--timeline FILE] [--poison FILE] [--crash-on CONFIG] [--scale FIRST-LAST:FACTOR]\n";
  if (argc < 2 || kModes.count(argv[1]) == 0 || argc % 2 != 0) {
    std::fputs(usage, stderr);
    return 64;
  }
  Options options;
  options.mode = argv[1];
  try {
    for (int i = 2; i + 1 < argc; i += 2) {
      const std::string flag = argv[i], value = argv[i + 1];
      if (flag == "--at")
        options.at = std::stoull(value);
      else if (flag == "--recording")
        options.recording = tiletune::load_landscape(value);
      else if (flag == "--delay-ms")
        options.delay_ms = std::stoi(value);
      else if (flag == "--log")
        options.log = value;
      else if (flag == "--timeline")
        options.timeline = value;
      else if (flag == "--poison")
        options.poison = value;
      else if (flag == "--crash-on")
        options.crash_on = value;
      else if (flag == "--scale")
        options.scales.push_back(parse_scale(value));
      else
        throw std::invalid_argument("unknown option " + flag);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_worker: %s\n%s", e.what(), usage);
    return 64;
  }
  if (options.mode == "dead" || (!options.poison.empty() && std::filesystem::exists(options.poison))) {
    std::fprintf(stderr, "fake_worker: this fake GPU is %s: no worker starts\n",
                 options.mode == "dead" ? "dead" : "poisoned");
    return 1;
  }
  if (options.mode == "crash" || !options.crash_on.empty()) {
    rlimit no_core{0, 0};  // a test crash should not leave a core file behind
    if (::setrlimit(RLIMIT_CORE, &no_core) != 0) std::perror("fake_worker: setrlimit(RLIMIT_CORE)");
  }
  try {
    tiletune::WorkerFds fds = tiletune::worker_fds_from_env();
    const std::string mode = options.mode;
    FakeHandler handler(std::move(options), fds.in_fd, fds.out_fd);
    int code = tiletune::serve_worker(handler, fds.in_fd, fds.out_fd);
    if (mode == "linger" || (mode == "deaf" && code != 0)) hang();
    return code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_worker: %s\n", e.what());
    return 1;
  }
}
