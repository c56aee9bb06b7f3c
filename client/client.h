// matserve::Client: Multiply and Transpose on Matrix values over gRPC, with a
// deadline and a status. Shared by matserve-cli and matserve-load.
#ifndef MATSERVE_CLIENT_CLIENT_H_
#define MATSERVE_CLIENT_CLIENT_H_

#include <grpcpp/channel.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/matrix.h"
#include "matserve/v1/matrix_service.grpc.pb.h"

namespace matserve {

// An insecure channel to `target` ("host:port") that takes messages up to
// `max_message_bytes` (an 8192 x 8192 result is 256 MiB). Connects on the
// first call. Channels made with `own_connection` never share a TCP
// connection (HTTP/2 session) with another channel; otherwise gRPC shares one
// between channels to the same target with the same arguments.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           int max_message_bytes = 1 << 30,
                                           bool own_connection = false);

class Client {
 public:
  // A client on MakeChannel(target, max_message_bytes).
  static Client Connect(const std::string& target,
                        int max_message_bytes = 1 << 30);
  explicit Client(std::shared_ptr<grpc::Channel> channel);

  // a * b. The status is the server's (code and message) or the transport's.
  // Thread-safe.
  absl::StatusOr<Matrix> Multiply(
      const Matrix& a, const Matrix& b,
      absl::Duration timeout = absl::Seconds(60)) const;
  // input transposed. Thread-safe.
  absl::StatusOr<Matrix> Transpose(
      const Matrix& input, absl::Duration timeout = absl::Seconds(60)) const;

 private:
  std::unique_ptr<v1::MatrixService::Stub> stub_;
};

// The wire form of `matrix` (float32, little-endian), and back. FromProto
// checks the data length.
void ToProto(const Matrix& matrix, v1::Matrix* proto);
absl::StatusOr<Matrix> FromProto(const v1::Matrix& proto);

}  // namespace matserve

#endif  // MATSERVE_CLIENT_CLIENT_H_
