#include "cli/help_format.hpp"

#include <fmt/format.h>

#include <sstream>

#include "cli/exit_codes.hpp"

namespace tiletune::cli {

std::string CompactHelp::make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const {
  if (!app->get_subcommands({}).empty()) return CLI::Formatter::make_help(app, std::move(name), mode);
  std::ostringstream out;
  out << make_description(app) << make_usage(app, name) << "Options:\n";
  for (const CLI::Option* opt : app->get_options([](const CLI::Option* o) { return o->get_positional(); }))
    if (!opt->get_group().empty()) out << make_option(opt, true);
  for (const CLI::Option* opt : app->get_options([&](const CLI::Option* o) {
         return o->nonpositional() && !o->get_group().empty() && o != app->get_help_ptr();
       }))
    out << make_option(opt, false);
  out << app->get_footer();
  if (!app->get_footer().empty() && app->get_footer().back() != '\n') out << '\n';
  return out.str();
}

std::string CompactHelp::make_option(const CLI::Option* opt, bool is_positional) const {
  std::string left = "  " + make_option_name(opt, is_positional) + (is_positional ? "" : make_option_opts(opt));
  std::string description = make_option_desc(opt);
  description = description.substr(0, description.find('\n'));
  const std::size_t width = get_column_width();
  left += left.size() + 2 > width ? std::string(2, ' ') : std::string(width - left.size(), ' ');
  return left + description + "\n";
}

std::string CompactHelp::make_option_opts(const CLI::Option* opt) const {
  if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
  if (opt->get_type_size() == 0) return {};  // a flag
  std::string type = opt->get_type_name();
  type = type.substr(0, type.find(':'));  // CLI11 appends each validator's description
  if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) type += " ...";
  return type.empty() ? std::string() : " " + type;
}

std::string docs_page(const std::string& command) { return "docs/reference/" + command + ".md"; }

std::string help_footer(const std::string& command, const std::string& examples, std::initializer_list<int> statuses) {
  std::string text = examples;
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += "Exit status:";
  bool first = true;
  for (const int status : statuses)
    for (const ExitStatusWords& w : exit_status_words)
      if (w.status == status) {
        text += fmt::format("{} {} {}", first ? "" : ";", status, w.words);
        first = false;
      }
  text += ".\nDocs: " + docs_page(command) + "\n";
  return text;
}

}  // namespace tiletune::cli
