// Where convguard's data files live (suites, models, the MIOpen solver table, the doctor's
// rules): $CONVGUARD_DATA_DIR when set, else the source tree's data/ folder this build came from.
#pragma once

#include <string>
#include <string_view>

namespace convguard {

// The path of `relative` ("suites/standard.txt") under the data folder.
std::string data_path(std::string_view relative);

}  // namespace convguard
