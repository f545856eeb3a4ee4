// Thread-local variables on the enqueue path. The library is loaded with dlopen (by the ICD
// loader), where the default TLS model makes every access a call to __tls_get_addr. The few
// small variables marked with this use the initial-exec model instead (a plain %fs-relative
// access), which glibc serves from the static TLS space it keeps spare for dlopened libraries.
#pragma once

#define MANIFOLD_FAST_TLS [[gnu::tls_model("initial-exec")]]
