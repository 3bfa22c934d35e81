//===- CorePlacement.cpp - Which CPU a rank of one node runs on -----------===//
#include "pipecc/Runtime/CorePlacement.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <sched.h>

namespace pipecc::rt {

std::vector<int> usableCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set))
      cpus.push_back(cpu);
  return cpus;
}

bool pinToCpu(int cpu, std::string &error) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) {
    error = "CPU " + std::to_string(cpu) + " is out of range";
    return false;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // Every thread that runs already (a transport's progress and sender
  // threads), then the caller; later threads inherit the caller's mask.
  if (DIR *tasks = opendir("/proc/self/task")) {
    while (dirent *entry = readdir(tasks)) {
      char *end = nullptr;
      long tid = std::strtol(entry->d_name, &end, 10);
      if (end == entry->d_name || *end != '\0')
        continue;
      if (sched_setaffinity(static_cast<pid_t>(tid), sizeof set, &set) != 0 &&
          errno != ESRCH) {
        error = "cannot pin thread " + std::to_string(tid) + " to CPU " +
                std::to_string(cpu) + ": " + std::strerror(errno);
        closedir(tasks);
        return false;
      }
    }
    closedir(tasks);
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    error = "cannot pin to CPU " + std::to_string(cpu) + ": " +
            std::strerror(errno);
    return false;
  }
  return true;
}

namespace {
CorePlacement &placementStorage() {
  static CorePlacement placement;
  return placement;
}
} // namespace

const CorePlacement &corePlacement() { return placementStorage(); }

void recordCorePlacement(const CorePlacement &placement) {
  placementStorage() = placement;
}

} // namespace pipecc::rt
