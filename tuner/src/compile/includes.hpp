// Internal to the compile stage: the include directives of a C/C++ text, found without
// preprocessing. Every `#include`, `#include_next` and `__has_include(...)` outside comments
// counts, whatever #if it sits under: the list is a superset of what NVRTC opens, which is what
// an honest cache key needs (a header that might be read is hashed). `#include MACRO` cannot be
// followed and is not listed.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tiletune::compile_detail {

struct IncludeDirective {
  enum class Form { quoted, angle };
  Form form = Form::quoted;
  std::string name;    ///< as written between the quotes or brackets
  int line = 0;        ///< 1-based
  bool next = false;   ///< #include_next: searched like an angle include
  bool probe = false;  ///< __has_include: the file need not exist
};

/// The text with comments blanked out (newlines kept, so line numbers stay right); string and
/// character literals are kept intact.
[[nodiscard]] std::string strip_comments(const std::string& text);

/// The include directives of a text, in order of appearance.
[[nodiscard]] std::vector<IncludeDirective> include_directives(const std::string& text);

/// When options[i] is an include-directory option (-IDIR, "-I DIR", -I then DIR,
/// --include-path=DIR, --include-path then DIR): its directory, with i moved past a separate
/// DIR. nullopt for any other option.
[[nodiscard]] std::optional<std::string> include_dir_option(const std::vector<std::string>& options, std::size_t& i);
/// The same for a pre-included header (--pre-include=H, --pre-include H, -include H).
[[nodiscard]] std::optional<std::string> pre_include_option(const std::vector<std::string>& options, std::size_t& i);

}  // namespace tiletune::compile_detail
