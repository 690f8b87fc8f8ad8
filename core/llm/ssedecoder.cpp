#include "llm/ssedecoder.h"

namespace kev {

QList<QByteArray> SseDecoder::feed(const QByteArray& bytes) {
    QList<QByteArray> events;
    m_pending.append(bytes);
    qsizetype start = 0;
    qsizetype searchFrom = m_scanned;
    for (;;) {
        const qsizetype end = m_pending.indexOf('\n', searchFrom);
        if (end < 0)
            break;
        QByteArray line = m_pending.mid(start, end - start);
        if (line.endsWith('\r'))
            line.chop(1);
        takeLine(std::move(line), events);
        start = end + 1;
        searchFrom = start;
    }
    m_pending.remove(0, start);
    m_scanned = m_pending.size();
    return events;
}

QList<QByteArray> SseDecoder::finish() {
    QList<QByteArray> events;
    if (!m_pending.isEmpty()) {
        QByteArray line = m_pending;
        m_pending.clear();
        m_scanned = 0;
        if (line.endsWith('\r'))
            line.chop(1);
        takeLine(std::move(line), events);
    }
    takeLine(QByteArray(), events);
    return events;
}

void SseDecoder::takeLine(QByteArray line, QList<QByteArray>& events) {
    if (line.isEmpty()) {
        if (m_hasData)
            events.append(m_data);
        m_data.clear();
        m_hasData = false;
        return;
    }
    if (line.startsWith(':'))
        return;
    const qsizetype colon = line.indexOf(':');
    const QByteArray field = colon < 0 ? line : line.left(colon);
    if (field != "data")
        return;
    QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
    if (value.startsWith(' '))
        value.remove(0, 1);
    if (m_hasData)
        m_data.append('\n');
    m_data.append(value);
    m_hasData = true;
}

} // namespace kev
