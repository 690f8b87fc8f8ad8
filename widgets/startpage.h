// What the window shows while no session is open (a first start, or after the last session's
// folder went away): open the recorded H200 example, start a new session, open a folder, or pick
// one of the recent sessions.
#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;

namespace kev {

class StartPage : public QWidget {
    Q_OBJECT
public:
    explicit StartPage(QWidget* parent = nullptr);

    // Session folders shipped with the program; the first H200 GEMM one is the headline example.
    void setExamples(const QStringList& dirs);
    // Recent session folders, newest first; folders that no longer hold a session are marked.
    void setRecent(const QStringList& dirs);

    // The example the big button opens ("" when none is installed).
    QString headlineExample() const { return m_headline; }

    QPushButton* exampleButton() const { return m_example; }
    QPushButton* newSessionButton() const { return m_newSession; }
    QPushButton* openButton() const { return m_open; }
    QListWidget* recentList() const { return m_recent; }
    QListWidget* exampleList() const { return m_examples; }

signals:
    // An example or a recent session was chosen.
    void openRequested(const QString& dir);
    void newSessionRequested();
    // "Open a session folder…": the window asks for the folder.
    void browseRequested();

private:
    QPushButton* m_example;
    QPushButton* m_newSession;
    QPushButton* m_open;
    QListWidget* m_recent;
    QListWidget* m_examples;
    QLabel* m_exampleNote;
    QLabel* m_recentNote;
    QString m_headline;
};

} // namespace kev
