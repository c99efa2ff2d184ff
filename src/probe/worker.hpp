// The worker side of the sandbox: `convguard worker` (hidden subcommand) initialises once, says
// ready, then runs trials from stdin until EOF. Everything that can hang or crash (solver
// check, plan, run, verification) happens here, never in the parent. The test data of the last
// problem and its fp64 reference are kept between trials (checked for tampering after each).
#pragma once

#include "probe/protocol.hpp"

namespace convguard::probe {

// Runs one trial in this process and says what happened.
TrialReply run_request(const TrialRequest& r);
// The worker's main loop on stdin/stdout (`convguard worker [--device cpu]`); returns the process
// exit code. Its ready line carries the device fingerprint, so evidence is keyed by what the
// worker runs on (its thread count under --jobs included), not by the parent.
int worker_main(int argc, char** argv);

}  // namespace convguard::probe
