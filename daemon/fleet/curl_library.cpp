#include "curl_library.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace trimd::etcd {

namespace {

// libcurl's SONAME since 7.16; the -dev package's libcurl.so is only a link.
constexpr const char* kCurlLibraryFile = "libcurl.so.4";

template <typename Function>
void resolve_curl_symbol(void* handle, Function& slot, const char* name) {
  void* symbol = dlsym(handle, name);
  if (!symbol)
    throw std::runtime_error(std::string("cannot load the fleet's HTTP library: ") +
                             kCurlLibraryFile + " has no " + name);
  slot = reinterpret_cast<Function>(symbol);
}

CurlLibrary load_curl() {
  void* handle = dlopen(kCurlLibraryFile, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw std::runtime_error(std::string("cannot load the fleet's HTTP library ") +
                             kCurlLibraryFile + ": " + dlerror() + " (is libcurl4 installed?)");
  CurlLibrary curl{};
  try {
    resolve_curl_symbol(handle, curl.easy_init, "curl_easy_init");
    resolve_curl_symbol(handle, curl.easy_cleanup, "curl_easy_cleanup");
    resolve_curl_symbol(handle, curl.easy_setopt, "curl_easy_setopt");
    resolve_curl_symbol(handle, curl.easy_getinfo, "curl_easy_getinfo");
    resolve_curl_symbol(handle, curl.easy_strerror, "curl_easy_strerror");
    resolve_curl_symbol(handle, curl.multi_init, "curl_multi_init");
    resolve_curl_symbol(handle, curl.multi_cleanup, "curl_multi_cleanup");
    resolve_curl_symbol(handle, curl.multi_setopt, "curl_multi_setopt");
    resolve_curl_symbol(handle, curl.multi_add_handle, "curl_multi_add_handle");
    resolve_curl_symbol(handle, curl.multi_remove_handle, "curl_multi_remove_handle");
    resolve_curl_symbol(handle, curl.multi_socket_action, "curl_multi_socket_action");
    resolve_curl_symbol(handle, curl.multi_info_read, "curl_multi_info_read");
    resolve_curl_symbol(handle, curl.slist_append, "curl_slist_append");
    resolve_curl_symbol(handle, curl.slist_free_all, "curl_slist_free_all");
  } catch (...) {
    dlclose(handle);
    throw;
  }
  // Kept open for the process's life: easy handles and their callbacks
  // outlive any one client.
  return curl;
}

}  // namespace

const CurlLibrary& curl_library() {
  // A throwing initialiser leaves the static unset, so the next call retries.
  static const CurlLibrary library = load_curl();
  return library;
}

}  // namespace trimd::etcd
