// The one exception kiln-serve throws: a message for the client and the HTTP
// status that goes with it (400 a bad request, 404 an unknown model, 503 an
// overloaded queue, 500 a failing model).
#ifndef KILN_TOOLS_KILN_SERVE_ERROR_H
#define KILN_TOOLS_KILN_SERVE_ERROR_H

#include <stdexcept>
#include <string>

namespace kiln::serve {

class Error : public std::runtime_error {
public:
  Error(int status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

private:
  int status_;
};

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_ERROR_H
