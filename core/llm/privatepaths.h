// Compiler logs and harness messages name files by absolute paths: the harness's temporary
// folder, the session folder under the user's home, the CUDA install. A prompt needs only the
// file's name (kernel_v8.cu, cuda_fp16.hpp, kevolve/abi.h), and the user's folders are nobody
// else's business, so the folders are dropped before the text reaches a model.
#ifndef KEV_LLM_PRIVATEPATHS_H
#define KEV_LLM_PRIVATEPATHS_H

#include <QString>

namespace kev {

// Every absolute path shortened to its file name, or to what follows its last include/ folder.
QString withoutPrivatePaths(const QString& text);

} // namespace kev

#endif // KEV_LLM_PRIVATEPATHS_H
