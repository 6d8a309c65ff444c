// SPDX-License-Identifier: MIT
// The `jetpipe` subcommands, each in its own file.
#pragma once

#include <string>

namespace jetpipe::cli {

struct RegressOptions {
  std::string dir;       // holds configs/, frames/, golden/
  std::string work_dir;  // where the runs write
  std::string platform = "cpu";
  bool update = false;
};

int cmd_info();
int cmd_stages();
int cmd_regress(const RegressOptions& options);

}  // namespace jetpipe::cli
