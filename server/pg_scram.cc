#include "server/pg_scram.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/secret_equals.h"

namespace tessera::pg {
namespace {

std::string RandomBytes(size_t count) {
  std::string bytes(count, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(count));
  return bytes;
}

std::string Hmac(std::string_view key, std::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), out, &length);
  return std::string(reinterpret_cast<char*>(out), length);
}

std::string Sha256(std::string_view data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out);
  return std::string(reinterpret_cast<char*>(out), sizeof(out));
}

// "a=value" attributes of a SCRAM message, in order.
std::vector<std::pair<char, std::string>> Attributes(std::string_view message) {
  std::vector<std::pair<char, std::string>> attributes;
  for (absl::string_view part : absl::StrSplit(absl::string_view(message.data(), message.size()), ',')) {
    if (part.size() >= 2 && part[1] == '=') attributes.emplace_back(part[0], std::string(part.substr(2)));
    else attributes.emplace_back('\0', std::string(part));
  }
  return attributes;
}

}  // namespace

ScramSecret ScramSecret::FromPassword(std::string_view password, std::string salt, int iterations) {
  ScramSecret secret;
  secret.salt = salt.empty() ? RandomBytes(16) : std::move(salt);
  secret.iterations = iterations;
  unsigned char salted[SHA256_DIGEST_LENGTH];
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                    reinterpret_cast<const unsigned char*>(secret.salt.data()), static_cast<int>(secret.salt.size()),
                    iterations, EVP_sha256(), sizeof(salted), salted);
  const std::string salted_password(reinterpret_cast<char*>(salted), sizeof(salted));
  secret.stored_key = Sha256(Hmac(salted_password, "Client Key"));
  secret.server_key = Hmac(salted_password, "Server Key");
  return secret;
}

ScramExchange::ScramExchange(const ScramSecret& secret, std::string server_nonce)
    : secret_(secret),
      server_nonce_(server_nonce.empty() ? absl::Base64Escape(RandomBytes(18)) : std::move(server_nonce)) {}

absl::StatusOr<std::string> ScramExchange::Start(std::string_view client_first) {
  // gs2-header: "n,," (no channel binding) or "y,," (the client could bind but the server did not offer it);
  // "p=..." asks for a binding that was never offered.
  if (!(client_first.substr(0, 2) == "n," || client_first.substr(0, 2) == "y,")) {
    return absl::InvalidArgumentError("SCRAM: unsupported channel binding (SCRAM-SHA-256-PLUS is not offered)");
  }
  const size_t second_comma = client_first.find(',', 2);
  if (second_comma == std::string_view::npos) return absl::InvalidArgumentError("SCRAM: malformed client-first");
  gs2_header_ = std::string(client_first.substr(0, second_comma + 1));
  client_first_bare_ = std::string(client_first.substr(second_comma + 1));
  std::string client_nonce;
  for (const auto& [name, value] : Attributes(client_first_bare_)) {
    if (name == 'r') client_nonce = value;
    if (name == 'm') return absl::InvalidArgumentError("SCRAM: extensions are not supported");
  }
  if (client_nonce.empty()) return absl::InvalidArgumentError("SCRAM: the client-first message has no nonce");
  nonce_ = client_nonce + server_nonce_;
  server_first_ = absl::StrCat("r=", nonce_, ",s=", absl::Base64Escape(secret_.salt), ",i=", secret_.iterations);
  return server_first_;
}

absl::StatusOr<std::string> ScramExchange::Finish(std::string_view client_final) {
  if (server_first_.empty()) return absl::InvalidArgumentError("SCRAM: client-final before client-first");
  const size_t proof_at = client_final.rfind(",p=");
  if (proof_at == std::string_view::npos) return absl::InvalidArgumentError("SCRAM: the client-final has no proof");
  const std::string without_proof(client_final.substr(0, proof_at));
  std::string channel_binding, nonce, proof;
  for (const auto& [name, value] : Attributes(without_proof)) {
    if (name == 'c') channel_binding = value;
    if (name == 'r') nonce = value;
  }
  std::string gs2;
  if (!absl::Base64Unescape(channel_binding, &gs2) || gs2 != gs2_header_) {
    return absl::InvalidArgumentError("SCRAM: channel binding does not match");
  }
  if (nonce != nonce_) return absl::InvalidArgumentError("SCRAM: nonce does not match");
  const std::string_view encoded_proof = client_final.substr(proof_at + 3);
  if (!absl::Base64Unescape(absl::string_view(encoded_proof.data(), encoded_proof.size()), &proof) ||
      proof.size() != SHA256_DIGEST_LENGTH) {
    return absl::InvalidArgumentError("SCRAM: malformed proof");
  }
  const std::string auth_message = absl::StrCat(client_first_bare_, ",", server_first_, ",", without_proof);
  const std::string client_signature = Hmac(secret_.stored_key, auth_message);
  std::string client_key = proof;
  for (size_t i = 0; i < client_key.size(); ++i) client_key[i] ^= client_signature[i];
  if (!SecretEquals(Sha256(client_key), secret_.stored_key)) {
    return absl::UnauthenticatedError("SCRAM: wrong password");
  }
  return absl::StrCat("v=", absl::Base64Escape(Hmac(secret_.server_key, auth_message)));
}

}  // namespace tessera::pg
