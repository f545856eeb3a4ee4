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

template <std::size_t Size>
class Recycler {
 public:
  static void* allocate(std::size_t size) {
#ifndef MANIFOLD_RECYCLER_OFF
    if (size == Size) {
      List& l = list();
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
      List& l = list();
      if (l.alive && l.count < kMaxKept) {
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
  struct List {
    Node* head = nullptr;
    std::size_t count = 0;
    bool alive = true;  // false once the thread's list is gone (objects freed at thread exit)
    ~List() {
      alive = false;
      while (head) {
        Node* next = head->next;
        ::operator delete(head);
        head = next;
      }
      count = 0;
    }
  };
  static List& list() {
    static thread_local List l;
    return l;
  }
};

}  // namespace manifold
