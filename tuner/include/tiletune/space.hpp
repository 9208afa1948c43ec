// A search space: what to compile, which tunables to sweep, how to launch and check a
// kernel. Loaded from YAML (configs/*.yaml) and validated before anything is compiled.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/expr.hpp"
#include "tiletune/physics.hpp"

namespace tiletune {

/// An expression together with where it was written.
struct LocatedExpr {
  Expr expr;
  SourceLocation where;
};

/// What the values of an axis are.
enum class AxisKind {
  integer,  ///< whole numbers, usable in every expression
  real,     ///< decimal numbers ("0.5"): passed as -DNAME=0.5 and as float or double arguments
  text,     ///< words ("float", "half"): passed as -DNAME=float; a buffer's element type may follow one
};

/// The most characters of one value of a real or text param (it is passed as -DNAME=VALUE).
inline constexpr std::size_t max_param_value_chars = 128;

/// A named axis: a problem size or a tunable parameter, with its values in YAML order.
///
/// A Config holds one integer per param whatever the kind: the value itself for an integer
/// axis, the index into `labels` for a real or text axis. Expressions may use integer axes
/// only (the loader refuses a real or text name in an expression).
struct Axis {
  std::string name;
  std::vector<std::int64_t> values;  ///< integer: the values; real and text: 0, 1, ..., n-1
  SourceLocation where;
  AxisKind kind = AxisKind::integer;
  std::vector<std::string> labels;  ///< real and text: the values as written; empty for integer

  /// One value as -D and the cache keys see it: "32", "0.5", "float".
  [[nodiscard]] std::string text_of(std::int64_t value) const;
  /// The number a value of a real axis stands for (an integer axis: the value itself).
  [[nodiscard]] double real_of(std::int64_t value) const;
};

/// Element types a buffer, a module global or a scalar argument may hold. The numbers are
/// fixed (tiletune/reference.h and the input generators use them): new types go at the end.
enum class ElementType { f32, f64, i32, u32, i64, u8, f16, i8, i16, u16, u64 };
/// How many element types there are (the largest ElementType + 1).
inline constexpr std::size_t kElementTypeCount = 11;
/// Every element type, in the order messages list them: float double half int8 int16 int int64
/// uint8 uint16 uint uint64.
inline constexpr ElementType kElementTypes[] = {ElementType::f32, ElementType::f64, ElementType::f16, ElementType::i8,
                                                ElementType::i16, ElementType::i32, ElementType::i64, ElementType::u8,
                                                ElementType::u16, ElementType::u32, ElementType::u64};
static_assert(std::size(kElementTypes) == kElementTypeCount);
/// Bytes of one element (half is 2).
[[nodiscard]] constexpr std::size_t element_size(ElementType t) noexcept {
  switch (t) {
    case ElementType::f32: return 4;
    case ElementType::f64: return 8;
    case ElementType::i32: return 4;
    case ElementType::u32: return 4;
    case ElementType::i64: return 8;
    case ElementType::u8: return 1;
    case ElementType::f16: return 2;
    case ElementType::i8: return 1;
    case ElementType::i16: return 2;
    case ElementType::u16: return 2;
    case ElementType::u64: return 8;
  }
  return 0;
}
/// The YAML spelling: float double half int8 int16 int int64 uint8 uint16 uint uint64.
[[nodiscard]] const char* element_type_name(ElementType t);
/// Every YAML spelling, for messages: "float, double, half, int8, ..., uint64".
[[nodiscard]] std::string element_type_list();
/// The element type a YAML type name or a C/C++ spelling stands for ("float", "half", "__half",
/// "int", "unsigned int", "int64_t", "uint8_t", "signed char", "unsigned short", "uint64_t", ...),
/// or nullopt. Spellings whose width or signedness is the platform's (char, long, size_t) are
/// not taken.
[[nodiscard]] std::optional<ElementType> element_type_from_name(std::string_view name);
[[nodiscard]] constexpr bool is_floating(ElementType t) noexcept {
  return t == ElementType::f32 || t == ElementType::f64 || t == ElementType::f16;
}
/// The integer types CSR offsets and columns may have: int, uint, int64, uint64.
[[nodiscard]] constexpr bool is_index_type(ElementType t) noexcept {
  return t == ElementType::i32 || t == ElementType::u32 || t == ElementType::i64 || t == ElementType::u64;
}
/// Why `value` does not fit a scalar argument or a fill value of type `t` ("300 does not fit
/// int8 (-128 to 127)"), or nullopt when it fits. Integers must lie in the type's range (a
/// uint64 takes 0 to 2^63 - 1, what an expression can give); a floating type takes any value
/// whose rounding to the type is finite (half: up to 65504, as the GPU rounds it).
[[nodiscard]] std::optional<std::string> value_misfit(ElementType t, std::int64_t value);
[[nodiscard]] std::optional<std::string> value_misfit(ElementType t, double value);

/// A number written in the YAML: a decimal literal ("0.5", "-1e-3"), the name of a real param,
/// or an integer expression over the problem sizes and integer params.
struct NumberSpec {
  std::optional<double> real;  ///< a decimal literal
  int real_param = -1;         ///< index into Space::params of a real param
  LocatedExpr expr;            ///< otherwise (the constant 0 when nothing was written)
  SourceLocation where;
  [[nodiscard]] bool is_integer() const noexcept { return !real && real_param < 0; }
};

/// How a buffer or a module global is filled before the first launch of each problem. Random
/// kinds draw from a generator seeded by the run's seed and the buffer's name: repeatable, and
/// no two buffers share a stream.
enum class BufferInit {
  zero,         ///< every byte 0
  none,         ///< left as allocated (zeroed); for outputs the kernel writes completely
  random,       ///< floats uniform in [-1, 1), integers small (see make_host_buffer)
  iota,         ///< 0, 1, 2, ... converted to the type
  constant,     ///< every element `a`
  uniform,      ///< uniform in [a, b): floats continuous, integers whole (b excluded)
  normal,       ///< floats normal with mean `a` and standard deviation `b`
  file,         ///< read from `file`: .npy (dtype and element count checked) or raw (byte size checked)
  copy,         ///< a copy of buffer `of` (same type and count): an output initialised from an input
  csr_offsets,  ///< CSR row offsets: `rows` + 1 non-decreasing values from 0 to nnz, no row longer than `columns`
  csr_columns,  ///< CSR column indices for the offsets in buffer `of`: sorted and distinct per row, in [0, columns)
};

struct InitSpec {
  BufferInit kind = BufferInit::zero;
  NumberSpec a;                    ///< constant: the value; uniform: the low bound; normal: the mean
  NumberSpec b;                    ///< uniform: the high bound (excluded); normal: the standard deviation
  std::string file;                ///< file: the path as written, `{NAME}` standing for problem size NAME
  std::filesystem::path file_dir;  ///< file: the directory a relative path is resolved from (the YAML's)
  std::string of;                  ///< copy, csr_columns: the buffer it derives from
  LocatedExpr rows;                ///< csr_offsets: rows of the matrix (the buffer holds rows + 1)
  LocatedExpr columns;             ///< csr_offsets: columns of the matrix
  LocatedExpr nnz;                 ///< csr_offsets: stored entries (from `nnz:`, or `density:` x rows x columns)
  std::optional<double> density;   ///< csr_offsets: when given instead of nnz
  SourceLocation where;
};

struct BufferSpec {
  std::string name;
  ElementType type = ElementType::f32;
  int type_param = -1;  ///< >= 0: the element type follows this text param (its labels are type names)
  LocatedExpr count;    ///< number of elements, an expression over sizes and params
  InitSpec init;
  bool output = false;  ///< written by the kernel and checked (verify.outputs says how)
  SourceLocation where;
};

/// A __constant__ or __device__ variable of the kernel's module, filled before the launches
/// (cuModuleGetGlobal, then a copy) of every config and of a reference kernel whose module has
/// it. The data fills the start of the symbol, whose size in the module is at least count x
/// element size (Kernel Tuner's cmem_args fill a smaller filter into a larger array).
struct GlobalSpec {
  std::string name;  ///< the symbol as written in the source: "weights", "conv::weights"
  ElementType type = ElementType::f32;
  int type_param = -1;
  LocatedExpr count;
  InitSpec init;
  SourceLocation where;
};

/// One kernel argument: a buffer (passed as a device pointer) or a scalar.
struct ArgSpec {
  enum class Kind { buffer, scalar };
  Kind kind = Kind::scalar;
  std::string buffer;  ///< for Kind::buffer
  NumberSpec value;    ///< for Kind::scalar (decimal literals and real params: float/double only)
  ElementType scalar_type = ElementType::i32;  ///< any element type (half: the value rounded to half)
  int type_param = -1;                         ///< >= 0: the scalar type follows this text param
  SourceLocation where;
};

struct LaunchSpec {
  LocatedExpr grid[3];  ///< missing dimensions are the constant 1
  LocatedExpr block[3];
  LocatedExpr shared_bytes;  ///< dynamic shared memory per block
};

/// One NVRTC option of `options:` as written, with `${EXPR}` pieces evaluated per problem and
/// config: "-DWIDTH=${N}" is pieces {"-DWIDTH=", ""} around exprs {N}.
struct OptionTemplate {
  std::string text;                 ///< as written
  std::vector<std::string> pieces;  ///< exprs.size() + 1 literal pieces
  std::vector<LocatedExpr> exprs;
  SourceLocation where;
};

/// How one output buffer is compared with what the reference produced.
struct OutputCheck {
  enum class Compare {
    elements,  ///< element by element: |got - want| <= atol + rtol x |want|, NaN never passes
    sum,       ///< the sum of the first `count` elements against the reference's sum
    none,      ///< not compared (scratch)
  };
  std::string buffer;
  Compare compare = Compare::elements;
  /// Elements compared (elements) or summed (sum) of a candidate's output, evaluated with its
  /// problem and config (a reference config's too); nullopt: the whole buffer.
  std::optional<LocatedExpr> count;
  /// The same for the output of a reference kernel, bound to reference_slot_names(); nullopt: the
  /// whole buffer. (builtin, library and files references always give the whole buffer.)
  std::optional<LocatedExpr> reference_count;
  double rtol = 0;
  double atol = 0;
  SourceLocation where;
};

/// A -D define of a reference kernel: its own value of a param, or any other macro.
struct ReferenceDefine {
  std::string name;
  std::string text;                     ///< as passed: -DNAME=text
  std::optional<std::int64_t> integer;  ///< when the text is an integer (usable in its launch)
};

/// Another kernel whose outputs are the expected ones: another entry of this or another file,
/// with its own defines, launch and arguments, run once per problem on the same inputs and
/// globals, writing into the same output buffers.
struct ReferenceKernel {
  std::filesystem::path source;  ///< resolved; the space's source when not given
  std::string entry;
  std::vector<ReferenceDefine> defines;  ///< `params:` of the reference
  std::vector<std::string> options;      ///< extra NVRTC options
  /// Its launch, bound to reference_slot_names(): the problem sizes, then the integer defines.
  LaunchSpec launch;
  std::vector<ArgSpec> args;  ///< bound likewise; the space's args when not given
  SourceLocation where;
};

/// A program the GPU worker runs beside the sweep (`verify: {command: [...]}`, docs/reference/space.md, "Checks"):
/// the host check, which judges each candidate's buffers after the GPU comparisons passed.
struct HostCommand {
  std::vector<std::string> argv;  ///< as written, argv[0] included; empty: no host check
  /// argv[0] found as a shell finds a program (on PATH, or from `directory` when it holds a
  /// '/'): an absolute path to an executable file.
  std::string program;
  std::string directory;  ///< its working directory: the YAML's
  /// `command_buffers:`: the buffers the program reads, by name, in the space's order; only these
  /// leave the GPU for it. Empty: every buffer.
  std::vector<std::string> buffers;
  [[nodiscard]] bool empty() const noexcept { return argv.empty(); }
  /// Whether the program reads buffer `name` (every buffer when `buffers` is empty).
  [[nodiscard]] bool reads(std::string_view name) const noexcept {
    return buffers.empty() || std::find(buffers.begin(), buffers.end(), name) != buffers.end();
  }
  /// "[python3, check.py, --flag]", for messages (each item at most 80 bytes, escaped).
  [[nodiscard]] std::string text() const;
  friend bool operator==(const HostCommand&, const HostCommand&) = default;
};

struct VerifySpec {
  enum class Reference {
    none,     ///< `verify: none`: nothing is checked (said in every report)
    builtin,  ///< a built-in CPU reference, named: {builtin: transpose}
    config,   ///< a config of this kernel, run first: {config: {TILE: 32, ...}}
    kernel,   ///< another kernel: {kernel: {entry: naive, launch: ..., ...}}
    library,  ///< a CPU reference in a shared library: {library: ./libref.so, function: ref}
    files,    ///< expected outputs read from files: {files: {out: expected/out_{N}.npy}}
  };
  Reference reference = Reference::none;
  std::string builtin;                         ///< builtin: the reference's name
  std::vector<std::int64_t> reference_config;  ///< config: one value per param, in params order
  std::optional<ReferenceKernel> kernel;       ///< kernel
  std::filesystem::path library;               ///< library: resolved relative to the YAML
  std::string function;                        ///< library: the extern "C" function (tiletune/reference.h)
  /// files: (output buffer, path as written with `{NAME}` for problem sizes), resolved from file_dir.
  std::vector<std::pair<std::string, std::string>> files;
  std::filesystem::path file_dir;
  /// One check per output buffer, in buffer order, with the defaults of `verify:` filled in.
  std::vector<OutputCheck> outputs;
  /// `command:`: the host check, run after the reference's comparisons passed; empty: none.
  HostCommand command;
  SourceLocation command_where;  ///< of the `command:` key
  SourceLocation where;
};

struct Constraint {
  LocatedExpr condition;  ///< a config is kept when this is non-zero
};

/// The configs an `allowed:` file lists: only these are enumerated (those that pass the
/// constraints too). What a Python callable allowed (a Kernel Tuner restriction function), or a
/// value derived per config, reaches the engine this way.
struct AllowedConfigs {
  std::filesystem::path file;  ///< resolved
  std::size_t width = 0;       ///< values per config: the number of params
  /// The configs' values (Config values, `width` per config) in enumeration order, no repeats.
  std::vector<std::int64_t> values;
  std::vector<std::uint32_t> by_value;  ///< config numbers sorted by their values
  SourceLocation where;
  [[nodiscard]] std::size_t size() const noexcept { return by_value.size(); }
  /// The values of config i (in enumeration order).
  [[nodiscard]] std::span<const std::int64_t> config(std::size_t i) const noexcept {
    return {values.data() + i * width, width};
  }
  /// True when `config_values` (a Config's) is listed.
  [[nodiscard]] bool contains(std::span<const std::int64_t> config_values) const;
};

/// A validated search space. Every expression is bound to variable_names().
struct Space {
  std::filesystem::path yaml_path;  ///< the file it was loaded from (absolute)
  std::string kernel;               ///< family name, e.g. "transpose"
  std::filesystem::path source;     ///< kernel source, resolved relative to the YAML
  SourceLocation source_where;      ///< of the `source:` value
  std::string entry;                ///< extern "C" symbol or a template instantiation
  std::vector<Axis> problem;        ///< problem sizes: runtime values, keys of the cache
  std::vector<Axis> params;         ///< tunables: each is passed as -DNAME=value
  std::vector<Constraint> constraints;
  std::optional<AllowedConfigs> allowed;  ///< `allowed:`: the only configs enumerated
  LaunchSpec launch;
  std::vector<BufferSpec> buffers;
  std::vector<GlobalSpec> globals;  ///< module symbols filled before the launches
  std::vector<ArgSpec> args;
  VerifySpec verify;
  std::optional<LocatedExpr> metric_bytes;
  std::optional<LocatedExpr> metric_flops;
  /// `metrics: {flop_type: fp32}`: the unit whose peak bounds metric_flops (physics guard).
  FlopType metric_flop_type = FlopType::any;
  std::vector<OptionTemplate> compile_options;              ///< extra NVRTC options (`options:`)
  bool problem_defines = false;                             ///< every problem size is also passed as -DNAME=value
  std::optional<std::vector<std::int64_t>> default_config;  ///< param values, in params order
  SourceLocation default_where;

  /// Problem-size names then param names: the slots every expression is bound to.
  [[nodiscard]] std::vector<std::string> variable_names() const;
  /// Index of a param by name, or -1.
  [[nodiscard]] int param_index(std::string_view name) const;
  /// Index of a problem size by name, or -1.
  [[nodiscard]] int problem_index(std::string_view name) const;
  /// Index of a buffer by name, or -1.
  [[nodiscard]] int buffer_index(std::string_view name) const;
};

/// The slots a reference kernel's expressions are bound to: the problem sizes, then the names
/// of its integer defines.
[[nodiscard]] std::vector<std::string> reference_slot_names(const Space& space, const ReferenceKernel& kernel);

/// Loads and validates a YAML search space. Throws SpaceError (file:line:column + remedy).
[[nodiscard]] Space load_space(const std::filesystem::path& yaml_path);

/// Same, from text; `yaml_path` names the file in messages and anchors relative paths.
[[nodiscard]] Space parse_space(const std::string& yaml_text, const std::filesystem::path& yaml_path);

/// A search space of an earlier format, rewritten (`tiletune upgrade-space`).
struct SpaceUpgrade {
  std::string text;                  ///< the new text (UTF-8); comments and layout kept
  std::vector<std::string> changes;  ///< "LINE:COL: what changed", in file order
  std::vector<std::string> notes;    ///< what could not be changed and must be done by hand
};
/// Quotes the expressions YAML splits at commas, names the built-in reference that `reference:
/// cpu` or a missing `verify:` chose by the kernel's name, and writes a bare reference config
/// as {config: ...}. Throws SpaceError when the text is not YAML.
[[nodiscard]] SpaceUpgrade upgrade_space_text(const std::string& yaml_text, const std::filesystem::path& yaml_path);

/// The text of a search space file, for load_space and for `upgrade-space` (which reads a space
/// it does not load): a regular file of at most 4 MiB, checked before it is read (a FIFO or a
/// device is refused at once). Throws Error "<path>: <reason>", one line.
[[nodiscard]] std::string read_space_file(const std::filesystem::path& yaml_path);

}  // namespace tiletune
