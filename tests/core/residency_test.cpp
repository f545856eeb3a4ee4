// core/residency.h against a byte-by-byte model: random add/set operations over random ranges,
// then every query must agree with the model and the piece map must stay merged.
#include "core/residency.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace manifold {
namespace {

TEST(Residency, StartsEverywhereOrAtOnePlace) {
  Residency undefined(100, Residency::kEverywhere);
  int calls = 0;
  undefined.for_each_missing(0, 100, 5, [&](size_t, size_t, Residency::Places) { ++calls; });
  EXPECT_EQ(0, calls);
  Residency host(100, Residency::bit(kHostPlace));
  host.for_each_missing(10, 20, 1, [&](size_t o, size_t n, Residency::Places at) {
    EXPECT_EQ(10u, o);
    EXPECT_EQ(20u, n);
    EXPECT_EQ(Residency::bit(kHostPlace), at);
    ++calls;
  });
  EXPECT_EQ(1, calls);
}

TEST(Residency, RangesPastTheEndAreClamped) {
  Residency r(64, Residency::bit(0));
  r.set(60, 100, 2);
  std::vector<std::pair<size_t, size_t>> missing;
  r.for_each_missing(0, ~size_t(0), 2,
                     [&](size_t o, size_t n, Residency::Places) { missing.emplace_back(o, n); });
  ASSERT_EQ(1u, missing.size());
  EXPECT_EQ(0u, missing[0].first);
  EXPECT_EQ(60u, missing[0].second);
}

TEST(Residency, MatchesAByteModel) {
  constexpr size_t kSize = 257;
  std::mt19937 rng(1234);
  for (int round = 0; round < 50; ++round) {
    Residency r(kSize, Residency::bit(0));
    std::vector<Residency::Places> model(kSize, Residency::bit(0));
    for (int step = 0; step < 200; ++step) {
      const size_t offset = rng() % kSize, size = rng() % (kSize - offset + 1);
      const MemoryPlace place = rng() % 4;
      if (rng() % 2) {
        r.add(offset, size, place);
        for (size_t i = offset; i < offset + size; ++i) model[i] |= Residency::bit(place);
      } else {
        r.set(offset, size, place);
        for (size_t i = offset; i < offset + size; ++i) model[i] = Residency::bit(place);
      }
      // Pieces are maximal: never more than the model's runs of equal places.
      size_t runs = 1;
      for (size_t i = 1; i < kSize; ++i) runs += model[i] != model[i - 1];
      ASSERT_LE(r.piece_count(), runs) << "round " << round << " step " << step;
      const MemoryPlace query = rng() % 4;
      const size_t qo = rng() % kSize, qs = rng() % (kSize - qo + 1);
      std::vector<bool> reported(kSize, false);
      size_t last_end = 0;
      r.for_each_missing(qo, qs, query, [&](size_t o, size_t n, Residency::Places at) {
        ASSERT_GE(o, last_end);  // in address order, no overlap
        last_end = o + n;
        for (size_t i = o; i < o + n; ++i) {
          ASSERT_EQ(model[i], at) << "byte " << i;
          reported[i] = true;
        }
      });
      for (size_t i = qo; i < qo + qs; ++i)
        ASSERT_EQ(!(model[i] & Residency::bit(query)), reported[i]) << "byte " << i;
    }
  }
}

}  // namespace
}  // namespace manifold
