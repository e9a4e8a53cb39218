#pragma once
// The server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL uses it for password authentication: the
// client proves it knows the password (here, the server's token) without sending it, and the server proves it
// knows it too. No channel binding (SCRAM-SHA-256-PLUS is not offered, as there is no TLS on this port); the user
// name inside the SCRAM messages is ignored, as PostgreSQL does; the password is used as given (no SASLprep, which
// only matters for non-ASCII passwords). Cryptography from OpenSSL's libcrypto.
//
// Threading: a ScramSecret is immutable (share it); a ScramExchange belongs to one connection.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera::pg {

// What the server keeps of a password: the salt, the iteration count, StoredKey and ServerKey.
struct ScramSecret {
  std::string salt;  // raw bytes
  int iterations = 4096;
  std::string stored_key;
  std::string server_key;

  // Derives the keys from `password` with `salt` (raw bytes; empty: 16 random bytes).
  static ScramSecret FromPassword(std::string_view password, std::string salt = "", int iterations = 4096);
};

class ScramExchange {
 public:
  // `server_nonce`: printable characters without ','; empty: 18 random bytes in base64.
  explicit ScramExchange(const ScramSecret& secret, std::string server_nonce = "");

  // The client-first-message ("n,,n=user,r=nonce") -> the server-first-message ("r=...,s=...,i=4096").
  // InvalidArgument for malformed messages or a channel binding that was not offered.
  absl::StatusOr<std::string> Start(std::string_view client_first);
  // The client-final-message ("c=biws,r=...,p=proof") -> the server-final-message ("v=signature").
  // Unauthenticated when the proof is wrong, InvalidArgument when the message is malformed.
  absl::StatusOr<std::string> Finish(std::string_view client_final);

 private:
  const ScramSecret& secret_;
  std::string server_nonce_;
  std::string gs2_header_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string nonce_;  // client nonce + server nonce
};

}  // namespace tessera::pg
