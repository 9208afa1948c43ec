// The integer expression engine behind constraints and launch geometry. A recursive-descent
// parser emits postfix bytecode directly (no tree is kept); eval() runs that bytecode on a
// fixed-size stack, so it never allocates. Every instruction that can fail keeps the source
// span of its subexpression, so an EvalError can quote the text that failed.
#include "tiletune/expr.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "tiletune/error.hpp"

namespace tiletune {
namespace {

using i64 = std::int64_t;
constexpr i64 kI64Min = std::numeric_limits<i64>::min();

// eval()'s stack is a local array; the parser rejects anything that would need more. The
// nesting limit keeps the parser's own recursion far from the thread's stack limit.
constexpr std::size_t kMaxStack = 256;
constexpr int kMaxNesting = 200;
constexpr std::size_t kMaxTextSize = std::size_t{1} << 30;  // offsets fit in 32 bits

enum class Op : std::uint8_t {
  Const,
  Var,
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  Neg,
  Not,
  ToBool,
  AndJump,     // pop x; if x == 0, push 0 and jump to arg (short-circuit &&)
  OrJump,      // pop x; if x != 0, push 1 and jump to arg (short-circuit ||)
  JumpIfZero,  // pop x; if x == 0, jump to arg (?:)
  Jump,
  Min,
  Max,  // arg = number of operands
  CeilDiv,
  RoundUp,
  Log2,
  IsPow2,
};

struct Instr {
  Op op = Op::Const;
  std::uint32_t aux = 0;  // Var: variable id; ops that can fail: index into Program::spans
  i64 arg = 0;            // Const: value; Var: bound slot; jumps: target; Min/Max: operand count
};

struct Span {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

struct Variable {
  std::string name;
  std::uint32_t offset = 0;  // first appearance, for bind()'s error
};

struct Program {
  std::vector<Instr> code;
  std::vector<Span> spans;
  std::vector<Variable> vars;
};

struct Function {
  std::string_view name;
  Op op;
  int min_args;
  int max_args;  // -1: no limit
};
constexpr std::array<Function, 6> kFunctions{{
    {"min", Op::Min, 1, -1},
    {"max", Op::Max, 1, -1},
    {"ceil_div", Op::CeilDiv, 2, 2},
    {"round_up", Op::RoundUp, 2, 2},
    {"log2", Op::Log2, 1, 1},
    {"is_pow2", Op::IsPow2, 1, 1},
}};

struct BinaryOp {
  std::string_view text;
  int prec;  // C precedence, higher binds tighter; all are left-associative
  Op op;
};
constexpr std::array<BinaryOp, 13> kBinaryOps{{
    {"||", 1, Op::OrJump},
    {"&&", 2, Op::AndJump},
    {"==", 3, Op::Eq},
    {"!=", 3, Op::Ne},
    {"<", 4, Op::Lt},
    {"<=", 4, Op::Le},
    {">", 4, Op::Gt},
    {">=", 4, Op::Ge},
    {"+", 5, Op::Add},
    {"-", 5, Op::Sub},
    {"*", 6, Op::Mul},
    {"/", 6, Op::Div},
    {"%", 6, Op::Rem},
}};

[[nodiscard]] char lower(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

// Optimal-string-alignment distance, ignoring case: "TIEL" is 1 from "TILE", "tile" 0.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// "; did you mean 'X'?" for the closest candidate within distance 2, else "".
template <typename Range>
[[nodiscard]] std::string suggestion(std::string_view name, const Range& candidates) {
  std::string_view best;
  std::size_t best_distance = 3;
  // Nobody mistypes a name that long: no suggestion, and no quadratic distance over it.
  if (name.size() > 64) return {};
  for (const auto& c : candidates) {
    const std::string_view cand(c);
    // The distance is at least the difference of the lengths: skip without computing it.
    if (std::max(name.size(), cand.size()) - std::min(name.size(), cand.size()) >= best_distance) continue;
    const std::size_t dist = edit_distance(name, cand);
    // A distance as long as the names would "suggest" anything for a one-letter typo.
    if (dist < best_distance && dist < std::max(name.size(), cand.size())) {
      best = cand;
      best_distance = dist;
    }
  }
  return best.empty() ? std::string() : "; did you mean '" + std::string(best) + "'?";
}

enum class Tok : std::uint8_t { Number, Ident, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  i64 value = 0;  // Number
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) { lex(); }

  [[nodiscard]] Program run() {
    if (peek().kind == Tok::End) throw ExprSyntaxError("empty expression", 0);
    parse_ternary();
    if (peek().kind != Tok::End)
      throw ExprSyntaxError("unexpected " + describe(peek()) + " after the end of the expression", peek().begin);
    return std::move(prog_);
  }

 private:
  // --- lexer ---------------------------------------------------------------
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
  static bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

  void lex() {
    std::size_t i = 0;
    const std::size_t n = text_.size();
    while (true) {
      while (i < n && (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' || text_[i] == '\r')) ++i;
      const auto begin = static_cast<std::uint32_t>(i);
      if (i == n) {
        tokens_.push_back({Tok::End, begin, begin});
        return;
      }
      const char c = text_[i];
      if (is_digit(c)) {
        tokens_.push_back(lex_number(i));
      } else if (is_ident_start(c)) {
        while (i < n && is_ident_char(text_[i])) ++i;
        tokens_.push_back({Tok::Ident, begin, static_cast<std::uint32_t>(i)});
      } else if (const std::string_view two = text_.substr(i, 2);
                 two == "<=" || two == ">=" || two == "==" || two == "!=" || two == "&&" || two == "||") {
        i += 2;
        tokens_.push_back({Tok::Punct, begin, begin + 2});
      } else if (std::string_view("+-*/%!<>()?:,").find(c) != std::string_view::npos) {
        ++i;
        tokens_.push_back({Tok::Punct, begin, begin + 1});
      } else {
        throw ExprSyntaxError(unexpected_char(c), i);
      }
    }
  }

  [[nodiscard]] static std::string unexpected_char(char c) {
    switch (c) {
      case '=': return "unexpected '=' (use '==' to compare)";
      case '&': return "unexpected '&' (bitwise operators are not supported; did you mean '&&'?)";
      case '|': return "unexpected '|' (bitwise operators are not supported; did you mean '||'?)";
      case '.': return "unexpected '.' (only integers are supported)";
      default: break;
    }
    if (c > ' ' && c < 127) return std::string("unexpected character '") + c + "'";
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(c));
    return std::string("unexpected byte ") + hex;
  }

  // A decimal or 0x-hex literal. The whole word is taken first so that "12abc" is one bad
  // literal rather than a number followed by a name.
  [[nodiscard]] Token lex_number(std::size_t& i) {
    const std::size_t begin = i;
    int base = 10;
    if (text_[i] == '0' && i + 1 < text_.size() && lower(text_[i + 1]) == 'x') {
      base = 16;
      i += 2;
    }
    const std::size_t digits_begin = i;
    while (i < text_.size() && is_ident_char(text_[i])) ++i;
    const std::string_view digits = text_.substr(digits_begin, i - digits_begin);
    const std::string literal(text_.substr(begin, i - begin));
    if (digits.empty()) throw ExprSyntaxError("hex literal '" + literal + "' has no digits", begin);
    i64 value = 0;
    bool too_large = false;
    for (const char d : digits) {
      const char l = lower(d);
      const int v = is_digit(l) ? l - '0' : (base == 16 && l >= 'a' && l <= 'f') ? l - 'a' + 10 : -1;
      if (v < 0) throw ExprSyntaxError("invalid number literal '" + literal + "'", begin);
      too_large = too_large || __builtin_mul_overflow(value, base, &value) || __builtin_add_overflow(value, v, &value);
    }
    // C would read "010" as octal 8; refuse it rather than silently mean 10.
    if (base == 10 && digits.size() > 1 && digits[0] == '0')
      throw ExprSyntaxError("literal '" + literal + "' has a leading zero (octal is not supported)", begin);
    if (too_large)
      throw ExprSyntaxError("literal '" + literal + "' is too large (the maximum is 9223372036854775807)", begin);
    return {Tok::Number, static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(i), value};
  }

  // --- token helpers -------------------------------------------------------
  [[nodiscard]] const Token& peek() const { return tokens_[pos_]; }
  const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  [[nodiscard]] std::string_view text_of(const Token& t) const { return text_.substr(t.begin, t.end - t.begin); }
  [[nodiscard]] bool is_punct(const Token& t, std::string_view p) const {
    return t.kind == Tok::Punct && text_of(t) == p;
  }
  [[nodiscard]] std::string describe(const Token& t) const {
    return t.kind == Tok::End ? std::string("end of input") : "'" + std::string(text_of(t)) + "'";
  }

  // Counts nesting levels: unary operators, parentheses, call arguments and ?: branches.
  void enter() {
    if (++nesting_ > kMaxNesting)
      throw ExprSyntaxError("expression is nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)",
                            peek().begin);
  }
  void leave() { --nesting_; }

  // --- code generation -----------------------------------------------------
  // Appends an instruction and tracks the stack depth it leaves on the fall-through path.
  std::size_t emit(Op op, std::uint32_t aux = 0, i64 arg = 0) {
    switch (op) {
      case Op::Const:
      case Op::Var: ++depth_; break;
      case Op::Min:
      case Op::Max: depth_ -= static_cast<std::size_t>(arg) - 1; break;
      case Op::Neg:
      case Op::Not:
      case Op::ToBool:
      case Op::Jump:
      case Op::Log2:
      case Op::IsPow2: break;
      default: --depth_; break;  // binary ops, two-argument functions, conditional jumps
    }
    if (depth_ > kMaxStack)
      throw ExprSyntaxError(
          "expression is too large to evaluate (needs more than " + std::to_string(kMaxStack) + " stack entries)",
          tokens_[pos_ > 0 ? pos_ - 1 : 0].begin);
    prog_.code.push_back({op, aux, arg});
    return prog_.code.size() - 1;
  }
  [[nodiscard]] std::uint32_t add_span(Span s) {
    prog_.spans.push_back(s);
    return static_cast<std::uint32_t>(prog_.spans.size() - 1);
  }
  void patch_jump_to_here(std::size_t at) { prog_.code[at].arg = static_cast<i64>(prog_.code.size()); }

  [[nodiscard]] std::uint32_t variable_id(const Token& t) {
    // A map, not a scan of prog_.vars: an expression of 10^5 distinct names must parse in linear time.
    const auto [it, added] =
        var_ids_.try_emplace(std::string(text_of(t)), static_cast<std::uint32_t>(prog_.vars.size()));
    if (added) prog_.vars.push_back({it->first, t.begin});
    return it->second;
  }

  // --- grammar -------------------------------------------------------------
  // ternary := binary ('?' ternary ':' ternary)?        (right-associative)
  Span parse_ternary() {
    const Span cond = parse_binary(1);
    Span result = cond;
    if (is_punct(peek(), "?")) {
      const Token question = next();
      const std::size_t skip_then = emit(Op::JumpIfZero);
      enter();  // the branches recurse without passing through parse_unary
      parse_ternary();
      const std::size_t skip_else = emit(Op::Jump);
      --depth_;  // the else branch starts from the depth before the then-value was pushed
      patch_jump_to_here(skip_then);
      const Token& colon = next();
      if (!is_punct(colon, ":"))
        throw ExprSyntaxError(
            "expected ':' for the '?' at offset " + std::to_string(question.begin) + ", found " + describe(colon),
            colon.begin);
      const Span otherwise = parse_ternary();
      leave();
      patch_jump_to_here(skip_else);
      result = {cond.begin, otherwise.end};
    }
    return result;
  }

  // Precedence climbing over kBinaryOps; && and || compile to short-circuit jumps.
  Span parse_binary(int min_prec) {
    Span lhs = parse_unary();
    while (true) {
      const Token& t = peek();
      const BinaryOp* b = nullptr;
      if (t.kind == Tok::Punct)
        for (const BinaryOp& candidate : kBinaryOps)
          if (candidate.text == text_of(t)) b = &candidate;
      if (b == nullptr || b->prec < min_prec) return lhs;
      next();
      if (b->op == Op::AndJump || b->op == Op::OrJump) {
        const std::size_t jump = emit(b->op);
        const Span rhs = parse_binary(b->prec + 1);
        emit(Op::ToBool);
        patch_jump_to_here(jump);
        lhs = {lhs.begin, rhs.end};
      } else {
        const Span rhs = parse_binary(b->prec + 1);
        lhs = {lhs.begin, rhs.end};
        const bool can_fail =
            b->op == Op::Add || b->op == Op::Sub || b->op == Op::Mul || b->op == Op::Div || b->op == Op::Rem;
        emit(b->op, can_fail ? add_span(lhs) : 0);
      }
    }
  }

  // unary := ('-' | '+' | '!') unary | primary
  Span parse_unary() {
    enter();
    const Token t = peek();
    Span result;
    if (is_punct(t, "-") || is_punct(t, "+") || is_punct(t, "!")) {
      next();
      const Span operand = parse_unary();
      result = {t.begin, operand.end};
      if (is_punct(t, "-")) emit(Op::Neg, add_span(result));
      if (is_punct(t, "!")) emit(Op::Not);
    } else {
      result = parse_primary();
    }
    leave();
    return result;
  }

  // primary := number | name | name '(' args ')' | '(' ternary ')'
  Span parse_primary() {
    const std::size_t index = pos_;
    const Token t = next();
    if (t.kind == Tok::Number) {
      emit(Op::Const, 0, t.value);
      return {t.begin, t.end};
    }
    if (t.kind == Tok::Ident) {
      if (is_punct(peek(), "(")) return parse_call(t);
      emit(Op::Var, variable_id(t));
      return {t.begin, t.end};
    }
    if (is_punct(t, "(")) {
      parse_ternary();
      const Token& close = next();
      if (!is_punct(close, ")"))
        throw ExprSyntaxError(
            "expected ')' to close '(' at offset " + std::to_string(t.begin) + ", found " + describe(close),
            close.begin);
      return {t.begin, close.end};
    }
    std::string message = "expected an expression";
    if (index > 0) message += " after " + describe(tokens_[index - 1]);
    throw ExprSyntaxError(message + ", found " + describe(t), t.begin);
  }

  Span parse_call(const Token& name) {
    const std::string_view fname = text_of(name);
    const auto f =
        std::find_if(kFunctions.begin(), kFunctions.end(), [&](const Function& fn) { return fn.name == fname; });
    if (f == kFunctions.end()) {
      std::vector<std::string_view> names;
      for (const Function& fn : kFunctions) names.push_back(fn.name);
      throw ExprSyntaxError("unknown function '" + std::string(fname) + "'" + suggestion(fname, names) +
                                " (known: min, max, ceil_div, round_up, log2, is_pow2)",
                            name.begin);
    }
    next();  // '('
    int args = 0;
    const Token* close = &peek();
    if (is_punct(*close, ")")) {
      next();
    } else {
      while (true) {
        parse_ternary();
        ++args;
        close = &next();
        if (is_punct(*close, ")")) break;
        if (!is_punct(*close, ","))
          throw ExprSyntaxError("expected ',' or ')' in the call to '" + std::string(fname) + "' at offset " +
                                    std::to_string(name.begin) + ", found " + describe(*close),
                                close->begin);
      }
    }
    if (args < f->min_args || (f->max_args >= 0 && args > f->max_args)) {
      const std::string wanted =
          f->max_args < 0 ? "at least " + std::to_string(f->min_args) : std::to_string(f->min_args);
      throw ExprSyntaxError(std::string(fname) + "() takes " + wanted +
                                (f->min_args == 1 ? " argument" : " arguments") + ", got " + std::to_string(args),
                            name.begin);
    }
    const Span span{name.begin, close->end};
    emit(f->op, add_span(span), args);
    return span;
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
  std::size_t depth_ = 0;
  Program prog_;
  std::unordered_map<std::string, std::uint32_t> var_ids_;  // name -> index into prog_.vars
};

// Kept out of line and cold so that eval()'s loop stays small.
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] void fail(const std::string& text, Span s, std::string_view what,
                                                       const std::string& detail = {}) {
  std::string message(what);
  message += " in '" + text.substr(s.begin, s.end - s.begin) + "'";
  if (!detail.empty()) message += " (" + detail + ")";
  throw EvalError(message);
}

[[noreturn]] [[gnu::cold]] [[gnu::noinline]] void fail_overflow(const std::string& text, Span s, i64 a,
                                                                std::string_view op, i64 b) {
  fail(text, s, "integer overflow", std::to_string(a) + " " + std::string(op) + " " + std::to_string(b));
}

// Ceiling of the real quotient for b > 0: truncation already rounds a negative quotient up.
[[nodiscard]] i64 ceil_div(i64 a, i64 b) { return a / b + (a > 0 && a % b != 0 ? 1 : 0); }

}  // namespace

// A null impl_ (default-constructed or moved-from Expr) stands for Impl::zero(), the constant 0.
struct Expr::Impl {
  std::string text;
  Program prog;                   // of a Python expression: only vars (its free names), no code
  std::size_t values_needed = 0;  // 1 + the highest slot bound
  bool bound = false;
  std::shared_ptr<const py::Program> python;   // a parse_python expression
  std::vector<std::size_t> python_slots;       // per free name: its slot, after bind()
  std::vector<SlotDecoding> python_decodings;  // per free name: how its slot's value decodes

  static const Impl& zero() {
    static const Impl z = [] {
      Impl m;
      m.text = "0";
      m.prog.code.push_back({Op::Const, 0, 0});
      m.bound = true;
      return m;
    }();
    return z;
  }
};

// A Python expression's value for one set of slot values: each free name decoded from its slot
// (an integer as itself, a real or text param through its labels), then a bool, int or whole
// float as the integer.
std::int64_t Expr::eval_python(const Impl& m, std::span<const std::int64_t> values) {
  std::vector<py::Value> free;
  free.reserve(m.python_slots.size());
  for (std::size_t i = 0; i < m.python_slots.size(); ++i) {
    const i64 raw = values[m.python_slots[i]];
    const SlotDecoding& table = m.python_decodings[i];
    if (!table) {
      free.push_back(py::Value::integer(raw));
    } else if (raw < 0 || static_cast<std::size_t>(raw) >= table->size()) {
      throw EvalError("'" + m.text + "': the value index " + std::to_string(raw) + " of '" + m.prog.vars[i].name +
                      "' is out of range");
    } else {
      free.push_back((*table)[static_cast<std::size_t>(raw)]);
    }
  }
  return py::to_integer(m.python->eval(free), "'" + m.text.substr(0, 80) + "'");
}

Expr::Expr() = default;
Expr::~Expr() = default;
Expr::Expr(const Expr& other) : impl_(other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr) {}
Expr& Expr::operator=(const Expr& other) {
  if (this != &other) impl_ = other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr;
  return *this;
}
Expr::Expr(Expr&&) noexcept = default;
Expr& Expr::operator=(Expr&&) noexcept = default;

Expr Expr::parse(std::string_view text) {
  if (text.size() > kMaxTextSize) throw ExprSyntaxError("expression is too long", 0);
  auto impl = std::make_unique<Impl>();
  impl->prog = Parser(text).run();
  impl->text = std::string(text);
  impl->bound = impl->prog.vars.empty();  // a constant needs no bind()
  Expr e;
  e.impl_ = std::move(impl);
  return e;
}

Expr Expr::constant(std::int64_t v) {
  auto impl = std::make_unique<Impl>();
  // INT64_MIN has no literal; spell it so that text() still parses back to the same value.
  impl->text = v == kI64Min ? "(-9223372036854775807 - 1)" : std::to_string(v);
  impl->prog.code.push_back({Op::Const, 0, v});
  impl->bound = true;
  Expr e;
  e.impl_ = std::move(impl);
  return e;
}

Expr Expr::parse_python(std::string_view text) {
  auto impl = std::make_unique<Impl>();
  impl->python = std::make_shared<const py::Program>(py::Program::parse(text));
  impl->text = std::string(text);
  const std::vector<std::string>& names = impl->python->free_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    impl->prog.vars.push_back({names[i], static_cast<std::uint32_t>(impl->python->free_name_offset(i))});
  impl->bound = names.empty();
  Expr e;
  e.impl_ = std::move(impl);
  return e;
}

bool Expr::is_python() const noexcept { return impl_ && impl_->python; }

const std::string& Expr::text() const noexcept { return (impl_ ? *impl_ : Impl::zero()).text; }

std::vector<std::string> Expr::variables() const {
  std::vector<std::string> names;
  if (impl_)
    for (const Variable& v : impl_->prog.vars) names.push_back(v.name);
  return names;
}

bool Expr::is_constant() const { return !impl_ || impl_->prog.vars.empty(); }

void Expr::bind(std::span<const std::string> slots, std::span<const SlotDecoding> decodings) {
  if (!impl_) return;
  Impl& m = *impl_;
  // Resolve everything before changing anything, so a failed bind leaves the old binding.
  std::vector<i64> slot_of(m.prog.vars.size());
  std::size_t needed = 0;
  // By name, the first slot of each: linear in names and slots however many there are.
  std::unordered_map<std::string_view, std::size_t> slot_index;
  for (std::size_t k = slots.size(); k-- > 0;) slot_index[slots[k]] = k;
  for (std::size_t i = 0; i < m.prog.vars.size(); ++i) {
    const Variable& var = m.prog.vars[i];
    const auto found = slot_index.find(var.name);
    if (found == slot_index.end()) {
      std::string known;
      constexpr std::size_t kMaxListed = 20;
      for (std::size_t k = 0; k < slots.size() && k < kMaxListed; ++k) known += (k == 0 ? "" : ", ") + slots[k];
      if (slots.size() > kMaxListed) known += ", ... (" + std::to_string(slots.size() - kMaxListed) + " more)";
      throw ExprSyntaxError("unknown name '" + var.name + "'" + suggestion(var.name, slots) +
                                (slots.empty() ? " (no names are defined)" : " (known: " + known + ")"),
                            var.offset);
    }
    slot_of[i] = static_cast<i64>(found->second);
    needed = std::max(needed, static_cast<std::size_t>(slot_of[i]) + 1);
  }
  for (Instr& in : m.prog.code)
    if (in.op == Op::Var) in.arg = slot_of[in.aux];
  if (m.python) {
    m.python_slots.assign(slot_of.begin(), slot_of.end());
    m.python_decodings.clear();
    for (const i64 slot : slot_of)
      m.python_decodings.push_back(
          static_cast<std::size_t>(slot) < decodings.size() ? decodings[static_cast<std::size_t>(slot)] : nullptr);
  }
  m.values_needed = needed;
  m.bound = true;
}

std::int64_t Expr::eval(std::span<const std::int64_t> values) const {
  const Impl& m = impl_ ? *impl_ : Impl::zero();
  if (!m.bound) {
    std::string names;
    for (const Variable& v : m.prog.vars) names += (names.empty() ? "" : ", ") + v.name;
    throw EvalError("'" + m.text + "' uses variables (" + names + ") but bind() was not called before eval()");
  }
  if (values.size() < m.values_needed)
    throw EvalError("'" + m.text + "' needs " + std::to_string(m.values_needed) + " values, got " +
                    std::to_string(values.size()));
  if (m.python) return eval_python(m, values);

  // The parser bounded the depth by kMaxStack, so no push can overflow this.
  std::array<i64, kMaxStack> stack;
  std::size_t sp = 0;
  const Instr* const code = m.prog.code.data();
  const std::size_t size = m.prog.code.size();
  auto span_of = [&](const Instr& in) { return m.prog.spans[in.aux]; };

  std::size_t pc = 0;
  while (pc < size) {
    const Instr& in = code[pc++];
    switch (in.op) {
      case Op::Const: stack[sp++] = in.arg; break;
      case Op::Var: stack[sp++] = values[static_cast<std::size_t>(in.arg)]; break;
      case Op::Add:
      case Op::Sub:
      case Op::Mul: {
        const i64 b = stack[--sp];
        const i64 a = stack[sp - 1];
        i64& r = stack[sp - 1];
        const bool overflow = in.op == Op::Add   ? __builtin_add_overflow(a, b, &r)
                              : in.op == Op::Sub ? __builtin_sub_overflow(a, b, &r)
                                                 : __builtin_mul_overflow(a, b, &r);
        if (overflow) {
          const char* sign = in.op == Op::Add ? "+" : in.op == Op::Sub ? "-" : "*";
          fail_overflow(m.text, span_of(in), a, sign, b);
        }
        break;
      }
      case Op::Div: {
        const i64 b = stack[--sp];
        i64& a = stack[sp - 1];
        if (b == 0) fail(m.text, span_of(in), "division by zero");
        if (a == kI64Min && b == -1) fail_overflow(m.text, span_of(in), a, "/", b);
        a /= b;
        break;
      }
      case Op::Rem: {
        const i64 b = stack[--sp];
        i64& a = stack[sp - 1];
        if (b == 0) fail(m.text, span_of(in), "remainder by zero");
        // INT64_MIN % -1 traps on x86 although the answer, 0, is representable.
        a = b == -1 ? 0 : a % b;
        break;
      }
      case Op::Lt:
        --sp;
        stack[sp - 1] = stack[sp - 1] < stack[sp];
        break;
      case Op::Le:
        --sp;
        stack[sp - 1] = stack[sp - 1] <= stack[sp];
        break;
      case Op::Gt:
        --sp;
        stack[sp - 1] = stack[sp - 1] > stack[sp];
        break;
      case Op::Ge:
        --sp;
        stack[sp - 1] = stack[sp - 1] >= stack[sp];
        break;
      case Op::Eq:
        --sp;
        stack[sp - 1] = stack[sp - 1] == stack[sp];
        break;
      case Op::Ne:
        --sp;
        stack[sp - 1] = stack[sp - 1] != stack[sp];
        break;
      case Op::Neg: {
        i64& a = stack[sp - 1];
        if (a == kI64Min) fail(m.text, span_of(in), "integer overflow", "-(" + std::to_string(a) + ")");
        a = -a;
        break;
      }
      case Op::Not: stack[sp - 1] = stack[sp - 1] == 0; break;
      case Op::ToBool: stack[sp - 1] = stack[sp - 1] != 0; break;
      case Op::AndJump:
        if (stack[sp - 1] == 0)
          pc = static_cast<std::size_t>(in.arg);  // the 0 stays as result
        else
          --sp;
        break;
      case Op::OrJump:
        if (stack[sp - 1] != 0) {
          stack[sp - 1] = 1;
          pc = static_cast<std::size_t>(in.arg);
        } else {
          --sp;
        }
        break;
      case Op::JumpIfZero:
        if (stack[--sp] == 0) pc = static_cast<std::size_t>(in.arg);
        break;
      case Op::Jump: pc = static_cast<std::size_t>(in.arg); break;
      case Op::Min:
      case Op::Max: {
        const auto n = static_cast<std::size_t>(in.arg);
        sp -= n;
        i64 r = stack[sp];
        for (std::size_t i = 1; i < n; ++i)
          r = in.op == Op::Min ? std::min(r, stack[sp + i]) : std::max(r, stack[sp + i]);
        stack[sp++] = r;
        break;
      }
      case Op::CeilDiv:
      case Op::RoundUp: {
        const i64 b = stack[--sp];
        i64& a = stack[sp - 1];
        const bool round = in.op == Op::RoundUp;
        if (b <= 0)
          fail(m.text, span_of(in), round ? "round_up needs a positive multiple" : "ceil_div needs a positive divisor",
               "got " + std::to_string(b));
        const i64 q = ceil_div(a, b);
        if (!round) {
          a = q;
        } else if (__builtin_mul_overflow(q, b, &a)) {
          fail_overflow(m.text, span_of(in), q, "*", b);
        }
        break;
      }
      case Op::Log2: {
        i64& a = stack[sp - 1];
        if (a <= 0) fail(m.text, span_of(in), "log2 needs a positive argument", "got " + std::to_string(a));
        a = std::bit_width(static_cast<std::uint64_t>(a)) - 1;
        break;
      }
      case Op::IsPow2: {
        i64& a = stack[sp - 1];
        a = a > 0 && std::has_single_bit(static_cast<std::uint64_t>(a));
        break;
      }
    }
  }
  return stack[0];
}

}  // namespace tiletune
