//===- Socket.cpp - Ranks of one node over Unix-domain sockets ------------===//
//
// The transport of `out/launch --transport socket` (and of launch on a
// machine without MPI): every pair of ranks shares one Unix-domain stream
// socket. Bootstrap: rank r listens on <rendezvous>/rank<r>.sock, connects
// to every lower rank (retrying until it listens) and accepts every higher
// one, each connection opened by a hello naming the connecting rank.
//
// A message is a header {magic, channel, tag, bytes} and its payload. A
// progress thread reads every connection as data arrives: into the first
// posted receive of the same (peer, channel, tag), or else into a queue of
// unexpected messages that later receives take from. Reading never waits
// for this rank's main thread, so a send always completes and two ranks
// sending to each other cannot deadlock. Started sends (startSend, and
// blocking sends of the Program channel behind them) are written by a
// sender thread in order while the main thread computes on; both threads
// sleep in the kernel when there is nothing to move, so on one core per
// rank they take CPU only to copy bytes. Messages of one (peer, channel,
// tag) keep their order. A started send first writes what the socket takes
// without blocking, so a small message completes at once.
//
// A wait first polls (yielding the core) for up to kSpinSeconds before it
// sleeps, when every rank of the job has a core of its own: a rank that
// sleeps at every wait gives its core up, and on a shared or virtual
// machine it comes back later and to colder caches (P = 2 on 2 cores: the
// step 154 -> 141 ms, the matmuls' rate 50 -> 60 GFLOP/s, as MPI's own
// polling waits). With more ranks than cores a polling rank would take
// time from one that computes, so they sleep at once.
//
// Collectives are messages to and from one root, in rank order, so the
// float sums are the same bits as MpiTransport's. A rank that ends without
// its goodbye message (it failed, or was killed) breaks the job: every wait
// of the other ranks then fails naming it, instead of hanging.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Transport.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace pipecc::rt {

namespace {

constexpr uint32_t kMagic = 0x70697065; // "pipe"
constexpr int kMaxTag = INT_MAX;
constexpr int64_t kMaxSendRecvBytes = int64_t(1) << 30;
/// The longest a wait polls before it sleeps (see the file comment): a
/// pipeline's waits between micro-batches are a few milliseconds.
constexpr double kSpinSeconds = 0.02;

/// Wire channels: the two of Transport.h plus the collectives' own.
enum WireChannel : uint32_t {
  kProgramChannel = 0,
  kControlChannel = 1,
  kCollectiveChannel = 2, ///< tag: kind of collective
  kGroupChannel = 3,      ///< allreduce groups; tag: hash of the members
  kGoodbyeChannel = 4,    ///< finalize(): no more messages from this rank
};

enum CollectiveTag : int32_t {
  kBroadcastProgramTag = 1,
  kBroadcastControlTag,
  kBarrierProgramTag,
  kBarrierControlTag,
  kReduceTag,
  kMaxTagValue,
};

struct Header {
  uint32_t magic;
  uint32_t channel;
  int32_t tag;
  int32_t reserved;
  int64_t bytes;
};

struct Hello {
  uint32_t magic;
  int32_t rank;
  int32_t size;
  int32_t reserved;
};

uint32_t wireChannel(Channel channel) {
  return channel == Channel::Program ? kProgramChannel : kControlChannel;
}

double secondsNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Reads exactly `bytes`; false on end of file or an error.
bool readFully(int fd, void *data, int64_t bytes) {
  char *cursor = static_cast<char *>(data);
  while (bytes > 0) {
    ssize_t n = ::read(fd, cursor, static_cast<size_t>(
                                       std::min<int64_t>(bytes, 1 << 30)));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    cursor += n;
    bytes -= n;
  }
  return true;
}

/// Writes exactly `bytes`; false with errno set on failure (no SIGPIPE).
bool writeFully(int fd, const void *data, int64_t bytes) {
  const char *cursor = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t n = ::send(fd, cursor,
                       static_cast<size_t>(std::min<int64_t>(bytes, 1 << 30)),
                       MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    cursor += n;
    bytes -= n;
  }
  return true;
}

sockaddr_un socketAddress(const std::string &dir, int rank) {
  std::string path = dir + "/rank" + std::to_string(rank) + ".sock";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path)
    fail("socket transport: the socket path ", path, " is longer than ",
         sizeof address.sun_path - 1,
         " bytes; use a shorter PIPECC_RENDEZVOUS folder");
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

/// A receive posted by the main thread (or a completed send, for wait()).
struct Transfer {
  bool isReceive = false;
  int peer = 0;
  uint32_t channel = 0;
  int tag = 0;
  char *data = nullptr;
  int64_t bytes = 0;
  bool done = false;
  std::string error; ///< set with done on a size mismatch
  /// A started send: bytes of its header and payload already written.
  int64_t written = 0;
};

struct Unexpected {
  uint32_t channel;
  int tag;
  std::vector<char> data;
};

class SocketTransport final : public Transport {
public:
  explicit SocketTransport(const SocketConfig &config);
  ~SocketTransport() override;

  const char *name() const override { return "socket"; }
  void send(const void *data, int64_t bytes, int peer, int tag,
            Channel channel) override {
    checkPeerAndTag(peer, tag, "send", kMaxTag);
    checkSize(bytes, "send to", peer, tag);
    if (channel == Channel::Program) {
      // Behind the started sends of the same tag, in order.
      wait(startSend(data, bytes, peer, tag));
      return;
    }
    sendWire(peer, wireChannel(channel), tag, data, bytes, "send to");
  }
  void recv(void *data, int64_t bytes, int peer, int tag,
            Channel channel) override {
    checkPeerAndTag(peer, tag, "recv", kMaxTag);
    checkSize(bytes, "recv from", peer, tag);
    recvWire(peer, wireChannel(channel), tag, data, bytes, "recv from");
  }
  void sendRecv(const void *sendData, int64_t sendBytes, int dest,
                int sendTag, void *recvData, int64_t recvBytes, int source,
                int recvTag) override;
  int64_t startSend(const void *data, int64_t bytes, int peer,
                    int tag) override;
  int64_t startRecv(void *data, int64_t bytes, int peer, int tag) override;
  void wait(int64_t handle) override;
  bool finished(int64_t handle) override;
  void waitAll() override {
    while (!handles_.empty())
      wait(handles_.begin()->first);
  }
  size_t pendingTransfers() const override { return handles_.size(); }
  void allreduceSumF32(float *data, int64_t count,
                       const std::vector<int> &group) override;
  void reduceSumF64(double *data, int64_t count, int root) override;
  int64_t allreduceMaxI64(int64_t value) override;
  void allreduceSumF64(double *data, int64_t count) override;
  void broadcast(void *data, int64_t bytes, int root,
                 Channel channel) override;
  void barrier(Channel channel) override;
  void finalize() override;

private:
  void connectPeers(const SocketConfig &config);
  void progressLoop();
  /// Whether a wait for `transfer` ends now: it is done, or it never will
  /// be (its peer closed, the job broke). Called with mutex_ held.
  bool settled(const Transfer &transfer) const {
    return transfer.done || closed_[transfer.peer] || !broken_.empty();
  }
  void stopProgressThread();
  /// Takes one message from `peer` off the wire (progress thread).
  bool receiveMessage(int peer);
  void markClosed(int peer);

  void checkSize(int64_t bytes, const char *direction, int peer,
                 int tag) const {
    if (bytes < 0)
      fail(direction, " rank ", peer, " tag ", tag, ": negative size ",
           bytes);
  }
  void sendWire(int peer, uint32_t channel, int tag, const void *data,
                int64_t bytes, const char *what);
  std::shared_ptr<Transfer> postReceive(int peer, uint32_t channel, int tag,
                                        void *data, int64_t bytes);
  void waitFor(Transfer &transfer, const std::string &where);
  /// Polls `transfer` (yielding the core between looks) for up to
  /// spinSeconds_, while nothing has failed.
  void pollBeforeSleeping(const Transfer &transfer);
  void recvWire(int peer, uint32_t channel, int tag, void *data,
                int64_t bytes, const char *what) {
    waitFor(*postReceive(peer, channel, tag, data, bytes),
            std::string(what) + " rank " + std::to_string(peer) + " tag " +
                std::to_string(tag));
  }

  std::vector<int> sockets_; ///< by peer rank; -1 for this rank
  std::vector<std::unique_ptr<std::mutex>> sendMutexes_;
  int timeoutSeconds_ = 60;
  /// How long a wait polls before it sleeps: kSpinSeconds when every rank
  /// has a core (of this process's CPU set), else 0.
  double spinSeconds_ = 0;
  int wakePipe_[2] = {-1, -1};
  std::thread progress_;
  /// Started sends, written in order by the sender thread (started at the
  /// first isend) while the main thread computes on; guarded by mutex_.
  std::deque<std::shared_ptr<Transfer>> sendQueue_;
  std::condition_variable sendQueued_;
  bool stopSender_ = false;
  std::thread sender_;
  void senderLoop();
  bool finalized_ = false;

  // Shared with the progress thread, under mutex_.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Transfer>> posted_;
  std::vector<std::deque<Unexpected>> unexpected_; ///< by peer
  std::vector<bool> closed_, saidGoodbye_;
  std::string broken_; ///< why the job cannot go on; empty while it can

  std::map<int64_t, std::shared_ptr<Transfer>> handles_;
  int64_t nextHandle_ = 1;
};

SocketTransport::SocketTransport(const SocketConfig &config) {
  if (config.size < 1 || config.rank < 0 || config.rank >= config.size)
    fail("socket transport: rank ", config.rank, " of ", config.size);
  rank_ = config.rank;
  size_ = config.size;
  localSize_ = config.size; // one node
  localRank_ = config.rank;
  timeoutSeconds_ = config.bootstrapTimeoutSeconds;
  setErrorRank(rank_);
  sockets_.assign(static_cast<size_t>(size_), -1);
  for (int peer = 0; peer < size_; ++peer)
    sendMutexes_.push_back(std::make_unique<std::mutex>());
  unexpected_.resize(static_cast<size_t>(size_));
  closed_.assign(static_cast<size_t>(size_), false);
  saidGoodbye_.assign(static_cast<size_t>(size_), false);
  if (size_ == 1)
    return;
  connectPeers(config);
  // Every rank has unlinked its socket by now; the last one empties it.
  if (config.removeRendezvous)
    ::rmdir(config.rendezvous.c_str());
  if (pipe(wakePipe_) != 0)
    fail("socket transport: pipe: ", std::strerror(errno));
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 &&
      size_ <= CPU_COUNT(&cpus))
    spinSeconds_ = kSpinSeconds;
  progress_ = std::thread([this] { progressLoop(); });
}

void SocketTransport::connectPeers(const SocketConfig &config) {
  double deadline = secondsNow() + timeoutSeconds_;
  std::string bootstrap = "socket bootstrap (" + config.rendezvous + ")";
  sockaddr_un own = socketAddress(config.rendezvous, rank_);
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0)
    fail(bootstrap, ": socket: ", std::strerror(errno));
  // On every way out: no listener left behind, and on failure no half
  // connected peers either.
  struct Cleanup {
    SocketTransport &transport;
    int listener;
    const char *path;
    ~Cleanup() {
      ::close(listener);
      ::unlink(path);
      if (std::uncaught_exceptions() > 0)
        for (int &fd : transport.sockets_)
          if (fd >= 0) {
            ::close(fd);
            fd = -1;
          }
    }
  } cleanup{*this, listener, own.sun_path};
  ::unlink(own.sun_path); // a stale socket of an earlier run
  if (bind(listener, reinterpret_cast<sockaddr *>(&own), sizeof own) != 0 ||
      listen(listener, size_) != 0)
    fail(bootstrap, ": cannot listen on ", own.sun_path, ": ",
         std::strerror(errno));

  Hello hello{kMagic, rank_, size_, 0};
  for (int peer = 0; peer < rank_; ++peer) {
    sockaddr_un address = socketAddress(config.rendezvous, peer);
    for (;;) {
      int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0)
        fail(bootstrap, ": socket: ", std::strerror(errno));
      if (connect(fd, reinterpret_cast<sockaddr *>(&address),
                  sizeof address) == 0) {
        sockets_[static_cast<size_t>(peer)] = fd;
        if (!writeFully(fd, &hello, sizeof hello))
          fail(bootstrap, ": hello to rank ", peer, ": ",
               std::strerror(errno));
        break;
      }
      int error = errno;
      ::close(fd);
      if (error != ENOENT && error != ECONNREFUSED && error != EAGAIN &&
          error != EINTR)
        fail(bootstrap, ": cannot connect to rank ", peer, " at ",
             address.sun_path, ": ", std::strerror(error));
      if (secondsNow() > deadline)
        fail(bootstrap, ": rank ", peer, " did not open ", address.sun_path,
             " within ", timeoutSeconds_,
             " s (did it start? PIPECC_BOOTSTRAP_TIMEOUT sets the limit)");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  for (int accepted = rank_ + 1; accepted < size_; ++accepted) {
    auto missing = [&] {
      std::string list;
      for (int peer = rank_ + 1; peer < size_; ++peer)
        if (sockets_[static_cast<size_t>(peer)] < 0)
          list += (list.empty() ? "" : ", ") + std::to_string(peer);
      return list;
    };
    auto waitReadable = [&](int fd) {
      double left = deadline - secondsNow();
      pollfd entry{fd, POLLIN, 0};
      int ready = left > 0 ? poll(&entry, 1, static_cast<int>(left * 1000) + 1)
                           : 0;
      if (ready <= 0)
        fail(bootstrap, ": rank(s) ", missing(), " did not connect within ",
             timeoutSeconds_,
             " s (did they start? PIPECC_BOOTSTRAP_TIMEOUT sets the limit)");
    };
    waitReadable(listener);
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      fail(bootstrap, ": accept: ", std::strerror(errno));
    struct CloseOnError {
      int fd;
      ~CloseOnError() {
        if (std::uncaught_exceptions() > 0)
          ::close(fd);
      }
    } closeOnError{fd};
    waitReadable(fd);
    Hello theirs{};
    if (!readFully(fd, &theirs, sizeof theirs) || theirs.magic != kMagic)
      fail(bootstrap, ": a connection to ", own.sun_path,
           " did not say hello (another program on the rendezvous folder?)");
    if (theirs.size != size_ || theirs.rank <= rank_ ||
        theirs.rank >= size_ ||
        sockets_[static_cast<size_t>(theirs.rank)] >= 0)
      fail(bootstrap, ": a peer says it is rank ", theirs.rank, " of ",
           theirs.size, ", expected one of ranks ", missing(), " of ", size_,
           " (two jobs on one rendezvous folder?)");
    sockets_[static_cast<size_t>(theirs.rank)] = fd;
  }
}

SocketTransport::~SocketTransport() {
  // Unwinding from an error: the error line is printed after this, and the
  // peers must not see this rank vanish before it is. Stop the progress
  // thread (it must not outlive this object) but leave the sockets open;
  // the process ends right after (fatalError), closing them.
  if (std::uncaught_exceptions() > 0) {
    stopProgressThread();
    return;
  }
  try {
    finalize();
  } catch (...) {
  }
}

void SocketTransport::senderLoop() {
  for (;;) {
    std::shared_ptr<Transfer> transfer;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      sendQueued_.wait(lock,
                       [&] { return stopSender_ || !sendQueue_.empty(); });
      if (sendQueue_.empty())
        return;
      transfer = sendQueue_.front();
    }
    Header header{kMagic, transfer->channel, transfer->tag, 0, transfer->bytes};
    bool written;
    int error = 0;
    {
      // The rest of what startSend could not write at once.
      std::lock_guard<std::mutex> sending(*sendMutexes_[transfer->peer]);
      int fd = sockets_[static_cast<size_t>(transfer->peer)];
      int64_t headerLeft =
          std::max<int64_t>(0, int64_t(sizeof header) - transfer->written);
      int64_t payloadDone =
          std::max<int64_t>(0, transfer->written - int64_t(sizeof header));
      written = writeFully(fd,
                           reinterpret_cast<char *>(&header) + sizeof header -
                               headerLeft,
                           headerLeft) &&
                writeFully(fd, transfer->data + payloadDone,
                           transfer->bytes - payloadDone);
      error = errno;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    sendQueue_.pop_front();
    if (!written)
      transfer->error =
          broken_.empty() ? std::string(std::strerror(error)) : broken_;
    transfer->done = true;
    changed_.notify_all();
  }
}

void SocketTransport::stopProgressThread() {
  if (sender_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopSender_ = true;
    }
    sendQueued_.notify_all();
    // Unwinding from an error the sender may be stuck in a write: the
    // process ends right after.
    if (std::uncaught_exceptions() > 0)
      sender_.detach();
    else
      sender_.join();
  }
  if (!progress_.joinable())
    return;
  char stop = 1;
  while (write(wakePipe_[1], &stop, 1) < 0 && errno == EINTR) {
  }
  progress_.join();
}

void SocketTransport::finalize() {
  if (finalized_)
    return;
  finalized_ = true;
  if (size_ == 1)
    return;
  // Started sends go out before the goodbye.
  waitAll();
  Header goodbye{kMagic, kGoodbyeChannel, 0, 0, 0};
  for (int peer = 0; peer < size_; ++peer)
    if (peer != rank_) {
      std::lock_guard<std::mutex> sending(*sendMutexes_[peer]);
      writeFully(sockets_[static_cast<size_t>(peer)], &goodbye,
                 sizeof goodbye);
    }
  {
    // Every peer's messages to this rank are read before it closes.
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(
        lock, std::chrono::duration<double>(timeoutSeconds_), [&] {
          for (int peer = 0; peer < size_; ++peer)
            if (peer != rank_ && !saidGoodbye_[peer] && !closed_[peer])
              return false;
          return true;
        });
  }
  stopProgressThread();
  for (int fd : sockets_)
    if (fd >= 0)
      ::close(fd);
  ::close(wakePipe_[0]);
  ::close(wakePipe_[1]);
}

void SocketTransport::progressLoop() {
  std::vector<pollfd> entries;
  std::vector<int> peers;
  for (;;) {
    entries.assign(1, pollfd{wakePipe_[0], POLLIN, 0});
    peers.assign(1, -1);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int peer = 0; peer < size_; ++peer)
        if (peer != rank_ && !closed_[peer]) {
          entries.push_back(pollfd{sockets_[peer], POLLIN, 0});
          peers.push_back(peer);
        }
    }
    if (poll(entries.data(), entries.size(), -1) < 0) {
      if (errno == EINTR)
        continue;
      std::lock_guard<std::mutex> lock(mutex_);
      broken_ = std::string("poll failed: ") + std::strerror(errno);
      changed_.notify_all();
      return;
    }
    if (entries[0].revents)
      return; // finalize()
    for (size_t i = 1; i < entries.size(); ++i)
      if (entries[i].revents && !receiveMessage(peers[i]))
        markClosed(peers[i]);
  }
}

void SocketTransport::markClosed(int peer) {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_[peer] = true;
  if (!saidGoodbye_[peer] && broken_.empty())
    broken_ = "rank " + std::to_string(peer) +
              " ended without finishing (it failed or was killed)";
  changed_.notify_all();
}

bool SocketTransport::receiveMessage(int peer) {
  int fd = sockets_[static_cast<size_t>(peer)];
  Header header;
  if (!readFully(fd, &header, sizeof header))
    return false;
  if (header.magic != kMagic || header.bytes < 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    broken_ = "garbled message from rank " + std::to_string(peer);
    return false;
  }
  if (header.channel == kGoodbyeChannel) {
    std::lock_guard<std::mutex> lock(mutex_);
    saidGoodbye_[peer] = true;
    changed_.notify_all();
    return true;
  }
  std::shared_ptr<Transfer> target;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto match = std::find_if(posted_.begin(), posted_.end(), [&](auto &t) {
      return t->peer == peer && t->channel == header.channel &&
             t->tag == header.tag;
    });
    if (match != posted_.end()) {
      target = *match;
      posted_.erase(match);
    }
  }
  if (target && target->bytes == header.bytes) {
    // The main thread leaves the buffer alone until `done`.
    if (!readFully(fd, target->data, header.bytes))
      return false;
    std::lock_guard<std::mutex> lock(mutex_);
    target->done = true;
    changed_.notify_all();
    return true;
  }
  std::vector<char> payload(static_cast<size_t>(header.bytes));
  if (!readFully(fd, payload.data(), header.bytes))
    return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!target) {
    // A receive posted while the payload was read takes it now (it found
    // no unexpected message when it was posted).
    auto match = std::find_if(posted_.begin(), posted_.end(), [&](auto &t) {
      return t->peer == peer && t->channel == header.channel &&
             t->tag == header.tag;
    });
    if (match != posted_.end()) {
      target = *match;
      posted_.erase(match);
      if (target->bytes == header.bytes) {
        if (header.bytes > 0)
          std::memcpy(target->data, payload.data(),
                      static_cast<size_t>(header.bytes));
        target->done = true;
        changed_.notify_all();
        return true;
      }
    }
  }
  if (target) {
    target->error = "expected a message of " + std::to_string(target->bytes) +
                    " bytes, got " + std::to_string(header.bytes) +
                    " (sender and receiver disagree on the buffer)";
    target->done = true;
  } else {
    unexpected_[peer].push_back(
        Unexpected{header.channel, header.tag, std::move(payload)});
  }
  changed_.notify_all();
  return true;
}

void SocketTransport::sendWire(int peer, uint32_t channel, int tag,
                               const void *data, int64_t bytes,
                               const char *what) {
  {
    // A started send may lie half written on the wire: it goes first.
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return sendQueue_.empty() || !broken_.empty(); });
  }
  Header header{kMagic, channel, tag, 0, bytes};
  std::lock_guard<std::mutex> sending(*sendMutexes_[peer]);
  int fd = sockets_[static_cast<size_t>(peer)];
  if (!writeFully(fd, &header, sizeof header) ||
      !writeFully(fd, data, bytes)) {
    int error = errno;
    std::lock_guard<std::mutex> lock(mutex_);
    fail(what, " rank ", peer, " tag ", tag, ": ",
         broken_.empty() ? std::string(std::strerror(error)) : broken_);
  }
}

std::shared_ptr<Transfer> SocketTransport::postReceive(int peer,
                                                       uint32_t channel,
                                                       int tag, void *data,
                                                       int64_t bytes) {
  auto transfer = std::make_shared<Transfer>();
  transfer->isReceive = true;
  transfer->peer = peer;
  transfer->channel = channel;
  transfer->tag = tag;
  transfer->data = static_cast<char *>(data);
  transfer->bytes = bytes;
  std::lock_guard<std::mutex> lock(mutex_);
  auto &queue = unexpected_[static_cast<size_t>(peer)];
  auto match = std::find_if(queue.begin(), queue.end(), [&](auto &m) {
    return m.channel == channel && m.tag == tag;
  });
  if (match == queue.end()) {
    posted_.push_back(transfer);
    return transfer;
  }
  int64_t got = static_cast<int64_t>(match->data.size());
  if (got == bytes) {
    if (bytes > 0)
      std::memcpy(data, match->data.data(), static_cast<size_t>(bytes));
  } else {
    transfer->error = "expected a message of " + std::to_string(bytes) +
                      " bytes, got " + std::to_string(got) +
                      " (sender and receiver disagree on the buffer)";
  }
  queue.erase(match);
  transfer->done = true;
  return transfer;
}

void SocketTransport::pollBeforeSleeping(const Transfer &transfer) {
  if (spinSeconds_ <= 0)
    return;
  double until = secondsNow() + spinSeconds_;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (transfer.done || closed_[transfer.peer] || !broken_.empty())
        return;
    }
    if (secondsNow() > until)
      return;
    // The progress thread that fills it may need this core.
    sched_yield();
  }
}

void SocketTransport::waitFor(Transfer &transfer, const std::string &where) {
  pollBeforeSleeping(transfer);
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return settled(transfer); });
  if (!transfer.done) {
    // Leave the buffer to nobody: the progress thread must not fill it
    // after this rank gave up on it.
    posted_.erase(std::remove_if(posted_.begin(), posted_.end(),
                                 [&](auto &t) { return t.get() == &transfer; }),
                  posted_.end());
    fail(where, ": ",
         !broken_.empty() ? broken_
                          : "rank " + std::to_string(transfer.peer) +
                                " closed its connection");
  }
  if (!transfer.error.empty())
    fail(where, ": ", transfer.error);
}

int64_t SocketTransport::startSend(const void *data, int64_t bytes, int peer,
                                   int tag) {
  checkPeerAndTag(peer, tag, "isend", kMaxTag);
  checkSize(bytes, "isend to", peer, tag);
  // The sender thread writes it while this thread computes on; the peer's
  // progress thread always reads, so it completes without the peer
  // posting a receive.
  auto transfer = std::make_shared<Transfer>();
  transfer->peer = peer;
  transfer->channel = kProgramChannel;
  transfer->tag = tag;
  transfer->data = static_cast<char *>(const_cast<void *>(data));
  transfer->bytes = bytes;
  handles_[nextHandle_] = transfer;
  std::lock_guard<std::mutex> lock(mutex_);
  if (sendQueue_.empty()) {
    // Nothing queued: write what the socket takes now without blocking (a
    // small message completes here, with no thread hand-over).
    std::lock_guard<std::mutex> sending(*sendMutexes_[peer]);
    Header header{kMagic, kProgramChannel, tag, 0, bytes};
    iovec parts[2] = {{&header, sizeof header},
                      {transfer->data, static_cast<size_t>(bytes)}};
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = 2;
    ssize_t n;
    do
      n = ::sendmsg(sockets_[static_cast<size_t>(peer)], &message,
                    MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      fail("isend to rank ", peer, " tag ", tag, ": ",
           broken_.empty() ? std::string(std::strerror(errno)) : broken_);
    transfer->written = std::max<ssize_t>(n, 0);
    if (transfer->written == int64_t(sizeof header) + bytes) {
      transfer->done = true;
      return nextHandle_++;
    }
  }
  if (!sender_.joinable())
    sender_ = std::thread([this] { senderLoop(); });
  sendQueue_.push_back(transfer);
  sendQueued_.notify_one();
  return nextHandle_++;
}

int64_t SocketTransport::startRecv(void *data, int64_t bytes, int peer,
                                   int tag) {
  checkPeerAndTag(peer, tag, "irecv", kMaxTag);
  checkSize(bytes, "irecv from", peer, tag);
  handles_[nextHandle_] = postReceive(peer, kProgramChannel, tag, data, bytes);
  return nextHandle_++;
}

void SocketTransport::wait(int64_t handle) {
  auto found = handles_.find(handle);
  if (found == handles_.end())
    fail("wait on unknown or already completed transfer handle ", handle);
  std::shared_ptr<Transfer> transfer = std::move(found->second);
  handles_.erase(found);
  waitFor(*transfer, std::string(transfer->isReceive ? "irecv from rank "
                                                     : "isend to rank ") +
                         std::to_string(transfer->peer) + " tag " +
                         std::to_string(transfer->tag));
}

bool SocketTransport::finished(int64_t handle) {
  auto found = handles_.find(handle);
  if (found == handles_.end())
    return true; // wait() names the unknown handle
  const Transfer &transfer = *found->second;
  std::lock_guard<std::mutex> lock(mutex_);
  return settled(transfer);
}

void SocketTransport::sendRecv(const void *sendData, int64_t sendBytes,
                               int dest, int sendTag, void *recvData,
                               int64_t recvBytes, int source, int recvTag) {
  checkPeerAndTag(dest, sendTag, "sendrecv (send)", kMaxTag);
  checkPeerAndTag(source, recvTag, "sendrecv (recv)", kMaxTag);
  if (sendBytes > kMaxSendRecvBytes || recvBytes > kMaxSendRecvBytes ||
      sendBytes < 0 || recvBytes < 0)
    fail("sendrecv to rank ", dest, " tag ", sendTag, ": sizes ", sendBytes,
         "/", recvBytes, " outside [0, 1 GiB]");
  std::string where = "sendrecv to rank " + std::to_string(dest) + " tag " +
                      std::to_string(sendTag) + ", from rank " +
                      std::to_string(source) + " tag " +
                      std::to_string(recvTag);
  auto receive =
      postReceive(source, kProgramChannel, recvTag, recvData, recvBytes);
  wait(startSend(sendData, sendBytes, dest, sendTag));
  waitFor(*receive, where);
}

void SocketTransport::allreduceSumF32(float *data, int64_t count,
                                      const std::vector<int> &group) {
  if (count < 0)
    fail("allreduce: negative element count ", count);
  std::vector<int> members = groupMembers(group);
  if (members.size() == 1)
    return;
  // The group's own tag: groups that share ranks cannot take each other's
  // messages.
  uint32_t hash = 2166136261u;
  for (int member : members)
    hash = (hash ^ static_cast<uint32_t>(member)) * 16777619u;
  int tag = static_cast<int>(hash & 0x7fffffff);
  int64_t bytes = count * static_cast<int64_t>(sizeof(float));
  const char *what = "allreduce with";
  int root = members.front();
  if (rank_ == root) {
    // ((x_root + x_1) + x_2) + ...: the same order as MpiTransport.
    std::vector<float> incoming(static_cast<size_t>(count));
    for (size_t m = 1; m < members.size(); ++m) {
      recvWire(members[m], kGroupChannel, tag, incoming.data(), bytes, what);
      for (int64_t i = 0; i < count; ++i)
        data[i] += incoming[static_cast<size_t>(i)];
    }
    for (size_t m = 1; m < members.size(); ++m)
      sendWire(members[m], kGroupChannel, tag, data, bytes, what);
  } else {
    sendWire(root, kGroupChannel, tag, data, bytes, what);
    recvWire(root, kGroupChannel, tag, data, bytes, what);
  }
}

void SocketTransport::reduceSumF64(double *data, int64_t count, int root) {
  if (root < 0 || root >= size_)
    fail("reduce: root rank ", root, " out of range [0, ", size_, ")");
  int64_t bytes = count * static_cast<int64_t>(sizeof(double));
  if (rank_ != root) {
    sendWire(root, kCollectiveChannel, kReduceTag, data, bytes, "reduce to");
    return;
  }
  // Rank order, whoever the root is.
  std::vector<double> sum(static_cast<size_t>(count), 0.0), incoming(sum);
  for (int peer = 0; peer < size_; ++peer) {
    const double *values = data;
    if (peer != rank_) {
      recvWire(peer, kCollectiveChannel, kReduceTag, incoming.data(), bytes,
               "reduce from");
      values = incoming.data();
    }
    for (int64_t i = 0; i < count; ++i)
      sum[static_cast<size_t>(i)] =
          peer == 0 ? values[i] : sum[static_cast<size_t>(i)] + values[i];
  }
  std::copy(sum.begin(), sum.end(), data);
}

void SocketTransport::allreduceSumF64(double *data, int64_t count) {
  reduceSumF64(data, count, 0);
  broadcast(data, count * static_cast<int64_t>(sizeof(double)), 0,
            Channel::Control);
}

int64_t SocketTransport::allreduceMaxI64(int64_t value) {
  if (rank_ != 0) {
    sendWire(0, kCollectiveChannel, kMaxTagValue, &value, sizeof value,
             "allreduce max to");
  } else {
    for (int peer = 1; peer < size_; ++peer) {
      int64_t theirs = 0;
      recvWire(peer, kCollectiveChannel, kMaxTagValue, &theirs,
               sizeof theirs, "allreduce max from");
      value = std::max(value, theirs);
    }
  }
  broadcast(&value, sizeof value, 0, Channel::Control);
  return value;
}

void SocketTransport::broadcast(void *data, int64_t bytes, int root,
                                Channel channel) {
  if (root < 0 || root >= size_)
    fail("broadcast: root rank ", root, " out of range [0, ", size_, ")");
  if (bytes < 0)
    fail("broadcast: negative size ", bytes);
  int tag = channel == Channel::Program ? kBroadcastProgramTag
                                        : kBroadcastControlTag;
  if (rank_ == root) {
    for (int peer = 0; peer < size_; ++peer)
      if (peer != root)
        sendWire(peer, kCollectiveChannel, tag, data, bytes,
                 "broadcast to");
  } else {
    recvWire(root, kCollectiveChannel, tag, data, bytes, "broadcast from");
  }
}

void SocketTransport::barrier(Channel channel) {
  int tag =
      channel == Channel::Program ? kBarrierProgramTag : kBarrierControlTag;
  if (rank_ == 0) {
    for (int peer = 1; peer < size_; ++peer)
      recvWire(peer, kCollectiveChannel, tag, nullptr, 0, "barrier with");
    for (int peer = 1; peer < size_; ++peer)
      sendWire(peer, kCollectiveChannel, tag, nullptr, 0, "barrier with");
  } else {
    sendWire(0, kCollectiveChannel, tag, nullptr, 0, "barrier with");
    recvWire(0, kCollectiveChannel, tag, nullptr, 0, "barrier with");
  }
}

} // namespace

std::unique_ptr<Transport> createSocketTransport(const SocketConfig &config) {
  return std::make_unique<SocketTransport>(config);
}

} // namespace pipecc::rt
