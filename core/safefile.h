// Reading files that may have been damaged or replaced: a session's files, task files, settings.
// A FIFO would block the reader forever, /dev/zero would fill its memory and a directory or
// /dev/null would read as empty, so only regular files (or symbolic links to them) below a size
// limit are read; the file is opened without blocking and its type checked on the open descriptor.
#pragma once

#include <QByteArray>
#include <QString>

#include <optional>

namespace kev {

// Limits of what a session's files may hold: far beyond real sessions (a thousand-step index is
// under 1 MiB), small enough that reading a hostile file never exhausts memory.
constexpr qint64 kMaxJsonFileBytes = qint64{64} << 20;
constexpr qint64 kMaxIndexFileBytes = qint64{256} << 20;
constexpr qint64 kMaxSourceFileBytes = qint64{16} << 20;
constexpr qint64 kMaxTaskFileBytes = qint64{4} << 20; // the harness's limit (files.h)

// The whole file, or nullopt with *error "PATH: why" (no such file, a FIFO, not a regular file,
// 300 MiB, more than the limit of 256 MiB, ...). Qt resource paths (":/...") are read through
// QFile, which holds them in memory.
std::optional<QByteArray> readRegularFile(const QString& path, qint64 maxBytes, QString* error);

} // namespace kev
