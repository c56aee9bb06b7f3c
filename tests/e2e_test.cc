// End to end: the real matserve-server binary on a loopback port, called
// through the client library and the raw stub, on the CPU backend and (label
// gpu) the CUDA backend.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "client/client.h"
#include "client/reference.h"
#include "server/engine/cuda_executor.h"
#include "stdprotos/health.grpc.pb.h"
#include "tests/server_process.h"
#include "tests/test_util.h"

namespace matserve {
namespace {

using matserve::testing::ServerProcess;
using matserve::testing::Shape;

// Starts a server with --backend=GetParam() for each test; skips CUDA where no
// GPU is visible.
class EndToEnd : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "cuda") {
      absl::StatusOr<int> devices = engine::CudaDeviceCount();
      if (!devices.ok() || *devices == 0) {
        GTEST_SKIP()
            << "no CUDA device visible: the CUDA end-to-end test is not run";
      }
    }
    absl::StatusOr<std::unique_ptr<ServerProcess>> server =
        ServerProcess::Start({"--backend=" + GetParam()});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    channel_ = grpc::CreateChannel(server_->target(),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::MatrixService::NewStub(channel_);
  }

  void TearDown() override {
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(SIGTERM), 0) << server_->Log();
    }
  }

  Client client() const { return *Client::Connect(server_->target()); }

  // Sends `request` on the raw stub (no client-side checks) and returns the
  // status.
  grpc::Status CallMultiply(const v1::MultiplyRequest& request) {
    grpc::ClientContext context;
    v1::MultiplyResponse response;
    return stub_->Multiply(&context, request, &response);
  }

  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::MatrixService::Stub> stub_;
};

TEST_P(EndToEnd, MultiplyMatchesReferenceOnOddShapes) {
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Client c = client();
  for (const Shape& s : matserve::testing::OddShapes()) {
    SCOPED_TRACE(ShapeName(s));
    const Matrix a = RandomMatrix(s.m, s.k, rng);
    const Matrix b = RandomMatrix(s.k, s.n, rng);
    absl::StatusOr<Matrix> product = c.Multiply(a, b);
    ASSERT_TRUE(product.ok()) << product.status();
    EXPECT_EQ(product->rows, s.m);
    EXPECT_EQ(product->cols, s.n);
    matserve::testing::ExpectMatchesReference(product->values,
                                              ReferenceMultiply(a, b));
  }
}

TEST_P(EndToEnd, TransposeIsBitExactOnOddShapes) {
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Client c = client();
  for (const Shape& s : std::vector<Shape>{{1, 0, 1},
                                           {1000, 0, 3000},
                                           {1, 0, 4099},
                                           {4099, 0, 1},
                                           {4097, 0, 33},
                                           {127, 0, 131}}) {
    SCOPED_TRACE(ShapeName(s));
    const Matrix input =
        matserve::testing::MatrixWithSpecialValues(s.m, s.n, rng);
    absl::StatusOr<Matrix> output = c.Transpose(input);
    ASSERT_TRUE(output.ok()) << output.status();
    EXPECT_EQ(output->rows, s.n);
    EXPECT_EQ(output->cols, s.m);
    matserve::testing::ExpectExactTranspose(input, output->values);
  }
}

// 1100 x 1100 float32 is 4.8 MB a matrix, over gRPC's default 4 MiB message
// limit.
TEST_P(EndToEnd, MessagesOverGrpcsDefaultLimitAreServed) {
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Matrix a = RandomMatrix(1100, 1100, rng);
  const Matrix b = RandomMatrix(1100, 1100, rng);
  absl::StatusOr<Matrix> product = client().Multiply(a, b);
  ASSERT_TRUE(product.ok()) << product.status();
  matserve::testing::ExpectMatchesReference(product->values,
                                            ReferenceMultiply(a, b));
}

TEST_P(EndToEnd, BadRequestsGetTheirStatusAndTheServerKeepsServing) {
  std::mt19937_64 rng = matserve::testing::FreshRng();
  v1::MultiplyRequest valid;
  ToProto(RandomMatrix(3, 4, rng), valid.mutable_a());
  ToProto(RandomMatrix(4, 5, rng), valid.mutable_b());

  struct Case {
    std::string name;
    std::function<void(v1::MultiplyRequest&)> spoil;
    grpc::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"missing b", [](auto& r) { r.clear_b(); }, grpc::INVALID_ARGUMENT,
       "missing matrix b"},
      {"zero rows", [](auto& r) { r.mutable_a()->set_rows(0); },
       grpc::INVALID_ARGUMENT, "every dimension must be at least 1"},
      {"short data", [](auto& r) { r.mutable_a()->mutable_data()->resize(47); },
       grpc::INVALID_ARGUMENT, "a.data has 47 bytes"},
      {"inner dimensions",
       [&rng](auto& r) { ToProto(RandomMatrix(2, 5, rng), r.mutable_b()); },
       grpc::INVALID_ARGUMENT, "inner dimensions differ"},
      {"65536 x 65536 with no data",
       [](auto& r) {
         r.mutable_a()->set_rows(65536);
         r.mutable_a()->set_cols(65536);
         r.mutable_a()->clear_data();
       },
       grpc::RESOURCE_EXHAUSTED, "4294967296 elements"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::MultiplyRequest request = valid;
    c.spoil(request);
    const grpc::Status status = CallMultiply(request);
    EXPECT_EQ(status.error_code(), c.code) << status.error_message();
    EXPECT_NE(status.error_message().find(c.message), std::string::npos)
        << status.error_message();
  }
  grpc::ClientContext context;
  v1::TransposeResponse response;
  const grpc::Status missing =
      stub_->Transpose(&context, v1::TransposeRequest(), &response);
  EXPECT_EQ(missing.error_code(), grpc::INVALID_ARGUMENT)
      << missing.error_message();

  EXPECT_TRUE(CallMultiply(valid).ok())
      << "the server stopped serving after bad requests";
}

TEST_P(EndToEnd, HealthIsServing) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  for (const std::string service : {"", "matserve.v1.MatrixService"}) {
    grpc::ClientContext context;
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    const grpc::Status status = health->Check(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING)
        << service;
  }
}

TEST_P(EndToEnd, ConcurrentClientsAllGetTheirOwnAnswers) {
  constexpr int kThreads = 8, kCallsPerThread = 6;
  std::vector<std::future<void>> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.push_back(std::async(std::launch::async, [this, t] {
      std::mt19937_64 rng(
          t + 1000 * ::testing::UnitTest::GetInstance()->random_seed());
      const Client c = client();
      for (int i = 0; i < kCallsPerThread; ++i) {
        const uint32_t m = 1 + rng() % 200, k = 1 + rng() % 200,
                       n = 1 + rng() % 200;
        const Matrix a = RandomMatrix(m, k, rng);
        const Matrix b = RandomMatrix(k, n, rng);
        absl::StatusOr<Matrix> product = c.Multiply(a, b);
        ASSERT_TRUE(product.ok()) << product.status();
        matserve::testing::ExpectMatchesReference(product->values,
                                                  ReferenceMultiply(a, b));
      }
    }));
  }
  for (std::future<void>& thread : threads) thread.get();
}

// SIGTERM while calls are queued: every call the server had accepted still gets
// its right answer and the process exits 0. A call whose request had not yet
// reached the handler is refused by gRPC itself, as UNAVAILABLE or (still
// being received) CANCELLED: safe to retry, never a wrong answer. The
// signal goes once the first of the concurrent calls is answered (not after a
// fixed sleep, which a loaded machine can outlast): the server is then working
// through the others.
TEST_P(EndToEnd, SigtermFinishesCallsInFlightAndExitsZero) {
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Matrix a = RandomMatrix(700, 700, rng);
  const Matrix b = RandomMatrix(700, 700, rng);
  const std::vector<double> want = ReferenceMultiply(a, b);
  const Client c = client();
  ASSERT_TRUE(c.Multiply(a, b).ok());  // connected and warm
  absl::Notification first_answer;
  std::atomic<bool> notified{false};
  std::vector<std::future<absl::StatusOr<Matrix>>> calls;
  for (int i = 0; i < 16; ++i) {
    calls.push_back(std::async(std::launch::async, [&] {
      absl::StatusOr<Matrix> product = c.Multiply(a, b);
      if (!notified.exchange(true)) first_answer.Notify();
      return product;
    }));
  }
  ASSERT_TRUE(first_answer.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_EQ(server_->Stop(SIGTERM), 0) << server_->Log();
  int answered = 0;
  for (auto& call : calls) {
    absl::StatusOr<Matrix> product = call.get();
    if (product.ok()) {
      ++answered;
      matserve::testing::ExpectMatchesReference(product->values, want);
    } else {
      EXPECT_THAT(product.status().code(),
                  ::testing::AnyOf(absl::StatusCode::kUnavailable,
                                   absl::StatusCode::kCancelled))
          << product.status();
    }
  }
  EXPECT_GT(answered, 0) << "no call was answered";
  server_.reset();
}

// One binary per backend (MATSERVE_E2E_BACKEND), so that CTest can label the
// CUDA one gpu.
INSTANTIATE_TEST_SUITE_P(Backends, EndToEnd,
                         ::testing::Values(MATSERVE_E2E_BACKEND),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace matserve
