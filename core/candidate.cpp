#include "candidate.h"

namespace kev {

qint64 Candidate::tokens() const {
    qint64 total = 0;
    for (const auto& t : turns)
        total += t.tokensIn + t.tokensOut;
    return total;
}

double Candidate::costUsd() const {
    double total = 0;
    for (const auto& t : turns)
        total += t.costUsd;
    return total;
}

} // namespace kev
