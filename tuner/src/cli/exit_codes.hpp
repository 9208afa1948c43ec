// The exit status of every tiletune command, declared once. docs/reference/exit-status.md lists
// the same values; a command returns one of these and nothing else.
#pragma once

namespace tiletune::cli {

/// 0: the command did what it was asked.
inline constexpr int exit_ok = 0;
/// 1: it could not: a file, the search space, the cache, NVRTC or the GPU (one line on stderr
/// naming what failed and where).
inline constexpr int exit_error = 1;
/// 2: bad command-line arguments (a malformed or out-of-range value, an unknown option, a
/// missing one), whatever the machine has: the same with or without a GPU.
inline constexpr int exit_usage = 2;
/// 3: `plan --strict`: at least one config failed to compile.
inline constexpr int exit_compile_failures = 3;
/// 4: nothing usable came out: `plan` where no config compiles, `best` with no match (level
/// `none`, or a listing that finds nothing), `tune` where no trial is `ok` (a replay: where every
/// evaluation failed).
inline constexpr int exit_no_result = 4;
/// 5: `diff --fail-on`: a condition it names holds for at least one device, kernel and problem
/// (the keys are on stderr): a release gate says no.
inline constexpr int exit_gate_failed = 5;
/// 130 (128 + SIGINT, as shells report a Ctrl-C): `tune` was interrupted (SIGINT or SIGTERM):
/// what it measured is in the cache and a rerun of the same command resumes.
inline constexpr int exit_interrupted = 130;

/// Each status in a few words, as a command's --help lists those it can return (help_footer in
/// help_format.hpp); docs/reference/exit-status.md says more.
struct ExitStatusWords {
  int status;
  const char* words;
};
inline constexpr ExitStatusWords exit_status_words[] = {
    {exit_ok, "done"},
    {exit_error, "error"},
    {exit_usage, "bad arguments"},
    {exit_compile_failures, "a config failed to compile (--strict)"},
    {exit_no_result, "nothing usable"},
    {exit_gate_failed, "a --fail-on condition holds"},
    {exit_interrupted, "interrupted (the same command resumes)"},
};

/// The main --help's list of every status.
inline constexpr const char* exit_status_help =
    "Exit status: 0 done; 1 an error (one line on stderr says what failed and where); 2 bad arguments\n"
    "(nothing was done); 3 plan --strict: a config failed to compile; 4 nothing usable: plan compiled\n"
    "no config, tune (or its replay) got no ok trial, best found no match (use your defaults); 5 diff:\n"
    "a --fail-on condition holds; 130 tune was interrupted (Ctrl-C or SIGTERM): what it measured is\n"
    "kept, the same command resumes. See docs/reference/exit-status.md.";

}  // namespace tiletune::cli
