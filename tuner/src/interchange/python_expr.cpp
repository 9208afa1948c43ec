// Python expressions of T1 files into tiletune expressions (see interchange/python_expr.hpp).
#include "interchange/python_expr.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "tiletune/error.hpp"
#include "tiletune/expr.hpp"

namespace tiletune::interchange_detail {
namespace {

struct Token {
  enum Kind { name, number, op } kind;
  std::string text;
};

std::vector<Token> tokenize(std::string_view s) {
  static constexpr std::string_view two[] = {"//", "**", "==", "!=", "<=", ">=", "<<", ">>"};
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      out.push_back({Token::name, std::string(s.substr(i, j - i))});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' || s[j] == '_')) ++j;
      const std::string number(s.substr(i, j - i));
      if (number.find_first_of(".eE_") != std::string::npos && number.rfind("0x", 0) != 0)
        throw Untranslatable(fmt::format("'{}' is not an integer (tiletune's expressions are 64-bit integers)", number));
      out.push_back({Token::number, number});
      i = j;
    } else if (c == '\'' || c == '"') {
      throw Untranslatable("a string literal has no integer meaning");
    } else {
      std::string text(1, c);
      if (i + 1 < s.size() && std::find(std::begin(two), std::end(two), s.substr(i, 2)) != std::end(two))
        text = std::string(s.substr(i, 2));
      out.push_back({Token::op, text});
      i += text.size();
    }
  }
  return out;
}

bool is_comparison(const std::string& t) {
  return t == "<" || t == ">" || t == "<=" || t == ">=" || t == "==" || t == "!=";
}

std::string translate_op(const std::string& op) {
  if (op == "//") return "/";
  if (op == "/")
    throw Untranslatable("'/' is Python's true division (a float); tiletune divides integers: write '//'");
  if (op == "**") throw Untranslatable("'**' (power) has no tiletune equivalent: list the values instead");
  if (op == "&" || op == "|" || op == "^" || op == "~" || op == "<<" || op == ">>")
    throw Untranslatable(fmt::format("the bit operator '{}' has no tiletune equivalent", op));
  if (op == "[" || op == "]") throw Untranslatable("subscripts ([...]) have no tiletune equivalent");
  if (op == "+" || op == "-" || op == "*" || op == "%" || op == "(" || op == ")" || op == "," || is_comparison(op))
    return op;
  throw Untranslatable(fmt::format("'{}' is not an operator tiletune knows", op));
}

}  // namespace

std::string translate_python(std::string_view python, const std::vector<std::string>& names) {
  const std::vector<Token> tokens = tokenize(python);
  if (tokens.empty()) throw Untranslatable("the expression is empty");
  std::string out;
  // Comparisons at each parenthesis depth since the last and/or: Python chains `a < b < c`
  // (a < b and b < c) where C compares a 0/1 with c.
  std::vector<int> comparisons(1, 0);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    const bool call = i + 1 < tokens.size() && tokens[i + 1].text == "(";
    std::string piece;
    if (t.kind == Token::number) {
      piece = t.text;
    } else if (t.kind == Token::name) {
      if (t.text == "and" || t.text == "or") {
        piece = t.text == "and" ? "&&" : "||";
        comparisons.back() = 0;
      } else if (t.text == "not") {
        piece = "!";
      } else if (t.text == "True" || t.text == "False") {
        piece = t.text == "True" ? "1" : "0";
      } else if (t.text == "if" || t.text == "else" || t.text == "lambda" || t.text == "for" || t.text == "in") {
        throw Untranslatable(fmt::format("Python's '{}' has no tiletune equivalent here", t.text));
      } else if (call) {
        if (t.text != "min" && t.text != "max")
          throw Untranslatable(fmt::format("the function {}() has no tiletune equivalent (min and max do)", t.text));
        piece = t.text;
      } else if (std::find(names.begin(), names.end(), t.text) == names.end()) {
        throw Untranslatable(fmt::format("unknown name '{}' (not a tuning parameter of this file)", t.text));
      } else {
        piece = t.text;
      }
    } else {
      piece = translate_op(t.text);
      if (piece == "(") comparisons.push_back(0);
      if (piece == ")" && comparisons.size() > 1) comparisons.pop_back();
      if (piece == ",") comparisons.back() = 0;
      if (is_comparison(piece) && ++comparisons.back() > 1)
        throw Untranslatable("a chained comparison (a < b < c) means 'a < b and b < c' in Python: write it so");
    }
    if (!out.empty() && piece != ")" && piece != "," && out.back() != '(' && out.back() != '!' &&
        !(piece == "(" && (out.ends_with("min") || out.ends_with("max"))))
      out += ' ';
    out += piece;
  }
  // Let tiletune's own parser judge the result: what it refuses was not an expression.
  try {
    (void)Expr::parse(out);
  } catch (const Error& e) {
    throw Untranslatable(fmt::format("'{}' is not an expression tiletune can parse: {}", out, e.what()));
  }
  return out;
}

std::vector<std::int64_t> python_values(std::string_view python) {
  const std::vector<Token> tokens = tokenize(python);
  auto constant = [](const std::vector<Token>& ts, std::size_t from, std::size_t to) {
    std::string text;
    for (std::size_t i = from; i < to; ++i) text += ts[i].text + " ";
    std::string translated = translate_python(text, {});
    return Expr::parse(translated).eval({});
  };
  auto text = [&](std::size_t i) { return i < tokens.size() ? tokens[i].text : std::string(); };
  // range(...) or list(range(...))
  std::size_t at = 0;
  if (text(0) == "list" && text(1) == "(") at = 2;
  if (text(at) == "range" && text(at + 1) == "(") {
    std::vector<std::int64_t> args;
    std::size_t start = at + 2, depth = 0, i = start;
    for (; i < tokens.size(); ++i) {
      if (text(i) == "(") ++depth;
      if (text(i) == ")" && depth-- == 0) break;
      if (text(i) == "," && depth == 0) {
        args.push_back(constant(tokens, start, i));
        start = i + 1;
      }
    }
    args.push_back(constant(tokens, start, i));
    const std::size_t close = i + (at == 2 ? 2 : 1);
    if (i >= tokens.size() || close != tokens.size() || args.size() > 3 || (at == 2 && text(i + 1) != ")"))
      throw Untranslatable("expected range(stop), range(start, stop) or range(start, stop, step)");
    const std::int64_t lo = args.size() == 1 ? 0 : args[0];
    const std::int64_t hi = args.size() == 1 ? args[0] : args[1];
    const std::int64_t step = args.size() == 3 ? args[2] : 1;
    if (step == 0) throw Untranslatable("range() with a step of 0");
    std::vector<std::int64_t> out;
    for (std::int64_t v = lo; step > 0 ? v < hi : v > hi; v += step) {
      out.push_back(v);
      if (out.size() > 100000) throw Untranslatable("range() of more than 100000 values");
    }
    return out;
  }
  for (const Token& t : tokens)
    if (t.text == "for") throw Untranslatable("a list comprehension does not map: list the values, or use range()");
  if (text(0) != "[" || text(tokens.size() - 1) != "]")
    throw Untranslatable("expected a list of integers [1, 2, 4] or range(...); comprehensions and other "
                         "Python do not map: list the values");
  std::vector<std::int64_t> out;
  std::size_t start = 1;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    if (text(i) != "," && text(i) != "]") continue;
    if (i > start) out.push_back(constant(tokens, start, i));
    start = i + 1;
  }
  return out;
}

}  // namespace tiletune::interchange_detail
