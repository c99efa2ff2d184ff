// The worker side of the sandbox: `convguard worker` (hidden subcommand) initialises once, says
// ready, then runs trials from stdin until EOF. Everything that can hang or crash (solver
// check, plan, run, verification) happens here, never in the parent.
#pragma once

#include "probe/protocol.hpp"

namespace convguard::probe {

// Runs one trial in this process and says what happened.
TrialReply run_request(const TrialRequest& r);
// The worker's main loop on stdin/stdout; returns the process exit code.
int worker_main();

}  // namespace convguard::probe
