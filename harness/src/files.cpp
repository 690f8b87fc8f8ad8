#include "files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kev::files {

bool writeFile(const std::string& path, std::string_view data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    return static_cast<bool>(out);
}

std::optional<std::string> readFile(const std::string& path, std::string* error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (error)
            *error = std::string("cannot read ") + path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace kev::files
