// ServerProcess: the real matserve-server binary, started on a free loopback
// port for a test.
#ifndef MATSERVE_TESTS_SERVER_PROCESS_H_
#define MATSERVE_TESTS_SERVER_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace matserve::testing {

class ServerProcess {
 public:
  // Starts $MATSERVE_SERVER_BINARY (default: the build tree's matserve-server)
  // with
  // --address=127.0.0.1:0 and `flags`, and waits until it logs the port it
  // serves on.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      const std::vector<std::string>& flags);
  ~ServerProcess();  // SIGKILL if it still runs

  const std::string& target() const { return target_; }  // "127.0.0.1:PORT"

  // Sends `signal`, waits for the exit and returns the exit code, or -1 if the
  // process had to be killed after `timeout` or died of a signal.
  int Stop(int signal, absl::Duration timeout = absl::Seconds(60));

  std::string Log() const;  // everything it wrote to stdout and stderr so far

 private:
  ServerProcess(pid_t pid, std::string log_path)
      : pid_(pid), log_path_(std::move(log_path)) {}

  pid_t pid_;
  std::string log_path_;
  std::string target_;
};

}  // namespace matserve::testing

#endif  // MATSERVE_TESTS_SERVER_PROCESS_H_
