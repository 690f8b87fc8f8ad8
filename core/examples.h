// Where the sessions shipped with Kevolve are found (resources/examples: runs recorded on an H200),
// so that Session → Open example and the start page work from the build tree, from
// scripts/kevolve.sh and from the installed package, with no environment variable. The build copies
// resources/examples to <build>/share/kevolve/examples (packaging/CMakeLists.txt), the layout the
// package installs under /usr, so one search serves both and opening an example from the build
// tree never writes into the source tree.
#pragma once

#include <QString>
#include <QStringList>

namespace kev {

// The folder of example sessions, or an empty string when there is none. In order:
//   1. $KEVOLVE_EXAMPLES, when it names an existing folder (an override, e.g. for a recorded
//      session elsewhere; it may be a single session);
//   2. <dir>/share/kevolve/examples for the program's folder and its three nearest parents:
//      /usr/bin/kevolve (installed) and build/<preset>/app/kevolve/kevolve (build tree);
//   3. kevolve/examples in the system data folders (~/.local/share, $XDG_DATA_DIRS: /usr/share).
QString exampleSessionsDir();
// The same search from `programDir` instead of the running program's folder.
QString exampleSessionsDirFrom(const QString& programDir);

// The session folders (absolute paths, by name) in `dir`, or `dir` itself when it is a session.
QStringList exampleSessionsIn(const QString& dir);
// exampleSessionsIn(exampleSessionsDir()); empty when no example is found.
QStringList exampleSessions();

} // namespace kev
