// Incremental decoder of a server-sent-events stream (text/event-stream): bytes in, the data of
// each complete event out. Comments (": keep-alive") and fields other than data are skipped.
#ifndef KEV_LLM_SSEDECODER_H
#define KEV_LLM_SSEDECODER_H

#include <QByteArray>
#include <QList>

namespace kev {

class SseDecoder {
public:
    // The data of every event completed by these bytes (multi-line data joined by '\n').
    QList<QByteArray> feed(const QByteArray& bytes);
    // Ends the stream: an event left without its blank line is returned, as browsers do not
    // but servers that close right after the last data line expect.
    QList<QByteArray> finish();

private:
    void takeLine(QByteArray line, QList<QByteArray>& events);

    QByteArray m_pending;    // bytes after the last line break
    qsizetype m_scanned = 0; // bytes of m_pending known to hold no line break (a long line)
    QByteArray m_data;       // data lines of the event being read
    bool m_hasData = false;
};

} // namespace kev

#endif // KEV_LLM_SSEDECODER_H
