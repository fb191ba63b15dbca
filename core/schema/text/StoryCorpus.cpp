// StoryCorpus.cpp — the seeded children's-story generator behind the default text corpus.
//
// A story is an opening that introduces the hero, three to six middle sentences drawn from a few
// dozen templates, an ending and "The end.". Every story has its own generator, seeded from the
// corpus seed and the story's index, so story i is the same in a corpus of any size.
#include "core/schema/text/StoryCorpus.h"

#include <array>
#include <string_view>
#include <vector>

namespace headlab {

namespace {

// splitmix64: small, fast, and the same on every platform.
class StoryRng {
public:
    explicit StoryRng(uint64_t seed)
        : m_state(seed)
    {}
    uint64_t next()
    {
        uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, n).
    size_t below(size_t n)
    {
        return static_cast<size_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
    }
    template <typename Array>
    std::string_view pick(const Array &a)
    {
        return a[below(a.size())];
    }
    bool chance(unsigned percent) { return below(100) < percent; }

private:
    uint64_t m_state;
};

struct Hero {
    std::string_view name;
    bool girl;
};

constexpr std::array<Hero, 24> kHeroes = {{
    {"Lily", true}, {"Tom", false},  {"Mia", true},  {"Ben", false}, {"Sue", true},
    {"Sam", false}, {"Anna", true},  {"Max", false}, {"Lucy", true}, {"Tim", false},
    {"Emma", true}, {"Jack", false}, {"Zoe", true},  {"Leo", false}, {"Ella", true},
    {"Bob", false}, {"Amy", true},   {"Dan", false}, {"Kate", true}, {"Joe", false},
    {"Rose", true}, {"Finn", false}, {"Ivy", true},  {"Ned", false},
}};

constexpr std::array<std::string_view, 14> kAnimals = {"cat",  "dog",   "bird", "frog",  "bunny",
                                                       "bear", "duck",  "fox",  "mouse", "fish",
                                                       "pig",  "horse", "owl",  "puppy"};
constexpr std::array<std::string_view, 6> kKids = {"girl", "boy", "girl", "boy", "kid", "child"};
constexpr std::array<std::string_view, 14> kAdjectives = {
    "little", "big",   "happy",   "small",  "kind",   "brave", "shy",
    "silly",  "funny", "curious", "gentle", "sleepy", "fast",  "clever"};
constexpr std::array<std::string_view, 10> kColours = {
    "red", "blue", "green", "yellow", "pink", "white", "brown", "purple", "orange", "black"};
constexpr std::array<std::string_view, 12> kPlaces = {"park",  "forest", "garden", "house",
                                                      "farm",  "beach",  "town",   "hill",
                                                      "river", "school", "zoo",    "woods"};
constexpr std::array<std::string_view, 18> kThings = {
    "ball",  "kite",    "box",   "hat",  "toy car", "book", "cake", "flower", "stick",
    "shell", "balloon", "apple", "drum", "boat",    "doll", "cup",  "rock",   "blanket"};
constexpr std::array<std::string_view, 8> kSpots = {
    "under a tree", "behind a rock", "in the grass",  "near the door",
    "on a big log", "by the water",  "under the bed", "in a hole"};
constexpr std::array<std::string_view, 8> kGoodFeelings = {"happy", "proud", "glad", "excited",
                                                           "warm",  "calm",  "safe", "loved"};
constexpr std::array<std::string_view, 6> kBadFeelings = {"sad",   "scared", "lonely",
                                                          "angry", "tired",  "worried"};
constexpr std::array<std::string_view, 8> kPlays = {"run",  "jump",  "sing", "dance",
                                                    "swim", "climb", "hide", "play tag"};
constexpr std::array<std::string_view, 8> kFoods = {"soup", "bread", "cookies", "pie",
                                                    "rice", "jam",   "milk",    "carrots"};
constexpr std::array<std::string_view, 6> kProblems = {"too high", "too far", "too heavy",
                                                       "stuck",    "lost",    "broken"};
constexpr std::array<std::string_view, 8> kLessons = {
    "it is good to share",   "friends help each other",      "be kind to everyone",
    "never give up",         "say sorry when you are wrong", "listen to your mom",
    "be careful near water", "it is fun to try new things"};
constexpr std::array<std::string_view, 6> kWeather = {
    "the sun was warm", "it was a windy day", "it was cold outside",
    "the sky was blue", "it was raining",     "the stars were bright"};

// Builds one story about a hero (a child or an animal), a friend, a thing of some colour, a place.
class StoryWriter {
public:
    StoryWriter(uint64_t seed, int64_t index)
        : m_rng(seed ^ (0xd1b54a32d192ed03ull * static_cast<uint64_t>(index + 1)))
    {
        const Hero &hero = kHeroes[m_rng.below(kHeroes.size())];
        m_name = hero.name;
        m_girl = hero.girl;
        do {
            m_friend = kHeroes[m_rng.below(kHeroes.size())].name;
        } while (m_friend == m_name);
        m_animal = m_rng.pick(kAnimals);
        m_heroIsAnimal = m_rng.chance(40);
        m_thing = m_rng.pick(kThings);
        m_colour = m_rng.pick(kColours);
        m_place = m_rng.pick(kPlaces);
    }

    void write(std::string &out)
    {
        opening(out);
        const size_t middle = 3 + m_rng.below(4);
        for (size_t i = 0; i < middle; ++i) sentence(out);
        ending(out);
        out += " The end.";
    }

private:
    std::string_view he() const { return m_girl ? "she" : "he"; }
    std::string_view He() const { return m_girl ? "She" : "He"; }
    std::string_view his() const { return m_girl ? "her" : "his"; }
    std::string_view him() const { return m_girl ? "her" : "him"; }

    void put(std::string &out, std::initializer_list<std::string_view> parts)
    {
        if (!out.empty() && out.back() != '\n') out += ' ';
        for (auto p : parts) out += p;
    }

    void opening(std::string &out)
    {
        const std::string_view what = m_heroIsAnimal ? m_animal : kKids[m_girl ? 0 : 1];
        switch (m_rng.below(4)) {
        case 0:
            put(out, {"Once upon a time, there was a ", m_rng.pick(kAdjectives), " ", what,
                      " named ", m_name, "."});
            break;
        case 1:
            put(out, {"One day, a ", m_rng.pick(kAdjectives), " ", what, " named ", m_name,
                      " went to the ", m_place, "."});
            break;
        case 2:
            put(out, {"There was a ", what, " named ", m_name, ". ", He(), " loved to play with ",
                      his(), " ", m_colour, " ", m_thing, "."});
            break;
        default:
            put(out, {m_name, " was a ", m_rng.pick(kAdjectives), " ", what, ". ", He(),
                      " lived near the ", m_place, " with ", his(), " mom and dad."});
            break;
        }
    }

    void sentence(std::string &out)
    {
        switch (m_rng.below(16)) {
        case 0:
            put(out, {m_name, " saw a ", m_colour, " ", m_thing, " ", m_rng.pick(kSpots), "."});
            break;
        case 1:
            put(out, {He(), " wanted to get the ", m_thing, ", but it was ", m_rng.pick(kProblems),
                      "."});
            break;
        case 2:
            put(out, {m_name, " asked ", m_friend, ", \"Can you help me?\""});
            break;
        case 3:
            put(out, {m_friend, " said, \"Yes, I will help you, ", m_name, "!\""});
            break;
        case 4:
            put(out, {"They liked to ", m_rng.pick(kPlays), " and ", m_rng.pick(kPlays), " in the ",
                      m_place, "."});
            break;
        case 5:
            put(out, {m_name, " felt ", m_rng.pick(kBadFeelings), ". ", He(),
                      " did not know what to do."});
            break;
        case 6:
            put(out, {"Then ", m_rng.pick(kWeather), ", and ", m_name, " went home."});
            break;
        case 7:
            put(out, {m_name, "'s mom said, \"", m_name, ", it is time to eat your ",
                      m_rng.pick(kFoods), ".\""});
            break;
        case 8:
            put(out, {He(), " shared ", his(), " ", m_thing, " with ", m_friend, "."});
            break;
        case 9:
            put(out, {m_friend, " gave ", him(), " a big hug."});
            break;
        case 10:
            put(out,
                {"\"Look at my ", m_thing, "!\" said ", m_name, ". \"It is ", m_colour, "!\""});
            break;
        case 11:
            put(out, {"The ", m_rng.pick(kAdjectives), " ", m_rng.pick(kAnimals),
                      " came to see the ", m_thing, "."});
            break;
        case 12:
            put(out, {m_name, " and ", m_friend, " went to the ", m_place, " to ",
                      m_rng.pick(kPlays), "."});
            break;
        case 13:
            put(out, {He(), " looked for the ", m_thing, " all day, and at last ", he(),
                      " found it ", m_rng.pick(kSpots), "."});
            break;
        case 14:
            put(out, {"\"I am ", m_rng.pick(kGoodFeelings), "!\" said ", m_name, "."});
            break;
        default:
            put(out, {m_name, " was very ", m_rng.pick(kGoodFeelings), " and played with the ",
                      m_thing, "."});
            break;
        }
    }

    void ending(std::string &out)
    {
        switch (m_rng.below(4)) {
        case 0:
            put(out, {m_name, " and ", m_friend, " were best friends."});
            break;
        case 1:
            put(out,
                {"From that day on, ", m_name, " was never ", m_rng.pick(kBadFeelings), " again."});
            break;
        case 2:
            put(out, {m_name, " smiled and went to sleep with ", his(), " ", m_thing, "."});
            break;
        default:
            put(out, {m_name, " learned that ", m_rng.pick(kLessons), "."});
            break;
        }
    }

    StoryRng m_rng;
    std::string_view m_name, m_friend, m_animal, m_thing, m_colour, m_place;
    bool m_girl = false;
    bool m_heroIsAnimal = false;
};

} // namespace

std::string generateStory(uint64_t seed, int64_t index)
{
    std::string story;
    StoryWriter(seed, index).write(story);
    return story;
}

std::string generateStoryCorpus(uint64_t seed, int64_t bytes)
{
    std::string corpus;
    if (bytes <= 0) return corpus;
    corpus.reserve(static_cast<size_t>(bytes) + 1024);
    std::string story;
    for (int64_t i = 0; static_cast<int64_t>(corpus.size()) < bytes; ++i) {
        story.clear();
        StoryWriter(seed, i).write(story);
        corpus += story;
        corpus += "\n\n";
    }
    corpus.resize(static_cast<size_t>(bytes));
    return corpus;
}

} // namespace headlab
