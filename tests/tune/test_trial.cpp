// What a worker is sent for one config: inputs with their generator parameters, module globals
// under the symbols the module has, checks with their counts, types following a text param,
// float scalars, and the run of a reference kernel with its own params. CPU only.
#include <gtest/gtest.h>

#include "space_builder.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {
namespace {

using testing::SpaceBuilder;

// A space with every kind of input, a templated element type T, a module global and two checks.
SpaceBuilder rich_space() {
  SpaceBuilder b("rich", "/kernels/rich.cu");
  b.problem("N", {1000, 4096});
  b.param("BLOCK", {64, 128});
  b.text_param("T", {"float", "double"});
  b.text_param("ALPHA", {"0.5", "2.25"}, AxisKind::real);
  BufferSpec& x = b.buffer("x", ElementType::f32, "N", BufferInit::uniform);
  x.type_param = 1;
  x.init.a = b.number(0.5);
  x.init.b = b.number(2.0);
  BufferSpec& y = b.buffer("y", ElementType::f32, "N", BufferInit::copy, true);
  y.type_param = 1;
  y.init.of = "x";
  BufferSpec& offsets = b.buffer("row_ptr", ElementType::i32, "N + 1", BufferInit::csr_offsets);
  offsets.init.rows = b.expr("N");
  offsets.init.columns = b.expr("64");
  offsets.init.nnz = b.expr("N * 4");
  BufferSpec& columns = b.buffer("col_idx", ElementType::i32, "N * 4", BufferInit::csr_columns);
  columns.init.of = "row_ptr";
  BufferSpec& weights = b.buffer("w", ElementType::f64, "N", BufferInit::file);
  weights.init.file = "data/w_{N}.npy";
  weights.init.file_dir = "/spaces";
  b.buffer("partials", ElementType::f32, "ceil_div(N, BLOCK)", BufferInit::zero, true);  // init not written
  GlobalSpec& g = b.global("conv::weights", ElementType::f32, "9", BufferInit::normal);
  g.init.a = b.number(0);
  g.init.b = b.number(1);
  b.arg_buffer("x");
  b.arg_buffer("y");
  ArgSpec& alpha = b.arg_scalar(b.number(0.5), ElementType::f32);
  alpha.type_param = 1;
  NumberSpec real_param;
  real_param.real_param = 2;
  b.arg_scalar(real_param, ElementType::f64);
  b.arg_scalar(b.integer("N * 1000000000"), ElementType::i64);
  b.arg_buffer("row_ptr");
  b.arg_buffer("col_idx");
  b.arg_buffer("w");
  b.arg_buffer("partials");
  b.launch("ceil_div(N, BLOCK)", "BLOCK");
  b.verify(VerifySpec::Reference::builtin).builtin = "vector_add";
  b.check("y").rtol = 1e-6;
  OutputCheck& sum = b.check("partials");
  sum.compare = OutputCheck::Compare::sum;
  sum.count = b.expr("ceil_div(N, BLOCK)");
  sum.atol = 1e-3;
  return b;
}

TrialRequest request_for(const Space& s, const Problem& p, const Config& c) {
  CompiledKernel k;
  k.cubin = "ELF";
  k.lowered_name = "_Z4richPfS_";
  return make_trial_request(s, p, c, evaluate_launch(s, p, c), k);
}

TEST(TrialRequest, CarriesEveryInputGlobalAndCheck) {
  const Space s = rich_space().space;
  const TrialRequest r = request_for(s, Problem{{1000}}, Config{{128, 1, 1}});
  EXPECT_EQ(r.problem_key, "rich|N=1000|T=double");
  EXPECT_EQ(r.config_text, "BLOCK=128 T=double ALPHA=2.25");
  ASSERT_EQ(r.buffers.size(), 6u);
  const BufferPlan& x = r.buffers[0];
  EXPECT_EQ(x.type, ElementType::f64);  // follows T
  EXPECT_EQ(x.count, 1000u);
  EXPECT_EQ(x.init.kind, BufferInit::uniform);
  EXPECT_EQ(x.init.a, 0.5);
  EXPECT_EQ(x.init.b, 2.0);
  const BufferPlan& y = r.buffers[1];
  EXPECT_EQ(y.init.kind, BufferInit::copy);
  EXPECT_EQ(y.init.source, 0);
  EXPECT_TRUE(y.in_out());
  const BufferPlan& offsets = r.buffers[2];
  EXPECT_EQ(offsets.init.rows, 1000u);
  EXPECT_EQ(offsets.init.columns, 64u);
  EXPECT_EQ(offsets.init.nnz, 4000u);
  const BufferPlan& columns = r.buffers[3];
  EXPECT_EQ(columns.init.kind, BufferInit::csr_columns);
  EXPECT_EQ(columns.init.source, 2);
  EXPECT_EQ(columns.init.rows, 1000u);  // the shape of its offsets
  EXPECT_EQ(columns.init.nnz, 4000u);
  EXPECT_EQ(r.buffers[4].init.file, "/spaces/data/w_1000.npy");
  const BufferPlan& partials = r.buffers[5];
  EXPECT_EQ(partials.count, 8u);
  EXPECT_EQ(partials.init.kind, BufferInit::zero);
  EXPECT_FALSE(partials.in_out()) << "poisoned before the checked launch, not restored";

  ASSERT_EQ(r.globals.size(), 1u);
  EXPECT_EQ(r.globals[0].name, "conv::weights");
  EXPECT_EQ(r.globals[0].symbol, "_ZN4conv7weightsE");
  EXPECT_EQ(r.globals[0].count, 9u);
  EXPECT_EQ(r.globals[0].init.kind, BufferInit::normal);
  EXPECT_EQ(r.globals[0].init.b, 1.0);

  ASSERT_EQ(r.args.size(), 9u);
  EXPECT_EQ(r.args[2].type, ElementType::f64);  // {value: 0.5, type: T}
  EXPECT_EQ(r.args[2].float_value, 0.5);
  EXPECT_EQ(r.args[3].type, ElementType::f64);
  EXPECT_EQ(r.args[3].float_value, 2.25);           // the real param's value
  EXPECT_EQ(r.args[4].int_value, 1000000000000ll);  // exact: not through a double
  EXPECT_EQ(r.args[8].buffer, 5);

  EXPECT_EQ(r.verify.mode, VerifySettings::Mode::cpu);
  EXPECT_EQ(r.verify.cpu_reference, "vector_add");
  ASSERT_EQ(r.verify.checks.size(), 2u);
  EXPECT_EQ(r.verify.checks[0].buffer, 1);
  EXPECT_EQ(r.verify.checks[0].compare, OutputCheck::Compare::elements);
  EXPECT_EQ(r.verify.checks[0].count, 1000u);
  EXPECT_EQ(r.verify.checks[0].rtol, 1e-6);
  EXPECT_EQ(r.verify.checks[1].buffer, 5);
  EXPECT_EQ(r.verify.checks[1].compare, OutputCheck::Compare::sum);
  EXPECT_EQ(r.verify.checks[1].count, 8u);
  EXPECT_EQ(r.verify.checks[1].atol, 1e-3);

  // Another type is another problem key: its inputs and reference differ.
  EXPECT_EQ(request_for(s, Problem{{1000}}, Config{{64, 0, 0}}).problem_key, "rich|N=1000|T=float");
  EXPECT_EQ(request_for(s, Problem{{1000}}, Config{{64, 0, 0}}).buffers[0].type, ElementType::f32);
}

TEST(TrialRequest, InputsThatCannotBeGeneratedAreEvalErrors) {
  SpaceBuilder b = rich_space();
  b.space.buffers[2].count = b.expr("N");  // not rows + 1
  EXPECT_THROW((void)request_for(b.space, Problem{{1000}}, Config{{64, 0, 0}}), EvalError);
  SpaceBuilder c = rich_space();
  c.space.buffers[2].init.nnz = c.expr("N * 65");  // more than rows x columns
  EXPECT_THROW((void)request_for(c.space, Problem{{1000}}, Config{{64, 0, 0}}), EvalError);
  SpaceBuilder d = rich_space();
  d.space.buffers[2].init.density = 0.5;  // nnz = 0.5 x 1000 x 64, and col_idx holds only N * 4
  EXPECT_THROW((void)request_for(d.space, Problem{{1000}}, Config{{64, 0, 0}}), EvalError);
  d.space.buffers[3].count = d.expr("N * 32");
  EXPECT_EQ(request_for(d.space, Problem{{1000}}, Config{{64, 0, 0}}).buffers[2].init.nnz, 32000u);
}

// A scalar that reads a param is checked against its type per config: one that does not fit
// is an EvalError (the config is pruned with it), naming where the argument is written.
TEST(TrialRequest, AScalarThatDoesNotFitItsTypeIsAnEvalError) {
  SpaceBuilder b = rich_space();
  ArgSpec& narrow = b.arg_scalar(b.integer("BLOCK"), ElementType::i8);
  const SourceLocation where = narrow.where;
  EXPECT_EQ(request_for(b.space, Problem{{1000}}, Config{{64, 0, 0}}).args.back().int_value, 64);
  try {
    (void)request_for(b.space, Problem{{1000}}, Config{{128, 0, 0}});
    ADD_FAILURE() << "no EvalError";
  } catch (const EvalError& e) {
    EXPECT_EQ(std::string(e.what()), where.str() + ": the argument's value 128 does not fit int8 (-128 to 127)");
  }
  // Every type takes its values: the request carries them as written.
  SpaceBuilder c = rich_space();
  const std::pair<ElementType, const char*> values[] = {
      {ElementType::i8, "-128"},   {ElementType::i16, "-32768"},
      {ElementType::u16, "65535"}, {ElementType::u64, "N * 1000000000"},
      {ElementType::u8, "255"},    {ElementType::f16, "BLOCK * 256"}};
  for (const auto& [type, text] : values) c.arg_scalar(c.integer(text), type);
  const TrialRequest r = request_for(c.space, Problem{{4096}}, Config{{128, 0, 0}});
  const std::vector<ArgPlan> args(r.args.end() - 6, r.args.end());
  EXPECT_EQ(args[0].int_value, -128);
  EXPECT_EQ(args[1].int_value, -32768);
  EXPECT_EQ(args[2].int_value, 65535);
  EXPECT_EQ(args[3].int_value, 4096000000000);
  EXPECT_EQ(args[4].type, ElementType::u8);
  EXPECT_EQ(args[5].float_value, 32768.0);
  c.space.args.back().value = c.integer("BLOCK * 512");  // 65536: half overflows from 65520
  EXPECT_THROW((void)request_for(c.space, Problem{{4096}}, Config{{128, 0, 0}}), EvalError);
}

TEST(TrialRequest, ReferenceModes) {
  SpaceBuilder b = rich_space();
  b.space.verify.reference = VerifySpec::Reference::library;
  b.space.verify.library = "/refs/libref.so";
  b.space.verify.function = "rich_reference";
  TrialRequest r = request_for(b.space, Problem{{4096}}, Config{{64, 0, 0}});
  EXPECT_EQ(r.verify.mode, VerifySettings::Mode::library);
  EXPECT_EQ(r.verify.library, "/refs/libref.so");
  EXPECT_EQ(r.verify.function, "rich_reference");

  b.space.verify.reference = VerifySpec::Reference::files;
  b.space.verify.files = {{"y", "expected/y_{N}.npy"}};
  b.space.verify.file_dir = "/spaces";
  r = request_for(b.space, Problem{{4096}}, Config{{64, 0, 0}});
  EXPECT_EQ(r.verify.mode, VerifySettings::Mode::files);
  EXPECT_EQ(r.verify.checks[0].expected_file, "/spaces/expected/y_4096.npy");
  EXPECT_EQ(r.verify.checks[1].expected_file, "");

  b.space.verify.reference = VerifySpec::Reference::none;
  EXPECT_EQ(request_for(b.space, Problem{{4096}}, Config{{64, 0, 0}}).verify.mode, VerifySettings::Mode::none);

  b.space.verify.reference = VerifySpec::Reference::config;
  b.space.verify.reference_config = {64, 0, 1};
  EXPECT_EQ(request_for(b.space, Problem{{4096}}, Config{{64, 0, 0}}).verify.mode, VerifySettings::Mode::reference_run);
  // The reference config runs with the candidate's types, its own values elsewhere.
  EXPECT_EQ(reference_config_for(b.space, Config{{128, 1, 0}}).values, (std::vector<std::int64_t>{64, 1, 1}));
}

TEST(TrialRequest, GlobalSymbolsAreMangledLikeTheModule) {
  EXPECT_EQ(global_symbol("weights"), "weights");
  EXPECT_EQ(global_symbol("::weights"), "weights");
  EXPECT_EQ(global_symbol("conv::weights"), "_ZN4conv7weightsE");
  EXPECT_EQ(global_symbol("a::bb::ccc"), "_ZN1a2bb3cccE");
}

TEST(TrialRequest, TypeParamsAndTheirKey) {
  const Space s = rich_space().space;
  EXPECT_EQ(type_params(s), (std::vector<int>{1}));
  EXPECT_EQ(type_key(s, Config{{64, 1, 0}}), "|T=double");
  SpaceBuilder plain("plain", "/k.cu");
  plain.param("B", {1});
  EXPECT_EQ(type_key(plain.space, Config{{1}}), "");
}

// A reference kernel of the same file with its own params, launch and arguments.
SpaceBuilder with_reference_kernel() {
  SpaceBuilder b = rich_space();
  b.space.problem_defines = true;
  ReferenceKernel k;
  k.source = "/kernels/rich.cu";
  k.entry = "rich_naive<T>";
  k.defines = {{"BLOCK", "256", 256}, {"T", "float", std::nullopt}, {"NAIVE", "1", 1}};
  k.options = {"-use_fast_math"};
  const std::vector<std::string> slots = {"N", "BLOCK", "NAIVE"};  // reference_slot_names
  k.launch.grid[0] = b.expr("ceil_div(N, BLOCK)", slots);
  k.launch.block[0] = b.expr("BLOCK", slots);
  for (int d = 1; d < 3; ++d) {
    k.launch.grid[d] = b.expr("1", slots);
    k.launch.block[d] = b.expr("1", slots);
  }
  k.launch.shared_bytes = b.expr("NAIVE * 16", slots);
  ArgSpec x;
  x.kind = ArgSpec::Kind::buffer;
  x.buffer = "x";
  ArgSpec n;
  n.value.expr = b.expr("N + NAIVE", slots);
  k.args = {x, n};
  k.where = b.line();
  b.space.verify.kernel = std::move(k);
  b.space.verify.reference = VerifySpec::Reference::kernel;
  b.check("partials").reference_count = b.expr("NAIVE", slots);
  return b;
}

TEST(TrialRequest, AReferenceKernelRunsWithItsOwnParams) {
  const Space s = with_reference_kernel().space;
  const Problem p{{4096}};
  const Config candidate{{64, 1, 0}};
  EXPECT_EQ(reference_kernel_options(s, p, candidate),
            (std::vector<std::string>{"-DBLOCK=256", "-DNAIVE=1", "-DT=double", "-DN=4096", "-use_fast_math"}))
      << "the types are the candidate's, whatever the reference says";
  CompiledKernel k;
  k.cubin = "ELF";
  k.lowered_name = "_Z10rich_naiveIdEvPT_i";
  const TrialRequest r = make_reference_kernel_request(s, p, candidate, k);
  EXPECT_TRUE(r.is_reference);
  EXPECT_EQ(r.verify.mode, VerifySettings::Mode::reference_run);
  EXPECT_EQ(r.problem_key, "rich|N=4096|T=double");  // the candidates' key: their reference
  EXPECT_EQ(r.function, "_Z10rich_naiveIdEvPT_i");
  EXPECT_EQ(r.grid[0], 16);
  EXPECT_EQ(r.block[0], 256);
  EXPECT_EQ(r.shared_bytes, 16);
  ASSERT_EQ(r.args.size(), 2u);
  EXPECT_TRUE(r.args[0].is_buffer);
  EXPECT_EQ(r.args[1].int_value, 4097);
  EXPECT_EQ(r.buffers[5].count, 16u) << "partials sized with the reference's BLOCK";
  EXPECT_EQ(r.buffers[0].type, ElementType::f64);
  EXPECT_EQ(r.verify.checks[1].count, 1u) << "the reference_count of partials";
  EXPECT_EQ(r.verify.checks[0].count, 4096u) << "the whole buffer";
  EXPECT_EQ(r.globals.size(), 1u);
}

}  // namespace
}  // namespace tiletune
