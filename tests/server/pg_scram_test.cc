// SCRAM-SHA-256 (server/pg_scram.h) against the example exchange of RFC 7677, section 3, and its failure modes.

#include "server/pg_scram.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace tessera::pg {
namespace {

constexpr char kClientFirst[] = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr char kServerNonce[] = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr char kServerFirst[] =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr char kClientFinal[] =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr char kServerFinal[] = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

ScramSecret Rfc7677Secret(const char* password) {
  std::string salt;
  EXPECT_TRUE(absl::Base64Unescape("W22ZaJ0SNY7soEsUEjb6gQ==", &salt));
  return ScramSecret::FromPassword(password, salt, 4096);
}

TEST(ScramTest, Rfc7677Example) {
  const ScramSecret secret = Rfc7677Secret("pencil");
  ScramExchange exchange(secret, kServerNonce);
  absl::StatusOr<std::string> server_first = exchange.Start(kClientFirst);
  ASSERT_TRUE(server_first.ok()) << server_first.status();
  EXPECT_EQ(*server_first, kServerFirst);
  absl::StatusOr<std::string> server_final = exchange.Finish(kClientFinal);
  ASSERT_TRUE(server_final.ok()) << server_final.status();
  EXPECT_EQ(*server_final, kServerFinal);
}

TEST(ScramTest, WrongPasswordIsUnauthenticated) {
  const ScramSecret secret = Rfc7677Secret("not-pencil");
  ScramExchange exchange(secret, kServerNonce);
  ASSERT_TRUE(exchange.Start(kClientFirst).ok());
  EXPECT_EQ(exchange.Finish(kClientFinal).status().code(), absl::StatusCode::kUnauthenticated);
}

TEST(ScramTest, MalformedMessagesAreRejected) {
  const ScramSecret secret = Rfc7677Secret("pencil");
  {
    ScramExchange exchange(secret, kServerNonce);
    EXPECT_EQ(exchange.Start("p=tls-server-end-point,,n=,r=abc").status().code(),
              absl::StatusCode::kInvalidArgument);  // a binding never offered
    EXPECT_EQ(exchange.Start("n,,n=user").status().code(), absl::StatusCode::kInvalidArgument);    // no nonce
    EXPECT_EQ(exchange.Finish(kClientFinal).status().code(), absl::StatusCode::kInvalidArgument);  // no first
  }
  ScramExchange exchange(secret, kServerNonce);
  ASSERT_TRUE(exchange.Start(kClientFirst).ok());
  EXPECT_EQ(exchange.Finish("c=biws,r=other,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=").status().code(),
            absl::StatusCode::kInvalidArgument);  // nonce
  EXPECT_EQ(exchange.Finish("c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA").status().code(),
            absl::StatusCode::kInvalidArgument);  // binding differs from the header
  EXPECT_EQ(exchange.Finish("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0").status().code(),
            absl::StatusCode::kInvalidArgument);  // no proof
}

TEST(ScramTest, RandomSaltsAndNoncesDiffer) {
  const ScramSecret a = ScramSecret::FromPassword("token");
  const ScramSecret b = ScramSecret::FromPassword("token");
  EXPECT_EQ(a.salt.size(), 16u);
  EXPECT_NE(a.salt, b.salt);
  ScramExchange first(a), second(a);
  EXPECT_NE(*first.Start("n,,n=,r=abc"), *second.Start("n,,n=,r=abc"));
}

}  // namespace
}  // namespace tessera::pg
