// matserve::Client: Multiply and Transpose on Matrix values over gRPC, with a
// deadline and a status, and the channel that spreads calls over replicas.
// Shared by matserve-cli and matserve-load.
#ifndef MATSERVE_CLIENT_CLIENT_H_
#define MATSERVE_CLIENT_CLIENT_H_

#include <grpcpp/channel.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/matrix.h"
#include "matserve/v1/matrix_service.grpc.pb.h"
#include "stdprotos/health.grpc.pb.h"

namespace matserve {

// The gRPC target name for `target`, which is one of
// - a gRPC target name, as it is: "host:port", "dns:///name:port" (every
//   address the name resolves to, looked up again when a connection is lost),
//   "ipv4:10.0.0.1:50051,10.0.0.2:50051", "ipv6:[::1]:50051", "unix:path";
// - a comma-separated list "host:port,host:port,...", turned into one ipv4: or
//   ipv6: target that holds every address of every entry (host names are
//   looked up once, here; an entry's IPv4 addresses are taken where it has
//   any, else its IPv6 ones).
// INVALID_ARGUMENT for an empty entry, an entry without a port, or a list that
// mixes IPv4 and IPv6 addresses (one target takes one family: use dns:///);
// NOT_FOUND for a host name that does not resolve. The messages do not repeat
// `target`.
absl::StatusOr<std::string> ChannelTarget(absl::string_view target);

// The service config of MakeChannel's channels (JSON): round_robin over every
// address of the target, and MatrixService calls retried on UNAVAILABLE or
// CANCELLED (a replica that went away or is shutting down; the retry picks
// the next address).
extern const char kServiceConfig[];

// gRPC retries a call only until its answer starts to arrive: the response
// headers commit the call to its replica (gRFC A6), and a replica that dies
// while it sends a large answer (a 4096 x 4096 transpose is 64 MiB) fails the
// call UNAVAILABLE after that point. Client and matserve-load send such a call
// again, as a new call on the same channel (round_robin: to the next
// replica), at most this many times and while its deadline allows.
inline constexpr int kMaxResends = 2;

// Whether a MatrixService call that ended with `code` is sent again (with
// kMaxResends): the codes that kServiceConfig retries.
bool Resendable(grpc::StatusCode code);

// An insecure channel to ChannelTarget(target) with kServiceConfig, for
// messages up to `max_message_bytes` each way (an 8192 x 8192 result is 256
// MiB), which keeps every request it sends (at most `max_message_bytes`) until
// the answer starts to arrive, so that the call can still be retried
// elsewhere. Connects on the first call. Channels made with `own_connection`
// never share a TCP connection (HTTP/2 session) with another channel;
// otherwise gRPC shares one per address between channels with the same
// arguments.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    absl::string_view target, int max_message_bytes = 1 << 30,
    bool own_connection = false);

class Client {
 public:
  // A client on MakeChannel(target, max_message_bytes).
  static absl::StatusOr<Client> Connect(absl::string_view target,
                                        int max_message_bytes = 1 << 30);
  explicit Client(std::shared_ptr<grpc::Channel> channel);

  // a * b. The status is the server's (code and message) or the transport's;
  // a call that failed Resendable() is sent again (kMaxResends). Thread-safe.
  absl::StatusOr<Matrix> Multiply(
      const Matrix& a, const Matrix& b,
      absl::Duration timeout = absl::Seconds(60)) const;
  // input transposed, the same way. Thread-safe.
  absl::StatusOr<Matrix> Transpose(
      const Matrix& input, absl::Duration timeout = absl::Seconds(60)) const;

  // The grpc.health.v1 check of `service` ("" for the server as a whole): OK
  // when it is SERVING; UNAVAILABLE naming the status otherwise (NOT_SERVING
  // while the server drains); the call's own status when the check fails
  // (NOT_FOUND for a service the server does not know, UNAVAILABLE when
  // nothing answers). Thread-safe.
  absl::Status CheckHealth(absl::string_view service = "",
                           absl::Duration timeout = absl::Seconds(5)) const;

 private:
  std::unique_ptr<v1::MatrixService::Stub> stub_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

// The wire form of `matrix` (float32, little-endian), and back. FromProto
// checks the data length.
void ToProto(const Matrix& matrix, v1::Matrix* proto);
absl::StatusOr<Matrix> FromProto(const v1::Matrix& proto);

}  // namespace matserve

#endif  // MATSERVE_CLIENT_CLIENT_H_
