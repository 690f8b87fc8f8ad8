#include "llm/promptknowledge.h"

#include <QJsonDocument>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace kev {

QString knowledgeStoreText(const KnowledgeHints& hints) {
    if (hints.isEmpty())
        return u"(nothing: no earlier session in this user's knowledge store solved a task of "
               "this op and these element types)"_s;
    QStringList out;
    if (!hints.priors.isEmpty()) {
        out << u"Best configurations of the nearest solved tasks (nearest first; a good first "
               "plan starts from the first one, adjusted to this task's shape):"_s;
        for (const KnowledgePrior& p : hints.priors) {
            Strategy plan = p.plan;
            plan.rationale.clear();
            out << u"- %1; task distance %2 octaves; plan %3"_s.arg(p.citation())
                       .arg(p.distance, 0, 'f', 2)
                       .arg(QString::fromUtf8(
                           QJsonDocument(plan.toJson()).toJson(QJsonDocument::Compact)));
        }
    }
    const auto rejections = hints.rejections();
    if (!rejections.isEmpty()) {
        out << u"Plans people rejected on nearby tasks (do not propose these or points next to "
               "them; the reasons say why):"_s;
        for (const KnowledgeDecision& d : rejections)
            out << u"- "_s + d.line();
    }
    QStringList edits;
    for (const KnowledgeDecision& d : hints.decisions) {
        if (d.kind == KnowledgeDecision::Kind::EditedApproved)
            edits << u"- "_s + d.line();
    }
    if (!edits.isEmpty()) {
        out << u"Kernels people edited and then approved on nearby tasks (their edits show what "
               "they wanted):"_s;
        out << edits;
    }
    return out.join(u'\n');
}

} // namespace kev
