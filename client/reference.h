// Float64 reference results, and the normwise relative error that answers are
// judged by.
#ifndef MATSERVE_CLIENT_REFERENCE_H_
#define MATSERVE_CLIENT_REFERENCE_H_

#include <vector>

#include "client/matrix.h"

namespace matserve {

// A * B in float64 by the definition (a plain triple loop), row-major rows(a) x
// cols(b).
std::vector<double> ReferenceMultiply(const Matrix& a, const Matrix& b);

// ||got - want||_F / ||want||_F (the absolute ||got||_F when want is all
// zeros). NaN when got holds a NaN or an infinity, so `!(error <= tolerance)`
// fails such an answer.
double RelativeError(const std::vector<float>& got,
                     const std::vector<double>& want);

// The bound that fp32 accumulation meets against the float64 reference for the
// sizes we serve.
inline constexpr double kMultiplyTolerance = 1e-5;

}  // namespace matserve

#endif  // MATSERVE_CLIENT_REFERENCE_H_
