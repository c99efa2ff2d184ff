// The environment and the folders a MIOpen worker runs under: which MIOPEN_* variables it has
// (recorded with every trial through the device fingerprint), its private databases, and the
// kernel cache its device's workers share.
#pragma once

#include <string>

namespace convguard_miopen {

// The MIOPEN_* variables of this process, sorted, "NAME=VALUE" separated by spaces ("" when there
// are none), without the two the plugin sets itself (MIOPEN_USER_DB_PATH, MIOPEN_CUSTOM_CACHE_DIR).
// Control characters and '|' (the fingerprint's separator) become '?'.
std::string miopen_environment();

// A fresh folder for one worker's MIOpen user databases, in the user's private parent
// $TMPDIR/convguard-miopen-u<uid> (0700, checked); "" when it cannot be had. Folders of dead
// workers of this user and pid namespace are removed first.
std::string make_worker_dir();
// Removes a worker's folder (at exit) and what dead workers left.
void remove_worker_dir(const std::string& dir);

// The kernel cache of one device: <private parent>/kernels-<hash of the fingerprint>, shared by
// every worker of this user on that device (MIOpen writes it with its own locking); "" when the
// private parent cannot be had.
std::string kernel_cache_dir(const std::string& fingerprint);

}  // namespace convguard_miopen
