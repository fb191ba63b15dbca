// StoryCorpus.h — the built-in text corpus: seeded simple children's stories (EXPERIMENTS.md §3).
//
// The head-progression experiment trained on children's stories. HeadLab must work offline with
// nothing downloaded, so it writes its own: short stories with a small vocabulary (a few hundred
// words) and simple syntax, each about one child or animal, a friend, a thing and a place, ending
// in "The end.". Within a story the names, pronouns and things recur, so a model gains from
// looking back (what attention heads are for). Deterministic for a seed, on every platform (its
// own splitmix64 generator, no std:: distributions). Torch-free and Qt-free.
#pragma once

#include <cstdint>
#include <string>

namespace headlab {

// The seed of the corpus that text runs use when task.text_path is empty.
inline constexpr uint64_t kDefaultStorySeed = 2024;

// Exactly `bytes` bytes of stories (ASCII, stories separated by a blank line; the last story is
// cut at `bytes`). The same seed and size give the same text; a larger size starts with the
// smaller one's stories. About 100 MB/s.
std::string generateStoryCorpus(uint64_t seed, int64_t bytes);

// One story, for previews and tests: the `index`-th story of the corpus of `seed`.
std::string generateStory(uint64_t seed, int64_t index);

} // namespace headlab
