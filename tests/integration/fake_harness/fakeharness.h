// kev-fake-harness: a scripted stand-in for `kevolve-harness serve` that speaks the real protocol
// of harness/PROTOCOL.md over stdin/stdout, for engine tests on machines without a GPU.
//
// What an eval returns is chosen by a "// fake: DIRECTIVE key=value ..." line in the kernel source,
// or, without one, by the next line of the script (--script FILE or $KEV_FAKE_HARNESS_SCRIPT; a
// JSON object per line; the last line repeats). Directive words and keys:
//   status words: ok compile_error rule_violation runtime_error timeout incorrect unstable
//   no_device speedup=0.62 ci=0.004 suspicious        timing of an ok report delay_ms=N reply after
//   N ms (a slow reply) die / die_once                          exit mid-request (once: only the
//   first time, tracked in
//                                           --state DIR, default a folder per parent process)
//   hang / hang_once                        never reply (until cancelled)
//   garbage                                 write malformed lines before the reply
//   refuse=CODE                             answer with an error event of that code
// A script line is the same as a JSON object: {"status":"ok","speedup":0.62,"fault":"die_once"}.
// A script line {"config": {"devices": 0, "hello_delay_ms": 0}} sets the hello; --no-device too.
// --device N serves fake GPU N (index N, UUID GPU-0000000N-fake, in the hello's device_uuid and
// every report), as `kevolve-harness serve --device N` does.
#pragma once

#include <QJsonObject>
#include <QObject>
#include <QSet>
#include <QString>
#include <QVector>

class QSocketNotifier;

class FakeHarness : public QObject {
    Q_OBJECT
public:
    FakeHarness(QVector<QJsonObject> script, QJsonObject config, QString stateDir);

    void start();

private:
    void readInput();
    void onLine(const QByteArray& line);
    void handleEval(const QString& id, const QJsonObject& request);
    void reply(const QJsonObject& event);
    QJsonObject directiveFor(const QString& source);
    bool firstTime(const QString& key);
    QJsonObject report(const QString& id, const QJsonObject& directive,
                       const QJsonObject& request) const;
    QJsonArray devices() const;

    QVector<QJsonObject> m_script;
    QJsonObject m_config;
    QString m_stateDir;
    int m_next = 0;
    QByteArray m_buffer;
    QSocketNotifier* m_notifier = nullptr;
    QSet<QString> m_pending;
};
