// http_bench: a small closed-loop HTTP/1.1 load generator for kiln-serve.
// Each client thread keeps one connection open and sends the same POST
// request back to back, timing each response. Prints one JSON line.
//
//   http_bench --port 8000 --path /v2/models/m/infer --body req.bin
//              [--header 'Inference-Header-Content-Length: 123']
//              [--clients 16] [--requests N | --seconds S] [--warmup N]
//
// Build: c++ -O2 -std=c++17 -pthread http_bench.cpp -o http_bench
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1", path, bodyFile;
  int port = 8000, clients = 1, warmup = 100;
  long requests = 0;
  double seconds = 0;
  std::vector<std::string> headers;
};

static int connectTo(const Options &o) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)o.port);
  inet_pton(AF_INET, o.host.c_str(), &addr.sin_addr);
  if (connect(fd, (sockaddr *)&addr, sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static bool writeAll(int fd, const std::string &s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0)
      return false;
    off += (size_t)n;
  }
  return true;
}

// Reads one response; returns its status, or -1 when the connection failed.
// `buf` keeps bytes read past the response (none with a closed loop).
static int readResponse(int fd, std::string &buf, bool &keepAlive) {
  size_t headerEnd;
  char tmp[65536];
  while ((headerEnd = buf.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = recv(fd, tmp, sizeof(tmp), 0);
    if (n <= 0)
      return -1;
    buf.append(tmp, (size_t)n);
  }
  int status = std::atoi(buf.c_str() + 9);
  std::string head = buf.substr(0, headerEnd);
  for (char &c : head)
    c = (char)std::tolower((unsigned char)c);
  size_t length = 0;
  size_t p = head.find("\r\ncontent-length:");
  if (p != std::string::npos)
    length = std::strtoul(head.c_str() + p + 17, nullptr, 10);
  keepAlive = head.find("\r\nconnection: close") == std::string::npos;
  size_t total = headerEnd + 4 + length;
  while (buf.size() < total) {
    ssize_t n = recv(fd, tmp, sizeof(tmp), 0);
    if (n <= 0)
      return -1;
    buf.append(tmp, (size_t)n);
  }
  buf.erase(0, total);
  return status;
}

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "http_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--host")
      o.host = next();
    else if (a == "--port")
      o.port = std::stoi(next());
    else if (a == "--path")
      o.path = next();
    else if (a == "--body")
      o.bodyFile = next();
    else if (a == "--header")
      o.headers.push_back(next());
    else if (a == "--clients")
      o.clients = std::stoi(next());
    else if (a == "--requests")
      o.requests = std::stol(next());
    else if (a == "--seconds")
      o.seconds = std::stod(next());
    else if (a == "--warmup")
      o.warmup = std::stoi(next());
    else {
      std::fprintf(stderr, "http_bench: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (o.path.empty() || o.bodyFile.empty() || (!o.requests && !o.seconds)) {
    std::fprintf(stderr, "usage: http_bench --port P --path PATH --body FILE "
                         "[--header H]... [--clients N] (--requests N | "
                         "--seconds S) [--warmup N]\n");
    return 2;
  }
  std::ifstream f(o.bodyFile, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string body = ss.str();
  std::string request = "POST " + o.path + " HTTP/1.1\r\nHost: " + o.host +
                        "\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\n";
  for (const std::string &h : o.headers)
    request += h + "\r\n";
  request += "\r\n" + body;

  std::atomic<long> issued{0}, failures{0};
  // Clients with at least one request answered in the measured window: a
  // server that serves only some connections at a time starves the others,
  // and their requests never enter the latencies.
  std::atomic<int> servedClients{0};
  std::mutex mu;
  std::vector<double> latencies;
  std::map<int, long> statuses;
  std::atomic<bool> go{false};
  Clock::time_point start, end;

  auto client = [&]() {
    std::vector<double> mine;
    std::map<int, long> myStatuses;
    long myFailures = 0;
    int fd = connectTo(o);
    std::string buf;
    bool keepAlive = true;
    auto once = [&](bool record) {
      if (fd < 0)
        fd = connectTo(o);
      Clock::time_point t0 = Clock::now();
      int status = -1;
      if (fd >= 0 && writeAll(fd, request))
        status = readResponse(fd, buf, keepAlive);
      double us =
          std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      if (status < 0 || !keepAlive) {
        if (fd >= 0)
          close(fd);
        fd = -1;
        buf.clear();
      }
      if (!record)
        return;
      ++myStatuses[status];
      if (status != 200)
        ++myFailures;
      mine.push_back(us);
    };
    for (int i = 0; i < o.warmup; ++i)
      once(false);
    while (!go)
      std::this_thread::yield();
    for (;;) {
      if (o.requests && issued.fetch_add(1) >= o.requests)
        break;
      if (o.seconds &&
          Clock::now() - start >= std::chrono::duration<double>(o.seconds))
        break;
      once(true);
    }
    if (fd >= 0)
      close(fd);
    if (!mine.empty())
      ++servedClients;
    std::lock_guard<std::mutex> lock(mu);
    latencies.insert(latencies.end(), mine.begin(), mine.end());
    for (auto &[s, n] : myStatuses)
      statuses[s] += n;
    failures += myFailures;
  };

  std::vector<std::thread> threads;
  for (int i = 0; i < o.clients; ++i)
    threads.emplace_back(client);
  // Let every client finish its warm-up before the clock starts.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  start = Clock::now();
  go = true;
  for (auto &t : threads)
    t.join();
  end = Clock::now();

  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double q) {
    if (latencies.empty())
      return 0.0;
    size_t k = std::min(latencies.size() - 1, (size_t)(q * latencies.size()));
    return latencies[k];
  };
  double seconds = std::chrono::duration<double>(end - start).count();
  double mean = 0;
  for (double l : latencies)
    mean += l;
  mean = latencies.empty() ? 0 : mean / latencies.size();
  std::printf("{\"requests\": %zu, \"failures\": %ld, \"seconds\": %.3f, "
              "\"throughput\": %.1f, \"p50_us\": %.1f, \"p90_us\": %.1f, "
              "\"p99_us\": %.1f, \"mean_us\": %.1f, \"clients\": %d, "
              "\"served_clients\": %d, \"statuses\": {",
              latencies.size(), failures.load(), seconds,
              latencies.size() / seconds, pct(0.5), pct(0.9), pct(0.99), mean,
              o.clients, servedClients.load());
  bool first = true;
  for (auto &[s, n] : statuses) {
    std::printf("%s\"%d\": %ld", first ? "" : ", ", s, n);
    first = false;
  }
  std::printf("}}\n");
  return 0;
}
