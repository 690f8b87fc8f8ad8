// kev-fake-llm-server: the test server as a program, for trying kevolve-cli against each dialect
// by hand:
//     kev-fake-llm-server --dialect ollama &        # prints http://127.0.0.1:PORT/v1
//     kevolve-cli run --backend llm --base-url http://127.0.0.1:PORT/v1 --model M ...
#include "fakechatserver.h"
#include "kevolveresponder.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>

using namespace Qt::Literals::StringLiterals;

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"A local OpenAI-compatible server that plays Kevolve's three roles (tests only)"_s);
    parser.addHelpOption();
    const QCommandLineOption dialectOption(
        u"dialect"_s, u"openai, vllm, llamacpp, ollama, rejects-schema, rejects-stream-usage"_s,
        u"name"_s, u"openai"_s);
    const QCommandLineOption portOption(u"port"_s, u"port on 127.0.0.1 (0: any free one)"_s,
                                        u"port"_s, u"0"_s);
    const QCommandLineOption keyOption(u"key"_s, u"require this bearer key"_s, u"key"_s);
    const QCommandLineOption modelOption(u"model"_s, u"accept only this model (repeatable)"_s,
                                         u"name"_s);
    parser.addOptions({dialectOption, portOption, keyOption, modelOption});
    parser.process(app);

    const auto dialect = kev::test::serverDialectFromString(parser.value(dialectOption));
    if (!dialect) {
        std::fprintf(stderr, "kev-fake-llm-server: unknown dialect %s\n",
                     qPrintable(parser.value(dialectOption)));
        return 2;
    }
    kev::test::FakeChatServer server(*dialect);
    server.setApiKey(parser.value(keyOption));
    server.setModels(parser.values(modelOption));
    server.setResponder(kev::test::kevolveResponder());
    if (!server.listen(static_cast<quint16>(parser.value(portOption).toUInt()))) {
        std::fprintf(stderr, "kev-fake-llm-server: cannot listen on port %s\n",
                     qPrintable(parser.value(portOption)));
        return 1;
    }
    std::printf("%s\n", qPrintable(server.baseUrl()));
    std::fflush(stdout);
    return app.exec();
}
