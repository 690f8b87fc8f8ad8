#include "safefile.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kev {

namespace {

QString fileKind(mode_t mode) {
    if (S_ISDIR(mode))
        return QStringLiteral("a directory");
    if (S_ISFIFO(mode))
        return QStringLiteral("a FIFO");
    if (S_ISCHR(mode))
        return QStringLiteral("a character device");
    if (S_ISBLK(mode))
        return QStringLiteral("a block device");
    if (S_ISSOCK(mode))
        return QStringLiteral("a socket");
    return QStringLiteral("not a plain file");
}

QString formatBytes(qint64 bytes) {
    if (bytes >= (qint64{1} << 20))
        return QString::number(static_cast<double>(bytes) / (1 << 20), 'f',
                               bytes % (qint64{1} << 20) ? 1 : 0) +
               QStringLiteral(" MiB");
    return QString::number(bytes) + QStringLiteral(" bytes");
}

} // namespace

std::optional<QByteArray> readRegularFile(const QString& path, qint64 maxBytes, QString* error) {
    const auto failed = [&](const QString& why) -> std::optional<QByteArray> {
        if (error)
            *error = path + QStringLiteral(": ") + why;
        return std::nullopt;
    };
    if (path.startsWith(u':')) {
        QFile resource(path);
        if (!resource.open(QIODevice::ReadOnly))
            return failed(resource.errorString());
        return resource.readAll();
    }
    const QByteArray native = QFile::encodeName(path);
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    const int fd = ::open(native.constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return failed(errno == ENOENT ? QStringLiteral("no such file")
                                      : QString::fromLocal8Bit(std::strerror(errno)));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return failed(QString::fromLocal8Bit(std::strerror(errno)));
    if (!S_ISREG(st.st_mode))
        return failed(fileKind(st.st_mode) + QStringLiteral(", not a regular file"));
    if (st.st_size > maxBytes)
        return failed(formatBytes(st.st_size) + QStringLiteral(", more than the limit of ") +
                      formatBytes(maxBytes));
    QByteArray out;
    out.reserve(static_cast<qsizetype>(st.st_size));
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return failed(QStringLiteral("cannot read: ") +
                          QString::fromLocal8Bit(std::strerror(errno)));
        if (n == 0)
            break;
        // The file can grow while it is read (and /proc's files report a size of 0).
        if (out.size() + n > maxBytes)
            return failed(QStringLiteral("more than the limit of ") + formatBytes(maxBytes));
        out.append(chunk, static_cast<qsizetype>(n));
    }
    return out;
}

} // namespace kev
