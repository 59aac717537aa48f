// How kiln-serve spends threads on connections. httplib serves each
// connection on one task-queue thread for as long as it stays open
// (keep-alive included), so a fixed pool of N threads means the (N+1)th
// client waits for someone else to hang up, and N slow clients starve
// everyone. Two pieces fix that:
//   - ConnectionPool: a task queue that keeps a few threads warm and grows,
//     one thread per open connection, up to a cap (idle extra threads exit);
//   - RequestDeadlines: a watchdog that closes a connection whose request
//     (head and body) has not fully arrived within a deadline of the server
//     starting to wait for it, however slowly the bytes trickle in (the read
//     timeout alone only bounds the silence between two bytes).
// httplib (Debian's 0.11) hands the task queue an opaque job and keeps each
// accepted socket to itself, so kiln-serve defines accept() (Connections.cpp):
// the listening thread notes the socket it accepted, and enqueue(), which
// httplib calls next on that thread, attaches it to the job.
#ifndef KILN_TOOLS_KILN_SERVE_CONNECTIONS_H
#define KILN_TOOLS_KILN_SERVE_CONNECTIONS_H

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace kiln::serve {

class RequestDeadlines;

class ConnectionPool final : public httplib::TaskQueue {
public:
  /// `warm` threads live for the pool's lifetime; up to `max` in all run
  /// at once; a thread beyond `warm` exits after `idle` without work. With
  /// `deadlines`, each connection is served under its request deadline.
  ConnectionPool(size_t warm, size_t max, std::chrono::milliseconds idle,
                 RequestDeadlines *deadlines = nullptr);
  ~ConnectionPool() override;

  /// Runs `fn` on an idle thread, or a new one below the cap; at the cap it
  /// waits in a queue for the first thread that frees up.
  void enqueue(std::function<void()> fn) override;
  /// Runs what is queued, then joins every thread. Idempotent.
  void shutdown() override;

private:
  using Threads = std::list<std::thread>;
  void work(Threads::iterator self);
  void spawnLocked();

  const size_t warm_, max_;
  const std::chrono::milliseconds idle_;
  RequestDeadlines *const deadlines_;
  std::mutex mutex_;
  std::condition_variable ready_;  // a job arrived, or shutdown
  std::condition_variable exited_; // a thread moved itself to done_
  std::deque<std::function<void()>> jobs_;
  Threads live_, done_; // done_: returned from work(), not yet joined
  size_t waiting_ = 0;  // live threads waiting for a job
  bool stopping_ = false;
};

/// The deadline each connection has for delivering its next request. The
/// connection's thread arms it when the server starts waiting (the
/// connection opened, or the previous response was written) and disarms it
/// when a handler starts (the head and body are in); a watchdog shuts down
/// the socket of a connection past its deadline, which wakes httplib's read.
class RequestDeadlines {
public:
  explicit RequestDeadlines(std::chrono::seconds timeout);
  ~RequestDeadlines();

  /// A duplicate of the socket accept() last returned on this thread (its
  /// own descriptor: shutting it down reaches the connection, and it cannot
  /// be reused for another while we hold it), or -1.
  static int takeAccepted();

  /// Scope of one connection on the calling thread; owns `ownedFd` (from
  /// takeAccepted) and closes it.
  class Connection {
  public:
    Connection(RequestDeadlines &deadlines, int ownedFd);
    ~Connection();
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

  private:
    friend class RequestDeadlines;
    RequestDeadlines &deadlines_;
    int fd_;
    std::chrono::steady_clock::time_point deadline_;
  };

  /// On the thread of a connection opened with Connection (no-op elsewhere):
  /// the request has arrived / the server waits for the next one.
  static void requestArrived();
  static void awaitingRequest();

private:
  void watch();
  void set(Connection *c, std::chrono::steady_clock::time_point when);

  const std::chrono::seconds timeout_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::unordered_set<Connection *> open_;
  bool stopping_ = false;
  std::thread watcher_;
};

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_CONNECTIONS_H
