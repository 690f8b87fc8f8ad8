// The built-in backend's CUDA templates: core/builtin/templates/*.cu, compiled into the library as
// the Qt resource :/builtin/templates/ and rendered by TextTemplate (core/texttemplate.h). The
// families hold no CUDA text of their own; they choose a template and its values.
#ifndef KEV_BUILTIN_CUDATEMPLATES_H
#define KEV_BUILTIN_CUDATEMPLATES_H

#include "core/texttemplate.h"

#include <QString>
#include <QStringList>

namespace kev::cudatemplates {

// The resource path of a template, e.g. "rowwise/softmax.cu".
QString path(const QString& name);

// The template `name` rendered with `values`. A template error is a bug of the generator: it is
// logged, and the text returned is an #error line naming the template, line and placeholder, so
// the kernel fails to compile with the reason instead of compiling with a hole in it.
QString render(const QString& name, const TemplateValues& values);

// Every template in the resource, by name (for tests).
QStringList names();

} // namespace kev::cudatemplates

#endif // KEV_BUILTIN_CUDATEMPLATES_H
