// validate_inputs_and_checks: every impossible check or input is a SpaceError at the place in
// the YAML that is wrong, found before any GPU work (what `plan` and `tune` run after loading a
// space). CPU only: the reference kernel compiles with NVRTC, the library is the test one.
#include <gtest/gtest.h>

#include "space_builder.hpp"
#include "test_support.hpp"
#include "tiletune/data_file.hpp"
#include "tiletune/validate.hpp"

namespace tiletune {
namespace {

using testing::SpaceBuilder;

// c = a + b over N floats, checked against the built-in vector_add.
SpaceBuilder vector_add() {
  SpaceBuilder b("my_add", "/kernels/my_add.cu");
  b.problem("N", {1000, 4096});
  b.param("BLOCK", {64, 128});
  b.buffer("a", ElementType::f32, "N", BufferInit::random);
  b.buffer("b", ElementType::f32, "N", BufferInit::random);
  b.buffer("c", ElementType::f32, "N", BufferInit::zero, true);
  for (const char* name : {"a", "b", "c"}) b.arg_buffer(name);
  b.arg_scalar(b.integer("N"));
  b.launch("ceil_div(N, BLOCK)", "BLOCK");
  b.verify(VerifySpec::Reference::builtin).builtin = "vector_add";
  return b;
}

// Expects a SpaceError at `where` whose reason mentions each needle.
void expect_space_error(const Space& space, const SourceLocation& where, std::initializer_list<std::string> needles,
                        const ValidationOptions& options = {}) {
  try {
    validate_inputs_and_checks(space, options);
    ADD_FAILURE() << "no SpaceError";
  } catch (const SpaceError& e) {
    EXPECT_EQ(e.where().str(), where.str()) << e.what();
    for (const std::string& needle : needles)
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "'" << needle << "' not in: " << e.what();
  }
}

TEST(Validate, AFittingBuiltInPasses) { EXPECT_NO_THROW(validate_inputs_and_checks(vector_add().space)); }

TEST(Validate, AnUnknownBuiltInIsRefusedAtTheVerifyEntry) {
  SpaceBuilder b = vector_add();
  b.space.verify.builtin = "my_add";  // the family name picks nothing any more
  expect_space_error(b.space, b.space.verify.where,
                     {"no built-in reference named 'my_add'", "built in: histogram, matmul", "vector_add"});
}

TEST(Validate, ABuiltInThatDoesNotFitIsRefused) {
  SpaceBuilder b = vector_add();
  b.space.verify.builtin = "transpose";
  expect_space_error(b.space, b.space.verify.where, {"'transpose' needs an input buffer named 'in'", "computes"});
  b.space.verify.builtin = "stencil_1d";
  expect_space_error(b.space, b.space.verify.where, {"'stencil_1d' needs problem size R"});
  b.space.buffers[0].type = ElementType::i32;
  b.space.verify.builtin = "vector_add";
  expect_space_error(b.space, b.space.verify.where, {"of one type"});
  // A buffer type following a text param is checked for each of its values.
  SpaceBuilder t = vector_add();
  t.text_param("T", {"float", "uint8"});
  for (BufferSpec& buffer : t.space.buffers) buffer.type_param = 1;
  expect_space_error(t.space, t.space.verify.where, {"not uint8"});
}

TEST(Validate, ALibraryMustLoadAndHaveTheFunction) {
  SpaceBuilder b = vector_add();
  b.space.verify.reference = VerifySpec::Reference::library;
  b.space.verify.library = TILETUNE_TEST_REFERENCE_LIBRARY;
  b.space.verify.function = "saxpy_reference";
  EXPECT_NO_THROW(validate_inputs_and_checks(b.space));
  b.space.verify.function = "no_such_function";
  expect_space_error(b.space, b.space.verify.where, {"has no function 'no_such_function'"});
  b.space.verify.library = "/no/such/libref.so";
  expect_space_error(b.space, b.space.verify.where, {"cannot load the reference library /no/such/libref.so"});
}

TEST(Validate, ExpectedFilesMustExistWithTheirTypeAndCount) {
  testing::TempDir dir;
  SpaceBuilder b = vector_add();
  b.space.verify.reference = VerifySpec::Reference::files;
  b.space.verify.files = {{"c", "expected/c_{N}.npy"}};
  b.space.verify.file_dir = dir.path();
  std::filesystem::create_directories(dir.path() / "expected");
  write_npy(dir.path() / "expected" / "c_1000.npy", ElementType::f32, std::vector<std::byte>(4000));
  expect_space_error(b.space, b.space.verify.where, {"expected output 'c' for N=4096", "c_4096.npy", "no such file"});
  write_npy(dir.path() / "expected" / "c_4096.npy", ElementType::f64, std::vector<std::byte>(8 * 4096));
  expect_space_error(b.space, b.space.verify.where, {"c_4096.npy", "is float, the file holds double"});
  write_npy(dir.path() / "expected" / "c_4096.npy", ElementType::f32, std::vector<std::byte>(4 * 4095));
  expect_space_error(b.space, b.space.verify.where, {"has 4096 elements, the file holds 4095"});
  write_npy(dir.path() / "expected" / "c_4096.npy", ElementType::f32, std::vector<std::byte>(4 * 4096));
  EXPECT_NO_THROW(validate_inputs_and_checks(b.space));
  b.space.verify.files.clear();
  expect_space_error(b.space, b.check("c").where, {"output 'c' is checked, but verify gives no expected file"});
}

TEST(Validate, InputFilesMustExistWithTheirTypeAndCount) {
  testing::TempDir dir;
  SpaceBuilder b = vector_add();
  BufferSpec& a = b.space.buffers[0];
  a.init.kind = BufferInit::file;
  a.init.file = "a.bin";
  a.init.file_dir = dir.path();
  expect_space_error(b.space, a.init.where, {"buffer 'a' for N=1000", "a.bin", "no such file"});
  (void)dir.write("a.bin", std::string(4000, '\0'));
  expect_space_error(b.space, a.init.where, {"buffer 'a' is 4096 x float = 16384 bytes, the raw file holds 4000"});
  b.space.problem[0].values = {1000};
  EXPECT_NO_THROW(validate_inputs_and_checks(b.space));
}

TEST(Validate, CsrShapesMustFit) {
  SpaceBuilder b = vector_add();
  BufferSpec& offsets = b.buffer("row_ptr", ElementType::i32, "N", BufferInit::csr_offsets);
  offsets.init.rows = b.expr("N");
  offsets.init.columns = b.expr("32");
  offsets.init.nnz = b.expr("N * 8");
  BufferSpec& columns = b.buffer("col_idx", ElementType::i32, "N * 8", BufferInit::csr_columns);
  columns.init.of = "row_ptr";
  Space s = b.space;
  expect_space_error(s, s.buffers[3].where, {"offsets of 1000 rows: its count must be rows + 1 = 1001, not 1000"});
  s.buffers[3].count = b.expr("N + 1");
  EXPECT_NO_THROW(validate_inputs_and_checks(s));
  Space dense = s;
  dense.buffers[3].init.nnz = b.expr("N * 33");
  expect_space_error(dense, dense.buffers[3].init.where, {"33000 entries do not fit a 1000 x 32 matrix"});
  Space floats = s;
  floats.buffers[4].type = ElementType::f32;
  expect_space_error(floats, floats.buffers[4].init.where, {"holds CSR indices, but it is float"});
  Space wide = s;  // uint64 indices are taken, narrow ones are not
  wide.buffers[3].type = ElementType::u64;
  wide.buffers[4].type = ElementType::u64;
  EXPECT_NO_THROW(validate_inputs_and_checks(wide));
  wide.buffers[4].type = ElementType::u16;
  expect_space_error(wide, wide.buffers[4].init.where,
                     {"holds CSR indices, but it is uint16", "int, uint, int64 or uint64"});
  Space short_columns = s;
  short_columns.buffers[4].count = b.expr("N");
  expect_space_error(short_columns, short_columns.buffers[4].where, {"columns of 8000 entries: its count 1000"});
  Space wrong_of = s;
  wrong_of.buffers[4].init.of = "a";
  expect_space_error(wrong_of, wrong_of.buffers[4].init.where, {"'a', which is not a csr_offsets buffer"});
}

TEST(Validate, DistributionsAndCopiesMustMakeSense) {
  SpaceBuilder b = vector_add();
  Space normal_int = b.space;
  normal_int.buffers[0].type = ElementType::i32;
  normal_int.buffers[0].init.kind = BufferInit::normal;
  normal_int.buffers[0].init.b = b.number(1);
  expect_space_error(normal_int, normal_int.buffers[0].init.where, {"integer buffer: normal draws floats"});
  Space empty_range = b.space;
  empty_range.buffers[0].init.kind = BufferInit::uniform;
  empty_range.buffers[0].init.a = b.number(2);
  empty_range.buffers[0].init.b = b.number(2);
  expect_space_error(empty_range, empty_range.buffers[0].init.where, {"uniform needs low < high, got [2, 2)"});
  Space fractional = b.space;
  fractional.buffers[0].type = ElementType::i32;
  fractional.buffers[0].init.kind = BufferInit::uniform;
  fractional.buffers[0].init.a = b.number(0.5);
  fractional.buffers[0].init.b = b.number(4);
  expect_space_error(fractional, fractional.buffers[0].init.where, {"bounds must be whole numbers"});
  Space copy = b.space;
  copy.buffers[2].init.kind = BufferInit::copy;
  copy.buffers[2].init.of = "a";
  EXPECT_NO_THROW(validate_inputs_and_checks(copy));
  copy.buffers[0].type = ElementType::f64;
  expect_space_error(copy, copy.buffers[2].init.where, {"copy of 'a', which has another type"});
  Space cycle = b.space;
  cycle.buffers[0].init.kind = BufferInit::copy;
  cycle.buffers[0].init.of = "b";
  cycle.buffers[1].init.kind = BufferInit::copy;
  cycle.buffers[1].init.of = "a";
  expect_space_error(cycle, cycle.buffers[0].init.where, {"a copy of a copy of itself"});
}

// Values that need a problem size are checked against their type for every problem: scalar
// arguments (a constant is the loader's) and the fills of buffers and globals.
TEST(Validate, ValuesMustFitTheirTypeForEveryProblem) {
  SpaceBuilder b = vector_add();  // N: 1000, 4096
  Space narrow = b.space;
  narrow.args.back().scalar_type = ElementType::i8;  // N as an int8: too big for both problems
  expect_space_error(narrow, narrow.args.back().where,
                     {"argument 4 ('N') for N=1000: 1000 does not fit int8 (-128 to 127)"});
  narrow.args.back().scalar_type = ElementType::u16;
  EXPECT_NO_THROW(validate_inputs_and_checks(narrow));
  narrow.args.back().value = b.integer("N * 16");  // 65536 for N=4096
  expect_space_error(narrow, narrow.args.back().where, {"for N=4096: 65536 does not fit uint16 (0 to 65535)"});
  narrow.args.back().value = b.integer("N - 2000");
  narrow.args.back().scalar_type = ElementType::u64;
  expect_space_error(narrow, narrow.args.back().where, {"for N=1000: -1000 does not fit uint64"});
  Space per_config = b.space;
  per_config.args.back().value = b.integer("BLOCK * 1000");  // reads a param: left to each config
  per_config.args.back().scalar_type = ElementType::i8;
  EXPECT_NO_THROW(validate_inputs_and_checks(per_config));

  Space fill = b.space;
  fill.buffers[0].type = ElementType::i16;
  fill.buffers[1].type = ElementType::i16;
  fill.buffers[2].type = ElementType::i16;
  fill.buffers[0].init.kind = BufferInit::uniform;
  fill.buffers[0].init.a = b.integer("0");
  fill.buffers[0].init.b = b.integer("N * 8");  // up to 32767 fits for N=4096, not 32768
  fill.verify.reference = VerifySpec::Reference::none;
  EXPECT_NO_THROW(validate_inputs_and_checks(fill));
  fill.buffers[0].init.b = b.integer("N * 8 + 1");
  expect_space_error(fill, fill.buffers[0].init.where, {"for N=4096: 32768 does not fit int16 (-32768 to 32767)"});
  fill.buffers[0].init.kind = BufferInit::constant;
  fill.buffers[0].init.a = b.integer("N * -40");
  expect_space_error(fill, fill.buffers[0].init.where, {"for N=1000: -40000 does not fit int16"});
}

TEST(Validate, ACheckMustNameAnOutput) {
  SpaceBuilder b = vector_add();
  b.space.verify.outputs[0].buffer = "a";
  expect_space_error(b.space, b.space.verify.outputs[0].where, {"'a', which is not an output buffer"});
}

// A same-file reference kernel: naive_add(a, b, c, n) beside the tuned one.
SpaceBuilder with_reference_kernel(const testing::TempDir& dir, const std::string& entry) {
  SpaceBuilder b = vector_add();
  b.space.source = dir.write("add.cu", R"(
__global__ void my_add(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
__global__ void naive_add(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
)");
  ReferenceKernel k;
  k.source = b.space.source;
  k.entry = entry;
  const std::vector<std::string> slots = {"N"};
  for (int d = 0; d < 3; ++d) {
    k.launch.grid[d] = b.expr("1", slots);
    k.launch.block[d] = b.expr("1", slots);
  }
  k.launch.shared_bytes = b.expr("0", slots);
  k.where = b.line();
  b.space.verify.kernel = std::move(k);
  b.space.verify.reference = VerifySpec::Reference::kernel;
  return b;
}

TEST(Validate, AReferenceKernelMustCompile) {
  testing::TempDir dir;
  const SpaceBuilder good = with_reference_kernel(dir, "naive_add");
  EXPECT_NO_THROW(validate_inputs_and_checks(good.space, {"sm_90", nullptr}));
  const SpaceBuilder misspelt = with_reference_kernel(dir, "naive_ad");
  expect_space_error(misspelt.space, misspelt.space.verify.kernel->where,
                     {"the reference kernel 'naive_ad'", "does not compile for sm_90"});
  SpaceBuilder missing = with_reference_kernel(dir, "naive_add");
  missing.space.verify.kernel->source = dir.path() / "gone.cu";
  expect_space_error(missing.space, missing.space.verify.kernel->where, {"source cannot be read", "gone.cu"});
}

TEST(Validate, AReferenceKernelMustDefineWhatItsCheckedOutputsNeed) {
  testing::TempDir dir;
  SpaceBuilder b = with_reference_kernel(dir, "naive_add");
  b.space.buffers[2].count = b.expr("N + BLOCK");
  expect_space_error(b.space, b.space.verify.kernel->where,
                     {"the count of output 'c'", "uses param BLOCK", "reference_count"});
  b.space.verify.kernel->defines.push_back({"BLOCK", "64", 64});
  EXPECT_NO_THROW(validate_inputs_and_checks(b.space));
  b.space.verify.kernel->defines.clear();
  b.check("c").reference_count = b.expr("N", {"N"});
  EXPECT_NO_THROW(validate_inputs_and_checks(b.space));
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

TEST(Validate, AReferenceConfigMustPassTheConstraints) {
  testing::SpaceBuilder b = vector_add();
  b.space.verify.reference = VerifySpec::Reference::config;
  b.space.verify.reference_config = {128};
  b.space.constraints.push_back({b.expr("BLOCK * 4 <= N")});
  EXPECT_NO_THROW(validate_inputs_and_checks(b.space));
  b.space.problem[0].values = {1000, 256};
  expect_space_error(b.space, b.space.verify.where,
                     {"the reference config BLOCK=128 is not a config of the space for N=256", "BLOCK * 4 <= N"});
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// Through the CLI: `plan` and `tune` refuse an impossible check with the YAML's file:line:column
// and exit 1, before any GPU work (tune on a machine with a GPU validates before its worker starts).
TEST(Validate, PlanAndTuneRefuseAnImpossibleCheckWithItsPlace) {
  testing::TempDir dir;
  (void)dir.write("k.cu", "__global__ void k(float* out, int n) { if (threadIdx.x < n) out[threadIdx.x] = 1; }\n");
  const auto yaml = dir.write("k.yaml", R"(kernel: my_kernel
source: k.cu
entry: k
problem: {N: [64]}
params: {BLOCK: [64]}
launch: {grid: [1], block: [BLOCK]}
buffers:
  out: {type: float, count: N, output: true}
args: [out, N]
verify:
  reference: {library: ./libbroken.so, function: my_reference}
)");
  (void)dir.write("libbroken.so", "not a shared library\n");
  const std::string cli = "'" + testing::cli_path().string() + "' ";
  for (const std::string command : {"plan --arch sm_90 '" + yaml.string() + "'",
                                    "tune '" + yaml.string() + "' --db '" + (dir.path() / "cache.db").string() + "'"}) {
    SCOPED_TRACE(command);
    const testing::CommandResult r = testing::run_command(cli + command + " 2>&1");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("k.yaml:11:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("cannot load the reference library"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("libbroken.so"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "cache.db")) << "nothing is written before the check is known";
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// Buffers no device can hold are found once, before any trial, at the largest buffer's count,
// naming the problem, both sizes and the device; a count that reads a param is left per config.
TEST(DeviceMemory, BuffersLargerThanTheDeviceAreRefusedBeforeAnyTrial) {
  SpaceBuilder b = vector_add();  // 3 x N floats: 12,000 and 49,152 bytes
  EXPECT_NO_THROW(check_device_memory(b.space, 49152, "device 0 (test)"));
  EXPECT_NO_THROW(check_device_memory(b.space, 0, "device 0 (test)")) << "0: unknown, not checked";
  b.space.buffers[1].count.where = SourceLocation{"space.yaml", 14, 21};
  b.space.buffers[1].type = ElementType::f64;  // 'b' is the largest now
  try {
    check_device_memory(b.space, 60000, "device 0 (test)");
    ADD_FAILURE() << "no SpaceError";
  } catch (const SpaceError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.where().str(), "space.yaml:14:21") << what;
    for (const char* needle : {"the buffers of N=4096 need", "'b' alone", "of device 0 (test)",
                               "every config would fail to allocate them"})
      EXPECT_NE(what.find(needle), std::string::npos) << needle << " not in: " << what;
  }
  SpaceBuilder scratch = vector_add();
  scratch.buffer("tiles", ElementType::f32, "N * BLOCK * 1000000", BufferInit::zero);
  EXPECT_NO_THROW(check_device_memory(scratch.space, 49152, "device 0 (test)")) << "sized by a param: per config";
}

}  // namespace
}  // namespace tiletune
