// Running an Executor from the tests: one op, or a whole batch checked against
// the float64 reference.
#ifndef MATSERVE_TESTS_EXECUTOR_UTIL_H_
#define MATSERVE_TESTS_EXECUTOR_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "client/reference.h"
#include "server/engine/executor.h"
#include "tests/test_util.h"

namespace matserve::testing {

inline absl::Status RunOne(engine::Executor& executor, const engine::Op& op) {
  engine::BatchRecord record;
  return executor.Run({&op, 1}, record);
}

// One multiply batch of `shapes` (fresh random inputs, outputs poisoned with
// NaN) on `executor`; every product must match the reference. Returns what
// the executor recorded.
inline engine::BatchRecord ExpectMultiplyBatchMatches(
    engine::Executor& executor, const std::vector<Shape>& shapes) {
  std::mt19937_64 rng = FreshRng();
  std::vector<Matrix> a, b;
  std::vector<std::vector<float>> c;
  std::vector<engine::Op> batch;
  for (const Shape& s : shapes) {
    a.push_back(RandomMatrix(s.m, s.k, rng));
    b.push_back(RandomMatrix(s.k, s.n, rng));
    c.emplace_back(uint64_t{s.m} * s.n, NAN);
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    batch.push_back(engine::MultiplyOp{s.m, s.k, s.n, a[i].values.data(),
                                       b[i].values.data(), c[i].data()});
  }
  engine::BatchRecord record;
  const absl::Status status = executor.Run(batch, record);
  EXPECT_TRUE(status.ok()) << status;
  for (size_t i = 0; i < shapes.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "problem " << i << " " << shapes[i]);
    ExpectMatchesReference(c[i], ReferenceMultiply(a[i], b[i]));
  }
  return record;
}

// One transpose batch of m x n inputs for `shapes` (k unused), holding IEEE
// special values; every output must be its input transposed, bit for bit.
inline engine::BatchRecord ExpectTransposeBatchExact(
    engine::Executor& executor, const std::vector<Shape>& shapes) {
  std::mt19937_64 rng = FreshRng();
  std::vector<Matrix> inputs;
  std::vector<std::vector<float>> outputs;
  std::vector<engine::Op> batch;
  for (const Shape& s : shapes) {
    inputs.push_back(MatrixWithSpecialValues(s.m, s.n, rng));
    outputs.emplace_back(uint64_t{s.m} * s.n, NAN);
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    batch.push_back(engine::TransposeOp{
        shapes[i].m, shapes[i].n, inputs[i].values.data(), outputs[i].data()});
  }
  engine::BatchRecord record;
  const absl::Status status = executor.Run(batch, record);
  EXPECT_TRUE(status.ok()) << status;
  for (size_t i = 0; i < shapes.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "transpose " << i << " " << shapes[i]);
    ExpectExactTranspose(inputs[i], outputs[i]);
  }
  return record;
}

}  // namespace matserve::testing

#endif  // MATSERVE_TESTS_EXECUTOR_UTIL_H_
