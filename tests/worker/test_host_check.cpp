// The host check (worker/host_check.hpp) without a GPU: the request line a trial sends (its fields,
// their order, one line), the .npy files of the buffers (dtype and count), the reply's parsing,
// and the program itself driven through checker scripts written here (sh and Python): it answers
// ok, not ok with a detail, garbage, a line over 64 KiB, two lines; it exits, hangs (bounded by
// the timeout, its own processes killed with it), prints before it is asked; every failure names
// the command and is repeated on the next check without a restart; and a check dies with the
// process that started it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <thread>

#include <nlohmann/json.hpp>

#include "worker/host_check.hpp"
#include "test_support.hpp"
#include "tiletune/data_file.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A request as make_trial_request builds one: a problem, a config of each param kind, buffers.
TrialRequest sample_request() {
  TrialRequest r;
  r.kernel = "my_scale";
  r.sizes = {{"N", 8192}, {"M", 3}};
  r.params = {{"TILE", AxisKind::integer, "32"},
              {"ALPHA", AxisKind::real, "0.5"},
              {"T", AxisKind::text, "float"},
              {"NEG", AxisKind::integer, "-4"}};
  r.buffers = {{"x", ElementType::f32, 4, {}, false},
               {"idx", ElementType::i64, 3, {}, false},
               {"y", ElementType::f16, 2, {}, true}};
  return r;
}

template <class T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

// Writes an executable script and returns the command that runs it (found by its path).
HostCommand script(const testing::TempDir& dir, const std::string& name, const std::string& text) {
  const fs::path path = dir.write(name, text);
  ::chmod(path.c_str(), 0755);
  return HostCommand{{"./" + name, "--flag"}, path.string(), dir.path().string(), {}};
}

// The error a check throws, or "" when it answered.
std::string failure_of(HostCheck& check, const std::string& line = "{}\n", double timeout = 10) {
  try {
    (void)check.check(line, timeout);
    return "";
  } catch (const HostCheckError& e) { return e.what(); }
}

bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  // A zombie that nobody reaps (a container's init may not) is dead all the same.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// True when the process is gone within `seconds`; else it is killed (the test fails anyway).
bool ends_within(pid_t pid, double seconds) {
  const auto start = Clock::now();
  while (!process_gone(pid)) {
    if (seconds_since(start) > seconds) {
      ::kill(pid, SIGKILL);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST(HostCheckRequest, IsOneLineWithTheKernelProblemConfigAndBuffersInOrder) {
  testing::TempDir dir;
  const TrialRequest r = sample_request();
  const std::vector<float> x{1, 2, 3, 4};
  const std::vector<std::int64_t> idx{7, -8, 9};
  const std::vector<std::uint16_t> y{0x3c00, 0xc000};  // 1.0 and -2.0 in half
  std::vector<HostCheckFile> files{write_host_check_file(dir.path(), r.buffers[0], bytes_of(x)),
                                   write_host_check_file(dir.path(), r.buffers[1], bytes_of(idx)),
                                   write_host_check_file(dir.path(), r.buffers[2], bytes_of(y))};
  const std::string line = host_check_request(r, files);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line: " << line;
  const Json j = Json::parse(line);
  // The top level, in this order.
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"kernel", "problem", "config", "buffers"}));
  EXPECT_EQ(j["kernel"], "my_scale");
  EXPECT_EQ(j["problem"], Json::parse(R"({"M": 3, "N": 8192})"));
  // Integer and real params as numbers, text params as strings, in params order.
  EXPECT_EQ(j["config"].dump(), R"({"TILE":32,"ALPHA":0.5,"T":"float","NEG":-4})");
  EXPECT_TRUE(j["config"]["TILE"].is_number_integer());
  EXPECT_TRUE(j["config"]["ALPHA"].is_number_float());
  // The buffers in the space's order, each with its file, type and count.
  std::vector<std::string> names;
  for (const auto& [k, v] : j["buffers"].items()) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "idx", "y"}));
  EXPECT_EQ(j["buffers"]["x"],
            Json::parse(R"({"path": ")" + (dir.path() / "x.npy").string() + R"(", "type": "float", "count": 4})"));
  EXPECT_EQ(j["buffers"]["idx"]["type"], "int64");
  EXPECT_EQ(j["buffers"]["y"]["type"], "half");
  EXPECT_EQ(j["buffers"]["y"]["count"], 2);
  // The same names as the declarations the reader uses.
  EXPECT_TRUE(j.contains(host_check_field::kernel) && j.contains(host_check_field::problem) &&
              j.contains(host_check_field::config) && j.contains(host_check_field::buffers));
}

TEST(HostCheckRequest, ATextParamThatLooksLikeANumberStaysText) {
  TrialRequest r = sample_request();
  r.params = {{"V", AxisKind::text, "2"}, {"R", AxisKind::real, "1e-3"}, {"W", AxisKind::real, "nan"}};
  const Json j = Json::parse(host_check_request(r, {}));
  EXPECT_EQ(j["config"]["V"], "2");
  EXPECT_DOUBLE_EQ(j["config"]["R"].get<double>(), 1e-3);
  EXPECT_EQ(j["config"]["W"], "nan");  // JSON has no NaN: the label as written
  EXPECT_TRUE(j["buffers"].is_object() && j["buffers"].empty());
}

TEST(HostCheckFiles, HoldEachBufferWithItsDtypeAndCount) {
  testing::TempDir dir;
  const TrialRequest r = sample_request();
  const std::vector<float> x{1.5f, -2, 3, 4};
  const std::vector<std::int64_t> idx{7, -8, std::numeric_limits<std::int64_t>::min()};
  const std::vector<std::uint16_t> y{0x3c00, 0xc000};
  const HostCheckFile fx = write_host_check_file(dir.path(), r.buffers[0], bytes_of(x));
  const HostCheckFile fi = write_host_check_file(dir.path(), r.buffers[1], bytes_of(idx));
  const HostCheckFile fy = write_host_check_file(dir.path(), r.buffers[2], bytes_of(y));
  EXPECT_EQ(fx.path, dir.path() / "x.npy");
  struct Want {
    const HostCheckFile* file;
    ElementType type;
    std::uint64_t count;
    const char* dtype;
  };
  for (const Want& w : {Want{&fx, ElementType::f32, 4, "<f4"}, Want{&fi, ElementType::i64, 3, "<i8"},
                        Want{&fy, ElementType::f16, 2, "<f2"}}) {
    SCOPED_TRACE(w.file->name);
    const DataFileInfo info = inspect_data_file(w.file->path);
    EXPECT_TRUE(info.npy);
    ASSERT_TRUE(info.type);
    EXPECT_EQ(*info.type, w.type);
    EXPECT_EQ(info.shape, (std::vector<std::uint64_t>{w.count}));
    EXPECT_NE(testing::read_file(w.file->path).find(std::string("'descr': '") + w.dtype + "'"), std::string::npos);
    EXPECT_EQ(w.file->count, w.count);
    EXPECT_EQ(w.file->type, w.type);
  }
  const std::vector<std::byte> back = read_data_file(fi.path, ElementType::i64, 3, "idx");
  std::vector<std::int64_t> values(3);
  std::memcpy(values.data(), back.data(), back.size());
  EXPECT_EQ(values, idx);
  // An empty buffer is an empty array; a name that would leave the directory, or data of another
  // size, is refused.
  const BufferPlan empty{"none", ElementType::u8, 0, {}, true};
  EXPECT_EQ(inspect_data_file(write_host_check_file(dir.path(), empty, {}).path).shape,
            (std::vector<std::uint64_t>{0}));
  BufferPlan escape = r.buffers[0];
  escape.name = "../x";
  EXPECT_THROW((void)write_host_check_file(dir.path(), escape, bytes_of(x)), Error);
  EXPECT_THROW((void)write_host_check_file(dir.path(), r.buffers[0], bytes_of(idx)), Error);
}

TEST(HostCheckReply, OkOrNotOkWithAnOptionalDetail) {
  EXPECT_TRUE(parse_host_check_reply(R"({"ok": true})").ok);
  EXPECT_TRUE(parse_host_check_reply(R"({"ok": true, "detail": "fine", "extra": [1, {"x": 2}]})").ok);
  HostCheckVerdict v = parse_host_check_reply(R"({"detail": "out[3] = 7, want 6", "ok": false})");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.detail, "out[3] = 7, want 6");
  v = parse_host_check_reply(R"({"ok": false})");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.detail, "");
  EXPECT_EQ(parse_host_check_reply(R"({"ok": false, "detail": null})").detail, "");
  // The detail is kept escaped and bounded.
  EXPECT_EQ(parse_host_check_reply(R"({"ok": false, "detail": "two\nlines\u0007 \u00b5s"})").detail,
            "two\\nlines\\x07 \xc2\xb5s");
  const std::string long_detail(10000, 'w');
  v = parse_host_check_reply(R"({"ok": false, "detail": ")" + long_detail + "\"}");
  EXPECT_EQ(v.detail.substr(0, host_check_max_detail_chars), long_detail.substr(0, host_check_max_detail_chars));
  EXPECT_LT(v.detail.size(), host_check_max_detail_chars + 30);
  EXPECT_NE(v.detail.find("(10000 bytes)"), std::string::npos);
}

TEST(HostCheckReply, AnythingElseIsAnErrorSayingWhat) {
  struct Case {
    std::string line;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {"", "not JSON"},
      {"ok", "not JSON"},
      {R"({"ok": true)", "not JSON"},
      {R"({"ok": true} {"ok": true})", "not JSON"},
      {"[true]", "not a JSON object"},
      {"true", "not a JSON object"},
      {R"({"detail": "x"})", "\"ok\" is missing"},
      {R"({"ok": "true"})", "not true or false"},
      {R"({"ok": 1})", "not true or false"},
      {R"({"ok": false, "detail": 3})", "\"detail\" is not a string"},
      // Nested far below the top level: dropped as it is read, not a stack overflow.
      {R"({"ok": true, "x": )" + std::string(100000, '[') + std::string(100000, ']') + "}", ""},
      {std::string(100000, '[') + std::string(100000, ']'), "not a JSON object"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line.substr(0, 60));
    if (*c.needle == '\0') {
      EXPECT_TRUE(parse_host_check_reply(c.line).ok);
      continue;
    }
    try {
      (void)parse_host_check_reply(c.line);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what(); }
  }
}

// --- the program ---------------------------------------------------------------------------

constexpr const char* kAnswersOk = "#!/bin/sh\nwhile read -r line; do echo '{\"ok\": true}'; done\n";

TEST(HostCheckProgram, IsStartedOnceAndAnswersEveryRequest) {
  testing::TempDir dir;
  // It counts its requests and runs in the command's directory, with its arguments.
  HostCheck check(script(dir, "count.sh",
                         "#!/bin/sh\nn=0\nwhile read -r line; do n=$((n+1)); echo \"$n $(pwd) $*\" > answered.txt; "
                         "if [ $n -eq 2 ]; then echo '{\"ok\": false, \"detail\": \"second\"}'; "
                         "else echo '{\"ok\": true}'; fi; done\n"));
  EXPECT_EQ(check.pid(), 0);
  EXPECT_TRUE(check.check("{}\n", 10).ok);
  const pid_t pid = check.pid();
  EXPECT_GT(pid, 0);
  const HostCheckVerdict second = check.check("{}\n", 10);
  EXPECT_FALSE(second.ok);
  EXPECT_EQ(second.detail, "second");
  EXPECT_TRUE(check.check("{}\n", std::numeric_limits<double>::infinity()).ok);
  EXPECT_EQ(check.pid(), pid) << "one process for every check";
  EXPECT_EQ(testing::read_file(dir.path() / "answered.txt"), "3 " + dir.path().string() + " --flag\n");
}

TEST(HostCheckProgram, ItsDirectoryIsPrivateAndGoesWithIt) {
  testing::TempDir dir;
  fs::path kept;
  {
    HostCheck check(script(dir, "ok.sh", kAnswersOk));
    kept = check.directory(0);
    EXPECT_EQ(check.directory(0), kept) << "made once";
    EXPECT_TRUE(fs::is_directory(kept));
    EXPECT_EQ(fs::status(kept).permissions() & fs::perms::all, fs::perms::owner_all) << "mkdtemp: the owner's only";
    std::ofstream(kept / "left.npy") << "x";
    EXPECT_TRUE(check.check("{}\n", 10).ok);
  }
  EXPECT_FALSE(fs::exists(kept)) << "removed with its files";
}

TEST(HostCheckProgram, APythonCheckReadsTheFilesOfTheRequest) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  testing::TempDir dir;
  // Reads each buffer's .npy header and data as numpy.load would, without numpy; no flush:
  // the check's environment makes Python's output unbuffered.
  const std::string checker = R"(import json, struct, sys
for line in sys.stdin:
    request = json.loads(line)
    sizes = {"float": 4, "int64": 8, "half": 2}
    seen = []
    for name, b in request["buffers"].items():
        with open(b["path"], "rb") as f:
            data = f.read()
        assert data[:6] == b"\x93NUMPY", name
        header_len = struct.unpack("<H", data[8:10])[0]
        values = data[10 + header_len:]
        assert len(values) == b["count"] * sizes[b["type"]], name
        seen.append("%s=%d" % (name, b["count"]))
    x0 = struct.unpack("<f", open(request["buffers"]["x"]["path"], "rb").read()[-16:-12])[0]
    ok = x0 == 1.5 and request["config"]["TILE"] == 32 and request["problem"]["N"] == 8192
    print(json.dumps({"ok": ok, "detail": " ".join(seen) + " x[0]=%g" % x0}))
)";
  (void)dir.write("check.py", checker);
  HostCheck check(HostCommand{{"python3", "check.py"}, "/usr/bin/python3", dir.path().string(), {}});
  const TrialRequest r = sample_request();
  auto request_with_x0 = [&](float x0) {
    const std::vector<float> x{x0, -2, 3, 4};
    const std::vector<std::int64_t> idx{7, -8, 9};
    const std::vector<std::uint16_t> y{0x3c00, 0xc000};
    return host_check_request(r, {write_host_check_file(check.directory(64), r.buffers[0], bytes_of(x)),
                                  write_host_check_file(check.directory(64), r.buffers[1], bytes_of(idx)),
                                  write_host_check_file(check.directory(64), r.buffers[2], bytes_of(y))});
  };
  const HostCheckVerdict good = check.check(request_with_x0(1.5f), 30);
  EXPECT_TRUE(good.ok) << good.detail;
  EXPECT_EQ(good.detail, "x=4 idx=3 y=2 x[0]=1.5");
  const HostCheckVerdict bad = check.check(request_with_x0(7), 30);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.detail, "x=4 idx=3 y=2 x[0]=7");
}

// A trial's files live in shared memory where they fit (a RAM file system: they never reach a
// disk), and under the temp dir where they do not; each directory is made once and removed.
TEST(HostCheckProgram, SmallFilesGoToSharedMemoryAndTooLargeOnesToTheTempDir) {
  testing::TempDir dir;
  fs::path in_memory, on_disk;
  {
    HostCheck check(script(dir, "ok.sh", kAnswersOk));
    on_disk = check.directory(std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(on_disk.parent_path(), fs::temp_directory_path()) << "more than any memory holds";
    in_memory = check.directory(4096);
    if (::access("/dev/shm", W_OK | X_OK) == 0) {
      EXPECT_EQ(in_memory.parent_path(), fs::path("/dev/shm"));
      EXPECT_EQ(check.directory(1), in_memory) << "made once";
    } else {
      EXPECT_EQ(in_memory, on_disk) << "no shared memory: the temp dir serves";
    }
    EXPECT_EQ(check.directory(std::numeric_limits<std::uint64_t>::max()), on_disk) << "made once";
  }
  EXPECT_FALSE(fs::exists(in_memory));
  EXPECT_FALSE(fs::exists(on_disk));
}

// $TILETUNE_HOST_CHECK_DIR puts the files where the user says, whatever their size.
TEST(HostCheckProgram, TheFilesGoWhereTheEnvironmentSays) {
  testing::TempDir dir;
  const fs::path base = dir.path() / "checks";
  fs::create_directory(base);
  ::setenv(host_check_dir_env, base.c_str(), 1);
  fs::path made;
  {
    HostCheck check(script(dir, "ok.sh", kAnswersOk));
    made = check.directory(16);
    EXPECT_EQ(made.parent_path(), base);
    EXPECT_EQ(check.directory(std::numeric_limits<std::uint64_t>::max()), made);
  }
  ::unsetenv(host_check_dir_env);
  EXPECT_FALSE(fs::exists(made));
}

// Each way a program fails its protocol: the error names the command and what it did.
TEST(HostCheckProgram, AProgramThatFailsTheProtocolIsTheChecksFault) {
  struct Case {
    const char* what;
    std::string text;
    std::vector<const char*> needles;
  };
  const std::vector<Case> cases = {
      {"garbage",
       "#!/bin/sh\nread -r line; echo 'all good!'; sleep 30\n",
       {"answered 'all good!', which is not {\"ok\": true} or {\"ok\": false", "not JSON"}},
      {"not a verdict", "#!/bin/sh\nread -r line; echo '{\"okay\": true}'; sleep 30\n", {"\"ok\" is missing"}},
      {"control bytes",
       "#!/bin/sh\nread -r line; printf 'bad\\001\\033[31m\\n'; sleep 30\n",
       {"answered 'bad\\x01\\x1b[31m'"}},
      {"too long",
       "#!/bin/sh\nread -r line; head -c 70000 /dev/zero | tr '\\0' x; echo; sleep 30\n",
       {"a line longer than 64 KiB", "'xxxxxxxxxx", "(the first 200 of"}},
      {"two lines",
       "#!/bin/sh\nread -r line; printf '{\"ok\": true}\\n{\"ok\": true}\\n'; sleep 30\n",
       {"more than one line"}},
      {"exit", "#!/bin/sh\nread -r line; exit 3\n", {"exited with status 3 before answering"}},
      {"killed", "#!/bin/sh\nread -r line; kill -9 $$\n", {"killed by signal 9 (Killed) before answering"}},
      {"half an answer",
       "#!/bin/sh\nread -r line; printf '{\"ok\": tr'; exit 0\n",
       {"exited with status 0 after an unfinished answer '{\"ok\": tr'"}},
      {"closes stdout",
       "#!/bin/sh\nread -r line; exec 1>&-; sleep 30\n",
       {"closed its stdout without exiting (killed)"}},
      {"never reads", "#!/bin/sh\nexec 0<&-; exit 4\n", {"exited with status 4"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    testing::TempDir dir;
    HostCheck check(script(dir, "bad.sh", c.text));
    const auto start = Clock::now();
    const std::string error = failure_of(check);
    EXPECT_LT(seconds_since(start), 8) << "no wait for the 30 s sleep";
    EXPECT_EQ(error.rfind("host check [./bad.sh, --flag] ", 0), 0u) << error;
    for (const char* needle : c.needles) EXPECT_NE(error.find(needle), std::string::npos) << error;
    EXPECT_EQ(check.pid(), 0) << "killed and reaped";
    // Broken for good: the next check repeats it at once, without a new process.
    const auto again = Clock::now();
    EXPECT_EQ(failure_of(check), error);
    EXPECT_LT(seconds_since(again), 0.5);
    EXPECT_EQ(check.pid(), 0);
  }
}

TEST(HostCheckProgram, AHungProgramIsKilledAtTheTimeout) {
  testing::TempDir dir;
  // It waits on a process of its own: the kill ends its whole process group.
  HostCheck check(script(dir, "hang.sh", "#!/bin/sh\nread -r line; sleep 60 & echo $! > sleep.pid; wait\n"));
  const auto start = Clock::now();
  const std::string error = failure_of(check, "{}\n", 0.5);
  const double waited = seconds_since(start);
  EXPECT_GE(waited, 0.45);
  EXPECT_LT(waited, 5) << "the timeout bounds the wait";
  EXPECT_NE(error.find("host check [./hang.sh, --flag] answered nothing within 0.5 s"), std::string::npos) << error;
  EXPECT_EQ(check.pid(), 0);
  const pid_t sleeper = std::stoi(testing::read_file(dir.path() / "sleep.pid"));
  EXPECT_TRUE(ends_within(sleeper, 2)) << "the check's own process " << sleeper << " outlived it";
  // One that sent half a line and then hung says what it sent.
  HostCheck partial(script(dir, "partial.sh", "#!/bin/sh\nread -r line; printf '{\"ok\"'; sleep 60\n"));
  const std::string half = failure_of(partial, "{}\n", 0.3);
  EXPECT_NE(half.find("answered nothing within 0.3 s but '{\"ok\"' (no newline)"), std::string::npos) << half;
}

TEST(HostCheckProgram, OutputBeforeARequestBreaksTheProtocol) {
  testing::TempDir dir;
  // One answer, then a stray line while no request is pending.
  HostCheck check(script(dir, "chatty.sh",
                         "#!/bin/sh\nread -r line; echo '{\"ok\": true}'; sleep 0.2; echo 'debug: done'; sleep 30\n"));
  EXPECT_TRUE(check.check("{}\n", 10).ok);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // the stray line arrives
  const std::string error = failure_of(check);
  EXPECT_NE(error.find("wrote 'debug: done\\n' to its stdout outside an answer"), std::string::npos) << error;
  // One that answers once and exits: the next trial finds it gone.
  HostCheck once(script(dir, "once.sh", "#!/bin/sh\nread -r line; echo '{\"ok\": true}'\n"));
  EXPECT_TRUE(once.check("{}\n", 10).ok);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_NE(failure_of(once).find("exited with status 0 after its last answer"), std::string::npos);
}

TEST(HostCheckProgram, AProgramThatCannotStartSaysWhy) {
  testing::TempDir dir;
  HostCommand missing_dir = script(dir, "ok.sh", kAnswersOk);
  missing_dir.directory = (dir.path() / "gone").string();
  HostCheck in_nowhere(missing_dir);
  const std::string error = failure_of(in_nowhere);
  EXPECT_NE(error.find("could not be started"), std::string::npos) << error;
  EXPECT_NE(error.find("chdir: No such file or directory"), std::string::npos) << error;
  const fs::path plain = dir.write("plain.txt", "not a program\n");
  HostCheck not_executable(HostCommand{{"./plain.txt"}, plain.string(), dir.path().string(), {}});
  EXPECT_NE(failure_of(not_executable).find("execve: Permission denied"), std::string::npos);
  EXPECT_THROW(HostCheck(HostCommand{}), Error);
}

// A worker killed for an overrun (SIGKILL: no destructor runs) takes its check along.
TEST(HostCheckProgram, DiesWithTheProcessThatStartedIt) {
  testing::TempDir dir;
  const fs::path pid_file = dir.path() / "pid";
  const HostCommand command = script(dir, "hang.sh", "#!/bin/sh\necho $$ > pid.tmp; mv pid.tmp pid\nexec sleep 60\n");
  const pid_t worker = ::fork();
  ASSERT_GE(worker, 0);
  if (worker == 0) {
    HostCheck check(command);
    (void)failure_of(check, "{}\n", 60);
    ::_exit(0);
  }
  pid_t checker = 0;
  for (int i = 0; i < 500 && checker == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (fs::exists(pid_file)) checker = std::stoi(testing::read_file(pid_file));
  }
  ASSERT_GT(checker, 0) << "the check did not start";
  EXPECT_FALSE(process_gone(checker));
  ASSERT_EQ(::kill(worker, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(worker, &status, 0), worker);
  EXPECT_TRUE(ends_within(checker, 5)) << "the check " << checker << " outlived its worker";
}

}  // namespace
}  // namespace tiletune
