#include "llm/pricetable.h"

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
