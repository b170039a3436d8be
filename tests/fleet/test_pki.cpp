#include "test_pki.hpp"

#include <fstream>

namespace trimd::test {

namespace {

// A fresh P-256 key without a passphrase, then `more`.
std::vector<std::string> openssl_req(const std::vector<std::string>& more) {
  std::vector<std::string> argv{
      "openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"};
  argv.insert(argv.end(), more.begin(), more.end());
  return argv;
}

// etcd's JSON gateway calls its own gRPC server with the server certificate
// as a client certificate (--client-cert-auth): it needs clientAuth too.
const std::string kServerExtensions =
    "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n";

}  // namespace

TestPki::TestPki()
    : ca_(make_ca("ca")), stranger_ca_(make_ca("stranger-ca")),
      server_(make_signed("server", ca_, kServerExtensions)),
      client_(make_signed("client", ca_, "extendedKeyUsage=clientAuth\n")),
      stranger_client_(
          make_signed("stranger-client", stranger_ca_, "extendedKeyUsage=clientAuth\n")) {}

KeyPair TestPki::make_ca(const std::string& name) {
  const auto& dir = dir_.path();
  KeyPair ca{dir / (name + ".pem"), dir / (name + ".key")};
  run_or_throw(openssl_req({"-x509", "-days", "1", "-subj", "/CN=trimd-test-" + name, "-keyout",
                            ca.key.string(), "-out", ca.cert.string()}));
  return ca;
}

KeyPair TestPki::make_signed(const std::string& name, const KeyPair& ca,
                             const std::string& extensions) {
  const auto& dir = dir_.path();
  KeyPair pair{dir / (name + ".pem"), dir / (name + ".key")};
  const auto csr = dir / (name + ".csr"), ext = dir / (name + ".ext");
  std::ofstream(ext) << extensions;
  run_or_throw(openssl_req(
      {"-subj", "/CN=trimd-test-" + name, "-keyout", pair.key.string(), "-out", csr.string()}));
  run_or_throw({"openssl", "x509", "-req", "-in", csr.string(), "-CA", ca.cert.string(), "-CAkey",
                ca.key.string(), "-CAcreateserial", "-days", "1", "-extfile", ext.string(), "-out",
                pair.cert.string()});
  return pair;
}

}  // namespace trimd::test
