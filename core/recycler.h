// Per-thread free lists for the objects every command makes and drops (its Command and Event).
// A run of launches from one thread makes and completes thousands of them; the general-purpose
// allocator keeps only a few blocks per size at hand for a thread and sends the rest through its
// shared bins. Here a thread keeps up to kMaxKept blocks of one size for its next commands.
// Sanitizer builds use the plain allocator, so that ASan and TSan see every reuse.
#pragma once

#include <cstddef>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MANIFOLD_RECYCLER_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MANIFOLD_RECYCLER_OFF 1
#endif
#endif

namespace manifold {

// Hidden: the thread-local lists then bind within the module (local-dynamic TLS, one
// __tls_get_addr per function at most), and a trivially destructible list needs no guard that
// registers its destructor on every access; a thread's first kept block registers a reaper.
template <std::size_t Size>
class [[gnu::visibility("hidden")]] Recycler {
 public:
  static void* allocate(std::size_t size) {
#ifndef MANIFOLD_RECYCLER_OFF
    if (size == Size) {
      List& l = list;
      if (Node* n = l.head) {
        l.head = n->next;
        --l.count;
        return n;
      }
    }
#endif
    return ::operator new(size);
  }

  static void deallocate(void* p, std::size_t size) {
#ifndef MANIFOLD_RECYCLER_OFF
    if (size == Size) {
      List& l = list;
      if (l.state == State::kKeeping && l.count < kMaxKept) {
        l.head = new (p) Node{l.head};
        ++l.count;
        return;
      }
      if (l.state == State::kUnused) {
        start_keeping();
        l.head = new (p) Node{l.head};
        ++l.count;
        return;
      }
    }
#endif
    ::operator delete(p);
  }

 private:
  static_assert(Size >= sizeof(void*));
  static constexpr std::size_t kMaxKept = 1024;
  struct Node {
    Node* next;
  };
  // kUnused until the thread keeps a block, kGone once its reaper ran (objects freed at thread
  // exit go to the allocator).
  enum class State : unsigned char { kUnused, kKeeping, kGone };
  struct List {
    Node* head;
    std::size_t count;
    State state;
  };
  struct Reaper {
    ~Reaper() {
      List& l = list;
      l.state = State::kGone;
      while (l.head) {
        Node* next = l.head->next;
        ::operator delete(l.head);
        l.head = next;
      }
      l.count = 0;
    }
  };
  [[gnu::noinline]] static void start_keeping() {
    static thread_local Reaper reaper;
    (void)reaper;
    list.state = State::kKeeping;
  }
  static constinit inline thread_local List list{};
};

}  // namespace manifold
