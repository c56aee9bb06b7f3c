// Verifier: checks answers on threads of its own, so that the gRPC threads that
// deliver answers never stall on a comparison (a 4096 x 4096 transpose takes
// tens of milliseconds to compare) and the load stays what was asked for.
#ifndef MATSERVE_CLIENT_LOAD_VERIFIER_H_
#define MATSERVE_CLIENT_LOAD_VERIFIER_H_

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "client/load/workload.h"

namespace matserve::load {

class Verifier {
 public:
  // `threads` checkers; answers of at most `max_waiting_bytes` in all wait for
  // them (one answer at least, however large).
  Verifier(int threads, size_t max_waiting_bytes);
  ~Verifier();  // checks every answer submitted, then joins the threads

  // Any thread. Takes `response`, the answer to `op` (which outlives this
  // object), for checking, unless it would take the answers that wait over
  // `max_waiting_bytes`: then it takes nothing and returns false. The load is
  // not slowed down to wait for the checkers.
  bool Submit(const PreparedOp& op, grpc::ByteBuffer* response);

  // Waits until every answer submitted so far is checked.
  void Drain();

  struct Counts {
    int64_t checked = 0;
    int64_t wrong = 0;
    std::string first_wrong;  // what was wrong with the first wrong answer
  };
  Counts counts() const;

 private:
  struct Answer {
    const PreparedOp* op = nullptr;
    grpc::ByteBuffer response;
  };

  void Check();  // the loop of a checker thread
  bool HasWorkOrStops() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !waiting_.empty();
  }
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return waiting_.empty() && checking_ == 0;
  }

  const size_t max_waiting_bytes_;
  mutable absl::Mutex mu_;
  std::deque<Answer> waiting_ ABSL_GUARDED_BY(mu_);
  size_t waiting_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int checking_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Counts counts_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace matserve::load

#endif  // MATSERVE_CLIENT_LOAD_VERIFIER_H_
