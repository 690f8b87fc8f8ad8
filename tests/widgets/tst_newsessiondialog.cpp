// The new-session dialog: the targets it hands the engine.
#include "newsessiondialog.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace kev;

namespace {

QDoubleSpinBox* floorTarget(const NewSessionDialog& dialog) {
    for (auto* box : dialog.findChildren<QDoubleSpinBox*>()) {
        if (box->suffix().contains(u"DRAM floor"_s))
            return box;
    }
    return nullptr;
}

} // namespace

class NewSessionDialogTest : public QObject {
    Q_OBJECT
private slots:
    void floorTargetReachesTheSettings() {
        NewSessionDialog dialog(AppSettings{}, false);
        QDoubleSpinBox* box = floorTarget(dialog);
        QVERIFY(box);
        QVERIFY2(box->toolTip().contains(u"Memory-bound"_s), qPrintable(box->toolTip()));
        QCOMPARE(dialog.settings().targetFloorPercent, 90.0);
        box->setValue(95);
        QCOMPARE(dialog.settings().targetFloorPercent, 95.0);
        box->setValue(0);
        QCOMPARE(box->text(), u"off"_s);
        QCOMPARE(dialog.settings().targetFloorPercent, 0.0);
        // Past 110% of the floor the harness calls a kernel suspicious: no such target.
        box->setValue(150);
        QCOMPARE(dialog.settings().targetFloorPercent, 110.0);
        QVERIFY(dialog.settings().validate().isEmpty());
    }

    void testOnlyBackendIsNotOffered() {
        qunsetenv("KEVOLVE_SCRIPTED_AGENTS");
        NewSessionDialog dialog(AppSettings{}, false);
        int backendBoxes = 0;
        for (auto* box : dialog.findChildren<QComboBox*>()) {
            if (box->findText(u"builtin"_s) < 0)
                continue;
            ++backendBoxes;
            QCOMPARE(box->findText(u"scripted"_s), -1);
        }
        QCOMPARE(backendBoxes, 3);
    }
};

QTEST_MAIN(NewSessionDialogTest)
#include "tst_newsessiondialog.moc"
