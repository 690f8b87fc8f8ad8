// Estimated cost of LLM calls from a per-model price table given in the settings, e.g.
//     "prices": {"gpt-4.1": {"input_per_mtok": 2.0, "output_per_mtok": 8.0},
//                "deepseek-*": {"input_per_mtok": 0.27, "output_per_mtok": 1.1}}
// (US dollars per million tokens; a trailing '*' matches a prefix). builtin() holds the list
// prices of the presets' known models; a user's entry for the same pattern replaces it. A model
// listed nowhere is not priced: its cost counts as 0 and is reported as unknown.
#ifndef KEV_LLM_PRICETABLE_H
#define KEV_LLM_PRICETABLE_H

#include <QJsonObject>
#include <QString>
#include <QVector>

#include <optional>

namespace kev {

class PriceTable {
public:
    struct Price {
        QString pattern;
        double inputPerMTok = 0;
        double outputPerMTok = 0;
    };

    static std::optional<PriceTable> fromJson(const QJsonObject& json, QString* error);
    // The providers' published prices (OpenAI, DeepSeek, and both through OpenRouter), as of
    // the date in pricetable.cpp.
    static const PriceTable& builtin();
    // This table, then the built-in entries it does not override.
    PriceTable withBuiltin() const;
    QJsonObject toJson() const;

    // The exact entry, else the longest matching prefix pattern.
    std::optional<Price> find(const QString& model) const;
    double cost(const QString& model, qint64 tokensIn, qint64 tokensOut) const;
    bool isEmpty() const { return m_prices.isEmpty(); }
    bool prices(const QString& model) const { return find(model).has_value(); }

private:
    QVector<Price> m_prices;
};

} // namespace kev

#endif // KEV_LLM_PRICETABLE_H
