#include "builtin/cudatemplates.h"

#include <QDirIterator>
#include <QLoggingCategory>

using namespace Qt::StringLiterals;

namespace kev::cudatemplates {

namespace {

Q_LOGGING_CATEGORY(lcTemplates, "kev.builtin.templates")

const QString kRoot = u":/builtin/templates/"_s;

} // namespace

QString path(const QString& name) {
    return kRoot + name;
}

QString render(const QString& name, const TemplateValues& values) {
    QString error;
    const auto text = TextTemplate::load(path(name)).render(values, &error);
    if (text)
        return *text;
    qCWarning(lcTemplates).noquote() << error;
    return u"#error \"%1\"\n"_s.arg(QString(error).replace(u'"', u'\''));
}

QStringList names() {
    QStringList out;
    QDirIterator it(kRoot, {u"*.cu"_s}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        out << it.next().mid(kRoot.size());
    out.sort();
    return out;
}

} // namespace kev::cudatemplates
