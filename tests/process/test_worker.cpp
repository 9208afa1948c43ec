// Tests of the worker boundary without a GPU: the protocol (every field round-trips, anything
// malformed is refused), serve_worker run in-process over pipes, and WorkerProcess against
// fake_worker, which sleeps, crashes, exits early, sends garbage or throws on trial 2. Each
// process test also checks that no child (zombie or alive) is left behind.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "tiletune/error.hpp"
#include "tiletune/trial_record.hpp"
#include "tiletune/worker.hpp"

namespace tiletune {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

const char* const kFakeWorker = TILETUNE_FAKE_WORKER;

// --- helpers -----------------------------------------------------------------------------

TrialRequest full_request() {
  TrialRequest r;
  r.id = 0xfedcba9876543210ull;
  r.kernel = "transpose";
  r.config_text = "TILE=32 BLOCK_ROWS=8 PAD=1";
  r.problem_key = "N=4096";
  r.sizes = {{"N", 4096}, {"M", -7}, {"BIG", std::numeric_limits<std::int64_t>::max()}};
  r.params = {{"TILE", AxisKind::integer, "32"}, {"ALPHA", AxisKind::real, "0.5"}, {"T", AxisKind::text, "half"}};
  r.cubin.resize(1 << 20);
  for (std::size_t i = 0; i < r.cubin.size(); ++i) r.cubin[i] = static_cast<char>((i * 131 + 7) & 0xff);
  r.cubin[0] = '\0';
  r.function = "_Z9transposePfPKfi";
  r.grid[0] = 128;
  r.grid[1] = 64;
  r.grid[2] = 3;
  r.block[0] = 32;
  r.block[1] = 8;
  r.block[2] = 2;
  r.shared_bytes = 99 * 1024;
  // Every init kind, with every InitPlan field set somewhere.
  auto init = [](BufferInit kind) {
    InitPlan i;
    i.kind = kind;
    return i;
  };
  InitPlan uniform = init(BufferInit::uniform);
  uniform.a = -0.25;
  uniform.b = 1e300;
  InitPlan offsets = init(BufferInit::csr_offsets);
  offsets.rows = 1000;
  offsets.columns = 1ull << 40;
  offsets.nnz = 123456789;
  InitPlan columns = offsets;
  columns.kind = BufferInit::csr_columns;
  columns.source = 4;
  InitPlan file = init(BufferInit::file);
  file.file = "/data/x_{N}/\xe2\x82\xac.npy";
  InitPlan copy = init(BufferInit::copy);
  copy.source = 0;
  InitPlan normal = init(BufferInit::normal);
  normal.a = 3;
  normal.b = 0.5;
  InitPlan constant = init(BufferInit::constant);
  constant.a = -7.5;
  r.buffers = {{"in", ElementType::f64, 1ull << 33, init(BufferInit::random), false},
               {"out", ElementType::f16, 17, init(BufferInit::none), true},
               {"idx", ElementType::u8, 0, init(BufferInit::iota), false},
               {"u", ElementType::f32, 5, uniform, false},
               {"rows", ElementType::i32, 1001, offsets, false},
               {"cols", ElementType::i64, 123456789, columns, false},
               {"f", ElementType::u32, 9, file, false},
               {"y", ElementType::f64, 1ull << 33, copy, true},
               {"z", ElementType::f32, 3, init(BufferInit::zero), true},
               {"n", ElementType::f32, 3, normal, false},
               {"c", ElementType::f32, 3, constant, false}};
  r.globals = {{"conv::weights", "_ZN4conv7weightsE", ElementType::f32, 9, normal},
               {"lut", "lut", ElementType::u8, 256, copy}};
  ArgPlan a0;
  a0.is_buffer = true;
  a0.buffer = 1;
  ArgPlan a1;
  a1.type = ElementType::i64;
  a1.int_value = std::numeric_limits<std::int64_t>::min();
  ArgPlan a2;
  a2.type = ElementType::f32;
  a2.float_value = -0.125;
  ArgPlan a3;
  a3.type = ElementType::f16;
  a3.float_value = 0.5;
  r.args = {a0, a1, a2, a3};
  r.verify.mode = VerifySettings::Mode::library;
  r.verify.cpu_reference = "transpose_ref";
  r.verify.library = "/opt/ref/libref.so";
  r.verify.function = "my_reference";
  r.verify.checks = {{1, OutputCheck::Compare::elements, 17, 1e-5, 0.25, "/expected/out_4096.npy"},
                     {7, OutputCheck::Compare::sum, 1ull << 20, 0, 1e-3, ""},
                     {8, OutputCheck::Compare::none, 0, 0, 0, ""}};
  r.verify.command = {{"python3", "check.py", "", "--tol=1e-3 \xe2\x82\xac"}, "/usr/bin/python3", "/spaces/mine", {}};
  r.timing.cold = false;
  r.timing.warmup_runs = 3;
  r.timing.min_samples = 25;
  r.timing.max_noise = 0.001;
  r.timing.min_seconds = 0.5;
  r.timing.max_seconds = 7.5;
  r.seed = 424242;
  r.is_reference = true;
  r.deadline_seconds = 12.5;
  return r;
}

void expect_same(const TrialRequest& a, const TrialRequest& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.kernel, b.kernel);
  EXPECT_EQ(a.config_text, b.config_text);
  EXPECT_EQ(a.problem_key, b.problem_key);
  EXPECT_EQ(a.sizes, b.sizes);
  EXPECT_EQ(a.params, b.params);
  EXPECT_TRUE(a.cubin == b.cubin) << "cubin differs (" << a.cubin.size() << " vs " << b.cubin.size() << " bytes)";
  EXPECT_EQ(a.function, b.function);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.grid[i], b.grid[i]);
    EXPECT_EQ(a.block[i], b.block[i]);
  }
  EXPECT_EQ(a.shared_bytes, b.shared_bytes);
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (std::size_t i = 0; i < a.buffers.size(); ++i) {
    EXPECT_EQ(a.buffers[i].name, b.buffers[i].name);
    EXPECT_EQ(a.buffers[i].type, b.buffers[i].type);
    EXPECT_EQ(a.buffers[i].count, b.buffers[i].count);
    EXPECT_EQ(a.buffers[i].init, b.buffers[i].init);
    EXPECT_EQ(a.buffers[i].output, b.buffers[i].output);
  }
  EXPECT_EQ(a.globals, b.globals);
  ASSERT_EQ(a.args.size(), b.args.size());
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    EXPECT_EQ(a.args[i].is_buffer, b.args[i].is_buffer);
    EXPECT_EQ(a.args[i].buffer, b.args[i].buffer);
    EXPECT_EQ(a.args[i].type, b.args[i].type);
    EXPECT_EQ(a.args[i].int_value, b.args[i].int_value);
    EXPECT_EQ(a.args[i].float_value, b.args[i].float_value);
  }
  EXPECT_EQ(a.verify.mode, b.verify.mode);
  EXPECT_EQ(a.verify.cpu_reference, b.verify.cpu_reference);
  EXPECT_EQ(a.verify.library, b.verify.library);
  EXPECT_EQ(a.verify.function, b.verify.function);
  EXPECT_EQ(a.verify.checks, b.verify.checks);
  EXPECT_EQ(a.verify.command, b.verify.command);
  EXPECT_EQ(a.timing.cold, b.timing.cold);
  EXPECT_EQ(a.timing.warmup_runs, b.timing.warmup_runs);
  EXPECT_EQ(a.timing.min_samples, b.timing.min_samples);
  EXPECT_EQ(a.timing.max_noise, b.timing.max_noise);
  EXPECT_EQ(a.timing.min_seconds, b.timing.min_seconds);
  EXPECT_EQ(a.timing.max_seconds, b.timing.max_seconds);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.is_reference, b.is_reference);
  EXPECT_EQ(a.deadline_seconds, b.deadline_seconds);
}

TrialResult full_result(TrialStatus status) {
  TrialResult r;
  r.id = 77;
  r.status = status;
  r.detail = "max error 0.5 at index 12\nwith a second line";
  r.median_ms = 0.123;
  r.mean_ms = 0.125;
  r.min_ms = 0.1;
  r.stddev_ms = 1e-4;
  r.samples = 31;
  r.driver_blocks_per_sm = 6;
  r.max_error = 0.5;
  r.first_bad_index = 12;
  r.load_ms = 3.25;
  r.setup_ms = 2.125;
  r.verify_ms = 4.5;
  r.measure_ms = 250;
  r.times_ms = {0.125, 0.1, 1.0 / 3.0, 5e-300};
  r.host_check_failed = true;
  r.shared_failure = true;
  return r;
}

void expect_same(const TrialResult& a, const TrialResult& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.detail, b.detail);
  EXPECT_EQ(a.median_ms, b.median_ms);
  EXPECT_EQ(a.mean_ms, b.mean_ms);
  EXPECT_EQ(a.min_ms, b.min_ms);
  EXPECT_EQ(a.stddev_ms, b.stddev_ms);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.driver_blocks_per_sm, b.driver_blocks_per_sm);
  EXPECT_EQ(a.max_error, b.max_error);
  EXPECT_EQ(a.first_bad_index, b.first_bad_index);
  EXPECT_EQ(a.load_ms, b.load_ms);
  EXPECT_EQ(a.setup_ms, b.setup_ms);
  EXPECT_EQ(a.verify_ms, b.verify_ms);
  EXPECT_EQ(a.measure_ms, b.measure_ms);
  EXPECT_EQ(a.times_ms, b.times_ms);
  EXPECT_EQ(a.host_check_failed, b.host_check_failed);
  EXPECT_EQ(a.shared_failure, b.shared_failure);
}

Json as_json(const std::string& payload) { return Json::from_cbor(payload); }

std::string to_payload(const Json& j) {
  std::vector<std::uint8_t> v = Json::to_cbor(j);
  return std::string(v.begin(), v.end());
}

// Expects decode to throw an Error whose message contains `needle`.
template <class Fn>
void expect_error(Fn&& decode, const std::string& needle) {
  try {
    decode();
    ADD_FAILURE() << "no Error thrown; expected one mentioning '" << needle << "'";
  } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what(); }
}

TrialRequest small_request(std::uint64_t id, double deadline_seconds = 10) {
  TrialRequest r;
  r.id = id;
  r.kernel = "fake";
  r.cubin = "not really a cubin";
  r.deadline_seconds = deadline_seconds;
  return r;
}

// No child of this process is left, running or zombie.
void expect_no_children() {
  errno = 0;
  pid_t r = ::waitpid(-1, nullptr, WNOHANG);
  EXPECT_EQ(r, -1) << "a child is left behind (pid " << r << ")";
  EXPECT_EQ(errno, ECHILD);
}

// The pid is not our child any more (reaped), and no such process runs.
void expect_reaped(pid_t pid) {
  ASSERT_GT(pid, 0);
  errno = 0;
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

// --- the protocol ------------------------------------------------------------------------

TEST(WorkerProtocol, RequestRoundTripsEveryFieldWithAMegabyteCubin) {
  TrialRequest in = full_request();
  std::string payload = encode_request(in);
  EXPECT_TRUE(as_json(payload)["cubin"].is_binary()) << "the cubin travels as CBOR binary";
  EXPECT_LT(payload.size(), in.cubin.size() + 4096) << "the cubin is not inflated";
  expect_same(in, decode_request(payload));
  WorkerMessage m = decode_message(payload);
  EXPECT_EQ(m.type, WorkerMessage::Type::trial);
  expect_same(in, m.trial);
}

// Each element type crosses the boundary as a buffer, a module global and a scalar argument,
// each with its own wire name, and a scalar keeps the extremes of its type.
TEST(WorkerProtocol, EveryElementTypeRoundTrips) {
  TrialRequest in;
  std::set<std::string> wire_names;
  for (const ElementType t : kElementTypes) {
    const std::string name = element_type_name(t);
    in.buffers.push_back({"b_" + name, t, 3, InitPlan{}, false});
    in.globals.push_back({"g_" + name, "g_" + name, t, 2, InitPlan{}});
    ArgPlan low;
    low.type = t;
    low.int_value = is_floating(t) ? 0 : std::numeric_limits<std::int64_t>::min();
    low.float_value = is_floating(t) ? -65504.0 : 0;
    ArgPlan high = low;
    high.int_value = is_floating(t) ? 0 : std::numeric_limits<std::int64_t>::max();
    high.float_value = is_floating(t) ? 0.5 : 0;
    in.args.push_back(low);
    in.args.push_back(high);
  }
  const std::string payload = encode_request(in);
  const TrialRequest out = decode_request(payload);
  expect_same(in, out);
  const Json json = as_json(payload);
  for (const Json& b : json["buffers"]) wire_names.insert(b["type"].get<std::string>());
  EXPECT_EQ(wire_names.size(), kElementTypeCount);
  EXPECT_TRUE(wire_names.contains("i8") && wire_names.contains("i16") && wire_names.contains("u16") &&
              wire_names.contains("u64"));
}

TEST(WorkerProtocol, DefaultRequestRoundTrips) {
  TrialRequest in;
  expect_same(in, decode_request(encode_request(in)));
}

TEST(WorkerProtocol, ResultRoundTripsEveryFieldAndStatus) {
  for (TrialStatus s : {TrialStatus::ok, TrialStatus::pruned, TrialStatus::compile_failed, TrialStatus::launch_failed,
                        TrialStatus::runtime_fault, TrialStatus::timeout, TrialStatus::wrong_result}) {
    SCOPED_TRACE(std::string(status_name(s)));
    TrialResult in = full_result(s);
    expect_same(in, decode_result(encode_result(in)));
  }
  TrialResult odd = full_result(TrialStatus::ok);
  odd.max_error = std::numeric_limits<double>::infinity();
  odd.first_bad_index = -1;
  odd.stddev_ms = std::nan("");
  TrialResult back = decode_result(encode_result(odd));
  EXPECT_TRUE(std::isinf(back.max_error));
  EXPECT_TRUE(std::isnan(back.stddev_ms));
  EXPECT_EQ(back.first_bad_index, -1);
}

TEST(WorkerProtocol, OtherMessagesRoundTrip) {
  WorkerMessage copy = decode_message(encode_copy_request(1ull << 40));
  EXPECT_EQ(copy.type, WorkerMessage::Type::copy);
  EXPECT_EQ(copy.copy_bytes, 1ull << 40);

  CopyCeiling c{1ull << 30, 0.75, 2863.3};
  WorkerMessage cr = decode_message(encode_copy_result(c));
  EXPECT_EQ(cr.type, WorkerMessage::Type::copy_result);
  EXPECT_EQ(cr.copy.bytes, c.bytes);
  EXPECT_EQ(cr.copy.median_ms, c.median_ms);
  EXPECT_EQ(cr.copy.gbps, c.gbps);

  WorkerMessage e = decode_message(encode_error("bad frame"));
  EXPECT_EQ(e.type, WorkerMessage::Type::error);
  EXPECT_EQ(e.error, "bad frame");
}

TEST(WorkerProtocol, FramesAreLittleEndianAndLimitedToOneGiB) {
  std::string f = frame("abc");
  EXPECT_EQ(f, std::string("\x03\x00\x00\x00"
                           "abc",
                           7));
  std::string big(300, 'x');
  EXPECT_EQ(frame(big).substr(0, 4), std::string("\x2c\x01\x00\x00", 4));

  unsigned char limit[4] = {0x00, 0x00, 0x00, 0x40};  // exactly 1 GiB: allowed
  EXPECT_EQ(frame_payload_size(limit), max_frame_bytes);
  unsigned char over[4] = {0x01, 0x00, 0x00, 0x40};
  expect_error([&] { (void)frame_payload_size(over); }, "limit");
  unsigned char huge[4] = {0xff, 0xff, 0xff, 0xff};
  expect_error([&] { (void)frame_payload_size(huge); }, "limit");
}

TEST(WorkerProtocol, MalformedPayloadsAreRejected) {
  expect_error([] { (void)decode_message(""); }, "CBOR");
  expect_error([] { (void)decode_message("hello, this is not CBOR"); }, "CBOR");
  expect_error([] { (void)decode_message(to_payload(Json::array({1, 2}))); }, "map");
  expect_error([] { (void)decode_message(to_payload({{"id", 1}})); }, "type");
  expect_error([] { (void)decode_message(to_payload({{"type", 3}})); }, "type");
  expect_error([] { (void)decode_message(to_payload({{"type", "launch"}})); }, "launch");
  // A valid message with trailing bytes.
  expect_error([] { (void)decode_message(encode_copy_request(5) + "x"); }, "CBOR");
  // Truncated in the middle of the cubin.
  std::string good = encode_request(full_request());
  expect_error([&] { (void)decode_request(good.substr(0, good.size() / 2)); }, "CBOR");
  // The right CBOR for another message.
  expect_error([] { (void)decode_request(encode_result(TrialResult{})); }, "expected a 'trial'");
  expect_error([] { (void)decode_result(encode_request(TrialRequest{})); }, "expected a 'result'");
  // Nested far too deep: refused, not a stack overflow.
  std::string deep(200000, '\x81');
  deep += '\x01';
  expect_error([&] { (void)decode_message(deep); }, "nested");
}

TEST(WorkerProtocol, EachRequestFieldIsChecked) {
  const Json base = as_json(encode_request(full_request()));
  struct Case {
    const char* what;
    std::function<void(Json&)> mutate;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {"missing kernel", [](Json& j) { j.erase("kernel"); }, "missing field 'kernel'"},
      {"missing deadline", [](Json& j) { j.erase("deadline_seconds"); }, "deadline_seconds"},
      {"id as a string", [](Json& j) { j["id"] = "7"; }, "'id'"},
      {"negative id", [](Json& j) { j["id"] = -1; }, "'id'"},
      {"cubin as text", [](Json& j) { j["cubin"] = "ELF"; }, "'cubin'"},
      {"grid of two",
       [](Json& j) {
         j["grid"] = {1, 2};
       },
       "'grid'"},
      {"grid of floats",
       [](Json& j) {
         j["grid"] = {1.5, 2, 3};
       },
       "'grid'"},
      {"sizes not a map", [](Json& j) { j["sizes"] = Json::array(); }, "'sizes'"},
      {"size as a float", [](Json& j) { j["sizes"]["N"] = 1.5; }, "sizes.N"},
      {"unknown element type", [](Json& j) { j["buffers"][0]["type"] = "f128"; }, "buffers[0].type"},
      {"init not a map", [](Json& j) { j["buffers"][1]["init"] = "ones"; }, "buffers[1].init"},
      {"unknown init kind", [](Json& j) { j["buffers"][1]["init"]["kind"] = "ones"; }, "buffers[1].init.kind"},
      {"init bound as text", [](Json& j) { j["buffers"][3]["init"]["a"] = "0"; }, "buffers[3].init.a"},
      {"missing csr rows", [](Json& j) { j["buffers"][4]["init"].erase("rows"); }, "buffers[4].init"},
      {"copy of no buffer", [](Json& j) { j["buffers"][7]["init"]["source"] = 11; }, "buffers[7].init.source"},
      {"csr columns of no buffer", [](Json& j) { j["buffers"][5]["init"]["source"] = -1; }, "buffers[5].init.source"},
      {"file not a string", [](Json& j) { j["buffers"][6]["init"]["file"] = 3; }, "buffers[6].init.file"},
      {"globals not an array", [](Json& j) { j["globals"] = Json::object(); }, "'globals'"},
      {"global without symbol", [](Json& j) { j["globals"][0].erase("symbol"); }, "globals[0]"},
      {"global type unknown", [](Json& j) { j["globals"][0]["type"] = "bf16"; }, "globals[0].type"},
      {"global copy of no buffer", [](Json& j) { j["globals"][1]["init"]["source"] = 99; }, "globals[1].init.source"},
      {"check of no buffer", [](Json& j) { j["verify"]["checks"][0]["buffer"] = 11; }, "verify.checks[0].buffer"},
      {"unknown compare", [](Json& j) { j["verify"]["checks"][1]["compare"] = "max"; }, "verify.checks[1].compare"},
      {"check count negative", [](Json& j) { j["verify"]["checks"][0]["count"] = -1; }, "verify.checks[0].count"},
      {"missing library", [](Json& j) { j["verify"].erase("library"); }, "verify"},
      {"function not a string", [](Json& j) { j["verify"]["function"] = 1; }, "verify.function"},
      {"count negative", [](Json& j) { j["buffers"][0]["count"] = -5; }, "buffers[0].count"},
      {"output not bool", [](Json& j) { j["buffers"][0]["output"] = 1; }, "buffers[0].output"},
      {"buffer not a map", [](Json& j) { j["buffers"][0] = 3; }, "buffers[0]"},
      {"arg buffer out of range", [](Json& j) { j["args"][0]["buffer"] = 99; }, "args[0].buffer"},
      {"arg int too big", [](Json& j) { j["args"][1]["int_value"] = std::numeric_limits<std::uint64_t>::max(); },
       "args[1].int_value"},
      {"unknown verify mode", [](Json& j) { j["verify"]["mode"] = "gpu"; }, "verify.mode"},
      {"missing timing field", [](Json& j) { j["timing"].erase("max_noise"); }, "timing"},
      {"warmup over int", [](Json& j) { j["timing"]["warmup_runs"] = 1ll << 40; }, "timing.warmup_runs"},
      {"is_reference as int", [](Json& j) { j["is_reference"] = 0; }, "'is_reference'"},
      {"deadline as string", [](Json& j) { j["deadline_seconds"] = "10"; }, "'deadline_seconds'"},
      {"params not an array", [](Json& j) { j["params"] = Json::object(); }, "'params'"},
      {"param kind unknown", [](Json& j) { j["params"][1]["kind"] = "complex"; }, "params[1].kind"},
      {"param without label", [](Json& j) { j["params"][2].erase("label"); }, "params[2]"},
      {"no host check", [](Json& j) { j["verify"].erase("command"); }, "verify"},
      {"host check argv of numbers",
       [](Json& j) {
         j["verify"]["command"]["argv"] = {1, 2};
       },
       "verify.command.argv"},
      {"host check without a program", [](Json& j) { j["verify"]["command"]["program"] = ""; },
       "verify.command.program"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Json j = base;
    c.mutate(j);
    expect_error([&] { (void)decode_request(to_payload(j)); }, c.needle);
  }
}

TEST(WorkerProtocol, EachResultFieldIsChecked) {
  const Json base = as_json(encode_result(full_result(TrialStatus::wrong_result)));
  for (const char* field :
       {"id", "status", "detail", "median_ms", "mean_ms", "min_ms", "stddev_ms", "samples", "driver_blocks_per_sm",
        "max_error", "first_bad_index", "load_ms", "setup_ms", "verify_ms", "measure_ms"}) {
    SCOPED_TRACE(field);
    Json missing = base;
    missing.erase(field);
    expect_error([&] { (void)decode_result(to_payload(missing)); }, field);
    Json wrong = base;
    wrong[field] = Json::array();
    expect_error([&] { (void)decode_result(to_payload(wrong)); }, field);
  }
  Json unknown = base;
  unknown["status"] = "exploded";
  expect_error([&] { (void)decode_result(to_payload(unknown)); }, "unknown status 'exploded'");
  Json overflow = base;
  overflow["samples"] = 1ll << 33;
  expect_error([&] { (void)decode_result(to_payload(overflow)); }, "samples");
  // The samples: an array of numbers, at most the trial_times_max_samples a trial keeps; the
  // host check's failure: a boolean.
  for (const char* field : {"times_ms", "host_check_failed", "shared_failure"}) {
    SCOPED_TRACE(field);
    Json missing = base;
    missing.erase(field);
    expect_error([&] { (void)decode_result(to_payload(missing)); }, field);
    Json wrong = base;
    wrong[field] = "7";
    expect_error([&] { (void)decode_result(to_payload(wrong)); }, field);
  }
  Json text_sample = base;
  text_sample["times_ms"][1] = "0.1";
  expect_error([&] { (void)decode_result(to_payload(text_sample)); }, "times_ms");
  Json too_many = base;
  too_many["times_ms"] = std::vector<double>(trial_times_max_samples + 1, 0.5);
  expect_error([&] { (void)decode_result(to_payload(too_many)); }, "times_ms");
  Json most = base;
  most["times_ms"] = std::vector<double>(trial_times_max_samples, 0.5);
  EXPECT_EQ(decode_result(to_payload(most)).times_ms.size(), trial_times_max_samples);
}

// --- every field of every message, once more: the round trip and the bytes ----------------

// A request with every field away from its default (full_request leaves energy at its defaults,
// and a global's CSR and file fields).
TrialRequest every_field_request() {
  TrialRequest r = full_request();
  r.energy = {true, 0.75, 9.5};
  InitPlan table;  // a global read from a file, with the CSR fields set too
  table.kind = BufferInit::file;
  table.rows = 2;
  table.columns = 3;
  table.nnz = 4;
  table.file = "/data/table.npy";
  r.globals.push_back({"table", "table", ElementType::i32, 6, table});
  r.verify.command.buffers = {"out"};
  return r;
}

TrialResult every_field_result() {
  TrialResult r = full_result(TrialStatus::wrong_result);
  r.throttled_samples = 4;
  r.sm_clock_mhz = 1980;
  r.memory_clock_mhz = 3201;
  r.temperature_c = 47;
  r.cpu_mean_ms = 0.25;
  r.energy_mj = 12.5;
  r.power_w = 640;
  r.energy_note = "NVML: no counter";
  return r;
}

KernelSource every_field_source() {
  KernelSource k;
  k.main = {"transpose.cu", "extern \"C\" __global__ void t() {}"};
  k.headers = {{"tile.cuh", "#pragma once"}, {"pad.cuh", "#define PAD 1"}};
  k.dependencies = {{"tile.cuh", "/src/include/tile.cuh", "00ff"}};
  k.search.include_dirs = {"/src/include", "/opt/x"};
  k.search.pre_includes = {"pre.cuh"};
  k.search.toolkit_dirs = {"/usr/local/cuda/include"};
  k.hash = "abcdef0123456789";
  return k;
}

CompileResult every_field_compile_result() {
  CompiledKernel k;
  k.cubin = std::string(
      "\x7f"
      "ELF\0\x01\xff",
      7);
  k.lowered_name = "_Z1tv";
  k.resources = {32, 4096, 8, 12, 16, 1, 360};
  k.log = "ptxas info: 32 registers";
  k.warnings = {"warning: unused"};
  k.extra_options = {"-lineinfo"};
  CompileResult r;
  r.kernel = k;
  r.error = "not really an error";
  r.log = "the NVRTC log";
  r.warnings = {"w1", "w2"};
  r.options = {"-DTILE=32", "--gpu-architecture=sm_90"};
  r.seconds = 1.25;
  r.transient = true;
  return r;
}

// The paths of the leaves of `empty` (a message of defaults whose arrays of maps hold one
// default element) that no candidate in `fulls` changes: each is a field a fixture leaves at
// its default, so that a round trip of the fixture would not show that the field travels.
void unchanged_leaves(const std::vector<const Json*>& fulls, const Json& empty, const std::string& path,
                      std::vector<std::string>& out) {
  if (empty.is_object()) {
    for (auto it = empty.begin(); it != empty.end(); ++it) {
      if (path.empty() && it.key() == "type") continue;
      std::vector<const Json*> next;
      for (const Json* f : fulls)
        if (f->is_object() && f->contains(it.key())) next.push_back(&f->at(it.key()));
      unchanged_leaves(next, it.value(), path + "." + it.key(), out);
    }
  } else if (empty.is_array() && empty.size() == 1 && empty[0].is_object()) {
    std::vector<const Json*> next;
    for (const Json* f : fulls)
      if (f->is_array())
        for (const Json& e : *f) next.push_back(&e);
    unchanged_leaves(next, empty[0], path + "[]", out);
  } else if (std::none_of(fulls.begin(), fulls.end(), [&](const Json* f) { return *f != empty; })) {
    out.push_back(path);
  }
}

void expect_every_leaf_set(const std::string& full, const std::string& empty) {
  const Json f = as_json(full);
  std::vector<std::string> unchanged;
  unchanged_leaves({&f}, as_json(empty), "", unchanged);
  EXPECT_TRUE(unchanged.empty()) << "fields the fixture leaves at their default: "
                                 << ::testing::PrintToString(unchanged);
}

// FNV-1a of a payload, to pin the bytes on the wire.
std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

TEST(WorkerProtocol, ARoundTripOfEveryMessageKeepsEveryField) {
  // The fixtures set every field on the wire (checked against messages of defaults).
  TrialRequest empty_request;
  empty_request.sizes = {{"N", 0}};
  empty_request.params = {ParamValue{}};
  empty_request.buffers = {BufferPlan{}};
  empty_request.globals = {GlobalPlan{}};
  empty_request.args = {ArgPlan{}};
  empty_request.verify.checks = {CheckPlan{}};
  expect_every_leaf_set(encode_request(every_field_request()), encode_request(empty_request));
  expect_every_leaf_set(encode_result(every_field_result()), encode_result(TrialResult{}));
  const CopyCeiling copy{1ull << 30, 0.75, 2863.3, 21, 2};
  expect_every_leaf_set(encode_copy_result(copy), encode_copy_result(CopyCeiling{}));
  KernelSource empty_source;
  empty_source.headers = {SourceFile{}};
  empty_source.dependencies = {HeaderDependency{}};
  const KernelSource source = every_field_source();
  const CompileRequest request{&source, {"-DTILE=32"}, "sm_90", "transpose"};
  expect_every_leaf_set(encode_compile_request(request),
                        encode_compile_request(CompileRequest{&empty_source, {}, "", ""}));
  CompileResult empty_result;
  empty_result.kernel = CompiledKernel{};
  expect_every_leaf_set(encode_compile_result(every_field_compile_result()), encode_compile_result(empty_result));

  // Every field comes back: whole structs compared (operator== covers every member), and what
  // has no operator== re-encoded to the same bytes.
  const TrialRequest in = every_field_request();
  EXPECT_TRUE(decode_request(encode_request(in)) == in);
  const TrialResult result = every_field_result();
  EXPECT_TRUE(decode_result(encode_result(result)) == result);
  EXPECT_TRUE(decode_message(encode_copy_result(copy)).copy == copy);
  const WorkerMessage job = decode_message(encode_compile_request(request));
  ASSERT_EQ(job.type, WorkerMessage::Type::compile);
  EXPECT_EQ(encode_compile_request(job.compile.request()), encode_compile_request(request));
  EXPECT_EQ(job.compile.source.search.toolkit_dirs, source.search.toolkit_dirs);
  EXPECT_EQ(job.compile.entry, "transpose");
  const CompileResult compiled = every_field_compile_result();
  const WorkerMessage back = decode_message(encode_compile_result(compiled));
  ASSERT_EQ(back.type, WorkerMessage::Type::compile_result);
  EXPECT_EQ(encode_compile_result(back.compiled), encode_compile_result(compiled));
  ASSERT_TRUE(back.compiled.kernel.has_value());
  EXPECT_EQ(back.compiled.kernel->resources.constant_bytes, 360);
  EXPECT_TRUE(back.compiled.transient);
}

// The bytes of each message, as the protocol wrote them when each field was encoded by hand: a
// worker and a parent of different builds keep understanding each other. (Schema-11 fields changed
// the request's and the result's: verify.command.buffers, memory_clock_mhz, temperature_c and
// shared_failure.)
TEST(WorkerProtocol, TheBytesOnTheWireAreUnchanged) {
  const KernelSource source = every_field_source();
  EXPECT_EQ(fnv1a(encode_request(every_field_request())), 0xf41b07f8eb52a76aull);
  EXPECT_EQ(fnv1a(encode_request(TrialRequest{})), 0xde8f2d7d123030c0ull);
  EXPECT_EQ(fnv1a(encode_result(every_field_result())), 0x92f644d2ac7691fcull);
  EXPECT_EQ(fnv1a(encode_copy_result(CopyCeiling{1ull << 30, 0.75, 2863.3, 21, 2})), 0xbac57726d043ae31ull);
  EXPECT_EQ(fnv1a(encode_copy_request(1ull << 40)), 0x01d047e634b935f8ull);
  EXPECT_EQ(fnv1a(encode_compile_request(CompileRequest{&source, {"-DTILE=32"}, "sm_90", "transpose"})),
            0x2c4ade4417e6d8ebull);
  EXPECT_EQ(fnv1a(encode_compile_result(every_field_compile_result())), 0x68966bb025e85c7bull);
  EXPECT_EQ(fnv1a(encode_error("bad frame")), 0x03d2c1c882e0ce9dull);
}

// --- serve_worker in-process -------------------------------------------------------------

class ScriptedHandler : public TrialHandler {
 public:
  TrialResult run_trial(const TrialRequest& request) override {
    if (request.id == 13) throw std::runtime_error("unlucky trial");
    TrialResult r;
    r.id = request.id;
    r.median_ms = static_cast<double>(request.cubin.size());
    return r;
  }
  CopyCeiling measure_copy(std::uint64_t bytes) override { return CopyCeiling{bytes, 2.0, 3.0}; }
};

struct ServeRun {
  int exit_code = -1;
  std::vector<WorkerMessage> answers;
  std::string leftover;  // bytes after the last whole frame
};

// Feeds `input` to serve_worker on a pipe (from a thread, so that it may be large), collects
// every frame it writes.
ServeRun serve(const std::string& input) {
  int in[2], out[2];
  EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
  std::thread feeder([&] {
    std::size_t done = 0;
    while (done < input.size()) {
      ssize_t n = ::write(in[1], input.data() + done, input.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;  // serve_worker stopped reading (a malformed frame)
      done += static_cast<std::size_t>(n);
    }
    ::close(in[1]);
  });
  std::string output;
  std::thread collector([&] {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      output.append(buf, static_cast<std::size_t>(n));
    }
  });
  ScriptedHandler handler;
  ServeRun run;
  run.exit_code = serve_worker(handler, in[0], out[1]);
  ::close(in[0]);
  ::close(out[1]);
  feeder.join();
  collector.join();
  ::close(out[0]);
  std::size_t pos = 0;
  while (output.size() - pos >= 4) {
    unsigned char header[4];
    std::memcpy(header, output.data() + pos, 4);
    std::uint32_t n = frame_payload_size(header);
    if (output.size() - pos - 4 < n) break;
    run.answers.push_back(decode_message(output.substr(pos + 4, n)));
    pos += 4 + n;
  }
  run.leftover = output.substr(pos);
  return run;
}

TEST(ServeWorker, AnswersTrialsAndCopiesUntilEof) {
  TrialRequest big = small_request(1);
  big.cubin.assign(3 << 20, 'c');  // larger than a pipe buffer: partial reads on both sides
  std::string input =
      frame(encode_request(big)) + frame(encode_copy_request(4096)) + frame(encode_request(small_request(2)));
  ServeRun run = serve(input);
  EXPECT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.answers.size(), 3u);
  EXPECT_EQ(run.answers[0].type, WorkerMessage::Type::result);
  EXPECT_EQ(run.answers[0].result.id, 1u);
  EXPECT_EQ(run.answers[0].result.median_ms, 3 << 20);
  EXPECT_EQ(run.answers[1].type, WorkerMessage::Type::copy_result);
  EXPECT_EQ(run.answers[1].copy.bytes, 4096u);
  EXPECT_EQ(run.answers[2].result.id, 2u);
  EXPECT_TRUE(run.leftover.empty());
}

TEST(ServeWorker, AHandlerExceptionIsARuntimeFaultAndTheLoopGoesOn) {
  ServeRun run = serve(frame(encode_request(small_request(13))) + frame(encode_request(small_request(14))));
  EXPECT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.answers.size(), 2u);
  EXPECT_EQ(run.answers[0].result.id, 13u);
  EXPECT_EQ(run.answers[0].result.status, TrialStatus::runtime_fault);
  EXPECT_EQ(run.answers[0].result.detail, "unlucky trial");
  EXPECT_EQ(run.answers[1].result.status, TrialStatus::ok);
}

TEST(ServeWorker, EmptyInputIsACleanExit) {
  ServeRun run = serve("");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(run.answers.empty());
}

TEST(ServeWorker, AMalformedFrameIsAnsweredWithAnErrorAndExit2) {
  struct Case {
    const char* what;
    std::string input;
    bool at_end;  // a truncation is one only at EOF
  };
  const std::vector<Case> cases = {
      {"not CBOR", frame("garbage!"), false},
      {"a result sent to the worker", frame(encode_result(TrialResult{})), false},
      {"over 1 GiB", std::string("\x01\x00\x00\x40", 4) + std::string(100, 'x'), false},
      {"truncated header", std::string("\x05\x00", 2), true},
      {"truncated payload", frame(encode_request(small_request(1))).substr(0, 40), true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    // A good trial first: it is answered before the bad frame stops the loop; a good trial
    // after the bad frame is never answered.
    std::string input = frame(encode_request(small_request(1))) + c.input;
    if (!c.at_end) input += frame(encode_request(small_request(2)));
    ServeRun run = serve(input);
    EXPECT_EQ(run.exit_code, 2);
    ASSERT_EQ(run.answers.size(), 2u);
    EXPECT_EQ(run.answers[0].type, WorkerMessage::Type::result);
    EXPECT_EQ(run.answers[1].type, WorkerMessage::Type::error);
    EXPECT_FALSE(run.answers[1].error.empty());
  }
}

TEST(ServeWorker, WorkerFdsComeFromTheEnvironment) {
  ::unsetenv(worker_fds_env);
  expect_error([] { (void)worker_fds_from_env(); }, worker_fds_env);
  ::setenv(worker_fds_env, "3;4", 1);
  expect_error([] { (void)worker_fds_from_env(); }, "IN,OUT");
  ::setenv(worker_fds_env, "1000,1001", 1);
  expect_error([] { (void)worker_fds_from_env(); }, "fd 1000");
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ::setenv(worker_fds_env, (std::to_string(p[0]) + "," + std::to_string(p[1])).c_str(), 1);
  WorkerFds fds = worker_fds_from_env();
  EXPECT_EQ(fds.in_fd, p[0]);
  EXPECT_EQ(fds.out_fd, p[1]);
  EXPECT_EQ(::fcntl(p[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  ::close(p[0]);
  ::close(p[1]);
  ::unsetenv(worker_fds_env);
}

// --- WorkerProcess against fake_worker ---------------------------------------------------

int open_fds() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

struct Sequence {
  TrialResult first, second, third;
  int starts = 0;
  pid_t first_pid = 0, third_pid = 0;
  double second_seconds = 0;
};

// Trials 1, 2 and 3 in one WorkerProcess running `fake_worker mode`; the process is gone
// (destroyed) when this returns.
Sequence run_sequence(const std::string& mode, double deadline_seconds = 10) {
  Sequence s;
  int fds_before = open_fds();
  {
    WorkerProcess worker({kFakeWorker, mode});
    EXPECT_EQ(worker.pid(), 0) << "started lazily";
    s.first = worker.run(small_request(1, deadline_seconds));
    s.first_pid = worker.pid();
    auto t0 = Clock::now();
    s.second = worker.run(small_request(2, deadline_seconds));
    s.second_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    s.third = worker.run(small_request(3, deadline_seconds));
    s.third_pid = worker.pid();
    s.starts = worker.starts();
  }
  EXPECT_EQ(s.first.status, TrialStatus::ok) << s.first.detail;
  EXPECT_EQ(s.first.median_ms, 1);
  EXPECT_EQ(s.second.id, 2u);
  EXPECT_EQ(s.third.status, TrialStatus::ok) << s.third.detail;
  EXPECT_EQ(s.third.median_ms, 3);
  expect_no_children();
  EXPECT_EQ(open_fds(), fds_before) << "every pipe end is closed";
  return s;
}

void expect_restarted(const Sequence& s) {
  EXPECT_EQ(s.starts, 2);
  EXPECT_NE(s.first_pid, s.third_pid);
  expect_reaped(s.first_pid);
}

TEST(WorkerProcess, AWellBehavedWorkerServesEveryTrial) {
  Sequence s = run_sequence("ok");
  EXPECT_EQ(s.second.status, TrialStatus::ok);
  EXPECT_EQ(s.second.median_ms, 2);
  EXPECT_EQ(s.starts, 1);
  EXPECT_EQ(s.first_pid, s.third_pid);
}

TEST(WorkerProcess, AHangIsATimeoutAndTheWorkerIsReplaced) {
  Sequence s = run_sequence("sleep", 0.5);
  EXPECT_EQ(s.second.status, TrialStatus::timeout);
  EXPECT_EQ(s.second.detail, "no answer within 0.5 s: worker killed");
  EXPECT_GE(s.second_seconds, 0.5);
  EXPECT_LT(s.second_seconds, 5.0);
  expect_restarted(s);
}

TEST(WorkerProcess, ACrashIsARuntimeFaultNamingTheSignal) {
  Sequence s = run_sequence("crash");
  EXPECT_EQ(s.second.status, TrialStatus::runtime_fault);
  EXPECT_EQ(s.second.detail, "worker died: killed by signal 11 (Segmentation fault)");
  expect_restarted(s);
}

TEST(WorkerProcess, AnEarlyExitIsARuntimeFaultWithTheStatus) {
  Sequence s = run_sequence("exit");
  EXPECT_EQ(s.second.status, TrialStatus::runtime_fault);
  EXPECT_EQ(s.second.detail, "worker exited with status 3 before answering");
  expect_restarted(s);
}

TEST(WorkerProcess, GarbageIsARuntimeFaultAndTheWorkerIsKilled) {
  Sequence s = run_sequence("garbage");
  EXPECT_EQ(s.second.status, TrialStatus::runtime_fault);
  EXPECT_EQ(s.second.detail.rfind("worker sent a malformed answer: ", 0), 0u) << s.second.detail;
  EXPECT_LT(s.second_seconds, 5.0) << "garbage is noticed at once, not at the deadline";
  expect_restarted(s);
}

TEST(WorkerProcess, AnOversizedFrameIsGarbage) {
  Sequence s = run_sequence("huge");
  EXPECT_EQ(s.second.status, TrialStatus::runtime_fault);
  EXPECT_EQ(s.second.detail.rfind("worker sent a malformed answer: ", 0), 0u) << s.second.detail;
  EXPECT_NE(s.second.detail.find("limit"), std::string::npos) << s.second.detail;
  expect_restarted(s);
}

TEST(WorkerProcess, AHandlerExceptionKeepsTheWorker) {
  Sequence s = run_sequence("throw");
  EXPECT_EQ(s.second.status, TrialStatus::runtime_fault);
  EXPECT_EQ(s.second.detail, "fake failure on trial 2");
  EXPECT_EQ(s.starts, 1);
  EXPECT_EQ(s.first_pid, s.third_pid);
}

TEST(WorkerProcess, AWorkerThatLostItsContextAnswersExitsAndIsReplacedBeforeTheNextTrial) {
  // The next request must not race the dying worker and be blamed for its exit.
  for (int round = 0; round < 20; ++round) {
    Sequence s = run_sequence("lost");
    EXPECT_EQ(s.second.status, TrialStatus::runtime_fault);
    EXPECT_NE(s.second.detail.find("context is lost"), std::string::npos) << s.second.detail;
    expect_restarted(s);
  }
}

TEST(WorkerProcess, AWorkerThatStopsReadingMeetsEpipeNotSigpipe) {
  // The default disposition, as in a program that never touched SIGPIPE: a write to the
  // closed pipe must not kill the parent, and no SIGPIPE may stay pending afterwards.
  struct sigaction dfl {
  }, old{};
  dfl.sa_handler = SIG_DFL;
  ASSERT_EQ(::sigaction(SIGPIPE, &dfl, &old), 0);
  Sequence s = run_sequence("deaf");
  EXPECT_EQ(s.second.status, TrialStatus::runtime_fault);
  EXPECT_EQ(s.second.detail, "worker closed its pipe without exiting: worker killed");
  expect_restarted(s);
  sigset_t pending;
  ASSERT_EQ(::sigpending(&pending), 0);
  EXPECT_EQ(::sigismember(&pending, SIGPIPE), 0);
  ASSERT_EQ(::sigaction(SIGPIPE, &old, nullptr), 0);
}

TEST(WorkerProcess, PipesAreDedicatedFdsAndCarryAMegabyteCubin) {
  WorkerProcess worker({kFakeWorker, "ok"});
  TrialRequest r = small_request(9);
  r.cubin = full_request().cubin;
  TrialResult result = worker.run(r);
  ASSERT_EQ(result.status, TrialStatus::ok) << result.detail;
  // detail is "fds=IN,OUT cubin=N" as the fake saw them: not stdin/stdout/stderr.
  int in = -1, out = -1;
  unsigned long long cubin = 0;
  ASSERT_EQ(std::sscanf(result.detail.c_str(), "fds=%d,%d cubin=%llu", &in, &out, &cubin), 3) << result.detail;
  EXPECT_GT(in, 2);
  EXPECT_GT(out, 2);
  EXPECT_EQ(cubin, r.cubin.size());
}

TEST(WorkerProcess, MeasureCopyRoundTrips) {
  {
    WorkerProcess worker({kFakeWorker, "ok"});
    CopyCeiling c = worker.measure_copy(1ull << 30, 5);
    EXPECT_EQ(c.bytes, 1ull << 30);
    EXPECT_DOUBLE_EQ(c.median_ms, static_cast<double>(1ull << 30) / 1e6);
    EXPECT_DOUBLE_EQ(c.gbps, 2.0);
    // A failing copy is an Error; the worker lives on.
    expect_error([&] { (void)worker.measure_copy(0, 5); }, "fake copy of zero bytes");
    EXPECT_EQ(worker.run(small_request(1)).status, TrialStatus::ok);
    EXPECT_EQ(worker.starts(), 1);
  }
  {
    WorkerProcess worker({kFakeWorker, "sleep"});
    // The copy is answered; a trial after it hangs: both go through the same pipe.
    EXPECT_EQ(worker.measure_copy(64, 5).bytes, 64u);
    EXPECT_EQ(worker.run(small_request(2, 0.2)).status, TrialStatus::timeout);
    EXPECT_EQ(worker.measure_copy(128, 5).bytes, 128u);
    EXPECT_EQ(worker.starts(), 2);
  }
  expect_no_children();
}

TEST(WorkerProcess, AMissingProgramIsAnErrorNamingIt) {
  {
    WorkerProcess worker({"/nonexistent/tiletune-worker", "__worker"});
    expect_error([&] { (void)worker.run(small_request(1)); }, "/nonexistent/tiletune-worker");
    expect_error([&] { (void)worker.run(small_request(1)); }, "No such file or directory");
    EXPECT_EQ(worker.starts(), 0);
    EXPECT_EQ(worker.pid(), 0);
  }
  testing::TempDir dir;
  std::filesystem::path not_executable = dir.write("worker.sh", "#!/bin/sh\nexit 0\n");
  {
    WorkerProcess worker({not_executable.string()});
    expect_error([&] { (void)worker.run(small_request(1)); }, not_executable.string());
  }
  EXPECT_THROW(WorkerProcess(std::vector<std::string>{}), Error);
  expect_no_children();
}

TEST(WorkerProcess, BadDeadlinesAreRefusedAndInfinityWaits) {
  WorkerProcess worker({kFakeWorker, "ok"});
  EXPECT_THROW((void)worker.run(small_request(1, 0)), Error);
  EXPECT_THROW((void)worker.run(small_request(1, -1)), Error);
  EXPECT_THROW((void)worker.run(small_request(1, std::nan(""))), Error);
  EXPECT_EQ(worker.run(small_request(1, std::numeric_limits<double>::infinity())).status, TrialStatus::ok);
}

TEST(WorkerProcess, AWorkerThatDiedBetweenTrialsIsReplacedWithoutBlame) {
  WorkerProcess worker({kFakeWorker, "ok"});
  ASSERT_EQ(worker.run(small_request(1)).status, TrialStatus::ok);
  pid_t first = worker.pid();
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  // Wait until it is a zombie, without reaping it (that is the WorkerProcess's job).
  for (int i = 0; i < 400; ++i) {
    std::ifstream stat("/proc/" + std::to_string(first) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close_paren = line.rfind(')');
    if (close_paren != std::string::npos && line.size() > close_paren + 2 && line[close_paren + 2] == 'Z') break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  TrialResult r = worker.run(small_request(3));
  EXPECT_EQ(r.status, TrialStatus::ok) << r.detail;
  EXPECT_EQ(worker.starts(), 2);
  expect_reaped(first);
}

TEST(WorkerProcess, TheDestructorKillsAWorkerThatIgnoresEof) {
  pid_t pid = 0;
  auto t0 = Clock::now();
  {
    WorkerProcess worker({kFakeWorker, "linger"});
    ASSERT_EQ(worker.run(small_request(1)).status, TrialStatus::ok);
    pid = worker.pid();
    t0 = Clock::now();
  }
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_GE(seconds, 1.5) << "it was given time to exit";
  EXPECT_LT(seconds, 5.0);
  expect_reaped(pid);
  EXPECT_EQ(::kill(pid, 0), -1);
  expect_no_children();
}

TEST(WorkerProcess, TheDestructorLetsAWorkerExitOnEof) {
  auto t0 = Clock::now();
  {
    WorkerProcess worker({kFakeWorker, "ok"});
    ASSERT_EQ(worker.run(small_request(1)).status, TrialStatus::ok);
    t0 = Clock::now();
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 1.0);
  expect_no_children();
}

TEST(WorkerProcess, DefaultArgvIsThisProgramOrTheOverride) {
  ::setenv("TILETUNE_WORKER", "/opt/tiletune/bin/tiletune", 1);
  EXPECT_EQ(default_worker_argv(3),
            (std::vector<std::string>{"/opt/tiletune/bin/tiletune", "__worker", "--device", "3"}));
  EXPECT_EQ(default_worker_argv(1, "/tmp/cubins"),
            (std::vector<std::string>{"/opt/tiletune/bin/tiletune", "__worker", "--device", "1", "--cubin-cache",
                                      "/tmp/cubins"}));
  ::unsetenv("TILETUNE_WORKER");
  std::vector<std::string> argv = default_worker_argv(0);
  ASSERT_EQ(argv.size(), 4u);
  EXPECT_EQ(argv[0], std::filesystem::read_symlink("/proc/self/exe").string());
  EXPECT_EQ(argv[1], "__worker");
  EXPECT_EQ(argv[3], "0");
}

}  // namespace
}  // namespace tiletune
