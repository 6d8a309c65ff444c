// SPDX-License-Identifier: MIT
// Shared by the libFuzzer harnesses: the oracle for errors, and a scratch file for readers that
// take a path. A harness accepts jetpipe::Error (a refused input, the expected outcome) and fails
// on anything else: another exception type, a message that does not name what it refers to, or
// a sanitizer report.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/error.h"

namespace jetpipe::fuzz {

// Prints what went wrong and aborts (libFuzzer saves the input as a crash).
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz oracle: %s\n", what.c_str());
  std::abort();
}

// Runs f(); a jetpipe::Error is an accepted refusal (checked by `check`), any other exception a
// finding.
template <typename F, typename Check>
void expect_error_or_ok(F&& f, Check&& check) {
  try {
    f();
  } catch (const Error& e) {
    check(e);
  } catch (const std::exception& e) {
    fail(std::string("an exception that is not jetpipe::Error escaped: ") + e.what());
  } catch (...) {
    fail("a non-std exception escaped");
  }
}

// A file in $TMPDIR (else /tmp), created once per process and rewritten in place with each input
// (pwrite + ftruncate on one descriptor: truncating to zero and closing makes ext4 flush, which
// cost 30 times the reading). Ends in `suffix`, for readers that choose by extension.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& suffix) {
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/jetpipe-fuzz-XXXXXX" + suffix;
    fd_ = mkstemps(path_.data(), static_cast<int>(suffix.size()));
    if (fd_ < 0) fail("cannot create a scratch file like " + path_);
  }
  ~ScratchFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& write(const std::uint8_t* data, std::size_t size) {
    if ((size != 0 && pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size)) ||
        ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      fail("cannot write " + path_);
    }
    return path_;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace jetpipe::fuzz
