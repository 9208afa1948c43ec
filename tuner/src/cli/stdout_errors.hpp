// Whether what a command printed reached its standard output (issue 22): a full disk, a closed
// descriptor or a failed pipe is "tiletune: cannot write to standard output: <reason>", exit 1,
// never a success. Header-only: used by main alone.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <streambuf>

#include "cli/exit_codes.hpp"

namespace tiletune::cli {

/// Passes std::cout's output through to its stream buffer (stdio's stdout, so nothing changes in
/// buffering or order) and remembers why a write failed: by the time the command returns, errno
/// has long been overwritten, and std::cout writes nothing more once it has failed.
class StdoutErrors : public std::streambuf {
 public:
  StdoutErrors() : inner_(std::cout.rdbuf(this)) {}
  ~StdoutErrors() override { std::cout.rdbuf(inner_); }
  StdoutErrors(const StdoutErrors&) = delete;
  StdoutErrors& operator=(const StdoutErrors&) = delete;

  /// The command's exit status, or 1 when what it printed did not all reach stdout (a full disk,
  /// a closed descriptor): output that was lost is never reported as success.
  int checked(int status) {
    std::cout.flush();
    errno = 0;
    if (std::fflush(stdout) != 0) remember();
    if (error_ == 0 && std::cout.good() && !std::ferror(stdout)) return status;
    std::fprintf(stderr, "tiletune: cannot write to standard output: %s\n", std::strerror(error_ ? error_ : EIO));
    return exit_error;
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    errno = 0;
    const int_type put = inner_->sputc(traits_type::to_char_type(c));
    if (traits_type::eq_int_type(put, traits_type::eof())) remember();
    return put;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    errno = 0;
    const std::streamsize put = inner_->sputn(s, n);
    if (put < n) remember();
    return put;
  }
  int sync() override {
    errno = 0;
    const int r = inner_->pubsync();
    if (r != 0) remember();
    return r;
  }

 private:
  void remember() {
    if (error_ == 0) error_ = errno != 0 ? errno : EIO;
  }
  std::streambuf* inner_;
  int error_ = 0;  ///< the errno of the first write that failed
};

}  // namespace tiletune::cli
