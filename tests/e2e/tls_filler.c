// A shared object that takes FILLER_BYTES of glibc's static TLS space when it is dlopen'ed: an
// initial-exec thread-local array, as libraries such as libgomp have.
__attribute__((tls_model("initial-exec"))) static __thread char filler[FILLER_BYTES];

char* tls_filler_address(void) { return filler; }
