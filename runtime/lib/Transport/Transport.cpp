//===- Transport.cpp - What every transport shares; choosing one ----------===//
#include "pipecc/Runtime/Transport.h"
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Numbers.h"

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <sys/stat.h>

namespace pipecc::rt {

Transport::~Transport() = default;

void Transport::checkPeerAndTag(int peer, int tag, const char *operation,
                                int maxTag) const {
  if (peer < 0 || peer >= size_)
    fail(operation, " tag ", tag, ": peer rank ", peer, " out of range [0, ",
         size_, ")");
  if (peer == rank_)
    fail(operation, " tag ", tag, ": peer is this rank (", peer,
         "); a blocking self-message would deadlock");
  if (tag < 0 || tag > maxTag)
    fail(operation, " to/from rank ", peer, ": tag ", tag,
         " out of range [0, ", maxTag, "]");
}

std::vector<int> Transport::groupMembers(const std::vector<int> &group) const {
  std::vector<int> members = group;
  if (members.empty())
    for (int rank = 0; rank < size_; ++rank)
      members.push_back(rank);
  std::sort(members.begin(), members.end());
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i] < 0 || members[i] >= size_)
      fail("allreduce group holds rank ", members[i], " outside [0, ", size_,
           ")");
    if (i && members[i] == members[i - 1])
      fail("allreduce group lists rank ", members[i], " twice");
  }
  if (!std::binary_search(members.begin(), members.end(), rank_))
    fail("allreduce called by rank ", rank_, " on a group it is not in");
  return members;
}

namespace {
const char *environment(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

int64_t environmentInteger(const char *name, int64_t low, int64_t high) {
  std::string error;
  std::optional<int64_t> value =
      parseIntegerOption(name, environment(name), low, high, error);
  if (!value)
    fail("environment variable ", error);
  return *value;
}

bool underMpiLauncher() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                           "SLURM_NTASKS"})
    if (environment(name))
      return true;
  return false;
}
} // namespace

TransportKind chooseTransport(const std::string &option) {
  std::string name = option;
  const char *origin = "--transport";
  if (name.empty()) {
    if (const char *value = environment("PIPECC_TRANSPORT")) {
      name = value;
      origin = "PIPECC_TRANSPORT";
    }
  }
  if (name.empty())
    return environment("PIPECC_RENDEZVOUS") || !underMpiLauncher()
               ? TransportKind::Socket
               : TransportKind::Mpi;
  if (name == "mpi")
    return TransportKind::Mpi;
  if (name == "socket")
    return TransportKind::Socket;
  fail(origin, ": unknown transport '", name, "' (expected mpi or socket)");
}

RankEnvironment rankFromEnvironment() {
  static const char *const pairs[][2] = {
      {"PIPECC_RANK", "PIPECC_SIZE"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"}};
  constexpr int64_t kMaxRanks = 1 << 20;
  for (const auto &pair : pairs) {
    if (!environment(pair[0]) && !environment(pair[1]))
      continue;
    if (!environment(pair[0]) || !environment(pair[1]))
      fail("environment: ", environment(pair[0]) ? pair[1] : pair[0],
           " is missing beside ",
           environment(pair[0]) ? pair[0] : pair[1]);
    RankEnvironment result;
    result.size = static_cast<int>(environmentInteger(pair[1], 1, kMaxRanks));
    result.rank =
        static_cast<int>(environmentInteger(pair[0], 0, result.size - 1));
    result.source = pair[0];
    return result;
  }
  return RankEnvironment{};
}

/// The rendezvous folder of ranks that mpirun or srun started without
/// PIPECC_RENDEZVOUS: one per launcher job, in $TMPDIR (or /tmp), created
/// by whichever rank comes first. Unix-domain sockets reach only this node:
/// ranks on other nodes time out in the bootstrap, naming themselves.
/// Empty when no job id is found.
static std::string launcherRendezvous() {
  std::string job;
  if (const char *slurm = environment("SLURM_JOB_ID")) {
    job = std::string("slurm-") + slurm;
    if (const char *step = environment("SLURM_STEP_ID"))
      job += std::string(".") + step;
  } else if (const char *pmix = environment("PMIX_NAMESPACE")) {
    job = std::string("pmix-") + pmix;
  } else if (const char *ompi = environment("OMPI_MCA_ess_base_jobid")) {
    job = std::string("ompi-") + ompi;
  }
  if (job.empty())
    return "";
  // A socket path has room for about 100 bytes: keep the name short and
  // made of safe characters.
  std::string name;
  for (char c : job)
    name.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                           c == '-'
                       ? c
                       : '_');
  if (name.size() > 40)
    name = name.substr(0, 20) + "-" +
           std::to_string(std::hash<std::string>{}(job) % 1000000007u);
  const char *tmp = environment("TMPDIR");
  std::string folder = std::string(tmp && *tmp ? tmp : "/tmp") +
                       "/pipecc-rendezvous-" + name;
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
    fail("socket transport: cannot create the rendezvous folder '", folder,
         "': ", std::strerror(errno));
  return folder;
}

SocketConfig socketConfigFromEnvironment() {
  RankEnvironment ranks = rankFromEnvironment();
  SocketConfig config;
  config.rank = ranks.rank;
  config.size = ranks.size;
  if (const char *dir = environment("PIPECC_RENDEZVOUS"))
    config.rendezvous = dir;
  else if (config.size > 1) {
    // Ranks started by mpirun or srun on one node meet in the job's folder.
    config.rendezvous = launcherRendezvous();
    config.removeRendezvous = true;
  }
  if (config.size > 1 && config.rendezvous.empty())
    fail("socket transport: ", config.size, " ranks (", ranks.source,
         ") but no PIPECC_RENDEZVOUS folder and no launcher job id; start "
         "the ranks with out/launch --transport socket");
  if (environment("PIPECC_BOOTSTRAP_TIMEOUT"))
    config.bootstrapTimeoutSeconds = static_cast<int>(
        environmentInteger("PIPECC_BOOTSTRAP_TIMEOUT", 1, 86400));
  return config;
}

} // namespace pipecc::rt
