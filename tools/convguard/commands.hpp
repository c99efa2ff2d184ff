// Subcommands of the convguard CLI, one file each. Each returns the process exit code:
// 0 success, 1 a verification or run failed, 2 bad input (flag, problem, file).
#pragma once

namespace convguard::cli {

int driver_main(int argc, char** argv);   // convguard driver ...
int solvers_main(int argc, char** argv);  // convguard solvers ...

}  // namespace convguard::cli
