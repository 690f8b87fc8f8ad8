// Where prompt templates come from: the templates embedded from prompts/ (":/prompts/NAME.txt"),
// each overridable by a file of the same name in a user folder, e.g.
// ~/.config/kevolve/prompts/planner.txt. Also the candidate ABI header, quoted in prompts.
#ifndef KEV_LLM_PROMPTLIBRARY_H
#define KEV_LLM_PROMPTLIBRARY_H

#include "llm/prompttemplate.h"

#include <QStringList>

#include <optional>

namespace kev {

class PromptLibrary {
public:
    // Folders searched before the embedded templates, first match wins.
    explicit PromptLibrary(QStringList overrideDirs = defaultOverrideDirs());

    // $KEVOLVE_PROMPTS_DIR when set, then <config>/kevolve/prompts (~/.config/kevolve/prompts).
    static QStringList defaultOverrideDirs();
    // The names of the embedded templates ("coder", "planner", ...).
    static QStringList builtinNames();

    const QStringList& overrideDirs() const { return m_overrideDirs; }

    // "planner" reads planner.txt from the first override folder that has it, else the embedded
    // one; *error names the template and what is wrong.
    std::optional<PromptTemplate> load(const QString& name, QString* error) const;

    // harness/include/kevolve/abi.h as embedded at build time.
    static QString abiText();

private:
    QStringList m_overrideDirs;
};

} // namespace kev

#endif // KEV_LLM_PROMPTLIBRARY_H
