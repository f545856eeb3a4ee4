// UCX's UCP functions, loaded at run time (dlopen): a machine without UCX simply has no remote
// devices. The types and constants come from UCX's own headers (libucx-dev); only the functions
// are resolved from the library, so nothing links against libucp.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

namespace manifold::remote::ucx {

// X(member, return type, parameters): member is also the symbol's name.
#define MANIFOLD_UCP_FUNCTIONS(X)                                                                \
  X(ucp_config_read, ucs_status_t, (const char*, const char*, ucp_config_t**))                   \
  X(ucp_config_release, void, (ucp_config_t*))                                                   \
  X(ucp_init_version, ucs_status_t,                                                              \
    (unsigned, unsigned, const ucp_params_t*, const ucp_config_t*, ucp_context_h*))              \
  X(ucp_cleanup, void, (ucp_context_h))                                                          \
  X(ucp_worker_create, ucs_status_t, (ucp_context_h, const ucp_worker_params_t*, ucp_worker_h*)) \
  X(ucp_worker_destroy, void, (ucp_worker_h))                                                    \
  X(ucp_worker_query, ucs_status_t, (ucp_worker_h, ucp_worker_attr_t*))                          \
  X(ucp_worker_progress, unsigned, (ucp_worker_h))                                               \
  X(ucp_worker_get_efd, ucs_status_t, (ucp_worker_h, int*))                                      \
  X(ucp_worker_arm, ucs_status_t, (ucp_worker_h))                                                \
  X(ucp_worker_signal, ucs_status_t, (ucp_worker_h))                                             \
  X(ucp_worker_set_am_recv_handler, ucs_status_t, (ucp_worker_h, const ucp_am_handler_param_t*)) \
  X(ucp_listener_create, ucs_status_t,                                                           \
    (ucp_worker_h, const ucp_listener_params_t*, ucp_listener_h*))                               \
  X(ucp_listener_destroy, void, (ucp_listener_h))                                                \
  X(ucp_listener_query, ucs_status_t, (ucp_listener_h, ucp_listener_attr_t*))                    \
  X(ucp_listener_reject, ucs_status_t, (ucp_listener_h, ucp_conn_request_h))                     \
  X(ucp_conn_request_query, ucs_status_t, (ucp_conn_request_h, ucp_conn_request_attr_t*))        \
  X(ucp_ep_create, ucs_status_t, (ucp_worker_h, const ucp_ep_params_t*, ucp_ep_h*))              \
  X(ucp_ep_close_nbx, ucs_status_ptr_t, (ucp_ep_h, const ucp_request_param_t*))                  \
  X(ucp_am_send_nbx, ucs_status_ptr_t,                                                           \
    (ucp_ep_h, unsigned, const void*, size_t, const void*, size_t, const ucp_request_param_t*))  \
  X(ucp_am_recv_data_nbx, ucs_status_ptr_t,                                                      \
    (ucp_worker_h, void*, void*, size_t, const ucp_request_param_t*))                            \
  X(ucp_request_cancel, void, (ucp_worker_h, void*))                                             \
  X(ucp_request_free, void, (void*))

struct Api {
#define MANIFOLD_UCP_MEMBER(name, ret, params) ret(*name) params = nullptr;
  MANIFOLD_UCP_FUNCTIONS(MANIFOLD_UCP_MEMBER)
#undef MANIFOLD_UCP_MEMBER
  // libucs's; null where it cannot be found (status_string then prints the number).
  const char* (*ucs_status_string)(ucs_status_t) = nullptr;

  std::string status_string(ucs_status_t status) const;
};

// The functions of `ucp_library` (loaded once per name, never unloaded: unloading UCX while a
// thread it started may still run is never worth it); null with the reason in *error where the
// library or one of its functions is missing.
const Api* load(const std::string& ucp_library, std::string* error);

}  // namespace manifold::remote::ucx
