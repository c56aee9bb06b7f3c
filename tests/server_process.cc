// ServerProcess: posix_spawn with the output in a temporary file, which is read
// for the port.
#include "tests/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace matserve::testing {
namespace {

std::string ServerBinary() {
  const char* binary = std::getenv("MATSERVE_SERVER_BINARY");
  return binary != nullptr ? binary : MATSERVE_SERVER_BINARY;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    const std::vector<std::string>& flags) {
  char log_template[] = "/tmp/matserve-server-XXXXXX";
  const int log_fd = mkstemp(log_template);
  if (log_fd < 0) return absl::InternalError("mkstemp failed");
  close(log_fd);

  // Metrics on a free port too, so that servers started side by side do not
  // contend for the default :9464.
  std::vector<std::string> args = {ServerBinary(), "--address=127.0.0.1:0",
                                   "--metrics_address=127.0.0.1:0"};
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_template,
                                   O_WRONLY | O_APPEND, 0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int error =
      posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0)
    return absl::InternalError(absl::StrCat("cannot start ", args[0]));
  std::unique_ptr<ServerProcess> server(new ServerProcess(pid, log_template));

  const std::string marker = "serving on 127.0.0.1:";
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (absl::Now() < give_up) {
    const std::string log = server->Log();
    if (size_t at = log.find(marker); at != std::string::npos) {
      const std::string port =
          log.substr(at + marker.size(),
                     log.find(' ', at + marker.size()) - at - marker.size());
      server->target_ = "127.0.0.1:" + port;
      return server;
    }
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      server->pid_ = 0;
      return absl::InternalError(
          absl::StrCat("matserve-server exited at start:\n", log));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("matserve-server did not log its port:\n", server->Log()));
}

ServerProcess::~ServerProcess() {
  if (pid_ != 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  unlink(log_path_.c_str());
}

int ServerProcess::Stop(int signal, absl::Duration timeout) {
  if (pid_ == 0) return -1;
  kill(pid_, signal);
  const absl::Time give_up = absl::Now() + timeout;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (absl::Now() > give_up) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = 0;
      return -1;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  pid_ = 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ServerProcess::Log() const {
  std::ifstream file(log_path_);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

}  // namespace matserve::testing
