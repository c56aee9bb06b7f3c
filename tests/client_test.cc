// The client library's channel: ChannelTarget's targets and lists (good and
// bad), and against the real server a round-robin channel over two replicas,
// calls sent again when a replica is lost after it started to answer, and the
// grpc.health.v1 check.
#include "client/client.h"

#include <gmock/gmock.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/reference.h"
#include "tests/server_process.h"
#include "tests/test_util.h"

namespace matserve {
namespace {

using matserve::testing::ServerProcess;
using ::testing::HasSubstr;

TEST(ChannelTarget, GrpcTargetsPassAsTheyAre) {
  for (const std::string target :
       {"localhost:50051", "dns:///matserve-headless.matserve:50051",
        "dns://10.0.0.10:53/matserve:50051", "ipv4:10.0.0.1:1,10.0.0.2:2",
        "ipv6:[::1]:50051", "unix:/run/matserve.sock"}) {
    EXPECT_EQ(*ChannelTarget(target), target);
  }
}

TEST(ChannelTarget, AListBecomesOneTargetOfEveryAddress) {
  EXPECT_EQ(*ChannelTarget("127.0.0.1:50051,10.1.2.3:7"),
            "ipv4:127.0.0.1:50051,10.1.2.3:7");
  EXPECT_EQ(*ChannelTarget("[::1]:1,[fe80::1]:2"), "ipv6:[::1]:1,[fe80::1]:2");
  // localhost is in every /etc/hosts; its IPv4 address is taken.
  EXPECT_EQ(*ChannelTarget("localhost:1,127.0.0.2:2"),
            "ipv4:127.0.0.1:1,127.0.0.2:2");
}

TEST(ChannelTarget, BadListsSayWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "an empty target"},
      {"a:1,,b:2", "an empty target (expected host:port[,host:port...]"},
      {"127.0.0.1:1,", "an empty target"},
      {"127.0.0.1,127.0.0.2:1", "\"127.0.0.1\" has no :port"},
      {"127.0.0.1:0,127.0.0.2:1", "with a port in [1, 65535]"},
      {"127.0.0.1:http,127.0.0.2:1", "with a port in [1, 65535]"},
      {":1,127.0.0.2:1", "\":1\" is not host:port"},
      {"::1:5,127.0.0.1:1", "write an IPv6 address as [address]:port"},
      {"[::1,127.0.0.1:1", "\"[::1\" is not [address]:port"},
      {"[::1]:1,127.0.0.1:2", "mixes IPv4 and IPv6 addresses"},
  };
  for (const auto& [target, message] : cases) {
    absl::StatusOr<std::string> channel_target = ChannelTarget(target);
    ASSERT_FALSE(channel_target.ok()) << target;
    EXPECT_EQ(channel_target.status().code(),
              absl::StatusCode::kInvalidArgument)
        << target;
    EXPECT_THAT(channel_target.status().message(), HasSubstr(message))
        << target;
  }
  // RFC 2606 keeps .invalid from ever resolving.
  absl::StatusOr<std::string> unknown =
      ChannelTarget("127.0.0.1:1,matserve.invalid:1");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("cannot resolve \"matserve.invalid\""));
}

class AgainstServers : public ::testing::Test {
 protected:
  std::unique_ptr<ServerProcess> StartServer() {
    absl::StatusOr<std::unique_ptr<ServerProcess>> server =
        ServerProcess::Start({"--backend=cpu"});
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }
};

// The service config is taken (an invalid one would fail every call), and
// round_robin sends calls to both replicas: peer() names the one that
// answered.
TEST_F(AgainstServers, OneChannelRoundRobinsOverAList) {
  std::unique_ptr<ServerProcess> first = StartServer(), second = StartServer();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      MakeChannel(first->target() + "," + second->target());
  ASSERT_TRUE(channel.ok()) << channel.status();
  ASSERT_TRUE((*channel)->WaitForConnected(std::chrono::system_clock::now() +
                                           std::chrono::seconds(30)));
  std::unique_ptr<v1::MatrixService::Stub> stub =
      v1::MatrixService::NewStub(*channel);
  std::mt19937_64 rng = matserve::testing::FreshRng();
  v1::TransposeRequest request;
  ToProto(RandomMatrix(3, 5, rng), request.mutable_input());
  std::map<std::string, int> answered_by;
  // round_robin starts on whichever address connected first; the second may
  // take a moment longer.
  for (int call = 0; call < 10000 && answered_by.size() < 2; ++call) {
    grpc::ClientContext context;
    v1::TransposeResponse response;
    const grpc::Status status = stub->Transpose(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ++answered_by[context.peer()];
  }
  EXPECT_THAT(answered_by, ::testing::UnorderedElementsAre(
                               ::testing::Key("ipv4:" + first->target()),
                               ::testing::Key("ipv4:" + second->target())));
}

// A replica that starts every answer (its response headers commit the call
// to it, so gRPC retries no more) and never finishes one: a server lost while
// it sends a large answer.
class StallingReplica : public grpc::CallbackGenericService {
 public:
  StallingReplica() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterCallbackGenericService(this);
    server_ = builder.BuildAndStart();
  }
  std::string target() const { return absl::StrCat("127.0.0.1:", port_); }
  int stalled() const { return stalled_.load(); }
  // Drops every call it holds (the client sees the stream reset).
  void Lose() { server_->Shutdown(std::chrono::system_clock::now()); }

 private:
  class Reactor : public grpc::ServerGenericBidiReactor {
   public:
    explicit Reactor(std::atomic<int>* stalled) : stalled_(stalled) {
      StartSendInitialMetadata();
    }
    void OnSendInitialMetadataDone(bool ok) override {
      if (ok) ++*stalled_;
    }
    void OnCancel() override { Finish(grpc::Status::CANCELLED); }
    void OnDone() override { delete this; }

   private:
    std::atomic<int>* const stalled_;
  };

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext*) override {
    return new Reactor(&stalled_);
  }

  int port_ = 0;
  std::atomic<int> stalled_{0};
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(AgainstServers, CallsLostAfterTheAnswerStartedAreSentAgain) {
  std::unique_ptr<ServerProcess> server = StartServer();
  ASSERT_NE(server, nullptr);
  StallingReplica stalling;
  absl::StatusOr<Client> client =
      Client::Connect(stalling.target() + "," + server->target());
  ASSERT_TRUE(client.ok()) << client.status();
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Matrix input = RandomMatrix(5, 3, rng);
  // Calls take turns over the two replicas (once both are connected): the
  // callers go on until calls stall on the stalling one, which is then lost.
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 4; ++i) {
    callers.emplace_back([&] {
      do {
        absl::StatusOr<Matrix> answer =
            client->Transpose(input, absl::Seconds(60));
        EXPECT_TRUE(answer.ok()) << answer.status();
        if (!answer.ok()) {
          ++wrong;
        } else {
          matserve::testing::ExpectExactTranspose(input, answer->values);
        }
      } while (stalling.stalled() == 0 && absl::Now() < give_up);
    });
  }
  while (stalling.stalled() == 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_GT(stalling.stalled(), 0) << "no call reached the stalling replica";
  stalling.Lose();
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(AgainstServers, HealthCheck) {
  std::unique_ptr<ServerProcess> server = StartServer();
  ASSERT_NE(server, nullptr);
  absl::StatusOr<Client> client = Client::Connect(server->target());
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE(client->CheckHealth().ok());
  EXPECT_TRUE(client->CheckHealth("matserve.v1.MatrixService").ok());
  const absl::Status unknown = client->CheckHealth("no.such.Service");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound) << unknown;
  EXPECT_EQ(server->Stop(SIGKILL), -1);
  const absl::Status gone = client->CheckHealth();
  EXPECT_EQ(gone.code(), absl::StatusCode::kUnavailable) << gone;
}

}  // namespace
}  // namespace matserve
