// Verifier: a queue under a mutex and a few checker threads.
#include "client/load/verifier.h"

namespace matserve::load {

Verifier::Verifier(int threads, size_t max_waiting_bytes)
    : max_waiting_bytes_(max_waiting_bytes) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Check(); });
}

Verifier::~Verifier() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

bool Verifier::Submit(const PreparedOp& op, grpc::ByteBuffer* response) {
  const size_t bytes = response->Length();
  absl::MutexLock lock(&mu_);
  if (!waiting_.empty() && waiting_bytes_ + bytes > max_waiting_bytes_) {
    return false;
  }
  waiting_bytes_ += bytes;
  waiting_.push_back({&op, grpc::ByteBuffer()});
  waiting_.back().response.Swap(response);
  return true;
}

void Verifier::Drain() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &Verifier::Idle));
}

Verifier::Counts Verifier::counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

void Verifier::Check() {
  while (true) {
    Answer answer;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &Verifier::HasWorkOrStops));
      if (waiting_.empty()) return;  // stopping, and nothing left
      answer.op = waiting_.front().op;
      answer.response.Swap(&waiting_.front().response);
      waiting_bytes_ -= answer.response.Length();
      waiting_.pop_front();
      ++checking_;
    }
    const absl::Status right = CheckAnswer(*answer.op, &answer.response);
    absl::MutexLock lock(&mu_);
    --checking_;
    ++counts_.checked;
    if (!right.ok() && counts_.wrong++ == 0) {
      counts_.first_wrong = std::string(right.message());
    }
  }
}

}  // namespace matserve::load
