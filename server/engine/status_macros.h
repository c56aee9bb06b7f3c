// MATSERVE_RETURN_IF_ERROR: the project's early return on a non-OK absl::Status
// (this Abseil predates ABSL_RETURN_IF_ERROR).
#ifndef MATSERVE_SERVER_ENGINE_STATUS_MACROS_H_
#define MATSERVE_SERVER_ENGINE_STATUS_MACROS_H_

#include "absl/status/status.h"

#define MATSERVE_RETURN_IF_ERROR(expr)                                    \
  do {                                                                    \
    if (absl::Status matserve_status_ = (expr); !matserve_status_.ok()) { \
      return matserve_status_;                                            \
    }                                                                     \
  } while (false)

#endif  // MATSERVE_SERVER_ENGINE_STATUS_MACROS_H_
