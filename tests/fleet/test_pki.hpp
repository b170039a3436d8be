// Certificates for the fleet's TLS tests, made by openssl in a temporary
// directory: the cluster's CA, etcd's server certificate (SAN 127.0.0.1),
// a client certificate it signed, and one signed by a stranger CA.
#pragma once

#include <filesystem>

#include "etcd_member.hpp"

namespace trimd::test {

struct KeyPair {
  std::filesystem::path cert, key;
};

class TestPki {
 public:
  TestPki();  // throws std::runtime_error with openssl's stderr when a step fails
  const std::filesystem::path& ca() const { return ca_.cert; }
  ServerTls server_tls() const { return {ca_.cert, server_.cert, server_.key}; }
  const KeyPair& client() const { return client_; }
  const KeyPair& stranger_client() const { return stranger_client_; }  // another CA's

 private:
  KeyPair make_ca(const std::string& name);
  KeyPair make_signed(const std::string& name, const KeyPair& ca, const std::string& extensions);

  TempDir dir_{"trimd-pki-"};
  KeyPair ca_, stranger_ca_, server_, client_, stranger_client_;
};

#define TRIMD_REQUIRE_OPENSSL() TRIMD_REQUIRE_PROGRAM("openssl")

}  // namespace trimd::test
