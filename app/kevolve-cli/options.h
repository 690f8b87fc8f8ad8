// kevolve-cli: every option of every command, declared once, and the readers that parse and check
// one option's value, so that each error names the option it is about.
#pragma once

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QString>

#include <limits>
#include <optional>

namespace kev::cli {

struct CliOptions {
    QCommandLineOption backend{QStringLiteral("backend"), QStringLiteral("backend for all roles"),
                               QStringLiteral("B")};
    QCommandLineOption planner{QStringLiteral("planner"), QStringLiteral("planner backend"),
                               QStringLiteral("B")};
    QCommandLineOption coder{QStringLiteral("coder"), QStringLiteral("coder backend"),
                             QStringLiteral("B")};
    QCommandLineOption reviewer{QStringLiteral("reviewer"), QStringLiteral("reviewer backend"),
                                QStringLiteral("B")};
    QCommandLineOption agentOptions{QStringLiteral("agent-options"),
                                    QStringLiteral("agent options"), QStringLiteral("FILE")};
    QCommandLineOption provider{QStringLiteral("provider"), QStringLiteral("llm preset"),
                                QStringLiteral("P")};
    QCommandLineOption baseUrl{QStringLiteral("base-url"), QStringLiteral("llm endpoint"),
                               QStringLiteral("URL")};
    QCommandLineOption model{QStringLiteral("model"), QStringLiteral("llm model"),
                             QStringLiteral("M")};
    QCommandLineOption iterations{QStringLiteral("iterations"), QStringLiteral("iterations"),
                                  QStringLiteral("N")};
    QCommandLineOption target{QStringLiteral("target"), QStringLiteral("target speedup"),
                              QStringLiteral("R")};
    QCommandLineOption targetFloor{QStringLiteral("target-floor"),
                                   QStringLiteral("target percent of the DRAM floor"),
                                   QStringLiteral("P")};
    QCommandLineOption beam{QStringLiteral("beam"), QStringLiteral("beam width"),
                            QStringLiteral("N")};
    QCommandLineOption session{QStringLiteral("session"), QStringLiteral("session folder"),
                               QStringLiteral("DIR")};
    QCommandLineOption step{QStringLiteral("step"), QStringLiteral("step mode")};
    QCommandLineOption harness{QStringLiteral("harness"), QStringLiteral("harness command"),
                               QStringLiteral("CMD")};
    QCommandLineOption timeBudget{QStringLiteral("time-budget"), QStringLiteral("seconds"),
                                  QStringLiteral("S")};
    QCommandLineOption timingBudget{QStringLiteral("timing-budget"),
                                    QStringLiteral("seconds of timing per candidate"),
                                    QStringLiteral("S")};
    QCommandLineOption plateau{QStringLiteral("plateau"), QStringLiteral("iterations"),
                               QStringLiteral("N")};
    QCommandLineOption task{QStringLiteral("task"), QStringLiteral("task"), QStringLiteral("T")};
    QCommandLineOption json{QStringLiteral("json"), QStringLiteral("JSON lines")};
    QCommandLineOption timeline{QStringLiteral("timeline"),
                                QStringLiteral("the stages of every step on the wall clock")};
    QCommandLineOption tasksDir{QStringLiteral("tasks-dir"), QStringLiteral("task folder"),
                                QStringLiteral("DIR")};
    QCommandLineOption outDir{QStringLiteral("out"), QStringLiteral("export folder"),
                              QStringLiteral("DIR")};
    QCommandLineOption version{QStringLiteral("version"), QStringLiteral("version to export"),
                               QStringLiteral("N")};
    QCommandLineOption device{QStringLiteral("device"), QStringLiteral("device"),
                              QStringLiteral("D")};
    QCommandLineOption knowledge{QStringLiteral("knowledge"), QStringLiteral("knowledge store"),
                                 QStringLiteral("PATH")};
    // The llm backend's flags (run and resume), applied with the others in runoptions.cpp.
    QCommandLineOption quiet{QStringLiteral("quiet"), QStringLiteral("no progress lines")};
    QCommandLineOption check{QStringLiteral("check"), QStringLiteral("check the endpoints")};
    QCommandLineOption tokenBudget{QStringLiteral("token-budget"), QStringLiteral("tokens"),
                                   QStringLiteral("N")};
    QCommandLineOption costBudget{QStringLiteral("cost-budget"), QStringLiteral("US dollars"),
                                  QStringLiteral("USD")};
    QCommandLineOption connectTimeout{QStringLiteral("connect-timeout"), QStringLiteral("s"),
                                      QStringLiteral("S")};
    QCommandLineOption firstTokenTimeout{QStringLiteral("first-token-timeout"), QStringLiteral("s"),
                                         QStringLiteral("S")};
    QCommandLineOption stallTimeout{QStringLiteral("stall-timeout"), QStringLiteral("s"),
                                    QStringLiteral("S")};
    QCommandLineOption totalTimeout{QStringLiteral("total-timeout"), QStringLiteral("s"),
                                    QStringLiteral("S")};
    QCommandLineOption maxRetries{QStringLiteral("max-retries"), QStringLiteral("n"),
                                  QStringLiteral("N")};
    QCommandLineOption maxTokens{QStringLiteral("max-tokens"), QStringLiteral("n"),
                                 QStringLiteral("N")};
    QCommandLineOption contextTokens{QStringLiteral("context-tokens"), QStringLiteral("n"),
                                     QStringLiteral("N")};
    QCommandLineOption temperature{QStringLiteral("temperature"), QStringLiteral("t"),
                                   QStringLiteral("T")};
    QCommandLineOption fallbackModel{QStringLiteral("fallback-model"), QStringLiteral("model"),
                                     QStringLiteral("M")};
    QCommandLineOption numCtx{QStringLiteral("num-ctx"), QStringLiteral("n"), QStringLiteral("N")};
    QCommandLineOption keepAlive{QStringLiteral("keep-alive"), QStringLiteral("duration"),
                                 QStringLiteral("D")};
};

// "--NAME" of an option, as messages quote it.
QString optionName(const QCommandLineOption& option);

// The value of a set option as an integer in [min, max]; an unset option leaves *value alone.
// On a bad value: false, and *error is "--NAME: expected EXPECTED, got "VALUE"".
bool readInt(const QCommandLineParser& parser, const QCommandLineOption& option, int min, int max,
             const QString& expected, int* value, QString* error);

// As readInt, for a finite or infinite number in [min, max] (NaN is refused).
bool readDouble(const QCommandLineParser& parser, const QCommandLineOption& option, double min,
                double max, const QString& expected, double* value, QString* error);

constexpr double kUnbounded = std::numeric_limits<double>::infinity();

} // namespace kev::cli
