#include "Connections.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <system_error>
#include <vector>

namespace kiln::serve {

using Clock = std::chrono::steady_clock;

ConnectionPool::ConnectionPool(size_t warm, size_t max,
                               std::chrono::milliseconds idle,
                               RequestDeadlines *deadlines)
    : warm_(std::max<size_t>(1, warm)), max_(std::max(max, warm_)),
      idle_(idle), deadlines_(deadlines) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < warm_; ++i)
    spawnLocked();
}

ConnectionPool::~ConnectionPool() { shutdown(); }

void ConnectionPool::spawnLocked() {
  live_.emplace_back();
  auto self = std::prev(live_.end());
  try {
    *self = std::thread(&ConnectionPool::work, this, self);
  } catch (const std::system_error &) {
    // Out of threads: the job waits for one of the live ones.
    live_.erase(self);
  }
}

void ConnectionPool::enqueue(std::function<void()> fn) {
  int fd = deadlines_ ? RequestDeadlines::takeAccepted() : -1;
  if (fd >= 0)
    fn = [deadlines = deadlines_, fd, serve = std::move(fn)] {
      RequestDeadlines::Connection connection(*deadlines, fd);
      serve();
    };
  Threads finished;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished.splice(finished.end(), done_);
    jobs_.push_back(std::move(fn));
    if (waiting_ < jobs_.size() && live_.size() < max_)
      spawnLocked();
  }
  ready_.notify_one();
  for (std::thread &t : finished)
    t.join();
}

void ConnectionPool::work(Threads::iterator self) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ++waiting_;
    ready_.wait_for(lock, idle_,
                    [this] { return stopping_ || !jobs_.empty(); });
    --waiting_;
    if (jobs_.empty()) {
      if (stopping_ || live_.size() > warm_)
        break;
      continue;
    }
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    job = nullptr; // release what the job captured outside the lock
    lock.lock();
  }
  done_.splice(done_.end(), live_, self);
  exited_.notify_all();
}

void ConnectionPool::shutdown() {
  std::unique_lock<std::mutex> lock(mutex_);
  stopping_ = true;
  ready_.notify_all();
  for (;;) {
    Threads finished;
    finished.splice(finished.end(), done_);
    bool more = !live_.empty();
    lock.unlock();
    for (std::thread &t : finished)
      t.join();
    lock.lock();
    if (!more && done_.empty())
      return;
    exited_.wait(lock, [this] { return !done_.empty() || live_.empty(); });
  }
}

namespace {
thread_local RequestDeadlines::Connection *current = nullptr;
thread_local RequestDeadlines *currentOwner = nullptr;
thread_local int lastAccepted = -1;
} // namespace

int RequestDeadlines::takeAccepted() {
  int fd = lastAccepted >= 0 ? ::fcntl(lastAccepted, F_DUPFD_CLOEXEC, 0) : -1;
  lastAccepted = -1;
  return fd;
}

RequestDeadlines::RequestDeadlines(std::chrono::seconds timeout)
    : timeout_(timeout), watcher_([this] { watch(); }) {}

RequestDeadlines::~RequestDeadlines() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  watcher_.join();
}

RequestDeadlines::Connection::Connection(RequestDeadlines &deadlines,
                                         int ownedFd)
    : deadlines_(deadlines), fd_(ownedFd) {
  {
    std::lock_guard<std::mutex> lock(deadlines_.mutex_);
    deadline_ = Clock::now() + deadlines_.timeout_;
    deadlines_.open_.insert(this);
  }
  current = this;
  currentOwner = &deadlines_;
}

RequestDeadlines::Connection::~Connection() {
  {
    std::lock_guard<std::mutex> lock(deadlines_.mutex_);
    deadlines_.open_.erase(this);
  }
  ::close(fd_);
  current = nullptr;
  currentOwner = nullptr;
}

void RequestDeadlines::set(Connection *c, Clock::time_point when) {
  std::lock_guard<std::mutex> lock(mutex_);
  c->deadline_ = when;
}

void RequestDeadlines::requestArrived() {
  if (current)
    currentOwner->set(current, Clock::time_point::max());
}

void RequestDeadlines::awaitingRequest() {
  if (current)
    currentOwner->set(current, Clock::now() + currentOwner->timeout_);
}

void RequestDeadlines::watch() {
  // A deadline is enforced within a quarter of the timeout (at most 250 ms
  // late): closing slow connections does not need to be exact.
  auto period = std::min<Clock::duration>(std::chrono::milliseconds(250),
                                          timeout_ / 4);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    Clock::time_point now = Clock::now();
    for (Connection *c : open_)
      if (c->deadline_ <= now) {
        // Shutting the socket down wakes the connection's thread out of its
        // read with end-of-stream; httplib then closes the connection.
        ::shutdown(c->fd_, SHUT_RDWR);
        c->deadline_ = Clock::time_point::max();
      }
  }
}

} // namespace kiln::serve

// httplib's accept(), seen first in the executable: the real call, plus a
// note of the socket for the task queue (see Connections.h).
extern "C" int accept(int fd, __SOCKADDR_ARG addr,
                      socklen_t *__restrict length) {
  int socket = ::accept4(fd, addr, length, 0);
  kiln::serve::lastAccepted = socket;
  return socket;
}
