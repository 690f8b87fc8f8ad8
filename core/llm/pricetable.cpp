#include "llm/pricetable.h"

#include <algorithm>

using namespace Qt::Literals::StringLiterals;

namespace kev {

std::optional<PriceTable> PriceTable::fromJson(const QJsonObject& json, QString* error) {
    PriceTable table;
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString where = u"prices.%1"_s.arg(it.key());
        if (!it.value().isObject()) {
            if (error)
                *error =
                    u"%1: expected an object with input_per_mtok and output_per_mtok"_s.arg(where);
            return std::nullopt;
        }
        const QJsonObject entry = it.value().toObject();
        Price price;
        price.pattern = it.key();
        for (auto field = entry.begin(); field != entry.end(); ++field) {
            const bool known =
                field.key() == u"input_per_mtok"_s || field.key() == u"output_per_mtok"_s;
            if (!known || !field.value().isDouble() || field.value().toDouble() < 0) {
                if (error)
                    *error = known ? u"%1.%2: expected a number >= 0 (US dollars per million "
                                     u"tokens)"_s.arg(where, field.key())
                                   : u"%1.%2: unknown field (expected input_per_mtok and "
                                     u"output_per_mtok)"_s.arg(where, field.key());
                return std::nullopt;
            }
        }
        price.inputPerMTok = entry.value(u"input_per_mtok"_s).toDouble();
        price.outputPerMTok = entry.value(u"output_per_mtok"_s).toDouble();
        table.m_prices.append(price);
    }
    return table;
}

const PriceTable& PriceTable::builtin() {
    // US dollars per million tokens (input at the cache-miss rate), from the providers' price
    // pages in 2025. Prices change: a "prices" option overrides any of them. A date-suffixed
    // name ("gpt-4.1-2025-04-14") matches by prefix; the longest prefix wins.
    static const PriceTable table = [] {
        const QList<Price> base = {
            {u"gpt-5*"_s, 1.25, 10.0},
            {u"gpt-5-mini*"_s, 0.25, 2.0},
            {u"gpt-5-nano*"_s, 0.05, 0.40},
            {u"gpt-4.1*"_s, 2.0, 8.0},
            {u"gpt-4.1-mini*"_s, 0.40, 1.60},
            {u"gpt-4.1-nano*"_s, 0.10, 0.40},
            {u"gpt-4o*"_s, 2.50, 10.0},
            {u"gpt-4o-mini*"_s, 0.15, 0.60},
            {u"o3*"_s, 2.0, 8.0},
            {u"o3-mini*"_s, 1.10, 4.40},
            {u"o4-mini*"_s, 1.10, 4.40},
            {u"deepseek-chat*"_s, 0.28, 0.42},
            {u"deepseek-reasoner*"_s, 0.28, 0.42},
        };
        PriceTable result;
        for (const Price& price : base) {
            result.m_prices.append(price);
            const QString vendor =
                price.pattern.startsWith(u"deepseek"_s) ? u"deepseek/"_s : u"openai/"_s;
            result.m_prices.append(
                {vendor + price.pattern, price.inputPerMTok, price.outputPerMTok});
        }
        return result;
    }();
    return table;
}

PriceTable PriceTable::withBuiltin() const {
    PriceTable result = *this;
    for (const Price& price : builtin().m_prices) {
        const bool overridden =
            std::any_of(m_prices.begin(), m_prices.end(),
                        [&](const Price& own) { return own.pattern == price.pattern; });
        if (!overridden)
            result.m_prices.append(price);
    }
    return result;
}

QJsonObject PriceTable::toJson() const {
    QJsonObject json;
    for (const Price& price : m_prices)
        json[price.pattern] = QJsonObject{{u"input_per_mtok"_s, price.inputPerMTok},
                                          {u"output_per_mtok"_s, price.outputPerMTok}};
    return json;
}

std::optional<PriceTable::Price> PriceTable::find(const QString& model) const {
    std::optional<Price> best;
    for (const Price& price : m_prices) {
        if (price.pattern == model)
            return price;
        if (price.pattern.endsWith(u'*') && model.startsWith(price.pattern.chopped(1)) &&
            (!best || price.pattern.size() > best->pattern.size()))
            best = price;
    }
    return best;
}

double PriceTable::cost(const QString& model, qint64 tokensIn, qint64 tokensOut) const {
    const auto price = find(model);
    if (!price)
        return 0;
    return (static_cast<double>(tokensIn) * price->inputPerMTok +
            static_cast<double>(tokensOut) * price->outputPerMTok) /
           1e6;
}

} // namespace kev
