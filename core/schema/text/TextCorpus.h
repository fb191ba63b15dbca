// TextCorpus.h — the text of a language-modelling run: byte tokens, checks, split and loading.
//
// HeadLab's text task is byte-level: every byte is a token (vocabulary 256), so any UTF-8 file
// works with no tokenizer to train and a multibyte character is a few tokens. This header is
// torch-free and Qt-free so that the session loader and the GUI form can check a file before a
// run starts (checkTextFile), and tests can use the tokenizer alone.
#pragma once

#include "core/config/RunConfig.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headlab {

inline constexpr int64_t kByteVocabSize = 256;

// One token per byte, 0..255 (a UTF-8 character of k bytes is k tokens).
std::vector<int64_t> encodeBytes(std::string_view text);
// The inverse of encodeBytes. Throws std::invalid_argument for a token outside 0..255.
std::string decodeBytes(const std::vector<int64_t> &tokens);

// Byte offset of the first byte that is not part of well-formed UTF-8 (overlong forms,
// surrogates and code points above U+10FFFF count as ill-formed), or -1 when all is well.
int64_t firstInvalidUtf8(std::string_view text);
// The text with every ill-formed sequence replaced by U+FFFD, so that a byte model's samples can
// be shown and saved as text.
std::string sanitizeUtf8(std::string_view text);

// Sizes of the split: the last `validationFraction` of the bytes (rounded down) is validation.
struct TextSplit {
    int64_t trainBytes = 0;
    int64_t validationBytes = 0;
};
TextSplit splitText(int64_t bytes, double validationFraction);
// The fewest bytes for which both parts hold one window of contextLength + 1 bytes.
int64_t minimumTextBytes(int64_t contextLength, double validationFraction);

// "" when `bytes` can train a model with this context, else why not, naming `name`:
// empty, binary (a NUL byte, or not UTF-8, with the offset and line), or too short.
std::string checkTextBytes(const std::string &bytes, const std::string &name, int64_t contextLength,
                           double validationFraction = 0.1);
// As checkTextBytes, after reading the file: also "cannot be read" when it is missing, a
// directory or unreadable. The message names the file, e.g.
//   "text file '/home/me/x.txt' is empty: choose a UTF-8 text file with some text in it".
std::string checkTextFile(const std::string &path, int64_t contextLength,
                          double validationFraction = 0.1);

// The bytes a text run trains on: task.textPath, or, when it is empty, the built-in story corpus
// of task.corpusBytes bytes (cached, so an ensemble or a sweep generates it once). Throws
// std::invalid_argument with checkTextFile's message when the file cannot be used.
std::string loadTextCorpus(const TaskConfig &task);

// The entropy of a byte given the byte before it, in nats per byte, over the pairs of `bytes`: the
// loss of a model that predicts from the current byte alone, as a transformer whose attention
// learned nothing can (its MLP sees only its own position). 0 for fewer than two bytes.
double nextByteEntropy(std::string_view bytes);
// nextByteEntropy of the training split of `bytes` (splitText's first part): the text task's
// chance plateau (its learned threshold, and the line its loss figures draw).
double trainingNextByteEntropy(std::string_view bytes, double validationFraction);
// The same of a text run's bytes (loadTextCorpus), cached by file, size and modification time (by
// size for the built-in corpus). Throws as loadTextCorpus does.
double trainingNextByteEntropy(const TaskConfig &task);

} // namespace headlab
