//===- LaunchScriptTest.cpp - the out/launch template ---------------------===//
#include "pipecc/Runtime/LaunchScript.h"
#include "TestUtil.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <vector>
#include <sys/stat.h>

using namespace pipecc::rt;
using namespace pipecc::rt::testing;

namespace {

std::string runAndCapture(const std::string &command) {
  std::string output;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return "<popen failed>";
  std::array<char, 256> chunk;
  while (size_t n = fread(chunk.data(), 1, chunk.size(), pipe))
    output.append(chunk.data(), n);
  pclose(pipe);
  return output;
}

TEST(LaunchScript, FillsPlaceholders) {
  std::string script = renderLaunchScript(3);
  EXPECT_EQ(script.find("@PIPECC_"), std::string::npos);
  EXPECT_NE(script.find("num_ranks=3\n"), std::string::npos);
  EXPECT_EQ(script.rfind("#!/usr/bin/env bash", 0), 0u);
}

TEST(LaunchScript, BuildsMpmdCommandForwardingArguments) {
  TempDir dir;
  std::string launch = dir.file("launch");
  writeBytes(launch, renderLaunchScript(3));
  chmod(launch.c_str(), 0755);
  // A stand-in mpirun that prints its arguments one per line.
  std::string fake = dir.file("fake-mpirun");
  writeBytes(fake, "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n");
  chmod(fake.c_str(), 0755);

  std::string output = runAndCapture(
      "PIPECC_MPIRUN='" + fake + "' PIPECC_MPIRUN_ARGS='--tag-output' '" +
      launch + "' --steps 2 --data 'my dir' 2>&1");
  std::string rankArgs = "[--steps]\n[2]\n[--data]\n[my dir]\n";
  std::string expected;
  for (int k = 0; k < 3; ++k) {
    if (k)
      expected += "[:]\n";
    expected += "[-np]\n[1]\n[" + dir.file("rank" + std::to_string(k)) +
                "]\n" + rankArgs;
  }
  EXPECT_NE(output.find(expected), std::string::npos) << output;
  EXPECT_NE(output.find("[--tag-output]\n[-np]"), std::string::npos)
      << output;
  if (getuid() == 0) {
    EXPECT_NE(output.find("[--allow-run-as-root]"), std::string::npos)
        << output;
  }
}

TEST(LaunchScript, FindsRanksThroughLinksFromAnyFolder) {
  TempDir dir;
  ASSERT_EQ(mkdir(dir.file("out").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(dir.file("bin").c_str(), 0755), 0);
  std::string launch = dir.file("out/launch");
  writeBytes(launch, renderLaunchScript(1));
  chmod(launch.c_str(), 0755);
  std::string fake = dir.file("fake-mpirun");
  writeBytes(fake, "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n");
  chmod(fake.c_str(), 0755);
  // A relative link, and a link to that link.
  ASSERT_EQ(symlink("../out/launch", dir.file("bin/train").c_str()), 0);
  ASSERT_EQ(symlink(dir.file("bin/train").c_str(), dir.file("again").c_str()),
            0);
  std::string real = "[" + dir.file("out/rank0") + "]";
  for (const std::string &command :
       {"cd '" + dir.file("bin") + "' && ./train",
        "cd '" + dir.path() + "' && ./again",
        "cd / && '" + dir.file("bin/train") + "'"}) {
    std::string output =
        runAndCapture("PIPECC_MPIRUN='" + fake + "' sh -c \"" + command +
                      "\" 2>&1");
    EXPECT_NE(output.find(real), std::string::npos) << command << ": "
                                                     << output;
  }
}

TEST(LaunchScript, OversubscribesOnlyBeyondTheCores) {
  TempDir dir;
  std::string fake = dir.file("fake-mpirun");
  writeBytes(fake, "#!/bin/sh\necho \"$@\"\n");
  chmod(fake.c_str(), 0755);
  for (int ranks : {1, 4096}) {
    std::string launch = dir.file("launch" + std::to_string(ranks));
    writeBytes(launch, renderLaunchScript(ranks));
    chmod(launch.c_str(), 0755);
    std::string output =
        runAndCapture("PIPECC_MPIRUN='" + fake + "' '" + launch + "'");
    EXPECT_EQ(output.find("--oversubscribe") != std::string::npos,
              ranks == 4096)
        << ranks << " ranks: " << output.substr(0, 200);
  }
}

/// Writes out/launch for `ranks` ranks and a shell script per rank.
std::string writeFakeJob(TempDir &dir, const std::vector<std::string> &ranks) {
  std::string launch = dir.file("launch");
  writeBytes(launch, renderLaunchScript(static_cast<int>(ranks.size())));
  chmod(launch.c_str(), 0755);
  for (size_t k = 0; k < ranks.size(); ++k) {
    std::string rank = dir.file("rank" + std::to_string(k));
    writeBytes(rank, "#!/bin/sh\n" + ranks[k]);
    chmod(rank.c_str(), 0755);
  }
  return launch;
}

TEST(LaunchScript, StartsTheRanksItselfForTheSocketTransport) {
  TempDir dir;
  std::string report =
      "echo \"rank=$PIPECC_RANK size=$PIPECC_SIZE "
      "transport=$PIPECC_TRANSPORT args=$*\"\n"
      "test -d \"$PIPECC_RENDEZVOUS\" && echo \"$PIPECC_RENDEZVOUS\" > "
      "\"$(dirname \"$0\")/rendezvous$PIPECC_RANK\"\n";
  std::string launch = writeFakeJob(dir, {report, report});
  std::string output = runAndCapture("'" + launch +
                                     "' --transport socket --steps 2 2>&1");
  EXPECT_NE(output.find("rank=0 size=2 transport=socket args=--transport "
                        "socket --steps 2"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("rank=1 size=2 transport=socket"), std::string::npos)
      << output;
  // One rendezvous folder for both, removed at the end.
  std::ifstream first(dir.file("rendezvous0")), second(dir.file("rendezvous1"));
  std::string folder0, folder1;
  std::getline(first, folder0);
  std::getline(second, folder1);
  EXPECT_FALSE(folder0.empty());
  EXPECT_EQ(folder0, folder1);
  struct stat info;
  EXPECT_NE(stat(folder0.c_str(), &info), 0) << folder0 << " left behind";

  // No mpirun: sockets without being asked.
  output = runAndCapture("PIPECC_MPIRUN='" + dir.file("no-mpirun") + "' '" +
                         launch + "' 2>&1");
  EXPECT_NE(output.find("rank=1 size=2 transport=socket"), std::string::npos)
      << output;
}

TEST(LaunchScript, StopsEveryRankWhenOneFails) {
  TempDir dir;
  // exec: each rank one process, as a real rank executable is.
  std::string launch = writeFakeJob(
      dir, {"exec sleep 60\n", "exit 3\n", "exec sleep 60\n"});
  auto start = std::chrono::steady_clock::now();
  std::string output = runAndCapture(
      "PIPECC_TRANSPORT=socket '" + launch + "' 2>&1; echo \"status=$?\"");
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  EXPECT_LT(seconds, 30);
  EXPECT_NE(output.find("launch: rank 1 exited with status 3; stopping the "
                        "other ranks"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("status=3"), std::string::npos) << output;
}

// bash 5.2's `wait -n -p VAR` can return with VAR unset (a 10-step run
// at P = 2 died of `set -u` after both ranks had succeeded). This `env`
// prefix imports a `wait` that does so on every call; the script must
// still tell which rank ended and with what status.
const char *const kWaitNamingNoRank =
    "env 'BASH_FUNC_wait%%=() { builtin wait \"$@\"; local c=$?; "
    "if [ \"${1-}\" = -n ]; then unset \"$3\"; fi; return $c; }' ";

bool bashHasWaitP() {
  // The script uses wait -n -p from bash 5.1 on (plain wait -n before).
  return runAndCapture("bash -c 'echo $((BASH_VERSINFO[0] * 100 + "
                       "BASH_VERSINFO[1]))'") >= "501";
}

TEST(LaunchScript, FindsTheFailedRankWhenWaitDoesNotNameIt) {
  if (!bashHasWaitP())
    GTEST_SKIP() << "bash before 5.1: no wait -n -p";
  TempDir dir;
  std::string launch = writeFakeJob(
      dir, {"sleep 0.2\nexit 0\n", "exit 3\n", "sleep 0.2\nexit 0\n"});
  std::string output =
      runAndCapture(std::string(kWaitNamingNoRank) +
                    "PIPECC_TRANSPORT=socket '" + launch +
                    "' 2>&1; echo \"status=$?\"");
  EXPECT_NE(output.find("launch: rank 1 exited with status 3; stopping the "
                        "other ranks"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("status=3"), std::string::npos) << output;
}

TEST(LaunchScript, SucceedsWhenWaitDoesNotNameTheRanks) {
  if (!bashHasWaitP())
    GTEST_SKIP() << "bash before 5.1: no wait -n -p";
  TempDir dir;
  std::string launch = writeFakeJob(dir, {"exit 0\n", "sleep 0.1\nexit 0\n"});
  std::string output =
      runAndCapture(std::string(kWaitNamingNoRank) +
                    "PIPECC_TRANSPORT=socket '" + launch +
                    "' 2>&1; echo \"status=$?\"");
  EXPECT_EQ(output, "status=0\n");
}

} // namespace
