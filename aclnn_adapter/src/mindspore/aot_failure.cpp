#include "mindspore/aot_failure.h"

#include <dlfcn.h>

#include <cstddef>

namespace ms_bcewl::aot {
namespace {

// What `throw std::runtime_error(message)` compiles to against libstdc++, under the Itanium C++ ABI's names. Typed
// noexcept, although the throw is not: see RaiseFailure.
struct HostRuntime {
  void *(*allocate_exception)(size_t) noexcept;              // __cxa_allocate_exception
  void (*construct)(void *, const char *) noexcept;          // std::runtime_error::runtime_error(const char *)
  void (*destroy)(void *);                                   // std::runtime_error::~runtime_error()
  void *type_info;                                           // typeid(std::runtime_error)
  void (*raise)(void *, void *, void (*)(void *)) noexcept;  // __cxa_throw
};

// libstdc++'s std::runtime_error holds a vtable pointer and a string pointer; its exception is allocated generously.
constexpr size_t kRuntimeErrorBytes = 8 * sizeof(void *);

template <typename Pointer>
Pointer Symbol(void *library, const char *name) noexcept {
  return reinterpret_cast<Pointer>(dlsym(library, name));
}

// libstdc++'s parts, where the process has loaded it (RTLD_NOLOAD: never a copy of the library's own).
bool FindHostRuntime(HostRuntime *host) noexcept {
  void *library = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return false;
  *host = {Symbol<decltype(host->allocate_exception)>(library, "__cxa_allocate_exception"),
           Symbol<decltype(host->construct)>(library, "_ZNSt13runtime_errorC1EPKc"),
           Symbol<decltype(host->destroy)>(library, "_ZNSt13runtime_errorD1Ev"),
           Symbol<void *>(library, "_ZTISt13runtime_error"), Symbol<decltype(host->raise)>(library, "__cxa_throw")};
  dlclose(library);  // the reference of whoever loaded it keeps it loaded
  return host->allocate_exception != nullptr && host->construct != nullptr && host->destroy != nullptr &&
         host->type_info != nullptr && host->raise != nullptr;
}

// Never returns, and so declared (and not inlined): a sanitizer then forgets the frames the exception unwinds, as
// its own __cxa_throw would have it do.
[[noreturn]] [[gnu::noinline]] void Throw(const HostRuntime &host, const char *message) noexcept {
  void *error = host.allocate_exception(kRuntimeErrorBytes);
  host.construct(error, message);
  host.raise(error, host.type_info, host.destroy);
  __builtin_unreachable();
}

}  // namespace

int RaiseFailure(const char *failure) noexcept {
  HostRuntime host;
  if (failure == nullptr) return 0;
  if (!FindHostRuntime(&host)) return kEntryFailed;
  Throw(host, failure);
}

}  // namespace ms_bcewl::aot
