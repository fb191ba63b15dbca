// Files.cpp — atomic writes, bounded reads and directories.
#include "core/config/Files.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace headlab {

namespace fs = std::filesystem;

std::string directoryOf(const std::string &path)
{
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string baseName(const std::string &path)
{
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

SessionError fileError(const std::string &path, const std::string &message)
{
    return SessionError(path, 0, 0, "", message);
}

void fsyncDirectory(const std::string &dir)
{
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

// mkdir -p, with a message that names the directory that could not be made.
void makeDirectories(const std::string &dir)
{
    std::error_code error;
    fs::create_directories(dir, error);
    if (error) throw fileError(dir, "cannot create the directory: " + error.message());
    if (!fs::is_directory(dir, error))
        throw fileError(dir, "exists but is not a directory; move it away");
}

// Temporary files are ".NAME.tmp-XXXXXX" beside NAME.
std::string temporaryPattern(const std::string &target)
{
    return directoryOf(target) + "/." + baseName(target) + ".tmp-XXXXXX";
}

bool isTemporaryName(const std::string &name)
{
    return name.size() > 12 && name.front() == '.' && name.find(".tmp-") != std::string::npos;
}

PathKind pathKindAt(const std::string &path)
{
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return PathKind::Missing;
    if (S_ISLNK(info.st_mode)) return PathKind::Link;
    if (S_ISDIR(info.st_mode)) return PathKind::Directory;
    return S_ISREG(info.st_mode) ? PathKind::Regular : PathKind::Other;
}

std::string readFileLimited(const std::string &path, uint64_t maxBytes, const char *what)
{
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw fileError(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        throw fileError(path, std::string("cannot read: ") + std::strerror(error));
    }
    if (S_ISDIR(info.st_mode)) {
        ::close(fd);
        throw fileError(path, std::string("is a directory, not ") + what);
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        throw fileError(path,
                        std::string("is not a regular file (a device, FIFO or socket); expected ") +
                            what);
    }
    if (static_cast<uint64_t>(info.st_size) > maxBytes) {
        ::close(fd);
        throw fileError(path, "is " + std::to_string(info.st_size >> 20) + " MiB; files over " +
                                  std::to_string(maxBytes >> 20) +
                                  " MiB are refused (a HeadLab limit)");
    }
    std::string text;
    text.resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int error = errno;
            ::close(fd);
            throw fileError(path, std::string("cannot read: ") + std::strerror(error));
        }
        if (n == 0) break; // shrank while reading
        done += static_cast<size_t>(n);
    }
    text.resize(done);
    ::close(fd);
    return text;
}

void writeFileAtomic(const std::string &path, const std::string &text, bool syncDirectory)
{
    writeFileAtomic(
        path, [&](const TextSink &sink) { sink(text); }, syncDirectory);
}

void writeFileAtomic(const std::string &requestedPath,
                     const std::function<void(const TextSink &)> &produce, bool syncDirectory)
{
    // A link is written through: its target is replaced and the link stays.
    std::string path = requestedPath;
    struct stat info {};
    for (int hops = 0; ::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode); ++hops) {
        std::error_code error;
        fs::path target = fs::read_symlink(path, error);
        if (error || hops == 40)
            throw fileError(requestedPath, "cannot follow the link: " +
                                               (error ? error.message() : "too many links"));
        if (target.is_relative()) target = fs::path(directoryOf(path)) / target;
        path = target.string(); // also when it does not exist yet: it is created there
    }
    bool exists = ::stat(path.c_str(), &info) == 0;
    if (exists && S_ISDIR(info.st_mode))
        throw fileError(requestedPath, "is a directory; give a file name");
    if (exists && !S_ISREG(info.st_mode))
        throw fileError(requestedPath, "is not a regular file (a device, FIFO or socket); "
                                       "refusing to replace it");
    auto failure = [&](const std::string &what, int error) {
        return fileError(requestedPath, "cannot save (" + what + "): " + std::strerror(error) +
                                            "; the previous file, if any, is unchanged");
    };
    // The temporary file must be in the same directory for rename() to be atomic.
    std::string tempPath = temporaryPattern(path);
    const int fd = ::mkostemp(tempPath.data(), O_CLOEXEC);
    if (fd < 0) throw failure("creating " + tempPath, errno);
    auto abandon = [&](const std::string &what) {
        const int error = errno;
        ::close(fd);
        ::unlink(tempPath.c_str());
        return failure(what, error);
    };
    // Keep the permissions of the file being replaced, else the usual 0644 less the umask.
    mode_t mode = 0644;
    if (exists) {
        mode = info.st_mode & 07777;
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode &= ~mask;
    }
    if (::fchmod(fd, mode) != 0) throw abandon("setting permissions");
    const TextSink sink = [&](std::string_view text) {
        size_t written = 0;
        while (written < text.size()) {
            const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
            if (n < 0) {
                if (errno == EINTR) continue;
                throw failure("writing " + tempPath, errno); // closed and removed below
            }
            written += static_cast<size_t>(n);
        }
    };
    try {
        produce(sink);
    } catch (...) {
        ::close(fd);
        ::unlink(tempPath.c_str());
        throw;
    }
    if (::fsync(fd) != 0) throw abandon("flushing " + tempPath);
    if (::close(fd) != 0) {
        const int error = errno;
        ::unlink(tempPath.c_str());
        throw failure("closing " + tempPath, error);
    }
    if (::rename(tempPath.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(tempPath.c_str());
        throw failure("renaming " + tempPath, error);
    }
    if (syncDirectory) fsyncDirectory(directoryOf(path)); // the rename itself durable
}

namespace {

// Whether a spreadsheet would read the field as a formula (or a DDE command): its first character
// starts one, and the whole field is not a number.
bool startsAFormula(const std::string &text)
{
    if (text.empty()) return false;
    if (std::string_view("=@\t\r").find(text.front()) != std::string_view::npos) return true;
    if (text.front() != '+' && text.front() != '-') return false;
    char *end = nullptr;
    std::strtod(text.c_str(), &end);
    return end != text.c_str() + text.size();
}

} // namespace

std::string csvField(const std::string &text)
{
    const bool formula = startsAFormula(text);
    if (!formula && text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string quoted = formula ? "\"'" : "\"";
    for (char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + "\"";
}

} // namespace headlab
