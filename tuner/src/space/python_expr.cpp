// The Python expression interpreter (tiletune/python_expr.hpp): a tokenizer, a recursive-descent
// parser of Python 3's expression grammar (the subset the header lists) into a tree, a pass that
// resolves names (comprehension targets as locals, the rest as free names), and a tree-walking
// evaluator that counts its steps and checks every integer operation for overflow.
#include "tiletune/python_expr.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include "tiletune/error.hpp"

namespace tiletune::py {

// ---------------------------------------------------------------------------------------------
// Values

bool Value::truthy() const noexcept {
  switch (kind()) {
    case Kind::none: return false;
    case Kind::boolean: return as_bool();
    case Kind::integer: return as_int() != 0;
    case Kind::real: return as_real() != 0.0;
    case Kind::text: return !as_text().empty();
    case Kind::list: return !as_list().empty();
  }
  return false;
}

namespace {

// Python's repr of a float: the shortest text that reads back as the same double, with ".0"
// for whole numbers and exponents as Python writes them (1e-05, 1e+16).
std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  const std::size_t e = s.find('e');
  if (e != std::string::npos) {
    // %g writes e-05 / e+16 as Python does; Python switches to exponents at 1e16 and below 1e-4,
    // %g at the precision: redo in fixed notation where Python would not use an exponent.
    const int exponent = std::atoi(s.c_str() + e + 1);
    if (exponent >= -4 && exponent < 16) {
      for (int decimals = 0; decimals <= 40; ++decimals) {
        std::snprintf(buf, sizeof buf, "%.*f", decimals, d);
        if (std::strtod(buf, nullptr) == d) break;
      }
      s = buf;
    } else {
      return s;
    }
  }
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string text_repr(const std::string& s) {
  const char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + quote;
}

const char* type_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::none: return "NoneType";
    case Value::Kind::boolean: return "bool";
    case Value::Kind::integer: return "int";
    case Value::Kind::real: return "float";
    case Value::Kind::text: return "str";
    case Value::Kind::list: return "list";
  }
  return "?";
}

}  // namespace

std::string Value::repr() const {
  switch (kind()) {
    case Kind::none: return "None";
    case Kind::boolean: return as_bool() ? "True" : "False";
    case Kind::integer: return std::to_string(as_int());
    case Kind::real: return float_repr(as_real());
    case Kind::text: return text_repr(as_text());
    case Kind::list: {
      std::string out = "[";
      for (std::size_t i = 0; i < as_list().size(); ++i) out += (i ? ", " : "") + as_list()[i].repr();
      return out + "]";
    }
  }
  return "?";
}

std::string Value::str() const { return kind() == Kind::text ? as_text() : repr(); }

namespace {

// An int and a float compared exactly, as Python does (not by converting the int to a double).
int compare_int_real(std::int64_t i, double d) {
  if (std::isnan(d)) return 2;  // unordered
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  const double t = std::trunc(d);
  const auto ti = static_cast<std::int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  return d > t ? -1 : d < t ? 1 : 0;
}

// -1, 0, 1 for ordered numbers; 2 when unordered (a NaN).
int compare_numbers(const Value& a, const Value& b) {
  if (a.is_integral() && b.is_integral()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
  if (a.is_integral()) return compare_int_real(a.as_int(), b.as_real());
  if (b.is_integral()) {
    const int c = compare_int_real(b.as_int(), a.as_real());
    return c == 2 ? 2 : -c;
  }
  const double x = a.as_real(), y = b.as_real();
  if (std::isnan(x) || std::isnan(y)) return 2;
  return x < y ? -1 : x > y ? 1 : 0;
}

}  // namespace

bool operator==(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return compare_numbers(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::none: return true;
    case Value::Kind::text: return a.as_text() == b.as_text();
    case Value::Kind::list: return a.as_list() == b.as_list();
    default: return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Tokens

namespace {

constexpr std::size_t kMaxText = std::size_t{1} << 20;
constexpr int kMaxNesting = 200;
// The tree's height, which evaluation and destruction recurse through: a chain of 2000 terms
// (1 + 1 + ...) is as deep as 2000 nested parentheses.
constexpr int kMaxHeight = 1000;

struct Token {
  enum class Kind { name, integer, real, text, op, end } kind = Kind::end;
  std::string text;  // name, operator, or the string's value
  std::int64_t integer = 0;
  double real = 0;
  std::size_t offset = 0;
  std::size_t end = 0;  // one past its last character
};

[[noreturn]] void syntax(std::string what, std::size_t offset) { throw ExprSyntaxError(std::move(what), offset); }

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

Token number_token(std::string_view s, std::size_t& i) {
  const std::size_t start = i;
  std::string digits;
  int base = 10;
  if (s[i] == '0' && i + 1 < s.size() && std::strchr("xXoObB", s[i + 1]) != nullptr) {
    base = (s[i + 1] == 'x' || s[i + 1] == 'X') ? 16 : (s[i + 1] == 'o' || s[i + 1] == 'O') ? 8 : 2;
    i += 2;
    while (i < s.size() && (std::isxdigit(static_cast<unsigned char>(s[i])) || s[i] == '_'))
      if (s[i++] != '_') digits += s[i - 1];
  } else {
    bool real = false;
    while (i < s.size()) {
      const char c = s[i];
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '_') {
        if (c != '_') digits += c;
      } else if (c == '.' && !real) {
        real = true;
        digits += c;
      } else if ((c == 'e' || c == 'E') && i + 1 < s.size() &&
                 (std::isdigit(static_cast<unsigned char>(s[i + 1])) ||
                  ((s[i + 1] == '+' || s[i + 1] == '-') && i + 2 < s.size() &&
                   std::isdigit(static_cast<unsigned char>(s[i + 2]))))) {
        real = true;
        digits += c;
        digits += s[++i];
      } else {
        break;
      }
      ++i;
    }
    if (i < s.size() && (is_name_char(s[i]) || s[i] == '.'))
      syntax("'" + std::string(s.substr(start, i + 1 - start)) + "' is not a number", start);
    Token t;
    t.offset = start;
    if (real) {
      t.kind = Token::Kind::real;
      errno = 0;
      t.real = std::strtod(digits.c_str(), nullptr);
      return t;
    }
    base = 10;
    if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos)
      syntax("leading zeros in a decimal integer are not allowed in Python (use 0o for octal)", start);
  }
  if (digits.empty() || (i < s.size() && is_name_char(s[i])))
    syntax("'" + std::string(s.substr(start, i - start + 1)) + "' is not a number", start);
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(digits.c_str(), &end, base);
  if (errno == ERANGE || v > static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max()) || *end != '\0')
    syntax("the integer " + std::string(s.substr(start, std::min<std::size_t>(i - start, 40))) +
               " does not fit in 64 bits",
           start);
  Token t;
  t.kind = Token::Kind::integer;
  t.integer = static_cast<std::int64_t>(v);
  t.offset = start;
  return t;
}

Token string_token(std::string_view s, std::size_t& i) {
  const std::size_t start = i;
  const char quote = s[i];
  if (i + 2 < s.size() && s[i + 1] == quote && s[i + 2] == quote) syntax("triple-quoted strings are not supported", i);
  std::string value;
  for (++i; i < s.size() && s[i] != quote; ++i) {
    if (s[i] == '\n') syntax("a string may not span lines", start);
    if (s[i] != '\\') {
      value += s[i];
      continue;
    }
    if (++i >= s.size()) break;
    switch (s[i]) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case 'r': value += '\r'; break;
      case '0': value += '\0'; break;
      case '\\':
      case '\'':
      case '"': value += s[i]; break;
      default: value += '\\'; value += s[i];
    }
  }
  if (i >= s.size()) syntax("the string is not closed", start);
  ++i;
  Token t;
  t.kind = Token::Kind::text;
  t.text = std::move(value);
  t.offset = start;
  return t;
}

std::vector<Token> tokenize(std::string_view s) {
  static constexpr std::string_view three[] = {"**=", "//=", ">>=", "<<=", "..."};
  static constexpr std::string_view two[] = {
      "**", "//", "==", "!=", "<=", ">=", "<<", ">>", ":=", "->", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="};
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '#') {
      syntax("comments are not supported in an expression", i);
    } else if (is_name_start(c)) {
      std::size_t j = i;
      while (j < s.size() && is_name_char(s[j])) ++j;
      if (j < s.size() && (s[j] == '\'' || s[j] == '"'))
        syntax("string prefixes (f\"...\", b\"...\", r\"...\") are not supported", i);
      Token t;
      t.kind = Token::Kind::name;
      t.text = std::string(s.substr(i, j - i));
      t.offset = i;
      t.end = j;
      out.push_back(std::move(t));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      out.push_back(number_token(s, i));
      out.back().end = i;
    } else if (c == '\'' || c == '"') {
      out.push_back(string_token(s, i));
      out.back().end = i;
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      syntax("a character that is not printable ASCII", i);
    } else {
      std::string op(1, c);
      for (const auto& t : three)
        if (s.substr(i, 3) == t) op = t;
      if (op.size() == 1)
        for (const auto& t : two)
          if (s.substr(i, 2) == t) op = t;
      if (op.size() == 3 || op == ":=" || op == "->" ||
          (op.size() == 2 && op[1] == '=' && std::strchr("+-*/%&|^", op[0])))
        syntax("'" + op + "' is not an operator of expressions", i);
      if (std::strchr("+-*/%<>=!&|^~()[]{},:.@;", c) == nullptr || op == "=" || op == "!" || op == "@" || op == ";" ||
          op == "{" || op == "}")
        syntax("'" + op + "' is not part of the Python expressions tiletune reads", i);
      Token t;
      t.kind = Token::Kind::op;
      t.text = op;
      t.offset = i;
      t.end = i + op.size();
      out.push_back(std::move(t));
      i += op.size();
    }
  }
  Token end;
  end.offset = end.end = s.size();
  out.push_back(end);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The tree

enum class Fn {
  abs,
  all,
  any,
  boolean,
  ceil,
  exp,
  floor,
  real,
  integer,
  isqrt,
  len,
  list,
  log,
  log10,
  log2,
  max,
  min,
  pow,
  prod,
  range,
  round,
  sorted,
  sqrt,
  str,
  sum,
  tuple,
};

struct FunctionInfo {
  std::string_view name;
  Fn fn;
  int min_args, max_args;  // max -1: any number
};
constexpr std::array<FunctionInfo, 26> kFunctions{{
    {"abs", Fn::abs, 1, 1},     {"all", Fn::all, 1, 1},       {"any", Fn::any, 1, 1},    {"bool", Fn::boolean, 0, 1},
    {"ceil", Fn::ceil, 1, 1},   {"exp", Fn::exp, 1, 1},       {"float", Fn::real, 0, 1}, {"floor", Fn::floor, 1, 1},
    {"int", Fn::integer, 0, 1}, {"isqrt", Fn::isqrt, 1, 1},   {"len", Fn::len, 1, 1},    {"list", Fn::list, 0, 1},
    {"log", Fn::log, 1, 2},     {"log10", Fn::log10, 1, 1},   {"log2", Fn::log2, 1, 1},  {"max", Fn::max, 1, -1},
    {"min", Fn::min, 1, -1},    {"pow", Fn::pow, 2, 2},       {"prod", Fn::prod, 1, 1},  {"range", Fn::range, 1, 3},
    {"round", Fn::round, 1, 1}, {"sorted", Fn::sorted, 1, 1}, {"sqrt", Fn::sqrt, 1, 1},  {"str", Fn::str, 0, 1},
    {"sum", Fn::sum, 1, 2},     {"tuple", Fn::tuple, 0, 1},
}};
// The modules whose functions may be called qualified (math.ceil, np.ceil): the same functions.
constexpr std::string_view kModules[] = {"math", "numpy", "np"};
constexpr std::string_view kKeywordsRefused[] = {"lambda", "import", "yield",    "await",  "def",     "class",
                                                 "del",    "global", "nonlocal", "return", "assert",  "with",
                                                 "async",  "while",  "try",      "except", "finally", "raise",
                                                 "pass",   "break",  "continue", "from",   "as",      "elif"};

enum class Op {
  add,
  sub,
  mul,
  div,
  floordiv,
  mod,
  pow,
  bitor_,
  bitxor,
  bitand_,
  lshift,
  rshift,
  lt,
  le,
  gt,
  ge,
  eq,
  ne,
  in,
  not_in,
  is,
  is_not,
  neg,
  pos,
  invert,
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Clause {  // "for TARGETS in ITER if COND..."
  std::vector<std::string> targets;
  std::vector<int> target_slots;  // local slots, after resolve
  NodePtr iter;
  std::vector<NodePtr> conditions;
};

struct Node {
  enum class Kind {
    constant,
    name,
    local,
    free,
    unary,
    binary,
    and_,
    or_,
    not_,
    compare,
    ifexp,
    call,
    subscript,
    display,
    comp,
  } kind = Kind::constant;
  std::size_t begin = 0, end = 0;  // span in the text
  Value value;                     // constant
  std::string name;                // name (before resolve)
  int slot = -1;                   // local / free
  Op op = Op::add;                 // unary / binary
  std::vector<Op> ops;             // compare chain
  Fn fn = Fn::abs;                 // call
  std::vector<NodePtr> kids;       // operands, arguments, items; comp: kids[0] is the element
  std::vector<Clause> clauses;     // comp
  int height = 1;                  // 1 + the tallest child's
};

NodePtr make(Node::Kind k, std::size_t begin) {
  auto n = std::make_unique<Node>();
  n->kind = k;
  n->begin = begin;
  return n;
}

class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens) : text_(text), t_(std::move(tokens)) {}

  NodePtr parse() {
    NodePtr n = test();
    if (peek().kind != Token::Kind::end) {
      if (is_op(",")) syntax("a tuple at the top level: put it in brackets, [a, b]", peek().offset);
      syntax("unexpected '" + std::string(token_text(peek())) + "' after the expression", peek().offset);
    }
    return n;
  }

 private:
  const Token& peek(std::size_t ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
  bool is_op(std::string_view op, std::size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::op && peek(ahead).text == op;
  }
  bool is_word(std::string_view w, std::size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::name && peek(ahead).text == w;
  }
  std::string_view token_text(const Token& t) const {
    if (t.kind == Token::Kind::end) return "end";
    const std::size_t next =
        &t - t_.data() + 1 < static_cast<std::ptrdiff_t>(t_.size()) ? (&t + 1)->offset : text_.size();
    std::string_view s = text_.substr(t.offset, next - t.offset);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s.substr(0, 40);
  }
  void expect(std::string_view op, std::string_view context) {
    if (!is_op(op))
      syntax("expected '" + std::string(op) + "' " + std::string(context) + ", found '" +
                 std::string(token_text(peek())) + "'",
             peek().offset);
    ++i_;
  }
  std::size_t here() const { return peek().offset; }
  std::size_t last_end() const { return i_ == 0 ? 0 : (i_ < t_.size() ? t_[i_].offset : text_.size()); }

  struct Depth {
    explicit Depth(int& d) : d_(d) {
      if (++d_ > kMaxNesting) syntax("the expression nests more than 200 levels deep", 0);
    }
    ~Depth() { --d_; }
    int& d_;
  };

  NodePtr finish(NodePtr n) {
    n->end = last_end();
    const auto taller = [&](const NodePtr& k) { n->height = std::max(n->height, k->height + 1); };
    for (const NodePtr& k : n->kids) taller(k);
    for (const Clause& c : n->clauses) {
      taller(c.iter);
      for (const NodePtr& cond : c.conditions) taller(cond);
    }
    if (n->height > kMaxHeight)
      syntax("the expression is more than " + std::to_string(kMaxHeight) +
                 " operations deep (a chain of that "
                 "many terms)",
             n->begin);
    return n;
  }

  NodePtr test() {
    Depth guard(depth_);
    if (is_word("lambda")) syntax("lambda is not supported: write the expression itself", here());
    const std::size_t begin = here();
    NodePtr body = or_test();
    if (!is_word("if")) return body;
    ++i_;
    NodePtr cond = or_test();
    if (!is_word("else")) syntax("a conditional expression needs 'else': a if c else b", here());
    ++i_;
    NodePtr other = test();
    NodePtr n = make(Node::Kind::ifexp, begin);
    n->kids.push_back(std::move(cond));
    n->kids.push_back(std::move(body));
    n->kids.push_back(std::move(other));
    return finish(std::move(n));
  }
  NodePtr bool_chain(Node::Kind kind, std::string_view word, NodePtr (Parser::*next)()) {
    const std::size_t begin = here();
    NodePtr first = (this->*next)();
    if (!is_word(word)) return first;
    NodePtr n = make(kind, begin);
    n->kids.push_back(std::move(first));
    while (is_word(word)) {
      ++i_;
      n->kids.push_back((this->*next)());
    }
    return finish(std::move(n));
  }
  NodePtr or_test() { return bool_chain(Node::Kind::or_, "or", &Parser::and_test); }
  NodePtr and_test() { return bool_chain(Node::Kind::and_, "and", &Parser::not_test); }
  NodePtr not_test() {
    Depth guard(depth_);
    if (!is_word("not")) return comparison();
    const std::size_t begin = here();
    ++i_;
    NodePtr n = make(Node::Kind::not_, begin);
    n->kids.push_back(not_test());
    return finish(std::move(n));
  }
  std::optional<Op> comparison_op() {
    static const std::pair<std::string_view, Op> ops[] = {{"<", Op::lt},  {"<=", Op::le}, {">", Op::gt},
                                                          {">=", Op::ge}, {"==", Op::eq}, {"!=", Op::ne}};
    for (const auto& [text, op] : ops)
      if (is_op(text)) {
        ++i_;
        return op;
      }
    if (is_word("in")) {
      ++i_;
      return Op::in;
    }
    if (is_word("not") && is_word("in", 1)) {
      i_ += 2;
      return Op::not_in;
    }
    if (is_word("is")) {
      ++i_;
      if (is_word("not")) {
        ++i_;
        return Op::is_not;
      }
      return Op::is;
    }
    return std::nullopt;
  }
  NodePtr comparison() {
    const std::size_t begin = here();
    NodePtr first = binary(0);
    std::optional<Op> op = comparison_op();
    if (!op) return first;
    NodePtr n = make(Node::Kind::compare, begin);
    n->kids.push_back(std::move(first));
    while (op) {
      n->ops.push_back(*op);
      n->kids.push_back(binary(0));
      op = comparison_op();
    }
    return finish(std::move(n));
  }
  // Binary operators by Python's precedence, loosest first; all left-associative.
  NodePtr binary(int level) {
    static const std::vector<std::vector<std::pair<std::string_view, Op>>> levels = {
        {{"|", Op::bitor_}},
        {{"^", Op::bitxor}},
        {{"&", Op::bitand_}},
        {{"<<", Op::lshift}, {">>", Op::rshift}},
        {{"+", Op::add}, {"-", Op::sub}},
        {{"*", Op::mul}, {"/", Op::div}, {"//", Op::floordiv}, {"%", Op::mod}},
    };
    if (level == static_cast<int>(levels.size())) return factor();
    Depth guard(depth_);
    const std::size_t begin = here();
    NodePtr left = binary(level + 1);
    for (;;) {
      std::optional<Op> op;
      for (const auto& [text, o] : levels[static_cast<std::size_t>(level)])
        if (is_op(text)) op = o;
      if (!op) return left;
      ++i_;
      NodePtr n = make(Node::Kind::binary, begin);
      n->op = *op;
      n->kids.push_back(std::move(left));
      n->kids.push_back(binary(level + 1));
      left = finish(std::move(n));
    }
  }
  NodePtr factor() {
    Depth guard(depth_);
    const std::size_t begin = here();
    std::optional<Op> op;
    if (is_op("-")) op = Op::neg;
    if (is_op("+")) op = Op::pos;
    if (is_op("~")) op = Op::invert;
    if (!op) return power();
    ++i_;
    NodePtr n = make(Node::Kind::unary, begin);
    n->op = *op;
    n->kids.push_back(factor());
    return finish(std::move(n));
  }
  NodePtr power() {
    const std::size_t begin = here();
    NodePtr base = trailers(atom());
    if (!is_op("**")) return base;
    ++i_;
    NodePtr n = make(Node::Kind::binary, begin);
    n->op = Op::pow;
    n->kids.push_back(std::move(base));
    n->kids.push_back(factor());  // right-associative, and binds looser than a unary minus on its right
    return finish(std::move(n));
  }
  NodePtr trailers(NodePtr n) {
    while (is_op("[") || is_op("(") || is_op(".")) {
      if (is_op("(")) syntax("only the functions tiletune's Python knows can be called", here());
      if (is_op(".")) syntax("attributes (x.y) are not supported", here());
      const std::size_t begin = n->begin;
      ++i_;
      if (is_op("]")) syntax("an empty subscript", here());
      NodePtr index = test();
      if (is_op(":")) syntax("slices (x[a:b]) are not supported", here());
      expect("]", "to close the subscript");
      NodePtr s = make(Node::Kind::subscript, begin);
      s->kids.push_back(std::move(n));
      s->kids.push_back(std::move(index));
      n = finish(std::move(s));
    }
    return n;
  }
  const FunctionInfo* function_named(std::string_view name) const {
    for (const FunctionInfo& f : kFunctions)
      if (f.name == name) return &f;
    return nullptr;
  }
  NodePtr call(const FunctionInfo& f, std::size_t begin) {
    expect("(", "after the function's name");
    NodePtr n = make(Node::Kind::call, begin);
    n->fn = f.fn;
    n->name = std::string(f.name);
    while (!is_op(")")) {
      if (peek().kind == Token::Kind::name && is_op("=", 1))
        syntax("keyword arguments are not supported (" + peek().text + "=...)", here());
      if (is_op("*") || is_op("**")) syntax("argument unpacking (*args) is not supported", here());
      const std::size_t arg_begin = here();
      NodePtr arg = test();
      if (is_word("for")) arg = comprehension(std::move(arg), arg_begin);
      n->kids.push_back(std::move(arg));
      if (!is_op(",")) break;
      ++i_;
    }
    expect(")", "to close the call of " + std::string(f.name) + "()");
    const int count = static_cast<int>(n->kids.size());
    if (count < f.min_args || (f.max_args >= 0 && count > f.max_args)) {
      const std::string want = f.min_args == f.max_args ? std::to_string(f.min_args)
                               : f.max_args < 0         ? "at least " + std::to_string(f.min_args)
                                                : std::to_string(f.min_args) + " to " + std::to_string(f.max_args);
      syntax(std::string(f.name) + "() takes " + want + " argument" + (want == "1" ? "" : "s") + ", given " +
                 std::to_string(count),
             begin);
    }
    return finish(std::move(n));
  }
  NodePtr comprehension(NodePtr element, std::size_t begin) {
    NodePtr n = make(Node::Kind::comp, begin);
    n->kids.push_back(std::move(element));
    while (is_word("for")) {
      ++i_;
      Clause c;
      const bool bracketed = is_op("(");
      if (bracketed) ++i_;
      for (;;) {
        if (peek().kind != Token::Kind::name) syntax("expected a name after 'for'", here());
        c.targets.push_back(peek().text);
        ++i_;
        if (!is_op(",")) break;
        ++i_;
      }
      if (bracketed) expect(")", "to close the names after 'for'");
      if (!is_word("in")) syntax("expected 'in' after 'for " + c.targets.front() + "'", here());
      ++i_;
      c.iter = or_test();
      while (is_word("if")) {
        ++i_;
        c.conditions.push_back(or_test());
      }
      n->clauses.push_back(std::move(c));
    }
    return finish(std::move(n));
  }
  // "[...]" or "(...)": a list, a tuple, a parenthesized expression or a comprehension.
  NodePtr display(std::string_view close, std::size_t begin) {
    NodePtr n = make(Node::Kind::display, begin);
    bool comma = false;
    while (!is_op(close)) {
      const std::size_t item_begin = here();
      NodePtr item = test();
      if (is_word("for")) {
        if (!n->kids.empty()) syntax("a comprehension must be the only item", here());
        NodePtr comp = comprehension(std::move(item), item_begin);
        expect(close, "to close the comprehension");
        comp->begin = begin;
        return finish(std::move(comp));
      }
      n->kids.push_back(std::move(item));
      if (!is_op(",")) break;
      comma = true;
      ++i_;
    }
    expect(close, close == "]" ? "to close the list" : "to close the parenthesis");
    if (close == ")" && n->kids.size() == 1 && !comma) {
      NodePtr inner = std::move(n->kids.front());
      return inner;
    }
    if (close == ")" && n->kids.empty()) syntax("an empty tuple () is not supported", begin);
    return finish(std::move(n));
  }
  NodePtr atom() {
    Depth guard(depth_);
    const Token& t = peek();
    const std::size_t begin = t.offset;
    switch (t.kind) {
      case Token::Kind::integer: {
        ++i_;
        NodePtr n = make(Node::Kind::constant, begin);
        n->value = Value::integer(t.integer);
        return finish(std::move(n));
      }
      case Token::Kind::real: {
        ++i_;
        NodePtr n = make(Node::Kind::constant, begin);
        n->value = Value::real(t.real);
        return finish(std::move(n));
      }
      case Token::Kind::text: {
        std::string s;
        while (peek().kind == Token::Kind::text) s += t_[i_++].text;  // "a" "b" is "ab"
        NodePtr n = make(Node::Kind::constant, begin);
        n->value = Value::text(std::move(s));
        return finish(std::move(n));
      }
      case Token::Kind::end: syntax("the expression ends too early", begin);
      case Token::Kind::op:
        if (t.text == "(" || t.text == "[") {
          ++i_;
          return display(t.text == "(" ? ")" : "]", begin);
        }
        syntax("unexpected '" + std::string(token_text(t)) + "'", begin);
      case Token::Kind::name: break;
    }
    const std::string& name = t.text;
    for (const auto& kw : kKeywordsRefused)
      if (name == kw) syntax("'" + name + "' is not part of the Python expressions tiletune reads", begin);
    if (name == "for" || name == "in" || name == "if" || name == "else" || name == "and" || name == "or" ||
        name == "is")
      syntax("unexpected '" + name + "'", begin);
    ++i_;
    if (name == "True" || name == "False" || name == "None") {
      NodePtr n = make(Node::Kind::constant, begin);
      n->value = name == "None" ? Value() : Value::boolean(name == "True");
      return finish(std::move(n));
    }
    if (is_op(".") && std::find(std::begin(kModules), std::end(kModules), name) != std::end(kModules) &&
        peek(1).kind == Token::Kind::name) {
      const std::string member = peek(1).text;
      const FunctionInfo* f = function_named(member);
      if (!f || !is_op("(", 2))
        syntax(name + "." + member + " is not one of the functions tiletune's Python knows", begin);
      i_ += 2;
      return call(*f, begin);
    }
    if (is_op("(")) {
      const FunctionInfo* f = function_named(name);
      if (!f) syntax("the function " + name + "() is not one tiletune's Python knows", begin);
      return call(*f, begin);
    }
    NodePtr n = make(Node::Kind::name, begin);
    n->name = name;
    return finish(std::move(n));
  }

  std::string_view text_;
  std::vector<Token> t_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

// Names: comprehension targets become locals (slots in the evaluation's local frame), the rest
// free names.
class Resolver {
 public:
  void resolve(Node& n) {
    switch (n.kind) {
      case Node::Kind::name: {
        for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
          if (const auto it = s->find(n.name); it != s->end()) {
            n.kind = Node::Kind::local;
            n.slot = it->second;
            return;
          }
        n.kind = Node::Kind::free;
        const auto it = std::find(free_.begin(), free_.end(), n.name);
        n.slot = static_cast<int>(it - free_.begin());
        if (it == free_.end()) {
          free_.push_back(n.name);
          free_offsets_.push_back(n.begin);
        }
        return;
      }
      case Node::Kind::comp: {
        const std::size_t depth = scopes_.size();
        for (Clause& c : n.clauses) {
          resolve(*c.iter);  // the first iterable in the enclosing scope, as Python does
          scopes_.emplace_back();
          for (const std::string& target : c.targets) {
            c.target_slots.push_back(locals_);
            scopes_.back()[target] = locals_++;
          }
          for (NodePtr& cond : c.conditions) resolve(*cond);
        }
        resolve(*n.kids[0]);
        scopes_.resize(depth);
        return;
      }
      default:
        for (NodePtr& k : n.kids) resolve(*k);
    }
  }
  std::vector<std::string> free_;
  std::vector<std::size_t> free_offsets_;
  int locals_ = 0;

 private:
  std::vector<std::map<std::string, int>> scopes_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Evaluation

struct Program::Impl {
  std::string text;
  NodePtr root;
  std::vector<std::string> free;
  std::vector<std::size_t> free_offsets;
  int locals = 0;
};

namespace {

using List = Value::List;

class Evaluator {
 public:
  Evaluator(const Program::Impl& program, std::span<const Value> free, const Limits& limits)
      : p_(program), free_(free), limits_(limits), locals_(static_cast<std::size_t>(program.locals)) {}

  Value eval(const Node& n) {
    step();
    switch (n.kind) {
      case Node::Kind::constant: return n.value;
      case Node::Kind::free: return free_[static_cast<std::size_t>(n.slot)];
      case Node::Kind::local: return locals_[static_cast<std::size_t>(n.slot)];
      case Node::Kind::name: break;
      case Node::Kind::unary: return unary(n, eval(*n.kids[0]));
      case Node::Kind::binary: {
        Value a = eval(*n.kids[0]);
        return binary(n, n.op, a, eval(*n.kids[1]));
      }
      case Node::Kind::and_: {
        Value v;
        for (const NodePtr& k : n.kids)
          if (!(v = eval(*k)).truthy()) return v;
        return v;
      }
      case Node::Kind::or_: {
        Value v;
        for (const NodePtr& k : n.kids)
          if ((v = eval(*k)).truthy()) return v;
        return v;
      }
      case Node::Kind::not_: return Value::boolean(!eval(*n.kids[0]).truthy());
      case Node::Kind::compare: {
        Value left = eval(*n.kids[0]);
        for (std::size_t i = 0; i < n.ops.size(); ++i) {
          Value right = eval(*n.kids[i + 1]);
          if (!compare(n, n.ops[i], left, right)) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case Node::Kind::ifexp: return eval(*n.kids[0]).truthy() ? eval(*n.kids[1]) : eval(*n.kids[2]);
      case Node::Kind::call: return call(n);
      case Node::Kind::subscript: return subscript(n, eval(*n.kids[0]), eval(*n.kids[1]));
      case Node::Kind::display: {
        List items;
        items.reserve(n.kids.size());
        for (const NodePtr& k : n.kids) items.push_back(eval(*k));
        return Value::list(std::move(items));
      }
      case Node::Kind::comp: {
        List out;
        comprehend(n, 0, out);
        return Value::list(std::move(out));
      }
    }
    throw EvalError("unresolved name in '" + p_.text + "'");
  }

 private:
  std::string where(const Node& n) const {
    std::string_view s =
        std::string_view(p_.text).substr(n.begin, n.end > n.begin ? n.end - n.begin : std::string::npos);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    if (s.size() > 80) return std::string(s.substr(0, 77)) + "...";
    return std::string(s);
  }
  [[noreturn]] void fail(const Node& n, const std::string& what) const {
    throw EvalError(what + " in '" + where(n) + "'");
  }
  void step() {
    if (++steps_ > limits_.steps)
      throw EvalError("the evaluation of '" + p_.text.substr(0, 80) + "' took more than " +
                      std::to_string(limits_.steps) + " steps");
  }
  void check_items(const Node& n, std::size_t count) {
    if (count > limits_.list_items)
      fail(n, "MemoryError: a list of more than " + std::to_string(limits_.list_items) + " items");
    steps_ += count;
    if (steps_ > limits_.steps) step();
  }
  void check_text(const Node& n, std::size_t bytes) {
    if (bytes > limits_.text_bytes)
      fail(n, "MemoryError: a string of more than " + std::to_string(limits_.text_bytes) + " bytes");
  }

  // The items of an iterable: a list, or the characters of a str.
  List items_of(const Node& n, const Value& v, const char* what) {
    if (v.kind() == Value::Kind::list) return v.as_list();
    if (v.kind() == Value::Kind::text) {
      List out;
      for (const char c : v.as_text()) out.push_back(Value::text(std::string(1, c)));
      return out;
    }
    fail(n, std::string("TypeError: ") + what + ": '" + type_name(v) + "' object is not iterable");
  }

  void comprehend(const Node& n, std::size_t clause, List& out) {
    if (clause == n.clauses.size()) {
      out.push_back(eval(*n.kids[0]));  // eval() counted its steps; the size is bounded here
      if (out.size() > limits_.list_items)
        fail(n, "MemoryError: a list of more than " + std::to_string(limits_.list_items) + " items");
      return;
    }
    const Clause& c = n.clauses[clause];
    const Value iterable = eval(*c.iter);
    for (const Value& item : items_of(*c.iter, iterable, "for")) {
      if (c.target_slots.size() == 1) {
        locals_[static_cast<std::size_t>(c.target_slots[0])] = item;
      } else {
        if (item.kind() != Value::Kind::list || item.as_list().size() != c.target_slots.size())
          fail(*c.iter, "ValueError: cannot unpack " + item.repr().substr(0, 40) + " into " +
                            std::to_string(c.target_slots.size()) + " names");
        for (std::size_t i = 0; i < c.target_slots.size(); ++i)
          locals_[static_cast<std::size_t>(c.target_slots[i])] = item.as_list()[i];
      }
      bool keep = true;
      for (const NodePtr& cond : c.conditions)
        if (!eval(*cond).truthy()) {
          keep = false;
          break;
        }
      if (keep) comprehend(n, clause + 1, out);
    }
  }

  void overflow(const Node& n) const {
    fail(n, "OverflowError: the result does not fit in a 64-bit integer (tiletune's integers are 64-bit)");
  }
  // a op b, or OverflowError.
  template <class Op>
  std::int64_t checked(const Node& n, Op op, std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (op(a, b, &r)) overflow(n);
    return r;
  }
  static bool add(std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_add_overflow(a, b, r); }
  static bool sub(std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_sub_overflow(a, b, r); }
  static bool mul(std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_mul_overflow(a, b, r); }

  Value unary(const Node& n, const Value& v) {
    if (n.op == Op::neg) {
      if (v.is_integral()) return Value::integer(checked(n, sub, 0, v.as_int()));
      if (v.kind() == Value::Kind::real) return Value::real(-v.as_real());
    } else if (n.op == Op::pos) {
      if (v.is_integral()) return Value::integer(v.as_int());
      if (v.kind() == Value::Kind::real) return v;
    } else if (v.is_integral()) {
      return Value::integer(~v.as_int());
    }
    fail(n, std::string("TypeError: bad operand type for unary ") +
                (n.op == Op::neg   ? "-"
                 : n.op == Op::pos ? "+"
                                   : "~") +
                ": '" + type_name(v) + "'");
  }

  static double float_floordiv(double x, double y, double* remainder) {
    double mod = std::fmod(x, y);
    double div = (x - mod) / y;
    if (mod != 0) {
      if ((y < 0) != (mod < 0)) {
        mod += y;
        div -= 1.0;
      }
    } else {
      mod = std::copysign(0.0, y);
    }
    double floordiv;
    if (div != 0) {
      floordiv = std::floor(div);
      if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
      floordiv = std::copysign(0.0, x / y);
    }
    if (remainder) *remainder = mod;
    return floordiv;
  }

  Value int_power(const Node& n, std::int64_t base, std::int64_t exponent) {
    if (exponent < 0) {
      if (base == 0) fail(n, "ZeroDivisionError: 0 cannot be raised to a negative power");
      return Value::real(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    }
    std::int64_t result = 1;
    while (exponent > 0) {
      step();
      if (exponent & 1) result = checked(n, mul, result, base);
      exponent >>= 1;
      if (exponent > 0) base = checked(n, mul, base, base);
    }
    return Value::integer(result);
  }

  Value repeat(const Node& n, const Value& seq, std::int64_t times) {
    if (times <= 0) return seq.kind() == Value::Kind::text ? Value::text("") : Value::list({});
    const auto count = static_cast<std::uint64_t>(times);
    if (seq.kind() == Value::Kind::text) {
      if (count > limits_.text_bytes || seq.as_text().size() * count > limits_.text_bytes)
        check_text(n, limits_.text_bytes + 1);
      std::string out;
      for (std::uint64_t i = 0; i < count; ++i) out += seq.as_text();
      return Value::text(std::move(out));
    }
    if (count > limits_.list_items || seq.as_list().size() * count > limits_.list_items)
      check_items(n, limits_.list_items + 1);
    List out;
    for (std::uint64_t i = 0; i < count; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
    check_items(n, out.size());
    return Value::list(std::move(out));
  }

  Value binary(const Node& n, Op op, const Value& a, const Value& b) {
    if (a.is_integral() && b.is_integral()) {
      const std::int64_t x = a.as_int(), y = b.as_int();
      switch (op) {
        case Op::add: return Value::integer(checked(n, add, x, y));
        case Op::sub: return Value::integer(checked(n, sub, x, y));
        case Op::mul: return Value::integer(checked(n, mul, x, y));
        case Op::div:
          if (y == 0) fail(n, "ZeroDivisionError: division by zero");
          return Value::real(static_cast<double>(x) / static_cast<double>(y));
        case Op::floordiv:
        case Op::mod: {
          if (y == 0) fail(n, "ZeroDivisionError: integer division or modulo by zero");
          if (x == std::numeric_limits<std::int64_t>::min() && y == -1) {
            if (op == Op::mod) return Value::integer(0);
            overflow(n);
          }
          std::int64_t q = x / y, m = x % y;
          if (m != 0 && ((m < 0) != (y < 0))) {
            m += y;
            --q;
          }
          return Value::integer(op == Op::floordiv ? q : m);
        }
        case Op::pow: return int_power(n, x, y);
        case Op::bitor_:
          return a.kind() == Value::Kind::boolean && b.kind() == Value::Kind::boolean ? Value::boolean(x | y)
                                                                                      : Value::integer(x | y);
        case Op::bitxor:
          return a.kind() == Value::Kind::boolean && b.kind() == Value::Kind::boolean ? Value::boolean(x ^ y)
                                                                                      : Value::integer(x ^ y);
        case Op::bitand_:
          return a.kind() == Value::Kind::boolean && b.kind() == Value::Kind::boolean ? Value::boolean(x & y)
                                                                                      : Value::integer(x & y);
        case Op::lshift:
        case Op::rshift:
          if (y < 0) fail(n, "ValueError: negative shift count");
          if (op == Op::rshift) return Value::integer(y >= 63 ? (x < 0 ? -1 : 0) : x >> y);
          if (x == 0) return Value::integer(0);
          if (y >= 63 || (x > 0 ? x > (std::numeric_limits<std::int64_t>::max() >> y)
                                : x < (std::numeric_limits<std::int64_t>::min() >> y)))
            overflow(n);
          return Value::integer(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << y));
        default: break;
      }
    }
    if (a.is_number() && b.is_number()) {
      const double x = a.as_real(), y = b.as_real();
      switch (op) {
        case Op::add: return Value::real(x + y);
        case Op::sub: return Value::real(x - y);
        case Op::mul: return Value::real(x * y);
        case Op::div:
          if (y == 0) fail(n, "ZeroDivisionError: float division by zero");
          return Value::real(x / y);
        case Op::floordiv:
        case Op::mod: {
          if (y == 0)
            fail(n,
                 std::string("ZeroDivisionError: float ") + (op == Op::mod ? "modulo" : "floor division") + " by zero");
          double rem = 0;
          const double q = float_floordiv(x, y, &rem);
          return Value::real(op == Op::floordiv ? q : rem);
        }
        case Op::pow: {
          if (x == 0 && y < 0) fail(n, "ZeroDivisionError: 0.0 cannot be raised to a negative power");
          if (x < 0 && y != std::floor(y)) fail(n, "ValueError: a negative number to a fractional power is complex");
          const double r = std::pow(x, y);
          if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) fail(n, "OverflowError: the power is too large");
          return Value::real(r);
        }
        default: break;
      }
    }
    const auto is_seq = [](const Value& v) { return v.kind() == Value::Kind::text || v.kind() == Value::Kind::list; };
    if (op == Op::add && is_seq(a) && a.kind() == b.kind()) {
      if (a.kind() == Value::Kind::text) {
        check_text(n, a.as_text().size() + b.as_text().size());
        return Value::text(a.as_text() + b.as_text());
      }
      List out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      check_items(n, out.size());
      return Value::list(std::move(out));
    }
    if (op == Op::mul && is_seq(a) && b.is_integral()) return repeat(n, a, b.as_int());
    if (op == Op::mul && is_seq(b) && a.is_integral()) return repeat(n, b, a.as_int());
    static const char* symbols[] = {"+", "-", "*", "/", "//", "%", "**", "|", "^", "&", "<<", ">>"};
    fail(n, std::string("TypeError: unsupported operand types for ") + symbols[static_cast<int>(op)] + ": '" +
                type_name(a) + "' and '" + type_name(b) + "'");
  }

  // -1, 0, 1, or 2 for unordered; throws TypeError for kinds that have no order.
  int order(const Node& n, const Value& a, const Value& b, const char* symbol) {
    if (a.is_number() && b.is_number()) return compare_numbers(a, b);
    if (a.kind() == Value::Kind::text && b.kind() == Value::Kind::text) {
      const int c = a.as_text().compare(b.as_text());
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    if (a.kind() == Value::Kind::list && b.kind() == Value::Kind::list) {
      const List& x = a.as_list();
      const List& y = b.as_list();
      for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
        step();
        if (!(x[i] == y[i])) return order(n, x[i], y[i], symbol);
      }
      return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
    }
    fail(n, std::string("TypeError: '") + symbol + "' is not supported between instances of '" + type_name(a) +
                "' and '" + type_name(b) + "'");
  }

  bool contains(const Node& n, const Value& item, const Value& container) {
    if (container.kind() == Value::Kind::text) {
      if (item.kind() != Value::Kind::text)
        fail(n, std::string("TypeError: 'in <string>' requires a string as left operand, not ") + type_name(item));
      return container.as_text().find(item.as_text()) != std::string::npos;
    }
    if (container.kind() != Value::Kind::list)
      fail(n, std::string("TypeError: argument of type '") + type_name(container) + "' is not iterable");
    for (const Value& v : container.as_list()) {
      step();
      if (v == item) return true;
    }
    return false;
  }

  bool compare(const Node& n, Op op, const Value& a, const Value& b) {
    switch (op) {
      case Op::eq: return a == b;
      case Op::ne: return !(a == b);
      case Op::is: return a.kind() == b.kind() && a == b;
      case Op::is_not: return !(a.kind() == b.kind() && a == b);
      case Op::in: return contains(n, a, b);
      case Op::not_in: return !contains(n, a, b);
      case Op::lt: {
        const int c = order(n, a, b, "<");
        return c == -1;
      }
      case Op::le: {
        const int c = order(n, a, b, "<=");
        return c == -1 || c == 0;
      }
      case Op::gt: {
        const int c = order(n, a, b, ">");
        return c == 1;
      }
      case Op::ge: {
        const int c = order(n, a, b, ">=");
        return c == 1 || c == 0;
      }
      default: return false;
    }
  }

  Value subscript(const Node& n, const Value& seq, const Value& index) {
    if (!index.is_integral()) fail(n, std::string("TypeError: indices must be integers, not ") + type_name(index));
    std::int64_t i = index.as_int();
    const std::size_t size = seq.kind() == Value::Kind::list   ? seq.as_list().size()
                             : seq.kind() == Value::Kind::text ? seq.as_text().size()
                                                               : 0;
    if (seq.kind() != Value::Kind::list && seq.kind() != Value::Kind::text)
      fail(n, std::string("TypeError: '") + type_name(seq) + "' object is not subscriptable");
    if (i < 0) i += static_cast<std::int64_t>(size);
    if (i < 0 || static_cast<std::size_t>(i) >= size)
      fail(n, "IndexError: index " + std::to_string(index.as_int()) + " is out of range (size " + std::to_string(size) +
                  ")");
    if (seq.kind() == Value::Kind::list) return seq.as_list()[static_cast<std::size_t>(i)];
    return Value::text(std::string(1, seq.as_text()[static_cast<std::size_t>(i)]));
  }

  double number(const Node& n, const Value& v, const char* fn) {
    if (!v.is_number()) fail(n, std::string("TypeError: ") + fn + "() needs a number, not '" + type_name(v) + "'");
    return v.as_real();
  }
  std::int64_t whole(const Node& n, double d, const char* fn) {
    if (!std::isfinite(d)) fail(n, std::string("ValueError: ") + fn + "() of " + float_repr(d));
    if (d >= 9223372036854775808.0 || d < -9223372036854775808.0)
      fail(n, std::string("OverflowError: ") + fn + "() is beyond 64-bit integers");
    return static_cast<std::int64_t>(d);
  }
  Value extreme(const Node& n, const List& items, bool want_max) {
    if (items.empty()) fail(n, std::string("ValueError: ") + (want_max ? "max" : "min") + "() of an empty sequence");
    const Value* best = &items.front();
    for (const Value& v : items) {
      const int c = order(n, v, *best, want_max ? ">" : "<");
      if (c == (want_max ? 1 : -1)) best = &v;
    }
    return *best;
  }
  Value reduce_sum(const Node& n, const List& items, Value start, bool product) {
    Value acc = std::move(start);
    for (const Value& v : items) {
      step();
      acc = binary(n, product ? Op::mul : Op::add, acc, v);
    }
    return acc;
  }

  Value call(const Node& n) {
    List args;
    for (const NodePtr& k : n.kids) args.push_back(eval(*k));
    const char* name = n.name.c_str();
    switch (n.fn) {
      case Fn::abs: {
        const Value& v = args[0];
        if (v.is_integral()) return Value::integer(v.as_int() < 0 ? checked(n, sub, 0, v.as_int()) : v.as_int());
        return Value::real(std::fabs(number(n, v, name)));
      }
      case Fn::all:
      case Fn::any: {
        for (const Value& v : items_of(n, args[0], name)) {
          step();
          if (v.truthy() == (n.fn == Fn::any)) return Value::boolean(n.fn == Fn::any);
        }
        return Value::boolean(n.fn == Fn::all);
      }
      case Fn::boolean: return Value::boolean(!args.empty() && args[0].truthy());
      case Fn::ceil:
      case Fn::floor: {
        if (args[0].is_integral()) return Value::integer(args[0].as_int());
        const double d = number(n, args[0], name);
        return Value::integer(whole(n, n.fn == Fn::ceil ? std::ceil(d) : std::floor(d), name));
      }
      case Fn::exp: return Value::real(std::exp(number(n, args[0], name)));
      case Fn::sqrt:
      case Fn::log:
      case Fn::log2:
      case Fn::log10: {
        const double d = number(n, args[0], name);
        if (n.fn == Fn::sqrt ? d < 0 : d <= 0) fail(n, "ValueError: math domain error");
        if (n.fn == Fn::sqrt) return Value::real(std::sqrt(d));
        if (n.fn == Fn::log2) return Value::real(std::log2(d));
        if (n.fn == Fn::log10) return Value::real(std::log10(d));
        if (args.size() == 2) {
          const double base = number(n, args[1], name);
          if (base <= 0 || base == 1) fail(n, "ValueError: math domain error");
          return Value::real(std::log(d) / std::log(base));
        }
        return Value::real(std::log(d));
      }
      case Fn::real: {
        if (args.empty()) return Value::real(0);
        if (args[0].kind() == Value::Kind::text) {
          const std::string& s = args[0].as_text();
          char* end = nullptr;
          const double d = std::strtod(s.c_str(), &end);
          if (s.empty() || end == s.c_str() || std::string_view(end).find_first_not_of(" \t") != std::string_view::npos)
            fail(n, "ValueError: could not convert string to float: " + args[0].repr().substr(0, 40));
          return Value::real(d);
        }
        return Value::real(number(n, args[0], name));
      }
      case Fn::integer: {
        if (args.empty()) return Value::integer(0);
        const Value& v = args[0];
        if (v.is_integral()) return Value::integer(v.as_int());
        if (v.kind() == Value::Kind::text) {
          std::string s = v.as_text();
          s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
          const std::size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
          s = b == std::string::npos ? "" : s.substr(b, e - b + 1);
          errno = 0;
          char* end = nullptr;
          const long long x = std::strtoll(s.c_str(), &end, 10);
          if (s.empty() || *end != '\0' || errno == ERANGE)
            fail(n, "ValueError: invalid literal for int(): " + v.repr().substr(0, 40));
          return Value::integer(x);
        }
        return Value::integer(whole(n, std::trunc(number(n, v, name)), name));
      }
      case Fn::isqrt: {
        if (!args[0].is_integral() || args[0].as_int() < 0) fail(n, "ValueError: isqrt() takes a non-negative int");
        auto r = static_cast<std::int64_t>(std::sqrt(static_cast<double>(args[0].as_int())));
        while (r > 0 && r > args[0].as_int() / r) --r;
        while ((r + 1) <= args[0].as_int() / (r + 1)) ++r;
        return Value::integer(r);
      }
      case Fn::len: {
        if (args[0].kind() == Value::Kind::list)
          return Value::integer(static_cast<std::int64_t>(args[0].as_list().size()));
        if (args[0].kind() == Value::Kind::text)
          return Value::integer(static_cast<std::int64_t>(args[0].as_text().size()));
        fail(n, std::string("TypeError: object of type '") + type_name(args[0]) + "' has no len()");
      }
      case Fn::list:
      case Fn::tuple: return args.empty() ? Value::list({}) : Value::list(items_of(n, args[0], name));
      case Fn::max:
      case Fn::min: return extreme(n, args.size() == 1 ? items_of(n, args[0], name) : args, n.fn == Fn::max);
      case Fn::pow: return binary(n, Op::pow, args[0], args[1]);
      case Fn::prod: return reduce_sum(n, items_of(n, args[0], name), Value::integer(1), true);
      case Fn::sum:
        return reduce_sum(n, items_of(n, args[0], name), args.size() == 2 ? args[1] : Value::integer(0), false);
      case Fn::range: {
        for (const Value& a : args)
          if (!a.is_integral()) fail(n, std::string("TypeError: range() takes integers, not '") + type_name(a) + "'");
        const std::int64_t start = args.size() == 1 ? 0 : args[0].as_int();
        const std::int64_t stop = args.size() == 1 ? args[0].as_int() : args[1].as_int();
        const std::int64_t by = args.size() == 3 ? args[2].as_int() : 1;
        if (by == 0) fail(n, "ValueError: range() arg 3 must not be zero");
        const long double span =
            by > 0 ? static_cast<long double>(stop) - start : static_cast<long double>(start) - stop;
        const long double count = span <= 0 ? 0 : std::ceil(span / std::abs(static_cast<long double>(by)));
        if (count > static_cast<long double>(limits_.list_items)) check_items(n, limits_.list_items + 1);
        List out;
        out.reserve(static_cast<std::size_t>(count));
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(count); ++i)
          out.push_back(Value::integer(static_cast<std::int64_t>(start + static_cast<long double>(i) * by)));
        check_items(n, out.size());
        return Value::list(std::move(out));
      }
      case Fn::round: {
        if (args[0].is_integral()) return Value::integer(args[0].as_int());
        const double d = number(n, args[0], name);
        double r = std::round(d);  // half away from zero; Python rounds half to even
        if (std::fabs(d - std::trunc(d)) == 0.5) r = 2.0 * std::round(d / 2.0);
        return Value::integer(whole(n, r, name));
      }
      case Fn::sorted: {
        List items = items_of(n, args[0], name);
        std::stable_sort(items.begin(), items.end(),
                         [&](const Value& a, const Value& b) { return order(n, a, b, "<") == -1; });
        return Value::list(std::move(items));
      }
      case Fn::str: {
        if (args.empty()) return Value::text("");
        std::string s = args[0].str();
        check_text(n, s.size());
        return Value::text(std::move(s));
      }
    }
    fail(n, "unknown function");
  }

  const Program::Impl& p_;
  std::span<const Value> free_;
  const Limits& limits_;
  std::vector<Value> locals_;
  std::uint64_t steps_ = 0;
};

}  // namespace

Program Program::parse(std::string_view text) {
  if (text.size() > kMaxText) throw ExprSyntaxError("the expression is longer than 1 MiB", 0);
  auto impl = std::make_shared<Impl>();
  impl->text = std::string(text);
  Parser parser(impl->text, tokenize(impl->text));
  impl->root = parser.parse();
  Resolver resolver;
  resolver.resolve(*impl->root);
  impl->free = std::move(resolver.free_);
  impl->free_offsets = std::move(resolver.free_offsets_);
  impl->locals = resolver.locals_;
  Program p;
  p.impl_ = std::move(impl);
  return p;
}

const std::string& Program::text() const noexcept { return impl_->text; }
const std::vector<std::string>& Program::free_names() const noexcept { return impl_->free; }
std::size_t Program::free_name_offset(std::size_t i) const noexcept { return impl_->free_offsets[i]; }

Value Program::eval(std::span<const Value> free_values, const Limits& limits) const {
  if (free_values.size() < impl_->free.size())
    throw EvalError("'" + impl_->text.substr(0, 80) + "' needs " + std::to_string(impl_->free.size()) +
                    " values, got " + std::to_string(free_values.size()));
  Evaluator e(*impl_, free_values, limits);
  return e.eval(*impl_->root);
}

std::span<const std::string_view> function_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const FunctionInfo& f : kFunctions) out.push_back(f.name);
    return out;
  }();
  return names;
}

std::string rename(std::string_view text, const Renamer& replace) {
  if (text.size() > kMaxText) throw ExprSyntaxError("the expression is longer than 1 MiB", 0);
  const std::vector<Token> t = tokenize(text);
  std::string out;
  std::size_t copied = 0;
  const auto is_op = [&](std::size_t i, std::string_view op) {
    return i < t.size() && t[i].kind == Token::Kind::op && t[i].text == op;
  };
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i].kind != Token::Kind::name || is_op(i + 1, "(") || (i > 0 && is_op(i - 1, "."))) continue;
    std::optional<std::string> with;
    std::size_t last = i;
    if (is_op(i + 1, "[") && t[i + 2].kind == Token::Kind::integer && is_op(i + 3, "]")) {
      with = replace(t[i].text, t[i + 2].integer);
      if (with) last = i + 3;
    }
    if (!with) with = replace(t[i].text, std::nullopt);
    if (!with) continue;
    out.append(text.substr(copied, t[i].offset - copied));
    out += *with;
    copied = t[last].end;
    i = last;
  }
  out.append(text.substr(copied));
  return out;
}

Value eval_constant(std::string_view text, const Limits& limits) {
  const Program p = Program::parse(text);
  if (!p.free_names().empty())
    throw ExprSyntaxError("unknown name '" + p.free_names().front() + "' (a constant may use no variables)",
                          p.free_name_offset(0));
  return p.eval({}, limits);
}

std::int64_t to_integer(const Value& v, std::string_view what) {
  if (v.is_integral()) return v.as_int();
  if (v.kind() == Value::Kind::real) {
    const double d = v.as_real();
    if (std::isfinite(d) && d == std::trunc(d) && d < 9223372036854775808.0 && d >= -9223372036854775808.0)
      return static_cast<std::int64_t>(d);
    throw EvalError(std::string(what) + " is " + v.repr() + ", not a whole number");
  }
  throw EvalError(std::string(what) + " is " + v.repr().substr(0, 40) + " (a " + type_name(v) + "), not a number");
}

}  // namespace tiletune::py
