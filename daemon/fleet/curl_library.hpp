// libcurl, opened with dlopen() when the first etcd client is made. Linked
// in, libcurl maps its TLS and Kerberos stacks (libcrypto, gnutls, krb5,
// p11-kit: about 4 MiB of RSS) into every trimd, also the many that never
// set [fleet]; loaded here, only a trimd with a fleet pays for them.
#pragma once

#include <curl/curl.h>

namespace trimd::etcd {

// The libcurl calls the etcd client makes, as loaded from libcurl.so.4.
struct CurlLibrary {
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_cleanup) multi_cleanup;
  decltype(&::curl_multi_setopt) multi_setopt;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_socket_action) multi_socket_action;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
};

// The library, loaded on the first call and kept for the process's life.
// Throws std::runtime_error naming the file and dlerror()'s reason when it
// cannot be loaded (a later call tries again).
const CurlLibrary& curl_library();

}  // namespace trimd::etcd
