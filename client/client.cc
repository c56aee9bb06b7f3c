// Client: one blocking unary call per operation on a shared channel; the
// channel's target, service config and arguments for balancing and retries.
#include "client/client.h"

#include <arpa/inet.h>
#include <grpc/grpc.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace matserve {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the wire format is little-endian");

absl::Status ToAbslStatus(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

void SetDeadline(grpc::ClientContext& context, absl::Duration timeout) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

// `call` (one blocking stub call on the context it is given), sent again while
// it fails Resendable() (kMaxResends times at most), every time with the same
// deadline, `timeout` from now.
template <typename Call>
grpc::Status CallWithResends(absl::Duration timeout, Call call) {
  const auto deadline = absl::ToChronoTime(absl::Now() + timeout);
  for (int resends = 0;; ++resends) {
    grpc::ClientContext context;
    context.set_deadline(deadline);
    grpc::Status status = call(&context);
    if (status.ok() || !Resendable(status.error_code()) ||
        resends == kMaxResends ||
        std::chrono::system_clock::now() >= deadline) {
      return status;
    }
  }
}

// The URI schemes of gRPC 1.51's resolvers: a target with one goes to gRPC as
// it is.
constexpr absl::string_view kSchemes[] = {
    "dns:", "ipv4:", "ipv6:", "unix:", "unix-abstract:"};

// The addresses of one "host:port" (or "[v6]:port") entry of a list, as
// "a.b.c.d:port" or "[v6]:port": its IPv4 ones where it has any, else its IPv6
// ones. Sets *ipv6 to which.
absl::StatusOr<std::vector<std::string>> ResolveEntry(absl::string_view entry,
                                                      bool* ipv6) {
  std::string host, port;
  if (absl::StartsWith(entry, "[")) {  // [v6]:port
    const size_t close = entry.find("]:");
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", entry, "\" is not [address]:port"));
    }
    host = std::string(entry.substr(1, close - 1));
    port = std::string(entry.substr(close + 2));
  } else {
    const size_t colon = entry.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", entry, "\" has no :port"));
    }
    host = std::string(entry.substr(0, colon));
    port = std::string(entry.substr(colon + 1));
    if (absl::StrContains(host, ':')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", entry, "\": write an IPv6 address as [address]:port"));
    }
  }
  int port_number = 0;
  if (host.empty() || !absl::SimpleAtoi(port, &port_number) ||
      port_number < 1 || port_number > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", entry, "\" is not host:port with a port in [1, 65535]"));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int error = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
      error != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot resolve \"", host, "\": ", gai_strerror(error)));
  }
  std::vector<std::string> v4, v6;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr,
                text, sizeof(text));
      v4.push_back(absl::StrCat(text, ":", port_number));
    } else if (a->ai_family == AF_INET6) {
      inet_ntop(AF_INET6,
                &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                sizeof(text));
      v6.push_back(absl::StrCat("[", text, "]:", port_number));
    }
  }
  freeaddrinfo(found);
  std::vector<std::string>& addresses = v4.empty() ? v6 : v4;
  // /etc/hosts may name one address twice.
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()),
                  addresses.end());
  *ipv6 = v4.empty();
  return addresses;
}

// Headers of a request (method path, deadline, user agent), in bytes, well
// above what they take.
constexpr int kRequestMetadataBytes = 64 << 10;

}  // namespace

absl::StatusOr<std::string> ChannelTarget(absl::string_view target) {
  if (target.empty()) {
    return absl::InvalidArgumentError("an empty target");
  }
  for (absl::string_view scheme : kSchemes) {
    if (absl::StartsWith(target, scheme)) return std::string(target);
  }
  if (!absl::StrContains(target, ',')) return std::string(target);
  const std::vector<absl::string_view> entries = absl::StrSplit(target, ',');
  if (std::find(entries.begin(), entries.end(), "") != entries.end()) {
    return absl::InvalidArgumentError(
        "an empty target (expected host:port[,host:port...] or a gRPC target "
        "such as dns:///name:port)");
  }
  std::vector<std::string> addresses;
  bool any_ipv4 = false, any_ipv6 = false;
  for (absl::string_view entry : entries) {
    bool ipv6 = false;
    absl::StatusOr<std::vector<std::string>> resolved =
        ResolveEntry(entry, &ipv6);
    if (!resolved.ok()) return resolved.status();
    (ipv6 ? any_ipv6 : any_ipv4) = true;
    addresses.insert(addresses.end(), resolved->begin(), resolved->end());
  }
  if (any_ipv4 && any_ipv6) {
    return absl::InvalidArgumentError(
        "a list that mixes IPv4 and IPv6 addresses, which one gRPC target "
        "cannot hold (a dns:/// target can)");
  }
  return absl::StrCat(any_ipv6 ? "ipv6:" : "ipv4:",
                      absl::StrJoin(addresses, ","));
}

// round_robin: a channel connects to every address its target resolves to and
// sends each call to the next ready one (gRPC's default, pick_first, would send
// everything to the first).
//
// retryPolicy (gRFC A6): a call that ends UNAVAILABLE (its replica went away:
// the connection broke or refused it, or the replica is draining and its
// engine refuses new work) or CANCELLED (a server that shuts down cancels the
// calls it had not started, and those its grace period ran out on) is sent
// again after a backoff of 50 ms, then 100,
// 200 and 400 ms (gRPC adds +-20% jitter); round_robin gives each attempt the
// next ready address, and a broken connection has left the ready set by
// then. Multiply and Transpose have no side effects, so a call that may have
// run on the lost replica is safe to repeat. 5 attempts is gRPC's cap. Nothing
// else is retried: RESOURCE_EXHAUSTED says the service is overloaded, where
// retries would add load, and the other codes would come back the same. There
// is no retryThrottling: its token bucket stops retries once failures spend
// half of its tokens, which is just when a replica with many calls in flight
// goes away; the cap on attempts bounds the extra load instead.
const char kServiceConfig[] = R"json({
  "loadBalancingConfig": [{"round_robin": {}}],
  "methodConfig": [{
    "name": [{"service": "matserve.v1.MatrixService"}],
    "retryPolicy": {
      "maxAttempts": 5,
      "initialBackoff": "0.05s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "CANCELLED"]
    }
  }]
})json";

bool Resendable(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE ||
         code == grpc::StatusCode::CANCELLED;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    absl::string_view target, int max_message_bytes, bool own_connection) {
  absl::StatusOr<std::string> channel_target = ChannelTarget(target);
  if (!channel_target.ok()) return channel_target.status();
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(max_message_bytes);
  arguments.SetMaxSendMessageSize(max_message_bytes);
  arguments.SetServiceConfigJSON(kServiceConfig);
  // Ours, never one a DNS TXT record might carry.
  arguments.SetInt(GRPC_ARG_SERVICE_CONFIG_DISABLE_RESOLUTION, 1);
  arguments.SetInt(GRPC_ARG_ENABLE_RETRIES, 1);
  // A call stays retryable while gRPC holds everything it sent; past this
  // many bytes it is committed to its first replica. gRPC's default, 256 KiB,
  // is one 256 x 256 operand, so a replica killed mid-call would lose any
  // larger request. The buffer holds references to the request's
  // serialized slices, not a copy; what it costs is that a request stays in
  // memory until its answer starts to arrive instead of until it is written,
  // at most one request (max_message_bytes) per call in flight.
  arguments.SetInt(GRPC_ARG_PER_RPC_RETRY_BUFFER_SIZE,
                   static_cast<int>(std::min<int64_t>(
                       int64_t{max_message_bytes} + kRequestMetadataBytes,
                       std::numeric_limits<int>::max())));
  if (own_connection) {
    // A subchannel pool of its own: no other channel can reuse its connection.
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  }
  return grpc::CreateCustomChannel(
      *channel_target, grpc::InsecureChannelCredentials(), arguments);
}

absl::StatusOr<Client> Client::Connect(absl::string_view target,
                                       int max_message_bytes) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      MakeChannel(target, max_message_bytes);
  if (!channel.ok()) return channel.status();
  return Client(*std::move(channel));
}

Client::Client(std::shared_ptr<grpc::Channel> channel)
    : stub_(v1::MatrixService::NewStub(channel)),
      health_(grpc::health::v1::Health::NewStub(channel)) {}

absl::StatusOr<Matrix> Client::Multiply(const Matrix& a, const Matrix& b,
                                        absl::Duration timeout) const {
  v1::MultiplyRequest request;
  ToProto(a, request.mutable_a());
  ToProto(b, request.mutable_b());
  v1::MultiplyResponse response;
  if (grpc::Status status = CallWithResends(timeout,
                                            [&](grpc::ClientContext* context) {
                                              return stub_->Multiply(
                                                  context, request, &response);
                                            });
      !status.ok()) {
    return ToAbslStatus(status);
  }
  return FromProto(response.c());
}

absl::StatusOr<Matrix> Client::Transpose(const Matrix& input,
                                         absl::Duration timeout) const {
  v1::TransposeRequest request;
  ToProto(input, request.mutable_input());
  v1::TransposeResponse response;
  if (grpc::Status status = CallWithResends(timeout,
                                            [&](grpc::ClientContext* context) {
                                              return stub_->Transpose(
                                                  context, request, &response);
                                            });
      !status.ok()) {
    return ToAbslStatus(status);
  }
  return FromProto(response.output());
}

absl::Status Client::CheckHealth(absl::string_view service,
                                 absl::Duration timeout) const {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(std::string(service));
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  SetDeadline(context, timeout);
  if (grpc::Status status = health_->Check(&context, request, &response);
      !status.ok()) {
    return ToAbslStatus(status);
  }
  if (response.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
    return absl::OkStatus();
  }
  return absl::UnavailableError(
      absl::StrCat(service.empty() ? "the server" : service, " is ",
                   grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
                       response.status())));
}

void ToProto(const Matrix& matrix, v1::Matrix* proto) {
  proto->set_rows(matrix.rows);
  proto->set_cols(matrix.cols);
  proto->set_data(matrix.values.data(), matrix.values.size() * sizeof(float));
}

absl::StatusOr<Matrix> FromProto(const v1::Matrix& proto) {
  const uint64_t elements = uint64_t{proto.rows()} * proto.cols();
  if (proto.data().size() != elements * sizeof(float)) {
    return absl::DataLossError(absl::StrCat("response matrix is ", proto.rows(),
                                            "x", proto.cols(), " but carries ",
                                            proto.data().size(), " bytes"));
  }
  Matrix matrix{proto.rows(), proto.cols(), std::vector<float>(elements)};
  std::memcpy(matrix.values.data(), proto.data().data(), proto.data().size());
  return matrix;
}

}  // namespace matserve
