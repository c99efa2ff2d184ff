// Umbrella header of convguard's C++ API.
#pragma once

#include "convguard/canonical.hpp"
#include "convguard/context.hpp"
#include "convguard/dtype.hpp"
#include "convguard/fill.hpp"
#include "convguard/problem.hpp"
#include "convguard/reference.hpp"
#include "convguard/registry.hpp"
#include "convguard/solver.hpp"
#include "convguard/status.hpp"
#include "convguard/tensor.hpp"
#include "convguard/trial.hpp"
#include "convguard/verify.hpp"
