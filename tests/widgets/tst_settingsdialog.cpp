// The settings dialog's harness launchers: the same list kevolve-cli --harness takes, refused
// with a reason under the field when it cannot be used, and what reaches the engine.
#include "settingsdialog.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace kev;

namespace {

QLineEdit* launchers(const SettingsDialog& dialog) {
    for (auto* edit : dialog.findChildren<QLineEdit*>()) {
        if (edit->toolTip().contains(u"One command per worker"_s))
            return edit;
    }
    return nullptr;
}

void pressOk(SettingsDialog& dialog) {
    dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
}

QString shownError(const SettingsDialog& dialog) {
    for (auto* label : dialog.findChildren<QLabel*>()) {
        if (label->isVisibleTo(&dialog) && label->wordWrap() && !label->text().isEmpty() &&
            !label->text().startsWith(u"<small>"_s))
            return label->text();
    }
    return {};
}

} // namespace

class SettingsDialogTest : public QObject {
    Q_OBJECT
private slots:
    void aLauncherListReachesTheEngine() {
        AppSettings start;
        start.harnessCommands = {u"kevolve-harness serve --device 0"_s};
        SettingsDialog dialog(start);
        QLineEdit* edit = launchers(dialog);
        QVERIFY(edit);
        QCOMPARE(edit->text(), u"kevolve-harness serve --device 0"_s);
        edit->setText(u"kevolve-harness serve --device 0; srun --gres=gpu:1 bash -lc "
                      "\"module load cuda; exec kevolve-harness serve\""_s);
        pressOk(dialog);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        const AppSettings s = dialog.settings();
        QCOMPARE(s.harnessCommands,
                 (QStringList{u"kevolve-harness serve --device 0"_s,
                              u"srun --gres=gpu:1 bash -lc \"module load cuda; exec "
                              "kevolve-harness serve\""_s}));
        // GPU 0 leaves the device to each launcher: no device in the requests.
        EngineSettings engine;
        s.applyTo(engine);
        QCOMPARE(engine.harnessCommands, s.harnessCommands);
        QVERIFY(!engine.evalOptions.contains(u"device"_s));
    }

    void anUnusableListIsRefusedWithItsReason() {
        SettingsDialog dialog(AppSettings{});
        QLineEdit* edit = launchers(dialog);
        QVERIFY(edit);
        edit->setText(u"kevolve-harness serve; ssh \"gpu1 kevolve-harness serve"_s);
        pressOk(dialog);
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        QVERIFY2(shownError(dialog).contains(u"unbalanced double quote"_s),
                 qPrintable(shownError(dialog)));

        // One GPU number cannot serve several launchers.
        edit->setText(u"kevolve-harness serve --device 0; kevolve-harness serve --device 1"_s);
        dialog.findChild<QSpinBox*>(u"gpu"_s)->setValue(1);
        pressOk(dialog);
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        QVERIFY2(shownError(dialog).contains(u"serve --device N"_s),
                 qPrintable(shownError(dialog)));

        dialog.findChild<QSpinBox*>(u"gpu"_s)->setValue(0);
        pressOk(dialog);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(dialog.settings().harnessCommands.size(), 2);
    }

    void aSingleLaunchersGpuStillReachesTheRequests() {
        AppSettings s;
        s.gpu = 2;
        EngineSettings engine;
        s.applyTo(engine);
        QCOMPARE(engine.evalOptions.value(u"device"_s).toInt(), 2);
    }
};

QTEST_MAIN(SettingsDialogTest)
#include "tst_settingsdialog.moc"
