#include "fakeharness.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSocketNotifier>
#include <QTimer>

#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace {

const QString kVersion = QStringLiteral("0.1.0-fake");
const QStringList kStatuses = {QStringLiteral("ok"),
                               QStringLiteral("compile_error"),
                               QStringLiteral("rule_violation"),
                               QStringLiteral("runtime_error"),
                               QStringLiteral("timeout"),
                               QStringLiteral("incorrect"),
                               QStringLiteral("unstable"),
                               QStringLiteral("no_device")};

QJsonObject parseDirective(const QString& text) {
    QJsonObject d;
    for (const auto& word : text.split(u' ', Qt::SkipEmptyParts)) {
        const qsizetype eq = word.indexOf(u'=');
        if (eq < 0) {
            if (kStatuses.contains(word))
                d.insert(QStringLiteral("status"), word);
            else if (word == QLatin1String("suspicious"))
                d.insert(QStringLiteral("suspicious"), true);
            else
                d.insert(QStringLiteral("fault"), word);
            continue;
        }
        const QString key = word.left(eq);
        const QString value = word.mid(eq + 1);
        bool isNumber = false;
        const double number = value.toDouble(&isNumber);
        d.insert(key, isNumber ? QJsonValue(number) : QJsonValue(value));
    }
    return d;
}

// Device N of a fake host: its UUID tells the devices apart, as NVML's do.
QString uuidOf(int device) {
    return QStringLiteral("GPU-%1-fake").arg(device, 8, 10, QLatin1Char('0'));
}

QJsonObject gpu(int device) {
    return {{QStringLiteral("index"), device},
            {QStringLiteral("name"), QStringLiteral("NVIDIA H200")},
            {QStringLiteral("uuid"), uuidOf(device)},
            {QStringLiteral("pci_bus_id"),
             QStringLiteral("00000000:%1:00.0").arg(0x19 + device, 2, 16, QLatin1Char('0'))},
            {QStringLiteral("cc"), QStringLiteral("9.0")},
            {QStringLiteral("sm_count"), 132},
            {QStringLiteral("l2_bytes"), 62914560},
            {QStringLiteral("memory_bytes"), 150754820096.0},
            {QStringLiteral("clocks_mhz"), QJsonObject{{QStringLiteral("sm"), 1980},
                                                       {QStringLiteral("mem"), 3201},
                                                       {QStringLiteral("sm_max"), 1980},
                                                       {QStringLiteral("mem_max"), 3201}}},
            {QStringLiteral("power_limit_w"), 700},
            {QStringLiteral("temperature_c"), 35}};
}

} // namespace

FakeHarness::FakeHarness(QVector<QJsonObject> script, QJsonObject config, QString stateDir)
    : m_script(std::move(script))
    , m_config(std::move(config))
    , m_stateDir(std::move(stateDir)) {}

void FakeHarness::start() {
    m_notifier = new QSocketNotifier(STDIN_FILENO, QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &FakeHarness::readInput);
}

void FakeHarness::readInput() {
    char chunk[65536];
    const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n <= 0) {
        // End of input ends the server, as PROTOCOL.md says.
        m_notifier->setEnabled(false);
        QCoreApplication::exit(0);
        return;
    }
    m_buffer.append(chunk, n);
    qsizetype end;
    while ((end = m_buffer.indexOf('\n')) >= 0) {
        const QByteArray line = m_buffer.left(end);
        m_buffer.remove(0, end + 1);
        onLine(line);
    }
}

void FakeHarness::reply(const QJsonObject& event) {
    QJsonObject e = event;
    e.insert(QStringLiteral("v"), 1);
    const QByteArray line = QJsonDocument(e).toJson(QJsonDocument::Compact) + '\n';
    std::fwrite(line.constData(), 1, static_cast<size_t>(line.size()), stdout);
    std::fflush(stdout);
}

QJsonArray FakeHarness::devices() const {
    QJsonArray list;
    if (m_config.value(QLatin1String("devices")).toInt(1) > 0)
        list.append(gpu(m_config.value(QLatin1String("device")).toInt(0)));
    return list;
}

void FakeHarness::onLine(const QByteArray& line) {
    if (line.trimmed().isEmpty())
        return;
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &parseError);
    const QJsonObject request = doc.object();
    const QJsonValue idValue = request.value(QLatin1String("id"));
    const QString id = idValue.toString();
    if (!doc.isObject() || !request.value(QLatin1String("op")).isString()) {
        reply({{QStringLiteral("event"), QStringLiteral("error")},
               {QStringLiteral("id"), idValue.isString() ? idValue : QJsonValue(QJsonValue::Null)},
               {QStringLiteral("code"), QStringLiteral("bad_request")},
               {QStringLiteral("message"), QStringLiteral("not a JSON object with an op")}});
        return;
    }
    if (request.value(QLatin1String("v")).toInt() != 1) {
        reply({{QStringLiteral("event"), QStringLiteral("error")},
               {QStringLiteral("id"), id},
               {QStringLiteral("code"), QStringLiteral("unsupported_version")},
               {QStringLiteral("message"), QStringLiteral("v must be 1")}});
        return;
    }
    const QString op = request.value(QLatin1String("op")).toString();
    if (op == QLatin1String("hello")) {
        const int device = m_config.value(QLatin1String("device")).toInt(0);
        QJsonObject hello{{QStringLiteral("event"), QStringLiteral("hello")},
                          {QStringLiteral("id"), id},
                          {QStringLiteral("protocol"), 1},
                          {QStringLiteral("harness_version"), kVersion},
                          {QStringLiteral("devices"), devices()},
                          {QStringLiteral("device"), device}};
        if (!devices().isEmpty())
            hello.insert(QStringLiteral("device_uuid"), uuidOf(device));
        const int delay = m_config.value(QLatin1String("hello_delay_ms")).toInt(0);
        if (delay > 0)
            QTimer::singleShot(delay, this, [this, hello] { reply(hello); });
        else
            reply(hello);
    } else if (op == QLatin1String("probe")) {
        reply({{QStringLiteral("event"), QStringLiteral("probe")},
               {QStringLiteral("id"), id},
               {QStringLiteral("devices"), devices()}});
    } else if (op == QLatin1String("eval")) {
        handleEval(id, request);
    } else if (op == QLatin1String("cancel")) {
        const QString target = request.value(QLatin1String("target")).toString();
        if (m_pending.remove(target))
            reply({{QStringLiteral("event"), QStringLiteral("cancelled")},
                   {QStringLiteral("id"), target}});
        else
            reply({{QStringLiteral("event"), QStringLiteral("error")},
                   {QStringLiteral("id"), id},
                   {QStringLiteral("code"), QStringLiteral("unknown_id")},
                   {QStringLiteral("message"), QString(QStringLiteral("no request ") + target)}});
    } else if (op == QLatin1String("shutdown")) {
        reply({{QStringLiteral("event"), QStringLiteral("bye")}, {QStringLiteral("id"), id}});
        QCoreApplication::exit(0);
    } else {
        reply({{QStringLiteral("event"), QStringLiteral("error")},
               {QStringLiteral("id"), id},
               {QStringLiteral("code"), QStringLiteral("bad_request")},
               {QStringLiteral("message"), QString(QStringLiteral("unknown op ") + op)}});
    }
}

QJsonObject FakeHarness::directiveFor(const QString& source) {
    static const QRegularExpression marker(QStringLiteral("//\\s*fake:([^\\n]*)"));
    const auto match = marker.match(source);
    if (match.hasMatch())
        return parseDirective(match.captured(1));
    if (m_script.isEmpty())
        return {{QStringLiteral("status"), QStringLiteral("ok")}, {QStringLiteral("speedup"), 0.5}};
    const QJsonObject d = m_script.at(std::min<qsizetype>(m_next, m_script.size() - 1));
    ++m_next;
    return d;
}

bool FakeHarness::firstTime(const QString& key) {
    QDir().mkpath(m_stateDir);
    const QString path =
        QDir(m_stateDir)
            .filePath(QString::fromLatin1(
                QCryptographicHash::hash(key.toUtf8(), QCryptographicHash::Sha1).toHex()));
    if (QFile::exists(path))
        return false;
    QFile mark(path);
    return mark.open(QIODevice::WriteOnly);
}

void FakeHarness::handleEval(const QString& id, const QJsonObject& request) {
    if (!request.value(QLatin1String("task")).isObject() &&
        !request.contains(QLatin1String("task_path"))) {
        reply({{QStringLiteral("event"), QStringLiteral("error")},
               {QStringLiteral("id"), id},
               {QStringLiteral("code"), QStringLiteral("bad_request")},
               {QStringLiteral("message"), QStringLiteral("eval needs task or task_path")}});
        return;
    }
    const QString source =
        request.value(QLatin1String("kernel")).toObject().value(QLatin1String("source")).toString();
    QJsonObject directive = directiveFor(source);
    if (m_config.value(QLatin1String("devices")).toInt(1) == 0 &&
        directive.value(QLatin1String("status")).toString() != QLatin1String("compile_error"))
        directive.insert(QStringLiteral("status"), QStringLiteral("no_device"));
    const QString fault = directive.value(QLatin1String("fault")).toString();
    // refuse=CODE answers with the harness's error event instead of a report; the message does not
    // repeat the code, so a client must read the code field.
    if (directive.value(QLatin1String("refuse")).isString()) {
        reply({{QStringLiteral("event"), QStringLiteral("error")},
               {QStringLiteral("id"), id},
               {QStringLiteral("code"), directive.value(QLatin1String("refuse")).toString()},
               {QStringLiteral("message"), QStringLiteral("the fake harness refuses this task")}});
        return;
    }

    reply({{QStringLiteral("event"), QStringLiteral("accepted")},
           {QStringLiteral("id"), id},
           {QStringLiteral("queue_position"), static_cast<int>(m_pending.size())}});
    reply({{QStringLiteral("event"), QStringLiteral("progress")},
           {QStringLiteral("id"), id},
           {QStringLiteral("stage"), QStringLiteral("compile")},
           {QStringLiteral("message"), QStringLiteral("nvcc")},
           {QStringLiteral("fraction"), 0.1}});

    if (fault == QLatin1String("die") ||
        (fault == QLatin1String("die_once") && firstTime(source))) {
        std::fflush(stdout);
        ::_exit(3);
    }
    if (fault == QLatin1String("hang") ||
        (fault == QLatin1String("hang_once") && firstTime(source))) {
        m_pending.insert(id);
        return;
    }
    if (fault == QLatin1String("garbage")) {
        const QByteArray junk =
            "this is not json\n{\"v\":1,\"event\":\n[1,2,3]\n{\"no_event\":true}\n";
        std::fwrite(junk.constData(), 1, static_cast<size_t>(junk.size()), stdout);
        std::fflush(stdout);
    }
    m_pending.insert(id);
    const QJsonObject result{{QStringLiteral("event"), QStringLiteral("result")},
                             {QStringLiteral("id"), id},
                             {QStringLiteral("report"), report(id, directive, request)}};
    const int delay = directive.value(QLatin1String("delay_ms")).toInt(0);
    QTimer::singleShot(delay, this, [this, id, result] {
        if (!m_pending.remove(id))
            return;
        reply({{QStringLiteral("event"), QStringLiteral("progress")},
               {QStringLiteral("id"), id},
               {QStringLiteral("stage"), QStringLiteral("time")},
               {QStringLiteral("message"), QStringLiteral("timing")},
               {QStringLiteral("fraction"), 0.8}});
        reply(result);
    });
}

QJsonObject FakeHarness::report(const QString& id, const QJsonObject& directive,
                                const QJsonObject& request) const {
    const QString status = directive.value(QLatin1String("status")).toString(QStringLiteral("ok"));
    const double speedup = directive.value(QLatin1String("speedup")).toDouble(0.5);
    const double halfWidth = directive.value(QLatin1String("ci")).toDouble(0.004);
    // "bound=memory floor=P" adds a roofline at P% of the DRAM floor; a memory-bound op against a
    // harness reference is suspicious past 110% of the floor rather than past 1.10x (PROTOCOL.md).
    const QString bound = directive.value(QLatin1String("bound")).toString();
    const double floorPercent = directive.value(QLatin1String("floor")).toDouble(50);
    const bool memoryBound = bound == QLatin1String("memory");
    const bool suspicious = directive.value(QLatin1String("suspicious"))
                                .toBool(memoryBound ? floorPercent > 110 : speedup > 1.10);
    const QJsonObject task = request.value(QLatin1String("task")).toObject();
    const QJsonObject kernel = request.value(QLatin1String("kernel")).toObject();
    const QByteArray source = kernel.value(QLatin1String("source")).toString().toUtf8();
    const QString name = kernel.value(QLatin1String("name")).toString(QStringLiteral("kernel.cu"));
    const QJsonObject options = request.value(QLatin1String("options")).toObject();
    const QJsonObject shape = task.value(QLatin1String("shape")).toObject();
    const double flops = 2.0 * shape.value(QLatin1String("M")).toDouble() *
                         shape.value(QLatin1String("N")).toDouble() *
                         shape.value(QLatin1String("K")).toDouble();

    const bool compiled = status != QLatin1String("compile_error");
    const bool linted = compiled && status != QLatin1String("rule_violation");
    const bool gpuRan = linted && status != QLatin1String("no_device");
    const bool correct = status == QLatin1String("ok") || status == QLatin1String("unstable");

    QString message;
    const double referenceMs = 0.1995;
    const double candidateMs = referenceMs / speedup;
    if (status == QLatin1String("ok"))
        message = QStringLiteral("correct; ") + QString::number(speedup, 'f', 3) +
                  QStringLiteral("x cuBLAS (") + QString::number(candidateMs, 'f', 4) +
                  QStringLiteral(" ms vs ") + QString::number(referenceMs, 'f', 4) +
                  QStringLiteral(" ms)");
    else if (status == QLatin1String("no_device"))
        message = QStringLiteral("no CUDA device: compiled and linted, nothing run");
    else
        message = status + QStringLiteral(" (scripted by kev-fake-harness)");

    QJsonObject r{
        {QStringLiteral("schema_version"), 1},
        {QStringLiteral("kind"), QStringLiteral("kevolve.report")},
        {QStringLiteral("harness_version"), kVersion},
        {QStringLiteral("id"), id},
        {QStringLiteral("status"), status},
        {QStringLiteral("suspicious"), status == QLatin1String("ok") && suspicious},
        {QStringLiteral("message"), message},
        {QStringLiteral("task"), task},
        {QStringLiteral("kernel"),
         QJsonObject{{QStringLiteral("name"), name},
                     {QStringLiteral("sha256"),
                      QString::fromLatin1(
                          QCryptographicHash::hash(source, QCryptographicHash::Sha256).toHex())},
                     {QStringLiteral("bytes"), source.size()},
                     {QStringLiteral("language"), QStringLiteral("cuda")}}},
        {QStringLiteral("options"),
         QJsonObject{{QStringLiteral("lint"), options.value(QLatin1String("lint")).toBool(true)},
                     {QStringLiteral("self_check"),
                      options.value(QLatin1String("self_check")).toBool(false)},
                     {QStringLiteral("device"),
                      options.value(QLatin1String("device"))
                          .toInt(m_config.value(QLatin1String("device")).toInt(0))}}},
        {QStringLiteral("environment"),
         QJsonObject{{QStringLiteral("host"), QStringLiteral("fake-host")},
                     {QStringLiteral("harness_version"), kVersion},
                     {QStringLiteral("nvcc"), QStringLiteral("13.0.88")},
                     {QStringLiteral("arch"), QStringLiteral("sm_90a")},
                     {QStringLiteral("gpu"),
                      m_config.value(QLatin1String("devices")).toInt(1) > 0
                          ? QJsonValue(gpu(m_config.value(QLatin1String("device")).toInt(0)))
                          : QJsonValue(QJsonValue::Null)},
                     {QStringLiteral("driver_version"), QStringLiteral("580.159.04")},
                     {QStringLiteral("cuda_driver_version"), 13000},
                     {QStringLiteral("cuda_runtime_version"), 13000},
                     {QStringLiteral("cublas_version"), 130100}}},
        {QStringLiteral("compile"),
         QJsonObject{
             {QStringLiteral("ok"), compiled},
             {QStringLiteral("seconds"), 1.9},
             {QStringLiteral("command"),
              QJsonArray{QStringLiteral("nvcc"), QStringLiteral("-shared"),
                         QStringLiteral("-cudart"), QStringLiteral("shared"),
                         QStringLiteral("-gencode=arch=compute_90a,code=sm_90a"), name}},
             {QStringLiteral("log"),
              compiled ? QString()
                       : QString(name + QStringLiteral("(12): error: identifier \"wgmma_fence\" is "
                                                       "undefined\n1 error detected"))},
             {QStringLiteral("kernels"),
              compiled ? QJsonArray{QJsonObject{
                             {QStringLiteral("name"), QStringLiteral("_Z4gemmPK6__halfS1_Pf")},
                             {QStringLiteral("registers"), 168},
                             {QStringLiteral("shared_static_bytes"), 0},
                             {QStringLiteral("stack_bytes"), 0},
                             {QStringLiteral("spill_store_bytes"), 0},
                             {QStringLiteral("spill_load_bytes"), 0}}}
                       : QJsonArray{}}}},
        {QStringLiteral("stages"), QJsonObject{{QStringLiteral("compile_s"), 1.9},
                                               {QStringLiteral("lint_s"), 0.01},
                                               {QStringLiteral("total_s"), gpuRan ? 4.9 : 1.91}}},
        {QStringLiteral("reverify"), QString(QStringLiteral("kevolve-harness eval --task ") +
                                             task.value(QLatin1String("name")).toString() +
                                             QStringLiteral(".json --kernel ") + name)},
    };
    if (compiled) {
        QJsonArray checks{
            QJsonObject{{QStringLiteral("name"), QStringLiteral("undefined_symbols")},
                        {QStringLiteral("ok"), linted},
                        {QStringLiteral("evidence"), linted
                                                         ? QStringLiteral("all in the allowlist")
                                                         : QStringLiteral("fopen is not allowed")}},
            QJsonObject{{QStringLiteral("name"), QStringLiteral("exported_symbols")},
                        {QStringLiteral("ok"), true},
                        {QStringLiteral("evidence"), QStringLiteral("kevolve_launch")}},
            QJsonObject{{QStringLiteral("name"), QStringLiteral("static_constructors")},
                        {QStringLiteral("ok"), true},
                        {QStringLiteral("evidence"), QStringLiteral("none")}}};
        r.insert(QStringLiteral("rules"),
                 QJsonObject{{QStringLiteral("ok"), linted},
                             {QStringLiteral("lint"), true},
                             {QStringLiteral("checks"), checks},
                             {QStringLiteral("violations"),
                              linted ? QJsonArray{}
                                     : QJsonArray{QStringLiteral("undefined symbol fopen")}}});
    }
    if (gpuRan && status != QLatin1String("runtime_error") && status != QLatin1String("timeout")) {
        const double margin = correct ? 0.014 : 37.5;
        QJsonArray trials;
        for (const auto& phase : {QStringLiteral("pre"), QStringLiteral("post")}) {
            if (!correct && phase == QLatin1String("post"))
                continue;
            trials.append(QJsonObject{
                {QStringLiteral("phase"), phase},
                {QStringLiteral("shape"), shape},
                {QStringLiteral("distribution"), QStringLiteral("normal")},
                {QStringLiteral("seed"), 123},
                {QStringLiteral("candidate"),
                 QJsonObject{{QStringLiteral("rel_fro"), correct ? 2.1e-7 : 5.6e-4},
                             {QStringLiteral("max_scaled"), correct ? 1.1e-7 : 9.0e-3},
                             {QStringLiteral("nan_count"), 0},
                             {QStringLiteral("inf_count"), 0},
                             {QStringLiteral("checksum"), 1200.5}}},
                {QStringLiteral("reference"), QJsonObject{{QStringLiteral("rel_fro"), 2.0e-7},
                                                          {QStringLiteral("max_scaled"), 1.0e-7}}},
                {QStringLiteral("bound"), QJsonObject{{QStringLiteral("rel_fro"), 1.5e-5},
                                                      {QStringLiteral("max_scaled"), 2.4e-4}}},
                {QStringLiteral("margin"), margin},
                {QStringLiteral("pass"), correct}});
        }
        r.insert(
            QStringLiteral("correctness"),
            QJsonObject{{QStringLiteral("ok"), correct},
                        {QStringLiteral("rule"),
                         QJsonObject{{QStringLiteral("text"),
                                      QStringLiteral("error <= 8 x cuBLAS's error vs fp64 truth")},
                                     {QStringLiteral("multiple"), 8.0},
                                     {QStringLiteral("floor_rel_fro"), 1.5e-5},
                                     {QStringLiteral("floor_max_scaled"), 2.4e-4}}},
                        {QStringLiteral("trials"), trials}});
    }
    if (gpuRan && correct) {
        QJsonArray samples;
        for (int pair = 0; pair < 6; ++pair) {
            const double wobble = 1.0 + 0.001 * ((pair % 3) - 1);
            const double c = candidateMs * wobble;
            samples.append(QJsonObject{
                {QStringLiteral("round"), pair / 2},
                {QStringLiteral("pair"), pair},
                {QStringLiteral("ratio"), referenceMs / c},
                {QStringLiteral("candidate_ms"), QJsonArray{c, c * 1.001}},
                {QStringLiteral("reference_ms"), QJsonArray{referenceMs, referenceMs * 1.001}},
                {QStringLiteral("input_set"), pair % 2},
                {QStringLiteral("sm_mhz"), 1980},
                {QStringLiteral("mem_mhz"), 3201},
                {QStringLiteral("throttle"), QJsonArray{QStringLiteral("sw_power_cap")}},
                {QStringLiteral("discarded"), false},
                {QStringLiteral("output_check"), 3.1e-8}});
        }
        r.insert(
            QStringLiteral("timing"),
            QJsonObject{
                {QStringLiteral("median_ms"), candidateMs},
                {QStringLiteral("reference_median_ms"), referenceMs},
                {QStringLiteral("speedup_vs_reference"), speedup},
                {QStringLiteral("ci95"), QJsonArray{speedup - halfWidth, speedup + halfWidth}},
                {QStringLiteral("half_width_rel"), halfWidth / speedup},
                {QStringLiteral("tflops"), flops / (candidateMs * 1e-3) / 1e12},
                {QStringLiteral("reference_tflops"), flops / (referenceMs * 1e-3) / 1e12},
                {QStringLiteral("rounds"),
                 QJsonArray{QJsonObject{
                     {QStringLiteral("pairs"), 6},
                     {QStringLiteral("median_ratio"), speedup},
                     {QStringLiteral("ci95"), QJsonArray{speedup - halfWidth, speedup + halfWidth}},
                     {QStringLiteral("stopped_by"), QStringLiteral("half_width")}}}},
                {QStringLiteral("round_spread"), status == QLatin1String("unstable") ? 0.4 : 0.004},
                {QStringLiteral("reruns"), status == QLatin1String("unstable") ? 1 : 0},
                {QStringLiteral("discarded_pairs"), 0},
                {QStringLiteral("method"),
                 QJsonObject{{QStringLiteral("pairing"), QStringLiteral("ABBA")},
                             {QStringLiteral("l2_flush_bytes"), 125829120},
                             {QStringLiteral("blocking_kernel"), true},
                             {QStringLiteral("input_sets"), 2},
                             {QStringLiteral("inputs_refreshed_per_sample"), true},
                             {QStringLiteral("warmup"), 5}}},
                {QStringLiteral("samples"), samples}});
    }
    if (gpuRan && correct && !bound.isEmpty()) {
        const double floorMs = candidateMs * floorPercent / 100;
        r.insert(QStringLiteral("roofline"),
                 QJsonObject{{QStringLiteral("floor_ms"), floorMs},
                             {QStringLiteral("percent_of_floor"), floorPercent},
                             {QStringLiteral("bound"), bound}});
    }
    if (status == QLatin1String("runtime_error") || status == QLatin1String("timeout"))
        r.insert(QStringLiteral("error"),
                 QJsonObject{
                     {QStringLiteral("stage"), QStringLiteral("run")},
                     {QStringLiteral("message"), status == QLatin1String("timeout")
                                                     ? QStringLiteral("the kernel ran past 120 s")
                                                     : QStringLiteral("illegal memory access")},
                     {QStringLiteral("signal"), status == QLatin1String("timeout") ? 9 : 11},
                     {QStringLiteral("stderr"), QString()}});
    return r;
}
