#include "llm/replyparser.h"

#include <QJsonDocument>
#include <QRegularExpression>

using namespace Qt::Literals::StringLiterals;

namespace kev {

namespace {

struct Fence {
    QString language;
    QString body;
    bool closed = false;
};

// Every fenced block: an opening line of three or more backticks and a language word, the body,
// and a closing line of backticks alone.
QList<Fence> fences(const QString& text) {
    static const QRegularExpression open(u"^\\s*```+\\s*([A-Za-z0-9_+.-]*)\\s*$"_s);
    static const QRegularExpression close(u"^\\s*```+\\s*$"_s);
    QList<Fence> result;
    const QStringList lines = text.split(u'\n');
    for (qsizetype i = 0; i < lines.size(); ++i) {
        QString line = lines[i];
        if (line.endsWith(u'\r'))
            line.chop(1);
        const auto match = open.match(line);
        if (!match.hasMatch())
            continue;
        Fence fence;
        fence.language = match.captured(1).toLower();
        QStringList body;
        qsizetype j = i + 1;
        for (; j < lines.size(); ++j) {
            QString inner = lines[j];
            if (inner.endsWith(u'\r'))
                inner.chop(1);
            if (close.match(inner).hasMatch()) {
                fence.closed = true;
                break;
            }
            body << inner;
        }
        fence.body = body.join(u'\n');
        result << fence;
        i = j;
    }
    return result;
}

std::optional<QJsonObject> parseObject(const QString& text, QString* problem) {
    QJsonParseError parseError{};
    const QJsonDocument doc = QJsonDocument::fromJson(text.trimmed().toUtf8(), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        *problem = u"it is not valid JSON (%1 at character %2)"_s.arg(
            parseError.errorString(), QString::number(parseError.offset));
        return std::nullopt;
    }
    if (!doc.isObject()) {
        *problem = u"it is JSON but not an object"_s;
        return std::nullopt;
    }
    return doc.object();
}

// The outermost {...} spans of the text that parse as JSON objects, in order: an answer the model
// wrapped in prose. Braces inside JSON strings are skipped.
QList<QJsonObject> embeddedObjects(const QString& text) {
    QList<QJsonObject> objects;
    // Nested unbalanced braces would make the scan quadratic; a hostile reply gets a few passes
    // over its length, which every honest shape needs far less of.
    qsizetype budget = 4 * text.size() + 4096;
    qsizetype i = 0;
    while ((i = text.indexOf(u'{', i)) >= 0 && budget > 0) {
        int depth = 0;
        bool inString = false;
        qsizetype end = -1;
        for (qsizetype j = i; j < text.size(); ++j) {
            const QChar c = text[j];
            if (inString) {
                if (c == u'\\')
                    ++j;
                else if (c == u'"')
                    inString = false;
            } else if (c == u'"') {
                inString = true;
            } else if (c == u'{') {
                ++depth;
            } else if (c == u'}' && --depth == 0) {
                end = j;
                break;
            }
        }
        if (end < 0)
            break;
        budget -= end - i + 1;
        QString ignored;
        if (auto object = parseObject(text.mid(i, end - i + 1), &ignored)) {
            objects << *object;
            i = end + 1;
        } else {
            ++i;
        }
    }
    return objects;
}

// The source with comments and string/character literals blanked, so that the lint reads code.
QString codeOnly(const QString& source) {
    QString out = source;
    enum class State { Code, Line, Block, String, Char } state = State::Code;
    for (qsizetype i = 0; i < out.size(); ++i) {
        const QChar c = out[i];
        const QChar next = i + 1 < out.size() ? out[i + 1] : QChar();
        switch (state) {
        case State::Code:
            if (c == u'/' && next == u'/')
                state = State::Line;
            else if (c == u'/' && next == u'*')
                state = State::Block;
            else if (c == u'"')
                state = State::String;
            else if (c == u'\'')
                state = State::Char;
            break;
        case State::Line:
            if (c == u'\n')
                state = State::Code;
            else
                out[i] = u' ';
            break;
        case State::Block:
            if (c == u'*' && next == u'/') {
                out[i] = u' ';
                out[i + 1] = u' ';
                ++i;
                state = State::Code;
            } else if (c != u'\n') {
                out[i] = u' ';
            }
            break;
        case State::String:
        case State::Char:
            if (c == u'\\') {
                out[i] = u' ';
                if (i + 1 < out.size())
                    out[++i] = u' ';
            } else if (c == (state == State::String ? u'"' : u'\'')) {
                state = State::Code;
            } else if (c != u'\n') {
                out[i] = u' ';
            }
            break;
        }
    }
    return out;
}

} // namespace

QString stripReasoning(const QString& reply) {
    static const QRegularExpression think(u"^\\s*<think>.*?</think>"_s,
                                          QRegularExpression::DotMatchesEverythingOption);
    QString text = reply;
    text.remove(think);
    const qsizetype close = text.lastIndexOf(u"</think>"_s);
    if (close >= 0 && !text.left(close).contains(u"<think>"_s))
        text = text.mid(close + 8);
    return text;
}

std::optional<QJsonObject> extractJsonObject(const QString& reply, QString* error) {
    const QString text = stripReasoning(reply).trimmed();
    if (text.isEmpty()) {
        if (error)
            *error = u"the reply is empty; expected one JSON object"_s;
        return std::nullopt;
    }
    QString problem;
    if (text.startsWith(u'{')) {
        if (auto object = parseObject(text, &problem))
            return object;
    }
    QList<Fence> blocks;
    for (const Fence& fence : fences(text)) {
        if (fence.language.isEmpty() || fence.language == u"json"_s ||
            fence.language == u"jsonc"_s || fence.language == u"json5"_s)
            blocks << fence;
    }
    if (blocks.size() > 1) {
        if (error)
            *error = u"the reply holds %1 ```json blocks; expected exactly one JSON object"_s.arg(
                blocks.size());
        return std::nullopt;
    }
    if (blocks.size() == 1) {
        if (!blocks.first().closed) {
            if (error)
                *error = u"the ```json block is not closed (was the reply cut off?)"_s;
            return std::nullopt;
        }
        if (auto object = parseObject(blocks.first().body, &problem))
            return object;
        if (error)
            *error = u"the ```json block is not usable: "_s + problem;
        return std::nullopt;
    }
    const QList<QJsonObject> embedded = embeddedObjects(text);
    if (embedded.size() == 1)
        return embedded.first();
    if (error) {
        if (embedded.size() > 1)
            *error =
                u"the reply holds %1 JSON objects; expected exactly one"_s.arg(embedded.size());
        else if (text.startsWith(u'{'))
            *error = u"the reply starts like a JSON object but "_s + problem;
        else
            *error = u"the reply is not a JSON object and holds no ```json block, nor an object "
                     u"in its text"_s;
    }
    return std::nullopt;
}

std::optional<QString> extractCudaBlock(const QString& reply, QString* error) {
    const QString text = stripReasoning(reply);
    const QList<Fence> all = fences(text);
    static const QRegularExpression entry(u"\\bkevolve_launch\\s*\\("_s);
    QList<Fence> blocks = all;
    if (blocks.size() > 1) {
        QList<Fence> cuda;
        for (const Fence& fence : all) {
            if (fence.language == u"cuda"_s || fence.language == u"cu"_s)
                cuda << fence;
        }
        if (cuda.size() != 1) {
            QList<Fence> entries;
            for (const Fence& fence : cuda.isEmpty() ? all : cuda) {
                if (entry.match(fence.body).hasMatch())
                    entries << fence;
            }
            cuda = entries;
        }
        if (cuda.size() == 1)
            blocks = cuda;
    }
    if (blocks.isEmpty()) {
        if (entry.match(text).hasMatch() && text.contains(u"#include"_s))
            return text.trimmed() + u'\n';
        if (error)
            *error = u"the reply holds no code block; give the whole file in one block that "
                     u"starts with ```cuda"_s;
        return std::nullopt;
    }
    if (blocks.size() != 1) {
        if (error)
            *error = u"the reply holds %1 code blocks and no single one of them is the kernel "
                     u"file; give the whole file in exactly one ```cuda block"_s.arg(blocks.size());
        return std::nullopt;
    }
    if (!blocks.first().closed) {
        if (error)
            *error = u"the code block is not closed by ``` (was the reply cut off?)"_s;
        return std::nullopt;
    }
    if (blocks.first().body.trimmed().isEmpty()) {
        if (error)
            *error = u"the code block is empty"_s;
        return std::nullopt;
    }
    return blocks.first().body + u'\n';
}

QStringList lintCandidate(const QString& source) {
    QStringList problems;
    const QString code = codeOnly(source);
    static const QRegularExpression include(u"#\\s*include\\s*[<\"]kevolve/abi\\.h[>\"]"_s);
    if (!include.match(source).hasMatch())
        problems << u"the file does not #include <kevolve/abi.h>"_s;
    static const QRegularExpression entry(u"\\bkevolve_launch\\s*\\("_s);
    if (!entry.match(code).hasMatch())
        problems << u"the file does not define kevolve_launch"_s;
    static const QRegularExpression externC(u"extern\\s+\"C\""_s);
    if (!externC.match(source).hasMatch())
        problems << u"kevolve_launch must be declared extern \"C\""_s;
    static const QStringList forbidden = {u"cudaMalloc"_s,
                                          u"cudaMallocAsync"_s,
                                          u"cudaMallocManaged"_s,
                                          u"cudaFree"_s,
                                          u"cudaMemcpy"_s,
                                          u"cudaMemcpyAsync"_s,
                                          u"cudaMemset"_s,
                                          u"cudaMemsetAsync"_s,
                                          u"cudaDeviceSynchronize"_s,
                                          u"cudaStreamSynchronize"_s,
                                          u"cudaStreamCreate"_s,
                                          u"cudaStreamCreateWithFlags"_s,
                                          u"cudaEventCreate"_s,
                                          u"cudaEventSynchronize"_s,
                                          u"cudaHostAlloc"_s,
                                          u"cudaMallocHost"_s,
                                          u"malloc"_s,
                                          u"fork"_s,
                                          u"system"_s,
                                          u"dlopen"_s,
                                          u"pthread_create"_s,
                                          u"fopen"_s,
                                          u"syscall"_s};
    for (const QString& name : forbidden) {
        const QRegularExpression call(u"\\b%1\\s*\\("_s.arg(name));
        if (call.match(code).hasMatch())
            problems << u"%1 is not allowed: the harness allocates, copies and synchronises, and "
                        u"the candidate only launches kernels on its stream"_s.arg(name);
    }
    static const QRegularExpression libraryCall(u"\\b(cublas|cudnn)\\w*\\s*\\("_s);
    static const QRegularExpression libraryNamespace(u"\\b(cutlass|cute|thrust|cub)::"_s);
    static const QRegularExpression libraryInclude(
        u"#\\s*include\\s*[<\"](cublas|cudnn|cutlass|cute|thrust|cub)[^>\"]*[>\"]"_s);
    for (const auto* pattern : {&libraryCall, &libraryNamespace}) {
        const auto match = pattern->match(code);
        if (match.hasMatch())
            problems << u"%1: no library calls are allowed (cuBLAS, cuDNN, CUTLASS, Thrust, "
                        u"CUB)"_s.arg(match.captured(0).trimmed());
    }
    const auto includeMatch = libraryInclude.match(source);
    if (includeMatch.hasMatch())
        problems << u"%1: no libraries beyond the CUDA runtime headers are allowed"_s.arg(
            includeMatch.captured(0));
    static const QRegularExpression threads(u"\\bstd::(thread|async|jthread)\\b"_s);
    if (threads.match(code).hasMatch())
        problems << u"host threads are not allowed"_s;
    return problems;
}

} // namespace kev
