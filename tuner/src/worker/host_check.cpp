// The host check (host_check.hpp): the request line a trial sends, the reply it reads, and the
// program itself, started with fork and exec in the worker and spoken to over two pipes, every
// read and write bounded by the trial's deadline. Whatever the program does wrong ends the
// check with a HostCheckError that names the command and what it did; the worker then reports
// the trial as the check's failure (TrialResult::host_check_failed), not the candidate's.
#include "worker/host_check.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/scratch_dir.hpp"
#include "common/process_io.hpp"
#include "tiletune/data_file.hpp"

extern char** environ;  // NOLINT: POSIX; the program's environment is the worker's

namespace tiletune {
namespace {

using namespace process_io;  // NOLINT: the pipes, deadlines and reaping of a child
using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;
namespace field = host_check_field;

constexpr const char* kPeer = "the host check";
// How long the program may take to exit once its stdin is closed (or after it closed its stdout)
// before it is killed.
constexpr auto kExitGrace = std::chrono::seconds(1);
constexpr std::size_t kReadChunk = 4096;

// A buffer's name as a file name: the loader allows identifiers only, but the request comes over
// a pipe and a name must not leave the directory.
bool plain_file_name(std::string_view name) {
  if (name.empty() || name.size() > 200 || name.front() == '.') return false;
  for (const char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

// A param's label as the request shows it: integer and real params as JSON numbers, text params
// (and a label that is not the number its kind promises) as strings.
OrderedJson param_value(const ParamValue& p) {
  const char* begin = p.label.data();
  const char* end = begin + p.label.size();
  if (p.kind == AxisKind::integer) {
    std::int64_t v = 0;
    if (const auto [at, ec] = std::from_chars(begin, end, v); ec == std::errc() && at == end) return v;
  } else if (p.kind == AxisKind::real) {
    double v = 0;
    if (const auto [at, ec] = std::from_chars(begin, end, v); ec == std::errc() && at == end && std::isfinite(v))
      return v;
  }
  return p.label;
}

// "'{"ok": tru' (13 bytes)": what the program answered, at most host_check_quoted_bytes of it.
std::string quoted_answer(std::string_view answer) {
  std::string out = "'" + escaped_excerpt(answer.substr(0, host_check_quoted_bytes), host_check_quoted_bytes) + "'";
  if (answer.size() > host_check_quoted_bytes)
    out += fmt::format(" (the first {} of {} bytes)", host_check_quoted_bytes, answer.size());
  return out;
}

// Everything the program needs between fork and exec, prepared before the fork: a worker has
// threads, so the child may only make async-signal-safe calls (no allocation) until exec.
struct ChildSetup {
  const char* program = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* directory = nullptr;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int status_fd = -1;
  pid_t parent = 0;
  sigset_t empty_mask{};
};
// The steps of exec_program that may fail, as it reports them on the status pipe.
constexpr const char* kChildSteps[] = {
    "prctl(PR_SET_PDEATHSIG)", "sigprocmask", "dup2(stdin)", "dup2(stdout)", "chdir", "execve", "setpgid"};

[[noreturn]] void exec_program(const ChildSetup& s) noexcept {
  auto fail = [&](int step) { report_exec_failure(s.status_fd, step); };
  // Killed with the worker, whatever kills it (the parent's SIGKILL for an overrun included);
  // a worker that died between the fork and here is already gone.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(0);
  if (::getppid() != s.parent) ::_exit(127);
  // A process group of its own: the worker's kill ends what the check started too (a shell's
  // commands, a pool of helpers), and a kill of the check's group never reaches the worker.
  if (::setpgid(0, 0) != 0) fail(6);
  ::signal(SIGPIPE, SIG_DFL);  // the worker ignores SIGPIPE; its check starts with the default
  if (::sigprocmask(SIG_SETMASK, &s.empty_mask, nullptr) != 0) fail(1);
  if (::dup2(s.stdin_fd, 0) < 0) fail(2);
  if (::dup2(s.stdout_fd, 1) < 0) fail(3);
  if (::chdir(s.directory) != 0) fail(4);
#ifdef SYS_close_range
  // Nothing else of the worker's (its protocol pipes, the driver's files) crosses the exec.
  (void)::syscall(SYS_close_range, 3u, ~0u, 1u << 2 /* CLOSE_RANGE_CLOEXEC */);
#endif
  ::execve(s.program, s.argv, s.envp);
  fail(5);
  ::_exit(127);  // not reached
}

}  // namespace

HostCheckFile write_host_check_file(const std::filesystem::path& dir, const BufferPlan& buffer,
                                    std::span<const std::byte> data) {
  if (!plain_file_name(buffer.name))
    throw Error(fmt::format("host check: buffer name '{}' is not a plain file name", escaped_excerpt(buffer.name, 80)));
  if (data.size() != buffer.count * element_size(buffer.type))
    throw Error(fmt::format("host check: buffer '{}' holds {} bytes, not {} x {}", buffer.name, data.size(),
                            buffer.count, element_type_name(buffer.type)));
  HostCheckFile file{buffer.name, buffer.type, buffer.count, dir / (buffer.name + ".npy")};
  write_npy(file.path, buffer.type, data);
  return file;
}

std::string host_check_request(const TrialRequest& request, const std::vector<HostCheckFile>& files) {
  OrderedJson problem = OrderedJson::object();
  for (const auto& [name, value] : request.sizes) problem[name] = value;
  OrderedJson config = OrderedJson::object();
  for (const ParamValue& p : request.params) config[p.name] = param_value(p);
  OrderedJson buffers = OrderedJson::object();
  for (const HostCheckFile& f : files)
    buffers[f.name] = {
        {field::path, f.path.string()}, {field::type, element_type_name(f.type)}, {field::count, f.count}};
  const OrderedJson line = {{field::kernel, request.kernel},
                            {field::problem, std::move(problem)},
                            {field::config, std::move(config)},
                            {field::buffers, std::move(buffers)}};
  // One line: dump escapes the newlines of strings; a path that is not UTF-8 is not refused.
  return line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

HostCheckVerdict parse_host_check_reply(std::string_view line) {
  // A verdict is flat: whatever nests below its top level is dropped as it is read, so that a
  // deep answer costs no memory (the parser itself does not recurse).
  const auto flat = [](int depth, Json::parse_event_t event, Json&) {
    return depth == 0 || (event != Json::parse_event_t::object_start && event != Json::parse_event_t::array_start);
  };
  Json reply;
  try {
    reply = Json::parse(line.begin(), line.end(), flat);
  } catch (const Json::exception& e) { throw Error(fmt::format("not JSON ({})", escaped_excerpt(e.what(), 200))); }
  if (!reply.is_object()) throw Error("not a JSON object");
  const auto ok = reply.find(field::ok);
  if (ok == reply.end() || !ok->is_boolean()) throw Error("its \"ok\" is missing or not true or false");
  HostCheckVerdict verdict;
  verdict.ok = ok->get<bool>();
  if (const auto detail = reply.find(field::detail); detail != reply.end() && !detail->is_null()) {
    if (!detail->is_string()) throw Error("its \"detail\" is not a string");
    verdict.detail = escaped_excerpt(detail->get_ref<const std::string&>(), host_check_max_detail_chars);
  }
  return verdict;
}

struct HostCheck::Impl {
  HostCommand command;
  std::optional<ScratchDir> directory;         // under $TMPDIR, made on first use
  std::optional<ScratchDir> memory_directory;  // under /dev/shm, made on first use
  std::unique_ptr<ChildProcess> child;
  UniqueFd to_program;                // its stdin
  UniqueFd from_program;              // its stdout
  std::optional<std::string> broken;  // the failure every later check repeats

  // Starts the program. Throws Error saying why it could not be.
  void start() {
    auto [in, out, status] = make_child_pipes("host check");

    std::vector<char*> argv;
    for (std::string& a : command.argv) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Python buffers a pipe's output until exit unless told not to: the most common way for a
    // checker to hang. PYTHONUNBUFFERED=1 unless the environment says otherwise.
    std::string unbuffered = "PYTHONUNBUFFERED=1";
    std::vector<char*> envp;
    bool python_set = false;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      python_set = python_set || std::strncmp(*e, "PYTHONUNBUFFERED=", 17) == 0;
      envp.push_back(*e);
    }
    if (!python_set) envp.push_back(unbuffered.data());
    envp.push_back(nullptr);

    ChildSetup setup;
    setup.program = command.program.c_str();
    setup.argv = argv.data();
    setup.envp = envp.data();
    setup.directory = command.directory.c_str();
    setup.stdin_fd = in.read.get();
    setup.stdout_fd = out.write.get();
    setup.status_fd = status.write.get();
    setup.parent = ::getpid();
    ::sigemptyset(&setup.empty_mask);

    const pid_t pid = ::fork();
    if (pid < 0) throw Error(fmt::format("fork: {}", errno_text(errno)));
    if (pid == 0) exec_program(setup);
    (void)::setpgid(pid, pid);  // as the child does, so that its group exists before either runs on
    auto started = std::make_unique<ChildProcess>(pid, /*own_group=*/true);
    in.read.reset();  // our copies of its ends: else its death would never show as EOF
    out.write.reset();
    status.write.reset();
    std::optional<ExecFailure> failure;
    try {
      failure = read_exec_failure(status.read.get());
    } catch (const Error&) {
      (void)started->kill_and_reap();
      throw;
    }
    if (failure) {
      (void)started->kill_and_reap();
      if (failure->step < 0 || failure->step >= static_cast<int>(std::size(kChildSteps)))
        throw Error("it failed before exec");
      throw Error(fmt::format("{}: {}", kChildSteps[failure->step], errno_text(failure->error)));
    }
    child = std::move(started);
    to_program = std::move(in.write);
    from_program = std::move(out.read);
  }

  // The program is useless from here on: kill it and forget it.
  void stop() noexcept {
    to_program.reset();
    from_program.reset();
    if (child) (void)child->kill_and_reap();
    child.reset();
  }

  // Marks the check broken with `what` the program did, stops the program, and returns the error.
  HostCheckError fail(const std::string& what) {
    broken = fmt::format("host check {} {}", command.text(), what);
    stop();
    return HostCheckError(*broken);
  }

  // What the program's end came to, once its stdout is closed: its exit status, or that it had
  // to be killed.
  std::string ending() {
    bool killed = false;
    const std::optional<int> status = child->reap_within(kExitGrace, &killed);
    child.reset();
    return killed ? "closed its stdout without exiting (killed)" : describe_status(status);
  }

  // Output written since the last answer (or before the first request): nothing is allowed there.
  void refuse_unsolicited() {
    char bytes[kReadChunk];
    std::size_t got = 0;
    switch (read_some(from_program.get(), bytes, sizeof bytes, got, Deadline(0), kPeer)) {
      case IoOutcome::timeout: return;  // nothing: as it should be
      case IoOutcome::closed: throw fail(ending() + " after its last answer (it must serve every trial of the sweep)");
      case IoOutcome::ok:
        throw fail(
            fmt::format("wrote {} to its stdout outside an answer (one line per request; print anything "
                        "else to stderr)",
                        quoted_answer(std::string_view(bytes, got))));
    }
  }

  HostCheckVerdict exchange(const std::string& request_line, double timeout_seconds) {
    const Deadline deadline(timeout_seconds);
    const std::string waited = std::isinf(timeout_seconds) ? "" : fmt::format(" within {:.1f} s", timeout_seconds);
    refuse_unsolicited();
    switch (write_all(to_program.get(), request_line, deadline, kPeer)) {
      case IoOutcome::ok: break;
      case IoOutcome::closed: throw fail(ending() + " instead of reading its request");
      case IoOutcome::timeout: throw fail("did not read its request" + waited);
    }
    std::string answer;
    for (;;) {
      if (const std::size_t newline = answer.find('\n'); newline != std::string::npos) {
        if (newline + 1 != answer.size())
          throw fail(fmt::format("answered more than one line: {}", quoted_answer(answer)));
        answer.pop_back();
        break;
      }
      if (answer.size() > host_check_max_reply_bytes)
        throw fail(fmt::format("answered a line longer than {} KiB: {}", host_check_max_reply_bytes >> 10,
                               quoted_answer(answer)));
      char bytes[kReadChunk];
      std::size_t got = 0;
      switch (read_some(from_program.get(), bytes, sizeof bytes, got, deadline, kPeer)) {
        case IoOutcome::ok: answer.append(bytes, got); continue;
        case IoOutcome::closed:
          throw fail(ending() + (answer.empty()
                                     ? " before answering"
                                     : fmt::format(" after an unfinished answer {}", quoted_answer(answer))));
        case IoOutcome::timeout:
          throw fail("answered nothing" + waited +
                     (answer.empty() ? "" : fmt::format(" but {} (no newline)", quoted_answer(answer))));
      }
    }
    if (!answer.empty() && answer.back() == '\r') answer.pop_back();
    try {
      return parse_host_check_reply(answer);
    } catch (const Error& e) {
      throw fail(fmt::format("answered {}, which is not {{\"ok\": true}} or {{\"ok\": false, \"detail\": \"...\"}}: {}",
                             quoted_answer(answer), e.what()));
    }
  }
};

HostCheck::HostCheck(HostCommand command) : impl_(std::make_unique<Impl>()) {
  if (command.empty() || command.program.empty()) throw Error("HostCheck: no program to run");
  impl_->command = std::move(command);
}

HostCheck::~HostCheck() {
  Impl& s = *impl_;
  s.to_program.reset();  // EOF on its stdin: a well-behaved check exits
  s.from_program.reset();
  if (s.child) {
    const pid_t group = s.child->pid();
    (void)s.child->reap_within(kExitGrace);
    (void)::kill(-group, SIGKILL);  // what it left running in its group
  }
  s.directory.reset();  // after the program exited: it may still have been writing there
  s.memory_directory.reset();
}

const HostCommand& HostCheck::command() const noexcept { return impl_->command; }

pid_t HostCheck::pid() const noexcept { return impl_->child ? impl_->child->pid() : 0; }

namespace {

// Shared memory (tmpfs): files there live in RAM and are gone with the machine's next boot.
constexpr const char* kMemoryDir = "/dev/shm";
// What a trial's files leave free in shared memory, at least: other programs use it too.
constexpr std::uint64_t kMemoryHeadroom = std::uint64_t{64} << 20;

bool fits_in_memory_dir(std::uint64_t bytes) {
  struct statvfs fs {};
  if (::statvfs(kMemoryDir, &fs) != 0 || ::access(kMemoryDir, W_OK | X_OK) != 0) return false;
  const std::uint64_t free_bytes = std::uint64_t{fs.f_bavail} * fs.f_frsize;
  return free_bytes >= kMemoryHeadroom && bytes <= free_bytes - kMemoryHeadroom;
}

}  // namespace

const std::filesystem::path& HostCheck::directory(std::uint64_t bytes) {
  Impl& s = *impl_;
  if (const char* base = std::getenv(host_check_dir_env); base != nullptr && *base != '\0') {
    if (!s.directory) s.directory.emplace("tiletune-check", base);
    return s.directory->path();
  }
  if (fits_in_memory_dir(bytes)) {
    try {
      if (!s.memory_directory) s.memory_directory.emplace("tiletune-check", kMemoryDir);
      return s.memory_directory->path();
    } catch (const Error&) {  // cannot make a directory there after all: the temp dir serves
    }
  }
  if (!s.directory) s.directory.emplace("tiletune-check");
  return s.directory->path();
}

HostCheckVerdict HostCheck::check(const std::string& request_line, double timeout_seconds) {
  Impl& s = *impl_;
  if (s.broken) throw HostCheckError(*s.broken);
  if (!s.child) {
    try {
      s.start();
    } catch (const Error& e) {
      throw s.fail(fmt::format("could not be started ({}): {}", s.command.program, e.what()));
    }
  }
  return s.exchange(request_line, timeout_seconds);
}

}  // namespace tiletune
